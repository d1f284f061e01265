//! The simulated hosts besides the store: the stateless workers, the client, the
//! dispatcher's sweeper, and the runtime each of them runs (the reference runtime over a
//! [`crate::store_client::StoreClient`], with the effect ledger's tap).

mod client;
mod runtime;
mod sweeper;
mod worker;

pub use client::client;
pub use sweeper::sweeper;
pub use worker::{worker, WorkerFaults};

/// What a host's software returns when it stops: an error stops the simulation.
pub type HostResult = Result<(), Box<dyn std::error::Error>>;

/// How often an idle worker polls the dispatcher, in simulated milliseconds.
pub const WORKER_POLL_MS: u64 = 40;
/// How often the client looks for parked executions to answer.
pub const CLIENT_POLL_MS: u64 = 60;
/// How often the dispatcher re-queues executions that are neither parked nor ended.
pub const SWEEP_MS: u64 = 400;
/// How many times a zombie looks for a newer fence before it gives up.
pub const ZOMBIE_PROBES_MAX: u32 = 20;
