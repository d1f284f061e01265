//! # loom-vectors: language-neutral kernel vectors and the stdio kernel protocol
//!
//! This crate owns the portable half of Loom Conformance: JSON files that any Loom
//! kernel, in any language, runs to prove its fold, snapshot normalization, digests,
//! ingress gate, userspace-emit validation and replay runtime. It holds
//!
//! - the vector format ([`format`](mod@format)), parsed strictly, with the set's version and digest
//!   ([`set`]);
//! - the generator ([`generate`]) that builds every vector from the scenario
//!   definitions in [`scenarios`] by running the reference kernel;
//! - the runner ([`runner`]) that checks a vector against any [`runner::KernelClient`]:
//!   the reference kernel in-process, or a foreign kernel over stdio;
//! - the stdio kernel protocol: the server side ([`serve_reference_kernel`]) and the
//!   client ([`client::KernelProcess`]);
//! - the golden-log corpus ([`golden`]): committed flow scripts and their recorded
//!   logs, replayed through the reference runtime or a foreign kernel;
//! - deliberately wrong kernels ([`wrong::Bug`]) that prove the vectors catch bugs;
//! - the differential campaign ([`fuzz`]) behind `loom vectors fuzz`: the property
//!   library's generators drive a kernel under test against the reference, and each
//!   shrunk divergence becomes a vector file.
//!
//! Key design decision: every request the runner makes goes through one JSON method
//! table ([`reference::ReferenceKernel::handle`]), in-process and over the protocol
//! alike, so "the reference kernel in-process" and "the reference kernel behind
//! `loom kernel-adapter`" answer byte-identically, and the generator computes every
//! expected value through that same table. No expected value is typed by hand: a
//! kernel change shows as a diff of the committed files (`vectors/cases/**`), which a
//! test regenerates in memory and compares byte for byte.
//!
//! Architecture invariant: this crate depends on the kernel, the report model, the
//! process runner and the property library's generators (for the campaign); it uses
//! the in-memory stores only to run runtime scenarios, and knows nothing of the kits or
//! the simulator.
#![deny(missing_docs)]

pub mod basis;
pub mod client;
pub mod expected_failures;
pub mod format;
pub mod fuzz;
pub mod generate;
pub mod golden;
pub mod limits;
pub mod protocol;
pub mod readings;
pub mod reference;
pub mod replay;
pub mod runner;
pub mod scenarios;
pub mod scrub;
pub mod set;
pub mod wrong;

pub use client::{KernelProcess, KernelProcessConfig};
pub use format::{Kind, Vector, VectorError};
pub use protocol::{serve, serve_reference_kernel, Answer, PROTOCOL_VERSION};
pub use reference::ReferenceKernel;
pub use runner::{run_set, run_vector, InProcessKernel, KernelClient};
pub use set::{load_set, VectorSet, VersionFile};
