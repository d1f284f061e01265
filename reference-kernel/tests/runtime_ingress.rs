//! INGRESS rules that need a running runtime (the pure gate is tested with the ingress
//! module): re-drives, resumeAs, resume while running, human-step conditions.
#[path = "common/runtime.rs"]
mod rt;

use loom_kernel::fold::{keys, Status};
use loom_kernel::ingress::{IngressError, RefusalReason, ResumeRequest};
use loom_kernel::runtime::{block_on, RunOutcome, RuntimeError};
use rt::*;
use serde_json::{json, Value};

fn crashing_flow() -> Value {
    json!({"flowId": "f", "effects": {"a": {"outcomes": [{"crash": "before-effect"}, {"value": 1}]}},
        "body": [{"op": "suspend", "on": "g"}, run_step("a"), {"op": "complete", "output": {"$ref": "steps.a.output"}}]})
}

#[test]
fn ingress_06_recover_records_no_resumed() {
    let rt = rt(&[crashing_flow()]);
    start(&rt, "e", "f");
    let out = resume(&rt, "e", "g", json!("yes")).unwrap();
    assert!(matches!(out, RunOutcome::Crashed { .. }));
    let payloads_before = state(&rt, "e").resume_payloads().to_vec();
    let resumed_before = count(&log(&rt, "e"), "EXECUTION_RESUMED");
    assert_eq!(recover(&rt, "e").unwrap(), completed(json!(1)));
    assert_eq!(count(&log(&rt, "e"), "EXECUTION_RESUMED"), resumed_before);
    assert_eq!(count(&log(&rt, "e"), "EXECUTION_RECOVERED"), 0);
    assert_eq!(
        state(&rt, "e").resume_payloads(),
        payloads_before.as_slice()
    );
}

#[test]
fn ingress_06_resume_as_onto_crashed_records_no_resumed() {
    let mut rt = rt(&[crashing_flow()]);
    rt.register_flow_json(&json!({"flowId": "f2", "body": [{"op": "suspend", "on": "g"}, {"op": "complete", "output": "fixed"}]})).unwrap();
    start(&rt, "e", "f");
    resume(&rt, "e", "g", json!("yes")).unwrap();
    let before = count(&log(&rt, "e"), "EXECUTION_RESUMED");
    let out = block_on(rt.resume_as(
        "e",
        ResumeRequest::new("operator-fix", json!(null)),
        "f2",
        None,
    ))
    .unwrap();
    assert_eq!(out, completed(json!("fixed")));
    assert_eq!(count(&log(&rt, "e"), "EXECUTION_RESUMED"), before);
}

#[test]
fn ingress_07_resume_as_onto_terminal_records_null_resume() {
    let mut rt = rt(&[flow("f", json!([{"op": "fail", "error": "bad"}]))]);
    rt.register_flow_json(&flow("f2", json!([{"op": "complete", "output": "ok"}])))
        .unwrap();
    assert!(matches!(start(&rt, "e", "f"), RunOutcome::Failed { .. }));
    let out = block_on(rt.resume_as(
        "e",
        ResumeRequest::new("operator-fix", json!(1)),
        "f2",
        None,
    ))
    .unwrap();
    assert_eq!(out, completed(json!("ok")));
    let l = log(&rt, "e");
    let resumed = of_type(&l, "EXECUTION_RESUMED");
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].payload, Value::Null);
    assert!(state(&rt, "e").resume_payloads().is_empty(), "status only");
}

#[test]
fn ingress_13_resume_while_running_refused() {
    let rt = rt(&[crashing_flow()]);
    start(&rt, "e", "f");
    resume(&rt, "e", "g", json!("yes")).unwrap(); // crashes during step a: still running
    assert_eq!(state(&rt, "e").status, Status::Running);
    let before = log_bytes(&rt, "e");
    let err = resume(&rt, "e", "g", json!("again")).unwrap_err();
    assert!(
        matches!(
            err,
            RuntimeError::Ingress(IngressError::ResumeRefused {
                reason: RefusalReason::NotSuspended,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(log_bytes(&rt, "e"), before, "nothing appended");
}

#[test]
fn ingress_13_resume_accepted_once_parked() {
    let rt = rt(&[flow(
        "f",
        json!([{"op": "suspend", "on": "g"}, {"op": "suspend", "on": "h"}]),
    )]);
    start(&rt, "e", "f");
    assert_eq!(resume(&rt, "e", "g", json!(1)).unwrap(), parked("h"));
}

#[test]
fn ingress_17_resume_as_onto_crashed_checks_namespace_only() {
    let mut rt = rt(&[crashing_flow()]);
    rt.register_flow_json(&json!({"flowId": "f2", "body": [{"op": "suspend", "on": "g"}]}))
        .unwrap();
    start(&rt, "e", "f");
    resume(&rt, "e", "g", json!("yes")).unwrap();
    let before = log_bytes(&rt, "e");
    let err = block_on(rt.resume_as(
        "e",
        ResumeRequest::new("STEP_COMPLETED", json!({})),
        "f2",
        None,
    ))
    .unwrap_err();
    assert!(matches!(
        err,
        RuntimeError::Ingress(IngressError::ResumeRefused {
            reason: RefusalReason::KernelEventType,
            ..
        })
    ));
    assert_eq!(log_bytes(&rt, "e"), before);
    assert!(block_on(rt.resume_as(
        "e",
        ResumeRequest::new("any-app-type", json!(null)),
        "f2",
        None
    ))
    .is_ok());
}

#[test]
fn ingress_19_transform_result_recorded_as_migrated_input() {
    let mut rt = rt(&[flow("f", json!([{"op": "suspend", "on": "g"}]))]);
    rt.register_flow_json(&json!({"flowId": "f2", "body": [{"op": "suspend", "on": "g"}, {"op": "complete", "output": {"$ref": "input/n"}}]})).unwrap();
    start(&rt, "e", "f");
    let plus_one = |v: &Value| Ok(json!({"n": v["n"].as_i64().unwrap_or(0) + 1}));
    let out = block_on(rt.resume_as(
        "e",
        ResumeRequest::new("g", json!(null)),
        "f2",
        Some(&plus_one),
    ))
    .unwrap();
    assert_eq!(
        out,
        completed(json!(2)),
        "the re-run sees the migrated input"
    );
    let l = log(&rt, "e");
    assert_eq!(
        of_type(&l, "EXECUTION_MIGRATED")[0].payload["migratedInput"],
        json!({"n": 2})
    );
    assert_eq!(
        state(&rt, "e").variables.get(keys::INPUT),
        Some(&json!({"n": 2}))
    );
}

#[test]
fn ingress_20_failing_transform_appends_nothing() {
    let mut rt = rt(&[flow("f", json!([{"op": "suspend", "on": "g"}]))]);
    rt.register_flow_json(&flow("f2", json!([]))).unwrap();
    start(&rt, "e", "f");
    let before = log_bytes(&rt, "e");
    let failing = |_: &Value| Err("cannot migrate".to_owned());
    let err = block_on(rt.resume_as(
        "e",
        ResumeRequest::new("g", json!(null)),
        "f2",
        Some(&failing),
    ))
    .unwrap_err();
    assert_eq!(err, RuntimeError::TransformFailed("cannot migrate".into()));
    assert_eq!(log_bytes(&rt, "e"), before);
    assert_eq!(state(&rt, "e").status, Status::Suspended);
}

#[test]
fn ingress_35_suspend_strips_caller_condition_step_id() {
    let rt = rt(&[flow(
        "f",
        json!([{"op": "suspend", "on": "g", "condition": {"stepId": "x", "keep": 1}}]),
    )]);
    start(&rt, "e", "f");
    let park = of_type(&log(&rt, "e"), "EXECUTION_SUSPENDED")[0]
        .payload
        .clone();
    assert_eq!(park["condition"], json!({"keep": 1}));
}

/// The forged resumes INGRESS-01 sends down every entry point, each with the refusal the
/// gate gives it at an untimed park on `approve`. Two rows rest on resolutions: the
/// refusal of kernel metadata keys is reference-defined (INGRESS-39, ABI-14), and
/// EXECUTION_RECOVERED's own path (not-recoverable rather than kernel-event-type) is
/// GAP-08 with the precedence of GAP-32 (docs/decisions/0004-ingress.md).
fn ingress_01_forgeries() -> Vec<(&'static str, ResumeRequest, RefusalReason)> {
    let mut stamped = ResumeRequest::new("approve", json!("yes"));
    stamped.metadata = Some(json!({"kernel": true}).as_object().unwrap().clone());
    vec![
        (
            "kernel event type",
            ResumeRequest::new("STEP_COMPLETED", json!({"stepId": "s", "output": 1})),
            RefusalReason::KernelEventType,
        ),
        (
            "another gate",
            ResumeRequest::new("reject", json!("yes")),
            RefusalReason::GateMismatch,
        ),
        (
            "timer at an untimed park",
            ResumeRequest::new("TIMER_FIRED", Value::Null),
            RefusalReason::NotTimed,
        ),
        ("kernel metadata", stamped, RefusalReason::KernelMetadata),
        (
            "recovery of a parked execution",
            ResumeRequest::new("EXECUTION_RECOVERED", Value::Null),
            RefusalReason::NotRecoverable,
        ),
    ]
}

#[test]
fn ingress_01_runtime_resume_and_resume_as_refuse_the_same_forgeries_under_every_config() {
    // tests/ingress.rs drives the gate function; this drives the runtime's own entry
    // points, `resume` and `resumeAs` (onto the same flow and onto another), so a path that
    // built its events without the gate, or only gated some requests, fails here. Every
    // kernel.features combination is tried: no configuration switches the gate off.
    let parked_flow = json!({"flowId": "f", "resumeSchemas": {},
        "body": [{"op": "suspend", "on": "approve"}, {"op": "complete", "output": "done"}]});
    for bits in 0..16u8 {
        let config = loom_kernel::runtime::RuntimeConfig {
            features: loom_kernel::versions::KernelFeatures {
                continue_as_new: bits & 1 != 0,
                receive: bits & 2 != 0,
                select: bits & 4 != 0,
                sha256_flow_hash: bits & 8 != 0,
            },
            ..Default::default()
        };
        let mut rt = rt_with(config, std::slice::from_ref(&parked_flow));
        rt.register_flow_json(&flow("f2", json!([{"op": "complete", "output": "moved"}])))
            .unwrap();
        assert_eq!(start(&rt, "e", "f"), parked("approve"));
        let before = log(&rt, "e");
        for (what, request, reason) in ingress_01_forgeries() {
            for path in ["resume", "resumeAs onto f", "resumeAs onto f2"] {
                let request = request.clone();
                let got = match path {
                    "resume" => block_on(rt.resume("e", request)),
                    "resumeAs onto f" => block_on(rt.resume_as("e", request, "f", None)),
                    _ => block_on(rt.resume_as("e", request, "f2", None)),
                };
                match got {
                    Err(RuntimeError::Ingress(IngressError::ResumeRefused {
                        reason: r, ..
                    })) => {
                        assert_eq!(r, reason, "{what} via {path} at flags {bits:04b}")
                    }
                    other => panic!("{what} via {path} at flags {bits:04b}: {other:?}"),
                }
                assert_eq!(log(&rt, "e"), before, "{what} via {path}: nothing appended");
            }
        }
        // The same entry points still admit the real answer (the refusals are the gate's,
        // not a broken path's).
        assert_eq!(
            resume(&rt, "e", "approve", json!("yes")).unwrap(),
            completed(json!("done"))
        );
    }
}
