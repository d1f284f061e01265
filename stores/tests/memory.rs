//! The kits against the in-memory stores, in full and as a minimal store that claims
//! no optional method (SPI-02: the kit then skips those cases, reported as skipped).
//! A `harness = false` target: the kit macros make libtest-mimic trials.

use std::sync::Arc;

use loom_kernel::spi::{EventStore, ManualClock};
use loom_stores::memory::*;

mod events {
    use super::*;
    // With the system clock, so the storeNow cases run too (SPI-08).
    loom_conformance::event_store_conformance!(|_case: &'static str| async {
        Some(MemoryEventStore::with_clock(Arc::new(
            loom_stores::SystemClock,
        )))
    });
}

mod events_single_process {
    use super::*;
    // As a single-process store: no storeNow claimed, those cases skip.
    loom_conformance::event_store_conformance!(|_case: &'static str| async {
        Some(MemoryEventStore::new())
    });
}

mod events_minimal {
    use super::*;
    loom_conformance::event_store_conformance!(|_case: &'static str| async {
        Some(MemoryEventStore::new().with_methods([]))
    });
}

mod snapshots {
    use super::*;
    loom_conformance::snapshot_store_conformance!(|_case: &'static str| async {
        Some(MemorySnapshotStore::new())
    });
}

mod snapshots_minimal {
    use super::*;
    loom_conformance::snapshot_store_conformance!(|_case: &'static str| async {
        Some(MemorySnapshotStore::new().with_methods([]))
    });
}

mod archive {
    use super::*;
    loom_conformance::archive_store_conformance!(|_case: &'static str| async {
        Some(MemoryArchiveStore::new())
    });
}

mod archive_minimal {
    use super::*;
    loom_conformance::archive_store_conformance!(|_case: &'static str| async {
        Some(MemoryArchiveStore::new().with_methods([]))
    });
}

mod lifecycle {
    use super::*;
    loom_conformance::lifecycle_conformance!(|_case: &'static str| async {
        Some((
            MemoryEventStore::new(),
            MemorySnapshotStore::new(),
            MemoryArchiveStore::new(),
        ))
    });
}

mod lifecycle_minimal {
    use super::*;
    loom_conformance::lifecycle_conformance!(|_case: &'static str| async {
        Some((
            MemoryEventStore::new().with_methods([]),
            MemorySnapshotStore::new().with_methods([]),
            MemoryArchiveStore::new().with_methods([]),
        ))
    });
}

mod branches {
    use super::*;
    loom_conformance::branch_registry_conformance!(|_case: &'static str| async {
        Some(MemoryBranchRegistry::new())
    });
}

mod dispatcher {
    use super::*;
    loom_conformance::dispatcher_conformance!(|_case: &'static str| async {
        Some(MemoryDispatcher::new())
    });
}

mod timers {
    use super::*;
    loom_conformance::timer_store_conformance!(|_case: &'static str| async {
        Some(MemoryTimerStore::new())
    });
}

/// `storeNow` reads the injected clock, never the system's (SPI-08).
async fn spi_08_memory_store_now_reads_the_injected_clock() {
    let clock = Arc::new(ManualClock::new(42));
    let store = MemoryEventStore::with_clock(clock.clone());
    assert_eq!(store.store_now().await, Ok(42));
    clock.advance(1_000);
    assert_eq!(store.store_now().await, Ok(1_042));
}

/// A minimal store answers `unsupported` for every optional method; the kit's probe
/// case is the check, this pins the claim itself (SPI-02).
fn spi_02_minimal_store_claims_nothing() {
    let caps = MemoryEventStore::new().with_methods([]).capabilities();
    assert!(caps.methods.is_empty());
    assert_eq!(
        caps.spi_version,
        loom_kernel::versions::EVENT_STORE_SPI_VERSION
    );
}

/// A store with a clock claims every optional method at the kernel's SPI version; the
/// default store, a single-process one, claims all but `storeNow` (SPI-08).
fn spi_03_memory_store_claims_every_optional_method() {
    let caps = MemoryEventStore::new().capabilities();
    assert!(!caps.claims(loom_kernel::spi::EventStoreMethod::StoreNow));
    assert_eq!(caps.methods.len(), 9);
    let caps = MemoryEventStore::with_clock(Arc::new(ManualClock::new(0))).capabilities();
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

mod content {
    use loom_stores::plugin_memory::MemoryContentStore;
    loom_conformance::content_store_conformance!(|_case: &'static str| async {
        Some(MemoryContentStore::new())
    });
}

mod content_minimal {
    use loom_stores::plugin_memory::MemoryContentStore;
    loom_conformance::content_store_conformance!(|_case: &'static str| async {
        Some(MemoryContentStore::new().with_methods([]))
    });
}

mod durable_state {
    use loom_stores::plugin_memory::MemoryDurableStateStore;
    loom_conformance::durable_state_store_conformance!(|_case: &'static str| async {
        Some(MemoryDurableStateStore::new())
    });
}

mod read_models {
    use loom_stores::plugin_memory::MemoryReadModelStore;
    loom_conformance::read_model_store_conformance!(|_case: &'static str| async {
        Some(MemoryReadModelStore::new())
    });
}

fn block_on(test: impl std::future::Future<Output = ()>) {
    loom_conformance::block_on(test).expect("a tokio runtime");
}

fn main() -> std::process::ExitCode {
    use loom_conformance::harness::{run, test};
    let mut trials = vec![
        test("spi_08_memory_store_now_reads_the_injected_clock", || {
            block_on(spi_08_memory_store_now_reads_the_injected_clock())
        }),
        test(
            "spi_02_minimal_store_claims_nothing",
            spi_02_minimal_store_claims_nothing,
        ),
        test(
            "spi_03_memory_store_claims_every_optional_method",
            spi_03_memory_store_claims_every_optional_method,
        ),
    ];
    for kit in [
        events::kit_trials,
        events_single_process::kit_trials,
        events_minimal::kit_trials,
        snapshots::kit_trials,
        snapshots_minimal::kit_trials,
        archive::kit_trials,
        archive_minimal::kit_trials,
        lifecycle::kit_trials,
        lifecycle_minimal::kit_trials,
        branches::kit_trials,
        dispatcher::kit_trials,
        timers::kit_trials,
        content::kit_trials,
        content_minimal::kit_trials,
        durable_state::kit_trials,
        read_models::kit_trials,
    ] {
        trials.extend(kit());
    }
    run(trials)
}
