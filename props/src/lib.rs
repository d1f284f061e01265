//! # loom-props: the properties behind the Loom fuzz targets
//!
//! This crate owns the body of every fuzz target as an ordinary function: it takes a
//! structured input built with [`arbitrary`] and returns `Result<(), PropertyViolation>`.
//! The cargo-fuzz package in `fuzz/` only turns a violation into a panic; `cargo test`
//! runs the same functions on stable (proptest feeds them random bytes) and replays
//! every committed corpus, artifact and regression file through [`run_target`].
//!
//! Key design decisions:
//! - **One entry point per target, bytes in.** [`run_target`] decodes bytes exactly as
//!   `libfuzzer-sys` does (`Arbitrary::arbitrary_take_rest`), so a crash file found by a
//!   campaign replays identically under `cargo test`, without a fuzzing toolchain.
//! - **Inputs are mostly valid.** Event logs, flow scripts and resume requests have
//!   hand-written `Arbitrary` impls that build well-formed shapes and then apply a
//!   targeted corruption, so the fuzzer spends its time in the fold and the gate rather
//!   than in the JSON parser (the decoder gets its own raw-bytes mode in [`fold_total`]).
//! - **Oracles are independent.** The ingress property checks the appended events
//!   against the documented GAP-09 order, the canonical property compares against a
//!   second, deliberately simple RFC 8785 writer, and the fold properties check per-event
//!   invariants (FOLD-06/07/38) next to snapshot equivalence. Each property can run
//!   against any [`KernelUnderTest`], so tests plant bugs without touching the kernel.
//! - **Properties never panic.** Every failure is a [`PropertyViolation`] naming the rule,
//!   the event index and both values.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod canonical;
pub mod emit;
#[cfg(feature = "explore")]
pub mod explore;
pub mod fold;
pub mod ingress;
pub mod json;
pub mod kernel;
pub mod limits;
pub mod log;
pub mod replay;
pub mod store;
pub mod structured;
mod violation;

pub use canonical::{canonical_json, reference_canonical, CanonicalInput};
pub use emit::{emit_identity, EmitInput};
pub use fold::{
    fold_roundtrip, fold_snapshot_equivalence, fold_snapshot_equivalence_every_k,
    fold_snapshot_equivalence_every_k_with, fold_snapshot_equivalence_with, fold_total,
    versioned_fold, FoldRoundtripInput, FoldSnapshotInput, FoldTotalInput, VersionedFoldInput,
};
pub use ingress::{ingress_refusal, ingress_refusal_with, IngressInput};
pub use kernel::{KernelUnderTest, Reference, ResumeOutcome};
pub use log::{Grammar, LogSpec};
pub use store::{store_differential, StoreInput};
pub use violation::PropertyViolation;

use arbitrary::{Arbitrary, Unstructured};

/// Every fuzz target; its [`Target::name`] is the file name under `fuzz/fuzz_targets/`
/// and the folder name under `fuzz/corpus/` and `props/regressions/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    /// [`fold_snapshot_equivalence`].
    FoldSnapshotEquivalence,
    /// [`fold_total`].
    FoldTotal,
    /// [`versioned_fold`].
    VersionedFold,
    /// [`ingress_refusal`].
    IngressRefusal,
    /// [`emit_identity`].
    EmitIdentity,
    /// [`canonical_json`].
    CanonicalJson,
    /// [`store_differential`].
    StoreDifferential,
    /// [`fold_roundtrip`].
    FoldRoundtrip,
    /// [`structured::fold_total_structured`].
    FoldTotalStructured,
    /// [`structured::fold_snapshot_structured`].
    FoldSnapshotStructured,
    /// [`structured::versioned_fold_structured`].
    VersionedFoldStructured,
    /// [`structured::fold_roundtrip_structured`].
    FoldRoundtripStructured,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 12] = [
        Target::FoldSnapshotEquivalence,
        Target::FoldTotal,
        Target::VersionedFold,
        Target::IngressRefusal,
        Target::EmitIdentity,
        Target::CanonicalJson,
        Target::StoreDifferential,
        Target::FoldRoundtrip,
        Target::FoldTotalStructured,
        Target::FoldSnapshotStructured,
        Target::VersionedFoldStructured,
        Target::FoldRoundtripStructured,
    ];

    /// The target's snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Target::FoldSnapshotEquivalence => "fold_snapshot_equivalence",
            Target::FoldTotal => "fold_total",
            Target::VersionedFold => "versioned_fold",
            Target::IngressRefusal => "ingress_refusal",
            Target::EmitIdentity => "emit_identity",
            Target::CanonicalJson => "canonical_json",
            Target::StoreDifferential => "store_differential",
            Target::FoldRoundtrip => "fold_roundtrip",
            Target::FoldTotalStructured => "fold_total_structured",
            Target::FoldSnapshotStructured => "fold_snapshot_structured",
            Target::VersionedFoldStructured => "versioned_fold_structured",
            Target::FoldRoundtripStructured => "fold_roundtrip_structured",
        }
    }

    /// The target called `name`, if any.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// Decodes `bytes` as libfuzzer-sys does for a typed `fuzz_target!`
/// (`arbitrary_take_rest`). Bytes that do not decode are `None`: libFuzzer skips them.
pub fn decode<'a, T: Arbitrary<'a>>(bytes: &'a [u8]) -> Option<T> {
    T::arbitrary_take_rest(Unstructured::new(bytes)).ok()
}

/// Runs one target's property on raw fuzzer bytes: the function the corpus and
/// regression replay uses. Undecodable bytes pass, as they do under libFuzzer.
pub fn run_target(target: Target, bytes: &[u8]) -> Result<(), PropertyViolation> {
    fn go<'a, T: Arbitrary<'a>>(
        bytes: &'a [u8],
        prop: impl FnOnce(&T) -> Result<(), PropertyViolation>,
    ) -> Result<(), PropertyViolation> {
        match decode::<T>(bytes) {
            Some(input) => prop(&input),
            None => Ok(()),
        }
    }
    match target {
        Target::FoldSnapshotEquivalence => go(bytes, fold_snapshot_equivalence),
        Target::FoldTotal => go(bytes, fold_total),
        Target::VersionedFold => go(bytes, versioned_fold),
        Target::IngressRefusal => go(bytes, ingress_refusal),
        Target::EmitIdentity => go(bytes, emit_identity),
        Target::CanonicalJson => go(bytes, canonical_json),
        Target::StoreDifferential => go(bytes, store_differential),
        Target::FoldRoundtrip => go(bytes, fold_roundtrip),
        Target::FoldTotalStructured => go(bytes, structured::fold_total_structured),
        Target::FoldSnapshotStructured => go(bytes, structured::fold_snapshot_structured),
        Target::VersionedFoldStructured => go(bytes, structured::versioned_fold_structured),
        Target::FoldRoundtripStructured => go(bytes, structured::fold_roundtrip_structured),
    }
}
