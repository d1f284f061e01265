//! The concurrent campaign: generated rounds of operations that every client of one
//! backend sends at once, judged per execution and per key by linearizability.
//!
//! The concurrency kit's cases each race one operation against itself. What a store
//! gets wrong under load is often a mix: a read racing an append and a fence on the
//! *same* stream, or two ids the store confuses (case twins, NFC and NFD spellings,
//! `e10` and `e1e1` under numeric affinity) written by different clients at once. So
//! each round draws three executions (plain ids in the first round, then each hostile
//! family of [`crate::ids`] in turn) and gives every client its own seeded sequence of
//! reads, appends at the sequence it last saw (with the fence token it holds, if any),
//! fence acquisitions and durable-state compare-and-set writes over those ids. The
//! history of each execution must be linearizable against the stream model (SPI-23,
//! PLACE-05), the log left behind must hold exactly the acknowledged appends, and each
//! key's writes must be linearizable against the compare-and-set model (SPI-20). A
//! store that conflates two of the ids shows up as one execution's answers that its own
//! history cannot explain (GAP-27).
//!
//! Key design decision: partition the history per execution and key (as Porcupine
//! does), so each check stays small however many rounds run; the requests a client
//! makes depend only on the seed, the round, the client and the answers it got, so a
//! failure names the seed and round that reproduce its requests.

use std::sync::Arc;
use std::time::{Duration, Instant};

use loom_kernel::spi::{DurableStateStore, EventStore};

use super::concurrency::{
    acknowledged, check_final_log, judge, race, recorded_append, recorded_put, recorded_read,
    AppendAnswer, Fleet, StateModel, StateOp, Step, StreamModel, StreamOp, Wins,
};
use crate::case::{error_json, Claims, Failure};
use crate::history::Recorder;
use crate::ids::{campaign_ids_under, Family};

/// Operations each client makes per round.
pub const OPS_PER_CLIENT: u64 = 10;

/// The rules the campaign's result cites.
pub const RULES: [&str; 4] = ["SPI-23", "PLACE-05", "SPI-20", "GAP-27"];

/// How long a campaign runs: whichever of the two comes first.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Rounds at most.
    pub rounds: u64,
    /// Wall time at most.
    pub time: Duration,
}

/// What a campaign did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Rounds run (a failing round included).
    pub rounds: u64,
    /// Operations sent, over every client.
    pub operations: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// The first failure: which round, which ids, what was wrong.
    pub failure: Option<String>,
}

/// A tiny seeded generator (xorshift64*): the requests depend on nothing else.
struct Draw(u64);

impl Draw {
    fn new(seed: u64, round: u64, client: usize) -> Draw {
        let mixed = seed ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((client as u64 + 1) << 40);
        Draw(mixed | 1)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// The family a round draws its ids from: none first, then each in turn.
fn family_of(round: u64) -> Option<Family> {
    let n = Family::ALL.len() as u64 + 1;
    match round % n {
        0 => None,
        k => Some(Family::ALL[(k - 1) as usize]),
    }
}

/// Runs rounds against `fleet` under `namespace` until the budget is spent or a round
/// fails. `Err` when the fleet serves no event store.
pub async fn run<F: Fleet>(
    fleet: &F,
    namespace: &str,
    seed: u64,
    budget: Budget,
) -> Result<Outcome, String> {
    let stores = fleet
        .events()
        .ok_or("the backend serves no event store, so there is nothing to race")?;
    let states = fleet.durable_state();
    let claims = Claims::of(&stores[0].capabilities());
    let fences = claims.meets("acquireFence");
    let started = Instant::now();
    let mut outcome = Outcome {
        rounds: 0,
        operations: 0,
        elapsed: Duration::ZERO,
        failure: None,
    };
    while outcome.rounds < budget.rounds && started.elapsed() < budget.time {
        let round = outcome.rounds;
        outcome.rounds += 1;
        let family = family_of(round);
        let prefix = format!("{namespace}r{round}.");
        let mut ids: Vec<String> = campaign_ids_under(&prefix, family).to_vec();
        // A family of two ids repeats its last one; each execution here has its own
        // history, so the third is a plain id instead.
        if ids[2] == ids[1] || ids[2] == ids[0] {
            ids[2] = format!("{prefix}2");
        }
        let failure = run_round(&stores, states.as_deref(), &ids, seed, round, fences).await;
        outcome.operations += stores.len() as u64 * OPS_PER_CLIENT;
        if let Err(f) = failure {
            let family = family.map_or("plain ids".to_string(), |f| {
                format!("ids of the family {}", f.name())
            });
            outcome.failure = Some(format!(
                "round {round} (seed {seed}, {family}: {ids:?}): {}",
                f.0
            ));
            break;
        }
    }
    outcome.elapsed = started.elapsed();
    Ok(outcome)
}

/// One round: every client's drawn operations at once, then the judgement.
async fn run_round<E, S>(
    stores: &[E],
    states: Option<&[S]>,
    ids: &[String],
    seed: u64,
    round: u64,
    fences: bool,
) -> Result<(), Failure>
where
    E: EventStore + Clone + Send + Sync + 'static,
    S: DurableStateStore + Clone + Send + Sync + 'static,
{
    let streams: Vec<Recorder<StreamOp>> = ids.iter().map(|_| Recorder::new()).collect();
    let keys: Vec<Recorder<StateOp>> = ids.iter().map(|_| Recorder::new()).collect();
    let wins: Vec<Wins> = ids.iter().map(|_| Wins::default()).collect();
    // Each client gets its event-store handle and, if served, its durable-state handle.
    let handles: Vec<(E, Option<S>)> = stores
        .iter()
        .enumerate()
        .map(|(i, e)| (e.clone(), states.map(|s| s[i].clone())))
        .collect();
    let shared = Arc::new((ids.to_vec(), streams.clone(), keys.clone(), wins.clone()));
    race(&handles, move |client, (events, state)| {
        let shared = Arc::clone(&shared);
        async move {
            let (ids, streams, keys, wins) = &*shared;
            let mut draw = Draw::new(seed, round, client);
            // What this client believes: each stream's next sequence, its fence token,
            // each key's version.
            let mut next = vec![None::<u64>; ids.len()];
            let mut token = vec![None::<u64>; ids.len()];
            let mut version = vec![None::<Option<u64>>; ids.len()];
            for op in 0..OPS_PER_CLIENT {
                // The first two ids (the ones a buggy store confuses) twice as often.
                let i = [0, 0, 1, 1, 2][draw.below(5) as usize];
                let exec = &ids[i];
                let kind = draw.below(if state.is_some() { 8 } else { 6 });
                match kind {
                    // Read, and believe what it says.
                    0 | 1 => {
                        let log = recorded_read(&events, exec, client, &streams[i]).await?;
                        next[i] = Some(log.last().map_or(0, |e| e.sequence + 1));
                    }
                    // Append where this client last saw the end, with its token.
                    2..=4 => {
                        let at = match next[i] {
                            Some(n) => n,
                            None => {
                                let log =
                                    recorded_read(&events, exec, client, &streams[i]).await?;
                                log.last().map_or(0, |e| e.sequence + 1)
                            }
                        };
                        let step = Step {
                            client,
                            round: round * OPS_PER_CLIENT + op,
                            next: at,
                        };
                        match recorded_append(&events, exec, step, token[i], &streams[i], &wins[i])
                            .await
                        {
                            AppendAnswer::Ok => next[i] = Some(at + 1),
                            AppendAnswer::Conflict(actual) => next[i] = Some(actual),
                            // Superseded: this client no longer holds the fence.
                            AppendAnswer::Fenced(_) => token[i] = None,
                            AppendAnswer::AnchorChanged => {}
                            AppendAnswer::Other(e) => {
                                return Err(format!(
                                    "append to {exec} at {at} answered {e}, expected success, conflict or fenced"
                                ))
                            }
                        }
                    }
                    // Take the fence (when the store claims it).
                    5 if fences => {
                        streams[i].invoke(client, StreamOp::AcquireFence { answer: None });
                        let r = events.acquire_fence(exec).await;
                        let answer = r.as_ref().map(|t| t.0).map_err(error_json);
                        streams[i].answer(
                            client,
                            StreamOp::AcquireFence {
                                answer: Some(answer.clone()),
                            },
                        );
                        token[i] = Some(answer.map_err(|e| format!("acquireFence({exec}) answered {e}"))?);
                    }
                    5 => {
                        let log = recorded_read(&events, exec, client, &streams[i]).await?;
                        next[i] = Some(log.last().map_or(0, |e| e.sequence + 1));
                    }
                    // A compare-and-set write of the key named like the execution.
                    _ => {
                        let Some(state) = &state else { continue };
                        let expected = match version[i] {
                            Some(v) => v,
                            None => state
                                .get(exec)
                                .await
                                .map_err(|e| format!("get {exec} answered {}", error_json(&e)))?
                                .map(|v| v.version),
                        };
                        let value = serde_json::json!({ "client": client, "op": op });
                        let answer =
                            recorded_put(state, exec, value, expected, client, &keys[i]).await?;
                        version[i] = Some(match answer {
                            Ok(v) => Some(v),
                            Err(0) => None,
                            Err(actual) => Some(actual),
                        });
                    }
                }
            }
            Ok(())
        }
    })
    .await?;
    for (i, exec) in ids.iter().enumerate() {
        judge::<StreamModel>(&streams[i].entries(), &format!("the operations on {exec}"))?;
        let acked = acknowledged(&wins[i].lock().unwrap_or_else(|p| p.into_inner()));
        check_final_log(&stores[0], exec, &acked, 0).await?;
        judge::<StateModel>(&keys[i].entries(), &format!("the writes of key {exec}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_walk_plain_ids_then_every_family() {
        let families: Vec<Option<Family>> = (0..=Family::ALL.len() as u64).map(family_of).collect();
        assert_eq!(families[0], None);
        for (k, f) in Family::ALL.iter().enumerate() {
            assert_eq!(families[k + 1], Some(*f));
        }
        assert_eq!(family_of(Family::ALL.len() as u64 + 1), None);
    }

    #[test]
    fn draws_depend_on_seed_round_and_client_only() {
        let a: Vec<u64> = (0..16)
            .map(|_| 0)
            .scan(Draw::new(7, 3, 1), |d, _| Some(d.below(100)))
            .collect();
        let b: Vec<u64> = (0..16)
            .map(|_| 0)
            .scan(Draw::new(7, 3, 1), |d, _| Some(d.below(100)))
            .collect();
        let c: Vec<u64> = (0..16)
            .map(|_| 0)
            .scan(Draw::new(7, 3, 2), |d, _| Some(d.below(100)))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
