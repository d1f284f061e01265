//! Every fuzz property for a bounded number of random inputs on stable (proptest
//! feeds random bytes through the same `arbitrary` decoding the fuzz targets use).
//! Case counts keep the whole file under a few seconds per property in debug.

use loom_props::replay::known_kernel_bug;
use loom_props::structured::{fold_snapshot_structured_every_k, SnapshotModel};
use loom_props::{
    decode, fold_snapshot_equivalence_every_k, run_target, FoldSnapshotInput, PropertyViolation,
    Target,
};
use proptest::prelude::*;

fn check(target: Target, bytes: &[u8]) -> Result<(), TestCaseError> {
    match run_target(target, bytes) {
        Ok(()) => Ok(()),
        // A known kernel bug, kept as a named regression (props/src/replay.rs).
        Err(v) if known_kernel_bug(&v).is_some() => Ok(()),
        Err(v) => Err(TestCaseError::fail(v.to_string())),
    }
}

/// The every-k form of `fold_snapshot_equivalence` (the fuzz target restores at one to
/// three k chosen by the input; here every k of each log is checked).
fn check_every_k(bytes: &[u8]) -> Result<(), TestCaseError> {
    let verdict: Result<(), PropertyViolation> = match decode::<FoldSnapshotInput>(bytes) {
        Some(input) => fold_snapshot_equivalence_every_k(&input),
        None => Ok(()),
    };
    match verdict {
        Ok(()) => Ok(()),
        Err(v) if known_kernel_bug(&v).is_some() => Ok(()),
        Err(v) => Err(TestCaseError::fail(v.to_string())),
    }
}

/// The every-k form of `fold_snapshot_structured`.
fn check_structured_every_k(bytes: &[u8]) -> Result<(), TestCaseError> {
    let verdict = match decode::<SnapshotModel>(bytes) {
        Some(input) => fold_snapshot_structured_every_k(&input),
        None => Ok(()),
    };
    match verdict {
        Ok(()) => Ok(()),
        Err(v) if known_kernel_bug(&v).is_some() => Ok(()),
        Err(v) => Err(TestCaseError::fail(v.to_string())),
    }
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        // PROPTEST_CASES raises every count for a longer local sweep.
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn snap_01_fold_38_every_k_snapshot_plus_tail_equals_full_fold(b in bytes(2048)) {
        check_every_k(&b)?;
    }

    #[test]
    fn snap_01_chosen_k_as_the_fuzz_target_runs_it(b in bytes(2048)) {
        check(Target::FoldSnapshotEquivalence, &b)?;
    }

    #[test]
    fn fold_05_fold_total_on_any_bytes(b in bytes(2048)) {
        check(Target::FoldTotal, &b)?;
    }

    #[test]
    fn fold_04_encoder_round_trip_and_unknown_kinds_are_inert(b in bytes(2048)) {
        check(Target::FoldRoundtrip, &b)?;
    }

    #[test]
    fn snap_03_versioned_fold_of_older_snapshots(b in bytes(2048)) {
        check(Target::VersionedFold, &b)?;
    }

    // The structure-aware targets (loom_props::structured): the same property bodies on
    // the compact log model; inputs up to its longest meaningful length and a little past.

    #[test]
    fn fold_05_fold_total_structured_folds_any_model_log(b in bytes(128)) {
        check(Target::FoldTotalStructured, &b)?;
    }

    #[test]
    fn snap_01_fold_06_07_38_fold_snapshot_structured_chosen_k(b in bytes(128)) {
        check(Target::FoldSnapshotStructured, &b)?;
    }

    #[test]
    fn snap_01_fold_38_fold_snapshot_structured_every_k(b in bytes(128)) {
        check_structured_every_k(&b)?;
    }

    #[test]
    fn snap_03_06_07_10_fold_47_versioned_fold_structured(b in bytes(128)) {
        check(Target::VersionedFoldStructured, &b)?;
    }

    #[test]
    fn fold_04_fold_roundtrip_structured_unknown_kinds_are_inert(b in bytes(128)) {
        check(Target::FoldRoundtripStructured, &b)?;
    }

    #[test]
    fn ingress_15_hostile_resumes_refuse_with_nothing_appended(b in bytes(1024)) {
        check(Target::IngressRefusal, &b)?;
    }

    #[test]
    fn emit_04_canonical_json_matches_the_reference(b in bytes(1024)) {
        check(Target::CanonicalJson, &b)?;
    }
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn emit_06_crash_and_rerun_never_duplicates_a_stamped_emit(b in bytes(256)) {
        check(Target::EmitIdentity, &b)?;
    }

    #[test]
    fn spi_23_store_differential_memory_vs_sqlite(b in bytes(512)) {
        check(Target::StoreDifferential, &b)?;
    }
}
