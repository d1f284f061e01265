//! Fuzz target `versioned_fold`: the body is `loom_props::versioned_fold`; a violation panics with
//! the rule id, the index and both values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::{versioned_fold, VersionedFoldInput};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fuzz_target!(|input: VersionedFoldInput| {
    if let Err(violation) = versioned_fold(&input) {
        panic!("{violation}");
    }
});
