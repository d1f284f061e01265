//! Fuzz target `ingress_refusal`: the body is `loom_props::ingress_refusal`; a violation panics with
//! the rule id, the index and both values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_props::{ingress_refusal, IngressInput};

fuzz_target!(|input: IngressInput| {
    if let Err(violation) = ingress_refusal(&input) {
        panic!("{violation}");
    }
});
