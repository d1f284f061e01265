//! The stdio store protocol under its old name.
//!
//! The client (`StdioStore`, `StdioConfig`, the time limits, the wire forms, base64,
//! `encode_error`, the fleet schedule) lives in the crate `loom-store-client`, which
//! the simulator, the campaigns and the harness use directly. The runner's hooks over it
//! (`StdioHooks`, `FleetHooks`, `apply_blames`, `apply_shutdown`) live in
//! [`crate::adapter`]. This module re-exports both, so that code and docs naming
//! `loom_conformance::stdio::StdioStore` or `loom_conformance::stdio::StdioHooks` (a
//! store author's tests, the protocol docs) keep working; it defines nothing of its own.

pub use crate::adapter::{
    apply_blames, apply_shutdown, case_tag, fault_status, status_of, FleetHooks, StdioHooks,
    ADAPTER_SUITE,
};
pub use loom_store_client::*;
