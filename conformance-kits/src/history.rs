//! Histories of concurrent store operations and their linearizability check.
//!
//! A concurrent case ([`crate::kits::concurrency`]) runs several clients against one
//! backend at once and records, for every operation, when it was invoked and when its
//! answer came back ([`Recorder`]). The history is then checked against a sequential
//! model of the SPI ([`Specification`]): it passes when some order of the operations,
//! consistent with real time (an operation that returned before another was invoked
//! comes first), gives every answer the model gives. The search is todc-utils' WGL
//! checker (Wing & Gong, with Lowe's memoisation); decision 0010 says why that crate.
//!
//! Key design decisions:
//!
//! - **Real-time order without a clock.** Invocations and answers are appended to one
//!   list under a mutex: the invocation before the request is sent, the answer after it
//!   arrived. If B's invocation follows A's answer in the list, A really finished before
//!   B began, which is all linearizability needs; no timestamps are compared.
//! - **A smaller failing sub-history, never a misleading one.** The checker only says
//!   yes or no, so a failing history is shrunk by dropping whole operations while it
//!   stays non-linearizable ([`shrink`]). Only operations whose answer changes nothing
//!   ([`Op::read_only`]: a read, a refusal) may go: dropping one removes a constraint,
//!   so what still fails fails on its own. Dropping a write would make the reads after
//!   it fail for want of it, a failure of the shrink, not of the store.

use std::fmt::Debug;
use std::sync::{Arc, Mutex};

pub use todc_utils::Specification;
use todc_utils::{Action, History, WGLChecker};

/// Most operations a shrunk history is searched for; a longer failing history is shown
/// whole (the shrink costs one check per operation per pass).
pub const SHRINK_OPS_MAX: usize = 400;

/// What the shrink needs to know of an operation.
pub trait Op {
    /// True when the operation's answer says it changed nothing (a read, a refusal):
    /// such an operation may be dropped from a failing history without making the rest
    /// fail for want of it.
    fn read_only(&self) -> bool;
}

/// One recorded operation: the client that ran it, its request and, once it returned,
/// its answer. `O` carries both (the answer is `None` until it is known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<O> {
    /// The client (0-based) that ran the operation.
    pub client: usize,
    /// True for the invocation, false for the answer.
    pub call: bool,
    /// The operation (request only for an invocation, request and answer for an answer).
    pub op: O,
}

/// Collects the history of one concurrent case. Cloning shares it.
#[derive(Debug)]
pub struct Recorder<O> {
    entries: Arc<Mutex<Vec<Entry<O>>>>,
}

impl<O> Clone for Recorder<O> {
    fn clone(&self) -> Self {
        Recorder {
            entries: Arc::clone(&self.entries),
        }
    }
}

impl<O> Default for Recorder<O> {
    fn default() -> Self {
        Recorder {
            entries: Arc::new(Mutex::new(Vec::new())),
        }
    }
}

impl<O: Clone> Recorder<O> {
    /// A new, empty history.
    pub fn new() -> Recorder<O> {
        Recorder::default()
    }

    fn push(&self, entry: Entry<O>) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(entry);
    }

    /// Records that `client` invokes `op` (before the request is sent).
    pub fn invoke(&self, client: usize, op: O) {
        self.push(Entry {
            client,
            call: true,
            op,
        });
    }

    /// Records `client`'s answer (after it arrived); `op` carries the request and the
    /// answer.
    pub fn answer(&self, client: usize, op: O) {
        self.push(Entry {
            client,
            call: false,
            op,
        });
    }

    /// The entries so far, in real-time order.
    pub fn entries(&self) -> Vec<Entry<O>> {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The operations of a history whose answers are all known: each invocation paired
/// with its answer (an invocation without one is dropped: the client stopped before
/// its answer came, and the case reports that on its own).
fn complete<O: Clone>(entries: &[Entry<O>]) -> Vec<Entry<O>> {
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        if e.call {
            let answered = entries[i + 1..]
                .iter()
                .any(|later| !later.call && later.client == e.client);
            if answered {
                out.push(e.clone());
            }
        } else {
            out.push(e.clone());
        }
    }
    out
}

/// True when `entries` (a complete history: every invocation has its answer, and a
/// client's operations do not overlap) is linearizable under `S`.
pub fn is_linearizable<S>(entries: &[Entry<S::Operation>]) -> bool
where
    S: Specification,
{
    let entries = complete(entries);
    if entries.is_empty() {
        return true;
    }
    let actions: Vec<(usize, Action<S::Operation>)> = entries
        .into_iter()
        .map(|e| {
            let action = if e.call {
                Action::Call(e.op)
            } else {
                Action::Response(e.op)
            };
            (e.client, action)
        })
        .collect();
    WGLChecker::<S>::is_linearizable(History::from_actions(actions))
}

/// The operations of `entries` as (invocation index, answer index) pairs.
fn operations<O>(entries: &[Entry<O>]) -> Vec<(usize, usize)> {
    let mut ops = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if !e.call {
            continue;
        }
        if let Some(j) =
            (i + 1..entries.len()).find(|&j| !entries[j].call && entries[j].client == e.client)
        {
            ops.push((i, j));
        }
    }
    ops
}

/// A smaller history that is still not linearizable: read-only operations ([`Op`])
/// are dropped one at a time, keeping each drop after which the check still fails,
/// until none can go. Histories longer than [`SHRINK_OPS_MAX`] operations are returned
/// as they are.
pub fn shrink<S>(entries: &[Entry<S::Operation>]) -> Vec<Entry<S::Operation>>
where
    S: Specification,
    S::Operation: Op,
{
    let mut current = complete(entries);
    if operations(&current).len() > SHRINK_OPS_MAX || is_linearizable::<S>(&current) {
        return current;
    }
    loop {
        let ops = operations(&current);
        let mut dropped = false;
        for &(call, answer) in ops.iter().rev() {
            if !current[answer].op.read_only() {
                continue;
            }
            let candidate: Vec<Entry<S::Operation>> = current
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != call && *k != answer)
                .map(|(_, e)| e.clone())
                .collect();
            if !is_linearizable::<S>(&candidate) {
                current = candidate;
                dropped = true;
                break;
            }
        }
        if !dropped {
            return current;
        }
    }
}

/// Most history lines a failure message shows; earlier ones are counted.
pub const RENDER_LINES_MAX: usize = 40;

/// The history as lines a store author can read: one per invocation and answer, in
/// real-time order, each naming its client; at most [`RENDER_LINES_MAX`] lines (the
/// last ones, where the history stopped being linearizable), the earlier ones counted.
pub fn render<O: Debug>(entries: &[Entry<O>]) -> String {
    let skip = entries.len().saturating_sub(RENDER_LINES_MAX);
    let mut lines = Vec::new();
    if skip > 0 {
        lines.push(format!("  ({skip} earlier lines not shown)"));
    }
    lines.extend(entries.iter().skip(skip).map(|e| {
        if e.call {
            format!("  client {} invokes {:?}", e.client, e.op)
        } else {
            format!("  client {} answered {:?}", e.client, e.op)
        }
    }));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter that `Add(n)` returns the new value of.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum CounterOp {
        Add(Option<u64>),
    }

    impl super::Op for CounterOp {
        fn read_only(&self) -> bool {
            false
        }
    }

    /// A register read, for the shrink test: reads may be dropped, writes not.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum RegOp {
        Write(u64),
        Read(Option<u64>),
    }

    impl super::Op for RegOp {
        fn read_only(&self) -> bool {
            matches!(self, RegOp::Read(_))
        }
    }

    struct Register;

    impl Specification for Register {
        type State = u64;
        type Operation = RegOp;
        fn init() -> u64 {
            0
        }
        fn apply(op: &RegOp, state: &u64) -> (bool, u64) {
            match op {
                RegOp::Write(v) => (true, *v),
                RegOp::Read(Some(v)) => (v == state, *state),
                RegOp::Read(None) => (false, *state),
            }
        }
    }

    struct Counter;

    impl Specification for Counter {
        type State = u64;
        type Operation = CounterOp;
        fn init() -> u64 {
            0
        }
        fn apply(op: &CounterOp, state: &u64) -> (bool, u64) {
            match op {
                CounterOp::Add(Some(v)) => (*v == state + 1, state + 1),
                CounterOp::Add(None) => (false, *state),
            }
        }
    }

    fn history(steps: &[(usize, bool, Option<u64>)]) -> Vec<Entry<CounterOp>> {
        steps
            .iter()
            .map(|&(client, call, v)| Entry {
                client,
                call,
                op: CounterOp::Add(v),
            })
            .collect()
    }

    #[test]
    fn overlapping_operations_may_take_either_order() {
        // Both invoked before either answered: 2 then 1 is a valid order.
        let h = history(&[
            (0, true, None),
            (1, true, None),
            (0, false, Some(2)),
            (1, false, Some(1)),
        ]);
        assert!(is_linearizable::<Counter>(&h));
    }

    #[test]
    fn an_answer_that_no_order_gives_is_refused() {
        // Sequential: 1, then two overlapping operations that both answer 2.
        let h = history(&[
            (0, true, None),
            (0, false, Some(1)),
            (1, true, None),
            (2, true, None),
            (1, false, Some(2)),
            (2, false, Some(2)),
        ]);
        assert!(!is_linearizable::<Counter>(&h));
        // Writes are never dropped: the shrink keeps every one.
        assert_eq!(shrink::<Counter>(&h), h);
    }

    #[test]
    fn the_shrink_drops_reads_that_do_not_matter_and_keeps_every_write() {
        let e = |client, call, op| Entry { client, call, op };
        // Write 1; reads that see 1; then a read that sees 5, which no write gave.
        let h = vec![
            e(0, true, RegOp::Write(1)),
            e(0, false, RegOp::Write(1)),
            e(1, true, RegOp::Read(None)),
            e(1, false, RegOp::Read(Some(1))),
            e(2, true, RegOp::Read(None)),
            e(2, false, RegOp::Read(Some(1))),
            e(1, true, RegOp::Read(None)),
            e(1, false, RegOp::Read(Some(5))),
        ];
        assert!(!is_linearizable::<Register>(&h));
        let small = shrink::<Register>(&h);
        assert!(!is_linearizable::<Register>(&small));
        assert_eq!(
            small,
            vec![
                e(0, true, RegOp::Write(1)),
                e(0, false, RegOp::Write(1)),
                e(1, true, RegOp::Read(None)),
                e(1, false, RegOp::Read(Some(5))),
            ],
            "{}",
            render(&small)
        );
    }

    #[test]
    fn real_time_order_is_respected() {
        // Client 1 answered 1 before client 0 was invoked, so 0's answer must be 2.
        let h = history(&[
            (1, true, None),
            (1, false, Some(1)),
            (0, true, None),
            (0, false, Some(1)),
        ]);
        assert!(!is_linearizable::<Counter>(&h));
    }

    #[test]
    fn an_unanswered_invocation_is_left_out() {
        let h = history(&[(0, true, None), (1, true, None), (1, false, Some(1))]);
        assert!(is_linearizable::<Counter>(&h));
    }
}
