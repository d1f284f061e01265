//! Fold and parse throughput on a realistic log, and snapshot-restore cost by log length.
//!
//! `cargo bench -p loom-kernel --bench fold`. Figures are recorded in docs/performance.md;
//! nothing here asserts a time.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use loom_kernel::envelope::decode_log;
use loom_kernel::fold::{fold_owned, ExecutionState};
use loom_kernel::snapshot::{restore, SnapshotRecord};
use loom_kernel::EventEnvelope;
use serde_json::json;
use std::hint::black_box;

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
            payload,
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
        if let Some(obj) = e.payload.as_object_mut() {
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
        }
        if e.event_type == "EXECUTION_RESUMED" {
            // Answers accumulate in _resumePayloads (one per gate); keep them tiny.
            e.payload = json!(true);
        }
        e.metadata = None;
    }
    out
}

fn to_jsonl(events: &[EventEnvelope]) -> String {
    let mut s = String::with_capacity(events.len() * 256);
    for e in events {
        s.push_str(&serde_json::to_string(e).unwrap());
        s.push('\n');
    }
    s
}

fn bench_parse_and_fold(c: &mut Criterion) {
    let n = 1_000_000;
    let text = to_jsonl(&realistic_log(n));
    let mut g = c.benchmark_group("log-1m");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("parse", |b| {
        b.iter(|| black_box(decode_log(black_box(&text)).unwrap().len()))
    });
    g.bench_function("parse+fold", |b| {
        b.iter(|| {
            let events = decode_log(black_box(&text)).unwrap();
            black_box(fold_owned(ExecutionState::new(), events).sequence)
        })
    });
    g.finish();
}

fn bench_restore(c: &mut Criterion) {
    let mut g = c.benchmark_group("restore");
    g.sample_size(10);
    for (shape, make) in [
        ("growing", realistic_log as fn(usize) -> Vec<EventEnvelope>),
        ("bounded", bounded_state_log),
    ] {
        for n in [1_000usize, 1_000_000] {
            let events = make(n);
            let k = n - 100;
            let state = fold_owned(ExecutionState::new(), events[..k].to_vec());
            let record = SnapshotRecord::capture(&state, events[k - 1].sequence);
            let tail = events[k..].to_vec();
            g.bench_function(format!("{shape}-state/snapshot+100-tail/{n}"), |b| {
                b.iter_batched(
                    || record.clone(),
                    |r| black_box(restore(&r, &tail).unwrap().sequence),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_parse_and_fold, bench_restore);
criterion_main!(benches);
