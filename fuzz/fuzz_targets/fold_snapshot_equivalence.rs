//! Fuzz target `fold_snapshot_equivalence`: the body is `loom_props::fold_snapshot_equivalence`; a violation panics with
//! the rule id, the index and both values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::{fold_snapshot_equivalence, FoldSnapshotInput};

fuzz_target!(|input: FoldSnapshotInput| {
    if let Err(violation) = fold_snapshot_equivalence(&input) {
        panic!("{violation}");
    }
});
