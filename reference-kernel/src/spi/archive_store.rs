//! The ArchiveStore SPI: the compaction archive (§7; SPI-18, SPI-19; ADR 0138, ADR 0139).
//!
//! `LogLifecycle.compact` appends the exact envelopes it is about to remove to the
//! archive before it truncates the log; `readRange`, replay and resume never read it.
//! The archive holds at most one envelope per `(execution, sequence)`.

use std::future::Future;

use super::error::StoreError;
use super::{Capabilities, SpiMethod};
use crate::envelope::EventEnvelope;

/// The optional ArchiveStore methods (SPI-18).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArchiveStoreMethod {
    /// `deleteExecution`.
    DeleteExecution,
    /// `replaceSegments` (1.1.0, ADR 0139 D14).
    ReplaceSegments,
}

impl ArchiveStoreMethod {
    /// Every optional method, in spec order.
    pub const ALL: [ArchiveStoreMethod; 2] = [
        ArchiveStoreMethod::DeleteExecution,
        ArchiveStoreMethod::ReplaceSegments,
    ];
}

impl SpiMethod for ArchiveStoreMethod {
    fn name(&self) -> &'static str {
        match self {
            ArchiveStoreMethod::DeleteExecution => "deleteExecution",
            ArchiveStoreMethod::ReplaceSegments => "replaceSegments",
        }
    }

    /// The spec's "(SPI 1.1.0, ADR 0139 D14)" may cover only `replaceSegments`, so
    /// `deleteExecution` reads `"<=1.1.0"` (SPI-18).
    fn since(&self) -> &'static str {
        match self {
            ArchiveStoreMethod::DeleteExecution => "<=1.1.0",
            ArchiveStoreMethod::ReplaceSegments => "1.1.0",
        }
    }

    fn all() -> &'static [Self] {
        &ArchiveStoreMethod::ALL
    }
}

/// What an ArchiveStore claims.
pub type ArchiveStoreCapabilities = Capabilities<ArchiveStoreMethod>;

/// The compaction archive (§7).
///
/// Validation (reference-defined): every envelope must name `execution_id` and the
/// batch must be strictly ascending by sequence; otherwise `InvalidArgument`, nothing
/// written. Batches are limited by
/// [`APPEND_BATCH_EVENTS_MAX`](super::APPEND_BATCH_EVENTS_MAX).
pub trait ArchiveStore: Send + Sync {
    /// Declares the SPI version and the optional methods implemented (SPI-02).
    fn capabilities(&self) -> ArchiveStoreCapabilities;

    /// Appends the exact envelopes to the execution's archive, atomically (required;
    /// SPI-19). Idempotent per sequence (reference-defined), so a compaction that
    /// crashed between the archive write and the truncation can simply run again:
    /// an envelope equal to the one archived at its sequence is skipped; a different
    /// envelope at an archived sequence refuses the whole batch with `AlreadyExists`.
    /// Returns how many envelopes were new.
    fn archive(
        &self,
        execution_id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// The archived envelopes of the execution, ascending by sequence (required).
    /// Unknown ids read as empty.
    fn read_archived(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<Vec<EventEnvelope>, StoreError>> + Send;

    /// Optional (`deleteExecution`, `<=1.1.0`; GAP-27): removes the execution's archive,
    /// returning how many envelopes it held.
    fn delete_execution(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send {
        let _ = execution_id;
        async { Err(StoreError::unsupported("deleteExecution")) }
    }

    /// Optional (`replaceSegments`, SPI 1.1.0, ADR 0139 D14; GAP-27): atomically
    /// replaces the execution's whole archive with `envelopes` (validated as for
    /// `archive`). A reader sees either the old archive or the new one.
    fn replace_segments(
        &self,
        execution_id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        let _ = (execution_id, envelopes);
        async { Err(StoreError::unsupported("replaceSegments")) }
    }
}
