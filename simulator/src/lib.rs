//! # loom-sim: the deploy simulator
//!
//! This crate runs the reference runtime the way it is deployed: a store server (the
//! in-memory EventStore, TimerStore and dispatcher behind a JSON-lines protocol),
//! N stateless workers and a client, all hosts on a [turmoil] network, under seeded
//! faults. Each seed draws the whole setup ("swarm" testing): worker count, fault
//! rates, message latencies and the scenario mix. A run has two phases: **safety**,
//! with worker crashes (injected crash points and turmoil bounces), partitions between
//! workers and the store, zombie workers and hostile resumes; then **liveness**, with
//! faults off, in which every execution must reach a terminal state.
//!
//! Key design decision: the simulator owns every source of nondeterminism. Randomness
//! comes from one seeded xorshift ([`rng::Rng`]), turmoil is seeded with the same seed,
//! time is turmoil's simulated time (the runtime's [`loom_kernel::spi::Clock`] reads
//! it), hosts are scheduled by turmoil on one thread, and every map is ordered. So a
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
#![deny(missing_docs)]

mod check;
mod hosts;
mod net;
pub mod rng;
pub mod store;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use loom_kernel::runtime::block_on;
use loom_kernel::spi::{EventStore, ExecutionDispatcher};
use loom_report::CaseResult;
use loom_stores::memory::{MemoryDispatcher, MemoryTimerStore};
use serde_json::{json, Value};

pub use check::RULES;
use hosts::{Scenario, WorkerFaults};
pub use hosts::{CONTINUATIONS_PER_CHAIN_MAX, RETRY_FAILURES_MAX};
pub use hosts::{CRASH_POINTS, SNAPSHOT_EVERY_EVENTS};
pub use net::ResumeFaults;
use net::{Book, World, STORE_HOST, TARGET};
use rng::Rng;
use store::SimStore;
pub use store::StoreSpec;

/// Fewest workers a seed draws.
pub const WORKERS_MIN: u64 = 2;
/// Most workers a seed draws.
pub const WORKERS_MAX: u64 = 5;
/// Fewest executions a seed starts.
pub const EXECUTIONS_MIN: u64 = 3;
/// Most executions a seed starts.
pub const EXECUTIONS_MAX: u64 = 6;
/// Most fault actions (bounces, partitions) a seed schedules.
pub const FAULT_ACTIONS_MAX: u64 = 12;
/// Longest partition, in simulated milliseconds.
pub const PARTITION_MS_MAX: u64 = 3_000;
/// Turmoil's tick, in simulated milliseconds.
pub const TICK_MS: u64 = 2;
/// How long a store restart keeps the store unreachable, simulated milliseconds.
pub const STORE_DOWN_MS: u64 = 150;
/// Largest clock offset a host draws, ahead of or behind store time, in milliseconds.
/// Below the planted early timer store's 5 s (`EARLY_TIMER_MS`), so a timer store firing 5 s early is still early on
/// every host's clock.
pub const CLOCK_SKEW_MS_MAX: u64 = 1_000;
/// Chance (per mille) that a worker or the client runs on a skewed clock.
pub const CLOCK_SKEW_PER_MILLE: u64 = 500;
/// Highest message-loss rate a link between the store and another host draws, per
/// mille of messages (turmoil's `fail_rate`: a lost message drops what is in flight on
/// the link, so the call it belonged to times out).
pub const LOSS_PER_MILLE_MAX: u64 = 20;
/// Chance (per mille) that a link between the store and another host is lossy.
pub const LOSSY_LINK_PER_MILLE: u64 = 500;
/// Most latency spikes a seed schedules.
pub const SPIKES_MAX: u64 = 4;
/// Highest latency a spike sets on its link, simulated milliseconds per message.
pub const SPIKE_LATENCY_MS_MAX: u64 = 700;
/// Most extra partitions of the client or the dispatcher's sweeper from the store.
pub const HOST_PARTITIONS_MAX: u64 = 2;
/// Chance (per mille) that swarm testing switches one fault kind off for a seed.
pub const SWARM_OFF_PER_MILLE: u64 = 250;
/// The fault kinds swarm testing switches on and off, as schedule files name them.
pub const FAULT_KINDS: [&str; 11] = [
    "crash",
    "zombie",
    "hostile",
    "bounce",
    "partition",
    "cut",
    "restart",
    "loss",
    "spike",
    "skew",
    "fleet",
];
/// Chance (per mille) that a seed's workers run a rolling upgrade across schema minors.
pub const FLEET_MIXED_PER_MILLE: u64 = 500;
/// The oldest schema minor a mixed fleet runs: 1.23, the oldest the spec's mixed-fleet
/// notes speak of (SNAP-07's 1.23/1.24 fleet, SNAP-11's pre-1.26 node). Older minors
/// fold a caught step failure as a failed execution (before 1.21), which is a real
/// incompatibility, not a documented exception.
pub const FLEET_OLDEST_MINOR: u32 = 23;
/// Chance (per mille) that a worker of an upgraded fleet is rolled back afterwards.
pub const ROLLBACK_PER_MILLE: u64 = 300;
/// Most threads a sweep runs seeds on.
pub const JOBS_MAX: usize = 64;
/// Slack between the client's deadline and turmoil's hard simulation limit.
const SIM_SLACK_MS: u64 = 5_000;

/// A bug planted on purpose, to prove the simulator catches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlantedBug {
    /// The store server forwards the current fence token instead of the one the caller
    /// presented, so a zombie's append lands (PLACE-05 must catch it).
    StoreIgnoresFence,
    /// The store answers a read whose last event is `STEP_COMPLETED` without that
    /// event (a stale replica) and appends a stale writer's events at the real head
    /// instead of refusing them, so a recovering run re-invokes a completed step's
    /// effect (REPLAY-01 must catch it).
    StaleReadsBlindAppends,
    /// The store serves a damaged copy of a recorded step output on read (the stored
    /// log stays right): replay serves a wrong value (PLACE-04 must catch it).
    CorruptStepOutputOnRead,
    /// The store stores a resume's answer wrongly (`k` becomes `k + 1`): the flow
    /// branches on the wrong answer (PLACE-04 must catch it).
    WrongGateAnswerStored,
    /// The timer store returns timers up to 5 s before they are due (REPLAY-10 must
    /// catch the early `TIMER_FIRED`).
    TimerFiresEarly,
    /// The dispatcher hands a package whose lease is live to a second worker
    /// (PLACE-02: one live lease per execution).
    SecondLiveLease,
    /// The runtime re-invokes a completed step's effect after recovering an
    /// execution (REPLAY-01 must catch it through the effect ledger).
    RuntimeRerunsCompletedEffect,
    /// The store acknowledges an append before it is durable and loses it on a
    /// restart (SPI-23: an acknowledged append survives).
    AckThenLoseOnRestart,
    /// The store checks the fence, waits, then writes without checking again, so a
    /// fence taken in between does not stop the old holder (PLACE-05).
    NonAtomicFenceCheck,
    /// Ingress admits every resume and appends it as it came, so a duplicate, reordered
    /// or late resume lands (INGRESS-03); each is written as an ingress vector.
    IngressAdmitsEveryResume,
    /// The kernel under test restores a snapshot by folding the tail from the
    /// snapshot's own event (folded twice), like the vectors' `restore-tail-off-by-one`:
    /// SNAP-01 fails in the final-log check, and the failing log is written as a fold
    /// vector.
    RestoreTailOffByOne,
    /// After recovering an execution, the runtime counts a retried step's attempts
    /// from 1 again and re-invokes attempt 1 (REPLAY-09: an attempt number of its own).
    RuntimeRestartsAttemptCount,
    /// After recovering an execution, the runtime re-invokes a step whose typed failure
    /// is recorded instead of substituting it (TYPED-09).
    RuntimeRerunsTypedFailure,
    /// The snapshot store drops the writer's schema version and labels every snapshot
    /// current, so an old node's stray settled-frame `input` (SNAP-11) is never
    /// normalized away (SNAP-01 over stored snapshots must catch it).
    SnapshotLabelledCurrent,
}

impl PlantedBug {
    /// Every planted bug.
    pub const ALL: [PlantedBug; 14] = [
        PlantedBug::StoreIgnoresFence,
        PlantedBug::StaleReadsBlindAppends,
        PlantedBug::CorruptStepOutputOnRead,
        PlantedBug::WrongGateAnswerStored,
        PlantedBug::TimerFiresEarly,
        PlantedBug::SecondLiveLease,
        PlantedBug::RuntimeRerunsCompletedEffect,
        PlantedBug::AckThenLoseOnRestart,
        PlantedBug::NonAtomicFenceCheck,
        PlantedBug::RuntimeRestartsAttemptCount,
        PlantedBug::RuntimeRerunsTypedFailure,
        PlantedBug::SnapshotLabelledCurrent,
        PlantedBug::RestoreTailOffByOne,
        PlantedBug::IngressAdmitsEveryResume,
    ];

    /// The rule whose invariant must catch this bug.
    pub fn rule(self) -> &'static str {
        match self {
            PlantedBug::StoreIgnoresFence | PlantedBug::NonAtomicFenceCheck => "PLACE-05",
            PlantedBug::StaleReadsBlindAppends | PlantedBug::RuntimeRerunsCompletedEffect => {
                "REPLAY-01"
            }
            PlantedBug::CorruptStepOutputOnRead | PlantedBug::WrongGateAnswerStored => "PLACE-04",
            PlantedBug::TimerFiresEarly => "REPLAY-10",
            PlantedBug::SecondLiveLease => "PLACE-02",
            PlantedBug::AckThenLoseOnRestart => "SPI-23",
            PlantedBug::RuntimeRestartsAttemptCount => "REPLAY-09",
            PlantedBug::RuntimeRerunsTypedFailure => "TYPED-09",
            PlantedBug::SnapshotLabelledCurrent | PlantedBug::RestoreTailOffByOne => "SNAP-01",
            PlantedBug::IngressAdmitsEveryResume => "INGRESS-03",
        }
    }
}

/// Simulator settings. Rates are drawn per seed up to these caps.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Length of the safety phase (faults on), simulated milliseconds.
    pub safety_ms: u64,
    /// Length of the liveness phase (faults off), simulated milliseconds.
    pub liveness_ms: u64,
    /// Lease duration of the dispatcher, simulated milliseconds.
    pub lease_ms: u64,
    /// Cap on the per-run injected-crash chance, per mille.
    pub crash_per_mille_max: u64,
    /// Cap on the chance that a crashed run becomes a zombie, per mille.
    pub zombie_per_mille_max: u64,
    /// Cap on the chance of a hostile resume before each answer, per mille.
    pub hostile_per_mille_max: u64,
    /// Cap on the chance of each client resume fault (early, reordered, duplicate,
    /// concurrent, to an ended execution) at each opportunity, per mille.
    pub resume_fault_per_mille_max: u64,
    /// A bug to plant (tests only).
    pub bug: Option<PlantedBug>,
    /// A named workload: flow scripts the executions run instead of generated ones.
    pub flows: Option<Vec<Value>>,
    /// A latency spike on every worker append that carries a park, simulated ms.
    pub park_delay_ms: u64,
    /// The event store the store host serves.
    pub store: StoreSpec,
    /// Where to write a failing seed's files; `None` prints the seed only.
    pub artifacts_dir: Option<PathBuf>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            safety_ms: 6_000,
            liveness_ms: 20_000,
            lease_ms: 1_000,
            crash_per_mille_max: 500,
            zombie_per_mille_max: 600,
            hostile_per_mille_max: 400,
            resume_fault_per_mille_max: 300,
            bug: None,
            flows: None,
            park_delay_ms: 0,
            store: StoreSpec::Memory,
            artifacts_dir: None,
        }
    }
}

/// An invariant broken in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule id, e.g. `"PLACE-05"`.
    pub rule: String,
    /// What happened.
    pub message: String,
    /// The execution, when there is one.
    pub execution_id: Option<String>,
    /// The event index (sequence) involved, when there is one.
    pub event_index: Option<u64>,
}

/// What one seed produced.
#[derive(Debug, Clone)]
pub struct SimOutcome {
    /// The seed.
    pub seed: u64,
    /// Ordered store operations and results, one JSON object per line.
    pub trace: Vec<String>,
    /// Broken invariants.
    pub violations: Vec<Violation>,
    /// One result per invariant (area `sim`).
    pub results: Vec<CaseResult>,
    /// The drawn setup and fault schedule, as JSON.
    pub schedule: Value,
    /// The final event logs, by execution id.
    pub logs: Vec<(String, Vec<Value>)>,
    /// What the faults did: evidence that a passing seed exercised something.
    pub stats: SimStats,
    /// The effect ledger: every real effect invocation, one JSON object each.
    pub ledger: Vec<Value>,
    /// Vectors (docs/vectors.md) made of the failures that are fold disagreements of
    /// the kernel (SNAP-01 in the final-log check, as `normalize` vectors); written
    /// under `vectors/<kind>/<id>.json`.
    pub vectors: Vec<Value>,
    /// Why the seed could not run (its store did not open), if it could not.
    pub error: Option<String>,
}

/// Counts of what happened in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Zombie appends the store refused as fenced (PLACE-05 evidence).
    pub zombie_refused: u64,
    /// Hostile resumes ingress refused (INGRESS-15 evidence).
    pub hostile_refused: u64,
    /// Runs that stopped at an injected crash point.
    pub injected_crashes: u64,
    /// Those runs by crash point, in [`CRASH_POINTS`] order.
    pub crash_points: [u64; CRASH_POINTS.len()],
    /// Effect invocations in total (the effect ledger's length).
    pub effect_calls: u64,
    /// Invocations of a step that had been invoked before (at least once: a crash
    /// after the effect and before its outcome was appended, a lost append).
    pub effect_reruns: u64,
    /// Store restarts (the store host bounced; committed data survives).
    pub store_restarts: u64,
    /// Partitions applied.
    pub partitions: u64,
    /// Worker bounces applied.
    pub bounces: u64,
    /// `TIMER_FIRED` appends the store took.
    pub timer_fires: u64,
    /// Resumes answered by the client.
    pub answers: u64,
    /// Simulated time the run covered, milliseconds.
    pub simulated_ms: u64,
    /// Expired, uncompleted leases handed to another worker (two recoverers racing).
    pub lease_takeovers: u64,
    /// Due timers a worker was served before their park had landed (the window in
    /// which a fire must keep the timer).
    pub due_before_park: u64,
    /// Executions that completed.
    pub completed: u64,
    /// Hosts whose clock was skewed from store time.
    pub skewed_hosts: u64,
    /// `TIMER_FIRED` appends that landed before `wakeAt` in store time but not on the
    /// firing host's (fast) clock: skew reached the timers.
    pub skew_early_fires: u64,
    /// Latency spikes applied.
    pub spikes: u64,
    /// Links that lost messages in the safety phase.
    pub lossy_links: u64,
    /// Snapshots runtimes saved through the SnapshotStore.
    pub snapshots_saved: u64,
    /// Of those, snapshots written by a worker folding at an older minor.
    pub old_writer_snapshots: u64,
    /// Old writers' snapshots holding `input` on a settled frame (SNAP-11 reached).
    pub stray_inputs: u64,
    /// Snapshots a runtime refused on load (an older node facing a newer snapshot).
    pub snapshot_refusals: u64,
    /// Fold-version switches of workers (rolling upgrade and rollback steps).
    pub fleet_switches: u64,
    /// Store calls that timed out (lost requests or answers, partitions, spikes).
    pub calls_timed_out: u64,
    /// Seeds that ran with each fault kind of [`FAULT_KINDS`] switched off (swarm).
    pub swarm_off: [u64; FAULT_KINDS.len()],
    /// The client's resume faults (early, duplicate, reordered, concurrent, to ended
    /// executions) and how many were refused.
    pub resume_faults: net::ResumeFaults,
    /// `STEP_RETRYING` facts in the final logs (a retry middleware's next attempt).
    pub retries: u64,
    /// Step runs that continued an attempt count after a crash or a fence (a
    /// `STEP_STARTED` with an attempt above 1).
    pub attempts_continued: u64,
    /// Untyped `STEP_FAILED` facts (errors and timeouts) in the final logs.
    pub untyped_failures: u64,
    /// Typed `STEP_FAILED` facts (a channel) in the final logs.
    pub typed_failures: u64,
    /// In-doubt verdicts in the final logs (`__loom_verdict:` decisions).
    pub verdicts: u64,
    /// Executions that continued as new (`EXECUTION_CONTINUED` in the final logs).
    pub continued: u64,
    /// Recoveries of a continued execution that started its missing successor.
    pub successor_starts: u64,
}

#[derive(Debug, Clone)]
enum Fault {
    Bounce(usize),
    /// The host (a worker, the client or the dispatcher's sweeper) and the store cannot
    /// reach each other for a while.
    Partition(String, u64),
    /// Messages from the first host to the second are lost for a while (the other way
    /// still works): a cut from the store to a caller loses acknowledgements of
    /// requests that took effect.
    OneWay(String, String, u64),
    StoreRestart,
    /// Every message between the store and the host takes this many ms, for a while.
    Spike(String, u64, u64),
}

impl Fault {
    /// The swarm kind of the fault, one of [`FAULT_KINDS`].
    fn kind(&self) -> &'static str {
        match self {
            Fault::Bounce(_) => "bounce",
            Fault::Partition(..) => "partition",
            Fault::OneWay(..) => "cut",
            Fault::StoreRestart => "restart",
            Fault::Spike(..) => "spike",
        }
    }
}

#[derive(Debug, Clone)]
struct Setup {
    workers: usize,
    scenarios: Vec<Scenario>,
    faults: WorkerFaults,
    hostile_per_mille: u64,
    resume_fault_per_mille: u64,
    latency_ms: (u64, u64),
    schedule: Vec<(u64, Fault)>,
    /// Clock offset per skewed host (`worker-<i>`, `client`), ms from store time.
    clock_skew_ms: BTreeMap<String, i64>,
    /// Message-loss rate per mille on the link between the store and each lossy host,
    /// in the safety phase.
    loss_per_mille: BTreeMap<String, u64>,
    /// Fault kinds switched off for this seed (swarm testing), in [`FAULT_KINDS`] order.
    swarm_off: Vec<&'static str>,
    /// Each worker's fold version over time: (from store time ms, schema minor),
    /// ascending; a worker not named folds at the current minor throughout.
    fold_versions: BTreeMap<String, Vec<(u64, u32)>>,
}

/// Draws a rolling upgrade (from a stream of its own): with a chance of
/// [`FLEET_MIXED_PER_MILLE`] every worker starts at one older minor (1.23–1.25) and
/// upgrades to the current one at its own time in the safety phase, one after the
/// other; each is then rolled back to the old minor with a chance of
/// [`ROLLBACK_PER_MILLE`], at a time up to the middle of the liveness phase.
fn draw_fleet(seed: u64, config: &SimConfig, workers: usize) -> BTreeMap<String, Vec<(u64, u32)>> {
    let mut rng = Rng::derive(seed, 6);
    let mut out = BTreeMap::new();
    if !rng.chance(FLEET_MIXED_PER_MILLE) {
        return out;
    }
    let current = loom_kernel::FoldVersion::CURRENT.minor();
    let old = rng.range(u64::from(FLEET_OLDEST_MINOR), u64::from(current) - 1) as u32;
    let mut at = 0;
    for w in 0..workers {
        at = rng.range(at, config.safety_ms);
        let mut steps = vec![(0, old), (at, current)];
        if rng.chance(ROLLBACK_PER_MILLE) {
            steps.push((
                rng.range(at + 1, config.safety_ms + config.liveness_ms / 2),
                old,
            ));
        }
        out.insert(worker_name(w), steps);
    }
    out
}

/// The hosts other than the store: each talks to the store only (the dispatcher's
/// queue, the timers and the event log live there), so these are the links that carry
/// messages.
fn peers(workers: usize) -> impl Iterator<Item = String> {
    (0..workers)
        .map(worker_name)
        .chain(["client".to_owned(), "dispatcher".to_owned()])
}

/// Draws the network's faults from a stream of their own (so the rest of a seed's draw
/// is what it was before they existed): a loss rate per link, latency spikes, and
/// partitions of the client and the dispatcher's sweeper from the store.
fn draw_network(
    seed: u64,
    config: &SimConfig,
    workers: usize,
) -> (BTreeMap<String, u64>, Vec<(u64, Fault)>) {
    let mut rng = Rng::derive(seed, 4);
    let mut loss = BTreeMap::new();
    for host in peers(workers) {
        if rng.chance(LOSSY_LINK_PER_MILLE) {
            loss.insert(host, rng.range(1, LOSS_PER_MILLE_MAX));
        }
    }
    let hosts: Vec<String> = peers(workers).collect();
    let pick =
        |rng: &mut Rng, from: &[String]| from[rng.range(0, from.len() as u64 - 1) as usize].clone();
    let mut faults = Vec::new();
    for _ in 0..rng.range(0, SPIKES_MAX) {
        let at = rng.range(0, config.safety_ms.saturating_sub(1));
        let host = pick(&mut rng, &hosts);
        let latency = rng.range(50, SPIKE_LATENCY_MS_MAX);
        faults.push((
            at,
            Fault::Spike(host, latency, rng.range(100, PARTITION_MS_MAX)),
        ));
    }
    let others = ["client".to_owned(), "dispatcher".to_owned()];
    for _ in 0..rng.range(0, HOST_PARTITIONS_MAX) {
        let at = rng.range(0, config.safety_ms.saturating_sub(1));
        let host = pick(&mut rng, &others);
        faults.push((at, Fault::Partition(host, rng.range(100, PARTITION_MS_MAX))));
    }
    (loss, faults)
}

/// Swarm testing: each fault kind is switched off for the seed with a chance of
/// [`SWARM_OFF_PER_MILLE`], from a stream of its own, so rare interleavings of the
/// kinds left on get room.
fn draw_swarm(seed: u64) -> Vec<&'static str> {
    let mut rng = Rng::derive(seed, 5);
    FAULT_KINDS
        .into_iter()
        .filter(|_| rng.chance(SWARM_OFF_PER_MILLE))
        .collect()
}

/// Switches off the kinds in `setup.swarm_off`: their rates become 0 and their
/// faults leave the schedule. Idempotent, so a schedule file (already switched) can
/// be read back through it.
fn apply_swarm(setup: &mut Setup) {
    let off = setup.swarm_off.clone();
    let is_off = |k: &str| off.contains(&k);
    if is_off("crash") {
        setup.faults.crash_per_mille = 0;
    }
    if is_off("zombie") {
        setup.faults.zombie_per_mille = 0;
    }
    if is_off("hostile") {
        // The client's resume faults are hostile client behaviour too.
        setup.hostile_per_mille = 0;
        setup.resume_fault_per_mille = 0;
    }
    if is_off("loss") {
        setup.loss_per_mille.clear();
    }
    if is_off("skew") {
        setup.clock_skew_ms.clear();
    }
    if is_off("fleet") {
        setup.fold_versions.clear();
    }
    setup.schedule.retain(|(_, f)| !is_off(f.kind()));
}

/// Draws each worker's and the client's clock offset (half of them skewed, ahead or
/// behind by up to [`CLOCK_SKEW_MS_MAX`]) from a stream of its own, so the rest of a
/// seed's draw is what it was before skew existed. The dispatcher's sweeper reads no
/// clock (lease deadlines are the dispatcher's, on store time), so it draws none.
fn draw_skew(seed: u64, workers: usize) -> BTreeMap<String, i64> {
    let mut rng = Rng::derive(seed, 3);
    let mut out = BTreeMap::new();
    for host in (0..workers).map(worker_name).chain(["client".to_owned()]) {
        if rng.chance(CLOCK_SKEW_PER_MILLE) {
            let ms = rng.range(1, CLOCK_SKEW_MS_MAX) as i64;
            out.insert(host, if rng.chance(500) { ms } else { -ms });
        }
    }
    out
}

fn draw(seed: u64, config: &SimConfig) -> Setup {
    let mut rng = Rng::derive(seed, 0);
    let workers = rng.range(WORKERS_MIN, WORKERS_MAX) as usize;
    let n = rng.range(EXECUTIONS_MIN, EXECUTIONS_MAX) as usize;
    let mut scenarios: Vec<Scenario> = (0..n).map(|i| hosts::scenario(&mut rng, i)).collect();
    if let Some(flows) = &config.flows {
        // A named workload: the executions run these flows (in turn) instead of the
        // generated ones; everything else is still drawn from the seed.
        for (i, s) in scenarios.iter_mut().enumerate() {
            let Some(flow) = flows.get(i % flows.len().max(1)) else {
                break;
            };
            let mut flow = flow.clone();
            flow["flowId"] = json!(format!("flow-{i}"));
            *s = Scenario::new(s.execution_id.clone(), flow, s.input.clone());
        }
    }
    let faults = WorkerFaults {
        crash_per_mille: rng.range(0, config.crash_per_mille_max),
        zombie_per_mille: rng.range(0, config.zombie_per_mille_max),
        lease_ms: config.lease_ms,
        park_delay_ms: config.park_delay_ms,
    };
    let hostile_per_mille = rng.range(0, config.hostile_per_mille_max);
    let lo = rng.range(1, 5);
    let latency_ms = (lo, lo + rng.range(0, 40));
    let mut schedule = Vec::new();
    for _ in 0..rng.range(0, FAULT_ACTIONS_MAX) {
        let at = rng.range(0, config.safety_ms.saturating_sub(1));
        let w = rng.range(0, workers as u64 - 1) as usize;
        let fault = match rng.range(0, 11) {
            0..=2 => Fault::Bounce(w),
            3..=6 => Fault::Partition(worker_name(w), rng.range(100, PARTITION_MS_MAX)),
            7 | 8 => {
                let other = match rng.range(0, 2) {
                    0 => worker_name(w),
                    1 => "client".to_owned(),
                    _ => "dispatcher".to_owned(),
                };
                let ms = rng.range(100, PARTITION_MS_MAX);
                if rng.chance(500) {
                    Fault::OneWay(STORE_HOST.to_owned(), other, ms)
                } else {
                    Fault::OneWay(other, STORE_HOST.to_owned(), ms)
                }
            }
            _ => Fault::StoreRestart,
        };
        schedule.push((at, fault));
    }
    let (loss_per_mille, network) = draw_network(seed, config, workers);
    schedule.extend(network);
    schedule.sort_by_key(|(at, _)| *at);
    // Its own stream, so adding it left every other draw of a seed as it was.
    let resume_fault_per_mille = Rng::derive(seed, 2).range(0, config.resume_fault_per_mille_max);
    let mut setup = Setup {
        workers,
        scenarios,
        faults,
        hostile_per_mille,
        resume_fault_per_mille,
        latency_ms,
        schedule,
        clock_skew_ms: draw_skew(seed, workers),
        loss_per_mille,
        swarm_off: draw_swarm(seed),
        fold_versions: draw_fleet(seed, config, workers),
    };
    apply_swarm(&mut setup);
    setup
}

fn schedule_json(seed: u64, setup: &Setup) -> Value {
    json!({
        "seed": seed,
        "workers": setup.workers,
        "crashPerMille": setup.faults.crash_per_mille,
        "zombiePerMille": setup.faults.zombie_per_mille,
        "hostilePerMille": setup.hostile_per_mille,
        "resumeFaultPerMille": setup.resume_fault_per_mille,
        "parkDelayMs": setup.faults.park_delay_ms,
        "latencyMs": [setup.latency_ms.0, setup.latency_ms.1],
        "clockSkewMs": setup.clock_skew_ms,
        "lossPerMille": setup.loss_per_mille,
        "swarmOff": setup.swarm_off,
        "foldVersions": setup.fold_versions.iter().map(|(w, steps)| {
            let steps: Vec<Value> = steps.iter().map(|(at, minor)| json!([at, format!("1.{minor}.0")])).collect();
            (w.clone(), json!(steps))
        }).collect::<serde_json::Map<_, _>>(),
        "faults": setup.schedule.iter().map(|(at, f)| match f {
            Fault::Bounce(w) => json!({ "at": at, "bounce": worker_name(*w) }),
            Fault::Partition(h, d) => json!({ "at": at, "partition": h, "ms": d }),
            Fault::OneWay(from, to, d) => json!({ "at": at, "cut": [from, to], "ms": d }),
            Fault::StoreRestart => json!({ "at": at, "restart": STORE_HOST }),
            Fault::Spike(h, latency, d) => json!({ "at": at, "spike": h, "latencyMs": latency, "ms": d }),
        }).collect::<Vec<_>>(),
        "flows": setup.scenarios.iter().map(|s| s.flow.clone()).collect::<Vec<_>>(),
    })
}

/// Reads a schedule file back into a setup: the workers, rates, latencies, faults and
/// flows come from the file, not from the seed (the seed only seeds the per-host
/// choices and the network's latency draws). Unknown worker names are refused.
fn setup_from_json(v: &Value, config: &SimConfig) -> Result<Setup, String> {
    let num = |k: &str| {
        v.get(k)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("schedule: `{k}` must be a non-negative integer"))
    };
    // Fields added after the first schedule files: absent means their old default.
    let optional = |k: &str, default: u64| match v.get(k) {
        None => Ok(default),
        Some(x) => x
            .as_u64()
            .ok_or_else(|| format!("schedule: `{k}` must be a non-negative integer")),
    };
    let workers = num("workers")? as usize;
    if !(1..=WORKERS_MAX as usize * 4).contains(&workers) {
        return Err(format!(
            "schedule: `workers` must be 1..={}",
            WORKERS_MAX * 4
        ));
    }
    let latency = v
        .get("latencyMs")
        .and_then(Value::as_array)
        .and_then(|a| Some((a.first()?.as_u64()?, a.get(1)?.as_u64()?)))
        .ok_or("schedule: `latencyMs` must be [min, max]")?;
    let worker_of = |name: &str| -> Result<usize, String> {
        name.strip_prefix("worker-")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|w| *w < workers)
            .ok_or_else(|| format!("schedule: no worker `{name}` among {workers}"))
    };
    // A host that talks to the store: a worker, the client or the dispatcher's sweeper.
    let peer_of = |name: &str| -> Result<String, String> {
        match name {
            "client" | "dispatcher" => Ok(name.to_owned()),
            w => worker_of(w).map(worker_name),
        }
    };
    let mut schedule = Vec::new();
    for f in v
        .get("faults")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let at = f
            .get("at")
            .and_then(Value::as_u64)
            .ok_or("schedule: a fault needs `at`")?;
        let fault = if let Some(w) = f.get("bounce").and_then(Value::as_str) {
            Fault::Bounce(worker_of(w)?)
        } else if let Some(w) = f.get("partition").and_then(Value::as_str) {
            let ms = f
                .get("ms")
                .and_then(Value::as_u64)
                .ok_or("schedule: a partition needs `ms`")?;
            Fault::Partition(peer_of(w)?, ms)
        } else if let Some(cut) = f.get("cut").and_then(Value::as_array) {
            let host = |i: usize| -> Result<String, String> {
                let h = cut
                    .get(i)
                    .and_then(Value::as_str)
                    .ok_or("schedule: `cut` is [from, to]")?;
                match h {
                    STORE_HOST | "client" | "dispatcher" => Ok(h.to_owned()),
                    w => worker_of(w).map(worker_name),
                }
            };
            let ms = f
                .get("ms")
                .and_then(Value::as_u64)
                .ok_or("schedule: a cut needs `ms`")?;
            Fault::OneWay(host(0)?, host(1)?, ms)
        } else if f.get("restart").is_some() {
            Fault::StoreRestart
        } else if let Some(h) = f.get("spike").and_then(Value::as_str) {
            let ms = |k: &str| {
                f.get(k)
                    .and_then(Value::as_u64)
                    .ok_or_else(|| format!("schedule: a spike needs `{k}`"))
            };
            Fault::Spike(peer_of(h)?, ms("latencyMs")?, ms("ms")?)
        } else {
            return Err(format!("schedule: unknown fault {f}"));
        };
        schedule.push((at, fault));
    }
    schedule.sort_by_key(|(at, _)| *at);
    // Absent in schedule files written before skew existed: every clock reads store time.
    let mut clock_skew_ms = BTreeMap::new();
    if let Some(skews) = v.get("clockSkewMs") {
        let skews = skews
            .as_object()
            .ok_or("schedule: `clockSkewMs` maps a host to its offset in ms")?;
        for (host, ms) in skews {
            let ms = ms.as_i64().ok_or_else(|| {
                format!("schedule: the clock offset of `{host}` is not an integer")
            })?;
            let host = match host.as_str() {
                "client" => host.clone(),
                w => worker_name(worker_of(w)?),
            };
            clock_skew_ms.insert(host, ms);
        }
    }
    let mut loss_per_mille = BTreeMap::new();
    if let Some(loss) = v.get("lossPerMille") {
        let loss = loss
            .as_object()
            .ok_or("schedule: `lossPerMille` maps a host to its link's loss rate")?;
        for (host, rate) in loss {
            let rate = rate
                .as_u64()
                .filter(|r| *r <= 1000)
                .ok_or_else(|| format!("schedule: the loss rate of `{host}` is not 0..=1000"))?;
            loss_per_mille.insert(peer_of(host)?, rate);
        }
    }
    let mut swarm_off = Vec::new();
    for kind in v
        .get("swarmOff")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = FAULT_KINDS
            .into_iter()
            .find(|k| Some(*k) == kind.as_str())
            .ok_or_else(|| format!("schedule: unknown fault kind {kind} in `swarmOff`"))?;
        swarm_off.push(kind);
    }
    let mut fold_versions = BTreeMap::new();
    if let Some(fleet) = v.get("foldVersions") {
        let fleet = fleet
            .as_object()
            .ok_or("schedule: `foldVersions` maps a worker to [[at ms, \"1.MINOR.0\"], …]")?;
        for (w, steps) in fleet {
            let name = worker_name(worker_of(w)?);
            let mut plan = Vec::new();
            for step in steps.as_array().into_iter().flatten() {
                let at = step.get(0).and_then(Value::as_u64);
                let version = step
                    .get(1)
                    .and_then(Value::as_str)
                    .map(loom_kernel::FoldVersion::parse);
                match (at, version) {
                    (Some(at), Some(Ok(v))) => plan.push((at, v.minor())),
                    (_, Some(Err(e))) => {
                        return Err(format!("schedule: `foldVersions` of {w}: {e}"))
                    }
                    _ => {
                        return Err(format!(
                            "schedule: each `foldVersions` step of {w} is [at ms, \"1.MINOR.0\"]"
                        ))
                    }
                }
            }
            plan.sort_by_key(|(at, _)| *at);
            fold_versions.insert(name, plan);
        }
    }
    let flows = v
        .get("flows")
        .and_then(Value::as_array)
        .filter(|f| !f.is_empty())
        .ok_or("schedule: `flows` must list at least one flow")?;
    let scenarios = flows
        .iter()
        .enumerate()
        .map(|(i, flow)| Scenario::new(format!("exec-{i}"), flow.clone(), json!({ "n": i })))
        .collect();
    let mut setup = Setup {
        workers,
        scenarios,
        faults: WorkerFaults {
            crash_per_mille: num("crashPerMille")?,
            zombie_per_mille: num("zombiePerMille")?,
            lease_ms: config.lease_ms,
            park_delay_ms: optional("parkDelayMs", config.park_delay_ms)?,
        },
        hostile_per_mille: num("hostilePerMille")?,
        resume_fault_per_mille: optional("resumeFaultPerMille", 0)?,
        latency_ms: latency,
        schedule,
        clock_skew_ms,
        loss_per_mille,
        swarm_off,
        fold_versions,
    };
    apply_swarm(&mut setup);
    Ok(setup)
}

/// Runs a schedule file (as `write_artifacts` writes it, shrunk or not) under `config`
/// (its store, planted bug and phase lengths).
pub fn replay(schedule: &Value, config: &SimConfig) -> Result<SimOutcome, String> {
    let setup = setup_from_json(schedule, config)?;
    let seed = schedule
        .get("seed")
        .and_then(Value::as_u64)
        .ok_or("schedule: `seed` (the per-host randomness) is missing")?;
    Ok(run_setup(seed, setup, config))
}

/// Reads a scenario: a schedule written by hand in TOML (the same fields as
/// `schedule.json`: `seed`, `workers`, `crashPerMille`, `zombiePerMille`,
/// `hostilePerMille`, `latencyMs`, `faults`, `flows`) or JSON.
pub fn scenario_from_text(text: &str) -> Result<Value, String> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Ok(v);
    }
    let table: toml::Value = toml::from_str(text).map_err(|e| format!("not TOML or JSON: {e}"))?;
    serde_json::to_value(table).map_err(|e| e.to_string())
}

/// Most runs shrinking a failure may take.
pub const SHRINK_RUNS_MAX: usize = 80;

/// Shrinks a failing outcome's schedule: drops faults one at a time, then executions,
/// then workers, keeping each cut while a rule the original broke still breaks.
/// Returns the smallest schedule found (the original when nothing could go) and the
/// number of runs it took.
pub fn shrink(failing: &SimOutcome, config: &SimConfig) -> (Value, usize) {
    let rules: std::collections::BTreeSet<&str> =
        failing.violations.iter().map(|v| v.rule.as_str()).collect();
    let mut best = failing.schedule.clone();
    let mut runs = 0;
    let still_fails = |candidate: &Value, runs: &mut usize| -> bool {
        *runs += 1;
        replay(candidate, config)
            .map(|o| o.violations.iter().any(|v| rules.contains(v.rule.as_str())))
            .unwrap_or(false)
    };
    // Faults first: each one kept only if the failure needs it.
    let mut i = 0;
    while runs < SHRINK_RUNS_MAX {
        let Some(faults) = best["faults"].as_array().cloned() else {
            break;
        };
        if i >= faults.len() {
            break;
        }
        let mut candidate = best.clone();
        let mut fewer = faults;
        fewer.remove(i);
        candidate["faults"] = json!(fewer);
        if still_fails(&candidate, &mut runs) {
            best = candidate;
        } else {
            i += 1;
        }
    }
    // Then the lossy links and the skewed clocks, one at a time.
    for field in ["lossPerMille", "clockSkewMs"] {
        let hosts: Vec<String> = best[field]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for host in hosts {
            if runs >= SHRINK_RUNS_MAX {
                break;
            }
            let mut candidate = best.clone();
            if let Some(m) = candidate[field].as_object_mut() {
                m.remove(&host);
            }
            if still_fails(&candidate, &mut runs) {
                best = candidate;
            }
        }
    }
    // Then executions, from the last.
    let mut i = best["flows"].as_array().map_or(0, Vec::len);
    while i > 0 && runs < SHRINK_RUNS_MAX {
        i -= 1;
        let flows = best["flows"].as_array().cloned().unwrap_or_default();
        if flows.len() <= 1 {
            break;
        }
        let mut candidate = best.clone();
        let mut fewer = flows;
        fewer.remove(i);
        candidate["flows"] = json!(fewer);
        if still_fails(&candidate, &mut runs) {
            best = candidate;
        }
    }
    // Then workers, from the last (faults on a removed worker go with it).
    while runs < SHRINK_RUNS_MAX {
        let workers = best["workers"].as_u64().unwrap_or(1);
        if workers <= 1 {
            break;
        }
        let gone = worker_name(workers as usize - 1);
        let on_gone = |f: &Value| {
            f.get("cut")
                .and_then(Value::as_array)
                .is_some_and(|c| c.iter().any(|h| h.as_str() == Some(gone.as_str())))
        };
        let mut candidate = best.clone();
        candidate["workers"] = json!(workers - 1);
        for field in ["lossPerMille", "clockSkewMs"] {
            if let Some(m) = candidate[field].as_object_mut() {
                m.remove(&gone);
            }
        }
        let kept: Vec<Value> = best["faults"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|f| {
                f.get("bounce").and_then(Value::as_str) != Some(gone.as_str())
                    && f.get("partition").and_then(Value::as_str) != Some(gone.as_str())
                    && f.get("spike").and_then(Value::as_str) != Some(gone.as_str())
                    && !on_gone(f)
            })
            .collect();
        candidate["faults"] = json!(kept);
        if still_fails(&candidate, &mut runs) {
            best = candidate;
        } else {
            break;
        }
    }
    (best, runs)
}

fn worker_name(i: usize) -> String {
    format!("worker-{i}")
}

/// Runs one seed: draws the setup, simulates both phases, checks every invariant.
pub fn run_seed(seed: u64, config: &SimConfig) -> SimOutcome {
    run_setup(seed, draw(seed, config), config)
}

/// Runs a setup with the per-host randomness of `seed`.
fn run_setup(seed: u64, setup: Setup, config: &SimConfig) -> SimOutcome {
    net::take_calls_timed_out();
    let schedule = schedule_json(seed, &setup);
    let store = match SimStore::open(&config.store, seed) {
        Ok(s) => s,
        Err(e) => return unrunnable(seed, schedule, &config.store, &e),
    };
    let dispatcher = MemoryDispatcher::with_lease_ms(config.lease_ms as i64)
        .unwrap_or_else(|_| MemoryDispatcher::new());
    // Registering the one target on a fresh in-memory dispatcher cannot fail.
    let _ = block_on(dispatcher.register_target(TARGET));
    let world = Arc::new(World {
        events_cell: Mutex::new(Arc::new(store)),
        timers: MemoryTimerStore::new(),
        snapshots: loom_stores::memory::MemorySnapshotStore::new(),
        dispatcher,
        book: Mutex::new(Book::default()),
        bug: config.bug,
        clock_skew_ms: setup.clock_skew_ms.clone(),
    });
    let scenarios = Arc::new(hosts::with_successors(&setup.scenarios));
    let faults_on = Arc::new(AtomicBool::new(true));
    let deadline_ms = config.safety_ms + config.liveness_ms;

    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .tick_duration(Duration::from_millis(TICK_MS))
        .min_message_latency(Duration::from_millis(setup.latency_ms.0))
        .max_message_latency(Duration::from_millis(setup.latency_ms.1))
        .simulation_duration(Duration::from_millis(deadline_ms + SIM_SLACK_MS))
        .build();

    {
        let world = world.clone();
        sim.host(STORE_HOST, move || net::serve(world.clone()));
    }
    for w in 0..setup.workers {
        let (world, scenarios, faults_on) = (world.clone(), scenarios.clone(), faults_on.clone());
        let rng = Arc::new(Mutex::new(Rng::derive(seed, 100 + w as u64)));
        let faults = setup.faults;
        let name = worker_name(w);
        let fleet: Arc<Vec<(u64, loom_kernel::FoldVersion)>> = Arc::new(
            setup
                .fold_versions
                .get(&name)
                .into_iter()
                .flatten()
                .filter_map(|(at, minor)| {
                    Some((*at, loom_kernel::FoldVersion::from_minor(*minor)?))
                })
                .collect(),
        );
        let host = name.clone();
        sim.host(host.as_str(), move || {
            hosts::worker(
                name.clone(),
                world.clone(),
                scenarios.clone(),
                faults_on.clone(),
                rng.clone(),
                faults,
                fleet.clone(),
            )
        });
    }
    {
        let (world, scenarios, faults_on) = (world.clone(), scenarios.clone(), faults_on.clone());
        let rng = Rng::derive(seed, 1);
        let hostile = setup.hostile_per_mille;
        let resume_faults = setup.resume_fault_per_mille;
        sim.client("client", async move {
            hosts::client(
                world,
                scenarios,
                faults_on,
                rng,
                hostile,
                resume_faults,
                deadline_ms,
            )
            .await
        });
    }
    // The sweeper is the dispatcher's half that watches the log: it re-queues every
    // execution that is neither parked nor ended (a crashed resume, a lost lease).
    sim.host("dispatcher", sweeper);

    let mut pending = setup.schedule.clone();
    pending.reverse();
    let hosts: Vec<String> = (0..setup.workers)
        .map(worker_name)
        .chain(["client".to_owned(), "dispatcher".to_owned()])
        .collect();
    // (when, from, to, one way): links to heal.
    let mut repairs: Vec<(u64, String, String, bool)> = Vec::new();
    let mut sim_error = None;
    let (mut bounces, mut partitions, mut spikes) = (0, 0, 0);
    // (when it ends, host): latency spikes to undo.
    let mut spikes_on: Vec<(u64, String)> = Vec::new();
    // Lossy links from the start of the safety phase (the hosts exist by now).
    for (host, rate) in &setup.loss_per_mille {
        sim.set_link_fail_rate(host.as_str(), STORE_HOST, *rate as f64 / 1000.0);
    }
    loop {
        let now = sim.elapsed().as_millis() as u64;
        while pending.last().is_some_and(|(at, _)| *at <= now) {
            if let Some((at, fault)) = pending.pop() {
                match fault {
                    Fault::Bounce(w) => {
                        sim.bounce(worker_name(w));
                        bounces += 1;
                    }
                    Fault::Partition(ref h, d) => {
                        sim.partition(h.as_str(), STORE_HOST);
                        repairs.push((at + d, h.clone(), STORE_HOST.to_owned(), false));
                        partitions += 1;
                    }
                    Fault::Spike(ref h, latency, d) => {
                        sim.set_link_latency(
                            h.as_str(),
                            STORE_HOST,
                            Duration::from_millis(latency),
                        );
                        spikes_on.push((at + d, h.clone()));
                        spikes += 1;
                    }
                    Fault::OneWay(ref from, ref to, d) => {
                        sim.partition_oneway(from.as_str(), to.as_str());
                        repairs.push((at + d, from.clone(), to.clone(), true));
                        partitions += 1;
                    }
                    Fault::StoreRestart => {
                        // The store is down for STORE_DOWN_MS: it is cut off from every
                        // host, so requests and acknowledgements in flight are lost; what
                        // it committed survives (World outlives it), and it reopens its
                        // store. Not a turmoil bounce: a bounced host gets a new tokio
                        // runtime whose clock starts from the real clock, and runs that
                        // bounced the store were seen to trace differently (CONF-05).
                        for h in hosts.iter() {
                            sim.partition(STORE_HOST, h.as_str());
                            repairs.push((
                                at + STORE_DOWN_MS,
                                STORE_HOST.to_owned(),
                                h.clone(),
                                false,
                            ));
                        }
                        world.restart_store();
                    }
                }
                world.trace(json!({ "t": now, "fault": format!("{fault:?}") }));
            }
        }
        repairs.retain(|(at, from, to, oneway)| {
            if *at <= now || now >= config.safety_ms {
                if *oneway {
                    sim.repair_oneway(from.as_str(), to.as_str());
                } else {
                    sim.repair(from.as_str(), to.as_str());
                }
                false
            } else {
                true
            }
        });
        spikes_on.retain(|(at, host)| {
            if *at <= now || now >= config.safety_ms {
                // Back to the seed's latency range: min and max as the builder set them.
                let (lo, hi) = setup.latency_ms;
                sim.set_link_latency(host.as_str(), STORE_HOST, Duration::from_millis(lo));
                sim.set_link_max_message_latency(
                    host.as_str(),
                    STORE_HOST,
                    Duration::from_millis(hi),
                );
                false
            } else {
                true
            }
        });
        if now >= config.safety_ms && faults_on.load(Ordering::SeqCst) {
            faults_on.store(false, Ordering::SeqCst);
            // The liveness phase has a healthy network: no more lost messages.
            for host in setup.loss_per_mille.keys() {
                sim.set_link_fail_rate(host.as_str(), STORE_HOST, 0.0);
            }
            world.trace(json!({ "t": now, "phase": "liveness" }));
        }
        match sim.step() {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => {
                sim_error = Some(e.to_string());
                break;
            }
        }
    }
    let simulated_ms = sim.elapsed().as_millis() as u64;
    drop(sim);
    let mut outcome = finish(seed, config, &world, &setup, schedule, sim_error);
    outcome.stats.bounces = bounces;
    outcome.stats.partitions = partitions;
    outcome.stats.spikes = spikes;
    outcome.stats.calls_timed_out = net::take_calls_timed_out();
    outcome.stats.simulated_ms = simulated_ms;
    outcome
}

async fn sweeper() -> turmoil::Result {
    let client = net::StoreClient::new("dispatcher");
    loop {
        tokio::time::sleep(Duration::from_millis(hosts::SWEEP_MS)).await;
        let Ok(ids) = client.list_executions().await else {
            continue;
        };
        for id in ids {
            let Ok(log) = client.read(&id).await else {
                continue;
            };
            let state = loom_kernel::fold(&log);
            // A continued execution whose successor was not started (a crash between
            // `EXECUTION_CONTINUED` and the start): its recovery starts it.
            let unstarted_successor = match log
                .iter()
                .rev()
                .find(|e| e.event_type == "EXECUTION_CONTINUED")
            {
                Some(e) if state.status == loom_kernel::fold::Status::Continued => {
                    let to = e.payload["continuedTo"].as_str().unwrap_or_default();
                    matches!(client.read(to).await, Ok(l) if l.is_empty())
                }
                _ => false,
            };
            if !unstarted_successor
                && (state.status.is_terminal() || state.suspended_on().is_some())
            {
                continue;
            }
            let flow_id = log
                .first()
                .map(|e| e.workflow_id.clone())
                .unwrap_or_default();
            let package = loom_kernel::spi::ExecutionPackage {
                execution_id: id,
                flow_id,
                resume_hint: None,
                compute_target: None,
            };
            // AlreadyExists means it is queued or leased: nothing to do.
            let _ = client.dispatch(&package).await;
        }
    }
}

fn finish(
    seed: u64,
    config: &SimConfig,
    world: &World,
    setup: &Setup,
    schedule: Value,
    sim_error: Option<String>,
) -> SimOutcome {
    let mut logs = Vec::new();
    let scenarios = hosts::with_successors(&setup.scenarios);
    for s in &scenarios {
        let log = block_on(world.events().read(&s.execution_id)).unwrap_or_default();
        logs.push((s.execution_id.clone(), log));
    }
    let mut violations = std::mem::take(&mut world.book().violations);
    if let Some(e) = sim_error {
        violations.push(Violation {
            rule: "PLACE-04".into(),
            message: format!("the simulation stopped: {e}"),
            execution_id: None,
            event_index: None,
        });
    }
    violations.extend(check::final_checks_with(&scenarios, &logs, config.bug));
    violations.extend(check::acknowledged_survive(&world.book().acked, &logs));
    violations.extend(check::ledger_backs_every_output(
        &world.book().ledger,
        &logs,
    ));
    let pre_1_24 = setup
        .fold_versions
        .values()
        .flatten()
        .any(|(_, minor)| *minor < 24);
    let snaps = check::stored_snapshots(&world.book().snapshots_saved, &logs, pre_1_24);
    violations.extend(snaps.violations);
    let results = check::results(seed, &violations);
    let trace = std::mem::take(&mut world.book().trace);
    let stats = {
        let book = world.book();
        SimStats {
            zombie_refused: book.zombie_refused,
            hostile_refused: book.hostile_refused,
            injected_crashes: book.injected_crashes,
            crash_points: book.crash_points,
            effect_calls: book.ledger.len() as u64,
            effect_reruns: {
                let mut seen = std::collections::BTreeSet::new();
                book.ledger
                    .iter()
                    .filter(|l| !seen.insert((&l.execution_id, &l.step_id)))
                    .count() as u64
            },
            store_restarts: book.store_restarts,
            partitions: 0,
            bounces: 0,
            timer_fires: book.timer_fires,
            answers: book.answers_sent,
            simulated_ms: 0,
            lease_takeovers: book.lease_takeovers,
            due_before_park: book.due_before_park,
            successor_starts: book.successor_starts,
            skewed_hosts: setup.clock_skew_ms.values().filter(|ms| **ms != 0).count() as u64,
            skew_early_fires: book.skew_early_fires,
            spikes: 0,
            calls_timed_out: 0,
            snapshots_saved: book.snapshots_saved.len() as u64,
            old_writer_snapshots: snaps.old_writers,
            stray_inputs: snaps.stray_inputs,
            snapshot_refusals: book.snapshot_refusals,
            fleet_switches: book.fleet_switches,
            lossy_links: setup.loss_per_mille.values().filter(|r| **r > 0).count() as u64,
            swarm_off: std::array::from_fn(|i| {
                u64::from(setup.swarm_off.contains(&FAULT_KINDS[i]))
            }),
            completed: logs
                .iter()
                .filter(|(_, l)| l.iter().any(|e| e.event_type == "EXECUTION_COMPLETED"))
                .count() as u64,
            resume_faults: book.resume_faults,
            ..log_counts(&logs)
        }
    };
    let ledger = world.book().ledger.iter().map(|e| e.to_value()).collect();
    // A fold disagreement becomes a vector: one per execution whose final log failed
    // the SNAP-01 check (a kernel's restore against its full fold).
    let mut vectors = Vec::new();
    for v in violations
        .iter()
        .filter(|v| v.rule == "SNAP-01" && v.message.starts_with(check::SNAP_01_FINAL_LOG))
    {
        let (Some(exec), Some(k)) = (&v.execution_id, v.event_index) else {
            continue;
        };
        if let Some((_, log)) = logs.iter().find(|(id, _)| id == exec) {
            vectors.push(check::snapshot_vector(seed, exec, log, k));
        }
    }
    // An ingress disagreement becomes a vector: a resume the client's runtime admitted
    // that the reference gate refuses on the log the client read.
    let admitted = world.book().ingress_admitted.clone();
    for (i, (exec, read, request)) in admitted.iter().enumerate() {
        if let Some((_, log)) = logs.iter().find(|(id, _)| id == exec) {
            let seen: Vec<_> = log.iter().filter(|e| e.sequence < *read).cloned().collect();
            if let Some(v) = check::ingress_vector(seed, exec, i, &seen, request) {
                vectors.push(v);
            }
        }
    }
    let outcome = SimOutcome {
        seed,
        ledger,
        vectors,
        error: None,
        trace,
        violations,
        results,
        schedule,
        logs: logs
            .into_iter()
            .map(|(id, log)| (id, log.iter().map(|e| e.to_value()).collect()))
            .collect(),
        stats,
    };
    if !outcome.violations.is_empty() {
        eprintln!(
            "loom-sim: seed {seed} broke {} invariant(s); reproduce with run_seed({seed}, ..)",
            outcome.violations.len()
        );
        if let Some(dir) = &config.artifacts_dir {
            if let Err(e) = write_artifacts(dir, &outcome) {
                eprintln!("loom-sim: could not write the artefacts of seed {seed}: {e}");
            }
        }
    }
    outcome
}

/// The workload coverage counted on the final logs: retries, continued attempt counts,
/// failures by kind and in-doubt verdicts.
fn log_counts(logs: &[(String, Vec<loom_kernel::EventEnvelope>)]) -> SimStats {
    let mut s = SimStats::default();
    for e in logs.iter().flat_map(|(_, l)| l) {
        match e.event_type.as_str() {
            "STEP_RETRYING" => s.retries += 1,
            "EXECUTION_CONTINUED" => s.continued += 1,
            "STEP_STARTED" if e.payload["attempt"].as_u64().is_some_and(|a| a > 1) => {
                s.attempts_continued += 1
            }
            "STEP_FAILED" if e.payload.get("channel").is_some() => s.typed_failures += 1,
            "STEP_FAILED" => s.untyped_failures += 1,
            "DECISION_RECORDED"
                if e.payload["id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with("__loom_verdict:")) =>
            {
                s.verdicts += 1
            }
            _ => {}
        }
    }
    s
}

/// The outcome of a seed whose store could not be opened: an `error` result per rule
/// (the seed did not run; it is neither a pass nor a violation).
fn unrunnable(seed: u64, schedule: Value, store: &StoreSpec, error: &str) -> SimOutcome {
    let message = format!("seed {seed}: the store `{store}` could not be opened: {error}");
    SimOutcome {
        seed,
        trace: Vec::new(),
        violations: Vec::new(),
        results: RULES
            .iter()
            .map(|rule| {
                CaseResult::error(
                    "sim",
                    "deploy",
                    format!("seed-{seed}/{rule}"),
                    [*rule],
                    &message,
                )
            })
            .collect(),
        schedule,
        logs: Vec::new(),
        stats: SimStats::default(),
        ledger: Vec::new(),
        vectors: Vec::new(),
        error: Some(message),
    }
}

/// Writes a failing seed's files under `dir/seed-<seed>/`: the seed, the drawn setup
/// and fault schedule, the violations, the trace and every final event log.
pub fn write_artifacts(dir: &Path, outcome: &SimOutcome) -> std::io::Result<PathBuf> {
    let base = dir.join(format!("seed-{}", outcome.seed));
    std::fs::create_dir_all(base.join("logs"))?;
    std::fs::write(base.join("seed.txt"), format!("{}\n", outcome.seed))?;
    std::fs::write(
        base.join("schedule.json"),
        serde_json::to_string_pretty(&outcome.schedule).unwrap_or_default(),
    )?;
    let violations: Vec<String> = outcome
        .violations
        .iter()
        .map(|v| {
            json!({ "rule": v.rule, "message": v.message, "executionId": v.execution_id, "eventIndex": v.event_index })
                .to_string()
        })
        .collect();
    std::fs::write(base.join("violations.jsonl"), violations.join("\n") + "\n")?;
    std::fs::write(base.join("trace.jsonl"), outcome.trace.join("\n") + "\n")?;
    let ledger: Vec<String> = outcome.ledger.iter().map(Value::to_string).collect();
    std::fs::write(base.join("ledger.jsonl"), ledger.join("\n") + "\n")?;
    for v in &outcome.vectors {
        let kind = v["kind"].as_str().unwrap_or("fold");
        let id = v["id"].as_str().unwrap_or("vector");
        let dir = base.join("vectors").join(kind);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join(format!("{id}.json")),
            serde_json::to_string_pretty(v).unwrap_or_default() + "\n",
        )?;
    }
    for (id, log) in &outcome.logs {
        let lines: Vec<String> = log.iter().map(Value::to_string).collect();
        std::fs::write(
            base.join("logs").join(format!("{id}.jsonl")),
            lines.join("\n") + "\n",
        )?;
    }
    Ok(base)
}

/// Runs every seed in `seeds`, or only those with `seed % n == i` for `shard =
/// Some((i, n))` (so a CI matrix can split a sweep; an `n` of 0 runs nothing).
pub fn sweep(seeds: Range<u64>, shard: Option<(u32, u32)>, config: &SimConfig) -> Vec<SimOutcome> {
    seeds
        .filter(|s| match shard {
            None => true,
            Some((_, 0)) => false,
            Some((i, n)) => s % u64::from(n) == u64::from(i),
        })
        .map(|s| run_seed(s, config))
        .collect()
}

impl SimStats {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &SimStats) {
        self.zombie_refused += other.zombie_refused;
        self.hostile_refused += other.hostile_refused;
        self.injected_crashes += other.injected_crashes;
        for (mine, theirs) in self.crash_points.iter_mut().zip(other.crash_points) {
            *mine += theirs;
        }
        self.effect_calls += other.effect_calls;
        self.effect_reruns += other.effect_reruns;
        self.completed += other.completed;
        self.store_restarts += other.store_restarts;
        self.partitions += other.partitions;
        self.bounces += other.bounces;
        self.timer_fires += other.timer_fires;
        self.answers += other.answers;
        self.due_before_park += other.due_before_park;
        self.simulated_ms += other.simulated_ms;
        self.lease_takeovers += other.lease_takeovers;
        self.skewed_hosts += other.skewed_hosts;
        self.skew_early_fires += other.skew_early_fires;
        self.spikes += other.spikes;
        self.lossy_links += other.lossy_links;
        self.calls_timed_out += other.calls_timed_out;
        self.snapshots_saved += other.snapshots_saved;
        self.old_writer_snapshots += other.old_writer_snapshots;
        self.stray_inputs += other.stray_inputs;
        self.snapshot_refusals += other.snapshot_refusals;
        self.fleet_switches += other.fleet_switches;
        for (mine, theirs) in self.swarm_off.iter_mut().zip(other.swarm_off) {
            *mine += theirs;
        }
        self.retries += other.retries;
        self.attempts_continued += other.attempts_continued;
        self.untyped_failures += other.untyped_failures;
        self.typed_failures += other.typed_failures;
        self.verdicts += other.verdicts;
        self.continued += other.continued;
        self.successor_starts += other.successor_starts;
        let (r, o) = (&mut self.resume_faults, &other.resume_faults);
        r.early += o.early;
        r.early_refused += o.early_refused;
        r.early_admitted += o.early_admitted;
        r.duplicate += o.duplicate;
        r.reordered += o.reordered;
        r.concurrent += o.concurrent;
        r.finished += o.finished;
        r.refused += o.refused;
        r.messages += o.messages;
        r.early_messages += o.early_messages;
        r.duplicate_messages += o.duplicate_messages;
    }

    /// The fault and coverage counts as `name=count` pairs, for a summary line.
    pub fn counts(&self) -> String {
        let off: Vec<String> = FAULT_KINDS
            .iter()
            .zip(self.swarm_off)
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        let points: Vec<String> = CRASH_POINTS
            .iter()
            .zip(self.crash_points)
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        format!(
            "{} effect-reruns={} spikes={} lossy-links={} calls-timed-out={} snapshots={} old-writer-snapshots={} stray-inputs={} snapshot-refusals={} fleet-switches={}; crashes by point: {}; seeds with a kind off (swarm): {}",
            self.fault_counts(),
            self.effect_reruns,
            self.spikes,
            self.lossy_links,
            self.calls_timed_out,
            self.snapshots_saved,
            self.old_writer_snapshots,
            self.stray_inputs,
            self.snapshot_refusals,
            self.fleet_switches,
            points.join(" "),
            off.join(" ")
        )
    }

    fn fault_counts(&self) -> String {
        format!(
            "crashes={} zombies-refused={} hostile-refused={} bounces={} partitions={} store-restarts={} timer-fires={} answers={} due-before-park={} lease-takeovers={} skewed-hosts={} skew-early-fires={} effect-calls={} completed={} \
             early-resumes={} early-refused={} early-admitted={} duplicate-resumes={} reordered-resumes={} concurrent-resumes={} resumes-to-ended={} resume-faults-refused={} messages={} early-messages={} duplicate-messages={} \
             retries={} attempts-continued={} untyped-failures={} typed-failures={} verdicts={} continued={} successor-starts={}",
            self.injected_crashes,
            self.zombie_refused,
            self.hostile_refused,
            self.bounces,
            self.partitions,
            self.store_restarts,
            self.timer_fires,
            self.answers,
            self.due_before_park,
            self.lease_takeovers,
            self.skewed_hosts,
            self.skew_early_fires,
            self.effect_calls,
            self.completed,
            self.resume_faults.early,
            self.resume_faults.early_refused,
            self.resume_faults.early_admitted,
            self.resume_faults.duplicate,
            self.resume_faults.reordered,
            self.resume_faults.concurrent,
            self.resume_faults.finished,
            self.resume_faults.refused,
            self.resume_faults.messages,
            self.resume_faults.early_messages,
            self.resume_faults.duplicate_messages,
            self.retries,
            self.attempts_continued,
            self.untyped_failures,
            self.typed_failures,
            self.verdicts,
            self.continued,
            self.successor_starts
        )
    }
}

/// Runs `seeds` on `jobs` threads (at least one), each seed exactly as [`run_seed`]
/// would; the outcomes come back in seed order. Known limit: seeds on concurrent threads
/// have been seen to trace differently from the same seeds on one thread
/// (docs/performance.md), so reproduce a seed alone.
pub fn run_seeds(seeds: &[u64], config: &SimConfig, jobs: usize) -> Vec<SimOutcome> {
    run_seeds_with(seeds, config, jobs, |_| {})
}

/// [`run_seeds`], calling `done` after each seed (for a progress bar).
pub fn run_seeds_with(
    seeds: &[u64],
    config: &SimConfig,
    jobs: usize,
    done: impl Fn(&SimOutcome) + Sync,
) -> Vec<SimOutcome> {
    let jobs = jobs.clamp(1, JOBS_MAX).min(seeds.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<SimOutcome>>> = seeds.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&seed) = seeds.get(i) else {
                    break;
                };
                let outcome = run_seed(seed, config);
                done(&outcome);
                *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(outcome);
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

/// A digest of a run: FNV-1a 64 over every trace line and every final log, as hex.
/// Two runs of a seed must give the same digest (CONF-05).
pub fn trace_digest(outcome: &SimOutcome) -> String {
    let mut parts: Vec<String> = outcome.trace.clone();
    for (id, log) in &outcome.logs {
        parts.push(id.clone());
        parts.extend(log.iter().map(Value::to_string));
    }
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    format!("{:016x}", hosts::fnv(&refs))
}

/// CONF-05 for one seed: `first` and `second` are two runs of it. Passes when their
/// digests match; otherwise fails naming the first differing trace line (or log).
pub fn determinism_result(first: &SimOutcome, second: &SimOutcome) -> CaseResult {
    let seed = first.seed;
    let case = format!("seed-{seed}/CONF-05");
    let (a, b) = (trace_digest(first), trace_digest(second));
    if a == b {
        return CaseResult::pass("sim", "determinism", case, ["CONF-05"]);
    }
    let n = first.trace.len().max(second.trace.len());
    let differ = (0..n).find(|&i| first.trace.get(i) != second.trace.get(i));
    let message = match differ {
        Some(i) => format!(
            "seed {seed} ran twice with different traces (digest {a} vs {b}); first difference at trace line {}: `{}` vs `{}`",
            i + 1,
            first.trace.get(i).map_or("(none)", String::as_str),
            second.trace.get(i).map_or("(none)", String::as_str)
        ),
        None => format!(
            "seed {seed} ran twice with the same trace but different final logs (digest {a} vs {b})"
        ),
    };
    let failure = loom_report::Failure::values(json!(a), json!(b));
    let failure = match differ {
        Some(i) => failure.with_event_index(i as u64),
        None => failure,
    };
    CaseResult::fail("sim", "determinism", case, ["CONF-05"], message, failure)
}

/// The results of seeds `0..seeds` with the default configuration, for `loom check`:
/// each seed runs twice, and besides its invariants a CONF-05 result says whether the
/// two runs gave the same trace digest.
pub fn sim_results(seeds: u64, show_progress: bool) -> Vec<CaseResult> {
    let config = SimConfig::default();
    let mut results = Vec::new();
    for seed in 0..seeds {
        let outcome = run_seed(seed, &config);
        let again = run_seed(seed, &config);
        if show_progress {
            eprintln!(
                "sim: seed {seed}/{seeds}: {} violation(s), {} trace lines, digest {}",
                outcome.violations.len(),
                outcome.trace.len(),
                trace_digest(&outcome)
            );
        }
        results.push(determinism_result(&outcome, &again));
        results.extend(outcome.results);
    }
    results
}
