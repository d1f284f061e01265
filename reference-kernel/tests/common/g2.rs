//! The G2 zero-overhead gate's workload, shared by the `cargo bench` gate
//! (`benches/g2.rs`) and its short form in the test run (`tests/g2.rs`, CONF-06): the
//! baseline runs a flow with every optional capability unwired; each disabled path runs
//! the same flow with one capability present in its off state. Included with
//! `#[path = "…/common/g2.rs"] mod g2;`.
#![allow(dead_code)]

use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{block_on, DivergenceMode, Runtime, RuntimeConfig};
use loom_kernel::spi::{EventStore, ManualClock};
use loom_kernel::versions::KernelFeatures;
use loom_stores::MemoryEventStore;
use serde_json::{json, Value};
use std::sync::Arc;

/// Largest accepted ratio of a disabled path's time to the baseline's (GAP-29).
pub const G2_RATIO_MAX: f64 = 1.05;

/// The dimension and cap of the budget path: a cap the workload never meters against.
pub const UNREACHED_BUDGET_DIMENSION: &str = "tokens";
/// See [`UNREACHED_BUDGET_DIMENSION`].
pub const UNREACHED_BUDGET_CAP: f64 = 1e12;

/// A flow of `steps` steps, a gate and an emit; `schemas` is its `resumeSchemas`.
pub fn flow(steps: usize, schemas: Option<Value>) -> Value {
    let mut body: Vec<Value> = (0..steps)
        .map(|i| json!({"op": "run", "stepId": format!("s{i}"), "toolId": "noop"}))
        .collect();
    body.push(json!({"op": "suspend", "on": "go"}));
    body.push(json!({"op": "emit", "eventType": "app.done", "payload": {"n": steps}}));
    let mut f = json!({"flowId": "g2", "body": body});
    if let Some(s) = schemas {
        f["resumeSchemas"] = s;
    }
    f
}

/// A runtime configuration and a flow field: one way of running the workload.
pub type Setup = fn() -> (RuntimeConfig, Option<Value>);

/// The baseline: every optional capability unwired.
pub fn baseline() -> (RuntimeConfig, Option<Value>) {
    (RuntimeConfig::default(), None)
}

/// Each disabled path: one capability present in its off state, or wired and not
/// exercised by the flow. Each differs from [`baseline`] (CONF-06: a path equal to the
/// baseline measures nothing; `conf_06_every_disabled_path_differs_from_the_baseline`).
pub const DISABLED_PATHS: [(&str, Setup); 4] = [
    ("resumeSchemas present but empty", || {
        (RuntimeConfig::default(), Some(json!({})))
    }),
    ("Wave 2 flags on, syscalls unused", || {
        (
            RuntimeConfig {
                features: KernelFeatures {
                    continue_as_new: true,
                    receive: true,
                    select: true,
                    sha256_flow_hash: false,
                },
                ..RuntimeConfig::default()
            },
            None,
        )
    }),
    ("budget set, never reached", || {
        (
            RuntimeConfig {
                budget: [(UNREACHED_BUDGET_DIMENSION.to_owned(), UNREACHED_BUDGET_CAP)].into(),
                ..RuntimeConfig::default()
            },
            None,
        )
    }),
    ("divergence detector off", || {
        (
            RuntimeConfig {
                divergence: DivergenceMode::Off,
                ..RuntimeConfig::default()
            },
            None,
        )
    }),
];

/// A prepared run: the runtime with the flow registered, not started yet.
pub struct Prepared {
    store: Arc<MemoryEventStore>,
    rt: Runtime<MemoryEventStore, Arc<ManualClock>>,
}

/// Builds the runtime for one run of `steps` steps (outside the timed part).
pub fn prepare(setup: Setup, steps: usize) -> Prepared {
    let (config, schemas) = setup();
    let store = Arc::new(MemoryEventStore::new());
    let mut rt = Runtime::new(store.clone(), Arc::new(ManualClock::new(1_000_000)), config);
    rt.register_flow_json(&flow(steps, schemas))
        .expect("flow parses");
    Prepared { store, rt }
}

impl Prepared {
    /// The timed part: start (live) and resume (served replay).
    pub fn run(&self) {
        block_on(self.rt.start("e", "g2", json!({}))).expect("start");
        block_on(
            self.rt
                .resume("e", ResumeRequest::new("go", json!({"ok": true}))),
        )
        .expect("resume");
    }

    /// The log the run wrote, as JSON text.
    pub fn log(&self) -> String {
        serde_json::to_string(&block_on(self.store.read("e")).expect("read"))
            .expect("log serializes")
    }
}

/// The median of `xs` (the upper one for an even count).
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}
