//! Fuzz target `fold_snapshot_equivalence`: the body is `loom_props::fold_snapshot_equivalence`; a violation panics with
//! the rule id, the index and both values. `LOOM_FUZZ_PLANTED=fold-38` runs it against
//! a planted kernel instead (`loom_props::kernel::planted::from_env`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::kernel::planted;
use loom_props::{fold_snapshot_equivalence_with, FoldSnapshotInput, KernelUnderTest};
use std::sync::OnceLock;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

static KERNEL: OnceLock<&'static (dyn KernelUnderTest + Sync)> = OnceLock::new();

fuzz_target!(|input: FoldSnapshotInput| {
    let kernel = *KERNEL.get_or_init(planted::from_env);
    if let Err(violation) = fold_snapshot_equivalence_with(kernel, &input) {
        panic!("{violation}");
    }
});
