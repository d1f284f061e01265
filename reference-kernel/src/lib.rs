//! # loom-kernel: the Loom reference kernel
//!
//! This crate owns the parts of the Loom kernel that every other part of Loom
//! Conformance is measured against: the event envelope and its strict decoder,
//! canonical JSON (RFC 8785) and the digests built on it, the pure fold
//! (`state = fold(events)`), snapshots and their normalization, and the contract
//! version constants.
//!
//! Key design decision: the fold is a pure, synchronous function of the envelopes.
//! It reads no clock, randomness, environment or hash-map iteration order (every map
//! in the folded state is ordered), it cannot panic on any input, and it never mutates
//! a state its caller can still see: `fold_from` takes the prior state by reference and
//! returns a new one. Behaviour that changed between schema minors is selected by
//! [`fold::FoldVersion`], so older folds can be reproduced exactly.
//!
//! Architecture invariant: nothing here depends on tokio's runtime, a database driver,
//! the clock or randomness.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod canonical;
pub mod digest;
pub mod envelope;
pub mod fold;
pub mod ingress;
pub mod json;
pub mod limits;
pub mod runtime;
pub mod schema;
pub mod snapshot;
pub mod spi;
pub mod verify;
pub mod versions;

pub use canonical::{canonical_json, canonical_string};
pub use envelope::{decode_log, EnvelopeError, EventEnvelope, RawEnvelope};
pub use fold::{
    fold, fold_as, fold_from, fold_owned, fold_text, get_decision, known_event_types,
    ExecutionState, FoldVersion,
};
pub use json::{Json, JsonText};
pub use snapshot::{normalize_snapshot_state, SnapshotRecord};
pub use versions::*;
