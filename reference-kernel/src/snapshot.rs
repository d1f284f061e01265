//! Snapshots and their normalization (being written).
#![allow(missing_docs)]
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A snapshot as stored out of band (SNAP-02): the schema version of the fold that
/// wrote it, the sequence k of the last event it covers, and the folded state.
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

pub fn normalize_snapshot_state() {}
