//! What the campaign drives: a [`Subject`] is a set of SPI implementations (any of the
//! nine may be absent), and a [`SubjectFactory`] makes an empty one per case.
//!
//! The traits stay generic (the SPI traits are not object safe), so a subject is a
//! [`Stores`] value naming one type per SPI; a missing SPI is `None` with any type that
//! implements the trait (the in-memory one is handy).

use std::future::Future;
use std::sync::Arc;

use loom_kernel::spi::{
    ArchiveStore, BranchRegistry, ContentStore, DurableStateStore, EventStore, ExecutionDispatcher,
    ReadModelStore, SnapshotStore, TimerStore,
};
use loom_stores::memory::{
    MemoryArchiveStore, MemoryBranchRegistry, MemoryDispatcher, MemoryEventStore,
    MemorySnapshotStore, MemoryTimerStore,
};
use loom_stores::plugin_memory::{
    MemoryContentStore, MemoryDurableStateStore, MemoryReadModelStore,
};

/// A store under test, SPI by SPI.
pub trait Subject {
    /// Its EventStore type.
    type Events: EventStore;
    /// Its SnapshotStore type.
    type Snapshots: SnapshotStore;
    /// Its ArchiveStore type.
    type Archive: ArchiveStore;
    /// Its ContentStore type.
    type Content: ContentStore;
    /// Its DurableStateStore type.
    type State: DurableStateStore;
    /// Its ReadModelStore type.
    type Models: ReadModelStore;
    /// Its ExecutionDispatcher type.
    type Dispatcher: ExecutionDispatcher;
    /// Its TimerStore type.
    type Timers: TimerStore;
    /// Its BranchRegistry type.
    type Branches: BranchRegistry;
    /// The EventStore, if implemented.
    fn events(&self) -> Option<&Self::Events>;
    /// The SnapshotStore, if implemented.
    fn snapshots(&self) -> Option<&Self::Snapshots>;
    /// The ArchiveStore, if implemented.
    fn archive(&self) -> Option<&Self::Archive>;
    /// The ContentStore, if implemented.
    fn content(&self) -> Option<&Self::Content>;
    /// The DurableStateStore, if implemented.
    fn state(&self) -> Option<&Self::State>;
    /// The ReadModelStore, if implemented.
    fn models(&self) -> Option<&Self::Models>;
    /// The ExecutionDispatcher, if implemented.
    fn dispatcher(&self) -> Option<&Self::Dispatcher>;
    /// The TimerStore, if implemented.
    fn timers(&self) -> Option<&Self::Timers>;
    /// The BranchRegistry, if implemented.
    fn branches(&self) -> Option<&Self::Branches>;
}

/// One value per SPI, `None` where the store has none.
#[derive(Clone)]
pub struct Stores<E, S, A, C, D, R, X, T, B> {
    /// EventStore.
    pub events: Option<E>,
    /// SnapshotStore.
    pub snapshots: Option<S>,
    /// ArchiveStore.
    pub archive: Option<A>,
    /// ContentStore.
    pub content: Option<C>,
    /// DurableStateStore.
    pub state: Option<D>,
    /// ReadModelStore.
    pub models: Option<R>,
    /// ExecutionDispatcher.
    pub dispatcher: Option<X>,
    /// TimerStore.
    pub timers: Option<T>,
    /// BranchRegistry.
    pub branches: Option<B>,
}

impl<E, S, A, C, D, R, X, T, B> Default for Stores<E, S, A, C, D, R, X, T, B> {
    /// No SPI at all.
    fn default() -> Self {
        Stores {
            events: None,
            snapshots: None,
            archive: None,
            content: None,
            state: None,
            models: None,
            dispatcher: None,
            timers: None,
            branches: None,
        }
    }
}

impl<E, S, A, C, D, R, X, T, B> Subject for Stores<E, S, A, C, D, R, X, T, B>
where
    E: EventStore,
    S: SnapshotStore,
    A: ArchiveStore,
    C: ContentStore,
    D: DurableStateStore,
    R: ReadModelStore,
    X: ExecutionDispatcher,
    T: TimerStore,
    B: BranchRegistry,
{
    type Events = E;
    type Snapshots = S;
    type Archive = A;
    type Content = C;
    type State = D;
    type Models = R;
    type Dispatcher = X;
    type Timers = T;
    type Branches = B;
    fn events(&self) -> Option<&E> {
        self.events.as_ref()
    }
    fn snapshots(&self) -> Option<&S> {
        self.snapshots.as_ref()
    }
    fn archive(&self) -> Option<&A> {
        self.archive.as_ref()
    }
    fn content(&self) -> Option<&C> {
        self.content.as_ref()
    }
    fn state(&self) -> Option<&D> {
        self.state.as_ref()
    }
    fn models(&self) -> Option<&R> {
        self.models.as_ref()
    }
    fn dispatcher(&self) -> Option<&X> {
        self.dispatcher.as_ref()
    }
    fn timers(&self) -> Option<&T> {
        self.timers.as_ref()
    }
    fn branches(&self) -> Option<&B> {
        self.branches.as_ref()
    }
}

/// The in-memory reference stores as one subject: the model the campaign compares with.
pub type MemoryStores = Stores<
    MemoryEventStore,
    MemorySnapshotStore,
    MemoryArchiveStore,
    MemoryContentStore,
    MemoryDurableStateStore,
    MemoryReadModelStore,
    MemoryDispatcher,
    MemoryTimerStore,
    MemoryBranchRegistry,
>;

/// Makes an empty subject for each case (and each shrinking step).
pub trait SubjectFactory {
    /// The subject type.
    type Subject: Subject;
    /// A subject holding no data: a fresh database, a fresh schema, or a `reset`
    /// adapter.
    fn fresh(&self) -> impl Future<Output = Result<Self::Subject, String>>;
}

/// A factory from a closure.
pub struct FnFactory<F>(pub F);

impl<S: Subject, Fut: Future<Output = Result<S, String>>, F: Fn() -> Fut> SubjectFactory
    for FnFactory<F>
{
    type Subject = S;
    fn fresh(&self) -> impl Future<Output = Result<S, String>> {
        (self.0)()
    }
}

/// The in-memory stores with every SPI and every optional method (`storeNow` on the
/// system clock): the faithful subject of the campaign's own tests.
pub fn memory_stores() -> MemoryStores {
    Stores {
        events: Some(MemoryEventStore::with_clock(Arc::new(
            loom_stores::SystemClock,
        ))),
        snapshots: Some(MemorySnapshotStore::new()),
        archive: Some(MemoryArchiveStore::new()),
        content: Some(MemoryContentStore::new()),
        state: Some(MemoryDurableStateStore::new()),
        models: Some(MemoryReadModelStore::new()),
        dispatcher: Some(MemoryDispatcher::new()),
        timers: Some(MemoryTimerStore::new()),
        branches: Some(MemoryBranchRegistry::new()),
    }
}
