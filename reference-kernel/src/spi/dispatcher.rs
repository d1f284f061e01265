//! The ExecutionDispatcher SPI: placing executions on workers (§6, §7; PLACE-02,
//! PLACE-03, PLACE-05, PLACE-07).
//!
//! The spec names the seam, its version constant and what a package carries; the
//! queue and lease mechanics here are reference-defined. Model: a FIFO queue of
//! [`ExecutionPackage`]s; a worker of a registered target claims the oldest package it
//! may run and gets a [`Lease`] with a deadline; it completes or releases the lease, or
//! the lease expires and the package goes back to the queue. "Resume is migration": any
//! worker rebuilds state from the shared stores, and the EventStore fence (not the
//! lease) is what shuts out a zombie's writes (PLACE-05). The dispatcher never reads a
//! clock: every time-dependent call takes `now_ms`.

use std::future::Future;

use serde::{Deserialize, Serialize};

use super::error::StoreError;

/// What is dispatched: coordinates only, never code (PLACE-03). A worker loads the
/// flow by `flow_id` and the state from the stores.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionPackage {
    /// The execution to run or resume.
    pub execution_id: String,
    /// The flow it runs.
    pub flow_id: String,
    /// An optional hint for the worker (e.g. the gate being answered). Never state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_hint: Option<String>,
    /// A pinned compute target; must be registered (PLACE-07). `None` = any target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_target: Option<String>,
}

/// Identifies one dispatch. Strictly increasing per dispatcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DispatchId(pub u64);

/// A worker's claim on a dispatched package, valid until `deadline_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lease {
    /// Unique per claim, strictly increasing per dispatcher; a re-claim of the same
    /// dispatch gets a new id, which is how a stale lease is recognised.
    pub lease_id: u64,
    /// The dispatch this lease is on.
    pub dispatch_id: DispatchId,
    /// The package.
    pub package: ExecutionPackage,
    /// The target the worker claimed for.
    pub target: String,
    /// The claiming worker.
    pub worker_id: String,
    /// The lease is live while `now_ms < deadline_ms`.
    pub deadline_ms: i64,
}

/// Places executions on workers (reference-defined mechanics, PLACE-02).
///
/// Invariant: an execution is queued or leased at most once at a time, so there is at
/// most one live lease per execution (a simulator invariant).
pub trait ExecutionDispatcher: Send + Sync {
    /// The SPI version (`DISPATCHER_SPI_VERSION`).
    fn spi_version(&self) -> String;

    /// Registers a compute target; idempotent. Returns `true` when it is new. The
    /// name must be non-empty and bounded.
    fn register_target(&self, name: &str) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The registered targets, ascending.
    fn targets(&self) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Queues `package` at the back. Refused with `NotFound`, nothing queued, when its
    /// `compute_target` is not registered (PLACE-07); with `AlreadyExists` when the
    /// execution is already queued or leased; with `InvalidArgument` when an id is
    /// empty or too long or the queue holds `DISPATCH_QUEUE_LEN_MAX` packages.
    fn dispatch(
        &self,
        package: ExecutionPackage,
    ) -> impl Future<Output = Result<DispatchId, StoreError>> + Send;

    /// First re-queues every lease with `deadline_ms <= now_ms` (at the back), then
    /// leases the oldest queued package that is unpinned or pinned to `target`, to
    /// `worker_id`, until `now_ms + lease duration`. `Ok(None)` when nothing is
    /// runnable. `NotFound` when `target` is not registered.
    fn claim(
        &self,
        target: &str,
        worker_id: &str,
        now_ms: i64,
    ) -> impl Future<Output = Result<Option<Lease>, StoreError>> + Send;

    /// Extends a live lease to `now_ms + lease duration` (a heartbeat). `LeaseLost` if
    /// the lease is no longer the dispatch's live lease or its deadline has passed
    /// (the package is then re-queued).
    fn renew(
        &self,
        lease: &Lease,
        now_ms: i64,
    ) -> impl Future<Output = Result<Lease, StoreError>> + Send;

    /// Finishes the dispatch: the package leaves the dispatcher. `LeaseLost` if the
    /// lease is no longer live (expired and processed, re-claimed, or already ended).
    fn complete(&self, lease: &Lease) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Gives the package back: it is re-queued at the back. `LeaseLost` as for
    /// `complete`.
    fn release(&self, lease: &Lease) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Re-queues (at the back, in dispatch order) every lease whose deadline is
    /// `<= now_ms` and returns their dispatch ids, ascending. `claim` does this itself.
    fn expire_leases(
        &self,
        now_ms: i64,
    ) -> impl Future<Output = Result<Vec<DispatchId>, StoreError>> + Send;
}
