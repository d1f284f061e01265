//! The replay tool (`loom replay --log --flow`): a log recorded here by a flow script
//! replays unchanged against the same script; after a code change the first divergence
//! is reported with its event index, both envelopes and the syscall. REPLAY-16's
//! evidence is the committed corpus (`tests/golden.rs`), not these in-test recordings.

use loom_vectors::format::RuntimeInput;
use loom_vectors::replay::replay;
use loom_vectors::scrub::run_scenario;
use serde_json::{json, Value};

fn record(flow: &Value, steps: Value) -> Vec<loom_kernel::EventEnvelope> {
    let input = RuntimeInput {
        flows: vec![flow.clone()],
        features: vec![],
        timers: true,
        steps: serde_json::from_value(steps).unwrap(),
    };
    let answer = run_scenario(&input).unwrap();
    loom_vectors::reference::envelopes(answer["log"].as_array().unwrap()).unwrap()
}

fn flow(step_b: &str) -> Value {
    json!({"flowId": "f", "body": [
        {"op": "run", "stepId": "a"},
        {"op": "suspend", "on": "g"},
        {"op": "decide", "id": "d", "choice": 1},
        {"op": "run", "stepId": step_b},
        {"op": "sleep", "ms": 50},
        {"op": "emit", "eventType": "DONE", "payload": {"ok": true}},
        {"op": "complete"}
    ]})
}

fn steps() -> Value {
    json!([
        {"op": "start", "flowId": "f", "input": {"n": 1}},
        {"op": "resume", "eventType": "g", "payload": {"yes": true}},
        {"op": "advance", "ms": 50},
        {"op": "fireTimers"}
    ])
}

#[test]
fn replay_tool_a_log_recorded_here_replays_unchanged() {
    let log = record(&flow("b"), steps());
    let report = replay(&log, &flow("b")).unwrap();
    assert!(report.unchanged(), "{}", report.render_text());
    assert_eq!(report.recorded_events, log.len());
}

#[test]
fn replay_tool_a_code_change_is_a_structured_divergence() {
    let log = record(&flow("b"), steps());
    let report = replay(&log, &flow("b2")).unwrap();
    let d = report.divergence.clone().expect("diverges");
    let index = log
        .iter()
        .position(|e| e.payload.get("stepId") == Some(&json!("b")))
        .unwrap();
    assert_eq!(d.event_index, index);
    assert!(d.syscall.contains("b2"), "{}", d.syscall);
    assert_eq!(d.path.as_deref(), Some("/payload/stepId"));
    assert!(report.render_text().contains("DIVERGED at event"));
    let v = report.to_value();
    assert_eq!(v["unchanged"], json!(false));
    assert_eq!(v["divergence"]["expected"]["payload"]["stepId"], json!("b"));
}
