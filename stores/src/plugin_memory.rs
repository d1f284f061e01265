//! In-memory stores for the plugin-tier SPIs (SPI-20, reference-defined contracts in
//! `loom_kernel::spi::plugin`): [`MemoryContentStore`], [`MemoryDurableStateStore`] and
//! [`MemoryReadModelStore`].
//!
//! Each keeps its state behind one `Mutex` and does a whole call under one lock, so a
//! call is atomic. `putStream` buffers the stream privately and publishes the object
//! only once the last chunk is in: there is no moment at which a prefix is readable.
//! Read-model cursors are tokens the store hands out and remembers (bounded by
//! [`ISSUED_CURSORS_MAX`]), so only cursors it issued, for the collection it issued them
//! for, are accepted.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use loom_kernel::spi::plugin::{
    check_digest, check_document, check_limit, check_name, check_owner, collect_stream,
    content_ref, Chunk,
};
use loom_kernel::spi::{
    Capabilities, ContentAccess, ContentRef, ContentStore, ContentStoreCapabilities,
    ContentStoreMethod, Document, DurableStateStore, DurableStateStoreCapabilities,
    PutStreamOutcome, QueryOptions, ReadModelPage, ReadModelStore, ReadModelStoreCapabilities,
    StoreError, StoreErrorKind, Versioned,
};
use loom_kernel::versions::{
    CONTENT_STORE_SPI_VERSION, DURABLE_STATE_STORE_SPI_VERSION, READ_MODEL_STORE_SPI_VERSION,
};

/// Most read-model cursors a store remembers; the oldest are forgotten first (a client
/// holding a forgotten cursor gets `InvalidArgument` and starts over).
pub const ISSUED_CURSORS_MAX: usize = 10_000;

fn lock<T>(m: &Mutex<T>) -> Result<MutexGuard<'_, T>, StoreError> {
    m.lock()
        .map_err(|_| StoreError::backend("a previous call panicked while holding the lock"))
}

#[derive(Default)]
struct ContentObject {
    bytes: Arc<Vec<u8>>,
    /// Readable without an owner.
    public: bool,
    /// Owners that put these bytes.
    owners: BTreeSet<String>,
}

/// The in-memory ContentStore.
#[derive(Clone)]
pub struct MemoryContentStore {
    objects: Arc<Mutex<HashMap<String, ContentObject>>>,
    caps: ContentStoreCapabilities,
}

impl MemoryContentStore {
    /// A store claiming every optional feature (it seals nothing: `sealsContent` is false).
    pub fn new() -> MemoryContentStore {
        MemoryContentStore {
            objects: Arc::default(),
            caps: Capabilities::new(CONTENT_STORE_SPI_VERSION, ContentStoreMethod::ALL),
        }
    }

    /// The same store claiming only `methods`; the rest answer `unsupported`.
    pub fn with_methods(
        mut self,
        methods: impl IntoIterator<Item = ContentStoreMethod>,
    ) -> MemoryContentStore {
        self.caps = Capabilities::new(CONTENT_STORE_SPI_VERSION, methods);
        self
    }

    fn publish(
        &self,
        reference: &ContentRef,
        bytes: Vec<u8>,
        owner: Option<ContentAccess>,
    ) -> Result<(), StoreError> {
        let mut objects = lock(&self.objects)?;
        let object = objects
            .entry(reference.digest.clone())
            .or_insert_with(|| ContentObject {
                bytes: Arc::new(bytes),
                ..ContentObject::default()
            });
        match owner {
            None => object.public = true,
            Some(a) => {
                object.owners.insert(a.owner);
            }
        }
        Ok(())
    }
}

impl Default for MemoryContentStore {
    fn default() -> Self {
        MemoryContentStore::new()
    }
}

impl ContentStore for MemoryContentStore {
    fn capabilities(&self) -> ContentStoreCapabilities {
        self.caps.clone()
    }

    async fn put(
        &self,
        bytes: Vec<u8>,
        owner: Option<ContentAccess>,
    ) -> Result<ContentRef, StoreError> {
        check_owner(&self.caps, &owner)?;
        let reference = content_ref(&bytes)?;
        self.publish(&reference, bytes, owner)?;
        Ok(reference)
    }

    async fn get(
        &self,
        digest: &str,
        owner: Option<ContentAccess>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        check_digest(digest)?;
        check_owner(&self.caps, &owner)?;
        let objects = lock(&self.objects)?;
        Ok(objects.get(digest).and_then(|o| {
            let allowed = match &owner {
                None => o.public,
                Some(a) => o.public || o.owners.contains(&a.owner),
            };
            allowed.then(|| o.bytes.as_ref().clone())
        }))
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
        if !self.caps.claims(ContentStoreMethod::PutStream) {
            return Err(StoreError::unsupported("putStream"));
        }
        check_owner(&self.caps, &owner)?;
        // Everything goes into a private buffer; the object is published only after
        // the last chunk, so an abort leaves nothing behind.
        let (buffer, reference) = match collect_stream(chunks) {
            Ok(collected) => collected,
            Err(abort) => return Ok(PutStreamOutcome::Aborted(abort)),
        };
        self.publish(&reference, buffer, owner)?;
        Ok(PutStreamOutcome::Stored(reference))
    }

    async fn seals_content(&self) -> Result<bool, StoreError> {
        if self.caps.claims(ContentStoreMethod::SealsContent) {
            Ok(false)
        } else {
            Err(StoreError::unsupported("sealsContent"))
        }
    }
}

#[derive(Default)]
struct StateEntries {
    /// Live keys: value and version.
    live: HashMap<String, Versioned>,
    /// The last version of each deleted key, so a re-created key continues above it.
    tombstones: HashMap<String, u64>,
}

/// The in-memory DurableStateStore.
#[derive(Clone, Default)]
pub struct MemoryDurableStateStore {
    state: Arc<Mutex<StateEntries>>,
}

impl MemoryDurableStateStore {
    /// An empty store.
    pub fn new() -> MemoryDurableStateStore {
        MemoryDurableStateStore::default()
    }
}

/// The conflict for a stale expectation: `expected` (0 = absent) vs `current` (0 = absent).
fn state_conflict(expected: Option<u64>, current: Option<u64>) -> StoreError {
    let (expected, current) = (expected.unwrap_or(0), current.unwrap_or(0));
    StoreError::new(
        StoreErrorKind::Conflict {
            expected_next: expected,
            actual_next: current,
        },
        format!("expected version {expected}, the key is at {current} (0 = absent)"),
    )
}

impl DurableStateStore for MemoryDurableStateStore {
    fn capabilities(&self) -> DurableStateStoreCapabilities {
        Capabilities::new(DURABLE_STATE_STORE_SPI_VERSION, [])
    }

    async fn get(&self, key: &str) -> Result<Option<Versioned>, StoreError> {
        check_name("key", key)?;
        Ok(lock(&self.state)?.live.get(key).cloned())
    }

    async fn put(
        &self,
        key: &str,
        value: Value,
        expected_version: Option<u64>,
    ) -> Result<u64, StoreError> {
        check_name("key", key)?;
        check_document(&value)?;
        // `expectedVersion: 0` is "absent", as the conflict facts spell absence (GAP-27,
        // decision 0006): no key is ever at version 0.
        let expected_version = expected_version.filter(|v| *v != 0);
        let mut state = lock(&self.state)?;
        let current = state.live.get(key).map(|v| v.version);
        if current != expected_version {
            return Err(state_conflict(expected_version, current));
        }
        let floor = current.or_else(|| state.tombstones.get(key).copied());
        let version = floor.unwrap_or(0) + 1;
        state.tombstones.remove(key);
        state
            .live
            .insert(key.to_string(), Versioned { value, version });
        Ok(version)
    }

    async fn delete(&self, key: &str, expected_version: u64) -> Result<(), StoreError> {
        check_name("key", key)?;
        let mut state = lock(&self.state)?;
        match state.live.get(key).map(|v| v.version) {
            None => Err(StoreError::not_found(format!("no state under {key:?}"))),
            Some(v) if v != expected_version => {
                Err(state_conflict(Some(expected_version), Some(v)))
            }
            Some(v) => {
                state.live.remove(key);
                state.tombstones.insert(key.to_string(), v);
                Ok(())
            }
        }
    }
}

#[derive(Default)]
struct ReadModels {
    collections: HashMap<String, BTreeMap<String, Value>>,
    /// Issued cursor token -> (collection, last id returned).
    cursors: HashMap<String, (String, String)>,
    /// Issue order, for forgetting the oldest.
    cursor_order: VecDeque<String>,
    /// Counter behind cursor tokens; never reused.
    next_cursor: u64,
}

/// The in-memory ReadModelStore.
#[derive(Clone, Default)]
pub struct MemoryReadModelStore {
    state: Arc<Mutex<ReadModels>>,
}

impl MemoryReadModelStore {
    /// An empty store.
    pub fn new() -> MemoryReadModelStore {
        MemoryReadModelStore::default()
    }
}

impl ReadModelStore for MemoryReadModelStore {
    fn capabilities(&self) -> ReadModelStoreCapabilities {
        Capabilities::new(READ_MODEL_STORE_SPI_VERSION, [])
    }

    async fn upsert(&self, collection: &str, id: &str, doc: Value) -> Result<(), StoreError> {
        check_name("collection", collection)?;
        check_name("document id", id)?;
        check_document(&doc)?;
        lock(&self.state)?
            .collections
            .entry(collection.to_string())
            .or_default()
            .insert(id.to_string(), doc);
        Ok(())
    }

    async fn get(&self, collection: &str, id: &str) -> Result<Option<Value>, StoreError> {
        check_name("collection", collection)?;
        check_name("document id", id)?;
        Ok(lock(&self.state)?
            .collections
            .get(collection)
            .and_then(|c| c.get(id))
            .cloned())
    }

    async fn query(
        &self,
        collection: &str,
        options: QueryOptions,
    ) -> Result<ReadModelPage, StoreError> {
        check_name("collection", collection)?;
        let limit = check_limit(options.limit)?;
        let mut state = lock(&self.state)?;
        let after = match &options.cursor {
            None => None,
            Some(token) => match state.cursors.get(token) {
                Some((c, last)) if c == collection => Some(last.clone()),
                Some(_) => {
                    return Err(StoreError::invalid(
                        "the cursor was issued for another collection",
                    ))
                }
                None => {
                    return Err(StoreError::invalid(
                        "the cursor was not issued by this store (or was forgotten)",
                    ))
                }
            },
        };
        let mut docs = Vec::with_capacity(limit);
        let mut more = false;
        if let Some(c) = state.collections.get(collection) {
            let range = match &after {
                Some(last) => c.range::<String, _>((
                    std::ops::Bound::Excluded(last),
                    std::ops::Bound::Unbounded,
                )),
                None => c.range::<String, _>(..),
            };
            for (id, doc) in range {
                if docs.len() == limit {
                    more = true;
                    break;
                }
                docs.push(Document {
                    id: id.clone(),
                    doc: doc.clone(),
                });
            }
        }
        let next_cursor = match (more, docs.last()) {
            (true, Some(last)) => {
                let token = format!("rm{}", state.next_cursor);
                state.next_cursor += 1;
                state
                    .cursors
                    .insert(token.clone(), (collection.to_string(), last.id.clone()));
                state.cursor_order.push_back(token.clone());
                while state.cursor_order.len() > ISSUED_CURSORS_MAX {
                    if let Some(old) = state.cursor_order.pop_front() {
                        state.cursors.remove(&old);
                    }
                }
                Some(token)
            }
            _ => None,
        };
        Ok(ReadModelPage { docs, next_cursor })
    }
}
