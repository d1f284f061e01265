//! Kit meta-tests: deliberately broken stores, each breaking one rule, and the check
//! that the kit catches each one by the right case. A kit that passes a broken store is
//! a bug in the kit. The healthy reference stores are the control: they pass every case.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use loom_conformance::kits::archive_store::ArchiveStoreKit;
use loom_conformance::kits::event_store::EventStoreKit;
use loom_conformance::kits::lifecycle::LifecycleKit;
use loom_conformance::kits::snapshot_store::SnapshotStoreKit;
use loom_conformance::{run_kit, Kit, NoHooks, RunOptions};
use loom_kernel::envelope::EventEnvelope;
use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::spi::{
    Anchor, AppendAck, ArchiveStore, ArchiveStoreCapabilities, Capabilities, EventStore,
    EventStoreCapabilities, EventStoreMethod, FenceToken, Page, SealingCapability, SnapshotStore,
    SnapshotStoreCapabilities, StoreError, StoreErrorKind,
};
use loom_report::{CaseResult, Status};
use loom_stores::memory::{MemoryArchiveStore, MemoryEventStore, MemorySnapshotStore};
use serde_json::Value;

/// Runs kit `K` over stores from `make` and returns every result.
fn run<S, K: Kit<S>>(make: impl Fn() -> S) -> Vec<CaseResult> {
    loom_conformance::block_on(async {
        run_kit::<S, K, _, _>(
            |_cx, _fresh| {
                let s = make();
                async move { Ok(s) }
            },
            &RunOptions::default(),
            &NoHooks,
            &mut |_| {},
        )
        .await
    })
    .expect("runtime")
}

/// Asserts the kit fails `case` (and report which others it failed, for the record).
fn assert_caught<S, K: Kit<S>>(what: &str, case: &str, make: impl Fn() -> S) {
    let results = run::<S, K>(make);
    let hit = results
        .iter()
        .find(|r| r.case_id == case)
        .unwrap_or_else(|| panic!("{what}: the kit has no case {case}"));
    assert_eq!(
        hit.status,
        Status::Fail,
        "{what}: case {case} did not catch the broken store: {hit:?}"
    );
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| r.status.is_failure())
        .map(|r| r.case_id.as_str())
        .collect();
    println!("{what}: caught by {case}; failing cases: {failed:?}");
}

// ---------------------------------------------------------------------------------
// Broken EventStores: one wrapper, one bug each.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bug {
    /// `read` leaves out sequence 1: a gap.
    GapInSequences,
    /// A losing concurrent append is told it succeeded: a lost write.
    LostWriteOnConflict,
    /// A fenced-out append is retried with the current token: the zombie gets through.
    ZombieAccepted,
    /// `readRange(from, to)` excludes `to`.
    ReadRangeOffByOne,
    /// `deleteThrough(k)` deletes through `k + 1`.
    DeleteThroughTooMuch,
    /// Claims `storeNow`, answers `unsupported`.
    FalseClaim,
    /// Does not claim `copyPrefix`, implements it anyway.
    UnclaimedButHonoured,
    /// Claims SPI 2.0.0 with methods introduced up to 2.6.0.
    VersionTooOld,
    /// Claims SPI 2.6.0 but `read` answers `unsupported`.
    RequiredMethodMissing,
    /// The anchor ignores the incarnation (SPI-07 broken).
    AnchorWithoutIncarnation,
    /// `append` writes one event at a time, yielding in between: not atomic.
    NonAtomicAppend,
}

struct BrokenEvents {
    inner: MemoryEventStore,
    bug: Bug,
}

fn broken(bug: Bug) -> BrokenEvents {
    BrokenEvents {
        inner: MemoryEventStore::with_clock(std::sync::Arc::new(loom_stores::SystemClock)),
        bug,
    }
}

/// Returns `Pending` once, then `Ready`: a point where a caller can be dropped.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

impl EventStore for BrokenEvents {
    fn capabilities(&self) -> EventStoreCapabilities {
        let mut caps = self.inner.capabilities();
        match self.bug {
            Bug::UnclaimedButHonoured => {
                caps.methods.remove(&EventStoreMethod::CopyPrefix);
            }
            Bug::VersionTooOld => caps.spi_version = "2.0.0".into(),
            _ => {}
        }
        caps
    }

    async fn append(
        &self,
        id: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        match self.bug {
            Bug::NonAtomicAppend => {
                let n = events.len() as u64;
                for (i, e) in events.into_iter().enumerate() {
                    self.inner
                        .append(id, expected_next + i as u64, vec![e], fence)
                        .await?;
                    YieldOnce(false).await;
                }
                Ok(AppendAck {
                    first_sequence: expected_next,
                    next_sequence: expected_next + n,
                })
            }
            _ => {
                let n = events.len() as u64;
                let result = self
                    .inner
                    .append(id, expected_next, events.clone(), fence)
                    .await;
                match (self.bug, result) {
                    (Bug::LostWriteOnConflict, Err(e))
                        if matches!(e.kind, StoreErrorKind::Conflict { .. }) =>
                    {
                        Ok(AppendAck {
                            first_sequence: expected_next,
                            next_sequence: expected_next + n,
                        })
                    }
                    (Bug::ZombieAccepted, Err(e)) => match e.kind {
                        StoreErrorKind::Fenced { current, .. } if current > 0 => {
                            self.inner
                                .append(id, expected_next, events, Some(FenceToken(current)))
                                .await
                        }
                        _ => Err(e),
                    },
                    (_, r) => r,
                }
            }
        }
    }

    async fn read(&self, id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        match self.bug {
            Bug::RequiredMethodMissing => Err(StoreError::unsupported("read")),
            Bug::GapInSequences => {
                let mut log = self.inner.read(id).await?;
                if log.len() > 2 {
                    log.remove(1);
                }
                Ok(log)
            }
            _ => self.inner.read(id).await,
        }
    }

    async fn list_executions(&self) -> Result<Vec<String>, StoreError> {
        self.inner.list_executions().await
    }

    async fn read_range(
        &self,
        id: &str,
        from: u64,
        to: u64,
    ) -> Result<Vec<EventEnvelope>, StoreError> {
        if self.bug == Bug::ReadRangeOffByOne && to > from {
            return self.inner.read_range(id, from, to - 1).await;
        }
        self.inner.read_range(id, from, to).await
    }

    async fn acquire_fence(&self, id: &str) -> Result<FenceToken, StoreError> {
        self.inner.acquire_fence(id).await
    }

    async fn acquire_fence_if(
        &self,
        id: &str,
        expected: Option<FenceToken>,
    ) -> Result<FenceToken, StoreError> {
        self.inner.acquire_fence_if(id, expected).await
    }

    async fn observe(&self, id: &str) -> Result<Anchor, StoreError> {
        let mut anchor = self.inner.observe(id).await?;
        if self.bug == Bug::AnchorWithoutIncarnation {
            anchor.incarnation = 0;
        }
        Ok(anchor)
    }

    async fn append_if_unchanged(
        &self,
        id: &str,
        anchor: Anchor,
        events: Vec<EventEnvelope>,
    ) -> Result<AppendAck, StoreError> {
        if self.bug == Bug::AnchorWithoutIncarnation {
            let real = self.inner.observe(id).await?;
            if real.next_sequence == anchor.next_sequence && real.fence == anchor.fence {
                return self.inner.append_if_unchanged(id, real, events).await;
            }
        }
        self.inner.append_if_unchanged(id, anchor, events).await
    }

    async fn store_now(&self) -> Result<i64, StoreError> {
        if self.bug == Bug::FalseClaim {
            return Err(StoreError::unsupported("storeNow"));
        }
        self.inner.store_now().await
    }

    async fn sealing_capability(&self) -> Result<Option<SealingCapability>, StoreError> {
        self.inner.sealing_capability().await
    }

    async fn delete_through(&self, id: &str, through: u64) -> Result<u64, StoreError> {
        if self.bug == Bug::DeleteThroughTooMuch {
            return self.inner.delete_through(id, through + 1).await;
        }
        self.inner.delete_through(id, through).await
    }

    async fn copy_prefix(
        &self,
        source: &str,
        target: &str,
        through: u64,
    ) -> Result<AppendAck, StoreError> {
        self.inner.copy_prefix(source, target, through).await
    }

    async fn delete_execution(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_execution(id).await
    }

    async fn list_executions_page(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<Page, StoreError> {
        self.inner.list_executions_page(cursor, limit).await
    }
}

#[test]
fn spi_23_gap_in_sequences_is_caught() {
    assert_caught::<_, EventStoreKit>(
        "gap in sequences",
        "spi_23_reads_are_ascending_and_gapless",
        || broken(Bug::GapInSequences),
    );
}

#[test]
fn spi_23_lost_write_on_concurrent_append_is_caught() {
    assert_caught::<_, EventStoreKit>(
        "lost write",
        "spi_23_concurrent_appends_exactly_one_wins",
        || broken(Bug::LostWriteOnConflict),
    );
    assert_caught::<_, EventStoreKit>(
        "lost write",
        "spi_23_concurrent_appenders_one_winner_per_sequence",
        || broken(Bug::LostWriteOnConflict),
    );
}

#[test]
fn place_05_zombie_append_accepted_is_caught() {
    assert_caught::<_, EventStoreKit>(
        "zombie accepted",
        "place_05_zombie_append_after_new_fence_is_refused",
        || broken(Bug::ZombieAccepted),
    );
}

#[test]
fn spi_03_read_range_off_by_one_is_caught() {
    assert_caught::<_, EventStoreKit>(
        "readRange off by one",
        "spi_03_read_range_is_inclusive",
        || broken(Bug::ReadRangeOffByOne),
    );
}

#[test]
fn spi_09_delete_through_too_much_is_caught() {
    assert_caught::<_, EventStoreKit>(
        "deleteThrough too much",
        "spi_09_delete_through_keeps_later_events",
        || broken(Bug::DeleteThroughTooMuch),
    );
    assert_caught::<_, LifecycleKit>(
        "deleteThrough too much",
        "spi_19_compact_archives_exactly_the_removed_envelopes",
        || {
            (
                broken(Bug::DeleteThroughTooMuch),
                MemorySnapshotStore::new(),
                MemoryArchiveStore::new(),
            )
        },
    );
}

#[test]
fn spi_02_false_claim_is_caught() {
    assert_caught::<_, EventStoreKit>(
        "claimed storeNow, answers unsupported",
        "spi_02_claims_match_behaviour",
        || broken(Bug::FalseClaim),
    );
}

#[test]
fn spi_02_honoured_but_unclaimed_is_caught() {
    assert_caught::<_, EventStoreKit>(
        "copyPrefix honoured, not claimed",
        "spi_02_claims_match_behaviour",
        || broken(Bug::UnclaimedButHonoured),
    );
}

#[test]
fn spi_21_version_too_old_for_claimed_methods_is_caught() {
    assert_caught::<_, EventStoreKit>(
        "claims 2.0.0 with 2.6.0 methods",
        "spi_21_capabilities_are_consistent",
        || broken(Bug::VersionTooOld),
    );
}

#[test]
fn spi_21_claimed_version_without_required_method_is_caught() {
    assert_caught::<_, EventStoreKit>(
        "read answers unsupported",
        "spi_21_required_methods_answer",
        || broken(Bug::RequiredMethodMissing),
    );
}

#[test]
fn spi_07_anchor_without_incarnation_is_caught() {
    assert_caught::<_, EventStoreKit>(
        "anchor without incarnation",
        "spi_07_incarnation_distinct_anchor",
        || broken(Bug::AnchorWithoutIncarnation),
    );
}

#[test]
fn spi_23_non_atomic_append_is_caught_by_the_crash_case() {
    assert_caught::<_, EventStoreKit>(
        "non-atomic append",
        "spi_23_crash_between_append_and_ack_is_all_or_nothing",
        || broken(Bug::NonAtomicAppend),
    );
}

// ---------------------------------------------------------------------------------
// Broken SnapshotStores.

#[derive(Clone, Copy, PartialEq, Eq)]
enum SnapBug {
    /// Sorts every object's keys (as `jsonb` does) but keeps `seq`: legal.
    ReorderKeysKeepSeq,
    /// Sorts keys and drops each decision's `seq`: decision order is lost.
    ReorderKeysDropSeq,
    /// `listSequences` answers descending.
    UnsortedListSequences,
}

struct BrokenSnapshots {
    inner: MemorySnapshotStore,
    bug: SnapBug,
}

/// Rebuilds every object with its keys sorted (shorter first, like `jsonb`), dropping
/// `seq` keys under `_decisions` when asked to.
fn normalise(value: &Value, drop_seq: bool, in_decisions: bool) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| (a.len(), a.as_str()).cmp(&(b.len(), b.as_str())));
            let mut out = serde_json::Map::new();
            for k in keys {
                if drop_seq && in_decisions && k == "seq" {
                    continue;
                }
                let child_in_decisions = k == "_decisions" || (in_decisions && !map.is_empty());
                out.insert(k.clone(), normalise(&map[k], drop_seq, child_in_decisions));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| normalise(v, drop_seq, in_decisions))
                .collect(),
        ),
        other => other.clone(),
    }
}

impl SnapshotStore for BrokenSnapshots {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        self.inner.capabilities()
    }
    async fn save(&self, id: &str, mut record: SnapshotRecord) -> Result<(), StoreError> {
        match self.bug {
            SnapBug::ReorderKeysKeepSeq => record.state = normalise(&record.state, false, false),
            SnapBug::ReorderKeysDropSeq => record.state = normalise(&record.state, true, false),
            SnapBug::UnsortedListSequences => {}
        }
        self.inner.save(id, record).await
    }
    async fn load_latest(&self, id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        self.inner.load_latest(id).await
    }
    async fn delete_execution(&self, id: &str) -> Result<u64, StoreError> {
        self.inner.delete_execution(id).await
    }
    async fn load_latest_sealed(&self, id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        self.inner.load_latest_sealed(id).await
    }
    async fn prune_snapshots(&self, id: &str, through: u64) -> Result<u64, StoreError> {
        self.inner.prune_snapshots(id, through).await
    }
    async fn list_sequences(&self, id: &str) -> Result<Vec<u64>, StoreError> {
        let mut seqs = self.inner.list_sequences(id).await?;
        if self.bug == SnapBug::UnsortedListSequences {
            seqs.reverse();
        }
        Ok(seqs)
    }
}

fn broken_snapshots(bug: SnapBug) -> BrokenSnapshots {
    BrokenSnapshots {
        inner: MemorySnapshotStore::new(),
        bug,
    }
}

#[test]
fn snap_09_key_reordering_store_that_loses_decision_order_is_caught() {
    assert_caught::<_, SnapshotStoreKit>(
        "jsonb-like store dropping seq",
        "snap_09_decision_order_survives_key_reordering",
        || broken_snapshots(SnapBug::ReorderKeysDropSeq),
    );
}

#[test]
fn snap_09_key_reordering_alone_passes() {
    let results = run::<_, SnapshotStoreKit>(|| broken_snapshots(SnapBug::ReorderKeysKeepSeq));
    let r = results
        .iter()
        .find(|r| r.case_id == "snap_09_decision_order_survives_key_reordering")
        .expect("case");
    assert_eq!(
        r.status,
        Status::Pass,
        "reordering keys while keeping seq is legal: {r:?}"
    );
}

#[test]
fn spi_17_unsorted_list_sequences_is_caught() {
    assert_caught::<_, SnapshotStoreKit>(
        "listSequences descending",
        "spi_17_list_sequences_ascending",
        || broken_snapshots(SnapBug::UnsortedListSequences),
    );
    assert_caught::<_, LifecycleKit>(
        "listSequences descending",
        "spi_17_dry_run_reports_and_deletes_nothing",
        || {
            (
                MemoryEventStore::new(),
                broken_snapshots(SnapBug::UnsortedListSequences),
                MemoryArchiveStore::new(),
            )
        },
    );
}

// ---------------------------------------------------------------------------------
// A broken ArchiveStore: drops the last envelope of every batch.

struct LossyArchive(MemoryArchiveStore);

impl ArchiveStore for LossyArchive {
    fn capabilities(&self) -> ArchiveStoreCapabilities {
        self.0.capabilities()
    }
    async fn archive(
        &self,
        id: &str,
        mut envelopes: Vec<EventEnvelope>,
    ) -> Result<u64, StoreError> {
        envelopes.pop();
        self.0.archive(id, envelopes).await
    }
    async fn read_archived(&self, id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        self.0.read_archived(id).await
    }
    async fn delete_execution(&self, id: &str) -> Result<u64, StoreError> {
        self.0.delete_execution(id).await
    }
    async fn replace_segments(
        &self,
        id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> Result<(), StoreError> {
        self.0.replace_segments(id, envelopes).await
    }
}

#[test]
fn spi_19_lossy_archive_is_caught_and_compaction_does_not_truncate() {
    assert_caught::<_, ArchiveStoreKit>(
        "lossy archive",
        "spi_19_archive_keeps_exact_envelopes",
        || LossyArchive(MemoryArchiveStore::new()),
    );
    assert_caught::<_, LifecycleKit>(
        "lossy archive",
        "spi_19_compact_archives_exactly_the_removed_envelopes",
        || {
            (
                MemoryEventStore::new(),
                MemorySnapshotStore::new(),
                LossyArchive(MemoryArchiveStore::new()),
            )
        },
    );
}

// ---------------------------------------------------------------------------------
// Controls: the healthy reference stores pass every case, and a minimal store (no
// optional method) is skipped, visibly, never silently absent (SPI-02).

#[test]
fn spi_02_healthy_memory_store_passes_and_minimal_store_is_skipped_visibly() {
    let full = run::<_, EventStoreKit>(|| {
        MemoryEventStore::with_clock(std::sync::Arc::new(loom_stores::SystemClock))
    });
    let bad: Vec<_> = full.iter().filter(|r| r.status != Status::Pass).collect();
    assert!(bad.is_empty(), "the healthy store did not pass: {bad:?}");
    let minimal = run::<_, EventStoreKit>(|| MemoryEventStore::new().with_methods([]));
    assert_eq!(
        minimal.len(),
        full.len(),
        "a case went missing for the minimal store"
    );
    assert!(
        minimal.iter().all(|r| !r.status.is_failure()),
        "{minimal:?}"
    );
    assert!(minimal.iter().any(|r| r.status == Status::SkipNotClaimed));
    let lifecycle = run::<_, LifecycleKit>(|| {
        (
            MemoryEventStore::new(),
            MemorySnapshotStore::new(),
            MemoryArchiveStore::new(),
        )
    });
    assert!(
        lifecycle.iter().all(|r| r.status == Status::Pass),
        "{lifecycle:?}"
    );
}

#[test]
fn spi_01_every_case_cites_known_rules() {
    let mut all: Vec<&str> = Vec::new();
    for table in [
        <EventStoreKit as Kit<MemoryEventStore>>::cases(),
        <SnapshotStoreKit as Kit<MemorySnapshotStore>>::cases(),
        <ArchiveStoreKit as Kit<MemoryArchiveStore>>::cases(),
    ] {
        for case in table {
            assert!(!case.rules.is_empty(), "{} cites no rule", case.id);
            all.extend(case.rules.iter().copied());
        }
    }
    let _ = Capabilities::<EventStoreMethod>::new("2.6.0", []);
    assert!(all.contains(&"SPI-07"));
}

// ---------------------------------------------------------------------------------
// Broken plugin-tier stores (SPI-20): one wrapper per bug around the in-memory store.

use loom_conformance::kits::content_store::ContentStoreKit;
use loom_conformance::kits::durable_state_store::DurableStateStoreKit;
use loom_conformance::kits::read_model_store::ReadModelStoreKit;
use loom_kernel::spi::plugin::Chunk;
use loom_kernel::spi::{
    ContentAccess, ContentRef, ContentStore, ContentStoreCapabilities, DurableStateStore,
    DurableStateStoreCapabilities, PutStreamOutcome, QueryOptions, ReadModelPage, ReadModelStore,
    ReadModelStoreCapabilities, Versioned,
};
use loom_stores::plugin_memory::{
    MemoryContentStore, MemoryDurableStateStore, MemoryReadModelStore,
};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ContentBug {
    /// An aborted `putStream` keeps the chunks received before the abort as an object.
    PartialPutStream,
    /// Owned content is stored as public: any owner (or none) can read it.
    OwnerLeak,
}

struct BrokenContent {
    inner: MemoryContentStore,
    bug: ContentBug,
}

impl ContentStore for BrokenContent {
    fn capabilities(&self) -> ContentStoreCapabilities {
        self.inner.capabilities()
    }

    async fn put(
        &self,
        bytes: Vec<u8>,
        owner: Option<ContentAccess>,
    ) -> Result<ContentRef, StoreError> {
        let owner = if self.bug == ContentBug::OwnerLeak {
            None
        } else {
            owner
        };
        self.inner.put(bytes, owner).await
    }

    async fn get(
        &self,
        digest: &str,
        owner: Option<ContentAccess>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(digest, owner).await
    }

    async fn put_stream<I>(
        &self,
        chunks: I,
        owner: Option<ContentAccess>,
    ) -> Result<PutStreamOutcome, StoreError>
    where
        I: IntoIterator<Item = Chunk> + Send,
        I::IntoIter: Send,
    {
        let all: Vec<Chunk> = chunks.into_iter().collect();
        let outcome = self.inner.put_stream(all.clone(), owner.clone()).await?;
        if self.bug == ContentBug::PartialPutStream {
            if let PutStreamOutcome::Aborted(_) = &outcome {
                // Keep what arrived before the failing chunk, as a careless writer that
                // streams straight into its object would.
                let prefix: Vec<u8> = all.into_iter().map_while(Result::ok).flatten().collect();
                let _ = self.inner.put(prefix, owner).await;
            }
        }
        Ok(outcome)
    }

    async fn seals_content(&self) -> Result<bool, StoreError> {
        self.inner.seals_content().await
    }
}

fn broken_content(bug: ContentBug) -> BrokenContent {
    BrokenContent {
        inner: MemoryContentStore::new(),
        bug,
    }
}

#[test]
fn spi_20_put_stream_keeping_a_partial_object_is_caught() {
    assert_caught::<_, ContentStoreKit>(
        "partial putStream",
        "spi_20_put_stream_chunk_error_stores_nothing",
        || broken_content(ContentBug::PartialPutStream),
    );
}

#[test]
fn spi_20_content_served_to_another_owner_is_caught() {
    assert_caught::<_, ContentStoreKit>(
        "owner leak",
        "spi_20_owned_content_is_readable_only_by_its_owner",
        || broken_content(ContentBug::OwnerLeak),
    );
}

/// A compare-and-set that ignores the expected version: every write wins.
struct CasIgnoresVersion(MemoryDurableStateStore);

impl DurableStateStore for CasIgnoresVersion {
    fn capabilities(&self) -> DurableStateStoreCapabilities {
        self.0.capabilities()
    }
    async fn get(&self, key: &str) -> Result<Option<Versioned>, StoreError> {
        self.0.get(key).await
    }
    async fn put(
        &self,
        key: &str,
        value: Value,
        _expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        let current = self.0.get(key).await?.map(|v| v.version);
        self.0.put(key, value, current).await
    }
    async fn delete(&self, key: &str, expected: u64) -> Result<(), StoreError> {
        self.0.delete(key, expected).await
    }
}

#[test]
fn spi_20_cas_that_ignores_the_version_is_caught() {
    assert_caught::<_, DurableStateStoreKit>(
        "CAS ignoring the version",
        "spi_20_state_stale_version_is_conflict_and_writes_nothing",
        || CasIgnoresVersion(MemoryDurableStateStore::new()),
    );
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum QueryBug {
    /// Limit 0 answers an empty page instead of `InvalidArgument`.
    AcceptsLimitZero,
    /// A cursor the store never issued restarts from the top instead of failing.
    AcceptsForgedCursor,
}

struct BrokenReadModels {
    inner: MemoryReadModelStore,
    bug: QueryBug,
}

impl ReadModelStore for BrokenReadModels {
    fn capabilities(&self) -> ReadModelStoreCapabilities {
        self.inner.capabilities()
    }
    async fn upsert(&self, collection: &str, id: &str, doc: Value) -> Result<(), StoreError> {
        self.inner.upsert(collection, id, doc).await
    }
    async fn get(&self, collection: &str, id: &str) -> Result<Option<Value>, StoreError> {
        self.inner.get(collection, id).await
    }
    async fn query(
        &self,
        collection: &str,
        options: QueryOptions,
    ) -> Result<ReadModelPage, StoreError> {
        if self.bug == QueryBug::AcceptsLimitZero && options.limit == 0 {
            return Ok(ReadModelPage {
                docs: Vec::new(),
                next_cursor: None,
            });
        }
        let retry = QueryOptions {
            limit: options.limit,
            cursor: None,
        };
        match self.inner.query(collection, options).await {
            Err(e)
                if self.bug == QueryBug::AcceptsForgedCursor
                    && e.kind == StoreErrorKind::InvalidArgument =>
            {
                self.inner.query(collection, retry).await
            }
            other => other,
        }
    }
}

fn broken_read_models(bug: QueryBug) -> BrokenReadModels {
    BrokenReadModels {
        inner: MemoryReadModelStore::new(),
        bug,
    }
}

#[test]
fn spi_20_query_accepting_limit_zero_is_caught() {
    assert_caught::<_, ReadModelStoreKit>(
        "limit 0 accepted",
        "spi_20_query_limit_out_of_range_is_invalid",
        || broken_read_models(QueryBug::AcceptsLimitZero),
    );
}

#[test]
fn spi_20_query_accepting_a_forged_cursor_is_caught() {
    assert_caught::<_, ReadModelStoreKit>(
        "forged cursor accepted",
        "spi_20_query_forged_cursor_is_invalid",
        || broken_read_models(QueryBug::AcceptsForgedCursor),
    );
}

#[test]
fn spi_20_healthy_plugin_stores_pass_every_case() {
    for r in run::<_, ContentStoreKit>(MemoryContentStore::new)
        .iter()
        .chain(&run::<_, DurableStateStoreKit>(
            MemoryDurableStateStore::new,
        ))
        .chain(&run::<_, ReadModelStoreKit>(MemoryReadModelStore::new))
    {
        assert_eq!(r.status, Status::Pass, "{r:?}");
    }
    let minimal = run::<_, ContentStoreKit>(|| MemoryContentStore::new().with_methods([]));
    assert!(
        minimal.iter().all(|r| !r.status.is_failure()),
        "{minimal:?}"
    );
    assert!(minimal.iter().any(|r| r.status == Status::SkipNotClaimed));
}

/// Checks that the case table's `needs` decide exactly what each case decides by itself:
/// a case is `skip-not-claimed` against the store from `make` if and only if the store's
/// claims leave one of its needs unmet. The test macros skip by the table before any case
/// runs, so a need missing from the table would run a case that then stops (a failure),
/// and a need the case does not check would skip a case that could run.
fn assert_needs_match<S, K: Kit<S>>(what: &str, make: impl Fn() -> S) {
    let claims = K::claims(&make());
    for r in run::<S, K>(&make) {
        let info = K::cases()
            .iter()
            .find(|c| c.id == r.case_id)
            .unwrap_or_else(|| panic!("{what}: no case {}", r.case_id));
        let unmet = claims.unmet(info);
        assert_eq!(
            r.status == Status::SkipNotClaimed,
            unmet.is_some(),
            "{what}: {} concluded {:?} ({:?}) but the table's needs {:?} against the claims {:?} say {}",
            r.case_id,
            r.status,
            r.message,
            info.needs,
            claims,
            match unmet {
                Some(need) => format!("skip for want of {need}"),
                None => "run".to_string(),
            }
        );
    }
}

#[test]
fn spi_02_the_case_tables_needs_decide_every_skip() {
    use loom_kernel::spi::{
        ArchiveStoreMethod, ContentStoreMethod, SnapshotStoreMethod, SpiMethod,
    };
    let clock = || std::sync::Arc::new(loom_stores::SystemClock);
    assert_needs_match::<_, EventStoreKit>("events, all", || MemoryEventStore::with_clock(clock()));
    assert_needs_match::<_, EventStoreKit>("events, none", || {
        MemoryEventStore::new().with_methods([])
    });
    assert_needs_match::<_, EventStoreKit>("events, claiming SPI 2.0.0", || {
        broken(Bug::VersionTooOld)
    });
    for m in EventStoreMethod::ALL {
        assert_needs_match::<_, EventStoreKit>(&format!("events, only {}", m.name()), || {
            MemoryEventStore::with_clock(clock()).with_methods([m])
        });
    }
    for m in SnapshotStoreMethod::ALL {
        assert_needs_match::<_, SnapshotStoreKit>(&format!("snapshots, only {}", m.name()), || {
            MemorySnapshotStore::new().with_methods([m])
        });
    }
    assert_needs_match::<_, SnapshotStoreKit>("snapshots, all", MemorySnapshotStore::new);
    for m in ArchiveStoreMethod::ALL {
        assert_needs_match::<_, ArchiveStoreKit>(&format!("archive, only {}", m.name()), || {
            MemoryArchiveStore::new().with_methods([m])
        });
    }
    assert_needs_match::<_, ArchiveStoreKit>("archive, none", || {
        MemoryArchiveStore::new().with_methods([])
    });
    for m in ContentStoreMethod::ALL {
        assert_needs_match::<_, ContentStoreKit>(&format!("content, only {}", m.name()), || {
            MemoryContentStore::new().with_methods([m])
        });
    }
    assert_needs_match::<_, ContentStoreKit>("content, all", MemoryContentStore::new);
    assert_needs_match::<_, ContentStoreKit>("content, none", || {
        MemoryContentStore::new().with_methods([])
    });
    assert_needs_match::<_, LifecycleKit>("lifecycle, all", || {
        (
            MemoryEventStore::new(),
            MemorySnapshotStore::new(),
            MemoryArchiveStore::new(),
        )
    });
    assert_needs_match::<_, LifecycleKit>("lifecycle, none", || {
        (
            MemoryEventStore::new().with_methods([]),
            MemorySnapshotStore::new().with_methods([]),
            MemoryArchiveStore::new().with_methods([]),
        )
    });
    assert_needs_match::<_, DurableStateStoreKit>("durable state", MemoryDurableStateStore::new);
    assert_needs_match::<_, ReadModelStoreKit>("read models", MemoryReadModelStore::new);
}
