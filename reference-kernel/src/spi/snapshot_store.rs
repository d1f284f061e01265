//! The SnapshotStore SPI: out-of-band snapshots that bound the replay tail (§3, §7;
//! SPI-15, SPI-16, SPI-17).
//!
//! A snapshot is a [`SnapshotRecord`]: the fold's schema version, the sequence `k` of
//! the last event it covers, and the folded state. There is no snapshot event in the
//! log. `fold(snapshot at k, events after k) == fold(events)` is the kernel's business;
//! the store only keeps records, at most one per `(execution, sequence)`.

use std::future::Future;

use super::error::StoreError;
use super::{Capabilities, SpiMethod};
use crate::snapshot::SnapshotRecord;

/// The optional SnapshotStore methods (SPI-15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SnapshotStoreMethod {
    /// `deleteExecution`.
    DeleteExecution,
    /// `loadLatestSealed` (1.1.0).
    LoadLatestSealed,
    /// `pruneSnapshots` (1.2.0, ADR 0134).
    PruneSnapshots,
    /// `listSequences` (1.3.0, the ADR 0134 amendment).
    ListSequences,
}

impl SnapshotStoreMethod {
    /// Every optional method, in spec order.
    pub const ALL: [SnapshotStoreMethod; 4] = [
        SnapshotStoreMethod::DeleteExecution,
        SnapshotStoreMethod::LoadLatestSealed,
        SnapshotStoreMethod::PruneSnapshots,
        SnapshotStoreMethod::ListSequences,
    ];
}

impl SpiMethod for SnapshotStoreMethod {
    fn name(&self) -> &'static str {
        match self {
            SnapshotStoreMethod::DeleteExecution => "deleteExecution",
            SnapshotStoreMethod::LoadLatestSealed => "loadLatestSealed",
            SnapshotStoreMethod::PruneSnapshots => "pruneSnapshots",
            SnapshotStoreMethod::ListSequences => "listSequences",
        }
    }

    /// `deleteExecution` carries no version in the spec; it is listed before the 1.1.0
    /// method, so it reads `"<=1.1.0"` (GAP-27).
    fn since(&self) -> &'static str {
        match self {
            SnapshotStoreMethod::DeleteExecution => "<=1.1.0",
            SnapshotStoreMethod::LoadLatestSealed => "1.1.0",
            SnapshotStoreMethod::PruneSnapshots => "1.2.0",
            SnapshotStoreMethod::ListSequences => "1.3.0",
        }
    }

    fn all() -> &'static [Self] {
        &SnapshotStoreMethod::ALL
    }
}

/// What a SnapshotStore claims.
pub type SnapshotStoreCapabilities = Capabilities<SnapshotStoreMethod>;

/// Snapshots per execution (§7).
pub trait SnapshotStore: Send + Sync {
    /// Declares the SPI version and the optional methods implemented (SPI-02).
    fn capabilities(&self) -> SnapshotStoreCapabilities;

    /// Stores `record` for the execution (required). A record at a sequence that
    /// already has one replaces it (reference-defined: the fold is deterministic, so a
    /// second snapshot at the same `k` holds the same state unless the schema moved on,
    /// and then the newer one is the one to keep). The state is stored as JSON; a store
    /// may normalise key order (Postgres `jsonb` does), which the kernel tolerates
    /// because decision order is carried by `seq` (FOLD 1.24.0).
    fn save(
        &self,
        execution_id: &str,
        record: SnapshotRecord,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The record with the highest sequence, or `None` (required).
    fn load_latest(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<Option<SnapshotRecord>, StoreError>> + Send;

    /// Optional (`deleteExecution`): removes every snapshot of the execution and
    /// returns how many there were. Deleting snapshots is always safe: the log stays
    /// authoritative (§4's remedy for unnormalisable snapshots).
    fn delete_execution(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send {
        let _ = execution_id;
        async { Err(StoreError::unsupported("deleteExecution")) }
    }

    /// Optional (`loadLatestSealed`, SPI 1.1.0): the latest snapshot as opened by the
    /// sealing layer (GAP-27). A store that seals nothing returns what `load_latest`
    /// returns; every reference store seals nothing.
    fn load_latest_sealed(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<Option<SnapshotRecord>, StoreError>> + Send {
        let _ = execution_id;
        async { Err(StoreError::unsupported("loadLatestSealed")) }
    }

    /// Optional (`pruneSnapshots`, SPI 1.2.0, ADR 0134; SPI-16): deletes exactly the
    /// snapshots with `sequence <= through_sequence` and returns how many. The store
    /// does not judge safety: the caller (`LogLifecycle.pruneSnapshots`) keeps the
    /// snapshot the tail needs.
    fn prune_snapshots(
        &self,
        execution_id: &str,
        through_sequence: u64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send {
        let _ = (execution_id, through_sequence);
        async { Err(StoreError::unsupported("pruneSnapshots")) }
    }

    /// Optional (`listSequences`, SPI 1.3.0; SPI-17): the stored snapshot sequences,
    /// ascending, one per snapshot. Backs `pruneSnapshots({ dryRun })`: the dry run is
    /// this list filtered to `<= through`.
    fn list_sequences(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<Vec<u64>, StoreError>> + Send {
        let _ = execution_id;
        async { Err(StoreError::unsupported("listSequences")) }
    }
}
