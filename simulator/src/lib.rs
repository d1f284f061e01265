//! # loom-sim: the deploy simulator
//!
//! This crate runs the reference runtime the way it is deployed: a store server (the
//! in-memory EventStore, TimerStore and dispatcher behind a JSON-lines protocol),
//! N stateless workers and a client, all hosts on a simulated network ([`net`]), under seeded
//! faults. Each seed draws the whole setup ("swarm" testing): worker count, fault
//! rates, message latencies and the scenario mix. A run has two phases: **safety**,
//! with worker crashes (injected crash points and host bounces), partitions between
//! workers and the store, zombie workers and hostile resumes; then **liveness**, with
//! faults off, in which every execution must reach a terminal state.
//!
//! Key design decision: the simulator owns every source of nondeterminism. Randomness
//! comes from one seeded xorshift ([`rng::Rng`]), the network draws its latencies and
//! losses from a stream of the same seed, time is the simulated time of one paused
//! current-thread runtime that jumps to the next timer or packet delivery (the
//! runtime's [`loom_kernel::spi::Clock`] reads it), every host is a task of that one
//! runtime on one thread, and every map is ordered. So a
//! seed replays byte for byte, and the trace (every store operation and its result,
//! as JSON lines) is the evidence for that (CONF-05).
//!
//! Invariants are named by rule id: SPI-23 (gapless sequences), PLACE-05 (a fenced
//! append writes nothing), REPLAY-01 (a completed effect never re-runs), EMIT-01 (a
//! stamped flow emit appears at most once per digest), SNAP-01 (snapshot plus tail
//! equals the full fold at every k), INGRESS-15 (a refused resume appends nothing),
//! PLACE-04 (every execution finishes, with the crash-free run's result) and REPLAY-10
//! (a timed park is woken). See `docs/simulator.md`.
//!
//! Architecture invariant: the simulator depends on the kernel and the stores, never
//! the reverse, and simulated code never reads the system clock.
//!
//! The modules, from the bottom up (each uses only those above it; no two use each
//! other):
//! [`rng`], [`net`] (the simulated network and its clock) and `clock` (the hosts'
//! clocks), `wire` (the store protocol and
//! the store host's names), [`store`] (the store under test: memory inline, or a real
//! store with a connection per host), `config` (settings and planted bugs), `workload`
//! (generated flows, effects, answers, crash points), `history` (a real store's answers
//! held against what it had acknowledged), `linear` (each execution's stream history,
//! judged at the end by linearizability with the concurrency kit's WGL checker), `world` (what the hosts share: stores,
//! bookkeeping, violations), `kills` (adapter kills and backend restarts), then two
//! siblings that share only `wire`: `server` (the store host) and `store_client` (a
//! host's client of it), `hosts` (workers, client, sweeper, over `store_client`),
//! `check` (the final invariants), `schedule` (drawing, writing and reading a seed's
//! setup and fault schedule), `stats` (coverage counters and the evidence that credits
//! a rule), `outcome` (what a seed produced, its files and digest), `run` (one run:
//! the hosts as tasks, the fault schedule and the final checks), `shrink` (cutting a failing
//! schedule) and `sweep` (many runs, on threads).
#![deny(missing_docs)]

mod check;
mod clock;
mod config;
mod history;
mod hosts;
mod kills;
mod linear;
pub mod net;
mod outcome;
pub mod rng;
mod run;
mod schedule;
mod server;
mod shrink;
mod stats;
pub mod store;
mod store_client;
mod sweep;
mod wire;
mod workload;
mod world;

pub use check::RULES;
pub use config::{PlantedBug, SimConfig, Workload, HEAVY_LIVENESS_MS};
pub use outcome::{determinism_result, trace_digest, write_artifacts, SimOutcome};
pub use run::{replay, run_seed, STORE_DOWN_MS};
pub use schedule::{
    scenario_from_text, CLOCK_SKEW_MS_MAX, CLOCK_SKEW_PER_MILLE, EXECUTIONS_MAX, EXECUTIONS_MIN,
    FAULT_ACTIONS_MAX, FAULT_KINDS, FLEET_MIXED_PER_MILLE, FLEET_OLDEST_MINOR,
    HEAVY_CRASH_PER_MILLE_MIN, HEAVY_EXECUTIONS_MAX, HEAVY_EXECUTIONS_MIN, HEAVY_START_GAP_MS_MAX,
    HEAVY_WORKERS_MAX, HEAVY_WORKERS_MIN, HEAVY_ZOMBIE_PER_MILLE_MIN, HOST_PARTITIONS_MAX,
    LOSSY_LINK_PER_MILLE, LOSS_PER_MILLE_MAX, PARTITION_MS_MAX, ROLLBACK_PER_MILLE, SPIKES_MAX,
    SPIKE_LATENCY_MS_MAX, START_GAP_MS_MAX, SWARM_OFF_PER_MILLE, WORKERS_MAX, WORKERS_MIN,
};
pub use shrink::{shrink, shrink_with, SHRINK_RUNS_MAX};
pub use stats::{evidence, SimStats};
pub use store::StoreSpec;
pub use sweep::{run_seeds, run_seeds_until, run_seeds_with, sim_results, sweep, JOBS_MAX};
pub use workload::{
    CONTINUATIONS_PER_CHAIN_MAX, CRASH_POINTS, RETRY_FAILURES_MAX, SNAPSHOT_EVERY_EVENTS,
};
pub use world::{ResumeFaults, Violation};
