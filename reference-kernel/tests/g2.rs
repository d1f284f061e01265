//! G2 (COMPAT-08, CONF-06, INGRESS-23). The behavioural half: every optional capability
//! in its off state leaves the log byte-identical to the run with it unwired. The
//! timing half: the short form of the ratio gate (below, CONF-06) runs here in every
//! test run; the full gate is `cargo bench -p loom-kernel --bench g2`.

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
            "Wave 2 flags on, syscalls unused",
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
        ),
        (
            "budget set, never reached",
            RuntimeConfig {
                budget: [(
                    g2::UNREACHED_BUDGET_DIMENSION.to_owned(),
                    g2::UNREACHED_BUDGET_CAP,
                )]
                .into(),
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
        // A variant equal to the unwired run would compare the baseline with itself.
        assert!(
            config != RuntimeConfig::default() || extra.is_some(),
            "{name} is the baseline"
        );
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

// ---------------------------------------------------------------------------------
// CONF-06: the G2 ratio gate's short form, in every test run.
//
// The full gate is `cargo bench -p loom-kernel --bench g2` (release build, 2,000 steps,
// 31 rounds). This form runs the same workload (`common/g2.rs`) small enough for the
// debug test build: each disabled path is timed against the baseline in back-to-back
// pairs whose order alternates, on the thread's CPU clock, and the gate holds when the
// median of the per-pair ratios is at most `G2_RATIO_MAX`. A pair shares whatever load
// the machine has, so its ratio cancels most of it; the median discards the pairs a
// preemption or a cache miss spoiled. Because a single median can still land above the
// line on a busy machine, a path gets `SHORT_ATTEMPTS` tries: noise rarely repeats, a
// real overhead always does (`conf_06_the_short_gate_fails_a_path_that_does_more_work`).

#[path = "common/g2.rs"]
mod g2;

use g2::{Prepared, G2_RATIO_MAX};

/// Steps in the short form's flow.
const SHORT_STEPS: usize = 24;
/// Baseline/path pairs behind one median.
const SHORT_PAIRS: usize = 31;
/// Tries per path before the gate fails it.
const SHORT_ATTEMPTS: usize = 3;

/// The CPU time this thread has used, in seconds.
#[cfg(unix)]
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Elsewhere the wall clock stands in.
#[cfg(not(unix))]
fn thread_cpu_s() -> f64 {
    use std::sync::OnceLock;
    static T0: OnceLock<std::time::Instant> = OnceLock::new();
    T0.get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

fn timed(make: &dyn Fn() -> Prepared) -> f64 {
    let p = make();
    let t = thread_cpu_s();
    p.run();
    thread_cpu_s() - t
}

/// The median over `SHORT_PAIRS` pairs of (path time / baseline time).
fn paired_ratio(base: &dyn Fn() -> Prepared, path: &dyn Fn() -> Prepared) -> f64 {
    // Warm both (allocator, caches) before measuring.
    timed(base);
    timed(path);
    let ratios = (0..SHORT_PAIRS)
        .map(|i| {
            if i % 2 == 0 {
                let b = timed(base);
                timed(path) / b
            } else {
                let p = timed(path);
                p / timed(base)
            }
        })
        .collect();
    g2::median(ratios)
}

/// The gate for one path: `Ok(ratio)` at the first try within `G2_RATIO_MAX`, else the
/// ratio of every try.
fn short_gate(
    base: &dyn Fn() -> Prepared,
    path: &dyn Fn() -> Prepared,
    attempts: usize,
) -> Result<f64, Vec<f64>> {
    let mut seen = Vec::new();
    for _ in 0..attempts {
        let r = paired_ratio(base, path);
        if r <= G2_RATIO_MAX {
            return Ok(r);
        }
        seen.push(r);
    }
    Err(seen)
}

#[test]
fn conf_06_g2_ratio_gate_short_form_every_disabled_path_within_the_ratio() {
    let started = std::time::Instant::now();
    let base = || g2::prepare(g2::baseline, SHORT_STEPS);
    let mut failures = Vec::new();
    for (name, setup) in g2::DISABLED_PATHS {
        // G2's behavioural half on the same workload: the log is the baseline's.
        let (b, p) = (base(), g2::prepare(setup, SHORT_STEPS));
        b.run();
        p.run();
        assert_eq!(
            p.log(),
            b.log(),
            "{name}: the log differs from the baseline's"
        );
        match short_gate(&base, &|| g2::prepare(setup, SHORT_STEPS), SHORT_ATTEMPTS) {
            Ok(r) => eprintln!("conf-06 short gate: {name}: ratio {r:.3} (max {G2_RATIO_MAX})"),
            Err(tries) => failures.push(format!("{name}: ratios {tries:.3?} (max {G2_RATIO_MAX})")),
        }
    }
    eprintln!("conf-06 short gate: {:?}", started.elapsed());
    assert!(
        failures.is_empty(),
        "G2 (CONF-06): a disabled path costs more than {G2_RATIO_MAX}x the baseline in every try: {failures:?}; `cargo bench -p loom-kernel --bench g2` measures it on a release build"
    );
}

#[test]
fn conf_06_every_disabled_path_differs_from_the_baseline() {
    // Two of the four paths once were `RuntimeConfig::default()` spelt out (features all
    // off, an empty budget map): the gate timed the baseline against itself for them.
    for (name, setup) in g2::DISABLED_PATHS {
        assert_ne!(setup(), g2::baseline(), "{name} is the baseline");
    }
}

#[test]
fn conf_06_the_short_gate_fails_a_path_that_does_more_work() {
    // A "disabled path" that runs a third more steps than the baseline: an overhead the
    // gate must see, in every try.
    let base = || g2::prepare(g2::baseline, SHORT_STEPS);
    let heavier = || g2::prepare(g2::baseline, SHORT_STEPS * 4 / 3);
    match short_gate(&base, &heavier, 2) {
        Ok(r) => panic!("a 33% overhead passed the gate with ratio {r:.3}"),
        Err(tries) => assert!(tries.iter().all(|r| *r > G2_RATIO_MAX), "{tries:?}"),
    }
}

#[test]
fn conf_06_the_performance_page_states_the_short_gate_as_it_runs() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/performance.md"
    ))
    .unwrap();
    for said in [
        format!("a {SHORT_STEPS}-step flow (`SHORT_STEPS`)"),
        format!("{SHORT_PAIRS} back-to-back pairs (`SHORT_PAIRS`)"),
        format!("`G2_RATIO_MAX = {G2_RATIO_MAX}`"),
        format!("{SHORT_ATTEMPTS} tries (`SHORT_ATTEMPTS`)"),
        format!("({} steps against {SHORT_STEPS})", SHORT_STEPS * 4 / 3),
    ] {
        let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(&said),
            "docs/performance.md must say {said:?}"
        );
    }
}
