//! G2's behavioural half (COMPAT-08, CONF-06, INGRESS-23): every optional capability in
//! its off state leaves the log byte-identical to the run with it unwired. The timing
//! half is a `cargo bench -p loom-kernel --bench g2` gate, never a test assertion.

#[path = "common/runtime.rs"]
mod rt;
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{block_on, DivergenceMode, RuntimeConfig};
use loom_kernel::spi::EventStore;
use loom_kernel::versions::KernelFeatures;
use serde_json::{json, Value};

fn flow(extra: Option<(&str, Value)>) -> Value {
    let mut f = json!({"flowId": "f", "body": [
        {"op": "run", "stepId": "a"},
        {"op": "decide", "id": "d", "choice": "left"},
        {"op": "emit", "eventType": "app.progress", "payload": {"p": 1}},
        {"op": "suspend", "on": "go"},
        {"op": "run", "stepId": "b"}
    ]});
    if let Some((k, v)) = extra {
        f[k] = v;
    }
    f
}

/// (name, config, an extra top-level flow field).
type Variant<'a> = (&'a str, RuntimeConfig, Option<(&'a str, Value)>);

fn log_bytes(config: RuntimeConfig, extra: Option<(&str, Value)>) -> String {
    let r = rt::rt_with(config, &[flow(extra)]);
    block_on(r.start("e", "f", json!({"n": 1}))).expect("start");
    block_on(r.resume("e", ResumeRequest::new("go", json!({"ok": true})))).expect("resume");
    serde_json::to_string(&block_on(r.store().read("e")).unwrap()).unwrap()
}

#[test]
fn compat_08_conf_06_capabilities_off_leave_the_log_byte_identical() {
    let baseline = log_bytes(RuntimeConfig::default(), None);
    let variants: Vec<Variant> = vec![
        (
            "features explicitly off",
            RuntimeConfig {
                features: KernelFeatures::default(),
                ..RuntimeConfig::default()
            },
            None,
        ),
        (
            "empty budget",
            RuntimeConfig {
                budget: Default::default(),
                ..RuntimeConfig::default()
            },
            None,
        ),
        (
            "divergence detector off",
            RuntimeConfig {
                divergence: DivergenceMode::Off,
                ..RuntimeConfig::default()
            },
            None,
        ),
        (
            "empty resumeSchemas",
            RuntimeConfig::default(),
            Some(("resumeSchemas", json!({}))),
        ),
    ];
    for (name, config, extra) in variants {
        assert_eq!(log_bytes(config, extra), baseline, "{name} changed the log");
    }
}

#[test]
fn ingress_23_empty_resume_schemas_change_nothing_end_to_end() {
    assert_eq!(
        log_bytes(RuntimeConfig::default(), Some(("resumeSchemas", json!({})))),
        log_bytes(RuntimeConfig::default(), None)
    );
}
