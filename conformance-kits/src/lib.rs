//! # loom-conformance: the conformance kits for the Loom SPIs
//!
//! This crate owns what a store author runs to learn, rule by rule, where a backend
//! breaks the SPI contract (§7; rules SPI-01..SPI-23, PLACE-02/03/05/07):
//!
//! - [`kits`]: one kit per SPI (EventStore, SnapshotStore, ArchiveStore, the
//!   LogLifecycle over all three, BranchRegistry, ExecutionDispatcher, TimerStore, and
//!   the plugin tier), each a table of cases with stable ids and the rule ids they prove;
//! - capability probes both ways (a claimed method must answer, an unclaimed one must
//!   say `unsupported`, a claimed version must carry its required methods);
//! - [`run_kit`], which turns every case into a `loom_report::CaseResult`;
//! - [`lifecycle::LogLifecycle`], the kernel-side compaction and snapshot pruning;
//! - [`adapter`], the runner's hooks over the stdio store protocol's client
//!   (`loom-store-client`; [`stdio`] re-exports both under the old name), so a store
//!   written in any language runs the same kits;
//! - one macro per kit (`event_store_conformance!` and friends) that makes each case a
//!   test in the store author's crate ([`harness`]: a case the store cannot run is
//!   reported as skipped, not passed).
//!
//! Key design decision: the kits know no concrete store. A case is an `async fn` over
//! `&impl Trait` plus a [`Ctx`] that namespaces every execution id it creates, so cases
//! can share one store (even a persistent one) without seeing each other, and a store
//! is judged only by what the traits let anyone observe. The same case code runs
//! in-process, through the stdio protocol and under the test macros.
//!
//! Architecture invariant: nothing here depends on `loom-stores` (only its tests and
//! benches do), and nothing here reads kernel internals beyond the SPI traits, the
//! envelope and the version constants.
#![deny(missing_docs)]

pub mod adapter;
pub mod case;
pub mod fault;
pub mod history;
pub mod ids;
/// The test harness the kit macros build on (libtest-mimic trials; see [`macros`]): a
/// test that cannot run is an ignored trial, `LOOM_REQUIRE_TOOLS=1` turns a missing tool
/// into a failure.
pub mod harness {
    pub use loom_test_support::*;
}
pub mod kits;
pub mod lifecycle;
#[doc(hidden)]
pub mod macros;
pub mod runner;
pub mod schedule;
pub mod stdio;

pub use adapter::{FleetHooks, StdioHooks};
pub use case::{CaseInfo, Ctx, Failure, Kit, Outcome, Verdict};
pub use lifecycle::{LifecycleError, LogLifecycle};
pub use runner::{run_kit, CaseHooks, NoHooks, RunOptions, KITS_AREA};

/// Runs `future` to completion on a new current-thread tokio runtime (with time and
/// I/O enabled), for callers without a runtime of their own (the CLI, benches).
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a tokio runtime: {e}"))?;
    Ok(runtime.block_on(future))
}
