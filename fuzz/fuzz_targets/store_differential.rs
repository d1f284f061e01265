//! Fuzz target `store_differential`: the body is `loom_props::store_differential`; a violation panics with
//! the rule id, the index and both values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::{store_differential, StoreInput};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fuzz_target!(|input: StoreInput| {
    if let Err(violation) = store_differential(&input) {
        panic!("{violation}");
    }
});
