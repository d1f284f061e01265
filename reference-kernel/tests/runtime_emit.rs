//! EMIT rules (ADR 0102): flow-level emit identity, serving and stamping.
#[path = "common/runtime.rs"]
mod rt;

use std::collections::BTreeMap;

use loom_kernel::digest::emit_digest;
use loom_kernel::runtime::{FaultPlan, RunOutcome};
use rt::*;
use serde_json::{json, Value};

fn started(flow: &str) -> (&'static str, Value, Option<Value>) {
    (
        "EXECUTION_STARTED",
        json!({"input": null, "flowId": flow}),
        None,
    )
}

fn stamped_x(segment: u64, payload: Value) -> (&'static str, Value, Option<Value>) {
    let d = emit_digest(segment, "X", &payload);
    ("X", payload, Some(json!({"flowEmit": d})))
}

/// Drives to the end: recovers after crashes, answers parks with `null`.
fn drive(rt: &Rt, id: &str, first: RunOutcome) -> RunOutcome {
    let mut out = first;
    for _ in 0..50 {
        out = match out {
            RunOutcome::Crashed { .. } => {
                // A crash right after a park (or the end) leaves nothing to re-drive.
                let s = state(rt, id);
                match s.parked_gate() {
                    Some(gate) => resume(rt, id, gate, json!(null)).unwrap(),
                    None if s.status.is_terminal() => return completed(Value::Null),
                    None => recover(rt, id).unwrap(),
                }
            }
            RunOutcome::Parked { gate } => resume(rt, id, &gate, json!(null)).unwrap(),
            done => return done,
        };
    }
    out
}

fn emit_flow() -> Value {
    json!({"flowId": "f", "effects": {"a": {"outcomes": [{"value": 1}]}},
        "body": [emit("X", json!(0)), run_step("a"), emit("X", json!(1)), suspend("g"), emit("X", json!(2)), run_step("b"), emit("X", json!(3)),
                 {"op": "stream", "eventType": "S", "payload": 4}, {"op": "complete"}]})
}

/// Payload multiset of `X`/`S` emits, and per-digest stamped counts.
fn summary(rt: &Rt, id: &str) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
    let mut all = BTreeMap::new();
    let mut stamps = BTreeMap::new();
    for e in log(rt, id)
        .iter()
        .filter(|e| e.event_type == "X" || e.event_type == "S")
    {
        *all.entry(format!("{}{}", e.event_type, e.payload))
            .or_default() += 1;
        if let Some(d) = e.flow_emit() {
            *stamps.entry(d.to_owned()).or_default() += 1;
        }
    }
    (all, stamps)
}

fn crash_matrix() {
    let clean = rt(&[emit_flow()]);
    let first = start(&clean, "e", "f");
    drive(&clean, "e", first);
    let (want, _) = summary(&clean, "e");
    let n_appends = log(&clean, "e").len() as u64;
    for k in 1..n_appends {
        let r = rt(&[emit_flow()]);
        r.inject_fault(FaultPlan {
            crash_after_appends: k,
        });
        let first = start(&r, "e", "f");
        let end = drive(&r, "e", first);
        assert_eq!(end, completed(Value::Null), "crash after append {k}");
        let (got, stamps) = summary(&r, "e");
        for (payload, n) in &want {
            assert!(
                got.get(payload).copied().unwrap_or(0) >= *n,
                "crash {k}: {payload} missing"
            );
        }
        // Every extra copy is an unstamped one; a stamped digest appears once.
        assert!(stamps.values().all(|n| *n == 1), "crash {k}: {stamps:?}");
        let stamped_total: usize = stamps.values().sum();
        let total: usize = got.values().sum();
        assert!(
            total - stamped_total <= got.len(),
            "crash {k}: extra copies must be unstamped re-appends"
        );
    }
}

#[test]
fn emit_01_each_emit_appended_once_across_crash_and_resume() {
    crash_matrix();
}

#[test]
fn emit_02_identity_is_fnv_of_segment_and_canonical_pair() {
    let rt = rt(&[flow("f", json!([emit("X", json!({"b": 1, "a": [2]}))]))]);
    start(&rt, "e", "f");
    let l = log(&rt, "e");
    let x = of_type(&l, "X")[0];
    assert_eq!(
        x.flow_emit(),
        Some(emit_digest(0, "X", &json!({"a": [2], "b": 1})).as_str())
    );
    assert_eq!(emit_digest(0, "X", &json!(1)).len(), 16);
}

#[test]
fn emit_03_segment_counts_gate_passthroughs() {
    let rt = rt(&[flow(
        "f",
        json!([emit("X", json!(1)), suspend("g"), emit("X", json!(1))]),
    )]);
    start(&rt, "e", "f");
    resume(&rt, "e", "g", json!(null)).unwrap();
    let l = log(&rt, "e");
    let ds: Vec<_> = of_type(&l, "X")
        .iter()
        .map(|e| e.flow_emit().unwrap().to_owned())
        .collect();
    assert_eq!(
        ds,
        [
            emit_digest(0, "X", &json!(1)),
            emit_digest(1, "X", &json!(1))
        ]
    );
    assert_ne!(ds[0], ds[1]);
}

#[test]
fn emit_04_key_order_does_not_change_identity() {
    let a = rt(&[flow(
        "f",
        json!([emit("X", json!({"a": 1, "b": {"c": 2, "d": 3}}))]),
    )]);
    let b = rt(&[flow(
        "f",
        serde_json::from_str(
            r#"[{"op":"emit","eventType":"X","payload":{"b":{"d":3,"c":2},"a":1}}]"#,
        )
        .unwrap(),
    )]);
    start(&a, "e", "f");
    start(&b, "e", "f");
    assert_eq!(
        of_type(&log(&a, "e"), "X")[0].flow_emit(),
        of_type(&log(&b, "e"), "X")[0].flow_emit()
    );
}

#[test]
fn emit_05_stamp_is_metadata_flow_emit_equal_to_d() {
    let rt = rt(&[flow("f", json!([suspend("g"), emit("X", json!("p"))]))]);
    start(&rt, "e", "f");
    resume(&rt, "e", "g", json!(null)).unwrap();
    let l = log(&rt, "e");
    assert_eq!(
        of_type(&l, "X")[0].meta("flowEmit"),
        Some(&json!(emit_digest(1, "X", &json!("p"))))
    );
}

#[test]
fn emit_06_served_when_logged_and_no_live_work_in_segment() {
    let rt = rt(&[flow(
        "f",
        json!([emit("X", json!(1)), suspend("g"), {"op": "complete"}]),
    )]);
    start(&rt, "e", "f");
    resume(&rt, "e", "g", json!(null)).unwrap();
    assert_eq!(
        emits(&log(&rt, "e"), "X"),
        [true],
        "the re-run served the emit: not appended again"
    );
}

#[test]
fn emit_07_live_work_in_segment_forces_append() {
    // The log holds one stamped X of segment 0; the re-run runs step `a` live first.
    let rt = rt(&[flow("f", json!([run_step("a"), emit("X", json!(1))]))]);
    seed(&rt, "e", "f", vec![started("f"), stamped_x(0, json!(1))]);
    recover(&rt, "e").unwrap();
    // L=1, n=0, appended only because of live work: unstamped (EMIT-08 boundary).
    assert_eq!(emits(&log(&rt, "e"), "X"), [true, false]);
}

#[test]
fn emit_08_effect_in_flight_prevents_stamp() {
    let f = json!({"flowId": "f", "effects": {"slow": {"outcomes": [{"value": 1, "ticks": 3}]}},
        "body": [{"op": "parallel", "branches": [[run_step("slow")], [emit("X", json!(1))]]}, emit("X", json!(2))]});
    let rt = rt(&[f]);
    start(&rt, "e", "f");
    assert_eq!(
        emits(&log(&rt, "e"), "X"),
        [false, true],
        "in flight: unstamped; settled: stamped"
    );
}

#[test]
fn emit_08_decider_in_flight_prevents_stamp() {
    let body = json!([{"op": "parallel", "branches": [[{"op": "decide", "id": "d", "choice": 1, "ticks": 2}], [emit("X", json!(1))]]}]);
    let rt = rt(&[flow("f", body)]);
    start(&rt, "e", "f");
    assert_eq!(emits(&log(&rt, "e"), "X"), [false]);
}

#[test]
fn emit_08_unserved_outcome_earlier_prevents_stamp() {
    for outcome in [
        json!({"error": "x"}),
        json!({"hang": true}),
        json!({"cancelled": true}),
    ] {
        let f = json!({"flowId": "f", "effects": {"a": {"outcomes": [outcome]}},
            "body": [{"op": "run", "stepId": "a", "catch": {"*": []}}, emit("X", json!(1))]});
        let rt = rt(&[f]);
        start(&rt, "e", "f");
        assert_eq!(emits(&log(&rt, "e"), "X"), [false], "{outcome}");
    }
    let thrower =
        json!([{"op": "decide", "id": "d", "throw": "no", "catch": []}, emit("X", json!(1))]);
    let rt = rt(&[flow("f", thrower)]);
    start(&rt, "e", "f");
    assert_eq!(emits(&log(&rt, "e"), "X"), [false], "a throwing decider");
}

#[test]
fn emit_08_indoubt_park_prevents_stamp() {
    let f = json!({"flowId": "f", "effects": {"a": {"outcomes": [{"indoubt": true}]}},
        "body": [{"op": "parallel", "branches": [[run_step("a")], [{"op": "set", "name": "x", "value": 1}, emit("X", json!(1))]]}]});
    let rt = rt(&[f]);
    assert_eq!(start(&rt, "e", "f"), parked("__loom_indoubt__"));
    assert_eq!(emits(&log(&rt, "e"), "X"), [false]);
}

#[test]
fn emit_08_boundaries_of_the_logged_count() {
    // L=0, n=0 -> stamped.
    let r0 = rt(&[flow("f", json!([emit("X", json!(1))]))]);
    start(&r0, "e", "f");
    assert_eq!(emits(&log(&r0, "e"), "X"), [true]);
    // L=2, n=2 -> the third is stamped; the first two are served.
    let r2 = rt(&[flow(
        "f",
        json!([
            emit("X", json!(1)),
            emit("X", json!(1)),
            emit("X", json!(1))
        ]),
    )]);
    seed(
        &r2,
        "e",
        "f",
        vec![started("f"), stamped_x(0, json!(1)), stamped_x(0, json!(1))],
    );
    recover(&r2, "e").unwrap();
    assert_eq!(emits(&log(&r2, "e"), "X"), [true, true, true]);
}

#[test]
fn emit_09_eligible_emit_is_stamped() {
    let rt = rt(&[flow(
        "f",
        json!([run_step("a"), emit("X", json!(1)), {"op": "ui", "eventType": "U", "payload": 2}]),
    )]);
    start(&rt, "e", "f");
    let l = log(&rt, "e");
    assert_eq!(emits(&l, "X"), [true]);
    assert_eq!(emits(&l, "U"), [true]);
}

#[test]
fn emit_10_typed_failure_does_not_block_stamping_untyped_does() {
    let mk = |outcome: Value| {
        json!({"flowId": "f", "effects": {"a": {"errors": {"c": {"type": "object"}}, "outcomes": [outcome]}},
            "body": [{"op": "run", "stepId": "a", "catch": {"*": []}}, emit("X", json!(1))]})
    };
    let typed = rt(&[mk(json!({"typed": {"channel": "c", "payload": {}}}))]);
    start(&typed, "e", "f");
    assert_eq!(emits(&log(&typed, "e"), "X"), [true]);
    let untyped = rt(&[mk(json!({"error": "x"}))]);
    start(&untyped, "e", "f");
    assert_eq!(emits(&log(&untyped, "e"), "X"), [false]);
}

#[test]
fn emit_11_skip_decisions_ignore_timing() {
    // The same log re-run under different in-flight schedules of the (served) effect.
    let mut skipped = Vec::new();
    for ticks in [0, 1, 5, 50] {
        let f = json!({"flowId": "f", "effects": {"a": {"outcomes": [{"value": 1, "ticks": ticks}]}},
            "body": [{"op": "parallel", "branches": [[run_step("a")], [emit("X", json!(1))]]}, emit("X", json!(2)), suspend("g"), emit("X", json!(3))]});
        let r = rt(&[f]);
        start(&r, "e", "f");
        let before = of_type(&log(&r, "e"), "X").len();
        resume(&r, "e", "g", json!(null)).unwrap();
        let after = log(&r, "e");
        skipped.push((before, of_type(&after, "X").len() - before));
    }
    // The re-run appends exactly the emits the log cannot prove, for every schedule.
    for (i, (before, added)) in skipped.iter().enumerate() {
        let unstamped_before = if i == 0 { 0 } else { 1 };
        assert_eq!(
            *added,
            1 + unstamped_before,
            "schedule {i}: before={before}"
        );
    }
}

#[test]
fn emit_12_crash_trace_loses_no_emit() {
    crash_matrix();
}

#[test]
fn emit_13_opaque_payload_appended_unstamped_and_never_skipped() {
    let rt = rt(&[flow(
        "f",
        json!([{"op": "emit", "eventType": "O", "opaque": true}, suspend("g")]),
    )]);
    start(&rt, "e", "f");
    resume(&rt, "e", "g", json!(null)).unwrap();
    assert_eq!(emits(&log(&rt, "e"), "O"), [false, false]);
}

#[test]
fn emit_14_kernel_facts_and_effect_emits_never_stamped() {
    let f = json!({"flowId": "f", "effects": {"a": {"outcomes": [{"value": 1, "emit": [{"eventType": "FROM_EFFECT", "payload": 1}]}]}},
        "body": [run_step("a"), {"op": "decide", "id": "d", "choice": 1},
                 {"op": "emit", "eventType": "DECISION_RECORDED", "payload": {"id": "flowd", "choice": 2}}, suspend("g")]});
    let rt = rt(&[f]);
    start(&rt, "e", "f");
    resume(&rt, "e", "g", json!(null)).unwrap();
    for e in log(&rt, "e") {
        assert!(!stamped(&e), "{} must not be stamped", e.event_type);
    }
    assert_eq!(count(&log(&rt, "e"), "FROM_EFFECT"), 1);
}

#[test]
fn emit_15_legacy_unstamped_log_counts_nothing() {
    let rt = rt(&[flow(
        "f",
        json!([emit("X", json!(1)), suspend("g"), suspend("h")]),
    )]);
    seed(
        &rt,
        "e",
        "f",
        vec![
            started("f"),
            ("X", json!(1), None),
            ("EXECUTION_SUSPENDED", json!({"on": "g"}), None),
        ],
    );
    resume(&rt, "e", "g", json!(null)).unwrap();
    assert_eq!(
        emits(&log(&rt, "e"), "X"),
        [false, true],
        "appended once more, stamped"
    );
    resume(&rt, "e", "h", json!(null)).unwrap();
    assert_eq!(
        emits(&log(&rt, "e"), "X"),
        [false, true],
        "a second resume adds nothing"
    );
}

#[test]
fn emit_16_stream_and_ui_share_the_mechanism() {
    for op in ["emit", "stream", "ui"] {
        let body = json!([{"op": op, "eventType": "T", "payload": 1}, suspend("g"), {"op": op, "eventType": "T", "payload": 1}]);
        let rt = rt(&[flow("f", body)]);
        start(&rt, "e", "f");
        resume(&rt, "e", "g", json!(null)).unwrap();
        let l = log(&rt, "e");
        let ds: Vec<_> = of_type(&l, "T")
            .iter()
            .map(|e| e.flow_emit().map(str::to_owned))
            .collect();
        assert_eq!(
            ds,
            [
                Some(emit_digest(0, "T", &json!(1))),
                Some(emit_digest(1, "T", &json!(1)))
            ],
            "{op}"
        );
    }
}
