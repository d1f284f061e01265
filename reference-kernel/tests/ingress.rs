//! The resume ingress gate and userspace-emit validation (INGRESS group), as pure
//! functions of (state, log, request). Every refusal is checked to append nothing: the
//! gate returns no events, so the log bytes and the folded state are those of before.

mod common;
use common::*;
use loom_kernel::fold::{known_event_types, Status, INDOUBT_GATE};
use loom_kernel::ingress::{
    admit, legacy_answer_warnings, orphan_answers, validate_user_emit, EmitRefusal, EmitSource,
    ExecutionAuthorizer, GateConfig, IngressError, NewEvent, RefusalReason, ResumeAuthenticator,
    ResumePath, ResumeRequest, USERSPACE_KERNEL_ALLOW_LIST,
};
use loom_kernel::limits::RESOURCE_METERED_VALUE_MAX;
use loom_kernel::{fold, EventEnvelope};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

fn parked(gate: &str) -> Vec<EventEnvelope> {
    log(vec![started(), suspended(gate)])
}
fn timed(gate: &str) -> Vec<EventEnvelope> {
    log(vec![
        started(),
        ev("EXECUTION_SUSPENDED", json!({"on": gate, "wakeAt": 5000})),
    ])
}
fn run(
    events: &[EventEnvelope],
    path: ResumePath,
    req: &ResumeRequest,
    gate: &GateConfig,
) -> Result<Vec<NewEvent>, IngressError> {
    admit("exec-1", &fold(events), events, path, req, gate)
}
fn resume(events: &[EventEnvelope], req: &ResumeRequest) -> Result<Vec<NewEvent>, IngressError> {
    run(events, ResumePath::Resume, req, &GateConfig::default())
}
fn req(t: &str, p: Value) -> ResumeRequest {
    ResumeRequest::new(t, p)
}
fn types(events: &[NewEvent]) -> Vec<&str> {
    events.iter().map(|e| e.event_type.as_str()).collect()
}
fn reason(r: Result<Vec<NewEvent>, IngressError>) -> Option<RefusalReason> {
    r.err().and_then(|e| e.reason())
}
/// Appends admitted events to a log the way the runtime would.
fn append(events: &[EventEnvelope], new: Vec<NewEvent>) -> Vec<EventEnvelope> {
    let mut all: Vec<Ev> = events
        .iter()
        .map(|e| Ev {
            event_type: e.event_type.clone(),
            payload: e.payload.to_value(),
            metadata: e.metadata.clone(),
        })
        .collect();
    all.extend(new.into_iter().map(|n| Ev {
        event_type: n.event_type,
        payload: n.payload,
        metadata: n.metadata,
    }));
    log(all)
}

struct Accept;
impl ResumeAuthenticator for Accept {
    fn verify(&self, _: &str, r: &ResumeRequest) -> Result<Value, String> {
        Ok(json!({"by": "operator", "signed": r.event_type}))
    }
}
struct Reject;
impl ResumeAuthenticator for Reject {
    fn verify(&self, _: &str, _: &ResumeRequest) -> Result<Value, String> {
        Err("bad signature".into())
    }
}
struct Deny;
impl ExecutionAuthorizer for Deny {
    fn authorize(&self, _: &str, _: &ResumeRequest) -> Result<(), String> {
        Err("tenant mismatch".into())
    }
}
struct Allow;
impl ExecutionAuthorizer for Allow {
    fn authorize(&self, _: &str, _: &ResumeRequest) -> Result<(), String> {
        Ok(())
    }
}

#[test]
fn ingress_01_gate_has_no_off_switch_on_any_path() {
    // Every entry point (resume, resumeAs onto a parked execution) refuses the same forgery.
    let events = parked("approve");
    for path in [ResumePath::Resume, ResumePath::ResumeAs] {
        let r = run(
            &events,
            path,
            &req("STEP_COMPLETED", json!({"stepId": "s", "output": 1})),
            &GateConfig::default(),
        );
        assert_eq!(reason(r), Some(RefusalReason::KernelEventType), "{path:?}");
    }
}

#[test]
fn ingress_02_kernel_event_types_refused_except_timer_and_recovered() {
    let events = timed("approve");
    for t in known_event_types() {
        let r = resume(&events, &req(t, json!({"stepId": "s"})));
        match *t {
            "TIMER_FIRED" => assert!(r.is_ok(), "TIMER_FIRED wakes a timed park"),
            "EXECUTION_RECOVERED" => assert_eq!(
                reason(r),
                Some(RefusalReason::NotRecoverable),
                "its own path: parked is not recoverable"
            ),
            _ => assert_eq!(reason(r), Some(RefusalReason::KernelEventType), "{t}"),
        }
    }
    for must in ["STEP_COMPLETED", "EXECUTION_MIGRATED", "APPROVAL_GRANTED"] {
        assert!(known_event_types().contains(&must));
    }
}

#[test]
fn ingress_03_gate_name_must_match_the_recorded_gate() {
    let events = parked("A");
    let r = resume(&events, &req("B", json!({})));
    assert_eq!(reason(r), Some(RefusalReason::GateMismatch));
    assert_eq!(fold(&events).status, Status::Suspended);
    let ok = resume(&events, &req("A", json!({"yes": true}))).unwrap();
    assert_eq!(types(&ok), ["A", "EXECUTION_RESUMED"]);
}

#[test]
fn ingress_04_timer_fired_only_at_a_timed_park() {
    assert_eq!(
        reason(resume(&parked("A"), &req("TIMER_FIRED", json!({})))),
        Some(RefusalReason::NotTimed)
    );
    let t = timed("A");
    let by_timer = resume(&t, &req("TIMER_FIRED", json!({"firedAt": 1}))).unwrap();
    assert_eq!(
        by_timer.last().unwrap().payload,
        json!({"firedAt": 5000}),
        "GAP-25: the wake time comes from the log"
    );
    assert!(resume(&t, &req("A", json!(1))).is_ok());
    // The kernel's own wake path is gated the same way.
    assert_eq!(
        reason(run(
            &parked("A"),
            ResumePath::Timer,
            &req("TIMER_FIRED", Value::Null),
            &GateConfig::default()
        )),
        Some(RefusalReason::NotTimed)
    );
    assert!(run(
        &t,
        ResumePath::Timer,
        &req("TIMER_FIRED", Value::Null),
        &GateConfig::default()
    )
    .is_ok());
}

#[test]
fn ingress_05_recovered_only_for_running_or_pending() {
    let cases: Vec<(Vec<EventEnvelope>, bool)> = vec![
        (log(vec![]), true),
        (log(vec![started()]), true),
        (parked("g"), false),
        (
            log(vec![
                started(),
                ev("EXECUTION_COMPLETED", json!({"output": 1})),
            ]),
            false,
        ),
        (
            log(vec![
                started(),
                ev("EXECUTION_FAILED", json!({"error": "e"})),
            ]),
            false,
        ),
        (
            log(vec![started(), ev("EXECUTION_CANCELLED", json!({}))]),
            false,
        ),
        (
            log(vec![
                started(),
                ev("EXECUTION_CONTINUED", json!({"continuedTo": "n"})).kernel(),
            ]),
            false,
        ),
    ];
    for (events, accepted) in cases {
        let status = fold(&events).status;
        for path in [ResumePath::Recover, ResumePath::Resume] {
            let r = run(
                &events,
                path,
                &req("EXECUTION_RECOVERED", Value::Null),
                &GateConfig::default(),
            );
            assert_eq!(r.is_ok(), accepted, "{status:?} via {path:?}");
            if !accepted {
                assert_eq!(reason(r), Some(RefusalReason::NotRecoverable));
            }
        }
    }
}

#[test]
fn ingress_06_recovery_records_no_resume() {
    let events = log(vec![started(), step_started("a")]);
    let out = run(
        &events,
        ResumePath::Recover,
        &req("EXECUTION_RECOVERED", Value::Null),
        &GateConfig::default(),
    )
    .unwrap();
    assert!(out.is_empty());
    let crashed = run(
        &events,
        ResumePath::ResumeAs,
        &req("fix", json!({})),
        &GateConfig::default(),
    )
    .unwrap();
    assert!(!types(&crashed).contains(&"EXECUTION_RESUMED"));
}

#[test]
fn ingress_07_resume_as_onto_terminal_records_null_resume() {
    let events = log(vec![
        started(),
        ev("EXECUTION_FAILED", json!({"error": "e"})),
    ]);
    let out = run(
        &events,
        ResumePath::ResumeAs,
        &req("fix", json!({"x": 1})),
        &GateConfig::default(),
    )
    .unwrap();
    assert_eq!(types(&out), ["EXECUTION_RESUMED"]);
    assert_eq!(out[0].payload, Value::Null);
    let after = fold(&append(&events, out));
    assert_eq!(after.status, Status::Running);
    assert!(after.resume_payloads().is_empty());
}

#[test]
fn ingress_08_admitted_resumes_never_leave_orphan_answers() {
    // Park, answer, park, answer (with nulls, timers and verdicts mixed in): each entry answers one park.
    let mut events = timed("A");
    events = append(
        &events,
        resume(&events, &req("TIMER_FIRED", Value::Null)).unwrap(),
    );
    events = append(
        &events,
        vec![NewEvent {
            event_type: "EXECUTION_SUSPENDED".into(),
            payload: json!({"on": "B"}),
            metadata: None,
        }],
    );
    events = append(&events, resume(&events, &req("B", Value::Null)).unwrap());
    let s = fold(&events);
    assert_eq!(s.resume_payloads().len(), 2);
    assert_eq!(orphan_answers(&events), 0);
    // A resume while running is refused, so it can never become an orphan.
    assert!(resume(&events, &req("B", json!(1))).is_err());
}

fn indoubt_log(attempt: u64) -> Vec<EventEnvelope> {
    log(vec![
        started(),
        step_started("pay"),
        ev(
            "EFFECT_INDOUBT",
            json!({"stepId": "pay", "attempt": attempt}),
        )
        .kernel(),
        ev(
            "EXECUTION_SUSPENDED",
            json!({"on": INDOUBT_GATE, "condition": {"stepId": "pay", "attempt": attempt}}),
        )
        .kernel(),
    ])
}
fn verdict(step: &str, attempt: u64) -> ResumeRequest {
    req(
        INDOUBT_GATE,
        json!({"verdict": {"stepId": step, "attempt": attempt, "outcome": "completed", "output": {"ok": true}}}),
    )
}

#[test]
fn ingress_09_verdict_recorded_as_kernel_decision_beside_null_resume() {
    let events = indoubt_log(1);
    let out = run(
        &events,
        ResumePath::Resume,
        &verdict("pay", 1),
        &GateConfig {
            authenticator: Some(&Accept),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        types(&out),
        [
            "APPROVAL_GRANTED",
            INDOUBT_GATE,
            "DECISION_RECORDED",
            "EXECUTION_RESUMED"
        ]
    );
    assert_eq!(out[2].payload["id"], json!("__loom_verdict:pay#1"));
    assert_eq!(out[2].metadata.as_ref().unwrap()["kernel"], json!(true));
    assert_eq!(out[3].payload, Value::Null);
    let after = fold(&append(&events, out));
    assert_eq!(after.status, Status::Running);
    assert!(
        after.resume_payloads().is_empty(),
        "FOLD-20: in-doubt null resume adds no passthrough"
    );
}

#[test]
fn ingress_10_non_verdicts_at_in_doubt_park_are_payload_errors() {
    let events = indoubt_log(2);
    let bad = [
        verdict("other", 2),
        verdict("pay", 1),
        req(INDOUBT_GATE, json!({"approve": true})),
        req("approve", json!({})),
        req("TIMER_FIRED", Value::Null),
    ];
    for r in bad {
        let out = resume(&events, &r);
        assert!(
            matches!(out, Err(IngressError::PayloadValidation { .. })),
            "{r:?} -> {out:?}"
        );
    }
    assert!(resume(&events, &verdict("pay", 2)).is_ok());
}

#[test]
fn ingress_11_legacy_logs_replay_as_written() {
    // A pre-0104 log: an answer recorded while the execution was running (an orphan).
    let legacy = log(vec![
        started(),
        resumed(json!("early")),
        suspended("A"),
        resumed(json!("late")),
    ]);
    let s = fold(&legacy);
    assert_eq!(
        s.resume_payloads(),
        &[json!("early"), json!("late")],
        "entries fold exactly as written"
    );
    assert_eq!(s.status, Status::Running);
}

#[test]
fn ingress_12_legacy_orphans_warned_with_spent_flag() {
    let legacy = log(vec![
        started(),
        resumed(json!("early")),
        suspended("A"),
        resumed(json!("late")),
        resumed(json!("stray")),
    ]);
    let w = legacy_answer_warnings(&legacy);
    assert_eq!(w.len(), 2);
    assert_eq!(
        (w[0].event_index, w[0].entry, w[0].spent),
        (1, 0, true),
        "consumed by the park at A"
    );
    assert_eq!((w[1].event_index, w[1].entry, w[1].spent), (4, 2, false));
}

#[test]
fn ingress_13_resume_before_park_refused_then_accepted_after() {
    let running = log(vec![started(), step_started("a")]);
    assert_eq!(
        reason(resume(&running, &req("A", json!(1)))),
        Some(RefusalReason::NotSuspended)
    );
    let parked_now = append(
        &running,
        vec![NewEvent {
            event_type: "EXECUTION_SUSPENDED".into(),
            payload: json!({"on": "A"}),
            metadata: None,
        }],
    );
    assert!(resume(&parked_now, &req("A", json!(1))).is_ok());
}

#[test]
fn ingress_14_null_after_parked_failure_refused_real_answer_accepted() {
    let events = log(vec![
        started(),
        step_started("a"),
        suspended("A"),
        step_failed("a"),
    ]);
    assert_eq!(
        reason(resume(&events, &req("A", Value::Null))),
        Some(RefusalReason::NullAnswerAfterParkedFailure)
    );
    let ok = resume(&events, &req("A", json!({"retry": true}))).unwrap();
    let after = fold(&append(&events, ok));
    assert_eq!(after.resume_payloads(), &[json!({"retry": true})]);
}

#[test]
fn ingress_15_every_refusal_appends_nothing() {
    // The gate's refusals return no events at all; the log and fold are untouched.
    let events = log(vec![
        started(),
        step_started("a"),
        suspended("A"),
        step_failed("a"),
    ]);
    let before = serde_json::to_string(&events).unwrap();
    let state_before = canon(&fold(&events));
    for r in [
        req("B", json!(1)),
        req("A", Value::Null),
        req("STEP_COMPLETED", json!({})),
        req("TIMER_FIRED", Value::Null),
    ] {
        assert!(resume(&events, &r).is_err());
        assert_eq!(serde_json::to_string(&events).unwrap(), before);
        assert_eq!(canon(&fold(&events)), state_before);
    }
}

#[test]
fn ingress_16_filtered_events_never_contributed_to_state() {
    // A non-kernel resume-typed event already folds to a no-op: removing it changes nothing.
    let with = log(vec![
        started(),
        suspended("A"),
        ev("A", json!({"x": 1})),
        resumed(json!({"x": 1})),
        ev("B-forged", json!({})),
    ]);
    let without = log(vec![started(), suspended("A"), resumed(json!({"x": 1}))]);
    let (a, b) = (fold(&with), fold(&without));
    assert_eq!(a.status, b.status);
    assert_eq!(a.variables, b.variables);
    assert_eq!(a.frames, b.frames);
}

#[test]
fn ingress_17_resume_as_onto_crashed_or_terminal_applies_namespace_rule_only() {
    let crashed = log(vec![started(), step_started("a")]);
    assert!(run(
        &crashed,
        ResumePath::ResumeAs,
        &req("any-app-type", json!({})),
        &GateConfig::default()
    )
    .is_ok());
    assert_eq!(
        reason(run(
            &crashed,
            ResumePath::ResumeAs,
            &req("STEP_COMPLETED", json!({})),
            &GateConfig::default()
        )),
        Some(RefusalReason::KernelEventType)
    );
    let done = log(vec![
        started(),
        ev("EXECUTION_COMPLETED", json!({"output": 1})),
    ]);
    assert!(run(
        &done,
        ResumePath::ResumeAs,
        &req("whatever", json!(null)),
        &GateConfig::default()
    )
    .is_ok());
}

#[test]
fn ingress_18_resume_as_onto_parked_enforces_every_resume_rule() {
    let schemas: BTreeMap<String, Value> = [(
        "A".to_string(),
        json!({"type": "object", "required": ["ok"]}),
    )]
    .into();
    let with_schema = GateConfig {
        resume_schemas: Some(&schemas),
        ..Default::default()
    };
    let parked_failure = log(vec![
        started(),
        step_started("a"),
        suspended("A"),
        step_failed("a"),
    ]);
    let cases: Vec<(Vec<EventEnvelope>, ResumeRequest, GateConfig)> = vec![
        (
            parked("A"),
            req("B", json!({"ok": 1})),
            GateConfig::default(),
        ),
        (parked("A"), req("A", json!({})), with_schema),
        (
            parked("A"),
            req("A", json!({"ok": 1})),
            GateConfig {
                authenticator: Some(&Reject),
                ..Default::default()
            },
        ),
        (
            parked("A"),
            req("A", json!({"ok": 1})),
            GateConfig {
                authorizer: Some(&Deny),
                ..Default::default()
            },
        ),
        (indoubt_log(1), req("A", json!({})), GateConfig::default()),
        (parked_failure, req("A", Value::Null), GateConfig::default()),
        (
            legacy_ambiguous(),
            req("A", json!(1)),
            GateConfig::default(),
        ),
    ];
    for (events, r, gate) in cases {
        let via_resume = run(&events, ResumePath::Resume, &r, &gate);
        let via_resume_as = run(&events, ResumePath::ResumeAs, &r, &gate);
        assert!(via_resume.is_err(), "{r:?}");
        assert_eq!(
            via_resume, via_resume_as,
            "resumeAs gives the error resume gives"
        );
    }
}

#[test]
fn resume_as_admission_records_no_migration() {
    // The gate itself never records EXECUTION_MIGRATED: the runtime records the transform's
    // RESULT (see the runtime tests). Here: a resumeAs admission records no migration.
    let out = run(
        &log(vec![started()]),
        ResumePath::ResumeAs,
        &req("fix", json!({})),
        &GateConfig::default(),
    )
    .unwrap();
    assert!(!types(&out).contains(&"EXECUTION_MIGRATED"));
}

#[test]
fn ingress_21_authenticator_verdict_recorded_rejection_never_logged() {
    let ok = run(
        &parked("A"),
        ResumePath::Resume,
        &req("A", json!(1)),
        &GateConfig {
            authenticator: Some(&Accept),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(types(&ok), ["APPROVAL_GRANTED", "A", "EXECUTION_RESUMED"]);
    assert_eq!(
        ok[0].payload["verdict"],
        json!({"by": "operator", "signed": "A"})
    );
    let no = run(
        &parked("A"),
        ResumePath::Resume,
        &req("A", json!(1)),
        &GateConfig {
            authenticator: Some(&Reject),
            ..Default::default()
        },
    );
    assert!(matches!(no, Err(IngressError::Unauthenticated { .. })));
}

#[test]
fn ingress_22_resume_schema_parses_before_append_and_records_parsed_value() {
    let schemas: BTreeMap<String, Value> = [(
        "A".to_string(),
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}, "note": {"type": "string", "default": "none"}}, "required": ["ok"]}),
    )]
    .into();
    let gate = GateConfig {
        resume_schemas: Some(&schemas),
        authenticator: Some(&Accept),
        ..Default::default()
    };
    let bad = run(
        &parked("A"),
        ResumePath::Resume,
        &req("A", json!({"ok": "yes"})),
        &gate,
    );
    assert!(
        matches!(bad, Err(IngressError::PayloadValidation { .. })),
        "no APPROVAL_GRANTED either: nothing is returned"
    );
    let good = run(
        &parked("A"),
        ResumePath::Resume,
        &req("A", json!({"ok": true})),
        &gate,
    )
    .unwrap();
    assert_eq!(good[1].payload, json!({"ok": true, "note": "none"}));
    assert_eq!(good[2].payload, json!({"ok": true, "note": "none"}));
}

#[test]
fn ingress_23_absent_schemas_change_nothing() {
    let empty: BTreeMap<String, Value> = BTreeMap::new();
    let a = run(
        &parked("A"),
        ResumePath::Resume,
        &req("A", json!({"x": 1})),
        &GateConfig::default(),
    )
    .unwrap();
    let b = run(
        &parked("A"),
        ResumePath::Resume,
        &req("A", json!({"x": 1})),
        &GateConfig {
            resume_schemas: Some(&empty),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(a, b);
}

#[test]
fn ingress_24_identity_before_gate_before_shape() {
    let schemas: BTreeMap<String, Value> = [("A".to_string(), json!({"type": "object"}))].into();
    // Unauthenticated + wrong gate: the authentication error, which names no gate.
    let r = run(
        &parked("A"),
        ResumePath::Resume,
        &req("B", json!(1)),
        &GateConfig {
            authenticator: Some(&Reject),
            ..Default::default()
        },
    );
    assert!(matches!(&r, Err(IngressError::Unauthenticated { message }) if !message.contains('A')));
    // The authenticator sees the raw, unparsed request.
    struct Spy(std::cell::RefCell<Option<ResumeRequest>>);
    impl ResumeAuthenticator for Spy {
        fn verify(&self, _: &str, r: &ResumeRequest) -> Result<Value, String> {
            *self.0.borrow_mut() = Some(r.clone());
            Ok(json!(true))
        }
    }
    let spy = Spy(Default::default());
    let schemas_default: BTreeMap<String, Value> = [(
        "A".to_string(),
        json!({"type": "object", "properties": {"d": {"default": 1}}}),
    )]
    .into();
    run(
        &parked("A"),
        ResumePath::Resume,
        &req("A", json!({})),
        &GateConfig {
            resume_schemas: Some(&schemas_default),
            authenticator: Some(&spy),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(spy.0.borrow().as_ref().unwrap().payload, json!({}));
    // Accepted identity, then a shape refusal: nothing (no APPROVAL_GRANTED) is returned.
    let r = run(
        &parked("A"),
        ResumePath::Resume,
        &req("A", json!(5)),
        &GateConfig {
            resume_schemas: Some(&schemas),
            authenticator: Some(&Accept),
            ..Default::default()
        },
    );
    assert!(matches!(r, Err(IngressError::PayloadValidation { .. })));
    // Authorizer denial does not name the gate.
    let r = run(
        &parked("A"),
        ResumePath::Resume,
        &req("B", json!(1)),
        &GateConfig {
            authorizer: Some(&Deny),
            ..Default::default()
        },
    );
    assert!(
        matches!(&r, Err(IngressError::ResumeRefused { reason: RefusalReason::Unauthorized, message }) if !message.contains("`A`"))
    );
}

#[test]
fn ingress_25_resume_as_validates_against_the_target_schema() {
    let target: BTreeMap<String, Value> = [(
        "A".to_string(),
        json!({"type": "object", "required": ["v2"]}),
    )]
    .into();
    let r = run(
        &parked("A"),
        ResumePath::ResumeAs,
        &req("A", json!({"v1": true})),
        &GateConfig {
            resume_schemas: Some(&target),
            ..Default::default()
        },
    );
    assert!(matches!(r, Err(IngressError::PayloadValidation { .. })));
    assert!(run(
        &parked("A"),
        ResumePath::ResumeAs,
        &req("A", json!({"v2": true})),
        &GateConfig {
            resume_schemas: Some(&target),
            ..Default::default()
        }
    )
    .is_ok());
}

#[test]
fn ingress_26_renaming_the_event_cannot_evade_the_schema() {
    let schemas: BTreeMap<String, Value> = [(
        "A".to_string(),
        json!({"type": "object", "required": ["ok"]}),
    )]
    .into();
    let r = run(
        &parked("A"),
        ResumePath::Resume,
        &req("A2", json!({})),
        &GateConfig {
            resume_schemas: Some(&schemas),
            ..Default::default()
        },
    );
    assert_eq!(reason(r), Some(RefusalReason::GateMismatch));
}

fn emit(t: &str, p: Value) -> Result<(String, Value), loom_kernel::ingress::EmitRefused> {
    validate_user_emit(&fold(&log(vec![started()])), &EmitSource::Flow, t, p, None)
}

#[test]
fn ingress_27_user_emits_refuse_kernel_types_outside_allow_list() {
    let payload_for = |t: &str| match t {
        "RESOURCE_METERED" => json!({"tokens": 1}),
        "QUOTA_EXCEEDED" => json!({"reason": "budget"}),
        "DECISION_RECORDED" => json!({"id": "k", "choice": 1}),
        _ => json!({}),
    };
    let state = fold(&log(vec![started()]));
    for source in [
        EmitSource::Flow,
        EmitSource::Effect {
            step_id: "s".into(),
            attempt: 1,
        },
    ] {
        for t in known_event_types() {
            let r = validate_user_emit(&state, &source, t, payload_for(t), None);
            assert_eq!(
                r.is_ok(),
                USERSPACE_KERNEL_ALLOW_LIST.contains(t),
                "{t} from {source:?}"
            );
        }
    }
    assert!(emit("app.progress", json!({"p": 1})).is_ok());
}

#[test]
fn ingress_28_metering_fields_finite_nonnegative_bounded() {
    for bad in [
        json!({"tokens": -1}),
        json!({"tokens": RESOURCE_METERED_VALUE_MAX * 2.0}),
        json!({"costUsd": "1"}),
        json!({"custom": {"x": -2}}),
        json!({"custom": 3}),
    ] {
        assert_eq!(
            emit("RESOURCE_METERED", bad.clone()).unwrap_err().reason,
            EmitRefusal::InvalidPayload,
            "{bad}"
        );
    }
    for good in [
        json!({"tokens": 0}),
        json!({"tokens": 5, "costUsd": 0.01}),
        json!({"ms": RESOURCE_METERED_VALUE_MAX}),
        json!({"custom": {"gpuSec": 2}}),
    ] {
        assert!(emit("RESOURCE_METERED", good.clone()).is_ok(), "{good}");
    }
}

#[test]
fn ingress_29_quota_reason_bounded_string() {
    assert!(emit("QUOTA_EXCEEDED", json!({"reason": "over budget"})).is_ok());
    assert!(emit("QUOTA_EXCEEDED", json!({"reason": 5})).is_err());
    assert!(emit("QUOTA_EXCEEDED", json!({"reason": "x".repeat(1025)})).is_err());
    assert!(emit("QUOTA_EXCEEDED", json!({"reason": "x".repeat(1024)})).is_ok());
}

#[test]
fn ingress_30_effect_decisions_rewritten_into_step_namespace() {
    let state = fold(&log(vec![started()]));
    let (_, p) = validate_user_emit(
        &state,
        &EmitSource::Effect {
            step_id: "s".into(),
            attempt: 1,
        },
        "DECISION_RECORDED",
        json!({"id": "k", "choice": 1}),
        None,
    )
    .unwrap();
    assert_eq!(p["id"], json!("effect:s#1:k"));
    let after = fold(&log(vec![started(), ev("DECISION_RECORDED", p)]));
    assert!(
        loom_kernel::get_decision(&after, "k").is_none(),
        "the flow's ctx.decide(\"k\") is not served by it"
    );
}

#[test]
fn ingress_31_user_decision_cannot_change_a_recorded_choice() {
    let state = fold(&log(vec![started(), decision("d", json!("left"))]));
    let r = validate_user_emit(
        &state,
        &EmitSource::Flow,
        "DECISION_RECORDED",
        json!({"id": "d", "choice": "right"}),
        None,
    );
    assert_eq!(r.unwrap_err().reason, EmitRefusal::ChoiceChange);
    assert!(validate_user_emit(
        &state,
        &EmitSource::Flow,
        "DECISION_RECORDED",
        json!({"id": "d", "choice": "left"}),
        None
    )
    .is_ok());
}

#[test]
fn ingress_31_the_same_choice_spelled_otherwise_is_not_a_change() {
    let state = fold(&log(vec![
        started(),
        decision("d", json!({"a": 1, "b": [1, 2]})),
    ]));
    let same: serde_json::Value = serde_json::from_str(r#"{"b": [1.0, 2E0], "a": 1}"#).unwrap();
    assert!(validate_user_emit(
        &state,
        &EmitSource::Flow,
        "DECISION_RECORDED",
        json!({"id": "d", "choice": same}),
        None
    )
    .is_ok());
    let changed: serde_json::Value = serde_json::from_str(r#"{"b": [1, 3], "a": 1}"#).unwrap();
    assert_eq!(
        validate_user_emit(
            &state,
            &EmitSource::Flow,
            "DECISION_RECORDED",
            json!({"id": "d", "choice": changed}),
            None
        )
        .unwrap_err()
        .reason,
        EmitRefusal::ChoiceChange
    );
}

#[test]
fn ingress_32_relay_forwards_application_types_only() {
    let state = fold(&log(vec![started()]));
    for t in USERSPACE_KERNEL_ALLOW_LIST {
        assert!(
            validate_user_emit(&state, &EmitSource::Relay, t, json!({}), None).is_err(),
            "{t}"
        );
    }
    assert!(validate_user_emit(&state, &EmitSource::Relay, "tool.log", json!({}), None).is_ok());
}

#[test]
fn ingress_33_loom_prefixed_decision_ids_reserved() {
    assert_eq!(
        emit("DECISION_RECORDED", json!({"id": "__loom_x", "choice": 1}))
            .unwrap_err()
            .reason,
        EmitRefusal::ReservedDecisionId
    );
    let state = fold(&log(vec![started()]));
    let (_, p) = validate_user_emit(
        &state,
        &EmitSource::Effect {
            step_id: "s".into(),
            attempt: 2,
        },
        "DECISION_RECORDED",
        json!({"id": "__loom_x", "choice": 1}),
        None,
    )
    .unwrap();
    assert_eq!(
        p["id"],
        json!("effect:s#2:__loom_x"),
        "rewritten outside the reserved prefix"
    );
    assert!(loom_kernel::ingress::is_reserved_decision_id(
        "__loom_verdict:s#1"
    ));
}

fn legacy_ambiguous() -> Vec<EventEnvelope> {
    // An answer recorded while running (pre-0104), then an open human-step park.
    log(vec![
        started(),
        resumed(json!("orphan")),
        ev(
            "EXECUTION_SUSPENDED",
            json!({"on": "A", "condition": {"stepId": "h"}}),
        ),
    ])
}

fn with_discard(step: &str, count: u64) -> ResumeRequest {
    let mut m = Map::new();
    m.insert(
        "discardLegacyAnswers".into(),
        json!({"stepId": step, "count": count}),
    );
    ResumeRequest {
        event_type: "A".into(),
        payload: json!("answer"),
        metadata: Some(m),
    }
}

#[test]
fn ingress_36_ambiguous_legacy_answers_refused() {
    assert_eq!(
        reason(resume(&legacy_ambiguous(), &req("A", json!("answer")))),
        Some(RefusalReason::AmbiguousLegacyAnswers)
    );
}

#[test]
fn ingress_37_discard_override_needs_verification_and_is_recorded() {
    let events = legacy_ambiguous();
    assert_eq!(
        reason(resume(&events, &with_discard("h", 1))),
        Some(RefusalReason::AmbiguousLegacyAnswers),
        "no authenticator"
    );
    let rejected = run(
        &events,
        ResumePath::Resume,
        &with_discard("h", 1),
        &GateConfig {
            authenticator: Some(&Reject),
            ..Default::default()
        },
    );
    assert!(matches!(
        rejected,
        Err(IngressError::Unauthenticated { .. })
    ));
    for path in [ResumePath::Timer, ResumePath::Recover] {
        let mut r = with_discard("h", 1);
        r.event_type = if path == ResumePath::Timer {
            "TIMER_FIRED".into()
        } else {
            "EXECUTION_RECOVERED".into()
        };
        assert!(run(
            &events,
            path,
            &r,
            &GateConfig {
                authenticator: Some(&Accept),
                ..Default::default()
            }
        )
        .is_err());
    }
    let ok = run(
        &events,
        ResumePath::Resume,
        &with_discard("h", 1),
        &GateConfig {
            authenticator: Some(&Accept),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        types(&ok),
        [
            "APPROVAL_GRANTED",
            "A",
            "DECISION_RECORDED",
            "EXECUTION_RESUMED"
        ]
    );
    assert_eq!(ok[2].payload["id"], json!("__loom_discard:h"));
}

#[test]
fn ingress_38_authorizer_denies_allows_or_is_absent() {
    let deny = run(
        &parked("A"),
        ResumePath::Resume,
        &req("A", json!(1)),
        &GateConfig {
            authorizer: Some(&Deny),
            ..Default::default()
        },
    );
    assert_eq!(reason(deny), Some(RefusalReason::Unauthorized));
    let allow = run(
        &parked("A"),
        ResumePath::Resume,
        &req("A", json!(1)),
        &GateConfig {
            authorizer: Some(&Allow),
            ..Default::default()
        },
    )
    .unwrap();
    let none = resume(&parked("A"), &req("A", json!(1))).unwrap();
    assert_eq!(allow, none);
}

#[test]
fn ingress_39_forged_kernel_metadata_refused_on_resume_and_emit() {
    let state = fold(&log(vec![started()]));
    for key in ["kernel", "flowEmit", "forkChain", "forkedBy", "seal"] {
        let mut m = Map::new();
        m.insert(key.into(), json!(true));
        let r = ResumeRequest {
            event_type: "A".into(),
            payload: json!(1),
            metadata: Some(m.clone()),
        };
        assert_eq!(
            reason(resume(&parked("A"), &r)),
            Some(RefusalReason::KernelMetadata),
            "{key}"
        );
        for source in [
            EmitSource::Flow,
            EmitSource::Effect {
                step_id: "s".into(),
                attempt: 1,
            },
            EmitSource::Relay,
        ] {
            let e = validate_user_emit(
                &state,
                &source,
                "DECISION_RECORDED",
                json!({"id": "d", "choice": 1, "innerSteps": [1]}),
                Some(&m),
            );
            assert_eq!(
                e.unwrap_err().reason,
                EmitRefusal::KernelMetadata,
                "{key} via {source:?}"
            );
        }
    }
    // Without the key, the same events are accepted.
    assert!(resume(&parked("A"), &req("A", json!(1))).is_ok());
}
