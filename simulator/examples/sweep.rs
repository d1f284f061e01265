//! A quick sweep for development: `cargo run -p loom-sim --example sweep -- FROM COUNT [stormy|default] [BUG|-] [STORE]`
//! prints each failing seed with its first violations and the totals.

use loom_sim::{run_seed, SimConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let from: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let count: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100);
    let mut config = SimConfig::default();
    if args.get(3).map(String::as_str) == Some("stormy") {
        config.crash_per_mille_max = 1000;
        config.zombie_per_mille_max = 1000;
        config.hostile_per_mille_max = 1000;
        config.resume_fault_per_mille_max = 1000;
    }
    if let Some(name) = args.get(4) {
        config.bug = loom_sim::PlantedBug::ALL
            .into_iter()
            .find(|b| format!("{b:?}") == *name);
    }
    if let Some(store) = args.get(5) {
        config.store = store.parse().unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
    }
    // LOOM_SIM_OUT=DIR writes each failing seed's files there.
    config.artifacts_dir = std::env::var_os("LOOM_SIM_OUT").map(Into::into);
    let mut failing = 0;
    let mut stats = loom_sim::SimStats::default();
    for seed in from..from + count {
        let out = run_seed(seed, &config);
        stats.add(&out.stats);
        if std::env::var("LOOM_SIM_TWICE").is_ok() {
            let again = run_seed(seed, &config);
            let r = loom_sim::determinism_result(&out, &again);
            if let Some(m) = r.message.filter(|_| r.status != loom_report::Status::Pass) {
                println!("{m}");
            }
        }
        if !out.violations.is_empty() {
            failing += 1;
            println!("seed {seed}:");
            for v in out.violations.iter().take(3) {
                println!("  {} {:?}: {}", v.rule, v.execution_id, v.message);
            }
            if let Some(b) = config.bug {
                let caught = out.violations.iter().any(|v| v.rule == b.rule());
                println!("  planted {b:?} caught by {}: {caught}", b.rule());
            }
        }
    }
    println!("{failing} of {count} seeds failed");
    println!("{}", stats.counts());
}
