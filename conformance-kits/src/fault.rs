//! Wrappers that put faults between a caller and any EventStore, for the fault cases.
//!
//! - [`FaultInjector`] makes the acknowledgement of an append disappear after the
//!   store has (or has not) written it: what a caller sees when the connection drops
//!   between the write and the answer. The case then checks that the store's state is
//!   all-or-nothing and that a retry cannot duplicate the batch.
//! - [`Restrict`] hides optional methods of a store (its claim shrinks and the hidden
//!   methods answer `unsupported`) and counts calls to `deleteExecution`, so a case can
//!   prove a caller refuses rather than falls back (SPI-10).
//!
//! Both forward everything else unchanged, so the behaviour under test is the store's.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::spi::{
    Anchor, AppendAck, EventStore, EventStoreCapabilities, EventStoreMethod, FenceToken, Page,
    SealingCapability, StoreError,
};

/// An EventStore whose next append, when armed, loses its acknowledgement: the inner
/// store runs the append to completion and the caller gets a `backend` error instead of
/// the ack.
pub struct FaultInjector<'a, S> {
    inner: &'a S,
    drop_next_ack: AtomicBool,
}

impl<'a, S: EventStore> FaultInjector<'a, S> {
    /// Wraps `inner`, disarmed.
    pub fn new(inner: &'a S) -> FaultInjector<'a, S> {
        FaultInjector {
            inner,
            drop_next_ack: AtomicBool::new(false),
        }
    }

    /// The next append's acknowledgement is lost.
    pub fn drop_next_ack(&self) {
        self.drop_next_ack.store(true, Ordering::SeqCst);
    }
}

/// An EventStore with some optional methods hidden, counting `deleteExecution` calls.
pub struct Restrict<'a, S> {
    inner: &'a S,
    hidden: Vec<EventStoreMethod>,
    delete_execution_calls: AtomicU64,
}

impl<'a, S: EventStore> Restrict<'a, S> {
    /// Wraps `inner`, hiding `hidden`.
    pub fn new(inner: &'a S, hidden: impl IntoIterator<Item = EventStoreMethod>) -> Self {
        Restrict {
            inner,
            hidden: hidden.into_iter().collect(),
            delete_execution_calls: AtomicU64::new(0),
        }
    }

    /// How often `deleteExecution` was called through this wrapper.
    pub fn delete_execution_calls(&self) -> u64 {
        self.delete_execution_calls.load(Ordering::SeqCst)
    }

    fn hides(&self, method: EventStoreMethod) -> Option<StoreError> {
        use loom_kernel::spi::SpiMethod;
        self.hidden
            .contains(&method)
            .then(|| StoreError::unsupported(method.name()))
    }
}

/// Forwards every EventStore method to `self.inner`, except the ones listed first.
macro_rules! forward_event_store {
    ($ty:ident, $self_:ident, caps => $caps:expr, append => $append:expr, hide => $hide:ident) => {
        impl<S: EventStore> EventStore for $ty<'_, S> {
            fn capabilities(&$self_) -> EventStoreCapabilities {
                $caps
            }
            async fn append(
                &$self_,
                execution_id: &str,
                expected_next: u64,
                events: Vec<EventEnvelope>,
                fence: Option<FenceToken>,
            ) -> Result<AppendAck, StoreError> {
                let result = $self_.inner.append(execution_id, expected_next, events, fence).await;
                ($append)(result)
            }
            async fn read(&$self_, execution_id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
                $self_.inner.read(execution_id).await
            }
            async fn list_executions(&$self_) -> Result<Vec<String>, StoreError> {
                $self_.inner.list_executions().await
            }
            async fn read_range(&$self_, id: &str, from: u64, to: u64) -> Result<Vec<EventEnvelope>, StoreError> {
                if let Some(e) = $hide($self_, EventStoreMethod::ReadRange) { return Err(e); }
                $self_.inner.read_range(id, from, to).await
            }
            async fn acquire_fence(&$self_, id: &str) -> Result<FenceToken, StoreError> {
                if let Some(e) = $hide($self_, EventStoreMethod::AcquireFence) { return Err(e); }
                $self_.inner.acquire_fence(id).await
            }
            async fn acquire_fence_if(&$self_, id: &str, expected: Option<FenceToken>) -> Result<FenceToken, StoreError> {
                if let Some(e) = $hide($self_, EventStoreMethod::AcquireFenceIf) { return Err(e); }
                $self_.inner.acquire_fence_if(id, expected).await
            }
            async fn observe(&$self_, id: &str) -> Result<Anchor, StoreError> {
                if let Some(e) = $hide($self_, EventStoreMethod::AppendIfUnchanged) { return Err(e); }
                $self_.inner.observe(id).await
            }
            async fn append_if_unchanged(&$self_, id: &str, anchor: Anchor, events: Vec<EventEnvelope>) -> Result<AppendAck, StoreError> {
                if let Some(e) = $hide($self_, EventStoreMethod::AppendIfUnchanged) { return Err(e); }
                $self_.inner.append_if_unchanged(id, anchor, events).await
            }
            async fn store_now(&$self_) -> Result<i64, StoreError> {
                if let Some(e) = $hide($self_, EventStoreMethod::StoreNow) { return Err(e); }
                $self_.inner.store_now().await
            }
            async fn sealing_capability(&$self_) -> Result<Option<SealingCapability>, StoreError> {
                if let Some(e) = $hide($self_, EventStoreMethod::SealingCapability) { return Err(e); }
                $self_.inner.sealing_capability().await
            }
            async fn delete_through(&$self_, id: &str, through: u64) -> Result<u64, StoreError> {
                if let Some(e) = $hide($self_, EventStoreMethod::DeleteThrough) { return Err(e); }
                $self_.inner.delete_through(id, through).await
            }
            async fn copy_prefix(&$self_, source: &str, target: &str, through: u64) -> Result<AppendAck, StoreError> {
                if let Some(e) = $hide($self_, EventStoreMethod::CopyPrefix) { return Err(e); }
                $self_.inner.copy_prefix(source, target, through).await
            }
            async fn delete_execution(&$self_, id: &str) -> Result<bool, StoreError> {
                $self_.count_delete_execution();
                if let Some(e) = $hide($self_, EventStoreMethod::DeleteExecution) { return Err(e); }
                $self_.inner.delete_execution(id).await
            }
            async fn list_executions_page(&$self_, cursor: Option<String>, limit: usize) -> Result<Page, StoreError> {
                if let Some(e) = $hide($self_, EventStoreMethod::ListExecutionsPage) { return Err(e); }
                $self_.inner.list_executions_page(cursor, limit).await
            }
        }
    };
}

fn no_hide<S>(_: &FaultInjector<'_, S>, _: EventStoreMethod) -> Option<StoreError> {
    None
}

fn restrict_hide<S: EventStore>(
    store: &Restrict<'_, S>,
    method: EventStoreMethod,
) -> Option<StoreError> {
    store.hides(method)
}

impl<S> FaultInjector<'_, S> {
    fn count_delete_execution(&self) {}
}

impl<S> Restrict<'_, S> {
    fn count_delete_execution(&self) {
        self.delete_execution_calls.fetch_add(1, Ordering::SeqCst);
    }
}

forward_event_store!(
    FaultInjector, self,
    caps => self.inner.capabilities(),
    append => |result: Result<AppendAck, StoreError>| {
        if self.drop_next_ack.swap(false, Ordering::SeqCst) {
            Err(StoreError::backend(match result {
                Ok(_) => "injected fault: connection lost after the write, before the acknowledgement",
                Err(_) => "injected fault: connection lost before the answer",
            }))
        } else {
            result
        }
    },
    hide => no_hide
);

forward_event_store!(
    Restrict, self,
    caps => {
        let mut caps = self.inner.capabilities();
        for m in &self.hidden {
            caps.methods.remove(m);
        }
        caps
    },
    append => |result: Result<AppendAck, StoreError>| result,
    hide => restrict_hide
);
