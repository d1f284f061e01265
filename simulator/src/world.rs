//! What the hosts share with the harness: the durable stores (they outlive host crashes,
//! like a disk), the bookkeeping the store host and the hosts write (trace, ledger,
//! acknowledgements, leases, coverage counters) and the violations found while running.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use loom_kernel::runtime::block_on;
use loom_kernel::spi::{EventStore, FenceToken, Lease, StoreError};
use loom_kernel::{EventEnvelope, SnapshotRecord};
use loom_stores::memory::{
    MemoryDispatcher, MemoryEventStore, MemorySnapshotStore, MemoryTimerStore,
};
use serde_json::{json, Value};

use crate::config::PlantedBug;
use crate::store::{run_op, Answer, Op, SimStore};
use crate::workload::CRASH_POINTS;

/// Most trace lines kept per seed; later operations are counted, not recorded.
pub const TRACE_LINES_MAX: usize = 200_000;

/// An invariant broken in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule id, e.g. `"PLACE-05"`.
    pub rule: String,
    /// What happened.
    pub message: String,
    /// The execution, when there is one.
    pub execution_id: Option<String>,
    /// The event index (sequence) involved, when there is one.
    pub event_index: Option<u64>,
}

/// What the hosts share with the harness: the durable stores (they outlive host
/// crashes, like a disk), the trace and the violations found while running.
pub struct World {
    /// The authoritative event log. Behind a lock so a planted lost-write bug can
    /// replace it on a store restart; a correct store keeps it whole.
    pub events_cell: Mutex<Arc<SimStore>>,
    /// Durable timers.
    pub timers: MemoryTimerStore,
    /// The snapshot store every runtime writes and loads through (REPLAY-15).
    pub snapshots: MemorySnapshotStore,
    /// The dispatcher queue.
    pub dispatcher: MemoryDispatcher,
    /// Mutable bookkeeping.
    pub book: Mutex<Book>,
    /// A bug planted on purpose, to prove the invariants catch it.
    pub bug: Option<PlantedBug>,
    /// Each skewed host's clock offset from store time, ms (absent: 0).
    pub clock_skew_ms: BTreeMap<String, i64>,
}

/// Bookkeeping the server and the hosts write.
#[derive(Debug, Default)]
pub struct Book {
    /// Ordered store operations and their results, one JSON object per line.
    pub trace: Vec<String>,
    /// Trace lines not kept because of [`TRACE_LINES_MAX`].
    pub trace_dropped: u64,
    /// Violations found while running.
    pub violations: Vec<Violation>,
    /// The current fence token per execution, as the server handed it out.
    pub fences: BTreeMap<String, u64>,
    /// Zombie appends refused as fenced.
    pub zombie_refused: u64,
    /// Hostile resumes refused by ingress.
    pub hostile_refused: u64,
    /// Runs that stopped at an injected crash point.
    pub injected_crashes: u64,
    /// Those runs by crash point, in [`CRASH_POINTS`] order.
    pub crash_points: [u64; CRASH_POINTS.len()],
    /// The effect ledger: every real invocation, outside the simulation's stores.
    pub ledger: Vec<LedgerEntry>,
    /// The lease each execution was last handed, until it is completed (PLACE-02).
    pub leases: BTreeMap<String, Lease>,
    /// Every acknowledged event, by (execution, sequence), as stored (SPI-23: an
    /// acknowledged append survives a store restart, byte for byte; a lost event
    /// re-appended later has another timestamp).
    pub acked: BTreeMap<(String, u64), Value>,
    /// The appends acknowledged since the last store restart, by execution: the
    /// first sequence of the latest (what a store with an unsynced write cache loses).
    pub unsynced: BTreeMap<String, u64>,
    /// Store restarts.
    pub store_restarts: u64,
    /// The history of what the store acknowledged, for the checks made as answers
    /// arrive (PLACE-05, SPI-23, REPLAY-10).
    pub history: crate::history::History,
    /// Answers the history checks held against it.
    pub history_checks: u64,
    /// Each execution's stream operations as invoked and answered, judged by
    /// linearizability at the end (`crate::linear`).
    pub linear: crate::linear::Histories,
    /// Expired, uncompleted leases handed to another worker.
    pub lease_takeovers: u64,
    /// Reads served while one of the execution's timers was due and its park had not
    /// landed yet.
    pub due_before_park: u64,
    /// Recoveries of a continued execution that started its successor: a crash came
    /// between `EXECUTION_CONTINUED` and the successor's start.
    pub successor_starts: u64,
    /// Timer fires the store saw (TIMER_FIRED appends).
    pub timer_fires: u64,
    /// Resumes the client sent, by (execution, gate): the answer (PLACE-04 evidence).
    pub answers_sent: u64,
    /// `TIMER_FIRED` appends that landed before the park's `wakeAt` in store time but
    /// not on the firing host's clock (a host ahead of the store): allowed, and the
    /// evidence that clock skew reached the timers.
    pub skew_early_fires: u64,
    /// Client resume faults sent, and what became of them.
    pub resume_faults: ResumeFaults,
    /// Every snapshot a runtime saved: (execution, record, the host that wrote it).
    pub snapshots_saved: Vec<(String, SnapshotRecord, String)>,
    /// Snapshots a runtime refused on load (a newer writer, a documented shape).
    pub snapshot_refusals: u64,
    /// Workers that switched fold version (a rolling upgrade or rollback step).
    pub fleet_switches: u64,
    /// Resumes that had to be refused and were admitted: (execution, the length of the
    /// log the client read, the request), for the ingress vectors.
    pub ingress_admitted: Vec<(String, u64, loom_kernel::ingress::ResumeRequest)>,
}

/// Counts of the client's resume faults (INGRESS-13, INGRESS-15 evidence).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResumeFaults {
    /// Resumes sent to a gate before the execution parked there (it was running).
    pub early: u64,
    /// Early resumes ingress refused because the park had not landed (INGRESS-13).
    pub early_refused: u64,
    /// Early resumes admitted because the park landed between the client's look and
    /// its resume (the window closed in the answer's favour).
    pub early_admitted: u64,
    /// A resume sent again right after it was admitted.
    pub duplicate: u64,
    /// A later gate's answer sent before the gate the execution is parked on.
    pub reordered: u64,
    /// Pairs of resumes of the same gate sent at once by two clients.
    pub concurrent: u64,
    /// Resumes sent to executions that had ended.
    pub finished: u64,
    /// Resume faults refused (by ingress, or by the store's optimistic check for the
    /// loser of a concurrent pair) with nothing appended.
    pub refused: u64,
    /// Messages delivered to a parked `receive` / `select`.
    pub messages: u64,
    /// Messages delivered before their wait parked (buffered, served from the log).
    pub early_messages: u64,
    /// Messages delivered a second time (a duplicate: nothing appended).
    pub duplicate_messages: u64,
}

/// One real effect invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerEntry {
    /// The execution.
    pub execution_id: String,
    /// The step.
    pub step_id: String,
    /// The tool the step resolved through.
    pub tool_id: String,
    /// The attempt, from 1.
    pub attempt: u64,
    /// The input the effect was called with.
    pub input: Value,
    /// How the call ended: `value`, `typed`, `error`, `timeout`, `indoubt` or
    /// `cancelled`.
    pub outcome: &'static str,
    /// What it returned: the value, the typed failure, the error message, or null.
    pub output: Value,
    /// Simulated time of the call, milliseconds since the start.
    pub t_ms: i64,
}

impl LedgerEntry {
    /// The entry as one JSON line of `ledger.jsonl`.
    pub fn to_value(&self) -> Value {
        json!({ "t": self.t_ms, "exec": self.execution_id, "step": self.step_id,
            "tool": self.tool_id, "attempt": self.attempt, "input": self.input,
            "outcome": self.outcome, "output": self.output })
    }
}

impl World {
    /// The event store as it is now.
    pub fn events(&self) -> Arc<SimStore> {
        self.events_cell
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The store host restarted. Committed data survives; with the planted
    /// [`PlantedBug::AckThenLoseOnRestart`] each execution's latest acknowledged append
    /// since the previous restart is lost, as from a store that acknowledged before
    /// syncing.
    pub fn restart_store(&self) {
        let unsynced = {
            let mut book = self.book();
            book.store_restarts += 1;
            std::mem::take(&mut book.unsynced)
        };
        if let Err(e) = self.events().restart() {
            self.violate(Violation {
                rule: "SPI-23".into(),
                message: format!("the store did not come back after a restart: {e}"),
                execution_id: None,
                event_index: None,
            });
        }
        if self.bug != Some(PlantedBug::AckThenLoseOnRestart) || unsynced.is_empty() {
            return;
        }
        let old = self.events();
        let fresh = MemoryEventStore::new();
        let ids = block_on(old.list_executions()).unwrap_or_default();
        for id in ids {
            let log = block_on(old.read(&id)).unwrap_or_default();
            let keep = unsynced.get(&id).map_or(log.len() as u64, |first| *first);
            let kept: Vec<EventEnvelope> = log.into_iter().filter(|e| e.sequence < keep).collect();
            // Fences are durable (they were synced): bring the token back to where it was.
            let fence = self.book().fences.get(&id).copied().unwrap_or(0);
            for _ in 0..fence {
                let _ = block_on(fresh.acquire_fence(&id));
            }
            if !kept.is_empty() {
                let token = (fence > 0).then_some(FenceToken(fence));
                let _ = block_on(fresh.append(&id, 0, kept, token));
            }
        }
        *self.events_cell.lock().unwrap_or_else(|p| p.into_inner()) =
            Arc::new(SimStore::Memory(fresh));
    }

    /// Runs `op` for `host`: inline on the in-memory stores, or on the host's own
    /// connection to a real store (answered concurrently with the other hosts').
    /// A stream operation is recorded as invoked before it goes to the store and as
    /// answered when its answer is back, for the linearizability check.
    pub async fn call(&self, host: &str, op: Op) -> Result<Answer, StoreError> {
        let store = self.events();
        let pending =
            crate::linear::request(&op).map(|(exec, call)| self.book().linear.invoke(exec, call));
        let answer = match &*store {
            SimStore::Memory(m) => {
                run_op(m, &self.timers, &self.snapshots, &self.dispatcher, op).await
            }
            SimStore::Real(r) => r.call(Some(host), op).await,
        };
        if let Some(p) = pending {
            self.book().linear.answer(p, &answer);
        }
        answer
    }

    /// Waits for every request in flight to a real store (before each step).
    pub fn settle_store(&self) {
        self.events().settle();
    }

    /// The clock offset of `host` from store time, ms.
    pub fn skew_of(&self, host: &str) -> i64 {
        self.clock_skew_ms.get(host).copied().unwrap_or(0)
    }

    /// Locks the bookkeeping; a poisoned lock still holds usable data.
    pub fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records one trace line.
    pub fn trace(&self, line: Value) {
        let mut book = self.book();
        if book.trace.len() < TRACE_LINES_MAX {
            book.trace.push(line.to_string());
        } else {
            book.trace_dropped += 1;
        }
    }

    /// Runs one history check (`crate::history`) and records what it found.
    pub fn held(
        &self,
        check: impl FnOnce(&mut crate::history::History) -> Vec<crate::history::Finding>,
    ) {
        let mut book = self.book();
        book.history_checks += 1;
        let found = check(&mut book.history);
        book.violations.extend(found.into_iter().map(|f| Violation {
            rule: f.rule.into(),
            message: f.message,
            execution_id: Some(f.execution_id),
            event_index: f.event_index,
        }));
    }

    /// Records a violation.
    pub fn violate(&self, v: Violation) {
        self.book().violations.push(v);
    }
}
