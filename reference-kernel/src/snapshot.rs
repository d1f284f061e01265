//! Snapshots and their normalization.
//!
//! A snapshot is out of band (SNAP-02): a [`SnapshotRecord`] stores the schema version
//! of the fold that wrote it, the sequence k of the last envelope it covers and the
//! folded state. Restoring is `fold_from(normalize(record), events after k)`, which
//! equals `fold(events)` (SNAP-01) for every current snapshot and for older ones
//! except the documented shapes (SNAP-04, SNAP-06, SNAP-11).
//!
//! [`normalize_snapshot_state`] upgrades an older snapshot in one O(frames) pass:
//! - written before 1.21.0: a `failed` status without `_error` was a caught step failure
//!   (a pre-1.21 fold failed the execution on `STEP_FAILED`); it becomes `suspended` with
//!   `_failedWhileParked` when a park is open, `running` otherwise (SNAP-03, GAP-15);
//! - written before 1.26.0: settled frames lose their `input` (SNAP-10);
//! - it never invents a decision `seq` (SNAP-06).
//!
//! It is idempotent and a no-op on a current snapshot.

use crate::fold::{keys, ExecutionState, FoldVersion, Status};
use crate::EventEnvelope;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A snapshot as stored out of band (SNAP-02): the schema version of the fold that
/// wrote the state, the sequence k of the last event it covers, and the folded state.
/// `fold_from(normalize(record), events after k) == fold(all events)` (SNAP-01).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SnapshotRecord {
    /// EVENT_SCHEMA version of the fold that wrote the state, e.g. "1.26.0".
    pub schema_version: String,
    /// Sequence of the last envelope folded into `state`.
    pub sequence: u64,
    /// The folded `ExecutionState` as JSON.
    pub state: Value,
}

impl SnapshotRecord {
    /// A current-version snapshot of `state` covering events up to `sequence`.
    pub fn capture(state: &ExecutionState, sequence: u64) -> SnapshotRecord {
        SnapshotRecord::capture_as(FoldVersion::CURRENT, state, sequence)
    }

    /// A snapshot written by a fold of `version` (used to reproduce mixed fleets).
    pub fn capture_as(
        version: FoldVersion,
        state: &ExecutionState,
        sequence: u64,
    ) -> SnapshotRecord {
        SnapshotRecord {
            schema_version: version.to_string(),
            sequence,
            state: state.to_value(),
        }
    }
}

/// Why a snapshot could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError(pub String);

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "snapshot: {}", self.0)
    }
}

impl std::error::Error for SnapshotError {}

/// Reads a snapshot's state and upgrades it to the current fold's shape.
/// A snapshot from a newer schema than this fold, or one that is not an
/// `ExecutionState`, is an error naming the problem.
pub fn normalize_snapshot_state(record: &SnapshotRecord) -> Result<ExecutionState, SnapshotError> {
    let version = FoldVersion::parse(&record.schema_version).map_err(SnapshotError)?;
    let mut state = ExecutionState::from_value(&record.state).map_err(SnapshotError)?;
    normalize_in_place(&mut state, version);
    Ok(state)
}

/// Upgrades a state folded by `written_by` to the current shape, in place.
pub fn normalize_in_place(state: &mut ExecutionState, written_by: FoldVersion) {
    if !written_by.has(21)
        && state.status == Status::Failed
        && !state.variables.contains(keys::ERROR)
    {
        if state.variables.contains(keys::SUSPENDED_ON) {
            state.status = Status::Suspended;
            state
                .variables
                .set(keys::FAILED_WHILE_PARKED, Value::Bool(true));
        } else {
            state.status = Status::Running;
        }
    }
    if !written_by.has(26) {
        for frame in state.frames.values_mut() {
            if frame.status.is_settled() {
                frame.input = None;
            }
        }
    }
}

/// Restores an execution: normalize the snapshot, then fold the events after its
/// sequence. `events` may be the whole log; only envelopes with a sequence above the
/// snapshot's are folded.
pub fn restore(
    record: &SnapshotRecord,
    events: &[crate::EventEnvelope],
) -> Result<ExecutionState, SnapshotError> {
    let state = normalize_snapshot_state(record)?;
    let tail: Vec<_> = events
        .iter()
        .filter(|e| e.sequence > record.sequence)
        .cloned()
        .collect();
    Ok(crate::fold::fold_owned(state, tail))
}

/// Which documented exception (docs/decisions/0003-snapshot-normalization.md) a log
/// falls under when its snapshots are written by an older `writer`, if any: the shapes
/// for which `restore(normalize(snapshot), tail) == fold(events)` is allowed to fail
/// (SNAP-04, SNAP-06/07 aside: `seq` is compared separately). `None` means the
/// equivalence must hold.
pub fn documented_exception(writer: FoldVersion, events: &[EventEnvelope]) -> Option<&'static str> {
    if events.iter().any(|e| {
        e.event_type == "EXECUTION_FAILED"
            && e.payload
                .as_object()
                .is_none_or(|m| !m.contains_key("error"))
    }) && !writer.has(21)
    {
        return Some("SNAP-04 (a): EXECUTION_FAILED without error");
    }
    if !writer.has(21) && reopened_after_genuine_failure(events) {
        return Some("SNAP-04 (b): step failure after a genuine failure");
    }
    if !writer.has(26) && retry_after_settle(events) {
        return Some("0003 (2): retry on a settled frame keeps a stray input (SNAP-11)");
    }
    if !writer.has(21)
        && events
            .iter()
            .skip(1)
            .any(|e| e.event_type == "EXECUTION_STARTED")
    {
        return Some("0003 (1): a second EXECUTION_STARTED re-opens like SNAP-04 (b)");
    }
    if !writer.has(23)
        && events
            .iter()
            .any(|e| e.payload.get("on") == Some(&Value::from(crate::fold::DIVERGED_GATE)))
    {
        return Some("0003 (3): pre-1.23 null resume of __loom_diverged__ was a passthrough");
    }
    if events.iter().any(|e| {
        crate::fold::EVENT_KINDS_SINCE
            .iter()
            .any(|(k, since)| *k == e.event_type && !writer.has(*since))
            || (!writer.has(23) && uses_wave2_fields(e))
    }) {
        return Some("a kind or stamp the writer's version does not know (mixed fleet)");
    }
    None
}

/// 1.23.0 envelope fields an older writer did not fold: the kernel stamp, fork
/// metadata (FOLD-31) and the optional `EXECUTION_STARTED` fields (FOLD-26).
fn uses_wave2_fields(e: &EventEnvelope) -> bool {
    e.is_kernel_stamped()
        || e.meta("forkChain").is_some()
        || e.meta("forkedBy").is_some()
        || (e.event_type == "EXECUTION_STARTED"
            && ["principal", "parent", "chain", "codeHash", "carry"]
                .iter()
                .any(|k| e.payload.get(k).is_some()))
}

fn reopened_after_genuine_failure(events: &[EventEnvelope]) -> bool {
    let mut failed = false;
    for e in events {
        match e.event_type.as_str() {
            "EXECUTION_FAILED" => failed = true,
            "STEP_FAILED" if failed => return true,
            _ => {}
        }
    }
    false
}

fn retry_after_settle(events: &[EventEnvelope]) -> bool {
    let mut settled = std::collections::BTreeSet::new();
    for e in events {
        let step = e
            .payload
            .get("stepId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        match e.event_type.as_str() {
            "STEP_COMPLETED" | "STEP_FAILED" | "STEP_CANCELLED" => {
                settled.insert(step);
            }
            "STEP_STARTED" => {
                settled.remove(&step);
            }
            "STEP_RETRYING" | "EFFECT_INDOUBT" if settled.contains(&step) => return true,
            _ => {}
        }
    }
    false
}
