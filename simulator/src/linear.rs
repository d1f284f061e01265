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
//! - **A write of unknown outcome is judged both ways, inside the checker.** An append
//!   or fence answered by a `backend` error (a killed adapter, a timed-out call) or never
//!   answered (the store host crashed while it waited) either never took effect or took
//!   effect at one instant after it was sent, which may come after its error answer, up
//!   to the end of the history. Its answer is therefore moved to the end of the history
//!   (so it may linearize anywhere after its invocation), and the model's state is the
//!   *set* of stream states the store may be in: such a write leaves both the state
//!   without it and the state with it (an append as if acknowledged, a fence with a
//!   token above the current one that nobody was told). Each later answer keeps the
//!   states that explain it; the history fails when none is left. todc-utils'
//!   `Specification` allows that cleanly, since a state need only be `Clone + Eq + Hash`
//!   and a set of states is one: one search decides every combination of "applied" and
//!   "not applied" at once, where enumerating the combinations would run the checker
//!   2^k times. The search still grows as 2^k with k such writes open at once to the
//!   end, so an execution with more than [`UNKNOWN_WRITES_MAX`] of them is counted as
//!   not judged.
//! - **A fence token nobody was told is kept as a bound, not guessed.** A fence of
//!   unknown outcome that took effect set some token above the one before it; the state
//!   records "some token above t" (`Stream`'s `token_above`) until a later answer names
//!   it: an observe or a `fenced` refusal naming the current token, or an accepted
//!   append presenting it, pins it to that value (which must be above t), and a fence
//!   answered u needs a token between t and u, so u > t + 1. An append presenting no
//!   token cannot be accepted then (the stream has been fenced). This is exact: every
//!   set the model forms is "this token" or "any token above t", so no real order is
//!   refused and no impossible one accepted.
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

/// Most writes of unknown outcome in one execution judged; with more, the execution is
/// counted as not judged. Each such write stays open to the end of the history and may
/// or may not have taken effect, so the search may visit up to 2^k orders of them at
/// each point: 6 bounds that at 64 times the cost of a history without them.
pub const UNKNOWN_WRITES_MAX: usize = 6;

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
    /// A `backend` error, or no answer: it may or may not have landed (judged both ways).
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
    /// `acquireFence`, answering the token (`Err`: a `backend` error or no answer,
    /// outcome unknown, judged both ways).
    Fence(Option<Result<u64, ()>>),
    /// `observe`, answering the next sequence and the fence.
    Observe(Option<(u64, u64)>),
}

impl Op for StreamCall {
    // A write of unknown outcome is not read-only: dropping it from a failing history
    // would take away the branch where it landed, and the rest could then fail for
    // want of it (a failure of the shrink, not of the store).
    fn read_only(&self) -> bool {
        match self {
            StreamCall::Read(_) | StreamCall::Observe(_) => true,
            StreamCall::Append { answer, .. } => {
                !matches!(answer, Some(Appended::Ok | Appended::Unknown))
            }
            StreamCall::Fence(answer) => answer.is_none(),
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

    /// True for an answer that says nothing about the stream: a read or observe that
    /// failed, or a fence refused with an error other than `backend` (which changed
    /// nothing).
    fn tells_nothing(&self) -> bool {
        matches!(
            self,
            StreamCall::Read(None) | StreamCall::Observe(None) | StreamCall::Fence(None)
        )
    }

    /// The same request answered "unknown outcome" (a write whose answer never came).
    fn unknown_answer(&self) -> StreamCall {
        match self {
            StreamCall::Append {
                expected_next,
                count,
                fence,
                ..
            } => StreamCall::Append {
                expected_next: *expected_next,
                count: *count,
                fence: *fence,
                answer: Some(Appended::Unknown),
            },
            StreamCall::Fence(_) => StreamCall::Fence(Some(Err(()))),
            other => other.clone(),
        }
    }
}

/// The model's state of one stream: its next sequence and its fence token (0 = never
/// fenced).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Stream {
    next: u64,
    token: u64,
    /// The token is not `token` but some value above it, set by a fence of unknown
    /// outcome that took effect (nobody was told which).
    token_above: bool,
}

impl Stream {
    /// True when the current token may be `t`.
    fn token_may_be(&self, t: u64) -> bool {
        if self.token_above {
            t > self.token
        } else {
            t == self.token
        }
    }

    /// True when an append presenting `fence` passes the fence check in some state this
    /// one stands for.
    fn fence_ok(&self, fence: Option<u64>) -> bool {
        match fence {
            // A stream fenced at an unknown token has a token above 0.
            None => !self.token_above && self.token == 0,
            Some(t) => t > 0 && self.token_may_be(t),
        }
    }

    /// This state with the token known to be `t`.
    fn pinned(&self, t: u64) -> Stream {
        Stream {
            token: t,
            token_above: false,
            ..self.clone()
        }
    }
}

/// The states `st` may be in after `op`: none when `op`'s answer is impossible from
/// `st`. With `fences` false, fence tokens and `fenced` answers are not judged.
fn successors(op: &StreamCall, st: &Stream, fences: bool) -> Vec<Stream> {
    let same = st.clone();
    let when = |ok: bool, next: Stream| if ok { vec![next] } else { Vec::new() };
    match op {
        StreamCall::Read(Some(len)) => when(*len == st.next, same),
        StreamCall::Observe(Some((next, fence))) => {
            if fences {
                when(
                    *next == st.next && st.token_may_be(*fence),
                    st.pinned(*fence),
                )
            } else {
                when(*next == st.next, same)
            }
        }
        StreamCall::Fence(Some(Ok(t))) => {
            if !fences {
                return vec![same];
            }
            // An unknown token above `token` leaves room below t only if t > token + 1.
            let floor = st.token + u64::from(st.token_above);
            when(*t > floor, st.pinned(*t))
        }
        StreamCall::Fence(Some(Err(()))) => {
            if !fences {
                return vec![same];
            }
            // Not applied, or applied with a token above the current one: above `token`
            // when it was known, above `token + 1` when it was itself unknown.
            let above = Stream {
                token: st.token + u64::from(st.token_above),
                token_above: true,
                ..same.clone()
            };
            vec![same, above]
        }
        StreamCall::Append {
            expected_next,
            count,
            fence,
            answer: Some(a),
        } => {
            let fence_ok = !fences || st.fence_ok(*fence);
            let seq_ok = *expected_next == st.next;
            // Landing pins an unknown token to the one presented.
            let landed = || {
                let mut next = match fence {
                    Some(t) if fences => st.pinned(*t),
                    _ => same.clone(),
                };
                next.next = st.next + count;
                next
            };
            match a {
                Appended::Ok => when(fence_ok && seq_ok, landed()),
                Appended::Unknown => {
                    let mut out = vec![same.clone()];
                    if fence_ok && seq_ok {
                        out.push(landed());
                    }
                    out
                }
                Appended::Conflict(actual) => when(!seq_ok && *actual == st.next, same),
                Appended::Fenced(current) => {
                    if !fences {
                        vec![same]
                    } else {
                        // The refusal names the current token: it must be one the
                        // stream may have, and one the presented fence does not match.
                        let pinned = st.pinned(*current);
                        when(
                            st.token_may_be(*current) && !pinned.fence_ok(*fence),
                            pinned,
                        )
                    }
                }
                Appended::Refused => vec![same],
            }
        }
        _ => Vec::new(),
    }
}

/// The states the stream may be in: a write of unknown outcome leaves more than one.
pub type States = std::collections::BTreeSet<Stream>;

fn apply(op: &StreamCall, states: &States, fences: bool) -> (bool, States) {
    let next: States = states
        .iter()
        .flat_map(|st| successors(op, st, fences))
        .collect();
    if next.is_empty() {
        (false, states.clone())
    } else {
        (true, next)
    }
}

/// The sequential model of one stream (SPI-23's log, PLACE-05's fences), with writes of
/// unknown outcome as nondeterministic steps.
pub struct StreamModel;

impl Specification for StreamModel {
    type State = States;
    type Operation = StreamCall;
    fn init() -> States {
        States::from([Stream::default()])
    }
    fn apply(op: &StreamCall, st: &States) -> (bool, States) {
        apply(op, st, true)
    }
}

/// The same model with fences ignored: what decides which rule a failure breaks.
pub struct FenceBlindModel;

impl Specification for FenceBlindModel {
    type State = States;
    type Operation = StreamCall;
    fn init() -> States {
        States::from([Stream::default()])
    }
    fn apply(op: &StreamCall, st: &States) -> (bool, States) {
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
                Verdict::Linearizable { unknown } => {
                    out.judged += 1;
                    out.unknown_writes += unknown as u64;
                }
                Verdict::NotJudged => out.not_judged += 1,
                Verdict::Broken { finding, unknown } => {
                    out.judged += 1;
                    out.unknown_writes += unknown as u64;
                    out.findings.push(finding);
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
    /// Writes of unknown outcome in the judged executions, each judged both ways.
    pub unknown_writes: u64,
    /// Executions not judged: more than [`UNKNOWN_WRITES_MAX`] writes of unknown
    /// outcome, or more than [`LINEAR_OPS_MAX`] operations.
    pub not_judged: u64,
    /// One finding per execution whose history is not linearizable.
    pub findings: Vec<Finding>,
}

enum Verdict {
    Linearizable { unknown: usize },
    NotJudged,
    Broken { finding: Finding, unknown: usize },
}

/// The history the checker judges, and its writes of unknown outcome: answers that tell
/// nothing are dropped with their invocation (a failed read is an error of that read,
/// never evidence of an empty log), and the answer of each write of unknown outcome
/// (a `backend` error, or none) is moved to the end, so it may take effect at any point
/// after it was sent, or never.
fn prepared(entries: &[Entry<StreamCall>]) -> (Vec<Entry<StreamCall>>, usize) {
    let answers: BTreeMap<usize, &StreamCall> = entries
        .iter()
        .filter(|e| !e.call)
        .map(|e| (e.client, &e.op))
        .collect();
    let mut kept = Vec::with_capacity(entries.len());
    let mut open = Vec::new();
    for e in entries {
        match answers.get(&e.client) {
            Some(answer) if answer.tells_nothing() => continue,
            // Its answer is left out here and put at the end.
            Some(answer) if answer.unknown() && !e.call => {}
            Some(answer) if answer.unknown() => {
                kept.push(e.clone());
                open.push(Entry {
                    client: e.client,
                    call: false,
                    op: (*answer).clone(),
                });
            }
            Some(_) => kept.push(e.clone()),
            // Never answered: a write is of unknown outcome, a read tells nothing.
            None if e.op.writes() => {
                kept.push(e.clone());
                open.push(Entry {
                    client: e.client,
                    call: false,
                    op: e.op.unknown_answer(),
                });
            }
            None => {}
        }
    }
    let unknown = open.len();
    kept.extend(open);
    (kept, unknown)
}

fn judge_one(exec: &str, entries: &[Entry<StreamCall>]) -> Verdict {
    let ops = entries.iter().filter(|e| e.call).count();
    if ops > LINEAR_OPS_MAX {
        return Verdict::NotJudged;
    }
    let (kept, unknown) = prepared(entries);
    if unknown > UNKNOWN_WRITES_MAX {
        return Verdict::NotJudged;
    }
    if is_linearizable::<StreamModel>(&kept) {
        return Verdict::Linearizable { unknown };
    }
    let rule = if is_linearizable::<FenceBlindModel>(&kept) {
        "PLACE-05"
    } else {
        "SPI-23"
    };
    let small = shrink::<StreamModel>(&kept);
    let finding = Finding {
        rule,
        execution_id: exec.to_owned(),
        message: format!(
            "the store's answers to the {} reads, appends, fences and observes of this execution are not linearizable: no order of them, consistent with when each was sent and answered, gives these answers ({}){}. A failing sub-history of {} operations (every acknowledged write kept; clients are operations):\n{}",
            kept.len() / 2,
            if rule == "PLACE-05" {
                "the log alone is explained; the fence tokens and fenced answers are not"
            } else {
                "the log itself: reads and appends no order of the acknowledged appends gives"
            },
            if unknown > 0 {
                format!(
                    "; {unknown} write(s) of unknown outcome (answered `backend`, or never) were judged both as landed at any point after they were sent and as never landed, and neither explains them: they are shown answered at the end, an append `Unknown`, a fence `Err(())`"
                )
            } else {
                String::new()
            },
            small.len() / 2,
            render(&small)
        ),
        event_index: None,
    };
    Verdict::Broken { finding, unknown }
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
        ];
        for (what, entries, want) in cases {
            assert_eq!(judged(entries), want, "{what}");
        }
    }

    /// Data-driven: histories with writes of unknown outcome (`U`: answered `backend`;
    /// a write with no answer: the store host crashed while it waited), and the rule
    /// their judgement names, or none when some branch (each such write landed at some
    /// point after it was sent, or never) explains every answer.
    #[test]
    fn spi_23_place_05_writes_of_unknown_outcome_are_judged_both_ways() {
        use StreamCall::{Fence, Observe, Read};
        let u = Some(Appended::Unknown);
        let ok = Some(Appended::Ok);
        let lost = Some(Err(()));
        type Case = (&'static str, Vec<Entry<StreamCall>>, Option<&'static str>);
        let cases: Vec<Case> = vec![
            (
                "U landed: a later read sees it",
                vec![
                    e(0, true, append(0, 2, None, None)),
                    e(0, false, append(0, 2, None, u.clone())),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(2))),
                ],
                None,
            ),
            (
                "U did not land: later reads miss it and another append takes its sequence",
                vec![
                    e(0, true, append(0, 2, None, None)),
                    e(0, false, append(0, 2, None, u.clone())),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(0))),
                    e(2, true, append(0, 1, None, None)),
                    e(2, false, append(0, 1, None, ok.clone())),
                    e(3, true, Read(None)),
                    e(3, false, Read(Some(1))),
                ],
                None,
            ),
            (
                "U landed after its error answer: a read misses it, a later read sees it",
                vec![
                    e(0, true, append(0, 1, None, None)),
                    e(0, false, append(0, 1, None, u.clone())),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(0))),
                    e(2, true, Read(None)),
                    e(2, false, Read(Some(1))),
                ],
                None,
            ),
            (
                "a failed read is an error of that read, never an empty log",
                vec![
                    e(0, true, append(0, 1, None, None)),
                    e(0, false, append(0, 1, None, u.clone())),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(1))),
                    e(2, true, Read(None)),
                    e(2, false, Read(None)),
                    e(3, true, Read(None)),
                    e(3, false, Read(Some(1))),
                ],
                None,
            ),
            (
                "U seen by a read, then gone from a later one (a write undone)",
                vec![
                    e(0, true, append(0, 1, None, None)),
                    e(0, false, append(0, 1, None, u.clone())),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(1))),
                    e(2, true, Read(None)),
                    e(2, false, Read(Some(0))),
                ],
                Some("SPI-23"),
            ),
            (
                "U seen by a read, then another append accepted at its sequence",
                vec![
                    e(0, true, append(0, 1, None, None)),
                    e(0, false, append(0, 1, None, u.clone())),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(1))),
                    e(2, true, append(0, 1, None, None)),
                    e(2, false, append(0, 1, None, ok.clone())),
                ],
                Some("SPI-23"),
            ),
            (
                "U applied twice: an append accepted at a sequence only a double landing gives",
                vec![
                    e(1, true, append(0, 3, None, None)),
                    e(1, false, append(0, 3, None, ok.clone())),
                    e(2, true, append(3, 2, None, None)),
                    e(2, false, append(3, 2, None, u.clone())),
                    e(3, true, append(7, 1, None, None)),
                    e(3, false, append(7, 1, None, ok.clone())),
                ],
                Some("SPI-23"),
            ),
            (
                "U applied in part: a read sees one of its two events",
                vec![
                    e(0, true, append(0, 2, None, None)),
                    e(0, false, append(0, 2, None, u.clone())),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(1))),
                ],
                Some("SPI-23"),
            ),
            (
                "a conflict naming U's end as the head, though later answers show U never landed",
                vec![
                    e(0, true, append(0, 1, None, None)),
                    e(0, false, append(0, 1, None, u.clone())),
                    e(1, true, append(0, 1, None, None)),
                    e(1, false, append(0, 1, None, Some(Appended::Conflict(1)))),
                    e(2, true, append(0, 1, None, None)),
                    e(2, false, append(0, 1, None, ok.clone())),
                ],
                Some("SPI-23"),
            ),
            (
                "U presenting a superseded token landed",
                vec![
                    e(0, true, Fence(None)),
                    e(0, false, Fence(Some(Ok(1)))),
                    e(1, true, Fence(None)),
                    e(1, false, Fence(Some(Ok(2)))),
                    e(2, true, append(0, 1, Some(1), None)),
                    e(2, false, append(0, 1, Some(1), u.clone())),
                    e(3, true, Read(None)),
                    e(3, false, Read(Some(1))),
                ],
                Some("PLACE-05"),
            ),
            (
                "an append never answered (the store host crashed), seen by a read",
                vec![
                    e(0, true, append(0, 1, None, None)),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(1))),
                ],
                None,
            ),
            (
                "an append never answered, seen by a read, then gone",
                vec![
                    e(0, true, append(0, 1, None, None)),
                    e(1, true, Read(None)),
                    e(1, false, Read(Some(1))),
                    e(2, true, Read(None)),
                    e(2, false, Read(Some(0))),
                ],
                Some("SPI-23"),
            ),
            (
                "a lost fence, then a fence answered above it and appends presenting that",
                vec![
                    e(0, true, Fence(None)),
                    e(0, false, Fence(Some(Ok(1)))),
                    e(1, true, Fence(None)),
                    e(1, false, Fence(lost)),
                    e(2, true, Fence(None)),
                    e(2, false, Fence(Some(Ok(3)))),
                    e(3, true, append(0, 1, Some(3), None)),
                    e(3, false, append(0, 1, Some(3), ok.clone())),
                ],
                None,
            ),
            (
                "a lost fence's token revealed by an observe, then handed out again",
                vec![
                    e(0, true, Fence(None)),
                    e(0, false, Fence(Some(Ok(1)))),
                    e(1, true, Fence(None)),
                    e(1, false, Fence(lost)),
                    e(2, true, Observe(None)),
                    e(2, false, Observe(Some((0, 2)))),
                    e(3, true, Fence(None)),
                    e(3, false, Fence(Some(Ok(2)))),
                ],
                Some("PLACE-05"),
            ),
            (
                "a lost fence's token revealed by a zombie's fenced refusal, then handed out again",
                vec![
                    e(0, true, Fence(None)),
                    e(0, false, Fence(Some(Ok(1)))),
                    e(1, true, Fence(None)),
                    e(1, false, Fence(lost)),
                    e(2, true, append(0, 1, Some(1), None)),
                    e(2, false, append(0, 1, Some(1), Some(Appended::Fenced(2)))),
                    e(3, true, Fence(None)),
                    e(3, false, Fence(Some(Ok(2)))),
                ],
                Some("PLACE-05"),
            ),
            (
                "a lost fence revealed, then the next fence above it",
                vec![
                    e(0, true, Fence(None)),
                    e(0, false, Fence(Some(Ok(1)))),
                    e(1, true, Fence(None)),
                    e(1, false, Fence(lost)),
                    e(2, true, append(0, 1, Some(1), None)),
                    e(2, false, append(0, 1, Some(1), Some(Appended::Fenced(2)))),
                    e(3, true, Fence(None)),
                    e(3, false, Fence(Some(Ok(3)))),
                    e(4, true, append(0, 1, Some(3), None)),
                    e(4, false, append(0, 1, Some(3), ok.clone())),
                ],
                None,
            ),
            (
                "a fence answered one above a lost fence leaves it no room",
                vec![
                    e(0, true, Fence(None)),
                    e(0, false, Fence(lost)),
                    e(1, true, append(0, 1, None, None)),
                    e(1, false, append(0, 1, None, Some(Appended::Fenced(1)))),
                    e(2, true, Fence(None)),
                    e(2, false, Fence(Some(Ok(1)))),
                ],
                Some("PLACE-05"),
            ),
            (
                "a lost fence that landed, and an unfenced append accepted after it",
                vec![
                    e(0, true, Fence(None)),
                    e(0, false, Fence(lost)),
                    e(1, true, Observe(None)),
                    e(1, false, Observe(Some((0, 1)))),
                    e(2, true, append(0, 1, None, None)),
                    e(2, false, append(0, 1, None, ok.clone())),
                ],
                Some("PLACE-05"),
            ),
            (
                "a fence never answered, its token seen by an observe and presented by no one",
                vec![
                    e(0, true, Fence(None)),
                    e(1, true, Observe(None)),
                    e(1, false, Observe(Some((0, 4)))),
                    e(2, true, append(0, 1, Some(4), None)),
                    e(2, false, append(0, 1, Some(4), Some(Appended::Ok))),
                ],
                None,
            ),
        ];
        for (what, entries, want) in cases {
            assert_eq!(judged(entries), want, "{what}");
        }
    }

    /// An execution with more than [`UNKNOWN_WRITES_MAX`] writes of unknown outcome is
    /// counted as not judged, one with that many is judged (and a broken one fails), and
    /// the judged ones' unknown writes are counted.
    #[test]
    fn writes_of_unknown_outcome_beyond_the_bound_are_not_judged() {
        let unknown_appends = |n: usize, read: u64| {
            let mut v = Vec::new();
            for c in 0..n {
                v.push(e(c, true, append(0, 1, None, None)));
                v.push(e(c, false, append(0, 1, None, Some(Appended::Unknown))));
            }
            v.push(e(n, true, StreamCall::Read(None)));
            v.push(e(n, false, StreamCall::Read(Some(read))));
            v
        };
        let h = Histories {
            per_exec: BTreeMap::from([
                ("at".to_owned(), unknown_appends(UNKNOWN_WRITES_MAX, 1)),
                ("broken".to_owned(), unknown_appends(UNKNOWN_WRITES_MAX, 2)),
                (
                    "over".to_owned(),
                    unknown_appends(UNKNOWN_WRITES_MAX + 1, 2),
                ),
            ]),
        };
        let j = h.judge();
        assert_eq!(
            (j.judged, j.not_judged, j.unknown_writes),
            (2, 1, 2 * UNKNOWN_WRITES_MAX as u64)
        );
        let found: Vec<(&str, &str)> = j
            .findings
            .iter()
            .map(|f| (f.rule, f.execution_id.as_str()))
            .collect();
        assert_eq!(found, vec![("SPI-23", "broken")]);
        assert!(
            j.findings[0].message.contains("of unknown outcome"),
            "{}",
            j.findings[0].message
        );
    }
}
