//! The simulated hosts: scenario generation, the stateless workers and the client.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use loom_kernel::fold::{Status, INDOUBT_GATE};
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{
    block_on, CrashPoint, Effect, EffectCall, EffectMiddleware, EffectOutcome, EffectResult,
    FaultPlan, FlowScript, RunOutcome, Runtime, RuntimeConfig, RuntimeError, SnapshotPolicy,
};
use loom_kernel::spi::{Clock, EventStore, ExecutionPackage};
use loom_kernel::{fold, EventEnvelope, FoldVersion, KernelFeatures};
use serde_json::{json, Value};

use crate::net::{LedgerEntry, SimClock, StoreClient, World, EPOCH_MS, GATE_PREFIX, STORE_TIME};
use crate::rng::Rng;
use crate::{PlantedBug, Violation};

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
/// Every runtime writes a snapshot after each block of this many events and on park,
/// so the short generated flows load from snapshots too (REPLAY-15).
pub const SNAPSHOT_EVERY_EVENTS: u64 = 4;
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
    /// The flow, parsed once (the runtime's default features); `None` if it does not
    /// parse, which shows as an unknown flow when it runs.
    pub script: Option<Arc<FlowScript>>,
    /// For a successor (`<exec>~<n>`): the execution whose `continueAsNew` starts it.
    /// The runtime starts it, not the client; nobody starts it with a plain start.
    pub continues: Option<String>,
}

impl Scenario {
    /// A scenario running `flow`.
    pub fn new(execution_id: String, flow: Value, input: Value) -> Scenario {
        let script = FlowScript::parse(&flow, &sim_features()).ok().map(Arc::new);
        Scenario {
            execution_id,
            flow,
            input,
            script,
            continues: None,
        }
    }
}

/// Longest chain of `continueAsNew` a generated flow makes: an execution and at most
/// this many successors (`<exec>~1` .. `<exec>~N`).
pub const CONTINUATIONS_PER_CHAIN_MAX: u64 = 2;
/// One generated flow in this many ends in a `continueAsNew` chain.
pub const CONTINUING_FLOW_ONE_IN: u64 = 4;

/// The `continueAsNew` statements a flow makes, as successor inputs in hop order (the
/// generator's chain: the n-th one starts `<exec>~<n>`).
pub fn continuations_of(flow: &Value) -> Vec<Value> {
    fn walk(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(m) => {
                if m.get("op").and_then(Value::as_str) == Some("continueAsNew") {
                    out.push(m.get("input").cloned().unwrap_or(Value::Null));
                }
                m.values().for_each(|c| walk(c, out));
            }
            Value::Array(a) => a.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&flow["body"], &mut out);
    out.sort_by_key(|i| i["hop"].as_u64());
    out
}

/// The scenarios and, after each, its successors: the executions its `continueAsNew`
/// chain starts (`<exec>~1`, `<exec>~2`, ...), same flow. Workers, the client, the
/// sweeper's recoveries and the final checks look executions up in this list.
pub fn with_successors(scenarios: &[Scenario]) -> Vec<Scenario> {
    let mut out = Vec::new();
    for s in scenarios {
        out.push(s.clone());
        let mut prev = s.execution_id.clone();
        for (n, input) in continuations_of(&s.flow).into_iter().enumerate() {
            let id = format!("{}~{}", s.execution_id, n + 1);
            let mut next = Scenario::new(id.clone(), s.flow.clone(), input);
            next.continues = Some(prev);
            prev = id;
            out.push(next);
        }
    }
    out
}

/// The tail that makes a flow continue `hops` times: hop `h` (no `hop` in the input
/// for the first execution) continues as new with `hop: h + 1`; the last hop runs on
/// to the flow's `complete`.
fn continuation(index: usize, hops: u64) -> Value {
    let mut stmt = json!({ "op": "noop" });
    for h in (0..hops).rev() {
        let equals = if h == 0 { Value::Null } else { json!(h) };
        stmt = json!({ "op": "if", "ref": "input/hop", "equals": equals,
            "then": [{ "op": "continueAsNew", "input": { "n": index, "hop": h + 1 } }],
            "else": [stmt] });
    }
    stmt
}

/// The `kernel.features` every simulated runtime (and the crash-free reference) runs
/// with: `receive` and `select` on, so generated flows can wait for messages the
/// client delivers, and `continueAsNew`, so generated flows can continue as new.
pub fn sim_features() -> KernelFeatures {
    KernelFeatures {
        continue_as_new: true,
        receive: true,
        select: true,
        ..KernelFeatures::default()
    }
}

/// FNV-1a 64 over the parts: the simulator's stable, seed-free hash for values that
/// must be the same in every run of a scenario (effect outputs, client answers).
pub fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0xff)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// How many distinct values `v` and `k` take; flows branch on `== 0`.
pub const BRANCH_VALUES: u64 = 3;

/// What the effect of `step` returns: a function of the execution, the step and the
/// input only, so the crash-free reference run gets the same value. `v` is what flows
/// branch on.
pub fn effect_output(exec: &str, step: &str, input: &Value) -> Value {
    let v = fnv(&[exec, step, &input.to_string()]) % BRANCH_VALUES;
    json!({ "step": step, "input": input, "v": v })
}

/// The payload a well-behaved client answers gate `gate` of `exec` with. `k` is what
/// flows branch on.
pub fn answer(exec: &str, gate: &str) -> Value {
    json!({ "gate": gate, "k": fnv(&[exec, gate]) % BRANCH_VALUES })
}

fn step(id: String, i: u64) -> Value {
    json!({ "op": "run", "stepId": id, "toolId": TOOL, "input": { "i": i } })
}

fn note(i: u64, branch: &str) -> Value {
    json!({ "op": "emit", "eventType": "app.note", "payload": { "i": i, "branch": branch } })
}

/// Most failed attempts a generated retrying step sees before it succeeds.
pub const RETRY_FAILURES_MAX: u64 = 3;

/// A failed attempt of a scripted effect: an untyped error or a hang (a timeout).
fn failed_attempt(rng: &mut Rng) -> Value {
    if rng.chance(500) {
        json!({ "error": "flaky" })
    } else {
        json!({ "hang": true })
    }
}

/// Draws a flow whose control flow and output depend on the values it reads: step
/// outputs, decisions, resume answers and timer answers. Statements: steps (some
/// followed by a branch on their output), decisions (branched on), `app.note` emits
/// (some twice with identical content, on purpose), gates whose answers are bound and
/// branched on, 0 ms / short / long sleeps and `sleepUntil` in the past or ahead, and
/// scripted effects whose outcome is a function of the attempt only: steps that fail
/// or hang and are retried until they succeed, steps that always fail untyped (caught
/// by `*`), typed failures caught on their channel, in-doubt effects (the client
/// answers the verdict), and `parallel` with 2-3 branches. Every outcome depends on
/// (execution, step, attempt) alone, so the crash-free reference run reads the same
/// values; the output collects every value read, so a wrong value served anywhere
/// changes the result (PLACE-04).
pub fn scenario(rng: &mut Rng, index: usize) -> Scenario {
    let exec = format!("exec-{index}");
    let n = rng.range(2, FLOW_STATEMENTS_MAX);
    let mut body = Vec::new();
    let mut read = serde_json::Map::new();
    // Scripted effects by tool id: one tool per step, so each step's outcomes are its own.
    let mut effects = serde_json::Map::new();
    for i in 0..n {
        match rng.range(0, 17) {
            0..=3 => {
                let id = format!("s{i}");
                body.push(step(id.clone(), i));
                read.insert(id.clone(), json!({ "$ref": format!("steps.{id}.output") }));
                if rng.chance(500) {
                    // Branch on the served output: a different value takes the
                    // other branch (a different step, a different emit).
                    let alt = format!("s{i}b");
                    body.push(json!({ "op": "if", "ref": format!("steps.{id}.output/v"), "equals": 0,
                        "then": [note(i, "then")], "else": [step(alt.clone(), i), note(i, "else")] }));
                    read.insert(
                        alt.clone(),
                        json!({ "$ref": format!("steps.{alt}.output") }),
                    );
                }
            }
            4 => {
                let id = format!("d{i}");
                let choice = rng.range(0, 100);
                body.push(json!({ "op": "decide", "id": id, "choice": choice }));
                body.push(
                    json!({ "op": "if", "ref": format!("decisions.{id}"), "equals": choice,
                    "then": [note(i, "decided")], "else": [note(i, "undecided")] }),
                );
                read.insert(id.clone(), json!({ "$ref": format!("decisions.{id}") }));
            }
            5 => body.push(note(i, "plain")),
            6 => {
                // Identical content on purpose: both copies share one digest, and the
                // stamped copies must not outnumber the crash-free run's (EMIT-01).
                body.push(note(i, "twice"));
                body.push(note(i, "twice"));
            }
            7 | 8 => {
                let gate = format!("{GATE_PREFIX}{i}");
                let bind = format!("a{i}");
                body.push(json!({ "op": "suspend", "on": gate, "bind": bind }));
                read.insert(bind.clone(), json!({ "$ref": format!("vars.{bind}") }));
                if rng.chance(600) {
                    let alt = format!("s{i}g");
                    body.push(
                        json!({ "op": "if", "ref": format!("vars.{bind}/k"), "equals": 0,
                        "then": [step(alt.clone(), i)], "else": [note(i, "answered")] }),
                    );
                    read.insert(
                        alt.clone(),
                        json!({ "$ref": format!("steps.{alt}.output") }),
                    );
                }
            }
            9 => {
                // 0 ms sleeps are due the moment they are scheduled, before the park
                // lands: the window where a racing timer fire must keep the timer.
                let ms = match rng.range(0, 2) {
                    0 => 0,
                    1 => rng.range(1, 50),
                    _ => rng.range(100, 1500),
                };
                body.push(json!({ "op": "sleep", "ms": ms, "on": format!("sleep{i}") }));
            }
            10 => {
                // sleepUntil a fixed instant: in the past (due at once) or ahead. Its
                // answer `{firedAt: at}` is the same in every run, so the flow binds it.
                let at = if rng.chance(500) {
                    EPOCH_MS - rng.range(0, 10_000) as i64
                } else {
                    EPOCH_MS + rng.range(0, SLEEP_UNTIL_AHEAD_MS_MAX) as i64
                };
                let bind = format!("until{i}");
                body.push(json!({ "op": "sleepUntil", "at": at, "on": format!("until{i}"), "bind": bind }));
                read.insert(bind.clone(), json!({ "$ref": format!("vars.{bind}") }));
            }
            11 => {
                // Fails (error or hang) for the first attempts, then echoes its input;
                // the retry middleware allows enough attempts in one run. A crash
                // between attempts continues the count (attempt n+1), and any attempt
                // past the failures succeeds with the same value (PLACE-04).
                let id = format!("r{i}");
                let tool = format!("flaky{i}");
                let fails = rng.range(1, RETRY_FAILURES_MAX);
                let mut outcomes: Vec<Value> = (0..fails).map(|_| failed_attempt(rng)).collect();
                outcomes.push(json!({ "echo": true }));
                effects.insert(tool.clone(), json!({ "outcomes": outcomes }));
                let v = rng.range(0, BRANCH_VALUES - 1);
                body.push(json!({ "op": "run", "stepId": id, "toolId": tool,
                    "input": { "i": i, "v": v }, "retry": { "maxAttempts": fails + 1 } }));
                read.insert(id.clone(), json!({ "$ref": format!("steps.{id}.output") }));
                if rng.chance(500) {
                    body.push(
                        json!({ "op": "if", "ref": format!("steps.{id}.output/v"), "equals": 0,
                        "then": [note(i, "retried-0")], "else": [note(i, "retried-n")] }),
                    );
                }
            }
            12 => {
                // Always fails untyped (an error or a hang), with or without retries,
                // and the flow catches it with `*`. Untyped failures are re-executed
                // on every re-run (REPLAY-09), in the reference run too.
                let id = format!("f{i}");
                let tool = format!("broken{i}");
                effects.insert(tool.clone(), json!({ "outcomes": [failed_attempt(rng)] }));
                let mut st = json!({ "op": "run", "stepId": id, "toolId": tool, "input": { "i": i },
                    "catch": { "*": [note(i, "recovered")] } });
                if rng.chance(500) {
                    st["retry"] = json!({ "maxAttempts": 2 });
                }
                body.push(st);
                read.insert(id.clone(), json!({ "$ref": format!("steps.{id}.error") }));
            }
            13 => {
                // A typed failure caught on its channel (served on every re-run,
                // TYPED-09); sometimes after an untyped failure that is retried.
                let id = format!("t{i}");
                let tool = format!("typed{i}");
                let v = rng.range(0, BRANCH_VALUES - 1);
                let typed =
                    json!({ "typed": { "channel": "declined", "payload": { "i": i, "v": v } } });
                let retried = rng.chance(400);
                let outcomes = if retried {
                    json!([failed_attempt(rng), typed])
                } else {
                    json!([typed])
                };
                effects.insert(
                    tool.clone(),
                    json!({ "errors": { "declined": { "type": "object" } }, "outcomes": outcomes }),
                );
                let alt = format!("t{i}c");
                let mut st = json!({ "op": "run", "stepId": id, "toolId": tool, "input": { "i": i },
                    "catch": { "declined": [
                        note(i, "declined"),
                        { "op": "if", "ref": format!("steps.{id}.errorPayload/v"), "equals": 0,
                          "then": [step(alt.clone(), i)], "else": [note(i, "declined-n")] }
                    ] } });
                if retried {
                    st["retry"] = json!({ "maxAttempts": 2 });
                }
                body.push(st);
                read.insert(
                    id.clone(),
                    json!({ "channel": { "$ref": format!("steps.{id}.errorChannel") },
                        "payload": { "$ref": format!("steps.{id}.errorPayload") } }),
                );
                read.insert(
                    alt.clone(),
                    json!({ "$ref": format!("steps.{alt}.output") }),
                );
            }
            14 => {
                // In doubt on its first attempt: the execution parks on
                // `__loom_indoubt__` and the client answers a verdict (`completed` with
                // the echo, or `retry`, whose attempt echoes). Either way the step's
                // output is its input, also when a crash skips the in-doubt attempt.
                let id = format!("q{i}");
                let tool = format!("doubt{i}");
                effects.insert(
                    tool.clone(),
                    json!({ "outcomes": [{ "indoubt": true }, { "echo": true }] }),
                );
                let v = rng.range(0, BRANCH_VALUES - 1);
                body.push(json!({ "op": "run", "stepId": id, "toolId": tool, "input": { "i": i, "v": v } }));
                read.insert(id.clone(), json!({ "$ref": format!("steps.{id}.output") }));
            }
            15 => {
                // `parallel` with 2-3 branches, each a step and an emit; one branch's
                // step may be a retrying one.
                let mut branches = Vec::new();
                for b in 0..rng.range(2, 3) {
                    let id = format!("p{i}x{b}");
                    let mut branch = Vec::new();
                    if rng.chance(300) {
                        let tool = format!("flaky{i}x{b}");
                        effects.insert(
                            tool.clone(),
                            json!({ "outcomes": [failed_attempt(rng), { "echo": true }] }),
                        );
                        branch.push(json!({ "op": "run", "stepId": id, "toolId": tool,
                            "input": { "i": i, "b": b }, "retry": { "maxAttempts": 2 } }));
                    } else {
                        branch.push(step(id.clone(), i * 10 + b));
                    }
                    branch.push(note(i, &format!("branch{b}")));
                    read.insert(id.clone(), json!({ "$ref": format!("steps.{id}.output") }));
                    branches.push(Value::Array(branch));
                }
                body.push(json!({ "op": "parallel", "branches": branches }));
            }
            _ => {
                // Waiting for a message (`receive`, or `select` over two topics); the
                // client delivers `message(exec, topic)` to the first wait's topic,
                // sometimes before the execution parks (the message is buffered and
                // served from the log). The bound message is read.
                let bind = format!("m{i}");
                if rng.chance(500) {
                    body.push(json!({ "op": "receive", "topic": format!("t{i}"),
                        "waitId": format!("w{i}"), "bind": bind }));
                } else {
                    body.push(json!({ "op": "select", "bind": bind, "waits": [
                        { "waitId": format!("w{i}a"), "topic": format!("t{i}a") },
                        { "waitId": format!("w{i}b"), "topic": format!("t{i}b") }
                    ] }));
                }
                read.insert(bind.clone(), json!({ "$ref": format!("vars.{bind}") }));
            }
        }
    }
    // Some flows continue as new before completing (a chain of 1 to
    // CONTINUATIONS_PER_CHAIN_MAX successors). Drawn from a hash, not the rng, so the
    // seed's other draws stay as they were.
    let draw = fnv(&[&exec, "continueAsNew"]);
    if draw.is_multiple_of(CONTINUING_FLOW_ONE_IN) {
        let hops = 1 + (draw / CONTINUING_FLOW_ONE_IN) % CONTINUATIONS_PER_CHAIN_MAX;
        body.push(continuation(index, hops));
    }
    body.push(json!({ "op": "complete", "output": { "done": n, "read": read } }));
    let flow_id = format!("flow-{index}");
    let mut flow = json!({ "flowId": flow_id, "body": body });
    if !effects.is_empty() {
        flow["effects"] = Value::Object(effects);
    }
    Scenario::new(exec, flow, json!({ "n": index }))
}

/// Every crash point the runtime defines, as the coverage counters name them: the
/// injected `FaultPlan` crash after the n-th append of a run (`after-append-<n>`), and
/// the three points of an effect call (the flow-script `crash` modifiers).
pub const CRASH_POINTS: [&str; 4] = [
    "after-append-n",
    "before-effect",
    "after-effect-before-append",
    "after-append",
];

/// The effect-call crash point a worker arms for its next effect call (consumed by it).
pub type CrashArm = Arc<Mutex<Option<CrashPoint>>>;

/// The index in [`CRASH_POINTS`] of a crashed run's `point`.
pub fn crash_point_index(point: &str) -> Option<usize> {
    if point.starts_with("after-append-") {
        return Some(0);
    }
    CRASH_POINTS.iter().position(|p| *p == point)
}

/// The resume a well-behaved client sends to an execution parked on `park`, given its
/// log: at the in-doubt gate a verdict for the parked step and attempt (`completed`
/// with the step's input, which is what the generated in-doubt effects echo once they
/// settle, or `retry`, drawn from (execution, step) so the reference run gets the same),
/// at any other gate [`answer`].
pub fn resume_for(
    exec: &str,
    park: &serde_json::Map<String, Value>,
    log: &[EventEnvelope],
) -> ResumeRequest {
    let gate = park.get("on").and_then(Value::as_str).unwrap_or("");
    if gate != INDOUBT_GATE {
        return ResumeRequest::new(gate, answer(exec, gate));
    }
    let cond = park.get("condition").cloned().unwrap_or(Value::Null);
    let step = cond.get("stepId").and_then(Value::as_str).unwrap_or("");
    let attempt = cond.get("attempt").cloned().unwrap_or(json!(1));
    let mut verdict = json!({ "stepId": step, "attempt": attempt });
    if fnv(&[exec, step, "verdict"]).is_multiple_of(2) {
        let input = log
            .iter()
            .rev()
            .find(|e| {
                e.event_type == "STEP_STARTED"
                    && e.payload.get("stepId").and_then(Value::as_str) == Some(step)
            })
            .and_then(|e| e.payload.get("input").cloned())
            .unwrap_or(Value::Null);
        verdict["outcome"] = json!("completed");
        verdict["output"] = input;
    } else {
        verdict["outcome"] = json!("retry");
    }
    ResumeRequest::new(INDOUBT_GATE, json!({ "verdict": verdict }))
}

/// The message the client delivers on `topic` to `exec` (the same in every run) and its
/// id.
pub fn message(exec: &str, topic: &str) -> (String, Value) {
    (
        format!("{exec}/{topic}"),
        json!({ "topic": topic, "k": fnv(&[exec, topic]) % BRANCH_VALUES }),
    )
}

/// The topic the client delivers to when the execution is parked on a `receive` /
/// `select`: its first wait's (the fold keeps the waits in `_waits`).
pub fn wait_topic(state: &loom_kernel::ExecutionState) -> Option<String> {
    let gate = state.parked_gate()?;
    if !gate.starts_with("receive:") && gate != "__loom_select__" {
        return None;
    }
    state
        .variables
        .get(loom_kernel::fold::keys::WAITS)?
        .as_array()?
        .first()?
        .get("topic")?
        .as_str()
        .map(str::to_owned)
}

/// The topics a flow's top-level `receive` / `select` statements wait on first, in
/// order (the client delivers early messages to them).
pub fn topics_of(flow: &Value) -> Vec<String> {
    flow["body"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| match s["op"].as_str() {
            Some("receive") => s["topic"].as_str().map(str::to_owned),
            Some("select") => s["waits"][0]["topic"].as_str().map(str::to_owned),
            _ => None,
        })
        .collect()
}

/// The gates a flow's top-level `suspend` statements park on, in order (the client
/// sends early and reordered resumes to them).
pub fn gates_of(flow: &Value) -> Vec<String> {
    flow["body"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["op"] == "suspend")
        .filter_map(|s| s["on"].as_str().map(str::to_owned))
        .collect()
}

/// The effect of the `work` tool: a value that depends on (execution, step, input)
/// only.
pub struct CountingEffect;

impl Effect for CountingEffect {
    fn call(&self, call: &EffectCall<'_>) -> EffectResult {
        EffectResult::of(EffectOutcome::Value(effect_output(
            call.execution_id,
            call.step_id,
            call.input,
        )))
    }
}

/// The effect ledger's tap: a middleware around every real effect attempt (the `work`
/// tool and every scripted one) that writes the invocation to the ledger and checks, at
/// the moment of the call, that the log the run started from did not already settle
/// the step: a `STEP_COMPLETED` (REPLAY-01) or a typed `STEP_FAILED`, which must be
/// substituted with zero calls (TYPED-09). Untyped failures and unsettled attempts are
/// re-invoked legitimately (REPLAY-09), so they are not checked here.
pub struct LedgerTap {
    world: Arc<World>,
    client: Arc<StoreClient>,
    crash: CrashArm,
}

impl LedgerTap {
    /// A tap for a runtime over `client` (whose reads say what each run started from).
    pub fn new(world: Arc<World>, client: Arc<StoreClient>) -> LedgerTap {
        LedgerTap::armed(world, client, CrashArm::default())
    }

    /// A tap that also crashes the run at the effect-call point armed in `crash`
    /// (consumed by the next call of any tool).
    pub fn armed(world: Arc<World>, client: Arc<StoreClient>, crash: CrashArm) -> LedgerTap {
        LedgerTap {
            world,
            client,
            crash,
        }
    }

    /// Runs one attempt through `effect` and records it.
    pub fn invoke(&self, effect: &dyn Effect, call: &EffectCall<'_>) -> EffectResult {
        self.around(call, &mut |c| effect.call(c))
    }
}

fn outcome_kind(o: &EffectOutcome) -> (&'static str, Value) {
    match o {
        EffectOutcome::Value(v) => ("value", v.clone()),
        EffectOutcome::Typed { channel, payload } => {
            ("typed", json!({ "channel": channel, "payload": payload }))
        }
        EffectOutcome::Error(e) => ("error", json!(e)),
        EffectOutcome::Timeout => ("timeout", Value::Null),
        EffectOutcome::InDoubt => ("indoubt", Value::Null),
        EffectOutcome::Cancelled => ("cancelled", Value::Null),
    }
}

impl EffectMiddleware for LedgerTap {
    fn around(
        &self,
        call: &EffectCall<'_>,
        next: &mut dyn FnMut(&EffectCall<'_>) -> EffectResult,
    ) -> EffectResult {
        let crash = self.crash.lock().unwrap_or_else(|p| p.into_inner()).take();
        if crash == Some(CrashPoint::BeforeEffect) {
            // The worker dies before the effect runs: nothing was invoked, nothing is
            // written to the ledger.
            return EffectResult {
                crash,
                ..EffectResult::of(EffectOutcome::Value(Value::Null))
            };
        }
        let mut result = next(call);
        if crash.is_some() {
            // The two points after the invocation: the run stops there.
            result.crash = crash;
        }
        let (outcome, output) = outcome_kind(&result.outcome);
        self.world.book().ledger.push(LedgerEntry {
            execution_id: call.execution_id.to_owned(),
            step_id: call.step_id.to_owned(),
            tool_id: call.tool_id.to_owned(),
            attempt: call.attempt,
            input: call.input.clone(),
            outcome,
            output,
            t_ms: STORE_TIME.now_ms() - EPOCH_MS,
        });
        // The authoritative store is read directly; it never waits, so block_on
        // returns at once.
        let started_from = self.client.read_len(call.execution_id).unwrap_or(0);
        let log = block_on(self.world.events().read(call.execution_id)).unwrap_or_default();
        let settled = log.iter().find(|e| {
            e.sequence < started_from
                && e.payload.get("stepId").and_then(Value::as_str) == Some(call.step_id)
                && (e.event_type == "STEP_COMPLETED"
                    || (e.event_type == "STEP_FAILED" && e.payload.get("channel").is_some()))
        });
        if let Some(done) = settled {
            let (rule, what) = if done.event_type == "STEP_COMPLETED" {
                ("REPLAY-01", "STEP_COMPLETED")
            } else {
                ("TYPED-09", "a typed STEP_FAILED")
            };
            self.world.violate(Violation {
                rule: rule.into(),
                message: format!(
                    "step `{}` ran again (attempt {}) although {what} was at sequence {} of the log the run started from",
                    call.step_id, call.attempt, done.sequence
                ),
                execution_id: Some(call.execution_id.to_owned()),
                event_index: Some(done.sequence),
            });
        }
        result
    }
}

/// A runtime over a fresh client, with every scenario's flow, the `work` effect and the
/// ledger tap, reading the host clock `clock` (store time plus the host's offset).
pub fn runtime(
    world: &Arc<World>,
    scenarios: &[Scenario],
    client: Arc<StoreClient>,
    clock: SimClock,
) -> Runtime<StoreClient, SimClock, StoreClient> {
    runtime_armed(
        world,
        scenarios,
        client,
        clock,
        CrashArm::default(),
        FoldVersion::CURRENT,
    )
}

/// [`runtime`] whose counting effect crashes at the point armed in `crash`, folding as
/// a node of schema `fold` (a mixed fleet).
pub fn runtime_armed(
    world: &Arc<World>,
    scenarios: &[Scenario],
    client: Arc<StoreClient>,
    clock: SimClock,
    crash: CrashArm,
    fold: FoldVersion,
) -> Runtime<StoreClient, SimClock, StoreClient> {
    let config = RuntimeConfig {
        fencing: true,
        features: sim_features(),
        ..RuntimeConfig::default()
    };
    let mut rt = Runtime::new(client.clone(), clock, config)
        .with_timers(client.clone())
        .with_snapshots(client.clone(), SnapshotPolicy::every(SNAPSHOT_EVERY_EVENTS))
        .folding_at(fold);
    for s in scenarios {
        // A flow that does not parse shows as UnknownFlow when it runs.
        if let Some(script) = &s.script {
            rt.register_flow_shared(script.clone());
        }
    }
    rt.register_effect(TOOL, CountingEffect);
    rt.add_middleware(LedgerTap::armed(world.clone(), client, crash));
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
) -> turmoil::Result {
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
        let client = Arc::new(StoreClient::new("buggy-runtime"));
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

/// The client host: starts every execution, answers parked gates and in-doubt parks
/// (sometimes first with hostile resumes), and ends once every execution is terminal
/// after the safety phase, or at `deadline_ms`. In the safety phase it also sends resume
/// faults at `resume_fault_per_mille` each: early resumes (to the flow's next gate while
/// the execution runs, before the park lands), reordered ones (a later gate's answer
/// first), a duplicate right after an admitted answer, two concurrent resumes of one gate
/// from two clients, and resumes to executions that have ended.
pub async fn client(
    world: Arc<World>,
    scenarios: Arc<Vec<Scenario>>,
    faults_on: Arc<AtomicBool>,
    mut rng: Rng,
    hostile_per_mille: u64,
    resume_fault_per_mille: u64,
    deadline_ms: u64,
) -> turmoil::Result {
    let name = "client";
    for s in scenarios.iter().filter(|s| s.continues.is_none()) {
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
        // The deadline is the harness's, on store time, not the client's clock.
        let elapsed = (STORE_TIME.now_ms() - EPOCH_MS) as u64;
        if elapsed >= deadline_ms {
            return Ok(());
        }
        let faults = faults_on.load(Ordering::SeqCst);
        let resume_fault = |rng: &mut Rng| faults && rng.chance(resume_fault_per_mille);
        let mut all_terminal = true;
        for (i, s) in scenarios.iter().enumerate() {
            let exec = s.execution_id.as_str();
            let Ok(log) = StoreClient::new(name).read(exec).await else {
                all_terminal = false;
                continue;
            };
            if log.is_empty() && s.continues.is_some() {
                // A successor not started yet: its predecessor's run starts it.
                all_terminal = false;
                continue;
            }
            let state = fold(&log);
            let gates = gates_of(&s.flow);
            if state.status.is_terminal() {
                // A resume to an execution that has ended (its last gate's answer
                // again, or its first gate's): refused, nothing appended.
                if resume_fault(&mut rng) && !gates.is_empty() {
                    let g = last_answer[i].clone().unwrap_or_else(|| gates[0].clone());
                    world.book().resume_faults.finished += 1;
                    let request = ResumeRequest::new(g.clone(), answer(exec, &g));
                    must_refuse(&world, &scenarios, exec, request, "to an ended execution").await;
                }
                continue;
            }
            all_terminal = false;
            let Some(park) = state.suspended_on().cloned() else {
                // Running: an early resume to the next gate the flow will park on
                // (the first one not answered in the log). Refused while the park has
                // not landed (INGRESS-13); admitted if it landed in between.
                if resume_fault(&mut rng) {
                    let answered = |g: &String| log.iter().any(|e| &e.event_type == g);
                    if let Some(g) = gates.iter().find(|g| !answered(g)).cloned() {
                        early(&world, &scenarios, exec, &g, &mut last_answer[i]).await;
                    }
                }
                // An early message: the next topic the flow waits on gets its message
                // before the wait parks (buffered; the receive is served from the log).
                if resume_fault(&mut rng) {
                    let consumed = |t: &String| {
                        let id = message(exec, t).0;
                        log.iter().any(|e| {
                            e.event_type == "MESSAGE_CONSUMED"
                                && e.payload["messageId"] == id.as_str()
                        })
                    };
                    if let Some(t) = topics_of(&s.flow).iter().find(|t| !consumed(t)) {
                        world.book().resume_faults.early_messages += 1;
                        deliver(&world, &scenarios, exec, t).await;
                    }
                }
                continue;
            };
            if let Some(topic) = wait_topic(&state) {
                // A `receive` / `select` park: the client delivers the message (not a
                // resume), sometimes twice (a redelivery is a duplicate: nothing
                // appended).
                world.book().resume_faults.messages += 1;
                deliver(&world, &scenarios, exec, &topic).await;
                if resume_fault(&mut rng) {
                    // Consumed twice, it would answer a later wait on the topic or stay
                    // buffered for one: the bound values, hence PLACE-04, would differ.
                    world.book().resume_faults.duplicate_messages += 1;
                    deliver(&world, &scenarios, exec, &topic).await;
                }
                continue;
            }
            if park.get("wakeAt").is_some() {
                continue; // a timer answers this one
            }
            let Some(gate) = park.get("on").and_then(Value::as_str).map(str::to_owned) else {
                continue;
            };
            if faults && rng.chance(hostile_per_mille) {
                let request = match rng.range(0, 3) {
                    0 => ResumeRequest::new("no-such-gate", json!({})),
                    1 => ResumeRequest::new("STEP_COMPLETED", json!({ "stepId": "s0" })),
                    2 => ResumeRequest::new(
                        INDOUBT_GATE,
                        json!({ "verdict": { "stepId": "nope", "attempt": 9, "outcome": "completed" } }),
                    ),
                    _ => match &last_answer[i] {
                        Some(g) => ResumeRequest::new(g.clone(), answer(exec, g)),
                        None => ResumeRequest::new("no-such-gate", json!(null)),
                    },
                };
                hostile(&world, &scenarios, name, exec, request).await;
            }
            if resume_fault(&mut rng) {
                // Reordered: a later gate's answer arrives before this one's.
                let later = gates.iter().skip_while(|g| **g != gate).nth(1).cloned();
                if let Some(g) = later {
                    world.book().resume_faults.reordered += 1;
                    let request = ResumeRequest::new(g.clone(), answer(exec, &g));
                    must_refuse(&world, &scenarios, exec, request, "reordered").await;
                }
            }
            let request = resume_for(exec, &park, &log);
            let admitted = if resume_fault(&mut rng) {
                concurrent(&world, &scenarios, exec, request.clone()).await
            } else {
                let c = Arc::new(StoreClient::new(name));
                let rt = runtime(&world, &scenarios, c, SimClock::skewed(world.skew_of(name)));
                rt.resume(exec, request.clone()).await.is_ok()
            };
            if admitted {
                world.book().answers_sent += 1;
                last_answer[i] = Some(gate);
                if resume_fault(&mut rng) {
                    // The same answer again, right after it was admitted.
                    world.book().resume_faults.duplicate += 1;
                    must_refuse(&world, &scenarios, exec, request, "duplicate").await;
                }
            }
        }
        if all_terminal && !faults {
            return Ok(());
        }
    }
}

/// Delivers `message(exec, topic)` through a fresh client and runtime.
async fn deliver(world: &Arc<World>, scenarios: &[Scenario], exec: &str, topic: &str) {
    let c = Arc::new(StoreClient::new("client"));
    let rt = runtime(world, scenarios, c, client_clock(world));
    let (id, body) = message(exec, topic);
    let _ = rt.deliver(exec, topic, &id, body).await;
}

/// An early resume of gate `g`, which the execution has not parked on yet. Ingress
/// must refuse it while the execution runs (INGRESS-13) and append nothing
/// (INGRESS-15); if the park landed between the client's read and the resume's, it is
/// a proper answer.
async fn early(
    world: &Arc<World>,
    scenarios: &[Scenario],
    exec: &str,
    g: &str,
    last_answer: &mut Option<String>,
) {
    world.book().resume_faults.early += 1;
    let c = Arc::new(StoreClient::new("client"));
    let rt = runtime(world, scenarios, c.clone(), client_clock(world));
    match rt
        .resume(exec, ResumeRequest::new(g, answer(exec, g)))
        .await
    {
        Ok(_) => {
            let mut book = world.book();
            book.resume_faults.early_admitted += 1;
            book.answers_sent += 1;
            *last_answer = Some(g.to_owned());
        }
        Err(RuntimeError::Ingress(e)) => {
            world.book().resume_faults.early_refused += 1;
            refused_appends_nothing(world, &c, exec, g, &e.to_string());
        }
        Err(_) => {}
    }
}

/// Two clients resume the same gate at once. At most one may be admitted (the other is
/// refused by ingress, having read the log after the first landed, or by the store's
/// optimistic check), and the one refused appends nothing. Returns whether one was
/// admitted.
async fn concurrent(
    world: &Arc<World>,
    scenarios: &[Scenario],
    exec: &str,
    request: ResumeRequest,
) -> bool {
    world.book().resume_faults.concurrent += 1;
    let (ca, cb) = (
        Arc::new(StoreClient::new("client")),
        Arc::new(StoreClient::new("client-b")),
    );
    let (ra, rb) = (
        runtime(world, scenarios, ca.clone(), client_clock(world)),
        runtime(world, scenarios, cb.clone(), client_clock(world)),
    );
    let (a, b) = tokio::join!(
        ra.resume(exec, request.clone()),
        rb.resume(exec, request.clone())
    );
    // A client's first append is its resume batch: an append through it means the
    // resume was admitted and landed.
    let landed = |c: &StoreClient| c.appends.load(Ordering::SeqCst) > 0;
    if landed(&ca) && landed(&cb) {
        world.violate(Violation {
            rule: "INGRESS-03".into(),
            message: format!(
                "two concurrent resumes of `{}` were both admitted and appended",
                request.event_type
            ),
            execution_id: Some(exec.to_owned()),
            event_index: None,
        });
    }
    for (r, c) in [(&a, &ca), (&b, &cb)] {
        if let Err(RuntimeError::Ingress(e)) = r {
            world.book().resume_faults.refused += 1;
            refused_appends_nothing(world, c, exec, &request.event_type, &e.to_string());
        }
    }
    a.is_ok() || b.is_ok() || landed(&ca) || landed(&cb)
}

/// Sends a resume fault that ingress must refuse (a duplicate, a reordered answer, a
/// resume to an ended execution): admitting it is an INGRESS-03 violation (a gate
/// resume needs the execution parked on that gate), and the refusal must append
/// nothing (INGRESS-15).
async fn must_refuse(
    world: &Arc<World>,
    scenarios: &[Scenario],
    exec: &str,
    request: ResumeRequest,
    what: &str,
) {
    let c = Arc::new(StoreClient::new("client"));
    let rt = runtime(world, scenarios, c.clone(), client_clock(world));
    let kind = request.event_type.clone();
    let sent = request.clone();
    let admitted = if world.bug == Some(PlantedBug::IngressAdmitsEveryResume) {
        admit_blindly(&c, exec, &request).await
    } else {
        rt.resume(exec, request).await
    };
    match admitted {
        Ok(_) => {
            // Judged against the log this client read: the vector's input.
            let read = c.read_len(exec).unwrap_or(0);
            world
                .book()
                .ingress_admitted
                .push((exec.to_owned(), read, sent));
            world.violate(Violation {
                rule: "INGRESS-03".into(),
                message: format!("a {what} resume of `{kind}` was admitted"),
                execution_id: Some(exec.to_owned()),
                event_index: None,
            });
        }
        Err(RuntimeError::Ingress(e)) => {
            world.book().resume_faults.refused += 1;
            refused_appends_nothing(world, &c, exec, &kind, &e.to_string());
        }
        // A store error (a partition, a timeout) refused nothing.
        Err(_) => {}
    }
}

/// The planted [`PlantedBug::IngressAdmitsEveryResume`]: a gate that admits any resume
/// and appends it as it came (under a fence of its own).
async fn admit_blindly(
    c: &StoreClient,
    exec: &str,
    request: &ResumeRequest,
) -> Result<RunOutcome, RuntimeError> {
    let log = c.read(exec).await.map_err(RuntimeError::Store)?;
    let fence = c.acquire_fence(exec).await.map_err(RuntimeError::Store)?;
    let seq = log.last().map_or(0, |e| e.sequence + 1);
    let envelope = EventEnvelope {
        id: format!("{exec}:{seq}"),
        workflow_id: log
            .first()
            .map(|e| e.workflow_id.clone())
            .unwrap_or_default(),
        execution_id: exec.to_owned(),
        event_type: request.event_type.clone(),
        sequence: seq,
        timestamp_ms: STORE_TIME.now_ms(),
        payload: request.payload.clone(),
        metadata: request.metadata.clone(),
    };
    c.raw_append(exec, seq, vec![envelope], Some(fence.0))
        .await
        .map_err(RuntimeError::Store)?;
    Ok(RunOutcome::Parked {
        gate: request.event_type.clone(),
    })
}

/// The client host's clock (store time plus its offset).
fn client_clock(world: &World) -> SimClock {
    SimClock::skewed(world.skew_of("client"))
}

/// INGRESS-15: a refused resume appended nothing through its client.
fn refused_appends_nothing(world: &World, c: &StoreClient, exec: &str, kind: &str, why: &str) {
    let appended = c.appends.load(Ordering::SeqCst);
    if appended != 0 {
        world.violate(Violation {
            rule: "INGRESS-15".into(),
            message: format!("a refused `{kind}` resume ({why}) appended {appended} batch(es)"),
            execution_id: Some(exec.to_owned()),
            event_index: None,
        });
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
    let rt = runtime(
        world,
        scenarios,
        c.clone(),
        SimClock::skewed(world.skew_of(name)),
    );
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
