//! Runtime scenarios for every syscall and every effect outcome: effect emits, retries,
//! hangs (timeouts), in-doubt parks and their verdicts, cancelled effects, crashes,
//! throwing and in-flight deciders, `negotiateBudget`, `sleep` / `sleepUntil` in the
//! past and the future, timers fired late, `cancel`, typed channels with `catch`,
//! `parallel`, `resumeAs`, and the Wave 2 operations (messages, quarantine,
//! continuations). Each is a flow script plus driver steps; the reference runtime's
//! scrubbed log is the expectation (the generator records it, nothing here is typed as
//! an answer).

use crate::format::Kind;
use crate::generate::Scenario;
use loom_kernel::limits::TYPED_FAILURE_PAYLOAD_BYTES_MAX;
use serde_json::{json, Value};

/// Where the scenario clock starts (the driver's virtual clock).
const T0: i64 = crate::scrub::SCENARIO_CLOCK_START_MS;

struct R {
    id: String,
    rules: Vec<&'static str>,
    description: String,
    flows: Vec<Value>,
    features: Vec<&'static str>,
    timers: bool,
    steps: Vec<Value>,
}

fn r(id: &str, rules: &[&'static str], description: &str, flow: Value, steps: Vec<Value>) -> R {
    R {
        id: id.into(),
        rules: rules.to_vec(),
        description: description.into(),
        flows: vec![flow],
        features: Vec::new(),
        timers: false,
        steps,
    }
}

impl R {
    fn timers(mut self) -> R {
        self.timers = true;
        self
    }
    fn features(mut self, f: &[&'static str]) -> R {
        self.features = f.to_vec();
        self
    }
    fn flow(mut self, flow: Value) -> R {
        self.flows.push(flow);
        self
    }
    fn build(self) -> Scenario {
        let mut input = json!({"flows": self.flows, "steps": self.steps});
        if self.timers {
            input["timers"] = json!(true);
        }
        if !self.features.is_empty() {
            input["features"] = json!(self.features);
        }
        Scenario::new(
            Kind::Runtime,
            format!("runtime-{}", self.id),
            &self.rules,
            self.description,
            input,
        )
        .rests_by(super::runtime_points)
    }
}

fn flow(body: Value) -> Value {
    json!({"flowId": "f", "body": body})
}
fn flow_fx(effects: Value, body: Value) -> Value {
    json!({"flowId": "f", "effects": effects, "body": body})
}
fn start() -> Value {
    json!({"op": "start", "flowId": "f", "input": {"n": 1}})
}
fn start_with(input: Value) -> Value {
    json!({"op": "start", "flowId": "f", "input": input})
}
fn resume(gate: &str, payload: Value) -> Value {
    json!({"op": "resume", "eventType": gate, "payload": payload})
}
fn advance(ms: i64) -> Value {
    json!({"op": "advance", "ms": ms})
}
fn fire() -> Value {
    json!({"op": "fireTimers"})
}
fn crash(n: u64) -> Value {
    json!({"op": "crash", "afterAppends": n})
}
fn recover() -> Value {
    json!({"op": "recover"})
}
fn cancel() -> Value {
    json!({"op": "cancel"})
}
fn deliver(topic: &str, id: &str, message: Value) -> Value {
    json!({"op": "deliver", "topic": topic, "messageId": id, "message": message})
}
fn quarantine(topic: &str, id: &str) -> Value {
    json!({"op": "quarantine", "topic": topic, "messageId": id})
}
fn release(topic: &str, id: &str, how: &str) -> Value {
    json!({"op": "release", "topic": topic, "messageId": id, "how": how, "operator": "ops"})
}
fn verdict(step: &str, attempt: u64, outcome: &str, extra: Value) -> Value {
    let mut v = json!({"stepId": step, "attempt": attempt, "outcome": outcome});
    if let (Value::Object(v), Value::Object(extra)) = (&mut v, extra) {
        v.extend(extra);
    }
    resume("__loom_indoubt__", json!({ "verdict": v }))
}
fn run(id: &str) -> Value {
    json!({"op": "run", "stepId": id})
}
fn emit(t: &str, payload: Value) -> Value {
    json!({"op": "emit", "eventType": t, "payload": payload})
}
fn suspend(on: &str) -> Value {
    json!({"op": "suspend", "on": on})
}
fn complete(output: Value) -> Value {
    json!({"op": "complete", "output": output})
}
fn at(reference: &str) -> Value {
    json!({ "$ref": reference })
}

/// Every syscall and outcome scenario.
pub fn scenarios() -> Vec<Scenario> {
    let mut v: Vec<R> = Vec::new();
    effects(&mut v);
    decisions(&mut v);
    timers(&mut v);
    cancels(&mut v);
    typed(&mut v);
    parallel(&mut v);
    resume_as(&mut v);
    wave2(&mut v);
    depth(&mut v);
    v.into_iter().map(R::build).collect()
}

fn effects(v: &mut Vec<R>) {
    v.push(r("effect-emits-namespaced", &["INGRESS-30", "EMIT-14", "INGRESS-27"],
        "An effect emits an application event and a DECISION_RECORDED: both are appended unstamped, the decision id rewritten to effect:a#1:k, so the flow's own decide(k) is not served by it.",
        flow_fx(json!({"a": {"outcomes": [{"value": 1, "emit": [
            {"eventType": "PROGRESS", "payload": {"pct": 50}},
            {"eventType": "DECISION_RECORDED", "payload": {"id": "k", "choice": "from-effect"}}]}]}}),
            json!([run("a"), {"op": "decide", "id": "k", "choice": "from-flow"}, complete(at("decisions.k"))])),
        vec![start()]));
    v.push(r("effect-emit-kernel-type-refused", &["INGRESS-27", "INGRESS-39", "EMIT-14"],
        "An effect's STEP_COMPLETED emit, and its application emit carrying metadata.kernel, are refused: the refusal is thrown inside the effect, so each step fails untyped and nothing of the refused emit reaches the log; a plain application emit goes through unstamped.",
        flow_fx(json!({
            "a": {"outcomes": [{"value": 1, "emit": [{"eventType": "STEP_COMPLETED", "payload": {"stepId": "x", "output": 1}}]}]},
            "b": {"outcomes": [{"value": 2, "emit": [{"eventType": "PROGRESS", "payload": {"pct": 1}, "metadata": {"kernel": true}}]}]},
            "c": {"outcomes": [{"value": 3, "emit": [{"eventType": "PROGRESS", "payload": {"pct": 2}}]}]}}),
            json!([{"op": "run", "stepId": "a", "catch": {"*": []}}, {"op": "run", "stepId": "b", "catch": {"*": []}}, run("c"),
                complete(json!([at("steps.a.status"), at("steps.b.status"), at("steps.c.output")]))])),
        vec![start()]));
    v.push(r("retry-untyped-until-success", &["TYPED-13", "REPLAY-09", "FOLD-48"],
        "The retry middleware retries two untyped failures (STEP_RETRYING keeps the frame's input) and the third attempt completes.",
        flow_fx(json!({"a": {"outcomes": [{"error": "flaky"}, {"error": "flaky"}, {"value": 3}]}}),
            json!([{"op": "run", "stepId": "a", "input": {"q": 1}, "retry": {"maxAttempts": 3}}, complete(at("steps.a.output"))])),
        vec![start()]));
    v.push(r("retry-exhausted-caught", &["TYPED-13", "FOLD-09", "REPLAY-09"],
        "Every attempt fails untyped: after maxAttempts the failure reaches the flow, which catches it; the execution completes.",
        flow_fx(json!({"a": {"outcomes": [{"error": "down"}]}}),
            json!([{"op": "run", "stepId": "a", "retry": {"maxAttempts": 2}, "catch": {"*": []}}, complete(at("steps.a.status"))])),
        vec![start()]));
    v.push(r("hang-is-untyped-timeout", &["EMIT-08", "EMIT-07", "REPLAY-09", "FOLD-09"],
        "A hanging effect is recorded as an untyped timeout failure; an emit after it is appended unstamped; after the resume the step runs again and the emit is appended once more.",
        flow_fx(json!({"a": {"outcomes": [{"hang": true}, {"value": 2}]}}),
            json!([{"op": "run", "stepId": "a", "catch": {"*": []}}, emit("X", json!({"after": "timeout"})), suspend("g"), complete(at("steps.a.output"))])),
        vec![start(), resume("g", json!(1))]));
    v.push(r("hang-retried", &["TYPED-13", "EMIT-09"],
        "A timeout is retryable: the retry middleware runs a second attempt, which completes; the emit after it is stamped.",
        flow_fx(json!({"a": {"outcomes": [{"hang": true}, {"value": 5}]}}),
            json!([{"op": "run", "stepId": "a", "retry": {"maxAttempts": 2}}, emit("X", json!(1)), complete(at("steps.a.output"))])),
        vec![start()]));
    v.push(r("indoubt-verdict-completed", &["INGRESS-09", "INGRESS-10", "INGRESS-34", "REPLAY-17"],
        "An in-doubt effect parks on the in-doubt gate; a plain payload there is refused; the completed verdict for the step and attempt is recorded beside a null resume and the flow goes on.",
        flow_fx(json!({"a": {"outcomes": [{"indoubt": true}]}}),
            json!([run("a"), complete(at("steps.a.output"))])),
        vec![start(), resume("__loom_indoubt__", json!({"ok": true})), verdict("a", 1, "completed", json!({"output": 7}))]));
    v.push(r("indoubt-verdict-retry", &["INGRESS-09", "REPLAY-09", "EMIT-06"],
        "A retry verdict runs the in-doubt step again as attempt 2, which completes; the emit before the park is stamped once and served on the re-run, the one after it is stamped.",
        flow_fx(json!({"a": {"outcomes": [{"indoubt": true}, {"value": 2}]}}),
            json!([emit("BEFORE", json!(0)), run("a"), emit("AFTER", json!(1)), complete(at("steps.a.output"))])),
        vec![start(), verdict("a", 1, "retry", json!({}))]));
    v.push(r("indoubt-verdict-failed-untyped", &["TYPED-12", "INGRESS-09", "FOLD-09"],
        "A failed verdict is an untyped step failure (operator verdicts are not domain channels); the flow catches it.",
        flow_fx(json!({"a": {"outcomes": [{"indoubt": true}]}}),
            json!([{"op": "run", "stepId": "a", "catch": {"*": [{"op": "set", "name": "e", "value": at("steps.a.error")}]}}, complete(at("vars.e"))])),
        vec![start(), verdict("a", 1, "failed", json!({"error": "lost at sea"}))]));
    v.push(r("indoubt-verdict-wrong-attempt", &["INGRESS-10", "INGRESS-34", "INGRESS-15"],
        "A verdict naming attempt 2 or another step is refused with nothing appended; the right verdict is then accepted.",
        flow_fx(json!({"a": {"outcomes": [{"indoubt": true}]}}), json!([run("a"), complete(at("steps.a.output"))])),
        vec![start(), verdict("a", 2, "completed", json!({"output": 1})), verdict("b", 1, "completed", json!({"output": 1})), verdict("a", 1, "completed", json!({"output": 3}))]));
    v.push(r("cancelled-effect-caught", &["EMIT-08", "FOLD-48"],
        "A cancelled effect writes STEP_CANCELLED; the flow catches it and a later emit is appended unstamped (a cancellation is not served on re-run).",
        flow_fx(json!({"a": {"outcomes": [{"cancelled": true}]}}),
            json!([{"op": "run", "stepId": "a", "input": {"k": 1}, "catch": {"*": []}}, emit("X", json!(1)), complete(at("steps.a.status"))])),
        vec![start()]));
    v.push(r("crash-after-effect-before-append", &["REPLAY-01", "REPLAY-09", "INGRESS-06"],
        "A crash after the effect returned but before its outcome was appended: recovery runs the effect again (at-least-once) as a new attempt and completes.",
        flow_fx(json!({"a": {"outcomes": [{"value": 1, "crash": "after-effect-before-append"}, {"value": 2}]}}),
            json!([run("a"), complete(at("steps.a.output"))])),
        vec![start(), recover()]));
    v.push(r("crash-after-append-served", &["REPLAY-01", "REPLAY-02", "INGRESS-06"],
        "A crash right after STEP_COMPLETED was appended: recovery serves the step from the log (the effect does not run again) and records no resume.",
        flow_fx(json!({"a": {"outcomes": [{"value": 1, "crash": "after-append"}, {"value": 99}]}}),
            json!([run("a"), run("b"), complete(at("steps.a.output"))])),
        vec![start(), recover()]));
    v.push(r("execute-task-kinds", &["REPLAY-03", "REPLAY-05", "ABI-02"],
        "execute with task kinds llm and tool writes the same STEP_* events run does; every kind resolves by toolId.",
        flow_fx(json!({"model": {"outcomes": [{"value": "text"}]}}),
            json!([{"op": "execute", "stepId": "ask", "toolId": "model", "kind": "llm", "input": {"prompt": "hi"}},
                {"op": "execute", "stepId": "look", "kind": "tool", "input": {"q": 1}},
                {"op": "run", "stepId": "plain"}, complete(at("steps.ask.output"))])),
        vec![start()]));
    v.push(r("human-step-custom-gate", &["REPLAY-08", "INGRESS-35", "REPLAY-06", "INGRESS-08", "REPLAY-02"],
        "A human step parked on its own gate records condition.stepId; its answer and a later gate's are consumed in order, also on the replay after the second resume.",
        flow(json!([{"op": "run", "stepId": "review", "kind": "human", "gate": "REVIEW"}, suspend("SHIP"), complete(at("steps.review.output"))])),
        vec![start(), resume("REVIEW", json!({"approved": true})), resume("SHIP", json!("now"))]));
}

fn decisions(v: &mut Vec<R>) {
    v.push(r("decide-throw-caught-blocks-stamp", &["EMIT-08", "REPLAY-04"],
        "A throwing decider records nothing; the flow catches it, and an emit after it is appended unstamped.",
        flow(json!([{"op": "decide", "id": "d", "throw": "no model", "catch": []}, emit("X", json!(1)), complete(Value::Null)])),
        vec![start()]));
    v.push(r("negotiate-budget-served", &["RES-06", "RES-07", "REPLAY-04"],
        "negotiateBudget records its grant as a decision once; the resume's re-run serves it from the log.",
        flow(json!([{"op": "negotiateBudget", "id": "budget", "dimension": "tokens", "request": 100}, suspend("g"), complete(at("decisions.budget"))])),
        vec![start(), resume("g", json!(1))]));
    v.push(r("negotiate-budget-advisory", &["RES-07", "RES-06", "RES-04"],
        "A grant is advisory: an effect that then meters more tokens than granted is not refused.",
        flow_fx(json!({"a": {"outcomes": [{"value": 1, "meter": {"tokens": 500}}]}}),
            json!([{"op": "negotiateBudget", "id": "b", "dimension": "tokens", "request": 100}, run("a"), complete(at("decisions.b"))])),
        vec![start()]));
    v.push(r("decider-in-flight-blocks-stamp", &["EMIT-08", "GAP-26"],
        "An emit in a parallel branch while a sibling's decider is still in flight is appended unstamped.",
        flow(json!([{"op": "parallel", "branches": [[{"op": "decide", "id": "d", "choice": 1, "ticks": 2}], [emit("X", json!(1))]]}, complete(at("decisions.d"))])),
        vec![start()]));
}

fn timers(v: &mut Vec<R>) {
    v.push(r("timer-fired-late-records-wake-at", &["GAP-25", "REPLAY-10", "REPLAY-11", "REPLAY-12"],
        "The clock is 300 ms past wakeAt when timers fire: the wake records firedAt = wakeAt from the log, not the clock.",
        flow(json!([{"op": "suspend", "on": "g", "timeout": 500}, complete(Value::Null)])),
        vec![start(), advance(800), fire()]).timers());
    v.push(r("sleep-until-future", &["REPLAY-10", "GAP-25", "REPLAY-12", "ABI-02"],
        "sleepUntil a future time: not fired before it, fired after it with firedAt = the requested time.",
        flow(json!([{"op": "sleepUntil", "at": T0 + 2000, "bind": "w"}, complete(at("vars.w"))])),
        vec![start(), advance(1000), fire(), advance(1500), fire()]).timers());
    v.push(r("sleep-until-past", &["REPLAY-10", "GAP-25", "REPLAY-11"],
        "sleepUntil a time already past still parks with that wakeAt; the next fire wakes it with firedAt = that past time.",
        flow(json!([{"op": "sleepUntil", "at": T0 - 500, "bind": "w"}, complete(at("vars.w"))])),
        vec![start(), fire()]).timers());
    v.push(r("sleep-twice-in-order", &["GAP-25", "REPLAY-06", "REPLAY-10", "INGRESS-08"],
        "Two sleeps: each wake is a passthrough consumed by its own gate in order.",
        flow(json!([{"op": "sleep", "ms": 100, "bind": "a"}, {"op": "sleep", "ms": 200, "bind": "b"}, complete(json!([at("vars.a"), at("vars.b")]))])),
        vec![start(), advance(100), fire(), advance(250), fire()]).timers());
    v.push(r("timed-gate-answered-before-timer", &["INGRESS-04", "REPLAY-10", "GAP-25", "REPLAY-12"],
        "A timed park answered by its gate name before the timer: the later fire finds no park and appends nothing.",
        flow(json!([{"op": "suspend", "on": "g", "timeout": 500, "bind": "x"}, complete(at("vars.x"))])),
        vec![start(), resume("g", json!({"by": "hand"})), advance(600), fire()]).timers());
    v.push(r("timer-fired-once", &["REPLAY-10", "INGRESS-04", "GAP-25"],
        "Firing twice after the deadline wakes the park once; the second fire finds nothing due.",
        flow(json!([{"op": "suspend", "on": "g", "timeout": 50}, suspend("h")])),
        vec![start(), advance(60), fire(), fire()]).timers());
}

fn cancels(v: &mut Vec<R>) {
    v.push(r("cancel-parked-then-resume-refused", &["FOLD-07", "INGRESS-13", "INGRESS-15"],
        "cancel on a parked execution appends EXECUTION_CANCELLED; a resume after it is refused and a second cancel finds it terminal.",
        flow(json!([suspend("g"), complete(Value::Null)])),
        vec![start(), cancel(), resume("g", json!(1)), cancel()]));
    v.push(
        r(
            "cancel-timed-park-drops-timer",
            &["REPLAY-10", "FOLD-07"],
            "Cancelling a timed park drops its timer: firing after the deadline appends nothing.",
            flow(json!([{"op": "suspend", "on": "g", "timeout": 500}, complete(Value::Null)])),
            vec![start(), cancel(), advance(600), fire()],
        )
        .timers(),
    );
    v.push(r(
        "cancel-running-after-crash",
        &["FOLD-07", "INGRESS-05"],
        "A crashed (still running) execution can be cancelled; recovery afterwards is refused.",
        flow(json!([run("a"), run("b"), complete(Value::Null)])),
        vec![crash(2), start(), cancel(), recover()],
    ));
}

fn typed(v: &mut Vec<R>) {
    v.push(r("typed-catch-binds-parsed-payload", &["TYPED-06", "TYPED-09", "GAP-33", "TYPED-03"],
        "A typed failure on a declared channel is recorded with the payload as the schema parses it (its default filled in); the catch branch reads it.",
        flow_fx(json!({"t": {"errors": {"declined": {"type": "object", "properties": {"code": {"type": "integer", "default": 7}}}},
            "outcomes": [{"typed": {"channel": "declined", "payload": {"why": "card"}}}]}}),
            json!([{"op": "run", "stepId": "a", "toolId": "t", "catch": {"declined": [complete(at("steps.a.errorPayload"))]}}, complete(json!("not reached"))])),
        vec![start()]));
    v.push(r("typed-step-map-replaces-effect-map", &["TYPED-04", "TYPED-05", "GAP-22", "TYPED-03"],
        "The step declares {a}; the effect declares {b}; a throw on b is undeclared for this invocation and degrades to untyped.",
        flow_fx(json!({"t": {"errors": {"b": {}}, "outcomes": [{"typed": {"channel": "b", "payload": 1}}]}}),
            json!([{"op": "run", "stepId": "s", "toolId": "t", "errors": {"a": {}}, "catch": {"*": []}}, complete(at("steps.s.errorChannel"))])),
        vec![start()]));
    v.push(r("typed-effect-map-fallback", &["TYPED-04", "TYPED-03", "TYPED-06", "REPLAY-05"],
        "With no step map the effect's declared map applies: a throw on its channel b is typed.",
        flow_fx(json!({"t": {"errors": {"b": {}}, "outcomes": [{"typed": {"channel": "b", "payload": {"x": 1}}}]}}),
            json!([{"op": "run", "stepId": "s", "toolId": "t", "catch": {"b": []}}, complete(at("steps.s.errorChannel"))])),
        vec![start()]));
    // The cap counts UTF-8 bytes of the canonical payload: a string of n two-byte
    // characters is 2n + 2 bytes with its quotes (GAP-04).
    let at_cap = (TYPED_FAILURE_PAYLOAD_BYTES_MAX - 2) / 2;
    for (id, n) in [("at-cap", at_cap), ("over-cap", at_cap + 1)] {
        let payload = "é".repeat(n);
        v.push(r(&format!("typed-payload-{id}"), &["TYPED-08", "GAP-04", "TYPED-05"],
            &format!("A typed payload of {n} two-byte characters is {} canonical UTF-8 bytes (the cap is {TYPED_FAILURE_PAYLOAD_BYTES_MAX}; characters or UTF-16 units would count {}).", 2 * n + 2, n + 2),
            flow_fx(json!({"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": payload}}]}}),
                json!([{"op": "run", "stepId": "s", "toolId": "t", "catch": {"*": []}}, complete(at("steps.s.errorChannel"))])),
            vec![start()]));
    }
    v.push(r("typed-uncaught-fails-execution", &["FOLD-09", "TYPED-17", "TYPED-06"],
        "An uncaught typed failure fails the execution through EXECUTION_FAILED; the STEP_FAILED alone never did.",
        flow_fx(json!({"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 1}}]}}),
            json!([{"op": "run", "stepId": "s", "toolId": "t"}, complete(json!("not reached"))])),
        vec![start()]));
    v.push(r("typed-retry-skipped-by-default", &["TYPED-13", "TYPED-06", "TYPED-09", "EMIT-10"],
        "The default retry policy does not retry a typed failure: one attempt, recorded typed, caught; a typed failure is a served outcome, so the emit after it is stamped.",
        flow_fx(json!({"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 1}}, {"value": 2}]}}),
            json!([{"op": "run", "stepId": "s", "toolId": "t", "retry": {"maxAttempts": 3}, "catch": {"c": []}}, emit("X", json!(1)), complete(at("steps.s.status"))])),
        vec![start()]));
    v.push(r("typed-retry-when-asked", &["TYPED-13", "TYPED-14"],
        "With retryTyped the middleware retries a typed failure in memory: the log holds the completed second attempt and no STEP_FAILED.",
        flow_fx(json!({"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 1}}, {"value": 2}]}}),
            json!([{"op": "run", "stepId": "s", "toolId": "t", "retry": {"maxAttempts": 3, "retryTyped": true}, "catch": {"c": []}}, complete(at("steps.s.output"))])),
        vec![start()]));
}

fn parallel(v: &mut Vec<R>) {
    v.push(r("parallel-branches-complete", &["TYPED-15", "REPLAY-01", "REPLAY-02", "ABI-02"],
        "Two branches with steps of different durations complete; the join waits for both; a resume's re-run serves every step.",
        flow_fx(json!({"slow": {"outcomes": [{"value": "s", "ticks": 3}]}, "fast": {"outcomes": [{"value": "f"}]}}),
            json!([{"op": "parallel", "branches": [[run("slow")], [run("fast")]]}, suspend("g"), complete(json!([at("steps.slow.output"), at("steps.fast.output")]))])),
        vec![start(), resume("g", json!(1))]));
    v.push(r("parallel-typed-failure-siblings-settle", &["TYPED-15", "FOLD-09"],
        "A typed failure in one branch: the in-flight sibling still settles and writes its STEP_COMPLETED before the join rejects; uncaught, the execution fails.",
        flow_fx(json!({"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": {"k": 1}}}]}, "slow": {"outcomes": [{"value": 1, "ticks": 3}]}}),
            json!([{"op": "parallel", "branches": [[{"op": "run", "stepId": "a", "toolId": "t"}], [run("slow")]]}, complete(json!("not reached"))])),
        vec![start()]));
    v.push(r("parallel-replay-substitutes", &["TYPED-15", "TYPED-09", "TYPED-16"],
        "A caught typed failure in a branch, then a gate: the resume's re-run substitutes the typed frame and serves its sibling with no new step events.",
        flow_fx(json!({"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 2}}]}, "b": {"outcomes": [{"value": 3, "ticks": 1}]}}),
            json!([{"op": "parallel", "branches": [[{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": []}}], [run("b")]]}, suspend("g1"), suspend("g2"), complete(json!([at("resume.0"), at("resume.1")]))])),
        vec![start(), resume("g1", json!("one")), resume("g2", json!("two"))]));
}

fn resume_as(v: &mut Vec<R>) {
    let source = json!({"flowId": "f", "body": [suspend("g"), complete(at("input"))]});
    let target = json!({"flowId": "f2", "codeFingerprint": "v2", "body": [suspend("g"), complete(at("input"))]});
    let resume_as = |payload: Value, extra: Value| {
        let mut s = json!({"op": "resumeAs", "flowId": "f2", "eventType": "g", "payload": payload});
        if let (Value::Object(s), Value::Object(extra)) = (&mut s, extra) {
            s.extend(extra);
        }
        s
    };
    v.push(r("resume-as-migrates-input", &["INGRESS-19", "FOLD-14", "PLACE-06"],
        "resumeAs onto new code with a transform: EXECUTION_MIGRATED records the transform's result and the target's code pin; the re-run reads the migrated input.",
        source.clone(), vec![start(), resume_as(json!({"ok": 1}), json!({"migratedInput": {"n": 2}}))]).flow(target.clone()));
    v.push(r("resume-as-transform-fails", &["INGRESS-20", "INGRESS-15", "INGRESS-19"],
        "A failing transform refuses the migration with nothing appended; the execution is still parked and a plain resume answers it.",
        source.clone(), vec![start(), resume_as(json!(1), json!({"transformError": "cannot map v1 input"})), resume("g", json!(2))]).flow(target.clone()));
    v.push(r("resume-as-crashed-namespace-only", &["INGRESS-17", "INGRESS-06", "PLACE-08"],
        "resumeAs onto a crashed (running) execution enforces only the kernel-namespace rule: an application event type is accepted and no EXECUTION_RESUMED is recorded; a kernel type is refused.",
        json!({"flowId": "f", "body": [run("a"), suspend("g"), complete(Value::Null)]}),
        vec![crash(2), start(),
            json!({"op": "resumeAs", "flowId": "f2", "eventType": "STEP_COMPLETED", "payload": {"stepId": "a"}}),
            json!({"op": "resumeAs", "flowId": "f2", "eventType": "MIGRATE", "payload": {"why": "fix"}})]).flow(target.clone()));
    v.push(r("resume-as-terminal-null-resume", &["INGRESS-07", "FOLD-20", "INGRESS-17", "PLACE-06"],
        "resumeAs onto a completed execution records a null EXECUTION_RESUMED that only re-opens it (no passthrough).",
        json!({"flowId": "f", "body": [complete(json!("first"))]}),
        vec![start(), json!({"op": "resumeAs", "flowId": "f2", "eventType": "REOPEN", "payload": {"why": "again"}})]).flow(target));
}

fn wave2(v: &mut Vec<R>) {
    let receive = |bind: &str| json!({"op": "receive", "topic": "t", "waitId": "w1", "bind": bind});
    v.push(r("receive-parks-then-delivery-resumes", &["FOLD-24", "FOLD-27", "FOLD-28", "GAP-23", "REPLAY-17"],
        "receive parks with a wait; a delivery on its topic appends MESSAGE_CONSUMED and a wait-addressed resume together (no _resumePayloads entry) and the flow binds the message.",
        flow(json!([receive("m"), complete(at("vars.m"))])),
        vec![start(), deliver("t", "m1", json!({"body": "hi"}))]).features(&["receive"]));
    v.push(r("receive-buffered-message", &["FOLD-24", "COMPAT-11", "FOLD-15", "INGRESS-08"],
        "A message delivered while the flow waits at an ordinary gate is buffered (MESSAGE_CONSUMED without waitId); the later receive is served it from the log.",
        flow(json!([suspend("g"), receive("m"), complete(at("vars.m"))])),
        vec![start(), deliver("t", "m1", json!(42)), resume("g", json!("go"))]).features(&["receive"]));
    v.push(r("select-first-recorded-wins", &["FOLD-27", "FOLD-28", "FOLD-24", "GAP-23"],
        "select over two waits parks on the select gate; a delivery on the second topic answers it and the flow binds {waitId, value}.",
        flow(json!([{"op": "select", "waits": [{"waitId": "w1", "topic": "t1"}, {"waitId": "w2", "topic": "t2"}], "bind": "s"}, complete(at("vars.s"))])),
        vec![start(), deliver("t2", "m7", json!("second"))]).features(&["select"]));
    v.push(
        r(
            "deliver-duplicate",
            &["FOLD-24", "COMPAT-11", "GAP-23"],
            "A redelivery of a consumed messageId on the same topic appends nothing.",
            flow(json!([receive("m"), suspend("g")])),
            vec![
                start(),
                deliver("t", "m1", json!(1)),
                deliver("t", "m1", json!(1)),
            ],
        )
        .features(&["receive"]),
    );
    v.push(r(
        "deliver-disabled-without-features",
        &["COMPAT-11", "COMPAT-08"],
        "With receive and select off, delivery appends nothing and the log holds no Wave 2 kind.",
        flow(json!([suspend("g")])),
        vec![start(), deliver("t", "m1", json!(1)), quarantine("t", "m2")],
    ));
    v.push(r("quarantine-hold-release-deliver", &["FOLD-41", "FOLD-44", "FOLD-46"],
        "A held message is not delivered; after an operator release for delivery it is, and its MESSAGE_CONSUMED drops the released entry.",
        flow(json!([receive("m"), complete(at("vars.m"))])),
        vec![start(), quarantine("t", "m1"), deliver("t", "m1", json!("held")), release("t", "m1", "deliver"), deliver("t", "m1", json!("held"))]).features(&["receive"]));
    v.push(r("quarantine-discard-and-order", &["FOLD-41", "FOLD-42", "FOLD-43"],
        "Releases keep order: the second held message cannot be released before the first; a discard drops the first hold; an auto release marks the second.",
        flow(json!([receive("m"), complete(at("vars.m"))])),
        vec![start(), quarantine("t", "m1"), quarantine("t", "m2"), release("t", "m2", "deliver"), release("t", "m1", "discard"), release("t", "m2", "auto"), quarantine("t", "m1")]).features(&["receive"]));
    v.push(r("continue-as-new-chain", &["FOLD-23", "FOLD-26", "FOLD-32"],
        "continueAsNew appends a kernel-stamped EXECUTION_CONTINUED and starts the continuation exec-1~1 with continuedFrom; it completes.",
        flow(json!([{"op": "if", "ref": "input/n", "equals": 1, "then": [{"op": "continueAsNew", "input": {"n": 2}}], "else": [complete(at("input"))]}])),
        vec![start_with(json!({"n": 1}))]).features(&["continueAsNew"]));
    v.push(r("continue-as-new-carries-hold-and-inbox", &["FOLD-45", "FOLD-26", "FOLD-41", "FOLD-46", "FOLD-32"],
        "A continuation started while a message is held and another buffered carries the hold (continuedFrom.carried.quarantined) and the inbox cursor.",
        flow(json!([suspend("g"), {"op": "if", "ref": "input/n", "equals": 1, "then": [{"op": "continueAsNew", "input": {"n": 2}}], "else": [suspend("h")]}])),
        vec![start_with(json!({"n": 1})), quarantine("t", "q1"), deliver("t", "m0", json!("buffered")), resume("g", json!(1))]).features(&["continueAsNew", "receive"]));
}

/// Further scenarios so that no rule rests on fewer than three.
fn depth(v: &mut Vec<R>) {
    let typed_fx = |payload: Value| json!({"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": payload}}]}});
    v.push(r("compat08-empty-resume-schemas", &["COMPAT-08", "INGRESS-23"],
        "An empty resumeSchemas map declares nothing: the answer is recorded as given and flowHash is that of the flow without the map.",
        json!({"flowId": "f", "resumeSchemas": {}, "body": [suspend("g"), complete(at("resume.0"))]}),
        vec![start(), resume("g", json!({"x": 1}))]));
    v.push(r("compat08-no-timer-store-no-wake-at", &["COMPAT-08", "REPLAY-12"],
        "Without a TimerStore a suspend with a timeout derives no wakeAt and is never woken by fireTimers.",
        flow(json!([{"op": "suspend", "on": "g", "timeout": 500}, complete(Value::Null)])),
        vec![start(), advance(600), fire()]));
    v.push(r("cancelled-effect-emit-reappended", &["EMIT-07", "EMIT-08", "EMIT-01"],
        "A cancellation blocks the emit's stamp; on the resume the cancelled step runs again live and the emit is appended again, now stamped.",
        flow_fx(json!({"a": {"outcomes": [{"cancelled": true}, {"value": 1}]}}),
            json!([{"op": "run", "stepId": "a", "catch": {"*": []}}, emit("X", json!({"k": 1})), suspend("g"), complete(Value::Null)])),
        vec![start(), resume("g", json!(1))]));
    v.push(r("typed-then-emit-served-on-resume", &["EMIT-10", "EMIT-06", "EMIT-01", "TYPED-09"],
        "A caught typed failure, then an emit (stamped, a typed failure is served), then a gate: the resume's re-run substitutes the failure and serves the emit.",
        flow_fx(typed_fx(json!(1)), json!([{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": []}}, emit("X", json!(2)), suspend("g"), complete(Value::Null)])),
        vec![start(), resume("g", json!("go"))]));
    v.push(r("opaque-emit-reappended-after-recover", &["EMIT-13", "EMIT-07"],
        "An opaque emit is appended unstamped; after a crash the recovery's re-run appends it again (it can never be served).",
        flow(json!([{"op": "emit", "eventType": "O", "opaque": true}, run("a"), complete(Value::Null)])),
        vec![crash(3), start(), recover()]));
    v.push(r("opaque-stream-and-ui", &["EMIT-13", "EMIT-16", "ABI-02"],
        "Opaque payloads through stream and ui are appended as null, unstamped, and again on the resume's re-run.",
        flow(json!([{"op": "stream", "eventType": "S", "opaque": true}, {"op": "ui", "eventType": "U", "opaque": true}, suspend("g"), complete(Value::Null)])),
        vec![start(), resume("g", json!(1))]));
    v.push(r("effect-in-flight-blocks-stamp", &["GAP-26", "EMIT-08"],
        "An emit in a parallel branch while a sibling's effect is still in flight is appended unstamped.",
        flow_fx(json!({"slow": {"outcomes": [{"value": 1, "ticks": 2}]}}),
            json!([{"op": "parallel", "branches": [[run("slow")], [emit("X", json!(1))]]}, complete(Value::Null)])),
        vec![start()]));
    v.push(r("effect-settled-then-stamp", &["GAP-26", "EMIT-09"],
        "An emit after the parallel join, once every effect settled, is stamped.",
        flow_fx(json!({"slow": {"outcomes": [{"value": 1, "ticks": 2}]}}),
            json!([{"op": "parallel", "branches": [[run("slow")], [run("fast")]]}, emit("X", json!(1)), complete(Value::Null)])),
        vec![start()]));
    // The thrown payload is under the cap; the schema's default makes the parsed one
    // (what is recorded, GAP-33) over it (GAP-04 measures the validated payload).
    let filler = "x".repeat(TYPED_FAILURE_PAYLOAD_BYTES_MAX - 20);
    v.push(r("typed-payload-parsed-default-over-cap", &["GAP-04", "TYPED-08", "GAP-33"],
        "The thrown payload is under the 16 KiB cap, but the default the channel schema fills in makes the parsed payload, the one that would be recorded, over it: recorded untyped.",
        flow_fx(json!({"t": {"errors": {"c": {"type": "object", "properties": {"s": {"type": "string"}, "pad": {"type": "string", "default": "y".repeat(64)}}}},
            "outcomes": [{"typed": {"channel": "c", "payload": {"s": filler}}}]}}),
            json!([{"op": "run", "stepId": "s", "toolId": "t", "catch": {"*": []}}, complete(at("steps.s.errorChannel"))])),
        vec![start()]));
    v.push(r("typed-parsed-payload-substituted-on-replay", &["GAP-33", "TYPED-09", "TYPED-16"],
        "The recorded typed payload is the parsed one (its default filled in); the resume's re-run substitutes exactly that, and the gates after the catch get their own answers.",
        flow_fx(json!({"t": {"errors": {"c": {"type": "object", "properties": {"code": {"type": "integer", "default": 3}}}}, "outcomes": [{"typed": {"channel": "c", "payload": {}}}]}}),
            json!([{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": [{"op": "set", "name": "p", "value": at("steps.a.errorPayload")}]}},
                suspend("g1"), suspend("g2"), complete(json!([at("vars.p"), at("resume.0"), at("resume.1")]))])),
        vec![start(), resume("g1", json!(1)), resume("g2", json!(2))]));
    v.push(r("typed-step-empty-map-replaces", &["GAP-22", "TYPED-04", "TYPED-05"],
        "A step that declares an empty errors map replaces the effect's map wholesale: a throw on the effect's channel is undeclared and degrades to untyped.",
        flow_fx(json!({"t": {"errors": {"b": {}}, "outcomes": [{"typed": {"channel": "b", "payload": 1}}]}}),
            json!([{"op": "run", "stepId": "s", "toolId": "t", "errors": {}, "catch": {"*": []}}, complete(at("steps.s.error"))])),
        vec![start()]));
    v.push(r("typed-step-map-own-channel", &["GAP-22", "TYPED-04", "TYPED-03"],
        "A throw on a channel the step declares is typed even though the effect declares another.",
        flow_fx(json!({"t": {"errors": {"b": {}}, "outcomes": [{"typed": {"channel": "a", "payload": {"why": 1}}}]}}),
            json!([{"op": "run", "stepId": "s", "toolId": "t", "errors": {"a": {}}, "catch": {"a": []}}, complete(at("steps.s.errorPayload"))])),
        vec![start()]));
    let source = json!({"flowId": "f", "body": [run("a"), suspend("g"), complete(at("input"))]});
    let target = json!({"flowId": "f2", "codeFingerprint": "v2", "resumeSchemas": {"g": {"type": "object", "properties": {"ok": {"type": "boolean", "default": true}}}},
        "body": [suspend("g"), complete(json!([at("input"), at("resume.0")]))]});
    let resume_as = |payload: Value, extra: Value| {
        let mut s = json!({"op": "resumeAs", "flowId": "f2", "eventType": "g", "payload": payload});
        if let (Value::Object(s), Value::Object(extra)) = (&mut s, extra) {
            s.extend(extra);
        }
        s
    };
    v.push(r("resume-as-transform-null-result", &["INGRESS-19", "FOLD-14"],
        "A transform whose result is null records migratedInput: null, and the re-run reads null as the input.",
        json!({"flowId": "f", "body": [suspend("g"), complete(at("input"))]}),
        vec![start(), resume_as(json!({}), json!({"migratedInput": null}))]).flow(target.clone()));
    v.push(r("resume-as-transform-fails-on-crashed", &["INGRESS-20", "INGRESS-17", "PLACE-08"],
        "A failing transform on a crashed execution appends nothing; recovery then re-drives it on its own code.",
        source.clone(), vec![crash(2), start(), resume_as(json!({}), json!({"transformError": "no mapping"})), recover()]).flow(target.clone()));
    v.push(r("resume-as-transform-fails-on-terminal", &["INGRESS-20", "INGRESS-07"],
        "A failing transform on a completed execution appends nothing: no EXECUTION_MIGRATED and no null resume.",
        json!({"flowId": "f", "body": [complete(json!("done"))]}),
        vec![start(), resume_as(json!({}), json!({"transformError": "cannot migrate"}))]).flow(target.clone()));
    v.push(r("resume-as-crashed-migrates-input", &["PLACE-08", "INGRESS-19", "INGRESS-06"],
        "resumeAs moves a crashed execution onto fixed code with a migrated input: EXECUTION_MIGRATED, no EXECUTION_RESUMED, and the new code runs.",
        source.clone(), vec![crash(2), start(), json!({"op": "resumeAs", "flowId": "f2", "eventType": "FIX", "payload": {}, "migratedInput": {"n": 5}})]).flow(target.clone()));
    v.push(r("resume-as-target-schema-applies", &["INGRESS-25", "INGRESS-22", "INGRESS-18"],
        "resumeAs onto a parked execution parses the answer with the target flow's resumeSchemas: the default is filled in and recorded.",
        json!({"flowId": "f", "body": [suspend("g"), complete(Value::Null)]}),
        vec![start(), resume_as(json!({}), json!({}))]).flow(target.clone()));
    v.push(r("resume-as-target-schema-refuses", &["INGRESS-25", "INGRESS-18", "INGRESS-15"],
        "An answer the target flow's schema refuses is refused with nothing appended (the source flow declares no schema).",
        json!({"flowId": "f", "body": [suspend("g"), complete(Value::Null)]}),
        vec![start(), resume_as(json!({"ok": "yes"}), json!({}))]).flow(target));
    v.push(r("execute-with-retry", &["REPLAY-03", "TYPED-13"],
        "execute takes the same retry policy run does: two untyped failures retried, the third attempt completes.",
        flow_fx(json!({"tool": {"outcomes": [{"error": "a"}, {"error": "b"}, {"value": "ok"}]}}),
            json!([{"op": "execute", "stepId": "s", "toolId": "tool", "kind": "tool", "retry": {"maxAttempts": 3}}, complete(at("steps.s.output"))])),
        vec![start()]));
    v.push(r("human-step-default-gate", &["REPLAY-08", "INGRESS-35", "REPLAY-05"],
        "A human step without a gate parks on its step id with condition.stepId, between two ordinary gates; each takes its own answer.",
        flow(json!([suspend("A"), {"op": "run", "stepId": "H", "kind": "human"}, suspend("B"), complete(json!([at("resume.0"), at("steps.H.output"), at("resume.2")]))])),
        vec![start(), resume("A", json!("a")), resume("H", json!("h")), resume("B", json!("b"))]));
    v.push(r("negotiate-budget-two-dimensions", &["RES-06", "RES-07", "REPLAY-04"],
        "Two grants on two dimensions are two decisions, each recorded once and served on the re-run.",
        flow(json!([{"op": "negotiateBudget", "id": "tok", "dimension": "tokens", "request": 10}, {"op": "negotiateBudget", "id": "usd", "dimension": "costUsd", "request": 0.5},
            suspend("g"), complete(json!([at("decisions.tok"), at("decisions.usd")]))])),
        vec![start(), resume("g", json!(1))]));
    v.push(r("typed-invalid-payload-caught", &["TYPED-07", "TYPED-05"],
        "A payload of the wrong type for the channel schema degrades to untyped, the validation error in error; no channel is recorded.",
        flow_fx(json!({"t": {"errors": {"c": {"type": "integer"}}, "outcomes": [{"typed": {"channel": "c", "payload": "seven"}}]}}),
            json!([{"op": "run", "stepId": "s", "toolId": "t", "catch": {"*": []}}, complete(at("steps.s.errorChannel"))])),
        vec![start()]));
    v.push(r("typed-invalid-nested-payload", &["TYPED-07", "TYPED-06"],
        "A nested property of the wrong type fails validation: untyped; the same channel schema with a valid payload on another tool is typed.",
        flow_fx(json!({"t": {"errors": {"c": {"type": "object", "properties": {"n": {"type": "integer"}}}}, "outcomes": [{"typed": {"channel": "c", "payload": {"n": "x"}}}]},
                "u": {"errors": {"c": {"type": "object", "properties": {"n": {"type": "integer"}}}}, "outcomes": [{"typed": {"channel": "c", "payload": {"n": 1}}}]}}),
            json!([{"op": "run", "stepId": "s1", "toolId": "t", "catch": {"*": []}}, {"op": "run", "stepId": "s2", "toolId": "u", "catch": {"*": []}}, complete(json!([at("steps.s1.errorChannel"), at("steps.s2.errorChannel")]))])),
        vec![start()]));
    v.push(r("typed-same-id-in-catch-branch", &["TYPED-10", "TYPED-09"],
        "Inside the catch branch the flow runs the failed step id again: it is substituted (no new events) and the nested catch takes the same payload.",
        flow_fx(typed_fx(json!({"k": 1})),
            json!([{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": [{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": [{"op": "set", "name": "again", "value": at("steps.a.errorPayload")}]}}]}}, complete(at("vars.again"))])),
        vec![start()]));
    v.push(r("typed-same-id-after-resume", &["TYPED-10", "TYPED-16", "TYPED-09"],
        "After a resume the flow runs the typed-failed id a second time: both calls are substituted and the effect ran once.",
        flow_fx(typed_fx(json!(2)),
            json!([{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": []}}, suspend("g"), {"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": []}}, complete(at("resume.0"))])),
        vec![start(), resume("g", json!("x"))]));
    v.push(r("typed-retry-new-id-succeeds", &["TYPED-11", "TYPED-09"],
        "A deliberate retry of a typed failure under a new id is a new frame and a new effect call (scripted to succeed), which completes.",
        flow_fx(json!({"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 1}}]}, "t-retry": {"outcomes": [{"value": "second"}]}}),
            json!([{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": [{"op": "run", "stepId": "a#retry:1", "toolId": "t-retry"}]}}, complete(at("steps.a#retry:1.output"))])),
        vec![start()]));
    v.push(r("typed-retry-new-id-twice", &["TYPED-11", "TYPED-10"],
        "Two retries under new ids (#retry:1, #retry:2): each is a new frame; the original id stays substituted.",
        flow_fx(json!({"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 1}}]}, "t1": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 2}}]},
                "t2": {"outcomes": [{"value": 3}]}}),
            json!([{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": []}}, {"op": "run", "stepId": "a#retry:1", "toolId": "t1", "catch": {"c": []}},
                {"op": "run", "stepId": "a#retry:2", "toolId": "t2"}, {"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": []}}, complete(at("steps.a#retry:2.output"))])),
        vec![start()]));
    v.push(r(
        "indoubt-verdict-failed-uncaught",
        &["TYPED-12", "FOLD-09"],
        "A failed verdict the flow does not catch: an untyped STEP_FAILED, then EXECUTION_FAILED.",
        flow_fx(
            json!({"a": {"outcomes": [{"indoubt": true}]}}),
            json!([run("a"), complete(Value::Null)]),
        ),
        vec![start(), verdict("a", 1, "failed", json!({"error": "gone"}))],
    ));
    v.push(r("indoubt-verdict-failed-declared-channel", &["TYPED-12", "TYPED-05"],
        "The step declares a typed channel, yet a failed verdict is recorded untyped (operator verdicts are not domain channels) and only the catch-all takes it.",
        flow_fx(json!({"t": {"errors": {"c": {}}, "outcomes": [{"indoubt": true}]}}),
            json!([{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": [complete(json!("typed"))], "*": [complete(json!("untyped"))]}}])),
        vec![start(), verdict("a", 1, "failed", json!({"error": "operator says no"}))]));
    v.push(r("typed-retry-when-asked-exhausted", &["TYPED-14", "TYPED-13"],
        "With retryTyped, typed failures are retried in memory until maxAttempts; the last one is recorded typed and caught.",
        flow_fx(typed_fx(json!({"n": 1})),
            json!([{"op": "run", "stepId": "s", "toolId": "t", "retry": {"maxAttempts": 2, "retryTyped": true}, "catch": {"c": []}}, complete(at("steps.s.errorPayload"))])),
        vec![start()]));
    v.push(r("typed-retry-when-asked-third-attempt", &["TYPED-14", "TYPED-13"],
        "With retryTyped and three attempts, two typed failures are retried in memory and the third attempt completes: no STEP_FAILED.",
        flow_fx(json!({"t": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 1}}, {"typed": {"channel": "c", "payload": 2}}, {"value": 3}]}}),
            json!([{"op": "run", "stepId": "s", "toolId": "t", "retry": {"maxAttempts": 3, "retryTyped": true}}, complete(at("steps.s.output"))])),
        vec![start()]));
    v.push(r("quarantine-facts-then-gate-resume", &["FOLD-46", "FOLD-41"],
        "Quarantine facts appended while the execution is parked at a gate do not end the park: the gate's answer is still accepted.",
        flow(json!([suspend("g"), complete(at("resume.0"))])),
        vec![start(), quarantine("t", "m1"), quarantine("t", "m2"), resume("g", json!("after holds"))]).features(&["receive"]));
}
