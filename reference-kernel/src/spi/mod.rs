//! # The kernel-tier SPI traits (§7)
//!
//! This module owns the contracts of the pluggable seams the kernel stands on: the
//! [`EventStore`] (the log), the [`SnapshotStore`], the compaction [`ArchiveStore`], the
//! [`BranchRegistry`] (fork lineage), the [`ExecutionDispatcher`] (placement) and the
//! reference-defined [`TimerStore`], plus injected time ([`Clock`], [`ManualClock`]).
//! Implementations live elsewhere (`loom-stores`: in-memory, SQLite, PostgreSQL; any
//! third party via the conformance kits).
//!
//! Key design decisions:
//!
//! - **Async, generic, `Send`.** Every method returns `impl Future + Send`, written
//!   with `async fn` in the implementations. The runtime is generic over the store
//!   type, so the traits need not be object safe; the `Send` bound lets a runtime spawn
//!   work over any store. No executor is assumed: this module depends on nothing but
//!   `std`, `serde` and the kernel's own types.
//! - **Required vs optional.** Optional methods have default bodies that answer
//!   [`StoreErrorKind::Unsupported`], and every store declares what it implements in a
//!   [`Capabilities`] value (SPI-02, SPI-03, SPI-15, SPI-18). A kit trusts neither
//!   alone: it checks that claims and behaviour agree.
//! - **Typed errors with stable names.** [`StoreError`] carries a [`StoreErrorKind`]
//!   whose [`name`](StoreErrorKind::name) is what the stdio store protocol sends.
//! - **One validator.** The argument checks every store must make live in [`check`],
//!   so the reference stores refuse exactly the same inputs.
//!
//! Architecture invariant: nothing here reads a clock, randomness or the environment,
//! and nothing depends on tokio or a database driver.

pub mod archive_store;
pub mod branch_registry;
pub mod check;
pub mod clock;
pub mod dispatcher;
pub mod error;
pub mod event_store;
pub mod plugin;
pub mod snapshot_store;
pub mod timer_store;

use std::collections::BTreeSet;

pub use archive_store::{ArchiveStore, ArchiveStoreCapabilities, ArchiveStoreMethod};
pub use branch_registry::{BranchRecord, BranchRegistry};
pub use clock::{Clock, ManualClock};
pub use dispatcher::{DispatchId, ExecutionDispatcher, ExecutionPackage, Lease};
pub use error::{StoreError, StoreErrorKind, STORE_ERROR_KIND_NAMES};
pub use event_store::{
    all_event_store_methods, Anchor, AppendAck, EventStore, EventStoreCapabilities,
    EventStoreMethod, FenceToken, Page, SealingCapability,
};
pub use plugin::{
    ContentAccess, ContentRef, ContentStore, ContentStoreCapabilities, ContentStoreMethod,
    Document, DurableStateStore, DurableStateStoreCapabilities, PutStreamAbort, PutStreamOutcome,
    QueryOptions, ReadModelPage, ReadModelStore, ReadModelStoreCapabilities, Versioned,
    CONTENT_BYTES_MAX, READ_MODEL_LIMIT_MAX,
};
pub use snapshot_store::{SnapshotStore, SnapshotStoreCapabilities, SnapshotStoreMethod};
pub use timer_store::{Timer, TimerStore};

use crate::versions::SemVer;

/// Version of the reference-defined TimerStore seam (the spec has none).
pub const TIMER_STORE_SPI_VERSION: &str = "1.0.0";

/// Most events one `append`, `appendIfUnchanged`, `archive` or `replaceSegments` call
/// may carry. Larger batches are `InvalidArgument`.
pub const APPEND_BATCH_EVENTS_MAX: usize = 10_000;
/// Largest `limit` `listExecutionsPage` accepts (SPI-13: bounded memory per page).
pub const LIST_PAGE_LIMIT_MAX: usize = 10_000;
/// Longest execution id, target name, worker id, flow id or timer key, in UTF-8 bytes.
pub const ID_BYTES_MAX: usize = 1024;
/// Largest sequence a store accepts: SQL stores keep sequences in a signed 64-bit column.
pub const SEQUENCE_MAX: u64 = i64::MAX as u64;
/// Longest `BranchRecord::chain`.
pub const BRANCH_CHAIN_LEN_MAX: usize = 1024;
/// Most packages a dispatcher holds (queued plus leased).
pub const DISPATCH_QUEUE_LEN_MAX: usize = 1_000_000;
/// Largest `limit` `TimerStore::due` accepts.
pub const TIMER_DUE_LIMIT_MAX: usize = 10_000;
/// Lease duration the reference dispatchers use unless configured otherwise.
pub const LEASE_DURATION_MS_DEFAULT: i64 = 30_000;
/// Longest lease duration a reference dispatcher accepts (one day).
pub const LEASE_DURATION_MS_MAX: i64 = 24 * 60 * 60 * 1000;

/// An optional SPI method: its spec name and the SPI minor that introduced it.
pub trait SpiMethod: Copy + Ord + 'static {
    /// The spec's camelCase name, e.g. `"readRange"`; the stdio protocol uses it.
    fn name(&self) -> &'static str;
    /// The SPI version that introduced the method, or `"<=X.Y.Z"` when the spec does
    /// not say (then X.Y.Z is the newest version it cannot be later than).
    fn since(&self) -> &'static str;
    /// Every optional method of the SPI.
    fn all() -> &'static [Self];
    /// The method with this spec name.
    fn from_name(name: &str) -> Option<Self> {
        Self::all().iter().copied().find(|m| m.name() == name)
    }
}

/// What an implementation claims for one SPI: its version and its optional methods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities<M: SpiMethod> {
    /// The SPI version implemented, e.g. `"2.6.0"`.
    pub spi_version: String,
    /// The optional methods implemented.
    pub methods: BTreeSet<M>,
}

impl<M: SpiMethod> Capabilities<M> {
    /// A claim of `spi_version` with `methods`.
    pub fn new(spi_version: &str, methods: impl IntoIterator<Item = M>) -> Capabilities<M> {
        Capabilities {
            spi_version: spi_version.to_string(),
            methods: methods.into_iter().collect(),
        }
    }

    /// Whether `method` is claimed.
    pub fn claims(&self, method: M) -> bool {
        self.methods.contains(&method)
    }

    /// The claimed methods' spec names, in declaration order.
    pub fn method_names(&self) -> Vec<&'static str> {
        self.methods.iter().map(|m| m.name()).collect()
    }

    /// The claim as JSON: `{"spiVersion": "...", "methods": ["readRange", ...]}`, the
    /// shape of the stdio protocol's `hello`.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::json!({ "spiVersion": self.spi_version, "methods": self.method_names() })
    }

    /// Checks the claim against itself (SPI-21): the version parses, and no claimed
    /// method was introduced after the claimed version. Returns every problem found.
    pub fn check_consistent(&self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        let version = match SemVer::parse(&self.spi_version) {
            Ok(v) => Some(v),
            Err(e) => {
                problems.push(e);
                None
            }
        };
        if let Some(version) = version {
            for m in &self.methods {
                let since = m.since();
                if since.starts_with("<=") {
                    continue;
                }
                match SemVer::parse(since) {
                    Ok(s) if s > version => problems.push(format!(
                        "{} needs SPI {since}, the claim is {version}",
                        m.name()
                    )),
                    Ok(_) => {}
                    Err(e) => problems.push(e),
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}
