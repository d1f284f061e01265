//! Runtime snapshotting through the SnapshotStore SPI (REPLAY-15, SNAP-02, SNAP-05,
//! SNAP-11), with the in-memory and SQLite snapshot stores the kits run against.
//!
//! The runtime writes a snapshot every `every_events` events and on park; every load
//! restores the latest usable snapshot and folds only the tail. These tests drive the
//! same executions with snapshots off and on and require the same logs byte for byte,
//! show that the tail (not the whole log) was folded, and that a snapshot the runtime
//! cannot bind to the log is refused loudly and deleted rather than trusted.
mod common;
#[path = "common/runtime.rs"]
mod rt;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use loom_kernel::fold::{fold, fold_as, get_decision, ExecutionState, FoldVersion};
use loom_kernel::ingress::{self, GateConfig, ResumePath, ResumeRequest};
use loom_kernel::runtime::{
    block_on, FaultPlan, RunOutcome, Runtime, RuntimeConfig, SnapshotPolicy,
};
use loom_kernel::snapshot::{restore, SnapshotRecord};
use loom_kernel::spi::{
    Capabilities, Clock, EventStore, SnapshotStore, SnapshotStoreCapabilities, SnapshotStoreMethod,
    StoreError,
};
use loom_kernel::{canonical_string, EventEnvelope, SNAPSHOT_STORE_SPI_VERSION};
use loom_stores::{MemoryEventStore, MemorySnapshotStore, SqliteStore};
use serde_json::{json, Value};

/// A clock that moves 7 ms each time it is read, so every envelope has its own
/// timestamp and the bookkeeping checks of a loaded snapshot have something to bind to.
struct TickClock(AtomicI64);

impl TickClock {
    fn at(start_ms: i64) -> Arc<TickClock> {
        Arc::new(TickClock(AtomicI64::new(start_ms)))
    }
}

impl Clock for TickClock {
    fn now_ms(&self) -> i64 {
        self.0.fetch_add(7, Ordering::SeqCst)
    }
}

type Rt<S> = Runtime<S, Arc<TickClock>>;

/// A flow that exercises what a load must restore: steps served from the log, a
/// parallel with emits, a decision, typed-failure handling, two gates and a crash.
fn big_flow() -> Value {
    let mut body: Vec<Value> = (0..7).map(|i| rt::run_step(&format!("a{i}"))).collect();
    body.push(json!({"op": "parallel", "branches": [
        [rt::run_step("p0"), rt::emit("X", json!(1))],
        [rt::run_step("p1"), rt::emit("Y", json!(2)), rt::run_step("p2")]
    ]}));
    body.push(json!({"op": "decide", "id": "d", "choice": {"pick": 3}}));
    body.push(rt::suspend("g1"));
    body.extend((0..5).map(|i| rt::run_step(&format!("b{i}"))));
    body.push(rt::emit("Z", json!({"after": "g1"})));
    body.push(rt::suspend("g2"));
    body.extend((0..4).map(|i| rt::run_step(&format!("c{i}"))));
    body.push(json!({"op": "complete", "output": {"$ref": "steps.a3.output"}}));
    json!({"flowId": "big", "effects": {"a3": {"outcomes": [{"value": {"v": 33}}]}}, "body": body})
}

fn runtime<S: EventStore>(store: Arc<S>, clock: Arc<TickClock>) -> Rt<S> {
    let mut rt = Runtime::new(store, clock, RuntimeConfig::default());
    rt.register_flow_json(&big_flow()).unwrap();
    rt
}

/// Canonical JSON of the whole log: the bytes REPLAY-15 compares.
fn canonical_log<S: EventStore>(store: &S, id: &str) -> String {
    let log = block_on(store.read(id)).unwrap();
    log.iter()
        .map(|e| canonical_string(&e.to_value()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Drives `big` through start, a resume, a crash in the second resume and a recovery,
/// on two workers (`first` starts; `second`, a fresh runtime over the same stores,
/// does the rest, as another process would). Returns the outcomes.
fn drive<S: EventStore>(first: &Rt<S>, second: &Rt<S>) -> Vec<RunOutcome> {
    let mut out = vec![block_on(first.start("e", "big", json!({"n": 1}))).unwrap()];
    out.push(block_on(second.resume("e", ResumeRequest::new("g1", json!({"ok": 1})))).unwrap());
    second.inject_fault(FaultPlan {
        crash_after_appends: 4,
    });
    out.push(block_on(second.resume("e", ResumeRequest::new("g2", json!(2)))).unwrap());
    out.push(block_on(second.recover("e")).unwrap());
    out
}

/// The reference run: no SnapshotStore wired.
fn without_snapshots() -> (Vec<RunOutcome>, String) {
    let store = Arc::new(MemoryEventStore::new());
    let clock = TickClock::at(1_000_000);
    let (a, b) = (
        runtime(Arc::clone(&store), Arc::clone(&clock)),
        runtime(Arc::clone(&store), clock),
    );
    let out = drive(&a, &b);
    (out, canonical_log(store.as_ref(), "e"))
}

fn snapshot_sequences<P: SnapshotStore>(p: &P, id: &str) -> Vec<u64> {
    block_on(p.list_sequences(id)).unwrap()
}

/// The same run with `snapshots` wired into both workers.
fn with_snapshots<P: SnapshotStore + 'static>(
    snapshots: Arc<P>,
    policy: SnapshotPolicy,
) -> (Vec<RunOutcome>, String, Rt<MemoryEventStore>) {
    let store = Arc::new(MemoryEventStore::new());
    let clock = TickClock::at(1_000_000);
    let a = runtime(Arc::clone(&store), Arc::clone(&clock))
        .with_snapshots(Arc::clone(&snapshots), policy);
    let b = runtime(Arc::clone(&store), clock).with_snapshots(snapshots, policy);
    let out = drive(&a, &b);
    assert!(
        a.diagnostics().is_empty() && b.diagnostics().is_empty(),
        "{:?} {:?}",
        a.diagnostics(),
        b.diagnostics()
    );
    let log = canonical_log(store.as_ref(), "e");
    (out, log, b)
}

#[test]
fn replay_15_resume_with_snapshots_on_and_off_gives_byte_identical_logs() {
    let (want_out, want_log) = without_snapshots();
    assert!(
        matches!(want_out[0], RunOutcome::Parked { .. })
            && matches!(want_out[2], RunOutcome::Crashed { .. })
            && matches!(want_out[3], RunOutcome::Completed { .. }),
        "{want_out:?}"
    );
    let n_events = want_log.lines().count() as u64;
    assert!(n_events > 30, "{n_events} events");
    let policies = [
        SnapshotPolicy::default(),
        SnapshotPolicy::every(1),
        SnapshotPolicy::every(4),
        SnapshotPolicy::every(0),
        SnapshotPolicy {
            every_events: 5,
            on_park: false,
        },
    ];
    for policy in policies {
        let memory = Arc::new(MemorySnapshotStore::new());
        let (out, log, worker) = with_snapshots(Arc::clone(&memory), policy);
        assert_eq!(out, want_out, "memory store, {policy:?}");
        assert_eq!(log, want_log, "memory store, {policy:?}: the log differs");
        let sqlite = Arc::new(SqliteStore::open_in_memory().unwrap().snapshots());
        let (out, log, _) = with_snapshots(Arc::clone(&sqlite), policy);
        assert_eq!(out, want_out, "SQLite store, {policy:?}");
        assert_eq!(log, want_log, "SQLite store, {policy:?}: the log differs");

        // Where snapshots fall depends only on the log and the policy.
        let seqs = snapshot_sequences(memory.as_ref(), "e");
        assert_eq!(seqs, snapshot_sequences(sqlite.as_ref(), "e"), "{policy:?}");
        for k in &seqs {
            let on_block = policy.due_at(*k);
            assert!(on_block || policy.on_park, "{policy:?}: snapshot at {k}");
        }
        if policy.every_events > 0 && policy.every_events < n_events {
            let blocks = (0..n_events).filter(|k| policy.due_at(*k)).count();
            assert!(seqs.len() >= blocks / 2, "{policy:?}: {seqs:?}");
        }
        // The second worker restored from a snapshot and folded only the tail.
        let totals = worker.load_totals();
        assert!(totals.from_snapshot >= 3, "{policy:?}: {totals:?}");
        assert_eq!(totals.refused, 0);
        let last = worker.last_load().unwrap();
        let k = last.snapshot_sequence.expect("loaded from a snapshot");
        assert!(seqs.contains(&k));
        let log_at_load = k + 1 + last.events_folded;
        assert!(log_at_load <= n_events);
        if !policy.on_park && policy.every_events > 1 {
            assert!(
                totals.tail_events > 0,
                "{policy:?}: loads after block boundaries fold a tail"
            );
        }
        // A load gives the full fold's bytes.
        let events = block_on(worker.store().read("e")).unwrap();
        let loaded = block_on(worker.load_state("e")).unwrap();
        assert_eq!(loaded.canonical(), fold(&events).canonical());
    }
}

#[test]
fn replay_15_snapshot_plus_tail_equals_the_full_fold_at_every_length() {
    // A run parked on every gate would always load at its end; with park snapshots off
    // and a block of three, the loads after each prefix fold tails of 0, 1 and 2 events.
    let flow = json!({"flowId": "g", "body": [
        rt::run_step("a"), rt::suspend("g0"), rt::run_step("b"), rt::suspend("g1"),
        {"op": "decide", "id": "d", "choice": 1}, rt::suspend("g2"), rt::run_step("c"),
        rt::suspend("g3"), rt::emit("E", json!(1)), rt::suspend("g4")]});
    let snapshots = Arc::new(SqliteStore::open_in_memory().unwrap().snapshots());
    let store = Arc::new(MemoryEventStore::new());
    let mut rt = Runtime::new(
        Arc::clone(&store),
        TickClock::at(5),
        RuntimeConfig::default(),
    )
    .with_snapshots(
        Arc::clone(&snapshots),
        SnapshotPolicy {
            every_events: 3,
            on_park: false,
        },
    );
    rt.register_flow_json(&flow).unwrap();
    block_on(rt.start("e", "g", json!(null))).unwrap();
    let mut tails = std::collections::BTreeSet::new();
    for gate in ["g0", "g1", "g2", "g3"] {
        block_on(rt.resume("e", ResumeRequest::new(gate, json!(gate)))).unwrap();
        let events = block_on(store.read("e")).unwrap();
        let loaded = block_on(rt.load_state("e")).unwrap();
        assert_eq!(
            loaded.canonical(),
            fold(&events).canonical(),
            "after {gate}"
        );
        let r = rt.last_load().unwrap();
        let k = r.snapshot_sequence.expect("a block boundary was written");
        assert_eq!(k + 1 + r.events_folded, events.len() as u64);
        tails.insert(r.events_folded);
    }
    assert!(tails.len() >= 2, "tails {tails:?}");
    assert!(rt.diagnostics().is_empty());
}

/// A SnapshotStore whose every call fails: an outage must not stop an execution.
struct BrokenSnapshots;

impl SnapshotStore for BrokenSnapshots {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        Capabilities::new(SNAPSHOT_STORE_SPI_VERSION, [])
    }
    async fn save(&self, _: &str, _: SnapshotRecord) -> Result<(), StoreError> {
        Err(StoreError::backend("disk full"))
    }
    async fn load_latest(&self, _: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        Err(StoreError::backend("connection reset"))
    }
}

#[test]
fn replay_15_a_failing_snapshot_store_changes_nothing_but_a_diagnostic() {
    let (want_out, want_log) = without_snapshots();
    let (store, clock) = (Arc::new(MemoryEventStore::new()), TickClock::at(1_000_000));
    let a = runtime(Arc::clone(&store), Arc::clone(&clock))
        .with_snapshots(Arc::new(BrokenSnapshots), SnapshotPolicy::every(2));
    let b = runtime(Arc::clone(&store), clock)
        .with_snapshots(Arc::new(BrokenSnapshots), SnapshotPolicy::every(2));
    assert_eq!(drive(&a, &b), want_out);
    assert_eq!(canonical_log(store.as_ref(), "e"), want_log);
    let d = b.diagnostics();
    assert!(d.iter().any(|d| d.rule == "REPLAY-15"
        && d.message.contains("connection reset")
        && d.message.contains("whole log")));
    assert!(d
        .iter()
        .any(|d| d.message.contains("disk full") && d.message.contains("authoritative")));
}

/// Starts `e` on a fresh runtime with `snapshots`, parked on `g1`.
fn parked_execution<P: SnapshotStore + 'static>(
    snapshots: Arc<P>,
    start_ms: i64,
) -> Rt<MemoryEventStore> {
    let rt = runtime(Arc::new(MemoryEventStore::new()), TickClock::at(start_ms))
        .with_snapshots(snapshots, SnapshotPolicy::every(4));
    block_on(rt.start("e", "big", json!({"n": 1}))).unwrap();
    rt
}

/// Replaces every snapshot of `e` in `p` with `record`.
fn plant<P: SnapshotStore>(p: &P, record: SnapshotRecord) {
    block_on(p.delete_execution("e")).unwrap();
    block_on(p.save("e", record)).unwrap();
}

/// What a load after `plant` must do: refuse, say why, fold the whole log, delete the
/// snapshots, and leave the resume's log exactly as a run without snapshots leaves it.
fn refused_loudly<P: SnapshotStore + 'static>(p: Arc<P>, record: SnapshotRecord, why: &str) {
    let (want_out, want_log) = without_snapshots();
    let rt = parked_execution(Arc::clone(&p), 1_000_000);
    plant(p.as_ref(), record.clone());
    let events = block_on(rt.store().read("e")).unwrap();
    let loaded = block_on(rt.load_state("e")).unwrap();
    assert_eq!(loaded.canonical(), fold(&events).canonical(), "{why}");
    let r = rt.last_load().unwrap();
    assert_eq!(r.snapshot_sequence, None, "{why}: the snapshot was trusted");
    assert_eq!(r.events_folded, events.len() as u64);
    let refused = r.refused.expect("the refusal is reported");
    assert!(refused.contains(why), "{refused}");
    let d = rt.diagnostics();
    let d = d
        .iter()
        .find(|d| d.rule == "SNAP-05")
        .expect("a diagnostic");
    assert!(
        d.message
            .contains(&format!("snapshot at sequence {}", record.sequence))
            && d.message.contains("deleted the execution's 1 snapshot"),
        "{}",
        d.message
    );
    assert!(snapshot_sequences(p.as_ref(), "e").is_empty());
    // The rest of the run is the run without snapshots, byte for byte.
    let mut out = vec![RunOutcome::Parked { gate: "g1".into() }];
    out.push(block_on(rt.resume("e", ResumeRequest::new("g1", json!({"ok": 1})))).unwrap());
    rt.inject_fault(FaultPlan {
        crash_after_appends: 4,
    });
    out.push(block_on(rt.resume("e", ResumeRequest::new("g2", json!(2)))).unwrap());
    out.push(block_on(rt.recover("e")).unwrap());
    assert_eq!(out, want_out, "{why}");
    assert_eq!(canonical_log(rt.store().as_ref(), "e"), want_log, "{why}");
}

#[test]
fn replay_15_a_corrupted_or_foreign_snapshot_is_refused_loudly_not_trusted() {
    // Snapshots of another execution: a longer one, and one of the same length that
    // started at another time.
    let longer = {
        let p = Arc::new(MemorySnapshotStore::new());
        let rt = parked_execution(Arc::clone(&p), 1_000_000);
        block_on(rt.resume("e", ResumeRequest::new("g1", json!(9)))).unwrap();
        let events = block_on(rt.store().read("e")).unwrap();
        SnapshotRecord::capture(&fold(&events), events.len() as u64 - 1)
    };
    let elsewhere = {
        let p = Arc::new(MemorySnapshotStore::new());
        parked_execution(Arc::clone(&p), 7_000_000);
        block_on(p.load_latest("e")).unwrap().unwrap()
    };
    let genuine = {
        let p = Arc::new(MemorySnapshotStore::new());
        parked_execution(Arc::clone(&p), 1_000_000);
        block_on(p.load_latest("e")).unwrap().unwrap()
    };
    let mut garbage = genuine.clone();
    garbage.state = json!({"status": 5});
    let mut future = genuine.clone();
    future.schema_version = "1.99.0".into();
    let mut beyond = genuine.clone();
    beyond.state["sequence"] = json!(genuine.sequence + 1);
    let mut shifted = genuine.clone();
    shifted.state["updatedAt"] = json!(genuine.state["updatedAt"].as_i64().unwrap() + 1);
    let mut blank = genuine.clone();
    blank.state = ExecutionState::new().to_value();
    let cases: Vec<(SnapshotRecord, &str)> = vec![
        (longer, "belongs to another execution"),
        (elsewhere, "is not the timestamp"),
        (garbage, "not an ExecutionState"),
        (future, "1.99.0"),
        (beyond, "beyond the snapshot's sequence"),
        (shifted, "updatedAt"),
        (blank, "records no event"),
    ];
    for (record, why) in cases {
        refused_loudly(Arc::new(MemorySnapshotStore::new()), record.clone(), why);
        refused_loudly(
            Arc::new(SqliteStore::open_in_memory().unwrap().snapshots()),
            record,
            why,
        );
    }
    // The genuine snapshot itself is used (the checks above are not refusing everything).
    let p = Arc::new(MemorySnapshotStore::new());
    let rt = parked_execution(Arc::clone(&p), 1_000_000);
    block_on(rt.load_state("e")).unwrap();
    assert_eq!(
        rt.last_load().unwrap().snapshot_sequence,
        Some(genuine.sequence)
    );
}

#[test]
fn replay_15_without_delete_execution_a_refused_snapshot_is_left_and_the_fix_named() {
    let p = Arc::new(MemorySnapshotStore::new().with_methods([SnapshotStoreMethod::ListSequences]));
    let rt = parked_execution(Arc::clone(&p), 1_000_000);
    let mut bad = block_on(p.load_latest("e")).unwrap().unwrap();
    bad.schema_version = "1.99.0".into();
    block_on(p.save("e", bad)).unwrap();
    let events = block_on(rt.store().read("e")).unwrap();
    assert_eq!(
        block_on(rt.load_state("e")).unwrap().canonical(),
        fold(&events).canonical()
    );
    let d = rt.diagnostics();
    assert!(
        d.iter().any(|d| d.rule == "SNAP-05"
            && d.message
                .contains("delete the execution's snapshots by hand")),
        "{d:?}"
    );
    assert!(!snapshot_sequences(p.as_ref(), "e").is_empty());
}

// ---------------------------------------------------------------------------------
// SNAP-05 with a real store: the documented SNAP-04 shapes, cured by deleteExecution.

fn v20() -> FoldVersion {
    FoldVersion::from_minor(20).unwrap()
}

/// The two shapes of SNAP-04 and the sequence an old node snapshotted each at.
fn snap_04_shapes() -> Vec<(&'static str, Vec<EventEnvelope>, u64)> {
    use common::*;
    vec![
        (
            "(a) EXECUTION_FAILED without error",
            log(vec![
                started(),
                ev("EXECUTION_FAILED", json!({})),
                step_started("x"),
            ]),
            1,
        ),
        (
            "(b) resumeAs after a genuine failure, then a caught step failure",
            log(vec![
                started(),
                ev("EXECUTION_FAILED", json!({"error": "real"})),
                ev("EXECUTION_MIGRATED", json!({"flowId": "fixed"})),
                common::resumed(Value::Null),
                step_started("s"),
                step_failed("s"),
                step_started("t"),
            ]),
            5,
        ),
    ]
}

fn snap_05_in<P: SnapshotStore + 'static>(store: Arc<P>, label: &str) {
    for (shape, events, k) in snap_04_shapes() {
        let id = events[0].execution_id.as_str();
        let old = fold_as(v20(), &ExecutionState::new(), &events[..=k as usize]);
        block_on(store.save(id, SnapshotRecord::capture_as(v20(), &old, k))).unwrap();
        // The exception: the old snapshot plus the tail is not the full fold.
        let latest = block_on(store.load_latest(id)).unwrap().unwrap();
        let via_snapshot = restore(&latest, &events).unwrap();
        assert_ne!(
            via_snapshot.canonical(),
            fold(&events).canonical(),
            "{label} {shape}: not an exception"
        );
        // The remedy through the store's deleteExecution, then a reload.
        assert_eq!(block_on(store.delete_execution(id)).unwrap(), 1);
        assert_eq!(block_on(store.load_latest(id)).unwrap(), None);
        assert!(block_on(store.list_sequences(id)).unwrap().is_empty());
        let reloaded = match block_on(store.load_latest(id)).unwrap() {
            Some(r) => restore(&r, &events).unwrap(),
            None => fold(&events),
        };
        assert_eq!(
            reloaded.canonical(),
            fold(&events).canonical(),
            "{label} {shape}"
        );

        // The runtime applies the same remedy itself: it refuses the old snapshot of a
        // log in a documented shape, deletes the snapshots and loads the full fold.
        block_on(store.save(id, SnapshotRecord::capture_as(v20(), &old, k))).unwrap();
        let events_store = Arc::new(MemoryEventStore::new());
        block_on(events_store.append(id, 0, events.clone(), None)).unwrap();
        let rt = Runtime::new(events_store, TickClock::at(0), RuntimeConfig::default())
            .with_snapshots(Arc::clone(&store), SnapshotPolicy::default());
        let loaded = block_on(rt.load_state(id)).unwrap();
        assert_eq!(
            loaded.canonical(),
            fold(&events).canonical(),
            "{label} {shape}"
        );
        let refused = rt.last_load().unwrap().refused.unwrap();
        assert!(refused.contains("documented exception"), "{refused}");
        assert!(block_on(store.load_latest(id)).unwrap().is_none());
        assert!(rt
            .diagnostics()
            .iter()
            .any(|d| d.rule == "SNAP-05" && d.message.contains("deleted")));
    }
}

#[test]
fn snap_05_deleting_the_snapshots_in_a_real_store_makes_the_log_authoritative() {
    snap_05_in(Arc::new(MemorySnapshotStore::new()), "memory");
    snap_05_in(
        Arc::new(SqliteStore::open_in_memory().unwrap().snapshots()),
        "SQLite",
    );
}

// ---------------------------------------------------------------------------------
// SNAP-11: a pre-1.26 node's stray input is harmless to every consumer.

/// Every consumer reading of a state: what replay, the ingress gate and the inspection
/// APIs return. A frame's `input` is deliberately not part of it: SNAP-11 says nothing
/// reads a settled frame's input, and this is the list of things that read.
fn consumer_view(state: &ExecutionState, log: &[EventEnvelope]) -> Value {
    let frames: Value = state
        .frames
        .iter()
        .map(|(id, f)| {
            let mut v = serde_json::to_value(f).unwrap();
            v.as_object_mut().unwrap().remove("input");
            (id.clone(), v)
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    let gate = GateConfig::default();
    let answers: Vec<Value> = [
        (ResumePath::Resume, ResumeRequest::new("g", json!(7))),
        (ResumePath::Resume, ResumeRequest::new("g", Value::Null)),
        (ResumePath::Resume, ResumeRequest::new("other", json!(1))),
        (ResumePath::Recover, ResumeRequest::new("EXECUTION_RECOVERED", Value::Null)),
    ]
    .into_iter()
    .map(
        |(path, req)| match ingress::admit("e", state, log, path, &req, &gate) {
            Ok(events) => json!({"appended": events.iter().map(|e| json!([e.event_type, e.payload])).collect::<Vec<_>>()}),
            Err(e) => json!({"refused": e.to_string()}),
        },
    )
    .collect();
    json!({
        "status": state.status.as_str(),
        "frames": frames,
        "decision": get_decision(state, "d"),
        "evidenceOrder": loom_kernel::fold::evidence_order(state),
        "resumePayloads": state.resume_payloads(),
        "parkedGate": state.parked_gate(),
        "failedWhileParked": state.failed_while_parked(),
        "ingress": answers,
    })
}

#[test]
fn snap_11_a_pre_1_26_nodes_stray_input_changes_no_consumer_result() {
    use common::*;
    let v25 = FoldVersion::from_minor(25).unwrap();
    let events = log(vec![
        started(),
        step_started("a"),
        decision("d", json!("x")),
        step_completed("a", json!({"r": 1})),
        step_started("b"),
        step_failed("b"),
        suspended("g"),
    ]);
    // The old node keeps (re-adds) `input` on the frames it settled.
    let old_node = fold_as(v25, &ExecutionState::new(), &events);
    let new_node = fold(&events);
    assert!(old_node.frames["a"].input.is_some() && old_node.frames["b"].input.is_some());
    assert!(new_node.frames["a"].input.is_none() && new_node.frames["b"].input.is_none());
    assert_eq!(
        consumer_view(&old_node, &events),
        consumer_view(&new_node, &events)
    );

    // Mixed fleet through real SnapshotStores: the old node snapshots its state at the
    // park, stray inputs included; a current runtime resumes from that snapshot and
    // writes exactly the log a runtime that never saw it writes.
    let (want_out, want_log, want_calls) = snap_11_resume(None::<Arc<MemorySnapshotStore>>);
    for (got_out, got_log, got_calls) in [
        snap_11_resume(Some(Arc::new(MemorySnapshotStore::new()))),
        snap_11_resume(Some(Arc::new(
            SqliteStore::open_in_memory().unwrap().snapshots(),
        ))),
    ] {
        assert_eq!(got_out, want_out);
        assert_eq!(got_log, want_log);
        assert_eq!(got_calls, want_calls);
    }
}

/// Starts a flow that settles steps `a` (completed) and `b` (failed, caught) and parks;
/// with `old_node`, a 1.25 node's snapshot of the parked log is stored there and a
/// current runtime resumes from it. Returns the resume's outcome, the canonical log and
/// the effect calls of the resume.
fn snap_11_resume<P: SnapshotStore + 'static>(
    old_node: Option<Arc<P>>,
) -> (RunOutcome, String, (u64, u64, u64)) {
    let flow = json!({"flowId": "flow",
        "effects": {"a": {"outcomes": [{"value": {"r": 1}}]}, "b": {"outcomes": [{"error": "boom"}]}},
        "body": [
            {"op": "run", "stepId": "a", "input": {"x": 1}},
            {"op": "decide", "id": "d", "choice": "x"},
            {"op": "run", "stepId": "b", "input": {"y": 2}, "catch": {"*": []}},
            rt::suspend("g"),
            rt::run_step("c"),
            {"op": "complete", "output": {"$ref": "steps.a.output"}}]});
    let store = Arc::new(MemoryEventStore::new());
    let clock = TickClock::at(10);
    let mut first = Runtime::new(
        Arc::clone(&store),
        Arc::clone(&clock),
        RuntimeConfig::default(),
    );
    first.register_flow_json(&flow).unwrap();
    assert_eq!(
        block_on(first.start("e", "flow", json!({"n": 1}))).unwrap(),
        RunOutcome::Parked { gate: "g".into() }
    );
    let mut rt = Runtime::new(Arc::clone(&store), clock, RuntimeConfig::default());
    if let Some(p) = &old_node {
        let parked = block_on(store.read("e")).unwrap();
        let v25 = FoldVersion::from_minor(25).unwrap();
        let state = fold_as(v25, &ExecutionState::new(), &parked);
        let k = parked.len() as u64 - 1;
        block_on(p.save("e", SnapshotRecord::capture_as(v25, &state, k))).unwrap();
        // The store hands back the stray inputs the old node wrote.
        let stored = block_on(p.load_latest("e")).unwrap().unwrap();
        assert_eq!(stored.state["frames"]["a"]["input"], json!({"x": 1}));
        assert_eq!(stored.state["frames"]["b"]["input"], json!({"y": 2}));
        rt = rt.with_snapshots(Arc::clone(p), SnapshotPolicy::default());
    }
    rt.register_flow_json(&flow).unwrap();
    let out = block_on(rt.resume("e", ResumeRequest::new("g", json!(7)))).unwrap();
    if old_node.is_some() {
        let load = rt.last_load().unwrap();
        assert!(
            load.snapshot_sequence.is_some(),
            "the old snapshot was used: {load:?}"
        );
        assert!(rt.diagnostics().is_empty(), "{:?}", rt.diagnostics());
    }
    let calls = (rt.step_calls("a"), rt.step_calls("b"), rt.step_calls("c"));
    (out, canonical_log(store.as_ref(), "e"), calls)
}

/// The mixed-fleet seam (`Runtime::folding_at`): a runtime folding as a 1.25 node folds
/// the frames it settles with their `input` kept and labels its snapshots 1.25.0
/// (SNAP-11's stray input, really written); a current node restores that snapshot
/// (normalized, SNAP-10) and finishes the execution; a 1.25 node refuses a 1.26.0
/// snapshot as newer than itself and folds the whole log instead (SNAP-05). Every run
/// writes the same log as a single-version fleet.
#[test]
fn snap_11_a_runtime_folding_at_an_older_minor_writes_and_refuses_as_that_node() {
    let v25 = FoldVersion::from_minor(25).unwrap();
    let flow = json!({"flowId": "flow",
        "effects": {"a": {"outcomes": [{"value": {"r": 1}}]}},
        "body": [
            {"op": "run", "stepId": "a", "input": {"x": 1}},
            rt::suspend("g"),
            rt::run_step("c"),
            rt::suspend("h"),
            {"op": "complete", "output": {"$ref": "steps.a.output"}}]});
    let run = |versions: [Option<FoldVersion>; 3]| {
        let store = Arc::new(MemoryEventStore::new());
        let snaps = Arc::new(MemorySnapshotStore::new());
        let clock = TickClock::at(10);
        let node = |v: Option<FoldVersion>| {
            let mut rt = Runtime::new(
                Arc::clone(&store),
                Arc::clone(&clock),
                RuntimeConfig::default(),
            )
            .with_snapshots(Arc::clone(&snaps), SnapshotPolicy::default());
            if let Some(v) = v {
                rt = rt.folding_at(v);
            }
            rt.register_flow_json(&flow).unwrap();
            rt
        };
        let first = node(versions[0]);
        block_on(first.start("e", "flow", json!({"n": 1}))).unwrap();
        let parked = block_on(snaps.load_latest("e")).unwrap().unwrap();
        let second = node(versions[1]);
        block_on(second.resume("e", ResumeRequest::new("g", json!(1)))).unwrap();
        let third = node(versions[2]);
        let out = block_on(third.resume("e", ResumeRequest::new("h", json!(2)))).unwrap();
        let refused = [&first, &second, &third]
            .iter()
            .flat_map(|r| r.diagnostics())
            .filter(|d| d.rule == "SNAP-05")
            .map(|d| d.message)
            .collect::<Vec<_>>();
        (out, canonical_log(store.as_ref(), "e"), parked, refused)
    };
    let (want_out, want_log, current_snap, none) = run([None, None, None]);
    assert!(none.is_empty(), "{none:?}");
    assert_eq!(current_snap.schema_version, "1.26.0");
    assert!(current_snap.state["frames"]["a"].get("input").is_none());
    // A rolling upgrade: 1.25 node, then current nodes.
    let (out, log, old_snap, refused) = run([Some(v25), None, None]);
    assert_eq!(old_snap.schema_version, "1.25.0");
    assert_eq!(old_snap.state["frames"]["a"]["input"], json!({"x": 1}));
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!((out, log), (want_out.clone(), want_log.clone()));
    // A rollback: current node, then a 1.25 node that cannot read the 1.26 snapshot.
    let (out, log, _, refused) = run([None, Some(v25), None]);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("newer than this node's 1.25.0"),
        "{refused:?}"
    );
    assert_eq!((out, log), (want_out, want_log));
}
