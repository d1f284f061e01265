//! The workload a seed runs: generated flow scripts that branch on every value they
//! read, the effects they call, the answers a well-behaved client gives, and the crash
//! points a run can stop at. Everything here is a function of the seed's draw or of
//! (execution, step, attempt), so the crash-free reference run reads the same values.

use loom_kernel::fold::INDOUBT_GATE;
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{Effect, EffectCall, EffectOutcome, EffectResult, FlowScript};
use loom_kernel::{EventEnvelope, KernelFeatures};
use serde_json::{json, Value};
use std::sync::Arc;

use crate::clock::EPOCH_MS;
use crate::rng::Rng;

/// Gates of generated flows start with this; their resume events carry the same type.
pub const GATE_PREFIX: &str = "gate";

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
