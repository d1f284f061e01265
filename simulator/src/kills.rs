//! Real crashes of a real store: `SIGKILL` to an adapter process at points the seed
//! draws (between two calls, or after a write is sent and before its answer), and
//! `--restart-backend CMD` run at drawn points. Drawn from a stream of the seed's own
//! ([`KILL_STREAM`]), and only for a store that can be killed, so the memory store's
//! draws (and traces) are the same as without this module.

use std::time::Duration;

use serde_json::json;

use crate::rng::Rng;
use crate::world::World;

/// The seed's randomness stream the kills are drawn from.
pub const KILL_STREAM: u64 = 9_001;
/// Most adapter kills per seed (0 to this many, drawn).
pub const STORE_KILLS_MAX: u64 = 4;
/// Chance that a kill waits for the host's next write and strikes between the request
/// and its answer, per mille (the rest strike between two calls).
pub const KILL_DURING_WRITE_PER_MILLE: u64 = 600;
/// Longest real delay between sending a write and killing the adapter, ms.
pub const KILL_DELAY_MS_MAX: u64 = 5;
/// Most `--restart-backend` runs per seed (1 to this many, drawn).
pub const BACKEND_RESTARTS_MAX: u64 = 2;
/// How long a `--restart-backend` command may run, real milliseconds.
pub const RESTART_BACKEND_TIMEOUT_MS: u64 = 60_000;

/// One drawn crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreCrash {
    /// Kill this host's adapter process; `Some(ms)`: after its next write is sent.
    Kill(String, Option<u64>),
    /// Run the `--restart-backend` command.
    RestartBackend,
}

/// The crashes of one seed, soonest last.
#[derive(Debug, Default)]
pub struct StoreCrashes {
    pending: Vec<(u64, StoreCrash)>,
    seed: u64,
    /// Kills applied.
    pub kills: u64,
    /// Backend restarts run.
    pub restarts: u64,
}

impl StoreCrashes {
    /// Draws the crashes of `seed` over the safety phase (`safety_ms`) for `hosts`:
    /// kills when `killable`, backend restarts when `restart_backend` is set.
    pub fn draw(
        seed: u64,
        hosts: &[String],
        safety_ms: u64,
        killable: bool,
        restart_backend: bool,
    ) -> StoreCrashes {
        let mut rng = Rng::derive(seed, KILL_STREAM);
        let mut pending = Vec::new();
        if killable && !hosts.is_empty() {
            for _ in 0..rng.range(0, STORE_KILLS_MAX) {
                let at = rng.range(0, safety_ms.saturating_sub(1));
                let host = hosts[rng.range(0, hosts.len() as u64 - 1) as usize].clone();
                let during = rng
                    .chance(KILL_DURING_WRITE_PER_MILLE)
                    .then(|| rng.range(0, KILL_DELAY_MS_MAX));
                pending.push((at, StoreCrash::Kill(host, during)));
            }
        }
        if restart_backend {
            for _ in 0..rng.range(1, BACKEND_RESTARTS_MAX) {
                pending.push((
                    rng.range(0, safety_ms.saturating_sub(1)),
                    StoreCrash::RestartBackend,
                ));
            }
        }
        pending.sort_by_key(|p| std::cmp::Reverse(p.0));
        StoreCrashes {
            pending,
            seed,
            kills: 0,
            restarts: 0,
        }
    }

    /// When the next crash is due, simulated ms.
    pub fn next_at(&self) -> Option<u64> {
        self.pending.last().map(|(at, _)| *at)
    }

    /// Applies the crashes due at `now_ms` (after the requests in flight settled).
    pub fn apply(&mut self, now_ms: u64, world: &World, restart_backend: Option<&str>) {
        while self.pending.last().is_some_and(|(at, _)| *at <= now_ms) {
            let Some((_, crash)) = self.pending.pop() else {
                break;
            };
            let store = world.events();
            let Some(real) = store.real() else {
                continue;
            };
            world.settle_store();
            match crash {
                StoreCrash::Kill(host, during) => {
                    if real.kill(&host, during.map(Duration::from_millis)) {
                        self.kills += 1;
                        world.trace(json!({ "t": now_ms, "fault": { "kill": host, "duringWriteMs": during } }));
                    }
                }
                StoreCrash::RestartBackend => {
                    let Some(cmd) = restart_backend else {
                        continue;
                    };
                    // `{seed}` names the seed's own backend, as in a `cmd:` command.
                    let cmd = cmd.replace(crate::store::SEED_PLACEHOLDER, &self.seed.to_string());
                    let ran = loom_process::run_to_completion(
                        &cmd,
                        Duration::from_millis(RESTART_BACKEND_TIMEOUT_MS),
                    )
                    .and_then(|()| real.reconnect_all(true));
                    self.restarts += 1;
                    world.trace(json!({ "t": now_ms, "fault": { "restartBackend": ran.is_ok() } }));
                    if let Err(e) = ran {
                        real.note_fault(format!("--restart-backend `{cmd}`: {e}"));
                    }
                }
            }
        }
    }
}
