//! `loom conform --explore` and `loom conform --replay FILE`: the exploration campaign
//! of `loom_props::explore` against the store `--store` names, reported like the kits
//! (one `loom_report::CaseResult`, area `explore`), with the shrunk divergence written
//! as a replay file next to the report.

use std::path::Path;
use std::time::Duration;

use loom_props::explore::stores::{run_on_with, Mode};
use loom_props::explore::{ExploreOptions, ReplayFile};
use loom_report::{Environment, Report};
use serde_json::Value;

use super::conform::ConformArgs;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};

/// Cases a campaign runs when neither `--cases` nor `--time` is given.
pub const DEFAULT_CASES: u64 = 256;
/// The replay file a diverging campaign writes into the run directory.
pub const REPLAY_FILE_NAME: &str = "explore-replay.json";

/// Rounds of the concurrent campaign that follows `--explore` (with `--clients` 2 or more).
pub const CAMPAIGN_ROUNDS_DEFAULT: u64 = 40;

/// Its time limit when `--time` is not given, in seconds.
pub const CAMPAIGN_SECONDS_DEFAULT: u64 = 30;

/// Runs the campaign or the replay `args` asks for.
pub fn run(args: &ConformArgs) -> u8 {
    let (mode, case_id) = match &args.replay {
        Some(path) => match ReplayFile::read(path) {
            Ok(file) => (
                Mode::Replay(Box::new(file)),
                format!("replay {}", super::shown(path)),
            ),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        },
        None => {
            let seed = args.seed.unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_micros() as u64)
            });
            let opts = ExploreOptions {
                cases: match (args.cases, args.time) {
                    (None, None) => Some(DEFAULT_CASES),
                    (c, _) => c,
                },
                time: args.time.map(Duration::from_secs),
                seed,
            };
            (Mode::Explore(opts), format!("explore seed {seed}"))
        }
    };
    let out = match super::prepare_out(args.out.as_deref(), "conform") {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    if !args.quiet {
        match &mode {
            Mode::Explore(o) => eprintln!(
                "exploring {} from seed {} ({})",
                args.store(),
                o.seed,
                match (o.cases, o.time) {
                    (Some(c), Some(t)) => format!("{c} cases or {} s", t.as_secs()),
                    (Some(c), None) => format!("{c} cases"),
                    (None, Some(t)) => format!("{} s", t.as_secs()),
                    (None, None) => "no limit".into(),
                }
            ),
            Mode::Replay(f) => eprintln!(
                "replaying {} operations against {}",
                f.ops.len(),
                args.store()
            ),
        }
    }
    let outcome = match run_on_with(
        args.store(),
        &mode,
        Duration::from_millis(args.adapter.timeout_ms),
        Duration::from_millis(args.adapter.hello_timeout_ms),
    ) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            super::abandon_out(&out);
            return EXIT_USAGE;
        }
    };
    let explored = loom_props::explore::explored_rules(loom_props::explore::Spis::ALL);
    let result = outcome.to_case_result(&case_id, &explored);
    let mut replay_path = None;
    if let (Some(file), Mode::Explore(_)) = (&outcome.replay, &mode) {
        let path = out.join(REPLAY_FILE_NAME);
        match file.write(&path) {
            Ok(()) => replay_path = Some(path),
            Err(e) => eprintln!("error: {e}"),
        }
    }
    // With several clients, the concurrent campaign follows on the same store.
    let mut concurrent = None;
    if let Mode::Explore(o) = &mode {
        if !args.quiet && args.clients >= 2 {
            eprintln!(
                "concurrent campaign: {} clients on {} from seed {}",
                args.clients,
                args.store(),
                o.seed
            );
        }
        let mut options = loom_harness::kits::KitOptions::new(args.store());
        options.limits = args.adapter.limits();
        options.clients = args.clients;
        let budget = loom_conformance::kits::concurrency_campaign::Budget {
            rounds: CAMPAIGN_ROUNDS_DEFAULT,
            time: args.time.map_or(
                Duration::from_secs(CAMPAIGN_SECONDS_DEFAULT),
                Duration::from_secs,
            ),
        };
        match loom_harness::kits::concurrent_campaign(&options, o.seed, budget) {
            Ok(r) => concurrent = Some(r),
            Err(e) => {
                eprintln!("error: {e}");
                super::abandon_out(&out);
                return EXIT_USAGE;
            }
        }
    }
    let mut env = Environment::detect("loom", env!("CARGO_PKG_VERSION"));
    env.command = Some(super::command_line());
    env.kit_version = Some(env!("CARGO_PKG_VERSION").to_string());
    env.extra
        .insert("store".into(), Value::String(args.store().to_string()));
    env.extra.insert(
        "explore".into(),
        serde_json::json!({
            "cases": outcome.cases,
            "operations": outcome.ops,
            "seconds": outcome.elapsed.as_secs_f64(),
            "operationsPerSecond": outcome.ops_per_second(),
        }),
    );
    let mut results = vec![result.clone()];
    if let Some((r, o)) = &concurrent {
        if let Some(o) = o {
            env.extra.insert(
                "concurrentCampaign".into(),
                serde_json::json!({
                    "clients": args.clients,
                    "rounds": o.rounds,
                    "operations": o.operations,
                    "seconds": o.elapsed.as_secs_f64(),
                    "operationsPerSecond": o.operations as f64 / o.elapsed.as_secs_f64().max(1e-9),
                }),
            );
        }
        results.push(r.clone());
    }
    let rules = loom_harness::rules::rule_infos();
    let subject = loom_harness::subjects::store(args.store(), None);
    let report = Report::new(env, rules, results.clone()).with_subjects(vec![subject]);
    let paths = match loom_report::render_all(&report, &out) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: writing the report into {}: {e}", out.display());
            return EXIT_USAGE;
        }
    };
    println!(
        "\n{}: {} cases, {} operations in {:.1} s ({:.0} operations/s)",
        result.status,
        outcome.cases,
        outcome.ops,
        outcome.elapsed.as_secs_f64(),
        outcome.ops_per_second()
    );
    if let Some(m) = &result.message {
        println!("{m}");
    }
    if let Some(path) = &replay_path {
        print_replay_hint(path, args.store());
    }
    if let Some((r, _)) = &concurrent {
        println!("\nconcurrent campaign: {}", r.status);
        if let Some(m) = &r.message {
            println!("{m}");
        }
    }
    super::print_report_paths(&paths, &report.digest);
    if results.iter().any(|r| r.status.is_failure()) {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

fn print_replay_hint(path: &Path, store: &str) {
    println!("\nreplay file: {}", super::shown(path));
    println!(
        "  run it again:  loom conform --store '{store}' --replay {}",
        super::shown(path)
    );
}
