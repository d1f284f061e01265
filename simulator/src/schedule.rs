//! A seed's setup and fault schedule: drawn from the seed (each kind of draw from a
//! stream of its own, so adding one left the others as they were), written as a
//! schedule file, and read back from one (a failing seed's `schedule.json`, its shrunk
//! `shrunk.json`, or a hand-written scenario in TOML or JSON).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::config::{SimConfig, Workload};
use crate::hosts::WorkerFaults;
use crate::rng::Rng;
use crate::wire::STORE_HOST;
use crate::workload::{self, Scenario};

/// Fewest workers a seed draws.
pub const WORKERS_MIN: u64 = 2;
/// Most workers a seed draws.
pub const WORKERS_MAX: u64 = 5;
/// Most simulated milliseconds between two execution starts (the client's pace).
pub const START_GAP_MS_MAX: u64 = 200;
/// `--workload heavy`, the profile that reaches a store's concurrency bugs: fewest
/// workers a seed draws (each its own connection to the store).
pub const HEAVY_WORKERS_MIN: u64 = 4;
/// `--workload heavy`: most workers.
pub const HEAVY_WORKERS_MAX: u64 = 6;
/// `--workload heavy`: fewest executions, started within a burst (tens active at once).
pub const HEAVY_EXECUTIONS_MIN: u64 = 10;
/// `--workload heavy`: most executions.
pub const HEAVY_EXECUTIONS_MAX: u64 = 20;
/// `--workload heavy`: most simulated milliseconds between two starts, so the first
/// appends of every execution come as one burst of writes.
pub const HEAVY_START_GAP_MS_MAX: u64 = 10;
/// `--workload heavy`: the least crash chance a seed draws, per mille (capped by the
/// configured cap); every recovery takes a new fence, so executions see many fences.
pub const HEAVY_CRASH_PER_MILLE_MIN: u64 = 300;
/// `--workload heavy`: the least zombie chance a seed draws, per mille (capped).
pub const HEAVY_ZOMBIE_PER_MILLE_MIN: u64 = 300;
/// Fewest executions a seed starts.
pub const EXECUTIONS_MIN: u64 = 3;
/// Most executions a seed starts.
pub const EXECUTIONS_MAX: u64 = 6;
/// Most fault actions (bounces, partitions) a seed schedules.
pub const FAULT_ACTIONS_MAX: u64 = 12;
/// Longest partition, in simulated milliseconds.
pub const PARTITION_MS_MAX: u64 = 3_000;

/// Largest clock offset a host draws, ahead of or behind store time, in milliseconds.
/// Below the planted early timer store's 5 s (`EARLY_TIMER_MS`), so a timer store firing 5 s early is still early on
/// every host's clock.
pub const CLOCK_SKEW_MS_MAX: u64 = 1_000;
/// Chance (per mille) that a worker or the client runs on a skewed clock.
pub const CLOCK_SKEW_PER_MILLE: u64 = 500;
/// Highest message-loss rate a link between the store and another host draws, per
/// mille of messages (a lost message drops what is in flight on
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

#[derive(Debug, Clone)]
pub(crate) enum Fault {
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
pub(crate) struct Setup {
    pub(crate) workers: usize,
    pub(crate) scenarios: Vec<Scenario>,
    pub(crate) faults: WorkerFaults,
    pub(crate) hostile_per_mille: u64,
    pub(crate) resume_fault_per_mille: u64,
    pub(crate) latency_ms: (u64, u64),
    pub(crate) schedule: Vec<(u64, Fault)>,
    /// Clock offset per skewed host (`worker-<i>`, `client`), ms from store time.
    pub(crate) clock_skew_ms: BTreeMap<String, i64>,
    /// Message-loss rate per mille on the link between the store and each lossy host,
    /// in the safety phase.
    pub(crate) loss_per_mille: BTreeMap<String, u64>,
    /// Fault kinds switched off for this seed (swarm testing), in [`FAULT_KINDS`] order.
    pub(crate) swarm_off: Vec<&'static str>,
    /// Each worker's fold version over time: (from store time ms, schema minor),
    /// ascending; a worker not named folds at the current minor throughout.
    pub(crate) fold_versions: BTreeMap<String, Vec<(u64, u32)>>,
    /// Most simulated milliseconds the client waits between two execution starts.
    pub(crate) start_gap_ms_max: u64,
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

pub(crate) fn draw(seed: u64, config: &SimConfig) -> Setup {
    let mut rng = Rng::derive(seed, 0);
    let heavy = config.workload == Workload::Heavy;
    let (workers, n) = if heavy {
        (
            rng.range(HEAVY_WORKERS_MIN, HEAVY_WORKERS_MAX) as usize,
            rng.range(HEAVY_EXECUTIONS_MIN, HEAVY_EXECUTIONS_MAX) as usize,
        )
    } else {
        (
            rng.range(WORKERS_MIN, WORKERS_MAX) as usize,
            rng.range(EXECUTIONS_MIN, EXECUTIONS_MAX) as usize,
        )
    };
    let mut scenarios: Vec<Scenario> = (0..n).map(|i| workload::scenario(&mut rng, i)).collect();
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
    // The heavy workload keeps crashes and zombies frequent, so executions change hands
    // (and take a fence) many times.
    let floor = |min: u64, max: u64| if heavy { min.min(max) } else { 0 };
    let faults = WorkerFaults {
        crash_per_mille: rng.range(
            floor(HEAVY_CRASH_PER_MILLE_MIN, config.crash_per_mille_max),
            config.crash_per_mille_max,
        ),
        zombie_per_mille: rng.range(
            floor(HEAVY_ZOMBIE_PER_MILLE_MIN, config.zombie_per_mille_max),
            config.zombie_per_mille_max,
        ),
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
        start_gap_ms_max: if heavy {
            HEAVY_START_GAP_MS_MAX
        } else {
            START_GAP_MS_MAX
        },
    };
    apply_swarm(&mut setup);
    setup
}

pub(crate) fn schedule_json(seed: u64, setup: &Setup) -> Value {
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
        "startGapMsMax": setup.start_gap_ms_max,
    })
}

/// Reads a schedule file back into a setup: the workers, rates, latencies, faults and
/// flows come from the file, not from the seed (the seed only seeds the per-host
/// choices and the network's latency draws). Unknown worker names are refused.
pub(crate) fn setup_from_json(v: &Value, config: &SimConfig) -> Result<Setup, String> {
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
        start_gap_ms_max: optional("startGapMsMax", START_GAP_MS_MAX)?,
    };
    apply_swarm(&mut setup);
    Ok(setup)
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

/// The host name of worker `i`.
pub(crate) fn worker_name(i: usize) -> String {
    format!("worker-{i}")
}
