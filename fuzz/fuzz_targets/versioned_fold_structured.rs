//! Fuzz target `versioned_fold_structured`: the body is `loom_props::structured::versioned_fold_structured`, on a compact log
//! model built straight into envelopes (no JSON text); a violation panics with the rule
//! id, the index and both values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::structured::{versioned_fold_structured, VersionedModel};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fuzz_target!(|input: VersionedModel| {
    if let Err(violation) = versioned_fold_structured(&input) {
        panic!("{violation}");
    }
});
