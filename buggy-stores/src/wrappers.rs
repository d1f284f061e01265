//! The Rust bugs: one wrapper per SPI over the in-memory reference store, forwarding
//! every call and changing exactly the behaviour its bug names. A wrapper with a bug
//! name it does not know is faithful (the control).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::spi::plugin::{Chunk, DOCUMENT_BYTES_MAX};
use loom_kernel::spi::{
    Anchor, AppendAck, ArchiveStore, ArchiveStoreCapabilities, BranchRecord, BranchRegistry,
    ContentAccess, ContentRef, ContentStore, ContentStoreCapabilities, DispatchId,
    DurableStateStore, DurableStateStoreCapabilities, EventStore, EventStoreCapabilities,
    EventStoreMethod, ExecutionDispatcher, ExecutionPackage, FenceToken, Lease, Page,
    PutStreamAbort, PutStreamOutcome, QueryOptions, ReadModelPage, ReadModelStore,
    ReadModelStoreCapabilities, SealingCapability, SnapshotStore, SnapshotStoreCapabilities,
    StoreError, StoreErrorKind, Timer, TimerStore, Versioned, APPEND_BATCH_EVENTS_MAX,
    BRANCH_CHAIN_LEN_MAX, CONTENT_BYTES_MAX, SEQUENCE_MAX,
};
use loom_stores::memory::{
    MemoryArchiveStore, MemoryBranchRegistry, MemoryDispatcher, MemoryEventStore,
    MemorySnapshotStore, MemoryTimerStore,
};
use loom_stores::plugin_memory::{
    MemoryContentStore, MemoryDurableStateStore, MemoryReadModelStore,
};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Numbers above `i64::MAX` replaced by `i64::MAX`, at any depth.
fn saturate(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.as_u64().is_some_and(|u| u > i64::MAX as u64) => {
            Value::from(i64::MAX)
        }
        Value::Array(a) => Value::Array(a.iter().map(saturate).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), saturate(v))).collect())
        }
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------------
// EventStore

#[derive(Default)]
struct EventMemo {
    /// Ids whose stream was deleted and not re-created, and fence-only ids.
    not_live: BTreeSet<String>,
    /// Events of deleted incarnations, by id.
    buried: BTreeMap<String, Vec<EventEnvelope>>,
    /// Ids whose stream was deleted (for `fence-if-forgets-deleted-stream`).
    deleted: BTreeSet<String>,
    /// `storeNow` calls so far (for `store-now-two-clocks`).
    store_now_calls: u64,
}

/// How far `store-now-two-clocks`' second clock lags the first.
const STORE_NOW_SECOND_CLOCK_BEHIND_MS: i64 = 5_000;

/// An EventStore with one bug.
#[derive(Clone)]
pub struct BuggyEvents {
    inner: MemoryEventStore,
    bug: &'static str,
    opened_ms: i64,
    memo: Arc<Mutex<EventMemo>>,
}

impl BuggyEvents {
    /// The in-memory store (on the system clock) with `bug`.
    pub fn new(bug: &'static str) -> BuggyEvents {
        let inner = MemoryEventStore::with_clock(Arc::new(loom_stores::SystemClock));
        let inner = if bug == "unsupported-names-another-method" {
            let mut methods = inner.capabilities().methods;
            methods.remove(&EventStoreMethod::SealingCapability);
            inner.with_methods(methods)
        } else {
            inner
        };
        BuggyEvents {
            inner,
            bug,
            opened_ms: wall_ms(),
            memo: Arc::default(),
        }
    }

    async fn next(&self, id: &str) -> u64 {
        self.inner.observe(id).await.map_or(0, |a| a.next_sequence)
    }
}

impl EventStore for BuggyEvents {
    fn capabilities(&self) -> EventStoreCapabilities {
        self.inner.capabilities()
    }

    async fn append(
        &self,
        id: &str,
        expected: u64,
        mut events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        match self.bug {
            "batch-limit-unchecked" if events.len() > APPEND_BATCH_EVENTS_MAX => {
                let rest = events.split_off(APPEND_BATCH_EVENTS_MAX);
                let first = self.inner.append(id, expected, events, fence).await?;
                let n = rest.len() as u64;
                self.inner
                    .append(id, first.next_sequence, rest, fence)
                    .await?;
                return Ok(AppendAck {
                    first_sequence: first.first_sequence,
                    next_sequence: first.next_sequence + n,
                });
            }
            "empty-metadata-dropped" => {
                for e in &mut events {
                    if e.metadata.as_ref().is_some_and(|m| m.is_empty()) {
                        e.metadata = None;
                    }
                }
            }
            "u64-saturates" => {
                for e in &mut events {
                    e.payload = saturate(&e.payload).into();
                }
            }
            "sequence-before-fence" => {
                let next = self.next(id).await;
                if next != expected && !events.is_empty() {
                    return Err(StoreError::conflict(expected, next));
                }
            }
            _ => {}
        }
        let result = self.inner.append(id, expected, events.clone(), fence).await;
        if result.is_ok() {
            let mut memo = lock(&self.memo);
            memo.not_live.remove(id);
        }
        match (self.bug, result) {
            ("fence-token-above-accepted", Err(e)) => match e.kind {
                StoreErrorKind::Fenced {
                    presented: Some(p),
                    current,
                } if current > 0 && p > current => {
                    self.inner
                        .append(id, expected, events, Some(FenceToken(current)))
                        .await
                }
                _ => Err(e),
            },
            ("conflict-facts-swapped", Err(e)) => match e.kind {
                StoreErrorKind::Conflict {
                    expected_next,
                    actual_next,
                } => Err(StoreError::conflict(actual_next, expected_next)),
                _ => Err(e),
            },
            (_, r) => r,
        }
    }

    async fn read(&self, id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        self.inner.read(id).await
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
        match self.bug {
            "range-text-order" => {
                if from > to {
                    return self.inner.read_range(id, from, to).await;
                }
                let (f, t) = (from.to_string(), to.to_string());
                Ok(self
                    .inner
                    .read(id)
                    .await?
                    .into_iter()
                    .filter(|e| {
                        let s = e.sequence.to_string();
                        f <= s && s <= t
                    })
                    .collect())
            }
            "range-reads-old-incarnation" => {
                let mut got = self.inner.read_range(id, from, to).await?;
                let next = self.next(id).await;
                let buried = lock(&self.memo).buried.get(id).cloned().unwrap_or_default();
                got.extend(
                    buried
                        .into_iter()
                        .filter(|e| e.sequence >= next && from <= e.sequence && e.sequence <= to),
                );
                Ok(got)
            }
            _ => self.inner.read_range(id, from, to).await,
        }
    }

    async fn acquire_fence(&self, id: &str) -> Result<FenceToken, StoreError> {
        let t = self.inner.acquire_fence(id).await?;
        if self.inner.read(id).await.is_ok_and(|l| l.is_empty())
            && !self
                .inner
                .list_executions()
                .await
                .unwrap_or_default()
                .iter()
                .any(|x| x == id)
        {
            lock(&self.memo).not_live.insert(id.to_string());
        }
        Ok(t)
    }

    async fn acquire_fence_if(
        &self,
        id: &str,
        expected: Option<FenceToken>,
    ) -> Result<FenceToken, StoreError> {
        let r = self.inner.acquire_fence_if(id, expected).await;
        match (self.bug, &r) {
            ("fence-conflict-current-none", Err(e)) => match e.kind {
                StoreErrorKind::FenceConflict { expected, .. } => {
                    Err(StoreError::fence_conflict(expected, None))
                }
                _ => r,
            },
            ("fence-if-forgets-deleted-stream", _) if lock(&self.memo).deleted.contains(id) => {
                // The stream is gone, so "no fence": only an expectation of none passes.
                match expected {
                    None => {
                        let t = self.inner.acquire_fence(id).await?;
                        Ok(t)
                    }
                    Some(x) => Err(StoreError::fence_conflict(Some(x.0), None)),
                }
            }
            _ => r,
        }
    }

    async fn observe(&self, id: &str) -> Result<Anchor, StoreError> {
        self.inner.observe(id).await
    }

    async fn append_if_unchanged(
        &self,
        id: &str,
        anchor: Anchor,
        events: Vec<EventEnvelope>,
    ) -> Result<AppendAck, StoreError> {
        let r = self.inner.append_if_unchanged(id, anchor, events).await;
        if r.is_ok() {
            lock(&self.memo).not_live.remove(id);
        }
        r
    }

    async fn store_now(&self) -> Result<i64, StoreError> {
        let now = self.inner.store_now().await?;
        Ok(match self.bug {
            "store-now-seconds" => now / 1000,
            "store-now-micros" => now.saturating_mul(1000),
            "store-now-frozen" => self.opened_ms,
            // Every other call reads a second clock 5 s behind the first (a pool of
            // two database replicas whose clocks disagree).
            "store-now-two-clocks" => {
                let mut memo = lock(&self.memo);
                memo.store_now_calls += 1;
                if memo.store_now_calls.is_multiple_of(2) {
                    now - STORE_NOW_SECOND_CLOCK_BEHIND_MS
                } else {
                    now
                }
            }
            _ => now,
        })
    }

    async fn sealing_capability(&self) -> Result<Option<SealingCapability>, StoreError> {
        match self.inner.sealing_capability().await {
            Err(e) if self.bug == "unsupported-names-another-method" && e.is_unsupported() => {
                Err(StoreError::unsupported("sealing"))
            }
            r => r,
        }
    }

    async fn delete_through(&self, id: &str, through: u64) -> Result<u64, StoreError> {
        match self.bug {
            "delete-through-past-max" if through > SEQUENCE_MAX => {
                self.inner.delete_through(id, SEQUENCE_MAX).await
            }
            "delete-through-count-arith" => {
                let first = self.inner.read(id).await?.first().map(|e| e.sequence);
                let next = self.next(id).await;
                self.inner.delete_through(id, through).await?;
                let first = first.unwrap_or(next);
                Ok((through + 1).saturating_sub(first))
            }
            _ => self.inner.delete_through(id, through).await,
        }
    }

    async fn copy_prefix(
        &self,
        source: &str,
        target: &str,
        through: u64,
    ) -> Result<AppendAck, StoreError> {
        if self.bug == "copy-target-before-source" && !source.is_empty() && source != target {
            let live = self
                .inner
                .list_executions()
                .await?
                .iter()
                .any(|x| x == target);
            if live {
                return Err(StoreError::conflict(0, self.next(target).await));
            }
        }
        let r = self.inner.copy_prefix(source, target, through).await;
        if r.is_ok() {
            let mut memo = lock(&self.memo);
            memo.not_live.remove(target);
        }
        r
    }

    async fn delete_execution(&self, id: &str) -> Result<bool, StoreError> {
        let before = self.inner.read(id).await.unwrap_or_default();
        let r = self.inner.delete_execution(id).await;
        if r == Ok(true) {
            let mut memo = lock(&self.memo);
            memo.not_live.insert(id.to_string());
            memo.deleted.insert(id.to_string());
            memo.buried.insert(id.to_string(), before);
        }
        r
    }

    async fn list_executions_page(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<Page, StoreError> {
        let mut page = self.inner.list_executions_page(cursor, limit).await?;
        if self.bug == "page-counts-tombstones"
            && page.next_cursor.is_none()
            && page.ids.len() == limit
        {
            if let Some(last) = page.ids.last().cloned() {
                let more = lock(&self.memo).not_live.iter().any(|x| *x > last);
                if more {
                    page.next_cursor = Some(last);
                }
            }
        }
        Ok(page)
    }
}

// ---------------------------------------------------------------------------------
// SnapshotStore

/// A SnapshotStore with one bug.
#[derive(Clone)]
pub struct BuggySnapshots {
    inner: MemorySnapshotStore,
    bug: &'static str,
    sealed_cache: Arc<Mutex<BTreeMap<String, Option<SnapshotRecord>>>>,
    /// Every stored record by id and sequence, for a lookup by the wrong order.
    shadow: Arc<Mutex<BTreeMap<String, BTreeMap<u64, SnapshotRecord>>>>,
}

impl BuggySnapshots {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> BuggySnapshots {
        BuggySnapshots {
            inner: MemorySnapshotStore::new(),
            bug,
            sealed_cache: Arc::default(),
            shadow: Arc::default(),
        }
    }
}

impl SnapshotStore for BuggySnapshots {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        self.inner.capabilities()
    }
    async fn save(&self, id: &str, mut record: SnapshotRecord) -> Result<(), StoreError> {
        if self.bug == "snapshot-u64-saturates" {
            record.state = saturate(&record.state);
        }
        self.inner.save(id, record.clone()).await?;
        lock(&self.shadow)
            .entry(id.to_string())
            .or_default()
            .insert(record.sequence, record);
        Ok(())
    }
    async fn load_latest(&self, id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        if self.bug != "latest-by-text" {
            return self.inner.load_latest(id).await;
        }
        Ok(lock(&self.shadow)
            .get(id)
            .and_then(|m| m.values().max_by_key(|r| r.sequence.to_string()).cloned()))
    }
    async fn delete_execution(&self, id: &str) -> Result<u64, StoreError> {
        lock(&self.shadow).remove(id);
        self.inner.delete_execution(id).await
    }
    async fn load_latest_sealed(&self, id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        if self.bug == "sealed-snapshot-cache" {
            if let Some(hit) = lock(&self.sealed_cache).get(id).cloned() {
                return Ok(hit);
            }
            let r = self.inner.load_latest_sealed(id).await?;
            if r.is_some() {
                lock(&self.sealed_cache).insert(id.to_string(), r.clone());
            }
            return Ok(r);
        }
        self.inner.load_latest_sealed(id).await
    }
    async fn prune_snapshots(&self, id: &str, through: u64) -> Result<u64, StoreError> {
        let through = if self.bug == "prune-past-max" && through > SEQUENCE_MAX {
            SEQUENCE_MAX
        } else if self.bug == "prune-exclusive-through" {
            // `<` where `<=` is required: the snapshot at `through` survives.
            match through.checked_sub(1) {
                Some(t) => t,
                None => return Ok(0),
            }
        } else {
            through
        };
        let n = self.inner.prune_snapshots(id, through).await?;
        if let Some(m) = lock(&self.shadow).get_mut(id) {
            m.retain(|s, _| *s > through);
        }
        Ok(n)
    }
    async fn list_sequences(&self, id: &str) -> Result<Vec<u64>, StoreError> {
        self.inner.list_sequences(id).await
    }
}

// ---------------------------------------------------------------------------------
// ArchiveStore

/// An ArchiveStore with one bug.
#[derive(Clone)]
pub struct BuggyArchive {
    inner: MemoryArchiveStore,
    bug: &'static str,
    /// Insertion order per id (for `archive-insertion-order`), and sequences ever
    /// archived (for `archive-index-survives-replace`).
    order: Arc<Mutex<BTreeMap<String, Vec<u64>>>>,
}

impl BuggyArchive {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> BuggyArchive {
        BuggyArchive {
            inner: MemoryArchiveStore::new(),
            bug,
            order: Arc::default(),
        }
    }
}

impl ArchiveStore for BuggyArchive {
    fn capabilities(&self) -> ArchiveStoreCapabilities {
        self.inner.capabilities()
    }
    async fn archive(&self, id: &str, envelopes: Vec<EventEnvelope>) -> Result<u64, StoreError> {
        let mut envelopes = envelopes;
        if self.bug == "archive-batch-limit-unchecked" && envelopes.len() > APPEND_BATCH_EVENTS_MAX
        {
            // Written in two parts instead of refused.
            let rest = envelopes.split_off(APPEND_BATCH_EVENTS_MAX);
            let n = self.inner.archive(id, envelopes).await?;
            return Ok(n + self.inner.archive(id, rest).await?);
        }
        match self.bug {
            "archive-equal-sequences"
                if envelopes.windows(2).all(|w| w[0].sequence <= w[1].sequence) =>
            {
                envelopes.dedup_by_key(|e| e.sequence);
            }
            "archive-clash-first-only" if envelopes.len() > 1 => {
                let existing = self.inner.read_archived(id).await?;
                let clashes =
                    |e: &EventEnvelope| existing.iter().any(|x| x.sequence == e.sequence && x != e);
                if !clashes(&envelopes[0]) {
                    let first = envelopes.remove(0);
                    envelopes.retain(|e| !clashes(e));
                    envelopes.insert(0, first);
                }
            }
            "archive-index-survives-replace" => {
                let seen = lock(&self.order).get(id).cloned().unwrap_or_default();
                let present: Vec<u64> = self
                    .inner
                    .read_archived(id)
                    .await?
                    .iter()
                    .map(|e| e.sequence)
                    .collect();
                envelopes.retain(|e| present.contains(&e.sequence) || !seen.contains(&e.sequence));
            }
            _ => {}
        }
        let seqs: Vec<u64> = envelopes.iter().map(|e| e.sequence).collect();
        let n = self.inner.archive(id, envelopes).await?;
        let mut order = lock(&self.order);
        let list = order.entry(id.to_string()).or_default();
        for s in seqs {
            if !list.contains(&s) {
                list.push(s);
            }
        }
        Ok(n)
    }
    async fn read_archived(&self, id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        let got = self.inner.read_archived(id).await?;
        if self.bug != "archive-insertion-order" {
            return Ok(got);
        }
        let order = lock(&self.order).get(id).cloned().unwrap_or_default();
        let mut sorted = got;
        sorted.sort_by_key(|e| {
            order
                .iter()
                .position(|s| *s == e.sequence)
                .unwrap_or(usize::MAX)
        });
        Ok(sorted)
    }
    async fn delete_execution(&self, id: &str) -> Result<u64, StoreError> {
        lock(&self.order).remove(id);
        self.inner.delete_execution(id).await
    }
    async fn replace_segments(
        &self,
        id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> Result<(), StoreError> {
        let seqs: Vec<u64> = envelopes.iter().map(|e| e.sequence).collect();
        self.inner.replace_segments(id, envelopes).await?;
        let mut order = lock(&self.order);
        if self.bug == "archive-index-survives-replace" {
            let list = order.entry(id.to_string()).or_default();
            for s in seqs {
                if !list.contains(&s) {
                    list.push(s);
                }
            }
        } else {
            order.insert(id.to_string(), seqs);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------
// ContentStore

/// A ContentStore with one bug.
#[derive(Clone)]
pub struct BuggyContent {
    inner: MemoryContentStore,
    bug: &'static str,
}

impl BuggyContent {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> BuggyContent {
        let inner = if bug == "owner-unsupported-names-put" {
            MemoryContentStore::new().with_methods([
                loom_kernel::spi::ContentStoreMethod::PutStream,
                loom_kernel::spi::ContentStoreMethod::SealsContent,
            ])
        } else {
            MemoryContentStore::new()
        };
        BuggyContent { inner, bug }
    }

    fn facts(&self, r: Result<ContentRef, StoreError>) -> Result<ContentRef, StoreError> {
        match r {
            Err(e) if self.bug == "owner-unsupported-names-put" && e.is_unsupported() => {
                Err(StoreError::unsupported("put"))
            }
            r => r,
        }
    }
}

impl ContentStore for BuggyContent {
    fn capabilities(&self) -> ContentStoreCapabilities {
        self.inner.capabilities()
    }
    async fn put(
        &self,
        bytes: Vec<u8>,
        owner: Option<ContentAccess>,
    ) -> Result<ContentRef, StoreError> {
        if self.bug == "content-utf8-lossy" {
            // Stored as text: every invalid UTF-8 sequence becomes U+FFFD.
            let text = String::from_utf8_lossy(&bytes).into_owned().into_bytes();
            return self.inner.put(text, owner).await;
        }
        self.facts(self.inner.put(bytes, owner).await)
    }
    async fn get(
        &self,
        digest: &str,
        owner: Option<ContentAccess>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        match self.inner.get(digest, owner).await {
            Err(e) if self.bug == "owner-unsupported-names-put" && e.is_unsupported() => {
                Err(StoreError::unsupported("get"))
            }
            r => r,
        }
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
        let chunks: Vec<Chunk> = chunks.into_iter().collect();
        let total: usize = chunks.iter().map(|c| c.as_ref().map_or(0, Vec::len)).sum();
        let errs = chunks.iter().any(Result::is_err);
        if self.bug == "stream-limit-exclusive" && !errs && total == CONTENT_BYTES_MAX {
            return Ok(PutStreamOutcome::Aborted(PutStreamAbort::TooLarge {
                limit_bytes: CONTENT_BYTES_MAX as u64,
            }));
        }
        let outcome = self.inner.put_stream(chunks, owner).await?;
        match (self.bug, outcome) {
            ("too-large-fact", PutStreamOutcome::Aborted(PutStreamAbort::TooLarge { .. })) => {
                Ok(PutStreamOutcome::Aborted(PutStreamAbort::TooLarge {
                    limit_bytes: total as u64,
                }))
            }
            (_, o) => Ok(o),
        }
    }
    async fn seals_content(&self) -> Result<bool, StoreError> {
        self.inner.seals_content().await
    }
}

// ---------------------------------------------------------------------------------
// DurableStateStore and ReadModelStore

/// A DurableStateStore with one bug.
#[derive(Clone)]
pub struct BuggyState {
    inner: MemoryDurableStateStore,
    bug: &'static str,
    /// Per key, the inner version its last delete removed: `state-version-restarts`
    /// shows versions counted from there, so a re-created key is at 1 again.
    restarts: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl BuggyState {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> BuggyState {
        BuggyState {
            inner: MemoryDurableStateStore::new(),
            bug,
            restarts: Arc::default(),
        }
    }

    /// How far the shown versions of `key` are below the inner ones.
    fn offset(&self, key: &str) -> u64 {
        if self.bug != "state-version-restarts" {
            return 0;
        }
        lock(&self.restarts).get(key).copied().unwrap_or(0)
    }

    /// An inner error with its versions shown as the bug shows them.
    fn shown(&self, key: &str, e: StoreError) -> StoreError {
        let off = self.offset(key);
        match e.kind {
            StoreErrorKind::Conflict {
                expected_next,
                actual_next,
            } if off > 0 => StoreError::conflict(
                expected_next.saturating_sub(off),
                actual_next.saturating_sub(off),
            ),
            _ => e,
        }
    }
}

impl DurableStateStore for BuggyState {
    fn capabilities(&self) -> DurableStateStoreCapabilities {
        self.inner.capabilities()
    }
    async fn get(&self, key: &str) -> Result<Option<Versioned>, StoreError> {
        let mut got = self.inner.get(key).await?;
        if let Some(v) = got.as_mut() {
            v.version -= self.offset(key);
        }
        if self.bug == "state-null-absent" && got.as_ref().is_some_and(|v| v.value.is_null()) {
            return Ok(None);
        }
        Ok(got)
    }
    async fn put(&self, key: &str, value: Value, expected: Option<u64>) -> Result<u64, StoreError> {
        if self.bug == "state-conflict-before-validation" && key.is_empty() {
            return Err(StoreError::conflict(expected.unwrap_or(0), 0));
        }
        let off = self.offset(key);
        match self.inner.put(key, value, expected.map(|e| e + off)).await {
            Ok(v) => Ok(v - off),
            Err(e) => Err(self.shown(key, e)),
        }
    }
    async fn delete(&self, key: &str, expected: u64) -> Result<(), StoreError> {
        if self.bug == "state-delete-absent-is-conflict"
            && !key.is_empty()
            && self.inner.get(key).await?.is_none()
        {
            // The version compared before existence: a stale version of nothing.
            return Err(StoreError::conflict(expected, 0));
        }
        if self.bug == "state-delete-at-version-zero" && expected == 0 {
            if let Some(current) = self.inner.get(key).await? {
                return self.inner.delete(key, current.version).await;
            }
        }
        let off = self.offset(key);
        match self.inner.delete(key, expected + off).await {
            Ok(()) => {
                if self.bug == "state-version-restarts" {
                    // The row is gone, and with it the count: a re-create starts at 1.
                    lock(&self.restarts).insert(key.to_string(), expected + off);
                }
                Ok(())
            }
            Err(e) => Err(self.shown(key, e)),
        }
    }
}

/// A ReadModelStore with one bug.
#[derive(Clone)]
pub struct BuggyModels {
    inner: MemoryReadModelStore,
    bug: &'static str,
}

impl BuggyModels {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> BuggyModels {
        BuggyModels {
            inner: MemoryReadModelStore::new(),
            bug,
        }
    }
}

impl ReadModelStore for BuggyModels {
    fn capabilities(&self) -> ReadModelStoreCapabilities {
        self.inner.capabilities()
    }
    async fn upsert(&self, collection: &str, id: &str, doc: Value) -> Result<(), StoreError> {
        if self.bug == "model-document-limit-pretty"
            && serde_json::to_vec_pretty(&doc).map_or(0, |v| v.len()) > DOCUMENT_BYTES_MAX
        {
            // Measured as pretty-printed text instead of compact JSON.
            return Err(StoreError::invalid("document too large"));
        }
        self.inner.upsert(collection, id, doc).await
    }
    async fn get(&self, collection: &str, id: &str) -> Result<Option<Value>, StoreError> {
        let got = self.inner.get(collection, id).await?;
        if self.bug == "model-null-absent" && got.as_ref().is_some_and(Value::is_null) {
            return Ok(None);
        }
        Ok(got)
    }
    async fn query(
        &self,
        collection: &str,
        options: QueryOptions,
    ) -> Result<ReadModelPage, StoreError> {
        self.inner.query(collection, options).await
    }
}

// ---------------------------------------------------------------------------------
// ExecutionDispatcher, TimerStore, BranchRegistry

/// An ExecutionDispatcher with one bug.
#[derive(Clone)]
pub struct BuggyDispatcher {
    inner: MemoryDispatcher,
    bug: &'static str,
    /// The latest lease per execution, as claimed through this wrapper.
    leases: Arc<Mutex<BTreeMap<String, Lease>>>,
    /// Executions whose package was completed (for `completed-execution-refused`).
    completed: Arc<Mutex<BTreeSet<String>>>,
}

impl BuggyDispatcher {
    /// The in-memory dispatcher with `bug`.
    pub fn new(bug: &'static str) -> BuggyDispatcher {
        BuggyDispatcher {
            inner: MemoryDispatcher::new(),
            bug,
            leases: Arc::default(),
            completed: Arc::default(),
        }
    }

    fn now(&self, now_ms: i64) -> i64 {
        match self.bug {
            "lease-live-at-deadline" => now_ms - 1,
            // `>=` where `>` is required: a lease is already lost one ms before.
            "lease-expired-before-deadline" => now_ms.saturating_add(1),
            _ => now_ms,
        }
    }

    /// The live lease `bug` substitutes for a lost one: the latest on the same execution.
    fn substitute(&self, lease: &Lease) -> Option<Lease> {
        if self.bug != "lease-by-execution" {
            return None;
        }
        lock(&self.leases)
            .get(&lease.package.execution_id)
            .filter(|l| l.lease_id != lease.lease_id)
            .cloned()
    }
}

impl ExecutionDispatcher for BuggyDispatcher {
    fn spi_version(&self) -> String {
        self.inner.spi_version()
    }
    async fn register_target(&self, name: &str) -> Result<bool, StoreError> {
        self.inner.register_target(name).await
    }
    async fn targets(&self) -> Result<Vec<String>, StoreError> {
        self.inner.targets().await
    }
    async fn dispatch(&self, package: ExecutionPackage) -> Result<DispatchId, StoreError> {
        if self.bug == "completed-execution-refused"
            && lock(&self.completed).contains(&package.execution_id)
        {
            // A unique index on the execution id that completion never frees.
            return Err(StoreError::new(StoreErrorKind::AlreadyExists, "duplicate"));
        }
        self.inner.dispatch(package).await
    }
    async fn claim(
        &self,
        target: &str,
        worker: &str,
        now_ms: i64,
    ) -> Result<Option<Lease>, StoreError> {
        let l = self.inner.claim(target, worker, self.now(now_ms)).await?;
        if let Some(l) = &l {
            lock(&self.leases).insert(l.package.execution_id.clone(), l.clone());
        }
        Ok(l)
    }
    async fn renew(&self, lease: &Lease, now_ms: i64) -> Result<Lease, StoreError> {
        match self.inner.renew(lease, self.now(now_ms)).await {
            Err(e) if e.kind == StoreErrorKind::LeaseLost => match self.substitute(lease) {
                Some(other) => self.inner.renew(&other, self.now(now_ms)).await,
                None => Err(e),
            },
            r => r,
        }
    }
    async fn complete(&self, lease: &Lease) -> Result<(), StoreError> {
        if self.bug == "completed-execution-refused" {
            let r = self.inner.complete(lease).await;
            if r.is_ok() {
                lock(&self.completed).insert(lease.package.execution_id.clone());
            }
            return r;
        }
        match self.inner.complete(lease).await {
            Err(e) if e.kind == StoreErrorKind::LeaseLost => match self.substitute(lease) {
                Some(other) => self.inner.complete(&other).await,
                None => Err(e),
            },
            r => r,
        }
    }
    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        match self.inner.release(lease).await {
            Err(e) if e.kind == StoreErrorKind::LeaseLost => match self.substitute(lease) {
                Some(other) => self.inner.release(&other).await,
                None => Err(e),
            },
            r => r,
        }
    }
    async fn expire_leases(&self, now_ms: i64) -> Result<Vec<DispatchId>, StoreError> {
        let ids = self.inner.expire_leases(self.now(now_ms)).await?;
        if self.bug == "expire-answers-nothing" {
            // Re-queued, but the ids were meant for a log line and never returned.
            return Ok(Vec::new());
        }
        Ok(ids)
    }
}

/// A TimerStore with one bug.
#[derive(Clone)]
pub struct BuggyTimers {
    inner: MemoryTimerStore,
    bug: &'static str,
    ghosts: Arc<Mutex<Vec<Timer>>>,
}

impl BuggyTimers {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> BuggyTimers {
        BuggyTimers {
            inner: MemoryTimerStore::new(),
            bug,
            ghosts: Arc::default(),
        }
    }
}

impl TimerStore for BuggyTimers {
    fn spi_version(&self) -> String {
        self.inner.spi_version()
    }
    async fn schedule(&self, timer: Timer) -> Result<Timer, StoreError> {
        let t = self.inner.schedule(timer).await?;
        lock(&self.ghosts).retain(|g| !(g.execution_id == t.execution_id && g.key == t.key));
        Ok(t)
    }
    async fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<Timer>, StoreError> {
        match self.bug {
            "timer-text-order" => {
                let mut all = self
                    .inner
                    .due(now_ms, loom_kernel::spi::TIMER_DUE_LIMIT_MAX)
                    .await?;
                loom_kernel::spi::check::due_limit(limit)?;
                all.sort_by(|a, b| {
                    (a.wake_at_ms.to_string(), &a.execution_id, &a.key).cmp(&(
                        b.wake_at_ms.to_string(),
                        &b.execution_id,
                        &b.key,
                    ))
                });
                all.truncate(limit);
                Ok(all)
            }
            "due-limit-counts-cancelled" => {
                let live = self.inner.due(now_ms, limit).await?;
                let ghosts: Vec<Timer> = lock(&self.ghosts)
                    .iter()
                    .filter(|g| g.wake_at_ms <= now_ms)
                    .cloned()
                    .collect();
                let mut all: Vec<(Timer, bool)> = live.into_iter().map(|t| (t, true)).collect();
                all.extend(ghosts.into_iter().map(|g| (g, false)));
                all.sort_by(|a, b| {
                    (a.0.wake_at_ms, &a.0.execution_id, &a.0.key).cmp(&(
                        b.0.wake_at_ms,
                        &b.0.execution_id,
                        &b.0.key,
                    ))
                });
                all.truncate(limit);
                Ok(all
                    .into_iter()
                    .filter(|(_, live)| *live)
                    .map(|(t, _)| t)
                    .collect())
            }
            // `<` where `<=` is required: a timer due exactly now waits.
            "due-excludes-now" => self.inner.due(now_ms.saturating_sub(1), limit).await,
            _ => self.inner.due(now_ms, limit).await,
        }
    }
    async fn cancel(&self, execution_id: &str, key: &str) -> Result<bool, StoreError> {
        let due = self
            .inner
            .due(i64::MAX, loom_kernel::spi::TIMER_DUE_LIMIT_MAX)
            .await?;
        let found = due
            .into_iter()
            .find(|t| t.execution_id == execution_id && t.key == key);
        let r = self.inner.cancel(execution_id, key).await?;
        if let (true, Some(t)) = (r, found) {
            lock(&self.ghosts).push(t);
        }
        Ok(r)
    }
}

/// A BranchRegistry with one bug.
#[derive(Clone)]
pub struct BuggyBranches {
    inner: MemoryBranchRegistry,
    bug: &'static str,
}

impl BuggyBranches {
    /// The in-memory registry with `bug`.
    pub fn new(bug: &'static str) -> BuggyBranches {
        BuggyBranches {
            inner: MemoryBranchRegistry::new(),
            bug,
        }
    }
}

impl BranchRegistry for BuggyBranches {
    fn spi_version(&self) -> String {
        if self.bug == "branch-version-ahead" {
            // A version bumped for an unreleased change: newer than the kernel knows.
            return "1.1.0".to_string();
        }
        self.inner.spi_version()
    }
    async fn register(&self, record: BranchRecord) -> Result<(), StoreError> {
        if self.bug == "chain-limit-off-by-one" && record.chain.len() >= BRANCH_CHAIN_LEN_MAX {
            return Err(StoreError::invalid("chain too long"));
        }
        self.inner.register(record).await
    }
    async fn get(&self, id: &str) -> Result<Option<BranchRecord>, StoreError> {
        self.inner.get(id).await
    }
    async fn children(&self, parent: &str) -> Result<Vec<BranchRecord>, StoreError> {
        self.inner.children(parent).await
    }
}
