//! Fuzz target `ingress_refusal`: the body is `loom_props::ingress_refusal`; a violation panics with
//! the rule id, the index and both values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::{ingress_refusal, IngressInput};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fuzz_target!(|input: IngressInput| {
    if let Err(violation) = ingress_refusal(&input) {
        panic!("{violation}");
    }
});
