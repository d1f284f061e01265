//! The simulator's throughput: `cargo bench -p loom-sim --bench sweep`.
//!
//! Runs a sweep of small seeds (the default configuration, the in-memory store) on
//! `--jobs` threads, as `loom sim` does, and prints seeds per second and the ratio of
//! simulated to wall time next to the goals (50 seeds/s, 1000x on this 2-core machine).
//! Settings through the environment: `LOOM_SIM_BENCH_SEEDS` (default 40),
//! `LOOM_SIM_BENCH_JOBS` (default 2). docs/performance.md quotes its figures.

use std::time::Instant;

use loom_sim::{run_seeds, SimConfig, SimStats};

// The allocator of the loom binary, so the figures are those of `loom sim`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The goal for small seeds per second (issue: the deploy simulator).
const SEEDS_PER_S_GOAL: f64 = 50.0;
/// The goal for simulated time over wall time.
const RATIO_GOAL: f64 = 1000.0;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The process's CPU time (user + system) in seconds, from `/proc/self/stat`
/// (clock ticks of 10 ms); `None` off Linux. Under load, waits for a core inflate wall
/// time but not this.
fn cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

fn main() {
    let seeds = env("LOOM_SIM_BENCH_SEEDS", 40) as u64;
    let jobs = env("LOOM_SIM_BENCH_JOBS", 2);
    let config = SimConfig::default();
    let list: Vec<u64> = (0..seeds).collect();
    let cpu_before = cpu_s();
    let started = Instant::now();
    let outcomes = run_seeds(&list, &config, jobs);
    let wall_s = started.elapsed().as_secs_f64();
    let cpu = cpu_before.zip(cpu_s()).map(|(a, b)| b - a);
    let mut stats = SimStats::default();
    let mut failing = 0;
    for o in &outcomes {
        stats.add(&o.stats);
        failing += usize::from(!o.violations.is_empty() || o.error.is_some());
    }
    let simulated_s = stats.simulated_ms as f64 / 1000.0;
    let rate = seeds as f64 / wall_s;
    let ratio = simulated_s / wall_s;
    println!("sim sweep: {seeds} seeds (default configuration, memory store), {jobs} job(s)");
    println!(
        "  wall {wall_s:.2} s, simulated {simulated_s:.1} s ({:.2} s per seed)",
        simulated_s / seeds as f64
    );
    println!(
        "  {rate:.1} seeds/s (goal {SEEDS_PER_S_GOAL}: {:.2} of it), {ratio:.0}x simulated:wall (goal {RATIO_GOAL}: {:.2} of it)",
        rate / SEEDS_PER_S_GOAL,
        ratio / RATIO_GOAL
    );
    if let Some(cpu) = cpu {
        // What the goal would see with both cores free: CPU time spread over `jobs` cores.
        let per_core = cpu / jobs.max(1) as f64;
        println!(
            "  CPU {cpu:.2} s ({:.1} ms per seed); with {jobs} free core(s): {:.1} seeds/s, {:.0}x",
            1000.0 * cpu / seeds as f64,
            seeds as f64 / per_core,
            simulated_s / per_core
        );
        // The per-core figure the goal is stated in: simulated time over CPU time, which
        // a loaded machine does not inflate (waits for a core are not CPU time).
        println!(
            "  per core: {:.0}x simulated:CPU (goal {RATIO_GOAL}: {:.2} of it), {:.1} seeds per CPU second",
            simulated_s / cpu.max(1e-9),
            simulated_s / cpu.max(1e-9) / RATIO_GOAL,
            seeds as f64 / cpu.max(1e-9)
        );
    }
    println!("  faults and coverage: {}", stats.counts());
    println!("  failing seeds: {failing}");
    if std::env::var("LOOM_SIM_BENCH_CHECK").is_ok() {
        // The same seeds on one thread: every digest must match (CONF-05).
        let again = run_seeds(&list, &config, 1);
        for (a, b) in outcomes.iter().zip(&again) {
            let r = loom_sim::determinism_result(a, b);
            if r.status != loom_report::Status::Pass {
                println!("  {}", r.message.unwrap_or_default());
            }
        }
    }
}
