//! Fuzz target `canonical_json`: the body is `loom_props::canonical_json`; a violation panics with
//! the rule id, the index and both values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::{canonical_json, CanonicalInput};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fuzz_target!(|input: CanonicalInput| {
    if let Err(violation) = canonical_json(&input) {
        panic!("{violation}");
    }
});
