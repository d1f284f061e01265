//! The store server and its client: the in-memory stores behind a JSON-lines
//! request/response protocol over turmoil TCP.
//!
//! One request per connection keeps the protocol trivially framed and makes a crashed
//! or partitioned peer cost exactly one timed-out call. The server is the single place
//! every store operation passes through, so it writes the trace and checks the
//! invariants that must hold at every append (SPI-23, PLACE-05).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use loom_kernel::runtime::block_on;
use loom_kernel::spi::{
    Anchor, AppendAck, Capabilities, Clock, EventStore, EventStoreCapabilities, EventStoreMethod,
    ExecutionDispatcher, ExecutionPackage, FenceToken, Lease, SnapshotStore,
    SnapshotStoreCapabilities, SnapshotStoreMethod, StoreError, StoreErrorKind, Timer, TimerStore,
    TIMER_STORE_SPI_VERSION,
};
use loom_kernel::{
    EventEnvelope, SnapshotRecord, EVENT_STORE_SPI_VERSION, SNAPSHOT_STORE_SPI_VERSION,
};
use loom_stores::memory::{
    MemoryDispatcher, MemoryEventStore, MemorySnapshotStore, MemoryTimerStore,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use turmoil::net::{TcpListener, TcpStream};

use crate::store::SimStore;
use crate::{PlantedBug, Violation};

/// The store server's TCP port.
pub const STORE_PORT: u16 = 7000;
/// The store server's host name.
pub const STORE_HOST: &str = "store";
/// Longest request or response line, in bytes; a longer one is refused.
pub const LINE_BYTES_MAX: usize = 4 << 20;
/// How long a client waits for one store call (connect, request, response) in
/// simulated time. A crashed or partitioned peer would otherwise hang the caller.
pub const CALL_TIMEOUT_MS: u64 = 800;
/// Most trace lines kept per seed; later operations are counted, not recorded.
pub const TRACE_LINES_MAX: usize = 200_000;
/// The dispatcher target every worker claims for.
pub const TARGET: &str = "sim";
/// Most due timers the coverage scan of a read looks at.
const DUE_SCAN_MAX: usize = 64;
/// How far ahead a planted early timer store looks: timers fire up to 5 s early.
pub const EARLY_TIMER_MS: i64 = 5_000;
/// The gap between the fence check and the write in a planted non-atomic store.
pub const FENCE_CHECK_GAP_MS: u64 = 30;
/// Lease ids a planted double-leasing dispatcher invents start here.
pub const LEASE_ID_OFFSET: u64 = 1 << 32;
/// Gates of generated flows start with this; their resume events carry the same type.
pub const GATE_PREFIX: &str = "gate";
/// Epoch the simulated clock starts at (2026-01-01T00:00:00Z), so timestamps look real.
pub const EPOCH_MS: i64 = 1_767_225_600_000;

/// The runtime's injected clock: turmoil's simulated elapsed time since the start,
/// plus the reading host's clock offset. The store host (and the harness) read it with
/// offset 0: that is "store time", what the invariants judge by.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimClock {
    /// How far this host's clock is ahead of store time (negative: behind), ms.
    pub offset_ms: i64,
}

/// Store time: the clock the store host, the dispatcher's leases and the harness read.
pub const STORE_TIME: SimClock = SimClock { offset_ms: 0 };

impl SimClock {
    /// A host clock `offset_ms` ahead of store time (behind when negative).
    pub fn skewed(offset_ms: i64) -> SimClock {
        SimClock { offset_ms }
    }
}

impl Clock for SimClock {
    fn now_ms(&self) -> i64 {
        // Outside a simulation (never in practice) the clock reads the epoch.
        let ms = turmoil::sim_elapsed().map_or(0, |d| d.as_millis());
        EPOCH_MS
            .saturating_add(i64::try_from(ms).unwrap_or(i64::MAX - EPOCH_MS))
            .saturating_add(self.offset_ms)
    }
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
    /// Those runs by crash point, in `hosts::CRASH_POINTS` order.
    pub crash_points: [u64; crate::hosts::CRASH_POINTS.len()],
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

    /// Records a violation.
    pub fn violate(&self, v: Violation) {
        self.book().violations.push(v);
    }
}

fn err_to_json(e: &StoreError) -> Value {
    let mut v = json!({ "kind": e.kind.name(), "message": e.message });
    match e.kind {
        StoreErrorKind::Conflict {
            expected_next,
            actual_next,
        } => {
            v["expectedNext"] = json!(expected_next);
            v["actualNext"] = json!(actual_next);
        }
        StoreErrorKind::Fenced { presented, current } => {
            v["presented"] = json!(presented);
            v["current"] = json!(current);
        }
        _ => {}
    }
    v
}

fn err_from_json(v: &Value) -> StoreError {
    let message = v["message"].as_str().unwrap_or("").to_owned();
    let kind = match v["kind"].as_str().unwrap_or("backend") {
        "conflict" => StoreErrorKind::Conflict {
            expected_next: v["expectedNext"].as_u64().unwrap_or(0),
            actual_next: v["actualNext"].as_u64().unwrap_or(0),
        },
        "fenced" => StoreErrorKind::Fenced {
            presented: v["presented"].as_u64(),
            current: v["current"].as_u64().unwrap_or(0),
        },
        "anchor-changed" => StoreErrorKind::AnchorChanged,
        "not-found" => StoreErrorKind::NotFound,
        "already-exists" => StoreErrorKind::AlreadyExists,
        "lease-lost" => StoreErrorKind::LeaseLost,
        "invalid-argument" => StoreErrorKind::InvalidArgument,
        _ => StoreErrorKind::Backend,
    };
    StoreError::new(kind, message)
}

fn backend(message: impl Into<String>) -> StoreError {
    StoreError::new(StoreErrorKind::Backend, message)
}

fn field<T: serde::de::DeserializeOwned>(req: &Value, name: &str) -> Result<T, StoreError> {
    serde_json::from_value(req.get(name).cloned().unwrap_or(Value::Null))
        .map_err(|e| StoreError::new(StoreErrorKind::InvalidArgument, format!("{name}: {e}")))
}

fn str_field(req: &Value, name: &str) -> Result<String, StoreError> {
    field::<String>(req, name)
}

/// Runs the store server until the host is crashed.
pub async fn serve(world: Arc<World>) -> turmoil::Result {
    let listener = TcpListener::bind(("0.0.0.0", STORE_PORT)).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        let world = world.clone();
        tokio::spawn(async move {
            // A broken connection is the client's problem: it times out and retries.
            let _ = handle(world, stream).await;
        });
    }
}

async fn handle(world: Arc<World>, stream: TcpStream) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    let mut line = String::new();
    lines.read_line(&mut line).await?;
    let response = if line.len() > LINE_BYTES_MAX {
        json!({ "err": err_to_json(&StoreError::new(StoreErrorKind::InvalidArgument, "request too long")) })
    } else {
        match serde_json::from_str::<Value>(&line) {
            Ok(req) => match dispatch(&world, &req).await {
                Ok(v) => json!({ "ok": v }),
                Err(e) => json!({ "err": err_to_json(&e) }),
            },
            Err(e) => {
                json!({ "err": err_to_json(&StoreError::new(StoreErrorKind::InvalidArgument, e.to_string())) })
            }
        }
    };
    let mut out = response.to_string();
    out.push('\n');
    write.write_all(out.as_bytes()).await?;
    Ok(())
}

async fn dispatch(world: &World, req: &Value) -> Result<Value, StoreError> {
    let op = req["op"].as_str().unwrap_or("");
    let from = req["from"].as_str().unwrap_or("?");
    let now = STORE_TIME.now_ms();
    let result = execute(world, op, req, now).await;
    // The trace names the operation, its caller and its result; payloads are left out
    // (they are in the final logs) to keep the trace small.
    let mut line = json!({ "t": now - EPOCH_MS, "from": from, "op": op });
    if let Some(x) = req.get("exec") {
        line["exec"] = x.clone();
    }
    match &result {
        Ok(v) => {
            line["ok"] = match op {
                "read" => v["len"].clone(),
                "claim" => json!(v.get("executionId").or(v.get("package")).cloned()),
                _ => v.clone(),
            }
        }
        Err(e) => line["err"] = json!(e.kind.name()),
    }
    world.trace(line);
    result
}

async fn execute(world: &World, op: &str, req: &Value, now: i64) -> Result<Value, StoreError> {
    match op {
        "append" => append(world, req).await,
        "read" => {
            let exec = str_field(req, "exec")?;
            let mut log = world.events().read(&exec).await?;
            // Coverage: a read while one of the execution's timers is due and its park
            // has not landed (the window of the 0 ms sleep bug), so a sweep shows it
            // reached the window.
            let due = world.timers.due(now, DUE_SCAN_MAX).await?;
            if due.iter().any(|t| {
                t.execution_id == exec
                    && !log.iter().any(|e| {
                        e.event_type == "EXECUTION_SUSPENDED"
                            && e.payload.get("wakeAt").and_then(Value::as_i64) == Some(t.wake_at_ms)
                    })
            }) {
                world.book().due_before_park += 1;
            }
            // `len` is the store's true head: the client keeps it as the REPLAY-01
            // oracle, so a read that hides events cannot hide them from the check.
            let len = log.len();
            if world.bug == Some(PlantedBug::CorruptStepOutputOnRead) {
                // A store that serves a damaged copy of a recorded step output (a bad
                // cache, a decoding bug): the stored log stays right.
                if let Some(e) = log.iter_mut().find(|e| e.event_type == "STEP_COMPLETED") {
                    if let Some(v) = e.payload.pointer_mut("/output/v") {
                        *v = json!(v.as_u64().map_or(0, |x| x + 1));
                    }
                }
            }
            if world.bug == Some(PlantedBug::StaleReadsBlindAppends)
                && log.last().is_some_and(|e| e.event_type == "STEP_COMPLETED")
            {
                log.pop();
            }
            let events: Vec<Value> = log.iter().map(EventEnvelope::to_value).collect();
            Ok(json!({ "events": events, "len": len }))
        }
        "list" => Ok(json!(world.events().list_executions().await?)),
        "fence" => {
            let exec = str_field(req, "exec")?;
            let token = world.events().acquire_fence(&exec).await?;
            world.book().fences.insert(exec, token.0);
            Ok(json!(token.0))
        }
        "observe" => {
            let exec = str_field(req, "exec")?;
            let a = world.events().observe(&exec).await?;
            serde_json::to_value(a).map_err(|e| backend(e.to_string()))
        }
        "schedule" => {
            let t: Timer = field(req, "timer")?;
            let t = world.timers.schedule(t).await?;
            serde_json::to_value(t).map_err(|e| backend(e.to_string()))
        }
        "due" => {
            let limit: usize = field(req, "limit")?;
            let mut asked: i64 = field(req, "now")?;
            if world.bug == Some(PlantedBug::TimerFiresEarly) {
                asked = asked.saturating_add(EARLY_TIMER_MS);
            }
            let due = world.timers.due(asked, limit).await?;
            serde_json::to_value(due).map_err(|e| backend(e.to_string()))
        }
        "cancel" => {
            let exec = str_field(req, "exec")?;
            Ok(json!(
                world.timers.cancel(&exec, &str_field(req, "key")?).await?
            ))
        }
        "snapSave" => {
            let exec = str_field(req, "exec")?;
            let mut record: SnapshotRecord = field(req, "record")?;
            if world.bug == Some(PlantedBug::SnapshotLabelledCurrent) {
                // A store that keeps the state and drops its writer's schema version.
                record.schema_version = loom_kernel::EVENT_SCHEMA_VERSION.to_owned();
            }
            world.snapshots.save(&exec, record.clone()).await?;
            let from = req["from"].as_str().unwrap_or("?").to_owned();
            world.book().snapshots_saved.push((exec, record, from));
            Ok(Value::Null)
        }
        "snapLoad" => {
            let exec = str_field(req, "exec")?;
            let r = world.snapshots.load_latest(&exec).await?;
            serde_json::to_value(r).map_err(|e| backend(e.to_string()))
        }
        "snapDelete" => {
            let exec = str_field(req, "exec")?;
            Ok(json!(world.snapshots.delete_execution(&exec).await?))
        }
        "dispatch" => {
            let p: ExecutionPackage = field(req, "package")?;
            Ok(json!(world.dispatcher.dispatch(p).await?.0))
        }
        "claim" => {
            let worker = str_field(req, "worker")?;
            let mut lease = world.dispatcher.claim(TARGET, &worker, now).await?;
            if lease.is_none() && world.bug == Some(PlantedBug::SecondLiveLease) {
                // A dispatcher that hands a package out again while its lease is live.
                lease = world
                    .book()
                    .leases
                    .values()
                    .find(|l| l.worker_id != worker && l.deadline_ms > now)
                    .map(|l| Lease {
                        worker_id: worker.clone(),
                        lease_id: l.lease_id + LEASE_ID_OFFSET,
                        ..l.clone()
                    });
            }
            if let Some(l) = &lease {
                check_one_live_lease(world, l, now);
            }
            serde_json::to_value(lease).map_err(|e| backend(e.to_string()))
        }
        "complete" => {
            let lease: Lease = field(req, "lease")?;
            let done = world.dispatcher.complete(&lease).await;
            let mut book = world.book();
            if book
                .leases
                .get(&lease.package.execution_id)
                .is_some_and(|l| l.lease_id == lease.lease_id)
            {
                book.leases.remove(&lease.package.execution_id);
            }
            drop(book);
            done?;
            Ok(Value::Null)
        }
        _ => Err(StoreError::new(
            StoreErrorKind::InvalidArgument,
            format!("unknown op `{op}`"),
        )),
    }
}

/// PLACE-02: at most one live lease per execution at any instant. The lease `fresh`
/// was just handed out at `now`; the previous one must have expired or completed.
fn check_one_live_lease(world: &World, fresh: &Lease, now: i64) {
    let exec = fresh.package.execution_id.clone();
    let mut book = world.book();
    let taken_over = book
        .leases
        .get(&exec)
        .is_some_and(|l| l.deadline_ms <= now && l.worker_id != fresh.worker_id);
    if taken_over {
        // Coverage: an expired, uncompleted lease taken over by another worker (the
        // first holder may still be running: two recoverers race).
        book.lease_takeovers += 1;
    }
    if let Some(live) = book.leases.get(&exec) {
        if live.deadline_ms > now && live.lease_id != fresh.lease_id {
            let message = format!(
                "{} was handed a lease on the execution while {}'s lease {} was live until {} ms (now {} ms)",
                fresh.worker_id,
                live.worker_id,
                live.lease_id,
                live.deadline_ms - EPOCH_MS,
                now - EPOCH_MS
            );
            book.violations.push(Violation {
                rule: "PLACE-02".into(),
                message,
                execution_id: Some(exec.clone()),
                event_index: None,
            });
        }
    }
    book.leases.insert(exec, fresh.clone());
}

async fn append(world: &World, req: &Value) -> Result<Value, StoreError> {
    let exec = str_field(req, "exec")?;
    let expected_next: u64 = field(req, "expectedNext")?;
    let presented: Option<u64> = field(req, "fence")?;
    let raw: Vec<Value> = field(req, "events")?;
    let mut events: Vec<EventEnvelope> = Vec::with_capacity(raw.len());
    for (i, v) in raw.iter().enumerate() {
        events.push(
            EventEnvelope::from_value(v, i)
                .map_err(|e| StoreError::new(StoreErrorKind::InvalidArgument, e.to_string()))?,
        );
    }
    if world.bug == Some(PlantedBug::StaleReadsBlindAppends) {
        // The planted bug's append half: a writer's stale `expected_next` is not
        // refused; its events are renumbered onto the real head.
        let head = world
            .events()
            .read(&exec)
            .await?
            .last()
            .map_or(0, |e| e.sequence + 1);
        if expected_next < head {
            for (i, e) in events.iter_mut().enumerate() {
                e.sequence = head + i as u64;
                e.id = format!("{exec}:{}", e.sequence);
            }
            return blind_append(world, &exec, head, events, presented).await;
        }
    }
    if world.bug == Some(PlantedBug::NonAtomicFenceCheck) {
        // The planted bug's shape: check the fence, do other work (a round trip to a
        // replica, a slow index update), then write without checking it again. A
        // fence taken in between lets the old holder's write land.
        let checked = world.book().fences.get(&exec).copied().unwrap_or(0);
        if checked > 0 && presented != Some(checked) {
            return Err(StoreError::new(
                StoreErrorKind::Fenced {
                    presented,
                    current: checked,
                },
                "fenced",
            ));
        }
        tokio::time::sleep(Duration::from_millis(FENCE_CHECK_GAP_MS)).await;
    }
    if world.bug == Some(PlantedBug::WrongGateAnswerStored) {
        // A store that mangles what it stores for a resume (a column mix-up): the
        // client's answer `k` is stored as `k + 1`.
        for e in &mut events {
            if e.event_type.starts_with(GATE_PREFIX) {
                if let Some(k) = e.payload.get_mut("k") {
                    *k = json!(k.as_u64().map_or(0, |x| x + 1));
                }
            }
        }
    }
    let current = world.book().fences.get(&exec).copied().unwrap_or(0);
    // Planted bugs that do not check fences at the write forward the current token
    // whatever the caller presented.
    let forwarded = match world.bug {
        Some(PlantedBug::StoreIgnoresFence | PlantedBug::NonAtomicFenceCheck) if current > 0 => {
            Some(current)
        }
        _ => presented,
    };
    let now = STORE_TIME.now_ms();
    // The firing host's clock at the moment the store takes the append: a timer is due
    // on the clock of the host that fires it (REPLAY-11: the wake time is in the log,
    // the host's clock decides when it is reached).
    let firer_now = now.saturating_add(world.skew_of(req["from"].as_str().unwrap_or("")));
    let park_wake = if events.iter().any(|e| e.event_type == "TIMER_FIRED") {
        let log = world.events().read(&exec).await.unwrap_or_default();
        loom_kernel::fold(&log)
            .suspended_on()
            .and_then(|p| p.get("wakeAt").and_then(Value::as_i64))
    } else {
        None
    };
    let stored: Vec<(u64, String, Value)> = events
        .iter()
        .map(|e| (e.sequence, e.event_type.clone(), e.to_value()))
        .collect();
    let ack: AppendAck = world
        .events()
        .append(&exec, expected_next, events, forwarded.map(FenceToken))
        .await?;
    if current > 0 && presented != Some(current) {
        world.violate(Violation {
            rule: "PLACE-05".into(),
            message: format!(
                "an append presenting fence {presented:?} landed while fence {current} was current"
            ),
            execution_id: Some(exec.clone()),
            event_index: Some(ack.first_sequence),
        });
    }
    {
        let mut book = world.book();
        for (seq, kind, envelope) in stored {
            if kind == "TIMER_FIRED" {
                book.timer_fires += 1;
                // REPLAY-10: a timer fires at its wakeAt, never before, on the clock of
                // the host that fires it. With no skew that is store time; a host ahead
                // of the store fires up to its offset early in store time, never more.
                if park_wake.is_some_and(|w| now < w && firer_now >= w) {
                    book.skew_early_fires += 1;
                }
                if let Some(wake) = park_wake.filter(|w| firer_now < *w) {
                    book.violations.push(Violation {
                        rule: "REPLAY-10".into(),
                        message: format!(
                            "TIMER_FIRED landed at {} ms store time ({} ms on the firing host's clock), {} ms before the park's wakeAt ({} ms)",
                            now - EPOCH_MS,
                            firer_now - EPOCH_MS,
                            wake - firer_now,
                            wake - EPOCH_MS
                        ),
                        execution_id: Some(exec.clone()),
                        event_index: Some(seq),
                    });
                }
            }
            // SPI-23: a store acknowledges each sequence once; a second acknowledgement
            // at a sequence means the first event there was lost (and the later map
            // entry would otherwise hide the loss from the final check).
            if let Some(first) = book.acked.insert((exec.clone(), seq), envelope) {
                let kind = first["eventType"].as_str().unwrap_or("?").to_owned();
                book.violations.push(Violation {
                    rule: "SPI-23".into(),
                    message: format!(
                        "the store acknowledged sequence {seq} a second time; the `{kind}` it acknowledged there first was lost"
                    ),
                    execution_id: Some(exec.clone()),
                    event_index: Some(seq),
                });
            }
        }
        book.unsynced.insert(exec.clone(), ack.first_sequence);
    }
    // SPI-23, checked at every append: the stored log is 0..n without gaps.
    let log = world.events().read(&exec).await?;
    if let Some((i, e)) = log
        .iter()
        .enumerate()
        .find(|(i, e)| e.sequence != *i as u64)
    {
        world.violate(Violation {
            rule: "SPI-23".into(),
            message: format!("event {i} has sequence {}", e.sequence),
            execution_id: Some(exec.clone()),
            event_index: Some(i as u64),
        });
    }
    serde_json::to_value(ack).map_err(|e| backend(e.to_string()))
}

async fn blind_append(
    world: &World,
    exec: &str,
    head: u64,
    events: Vec<EventEnvelope>,
    presented: Option<u64>,
) -> Result<Value, StoreError> {
    let ack = world
        .events()
        .append(exec, head, events, presented.map(FenceToken))
        .await?;
    serde_json::to_value(ack).map_err(|e| backend(e.to_string()))
}

thread_local! {
    /// Store calls that timed out on this thread's current seed (a lost request or
    /// answer, a partition, a spike past the timeout). A seed runs on one thread from
    /// start to end, so the count is the seed's; [`take_calls_timed_out`] resets it.
    static CALLS_TIMED_OUT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The store calls that timed out on this thread since the last call, and resets the
/// count (coverage: evidence that lost messages reached the callers).
pub fn take_calls_timed_out() -> u64 {
    CALLS_TIMED_OUT.with(|c| c.replace(0))
}

/// A store client for one host and one run: every call is one simulated TCP request
/// wrapped in a simulated-time timeout.
pub struct StoreClient {
    host: String,
    /// A latency spike on every append that carries a park, in simulated ms: the
    /// window between scheduling a timer and its park landing, made wide.
    park_delay_ms: u64,
    /// Appends that succeeded through this client (INGRESS-15 evidence).
    pub appends: AtomicU64,
    read_len: Mutex<BTreeMap<String, u64>>,
    fences: Mutex<BTreeMap<String, u64>>,
}

impl StoreClient {
    /// A client calling from `host`.
    pub fn new(host: &str) -> StoreClient {
        StoreClient {
            host: host.to_owned(),
            park_delay_ms: 0,
            appends: AtomicU64::new(0),
            read_len: Mutex::new(BTreeMap::new()),
            fences: Mutex::new(BTreeMap::new()),
        }
    }

    /// The store's head at this client's latest read of `exec`: what the current run
    /// started from, since every runtime entry point reads the log once.
    pub fn read_len(&self, exec: &str) -> Option<u64> {
        self.read_len
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(exec)
            .copied()
    }

    /// Forgets the previous run's reads, fences and append count (a worker reuses its
    /// client from run to run).
    pub fn begin_run(&self) {
        self.appends.store(0, Ordering::SeqCst);
        self.read_len
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// The same client with a latency spike of `ms` on appends that carry a park.
    pub fn with_park_delay(mut self, ms: u64) -> StoreClient {
        self.park_delay_ms = ms;
        self
    }

    /// Records that the current run started from a log of `len` events (the REPLAY-01
    /// oracle), for a call made outside a read.
    pub fn mark_read(&self, exec: &str, len: u64) {
        self.read_len
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(exec.to_owned(), len);
    }

    /// The fence token this client last acquired for `exec`.
    pub fn fence_of(&self, exec: &str) -> Option<u64> {
        self.fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(exec)
            .copied()
    }

    /// Sends one request and waits for its response.
    pub async fn call(&self, op: &str, mut req: Value) -> Result<Value, StoreError> {
        req["op"] = json!(op);
        req["from"] = json!(self.host);
        let mut line = req.to_string();
        line.push('\n');
        let exchange = async {
            let stream = TcpStream::connect((STORE_HOST, STORE_PORT)).await?;
            let (read, mut write) = stream.into_split();
            write.write_all(line.as_bytes()).await?;
            let mut reader = BufReader::new(read);
            let mut answer = String::new();
            reader.read_line(&mut answer).await?;
            Ok::<String, std::io::Error>(answer)
        };
        let answer =
            match tokio::time::timeout(Duration::from_millis(CALL_TIMEOUT_MS), exchange).await {
                Err(_) => {
                    CALLS_TIMED_OUT.with(|c| c.set(c.get() + 1));
                    return Err(backend(format!("{op}: timed out")));
                }
                Ok(Err(e)) => return Err(backend(format!("{op}: {e}"))),
                Ok(Ok(a)) => a,
            };
        if answer.len() > LINE_BYTES_MAX {
            return Err(backend("response too long"));
        }
        let v: Value = serde_json::from_str(&answer).map_err(|e| backend(e.to_string()))?;
        match (v.get("ok"), v.get("err")) {
            (Some(ok), _) => Ok(ok.clone()),
            (None, Some(err)) => Err(err_from_json(err)),
            _ => Err(backend("malformed response")),
        }
    }

    /// Claims a package for `worker`.
    pub async fn claim(&self, worker: &str) -> Result<Option<Lease>, StoreError> {
        let v = self.call("claim", json!({ "worker": worker })).await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }

    /// Completes a lease.
    pub async fn complete(&self, lease: &Lease) -> Result<(), StoreError> {
        self.call("complete", json!({ "lease": lease }))
            .await
            .map(|_| ())
    }

    /// Queues a package.
    pub async fn dispatch(&self, package: &ExecutionPackage) -> Result<(), StoreError> {
        self.call("dispatch", json!({ "package": package }))
            .await
            .map(|_| ())
    }

    /// Sends a raw append (the zombie's write), bypassing the runtime.
    pub async fn raw_append(
        &self,
        exec: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<u64>,
    ) -> Result<AppendAck, StoreError> {
        if self.park_delay_ms > 0 && events.iter().any(|e| e.event_type == "EXECUTION_SUSPENDED") {
            tokio::time::sleep(Duration::from_millis(self.park_delay_ms)).await;
        }
        let events: Vec<Value> = events.iter().map(EventEnvelope::to_value).collect();
        let v = self
            .call(
                "append",
                json!({ "exec": exec, "expectedNext": expected_next, "events": events, "fence": fence }),
            )
            .await?;
        self.appends.fetch_add(1, Ordering::SeqCst);
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }
}

impl EventStore for StoreClient {
    fn capabilities(&self) -> EventStoreCapabilities {
        Capabilities::new(
            EVENT_STORE_SPI_VERSION,
            [
                EventStoreMethod::AcquireFence,
                EventStoreMethod::AppendIfUnchanged,
            ],
        )
    }

    async fn append(
        &self,
        execution_id: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        self.raw_append(execution_id, expected_next, events, fence.map(|f| f.0))
            .await
    }

    async fn read(&self, execution_id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        let v = self.call("read", json!({ "exec": execution_id })).await?;
        let raw = v["events"].as_array().cloned().unwrap_or_default();
        let len = v["len"].as_u64().unwrap_or(raw.len() as u64);
        let mut log = Vec::with_capacity(raw.len());
        for (i, e) in raw.iter().enumerate() {
            log.push(EventEnvelope::from_value(e, i).map_err(|e| backend(e.to_string()))?);
        }
        self.read_len
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(execution_id.to_owned(), len);
        Ok(log)
    }

    async fn list_executions(&self) -> Result<Vec<String>, StoreError> {
        let v = self.call("list", json!({})).await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }

    async fn acquire_fence(&self, execution_id: &str) -> Result<FenceToken, StoreError> {
        let v = self.call("fence", json!({ "exec": execution_id })).await?;
        let token = v.as_u64().ok_or_else(|| backend("fence: not a number"))?;
        self.fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(execution_id.to_owned(), token);
        Ok(FenceToken(token))
    }

    async fn observe(&self, execution_id: &str) -> Result<Anchor, StoreError> {
        let v = self
            .call("observe", json!({ "exec": execution_id }))
            .await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }
}

impl TimerStore for StoreClient {
    fn spi_version(&self) -> String {
        TIMER_STORE_SPI_VERSION.to_owned()
    }

    async fn schedule(&self, timer: Timer) -> Result<Timer, StoreError> {
        let v = self.call("schedule", json!({ "timer": timer })).await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }

    async fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<Timer>, StoreError> {
        let v = self
            .call("due", json!({ "now": now_ms, "limit": limit }))
            .await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }

    async fn cancel(&self, execution_id: &str, key: &str) -> Result<bool, StoreError> {
        let v = self
            .call("cancel", json!({ "exec": execution_id, "key": key }))
            .await?;
        Ok(v.as_bool().unwrap_or(false))
    }
}

impl SnapshotStore for StoreClient {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        Capabilities::new(
            SNAPSHOT_STORE_SPI_VERSION,
            [SnapshotStoreMethod::DeleteExecution],
        )
    }

    async fn save(&self, execution_id: &str, record: SnapshotRecord) -> Result<(), StoreError> {
        self.call(
            "snapSave",
            json!({ "exec": execution_id, "record": record }),
        )
        .await
        .map(|_| ())
    }

    async fn load_latest(&self, execution_id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        let v = self
            .call("snapLoad", json!({ "exec": execution_id }))
            .await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<u64, StoreError> {
        let v = self
            .call("snapDelete", json!({ "exec": execution_id }))
            .await?;
        Ok(v.as_u64().unwrap_or(0))
    }
}
