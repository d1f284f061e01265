//! A quick sweep for development: `cargo run -p loom-sim --example sweep -- FROM COUNT [stormy]`
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
    }
    let mut failing = 0;
    for seed in from..from + count {
        let out = run_seed(seed, &config);
        if !out.violations.is_empty() {
            failing += 1;
            println!("seed {seed}:");
            for v in out.violations.iter().take(3) {
                println!("  {} {:?}: {}", v.rule, v.execution_id, v.message);
            }
        }
    }
    println!("{failing} of {count} seeds failed");
}
