//! Fuzz target `emit_identity`: the body is `loom_props::emit_identity`; a violation panics with
//! the rule id, the index and both values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::{emit_identity, EmitInput};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fuzz_target!(|input: EmitInput| {
    if let Err(violation) = emit_identity(&input) {
        panic!("{violation}");
    }
});
