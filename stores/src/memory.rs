//! Deterministic in-memory implementations of all six SPIs.
//!
//! Every collection is a `BTreeMap`/`BTreeSet` behind a `std::sync::Mutex`, so iteration
//! order is the key order and two runs with the same calls give the same answers. No
//! method holds a lock across an `.await` (there is none inside). By default each store
//! claims every optional method at the kernel's SPI version; `with_methods` narrows the
//! claim (the unclaimed methods then answer `unsupported`), which is how the kits test a
//! minimal store (SPI-02). `storeNow` reads the injected [`Clock`].

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard};

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::spi::{
    check, Anchor, AppendAck, ArchiveStore, ArchiveStoreCapabilities, ArchiveStoreMethod,
    BranchRecord, BranchRegistry, Capabilities, Clock, DispatchId, EventStore,
    EventStoreCapabilities, EventStoreMethod, ExecutionDispatcher, ExecutionPackage, FenceToken,
    Lease, ManualClock, Page, SealingCapability, SnapshotStore, SnapshotStoreCapabilities,
    SnapshotStoreMethod, SpiMethod, StoreError, Timer, TimerStore, DISPATCH_QUEUE_LEN_MAX,
    LEASE_DURATION_MS_DEFAULT, TIMER_STORE_SPI_VERSION,
};
use loom_kernel::versions::{
    ARCHIVE_STORE_SPI_VERSION, BRANCH_REGISTRY_SPI_VERSION, DISPATCHER_SPI_VERSION,
    EVENT_STORE_SPI_VERSION, SNAPSHOT_STORE_SPI_VERSION,
};

use crate::lease_duration_checked;

/// Locks a mutex, recovering the data if a panicking thread poisoned it: every update
/// below is applied only after all checks pass, so the data is never half-written.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Returns `Unsupported` from the enclosing method unless `$method` is claimed.
macro_rules! require {
    ($self:ident, $method:expr) => {
        if !$self.caps.claims($method) {
            return Err(StoreError::unsupported($method.name()));
        }
    };
}

// ---------------------------------------------------------------------------------
// EventStore

#[derive(Debug, Default)]
struct Stream {
    live: bool,
    incarnation: u64,
    next_sequence: u64,
    fence: u64,
    events: BTreeMap<u64, EventEnvelope>,
}

impl Stream {
    fn anchor(&self) -> Anchor {
        Anchor {
            incarnation: self.incarnation,
            next_sequence: if self.live { self.next_sequence } else { 0 },
            fence: self.fence,
        }
    }
}

#[derive(Debug, Default)]
struct EventState {
    streams: BTreeMap<String, Stream>,
    /// Store-wide monotonic incarnation counter (SPI-07): store metadata, never in an event.
    incarnations: u64,
}

impl EventState {
    /// Writes a validated batch, creating the stream (with a fresh incarnation) if needed.
    fn write(&mut self, execution_id: &str, events: Vec<EventEnvelope>) -> AppendAck {
        let creating = !self.streams.get(execution_id).is_some_and(|s| s.live);
        if creating {
            self.incarnations += 1;
        }
        let fresh = self.incarnations;
        let stream = self.streams.entry(execution_id.to_string()).or_default();
        if !stream.live {
            stream.live = true;
            stream.incarnation = fresh;
            stream.next_sequence = 0;
            stream.events.clear();
        }
        let first_sequence = stream.next_sequence;
        for event in events {
            stream.next_sequence = event.sequence + 1;
            stream.events.insert(event.sequence, event);
        }
        AppendAck {
            first_sequence,
            next_sequence: stream.next_sequence,
        }
    }

    fn next_of(&self, execution_id: &str) -> (u64, u64) {
        match self.streams.get(execution_id) {
            Some(s) if s.live => (s.next_sequence, s.fence),
            Some(s) => (0, s.fence),
            None => (0, 0),
        }
    }
}

/// The in-memory EventStore.
#[derive(Clone)]
pub struct MemoryEventStore {
    state: Arc<Mutex<EventState>>,
    clock: Arc<dyn Clock>,
    caps: EventStoreCapabilities,
}

impl MemoryEventStore {
    /// A store claiming every optional method but `storeNow`: a single-process store
    /// has no clock of its own to report, and its callers use their injected clock
    /// instead (SPI-08). A store that claimed it with a clock standing at 0 would answer
    /// something that is not epoch milliseconds.
    pub fn new() -> MemoryEventStore {
        let mut store = MemoryEventStore::with_clock(Arc::new(ManualClock::new(0)));
        store.caps.methods.remove(&EventStoreMethod::StoreNow);
        store
    }

    /// A store claiming every optional method, with `storeNow` reading `clock` (give it
    /// a real clock, e.g. `loom_stores::SystemClock`, where `storeNow` is used as the
    /// fleet's clock).
    pub fn with_clock(clock: Arc<dyn Clock>) -> MemoryEventStore {
        MemoryEventStore {
            state: Arc::new(Mutex::new(EventState::default())),
            clock,
            caps: Capabilities::new(EVENT_STORE_SPI_VERSION, EventStoreMethod::ALL),
        }
    }

    /// The same store claiming only `methods`; the rest answer `unsupported`.
    pub fn with_methods(
        mut self,
        methods: impl IntoIterator<Item = EventStoreMethod>,
    ) -> MemoryEventStore {
        self.caps = Capabilities::new(EVENT_STORE_SPI_VERSION, methods);
        self
    }
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        MemoryEventStore::new()
    }
}

impl EventStore for MemoryEventStore {
    fn capabilities(&self) -> EventStoreCapabilities {
        self.caps.clone()
    }

    async fn append(
        &self,
        execution_id: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        check::append_batch(execution_id, expected_next, &events)?;
        let mut state = lock(&self.state);
        let (actual_next, current_fence) = state.next_of(execution_id);
        check::fence(current_fence, fence)?;
        if actual_next != expected_next {
            return Err(StoreError::conflict(expected_next, actual_next));
        }
        Ok(state.write(execution_id, events))
    }

    async fn read(&self, execution_id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        let state = lock(&self.state);
        Ok(match state.streams.get(execution_id) {
            Some(s) if s.live => s.events.values().cloned().collect(),
            _ => Vec::new(),
        })
    }

    async fn list_executions(&self) -> Result<Vec<String>, StoreError> {
        let state = lock(&self.state);
        Ok(state
            .streams
            .iter()
            .filter(|(_, s)| s.live)
            .map(|(id, _)| id.clone())
            .collect())
    }

    async fn read_range(
        &self,
        execution_id: &str,
        from: u64,
        to: u64,
    ) -> Result<Vec<EventEnvelope>, StoreError> {
        require!(self, EventStoreMethod::ReadRange);
        if from > to {
            return Err(StoreError::invalid(format!(
                "readRange from {from} > to {to}"
            )));
        }
        // Like every sequence argument, a bound past SEQUENCE_MAX is invalid.
        check::sequence("readRange to", to)?;
        let state = lock(&self.state);
        Ok(match state.streams.get(execution_id) {
            Some(s) if s.live => s.events.range(from..=to).map(|(_, e)| e.clone()).collect(),
            _ => Vec::new(),
        })
    }

    async fn acquire_fence(&self, execution_id: &str) -> Result<FenceToken, StoreError> {
        require!(self, EventStoreMethod::AcquireFence);
        check::id("execution id", execution_id)?;
        let mut state = lock(&self.state);
        let stream = state.streams.entry(execution_id.to_string()).or_default();
        stream.fence += 1;
        Ok(FenceToken(stream.fence))
    }

    async fn acquire_fence_if(
        &self,
        execution_id: &str,
        expected_current: Option<FenceToken>,
    ) -> Result<FenceToken, StoreError> {
        require!(self, EventStoreMethod::AcquireFenceIf);
        check::id("execution id", execution_id)?;
        let mut state = lock(&self.state);
        let current = state.streams.get(execution_id).map_or(0, |s| s.fence);
        let current_opt = (current != 0).then_some(current);
        if current_opt != expected_current.map(|t| t.0) {
            return Err(StoreError::fence_conflict(
                expected_current.map(|t| t.0),
                current_opt,
            ));
        }
        let stream = state.streams.entry(execution_id.to_string()).or_default();
        stream.fence += 1;
        Ok(FenceToken(stream.fence))
    }

    async fn observe(&self, execution_id: &str) -> Result<Anchor, StoreError> {
        require!(self, EventStoreMethod::AppendIfUnchanged);
        let state = lock(&self.state);
        Ok(state.streams.get(execution_id).map_or(
            Anchor {
                incarnation: 0,
                next_sequence: 0,
                fence: 0,
            },
            Stream::anchor,
        ))
    }

    async fn append_if_unchanged(
        &self,
        execution_id: &str,
        anchor: Anchor,
        events: Vec<EventEnvelope>,
    ) -> Result<AppendAck, StoreError> {
        require!(self, EventStoreMethod::AppendIfUnchanged);
        check::append_batch(execution_id, anchor.next_sequence, &events)?;
        let mut state = lock(&self.state);
        let current = state.streams.get(execution_id).map_or(
            Anchor {
                incarnation: 0,
                next_sequence: 0,
                fence: 0,
            },
            Stream::anchor,
        );
        if current != anchor {
            return Err(StoreError::anchor_changed(format!(
                "observed {anchor:?}, the stream is now {current:?}"
            )));
        }
        Ok(state.write(execution_id, events))
    }

    async fn store_now(&self) -> Result<i64, StoreError> {
        require!(self, EventStoreMethod::StoreNow);
        Ok(self.clock.now_ms())
    }

    async fn sealing_capability(&self) -> Result<Option<SealingCapability>, StoreError> {
        require!(self, EventStoreMethod::SealingCapability);
        Ok(None)
    }

    async fn delete_through(&self, execution_id: &str, through: u64) -> Result<u64, StoreError> {
        require!(self, EventStoreMethod::DeleteThrough);
        check::sequence("through", through)?;
        let mut state = lock(&self.state);
        match state.streams.get_mut(execution_id) {
            Some(s) if s.live => {
                let kept = s.events.split_off(&(through + 1));
                let deleted = std::mem::replace(&mut s.events, kept);
                Ok(deleted.len() as u64)
            }
            _ => Err(StoreError::not_found(format!(
                "no execution {execution_id:?}"
            ))),
        }
    }

    async fn copy_prefix(
        &self,
        source: &str,
        target: &str,
        through: u64,
    ) -> Result<AppendAck, StoreError> {
        require!(self, EventStoreMethod::CopyPrefix);
        check::id("source execution id", source)?;
        check::id("target execution id", target)?;
        check::sequence("through", through)?;
        if source == target {
            return Err(StoreError::invalid(
                "copyPrefix source and target are the same execution",
            ));
        }
        let mut state = lock(&self.state);
        let copied: Vec<EventEnvelope> = match state.streams.get(source) {
            Some(s) if s.live => {
                if !s.events.contains_key(&0) {
                    return Err(StoreError::invalid(
                        "the source no longer holds sequence 0 (compacted)",
                    ));
                }
                if through >= s.next_sequence {
                    return Err(StoreError::invalid(format!(
                        "through {through} is past the source's head ({})",
                        s.next_sequence
                    )));
                }
                s.events
                    .range(..=through)
                    .map(|(_, e)| EventEnvelope {
                        execution_id: target.to_string(),
                        ..e.clone()
                    })
                    .collect()
            }
            _ => return Err(StoreError::not_found(format!("no execution {source:?}"))),
        };
        let (target_next, _) = state.next_of(target);
        if state.streams.get(target).is_some_and(|s| s.live) {
            return Err(StoreError::conflict(0, target_next));
        }
        Ok(state.write(target, copied))
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<bool, StoreError> {
        require!(self, EventStoreMethod::DeleteExecution);
        let mut state = lock(&self.state);
        match state.streams.get_mut(execution_id) {
            Some(s) if s.live => {
                s.live = false;
                s.next_sequence = 0;
                s.events.clear();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn list_executions_page(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<Page, StoreError> {
        require!(self, EventStoreMethod::ListExecutionsPage);
        check::page_limit(limit)?;
        let state = lock(&self.state);
        let lower = match &cursor {
            Some(c) => Bound::Excluded(c.clone()),
            None => Bound::Unbounded,
        };
        let mut ids: Vec<String> = state
            .streams
            .range((lower, Bound::Unbounded))
            .filter(|(_, s)| s.live)
            .map(|(id, _)| id.clone())
            .take(limit + 1)
            .collect();
        let more = ids.len() > limit;
        ids.truncate(limit);
        let next_cursor = if more { ids.last().cloned() } else { None };
        Ok(Page { ids, next_cursor })
    }
}

// ---------------------------------------------------------------------------------
// SnapshotStore

/// The in-memory SnapshotStore.
#[derive(Clone)]
pub struct MemorySnapshotStore {
    state: Arc<Mutex<BTreeMap<String, BTreeMap<u64, SnapshotRecord>>>>,
    caps: SnapshotStoreCapabilities,
}

impl MemorySnapshotStore {
    /// A store claiming every optional method.
    pub fn new() -> MemorySnapshotStore {
        MemorySnapshotStore {
            state: Arc::default(),
            caps: Capabilities::new(SNAPSHOT_STORE_SPI_VERSION, SnapshotStoreMethod::ALL),
        }
    }

    /// The same store claiming only `methods`.
    pub fn with_methods(
        mut self,
        methods: impl IntoIterator<Item = SnapshotStoreMethod>,
    ) -> MemorySnapshotStore {
        self.caps = Capabilities::new(SNAPSHOT_STORE_SPI_VERSION, methods);
        self
    }
}

impl Default for MemorySnapshotStore {
    fn default() -> Self {
        MemorySnapshotStore::new()
    }
}

impl SnapshotStore for MemorySnapshotStore {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        self.caps.clone()
    }

    async fn save(&self, execution_id: &str, record: SnapshotRecord) -> Result<(), StoreError> {
        check::id("execution id", execution_id)?;
        check::sequence("snapshot sequence", record.sequence)?;
        lock(&self.state)
            .entry(execution_id.to_string())
            .or_default()
            .insert(record.sequence, record);
        Ok(())
    }

    async fn load_latest(&self, execution_id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        Ok(lock(&self.state)
            .get(execution_id)
            .and_then(|m| m.values().next_back().cloned()))
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<u64, StoreError> {
        require!(self, SnapshotStoreMethod::DeleteExecution);
        Ok(lock(&self.state)
            .remove(execution_id)
            .map_or(0, |m| m.len() as u64))
    }

    async fn load_latest_sealed(
        &self,
        execution_id: &str,
    ) -> Result<Option<SnapshotRecord>, StoreError> {
        require!(self, SnapshotStoreMethod::LoadLatestSealed);
        self.load_latest(execution_id).await
    }

    async fn prune_snapshots(
        &self,
        execution_id: &str,
        through_sequence: u64,
    ) -> Result<u64, StoreError> {
        require!(self, SnapshotStoreMethod::PruneSnapshots);
        check::sequence("through", through_sequence)?;
        let mut state = lock(&self.state);
        let Some(map) = state.get_mut(execution_id) else {
            return Ok(0);
        };
        let kept = map.split_off(&(through_sequence + 1));
        let pruned = std::mem::replace(map, kept).len() as u64;
        if map.is_empty() {
            state.remove(execution_id);
        }
        Ok(pruned)
    }

    async fn list_sequences(&self, execution_id: &str) -> Result<Vec<u64>, StoreError> {
        require!(self, SnapshotStoreMethod::ListSequences);
        Ok(lock(&self.state)
            .get(execution_id)
            .map_or_else(Vec::new, |m| m.keys().copied().collect()))
    }
}

// ---------------------------------------------------------------------------------
// ArchiveStore

/// The in-memory ArchiveStore.
#[derive(Clone)]
pub struct MemoryArchiveStore {
    state: Arc<Mutex<BTreeMap<String, BTreeMap<u64, EventEnvelope>>>>,
    caps: ArchiveStoreCapabilities,
}

impl MemoryArchiveStore {
    /// A store claiming every optional method.
    pub fn new() -> MemoryArchiveStore {
        MemoryArchiveStore {
            state: Arc::default(),
            caps: Capabilities::new(ARCHIVE_STORE_SPI_VERSION, ArchiveStoreMethod::ALL),
        }
    }

    /// The same store claiming only `methods`.
    pub fn with_methods(
        mut self,
        methods: impl IntoIterator<Item = ArchiveStoreMethod>,
    ) -> MemoryArchiveStore {
        self.caps = Capabilities::new(ARCHIVE_STORE_SPI_VERSION, methods);
        self
    }
}

impl Default for MemoryArchiveStore {
    fn default() -> Self {
        MemoryArchiveStore::new()
    }
}

impl ArchiveStore for MemoryArchiveStore {
    fn capabilities(&self) -> ArchiveStoreCapabilities {
        self.caps.clone()
    }

    async fn archive(
        &self,
        execution_id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> Result<u64, StoreError> {
        check::archive_batch(execution_id, &envelopes)?;
        let mut state = lock(&self.state);
        let existing = state.get(execution_id);
        let mut new = Vec::new();
        for envelope in envelopes {
            match existing.and_then(|m| m.get(&envelope.sequence)) {
                Some(old) if *old == envelope => {}
                Some(_) => {
                    return Err(StoreError::already_exists(format!(
                        "a different envelope is archived at sequence {}",
                        envelope.sequence
                    )))
                }
                None => new.push(envelope),
            }
        }
        let count = new.len() as u64;
        if !new.is_empty() {
            let map = state.entry(execution_id.to_string()).or_default();
            for envelope in new {
                map.insert(envelope.sequence, envelope);
            }
        }
        Ok(count)
    }

    async fn read_archived(&self, execution_id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        Ok(lock(&self.state)
            .get(execution_id)
            .map_or_else(Vec::new, |m| m.values().cloned().collect()))
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<u64, StoreError> {
        require!(self, ArchiveStoreMethod::DeleteExecution);
        Ok(lock(&self.state)
            .remove(execution_id)
            .map_or(0, |m| m.len() as u64))
    }

    async fn replace_segments(
        &self,
        execution_id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> Result<(), StoreError> {
        require!(self, ArchiveStoreMethod::ReplaceSegments);
        check::archive_batch(execution_id, &envelopes)?;
        let map: BTreeMap<u64, EventEnvelope> =
            envelopes.into_iter().map(|e| (e.sequence, e)).collect();
        let mut state = lock(&self.state);
        if map.is_empty() {
            state.remove(execution_id);
        } else {
            state.insert(execution_id.to_string(), map);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------
// BranchRegistry

#[derive(Debug, Default)]
struct BranchState {
    records: BTreeMap<String, BranchRecord>,
    /// (parent, child): the children index, in order.
    children: BTreeSet<(String, String)>,
}

/// The in-memory BranchRegistry.
#[derive(Clone, Default)]
pub struct MemoryBranchRegistry {
    state: Arc<Mutex<BranchState>>,
}

impl MemoryBranchRegistry {
    /// An empty registry.
    pub fn new() -> MemoryBranchRegistry {
        MemoryBranchRegistry::default()
    }
}

impl BranchRegistry for MemoryBranchRegistry {
    fn spi_version(&self) -> String {
        BRANCH_REGISTRY_SPI_VERSION.to_string()
    }

    async fn register(&self, record: BranchRecord) -> Result<(), StoreError> {
        check::branch_record(&record)?;
        let mut state = lock(&self.state);
        if state.records.contains_key(&record.execution_id) {
            return Err(StoreError::already_exists(format!(
                "{:?} is already registered",
                record.execution_id
            )));
        }
        state.children.insert((
            record.parent_execution_id.clone(),
            record.execution_id.clone(),
        ));
        state.records.insert(record.execution_id.clone(), record);
        Ok(())
    }

    async fn get(&self, execution_id: &str) -> Result<Option<BranchRecord>, StoreError> {
        Ok(lock(&self.state).records.get(execution_id).cloned())
    }

    async fn children(&self, parent_execution_id: &str) -> Result<Vec<BranchRecord>, StoreError> {
        let state = lock(&self.state);
        let start = (parent_execution_id.to_string(), String::new());
        Ok(state
            .children
            .range(start..)
            .take_while(|(p, _)| p == parent_execution_id)
            .filter_map(|(_, child)| state.records.get(child).cloned())
            .collect())
    }
}

// ---------------------------------------------------------------------------------
// ExecutionDispatcher

#[derive(Debug, Clone)]
enum Slot {
    Queued { position: u64 },
    Leased { lease_id: u64, deadline_ms: i64 },
}

#[derive(Debug, Clone)]
struct Entry {
    package: ExecutionPackage,
    slot: Slot,
}

#[derive(Debug, Default)]
struct DispatchState {
    targets: BTreeSet<String>,
    entries: BTreeMap<u64, Entry>,
    /// queue position -> dispatch id; FIFO by position.
    queue: BTreeMap<u64, u64>,
    by_execution: BTreeMap<String, u64>,
    next_dispatch: u64,
    next_position: u64,
    next_lease: u64,
}

impl DispatchState {
    fn enqueue(&mut self, dispatch_id: u64) {
        self.next_position += 1;
        let position = self.next_position;
        self.queue.insert(position, dispatch_id);
        if let Some(entry) = self.entries.get_mut(&dispatch_id) {
            entry.slot = Slot::Queued { position };
        }
    }

    fn expire(&mut self, now_ms: i64) -> Vec<DispatchId> {
        let expired: Vec<u64> = self
            .entries
            .iter()
            .filter(|(_, e)| matches!(e.slot, Slot::Leased { deadline_ms, .. } if deadline_ms <= now_ms))
            .map(|(id, _)| *id)
            .collect();
        for id in &expired {
            self.enqueue(*id);
        }
        expired.into_iter().map(DispatchId).collect()
    }

    /// The live lease's entry, or `LeaseLost`.
    fn live(&self, lease: &Lease) -> Result<(), StoreError> {
        match self.entries.get(&lease.dispatch_id.0) {
            Some(Entry {
                slot: Slot::Leased { lease_id, .. },
                ..
            }) if *lease_id == lease.lease_id => Ok(()),
            _ => Err(StoreError::lease_lost(format!(
                "lease {} is no longer live",
                lease.lease_id
            ))),
        }
    }

    fn remove(&mut self, dispatch_id: u64) {
        if let Some(entry) = self.entries.remove(&dispatch_id) {
            self.by_execution.remove(&entry.package.execution_id);
            if let Slot::Queued { position } = entry.slot {
                self.queue.remove(&position);
            }
        }
    }
}

/// The in-memory ExecutionDispatcher.
#[derive(Clone)]
pub struct MemoryDispatcher {
    state: Arc<Mutex<DispatchState>>,
    lease_ms: i64,
}

impl MemoryDispatcher {
    /// A dispatcher with leases of [`LEASE_DURATION_MS_DEFAULT`].
    pub fn new() -> MemoryDispatcher {
        MemoryDispatcher {
            state: Arc::default(),
            lease_ms: LEASE_DURATION_MS_DEFAULT,
        }
    }

    /// A dispatcher with leases of `lease_ms` (1..=`LEASE_DURATION_MS_MAX`).
    pub fn with_lease_ms(lease_ms: i64) -> Result<MemoryDispatcher, StoreError> {
        Ok(MemoryDispatcher {
            state: Arc::default(),
            lease_ms: lease_duration_checked(lease_ms)?,
        })
    }
}

impl Default for MemoryDispatcher {
    fn default() -> Self {
        MemoryDispatcher::new()
    }
}

impl ExecutionDispatcher for MemoryDispatcher {
    fn spi_version(&self) -> String {
        DISPATCHER_SPI_VERSION.to_string()
    }

    async fn register_target(&self, name: &str) -> Result<bool, StoreError> {
        check::id("target", name)?;
        Ok(lock(&self.state).targets.insert(name.to_string()))
    }

    async fn targets(&self) -> Result<Vec<String>, StoreError> {
        Ok(lock(&self.state).targets.iter().cloned().collect())
    }

    async fn dispatch(&self, package: ExecutionPackage) -> Result<DispatchId, StoreError> {
        check::package(&package)?;
        let mut state = lock(&self.state);
        if let Some(target) = &package.compute_target {
            if !state.targets.contains(target) {
                return Err(StoreError::not_found(format!(
                    "compute target {target:?} is not registered"
                )));
            }
        }
        if state.by_execution.contains_key(&package.execution_id) {
            return Err(StoreError::already_exists(format!(
                "execution {:?} is already queued or leased",
                package.execution_id
            )));
        }
        if state.entries.len() >= DISPATCH_QUEUE_LEN_MAX {
            return Err(StoreError::invalid(format!(
                "the dispatcher holds DISPATCH_QUEUE_LEN_MAX ({DISPATCH_QUEUE_LEN_MAX}) packages"
            )));
        }
        state.next_dispatch += 1;
        let id = state.next_dispatch;
        state.by_execution.insert(package.execution_id.clone(), id);
        state.entries.insert(
            id,
            Entry {
                package,
                slot: Slot::Queued { position: 0 },
            },
        );
        state.enqueue(id);
        Ok(DispatchId(id))
    }

    async fn claim(
        &self,
        target: &str,
        worker_id: &str,
        now_ms: i64,
    ) -> Result<Option<Lease>, StoreError> {
        check::id("worker id", worker_id)?;
        let mut state = lock(&self.state);
        if !state.targets.contains(target) {
            return Err(StoreError::not_found(format!(
                "target {target:?} is not registered"
            )));
        }
        state.expire(now_ms);
        let found = state.queue.iter().find_map(|(position, id)| {
            let entry = state.entries.get(id)?;
            match &entry.package.compute_target {
                Some(pinned) if pinned != target => None,
                _ => Some((*position, *id)),
            }
        });
        let Some((position, dispatch_id)) = found else {
            return Ok(None);
        };
        state.queue.remove(&position);
        state.next_lease += 1;
        let lease_id = state.next_lease;
        let deadline_ms = now_ms.saturating_add(self.lease_ms);
        let Some(entry) = state.entries.get_mut(&dispatch_id) else {
            return Ok(None);
        };
        entry.slot = Slot::Leased {
            lease_id,
            deadline_ms,
        };
        Ok(Some(Lease {
            lease_id,
            dispatch_id: DispatchId(dispatch_id),
            package: entry.package.clone(),
            target: target.to_string(),
            worker_id: worker_id.to_string(),
            deadline_ms,
        }))
    }

    async fn renew(&self, lease: &Lease, now_ms: i64) -> Result<Lease, StoreError> {
        let mut state = lock(&self.state);
        state.live(lease)?;
        let deadline_ms = now_ms.saturating_add(self.lease_ms);
        let entry = state.entries.get_mut(&lease.dispatch_id.0);
        if let Some(Entry {
            slot:
                Slot::Leased {
                    deadline_ms: current,
                    ..
                },
            ..
        }) = entry
        {
            if *current > now_ms {
                *current = deadline_ms;
                return Ok(Lease {
                    deadline_ms,
                    ..lease.clone()
                });
            }
        }
        state.enqueue(lease.dispatch_id.0);
        Err(StoreError::lease_lost(format!(
            "lease {} expired",
            lease.lease_id
        )))
    }

    async fn complete(&self, lease: &Lease) -> Result<(), StoreError> {
        let mut state = lock(&self.state);
        state.live(lease)?;
        state.remove(lease.dispatch_id.0);
        Ok(())
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        let mut state = lock(&self.state);
        state.live(lease)?;
        state.enqueue(lease.dispatch_id.0);
        Ok(())
    }

    async fn expire_leases(&self, now_ms: i64) -> Result<Vec<DispatchId>, StoreError> {
        Ok(lock(&self.state).expire(now_ms))
    }
}

// ---------------------------------------------------------------------------------
// TimerStore

#[derive(Debug, Default)]
struct TimerState {
    by_key: BTreeMap<(String, String), i64>,
    /// (wake_at_ms, execution_id, key): the due order.
    due: BTreeSet<(i64, String, String)>,
}

/// The in-memory TimerStore.
#[derive(Clone, Default)]
pub struct MemoryTimerStore {
    state: Arc<Mutex<TimerState>>,
}

impl MemoryTimerStore {
    /// An empty timer store.
    pub fn new() -> MemoryTimerStore {
        MemoryTimerStore::default()
    }
}

impl TimerStore for MemoryTimerStore {
    fn spi_version(&self) -> String {
        TIMER_STORE_SPI_VERSION.to_string()
    }

    async fn schedule(&self, timer: Timer) -> Result<Timer, StoreError> {
        check::timer(&timer)?;
        let mut state = lock(&self.state);
        let key = (timer.execution_id.clone(), timer.key.clone());
        if let Some(wake_at_ms) = state.by_key.get(&key) {
            return Ok(Timer {
                wake_at_ms: *wake_at_ms,
                ..timer
            });
        }
        state.by_key.insert(key, timer.wake_at_ms);
        state.due.insert((
            timer.wake_at_ms,
            timer.execution_id.clone(),
            timer.key.clone(),
        ));
        Ok(timer)
    }

    async fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<Timer>, StoreError> {
        check::due_limit(limit)?;
        let state = lock(&self.state);
        Ok(state
            .due
            .iter()
            .take_while(|(wake_at_ms, _, _)| *wake_at_ms <= now_ms)
            .take(limit)
            .map(|(wake_at_ms, execution_id, key)| Timer {
                execution_id: execution_id.clone(),
                wake_at_ms: *wake_at_ms,
                key: key.clone(),
            })
            .collect())
    }

    async fn cancel(&self, execution_id: &str, key: &str) -> Result<bool, StoreError> {
        let mut state = lock(&self.state);
        match state
            .by_key
            .remove(&(execution_id.to_string(), key.to_string()))
        {
            Some(wake_at_ms) => {
                state
                    .due
                    .remove(&(wake_at_ms, execution_id.to_string(), key.to_string()));
                Ok(true)
            }
            None => Ok(false),
        }
    }
}
