//! The pure fold (being written).
#![allow(missing_docs)]
pub struct ExecutionState;
pub enum FoldVersion {}
pub fn fold() {}
pub fn fold_from() {}
pub fn known_event_types() {}
