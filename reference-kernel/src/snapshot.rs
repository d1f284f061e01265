//! Snapshots (being written).
#![allow(missing_docs)]
pub struct SnapshotRecord;
pub fn normalize_snapshot_state() {}
