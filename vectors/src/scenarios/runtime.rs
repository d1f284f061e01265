//! Runtime scenarios: flow scripts plus driver steps (start, crash, recover, resume,
//! timers) run on the reference runtime; the scrubbed final log is the expectation.

use crate::format::Kind;
use crate::generate::Scenario;
use serde_json::{json, Value};

fn r(id: &str, rules: &[&str], description: &str, body: Value, steps: Value) -> Scenario {
    rt(
        id,
        rules,
        description,
        json!({"flowId": "f", "body": body}),
        steps,
        false,
    )
}

fn rt(
    id: &str,
    rules: &[&str],
    description: &str,
    flow: Value,
    steps: Value,
    timers: bool,
) -> Scenario {
    let mut input = json!({"flows": [flow], "steps": steps});
    if timers {
        input["timers"] = json!(true);
    }
    Scenario::new(
        Kind::Runtime,
        format!("runtime-{id}"),
        rules,
        description,
        input,
    )
    .rests_by(super::runtime_points)
}

fn start() -> Value {
    json!({"op": "start", "flowId": "f", "input": {"n": 1}})
}
fn resume(gate: &str, payload: Value) -> Value {
    json!({"op": "resume", "eventType": gate, "payload": payload})
}
fn crash(n: u64) -> Value {
    json!({"op": "crash", "afterAppends": n})
}
fn run(id: &str) -> Value {
    json!({"op": "run", "stepId": id})
}
fn suspend(on: &str) -> Value {
    json!({"op": "suspend", "on": on})
}
fn emit(t: &str, payload: Value) -> Value {
    json!({"op": "emit", "eventType": t, "payload": payload})
}
fn recover() -> Value {
    json!({"op": "recover"})
}

/// Every runtime scenario.
pub fn scenarios() -> Vec<Scenario> {
    let mut v = Vec::new();
    v.push(r("replay01-resume-reruns-served", &["REPLAY-01", "REPLAY-02", "REPLAY-17"], "A resume re-runs the flow: the completed step is served, not re-run; the second step runs once.",
        json!([run("a"), suspend("g"), run("b"), {"op": "complete", "output": {"$ref": "steps.b.output"}}]),
        json!([start(), resume("g", json!(1))])));
    v.push(r(
        "replay03-run-and-execute",
        &["REPLAY-03"],
        "execute writes the same STEP_* events as run.",
        json!([{"op": "execute", "stepId": "a", "input": {"k": 1}}, {"op": "complete"}]),
        json!([start()]),
    ));
    v.push(r("replay04-decision-served", &["REPLAY-04", "FOLD-38"], "A decision is recorded once and served on replay.",
        json!([{"op": "decide", "id": "d", "choice": "x"}, suspend("g"), {"op": "complete", "output": {"$ref": "decisions.d"}}]),
        json!([start(), resume("g", json!(null))])));
    v.push(r(
        "replay06-gates-in-order",
        &["REPLAY-06", "FOLD-15"],
        "Three gates and two resumes: gates 1-2 pass with their own payloads, gate 3 parks.",
        json!([suspend("g1"), suspend("g2"), suspend("g3")]),
        json!([start(), resume("g1", json!("A")), resume("g2", json!("B"))]),
    ));
    v.push(r("replay09-untyped-failure-reruns", &["REPLAY-09", "FOLD-09"], "An untyped failure caught, then a park: after the resume the failed step runs again as attempt 2.",
        json!({"flowId": "f", "effects": {"a": {"outcomes": [{"error": "flaky"}, {"value": 2}]}}, "body": [{"op": "run", "stepId": "a", "catch": {"*": []}}, suspend("g")]}),
        json!([])));
    v.pop();
    v.push(rt("replay09-untyped-failure-reruns", &["REPLAY-09", "FOLD-09"], "An untyped failure caught, then a park: after the resume the failed step runs again as attempt 2.",
        json!({"flowId": "f", "effects": {"a": {"outcomes": [{"error": "flaky"}, {"value": 2}]}}, "body": [{"op": "run", "stepId": "a", "catch": {"*": []}}, suspend("g")]}),
        json!([start(), resume("g", json!(1))]), false));
    v.push(rt("typed09-substitution-on-replay", &["TYPED-09", "TYPED-06", "TYPED-16"], "A typed failure is substituted on replay: the catch branch re-runs with zero new events for the step.",
        json!({"flowId": "f", "effects": {"t": {"errors": {"c": {"type": "object"}}, "outcomes": [{"typed": {"channel": "c", "payload": {"why": "no"}}}]}}, "body": [{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": [suspend("g1")]}}, suspend("g2")]}),
        json!([start(), resume("g1", json!("one")), resume("g2", json!("two"))]), false));
    v.push(rt("typed10-same-id-live-substituted", &["TYPED-10"], "A second run of a typed-failed id in the same run is substituted; the effect runs once.",
        json!({"flowId": "f", "effects": {"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 1}}]}}, "body": [{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": []}}, {"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": []}}, {"op": "complete"}]}),
        json!([start()]), false));
    v.push(rt("typed05-undeclared-channel-untyped", &["TYPED-05", "TYPED-04"], "A throw on an undeclared channel degrades to an untyped STEP_FAILED.",
        json!({"flowId": "f", "effects": {"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "other", "payload": 1}}]}}, "body": [{"op": "run", "stepId": "a", "toolId": "t", "catch": {"*": []}}, {"op": "complete"}]}),
        json!([start()]), false));
    v.push(rt("typed07-invalid-payload-untyped", &["TYPED-07"], "A payload the channel schema refuses degrades to untyped; no channel is recorded.",
        json!({"flowId": "f", "effects": {"t": {"errors": {"c": {"type": "object", "required": ["code"]}}, "outcomes": [{"typed": {"channel": "c", "payload": {}}}]}}, "body": [{"op": "run", "stepId": "a", "toolId": "t", "catch": {"*": []}}, {"op": "complete"}]}),
        json!([start()]), false));
    v.push(r(
        "emit01-once-across-resume",
        &["EMIT-01", "EMIT-05", "EMIT-06", "EMIT-09"],
        "An emit before a gate is stamped and not appended again when the resume re-runs the flow.",
        json!([emit("X", json!({"a": 1})), suspend("g"), {"op": "complete"}]),
        json!([start(), resume("g", json!(1))]),
    ));
    v.push(r(
        "emit03-segments-differ",
        &["EMIT-03", "EMIT-05"],
        "emit; suspend; emit with identical payloads: two digests (segments 0 and 1).",
        json!([emit("X", json!(1)), suspend("g"), emit("X", json!(1)), {"op": "complete"}]),
        json!([start(), resume("g", json!(null))]),
    ));
    v.push(r("emit06-served-after-crash", &["EMIT-06", "EMIT-01", "EMIT-09"], "A crash right after a stamped emit, then recovery: the step is served, nothing ran live in the segment, so the logged emit is served and not appended again.",
        json!([run("a"), emit("X", json!(1)), suspend("g")]),
        json!([crash(4), start(), recover()])));
    v.push(rt("emit07-appended-after-live-work", &["EMIT-07", "EMIT-08", "REPLAY-09"], "An untyped failure blocks the first emit's stamp; on resume the failed step runs again live, so the emit is appended again, now stamped.",
        json!({"flowId": "f", "effects": {"a": {"outcomes": [{"error": "flaky"}, {"value": 2}]}}, "body": [{"op": "run", "stepId": "a", "catch": {"*": []}}, emit("X", json!(1)), suspend("g"), {"op": "complete"}]}),
        json!([start(), resume("g", json!(1))]), false));
    v.push(r("emit08-untyped-failure-blocks-stamp", &["EMIT-08", "EMIT-10"], "An untyped failure earlier in the run blocks stamping.",
        json!({"flowId": "f", "effects": {"a": {"outcomes": [{"error": "x"}]}}, "body": [{"op": "run", "stepId": "a", "catch": {"*": []}}, emit("X", json!(1)), {"op": "complete"}]})
            ["body"].clone(),
        json!([start()])));
    v.pop();
    v.push(rt("emit08-untyped-failure-blocks-stamp", &["EMIT-08", "EMIT-10"], "An untyped failure earlier in the run blocks stamping.",
        json!({"flowId": "f", "effects": {"a": {"outcomes": [{"error": "x"}]}}, "body": [{"op": "run", "stepId": "a", "catch": {"*": []}}, emit("X", json!(1)), {"op": "complete"}]}),
        json!([start()]), false));
    v.push(rt("emit10-typed-failure-does-not-block", &["EMIT-10", "EMIT-09"], "A typed failure is a served outcome: the emit after it is stamped.",
        json!({"flowId": "f", "effects": {"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 1}}]}}, "body": [{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": []}}, emit("X", json!(1)), {"op": "complete"}]}),
        json!([start()]), false));
    v.push(r(
        "emit13-opaque-payload",
        &["EMIT-13"],
        "A payload with no JSON form is appended unstamped and appended again on every re-run.",
        json!([{"op": "emit", "eventType": "O", "opaque": true}, suspend("g"), {"op": "complete"}]),
        json!([start(), resume("g", json!(null))]),
    ));
    v.push(r("emit14-kernel-kind-never-stamped", &["EMIT-14"], "A flow-level DECISION_RECORDED emit is never stamped.",
        json!([{"op": "emit", "eventType": "DECISION_RECORDED", "payload": {"id": "k", "choice": 1}}, {"op": "complete"}]),
        json!([start()])));
    v.push(r("emit16-stream-and-ui", &["EMIT-16", "EMIT-05"], "stream and ui share the emit identity and stamping.",
        json!([{"op": "stream", "eventType": "S", "payload": 1}, {"op": "ui", "eventType": "U", "payload": {"card": 1}}, suspend("g"), {"op": "complete"}]),
        json!([start(), resume("g", json!(null))])));
    v.push(r("ingress13-resume-before-park", &["INGRESS-13", "INGRESS-15"], "A resume while the execution runs (crashed before it parked) is refused, nothing appended; after recovery parks it, the same resume is accepted.",
        json!([run("a"), suspend("g"), {"op": "complete"}]),
        json!([crash(3), start(), resume("g", json!(1)), recover(), resume("g", json!(1))])));
    v.push(r("ingress06-recover-records-nothing", &["INGRESS-06", "REPLAY-01"], "Recovering a crashed execution records no EXECUTION_RESUMED and serves the completed step.",
        json!([run("a"), run("b"), {"op": "complete"}]),
        json!([crash(4), start(), recover()])));
    v.push(rt("replay10-timer-wakes-timed-park", &["REPLAY-10", "REPLAY-12", "INGRESS-04"], "A timed suspend records wakeAt = now + timeout; advancing the clock and firing timers wakes it with {firedAt: wakeAt}.",
        json!({"flowId": "f", "body": [{"op": "suspend", "on": "g", "timeout": 500}, {"op": "complete"}]}),
        json!([start(), {"op": "advance", "ms": 499}, {"op": "fireTimers"}, {"op": "advance", "ms": 1}, {"op": "fireTimers"}]), true));
    v.push(rt("replay10-sleep", &["REPLAY-10", "REPLAY-11"], "sleep always records wakeAt; the wake's passthrough comes from the log.",
        json!({"flowId": "f", "body": [{"op": "sleep", "ms": 100}, {"op": "complete", "output": "woke"}]}),
        json!([start(), {"op": "advance", "ms": 100}, {"op": "fireTimers"}]), true));
    v.push(r("replay08-human-step", &["REPLAY-08", "INGRESS-35"], "suspend A; human step H; suspend B, each answered in order; the human park records condition.stepId.",
        json!([suspend("A"), {"op": "run", "stepId": "H", "kind": "human", "gate": "H"}, suspend("B"), {"op": "complete"}]),
        json!([start(), resume("A", json!("a")), resume("H", json!("h")), resume("B", json!("b"))])));
    v.push(r(
        "ingress35-caller-condition-stripped",
        &["INGRESS-35"],
        "ctx.suspend strips a caller-supplied condition.stepId.",
        json!([{"op": "suspend", "on": "g", "condition": {"stepId": "x", "note": 1}}]),
        json!([start()]),
    ));
    v.push(r("typed11-retry-new-id", &["TYPED-11"], "A deliberate retry under a new id is a new frame and a new invocation.",
        json!([{"op": "run", "stepId": "a"}, {"op": "run", "stepId": "a#retry:1"}, {"op": "complete"}]),
        json!([start()])));
    v.push(r("replay17-park-is-durable", &["REPLAY-17"], "The park is in the log before the runner gives up control: the log ends with EXECUTION_SUSPENDED on the gate.",
        json!([run("a"), suspend("g")]),
        json!([start()])));
    v.push(rt("res05-meter", &["RES-01", "RES-04"], "An effect's measured resources are written as RESOURCE_METERED with only the measured dimensions.",
        json!({"flowId": "f", "effects": {"a": {"outcomes": [{"value": 1, "meter": {"tokens": 12}}]}}, "body": [run("a"), {"op": "complete"}]}),
        json!([start()]), false));
    v.push(rt("fold33-code-fingerprint", &["FOLD-33", "FOLD-34"], "A flow with a codeFingerprint records EXECUTION_STARTED.codeHash; flowHash is fnv1a: by default.",
        json!({"flowId": "f", "codeFingerprint": "v1", "body": [{"op": "complete"}]}),
        json!([start()]), false));
    v.push(Scenario::new(Kind::Runtime, "runtime-fold34-sha256-flow-hash", &["FOLD-34"], "With kernel.features.sha256FlowHash, a new start records a sha256: flowHash.",
        json!({"flows": [{"flowId": "f", "body": [{"op": "complete"}]}], "features": ["sha256FlowHash"], "steps": [start()]})).rests_by(super::runtime_points));
    v.push(rt("ingress14-runtime-parked-failure", &["INGRESS-14", "FOLD-10", "TYPED-15"], "A parallel sibling fails after the flow parked: a null resume is refused, a real answer accepted.",
        json!({"flowId": "f", "effects": {"s": {"outcomes": [{"error": "sibling failed", "ticks": 1}]}}, "body": [{"op": "parallel", "branches": [[suspend("g")], [{"op": "run", "stepId": "s", "catch": {"*": []}}]]}]}),
        json!([start(), resume("g", json!(null)), resume("g", json!({"ok": 1}))]), false));
    v
}
