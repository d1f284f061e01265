//! # loom-stores: reference implementations of the Loom SPIs
//!
//! This crate owns the stores the reference kernel runs on and the conformance kits are
//! proven against:
//!
//! - [`memory`]: deterministic in-memory stores for all six SPIs (tests, the simulator);
//! - [`sqlite`]: the embedded default, all six SPIs over one SQLite database (rusqlite,
//!   bundled), one transaction per call, and [`sqlite_plugin`], the plugin-tier SPIs
//!   over the same database;
//! - `postgres` (feature `postgres`): all six SPIs over tokio-postgres, with `jsonb`
//!   payloads and database time for `storeNow` (`postgres_more` holds the
//!   BranchRegistry, the shared dispatcher queue and the TimerStore), and
//!   `postgres_plugin`, the plugin-tier SPIs over the same schema;
//! - [`plugin_memory`]: in-memory stores for the plugin-tier SPIs (ContentStore,
//!   DurableStateStore, ReadModelStore).
//!
//! The behaviour cases every store must pass live in `loom-conformance` (the kits); this
//! crate's tests run them through the kit macros, as any third-party store would.
//!
//! Key design decision: every store implements the same contract, checked by the same
//! argument validator (`loom_kernel::spi::check`) and the same kits, and differs only
//! in what it claims. The in-memory and SQLite stores claim everything but `storeNow` (a
//! single-process store has no shared clock, SPI-08; the in-memory store claims it when
//! it is given a clock, `MemoryEventStore::with_clock`); Postgres claims every
//! EventStore method, `storeNow` included.
//!
//! Architecture invariant: this crate knows nothing about the kits' report format, and
//! the kernel knows nothing about this crate.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod clock;
pub mod memory;
pub mod plugin_memory;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "postgres")]
pub mod postgres_more;
#[cfg(feature = "postgres")]
pub mod postgres_plugin;
pub mod sqlite;
pub mod sqlite_plugin;

pub use clock::SystemClock;
pub use memory::{
    MemoryArchiveStore, MemoryBranchRegistry, MemoryDispatcher, MemoryEventStore,
    MemorySnapshotStore, MemoryTimerStore,
};
pub use plugin_memory::{MemoryContentStore, MemoryDurableStateStore, MemoryReadModelStore};
#[cfg(feature = "postgres")]
pub use postgres::PgStore;
pub use sqlite::SqliteStore;
pub use sqlite_plugin::{SqliteContentStore, SqliteDurableStateStore, SqliteReadModelStore};

use loom_kernel::spi::{StoreError, LEASE_DURATION_MS_MAX};

/// A lease duration in `1..=LEASE_DURATION_MS_MAX`, or `InvalidArgument`.
pub(crate) fn lease_duration_checked(lease_ms: i64) -> Result<i64, StoreError> {
    if (1..=LEASE_DURATION_MS_MAX).contains(&lease_ms) {
        Ok(lease_ms)
    } else {
        Err(StoreError::invalid(format!(
            "lease duration {lease_ms} ms is outside 1..={LEASE_DURATION_MS_MAX}"
        )))
    }
}
