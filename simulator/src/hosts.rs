//! The simulated hosts: scenario generation, the stateless workers and the client.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{
    block_on, Effect, EffectCall, EffectOutcome, EffectResult, FaultPlan, RunOutcome, Runtime,
    RuntimeConfig, RuntimeError,
};
use loom_kernel::spi::{Clock, EventStore, ExecutionPackage};
use loom_kernel::{fold, EventEnvelope};
use serde_json::{json, Value};

use crate::net::{SimClock, StoreClient, World, EPOCH_MS};
use crate::rng::Rng;
use crate::Violation;

/// How often an idle worker polls the dispatcher, in simulated milliseconds.
pub const WORKER_POLL_MS: u64 = 40;
/// How often the client looks for parked executions to answer.
pub const CLIENT_POLL_MS: u64 = 60;
/// How often the dispatcher re-queues executions that are neither parked nor ended.
pub const SWEEP_MS: u64 = 400;
/// How many times a zombie looks for a newer fence before it gives up.
pub const ZOMBIE_PROBES_MAX: u32 = 20;
/// Statements per generated flow body, at most.
pub const FLOW_STATEMENTS_MAX: u64 = 7;
/// Latest `sleepUntil` instant a generated flow waits for, in simulated milliseconds
/// after the start.
pub const SLEEP_UNTIL_AHEAD_MS_MAX: u64 = 4_000;
/// The tool every generated step runs through (the counting effect).
pub const TOOL: &str = "work";

/// One generated execution: its id, its flow script and its input.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Execution id.
    pub execution_id: String,
    /// The flow script (JSON).
    pub flow: Value,
    /// The start input.
    pub input: Value,
}

/// Draws a flow with steps, decisions, emits, gates and timers.
pub fn scenario(rng: &mut Rng, index: usize) -> Scenario {
    let n = rng.range(2, FLOW_STATEMENTS_MAX);
    let mut body = Vec::new();
    for i in 0..n {
        let stmt = match rng.range(0, 11) {
            0..=3 => {
                json!({ "op": "run", "stepId": format!("s{i}"), "toolId": TOOL, "input": { "i": i } })
            }
            4 => json!({ "op": "decide", "id": format!("d{i}"), "choice": rng.range(0, 100) }),
            5 | 6 => json!({ "op": "emit", "eventType": "app.note", "payload": { "i": i } }),
            7 | 8 => json!({ "op": "suspend", "on": format!("gate{i}") }),
            9 => {
                // 0 ms sleeps are due the moment they are scheduled, before the park
                // lands: the window where a racing timer fire must keep the timer.
                let ms = match rng.range(0, 2) {
                    0 => 0,
                    1 => rng.range(1, 50),
                    _ => rng.range(100, 1500),
                };
                json!({ "op": "sleep", "ms": ms, "on": format!("sleep{i}") })
            }
            _ => {
                // sleepUntil a fixed instant: in the past (due at once) or ahead. Its
                // answer `{firedAt: at}` is the same in every run, so the flow binds it
                // and the final output carries it (checked against the reference run).
                let at = if rng.chance(500) {
                    EPOCH_MS - rng.range(0, 10_000) as i64
                } else {
                    EPOCH_MS + rng.range(0, SLEEP_UNTIL_AHEAD_MS_MAX) as i64
                };
                json!({ "op": "sleepUntil", "at": at, "on": format!("until{i}"), "bind": format!("until{i}") })
            }
        };
        body.push(stmt);
    }
    // The output reads every bound sleepUntil answer, so PLACE-04 compares them.
    let woke: Vec<Value> = body
        .iter()
        .filter_map(|st| st.get("bind").and_then(Value::as_str))
        .map(|b| json!({ "$ref": format!("vars.{b}") }))
        .collect();
    body.push(json!({ "op": "complete", "output": { "done": n, "woke": woke } }));
    let flow_id = format!("flow-{index}");
    Scenario {
        execution_id: format!("exec-{index}"),
        flow: json!({ "flowId": flow_id, "body": body }),
        input: json!({ "n": index }),
    }
}

/// The effect every step runs: it counts invocations per (execution, step) and checks
/// REPLAY-01 at the moment it is invoked.
pub struct CountingEffect {
    world: Arc<World>,
    client: Arc<StoreClient>,
}

impl Effect for CountingEffect {
    fn call(&self, call: &EffectCall<'_>) -> EffectResult {
        {
            let mut book = self.world.book();
            *book
                .effect_calls
                .entry((call.execution_id.to_owned(), call.step_id.to_owned()))
                .or_default() += 1;
        }
        // REPLAY-01: if the log this run started from already held STEP_COMPLETED for
        // the step, the run must have served it. The authoritative store is read
        // directly; it never waits, so block_on returns at once.
        let started_from = self.client.read_len(call.execution_id).unwrap_or(0);
        let log = block_on(self.world.events.read(call.execution_id)).unwrap_or_default();
        if let Some(done) = log.iter().find(|e| {
            e.sequence < started_from
                && e.event_type == "STEP_COMPLETED"
                && e.payload.get("stepId").and_then(Value::as_str) == Some(call.step_id)
        }) {
            self.world.violate(Violation {
                rule: "REPLAY-01".into(),
                message: format!(
                    "step `{}` ran again although STEP_COMPLETED was at sequence {} of the log the run started from",
                    call.step_id, done.sequence
                ),
                execution_id: Some(call.execution_id.to_owned()),
                event_index: Some(done.sequence),
            });
        }
        EffectResult::of(EffectOutcome::Value(
            json!({ "step": call.step_id, "input": call.input }),
        ))
    }
}

/// A runtime over a fresh client, with every scenario's flow and the counting effect.
pub fn runtime(
    world: &Arc<World>,
    scenarios: &[Scenario],
    client: Arc<StoreClient>,
) -> Runtime<StoreClient, SimClock, StoreClient> {
    let config = RuntimeConfig {
        fencing: true,
        ..RuntimeConfig::default()
    };
    let mut rt = Runtime::new(client.clone(), SimClock, config).with_timers(client.clone());
    for s in scenarios {
        // Generated flows always parse; a refusal would show as UnknownFlow later.
        let _ = rt.register_flow_json(&s.flow);
    }
    rt.register_effect(
        TOOL,
        CountingEffect {
            world: world.clone(),
            client,
        },
    );
    rt
}

/// Per-worker fault settings drawn from the seed.
#[derive(Debug, Clone, Copy)]
pub struct WorkerFaults {
    /// Chance (per mille) that a run is given an injected crash.
    pub crash_per_mille: u64,
    /// Chance (per mille) that a crashed run turns into a zombie.
    pub zombie_per_mille: u64,
    /// The lease duration, so a zombie knows how long to stall.
    pub lease_ms: u64,
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
) -> turmoil::Result {
    loop {
        tokio::time::sleep(Duration::from_millis(WORKER_POLL_MS)).await;
        let client = Arc::new(StoreClient::new(&name));
        let lease = match client.claim(&name).await {
            Ok(l) => l,
            Err(_) => continue,
        };
        let Some(lease) = lease else {
            let rt = runtime(&world, &scenarios, client);
            let _ = rt.fire_timers(SimClock.now_ms()).await;
            continue;
        };
        let exec = lease.package.execution_id.clone();
        let Some(scenario) = scenarios.iter().find(|s| s.execution_id == exec) else {
            let _ = client.complete(&lease).await;
            continue;
        };
        let (crash, zombie) = {
            let mut r = rng.lock().unwrap_or_else(|p| p.into_inner());
            let crash = faults_on.load(Ordering::SeqCst) && r.chance(faults.crash_per_mille);
            let after = r.range(1, 6);
            let zombie = crash && r.chance(faults.zombie_per_mille);
            (crash.then_some(after), zombie)
        };
        let rt = runtime(&world, &scenarios, client.clone());
        if let Some(after) = crash {
            rt.inject_fault(FaultPlan {
                crash_after_appends: after,
            });
        }
        let outcome = drive(&rt, &client, scenario, &lease.package).await;
        match outcome {
            Ok(Some(RunOutcome::Crashed { .. })) => {
                world.book().injected_crashes += 1;
                if zombie {
                    zombie_probe(&name, &world, &client, &exec, faults.lease_ms).await;
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
    rt: &Runtime<StoreClient, SimClock, StoreClient>,
    client: &StoreClient,
    scenario: &Scenario,
    package: &ExecutionPackage,
) -> Result<Option<RunOutcome>, RuntimeError> {
    let log = client
        .read(&package.execution_id)
        .await
        .map_err(RuntimeError::Store)?;
    if log.is_empty() {
        let flow_id = scenario.flow["flowId"].as_str().unwrap_or("");
        return rt
            .start(&scenario.execution_id, flow_id, scenario.input.clone())
            .await
            .map(Some);
    }
    let state = fold(&log);
    if state.status.is_terminal() || state.suspended_on().is_some() {
        return Ok(None);
    }
    rt.recover(&scenario.execution_id).await.map(Some)
}

/// The zombie: stalls past its lease, then keeps trying to append with its old fence
/// token once a newer holder exists. A correct store refuses every such write
/// (PLACE-05).
async fn zombie_probe(name: &str, world: &World, client: &StoreClient, exec: &str, lease_ms: u64) {
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
                    timestamp_ms: SimClock.now_ms(),
                    payload: json!({ "zombie": name, "fence": token }),
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

/// The payload a well-behaved client answers gate `gate` with.
pub fn answer(gate: &str) -> Value {
    json!({ "gate": gate })
}

/// The client host: starts every execution, answers parked gates (sometimes first
/// with hostile resumes), and ends once every execution is terminal after the safety
/// phase, or at `deadline_ms`.
pub async fn client(
    world: Arc<World>,
    scenarios: Arc<Vec<Scenario>>,
    faults_on: Arc<AtomicBool>,
    mut rng: Rng,
    hostile_per_mille: u64,
    deadline_ms: u64,
) -> turmoil::Result {
    let name = "client";
    for s in scenarios.iter() {
        let package = ExecutionPackage {
            execution_id: s.execution_id.clone(),
            flow_id: s.flow["flowId"].as_str().unwrap_or("").to_owned(),
            resume_hint: None,
            compute_target: None,
        };
        // Retry until the store takes it: a start that is never dispatched would
        // make the liveness check meaningless.
        while StoreClient::new(name).dispatch(&package).await.is_err() {
            tokio::time::sleep(Duration::from_millis(CLIENT_POLL_MS)).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.range(0, 200))).await;
    }
    let mut last_answer: Vec<Option<String>> = vec![None; scenarios.len()];
    loop {
        tokio::time::sleep(Duration::from_millis(CLIENT_POLL_MS)).await;
        let elapsed = (SimClock.now_ms() - EPOCH_MS) as u64;
        if elapsed >= deadline_ms {
            return Ok(());
        }
        let faults = faults_on.load(Ordering::SeqCst);
        let mut all_terminal = true;
        for (i, s) in scenarios.iter().enumerate() {
            let Ok(log) = StoreClient::new(name).read(&s.execution_id).await else {
                all_terminal = false;
                continue;
            };
            let state = fold(&log);
            if !state.status.is_terminal() {
                all_terminal = false;
            }
            let Some(park) = state.suspended_on() else {
                continue;
            };
            if park.get("wakeAt").is_some() {
                continue; // a timer answers this one
            }
            let Some(gate) = park.get("on").and_then(Value::as_str).map(str::to_owned) else {
                continue;
            };
            if faults && rng.chance(hostile_per_mille) {
                let request = match rng.range(0, 2) {
                    0 => ResumeRequest::new("no-such-gate", json!({})),
                    1 => ResumeRequest::new("STEP_COMPLETED", json!({ "stepId": "s0" })),
                    _ => match &last_answer[i] {
                        Some(g) => ResumeRequest::new(g.clone(), answer(g)),
                        None => ResumeRequest::new("no-such-gate", json!(null)),
                    },
                };
                hostile(&world, &scenarios, name, &s.execution_id, request).await;
            }
            let c = Arc::new(StoreClient::new(name));
            let rt = runtime(&world, &scenarios, c);
            if rt
                .resume(
                    &s.execution_id,
                    ResumeRequest::new(gate.clone(), answer(&gate)),
                )
                .await
                .is_ok()
            {
                last_answer[i] = Some(gate);
            }
        }
        if all_terminal && !faults {
            return Ok(());
        }
    }
}

/// Sends a resume that ingress must refuse, and checks the refusal appended nothing
/// (INGRESS-15).
async fn hostile(
    world: &Arc<World>,
    scenarios: &[Scenario],
    name: &str,
    exec: &str,
    request: ResumeRequest,
) {
    let c = Arc::new(StoreClient::new(name));
    let rt = runtime(world, scenarios, c.clone());
    let kind = request.event_type.clone();
    if let Err(RuntimeError::Ingress(e)) = rt.resume(exec, request).await {
        world.book().hostile_refused += 1;
        let appended = c.appends.load(Ordering::SeqCst);
        if appended != 0 {
            world.violate(Violation {
                rule: "INGRESS-15".into(),
                message: format!("a refused `{kind}` resume ({e}) appended {appended} batch(es)"),
                execution_id: Some(exec.to_owned()),
                event_index: None,
            });
        }
    }
}
