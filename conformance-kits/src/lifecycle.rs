//! `LogLifecycle`: the kernel-side maintenance of an execution's log over the SPI
//! traits (§7; SPI-10, SPI-16, SPI-17, SPI-19; ADR 0134, ADR 0138, ADR 0139).
//!
//! It lives in the conformance crate because it is written purely against the traits:
//! the lifecycle kit runs it over any store triple and checks the rules that bind the
//! *caller* (archive before truncate, refuse rather than fall back, never prune the
//! snapshot the tail needs), which no store alone can prove.
//!
//! Key design decision: every operation refuses with a [`LifecycleError`] before it
//! changes anything when a store it needs is missing or does not claim a method, so a
//! refusal always leaves the log, the snapshots and the archive untouched.

use std::fmt;

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::spi::{
    ArchiveStore, ArchiveStoreCapabilities, EventStore, EventStoreMethod, SnapshotStore,
    SnapshotStoreCapabilities, SnapshotStoreMethod, StoreError,
};
use loom_kernel::versions::{ARCHIVE_STORE_SPI_VERSION, SNAPSHOT_STORE_SPI_VERSION};

/// Why a lifecycle operation did not happen, or failed part way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LifecycleError {
    /// Refused before anything changed: a store or an optional method the operation
    /// needs is missing. Names the rule that requires the refusal.
    Refused(String),
    /// A store call failed. Whatever was done before it is listed in the message; the
    /// operation is safe to run again (archiving is idempotent per sequence).
    Store(StoreError),
    /// A store answered something that breaks its contract (e.g. the archive does not
    /// hold what was just archived). Nothing is truncated after such an answer.
    Contract(String),
    /// The test failpoint between the archive write and the truncation fired.
    Interrupted,
}

impl fmt::Display for LifecycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LifecycleError::Refused(why) => write!(f, "refused: {why}"),
            LifecycleError::Store(e) => write!(f, "store error: {e}"),
            LifecycleError::Contract(why) => write!(f, "store broke its contract: {why}"),
            LifecycleError::Interrupted => f.write_str("interrupted between archive and truncate"),
        }
    }
}

impl std::error::Error for LifecycleError {}

impl From<StoreError> for LifecycleError {
    fn from(e: StoreError) -> Self {
        LifecycleError::Store(e)
    }
}

/// What `compact` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactReport {
    /// Envelopes removed from the log (and archived first).
    pub removed: u64,
    /// Of those, how many were new to the archive (a rerun after a crash archives 0).
    pub newly_archived: u64,
}

/// What `prune_snapshots` did or, for a dry run, would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneReport {
    /// The snapshot sequences pruned (or to be pruned), ascending.
    pub sequences: Vec<u64>,
    /// The latest snapshot, which is always kept.
    pub kept_latest: Option<u64>,
    /// True for a dry run: nothing was deleted.
    pub dry_run: bool,
}

/// A stand-in for "no SnapshotStore" or "no ArchiveStore": claims nothing, holds
/// nothing, and refuses every write.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoStore;

impl SnapshotStore for NoStore {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        SnapshotStoreCapabilities::new(SNAPSHOT_STORE_SPI_VERSION, [])
    }
    async fn save(&self, _: &str, _: SnapshotRecord) -> Result<(), StoreError> {
        Err(StoreError::unsupported("save"))
    }
    async fn load_latest(&self, _: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        Ok(None)
    }
}

impl ArchiveStore for NoStore {
    fn capabilities(&self) -> ArchiveStoreCapabilities {
        ArchiveStoreCapabilities::new(ARCHIVE_STORE_SPI_VERSION, [])
    }
    async fn archive(&self, _: &str, _: Vec<EventEnvelope>) -> Result<u64, StoreError> {
        Err(StoreError::unsupported("archive"))
    }
    async fn read_archived(&self, _: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        Ok(Vec::new())
    }
}

/// Log maintenance over an EventStore and, optionally, a SnapshotStore and an
/// ArchiveStore. Build with [`LogLifecycle::new`] and the `with_*` methods.
pub struct LogLifecycle<'a, E, S = NoStore, A = NoStore> {
    events: &'a E,
    snapshots: Option<&'a S>,
    archive: Option<&'a A>,
    fail_after_archive: bool,
}

impl<'a, E: EventStore> LogLifecycle<'a, E, NoStore, NoStore> {
    /// A lifecycle with only an EventStore: `compact` refuses (SPI-19), snapshot
    /// pruning refuses.
    pub fn new(events: &'a E) -> Self {
        LogLifecycle {
            events,
            snapshots: None,
            archive: None,
            fail_after_archive: false,
        }
    }
}

impl<'a, E: EventStore, S: SnapshotStore, A: ArchiveStore> LogLifecycle<'a, E, S, A> {
    /// Adds the archive `compact` writes to.
    pub fn with_archive<A2: ArchiveStore>(self, archive: &'a A2) -> LogLifecycle<'a, E, S, A2> {
        LogLifecycle {
            events: self.events,
            snapshots: self.snapshots,
            archive: Some(archive),
            fail_after_archive: self.fail_after_archive,
        }
    }

    /// Adds the SnapshotStore `prune_snapshots` works on.
    pub fn with_snapshots<S2: SnapshotStore>(
        self,
        snapshots: &'a S2,
    ) -> LogLifecycle<'a, E, S2, A> {
        LogLifecycle {
            events: self.events,
            snapshots: Some(snapshots),
            archive: self.archive,
            fail_after_archive: self.fail_after_archive,
        }
    }

    /// Test failpoint: `compact` stops with [`LifecycleError::Interrupted`] after the
    /// archive write and before the truncation, as a crash there would.
    pub fn fail_after_archive(mut self, fail: bool) -> Self {
        self.fail_after_archive = fail;
        self
    }

    /// Moves the events with `sequence <= through` from the log to the archive:
    /// reads them, archives exactly those envelopes, checks the archive holds them
    /// byte for byte, and only then calls `deleteThrough` (SPI-19). Refuses, changing
    /// nothing, without an ArchiveStore (SPI-19) or when the EventStore does not claim
    /// `deleteThrough`; it never falls back to `deleteExecution` (SPI-10).
    pub async fn compact(
        &self,
        execution_id: &str,
        through: u64,
    ) -> Result<CompactReport, LifecycleError> {
        let Some(archive) = self.archive else {
            return Err(LifecycleError::Refused(
                "compaction needs an ArchiveStore to keep the removed envelopes (SPI-19)".into(),
            ));
        };
        if !self
            .events
            .capabilities()
            .claims(EventStoreMethod::DeleteThrough)
        {
            return Err(LifecycleError::Refused(
                "the EventStore does not claim deleteThrough; compaction never falls back to deleteExecution (SPI-10)"
                    .into(),
            ));
        }
        let removed: Vec<EventEnvelope> = self
            .events
            .read(execution_id)
            .await?
            .into_iter()
            .filter(|e| e.sequence <= through)
            .collect();
        if removed.is_empty() {
            return Ok(CompactReport {
                removed: 0,
                newly_archived: 0,
            });
        }
        let newly_archived = archive.archive(execution_id, removed.clone()).await?;
        let archived = archive.read_archived(execution_id).await?;
        for envelope in &removed {
            if !archived.contains(envelope) {
                return Err(LifecycleError::Contract(format!(
                    "the archive of {execution_id} lacks sequence {} right after archiving it; the log was not truncated",
                    envelope.sequence
                )));
            }
        }
        if self.fail_after_archive {
            return Err(LifecycleError::Interrupted);
        }
        let deleted = self.events.delete_through(execution_id, through).await?;
        // A concurrent compaction may have removed some already; never more than we archived.
        if deleted > removed.len() as u64 {
            return Err(LifecycleError::Contract(format!(
                "deleteThrough({through}) on {execution_id} removed {deleted} events, only {} were archived",
                removed.len()
            )));
        }
        Ok(CompactReport {
            removed: deleted,
            newly_archived,
        })
    }

    /// Prunes the snapshots with `sequence <= through`, except the latest one, which
    /// the tail needs to replay from (SPI-16: safety is the caller's). The candidates
    /// come from `listSequences`; a dry run reports them and deletes nothing (SPI-17).
    /// Refuses without a SnapshotStore claiming `listSequences` and `pruneSnapshots`.
    pub async fn prune_snapshots(
        &self,
        execution_id: &str,
        through: u64,
        dry_run: bool,
    ) -> Result<PruneReport, LifecycleError> {
        let Some(snapshots) = self.snapshots else {
            return Err(LifecycleError::Refused("no SnapshotStore".into()));
        };
        let caps = snapshots.capabilities();
        for m in [
            SnapshotStoreMethod::ListSequences,
            SnapshotStoreMethod::PruneSnapshots,
        ] {
            if !caps.claims(m) {
                use loom_kernel::spi::SpiMethod;
                return Err(LifecycleError::Refused(format!(
                    "the SnapshotStore does not claim {} (SPI-16, SPI-17)",
                    m.name()
                )));
            }
        }
        let listed = snapshots.list_sequences(execution_id).await?;
        let latest = listed.iter().copied().max();
        // Never prune the latest snapshot: it is what a replay of the tail starts from.
        let bound = match latest {
            Some(l) if l <= through => l.checked_sub(1),
            _ => Some(through),
        };
        let sequences: Vec<u64> = match bound {
            Some(b) => listed.iter().copied().filter(|s| *s <= b).collect(),
            None => Vec::new(),
        };
        if !dry_run {
            if let (Some(b), false) = (bound, sequences.is_empty()) {
                let n = snapshots.prune_snapshots(execution_id, b).await?;
                if n != sequences.len() as u64 {
                    return Err(LifecycleError::Contract(format!(
                        "pruneSnapshots({b}) on {execution_id} deleted {n}, listSequences predicted {}",
                        sequences.len()
                    )));
                }
            }
        }
        Ok(PruneReport {
            sequences,
            kept_latest: latest,
            dry_run,
        })
    }

    /// The archived envelopes of the execution (what compaction removed), ascending.
    pub async fn read_archived(
        &self,
        execution_id: &str,
    ) -> Result<Vec<EventEnvelope>, LifecycleError> {
        match self.archive {
            Some(archive) => Ok(archive.read_archived(execution_id).await?),
            None => Err(LifecycleError::Refused("no ArchiveStore".into())),
        }
    }
}
