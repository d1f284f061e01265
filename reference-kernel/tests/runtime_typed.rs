//! TYPED rules (§4.1, ADR 0060): typed failure channels and their substitution.
#[path = "common/runtime.rs"]
mod rt;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use loom_kernel::fold::{fold, Status};
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{
    block_on, EffectCall, EffectMiddleware, EffectOutcome, EffectResult, RunOutcome, WithErrors,
};
use loom_kernel::versions::{effective_syscalls, KernelFeatures, SYSCALL_CATALOGUE};
use rt::*;
use serde_json::{json, Value};

fn typed(channel: &str, payload: Value) -> Value {
    json!({"typed": {"channel": channel, "payload": payload}})
}

/// A flow whose step `a` fails typed, caught on `c` by binding the payload and parking.
fn caught(errors_on_effect: Value, step_errors: Option<Value>, outcome: Value) -> Value {
    let mut step = json!({"op": "run", "stepId": "a", "catch": {"c": [{"op": "set", "name": "p", "value": {"$ref": "steps.a.errorPayload"}}, suspend("g")], "*": [suspend("u")]}});
    if let Some(e) = step_errors {
        step["errors"] = e;
    }
    json!({"flowId": "f", "effects": {"a": {"errors": errors_on_effect, "outcomes": [outcome]}}, "body": [step, {"op": "complete", "output": {"$ref": "vars.p"}}]})
}

fn failed_payload(rt: &Rt) -> Value {
    of_type(&log(rt, "e"), "STEP_FAILED")[0].payload.to_value()
}

struct Counting(Arc<AtomicU64>);
impl EffectMiddleware for Counting {
    fn around(
        &self,
        call: &EffectCall<'_>,
        next: &mut dyn FnMut(&EffectCall<'_>) -> EffectResult,
    ) -> EffectResult {
        self.0.fetch_add(1, Ordering::SeqCst);
        next(call)
    }
}

#[test]
fn typed_01_no_fail_syscall() {
    let all: Vec<&str> = SYSCALL_CATALOGUE.iter().map(|s| s.name).collect();
    assert!(!all.contains(&"fail") && !all.contains(&"compensate"));
    assert!(!effective_syscalls(&KernelFeatures {
        continue_as_new: true,
        receive: true,
        select: true,
        sha256_flow_hash: true
    })
    .contains(&"fail"));
}

#[test]
fn typed_02_typed_failure_caught_at_the_seam() {
    let rt = rt(&[caught(
        json!({"c": {"type": "object"}}),
        None,
        typed("c", json!({"k": 1})),
    )]);
    assert_eq!(start(&rt, "e", "f"), parked("g"));
    let p = failed_payload(&rt);
    assert_eq!(p["channel"], json!("c"));
}

#[test]
fn typed_03_declarations_on_step_effect_and_registered_effect() {
    // On the step.
    let r1 = rt(&[caught(
        json!(null),
        Some(json!({"c": {}})),
        typed("c", json!(1)),
    )]);
    assert_eq!(start(&r1, "e", "f"), parked("g"));
    // On the scripted effect.
    let r2 = rt(&[caught(json!({"c": {}}), None, typed("c", json!(1)))]);
    assert_eq!(start(&r2, "e", "f"), parked("g"));
    // On a registered (zod-free, structural) effect.
    let mut r3 = rt(&[flow(
        "f",
        json!([{"op": "run", "stepId": "a", "toolId": "t", "catch": {"c": [suspend("g")]}}]),
    )]);
    let mut errors = BTreeMap::new();
    errors.insert("c".to_owned(), json!({}));
    r3.register_effect(
        "t",
        WithErrors {
            errors,
            effect: |_: &EffectCall<'_>| {
                EffectResult::of(EffectOutcome::Typed {
                    channel: "c".into(),
                    payload: json!(1),
                })
            },
        },
    );
    assert_eq!(start(&r3, "e", "f"), parked("g"));
}

#[test]
fn typed_04_step_map_wins_wholesale_registry_falls_back() {
    let with_step = rt(&[caught(
        json!({"b": {}}),
        Some(json!({"a": {}})),
        typed("b", json!(1)),
    )]);
    assert_eq!(
        start(&with_step, "e", "f"),
        parked("u"),
        "b is undeclared under the step map {{a}}"
    );
    assert!(failed_payload(&with_step).get("channel").is_none());
    let fallback = rt(&[caught(json!({"c": {}}), None, typed("c", json!(1)))]);
    assert_eq!(start(&fallback, "e", "f"), parked("g"));
}

#[test]
fn typed_05_undeclared_channel_degrades_loudly() {
    let rt = rt(&[caught(json!({"other": {}}), None, typed("c", json!(1)))]);
    assert_eq!(start(&rt, "e", "f"), parked("u"));
    let p = failed_payload(&rt);
    assert!(p.get("channel").is_none() && p.get("payload").is_none());
    assert!(p["error"].as_str().unwrap().contains("not declared"));
    let d = rt.diagnostics();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].rule, "TYPED-05");
}

#[test]
fn typed_06_recorded_shape() {
    let rt = rt(&[caught(
        json!({"c": {"type": "object"}}),
        None,
        typed("c", json!({"k": 1})),
    )]);
    start(&rt, "e", "f");
    assert_eq!(
        failed_payload(&rt),
        json!({"stepId": "a", "error": "TypedFailure(c)", "channel": "c", "payload": {"k": 1}})
    );
}

#[test]
fn typed_07_payload_validated_before_append() {
    let schema = json!({"c": {"type": "object", "required": ["k"], "properties": {"k": {"type": "integer"}, "d": {"type": "string", "default": "x"}}}});
    let bad = rt(&[caught(
        schema.clone(),
        None,
        typed("c", json!({"k": "nope"})),
    )]);
    assert_eq!(start(&bad, "e", "f"), parked("u"));
    let p = failed_payload(&bad);
    assert!(p.get("channel").is_none());
    assert!(p["error"].as_str().unwrap().contains("schema"), "{p}");
    assert_eq!(bad.diagnostics()[0].rule, "TYPED-07");
    // GAP-33: the parsed value (defaults applied) is what is recorded.
    let good = rt(&[caught(schema, None, typed("c", json!({"k": 1})))]);
    start(&good, "e", "f");
    assert_eq!(failed_payload(&good)["payload"], json!({"k": 1, "d": "x"}));
}

#[test]
fn typed_08_sixteen_kib_cap_boundary() {
    let cap = loom_kernel::limits::TYPED_FAILURE_PAYLOAD_BYTES_MAX;
    for (len, typed_expected) in [(cap - 3, true), (cap - 2, true), (cap - 1, false)] {
        // Canonical JSON of a string of `len` ASCII bytes is len + 2 bytes.
        let rt = rt(&[caught(
            json!({"c": {"type": "string"}}),
            None,
            typed("c", json!("a".repeat(len))),
        )]);
        start(&rt, "e", "f");
        assert_eq!(
            failed_payload(&rt).get("channel").is_some(),
            typed_expected,
            "payload of {} bytes",
            len + 2
        );
    }
}

#[test]
fn typed_09_substitution_zero_events_zero_calls() {
    let mut rt = rt(&[caught(json!({"c": {}}), None, typed("c", json!({"k": 1})))]);
    let calls = Arc::new(AtomicU64::new(0));
    rt.add_middleware(Counting(calls.clone()));
    start(&rt, "e", "f");
    assert_eq!((rt.step_calls("a"), calls.load(Ordering::SeqCst)), (1, 1));
    let before = log(&rt, "e").len();
    let out = resume(&rt, "e", "g", json!(null)).unwrap();
    assert_eq!(
        out,
        completed(json!({"k": 1})),
        "the same catch branch, with an equal payload"
    );
    assert_eq!(
        (rt.step_calls("a"), calls.load(Ordering::SeqCst)),
        (1, 1),
        "zero effect and middleware calls"
    );
    // Only the resume batch and the completion were appended: nothing for the step.
    let after = log(&rt, "e");
    assert_eq!(
        types(&after[before..]),
        ["g", "EXECUTION_RESUMED", "EXECUTION_COMPLETED"]
    );
}

#[test]
fn typed_10_same_id_invoked_again_live_is_substituted() {
    let f = json!({"flowId": "f", "effects": {"x": {"errors": {"c": {}}, "outcomes": [typed("c", json!(1)), {"value": 2}]}},
        "body": [{"op": "run", "stepId": "x", "catch": {"c": []}}, {"op": "run", "stepId": "x", "catch": {"c": [{"op": "complete", "output": "substituted"}]}}]});
    let rt = rt(&[f]);
    assert_eq!(start(&rt, "e", "f"), completed(json!("substituted")));
    assert_eq!(rt.step_calls("x"), 1);
}

#[test]
fn typed_11_deliberate_retry_mints_a_new_id() {
    let f = json!({"flowId": "f", "effects": {"x": {"errors": {"c": {}}, "outcomes": [typed("c", json!(1))]}},
        "body": [{"op": "run", "stepId": "x", "catch": {"c": []}},
                 {"op": "run", "stepId": "x#retry:1", "toolId": "x", "catch": {"c": []}}]});
    let rt = rt(&[f]);
    start(&rt, "e", "f");
    assert_eq!(
        rt.effect_calls("x"),
        2,
        "a new id is a new frame and a new invocation"
    );
    let s = state(&rt, "e");
    assert!(s.frames.contains_key("x") && s.frames.contains_key("x#retry:1"));
}

#[test]
fn typed_12_indoubt_fail_verdict_stays_untyped() {
    let f = json!({"flowId": "f", "effects": {"a": {"errors": {"c": {}}, "outcomes": [{"indoubt": true}]}},
        "body": [{"op": "run", "stepId": "a", "catch": {"*": []}}, {"op": "complete"}]});
    let rt = rt(&[f]);
    assert_eq!(start(&rt, "e", "f"), parked("__loom_indoubt__"));
    let verdict = json!({"verdict": {"stepId": "a", "attempt": 1, "outcome": "failed", "error": "operator: failed"}});
    let out = block_on(rt.resume("e", ResumeRequest::new("__loom_indoubt__", verdict))).unwrap();
    assert_eq!(out, completed(Value::Null));
    let p = failed_payload(&rt);
    assert!(p.get("channel").is_none());
    assert_eq!(p["error"], json!("operator: failed"));
    assert_eq!(
        rt.step_calls("a"),
        1,
        "the verdict settles the step without a call"
    );
}

#[test]
fn typed_13_default_retry_excludes_typed_failure() {
    let mk = |retry_typed: bool| {
        json!({"flowId": "f", "effects": {"a": {"errors": {"c": {}}, "outcomes": [typed("c", json!(1))]}},
            "body": [{"op": "run", "stepId": "a", "retry": {"maxAttempts": 3, "retryTyped": retry_typed}, "catch": {"c": []}}]})
    };
    let default = rt(&[mk(false)]);
    start(&default, "e", "f");
    assert_eq!(default.step_calls("a"), 1);
    let explicit = rt(&[mk(true)]);
    start(&explicit, "e", "f");
    assert_eq!(
        explicit.step_calls("a"),
        3,
        "an explicit isRetryable keeps full control"
    );
}

#[test]
fn typed_14_middleware_may_retry_typed_failure_in_memory() {
    struct RetryTyped;
    impl EffectMiddleware for RetryTyped {
        fn around(
            &self,
            call: &EffectCall<'_>,
            next: &mut dyn FnMut(&EffectCall<'_>) -> EffectResult,
        ) -> EffectResult {
            let first = next(call);
            if matches!(first.outcome, EffectOutcome::Typed { .. }) {
                let again = EffectCall {
                    attempt: call.attempt + 1,
                    ..*call
                };
                return next(&again);
            }
            first
        }
    }
    let f = json!({"flowId": "f", "effects": {"a": {"errors": {"c": {}}, "outcomes": [typed("c", json!(1)), {"value": "ok"}]}},
        "body": [run_step("a"), {"op": "complete", "output": {"$ref": "steps.a.output"}}]});
    let mut rt = rt(&[f]);
    rt.add_middleware(RetryTyped);
    assert_eq!(start(&rt, "e", "f"), completed(json!("ok")));
    let l = log(&rt, "e");
    assert_eq!(count(&l, "STEP_FAILED"), 0);
    assert_eq!(count(&l, "STEP_COMPLETED"), 1);
}

#[test]
fn typed_15_parallel_fail_fast_siblings_settle_replay_invokes_nothing() {
    let f = json!({"flowId": "f", "effects": {
            "bad": {"errors": {"c": {}}, "outcomes": [typed("c", json!(1))]},
            "s1": {"outcomes": [{"value": 1, "ticks": 3}]}, "s2": {"outcomes": [{"value": 2, "ticks": 5}]}},
        "body": [{"op": "run", "stepId": "p", "toolId": "noop"},
                 {"op": "parallel", "branches": [[run_step("bad")], [run_step("s1")], [run_step("s2")]]}]});
    // The join rejects with the typed failure; no catch around a parallel, so the flow fails.
    let body_with_gate = {
        let mut f = f.clone();
        f["body"] = json!([{"op": "parallel", "branches": [[{"op": "run", "stepId": "bad", "catch": {"c": [suspend("g")]}}], [run_step("s1")], [run_step("s2")]]}]);
        f
    };
    let rt1 = rt(&[f]);
    let out = start(&rt1, "e", "f");
    assert!(
        matches!(out, RunOutcome::Failed { ref error } if error == "TypedFailure(c)"),
        "{out:?}"
    );
    let s = state(&rt1, "e");
    for id in ["bad", "s1", "s2"] {
        assert!(
            s.frames[id].status.is_settled(),
            "{id} has a terminal STEP_*"
        );
    }
    let rt2 = rt(&[body_with_gate]);
    assert_eq!(start(&rt2, "e", "f"), parked("g"));
    let calls: u64 = ["bad", "s1", "s2"].iter().map(|s| rt2.step_calls(s)).sum();
    resume(&rt2, "e", "g", json!(null)).unwrap();
    assert_eq!(
        ["bad", "s1", "s2"]
            .iter()
            .map(|s| rt2.step_calls(s))
            .sum::<u64>(),
        calls,
        "replay invokes nothing"
    );
}

#[test]
fn typed_16_substitution_consumes_no_passthrough() {
    let f = json!({"flowId": "f", "effects": {"x": {"errors": {"c": {}}, "outcomes": [typed("c", json!(1))]}},
        "body": [{"op": "run", "stepId": "x", "catch": {"c": [{"op": "suspend", "on": "G1", "bind": "a"}]}},
                 {"op": "suspend", "on": "G2", "bind": "b"}, {"op": "complete", "output": [{"$ref": "vars.a"}, {"$ref": "vars.b"}]}]});
    let rt = rt(&[f]);
    assert_eq!(start(&rt, "e", "f"), parked("G1"));
    assert_eq!(resume(&rt, "e", "G1", json!("one")).unwrap(), parked("G2"));
    assert_eq!(
        resume(&rt, "e", "G2", json!("two")).unwrap(),
        completed(json!(["one", "two"]))
    );
}

#[test]
fn typed_17_typed_step_failed_does_not_fail_execution() {
    let rt = rt(&[caught(json!({"c": {}}), None, typed("c", json!(1)))]);
    start(&rt, "e", "f");
    let l = log(&rt, "e");
    let upto = l
        .iter()
        .position(|e| e.event_type == "STEP_FAILED")
        .unwrap();
    assert_eq!(fold(&l[..=upto]).status, Status::Running);
}
