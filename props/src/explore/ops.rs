//! The operation alphabet of the exploration campaign and its proptest strategies.
//!
//! Every argument is a small selector (`exec: 2` is the third execution id, `blob: 1`
//! the second blob), so random sequences collide on the same ids, sequences and keys
//! often enough to reach the interesting states, and a shrunk case reads as a short
//! story. Selectors past the ordinary range pick the boundary values a store author
//! forgets: the empty id, an id over `ID_BYTES_MAX`, the reserved quarantine prefix,
//! limits at 0 and one past their maximum, `SEQUENCE_MAX` and one past it.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};

/// How many ordinary execution ids (`e0`, `e1`, ...) the campaign uses.
pub const EXECUTIONS: u8 = 3;
/// Most operations in one generated case.
pub const CASE_OPS_MAX: usize = 40;
/// Most operations run together as concurrent clients.
pub const TOGETHER_OPS_MAX: usize = 3;
/// Most events in one generated append.
pub const BATCH_EVENTS_MAX: u8 = 4;
/// Fewest and most executions one [`Op::Spread`] writes (past a cache of 8).
pub const SPREAD_EXECUTIONS_MIN: u8 = 9;
/// See [`SPREAD_EXECUTIONS_MIN`].
pub const SPREAD_EXECUTIONS_MAX: u8 = 12;
/// Fewest and most claims one [`Op::ClaimMany`] makes (past a compaction every 32).
pub const CLAIM_MANY_MIN: u8 = 33;
/// See [`CLAIM_MANY_MIN`].
pub const CLAIM_MANY_MAX: u8 = 40;
/// The first execution selector of the hostile families: selector `HOSTILE_SELECTOR +
/// 3 f + i` is id `i` of `loom_conformance::ids::campaign_ids(Family::ALL[f])`.
pub const HOSTILE_SELECTOR: u8 = 100;

/// Which fence token an append presents, or `acquireFenceIf` expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Fence {
    /// No token.
    None,
    /// The latest token this store issued for the execution (none if it issued none).
    Current,
    /// The token before it (a zombie's), or a made-up one if there is none.
    Stale,
    /// One above the current token: never issued.
    Above,
}

/// Which anchor `appendIfUnchanged` presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AnchorPick {
    /// The anchor the last `observe` of the execution returned (the zero anchor if none).
    LastObserved,
    /// A fresh observation taken just before.
    Fresh,
}

/// Which version a durable-state write or delete expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum VersionPick {
    /// None: the key must be absent (a create; for `delete`, version 0).
    Absent,
    /// The version the harness last saw for the key.
    Current,
    /// One below it.
    Below,
    /// One above it.
    Above,
}

/// Which cursor a read-model query continues from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CursorPick {
    /// From the start.
    Start,
    /// The last `next_cursor` this collection gave (from the start if none).
    Last,
    /// The last cursor another collection gave.
    Foreign,
    /// A made-up cursor.
    Forged,
}

/// One SPI call (or, for [`Op::Together`], several from concurrent clients). The fields
/// are the selectors the module documentation describes (an execution, a key, a blob,
/// a lease by index) or plain arguments named as in the SPI.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Op {
    /// `EventStore.append` at the stream's true next sequence plus `skew`.
    Append {
        exec: u8,
        skew: i8,
        n: u8,
        fence: Fence,
        payload: u8,
    },
    /// `EventStore.read`.
    Read { exec: u8 },
    /// `EventStore.readRange`.
    ReadRange { exec: u8, from: u64, to: u64 },
    /// `EventStore.acquireFence`.
    AcquireFence { exec: u8 },
    /// `EventStore.acquireFenceIf`.
    AcquireFenceIf { exec: u8, expected: Fence },
    /// `EventStore.observe`.
    Observe { exec: u8 },
    /// `EventStore.appendIfUnchanged`.
    AppendIfUnchanged { exec: u8, anchor: AnchorPick, n: u8 },
    /// `EventStore.deleteThrough`.
    DeleteThrough { exec: u8, through: u64 },
    /// `EventStore.deleteExecution`.
    DeleteExecution { exec: u8 },
    /// `EventStore.copyPrefix`.
    CopyPrefix {
        source: u8,
        target: u8,
        through: u64,
    },
    /// `EventStore.listExecutions`.
    ListExecutions,
    /// Pages through `EventStore.listExecutionsPage` with this limit; with
    /// `write_between`, a new stream that sorts before every other id is created after
    /// the first page (a store paging by offset then repeats an id).
    ListPages {
        limit: u64,
        #[serde(default)]
        write_between: bool,
    },
    /// Appends one event to each of `n` executions (`m0`, `m1`, ...), then reads each
    /// back: more executions than a small cache holds.
    Spread { n: u8 },
    /// `EventStore.storeNow`, checked against the caller's clock (not compared).
    StoreNow,
    /// `SnapshotStore.save`.
    SnapshotSave { exec: u8, sequence: u64, tag: u8 },
    /// `SnapshotStore.loadLatest` (or `loadLatestSealed`).
    SnapshotLoad { exec: u8, sealed: bool },
    /// `SnapshotStore.pruneSnapshots`.
    SnapshotPrune { exec: u8, through: u64 },
    /// `SnapshotStore.listSequences`.
    SnapshotList { exec: u8 },
    /// `SnapshotStore.deleteExecution`.
    SnapshotDelete { exec: u8 },
    /// `ArchiveStore.archive` of the envelopes at these sequences, in this order.
    Archive {
        exec: u8,
        sequences: Vec<u8>,
        tag: u8,
    },
    /// `ArchiveStore.readArchived`.
    ReadArchived { exec: u8 },
    /// `ArchiveStore.replaceSegments`.
    ReplaceSegments {
        exec: u8,
        sequences: Vec<u8>,
        tag: u8,
    },
    /// `ArchiveStore.deleteExecution`.
    ArchiveDelete { exec: u8 },
    /// `DurableStateStore.put`.
    StatePut {
        key: u8,
        value: u8,
        expected: VersionPick,
    },
    /// `DurableStateStore.get`.
    StateGet { key: u8 },
    /// `DurableStateStore.delete`.
    StateDelete { key: u8, expected: VersionPick },
    /// `ReadModelStore.upsert`.
    ModelUpsert { collection: u8, id: u8, doc: u8 },
    /// `ReadModelStore.get`.
    ModelGet { collection: u8, id: u8 },
    /// `ReadModelStore.query`.
    ModelQuery {
        collection: u8,
        limit: i64,
        cursor: CursorPick,
    },
    /// `ContentStore.put`.
    ContentPut { blob: u8, owner: u8 },
    /// `ContentStore.get`, the digest spelled as chosen.
    ContentGet { blob: u8, owner: u8, spelling: u8 },
    /// `ContentStore.putStream` of a blob in `chunks` pieces, failing at `error_at`.
    ContentPutStream {
        blob: u8,
        owner: u8,
        chunks: u8,
        error_at: Option<u8>,
    },
    /// `ExecutionDispatcher.registerTarget`.
    RegisterTarget { target: u8 },
    /// `ExecutionDispatcher.targets`.
    Targets,
    /// `ExecutionDispatcher.dispatch`.
    Dispatch {
        exec: u8,
        target: Option<u8>,
        hint: u8,
    },
    /// `ExecutionDispatcher.claim` at the harness clock.
    Claim { target: u8, worker: u8 },
    /// `ExecutionDispatcher.renew` of the lease picked by index, at the harness clock.
    Renew { lease: u8 },
    /// `ExecutionDispatcher.complete`.
    Complete { lease: u8 },
    /// `ExecutionDispatcher.release`.
    Release { lease: u8 },
    /// `ExecutionDispatcher.expireLeases` at the harness clock.
    ExpireLeases,
    /// Dispatches `n` packages to a fresh target and claims (and completes) them one by
    /// one: dozens of claims in one queue.
    ClaimMany { n: u8 },
    /// One dispatch claimed by one worker, expired, and claimed again by another.
    Reclaim,
    /// Moves the harness clock forward by `quarters` quarter lease durations.
    Advance { quarters: u8 },
    /// `TimerStore.schedule`, waking `wake` ms after the harness clock's start.
    TimerSchedule { exec: u8, key: u8, wake: i64 },
    /// `TimerStore.due` at the harness clock.
    TimerDue { limit: u64 },
    /// `TimerStore.cancel`.
    TimerCancel { exec: u8, key: u8 },
    /// `BranchRegistry.register`.
    BranchRegister { child: u8, parent: u8, chain: u8 },
    /// `BranchRegistry.get`.
    BranchGet { exec: u8 },
    /// `BranchRegistry.children`.
    BranchChildren { exec: u8 },
    /// Several calls from concurrent clients; the answers must match some order of them.
    Together { ops: Vec<Op> },
}

impl Op {
    /// The SPI the operation belongs to (`together` for a concurrent group).
    pub fn spi(&self) -> &'static str {
        use Op::*;
        match self {
            Append { .. }
            | Read { .. }
            | ReadRange { .. }
            | AcquireFence { .. }
            | AcquireFenceIf { .. }
            | Observe { .. }
            | AppendIfUnchanged { .. }
            | DeleteThrough { .. }
            | DeleteExecution { .. }
            | CopyPrefix { .. }
            | ListExecutions
            | ListPages { .. }
            | Spread { .. }
            | StoreNow => "eventStore",
            SnapshotSave { .. }
            | SnapshotLoad { .. }
            | SnapshotPrune { .. }
            | SnapshotList { .. }
            | SnapshotDelete { .. } => "snapshotStore",
            Archive { .. }
            | ReadArchived { .. }
            | ReplaceSegments { .. }
            | ArchiveDelete { .. } => "archiveStore",
            StatePut { .. } | StateGet { .. } | StateDelete { .. } => "durableStateStore",
            ModelUpsert { .. } | ModelGet { .. } | ModelQuery { .. } => "readModelStore",
            ContentPut { .. } | ContentGet { .. } | ContentPutStream { .. } => "contentStore",
            RegisterTarget { .. }
            | Targets
            | Dispatch { .. }
            | Claim { .. }
            | Renew { .. }
            | Complete { .. }
            | Release { .. }
            | ExpireLeases
            | ClaimMany { .. }
            | Reclaim
            | Advance { .. } => "dispatcher",
            TimerSchedule { .. } | TimerDue { .. } | TimerCancel { .. } => "timerStore",
            BranchRegister { .. } | BranchGet { .. } | BranchChildren { .. } => "branchRegistry",
            Together { .. } => "together",
        }
    }

    /// The rule an unexpected answer to this operation breaks first.
    pub fn rule(&self) -> &'static str {
        use Op::*;
        match self {
            Append { fence, .. } if *fence != Fence::None => "PLACE-05",
            Append { .. } | Read { .. } | ListExecutions | Spread { .. } => "SPI-23",
            ReadRange { .. } => "SPI-03",
            AcquireFence { .. } => "SPI-04",
            AcquireFenceIf { .. } => "SPI-05",
            Observe { .. } | AppendIfUnchanged { .. } => "SPI-06",
            DeleteThrough { .. } => "SPI-09",
            DeleteExecution { .. } | CopyPrefix { .. } => "SPI-14",
            ListPages { .. } => "SPI-13",
            StoreNow => "SPI-08",
            SnapshotSave { .. } | SnapshotLoad { .. } | SnapshotDelete { .. } => "SPI-15",
            SnapshotPrune { .. } => "SPI-16",
            SnapshotList { .. } => "SPI-17",
            Archive { .. } | ReadArchived { .. } => "SPI-19",
            ReplaceSegments { .. } | ArchiveDelete { .. } => "SPI-18",
            StatePut { .. }
            | StateGet { .. }
            | StateDelete { .. }
            | ModelUpsert { .. }
            | ModelGet { .. }
            | ModelQuery { .. }
            | ContentPut { .. }
            | ContentGet { .. }
            | ContentPutStream { .. } => "SPI-20",
            Dispatch {
                target: Some(_), ..
            }
            | RegisterTarget { .. }
            | Targets => "PLACE-07",
            Dispatch { .. }
            | Claim { .. }
            | Renew { .. }
            | Complete { .. }
            | Release { .. }
            | ClaimMany { .. }
            | Reclaim => "PLACE-02",
            ExpireLeases | Advance { .. } => "PLACE-04",
            TimerSchedule { .. } | TimerDue { .. } | TimerCancel { .. } => "GAP-25",
            BranchRegister { .. } | BranchGet { .. } | BranchChildren { .. } => "GAP-19",
            Together { ops } => ops.first().map_or("SPI-23", Op::rule),
        }
    }
}

fn exec() -> impl Strategy<Value = u8> {
    // Mostly the ordinary ids; sometimes the quarantine prefix (3), the empty id (4) or
    // an id one byte over the limit (5).
    prop_oneof![12 => 0..EXECUTIONS, 1 => 3u8..6]
}

fn fence() -> impl Strategy<Value = Fence> {
    prop_oneof![
        4 => Just(Fence::None),
        4 => Just(Fence::Current),
        1 => Just(Fence::Stale),
        1 => Just(Fence::Above)
    ]
}

fn sequence() -> impl Strategy<Value = u64> {
    prop_oneof![
        10 => 0u64..10,
        1 => Just(loom_kernel::spi::SEQUENCE_MAX),
        1 => Just(loom_kernel::spi::SEQUENCE_MAX + 1)
    ]
}

fn version() -> impl Strategy<Value = VersionPick> {
    prop_oneof![
        2 => Just(VersionPick::Absent),
        4 => Just(VersionPick::Current),
        1 => Just(VersionPick::Below),
        1 => Just(VersionPick::Above)
    ]
}

fn cursor() -> impl Strategy<Value = CursorPick> {
    prop_oneof![
        3 => Just(CursorPick::Start),
        4 => Just(CursorPick::Last),
        1 => Just(CursorPick::Foreign),
        1 => Just(CursorPick::Forged)
    ]
}

fn archive_sequences() -> impl Strategy<Value = Vec<u8>> {
    // Mostly ascending sets with gaps; sometimes unsorted or repeated (invalid).
    prop_oneof![
        6 => prop::collection::btree_set(0u8..12, 0..5).prop_map(|s| s.into_iter().collect()),
        1 => prop::collection::vec(0u8..12, 1..4)
    ]
}

/// The event-store operations.
pub fn event_op() -> BoxedStrategy<Op> {
    prop_oneof![
        8 => (exec(), -2i8..3, 0..BATCH_EVENTS_MAX, fence(), 0u8..4)
            .prop_map(|(exec, skew, n, fence, payload)| Op::Append { exec, skew, n, fence, payload }),
        3 => exec().prop_map(|exec| Op::Read { exec }),
        3 => (exec(), sequence(), sequence()).prop_map(|(exec, from, to)| Op::ReadRange { exec, from, to }),
        3 => exec().prop_map(|exec| Op::AcquireFence { exec }),
        2 => (exec(), fence()).prop_map(|(exec, expected)| Op::AcquireFenceIf { exec, expected }),
        2 => exec().prop_map(|exec| Op::Observe { exec }),
        3 => (exec(), prop_oneof![Just(AnchorPick::LastObserved), Just(AnchorPick::Fresh)], 0..BATCH_EVENTS_MAX)
            .prop_map(|(exec, anchor, n)| Op::AppendIfUnchanged { exec, anchor, n }),
        3 => (exec(), sequence()).prop_map(|(exec, through)| Op::DeleteThrough { exec, through }),
        2 => exec().prop_map(|exec| Op::DeleteExecution { exec }),
        2 => (exec(), exec(), sequence()).prop_map(|(source, target, through)| Op::CopyPrefix { source, target, through }),
        1 => Just(Op::ListExecutions),
        2 => (prop_oneof![4 => 1u64..5, 1 => Just(0u64), 1 => Just(loom_kernel::spi::LIST_PAGE_LIMIT_MAX as u64 + 1)], any::<bool>())
            .prop_map(|(limit, write_between)| Op::ListPages { limit, write_between }),
        1 => (SPREAD_EXECUTIONS_MIN..=SPREAD_EXECUTIONS_MAX).prop_map(|n| Op::Spread { n }),
        1 => Just(Op::StoreNow),
    ]
    .boxed()
}

/// The snapshot-store operations.
pub fn snapshot_op() -> BoxedStrategy<Op> {
    prop_oneof![
        4 => (exec(), sequence(), 0u8..3).prop_map(|(exec, sequence, tag)| Op::SnapshotSave { exec, sequence, tag }),
        3 => (exec(), any::<bool>()).prop_map(|(exec, sealed)| Op::SnapshotLoad { exec, sealed }),
        2 => (exec(), sequence()).prop_map(|(exec, through)| Op::SnapshotPrune { exec, through }),
        2 => exec().prop_map(|exec| Op::SnapshotList { exec }),
        1 => exec().prop_map(|exec| Op::SnapshotDelete { exec }),
    ]
    .boxed()
}

/// The archive-store operations.
pub fn archive_op() -> BoxedStrategy<Op> {
    prop_oneof![
        4 => (exec(), archive_sequences(), 0u8..2).prop_map(|(exec, sequences, tag)| Op::Archive { exec, sequences, tag }),
        3 => exec().prop_map(|exec| Op::ReadArchived { exec }),
        1 => (exec(), archive_sequences(), 0u8..2).prop_map(|(exec, sequences, tag)| Op::ReplaceSegments { exec, sequences, tag }),
        1 => exec().prop_map(|exec| Op::ArchiveDelete { exec }),
    ]
    .boxed()
}

/// The durable-state operations.
pub fn state_op() -> BoxedStrategy<Op> {
    prop_oneof![
        4 => (0u8..4, 0u8..4, version()).prop_map(|(key, value, expected)| Op::StatePut { key, value, expected }),
        2 => (0u8..4).prop_map(|key| Op::StateGet { key }),
        2 => (0u8..4, version()).prop_map(|(key, expected)| Op::StateDelete { key, expected }),
    ]
    .boxed()
}

/// The read-model operations.
pub fn model_op() -> BoxedStrategy<Op> {
    prop_oneof![
        3 => (0u8..3, 0u8..6, 0u8..4).prop_map(|(collection, id, doc)| Op::ModelUpsert { collection, id, doc }),
        1 => (0u8..3, 0u8..6).prop_map(|(collection, id)| Op::ModelGet { collection, id }),
        3 => (0u8..3, prop_oneof![4 => 1i64..4, 1 => Just(0i64), 1 => Just(1001i64)], cursor())
            .prop_map(|(collection, limit, cursor)| Op::ModelQuery { collection, limit, cursor }),
    ]
    .boxed()
}

/// The content operations.
pub fn content_op() -> BoxedStrategy<Op> {
    prop_oneof![
        2 => (0u8..4, 0u8..3).prop_map(|(blob, owner)| Op::ContentPut { blob, owner }),
        2 => (0u8..4, 0u8..3, 0u8..4).prop_map(|(blob, owner, spelling)| Op::ContentGet { blob, owner, spelling }),
        1 => (0u8..4, 0u8..3, 1u8..4, prop::option::of(0u8..4))
            .prop_map(|(blob, owner, chunks, error_at)| Op::ContentPutStream { blob, owner, chunks, error_at }),
    ]
    .boxed()
}

/// The dispatcher operations.
pub fn dispatcher_op() -> BoxedStrategy<Op> {
    prop_oneof![
        2 => (0u8..3).prop_map(|target| Op::RegisterTarget { target }),
        1 => Just(Op::Targets),
        4 => (exec(), prop::option::of(0u8..3), 0u8..2).prop_map(|(exec, target, hint)| Op::Dispatch { exec, target, hint }),
        4 => (0u8..3, 0u8..2).prop_map(|(target, worker)| Op::Claim { target, worker }),
        1 => (0u8..4).prop_map(|lease| Op::Renew { lease }),
        2 => (0u8..4).prop_map(|lease| Op::Complete { lease }),
        1 => (0u8..4).prop_map(|lease| Op::Release { lease }),
        1 => Just(Op::ExpireLeases),
        2 => (1u8..6).prop_map(|quarters| Op::Advance { quarters }),
        1 => (CLAIM_MANY_MIN..=CLAIM_MANY_MAX).prop_map(|n| Op::ClaimMany { n }),
        1 => Just(Op::Reclaim),
    ]
    .boxed()
}

/// The timer operations (with clock moves, so timers fall due).
pub fn timer_op() -> BoxedStrategy<Op> {
    prop_oneof![
        3 => (exec(), 0u8..2, -10_000i64..80_000).prop_map(|(exec, key, wake)| Op::TimerSchedule { exec, key, wake }),
        2 => prop_oneof![4 => 1u64..4, 1 => Just(0u64)].prop_map(|limit| Op::TimerDue { limit }),
        1 => (exec(), 0u8..2).prop_map(|(exec, key)| Op::TimerCancel { exec, key }),
        1 => (1u8..6).prop_map(|quarters| Op::Advance { quarters }),
    ]
    .boxed()
}

/// The branch-registry operations.
pub fn branch_op() -> BoxedStrategy<Op> {
    prop_oneof![
        2 => (exec(), exec(), 0u8..4).prop_map(|(child, parent, chain)| Op::BranchRegister { child, parent, chain }),
        1 => exec().prop_map(|exec| Op::BranchGet { exec }),
        1 => exec().prop_map(|exec| Op::BranchChildren { exec }),
    ]
    .boxed()
}

/// Operations that race meaningfully when clients run them at once: appends to the
/// same stream, `deleteThrough` against appends, and (with the plugin tier)
/// compare-and-set writes from the same version.
fn racing_op(spis: Spis) -> BoxedStrategy<Op> {
    let events = prop_oneof![
        3 => (0..EXECUTIONS, 0i8..2, 0..BATCH_EVENTS_MAX).prop_map(|(exec, skew, n)| Op::Append { exec, skew, n, fence: Fence::None, payload: 0 }),
        1 => (0..EXECUTIONS, 0u64..6).prop_map(|(exec, through)| Op::DeleteThrough { exec, through }),
    ];
    if spis.state {
        prop_oneof![
            3 => events,
            1 => (0u8..2, 0u8..3).prop_map(|(key, value)| Op::StatePut { key, value, expected: VersionPick::Current }),
        ]
        .boxed()
    } else {
        events.boxed()
    }
}

/// Which SPIs a campaign explores (those the store under test implements).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spis {
    /// EventStore.
    pub events: bool,
    /// SnapshotStore.
    pub snapshots: bool,
    /// ArchiveStore.
    pub archive: bool,
    /// ContentStore.
    pub content: bool,
    /// DurableStateStore.
    pub state: bool,
    /// ReadModelStore.
    pub models: bool,
    /// ExecutionDispatcher.
    pub dispatcher: bool,
    /// TimerStore.
    pub timers: bool,
    /// BranchRegistry.
    pub branches: bool,
}

impl Spis {
    /// Every SPI.
    pub const ALL: Spis = Spis {
        events: true,
        snapshots: true,
        archive: true,
        content: true,
        state: true,
        models: true,
        dispatcher: true,
        timers: true,
        branches: true,
    };
}

/// One operation of the SPIs in `spis`, with concurrent groups when the event store is
/// explored.
pub fn op(spis: Spis) -> BoxedStrategy<Op> {
    let mut parts: Vec<(u32, BoxedStrategy<Op>)> = Vec::new();
    let mut add = |on: bool, weight: u32, s: fn() -> BoxedStrategy<Op>| {
        if on {
            parts.push((weight, s()));
        }
    };
    add(spis.events, 10, event_op);
    add(spis.snapshots, 3, snapshot_op);
    add(spis.archive, 3, archive_op);
    add(spis.state, 3, state_op);
    add(spis.models, 3, model_op);
    add(spis.content, 2, content_op);
    add(spis.dispatcher, 4, dispatcher_op);
    add(spis.timers, 3, timer_op);
    add(spis.branches, 2, branch_op);
    if spis.events {
        parts.push((
            1,
            prop::collection::vec(racing_op(spis), 2..=TOGETHER_OPS_MAX)
                .prop_map(|ops| Op::Together { ops })
                .boxed(),
        ));
    }
    if parts.is_empty() {
        return Just(Op::ListExecutions).boxed();
    }
    prop::strategy::Union::new_weighted(parts).boxed()
}

impl Op {
    /// The same operation with every ordinary execution, durable-state key and document
    /// id selector (0, 1, 2) passed through `f`.
    pub fn map_execs(mut self, f: &impl Fn(u8) -> u8) -> Op {
        use Op::*;
        let g = |s: &mut u8| {
            if *s < EXECUTIONS {
                *s = f(*s);
            }
        };
        match &mut self {
            Append { exec, .. }
            | Read { exec }
            | ReadRange { exec, .. }
            | AcquireFence { exec }
            | AcquireFenceIf { exec, .. }
            | Observe { exec }
            | AppendIfUnchanged { exec, .. }
            | DeleteThrough { exec, .. }
            | DeleteExecution { exec }
            | SnapshotSave { exec, .. }
            | SnapshotLoad { exec, .. }
            | SnapshotPrune { exec, .. }
            | SnapshotList { exec }
            | SnapshotDelete { exec }
            | Archive { exec, .. }
            | ReadArchived { exec }
            | ReplaceSegments { exec, .. }
            | ArchiveDelete { exec }
            | Dispatch { exec, .. }
            | TimerSchedule { exec, .. }
            | TimerCancel { exec, .. }
            | BranchGet { exec }
            | BranchChildren { exec } => g(exec),
            // Durable-state keys and read-model document ids draw from the same family.
            StatePut { key, .. } | StateGet { key } | StateDelete { key, .. } => g(key),
            ModelUpsert { id, .. } | ModelGet { id, .. } => g(id),
            CopyPrefix { source, target, .. } => {
                g(source);
                g(target);
            }
            BranchRegister { child, parent, .. } => {
                g(child);
                g(parent);
            }
            Together { ops } => {
                let taken = std::mem::take(ops);
                *ops = taken.into_iter().map(|o| o.map_execs(f)).collect();
            }
            _ => {}
        }
        self
    }
}

/// A case: a sequence of operations. Half the cases draw their three execution ids from
/// one hostile family (`loom_conformance::ids::Family`) instead of `e0`..`e2`, so twins
/// meet in one history.
pub fn case(spis: Spis) -> impl Strategy<Value = Vec<Op>> {
    let families = loom_conformance::ids::Family::ALL.len() as u8;
    (
        prop::option::of(0..families),
        prop::collection::vec(op(spis), 1..=CASE_OPS_MAX),
    )
        .prop_map(|(family, ops)| match family {
            None => ops,
            Some(f) => ops
                .into_iter()
                .map(|o| o.map_execs(&|s| HOSTILE_SELECTOR + 3 * f + s))
                .collect(),
        })
}
