//! The interleaving of a fleet's requests: which client sent what, and took which
//! answer, in what order. Recorded while a concurrent case runs against `cmd:` adapter
//! processes; written into a replay file when the case fails; enforced when that file is
//! replayed, so the same processes see the same interleaving again.
//!
//! Key design decision: a step names the client, whether it is a send or an answer, and
//! the method, never the parameters: a replay runs under a fresh namespace, so its ids
//! differ, and a store that answers differently under the same interleaving may lead a
//! case's script to other requests. Then the replay stops enforcing (the schedule
//! *diverged*, at a step it names) and the case runs on freely; its verdict stands
//! either way, and the replay says whether the interleaving was followed to the end.
//!
//! Enforcing gates two moments of every call: the request is written only when the
//! schedule's next step is this client's send of this method, and the answer is handed
//! to the case only when the next step is this client's answer. Requests the schedule
//! shows as in flight together are therefore in flight together again, in the same
//! order, which is what a race needs.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How long a client waits for its turn in a replayed schedule before the replay is
/// declared diverged and runs on freely, in milliseconds.
pub const TURN_WAIT_MS: u64 = 5_000;

/// Most steps a schedule records; a case that makes more is recorded up to here and its
/// replay runs freely after it.
pub const STEPS_MAX: usize = 100_000;

/// Whether a step is a request going out or its answer coming back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum At {
    /// The request was written to the client's process.
    Send,
    /// The answer was handed back to the case.
    Answer,
}

/// One step of a schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The client (0-based).
    pub client: usize,
    /// Send or answer.
    pub at: At,
    /// The protocol method (`eventStore.append`, …).
    pub method: String,
}

enum Mode {
    Off,
    Record,
    Replay { cursor: usize },
    Diverged,
}

struct State {
    mode: Mode,
    steps: Vec<Step>,
    divergence: Option<String>,
}

/// A fleet's shared schedule (clones share it).
#[derive(Clone)]
pub struct Schedule {
    inner: Arc<(Mutex<State>, Condvar)>,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            inner: Arc::new((
                Mutex::new(State {
                    mode: Mode::Off,
                    steps: Vec::new(),
                    divergence: None,
                }),
                Condvar::new(),
            )),
        }
    }
}

impl Schedule {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts recording afresh (what was recorded before is dropped).
    pub fn record(&self) {
        let mut s = self.lock();
        s.mode = Mode::Record;
        s.steps.clear();
        s.divergence = None;
    }

    /// Starts enforcing `steps`.
    pub fn replay(&self, steps: Vec<Step>) {
        let mut s = self.lock();
        s.mode = Mode::Replay { cursor: 0 };
        s.steps = steps;
        s.divergence = None;
        self.inner.1.notify_all();
    }

    /// The steps recorded (or being replayed).
    pub fn steps(&self) -> Vec<Step> {
        self.lock().steps.clone()
    }

    /// Where a replay stopped following the schedule, if it did; `None` when every step
    /// was followed (or nothing is replayed).
    pub fn divergence(&self) -> Option<String> {
        let s = self.lock();
        match (&s.mode, &s.divergence) {
            (_, Some(d)) => Some(d.clone()),
            (Mode::Replay { cursor }, None) if *cursor < s.steps.len() => Some(format!(
                "the case ended after step {cursor} of {}: it made fewer requests than the recorded run",
                s.steps.len()
            )),
            _ => None,
        }
    }

    /// Called by client `client` at `at` of a call to `method`: records the step, or
    /// waits for its turn in a replay.
    pub fn step(&self, client: usize, at: At, method: &str) {
        let (lock, turn) = &*self.inner;
        let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
        match s.mode {
            Mode::Off | Mode::Diverged => {}
            Mode::Record => {
                if s.steps.len() < STEPS_MAX {
                    s.steps.push(Step {
                        client,
                        at,
                        method: method.to_string(),
                    });
                }
            }
            Mode::Replay { .. } => {
                let deadline = Instant::now() + Duration::from_millis(TURN_WAIT_MS);
                loop {
                    let Mode::Replay { cursor } = s.mode else {
                        return; // diverged meanwhile: run freely
                    };
                    let Some(next) = s.steps.get(cursor).cloned() else {
                        s.divergence = Some(format!(
                            "client {client} made a request beyond the {} recorded steps ({method})",
                            s.steps.len()
                        ));
                        s.mode = Mode::Diverged;
                        turn.notify_all();
                        return;
                    };
                    if next.client == client {
                        if next.at == at && next.method == method {
                            s.mode = Mode::Replay { cursor: cursor + 1 };
                            turn.notify_all();
                            return;
                        }
                        s.divergence = Some(format!(
                            "at step {cursor}, client {client} was to {:?} {} but came to {at:?} {method}",
                            next.at, next.method
                        ));
                        s.mode = Mode::Diverged;
                        turn.notify_all();
                        return;
                    }
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        s.divergence = Some(format!(
                            "at step {cursor}, client {client} waited {TURN_WAIT_MS} ms for client {} to {:?} {}",
                            next.client, next.at, next.method
                        ));
                        s.mode = Mode::Diverged;
                        turn.notify_all();
                        return;
                    }
                    s = turn
                        .wait_timeout(s, left)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|p| p.into_inner().0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(client: usize, at: At, method: &str) -> Step {
        Step {
            client,
            at,
            method: method.into(),
        }
    }

    #[test]
    fn a_replay_holds_each_client_to_its_turn() {
        use std::sync::atomic::{AtomicBool, Ordering};
        // Client 1 may send only after client 0 sent.
        let s = Schedule::default();
        s.replay(vec![
            step(0, At::Send, "m"),
            step(1, At::Send, "m"),
            step(0, At::Answer, "m"),
            step(1, At::Answer, "m"),
        ]);
        let sent = Arc::new(AtomicBool::new(false));
        let (s1, sent1) = (s.clone(), Arc::clone(&sent));
        let one = std::thread::spawn(move || {
            s1.step(1, At::Send, "m");
            sent1.store(true, Ordering::SeqCst);
            s1.step(1, At::Answer, "m");
        });
        // However long client 1 has had, it has not been let through before client 0.
        std::thread::sleep(Duration::from_millis(100));
        assert!(!sent.load(Ordering::SeqCst), "client 1 sent out of turn");
        s.step(0, At::Send, "m");
        s.step(0, At::Answer, "m");
        one.join().unwrap();
        assert!(sent.load(Ordering::SeqCst));
        assert_eq!(s.divergence(), None);
    }

    #[test]
    fn a_different_request_or_a_missing_peer_is_a_divergence() {
        let s = Schedule::default();
        s.replay(vec![step(0, At::Send, "a"), step(0, At::Answer, "a")]);
        s.step(0, At::Send, "b");
        assert!(
            s.divergence().unwrap().contains("came to Send b"),
            "{:?}",
            s.divergence()
        );
        // After a divergence nothing waits.
        s.step(1, At::Send, "x");

        let s = Schedule::default();
        s.replay(vec![step(0, At::Send, "a")]);
        s.step(0, At::Send, "a");
        assert_eq!(s.divergence(), None);
        s.step(0, At::Answer, "a");
        assert!(s
            .divergence()
            .unwrap()
            .contains("beyond the 1 recorded steps"));
    }

    #[test]
    fn recording_keeps_the_order_of_steps() {
        let s = Schedule::default();
        s.record();
        s.step(0, At::Send, "a");
        s.step(1, At::Send, "b");
        s.step(0, At::Answer, "a");
        assert_eq!(
            s.steps(),
            vec![
                step(0, At::Send, "a"),
                step(1, At::Send, "b"),
                step(0, At::Answer, "a")
            ]
        );
        let s2 = Schedule::default();
        s2.replay(s.steps());
        s2.step(0, At::Send, "a");
        assert!(s2.divergence().unwrap().contains("ended after step 1 of 3"));
    }
}
