//! Runs operations against one subject and renders each answer as JSON that can be
//! compared across stores.
//!
//! Each side (the store under test, the model) has its own [`Side`]: what the harness
//! has seen from that store, so a choice like "the current fence token" or "the last
//! cursor" is resolved from that store's own answers. Values a store may number its
//! own way (fence tokens, incarnations, dispatch and lease ids) are rendered as their
//! rank among the values that store issued, after checking they increase as the
//! contract requires; read-model and page cursors are opaque and rendered only as
//! present or absent; lease deadlines as the time left.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::spi::plugin::{content_digest, Chunk};
use loom_kernel::spi::{
    Anchor, ArchiveStore, BranchRecord, BranchRegistry, ContentAccess, ContentStore, DispatchId,
    DurableStateStore, EventStore, ExecutionDispatcher, ExecutionPackage, FenceToken, Lease,
    PutStreamAbort, PutStreamOutcome, QueryOptions, ReadModelStore, SnapshotStore, StoreError,
    StoreErrorKind, Timer, TimerStore, ID_BYTES_MAX,
};

use super::ops::{AnchorPick, CursorPick, Fence, Op, VersionPick, EXECUTIONS};
use super::subject::Subject;

/// Where the harness clock starts (ms); dispatcher and timer calls use it.
pub const CLOCK_START_MS: i64 = 1_000_000;
/// The target the lease-duration probe registers on both sides at the start of a case.
pub const PROBE_TARGET: &str = "explore-probe";
/// Largest distance between `storeNow` and the harness's own clock accepted (as the
/// kit's `STORE_NOW_SKEW_MS_MAX`).
pub const STORE_NOW_SKEW_MS_MAX: i64 = 60_000;

/// What the harness has seen from one store.
#[derive(Debug, Clone, Default)]
pub struct Side {
    fences: BTreeMap<String, Vec<u64>>,
    anchors: BTreeMap<String, Anchor>,
    incarnations: Vec<u64>,
    versions: BTreeMap<String, u64>,
    cursors: BTreeMap<String, String>,
    leases: Vec<Lease>,
    dispatch_ids: Vec<u64>,
    lease_ids: Vec<u64>,
    /// The harness clock (ms).
    pub now_ms: i64,
    /// The store's lease duration, from the probe (0 before it).
    pub lease_ms: i64,
    last_store_now: Option<i64>,
}

impl Side {
    /// A side whose clock is at [`CLOCK_START_MS`].
    pub fn new() -> Side {
        Side {
            now_ms: CLOCK_START_MS,
            ..Side::default()
        }
    }
}

/// The execution id for selector `sel`.
pub fn exec_id(sel: u8) -> String {
    let families = &loom_conformance::ids::Family::ALL;
    match sel {
        s if s < EXECUTIONS => format!("e{s}"),
        s if s >= super::ops::HOSTILE_SELECTOR
            && usize::from((s - super::ops::HOSTILE_SELECTOR) / 3) < families.len() =>
        {
            let i = s - super::ops::HOSTILE_SELECTOR;
            let [a, b, c] = loom_conformance::ids::campaign_ids(Some(families[usize::from(i / 3)]));
            [a, b, c][usize::from(i % 3)].clone()
        }
        3 => "__loom_quarantine__:chain".to_string(),
        4 => String::new(),
        _ => "x".repeat(ID_BYTES_MAX + 1),
    }
}

fn err(e: &StoreError, side: &Side, exec: Option<&str>) -> Value {
    let mut v = json!({ "error": e.kind.name() });
    match &e.kind {
        StoreErrorKind::Conflict {
            expected_next,
            actual_next,
        } => {
            v["expectedNext"] = json!(expected_next);
            v["actualNext"] = json!(actual_next);
        }
        StoreErrorKind::Fenced { presented, current } => {
            let id = exec.unwrap_or("");
            v["presented"] = json!(presented.map(|t| side.token_label(id, t)));
            v["current"] = json!(side.token_label(id, *current));
        }
        StoreErrorKind::FenceConflict { expected, current } => {
            let id = exec.unwrap_or("");
            v["expected"] = json!(expected.map(|t| side.token_label(id, t)));
            v["current"] = json!(current.map(|t| side.token_label(id, t)));
        }
        StoreErrorKind::Unsupported { method } => v["method"] = json!(method),
        StoreErrorKind::Backend => {
            // A backend error is never a right answer, so its words are kept: for an
            // adapter that hung or crashed they name the request and quote its stderr.
            if let Some(fault) = fault_of(&e.message) {
                v["fault"] = json!(fault);
            }
            v["message"] = json!(e.message);
        }
        _ => {}
    }
    v
}

/// `timeout` or `crash` when a `backend` error's message says the adapter process hung
/// or failed (the stdio client's prefixes), else `None`.
pub fn fault_of(message: &str) -> Option<&'static str> {
    if message.starts_with(loom_store_client::TIMEOUT_PREFIX) {
        Some("timeout")
    } else if message.starts_with(loom_store_client::FAULT_PREFIX) {
        Some("crash")
    } else {
        None
    }
}

/// The adapter fault in a rendered answer (a concurrent group's answers included).
pub fn fault_in(answer: &Value) -> Option<String> {
    match answer {
        Value::Array(items) => items.iter().find_map(fault_in),
        v => v.get("fault").and_then(Value::as_str).map(str::to_string),
    }
}

fn rank(seen: &mut Vec<u64>, value: u64) -> Value {
    if let Some(i) = seen.iter().position(|v| *v == value) {
        return json!(i + 1);
    }
    if seen.last().is_some_and(|last| *last >= value) {
        return json!({ "notIncreasing": value });
    }
    seen.push(value);
    json!(seen.len())
}

impl Side {
    /// A fence token as its rank among the tokens this store issued for `exec` (1 =
    /// the first); 0 stays 0 (never fenced) and an unissued token is -1.
    fn token_label(&self, exec: &str, token: u64) -> i64 {
        if token == 0 {
            return 0;
        }
        match self
            .fences
            .get(exec)
            .and_then(|t| t.iter().position(|v| *v == token))
        {
            Some(i) => i as i64 + 1,
            None => -1,
        }
    }

    fn issued(&mut self, exec: &str, token: u64) -> Value {
        let tokens = self.fences.entry(exec.to_string()).or_default();
        if tokens.last().is_some_and(|last| *last >= token) {
            return json!({ "notIncreasingToken": token });
        }
        tokens.push(token);
        json!({ "token": tokens.len() })
    }

    fn fence_for(&self, exec: &str, pick: Fence) -> Option<FenceToken> {
        let tokens = self.fences.get(exec).map(Vec::as_slice).unwrap_or(&[]);
        let current = tokens.last().copied();
        match pick {
            Fence::None => None,
            Fence::Current => current.map(FenceToken),
            Fence::Stale => Some(FenceToken(
                tokens
                    .len()
                    .checked_sub(2)
                    .map_or(current.unwrap_or(0) + 100, |i| tokens[i]),
            )),
            Fence::Above => Some(FenceToken(current.unwrap_or(0) + 1)),
        }
    }

    fn anchor(&mut self, a: &Anchor) -> Value {
        let inc = if a.incarnation == 0 {
            json!(0)
        } else {
            rank(&mut self.incarnations, a.incarnation)
        };
        // Incarnations need not rise in observation order, only differ: rank by first
        // appearance without the increase check.
        let inc = match inc {
            Value::Object(_) => {
                self.incarnations.push(a.incarnation);
                json!(self.incarnations.len())
            }
            v => v,
        };
        json!({ "incarnation": inc, "nextSequence": a.next_sequence, "fence": self.token_label_any(a.fence) })
    }

    fn token_label_any(&self, token: u64) -> i64 {
        if token == 0 {
            return 0;
        }
        self.fences
            .values()
            .find_map(|t| t.iter().position(|v| *v == token).map(|i| i as i64 + 1))
            .unwrap_or(-1)
    }

    fn lease(&mut self, l: &Lease) -> Value {
        let dispatch = self
            .dispatch_ids
            .iter()
            .position(|d| *d == l.dispatch_id.0)
            .map_or(json!({ "unknownDispatch": l.dispatch_id.0 }), |i| {
                json!(i + 1)
            });
        let lease = rank(&mut self.lease_ids, l.lease_id);
        json!({
            "lease": lease,
            "dispatch": dispatch,
            "package": l.package,
            "target": l.target,
            "worker": l.worker_id,
            "deadlineIn": l.deadline_ms - self.now_ms,
        })
    }

    fn pick_lease(&self, sel: u8) -> Lease {
        if self.leases.is_empty() {
            return Lease {
                lease_id: 999_999,
                dispatch_id: DispatchId(999_999),
                package: package("e0", None, 0),
                target: target(0),
                worker_id: worker(0),
                deadline_ms: self.now_ms + 1,
            };
        }
        self.leases[usize::from(sel) % self.leases.len()].clone()
    }
}

fn target(sel: u8) -> String {
    ["cpu", "gpu", "\u{e9}dge"][usize::from(sel) % 3].to_string()
}

fn worker(sel: u8) -> String {
    ["w-a", "w-b"][usize::from(sel) % 2].to_string()
}

fn package(exec: &str, target_sel: Option<u8>, hint: u8) -> ExecutionPackage {
    ExecutionPackage {
        execution_id: exec.to_string(),
        flow_id: "explore-flow".to_string(),
        resume_hint: (hint == 1).then(|| "gate \u{1f600}".to_string()),
        compute_target: target_sel.map(target),
    }
}

/// The payload of generated event `i` under choice `kind`.
fn payload(kind: u8, tag: usize, i: u64) -> Value {
    match kind % 4 {
        0 => json!({ "op": tag, "i": i, "nested": { "b": 1, "a": [1.5, "x"] } }),
        1 => loom_conformance::case::fidelity_payload(&format!("{tag}/{i}")),
        2 => Value::Null,
        _ => json!({}),
    }
}

fn batch(exec: &str, first: u64, n: u8, tag: usize, kind: u8) -> Vec<EventEnvelope> {
    (0..u64::from(n) + 1)
        .map(|i| EventEnvelope {
            id: format!("{exec}-{tag}-{i}"),
            workflow_id: "explore-flow".into(),
            execution_id: exec.to_owned(),
            event_type: "app.event".into(),
            sequence: first.wrapping_add(i),
            timestamp_ms: 1_700_000_000_000 + i as i64,
            payload: payload(kind, tag, i).into(),
            metadata: (i % 2 == 1).then(serde_json::Map::new),
        })
        .collect()
}

fn envelopes(r: Result<Vec<EventEnvelope>, StoreError>, side: &Side, exec: &str) -> Value {
    match r {
        Ok(evs) => Value::Array(evs.iter().map(EventEnvelope::to_value).collect()),
        Err(e) => err(&e, side, Some(exec)),
    }
}

fn archived(exec: &str, sequences: &[u8], tag: u8) -> Vec<EventEnvelope> {
    sequences
        .iter()
        .map(|s| EventEnvelope {
            id: format!("{exec}/archived/{s}"),
            workflow_id: "explore-flow".into(),
            execution_id: exec.to_owned(),
            event_type: "app.event".into(),
            sequence: u64::from(*s),
            timestamp_ms: 1_700_000_000_000,
            payload: payload(tag, usize::from(*s), 0).into(),
            metadata: None,
        })
        .collect()
}

fn snapshot(sequence: u64, tag: u8) -> SnapshotRecord {
    SnapshotRecord {
        schema_version: loom_kernel::versions::EVENT_SCHEMA_VERSION.to_string(),
        sequence,
        state: json!({ "status": "running", "sequence": sequence, "tag": tag, "variables": payload(tag, 0, sequence) }),
    }
}

fn blob(sel: u8) -> Vec<u8> {
    match sel % 4 {
        0 => b"alpha".to_vec(),
        1 => (0..=255u8).chain(0..=44).collect(),
        2 => Vec::new(),
        _ => vec![0, 0xff, 0xc3, 0x28, b'\n'],
    }
}

fn owner(sel: u8) -> Option<ContentAccess> {
    match sel % 3 {
        0 => None,
        1 => Some(ContentAccess::new("alice")),
        _ => Some(ContentAccess::new("\u{e9}ve")),
    }
}

fn state_key(sel: u8) -> String {
    if sel >= super::ops::HOSTILE_SELECTOR {
        return exec_id(sel);
    }
    ["k0", "k1", "K\u{e9}", ""][usize::from(sel) % 4].to_string()
}

fn state_value(sel: u8) -> Value {
    match sel % 4 {
        0 => json!(1),
        1 => loom_conformance::case::fidelity_payload("state"),
        2 => Value::Null,
        _ => json!({ "a": [1, 2.5] }),
    }
}

fn collection(sel: u8) -> String {
    ["c0", "c1", "C\u{e9}"][usize::from(sel) % 3].to_string()
}

fn doc_id(sel: u8) -> String {
    if sel >= super::ops::HOSTILE_SELECTOR {
        return exec_id(sel);
    }
    ["a", "B", "\u{e9}", "10", "9", "z"][usize::from(sel) % 6].to_string()
}

fn answer<T>(
    r: Result<T, StoreError>,
    side: &Side,
    exec: Option<&str>,
    ok: impl FnOnce(T) -> Value,
) -> Value {
    match r {
        Ok(v) => ok(v),
        Err(e) => err(&e, side, exec),
    }
}

const ABSENT: &str = "the store does not implement this SPI";

fn absent() -> Value {
    json!({ "absent": ABSENT })
}

/// The true next sequence of `exec` on this store: from `observe` when it answers,
/// else from the last event read.
async fn true_next<E: EventStore>(store: &E, exec: &str) -> u64 {
    match store.observe(exec).await {
        Ok(a) => a.next_sequence,
        Err(_) => match store.read(exec).await {
            Ok(evs) => evs.last().map_or(0, |e| e.sequence + 1),
            Err(_) => 0,
        },
    }
}

/// The concrete call a racing operation makes, resolved before the clients start.
#[derive(Debug, Clone)]
pub enum Racing {
    /// An append with these arguments.
    Append {
        /// Execution.
        exec: String,
        /// Expected next sequence.
        expected: u64,
        /// The batch.
        events: Vec<EventEnvelope>,
    },
    /// A `deleteThrough`.
    DeleteThrough {
        /// Execution.
        exec: String,
        /// Through.
        through: u64,
    },
    /// A durable-state write.
    StatePut {
        /// Key.
        key: String,
        /// Value.
        value: Value,
        /// Expected version.
        expected: Option<u64>,
    },
    /// Something that does not race (rendered as absent on both sides).
    Other,
}

/// Resolves a racing operation's arguments from the store's state before the race.
pub async fn prepare_racing<S: Subject>(sub: &S, side: &Side, op: &Op, tag: usize) -> Racing {
    match op {
        Op::Append {
            exec,
            skew,
            n,
            payload: kind,
            ..
        } => match sub.events() {
            Some(store) => {
                let exec = exec_id(*exec);
                let next = true_next(store, &exec).await;
                let expected = next.wrapping_add_signed(i64::from(*skew));
                Racing::Append {
                    events: batch(&exec, expected, *n, tag, *kind),
                    exec,
                    expected,
                }
            }
            None => Racing::Other,
        },
        Op::DeleteThrough { exec, through } => Racing::DeleteThrough {
            exec: exec_id(*exec),
            through: *through,
        },
        Op::StatePut { key, value, .. } => {
            let key = state_key(*key);
            Racing::StatePut {
                expected: side.versions.get(&key).copied(),
                value: state_value(*value),
                key,
            }
        }
        _ => Racing::Other,
    }
}

/// Runs a prepared racing call; `side` is only read (racing calls record nothing
/// but durable-state versions, which [`record_racing`] does after the race).
pub async fn run_racing<S: Subject>(sub: &S, side: &Side, call: &Racing) -> Value {
    match call {
        Racing::Append {
            exec,
            expected,
            events,
        } => match sub.events() {
            Some(store) => answer(
                store.append(exec, *expected, events.clone(), None).await,
                side,
                Some(exec),
                |ack| json!({ "firstSequence": ack.first_sequence, "nextSequence": ack.next_sequence }),
            ),
            None => absent(),
        },
        Racing::DeleteThrough { exec, through } => match sub.events() {
            Some(store) => answer(
                store.delete_through(exec, *through).await,
                side,
                Some(exec),
                |n| json!({ "deleted": n }),
            ),
            None => absent(),
        },
        Racing::StatePut {
            key,
            value,
            expected,
        } => match sub.state() {
            Some(store) => answer(
                store.put(key, value.clone(), *expected).await,
                side,
                None,
                |v| json!({ "version": v }),
            ),
            None => absent(),
        },
        Racing::Other => absent(),
    }
}

/// Records what a racing call's answer teaches the harness.
pub fn record_racing(side: &mut Side, call: &Racing, answer: &Value) {
    if let (Racing::StatePut { key, .. }, Some(v)) =
        (call, answer.get("version").and_then(Value::as_u64))
    {
        side.versions.insert(key.clone(), v);
    }
}

/// Probes the dispatcher's lease duration: registers [`PROBE_TARGET`], dispatches,
/// claims at the harness clock and completes. Both sides run it, so both see the same
/// target and the same first dispatch and lease.
pub async fn probe_lease<S: Subject>(sub: &S, side: &mut Side) -> Result<(), String> {
    let Some(d) = sub.dispatcher() else {
        return Ok(());
    };
    let fail =
        |what: &str, e: StoreError| format!("the lease-duration probe failed at {what}: {e}");
    d.register_target(PROBE_TARGET)
        .await
        .map_err(|e| fail("registerTarget", e))?;
    let id = d
        .dispatch(ExecutionPackage {
            execution_id: "explore-probe".into(),
            flow_id: "explore-flow".into(),
            resume_hint: None,
            compute_target: Some(PROBE_TARGET.into()),
        })
        .await
        .map_err(|e| fail("dispatch", e))?;
    side.dispatch_ids.push(id.0);
    let lease = d
        .claim(PROBE_TARGET, "probe", side.now_ms)
        .await
        .map_err(|e| fail("claim", e))?
        .ok_or("the lease-duration probe found nothing to claim")?;
    side.lease_ids.push(lease.lease_id);
    side.lease_ms = lease.deadline_ms - side.now_ms;
    d.complete(&lease).await.map_err(|e| fail("complete", e))?;
    if side.lease_ms <= 0 {
        return Err(format!(
            "the dispatcher leased until {} at {}: no time to run",
            lease.deadline_ms, side.now_ms
        ));
    }
    Ok(())
}

/// Runs one (non-concurrent) operation and renders its answer.
pub async fn apply<S: Subject>(sub: &S, side: &mut Side, op: &Op, tag: usize) -> Value {
    match op {
        Op::Together { .. } => json!({ "error": "a concurrent group is run by the campaign" }),
        Op::Append { .. }
        | Op::Read { .. }
        | Op::ReadRange { .. }
        | Op::AcquireFence { .. }
        | Op::AcquireFenceIf { .. }
        | Op::Observe { .. }
        | Op::AppendIfUnchanged { .. }
        | Op::DeleteThrough { .. }
        | Op::DeleteExecution { .. }
        | Op::CopyPrefix { .. }
        | Op::ListExecutions
        | Op::ListPages { .. }
        | Op::Spread { .. }
        | Op::StoreNow => match sub.events() {
            Some(store) => event_op(store, side, op, tag).await,
            None => absent(),
        },
        Op::SnapshotSave { .. }
        | Op::SnapshotLoad { .. }
        | Op::SnapshotPrune { .. }
        | Op::SnapshotList { .. }
        | Op::SnapshotDelete { .. } => match sub.snapshots() {
            Some(store) => snapshot_op(store, side, op).await,
            None => absent(),
        },
        Op::Archive { .. }
        | Op::ReadArchived { .. }
        | Op::ReplaceSegments { .. }
        | Op::ArchiveDelete { .. } => match sub.archive() {
            Some(store) => archive_op(store, side, op).await,
            None => absent(),
        },
        Op::StatePut { .. } | Op::StateGet { .. } | Op::StateDelete { .. } => match sub.state() {
            Some(store) => state_op(store, side, op).await,
            None => absent(),
        },
        Op::ModelUpsert { .. } | Op::ModelGet { .. } | Op::ModelQuery { .. } => {
            match sub.models() {
                Some(store) => model_op(store, side, op).await,
                None => absent(),
            }
        }
        Op::ContentPut { .. } | Op::ContentGet { .. } | Op::ContentPutStream { .. } => {
            match sub.content() {
                Some(store) => content_op(store, side, op).await,
                None => absent(),
            }
        }
        Op::Advance { quarters } => {
            // A quarter of the probed lease, or of the default lease when the store
            // has no dispatcher (timers still need the clock to move).
            let lease = if side.lease_ms > 0 {
                side.lease_ms
            } else {
                loom_kernel::spi::LEASE_DURATION_MS_DEFAULT
            };
            let step = (lease / 4) * i64::from(*quarters);
            side.now_ms += step;
            json!({ "advanced": quarters })
        }
        Op::RegisterTarget { .. }
        | Op::Targets
        | Op::Dispatch { .. }
        | Op::Claim { .. }
        | Op::Renew { .. }
        | Op::Complete { .. }
        | Op::Release { .. }
        | Op::ExpireLeases
        | Op::ClaimMany { .. }
        | Op::Reclaim => match sub.dispatcher() {
            Some(d) => dispatcher_op(d, side, op).await,
            None => absent(),
        },
        Op::TimerSchedule { .. } | Op::TimerDue { .. } | Op::TimerCancel { .. } => {
            match sub.timers() {
                Some(t) => timer_op(t, side, op).await,
                None => absent(),
            }
        }
        Op::BranchRegister { .. } | Op::BranchGet { .. } | Op::BranchChildren { .. } => {
            match sub.branches() {
                Some(b) => branch_op(b, side, op).await,
                None => absent(),
            }
        }
    }
}

async fn event_op<E: EventStore>(store: &E, side: &mut Side, op: &Op, tag: usize) -> Value {
    match op {
        Op::Append {
            exec,
            skew,
            n,
            fence,
            payload: kind,
        } => {
            let id = exec_id(*exec);
            let next = true_next(store, &id).await;
            let expected = next.wrapping_add_signed(i64::from(*skew));
            let token = side.fence_for(&id, *fence);
            let r = store
                .append(&id, expected, batch(&id, expected, *n, tag, *kind), token)
                .await;
            answer(
                r,
                side,
                Some(&id),
                |ack| json!({ "firstSequence": ack.first_sequence, "nextSequence": ack.next_sequence }),
            )
        }
        Op::Read { exec } => {
            let id = exec_id(*exec);
            envelopes(store.read(&id).await, side, &id)
        }
        Op::ReadRange { exec, from, to } => {
            let id = exec_id(*exec);
            envelopes(store.read_range(&id, *from, *to).await, side, &id)
        }
        Op::AcquireFence { exec } => {
            let id = exec_id(*exec);
            match store.acquire_fence(&id).await {
                Ok(t) => side.issued(&id, t.0),
                Err(e) => err(&e, side, Some(&id)),
            }
        }
        Op::AcquireFenceIf { exec, expected } => {
            let id = exec_id(*exec);
            let want = side.fence_for(&id, *expected);
            match store.acquire_fence_if(&id, want).await {
                Ok(t) => side.issued(&id, t.0),
                Err(e) => err(&e, side, Some(&id)),
            }
        }
        Op::Observe { exec } => {
            let id = exec_id(*exec);
            match store.observe(&id).await {
                Ok(a) => {
                    side.anchors.insert(id, a);
                    side.anchor(&a)
                }
                Err(e) => err(&e, side, Some(&id)),
            }
        }
        Op::AppendIfUnchanged { exec, anchor, n } => {
            let id = exec_id(*exec);
            let a = match anchor {
                AnchorPick::LastObserved => side.anchors.get(&id).copied().unwrap_or(Anchor {
                    incarnation: 0,
                    next_sequence: 0,
                    fence: 0,
                }),
                AnchorPick::Fresh => match store.observe(&id).await {
                    Ok(a) => a,
                    Err(e) => return err(&e, side, Some(&id)),
                },
            };
            let r = store
                .append_if_unchanged(&id, a, batch(&id, a.next_sequence, *n, tag, 0))
                .await;
            answer(
                r,
                side,
                Some(&id),
                |ack| json!({ "firstSequence": ack.first_sequence, "nextSequence": ack.next_sequence }),
            )
        }
        Op::DeleteThrough { exec, through } => {
            let id = exec_id(*exec);
            let r = store.delete_through(&id, *through).await;
            answer(r, side, Some(&id), |n| json!({ "deleted": n }))
        }
        Op::DeleteExecution { exec } => {
            let id = exec_id(*exec);
            let r = store.delete_execution(&id).await;
            answer(r, side, Some(&id), |b| json!({ "deleted": b }))
        }
        Op::CopyPrefix {
            source,
            target,
            through,
        } => {
            let (s, t) = (exec_id(*source), exec_id(*target));
            let r = store.copy_prefix(&s, &t, *through).await;
            answer(
                r,
                side,
                Some(&t),
                |ack| json!({ "firstSequence": ack.first_sequence, "nextSequence": ack.next_sequence }),
            )
        }
        Op::ListExecutions => answer(store.list_executions().await, side, None, |ids| json!(ids)),
        Op::Spread { n } => {
            let mut out = Vec::new();
            let ids: Vec<String> = (0..*n).map(|i| format!("m{i}")).collect();
            for id in &ids {
                let next = true_next(store, id).await;
                let r = store
                    .append(id, next, batch(id, next, 0, tag, 0), None)
                    .await;
                out.push(answer(
                    r,
                    side,
                    Some(id),
                    |a| json!({ "nextSequence": a.next_sequence }),
                ));
            }
            for id in &ids {
                out.push(envelopes(store.read(id).await, side, id));
            }
            Value::Array(out)
        }
        Op::ListPages {
            limit,
            write_between,
        } => {
            let limit = usize::try_from(*limit).unwrap_or(usize::MAX);
            let mut cursor = None;
            let mut pages = Vec::new();
            for page in 0..=usize::from(EXECUTIONS) + 8 {
                if *write_between && page == 1 {
                    // An id that sorts before every other one the campaign uses.
                    let id = format!("-between-{tag}");
                    let next = true_next(store, &id).await;
                    let r = store
                        .append(&id, next, batch(&id, next, 0, tag, 0), None)
                        .await;
                    pages.push(answer(
                        r,
                        side,
                        Some(&id),
                        |a| json!({ "between": a.next_sequence }),
                    ));
                }
                match store.list_executions_page(cursor.clone(), limit).await {
                    Ok(p) => {
                        pages.push(json!({ "ids": p.ids, "more": p.next_cursor.is_some() }));
                        cursor = p.next_cursor;
                        if cursor.is_none() {
                            break;
                        }
                    }
                    Err(e) => {
                        pages.push(err(&e, side, None));
                        break;
                    }
                }
            }
            json!({ "pages": pages })
        }
        Op::StoreNow => {
            let wall = || {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as i64)
            };
            let before = wall();
            match store.store_now().await {
                Ok(now) => {
                    let after = wall();
                    let previous = side.last_store_now.replace(now);
                    if now < before - STORE_NOW_SKEW_MS_MAX || now > after + STORE_NOW_SKEW_MS_MAX {
                        json!({ "storeNowFarFromTheCallersClock": now, "callerMs": before })
                    } else if previous.is_some_and(|p| now < p - 1_000) {
                        json!({ "storeNowWentBack": now, "previous": previous })
                    } else {
                        json!({ "storeNow": "epoch ms near the caller's clock" })
                    }
                }
                Err(e) => err(&e, side, None),
            }
        }
        _ => absent(),
    }
}

async fn snapshot_op<S: SnapshotStore>(store: &S, side: &mut Side, op: &Op) -> Value {
    let render = |r: Option<SnapshotRecord>| match r {
        None => Value::Null,
        Some(r) => {
            json!({ "schemaVersion": r.schema_version, "sequence": r.sequence, "state": r.state })
        }
    };
    match op {
        Op::SnapshotSave {
            exec,
            sequence,
            tag,
        } => {
            let r = store.save(&exec_id(*exec), snapshot(*sequence, *tag)).await;
            answer(r, side, None, |()| json!("saved"))
        }
        Op::SnapshotLoad { exec, sealed } => {
            let id = exec_id(*exec);
            let r = if *sealed {
                store.load_latest_sealed(&id).await
            } else {
                store.load_latest(&id).await
            };
            answer(r, side, None, render)
        }
        Op::SnapshotPrune { exec, through } => answer(
            store.prune_snapshots(&exec_id(*exec), *through).await,
            side,
            None,
            |n| json!({ "pruned": n }),
        ),
        Op::SnapshotList { exec } => answer(
            store.list_sequences(&exec_id(*exec)).await,
            side,
            None,
            |s| json!(s),
        ),
        Op::SnapshotDelete { exec } => answer(
            store.delete_execution(&exec_id(*exec)).await,
            side,
            None,
            |n| json!({ "deleted": n }),
        ),
        _ => absent(),
    }
}

async fn archive_op<A: ArchiveStore>(store: &A, side: &mut Side, op: &Op) -> Value {
    match op {
        Op::Archive {
            exec,
            sequences,
            tag,
        } => {
            let id = exec_id(*exec);
            answer(
                store.archive(&id, archived(&id, sequences, *tag)).await,
                side,
                None,
                |n| json!({ "new": n }),
            )
        }
        Op::ReadArchived { exec } => {
            let id = exec_id(*exec);
            envelopes(store.read_archived(&id).await, side, &id)
        }
        Op::ReplaceSegments {
            exec,
            sequences,
            tag,
        } => {
            let id = exec_id(*exec);
            answer(
                store
                    .replace_segments(&id, archived(&id, sequences, *tag))
                    .await,
                side,
                None,
                |()| json!("replaced"),
            )
        }
        Op::ArchiveDelete { exec } => answer(
            store.delete_execution(&exec_id(*exec)).await,
            side,
            None,
            |n| json!({ "deleted": n }),
        ),
        _ => absent(),
    }
}

fn version_for(side: &Side, key: &str, pick: VersionPick) -> Option<u64> {
    let current = side.versions.get(key).copied();
    match pick {
        VersionPick::Absent => None,
        VersionPick::Current => current,
        VersionPick::Below => Some(current.unwrap_or(1).saturating_sub(1)),
        VersionPick::Above => Some(current.unwrap_or(0) + 1),
    }
}

async fn state_op<D: DurableStateStore>(store: &D, side: &mut Side, op: &Op) -> Value {
    match op {
        Op::StatePut {
            key,
            value,
            expected,
        } => {
            let key = state_key(*key);
            let want = version_for(side, &key, *expected);
            match store.put(&key, state_value(*value), want).await {
                Ok(v) => {
                    side.versions.insert(key, v);
                    json!({ "version": v })
                }
                Err(e) => err(&e, side, None),
            }
        }
        Op::StateGet { key } => {
            let key = state_key(*key);
            match store.get(&key).await {
                Ok(Some(v)) => {
                    side.versions.insert(key, v.version);
                    json!({ "value": v.value, "version": v.version })
                }
                Ok(None) => Value::Null,
                Err(e) => err(&e, side, None),
            }
        }
        Op::StateDelete { key, expected } => {
            let key = state_key(*key);
            let want = version_for(side, &key, *expected).unwrap_or(0);
            answer(store.delete(&key, want).await, side, None, |()| {
                json!("deleted")
            })
        }
        _ => absent(),
    }
}

async fn model_op<R: ReadModelStore>(store: &R, side: &mut Side, op: &Op) -> Value {
    match op {
        Op::ModelUpsert {
            collection: c,
            id,
            doc,
        } => answer(
            store
                .upsert(&collection(*c), &doc_id(*id), state_value(*doc))
                .await,
            side,
            None,
            |()| json!("upserted"),
        ),
        Op::ModelGet { collection: c, id } => answer(
            store.get(&collection(*c), &doc_id(*id)).await,
            side,
            None,
            |d| match d {
                Some(doc) => json!({ "doc": doc }),
                None => Value::Null,
            },
        ),
        Op::ModelQuery {
            collection: c,
            limit,
            cursor,
        } => {
            let name = collection(*c);
            let chosen = match cursor {
                CursorPick::Start => None,
                CursorPick::Last => side.cursors.get(&name).cloned(),
                CursorPick::Foreign => Some(
                    side.cursors
                        .iter()
                        .find(|(k, _)| **k != name)
                        .map_or_else(|| "explore-forged".to_string(), |(_, v)| v.clone()),
                ),
                CursorPick::Forged => Some("explore-forged".to_string()),
            };
            match store
                .query(
                    &name,
                    QueryOptions {
                        limit: *limit,
                        cursor: chosen,
                    },
                )
                .await
            {
                Ok(page) => {
                    match &page.next_cursor {
                        Some(next) => side.cursors.insert(name, next.clone()),
                        None => side.cursors.remove(&name),
                    };
                    json!({
                        "docs": page.docs.iter().map(|d| json!({ "id": d.id, "doc": d.doc })).collect::<Vec<_>>(),
                        "more": page.next_cursor.is_some(),
                    })
                }
                Err(e) => err(&e, side, None),
            }
        }
        _ => absent(),
    }
}

async fn content_op<C: ContentStore>(store: &C, side: &mut Side, op: &Op) -> Value {
    let reference = |r: loom_kernel::spi::ContentRef| json!({ "digest": r.digest, "size": r.size });
    match op {
        Op::ContentPut { blob: b, owner: o } => {
            answer(store.put(blob(*b), owner(*o)).await, side, None, reference)
        }
        Op::ContentGet {
            blob: b,
            owner: o,
            spelling,
        } => {
            let digest = content_digest(&blob(*b));
            let spelled = match spelling % 4 {
                0 => digest,
                1 => digest
                    .to_ascii_uppercase()
                    .replacen("SHA256:", "sha256:", 1),
                2 => content_digest(b"never stored"),
                _ => "sha256:zz".to_string(),
            };
            answer(
                store.get(&spelled, owner(*o)).await,
                side,
                None,
                |bytes| match bytes {
                    Some(b) => json!({ "bytes": b }),
                    None => Value::Null,
                },
            )
        }
        Op::ContentPutStream {
            blob: b,
            owner: o,
            chunks,
            error_at,
        } => {
            let bytes = blob(*b);
            let n = usize::from((*chunks).max(1));
            let size = bytes.len().div_ceil(n).max(1);
            let mut parts: Vec<Chunk> = bytes.chunks(size).map(|c| Ok(c.to_vec())).collect();
            if let Some(at) = error_at {
                let at = usize::from(*at).min(parts.len());
                parts.insert(at, Err("the source broke".into()));
            }
            answer(
                store.put_stream(parts, owner(*o)).await,
                side,
                None,
                |outcome| match outcome {
                    PutStreamOutcome::Stored(r) => json!({ "stored": reference(r) }),
                    PutStreamOutcome::Aborted(PutStreamAbort::ChunkError {
                        bytes_read, ..
                    }) => {
                        json!({ "aborted": "chunk-error", "bytesRead": bytes_read })
                    }
                    PutStreamOutcome::Aborted(PutStreamAbort::TooLarge { limit_bytes }) => {
                        json!({ "aborted": "too-large", "limitBytes": limit_bytes })
                    }
                },
            )
        }
        _ => absent(),
    }
}

async fn dispatcher_op<D: ExecutionDispatcher>(d: &D, side: &mut Side, op: &Op) -> Value {
    match op {
        Op::RegisterTarget { target: t } => answer(
            d.register_target(&target(*t)).await,
            side,
            None,
            |b| json!({ "new": b }),
        ),
        Op::Targets => answer(d.targets().await, side, None, |t| json!(t)),
        Op::Dispatch {
            exec,
            target: t,
            hint,
        } => match d.dispatch(package(&exec_id(*exec), *t, *hint)).await {
            Ok(id) => json!({ "dispatch": rank(&mut side.dispatch_ids, id.0) }),
            Err(e) => err(&e, side, None),
        },
        Op::Claim {
            target: t,
            worker: w,
        } => match d.claim(&target(*t), &worker(*w), side.now_ms).await {
            Ok(Some(l)) => {
                let v = side.lease(&l);
                side.leases.push(l);
                v
            }
            Ok(None) => Value::Null,
            Err(e) => err(&e, side, None),
        },
        Op::Renew { lease } => {
            let l = side.pick_lease(*lease);
            match d.renew(&l, side.now_ms).await {
                Ok(renewed) => {
                    let v = side.lease(&renewed);
                    side.leases.push(renewed);
                    v
                }
                Err(e) => err(&e, side, None),
            }
        }
        Op::Complete { lease } => {
            let l = side.pick_lease(*lease);
            answer(d.complete(&l).await, side, None, |()| json!("completed"))
        }
        Op::Release { lease } => {
            let l = side.pick_lease(*lease);
            answer(d.release(&l).await, side, None, |()| json!("released"))
        }
        Op::ClaimMany { n } => {
            let t = "explore-many";
            let mut out = vec![answer(
                d.register_target(t).await,
                side,
                None,
                |b| json!({ "new": b }),
            )];
            for i in 0..*n {
                let p = ExecutionPackage {
                    execution_id: format!("q{i}"),
                    flow_id: "explore-flow".into(),
                    resume_hint: None,
                    compute_target: Some(t.into()),
                };
                match d.dispatch(p).await {
                    Ok(id) => out.push(json!({ "dispatch": rank(&mut side.dispatch_ids, id.0) })),
                    Err(e) => out.push(err(&e, side, None)),
                }
            }
            for _ in 0..*n {
                match d.claim(t, &worker(0), side.now_ms).await {
                    Ok(Some(l)) => {
                        out.push(json!({ "claimed": l.package.execution_id }));
                        out.push(answer(d.complete(&l).await, side, None, |()| {
                            json!("completed")
                        }));
                    }
                    Ok(None) => out.push(Value::Null),
                    Err(e) => out.push(err(&e, side, None)),
                }
            }
            Value::Array(out)
        }
        Op::Reclaim => {
            let t = "explore-reclaim";
            let mut out = vec![answer(
                d.register_target(t).await,
                side,
                None,
                |b| json!({ "new": b }),
            )];
            let exec = format!("r{}", side.dispatch_ids.len());
            let p = ExecutionPackage {
                execution_id: exec,
                flow_id: "explore-flow".into(),
                resume_hint: None,
                compute_target: Some(t.into()),
            };
            match d.dispatch(p).await {
                Ok(id) => out.push(json!({ "dispatch": rank(&mut side.dispatch_ids, id.0) })),
                Err(e) => out.push(err(&e, side, None)),
            }
            let lease = side.lease_ms.max(1);
            for (w, at) in [(0u8, side.now_ms), (1, side.now_ms + lease)] {
                match d.claim(t, &worker(w), at).await {
                    Ok(Some(l)) => {
                        out.push(json!({ "worker": l.worker_id, "deadlineIn": l.deadline_ms - at }))
                    }
                    Ok(None) => out.push(Value::Null),
                    Err(e) => out.push(err(&e, side, None)),
                }
            }
            Value::Array(out)
        }
        Op::ExpireLeases => match d.expire_leases(side.now_ms).await {
            Ok(ids) => {
                let ranks: Vec<Value> = ids
                    .iter()
                    .map(|id| {
                        side.dispatch_ids
                            .iter()
                            .position(|d| *d == id.0)
                            .map_or(json!({ "unknownDispatch": id.0 }), |i| json!(i + 1))
                    })
                    .collect();
                json!({ "expired": ranks })
            }
            Err(e) => err(&e, side, None),
        },
        _ => absent(),
    }
}

async fn timer_op<T: TimerStore>(t: &T, side: &mut Side, op: &Op) -> Value {
    let key = |k: u8| ["wait", "w\u{e9}"][usize::from(k) % 2].to_string();
    let render = |x: Timer| json!({ "executionId": x.execution_id, "key": x.key, "wakeAtMs": x.wake_at_ms - CLOCK_START_MS });
    match op {
        Op::TimerSchedule { exec, key: k, wake } => answer(
            t.schedule(Timer {
                execution_id: exec_id(*exec),
                wake_at_ms: CLOCK_START_MS + wake,
                key: key(*k),
            })
            .await,
            side,
            None,
            render,
        ),
        Op::TimerDue { limit } => {
            let limit = usize::try_from(*limit).unwrap_or(usize::MAX);
            answer(t.due(side.now_ms, limit).await, side, None, |ts| {
                Value::Array(ts.into_iter().map(render).collect())
            })
        }
        Op::TimerCancel { exec, key: k } => answer(
            t.cancel(&exec_id(*exec), &key(*k)).await,
            side,
            None,
            |b| json!({ "cancelled": b }),
        ),
        _ => absent(),
    }
}

async fn branch_op<B: BranchRegistry>(b: &B, side: &mut Side, op: &Op) -> Value {
    let render = |r: BranchRecord| serde_json::to_value(r).unwrap_or(Value::Null);
    match op {
        Op::BranchRegister {
            child,
            parent,
            chain,
        } => {
            let (c, p) = (exec_id(*child), exec_id(*parent));
            let chain = match chain % 4 {
                0 => vec![],
                1 => vec![p.clone()],
                2 => vec!["root".to_string(), p.clone()],
                _ => vec![c.clone(), p.clone()],
            };
            let record = BranchRecord {
                execution_id: c,
                parent_execution_id: p,
                forked_at_sequence: 9_007_199_254_740_993,
                chain,
            };
            answer(b.register(record).await, side, None, |()| {
                json!("registered")
            })
        }
        Op::BranchGet { exec } => answer(b.get(&exec_id(*exec)).await, side, None, |r| {
            r.map_or(Value::Null, render)
        }),
        Op::BranchChildren { exec } => {
            answer(b.children(&exec_id(*exec)).await, side, None, |rs| {
                Value::Array(rs.into_iter().map(render).collect())
            })
        }
        _ => absent(),
    }
}
