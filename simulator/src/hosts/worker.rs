//! The stateless worker: claims a package, rebuilds state from the store, runs the
//! reference runtime (crashing at an armed point, sometimes turning zombie), completes
//! the lease, and fires due timers when idle.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use loom_kernel::fold::Status;
use loom_kernel::runtime::{CrashPoint, EffectCall, FaultPlan, RunOutcome, Runtime, RuntimeError};
use loom_kernel::spi::{Clock, EventStore, ExecutionPackage};
use loom_kernel::{fold, EventEnvelope, FoldVersion};
use serde_json::{json, Value};

use super::runtime::{runtime_armed, CrashArm, LedgerTap};
use super::{WORKER_POLL_MS, ZOMBIE_PROBES_MAX};
use crate::clock::{SimClock, EPOCH_MS, STORE_TIME};
use crate::config::PlantedBug;
use crate::rng::Rng;
use crate::store_client::StoreClient;
use crate::workload::{crash_point_index, CountingEffect, Scenario, CRASH_POINTS, TOOL};
use crate::world::World;

/// Per-worker fault settings drawn from the seed.
#[derive(Debug, Clone, Copy)]
pub struct WorkerFaults {
    /// Chance (per mille) that a run is given an injected crash.
    pub crash_per_mille: u64,
    /// Chance (per mille) that a crashed run turns into a zombie.
    pub zombie_per_mille: u64,
    /// The lease duration, so a zombie knows how long to stall.
    pub lease_ms: u64,
    /// A latency spike on every append that carries a park, simulated ms (0: none).
    pub park_delay_ms: u64,
}

/// A stateless worker: claims a package, rebuilds state from the store, runs the
/// reference runtime, completes the lease; fires due timers when idle.
pub async fn worker(
    name: String,
    world: Arc<World>,
    scenarios: Arc<Vec<Scenario>>,
    faults_on: Arc<AtomicBool>,
    rng: Arc<Mutex<Rng>>,
    faults: WorkerFaults,
    fleet: Arc<Vec<(u64, FoldVersion)>>,
) -> super::HostResult {
    // One client and one runtime per worker incarnation (a bounce builds new ones):
    // the client's per-run bookkeeping is cleared before each run instead.
    let client = Arc::new(StoreClient::new(&name).with_park_delay(faults.park_delay_ms));
    // The host's own clock: timestamps, wake times and "is this timer due" read it.
    let clock = SimClock::skewed(world.skew_of(&name));
    let arm = CrashArm::default();
    // The fold version this worker runs at now (store time): the fleet plan's latest
    // step at or before now, current when it has none.
    let version_at = || {
        let now = (STORE_TIME.now_ms() - EPOCH_MS) as u64;
        fleet
            .iter()
            .rev()
            .find(|(at, _)| *at <= now)
            .map_or(FoldVersion::CURRENT, |(_, v)| *v)
    };
    let mut version = version_at();
    let build = |v| runtime_armed(&world, &scenarios, client.clone(), clock, arm.clone(), v);
    let mut rt = build(version);
    loop {
        tokio::time::sleep(Duration::from_millis(WORKER_POLL_MS)).await;
        let wanted = version_at();
        if wanted != version {
            // A rolling upgrade or rollback step: the worker comes back on another
            // binary (its runtime is rebuilt; nothing it held survives, as a restart).
            version = wanted;
            rt = build(version);
            world.book().fleet_switches += 1;
            world.trace(json!({ "t": STORE_TIME.now_ms() - EPOCH_MS, "fleet": name, "fold": version.to_string() }));
        }
        client.begin_run();
        let lease = match client.claim(&name).await {
            Ok(l) => l,
            Err(_) => continue,
        };
        let Some(lease) = lease else {
            let refused_before = rt.load_totals().refused;
            let _ = rt.fire_timers(clock.now_ms()).await;
            world.book().snapshot_refusals += rt.load_totals().refused - refused_before;
            continue;
        };
        let exec = lease.package.execution_id.clone();
        let Some(scenario) = scenarios.iter().find(|s| s.execution_id == exec) else {
            let _ = client.complete(&lease).await;
            continue;
        };
        let (crash, point, zombie) = {
            let mut r = rng.lock().unwrap_or_else(|p| p.into_inner());
            let crash = faults_on.load(Ordering::SeqCst) && r.chance(faults.crash_per_mille);
            let after = r.range(1, 6);
            let zombie = crash && r.chance(faults.zombie_per_mille);
            // Which crash point (CRASH_POINTS): after the n-th append, or one of the
            // three points of the run's first effect call.
            let point = r.range(0, CRASH_POINTS.len() as u64 - 1);
            (crash.then_some(after), point, zombie)
        };
        match (crash, point) {
            (None, _) => {}
            (Some(after), 0) => rt.inject_fault(FaultPlan {
                crash_after_appends: after,
            }),
            (Some(_), p) => {
                *arm.lock().unwrap_or_else(|p| p.into_inner()) = Some(match p {
                    1 => CrashPoint::BeforeEffect,
                    2 => CrashPoint::AfterEffectBeforeAppend,
                    _ => CrashPoint::AfterAppend,
                });
            }
        }
        let refused_before = rt.load_totals().refused;
        let outcome = drive(&world, &rt, &client, scenario, &lease.package).await;
        world.book().snapshot_refusals += rt.load_totals().refused - refused_before;
        if crash.is_some() {
            // The runtime lives across runs: an injected crash that no run consumed
            // (the execution was parked or ended, or no effect ran) must not fall on
            // a later run. A plan that never fires replaces it; the next run consumes
            // that. An armed effect crash is disarmed.
            rt.inject_fault(FaultPlan {
                crash_after_appends: u64::MAX,
            });
            arm.lock().unwrap_or_else(|p| p.into_inner()).take();
        }
        match outcome {
            Ok(Some(RunOutcome::Crashed { point })) => {
                {
                    let mut book = world.book();
                    book.injected_crashes += 1;
                    if let Some(i) = crash_point_index(&point) {
                        book.crash_points[i] += 1;
                    }
                }
                if zombie {
                    zombie_probe(&name, &world, &client, &exec, faults.lease_ms, clock).await;
                }
                // A crashed run leaves its lease to expire: the dispatcher re-queues
                // it and any worker picks it up (resume is migration, PLACE-04).
            }
            Ok(_) => {
                let _ = client.complete(&lease).await;
            }
            Err(_) => {}
        }
    }
}

async fn drive(
    world: &Arc<World>,
    rt: &Runtime<StoreClient, SimClock, StoreClient>,
    client: &StoreClient,
    scenario: &Scenario,
    package: &ExecutionPackage,
) -> Result<Option<RunOutcome>, RuntimeError> {
    let log = client
        .read(&package.execution_id)
        .await
        .map_err(RuntimeError::Store)?;
    if log.is_empty() && scenario.continues.is_some() {
        // A successor is started by its predecessor's run (or recovery), never here.
        return Ok(None);
    }
    if log.is_empty() {
        let flow_id = scenario.flow["flowId"].as_str().unwrap_or("");
        return rt
            .start(&scenario.execution_id, flow_id, scenario.input.clone())
            .await
            .map(Some);
    }
    let state = fold(&log);
    if state.status == Status::Continued {
        // Recovering a continued execution starts its successor if a crash came
        // before that start, and does nothing if it was started.
        let to = log
            .iter()
            .rev()
            .find(|e| e.event_type == "EXECUTION_CONTINUED")
            .and_then(|e| e.payload["continuedTo"].as_str())
            .unwrap_or_default();
        let unstarted = client.read(to).await.is_ok_and(|l| l.is_empty());
        let outcome = rt.recover(&scenario.execution_id).await.map(Some);
        let started = client.read(to).await.is_ok_and(|l| !l.is_empty());
        if unstarted && started {
            world.book().successor_starts += 1;
        }
        return outcome;
    }
    if state.status.is_terminal() || state.suspended_on().is_some() {
        return Ok(None);
    }
    let outcome = rt.recover(&scenario.execution_id).await.map(Some);
    // Planted runtime bugs (the worker standing in for a buggy runtime): after
    // recovering, invoke a step's effect that a correct runtime never invokes again.
    let first = |pick: &dyn Fn(&EventEnvelope) -> bool| log.iter().find(|e| pick(e));
    let replayed = match world.bug {
        // As a runtime that rebuilt its step table from the wrong point would: the
        // first completed step runs again.
        Some(PlantedBug::RuntimeRerunsCompletedEffect) => {
            first(&|e| e.event_type == "STEP_COMPLETED").map(|e| (e, 1))
        }
        // The attempt count restarts at 1 for the first step that was retried.
        Some(PlantedBug::RuntimeRestartsAttemptCount) => {
            first(&|e| e.event_type == "STEP_RETRYING").map(|e| (e, 1))
        }
        // A recorded typed failure is run again instead of substituted.
        Some(PlantedBug::RuntimeRerunsTypedFailure) => {
            first(&|e| e.event_type == "STEP_FAILED" && e.payload.get("channel").is_some())
                .map(|e| (e, 1))
        }
        _ => None,
    };
    if let Some((settled, attempt)) = replayed {
        let step = settled.payload["stepId"].as_str().unwrap_or("");
        let started = log.iter().find(|e| {
            e.event_type == "STEP_STARTED"
                && e.payload.get("stepId").and_then(Value::as_str) == Some(step)
        });
        let input = started
            .and_then(|e| e.payload.get("input").cloned())
            .unwrap_or(Value::Null);
        let tool = started
            .and_then(|e| e.payload.get("toolId").and_then(Value::as_str))
            .unwrap_or(TOOL);
        let client = Arc::new(StoreClient::new("buggy-runtime").on_machine(client.machine()));
        client.mark_read(&scenario.execution_id, log.len() as u64);
        LedgerTap::new(world.clone(), client).invoke(
            &CountingEffect,
            &EffectCall {
                execution_id: &scenario.execution_id,
                step_id: step,
                tool_id: tool,
                attempt,
                input: &input,
                resources: &Value::Null,
            },
        );
    }
    outcome
}

/// The zombie: stalls past its lease, then keeps trying to append with its old fence
/// token once a newer holder exists. A correct store refuses every such write
/// (PLACE-05).
async fn zombie_probe(
    name: &str,
    world: &World,
    client: &StoreClient,
    exec: &str,
    lease_ms: u64,
    clock: SimClock,
) {
    let Some(token) = client.fence_of(exec) else {
        return;
    };
    tokio::time::sleep(Duration::from_millis(lease_ms + WORKER_POLL_MS)).await;
    for _ in 0..ZOMBIE_PROBES_MAX {
        if let Ok(anchor) = client.observe(exec).await {
            if anchor.fence > token {
                let Ok(log) = client.read(exec).await else {
                    continue;
                };
                let seq = anchor.next_sequence;
                let envelope = EventEnvelope {
                    id: format!("{exec}:{seq}"),
                    workflow_id: log
                        .first()
                        .map(|e| e.workflow_id.clone())
                        .unwrap_or_default(),
                    execution_id: exec.to_owned(),
                    event_type: "sim.zombie".into(),
                    sequence: seq,
                    timestamp_ms: clock.now_ms(),
                    payload: json!({ "zombie": name, "fence": token }).into(),
                    metadata: None,
                };
                if let Err(e) = client
                    .raw_append(exec, seq, vec![envelope], Some(token))
                    .await
                {
                    if e.kind.name() == "fenced" {
                        world.book().zombie_refused += 1;
                        return;
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(WORKER_POLL_MS)).await;
    }
}
