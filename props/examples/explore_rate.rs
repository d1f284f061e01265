//! Exploration throughput: operations per second of `loom_props::explore` against a
//! store, for docs/performance.md.
//!
//! `cargo run --release -p loom-props --features explore --example explore_rate -- STORE [CASES] [SEED]`
//! where STORE is as `loom conform --store` names it (`memory`, `sqlite`,
//! `cmd:python3 examples/python-sqlite-store/adapter.py`, ...). Prints cases,
//! operations, seconds and operations per second; exits 1 on a divergence.

use loom_props::explore::stores::{run_on, Mode};
use loom_props::explore::ExploreOptions;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let store = args.first().cloned().unwrap_or_else(|| "sqlite".into());
    let cases = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(500);
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mode = Mode::Explore(ExploreOptions {
        cases: Some(cases),
        time: None,
        seed,
    });
    match run_on(&store, &mode) {
        Ok(o) => {
            println!(
                "{store}: {} cases, {} operations in {:.2} s = {:.0} operations/s (seed {seed})",
                o.cases,
                o.ops,
                o.elapsed.as_secs_f64(),
                o.ops_per_second()
            );
            if o.divergence.is_some() || o.error.is_some() {
                eprintln!("divergence: {:?} error: {:?}", o.divergence, o.error);
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
