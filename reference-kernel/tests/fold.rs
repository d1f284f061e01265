//! The fold contract, rule by rule (FOLD group). Each test's name carries its rule id;
//! expectations are reasoned from the spec text cited in RULES.md, never copied from
//! an earlier run.

mod common;
use common::*;
use loom_kernel::fold::{
    evidence_order, fold_as, fold_with_diagnostics, get_decision, keys, known_event_types,
    DiagnosticKind, ExecutionState, FoldVersion, FrameStatus, Status, DIVERGED_GATE, INDOUBT_GATE,
};
use loom_kernel::{fold, fold_from, EventEnvelope};
use serde_json::{json, Value};

fn var<'a>(s: &'a ExecutionState, key: &str) -> Option<&'a Value> {
    s.variables.get(key)
}

/// A log that touches most handlers; used by the purity tests.
fn busy_log() -> Vec<EventEnvelope> {
    log(vec![
        started(),
        step_started("a"),
        step_completed("a", json!({"ok": true})),
        decision("d1", json!("left")),
        ev("progress", json!({"pct": 50})).stamp("00000000000000aa"),
        suspended("approve"),
        resumed(json!({"approved": true})),
        step_started("b"),
        ev(
            "STEP_FAILED",
            json!({"stepId": "b", "error": "e", "channel": "notFound", "payload": {"id": 7}}),
        ),
        ev("RESOURCE_METERED", json!({"tokens": 5, "costUsd": 0.25})),
        ev("EXECUTION_COMPLETED", json!({"output": 42})),
    ])
}

#[test]
fn fold_01_same_log_same_state_bytes() {
    let events = busy_log();
    let a = canon(&fold(&events));
    // Fold again from independently decoded copies of the same bytes.
    let text = serde_json::to_string(&events).unwrap();
    let again = loom_kernel::decode_log(&text).unwrap();
    assert_eq!(a, canon(&fold(&again)));
    // And on other threads: the result cannot depend on the thread or its hash seed.
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let ev = again.clone();
            std::thread::spawn(move || canon(&fold(&ev)))
        })
        .collect();
    for h in handles {
        assert_eq!(a, h.join().unwrap());
    }
}

#[test]
fn fold_02_time_valued_state_comes_only_from_envelopes() {
    let events = busy_log();
    let s = fold(&events);
    assert_eq!(s.started_at, Some(events[0].timestamp_ms));
    assert_eq!(s.updated_at, Some(events.last().unwrap().timestamp_ms));
    // Shift every envelope timestamp: the state's times shift by exactly the same amount.
    let shifted: Vec<_> = events
        .iter()
        .cloned()
        .map(|mut e| {
            e.timestamp_ms += 5_000;
            e
        })
        .collect();
    let t = fold(&shifted);
    assert_eq!(t.started_at, Some(events[0].timestamp_ms + 5_000));
    assert_eq!(
        t.updated_at,
        Some(events.last().unwrap().timestamp_ms + 5_000)
    );
    // A timed park's wakeAt is the payload's, not a clock reading.
    let p = fold(&log(vec![
        started(),
        ev("EXECUTION_SUSPENDED", json!({"on": "t", "wakeAt": 123456})),
    ]));
    assert_eq!(p.suspended_on().unwrap()["wakeAt"], json!(123456));
}

#[test]
fn fold_03_handlers_are_pure_functions() {
    let events = busy_log();
    for k in 0..events.len() {
        let before = fold(&events[..k]);
        let before_bytes = canon(&before);
        let one = fold_from(&before, &events[k..=k]);
        let two = fold_from(&before, &events[k..=k]);
        assert_eq!(
            canon(&one),
            canon(&two),
            "event {k} folds differently twice"
        );
        assert_eq!(
            canon(&before),
            before_bytes,
            "event {k} changed its input state"
        );
    }
}

#[test]
fn fold_04_unknown_kind_is_inert_including_bookkeeping() {
    for k in 0..=busy_log().len() {
        let mut events = busy_log();
        let base = canon(&fold(&events));
        events.insert(
            k,
            ev("SOMETHING_NEW", json!({"stepId": "a", "status": "failed"}))
                .meta("x", json!(1))
                .into_envelope(),
        );
        renumber(&mut events);
        // Sequences shift, so compare against the fold of the same renumbered log minus the event.
        let mut without = events.clone();
        without.remove(k);
        let with_state = fold(&events);
        let without_state = fold(&without);
        assert_eq!(with_state.status, without_state.status);
        assert_eq!(with_state.frames, without_state.frames);
        assert_eq!(with_state.variables, without_state.variables);
        let _ = base;
    }
    // At the end of a log, sequence and updatedAt do not move (GAP-12).
    let events = log(vec![started(), ev("APP_EVENT", json!({}))]);
    let s = fold(&events);
    assert_eq!(s.sequence, Some(0));
    assert_eq!(s.updated_at, Some(events[0].timestamp_ms));
}

trait IntoEnvelope {
    fn into_envelope(self) -> EventEnvelope;
}
impl IntoEnvelope for Ev {
    fn into_envelope(self) -> EventEnvelope {
        log(vec![self]).remove(0)
    }
}
fn renumber(events: &mut [EventEnvelope]) {
    for (i, e) in events.iter_mut().enumerate() {
        e.sequence = i as u64;
        e.timestamp_ms = 1000 + 10 * i as i64;
    }
}

#[test]
fn fold_05_proto_keys_dropped_at_every_depth() {
    let nasty = json!({"__proto__": {"polluted": true}, "a": {"b": {"__proto__": 1, "c": [ {"__proto__": 2, "d": 3} ]}}});
    let events = log(vec![
        ev(
            "EXECUTION_STARTED",
            json!({"input": nasty.clone(), "__proto__": {"x": 1}}),
        ),
        step_started("s"),
        ev(
            "STEP_COMPLETED",
            json!({"stepId": "s", "output": nasty.clone()}),
        ),
        ev(
            "DECISION_RECORDED",
            json!({"id": "d", "choice": nasty.clone(), "context": nasty.clone()}),
        ),
        suspended("g"),
        resumed(nasty.clone()),
    ]);
    let (state, diags) =
        fold_with_diagnostics(FoldVersion::CURRENT, &ExecutionState::new(), &events);
    let bytes = canon(&state);
    assert!(!bytes.contains("__proto__"), "{bytes}");
    let cleaned = json!({"a": {"b": {"c": [ {"d": 3} ]}}});
    assert_eq!(var(&state, keys::INPUT), Some(&cleaned));
    assert_eq!(state.frames["s"].output, Some(cleaned.clone().into()));
    assert_eq!(get_decision(&state, "d"), Some(cleaned.clone()));
    assert_eq!(state.resume_payloads(), &[cleaned]);
    // GAP-11: the fold goes on and reports what it dropped.
    assert_eq!(state.status, Status::Running);
    assert!(diags
        .iter()
        .any(|d| matches!(d.kind, DiagnosticKind::ProtoKeysDropped(n) if n >= 3)));
    // A `__proto__` used as a map key (step id, decision id) makes the event inert.
    let s = fold(&log(vec![
        started(),
        ev("STEP_STARTED", json!({"stepId": "__proto__"})),
        decision("__proto__", json!(1)),
    ]));
    assert!(s.frames.is_empty());
    assert!(s.variables.decisions.is_none());
}

#[test]
fn fold_06_fold_never_mutates_a_state_the_caller_holds() {
    let events = busy_log();
    let kept = fold(&events[..5]);
    let kept_bytes = canon(&kept);
    let later = fold_from(&kept, &events[5..]);
    assert_ne!(canon(&later), kept_bytes);
    assert_eq!(canon(&kept), kept_bytes);
}

#[test]
fn fold_07_only_execution_level_events_move_status() {
    let status_movers = [
        "EXECUTION_STARTED",
        "EXECUTION_SUSPENDED",
        "EXECUTION_RESUMED",
        "EXECUTION_COMPLETED",
        "EXECUTION_FAILED",
        "EXECUTION_CANCELLED",
        "EXECUTION_CONTINUED",
    ];
    // Every known kind, with a plausible payload, after every status.
    let payload_for = |t: &str| match t {
        "EXECUTION_SUSPENDED" => json!({"on": "g"}),
        "EXECUTION_CONTINUED" => json!({"continuedTo": "exec-2"}),
        "EXECUTION_STARTED" => json!({"input": 1}),
        "DECISION_RECORDED" => json!({"id": "d", "choice": 1}),
        "RESOURCE_METERED" => json!({"tokens": 1}),
        "MESSAGE_CONSUMED" => json!({"topic": "t", "messageId": "m"}),
        "INBOX_QUARANTINED" => json!({"topic": "t", "messageId": "m"}),
        "PARALLEL_COMPLETED" => json!({"scopeId": "p"}),
        "EVENTS_REHOMED" => json!({"segment": 1}),
        _ => json!({"stepId": "s", "attempt": 1, "output": 1, "error": "e"}),
    };
    let prefixes: Vec<Vec<Ev>> = vec![
        vec![],
        vec![started()],
        vec![started(), suspended("g")],
        vec![started(), ev("EXECUTION_FAILED", json!({"error": "x"}))],
        vec![started(), ev("EXECUTION_COMPLETED", json!({"output": 1}))],
    ];
    for prefix in prefixes {
        for t in known_event_types() {
            let mut events = prefix.clone();
            let before = fold(&log(events.clone())).status;
            events.push(ev(t, payload_for(t)).kernel());
            let after = fold(&log(events)).status;
            if !status_movers.contains(t) {
                assert_eq!(before, after, "{t} moved status from {before:?}");
            }
        }
    }
}

#[test]
fn fold_08_step_events_change_only_their_frame() {
    let base = vec![
        started(),
        step_started("a"),
        step_started("b"),
        suspended("g"),
    ];
    for step in [
        step_completed("a", json!(1)),
        step_failed("a"),
        ev("STEP_RETRYING", json!({"stepId": "a", "attempt": 2})),
        ev("STEP_CANCELLED", json!({"stepId": "a"})),
        step_started("a"),
    ] {
        let before = fold(&log(base.clone()));
        let mut events = base.clone();
        events.push(step.clone());
        let after = fold(&log(events));
        assert_eq!(before.status, after.status);
        assert_eq!(
            before.frames["b"], after.frames["b"],
            "{} touched frame b",
            step.event_type
        );
        let mut vb = before.variables.clone();
        let mut va = after.variables.clone();
        vb.remove(keys::FAILED_WHILE_PARKED);
        va.remove(keys::FAILED_WHILE_PARKED);
        assert_eq!(
            vb, va,
            "{} changed variables beyond _failedWhileParked",
            step.event_type
        );
    }
}

#[test]
fn fold_09_step_failed_does_not_fail_execution() {
    let s = fold(&log(vec![started(), step_started("a"), step_failed("a")]));
    assert_eq!(s.status, Status::Running);
    assert_eq!(s.frames["a"].status, FrameStatus::Failed);
    let s = fold(&log(vec![
        started(),
        step_started("a"),
        step_failed("a"),
        ev("EXECUTION_FAILED", json!({"error": "x"})),
    ]));
    assert_eq!(s.status, Status::Failed);
    assert_eq!(var(&s, keys::ERROR), Some(&json!("x")));
}

#[test]
fn fold_10_step_failed_while_suspended_sets_failed_while_parked() {
    let s = fold(&log(vec![
        started(),
        step_started("a"),
        suspended("g"),
        step_failed("a"),
    ]));
    assert_eq!(s.status, Status::Suspended);
    assert!(s.failed_while_parked());
    // Not parked: no key.
    let s = fold(&log(vec![started(), step_started("a"), step_failed("a")]));
    assert!(!s.failed_while_parked());
}

#[test]
fn fold_11_whatever_ends_the_park_removes_failed_while_parked() {
    let enders = vec![
        suspended("h"),
        resumed(json!({"ok": 1})),
        resumed(Value::Null),
        ev("EXECUTION_COMPLETED", json!({"output": 1})),
        ev("EXECUTION_FAILED", json!({"error": "e"})),
        ev("EXECUTION_CANCELLED", json!({})),
        ev("EXECUTION_CONTINUED", json!({"continuedTo": "exec-2"})).kernel(),
    ];
    for ender in enders {
        let name = ender.event_type.clone();
        let s = fold(&log(vec![
            started(),
            step_started("a"),
            suspended("g"),
            step_failed("a"),
            ender,
        ]));
        assert!(!s.failed_while_parked(), "{name} left _failedWhileParked");
    }
}

#[test]
fn fold_12_null_resume_while_failed_while_parked_is_status_only() {
    let s = fold(&log(vec![
        started(),
        step_started("a"),
        suspended("g"),
        step_failed("a"),
        resumed(Value::Null),
    ]));
    assert_eq!(s.status, Status::Running);
    assert!(s.resume_payloads().is_empty());
    assert!(!s.failed_while_parked());
}

#[test]
fn fold_14_migrated_input_replaces_input() {
    let with = fold(&log(vec![
        started(),
        ev("EXECUTION_MIGRATED", json!({"migratedInput": {"n": 2}})),
        suspended("g"),
        resumed(json!(1)),
    ]));
    assert_eq!(var(&with, keys::INPUT), Some(&json!({"n": 2})));
    let without = fold(&log(vec![
        started(),
        ev("EXECUTION_MIGRATED", json!({"toCodeHash": "sha256:ab"})),
    ]));
    assert_eq!(var(&without, keys::INPUT), Some(&json!({"n": 1})));
    // Before 1.15 the field did not exist.
    let old = fold_as(
        FoldVersion::from_minor(15).unwrap(),
        &ExecutionState::new(),
        &log(vec![
            started(),
            ev("EXECUTION_MIGRATED", json!({"migratedInput": 3})),
        ]),
    );
    assert_eq!(var(&old, keys::INPUT), Some(&json!(3)));
}

#[test]
fn fold_15_resume_payloads_in_log_order() {
    let s = fold(&log(vec![
        started(),
        suspended("g1"),
        resumed(json!("A")),
        suspended("g2"),
        resumed(json!("B")),
    ]));
    assert_eq!(s.resume_payloads(), &[json!("A"), json!("B")]);
}

#[test]
fn fold_16_typed_step_failure_folds_channel_and_payload() {
    let typed = fold(&log(vec![
        started(),
        step_started("a"),
        ev(
            "STEP_FAILED",
            json!({"stepId": "a", "error": "TypedFailure(notFound)", "channel": "notFound", "payload": {"id": 7}}),
        ),
    ]));
    let f = &typed.frames["a"];
    assert_eq!(f.error_channel.as_deref(), Some("notFound"));
    assert_eq!(f.error_payload, Some(json!({"id": 7}).into()));
    // The same log without channel/payload differs only by those two keys.
    let untyped = fold(&log(vec![
        started(),
        step_started("a"),
        ev(
            "STEP_FAILED",
            json!({"stepId": "a", "error": "TypedFailure(notFound)"}),
        ),
    ]));
    let mut stripped = typed.clone();
    let fr = stripped.frames.get_mut("a").unwrap();
    fr.error_channel = None;
    fr.error_payload = None;
    assert_eq!(canon(&stripped), canon(&untyped));
    assert!(!canon(&untyped).contains("errorChannel"));
}

#[test]
fn fold_17_context_and_policy_copied_verbatim() {
    let ctx = json!({"features": [1, 2, {"deep": "x"}]});
    let pol = json!({"name": "eps-greedy", "propensity": 0.25});
    let s = fold(&log(vec![
        started(),
        ev(
            "DECISION_RECORDED",
            json!({"id": "d", "choice": "a", "context": ctx, "policy": pol}),
        ),
    ]));
    let entry = s
        .variables
        .decisions
        .as_ref()
        .unwrap()
        .get("d")
        .unwrap()
        .to_value();
    assert_eq!(entry["context"], ctx);
    assert_eq!(entry["policy"], pol);
}

#[test]
fn fold_18_get_decision_returns_only_the_choice() {
    let s = fold(&log(vec![
        started(),
        ev("DECISION_RECORDED", json!({"id": "d", "choice": {"model": "m1"}, "context": 1, "policy": 2, "innerSteps": [3]})).kernel(),
    ]));
    let entry = s.variables.decisions.as_ref().unwrap().get("d").unwrap();
    assert!(entry.get("seq").is_some() && entry.get("innerSteps").is_some());
    assert_eq!(get_decision(&s, "d"), Some(json!({"model": "m1"})));
    assert_eq!(get_decision(&s, "missing"), None);
}

#[test]
fn fold_19_flow_emits_counted_per_digest_on_any_type() {
    let s = fold(&log(vec![
        started(),
        ev("progress", json!({"p": 1})).stamp("aaaaaaaaaaaaaaaa"),
        ev("progress", json!({"p": 1})).stamp("aaaaaaaaaaaaaaaa"),
        ev("RESOURCE_METERED", json!({"tokens": 1})).stamp("bbbbbbbbbbbbbbbb"),
        ev("totally-unknown", json!(null)).stamp("cccccccccccccccc"),
        ev("progress", json!({"p": 2})),
    ]));
    assert_eq!(s.flow_emit_count("aaaaaaaaaaaaaaaa"), 2);
    assert_eq!(s.flow_emit_count("bbbbbbbbbbbbbbbb"), 1);
    assert_eq!(s.flow_emit_count("cccccccccccccccc"), 1);
    assert_eq!(
        var(&s, keys::FLOW_EMITS)
            .unwrap()
            .as_object()
            .unwrap()
            .len(),
        3
    );
    // Unstamped events count nothing.
    let s = fold(&log(vec![started(), ev("progress", json!({}))]));
    assert!(var(&s, keys::FLOW_EMITS).is_none());
}

#[test]
fn fold_20_null_resume_answering_no_suspend_point_adds_no_passthrough() {
    let after_failed = fold(&log(vec![
        started(),
        ev("EXECUTION_FAILED", json!({"error": "x"})),
        resumed(Value::Null),
    ]));
    assert_eq!(after_failed.status, Status::Running);
    assert!(after_failed.resume_payloads().is_empty());
    let indoubt = fold(&log(vec![
        started(),
        step_started("a"),
        ev("EFFECT_INDOUBT", json!({"stepId": "a", "attempt": 1})),
        ev(
            "EXECUTION_SUSPENDED",
            json!({"on": INDOUBT_GATE, "condition": {"stepId": "a", "attempt": 1}}),
        ),
        resumed(Value::Null),
    ]));
    assert_eq!(indoubt.status, Status::Running);
    assert!(indoubt.resume_payloads().is_empty());
    // GAP-31: a null at an ordinary gate is a real answer.
    let gate = fold(&log(vec![started(), suspended("g"), resumed(Value::Null)]));
    assert_eq!(gate.resume_payloads(), &[Value::Null]);
}

#[test]
fn fold_21_passthroughs_unchanged_from_1_20() {
    let v20 = FoldVersion::from_minor(20).unwrap();
    let cases: Vec<Vec<Ev>> = vec![
        vec![
            started(),
            step_started("a"),
            suspended("g"),
            step_failed("a"),
            resumed(Value::Null),
        ],
        vec![
            started(),
            step_started("a"),
            suspended("g"),
            step_failed("a"),
            resumed(json!({"v": 1})),
        ],
        vec![started(), step_started("a"), step_failed("a")],
    ];
    for events in cases {
        let events = log(events);
        let now = fold(&events);
        let then = fold_as(v20, &ExecutionState::new(), &events);
        assert_eq!(now.resume_payloads(), then.resume_payloads());
    }
}

#[test]
fn fold_22_events_rehomed_only_audits_into_lifecycle() {
    let base = vec![started(), step_started("a")];
    let mut with = base.clone();
    with.push(ev("EVENTS_REHOMED", json!({"segment": 3, "from": "blank"})));
    let a = fold(&log(base));
    let b = fold(&log(with));
    assert_eq!(
        var(&b, keys::LIFECYCLE),
        Some(&json!([{"segment": 3, "from": "blank", "seq": 2}]))
    );
    let mut bv = b.variables.clone();
    bv.remove(keys::LIFECYCLE);
    assert_eq!(a.variables, bv);
    assert_eq!(a.frames, b.frames);
    assert_eq!(a.status, b.status);
}

#[test]
fn fold_23_kernel_continued_sets_continued_and_target() {
    let s = fold(&log(vec![
        started(),
        ev("EXECUTION_CONTINUED", json!({"continuedTo": "exec-2"})).kernel(),
    ]));
    assert_eq!(s.status, Status::Continued);
    assert!(s.status.is_terminal());
    assert_eq!(var(&s, keys::CONTINUED_TO), Some(&json!("exec-2")));
    let unstamped = fold(&log(vec![
        started(),
        ev("EXECUTION_CONTINUED", json!({"continuedTo": "exec-2"})),
    ]));
    assert_eq!(canon(&unstamped), canon(&fold(&log(vec![started()]))));
}

#[test]
fn fold_24_kernel_message_consumed_updates_inbox_and_wait_answers() {
    let consumed = ev(
        "MESSAGE_CONSUMED",
        json!({"topic": "orders", "messageId": "m1", "waitId": "w1", "message": {"x": 1}}),
    );
    let s = fold(&log(vec![started(), consumed.clone().kernel()]));
    assert_eq!(
        var(&s, keys::INBOX),
        Some(&json!({"orders": {"consumed": 1, "lastMessageId": "m1"}}))
    );
    assert_eq!(var(&s, keys::WAIT_ANSWERS), Some(&json!({"w1": {"x": 1}})));
    let u = fold(&log(vec![started(), consumed]));
    assert!(var(&u, keys::INBOX).is_none() && var(&u, keys::WAIT_ANSWERS).is_none());
}

#[test]
fn fold_25_parallel_completed_payload_only_when_stamped() {
    let p = ev(
        "PARALLEL_COMPLETED",
        json!({"scopeId": "fan", "members": ["a", "b"]}),
    );
    let s = fold(&log(vec![started(), p.clone().kernel()]));
    assert_eq!(
        var(&s, keys::SCOPES),
        Some(&json!({"fan": {"members": ["a", "b"]}}))
    );
    let u = fold(&log(vec![started(), p]));
    assert_eq!(canon(&u), canon(&fold(&log(vec![started()]))));
}

#[test]
fn fold_26_started_optional_fields_and_carry() {
    let all = fold(&log(vec![ev(
        "EXECUTION_STARTED",
        json!({
            "input": 1, "principal": {"sub": "u1"}, "parent": "exec-0", "chain": ["exec-0"], "codeHash": "sha256:00",
            "carry": {"resources": {"tokens": 10, "custom": {"gpuSec": 2}}, "inbox": {"t": {"consumed": 3}}}
        }),
    )]));
    assert_eq!(var(&all, keys::PRINCIPAL), Some(&json!({"sub": "u1"})));
    assert_eq!(var(&all, keys::PARENT), Some(&json!("exec-0")));
    assert_eq!(var(&all, keys::CHAIN), Some(&json!(["exec-0"])));
    assert_eq!(var(&all, keys::CODE_HASH), Some(&json!("sha256:00")));
    assert_eq!(
        var(&all, keys::RESOURCES),
        Some(&json!({"tokens": 10, "custom": {"gpuSec": 2}}))
    );
    assert_eq!(var(&all, keys::INBOX), Some(&json!({"t": {"consumed": 3}})));
    for field in ["principal", "parent", "chain", "codeHash"] {
        let mut p = json!({"input": 1});
        p[field] = json!("v");
        let s = fold(&log(vec![ev("EXECUTION_STARTED", p)]));
        assert_eq!(
            s.variables.rest.len(),
            2,
            "{field} alone sets exactly one extra key"
        );
    }
    // A carry that fails validation seeds nothing (GAP-18).
    for bad in [
        json!({"resources": {"tokens": -1}}),
        json!({"resources": {"bogus": 1}}),
        json!({"inbox": {"t": {"consumed": "x"}}}),
        json!({"other": 1}),
        json!(5),
    ] {
        let s = fold(&log(vec![ev(
            "EXECUTION_STARTED",
            json!({"input": 1, "carry": bad.clone()}),
        )]));
        assert!(
            var(&s, keys::RESOURCES).is_none() && var(&s, keys::INBOX).is_none(),
            "{bad} seeded state"
        );
    }
}

#[test]
fn fold_27_waits_folded_in_order() {
    let s = fold(&log(vec![
        started(),
        ev(
            "EXECUTION_SUSPENDED",
            json!({"on": "any", "waits": [{"id": "w1"}, {"id": "w2"}]}),
        ),
    ]));
    assert_eq!(
        var(&s, keys::WAITS),
        Some(&json!([{"id": "w1"}, {"id": "w2"}]))
    );
}

#[test]
fn fold_28_wait_addressed_resume_only_when_stamped() {
    let r = resumed(json!({"waitId": "w1", "answer": 9}));
    let s = fold(&log(vec![started(), suspended("any"), r.clone().kernel()]));
    assert_eq!(var(&s, keys::WAIT_ANSWERS), Some(&json!({"w1": 9})));
    assert!(
        s.resume_payloads().is_empty(),
        "GAP-23: no passthrough for a wait answer"
    );
    let u = fold(&log(vec![started(), suspended("any"), r]));
    assert!(var(&u, keys::WAIT_ANSWERS).is_none());
    assert_eq!(u.resume_payloads(), &[json!({"waitId": "w1", "answer": 9})]);
}

#[test]
fn fold_29_optional_fields_fold_only_where_they_belong() {
    let with = fold(&log(vec![
        started(),
        ev(
            "RESOURCE_METERED",
            json!({"tokens": 3, "custom": {"gpuSec": 1.5}}),
        ),
    ]));
    let without = fold(&log(vec![
        started(),
        ev("RESOURCE_METERED", json!({"tokens": 3})),
    ]));
    assert_eq!(
        var(&with, keys::RESOURCES),
        Some(&json!({"tokens": 3, "custom": {"gpuSec": 1.5}}))
    );
    assert_eq!(var(&without, keys::RESOURCES), Some(&json!({"tokens": 3})));
    // OUTCOME_RECORDED's recordedBy / late have no fold effect at all.
    let a = fold(&log(vec![
        started(),
        ev(
            "OUTCOME_RECORDED",
            json!({"stepId": "s", "recordedBy": "op", "late": true}),
        ),
    ]));
    let b = fold(&log(vec![
        started(),
        ev("OUTCOME_RECORDED", json!({"stepId": "s"})),
    ]));
    assert_eq!(canon(&a), canon(&b));
}

#[test]
fn fold_30_only_boolean_true_kernel_stamp_counts() {
    let make = |k: Option<Value>| {
        let e = ev("EXECUTION_CONTINUED", json!({"continuedTo": "x"}));
        let e = match k {
            Some(v) => e.meta("kernel", v),
            None => e,
        };
        fold(&log(vec![started(), e])).status
    };
    assert_eq!(make(None), Status::Running);
    assert_eq!(make(Some(json!(false))), Status::Running);
    assert_eq!(make(Some(json!("true"))), Status::Running);
    assert_eq!(make(Some(json!(1))), Status::Running);
    assert_eq!(make(Some(json!(true))), Status::Continued);
}

#[test]
fn fold_31_fork_metadata_fills_lineage() {
    let s = fold(&log(vec![ev("EXECUTION_STARTED", json!({"input": 1}))
        .meta("forkChain", json!(["root", "mid"]))
        .meta("forkedBy", json!("mid"))]));
    assert_eq!(var(&s, keys::CHAIN), Some(&json!(["root", "mid"])));
    assert_eq!(var(&s, keys::PARENT), Some(&json!("mid")));
    // Payload fields win over metadata.
    let s = fold(&log(vec![ev(
        "EXECUTION_STARTED",
        json!({"input": 1, "parent": "p"}),
    )
    .meta("forkedBy", json!("mid"))]));
    assert_eq!(var(&s, keys::PARENT), Some(&json!("p")));
}

#[test]
fn fold_32_status_enum_pinned_with_continued() {
    let names: Vec<&str> = [
        Status::Pending,
        Status::Running,
        Status::Suspended,
        Status::Completed,
        Status::Failed,
        Status::Cancelled,
        Status::Continued,
    ]
    .iter()
    .map(|s| s.as_str())
    .collect();
    assert_eq!(
        names,
        [
            "pending",
            "running",
            "suspended",
            "completed",
            "failed",
            "cancelled",
            "continued"
        ]
    );
    for n in names {
        let parsed: Status = serde_json::from_value(json!(n)).unwrap();
        assert_eq!(parsed.as_str(), n);
    }
}

#[test]
fn fold_33_code_hash_recorded_only_when_supplied() {
    let with = fold(&log(vec![ev(
        "EXECUTION_STARTED",
        json!({"input": 1, "codeHash": "sha256:ff"}),
    )]));
    let without = fold(&log(vec![started()]));
    assert_eq!(var(&with, keys::CODE_HASH), Some(&json!("sha256:ff")));
    assert!(var(&without, keys::CODE_HASH).is_none());
}

#[test]
fn fold_34_flow_hash_forms_both_valid() {
    use loom_kernel::digest::{fnv1a_flow_hash, is_valid_flow_hash, sha256_flow_hash};
    let flow = json!({"steps": ["a"]});
    let sha = sha256_flow_hash(&flow);
    let fnv = fnv1a_flow_hash(&flow);
    assert!(sha.starts_with("sha256:") && sha.len() == 7 + 64 && is_valid_flow_hash(&sha));
    assert!(fnv.starts_with("fnv1a:") && fnv.len() == 6 + 16 && is_valid_flow_hash(&fnv));
    assert!(!is_valid_flow_hash("md5:abc"));
    let s = fold(&log(vec![ev(
        "EXECUTION_STARTED",
        json!({"input": 1, "flowHash": fnv}),
    )]));
    assert_eq!(var(&s, keys::FLOW_HASH), Some(&json!(fnv)));
}

#[test]
fn fold_35_inner_steps_only_when_stamped_and_to_code_hash_accepted() {
    let d = ev(
        "DECISION_RECORDED",
        json!({"id": "d", "choice": 1, "innerSteps": ["s1"]}),
    );
    let u = fold(&log(vec![started(), d.clone()]));
    assert!(u
        .variables
        .decisions
        .as_ref()
        .unwrap()
        .get("d")
        .unwrap()
        .get("innerSteps")
        .is_none());
    let k = fold(&log(vec![started(), d.kernel()]));
    assert_eq!(
        k.variables
            .decisions
            .as_ref()
            .unwrap()
            .get("d")
            .unwrap()
            .to_value()["innerSteps"],
        json!(["s1"])
    );
    let m = fold(&log(vec![
        started(),
        ev("EXECUTION_MIGRATED", json!({"toCodeHash": "sha256:aa"})),
    ]));
    assert_eq!(var(&m, keys::CODE_HASH), Some(&json!("sha256:aa")));
}

#[test]
fn fold_36_null_resume_of_diverged_gate_is_status_only() {
    let s = fold(&log(vec![
        started(),
        suspended(DIVERGED_GATE),
        resumed(Value::Null),
    ]));
    assert_eq!(s.status, Status::Running);
    assert!(s.resume_payloads().is_empty());
}

#[test]
fn fold_37_diverged_park_is_an_ordinary_suspend() {
    let s = fold(&log(vec![started(), suspended(DIVERGED_GATE)]));
    assert_eq!(s.status, Status::Suspended);
    assert_eq!(s.parked_gate(), Some(DIVERGED_GATE));
}

#[test]
fn fold_38_decision_seq_is_first_envelope_sequence() {
    let s = fold(&log(vec![
        started(),
        ev(
            "DECISION_RECORDED",
            json!({"id": "d", "choice": "a", "seq": 999}),
        ),
        step_started("x"),
        ev("DECISION_RECORDED", json!({"id": "d", "choice": "b"})),
    ]));
    let entry = s
        .variables
        .decisions
        .as_ref()
        .unwrap()
        .get("d")
        .unwrap()
        .to_value();
    assert_eq!(
        entry["seq"],
        json!(1),
        "envelope sequence of the first record, not the payload's"
    );
    assert_eq!(
        entry["choice"],
        json!("b"),
        "GAP-24: a repeat rebuilds the entry"
    );
}

#[test]
fn fold_39_seq_is_not_a_replay_input() {
    let events = log(vec![started(), decision("d", json!("a"))]);
    let stamped = fold(&events);
    let mut legacy = stamped.clone();
    let entry = json!({"choice": "a"});
    legacy
        .variables
        .decisions
        .as_mut()
        .unwrap()
        .insert("d".into(), entry.into());
    assert_eq!(get_decision(&stamped, "d"), get_decision(&legacy, "d"));
}

#[test]
fn fold_40_seal_metadata_is_ignored() {
    let events = busy_log();
    let sealed: Vec<_> = events
        .iter()
        .cloned()
        .map(|mut e| {
            e.metadata.get_or_insert_with(Default::default).insert(
                "seal".into(),
                json!({"v": 1, "cipher": "aes", "covers": ["payload"]}),
            );
            e
        })
        .collect();
    assert_eq!(canon(&fold(&events)), canon(&fold(&sealed)));
}

fn quarantine(topic: &str, id: &str) -> Ev {
    ev(
        "INBOX_QUARANTINED",
        json!({"topic": topic, "messageId": id}),
    )
    .kernel()
}

#[test]
fn fold_41_quarantine_holds_and_releases_in_order() {
    let s = fold(&log(vec![
        started(),
        quarantine("t", "m1"),
        quarantine("t", "m2"),
        ev(
            "INBOX_RELEASED",
            json!({"topic": "t", "operator": "alice", "deliver": true}),
        )
        .kernel(),
    ]));
    assert_eq!(
        var(&s, keys::QUARANTINED),
        Some(&json!({"t": [
            {"messageId": "m1", "seq": 1, "released": {"by": "operator", "deliver": true}},
            {"messageId": "m2", "seq": 2}
        ]}))
    );
    let u = fold(&log(vec![
        started(),
        ev(
            "INBOX_QUARANTINED",
            json!({"topic": "t", "messageId": "m1"}),
        ),
    ]));
    assert!(var(&u, keys::QUARANTINED).is_none());
}

#[test]
fn fold_42_release_needs_exactly_one_of_operator_and_auto() {
    // (operator, auto, deliver) -> whether the release acts.
    let table = [
        (false, false, false, false),
        (false, false, true, false),
        (true, true, false, false),
        (true, true, true, false),
        (true, false, false, true), // operator release without delivery: discards the hold
        (true, false, true, true),  // GAP-17: operator with deliver is valid
        (false, true, false, false), // GAP-17: auto without deliver is ignored
        (false, true, true, true),
    ];
    for (operator, auto, deliver, acts) in table {
        let mut p = json!({"topic": "t"});
        if operator {
            p["operator"] = json!("alice");
        }
        if auto {
            p["auto"] = json!(true);
        }
        if deliver {
            p["deliver"] = json!(true);
        }
        let held = fold(&log(vec![started(), quarantine("t", "m1")]));
        let after = fold(&log(vec![
            started(),
            quarantine("t", "m1"),
            ev("INBOX_RELEASED", p).kernel(),
        ]));
        assert_eq!(
            canon(&held) != canon(&after),
            acts,
            "operator={operator} auto={auto} deliver={deliver}"
        );
    }
}

#[test]
fn fold_41_release_with_nothing_held_leaves_the_state_unchanged() {
    // GAP-12 (decision 0001): an INBOX_RELEASED the fold ignores changes nothing, not
    // `_quarantined` either: folding as 1.25 and 1.26 once created an empty map here.
    let base = vec![started(), step_started("a")];
    let releases = [
        json!({"topic": "t", "operator": "alice", "deliver": true}),
        json!({"topic": "t", "operator": "alice"}),
        json!({"topic": "t", "auto": true, "deliver": true}),
    ];
    for payload in releases {
        for held_elsewhere in [false, true] {
            let mut before = base.clone();
            if held_elsewhere {
                before.push(quarantine("other", "m1"));
            }
            let mut after = before.clone();
            after.push(ev("INBOX_RELEASED", payload.clone()).kernel());
            for minor in [25, 26] {
                let v = loom_kernel::fold::FoldVersion::from_minor(minor).unwrap();
                let a = loom_kernel::fold::fold_as(v, &ExecutionState::new(), &log(before.clone()));
                let b = loom_kernel::fold::fold_as(v, &ExecutionState::new(), &log(after.clone()));
                assert_eq!(
                    canon(&a),
                    canon(&b),
                    "1.{minor}: {payload} with nothing held on `t` (other topic held: {held_elsewhere})"
                );
            }
        }
    }
}

#[test]
fn fold_43_quarantine_shape_and_total_cap() {
    use loom_kernel::limits::QUARANTINED_ENTRIES_MAX;
    let mut events = vec![started()];
    for i in 0..(QUARANTINED_ENTRIES_MAX + 5) {
        events.push(quarantine(
            if i % 2 == 0 { "a" } else { "b" },
            &format!("m{i}"),
        ));
    }
    let s = fold(&log(events));
    let q = var(&s, keys::QUARANTINED).unwrap().as_object().unwrap();
    let total: usize = q.values().map(|v| v.as_array().unwrap().len()).sum();
    assert_eq!(
        total, QUARANTINED_ENTRIES_MAX,
        "GAP-17: the cap is on the whole variable; overflow is ignored"
    );
    for queue in q.values() {
        for (i, e) in queue.as_array().unwrap().iter().enumerate() {
            assert!(i == 0 || e.get("released").is_none(), "released? held*");
        }
    }
}

#[test]
fn fold_44_message_consumed_drops_delivered_released_entry() {
    let consume = ev("MESSAGE_CONSUMED", json!({"topic": "t", "messageId": "m1"})).kernel();
    let s = fold(&log(vec![
        started(),
        quarantine("t", "m1"),
        quarantine("t", "m2"),
        ev(
            "INBOX_RELEASED",
            json!({"topic": "t", "auto": true, "deliver": true}),
        )
        .kernel(),
        consume.clone(),
    ]));
    assert_eq!(
        var(&s, keys::QUARANTINED),
        Some(&json!({"t": [{"messageId": "m2", "seq": 2}]}))
    );
    // Without quarantine state MESSAGE_CONSUMED folds as in 1.23.0.
    let plain = fold(&log(vec![started(), consume.clone()]));
    let old = fold_as(
        FoldVersion::from_minor(23).unwrap(),
        &ExecutionState::new(),
        &log(vec![started(), consume]),
    );
    assert_eq!(canon(&plain), canon(&old));
    assert!(var(&plain, keys::QUARANTINED).is_none());
}

#[test]
fn fold_45_continued_from_carry_seeds_quarantined() {
    let q = json!({"t": [{"messageId": "m9", "seq": 4}]});
    let s = fold(&log(vec![ev(
        "EXECUTION_STARTED",
        json!({"input": 1, "continuedFrom": {"executionId": "e0", "carried": {"quarantined": q.clone()}}}),
    )]));
    assert_eq!(var(&s, keys::QUARANTINED), Some(&q));
    let bad = fold(&log(vec![ev(
        "EXECUTION_STARTED",
        json!({"input": 1, "continuedFrom": {"carried": {"quarantined": {"t": [{"messageId": 1}]}}}}),
    )]));
    assert!(var(&bad, keys::QUARANTINED).is_none());
}

#[test]
fn fold_47_pre_1_25_logs_fold_identically_under_1_25() {
    let events = log(vec![
        started(),
        step_started("a"),
        step_completed("a", json!(1)),
        decision("d", json!(true)),
        ev("MESSAGE_CONSUMED", json!({"topic": "t", "messageId": "m"})).kernel(),
        suspended("g"),
        resumed(json!(2)),
    ]);
    let v24 = fold_as(
        FoldVersion::from_minor(24).unwrap(),
        &ExecutionState::new(),
        &events,
    );
    let v25 = fold_as(
        FoldVersion::from_minor(25).unwrap(),
        &ExecutionState::new(),
        &events,
    );
    assert_eq!(canon(&v24), canon(&v25));
    assert!(var(&v25, keys::QUARANTINED).is_none());
}

#[test]
fn fold_48_settled_frames_drop_input_retrying_keeps_it() {
    for settle in [
        step_completed("a", json!(1)),
        step_failed("a"),
        ev("STEP_CANCELLED", json!({"stepId": "a"})),
    ] {
        let name = settle.event_type.clone();
        let s = fold(&log(vec![started(), step_started("a"), settle]));
        assert!(s.frames["a"].input.is_none(), "{name} kept input");
    }
    let r = fold(&log(vec![
        started(),
        step_started("a"),
        ev("STEP_RETRYING", json!({"stepId": "a", "attempt": 2})),
    ]));
    assert_eq!(r.frames["a"].input, Some(json!({"x": "a"}).into()));
    let v25 = fold_as(
        FoldVersion::from_minor(25).unwrap(),
        &ExecutionState::new(),
        &log(vec![
            started(),
            step_started("a"),
            step_completed("a", json!(1)),
        ]),
    );
    assert_eq!(
        v25.frames["a"].input,
        Some(json!({"x": "a"}).into()),
        "1.25 kept the settled input"
    );
}

#[test]
fn fold_49_state_view_shows_no_settled_input_but_the_log_keeps_it() {
    let events = log(vec![
        started(),
        step_started("a"),
        step_completed("a", json!(1)),
    ]);
    let view = fold(&events).to_value();
    assert!(view["frames"]["a"].get("input").is_none());
    assert_eq!(
        events[1].payload["input"],
        json!({"x": "a"}),
        "the timeline (log) still holds the input"
    );
}

#[test]
fn fold_50_feature_differentials_confined_to_their_state() {
    let base = vec![
        started(),
        step_started("a"),
        step_completed("a", json!(1)),
        suspended("g"),
        resumed(json!("ok")),
    ];
    let base_state = fold(&log(base.clone()));
    // Each feature appended to the base: only its own keys differ.
    let features: Vec<(Ev, &[&str])> = vec![
        (
            ev("EXECUTION_MIGRATED", json!({"migratedInput": 5})),
            &[keys::INPUT],
        ),
        (
            ev(
                "DECISION_RECORDED",
                json!({"id": "d", "choice": 1, "policy": {"p": 0.5}}),
            ),
            &[keys::DECISIONS],
        ),
        (
            ev("progress", json!({})).stamp("abababababababab"),
            &[keys::FLOW_EMITS],
        ),
        (resumed(Value::Null), &[]),
    ];
    for (feature, touched) in features {
        let name = feature.event_type.clone();
        let mut events = base.clone();
        events.push(feature);
        let s = fold(&log(events));
        let mut a = base_state.variables.clone();
        let mut b = s.variables.clone();
        for key in touched {
            if *key == keys::DECISIONS {
                a.decisions = None;
                b.decisions = None;
            } else {
                a.remove(key);
                b.remove(key);
            }
        }
        assert_eq!(a, b, "{name} changed state outside {touched:?}");
        assert_eq!(base_state.frames, s.frames);
    }
}

#[test]
fn evidence_order_handles_mixed_legacy_entries() {
    // SNAP-08 ordering (see snapshot.rs for the snapshot-level test).
    let s = fold(&log(vec![
        started(),
        decision("b", json!(1)),
        decision("a", json!(2)),
    ]));
    assert_eq!(evidence_order(&s), ["b", "a"]);
}

/// FOLD-04, FOLD-06: folding one envelope at a time (`Folder`, what `loom fold` does
/// while it decodes) gives the state and the diagnostics of folding the whole slice, and
/// each diagnostic names the envelope's index in the log, not in the push.
#[test]
fn fold_04_folding_one_envelope_at_a_time_names_the_same_indices() {
    use loom_kernel::fold::Folder;
    let events = log(vec![
        started(),
        ev("NO_SUCH_KIND", json!({"x": 1})),
        ev("STEP_STARTED", json!("not an object")),
        step_started("s"),
        ev("EXECUTION_CONTINUED", json!({"to": "y"})),
        ev("STEP_COMPLETED", json!({"stepId": "s", "output": 2})),
    ]);
    for v in FoldVersion::all() {
        let (whole, whole_diags) = fold_with_diagnostics(v, &ExecutionState::new(), &events);
        let mut diags = Vec::new();
        let mut folder = Folder::new(ExecutionState::new(), v, &mut diags);
        for e in &events {
            folder.push(e);
        }
        assert_eq!(folder.pushed(), events.len());
        assert_eq!(folder.finish(), whole, "{v}");
        assert_eq!(diags, whole_diags, "{v}");
        // The payload that is not an object (index 2) and the unstamped kernel-only kind
        // (index 4, from 1.23.0) are reported where they are in the log.
        assert!(diags.iter().any(|d| d.index == 2), "{v}: {diags:?}");
        if v.has(23) {
            assert!(
                diags
                    .iter()
                    .any(|d| d.index == 4 && d.kind == DiagnosticKind::NotKernelStamped),
                "{v}: {diags:?}"
            );
        }
    }
}

/// FOLD-01: the fold is one total function in every build. An attempt or a counter at
/// `u64::MAX` (a hostile payload, or a restored snapshot) stays there: `+ 1` used to
/// panic in a debug build ("attempt to add with overflow") and wrap to 0 in a release
/// build, so the same log folded two ways. Found by the fuzz campaign build that keeps
/// overflow checks (props/regressions/fold_total/step-attempt-at-u64-max replays it).
/// Saturating agrees with a JavaScript kernel under decision 0002 (numbers compare as
/// doubles): `u64::MAX` and `2^64 + 1` are the same double, 2^64.
#[test]
fn fold_01_counters_at_u64_max_saturate_in_every_build() {
    let s = fold(&log(vec![
        started(),
        ev("STEP_STARTED", json!({"stepId": "a", "attempt": u64::MAX})),
        ev("STEP_STARTED", json!({"stepId": "a"})),
    ]));
    assert_eq!(s.frames.get("a").map(|f| f.attempt), Some(u64::MAX));

    // The inbox cursor and the stamp count, restored at the top of the range.
    let head = log(vec![started()]);
    let mut restored = fold(&head);
    restored.variables.set(
        keys::INBOX,
        json!({"t": {"consumed": u64::MAX, "lastMessageId": "m0"}}),
    );
    restored
        .variables
        .set(keys::FLOW_EMITS, json!({"00000000000000aa": u64::MAX}));
    let mut all = log(vec![
        started(),
        ev("MESSAGE_CONSUMED", json!({"topic": "t", "messageId": "m1"})).kernel(),
        ev("progress", json!({})).stamp("00000000000000aa"),
    ]);
    let tail = all.split_off(1);
    let after = fold_from(&restored, &tail);
    assert_eq!(
        var(&after, keys::INBOX).and_then(|i| i["t"]["consumed"].as_u64()),
        Some(u64::MAX)
    );
    assert_eq!(after.flow_emit_count("00000000000000aa"), u64::MAX);
}
