//! Property tests over random flow scripts: crash-and-recover equivalence (PLACE-04,
//! REPLAY-01, EMIT-01/12) and hostile resumes leaving the log byte-identical
//! (INGRESS-15). Bounded so they run in seconds; a 10,000-step flow checks that a
//! fully served replay stays linear.
#[path = "common/runtime.rs"]
mod rt;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use loom_kernel::fold::keys;
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{
    block_on, EffectCall, EffectOutcome, EffectResult, FaultPlan, RunOutcome, Runtime,
    RuntimeConfig,
};
use loom_kernel::spi::{EventStore, ManualClock};
use loom_stores::MemoryEventStore;
use proptest::prelude::*;
use rt::*;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
enum Op {
    Run,
    Typed,
    Emit,
    Decide,
    Suspend,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![4 => Just(Op::Run), 1 => Just(Op::Typed), 3 => Just(Op::Emit), 1 => Just(Op::Decide), 1 => Just(Op::Suspend)]
}

fn script(ops: &[Op]) -> Value {
    let body: Vec<Value> = ops
        .iter()
        .enumerate()
        .map(|(i, o)| match o {
            Op::Run => json!({"op": "run", "stepId": format!("s{i}"), "toolId": "spy", "input": i}),
            Op::Typed => json!({"op": "run", "stepId": format!("t{i}"), "toolId": "typed", "catch": {"c": []}}),
            Op::Emit => json!({"op": "emit", "eventType": "X", "payload": i}),
            Op::Decide => json!({"op": "decide", "id": format!("d{i}"), "choice": i}),
            Op::Suspend => json!({"op": "suspend", "on": format!("g{i}")}),
        })
        .collect();
    json!({"flowId": "f", "effects": {"typed": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 1}}]}}, "body": body})
}

/// A runtime whose `spy` effect records whether the log already held the step's
/// STEP_COMPLETED when it was invoked (it must never have).
fn spy_rt(
    flow: &Value,
    violations: Arc<Mutex<Vec<String>>>,
) -> Runtime<MemoryEventStore, Arc<ManualClock>> {
    let store = Arc::new(MemoryEventStore::new());
    let mut rt = Runtime::new(
        store.clone(),
        Arc::new(ManualClock::new(T0)),
        RuntimeConfig::default(),
    );
    rt.register_flow_json(flow).unwrap();
    rt.register_effect("spy", move |c: &EffectCall<'_>| {
        let log = block_on(store.read(c.execution_id)).unwrap();
        if log
            .iter()
            .any(|e| e.event_type == "STEP_COMPLETED" && e.payload["stepId"] == json!(c.step_id))
        {
            violations.lock().unwrap().push(c.step_id.to_owned());
        }
        EffectResult::of(EffectOutcome::Value(c.input.clone()))
    });
    rt
}

fn drive(rt: &Rt, first: RunOutcome) -> RunOutcome {
    let mut out = first;
    for _ in 0..100 {
        out = match out {
            RunOutcome::Crashed { .. } => {
                let s = state(rt, "e");
                match s.parked_gate() {
                    Some(g) => resume(rt, "e", g, json!(g)).unwrap(),
                    None if s.status.is_terminal() => return completed(Value::Null),
                    None => recover(rt, "e").unwrap(),
                }
            }
            RunOutcome::Parked { gate } => resume(rt, "e", &gate, json!(gate)).unwrap(),
            done => return done,
        };
    }
    out
}

fn comparable(rt: &Rt) -> Value {
    let s = state(rt, "e");
    let frames: BTreeMap<String, Value> = s
        .frames
        .iter()
        .map(|(k, f)| {
            (
                k.clone(),
                json!([f.status, f.output, f.error_channel, f.error_payload]),
            )
        })
        .collect();
    let decisions: BTreeMap<String, Value> = s
        .variables
        .decisions
        .as_ref()
        .map(|d| {
            d.iter()
                .map(|(k, v)| (k.to_owned(), v.get("choice").unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    json!({"status": s.status, "frames": frames, "decisions": decisions,
           "resume": s.variables.get(keys::RESUME_PAYLOADS), "output": s.variables.get(keys::OUTPUT)})
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn place_04_prop_crash_recover_equals_crash_free(ops in prop::collection::vec(op(), 1..10), crash in 1u64..30) {
        let flow = script(&ops);
        let clean_v = Arc::new(Mutex::new(Vec::new()));
        let clean = spy_rt(&flow, clean_v.clone());
        let first = start(&clean, "e", "f");
        drive(&clean, first);
        let v = Arc::new(Mutex::new(Vec::new()));
        let rt = spy_rt(&flow, v.clone());
        rt.inject_fault(FaultPlan { crash_after_appends: crash });
        let first = start(&rt, "e", "f");
        drive(&rt, first);
        prop_assert_eq!(comparable(&rt), comparable(&clean));
        prop_assert!(v.lock().unwrap().is_empty(), "re-invoked a completed step: {:?}", v.lock().unwrap());
        // Every stamped emit appears once; every clean emit appears.
        let l = log(&rt, "e");
        let mut stamps = BTreeMap::new();
        for e in &l {
            if let Some(d) = e.flow_emit() {
                *stamps.entry(d.to_owned()).or_insert(0) += 1;
            }
        }
        prop_assert!(stamps.values().all(|n| *n == 1), "{:?}", stamps);
        for e in of_type(&log(&clean, "e"), "X") {
            prop_assert!(l.iter().any(|x| x.event_type == "X" && x.payload == e.payload));
        }
    }

    #[test]
    fn ingress_15_prop_refused_resume_leaves_log_identical(
        ops in prop::collection::vec(op(), 1..6),
        event_type in prop_oneof![Just("g0".to_owned()), Just("g1".to_owned()), Just("STEP_COMPLETED".to_owned()), Just("TIMER_FIRED".to_owned()),
            Just("EXECUTION_RECOVERED".to_owned()), Just("APPROVAL_GRANTED".to_owned()), Just("__loom_indoubt__".to_owned()), "[a-z]{1,4}"],
        payload in prop_oneof![Just(Value::Null), any::<i64>().prop_map(Value::from), "[a-z]{0,3}".prop_map(Value::from)],
        forged in prop_oneof![Just(None), Just(Some("kernel")), Just(Some("flowEmit")), Just(Some("seal"))],
    ) {
        let mut ops = ops;
        ops.push(Op::Suspend);
        let rt = spy_rt(&script(&ops), Arc::new(Mutex::new(Vec::new())));
        let first = start(&rt, "e", "f");
        prop_assume!(matches!(first, RunOutcome::Parked { .. }));
        let before = log_bytes(&rt, "e");
        let mut req = ResumeRequest::new(event_type, payload);
        if let Some(k) = forged {
            req.metadata = Some(serde_json::from_value(json!({k: true})).unwrap());
        }
        if block_on(rt.resume("e", req)).is_err() {
            prop_assert_eq!(log_bytes(&rt, "e"), before);
        }
    }
}

#[test]
fn ten_thousand_steps_live_and_fully_served() {
    let mut body: Vec<Value> = (0..10_000)
        .map(|i| json!({"op": "run", "stepId": format!("s{i}")}))
        .collect();
    body.push(json!({"op": "suspend", "on": "g"}));
    let rt = rt(&[json!({"flowId": "f", "body": body})]);
    assert_eq!(start(&rt, "e", "f"), parked("g"));
    assert_eq!(
        resume(&rt, "e", "g", json!(null)).unwrap(),
        completed(Value::Null)
    );
    assert_eq!(rt.step_calls("s9999"), 1);
}
