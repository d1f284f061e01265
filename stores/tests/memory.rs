//! The kits against the in-memory stores, in full and as a minimal store that claims
//! no optional method (SPI-02: the kit then skips those cases).

use std::sync::Arc;

use loom_kernel::spi::{EventStore, ManualClock};
use loom_stores::memory::*;

mod events {
    use super::*;
    loom_stores::event_store_kit!(|_case: &'static str| async { Some(MemoryEventStore::new()) });
}

mod events_minimal {
    use super::*;
    loom_stores::event_store_kit!(|_case: &'static str| async {
        Some(MemoryEventStore::new().with_methods([]))
    });
}

mod snapshots {
    use super::*;
    loom_stores::snapshot_store_kit!(|_case: &'static str| async {
        Some(MemorySnapshotStore::new())
    });
}

mod snapshots_minimal {
    use super::*;
    loom_stores::snapshot_store_kit!(|_case: &'static str| async {
        Some(MemorySnapshotStore::new().with_methods([]))
    });
}

mod archive {
    use super::*;
    loom_stores::archive_store_kit!(|_case: &'static str| async {
        Some(MemoryArchiveStore::new())
    });
}

mod archive_minimal {
    use super::*;
    loom_stores::archive_store_kit!(|_case: &'static str| async {
        Some(MemoryArchiveStore::new().with_methods([]))
    });
}

mod branches {
    use super::*;
    loom_stores::branch_registry_kit!(|_case: &'static str| async {
        Some(MemoryBranchRegistry::new())
    });
}

mod dispatcher {
    use super::*;
    loom_stores::dispatcher_kit!(|_case: &'static str| async { Some(MemoryDispatcher::new()) });
}

mod timers {
    use super::*;
    loom_stores::timer_store_kit!(|_case: &'static str| async { Some(MemoryTimerStore::new()) });
}

/// `storeNow` reads the injected clock, never the system's (SPI-08).
#[tokio::test]
async fn spi_08_memory_store_now_reads_the_injected_clock() {
    let clock = Arc::new(ManualClock::new(42));
    let store = MemoryEventStore::with_clock(clock.clone());
    assert_eq!(store.store_now().await, Ok(42));
    clock.advance(1_000);
    assert_eq!(store.store_now().await, Ok(1_042));
}

/// A minimal store answers `unsupported` for every optional method; the kit's probe
/// case is the check, this pins the claim itself (SPI-02).
#[test]
fn spi_02_minimal_store_claims_nothing() {
    let caps = MemoryEventStore::new().with_methods([]).capabilities();
    assert!(caps.methods.is_empty());
    assert_eq!(
        caps.spi_version,
        loom_kernel::versions::EVENT_STORE_SPI_VERSION
    );
}

/// The full store claims every optional method at the kernel's SPI version.
#[test]
fn spi_03_memory_store_claims_every_optional_method() {
    let caps = MemoryEventStore::new().capabilities();
    assert_eq!(
        caps.method_names(),
        [
            "readRange",
            "acquireFence",
            "acquireFenceIf",
            "appendIfUnchanged",
            "storeNow",
            "deleteThrough",
            "sealingCapability",
            "copyPrefix",
            "deleteExecution",
            "listExecutionsPage"
        ]
    );
}

/// A store that claims every optional method but implements none, and ignores fences:
/// the kit must catch both lies (the cases are not vacuous).
struct Liar(MemoryEventStore);

impl EventStore for Liar {
    fn capabilities(&self) -> loom_kernel::spi::EventStoreCapabilities {
        loom_kernel::spi::Capabilities::new(
            loom_kernel::versions::EVENT_STORE_SPI_VERSION,
            loom_kernel::spi::EventStoreMethod::ALL,
        )
    }

    async fn append(
        &self,
        execution_id: &str,
        expected_next: u64,
        events: Vec<loom_kernel::EventEnvelope>,
        _fence: Option<loom_kernel::spi::FenceToken>,
    ) -> Result<loom_kernel::spi::AppendAck, loom_kernel::spi::StoreError> {
        // Drops the fence: a zombie's append goes through.
        self.0
            .append(execution_id, expected_next, events, None)
            .await
    }

    async fn read(
        &self,
        execution_id: &str,
    ) -> Result<Vec<loom_kernel::EventEnvelope>, loom_kernel::spi::StoreError> {
        self.0.read(execution_id).await
    }

    async fn list_executions(&self) -> Result<Vec<String>, loom_kernel::spi::StoreError> {
        self.0.list_executions().await
    }

    async fn acquire_fence(
        &self,
        _execution_id: &str,
    ) -> Result<loom_kernel::spi::FenceToken, loom_kernel::spi::StoreError> {
        Ok(loom_kernel::spi::FenceToken(1))
    }
}

#[tokio::test]
async fn spi_02_kit_catches_claims_without_behaviour() {
    let liar = Liar(MemoryEventStore::new());
    let verdict = loom_stores::testkit::event_store::spi_02_claims_match_behaviour(&liar).await;
    assert!(
        verdict.is_err(),
        "the probe case passed a store that claims unimplemented methods"
    );
    let verdict =
        loom_stores::testkit::event_store::place_05_zombie_append_after_new_fence_is_refused(&liar)
            .await;
    assert!(
        verdict.is_err(),
        "the fencing case passed a store that ignores fences"
    );
    let verdict =
        loom_stores::testkit::event_store::spi_04_fence_tokens_strictly_increase(&liar).await;
    assert!(
        verdict.is_err(),
        "the token case passed a store whose tokens do not increase"
    );
}
