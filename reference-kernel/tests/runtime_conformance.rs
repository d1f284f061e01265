//! Runtime-level evidence for rules that span the gate, the fold and the runtime:
//! ABI-12 (SuspendConfig), COMPAT-07 (G1), COMPAT-11 (what the kernel writes with every
//! flag off), INGRESS-34 (a verdict needs its EFFECT_INDOUBT) and FOLD-46 (the park
//! fence ignores quarantine facts).

#[path = "common/runtime.rs"]
mod rt;
use loom_kernel::fold::fold;
use loom_kernel::ingress::{park_fence_holds, ResumeRequest};
use loom_kernel::runtime::script::FlowScript;
use loom_kernel::runtime::{block_on, RunOutcome, RuntimeConfig};
use loom_kernel::spi::EventStore;
use loom_kernel::versions::KernelFeatures;
use loom_kernel::EventEnvelope;
use serde_json::{json, Value};

fn read(r: &rt::Rt, id: &str) -> Vec<EventEnvelope> {
    block_on(r.store().read(id)).unwrap()
}

#[test]
fn abi_12_suspend_config_requires_only_on_and_accepts_extra_fields() {
    let f = KernelFeatures::default();
    let ok = |suspend: Value| FlowScript::parse(&json!({"flowId": "f", "body": [suspend]}), &f);
    assert!(ok(json!({"op": "suspend", "on": "g"})).is_ok());
    assert!(ok(
        json!({"op": "suspend", "on": "g", "timeout": 5, "correlationKey": "k", "wakeAt": 9})
    )
    .is_ok());
    assert!(
        ok(json!({"op": "suspend", "on": "g", "condition": {"stepId": "x"}})).is_ok(),
        "a caller's condition is accepted (then stripped)"
    );
    assert!(ok(json!({"op": "suspend"})).is_err(), "`on` is required");
}

/// One flow per capability, each with a decision, run to a park, resumed, then
/// re-driven: the decider and every completed effect run exactly once (P2 + P9).
#[test]
fn compat_07_every_capability_replays_and_serves_its_decisions() {
    let capabilities = [
        (
            "typed failures",
            json!({"op": "run", "stepId": "t", "toolId": "typed", "errors": {"c": {"type": "object"}}, "catch": {"c": []}}),
        ),
        (
            "flow emits",
            json!({"op": "emit", "eventType": "app.e", "payload": {"x": 1}}),
        ),
        (
            "metering",
            json!({"op": "run", "stepId": "m", "toolId": "metered"}),
        ),
        (
            "negotiateBudget",
            json!({"op": "negotiateBudget", "dimension": "tokens", "request": 10, "id": "nb"}),
        ),
        (
            "parallel",
            json!({"op": "parallel", "branches": [[{"op": "run", "stepId": "p1"}], [{"op": "run", "stepId": "p2"}]]}),
        ),
    ];
    for (name, stmt) in capabilities {
        let flow = json!({
            "flowId": "f",
            "effects": {"typed": {"outcomes": [{"typed": {"channel": "c", "payload": {}}}]}, "metered": {"outcomes": [{"value": 1, "meter": {"tokens": 3}}]}},
            "body": [stmt, {"op": "decide", "id": "d", "choice": "x"}, {"op": "suspend", "on": "go"}, {"op": "run", "stepId": "after"}]
        });
        let r = rt::rt_with(RuntimeConfig::default(), &[flow]);
        match block_on(r.start("e", "f", json!({}))) {
            Ok(RunOutcome::Parked { .. }) => {}
            other => panic!("{name}: expected a park, got {other:?}"),
        }
        let before = read(&r, "e");
        let decisions_before = fold(&before)
            .variables
            .decisions
            .as_ref()
            .map_or(0, |d| d.len());
        block_on(r.resume("e", ResumeRequest::new("go", json!(1))))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let after = read(&r, "e");
        assert_eq!(
            &after[..before.len()],
            &before[..],
            "{name}: replay rewrote history"
        );
        let s = fold(&after);
        assert_eq!(
            s.variables.decisions.as_ref().map_or(0, |d| d.len()),
            decisions_before,
            "{name}: a decision was recomputed"
        );
        for step in ["t", "m", "p1", "p2"] {
            assert!(
                r.step_calls(step) <= 1,
                "{name}: step {step} ran {} times",
                r.step_calls(step)
            );
        }
    }
}

/// How many `DECISION_RECORDED` events in `log` record the decision `id`.
fn recorded(log: &[EventEnvelope], id: &str) -> usize {
    log.iter()
        .filter(|e| e.event_type == "DECISION_RECORDED" && e.payload["id"] == json!(id))
        .count()
}

/// COMPAT-07 from the log's side: the test above counts `_decisions` entries, a map keyed
/// by id, so a capability that calls its decider again on replay and records the
/// decision a second time under the same id still folds to one entry. Here each
/// capability's decision is recorded once in the log, whatever the replays, its decider
/// (or negotiator) is called once, and the replayed run is served the recorded choice.
#[test]
fn compat_07_a_replayed_decision_is_recorded_once_and_its_decider_called_once() {
    let capabilities = [
        (
            "decide",
            json!({"op": "decide", "id": "d", "decider": "counter"}),
        ),
        (
            "negotiateBudget",
            json!({"op": "negotiateBudget", "dimension": "tokens", "request": 10, "id": "d"}),
        ),
    ];
    for (name, stmt) in capabilities {
        let flow = json!({"flowId": "f", "body": [stmt,
            {"op": "suspend", "on": "g1"}, {"op": "suspend", "on": "g2"},
            {"op": "complete", "output": {"$ref": "decisions.d"}}]});
        let mut r = rt::rt_with(RuntimeConfig::default(), &[flow]);
        let counter = std::sync::atomic::AtomicU64::new(0);
        r.register_decider("counter", move |_: &str| {
            Ok(json!(
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 100
            ))
        });
        let parked = |o| matches!(o, Ok(RunOutcome::Parked { .. }));
        assert!(parked(block_on(r.start("e", "f", json!({})))), "{name}");
        let first = fold(&read(&r, "e")).to_value()["variables"]["_decisions"]["d"].clone();
        assert!(
            parked(block_on(r.resume("e", ResumeRequest::new("g1", json!(1))))),
            "{name}"
        );
        let out = block_on(r.resume("e", ResumeRequest::new("g2", json!(2)))).unwrap();
        let log = read(&r, "e");
        assert_eq!(
            recorded(&log, "d"),
            1,
            "{name}: the decision was recorded again on replay"
        );
        let calls = if name == "decide" {
            r.decider_calls("d")
        } else {
            r.negotiator_calls()
        };
        assert_eq!(calls, 1, "{name}: called again on replay");
        let served = fold(&log).to_value()["variables"]["_decisions"]["d"].clone();
        assert_eq!(
            served, first,
            "{name}: the replay changed the recorded choice"
        );
        assert!(
            matches!(out, RunOutcome::Completed { .. }),
            "{name}: {out:?}"
        );
    }
}

#[test]
fn compat_11_with_every_flag_off_no_unwritten_shapes_appear() {
    let flows = [
        json!({"flowId": "a", "body": [{"op": "run", "stepId": "s"}, {"op": "decide", "id": "d", "choice": 1}, {"op": "emit", "eventType": "app.x", "payload": {}}, {"op": "suspend", "on": "g"}]}),
        json!({"flowId": "b", "codeFingerprint": "v1", "body": [{"op": "parallel", "branches": [[{"op": "run", "stepId": "p"}], [{"op": "run", "stepId": "q"}]]}, {"op": "suspend", "on": "g"}]}),
    ];
    for flow in flows {
        let fingerprint = flow.get("codeFingerprint").is_some();
        let r = rt::rt_with(RuntimeConfig::default(), std::slice::from_ref(&flow));
        let fid = flow["flowId"].as_str().unwrap();
        block_on(r.start("e", fid, json!({}))).unwrap();
        block_on(r.resume("e", ResumeRequest::new("g", json!(1)))).unwrap();
        for e in read(&r, "e") {
            assert!(
                !matches!(
                    e.event_type.as_str(),
                    "EXECUTION_CONTINUED"
                        | "MESSAGE_CONSUMED"
                        | "INBOX_QUARANTINED"
                        | "INBOX_RELEASED"
                ),
                "{fid}: {}",
                e.event_type
            );
            assert!(e.meta("seal").is_none());
            assert!(e.payload.get("waits").is_none());
            if e.event_type == "EXECUTION_RESUMED" {
                assert!(
                    !(e.is_kernel_stamped() && e.payload.get("waitId").is_some()),
                    "wait-addressed resume with receive/select off"
                );
            }
            if e.event_type == "EXECUTION_STARTED" {
                assert_eq!(
                    e.payload.get("codeHash").is_some(),
                    fingerprint,
                    "{fid}: codeHash exactly when a fingerprint is supplied"
                );
            }
        }
    }
}

#[test]
fn ingress_34_verdict_without_its_indoubt_fact_is_not_honoured() {
    let flow = json!({"flowId": "f", "effects": {"pay": {"outcomes": [{"value": "live", "crash": "after-append"}, {"value": "live"}]}}, "body": [{"op": "run", "stepId": "pay", "toolId": "pay"}, {"op": "suspend", "on": "g"}]});
    // 1. A forged verdict with no EFFECT_INDOUBT in the log: the step's outcome is the effect's.
    let r = rt::rt_with(RuntimeConfig::default(), std::slice::from_ref(&flow));
    let _ = block_on(r.start("e", "f", json!({})));
    let log = read(&r, "e");
    let started_only: Vec<EventEnvelope> = log
        .iter()
        .take_while(|e| e.event_type != "STEP_COMPLETED")
        .cloned()
        .collect();
    let r2 = rt::rt_with(RuntimeConfig::default(), &[flow]);
    let mut forged = started_only.clone();
    let mut v = forged.last().unwrap().clone();
    v.sequence = forged.len() as u64;
    v.id = "forged".into();
    v.event_type = "DECISION_RECORDED".into();
    v.payload = json!({"id": "__loom_verdict:pay#1", "choice": {"stepId": "pay", "attempt": 1, "outcome": "completed", "output": "forged"}}).into();
    v.metadata = Some(serde_json::from_value(json!({"kernel": true})).unwrap());
    forged.push(v);
    block_on(r2.store().append("e", 0, forged, None)).unwrap();
    let outcome = block_on(r2.recover("e")).unwrap();
    assert!(matches!(outcome, RunOutcome::Parked { .. }), "{outcome:?}");
    let s = fold(&read(&r2, "e"));
    assert_eq!(
        s.frames["pay"].output,
        Some(json!("live").into()),
        "the forged verdict decided the step"
    );
}

#[test]
fn fold_46_quarantine_facts_do_not_move_the_park_fence() {
    let flow = json!({"flowId": "f", "body": [{"op": "suspend", "on": "g"}]});
    let r = rt::rt_with(RuntimeConfig::default(), &[flow]);
    block_on(r.start("e", "f", json!({}))).unwrap();
    let at_park = read(&r, "e");
    let mut after = at_park.clone();
    for (i, kind) in ["INBOX_QUARANTINED", "INBOX_RELEASED"].iter().enumerate() {
        let mut e = at_park.last().unwrap().clone();
        e.sequence = (at_park.len() + i) as u64;
        e.event_type = (*kind).into();
        e.payload = json!({"topic": "t", "messageId": "m", "operator": "op"}).into();
        e.metadata = Some(serde_json::from_value(json!({"kernel": true})).unwrap());
        after.push(e);
    }
    assert!(
        park_fence_holds(&after[at_park.len()..]),
        "quarantine facts are ignorable for the park fence"
    );
    let mut moved = after.clone();
    let mut step = at_park.last().unwrap().clone();
    step.sequence = after.len() as u64;
    step.event_type = "STEP_STARTED".into();
    step.payload = json!({"stepId": "x"}).into();
    moved.push(step);
    assert!(
        !park_fence_holds(&moved[at_park.len()..]),
        "any other event moves the fence"
    );
}
