//! Runtime scenarios: the driver behind the `runScenario` method, and the scrub rule
//! that makes a runtime log comparable across kernels.
//!
//! A scenario registers flow scripts (`docs/flow-scripts.md`), turns on
//! `kernel.features` flags, optionally wires a TimerStore, and runs driver steps
//! against one execution (`exec-1`) on a virtual clock that starts at
//! [`SCENARIO_CLOCK_START_MS`] and moves only by `advance` steps:
//!
//! | step | meaning |
//! |---|---|
//! | `{"op": "start", "flowId", "input"?}` | start the execution |
//! | `{"op": "crash", "afterAppends": n}` | the next run stops right after its n-th append |
//! | `{"op": "recover"}` | re-drive a crashed execution (`EXECUTION_RECOVERED`) |
//! | `{"op": "resume", "eventType", "payload"?, "metadata"?}` | deliver a resume |
//! | `{"op": "advance", "ms"}` | move the clock |
//! | `{"op": "fireTimers"}` | fire every due timer |
//! | `{"op": "cancel"}` | cancel the execution |
//! | `{"op": "resumeAs", "flowId", "eventType", "payload"?, "metadata"?, "migratedInput"?, "transformError"?}` | move the execution onto another flow (a transform that returns `migratedInput`, or fails with `transformError`) |
//! | `{"op": "deliver", "topic", "messageId", "message"?}` | deliver a message (Wave 2) |
//! | `{"op": "quarantine", "topic", "messageId"}` | hold a message (1.25.0) |
//! | `{"op": "release", "topic", "messageId", "how": "deliver" \| "discard" \| "auto", "operator"?}` | release the head of a topic's hold |
//!
//! The answer is `{"outcomes": [...], "log": [...]}`: one outcome per step and the final
//! log; when the scenario started other executions (a `continueAsNew` chain) their logs
//! are added as `"continued": {executionId: [...]}`, in id order. **Scrub rule**: every envelope's `id` and `timestamp` are replaced by the
//! strings `"<id>"` and `"<timestamp>"`; nothing else changes. Ids and append times are
//! an implementation's own business; payload times (`wakeAt`, `firedAt`) come from the
//! scenario's virtual clock and are compared as they are.

use crate::protocol::Answer;
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{
    block_on, Delivery, Diagnostic, LoadTotals, Release, RunOutcome, Runtime, RuntimeConfig,
    RuntimeError, SnapshotPolicy,
};
use loom_kernel::spi::{Clock, EventStore, ManualClock, SnapshotStore, TimerStore};
use loom_kernel::versions::KernelFeatures;
use loom_stores::{MemoryEventStore, MemorySnapshotStore, MemoryTimerStore};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Where the virtual clock of a runtime scenario starts, in epoch milliseconds.
pub const SCENARIO_CLOCK_START_MS: i64 = 1_000_000;
/// The execution id every runtime scenario drives.
pub const SCENARIO_EXECUTION_ID: &str = "exec-1";
/// The most driver steps one scenario may have.
pub const SCENARIO_STEPS_MAX: usize = 64;

/// `runScenario` on the reference kernel.
pub fn run_scenario_method(params: &Value) -> Answer {
    let input: crate::format::RuntimeInput = match crate::format::decode(params, "params", "") {
        Ok(i) => i,
        Err(e) => return Answer::bad_request(e.to_string()),
    };
    match run_scenario(&input) {
        Ok(v) => Answer::Result(v),
        Err(e) => Answer::bad_request(e),
    }
}

fn features(names: &[String]) -> Result<KernelFeatures, String> {
    let mut f = KernelFeatures::default();
    for n in names {
        match n.as_str() {
            "continueAsNew" => f.continue_as_new = true,
            "receive" => f.receive = true,
            "select" => f.select = true,
            "sha256FlowHash" => f.sha256_flow_hash = true,
            other => return Err(format!("unknown kernel feature `{other}`")),
        }
    }
    Ok(f)
}

/// Runs a scenario on the reference runtime; the answer is not scrubbed.
pub fn run_scenario(input: &crate::format::RuntimeInput) -> Result<Value, String> {
    run_scenario_on(input, None::<(Arc<MemorySnapshotStore>, SnapshotPolicy)>).map(|r| r.answer)
}

/// A scenario run with a SnapshotStore wired.
#[derive(Debug, Clone)]
pub struct SnapshottedRun {
    /// The `runScenario` answer, unscrubbed.
    pub answer: Value,
    /// What the runtime reported outside the log (a refused or unwritten snapshot is one).
    pub diagnostics: Vec<Diagnostic>,
    /// How the runtime's loads went: from snapshots, and how many tail events they folded.
    pub loads: LoadTotals,
}

/// Runs a scenario on the reference runtime with `snapshots` wired (REPLAY-15).
pub fn run_scenario_with_snapshots<P: SnapshotStore + 'static>(
    input: &crate::format::RuntimeInput,
    snapshots: Arc<P>,
    policy: SnapshotPolicy,
) -> Result<SnapshottedRun, String> {
    run_scenario_on(input, Some((snapshots, policy)))
}

fn run_scenario_on<P: SnapshotStore + 'static>(
    input: &crate::format::RuntimeInput,
    snapshots: Option<(Arc<P>, SnapshotPolicy)>,
) -> Result<SnapshottedRun, String> {
    if input.steps.len() > SCENARIO_STEPS_MAX {
        return Err(format!("more than {SCENARIO_STEPS_MAX} steps"));
    }
    let config = RuntimeConfig {
        features: features(&input.features)?,
        ..RuntimeConfig::default()
    };
    let clock = Arc::new(ManualClock::new(SCENARIO_CLOCK_START_MS));
    let store = Arc::new(MemoryEventStore::new());
    if input.timers {
        let mut rt = Runtime::new(Arc::clone(&store), Arc::clone(&clock), config)
            .with_timers(Arc::new(MemoryTimerStore::new()));
        if let Some((p, policy)) = snapshots {
            rt = rt.with_snapshots(p, policy);
        }
        register(&mut rt, &input.flows)?;
        let answer = drive(&rt, &clock, &input.steps)?;
        Ok(SnapshottedRun {
            answer,
            diagnostics: rt.diagnostics(),
            loads: rt.load_totals(),
        })
    } else {
        let mut rt = Runtime::new(Arc::clone(&store), Arc::clone(&clock), config);
        if let Some((p, policy)) = snapshots {
            rt = rt.with_snapshots(p, policy);
        }
        register(&mut rt, &input.flows)?;
        let answer = drive(&rt, &clock, &input.steps)?;
        Ok(SnapshottedRun {
            answer,
            diagnostics: rt.diagnostics(),
            loads: rt.load_totals(),
        })
    }
}

fn register<S: EventStore, C: Clock, T: TimerStore>(
    rt: &mut Runtime<S, C, T>,
    flows: &[Value],
) -> Result<(), String> {
    for (i, f) in flows.iter().enumerate() {
        rt.register_flow_json(f)
            .map_err(|e| format!("flows[{i}]: {e}"))?;
    }
    Ok(())
}

/// A run's outcome as JSON.
pub fn outcome_value(r: &Result<RunOutcome, RuntimeError>) -> Value {
    match r {
        Ok(RunOutcome::Completed { output }) => json!({"completed": output}),
        Ok(RunOutcome::Failed { error }) => json!({"failed": error}),
        Ok(RunOutcome::Parked { gate }) => json!({"parked": gate}),
        Ok(RunOutcome::Crashed { point }) => json!({"crashed": point}),
        Ok(RunOutcome::Diverged { .. }) => json!({"diverged": true}),
        Ok(RunOutcome::Cancelled) => json!("cancelled"),
        Ok(RunOutcome::Continued { to }) => json!({"continued": to}),
        Err(RuntimeError::Ingress(e)) => {
            json!({"refused": {"error": e.name(), "reason": e.reason().map(|r| r.as_str())}})
        }
        Err(e) => json!({"error": runtime_error_name(e)}),
    }
}

fn runtime_error_name(e: &RuntimeError) -> &'static str {
    match e {
        RuntimeError::Ingress(_) => "ingress",
        RuntimeError::Fenced(_) => "fenced",
        RuntimeError::Conflict(_) => "conflict",
        RuntimeError::Store(_) => "store",
        RuntimeError::UnknownFlow(_) => "unknown-flow",
        RuntimeError::ReservedExecutionId(_) => "reserved-execution-id",
        RuntimeError::AlreadyStarted(_) => "already-started",
        RuntimeError::NotStarted(_) => "not-started",
        RuntimeError::FlowCodeMismatch { .. } => "FlowCodeMismatchError",
        RuntimeError::TransformFailed(_) => "transform-failed",
        RuntimeError::Terminal(_) => "terminal",
    }
}

fn drive<S: EventStore, T: TimerStore>(
    rt: &Runtime<S, Arc<ManualClock>, T>,
    clock: &ManualClock,
    steps: &[Value],
) -> Result<Value, String> {
    let id = SCENARIO_EXECUTION_ID;
    let mut outcomes = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let op = step.get("op").and_then(Value::as_str).unwrap_or("");
        let out = match op {
            "start" => {
                let flow = step
                    .get("flowId")
                    .and_then(Value::as_str)
                    .ok_or(format!("steps[{i}]: start needs flowId"))?;
                let input = step.get("input").cloned().unwrap_or(Value::Null);
                outcome_value(&block_on(rt.start(id, flow, input)))
            }
            "crash" => {
                let n = step
                    .get("afterAppends")
                    .and_then(Value::as_u64)
                    .ok_or(format!("steps[{i}]: crash needs afterAppends"))?;
                rt.inject_fault(loom_kernel::runtime::FaultPlan {
                    crash_after_appends: n,
                });
                json!("armed")
            }
            "recover" => outcome_value(&block_on(rt.recover(id))),
            "resume" => {
                let ty = step
                    .get("eventType")
                    .and_then(Value::as_str)
                    .ok_or(format!("steps[{i}]: resume needs eventType"))?;
                let request = ResumeRequest {
                    event_type: ty.to_owned(),
                    payload: step.get("payload").cloned().unwrap_or(Value::Null),
                    metadata: step.get("metadata").and_then(Value::as_object).cloned(),
                };
                outcome_value(&block_on(rt.resume(id, request)))
            }
            "advance" => {
                let ms = step
                    .get("ms")
                    .and_then(Value::as_i64)
                    .ok_or(format!("steps[{i}]: advance needs ms"))?;
                json!({"now": clock.advance(ms)})
            }
            "fireTimers" => match block_on(rt.fire_timers(clock.now_ms())) {
                Ok(fired) => Value::Array(fired.iter().map(|(_, r)| outcome_value(r)).collect()),
                Err(e) => json!({"error": runtime_error_name(&e)}),
            },
            "cancel" => outcome_value(&block_on(rt.cancel(id))),
            "resumeAs" => {
                let text = |k: &str| {
                    step.get(k)
                        .and_then(Value::as_str)
                        .ok_or(format!("steps[{i}]: resumeAs needs {k}"))
                };
                let (flow, ty) = (text("flowId")?, text("eventType")?);
                let request = ResumeRequest {
                    event_type: ty.to_owned(),
                    payload: step.get("payload").cloned().unwrap_or(Value::Null),
                    metadata: step.get("metadata").and_then(Value::as_object).cloned(),
                };
                let migrated = step.get("migratedInput").cloned();
                let failure = step
                    .get("transformError")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let transform = move |_: &Value| match (&failure, &migrated) {
                    (Some(why), _) => Err(why.clone()),
                    (None, m) => Ok(m.clone().unwrap_or(Value::Null)),
                };
                let wants =
                    step.get("migratedInput").is_some() || step.get("transformError").is_some();
                let t: Option<loom_kernel::runtime::Transform<'_>> =
                    if wants { Some(&transform) } else { None };
                outcome_value(&block_on(rt.resume_as(id, request, flow, t)))
            }
            "deliver" => {
                let (topic, message_id) = topic_and_id(step, i, "deliver")?;
                let message = step.get("message").cloned().unwrap_or(Value::Null);
                match block_on(rt.deliver(id, topic, message_id, message)) {
                    Ok(Delivery::Resumed { wait_id, outcome }) => {
                        json!({"resumed": {"waitId": wait_id, "outcome": outcome_value(&Ok(outcome))}})
                    }
                    Ok(Delivery::Buffered) => json!("buffered"),
                    Ok(Delivery::Held) => json!("held"),
                    Ok(Delivery::Duplicate) => json!("duplicate"),
                    Ok(Delivery::Disabled) => json!("disabled"),
                    Err(e) => outcome_value(&Err(e)),
                }
            }
            "quarantine" => {
                let (topic, message_id) = topic_and_id(step, i, "quarantine")?;
                match block_on(rt.quarantine(id, topic, message_id)) {
                    Ok(done) => json!({ "quarantined": done }),
                    Err(e) => outcome_value(&Err(e)),
                }
            }
            "release" => {
                let (topic, message_id) = topic_and_id(step, i, "release")?;
                let operator = step
                    .get("operator")
                    .and_then(Value::as_str)
                    .unwrap_or("operator")
                    .to_owned();
                let how = match step.get("how").and_then(Value::as_str) {
                    Some("deliver") => Release::Deliver { operator },
                    Some("discard") => Release::Discard { operator },
                    Some("auto") => Release::Auto,
                    _ => {
                        return Err(format!(
                            "steps[{i}]: release needs how: deliver, discard or auto"
                        ))
                    }
                };
                match block_on(rt.release(id, topic, message_id, how)) {
                    Ok(done) => json!({ "released": done }),
                    Err(e) => outcome_value(&Err(e)),
                }
            }
            other => return Err(format!("steps[{i}]: unknown op `{other}`")),
        };
        outcomes.push(out);
    }
    let read = |execution: &str| {
        block_on(rt.store().read(execution))
            .map(|events| events.iter().map(|e| e.to_value()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let mut answer = json!({"outcomes": outcomes, "log": read(id)});
    let mut others: Vec<String> = block_on(rt.store().list_executions())
        .unwrap_or_default()
        .into_iter()
        .filter(|x| x != id)
        .collect();
    others.sort();
    if !others.is_empty() {
        let logs: Map<String, Value> = others
            .iter()
            .map(|x| (x.clone(), Value::Array(read(x))))
            .collect();
        answer["continued"] = Value::Object(logs);
    }
    Ok(answer)
}

fn topic_and_id<'a>(step: &'a Value, i: usize, op: &str) -> Result<(&'a str, &'a str), String> {
    let get = |k: &str| {
        step.get(k)
            .and_then(Value::as_str)
            .ok_or(format!("steps[{i}]: {op} needs {k}"))
    };
    Ok((get("topic")?, get("messageId")?))
}

/// Applies the scrub rule to a `runScenario` answer: every envelope's `id` and
/// `timestamp` become `"<id>"` and `"<timestamp>"`.
pub fn scrub_answer(answer: &Value) -> Result<Value, String> {
    let outcomes = answer
        .get("outcomes")
        .cloned()
        .ok_or("the runScenario answer has no `outcomes`")?;
    let log = answer
        .get("log")
        .and_then(Value::as_array)
        .ok_or("the runScenario answer has no `log` array")?;
    let log: Vec<Value> = log.iter().map(scrub_envelope).collect();
    let mut out = json!({"outcomes": outcomes, "log": log});
    if let Some(continued) = answer.get("continued") {
        let logs = continued
            .as_object()
            .ok_or("the runScenario answer's `continued` is not an object")?;
        let mut scrubbed = Map::new();
        for (execution, log) in logs {
            let log = log
                .as_array()
                .ok_or(format!("`continued.{execution}` is not a log array"))?;
            scrubbed.insert(
                execution.clone(),
                Value::Array(log.iter().map(scrub_envelope).collect()),
            );
        }
        out["continued"] = Value::Object(scrubbed);
    }
    Ok(out)
}

/// Scrubs one envelope.
pub fn scrub_envelope(e: &Value) -> Value {
    let mut e = e.clone();
    if let Value::Object(m) = &mut e {
        if m.contains_key("id") {
            m.insert("id".into(), json!("<id>"));
        }
        if m.contains_key("timestamp") {
            m.insert("timestamp".into(), json!("<timestamp>"));
        }
    }
    e
}
