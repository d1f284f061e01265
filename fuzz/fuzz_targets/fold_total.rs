//! Fuzz target `fold_total`: the body is `loom_props::fold_total`; a violation panics with
//! the rule id, the index and both values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::{fold_total, FoldTotalInput};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fuzz_target!(|input: FoldTotalInput| {
    if let Err(violation) = fold_total(&input) {
        panic!("{violation}");
    }
});
