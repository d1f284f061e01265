//! `loom conform` and the kits part of `loom check`: runs the SPI conformance kits
//! (`loom-conformance`) against a store named on the command line: `memory`,
//! `sqlite[:PATH]`, `postgres://…` or `cmd:"COMMAND"` (any program speaking the stdio
//! store protocol, docs/protocols/store.md).
//!
//! Every selected case yields a result: a kit whose SPI the store does not implement is
//! reported case by case as `skip-not-claimed`, never left out.

use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use clap::Args;
use loom_conformance::kits::KIT_NAMES;
use loom_report::{CaseResult, Environment, Report, Status};
use serde_json::Value;
use std::path::PathBuf;

/// Arguments of `loom conform`.
#[derive(Args)]
#[command(
    after_help = "Stores: memory | sqlite (fresh in-memory database per case) | sqlite:PATH (a scratch file) | \
postgres://USER@HOST:PORT/DB (a fresh schema loom_conform_<run> per run, kept afterwards for inspection: drop it when done) | cmd:\"COMMAND\" (a stdio store adapter: `loom docs store-protocol`).\n\n\
Kits: event-store, snapshot-store, archive-store, lifecycle, branch-registry, dispatcher, timer-store, \
content-store, durable-state-store, read-model-store (the plugin tier, SPI-20), concurrency (--clients N clients on \
one backend at once, judged by linearizability; a cmd: adapter must answer sharedBackend: true in hello).\n\n\
Examples:\n  loom conform --store memory\n  loom conform --store sqlite:/tmp/scratch.db --kit event-store\n  \
loom conform --store 'cmd:python3 adapter.py' --out conform-report/\n  \
loom conform --store memory --case spi_07\n  \
loom conform --list --kit event-store\n  \
loom conform --store 'cmd:python3 adapter.py' --smoke\n  \
loom conform --store 'cmd:python3 adapter.py' --fail-fast\n  \
loom conform --store 'cmd:python3 adapter.py --db /tmp/shared.db' --clients 4 --kit concurrency\n  \
loom conform --store 'cmd:python3 adapter.py' --explore --time 60 --seed 7\n  \
loom conform --store 'cmd:python3 adapter.py' --replay loom-reports/conform-<time>/explore-replay.json\n\n\
Exit status: 0 all passed (skips allowed), 1 the store failed: a case failed, errored or timed out, or a cmd: adapter \
did not start or answer hello (the report says which), 2 usage error or a run that could not be set up (an unknown \
store or kit, a database that cannot be opened, an --out that cannot be written): nothing is reported then."
)]
pub struct ConformArgs {
    /// The store under test: memory, sqlite[:PATH], postgres://URL or cmd:"COMMAND"
    /// (yours, speaking the store protocol). Required: the kits judge the store you name.
    #[arg(long, required_unless_present_any = ["list", "replay"])]
    pub store: Option<String>,
    /// List the cases a run would run, per kit, with their rule ids, and run nothing
    /// (takes --kit and --case; needs no --store).
    #[arg(long, conflicts_with_all = ["explore", "replay", "smoke"])]
    pub list: bool,
    /// A quick check that a store speaks the protocol: the handshake and the first
    /// few cases of each kit (seconds; the run is partial).
    #[arg(long, conflicts_with_all = ["explore", "replay"])]
    pub smoke: bool,
    /// When to stop early.
    #[command(flatten)]
    pub stop: super::StopArgs,
    /// Run only these kits (repeatable); default: every kit.
    #[arg(long, value_name = "KIT")]
    pub kit: Vec<String>,
    /// Run only cases whose id (or KIT/ID) contains this text.
    #[arg(long, value_name = "TEXT")]
    pub case: Option<String>,
    /// Directory for the report files (default: ./loom-reports/conform-<UTC time>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Known failures (TOML or JSON): a matching failure becomes xfail; a matching pass fails the run.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Clients on one backend for the concurrency kit: a cmd: adapter is started this
    /// many times (its hello must answer sharedBackend: true), an in-process store gets
    /// one connection per client. 1 runs no concurrent case (they are skipped, visibly).
    #[arg(long, value_name = "N", default_value_t = loom_conformance::kits::concurrency::CLIENTS_DEFAULT)]
    pub clients: usize,
    /// A command (run by sh -c) that restarts the adapter's backend after each kill of the
    /// durability kit, before the adapter starts again (a Redis or PostgreSQL restart): what
    /// was acknowledged must survive it. Only with --store cmd:.
    #[arg(long, value_name = "CMD")]
    pub restart_backend: Option<String>,
    /// Time limits for a `cmd:` adapter.
    #[command(flatten)]
    pub adapter: super::AdapterArgs,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Explore instead of running the kits: random SPI call sequences against the store and the in-memory reference, every answer compared; a divergence is shrunk and written as a replay file.
    #[arg(long, conflicts_with_all = ["kit", "case", "baseline"])]
    pub explore: bool,
    /// Explore for this many seconds.
    #[arg(long, value_name = "SECS", requires = "explore")]
    pub time: Option<u64>,
    /// Explore this many cases (default 256 when --time is not given either).
    #[arg(long, value_name = "N", requires = "explore")]
    pub cases: Option<u64>,
    /// Explore from this seed (default: from the clock; the report and the replay file name it).
    #[arg(long, value_name = "X", requires = "explore")]
    pub seed: Option<u64>,
    /// Run a replay file against the store: one written by --explore (fails while the divergence is
    /// still there), or a failed concurrent case's (concurrency-replay-CASE.json: the same case, clients
    /// and interleaving; fails while the race is still there). For the latter --store defaults to the file's.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["explore", "kit", "case", "baseline"])]
    pub replay: Option<PathBuf>,
}

impl ConformArgs {
    /// The store named by --store (clap requires it unless --list is given, and --list
    /// never reads it).
    pub fn store(&self) -> &str {
        self.store.as_deref().unwrap_or_default()
    }
}

/// Runs `loom conform`.
pub fn run(args: ConformArgs) -> u8 {
    if args.list {
        return list(&args);
    }
    // A replay file of a failed concurrent case re-runs that case under its recorded
    // interleaving; any other replay file is the exploration's.
    let mut args = args;
    let mut concurrency_replay = None;
    if let Some(path) = &args.replay {
        match loom_harness::concurrency_replay::ReplayFile::read(path) {
            Ok(Some(file)) => {
                if args.store.is_none() {
                    args.store = Some(file.store.clone());
                }
                args.kit = vec![loom_conformance::kits::concurrency::NAME.to_string()];
                args.case = Some(format!(
                    "{}/{}",
                    loom_conformance::kits::concurrency::NAME,
                    file.case
                ));
                args.clients = file.clients;
                if !args.quiet {
                    eprintln!(
                        "replaying {} of the concurrency kit with {} clients under its recorded interleaving ({} steps)",
                        file.case,
                        file.clients,
                        file.steps.len()
                    );
                }
                concurrency_replay = Some(file);
            }
            Ok(None) => return super::explore::run(&args),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        }
    } else if args.explore {
        return super::explore::run(&args);
    }
    let baseline = match args
        .baseline
        .as_deref()
        .map(loom_report::Baseline::load)
        .transpose()
    {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let out = match super::prepare_out(args.out.as_deref(), "conform") {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let options = loom_harness::kits::KitOptions {
        store: args.store().to_string(),
        kits: args.kit.clone(),
        case_filter: args.case.clone(),
        limits: args.adapter.limits(),
        show_progress: !args.quiet,
        budget: args.stop.budget(),
        cases_per_kit: args.smoke.then_some(SMOKE_CASES_PER_KIT),
        clients: args.clients,
        restart_backend: args.restart_backend.clone(),
        replay_dir: Some(out.clone()),
        concurrency_replay,
    };
    let budget = options.budget.clone();
    let (results, hello) = match loom_harness::kits::run(&options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            super::abandon_out(&out);
            return EXIT_USAGE;
        }
    };
    if results.is_empty() {
        eprintln!("error: no case matched the filters");
        super::abandon_out(&out);
        return EXIT_USAGE;
    }
    let mut results = results;
    super::set_reproduce(&mut results, |r| {
        Some(super::reproduce_kit(args.store(), &r.suite, &r.case_id))
    });
    if let Some(b) = &baseline {
        b.apply(&mut results);
    }
    let rules = loom_harness::rules::rule_infos();
    let subject = loom_harness::subjects::store(args.store(), hello.as_ref());
    let mut env = Environment::detect("loom", env!("CARGO_PKG_VERSION"));
    env.command = Some(super::command_line());
    env.kit_version = Some(env!("CARGO_PKG_VERSION").to_string());
    env.implementation_hello = hello;
    env.extra
        .insert("store".into(), Value::String(args.store().to_string()));
    let mut expectations = loom_report::Expectations::default()
        .part(loom_harness::kits::AREA, loom_harness::subjects::STORE);
    if let Some(cut) = filter_phrase(&args.kit, args.case.as_deref()) {
        expectations = expectations.omit(
            loom_harness::subjects::STORE,
            cut,
            "run loom conform without --kit and --case",
        );
    }
    if args.smoke {
        expectations = expectations.omit(
            loom_harness::subjects::STORE,
            format!("every case but the first {SMOKE_CASES_PER_KIT} of each kit (--smoke)"),
            "run loom conform without --smoke",
        );
    }
    if budget.exhausted() {
        expectations = expectations.omit(
            loom_harness::subjects::STORE,
            format!(
                "the cases after the last failure counted: {}",
                budget.reason()
            ),
            "fix the failures, or run without --fail-fast and --max-fail",
        );
    }
    let report = Report::new(env, rules, results)
        .with_subjects(vec![subject])
        .with_expectations(expectations);
    let paths = match loom_report::render_all(&report, &out) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: writing the report into {}: {e}", out.display());
            return EXIT_USAGE;
        }
    };
    print_summary(&report.results);
    super::print_report_paths(&paths, &report.digest);
    for line in report.figure_sentences() {
        println!("{line}");
    }
    println!("verdict: {}", report.verdict());
    for reason in &report.summary.verdict_reasons {
        println!("  - {reason}");
    }
    for line in report.partial_sentences() {
        println!("  - {line}");
    }
    if report.summary.ok {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// How many cases of each kit `--smoke` runs: enough to see the handshake, a write
/// and a read of every SPI the store claims, in seconds.
pub const SMOKE_CASES_PER_KIT: usize = 2;

/// `loom conform --list`: the cases a run would run, per kit, with their rules.
fn list(args: &ConformArgs) -> u8 {
    let kits = match loom_harness::kits::list(&args.kit, args.case.as_deref()) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let total: usize = kits.iter().map(|(_, c)| c.len()).sum();
    if total == 0 {
        eprintln!("error: no case matched the filters");
        return EXIT_USAGE;
    }
    for (kit, cases) in &kits {
        if cases.is_empty() {
            continue;
        }
        println!("{kit} ({} cases)", cases.len());
        for c in cases {
            let needs = if c.needs.is_empty() {
                String::new()
            } else {
                format!("  (needs {})", c.needs.join(", "))
            };
            println!("  {:<64} {}{needs}", c.id, c.rules.join(", "));
        }
    }
    println!(
        "{total} cases in {} kits",
        kits.iter().filter(|(_, c)| !c.is_empty()).count()
    );
    EXIT_OK
}

/// What `--kit` and `--case` left out, as a phrase for the partial verdict.
fn filter_phrase(kits: &[String], case: Option<&str>) -> Option<String> {
    let mut cut = Vec::new();
    if !kits.is_empty() {
        cut.push(format!("every kit but {}", kits.join(", ")));
    }
    if let Some(text) = case {
        cut.push(format!("every case whose id does not contain {text:?}"));
    }
    (!cut.is_empty()).then(|| cut.join("; "))
}

fn print_summary(results: &[CaseResult]) {
    println!(
        "\n{:<20} {:>6} {:>6} {:>6} {:>6} {:>8}",
        "kit", "pass", "fail", "skip", "error", "timeout"
    );
    for kit in KIT_NAMES {
        let mine: Vec<&CaseResult> = results.iter().filter(|r| r.suite == *kit).collect();
        if mine.is_empty() {
            continue;
        }
        let n = |s: Status| mine.iter().filter(|r| r.status == s).count();
        println!(
            "{:<20} {:>6} {:>6} {:>6} {:>6} {:>8}",
            kit,
            n(Status::Pass),
            n(Status::Fail),
            n(Status::SkipNotClaimed) + n(Status::SkipUntestable),
            n(Status::Error),
            n(Status::Timeout)
        );
    }
    let bad: Vec<&CaseResult> = results.iter().filter(|r| r.status.is_failure()).collect();
    if !bad.is_empty() {
        println!("\nfailures:");
        for r in bad {
            println!(
                "  {} {}/{}: {}",
                r.status,
                r.suite,
                r.case_id,
                r.message.as_deref().unwrap_or("")
            );
        }
    }
}
