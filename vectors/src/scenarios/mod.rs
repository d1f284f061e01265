//! Scenario definitions: the source of every vector. Each module lists scenarios as
//! Rust data (inputs only); the generator computes every expected value with the
//! reference kernel. Ids are stable: renaming one is a new vector.

pub mod digest;
pub mod edges;
pub mod emit;
pub mod fold;
pub mod ingress;
pub mod normalize;
pub mod runtime;
pub mod syscalls;
pub mod wire;

use crate::generate::Scenario;
use serde_json::{json, Map, Value};

/// Every scenario, in module order.
pub fn all() -> Vec<Scenario> {
    let mut out = Vec::new();
    out.extend(fold::scenarios());
    out.extend(normalize::scenarios());
    out.extend(digest::scenarios());
    out.extend(ingress::scenarios());
    out.extend(emit::scenarios());
    out.extend(runtime::scenarios());
    out.extend(edges::scenarios());
    out.extend(syscalls::scenarios());
    out.extend(wire::scenarios());
    out
}

/// An envelope under construction; [`log`] assigns id, sequence and timestamp.
#[derive(Debug, Clone, PartialEq)]
pub struct Ev {
    /// Event type.
    pub event_type: String,
    /// Payload.
    pub payload: Value,
    /// Metadata.
    pub metadata: Option<Map<String, Value>>,
}

/// An event of `event_type` with `payload`.
pub fn ev(event_type: &str, payload: Value) -> Ev {
    Ev {
        event_type: event_type.into(),
        payload,
        metadata: None,
    }
}

impl Ev {
    /// Adds one metadata key.
    pub fn meta(mut self, key: &str, value: Value) -> Ev {
        self.metadata
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }
    /// Marks the envelope kernel-stamped (`metadata.kernel: true`).
    pub fn kernel(self) -> Ev {
        self.meta("kernel", Value::Bool(true))
    }
    /// Stamps a flow emit digest (`metadata.flowEmit`).
    pub fn stamp(self, digest: &str) -> Ev {
        self.meta("flowEmit", Value::String(digest.into()))
    }
}

/// Envelopes as JSON: ids `e<i>`, sequences from 0, timestamps `1000 + 10 * i`,
/// workflow `flow`, execution `exec-1`.
pub fn log(events: Vec<Ev>) -> Vec<Value> {
    events
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let mut m = Map::new();
            m.insert("id".into(), json!(format!("e{i}")));
            m.insert("workflowId".into(), json!("flow"));
            m.insert("executionId".into(), json!("exec-1"));
            m.insert("eventType".into(), json!(e.event_type));
            m.insert("sequence".into(), json!(i));
            m.insert("timestamp".into(), json!(1000 + 10 * i as i64));
            m.insert("payload".into(), e.payload);
            if let Some(meta) = e.metadata {
                m.insert("metadata".into(), Value::Object(meta));
            }
            Value::Object(m)
        })
        .collect()
}

/// `EXECUTION_STARTED {input: {n: 1}}`.
pub fn started() -> Ev {
    ev("EXECUTION_STARTED", json!({"input": {"n": 1}}))
}
/// `STEP_STARTED` of step `id`.
pub fn step_started(id: &str) -> Ev {
    ev(
        "STEP_STARTED",
        json!({"stepId": id, "toolId": "tool", "input": {"x": id}}),
    )
}
/// `STEP_COMPLETED` of step `id`.
pub fn step_completed(id: &str, output: Value) -> Ev {
    ev("STEP_COMPLETED", json!({"stepId": id, "output": output}))
}
/// An untyped `STEP_FAILED` of step `id`.
pub fn step_failed(id: &str) -> Ev {
    ev("STEP_FAILED", json!({"stepId": id, "error": "boom"}))
}
/// A typed `STEP_FAILED` on `channel`.
pub fn step_failed_typed(id: &str, channel: &str, payload: Value) -> Ev {
    ev(
        "STEP_FAILED",
        json!({"stepId": id, "error": format!("TypedFailure({channel})"), "channel": channel, "payload": payload}),
    )
}
/// `EXECUTION_SUSPENDED {on: gate}`.
pub fn suspended(gate: &str) -> Ev {
    ev("EXECUTION_SUSPENDED", json!({ "on": gate }))
}
/// A timed park.
pub fn suspended_timed(gate: &str, wake_at: i64) -> Ev {
    ev(
        "EXECUTION_SUSPENDED",
        json!({"on": gate, "wakeAt": wake_at}),
    )
}
/// `EXECUTION_RESUMED` with `payload`.
pub fn resumed(payload: Value) -> Ev {
    ev("EXECUTION_RESUMED", payload)
}
/// `DECISION_RECORDED {id, choice}`.
pub fn decision(id: &str, choice: Value) -> Ev {
    ev("DECISION_RECORDED", json!({"id": id, "choice": choice}))
}

/// Lowercase, dash-separated form of an event type for ids.
pub fn slug(event_type: &str) -> String {
    event_type.to_ascii_lowercase().replace('_', "-")
}

/// A representative payload for every known kind (reference-defined shapes, DESIGN.md
/// §3 and docs/event-schema.md).
pub fn sample_payload(kind: &str) -> Value {
    match kind {
        "APPROVAL_GRANTED" => json!({"eventType": "APPROVE", "verdict": true}),
        "DECISION_RECORDED" => json!({"id": "d1", "choice": "a"}),
        "EFFECT_DENIED" => json!({"stepId": "s1", "reason": "policy"}),
        "EFFECT_INDOUBT" => json!({"stepId": "s1", "attempt": 1}),
        "EGRESS_DENIED" => json!({"host": "example.invalid"}),
        "EVENTS_REHOMED" => json!({"segment": 1, "from": "blank", "to": "exec-1"}),
        "EXECUTION_CANCELLED" => json!({}),
        "EXECUTION_COMPLETED" => json!({"output": {"ok": true}}),
        "EXECUTION_CONTINUED" => json!({"continuedTo": "exec-2"}),
        "EXECUTION_FAILED" => json!({"error": "boom"}),
        "EXECUTION_MIGRATED" => json!({"migratedInput": {"n": 2}}),
        "EXECUTION_RECOVERED" => json!({}),
        "EXECUTION_RESUMED" => json!({"answer": "yes"}),
        "EXECUTION_STARTED" => json!({"input": {"n": 9}}),
        "EXECUTION_SUSPENDED" => json!({"on": "LATER"}),
        "INBOX_QUARANTINED" => json!({"topic": "t", "messageId": "m1"}),
        "INBOX_RELEASED" => json!({"topic": "t", "operator": "ops", "deliver": true}),
        "MESSAGE_CONSUMED" => json!({"topic": "t", "messageId": "m1"}),
        "OUTCOME_RECORDED" => json!({"stepId": "s1", "outcome": "good"}),
        "PARALLEL_COMPLETED" => json!({"scopeId": "p1", "results": [1, 2]}),
        "QUOTA_EXCEEDED" => json!({"dimension": "tokens", "reason": "budget"}),
        "RESOURCE_METERED" => json!({"tokens": 5, "costUsd": 0.25}),
        "SAFETY_BLOCKED" => json!({"reason": "unsafe"}),
        "STEP_CANCELLED" => json!({"stepId": "s1"}),
        "STEP_COMPLETED" => json!({"stepId": "s1", "output": 42}),
        "STEP_FAILED" => json!({"stepId": "s1", "error": "boom"}),
        "STEP_RETRYING" => json!({"stepId": "s1", "attempt": 2}),
        "STEP_STARTED" => json!({"stepId": "s2", "toolId": "tool", "input": {"y": 1}}),
        "TIMER_FIRED" => json!({"firedAt": 5000}),
        _ => json!({"note": "application event"}),
    }
}
