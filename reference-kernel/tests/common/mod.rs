//! Builders for event logs in tests: `ev("STEP_STARTED", json!({...})).kernel()`.
#![allow(dead_code)]
pub mod gen;

use loom_kernel::fold::{fold_as, ExecutionState, FoldVersion};
use loom_kernel::snapshot::{restore, SnapshotRecord};
use loom_kernel::EventEnvelope;
use serde_json::{json, Map, Value};

/// An envelope under construction; `log` assigns sequences and timestamps.
#[derive(Clone, Debug)]
pub struct Ev {
    pub event_type: String,
    pub payload: Value,
    pub metadata: Option<Map<String, Value>>,
}

pub fn ev(event_type: &str, payload: Value) -> Ev {
    Ev {
        event_type: event_type.into(),
        payload,
        metadata: None,
    }
}

impl Ev {
    pub fn meta(mut self, key: &str, value: Value) -> Ev {
        self.metadata
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }
    pub fn kernel(self) -> Ev {
        self.meta("kernel", Value::Bool(true))
    }
    pub fn stamp(self, digest: &str) -> Ev {
        self.meta("flowEmit", Value::String(digest.into()))
    }
}

/// Envelopes with sequences 0.. and timestamps 1000 + 10 * sequence.
pub fn log(events: Vec<Ev>) -> Vec<EventEnvelope> {
    events
        .into_iter()
        .enumerate()
        .map(|(i, e)| EventEnvelope {
            id: format!("e{i}"),
            workflow_id: "flow".into(),
            execution_id: "exec-1".into(),
            event_type: e.event_type,
            sequence: i as u64,
            timestamp_ms: 1000 + 10 * i as i64,
            payload: e.payload.into(),
            metadata: e.metadata,
        })
        .collect()
}

pub fn started() -> Ev {
    ev("EXECUTION_STARTED", json!({"input": {"n": 1}}))
}
pub fn step_started(id: &str) -> Ev {
    ev(
        "STEP_STARTED",
        json!({"stepId": id, "toolId": "tool", "input": {"x": id}}),
    )
}
pub fn step_completed(id: &str, output: Value) -> Ev {
    ev("STEP_COMPLETED", json!({"stepId": id, "output": output}))
}
pub fn step_failed(id: &str) -> Ev {
    ev("STEP_FAILED", json!({"stepId": id, "error": "boom"}))
}
pub fn suspended(gate: &str) -> Ev {
    ev("EXECUTION_SUSPENDED", json!({"on": gate}))
}
pub fn resumed(payload: Value) -> Ev {
    ev("EXECUTION_RESUMED", payload)
}
pub fn decision(id: &str, choice: Value) -> Ev {
    ev("DECISION_RECORDED", json!({"id": id, "choice": choice}))
}

/// Canonical bytes of a fold.
pub fn canon(state: &ExecutionState) -> String {
    state.canonical()
}

/// For every k, restore(snapshot written by `writer` at k) and compare with the full
/// current fold. Returns the first k that differs, with both canonical forms.
pub fn first_snapshot_divergence(
    writer: FoldVersion,
    events: &[EventEnvelope],
) -> Option<(usize, String, String)> {
    let full = canon(&loom_kernel::fold(events));
    for k in 0..events.len() {
        let prefix = fold_as(writer, &ExecutionState::new(), &events[..=k]);
        let record = SnapshotRecord::capture_as(writer, &prefix, events[k].sequence);
        let restored = restore(&record, events).expect("snapshot reads back");
        let got = canon(&restored);
        if got != full {
            return Some((k, full, got));
        }
    }
    None
}

pub fn j(text: &str) -> Value {
    serde_json::from_str(text).expect("test JSON")
}

pub fn empty() -> Value {
    json!({})
}
