//! RES (metering, budgets), PLACE-04/05/06/07/08, SPI-12 and ABI-03..06 plus the
//! flowHash/codeHash/divergence writers (FOLD-33, FOLD-34, FOLD-37).
#[path = "common/runtime.rs"]
mod rt;

use std::sync::Arc;

use loom_kernel::fold::{keys, Status, DIVERGED_GATE};
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{
    block_on, handshake, verify_flow, EffectCall, EffectOutcome, EffectResult, FaultPlan,
    FlowScript, RunOutcome, Runtime, RuntimeConfig, RuntimeError, Wiring,
};
use loom_kernel::spi::ManualClock;
use loom_kernel::versions::{KernelFeatures, KERNEL_ABI_VERSION};
use loom_stores::MemoryEventStore;
use rt::*;
use serde_json::{json, Value};

fn metered(tokens: u64) -> Value {
    json!({"value": 1, "meter": {"tokens": tokens}})
}

#[test]
fn res_01_metering_folds_into_fixed_accumulator() {
    let f = json!({"flowId": "f", "effects": {"m": {"outcomes": [metered(2)]}},
        "body": (0..20).map(|i| json!({"op": "run", "stepId": format!("s{i}"), "toolId": "m"})).collect::<Vec<_>>()});
    let rt = rt(&[f]);
    start(&rt, "e", "f");
    assert_eq!(count(&log(&rt, "e"), "RESOURCE_METERED"), 20);
    assert_eq!(
        state(&rt, "e").variables.get(keys::RESOURCES),
        Some(&json!({"tokens": 40}))
    );
}

#[test]
fn res_02_effect_reads_resources_snapshot() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let f = json!({"flowId": "f", "effects": {"m": {"outcomes": [metered(5)]}}, "body": [run_step("m"), run_step("look")]});
    let mut rt = rt(&[f]);
    rt.register_effect("look", move |c: &EffectCall<'_>| {
        seen2.lock().unwrap().push(c.resources.clone());
        EffectResult::of(EffectOutcome::Value(Value::Null))
    });
    start(&rt, "e", "f");
    assert_eq!(seen.lock().unwrap().as_slice(), &[json!({"tokens": 5})]);
}

/// The other side of RES-02: with two meters before it, an effect reads their sum (the
/// folded accumulator), not the last meter; and one read between them sees the first
/// alone. A runtime handing effects the last RESOURCE_METERED, or the accumulator as it
/// was when the run started, reads 7 or 0 where this reads 12.
#[test]
fn res_02_effects_read_the_accumulated_total_not_the_last_meter() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let look = |id: &str| json!({"op": "run", "stepId": id, "toolId": "look"});
    let f = json!({"flowId": "f",
        "effects": {"m5": {"outcomes": [metered(5)]}, "m7": {"outcomes": [metered(7)]}},
        "body": [run_step("m5"), look("look-1"), run_step("m7"), look("look-2")]});
    let mut rt = rt(&[f]);
    rt.register_effect("look", move |c: &EffectCall<'_>| {
        seen2.lock().unwrap().push(c.resources.clone());
        EffectResult::of(EffectOutcome::Value(Value::Null))
    });
    start(&rt, "e", "f");
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        &[json!({"tokens": 5}), json!({"tokens": 12})]
    );
}

#[test]
fn res_03_six_dimensions() {
    let f = json!({"flowId": "f", "effects": {"m": {"outcomes": [{"value": 1, "meter": {"tokens": 1, "costUsd": 0.5, "ms": 3, "memBytes": 4, "wallMs": 5, "netBytes": 6}}]}},
        "body": [run_step("m")]});
    let rt = rt(&[f]);
    start(&rt, "e", "f");
    let r = state(&rt, "e")
        .variables
        .get(keys::RESOURCES)
        .cloned()
        .unwrap();
    assert_eq!(r.as_object().unwrap().len(), 6);
}

#[test]
fn res_04_no_false_zeros() {
    let rt = rt(&[
        json!({"flowId": "f", "effects": {"m": {"outcomes": [metered(5)]}}, "body": [run_step("m")]}),
    ]);
    start(&rt, "e", "f");
    let r = state(&rt, "e")
        .variables
        .get(keys::RESOURCES)
        .cloned()
        .unwrap();
    assert!(r.get("costUsd").is_none());
}

fn budget_rt(flow: Value, tokens: f64) -> Rt {
    let mut config = RuntimeConfig::default();
    config.budget.insert("tokens".into(), tokens);
    rt_with(config, &[flow])
}

#[test]
fn res_05_budget_exceeded_refuses_next_effect() {
    let f = json!({"flowId": "f", "effects": {"m": {"outcomes": [metered(11)]}},
        "body": [run_step("m"), {"op": "run", "stepId": "next", "catch": {"*": [{"op": "complete", "output": "refused"}]}}]});
    let rt = budget_rt(f, 10.0);
    assert_eq!(start(&rt, "e", "f"), completed(json!("refused")));
    let l = log(&rt, "e");
    assert_eq!(count(&l, "QUOTA_EXCEEDED"), 1);
    assert_eq!(rt.step_calls("next"), 0, "the next effect was not admitted");
    assert_eq!(count(&l, "EFFECT_DENIED"), 1);
}

#[test]
fn res_06_negotiated_grant_is_a_served_decision() {
    let body = json!([{"op": "negotiateBudget", "id": "grant", "dimension": "tokens", "request": 50}, suspend("g"),
        {"op": "complete", "output": {"$ref": "decisions.grant/granted"}}]);
    let mut rt = rt(&[flow("f", body)]);
    rt.set_negotiator(Half);
    start(&rt, "e", "f");
    assert_eq!(
        resume(&rt, "e", "g", json!(null)).unwrap(),
        completed(json!(25.0))
    );
    assert_eq!(rt.negotiator_calls(), 1, "replay serves the grant");
}

struct Half;
impl loom_kernel::runtime::Negotiator for Half {
    fn negotiate(&self, _: &str, request: f64) -> f64 {
        request / 2.0
    }
}

#[test]
fn res_07_negotiated_grant_is_advisory() {
    let f = json!({"flowId": "f", "effects": {"m": {"outcomes": [metered(500)]}},
        "body": [{"op": "negotiateBudget", "id": "grant", "dimension": "tokens", "request": 10}, run_step("m"), run_step("n"), {"op": "complete", "output": "ran"}]});
    let rt = rt(&[f]);
    assert_eq!(
        start(&rt, "e", "f"),
        completed(json!("ran")),
        "no Budget configured: no refusal"
    );
    assert_eq!(count(&log(&rt, "e"), "QUOTA_EXCEEDED"), 0);
}

fn shared_rt(store: Arc<MemoryEventStore>, flows: &[Value], fencing: bool) -> Rt {
    let config = RuntimeConfig {
        fencing,
        ..RuntimeConfig::default()
    };
    let mut rt = Runtime::new(store, Arc::new(ManualClock::new(T0)), config);
    for f in flows {
        rt.register_flow_json(f).unwrap();
    }
    rt
}

fn place_flow() -> Value {
    json!({"flowId": "f", "body": [run_step("a"), emit("X", json!(1)), run_step("b"), {"op": "decide", "id": "d", "choice": 1}, run_step("c"),
        {"op": "complete", "output": {"$ref": "steps.c.output"}}]})
}

#[test]
fn place_04_any_worker_resumes_from_the_journal() {
    let clean = rt(&[place_flow()]);
    start(&clean, "e", "f");
    let want = state(&clean, "e");
    for k in 1..7 {
        let store = Arc::new(MemoryEventStore::new());
        let a = shared_rt(store.clone(), &[place_flow()], true);
        let b = shared_rt(store.clone(), &[place_flow()], true);
        a.inject_fault(FaultPlan {
            crash_after_appends: k,
        });
        assert!(matches!(start(&a, "e", "f"), RunOutcome::Crashed { .. }));
        let out = recover(&b, "e").unwrap();
        assert_eq!(out, completed(Value::Null), "crash after {k}");
        let got = state(&b, "e");
        assert_eq!(got.status, want.status);
        assert_eq!(
            got.variables.get(keys::OUTPUT),
            want.variables.get(keys::OUTPUT)
        );
        for (id, f) in &want.frames {
            assert_eq!(got.frames[id].output, f.output, "frame {id}");
        }
    }
}

#[test]
fn place_05_zombie_append_after_newer_fence_refused() {
    let store = Arc::new(MemoryEventStore::new());
    let flows = [flow(
        "f",
        json!([run_step("slow"), run_step("after"), {"op": "complete", "output": "done"}]),
    )];
    let b = Arc::new(shared_rt(store.clone(), &flows, true));
    let mut a = shared_rt(store.clone(), &flows, true);
    let b2 = b.clone();
    // Worker A's effect stalls; meanwhile worker B takes over and finishes the run.
    a.register_effect("slow", move |_: &EffectCall<'_>| {
        let out = block_on(b2.recover("e"));
        assert_eq!(out, Ok(completed(json!("done"))));
        EffectResult::of(EffectOutcome::Value(json!("zombie")))
    });
    let err = block_on(a.start("e", "f", json!(null))).unwrap_err();
    assert!(matches!(err, RuntimeError::Fenced(_)), "{err:?}");
    let l = log(&b, "e");
    assert!(
        l.iter()
            .all(|e| e.payload.get("output") != Some(&json!("zombie"))),
        "no event from A after B's acquisition"
    );
    assert_eq!(state(&b, "e").status, Status::Completed);
}

#[test]
fn place_06_resume_as_records_code_pin() {
    let mut rt =
        rt(&[json!({"flowId": "v1", "codeFingerprint": "code-1", "body": [suspend("g")]})]);
    rt.register_flow_json(&json!({"flowId": "v2", "codeFingerprint": "code-2", "body": [suspend("g"), {"op": "complete"}]})).unwrap();
    start(&rt, "e", "v1");
    block_on(rt.resume_as("e", ResumeRequest::new("g", json!(null)), "v2", None)).unwrap();
    let l = log(&rt, "e");
    assert_eq!(
        of_type(&l, "EXECUTION_MIGRATED")[0].payload["toCodeHash"],
        json!("code-2")
    );
    assert_eq!(
        state(&rt, "e").variables.get(keys::CODE_HASH),
        Some(&json!("code-2"))
    );
}

#[test]
fn place_07_pinned_compute_target_must_be_registered() {
    let script = FlowScript::parse(
        &json!({"flowId": "f", "computeTarget": "gpu", "body": []}),
        &KernelFeatures::default(),
    )
    .unwrap();
    let bad = verify_flow(
        &script,
        &Wiring {
            dispatcher_targets: vec!["cpu".into()],
            ..Wiring::default()
        },
    );
    assert_eq!(bad.len(), 1);
    assert!(bad[0].message.contains("PLACE-07"));
    assert!(verify_flow(
        &script,
        &Wiring {
            dispatcher_targets: vec!["cpu".into(), "gpu".into()],
            ..Wiring::default()
        }
    )
    .is_empty());
}

#[test]
fn place_08_code_mismatch_on_recover_exit_by_resume_as() {
    let v1 = json!({"flowId": "f", "codeFingerprint": "code-1", "effects": {"a": {"outcomes": [{"crash": "before-effect"}]}}, "body": [run_step("a")]});
    let store = Arc::new(MemoryEventStore::new());
    let old = shared_rt(store.clone(), &[v1], false);
    assert!(matches!(start(&old, "e", "f"), RunOutcome::Crashed { .. }));
    // A worker with different code for the same flow id refuses to re-drive.
    let mut new = shared_rt(
        store,
        &[json!({"flowId": "f", "codeFingerprint": "code-2", "body": [run_step("a")]})],
        false,
    );
    let before = log_bytes(&new, "e");
    let err = recover(&new, "e").unwrap_err();
    assert!(
        matches!(err, RuntimeError::FlowCodeMismatch { .. }),
        "{err:?}"
    );
    assert_eq!(log_bytes(&new, "e"), before);
    new.register_flow_json(&json!({"flowId": "fixed", "codeFingerprint": "code-3", "body": [run_step("a"), {"op": "complete", "output": "ok"}]})).unwrap();
    let out = block_on(new.resume_as(
        "e",
        ResumeRequest::new("operator-fix", json!(null)),
        "fixed",
        None,
    ))
    .unwrap();
    assert_eq!(out, completed(json!("ok")));
}

#[test]
fn spi_12_quarantine_prefix_refused_with_nothing_appended() {
    let rt = rt(&[flow("f", json!([]))]);
    let id = "__loom_quarantine__:chain-1";
    assert!(matches!(
        block_on(rt.start(id, "f", json!(null))),
        Err(RuntimeError::ReservedExecutionId(_))
    ));
    assert!(matches!(
        resume(&rt, id, "g", json!(null)),
        Err(RuntimeError::ReservedExecutionId(_))
    ));
    assert!(log(&rt, id).is_empty());
}

#[test]
fn abi_03_wave2_syscalls_only_behind_their_flags() {
    for (op, extra) in [
        ("continueAsNew", json!({})),
        ("receive", json!({"topic": "t", "waitId": "w"})),
        ("select", json!({"waits": [{"waitId": "w", "topic": "t"}]})),
    ] {
        let mut stmt = extra.clone();
        stmt["op"] = json!(op);
        let script = flow("f", json!([stmt]));
        let err = FlowScript::parse(&script, &KernelFeatures::default()).unwrap_err();
        assert_eq!(err.path, "$.body[0].op");
        assert!(err.message.contains(op), "{err}");
        let mut features = KernelFeatures::default();
        match op {
            "continueAsNew" => features.continue_as_new = true,
            "receive" => features.receive = true,
            _ => features.select = true,
        }
        assert!(
            FlowScript::parse(&script, &features).is_ok(),
            "{op} with its flag"
        );
    }
    assert_eq!(KERNEL_ABI_VERSION, "1.3.0");
}

#[test]
fn abi_04_effective_list_is_exactly_what_is_callable() {
    for bits in 0..8u8 {
        let features = KernelFeatures {
            continue_as_new: bits & 1 != 0,
            receive: bits & 2 != 0,
            select: bits & 4 != 0,
            sha256_flow_hash: false,
        };
        let hs = handshake(&features);
        let listed: Vec<String> = serde_json::from_value(hs["syscalls"].clone()).unwrap();
        for (op, flag) in [
            ("continueAsNew", bits & 1 != 0),
            ("receive", bits & 2 != 0),
            ("select", bits & 4 != 0),
        ] {
            assert_eq!(listed.contains(&op.to_owned()), flag);
        }
        assert!(!listed.contains(&"negotiateBudget".to_owned()));
    }
    // A continueAsNew run with the flag on ends the execution as continued.
    let config = RuntimeConfig {
        features: KernelFeatures {
            continue_as_new: true,
            ..KernelFeatures::default()
        },
        ..RuntimeConfig::default()
    };
    let rt = rt_with(
        config,
        &[flow("f", json!([{"op": "continueAsNew", "input": 1}]))],
    );
    assert!(matches!(start(&rt, "e", "f"), RunOutcome::Continued { .. }));
    assert_eq!(state(&rt, "e").status, Status::Continued);
}

#[test]
fn abi_05_handshake_carries_syscalls_next_to_abi_version() {
    let hs = handshake(&KernelFeatures::default());
    assert_eq!(hs["kernelAbiVersion"], json!("1.3.0"));
    assert_eq!(hs["syscalls"].as_array().unwrap().len(), 10);
}

#[test]
fn abi_06_clients_detect_from_the_list_not_the_version() {
    let hs = handshake(&KernelFeatures {
        receive: true,
        ..KernelFeatures::default()
    });
    assert_eq!(hs["kernelAbiVersion"], json!("1.3.0"));
    let listed: Vec<String> = serde_json::from_value(hs["syscalls"].clone()).unwrap();
    assert!(
        !listed.contains(&"select".to_owned()),
        "1.3.0 advertised with select absent"
    );
}

#[test]
fn fold_33_34_flow_hash_and_code_hash_on_start() {
    let f = json!({"flowId": "f", "codeFingerprint": "abc", "body": []});
    let plain = rt(std::slice::from_ref(&f));
    start(&plain, "e", "f");
    let p = log(&plain, "e")[0].payload.clone();
    assert!(p["flowHash"].as_str().unwrap().starts_with("fnv1a:"));
    assert_eq!(p["codeHash"], json!("abc"));
    let config = RuntimeConfig {
        features: KernelFeatures {
            sha256_flow_hash: true,
            ..KernelFeatures::default()
        },
        ..RuntimeConfig::default()
    };
    let sha = rt_with(config, &[f]);
    start(&sha, "e", "f");
    assert!(log(&sha, "e")[0].payload["flowHash"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
}

#[test]
fn fold_37_divergence_parks_on_reserved_gate() {
    let store = Arc::new(MemoryEventStore::new());
    let v1 = shared_rt(
        store.clone(),
        &[flow(
            "f",
            json!([run_step("a"), suspend("g"), {"op": "complete"}]),
        )],
        false,
    );
    start(&v1, "e", "f");
    let v2 = shared_rt(
        store,
        &[flow(
            "f",
            json!([{"op": "run", "stepId": "a", "toolId": "other"}, suspend("g")]),
        )],
        false,
    );
    let out = resume(&v2, "e", "g", json!(null)).unwrap();
    assert!(matches!(out, RunOutcome::Diverged { .. }), "{out:?}");
    assert_eq!(state(&v2, "e").parked_gate(), Some(DIVERGED_GATE));
}

#[test]
fn script_errors_name_the_json_path() {
    let bad = flow(
        "f",
        json!([{"op": "run", "stepId": "a", "catch": {"c": [{"op": "emit", "eventType": "X", "bogus": 1}]}}]),
    );
    let err = FlowScript::parse(&bad, &KernelFeatures::default()).unwrap_err();
    assert_eq!(err.path, "$.body[0].catch.c[0]");
    assert!(err.message.contains("bogus"), "{err}");
}
