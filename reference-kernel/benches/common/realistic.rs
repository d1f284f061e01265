//! The logs the fold benchmarks measure, shared by `benches/fold.rs`, `benches/goals.rs`
//! and `examples/realistic_log.rs` (which writes one to a file for `loom verify-log`).

// Each including file uses some of these functions, not all.
#![allow(dead_code)]

use loom_kernel::{EventEnvelope, JsonText};
use serde_json::json;

/// A realistic agent loop: per turn a step with input and output, a decision, a stamped
/// progress emit, a park and a resume. Six events per turn.
pub fn realistic_log(n_events: usize) -> Vec<EventEnvelope> {
    let mut out: Vec<EventEnvelope> = Vec::with_capacity(n_events + 6);
    fn push(
        out: &mut Vec<EventEnvelope>,
        t: &str,
        payload: serde_json::Value,
        meta: Option<serde_json::Value>,
    ) {
        let i = out.len() as u64;
        out.push(EventEnvelope {
            id: format!("evt-{i}"),
            workflow_id: "agent".into(),
            execution_id: "exec-bench".into(),
            event_type: t.into(),
            sequence: i,
            timestamp_ms: 1_700_000_000_000 + i as i64,
            // As a decoded log or a store's read gives it: the text alone, no tree kept.
            payload: JsonText::from_value(&payload),
            metadata: meta.and_then(|m| m.as_object().cloned()),
        });
    }
    push(
        &mut out,
        "EXECUTION_STARTED",
        json!({"input": {"goal": "summarise the inbox", "limit": 20}, "flowHash": "fnv1a:0123456789abcdef"}),
        None,
    );
    let mut turn = 0u64;
    while out.len() < n_events {
        let step = format!("turn-{turn}/llm");
        push(
            &mut out,
            "STEP_STARTED",
            json!({"stepId": step, "toolId": "llm.chat", "kind": "llm", "attempt": 1, "input": {"messages": [{"role": "user", "content": "next item please"}], "turn": turn}}),
            None,
        );
        push(
            &mut out,
            "STEP_COMPLETED",
            json!({"stepId": step, "output": {"text": "Item summarised: the quarterly numbers are in.", "tokens": 412}}),
            None,
        );
        push(
            &mut out,
            "DECISION_RECORDED",
            json!({"id": format!("route-{turn}"), "choice": {"model": "small"}, "context": {"len": 412}, "policy": {"name": "router", "propensity": 0.9}}),
            None,
        );
        push(
            &mut out,
            "ui.progress",
            json!({"turn": turn, "pct": turn % 100}),
            Some(json!({"flowEmit": format!("{:016x}", turn)})),
        );
        push(&mut out, "EXECUTION_SUSPENDED", json!({"on": "next"}), None);
        push(
            &mut out,
            "EXECUTION_RESUMED",
            json!({"approved": true, "turn": turn}),
            None,
        );
        turn += 1;
    }
    out.truncate(n_events);
    out
}

/// The same agent loop over a bounded state: ten step ids and ten decision ids reused,
/// unstamped emits, so the folded state stops growing while the log grows.
pub fn bounded_state_log(n_events: usize) -> Vec<EventEnvelope> {
    let mut out = realistic_log(n_events);
    for e in &mut out {
        e.payload.edit(|p| {
            let Some(obj) = p.as_object_mut() else {
                return;
            };
            if let Some(serde_json::Value::String(s)) = obj.get("stepId").cloned() {
                let turn: u64 = s
                    .trim_start_matches("turn-")
                    .trim_end_matches("/llm")
                    .parse()
                    .unwrap_or(0);
                obj.insert("stepId".into(), json!(format!("slot-{}", turn % 10)));
            }
            if let Some(serde_json::Value::String(s)) = obj.get("id").cloned() {
                let turn: u64 = s.trim_start_matches("route-").parse().unwrap_or(0);
                obj.insert("id".into(), json!(format!("route-{}", turn % 10)));
            }
        });
        if e.event_type == "EXECUTION_RESUMED" {
            // Answers accumulate in _resumePayloads (one per gate); keep them tiny.
            e.payload = json!(true).into();
        }
        e.metadata = None;
    }
    out
}

pub fn to_jsonl(events: &[EventEnvelope]) -> String {
    let mut s = String::with_capacity(events.len() * 256);
    for e in events {
        s.push_str(&serde_json::to_string(e).unwrap());
        s.push('\n');
    }
    s
}
