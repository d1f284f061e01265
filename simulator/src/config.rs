//! What a run is given: the settings and the bug planted on purpose.

use std::path::PathBuf;

use serde_json::Value;

use crate::store::StoreSpec;

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

/// A stated workload profile: how many workers and executions a seed draws, how fast
/// they start and how often their runs crash (`loom sim --workload`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Workload {
    /// 2-5 workers, 3-6 executions started 0-200 ms apart.
    #[default]
    Default,
    /// 4-6 workers, 10-20 executions started 0-10 ms apart (a burst of writes), crash
    /// and zombie chances of at least 30% each (many fences per execution), and a
    /// liveness phase of [`HEAVY_LIVENESS_MS`] for them all to end: the `HEAVY_*`
    /// constants.
    Heavy,
}

/// `--workload heavy`: the liveness phase, simulated milliseconds (the default profile's
/// 20 s does not let 20 executions and their continuations end).
pub const HEAVY_LIVENESS_MS: u64 = 40_000;

impl SimConfig {
    /// The default settings with the workload profile `w` (its liveness phase).
    pub fn with_workload(mut self, w: Workload) -> SimConfig {
        self.workload = w;
        if w == Workload::Heavy {
            self.liveness_ms = self.liveness_ms.max(HEAVY_LIVENESS_MS);
        }
        self
    }
}

impl std::str::FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Workload, String> {
        match s {
            "default" => Ok(Workload::Default),
            "heavy" => Ok(Workload::Heavy),
            other => Err(format!("unknown workload `{other}` (default or heavy)")),
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
    /// The time limits of a `cmd:` store adapter (real time).
    pub adapter: crate::store::AdapterLimits,
    /// `--restart-backend CMD`: run at points the seed draws (a real store only).
    pub restart_backend: Option<String>,
    /// The workload profile seeds are drawn with.
    pub workload: Workload,
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
            adapter: crate::store::AdapterLimits::default(),
            restart_backend: None,
            workload: Workload::Default,
        }
    }
}
