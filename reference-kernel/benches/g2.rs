//! G2 zero-overhead gate (CONF-06, COMPAT-08, GAP-29), driven by `cargo bench`:
//!
//! ```sh
//! cargo bench -p loom-kernel --bench g2
//! ```
//!
//! The workload is `tests/common/g2.rs`, shared with the gate's short form that runs in
//! every test run (`tests/g2.rs`, `conf_06_…`). The baseline runs a flow with every
//! optional capability unwired (default `RuntimeConfig`, no timers, middleware, budget,
//! authenticator or resume schemas). Each "disabled path" runs the same flow with one
//! capability present in its off state, or wired and not exercised (never the baseline
//! itself). For each path the gate checks, in one run, that
//! (1) the event log is byte-identical to the baseline's (G2's behavioural half) and (2)
//! the median wall time over interleaved rounds is at most `G2_RATIO_MAX` times the
//! baseline's, on a release build and a 2,000-step flow. It exits non-zero on a
//! violation, so a release check can call it.

#[path = "../tests/common/g2.rs"]
mod g2;

use g2::{baseline, median, prepare, Setup, DISABLED_PATHS, G2_RATIO_MAX};
use std::time::Instant;

/// Interleaved rounds per path.
const ROUNDS: usize = 31;
/// Steps in the measured flow.
const STEPS: usize = 2_000;

/// Runs start (live) + resume (served replay); returns (elapsed seconds, log bytes).
fn run_once(setup: Setup) -> (f64, String) {
    let p = prepare(setup, STEPS);
    let t = Instant::now();
    p.run();
    (t.elapsed().as_secs_f64(), p.log())
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let (_, base_log) = run_once(baseline);
    let mut base_times = Vec::new();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); DISABLED_PATHS.len()];
    let mut ok = true;
    for _ in 0..ROUNDS {
        base_times.push(run_once(baseline).0);
        for (i, (name, setup)) in DISABLED_PATHS.iter().enumerate() {
            let (t, log) = run_once(*setup);
            if log != base_log && times[i].is_empty() {
                println!("FAIL  {name}: the log differs from the baseline's (G2: unwired must be byte-identical)");
                ok = false;
            }
            times[i].push(t);
        }
    }
    let base = median(base_times);
    println!("g2: baseline (all optional capabilities unwired): median {:.3} ms over {ROUNDS} rounds, {STEPS} steps live + served", base * 1e3);
    for (i, (name, _)) in DISABLED_PATHS.iter().enumerate() {
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
