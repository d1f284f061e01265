//! Runtime snapshotting through the SnapshotStore SPI (REPLAY-15, SNAP-01, SNAP-02,
//! SNAP-05).
//!
//! With a SnapshotStore wired ([`super::Runtime::with_snapshots`]), a run writes a
//! [`SnapshotRecord`] of the folded state after every event whose sequence closes a block
//! of [`SnapshotPolicy::every_events`] events (sequences `N-1`, `2N-1`, …) and when it
//! parks. Every entry point that loads an execution (resume, recover, resumeAs, cancel,
//! timer wake, delivery) then restores the latest snapshot and folds only the events
//! after it. The log stays authoritative: nothing here appends, and a snapshot that
//! cannot be written is reported as a [`super::Diagnostic`], never as a failed run.
//!
//! Key design decisions:
//!
//! - **Block boundaries, not run boundaries.** Periodic snapshots fall on fixed
//!   sequences, so where they fall does not depend on where earlier runs stopped or
//!   crashed. A batch the ingress gate appends is covered by the next boundary or by
//!   the park snapshot.
//! - **Nothing loaded is trusted blindly.** The SPI record is `{schemaVersion, sequence,
//!   state}` and carries no integrity data, so the loader binds it to the log as far as
//!   it cheaply can ([`check_record`]): the snapshot must not cover events the log does
//!   not have, must normalize (no newer schema, a well-formed state), and the state's
//!   bookkeeping (`sequence`, `updatedAt`, `startedAt`) must name envelopes the log
//!   really holds at or before the snapshot's sequence. An older writer's snapshot of a
//!   log in one of the documented exception shapes (SNAP-04 and decision 0003) is not
//!   used either. A refused snapshot is reported as a diagnostic naming the check and
//!   the fix, the whole log is folded instead, and, when the store claims
//!   `deleteExecution`, the execution's snapshots are deleted: the remedy SNAP-05 names,
//!   which makes the log authoritative again. A state altered in a way that keeps its
//!   bookkeeping consistent cannot be told from a genuine one without folding the
//!   prefix again; that is what a sealing store is for (`loadLatestSealed`).
//! - **Type erasure.** The store sits behind a boxed-future object ([`DynSnapshots`]),
//!   so wiring one adds no type parameter to the runtime and the interpreter.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::envelope::EventEnvelope;
use crate::fold::{ExecutionState, FoldVersion};
use crate::snapshot::{documented_exception, normalize_snapshot_state, SnapshotRecord};
use crate::spi::{SnapshotStore, SnapshotStoreCapabilities, SnapshotStoreMethod, StoreError};

use super::limits::SNAPSHOT_EVERY_EVENTS_DEFAULT;

/// When the runtime writes snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotPolicy {
    /// Write a snapshot after each event whose sequence `s` has `(s + 1) %
    /// every_events == 0`. `0` writes none.
    pub every_events: u64,
    /// Write a snapshot when a run parks, so the resume folds no tail. On by default;
    /// off, loads restore from a block boundary and fold the events after it.
    pub on_park: bool,
}

impl Default for SnapshotPolicy {
    fn default() -> Self {
        SnapshotPolicy {
            every_events: SNAPSHOT_EVERY_EVENTS_DEFAULT,
            on_park: true,
        }
    }
}

impl SnapshotPolicy {
    /// A snapshot every `every_events` events and on park.
    pub fn every(every_events: u64) -> SnapshotPolicy {
        SnapshotPolicy {
            every_events,
            on_park: true,
        }
    }
}

impl SnapshotPolicy {
    /// Whether the event at `sequence` closes a block.
    pub fn due_at(&self, sequence: u64) -> bool {
        self.every_events > 0 && (sequence + 1).is_multiple_of(self.every_events)
    }
}

/// How the runtime loaded an execution the last time it did (for tests and reports:
/// it shows that a snapshot was used and how long the folded tail was).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadReport {
    /// The execution.
    pub execution_id: String,
    /// The sequence of the snapshot the state was restored from; `None` when the whole
    /// log was folded.
    pub snapshot_sequence: Option<u64>,
    /// How many envelopes the load folded.
    pub events_folded: u64,
    /// Why a snapshot that was found was not used, when one was refused.
    pub refused: Option<String>,
}

/// Counts over every load a runtime made (see [`LoadReport`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadTotals {
    /// Loads restored from a snapshot.
    pub from_snapshot: u64,
    /// Loads that folded the whole log (no snapshot, or one refused).
    pub whole_log: u64,
    /// Envelopes folded after a snapshot, summed over the loads from one.
    pub tail_events: u64,
    /// Snapshots refused.
    pub refused: u64,
}

impl LoadTotals {
    pub(crate) fn add(&mut self, r: &LoadReport) {
        match r.snapshot_sequence {
            Some(_) => {
                self.from_snapshot += 1;
                self.tail_events += r.events_folded;
            }
            None => self.whole_log += 1,
        }
        if r.refused.is_some() {
            self.refused += 1;
        }
    }
}

type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An object-safe view of a [`SnapshotStore`].
pub(crate) trait DynSnapshots: Send + Sync {
    fn capabilities(&self) -> SnapshotStoreCapabilities;
    fn save<'a>(
        &'a self,
        execution_id: &'a str,
        record: SnapshotRecord,
    ) -> BoxFut<'a, Result<(), StoreError>>;
    fn load_latest<'a>(
        &'a self,
        execution_id: &'a str,
    ) -> BoxFut<'a, Result<Option<SnapshotRecord>, StoreError>>;
    fn delete_execution<'a>(&'a self, execution_id: &'a str)
        -> BoxFut<'a, Result<u64, StoreError>>;
}

impl<P: SnapshotStore> DynSnapshots for P {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        SnapshotStore::capabilities(self)
    }
    fn save<'a>(
        &'a self,
        execution_id: &'a str,
        record: SnapshotRecord,
    ) -> BoxFut<'a, Result<(), StoreError>> {
        Box::pin(SnapshotStore::save(self, execution_id, record))
    }
    fn load_latest<'a>(
        &'a self,
        execution_id: &'a str,
    ) -> BoxFut<'a, Result<Option<SnapshotRecord>, StoreError>> {
        Box::pin(SnapshotStore::load_latest(self, execution_id))
    }
    fn delete_execution<'a>(
        &'a self,
        execution_id: &'a str,
    ) -> BoxFut<'a, Result<u64, StoreError>> {
        Box::pin(SnapshotStore::delete_execution(self, execution_id))
    }
}

/// A wired SnapshotStore and its policy.
#[derive(Clone)]
pub(crate) struct Snapshots {
    pub store: Arc<dyn DynSnapshots>,
    pub policy: SnapshotPolicy,
}

/// What loading found.
pub(crate) struct Loaded {
    pub state: ExecutionState,
    pub report: LoadReport,
    /// A refused snapshot's diagnostic: (rule, message).
    pub diagnostic: Option<(&'static str, String)>,
}

/// The envelope at `sequence`. Logs are dense from 0, so the index is tried first.
fn at(log: &[EventEnvelope], sequence: u64) -> Option<&EventEnvelope> {
    match usize::try_from(sequence).ok().and_then(|i| log.get(i)) {
        Some(e) if e.sequence == sequence => Some(e),
        _ => log.iter().find(|e| e.sequence == sequence),
    }
}

/// Checks that `record` can stand for the first events of `log` and returns its
/// normalized state; an error says which check failed (see the module docs).
pub fn check_record(
    record: &SnapshotRecord,
    log: &[EventEnvelope],
) -> Result<ExecutionState, String> {
    let k = record.sequence;
    let last = log.last().map(|e| e.sequence);
    if last.is_none_or(|m| k > m) {
        return Err(format!(
            "the snapshot covers events through sequence {k} but the log ends at {}: it belongs to another execution or an earlier incarnation of this id",
            last.map_or_else(|| "no event".to_owned(), |m| m.to_string())
        ));
    }
    let writer = FoldVersion::parse(&record.schema_version)
        .map_err(|e| format!("the snapshot's schemaVersion is unusable: {e}"))?;
    let state = normalize_snapshot_state(record).map_err(|e| e.to_string())?;
    match state.sequence {
        Some(s) => {
            if s > k {
                return Err(format!(
                    "the state was folded through sequence {s}, beyond the snapshot's sequence {k}"
                ));
            }
            let e = at(log, s)
                .ok_or_else(|| format!("the state names sequence {s}, which the log lacks"))?;
            if state.updated_at != Some(e.timestamp_ms) {
                return Err(format!(
                    "the state's updatedAt {:?} is not the timestamp {} of the log's event {s}",
                    state.updated_at, e.timestamp_ms
                ));
            }
        }
        None => {
            // A handler acts on every EXECUTION_STARTED, so a state that never saw an
            // event cannot stand for a prefix that holds one.
            if log
                .iter()
                .take_while(|e| e.sequence <= k)
                .any(|e| e.event_type == "EXECUTION_STARTED")
            {
                return Err(format!(
                    "the state records no event, but the log holds an EXECUTION_STARTED at or before sequence {k}"
                ));
            }
        }
    }
    if let Some(t) = state.started_at {
        if !log
            .iter()
            .take_while(|e| e.sequence <= k)
            .any(|e| e.event_type == "EXECUTION_STARTED" && e.timestamp_ms == t)
        {
            return Err(format!(
                "the state's startedAt {t} matches no EXECUTION_STARTED at or before sequence {k}"
            ));
        }
    }
    if writer != FoldVersion::CURRENT {
        if let Some(shape) = documented_exception(writer, log) {
            return Err(format!(
                "a {writer} snapshot of this log falls under a documented exception ({shape}): normalization cannot restore it"
            ));
        }
    }
    Ok(state)
}

/// Loads `log`'s state: the latest snapshot plus the tail when a usable one exists,
/// else the whole log. A refused snapshot is deleted when the store claims
/// `deleteExecution` (SNAP-05).
pub(crate) async fn load(
    snapshots: &Snapshots,
    execution_id: &str,
    log: &[EventEnvelope],
    version: FoldVersion,
) -> Loaded {
    let fold_at = |state: ExecutionState, events: Vec<EventEnvelope>| {
        crate::fold::fold_versioned(state, events, version, &mut crate::fold::NoDiagnostics)
    };
    let full = |refused: Option<String>, diagnostic: Option<(&'static str, String)>| Loaded {
        state: fold_at(ExecutionState::new(), log.to_vec()),
        report: LoadReport {
            execution_id: execution_id.to_owned(),
            snapshot_sequence: None,
            events_folded: log.len() as u64,
            refused,
        },
        diagnostic,
    };
    let record = match snapshots.store.load_latest(execution_id).await {
        Ok(Some(r)) => r,
        Ok(None) => return full(None, None),
        Err(e) => {
            // A snapshot store outage must not stop the execution: the log is enough.
            let msg = format!(
                "loading the latest snapshot failed ({e}); the whole log of {} events was folded instead",
                log.len()
            );
            return full(None, Some(("REPLAY-15", msg)));
        }
    };
    // A node folding at an older schema cannot read a newer one's snapshot.
    let newer = FoldVersion::parse(&record.schema_version)
        .ok()
        .filter(|w| *w > version)
        .map(|w| {
            format!("the snapshot was written by a {w} fold, newer than this node's {version}")
        });
    let checked = match newer {
        Some(why) => Err(why),
        None => check_record(&record, log),
    };
    match checked {
        Ok(state) => {
            let tail: Vec<EventEnvelope> = log
                .iter()
                .filter(|e| e.sequence > record.sequence)
                .cloned()
                .collect();
            let events_folded = tail.len() as u64;
            Loaded {
                state: fold_at(state, tail),
                report: LoadReport {
                    execution_id: execution_id.to_owned(),
                    snapshot_sequence: Some(record.sequence),
                    events_folded,
                    refused: None,
                },
                diagnostic: None,
            }
        }
        Err(why) => {
            let remedy = if snapshots
                .store
                .capabilities()
                .claims(SnapshotStoreMethod::DeleteExecution)
            {
                match snapshots.store.delete_execution(execution_id).await {
                    Ok(n) => format!("deleted the execution's {n} snapshot(s)"),
                    Err(e) => format!(
                        "deleting the execution's snapshots failed ({e}); delete them (SnapshotStore.deleteExecution)"
                    ),
                }
            } else {
                "the store does not claim deleteExecution; delete the execution's snapshots by hand"
                    .to_owned()
            };
            let msg = format!(
                "snapshot at sequence {} (schemaVersion {}) refused: {why}. The whole log was folded instead and {remedy}, which makes the log authoritative (SNAP-05)",
                record.sequence, record.schema_version
            );
            full(Some(why), Some(("SNAP-05", msg)))
        }
    }
}

/// Writes a snapshot of `state` at `sequence`, labelled with the fold `version` that
/// folded it; a failure is returned as a diagnostic message, never as a run failure
/// (the log stays authoritative).
pub(crate) async fn save(
    snapshots: &Snapshots,
    execution_id: &str,
    state: &ExecutionState,
    sequence: u64,
    version: FoldVersion,
) -> Result<(), String> {
    snapshots
        .store
        .save(
            execution_id,
            SnapshotRecord::capture_as(version, state, sequence),
        )
        .await
        .map_err(|e| {
            format!(
                "writing the snapshot at sequence {sequence} failed ({e}); the log stays authoritative and the next load folds a longer tail"
            )
        })
}
