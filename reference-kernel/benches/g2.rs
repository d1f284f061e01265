//! G2 zero-overhead gate (CONF-06, COMPAT-08, GAP-29), driven by `cargo bench`:
//!
//! ```sh
//! cargo bench -p loom-kernel --bench g2
//! ```
//!
//! The baseline runs a flow with every optional capability unwired (default
//! `RuntimeConfig`, no timers, middleware, budget, authenticator or resume schemas). Each
//! "disabled path" runs the same flow with one capability present in its off state. For
//! each path the gate checks, in one run, that (1) the event log is byte-identical to the
//! baseline's (G2's behavioural half) and (2) the median wall time over interleaved rounds
//! is at most `G2_RATIO_MAX` times the baseline's. It exits non-zero on a violation, so CI
//! or a release check can call it; `cargo test` never asserts a time.

use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{block_on, DivergenceMode, Runtime, RuntimeConfig};
use loom_kernel::spi::{EventStore, ManualClock};
use loom_kernel::versions::KernelFeatures;
use loom_stores::MemoryEventStore;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

/// Largest accepted ratio of a disabled path's median to the baseline's (GAP-29).
const G2_RATIO_MAX: f64 = 1.05;
/// Interleaved rounds per path.
const ROUNDS: usize = 31;
/// Steps in the measured flow.
const STEPS: usize = 2_000;

fn flow(schemas: Option<Value>) -> Value {
    let mut body: Vec<Value> = (0..STEPS)
        .map(|i| json!({"op": "run", "stepId": format!("s{i}"), "toolId": "noop"}))
        .collect();
    body.push(json!({"op": "suspend", "on": "go"}));
    body.push(json!({"op": "emit", "eventType": "app.done", "payload": {"n": STEPS}}));
    let mut f = json!({"flowId": "g2", "body": body});
    if let Some(s) = schemas {
        f["resumeSchemas"] = s;
    }
    f
}

/// Runs start (live) + resume (served replay); returns (elapsed seconds, log bytes).
fn run_once(config: RuntimeConfig, schemas: Option<Value>) -> (f64, String) {
    let store = Arc::new(MemoryEventStore::new());
    let mut rt = Runtime::new(store.clone(), Arc::new(ManualClock::new(1_000_000)), config);
    rt.register_flow_json(&flow(schemas)).expect("flow parses");
    let t = Instant::now();
    block_on(rt.start("e", "g2", json!({}))).expect("start");
    block_on(rt.resume("e", ResumeRequest::new("go", json!({"ok": true})))).expect("resume");
    let elapsed = t.elapsed().as_secs_f64();
    let log = block_on(store.read("e")).expect("read");
    (
        elapsed,
        serde_json::to_string(&log).expect("log serializes"),
    )
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

type Path = (&'static str, fn() -> (RuntimeConfig, Option<Value>));

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let baseline: fn() -> (RuntimeConfig, Option<Value>) = || (RuntimeConfig::default(), None);
    let paths: [Path; 4] = [
        ("resumeSchemas present but empty", || {
            (RuntimeConfig::default(), Some(json!({})))
        }),
        ("kernel.features explicitly all off", || {
            (
                RuntimeConfig {
                    features: KernelFeatures {
                        continue_as_new: false,
                        receive: false,
                        select: false,
                        sha256_flow_hash: false,
                    },
                    ..RuntimeConfig::default()
                },
                None,
            )
        }),
        ("budget map present but empty", || {
            (
                RuntimeConfig {
                    budget: Default::default(),
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
    let (cfg, s) = baseline();
    let (_, base_log) = run_once(cfg, s);
    let mut base_times = Vec::new();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    let mut ok = true;
    for _ in 0..ROUNDS {
        let (cfg, s) = baseline();
        base_times.push(run_once(cfg, s).0);
        for (i, (name, make)) in paths.iter().enumerate() {
            let (cfg, s) = make();
            let (t, log) = run_once(cfg, s);
            if log != base_log && times[i].is_empty() {
                println!("FAIL  {name}: the log differs from the baseline's (G2: unwired must be byte-identical)");
                ok = false;
            }
            times[i].push(t);
        }
    }
    let base = median(base_times);
    println!("g2: baseline (all optional capabilities unwired): median {:.3} ms over {ROUNDS} rounds, {STEPS} steps live + served", base * 1e3);
    for (i, (name, _)) in paths.iter().enumerate() {
        let m = median(times[i].clone());
        let ratio = m / base;
        let verdict = if ratio <= G2_RATIO_MAX {
            "ok  "
        } else {
            "FAIL"
        };
        if ratio > G2_RATIO_MAX {
            ok = false;
        }
        println!(
            "{verdict}  {name}: median {:.3} ms, ratio {ratio:.3} (max {G2_RATIO_MAX})",
            m * 1e3
        );
    }
    if !ok {
        std::process::exit(1);
    }
}
