//! Per-execution linearizability of the store's event-stream answers: every `read`,
//! `append` (with the fence it presented), `acquireFence` and `observe` a host sends is
//! recorded per execution as it is invoked and as its answer arrives, and at the end of
//! the run each execution's history is judged by the concurrency kit's WGL checker
//! ([`loom_conformance::history`]) against a sequential model of one stream.
//!
//! The answer-by-answer checks of [`crate::history`] hold each answer against what was
//! acknowledged before its request was sent; this judges the whole history at once, so
//! it also catches answers that no single order explains (two reads that saw each
//! other's future, an append accepted at a sequence a later read contradicts).
//!
//! Key design decisions:
//!
//! - **Real-time order without a clock.** Invocations and answers go into one list per
//!   execution under the world's lock: the invocation before the request goes to the
//!   store, the answer after it came back. Each operation has its own client number, so
//!   operations of one host that overlap (two fences of one step) are judged as
//!   concurrent, which they are.
//! - **A write of unknown outcome is not guessed.** An append or fence answered by a
//!   `backend` error (a killed adapter, a timed-out call) or never answered (the store
//!   host crashed while it waited) may or may not have taken effect; the model has no
//!   branch for "maybe", so such an execution is counted as not judged instead of
//!   failing falsely or passing by assumption. Under the memory store no write is ever
//!   of unknown outcome.
//! - **The failure names the part of the model that fails.** A history that is not
//!   linearizable is judged again with fences ignored: if it still fails, the log itself
//!   is wrong (SPI-23: reads and appends that no order of the acknowledged appends
//!   gives); if it passes, the fences are (PLACE-05).

use std::collections::BTreeMap;

use loom_conformance::history::{is_linearizable, render, shrink, Entry, Op, Specification};
use loom_kernel::spi::{StoreError, StoreErrorKind};

use crate::history::Finding;
use crate::store::{Answer, Op as StoreOp};

/// Most operations of one execution judged; a longer history is counted as not judged
/// (the check is quadratic in the operations at best).
pub const LINEAR_OPS_MAX: usize = 2_000;

/// An append's answer, as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// Acknowledged.
    Ok,
    /// `conflict` with its `actualNext`.
    Conflict(u64),
    /// `fenced` with its `current` token.
    Fenced(u64),
    /// Refused before anything was done (an invalid argument): changes nothing.
    Refused,
    /// A `backend` error: it may or may not have landed.
    Unknown,
}

/// One operation on one execution's stream: the request, and the answer once known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamCall {
    /// `read`, answering how many events the log held (`None`: not yet, or an error).
    Read(Option<u64>),
    /// `append` of `count` events at `expected_next`, presenting `fence`.
    Append {
        /// The sequence the first event must get.
        expected_next: u64,
        /// Events in the append.
        count: u64,
        /// The fence token presented.
        fence: Option<u64>,
        /// The answer.
        answer: Option<Appended>,
    },
    /// `acquireFence`, answering the token (`Err`: a `backend` error, outcome unknown).
    Fence(Option<Result<u64, ()>>),
    /// `observe`, answering the next sequence and the fence.
    Observe(Option<(u64, u64)>),
}

impl Op for StreamCall {
    fn read_only(&self) -> bool {
        match self {
            StreamCall::Read(_) | StreamCall::Observe(_) => true,
            StreamCall::Append { answer, .. } => !matches!(answer, Some(Appended::Ok)),
            StreamCall::Fence(answer) => !matches!(answer, Some(Ok(_))),
        }
    }
}

impl StreamCall {
    /// True when the answer leaves the store's state unknown.
    fn unknown(&self) -> bool {
        matches!(
            self,
            StreamCall::Append {
                answer: Some(Appended::Unknown),
                ..
            } | StreamCall::Fence(Some(Err(())))
        )
    }

    /// True for a request that may change the stream.
    fn writes(&self) -> bool {
        matches!(self, StreamCall::Append { .. } | StreamCall::Fence(_))
    }
}

/// The model's state of one stream: its next sequence and its fence token (0 = never
/// fenced).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Stream {
    next: u64,
    token: u64,
}

fn apply(op: &StreamCall, st: &Stream, fences: bool) -> (bool, Stream) {
    let same = st.clone();
    match op {
        StreamCall::Read(Some(len)) => (*len == st.next, same),
        StreamCall::Observe(Some((next, fence))) => {
            (*next == st.next && (!fences || *fence == st.token), same)
        }
        StreamCall::Fence(Some(Ok(t))) => (!fences || *t > st.token, Stream { token: *t, ..same }),
        StreamCall::Append {
            expected_next,
            count,
            fence,
            answer: Some(a),
        } => {
            let fence_ok = !fences
                || match fence {
                    None => st.token == 0,
                    Some(t) => *t == st.token && st.token > 0,
                };
            let seq_ok = *expected_next == st.next;
            match a {
                Appended::Ok if fence_ok && seq_ok => (
                    true,
                    Stream {
                        next: st.next + count,
                        ..same
                    },
                ),
                Appended::Conflict(actual) => (!seq_ok && *actual == st.next, same),
                Appended::Fenced(current) => (!fences || (!fence_ok && *current == st.token), same),
                Appended::Refused => (true, same),
                _ => (false, same),
            }
        }
        _ => (false, same),
    }
}

/// The sequential model of one stream (SPI-23's log, PLACE-05's fences).
pub struct StreamModel;

impl Specification for StreamModel {
    type State = Stream;
    type Operation = StreamCall;
    fn init() -> Stream {
        Stream::default()
    }
    fn apply(op: &StreamCall, st: &Stream) -> (bool, Stream) {
        apply(op, st, true)
    }
}

/// The same model with fences ignored: what decides which rule a failure breaks.
pub struct FenceBlindModel;

impl Specification for FenceBlindModel {
    type State = Stream;
    type Operation = StreamCall;
    fn init() -> Stream {
        Stream::default()
    }
    fn apply(op: &StreamCall, st: &Stream) -> (bool, Stream) {
        apply(op, st, false)
    }
}

/// The execution and request of a store operation the model judges, or `None`.
pub fn request(op: &StoreOp) -> Option<(String, StreamCall)> {
    match op {
        StoreOp::Read(exec) => Some((exec.clone(), StreamCall::Read(None))),
        StoreOp::Fence(exec) => Some((exec.clone(), StreamCall::Fence(None))),
        StoreOp::Observe(exec) => Some((exec.clone(), StreamCall::Observe(None))),
        StoreOp::Append {
            exec,
            expected_next,
            events,
            fence,
        } => Some((
            exec.clone(),
            StreamCall::Append {
                expected_next: *expected_next,
                count: events.len() as u64,
                fence: *fence,
                answer: None,
            },
        )),
        _ => None,
    }
}

fn appended(r: &Result<Answer, StoreError>) -> Appended {
    match r {
        Ok(_) => Appended::Ok,
        Err(e) => match &e.kind {
            StoreErrorKind::Conflict { actual_next, .. } => Appended::Conflict(*actual_next),
            StoreErrorKind::Fenced { current, .. } => Appended::Fenced(*current),
            StoreErrorKind::Backend => Appended::Unknown,
            _ => Appended::Refused,
        },
    }
}

/// `call` with the answer `r` filled in.
pub fn answered(call: &StreamCall, r: &Result<Answer, StoreError>) -> StreamCall {
    match call {
        StreamCall::Read(_) => StreamCall::Read(match r {
            Ok(Answer::Log(log)) => Some(log.len() as u64),
            _ => None,
        }),
        StreamCall::Observe(_) => StreamCall::Observe(match r {
            Ok(Answer::Anchor(a)) => Some((a.next_sequence, a.fence)),
            _ => None,
        }),
        StreamCall::Fence(_) => StreamCall::Fence(match r {
            Ok(Answer::Number(t)) => Some(Ok(*t)),
            Err(e) if e.kind == StoreErrorKind::Backend => Some(Err(())),
            _ => None,
        }),
        StreamCall::Append {
            expected_next,
            count,
            fence,
            ..
        } => StreamCall::Append {
            expected_next: *expected_next,
            count: *count,
            fence: *fence,
            answer: Some(appended(r)),
        },
    }
}

/// The stream histories of a run, per execution.
#[derive(Debug, Default)]
pub struct Histories {
    per_exec: BTreeMap<String, Vec<Entry<StreamCall>>>,
}

/// Where an invocation was recorded, for its answer.
#[derive(Debug, Clone)]
pub struct Pending {
    exec: String,
    client: usize,
    call: StreamCall,
}

impl Histories {
    /// Records that `call` on `exec` is being sent.
    pub fn invoke(&mut self, exec: String, call: StreamCall) -> Pending {
        let list = self.per_exec.entry(exec.clone()).or_default();
        let client = list.iter().filter(|e| e.call).count();
        list.push(Entry {
            client,
            call: true,
            op: call.clone(),
        });
        Pending { exec, client, call }
    }

    /// Records the answer of `pending`.
    pub fn answer(&mut self, pending: Pending, r: &Result<Answer, StoreError>) {
        let op = answered(&pending.call, r);
        if let Some(list) = self.per_exec.get_mut(&pending.exec) {
            list.push(Entry {
                client: pending.client,
                call: false,
                op,
            });
        }
    }

    /// Judges every execution's history; see [`Judged`].
    pub fn judge(&self) -> Judged {
        let mut out = Judged::default();
        for (exec, entries) in &self.per_exec {
            match judge_one(exec, entries) {
                Verdict::Linearizable => out.judged += 1,
                Verdict::NotJudged => out.not_judged += 1,
                Verdict::Broken(f) => {
                    out.judged += 1;
                    out.findings.push(f);
                }
            }
        }
        out
    }
}

/// What judging a run's histories gave.
#[derive(Debug, Default)]
pub struct Judged {
    /// Executions whose history was judged.
    pub judged: u64,
    /// Executions not judged: a write of unknown outcome, or more than
    /// [`LINEAR_OPS_MAX`] operations.
    pub not_judged: u64,
    /// One finding per execution whose history is not linearizable.
    pub findings: Vec<Finding>,
}

enum Verdict {
    Linearizable,
    NotJudged,
    Broken(Finding),
}

fn judge_one(exec: &str, entries: &[Entry<StreamCall>]) -> Verdict {
    let answered: std::collections::BTreeSet<usize> = entries
        .iter()
        .filter(|e| !e.call)
        .map(|e| e.client)
        .collect();
    let ops = entries.iter().filter(|e| e.call).count();
    let unknown = entries.iter().any(|e| {
        (e.call && e.op.writes() && !answered.contains(&e.client)) || (!e.call && e.op.unknown())
    });
    if unknown || ops > LINEAR_OPS_MAX {
        return Verdict::NotJudged;
    }
    // Reads and observes whose answer was an error tell nothing: drop them.
    let dropped: std::collections::BTreeSet<usize> = entries
        .iter()
        .filter(|e| !e.call && matches!(e.op, StreamCall::Read(None) | StreamCall::Observe(None)))
        .map(|e| e.client)
        .collect();
    let kept: Vec<Entry<StreamCall>> = entries
        .iter()
        .filter(|e| !dropped.contains(&e.client))
        .cloned()
        .collect();
    if is_linearizable::<StreamModel>(&kept) {
        return Verdict::Linearizable;
    }
    let rule = if is_linearizable::<FenceBlindModel>(&kept) {
        "PLACE-05"
    } else {
        "SPI-23"
    };
    let small = shrink::<StreamModel>(&kept);
    Verdict::Broken(Finding {
        rule,
        execution_id: exec.to_owned(),
        message: format!(
            "the store's answers to the {} reads, appends, fences and observes of this execution are not linearizable: no order of them, consistent with when each was sent and answered, gives these answers ({}). A failing sub-history of {} operations (every acknowledged write kept; clients are operations):\n{}",
            kept.len() / 2,
            if rule == "PLACE-05" {
                "the log alone is explained; the fence tokens and fenced answers are not"
            } else {
                "the log itself: reads and appends no order of the acknowledged appends gives"
            },
            small.len() / 2,
            render(&small)
        ),
        event_index: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(client: usize, call: bool, op: StreamCall) -> Entry<StreamCall> {
        Entry { client, call, op }
    }

    fn append(
        expected_next: u64,
        count: u64,
        fence: Option<u64>,
        a: Option<Appended>,
    ) -> StreamCall {
        StreamCall::Append {
            expected_next,
            count,
            fence,
            answer: a,
        }
    }

    fn judged(entries: Vec<Entry<StreamCall>>) -> Option<&'static str> {
        let h = Histories {
            per_exec: BTreeMap::from([("e".to_owned(), entries)]),
        };
        let j = h.judge();
        j.findings.first().map(|f| f.rule)
    }

    /// Data-driven: (history, the rule its judgement names, or none when it is
    /// linearizable). Each broken history is one a planted store bug gives.
    #[test]
    fn spi_23_place_05_stream_histories_are_judged_by_linearizability() {
        use StreamCall::{Fence, Read};
        type Case = (&'static str, Vec<Entry<StreamCall>>, Option<&'static str>);
        let cases: Vec<Case> = vec![
            (
                "a read overlapping an append may see it or not",
                vec![
                    e(0, true, append(0, 2, None, None)),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(0))),
                    e(0, false, append(0, 2, None, Some(Appended::Ok))),
                    e(2, true, Read(None)),
                    e(2, false, Read(Some(2))),
                ],
                None,
            ),
            (
                "a stale replica: a read sent after the append was acknowledged misses it",
                vec![
                    e(0, true, append(0, 2, None, None)),
                    e(0, false, append(0, 2, None, Some(Appended::Ok))),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(0))),
                ],
                Some("SPI-23"),
            ),
            (
                "two fences answered the same token (a dropped fence cache)",
                vec![
                    e(0, true, Fence(None)),
                    e(0, false, Fence(Some(Ok(1)))),
                    e(1, true, Fence(None)),
                    e(1, false, Fence(Some(Ok(1)))),
                ],
                Some("PLACE-05"),
            ),
            (
                "an append presenting a superseded token accepted",
                vec![
                    e(0, true, Fence(None)),
                    e(0, false, Fence(Some(Ok(1)))),
                    e(1, true, Fence(None)),
                    e(1, false, Fence(Some(Ok(2)))),
                    e(2, true, append(0, 1, Some(1), None)),
                    e(2, false, append(0, 1, Some(1), Some(Appended::Ok))),
                ],
                Some("PLACE-05"),
            ),
            (
                "the zombie refused as fenced, the holder appends",
                vec![
                    e(0, true, Fence(None)),
                    e(0, false, Fence(Some(Ok(1)))),
                    e(1, true, Fence(None)),
                    e(1, false, Fence(Some(Ok(2)))),
                    e(2, true, append(0, 1, Some(1), None)),
                    e(2, false, append(0, 1, Some(1), Some(Appended::Fenced(2)))),
                    e(3, true, append(0, 3, Some(2), None)),
                    e(3, false, append(0, 3, Some(2), Some(Appended::Ok))),
                    e(4, true, Read(None)),
                    e(4, false, Read(Some(3))),
                ],
                None,
            ),
            (
                "an append of unknown outcome (backend error) leaves the execution not judged",
                vec![
                    e(0, true, append(0, 1, None, None)),
                    e(0, false, append(0, 1, None, Some(Appended::Unknown))),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(1))),
                ],
                None,
            ),
        ];
        for (what, entries, want) in cases {
            assert_eq!(judged(entries), want, "{what}");
        }
    }

    /// A write never answered (the store host crashed while it waited) is not guessed:
    /// the execution is counted as not judged.
    #[test]
    fn an_unanswered_write_is_not_judged() {
        let h = Histories {
            per_exec: BTreeMap::from([(
                "e".to_owned(),
                vec![
                    e(0, true, append(0, 1, None, None)),
                    e(1, true, StreamCall::Read(None)),
                    e(1, false, StreamCall::Read(Some(1))),
                ],
            )]),
        };
        let j = h.judge();
        assert_eq!((j.judged, j.not_judged, j.findings.len()), (0, 1, 0));
    }
}
