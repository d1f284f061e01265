//! The hostile-key and stateful bugs: wrappers over the in-memory reference stores that
//! key, list or cache the way a real backend gets wrong. A key bug maps every id through
//! [`fold`] before the store sees it (as a case-insensitive collation, a normalising or
//! percent-decoding layer, a prefix index, `CHAR` padding or numeric affinity would) or
//! orders a listing by UTF-16 units; a stateful bug keeps a cache, a write-behind buffer,
//! a compacting queue or an offset cursor that loses or serves stale state after a long
//! enough history. A wrapper with a bug name it does not know is faithful.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::spi::plugin::Chunk;
use loom_kernel::spi::{
    Anchor, AppendAck, ArchiveStore, ArchiveStoreCapabilities, ContentAccess, ContentRef,
    ContentStore, ContentStoreCapabilities, DispatchId, DurableStateStore,
    DurableStateStoreCapabilities, EventStore, EventStoreCapabilities, ExecutionDispatcher,
    ExecutionPackage, FenceToken, Lease, Page, PutStreamOutcome, QueryOptions, ReadModelPage,
    ReadModelStore, ReadModelStoreCapabilities, SealingCapability, SnapshotStore,
    SnapshotStoreCapabilities, StoreError, Timer, TimerStore, Versioned,
};
use loom_stores::memory::{
    MemoryArchiveStore, MemoryDispatcher, MemoryEventStore, MemorySnapshotStore, MemoryTimerStore,
};
use loom_stores::plugin_memory::{
    MemoryContentStore, MemoryDurableStateStore, MemoryReadModelStore,
};

/// How many executions the `lru-drops-dirty` store keeps in its write-behind cache.
pub const LRU_EXECUTIONS: usize = 8;
/// Every how many claims the `queue-compaction-loses-a-package` dispatcher compacts.
pub const COMPACTION_CLAIMS: u64 = 32;
/// The prefix length the `ids-prefix-255` store indexes (the kits' shared-prefix
/// family, `loom_conformance::ids::PREFIX_INDEX_BYTES`, is built to share exactly this).
pub const PREFIX_BYTES: usize = 255;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A few canonical compositions: enough NFC for the family's twins (`e` + U+0301 is
/// U+00E9), as a store normalising its keys would apply all of them.
fn nfc(id: &str) -> String {
    id.replace("e\u{301}", "\u{e9}")
        .replace("a\u{301}", "\u{e1}")
        .replace("a\u{302}", "\u{e2}")
}

fn percent_decode(id: &str) -> String {
    let bytes = id.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn prefix(id: &str, n: usize) -> String {
    let mut end = id.len().min(n);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    id[..end].to_string()
}

/// The number an id reads as under numeric affinity, spelled canonically (`010`, `1e1`
/// and `10.0` are all `10`); other ids unchanged.
fn numeric(id: &str) -> String {
    let looks = id
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == '-');
    match id.parse::<f64>() {
        Ok(v) if looks && v.is_finite() => {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                format!("{}", v as i64)
            } else {
                format!("{v}")
            }
        }
        _ => id.to_string(),
    }
}

/// The key a store with `bug` actually uses for `id`.
pub fn fold(bug: &str, id: &str) -> String {
    match bug {
        "ids-case-insensitive" => id.to_lowercase(),
        "ids-nfc-normalised" => nfc(id),
        "ids-percent-decoded" => percent_decode(id),
        "ids-prefix-255" => prefix(id, PREFIX_BYTES),
        "ids-trailing-space-padded" => id.trim_end_matches(' ').to_string(),
        "ids-numeric-affinity" => numeric(id),
        _ => id.to_string(),
    }
}

fn relabel(events: Vec<EventEnvelope>, id: &str) -> Vec<EventEnvelope> {
    events
        .into_iter()
        .map(|e| EventEnvelope {
            execution_id: id.to_string(),
            ..e
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// EventStore

#[derive(Default)]
struct EventState {
    /// `read-cache-misses-delete-through`: answers of `read`, by id.
    cache: BTreeMap<String, Vec<EventEnvelope>>,
    /// `lru-drops-dirty`: ids by recency (most recent last).
    lru: Vec<String>,
    /// `lru-drops-dirty`: ids with unflushed events, and how many were flushed.
    dirty: BTreeMap<String, usize>,
}

/// An EventStore with one key or stateful bug: `ids-trailing-space-padded`,
/// `list-in-utf16-order`, `read-cache-misses-delete-through`, `lru-drops-dirty`,
/// `offset-cursor`.
#[derive(Clone)]
pub struct KeyedEvents {
    inner: MemoryEventStore,
    bug: &'static str,
    state: Arc<Mutex<EventState>>,
}

impl KeyedEvents {
    /// The in-memory store (on the system clock) with `bug`.
    pub fn new(bug: &'static str) -> KeyedEvents {
        KeyedEvents {
            inner: MemoryEventStore::with_clock(Arc::new(loom_stores::SystemClock)),
            bug,
            state: Arc::default(),
        }
    }

    fn key(&self, id: &str) -> String {
        fold(self.bug, id)
    }

    fn forget(&self, id: &str) {
        lock(&self.state).cache.remove(id);
    }

    /// `lru-drops-dirty`: `id` was just used (`wrote`: appended to). Evicting the least
    /// recently used execution drops its unflushed events: the bug.
    async fn touch(&self, id: &str, wrote: bool) {
        if self.bug != "lru-drops-dirty" {
            return;
        }
        let evicted = {
            let mut s = lock(&self.state);
            s.lru.retain(|x| x != id);
            s.lru.push(id.to_string());
            if !wrote {
                s.dirty.remove(id);
            }
            if s.lru.len() > LRU_EXECUTIONS {
                let old = s.lru.remove(0);
                s.dirty.remove(&old).map(|flushed| (old, flushed))
            } else {
                None
            }
        };
        if let Some((old, flushed)) = evicted {
            let kept: Vec<EventEnvelope> = self
                .inner
                .read(&old)
                .await
                .unwrap_or_default()
                .into_iter()
                .take(flushed)
                .collect();
            let _ = self.inner.delete_execution(&old).await;
            if !kept.is_empty() {
                let _ = self.inner.append(&old, 0, kept, None).await;
            }
        }
    }

    async fn mark_dirty(&self, id: &str, flushed: usize) {
        if self.bug == "lru-drops-dirty" {
            lock(&self.state)
                .dirty
                .entry(id.to_string())
                .or_insert(flushed);
        }
        self.touch(id, true).await;
    }
}

impl EventStore for KeyedEvents {
    fn capabilities(&self) -> EventStoreCapabilities {
        self.inner.capabilities()
    }
    async fn append(
        &self,
        id: &str,
        expected: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        let k = self.key(id);
        let events = if k != id && events.iter().all(|e| e.execution_id == id) {
            relabel(events, &k)
        } else {
            events
        };
        let before = self.inner.read(&k).await.map_or(0, |l| l.len());
        let ack = self.inner.append(&k, expected, events, fence).await?;
        self.forget(&k);
        self.mark_dirty(&k, before).await;
        Ok(ack)
    }
    async fn read(&self, id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        let k = self.key(id);
        if self.bug == "read-cache-misses-delete-through" {
            if let Some(hit) = lock(&self.state).cache.get(&k).cloned() {
                return Ok(hit);
            }
        }
        let log = self.inner.read(&k).await?;
        if self.bug == "read-cache-misses-delete-through" {
            lock(&self.state).cache.insert(k.clone(), log.clone());
        }
        self.touch(&k, false).await;
        Ok(log)
    }
    async fn list_executions(&self) -> Result<Vec<String>, StoreError> {
        let mut ids = self.inner.list_executions().await?;
        if self.bug == "list-in-utf16-order" {
            ids.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        }
        Ok(ids)
    }
    async fn read_range(
        &self,
        id: &str,
        from: u64,
        to: u64,
    ) -> Result<Vec<EventEnvelope>, StoreError> {
        self.inner.read_range(&self.key(id), from, to).await
    }
    async fn acquire_fence(&self, id: &str) -> Result<FenceToken, StoreError> {
        self.inner.acquire_fence(&self.key(id)).await
    }
    async fn acquire_fence_if(
        &self,
        id: &str,
        expected: Option<FenceToken>,
    ) -> Result<FenceToken, StoreError> {
        self.inner.acquire_fence_if(&self.key(id), expected).await
    }
    async fn observe(&self, id: &str) -> Result<Anchor, StoreError> {
        self.inner.observe(&self.key(id)).await
    }
    async fn append_if_unchanged(
        &self,
        id: &str,
        anchor: Anchor,
        events: Vec<EventEnvelope>,
    ) -> Result<AppendAck, StoreError> {
        let k = self.key(id);
        let events = if k != id { relabel(events, &k) } else { events };
        let before = self.inner.read(&k).await.map_or(0, |l| l.len());
        let ack = self.inner.append_if_unchanged(&k, anchor, events).await?;
        self.forget(&k);
        self.mark_dirty(&k, before).await;
        Ok(ack)
    }
    async fn store_now(&self) -> Result<i64, StoreError> {
        self.inner.store_now().await
    }
    async fn sealing_capability(&self) -> Result<Option<SealingCapability>, StoreError> {
        self.inner.sealing_capability().await
    }
    async fn delete_through(&self, id: &str, through: u64) -> Result<u64, StoreError> {
        // `read-cache-misses-delete-through`: the one write path that forgets the cache.
        let k = self.key(id);
        if self.bug == "lru-drops-dirty" {
            lock(&self.state).dirty.remove(&k);
        }
        self.inner.delete_through(&k, through).await
    }
    async fn copy_prefix(
        &self,
        source: &str,
        target: &str,
        through: u64,
    ) -> Result<AppendAck, StoreError> {
        let t = self.key(target);
        let ack = self
            .inner
            .copy_prefix(&self.key(source), &t, through)
            .await?;
        self.forget(&t);
        Ok(ack)
    }
    async fn delete_execution(&self, id: &str) -> Result<bool, StoreError> {
        let k = self.key(id);
        {
            let mut s = lock(&self.state);
            s.cache.remove(&k);
            s.dirty.remove(&k);
        }
        self.inner.delete_execution(&k).await
    }
    async fn list_executions_page(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<Page, StoreError> {
        if self.bug != "offset-cursor" {
            return self.inner.list_executions_page(cursor, limit).await;
        }
        // Validate as the store does, then page by position: a write between two pages
        // shifts every later id by one (a repeat or a skip).
        self.inner.list_executions_page(None, limit).await?;
        let offset: usize = match cursor {
            None => 0,
            Some(c) => c
                .parse()
                .map_err(|_| StoreError::invalid(format!("cursor {c:?} is not mine")))?,
        };
        let all = self.inner.list_executions().await?;
        let ids: Vec<String> = all.iter().skip(offset).take(limit).cloned().collect();
        let next = offset + ids.len();
        Ok(Page {
            next_cursor: (next < all.len()).then(|| next.to_string()),
            ids,
        })
    }
}

// ---------------------------------------------------------------------------------
// SnapshotStore, ArchiveStore

/// A SnapshotStore whose execution ids go through [`fold`] (`ids-case-insensitive`).
#[derive(Clone)]
pub struct KeyedSnapshots {
    inner: MemorySnapshotStore,
    bug: &'static str,
}

impl KeyedSnapshots {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> KeyedSnapshots {
        KeyedSnapshots {
            inner: MemorySnapshotStore::new(),
            bug,
        }
    }
}

impl SnapshotStore for KeyedSnapshots {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        self.inner.capabilities()
    }
    async fn save(&self, id: &str, record: SnapshotRecord) -> Result<(), StoreError> {
        self.inner.save(&fold(self.bug, id), record).await
    }
    async fn load_latest(&self, id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        self.inner.load_latest(&fold(self.bug, id)).await
    }
    async fn delete_execution(&self, id: &str) -> Result<u64, StoreError> {
        self.inner.delete_execution(&fold(self.bug, id)).await
    }
    async fn load_latest_sealed(&self, id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        self.inner.load_latest_sealed(&fold(self.bug, id)).await
    }
    async fn prune_snapshots(&self, id: &str, through: u64) -> Result<u64, StoreError> {
        self.inner
            .prune_snapshots(&fold(self.bug, id), through)
            .await
    }
    async fn list_sequences(&self, id: &str) -> Result<Vec<u64>, StoreError> {
        self.inner.list_sequences(&fold(self.bug, id)).await
    }
}

/// An ArchiveStore whose execution ids go through [`fold`] (`ids-prefix-255`).
#[derive(Clone)]
pub struct KeyedArchive {
    inner: MemoryArchiveStore,
    bug: &'static str,
}

impl KeyedArchive {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> KeyedArchive {
        KeyedArchive {
            inner: MemoryArchiveStore::new(),
            bug,
        }
    }
}

impl ArchiveStore for KeyedArchive {
    fn capabilities(&self) -> ArchiveStoreCapabilities {
        self.inner.capabilities()
    }
    async fn archive(&self, id: &str, envelopes: Vec<EventEnvelope>) -> Result<u64, StoreError> {
        // The length limit is checked on the id as given; only the index is short.
        loom_kernel::spi::check::id("execution id", id)?;
        let k = fold(self.bug, id);
        let envelopes = if k != id && envelopes.iter().all(|e| e.execution_id == id) {
            relabel(envelopes, &k)
        } else {
            envelopes
        };
        self.inner.archive(&k, envelopes).await
    }
    async fn read_archived(&self, id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        self.inner.read_archived(&fold(self.bug, id)).await
    }
    async fn delete_execution(&self, id: &str) -> Result<u64, StoreError> {
        self.inner.delete_execution(&fold(self.bug, id)).await
    }
    async fn replace_segments(
        &self,
        id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> Result<(), StoreError> {
        loom_kernel::spi::check::id("execution id", id)?;
        let k = fold(self.bug, id);
        let envelopes = if k != id && envelopes.iter().all(|e| e.execution_id == id) {
            relabel(envelopes, &k)
        } else {
            envelopes
        };
        self.inner.replace_segments(&k, envelopes).await
    }
}

// ---------------------------------------------------------------------------------
// The plugin tier

/// A ContentStore whose owners go through [`fold`] (`ids-percent-decoded`).
#[derive(Clone)]
pub struct KeyedContent {
    inner: MemoryContentStore,
    bug: &'static str,
}

impl KeyedContent {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> KeyedContent {
        KeyedContent {
            inner: MemoryContentStore::new(),
            bug,
        }
    }

    fn owner(&self, owner: Option<ContentAccess>) -> Option<ContentAccess> {
        owner.map(|o| ContentAccess::new(fold(self.bug, &o.owner)))
    }
}

impl ContentStore for KeyedContent {
    fn capabilities(&self) -> ContentStoreCapabilities {
        self.inner.capabilities()
    }
    async fn put(
        &self,
        bytes: Vec<u8>,
        owner: Option<ContentAccess>,
    ) -> Result<ContentRef, StoreError> {
        self.inner.put(bytes, self.owner(owner)).await
    }
    async fn get(
        &self,
        digest: &str,
        owner: Option<ContentAccess>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(digest, self.owner(owner)).await
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
        self.inner.put_stream(chunks, self.owner(owner)).await
    }
    async fn seals_content(&self) -> Result<bool, StoreError> {
        self.inner.seals_content().await
    }
}

/// A DurableStateStore whose keys go through [`fold`] (`ids-nfc-normalised`).
#[derive(Clone, Default)]
pub struct KeyedState {
    inner: MemoryDurableStateStore,
    bug: &'static str,
}

impl KeyedState {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> KeyedState {
        KeyedState {
            inner: MemoryDurableStateStore::new(),
            bug,
        }
    }
}

impl DurableStateStore for KeyedState {
    fn capabilities(&self) -> DurableStateStoreCapabilities {
        self.inner.capabilities()
    }
    async fn get(&self, key: &str) -> Result<Option<Versioned>, StoreError> {
        self.inner.get(&fold(self.bug, key)).await
    }
    async fn put(&self, key: &str, value: Value, expected: Option<u64>) -> Result<u64, StoreError> {
        self.inner.put(&fold(self.bug, key), value, expected).await
    }
    async fn delete(&self, key: &str, expected: u64) -> Result<(), StoreError> {
        self.inner.delete(&fold(self.bug, key), expected).await
    }
}

/// A ReadModelStore whose document ids go through [`fold`] (`ids-numeric-affinity`).
#[derive(Clone, Default)]
pub struct KeyedModels {
    inner: MemoryReadModelStore,
    bug: &'static str,
}

impl KeyedModels {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> KeyedModels {
        KeyedModels {
            inner: MemoryReadModelStore::new(),
            bug,
        }
    }
}

impl ReadModelStore for KeyedModels {
    fn capabilities(&self) -> ReadModelStoreCapabilities {
        self.inner.capabilities()
    }
    async fn upsert(&self, collection: &str, id: &str, doc: Value) -> Result<(), StoreError> {
        self.inner
            .upsert(collection, &fold(self.bug, id), doc)
            .await
    }
    async fn get(&self, collection: &str, id: &str) -> Result<Option<Value>, StoreError> {
        self.inner.get(collection, &fold(self.bug, id)).await
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
// TimerStore, ExecutionDispatcher

/// A TimerStore with one bug: `timer-keys-joined-with-colon` keys each timer by
/// `executionId:key`, so `("j:k", "m")` and `("j", "k:m")` are one timer.
#[derive(Clone, Default)]
pub struct KeyedTimers {
    inner: MemoryTimerStore,
    bug: &'static str,
    joined: Arc<Mutex<BTreeMap<String, (String, String)>>>,
}

impl KeyedTimers {
    /// The in-memory store with `bug`.
    pub fn new(bug: &'static str) -> KeyedTimers {
        KeyedTimers {
            inner: MemoryTimerStore::new(),
            bug,
            joined: Arc::default(),
        }
    }

    /// The (execution, key) the store holds for this pair.
    fn stored(&self, exec: &str, key: &str) -> (String, String) {
        if self.bug != "timer-keys-joined-with-colon" {
            return (exec.to_string(), key.to_string());
        }
        lock(&self.joined)
            .entry(format!("{exec}:{key}"))
            .or_insert_with(|| (exec.to_string(), key.to_string()))
            .clone()
    }
}

impl TimerStore for KeyedTimers {
    fn spi_version(&self) -> String {
        self.inner.spi_version()
    }
    async fn schedule(&self, timer: Timer) -> Result<Timer, StoreError> {
        loom_kernel::spi::check::timer(&timer)?;
        let (exec, key) = self.stored(&timer.execution_id, &timer.key);
        self.inner
            .schedule(Timer {
                execution_id: exec,
                key,
                ..timer
            })
            .await
    }
    async fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<Timer>, StoreError> {
        self.inner.due(now_ms, limit).await
    }
    async fn cancel(&self, execution_id: &str, key: &str) -> Result<bool, StoreError> {
        let (exec, key) = self.stored(execution_id, key);
        self.inner.cancel(&exec, &key).await
    }
}

#[derive(Default)]
struct DispatchState {
    claims: u64,
    first_worker: BTreeMap<u64, String>,
}

/// An ExecutionDispatcher with one bug: `queue-compaction-loses-a-package` (every
/// [`COMPACTION_CLAIMS`]th claim compacts the queue and drops the next package),
/// `reclaim-keeps-first-worker` (a re-claimed dispatch's lease names the worker that
/// claimed it first), `complete-cancels-timers` (completing a lease cancels every timer of
/// its execution, in the [`KeyedTimers`] it shares).
#[derive(Clone)]
pub struct KeyedDispatcher {
    inner: MemoryDispatcher,
    bug: &'static str,
    timers: Option<KeyedTimers>,
    state: Arc<Mutex<DispatchState>>,
}

impl KeyedDispatcher {
    /// The in-memory dispatcher with `bug`; `timers` is the timer store it shares a
    /// backend with (for `complete-cancels-timers`).
    pub fn new(bug: &'static str, timers: Option<KeyedTimers>) -> KeyedDispatcher {
        KeyedDispatcher {
            inner: MemoryDispatcher::new(),
            bug,
            timers,
            state: Arc::default(),
        }
    }
}

impl ExecutionDispatcher for KeyedDispatcher {
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
        self.inner.dispatch(package).await
    }
    async fn claim(
        &self,
        target: &str,
        worker_id: &str,
        now_ms: i64,
    ) -> Result<Option<Lease>, StoreError> {
        let Some(mut lease) = self.inner.claim(target, worker_id, now_ms).await? else {
            return Ok(None);
        };
        let compact = {
            let mut s = lock(&self.state);
            s.claims += 1;
            if self.bug == "reclaim-keeps-first-worker" {
                let first = s
                    .first_worker
                    .entry(lease.dispatch_id.0)
                    .or_insert_with(|| worker_id.to_string());
                lease.worker_id = first.clone();
            }
            self.bug == "queue-compaction-loses-a-package"
                && s.claims.is_multiple_of(COMPACTION_CLAIMS)
        };
        if compact {
            // The compaction drops the package after the one just claimed.
            if let Ok(Some(lost)) = self.inner.claim(target, "compaction", now_ms).await {
                let _ = self.inner.complete(&lost).await;
            }
        }
        Ok(Some(lease))
    }
    async fn renew(&self, lease: &Lease, now_ms: i64) -> Result<Lease, StoreError> {
        self.inner.renew(lease, now_ms).await
    }
    async fn complete(&self, lease: &Lease) -> Result<(), StoreError> {
        self.inner.complete(lease).await?;
        if let (Some(t), "complete-cancels-timers") = (&self.timers, self.bug) {
            let due = t
                .due(i64::MAX, loom_kernel::spi::TIMER_DUE_LIMIT_MAX)
                .await?;
            for timer in due
                .iter()
                .filter(|x| x.execution_id == lease.package.execution_id)
            {
                t.cancel(&timer.execution_id, &timer.key).await?;
            }
        }
        Ok(())
    }
    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.inner.release(lease).await
    }
    async fn expire_leases(&self, now_ms: i64) -> Result<Vec<DispatchId>, StoreError> {
        self.inner.expire_leases(now_ms).await
    }
}
