//! Fuzz target `fold_roundtrip`: the body is `loom_props::fold_roundtrip`; a violation panics with
//! the rule id, the index and both values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::{fold_roundtrip, FoldRoundtripInput};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fuzz_target!(|input: FoldRoundtripInput| {
    if let Err(violation) = fold_roundtrip(&input) {
        panic!("{violation}");
    }
});
