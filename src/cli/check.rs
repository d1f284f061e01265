//! `loom check`: the main job. Parses the arguments, runs `loom_harness::check`, writes
//! the report files, prints each subject's figure and the verdict, and picks the exit
//! status. Everything it runs lives in `loom-harness`.

use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use loom_harness::check::{CheckConfig, PARTS};
use loom_report::{Baseline, CaseResult, Report, Status};
use std::path::PathBuf;

/// Arguments of `loom check`.
#[derive(Args)]
#[command(after_help = "What it judges (the subject):\n  \
no --kernel-cmd, no cmd: store  the reference kernel, runtime and stores: gates, fold, vectors, replay, kits, explore, sim, tests, spec\n  \
--kernel-cmd CMD               your kernel: vectors, replay (the golden corpus through runScenario), fuzz (a short differential campaign)\n  \
--store cmd:CMD                your store: the SPI kits and the exploration campaign\n\
A report judges each subject only on the rules that apply to its kind (the applicability table built into this binary), from results obtained \
against it in this run. The harness's own tests are a separate self-check.\n\n\
Parts: gates (ABI, event-schema and audit-kind pins, manifest, compat gate), fold (generated logs: snapshot \
equivalence at every k, inert unknown kinds, status movers, older writers), vectors, replay (the committed golden-log \
corpus), fuzz (differential campaign, foreign kernels only), kits (SPI kits against --store), explore (the exploration campaign of loom conform --explore against --store, \
within --explore-cases and --explore-seconds), sim (deploy-simulator \
seeds), tests (the JUnit that ./scripts/test wrote in this binary's very source tree; anything else credits nothing), spec \
(every binding rule has a passing result in this run; shipped capabilities are backed).\n\n\
The verdict fails on any failure, on an empty run, on a part that produced only skips, and for the reference on a \
binding rule without a passing result (FOLD-13 runs as an expected failure; the hand-written \
exemptions built into this binary are listed in the report).\n\n\
Examples:\n  loom check\n  loom check --only fold --seed 7 --fold-logs 2000\n  loom check --store sqlite:/tmp/loom.db --out ci-report/\n  \
loom check --kernel-cmd 'python3 my_kernel.py'\n  loom check --store 'cmd:python3 adapter.py' --fail-fast\n  loom check --baseline known-failures.toml\n\n\
Exit status: 0 the verdict is PASS, 1 FAIL (a failure, an unexpected pass, an adapter that did not start or answer \
hello, an empty or incomplete run), 2 usage error or a run that could not be set up (an unknown part or store, a \
database that cannot be opened, an --out that cannot be written): nothing is reported then.")]
pub struct CheckArgs {
    /// Directory for the report files (default: ./loom-reports/check-<UTC time>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run only these parts (repeatable): gates, fold, vectors, replay, fuzz, kits, explore, sim, tests, spec.
    #[arg(long, value_name = "PART")]
    pub only: Vec<String>,
    /// Skip these parts (repeatable).
    #[arg(long, value_name = "PART")]
    pub skip: Vec<String>,
    /// The store the kits run against: memory, sqlite[:PATH], postgres://URL or cmd:"COMMAND" (a cmd: store is the subject).
    #[arg(long, default_value = "sqlite")]
    pub store: String,
    /// Judge a foreign kernel speaking the stdio kernel protocol (`loom docs kernel-protocol`).
    #[arg(long, value_name = "COMMAND")]
    pub kernel_cmd: Option<String>,
    /// Seed for generated inputs; the same seed gives the same run.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// How many deploy-simulator seeds the sim part runs (seeds 0..N; `loom sim` sweeps more).
    #[arg(long, default_value_t = 20)]
    pub sim_seeds: u64,
    /// How many generated logs the fold part checks.
    #[arg(long, default_value_t = 300)]
    pub fold_logs: u64,
    /// Differential-campaign cases per check against a foreign kernel.
    #[arg(long, default_value_t = loom_harness::check::FUZZ_CASES_DEFAULT)]
    pub fuzz_cases: u64,
    /// Exploration-campaign cases per check against the store (the explore part).
    #[arg(long, default_value_t = loom_harness::check::EXPLORE_CASES_DEFAULT)]
    pub explore_cases: u64,
    /// The exploration campaign's time limit, in seconds (it stops at whichever comes first).
    #[arg(long, default_value_t = loom_harness::check::EXPLORE_SECONDS_DEFAULT)]
    pub explore_seconds: u64,
    /// Clients started on the store's backend for the concurrent cases (1 to 16; 1 runs none):
    /// a `cmd:` store gets that many adapter processes, SQLite and PostgreSQL that many connections.
    #[arg(long, default_value_t = loom_conformance::kits::concurrency::CLIENTS_DEFAULT, value_name = "N")]
    pub clients: usize,
    /// A command (run by sh -c) that restarts a cmd: store's backend after each kill of the
    /// durability kit, before the adapter starts again (see `loom conform --help`).
    #[arg(long, value_name = "CMD")]
    pub restart_backend: Option<String>,
    /// Known failures (TOML or JSON): a matching failure becomes xfail; a matching pass fails the run.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// JUnit XML of a test run (default: $CARGO_TARGET_DIR or ./target, then nextest/ci/junit.xml,
    /// which ./scripts/test writes and records in loom's source tree). Credited only when its record names this
    /// binary's source tree.
    #[arg(long, value_name = "FILE")]
    pub test_results: Option<PathBuf>,
    /// Time limits for a foreign adapter (`--store cmd:…`, `--kernel-cmd`).
    #[command(flatten)]
    pub adapter: super::AdapterArgs,
    /// When to stop early.
    #[command(flatten)]
    pub stop: super::StopArgs,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
}

struct Bars {
    quiet: bool,
}

impl loom_harness::PartProgress for Bars {
    fn start(&self, part: &str) -> ProgressBar {
        let bar = if self.quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(0)
        };
        bar.set_style(
            ProgressStyle::with_template("{prefix:>7} [{bar:30}] {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(part.to_string());
        if !self.quiet {
            eprintln!("check: {part}");
        }
        bar
    }
}

/// Where `./scripts/test` writes its JUnit, from the directory loom runs in.
fn default_test_results() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"))
        .join("nextest")
        .join("ci")
        .join("junit.xml")
}

/// Runs `loom check`.
pub fn run(args: CheckArgs) -> u8 {
    let baseline = match args.baseline.as_deref().map(Baseline::load).transpose() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    if args.restart_backend.is_some() && !args.store.starts_with("cmd:") {
        eprintln!(
            "error: --restart-backend restarts a cmd: store's backend between the durability kit's kills; --store {} is an in-process store, which is never killed: give --store 'cmd:COMMAND'",
            args.store
        );
        return EXIT_USAGE;
    }
    let config = CheckConfig {
        only: args.only.clone(),
        skip: args.skip.clone(),
        store: args.store.clone(),
        kernel_cmd: args.kernel_cmd.clone(),
        seed: args.seed,
        sim_seeds: args.sim_seeds,
        fold_logs: args.fold_logs,
        fuzz_cases: args.fuzz_cases,
        explore_cases: args.explore_cases,
        explore_seconds: args.explore_seconds,
        baseline,
        test_results: args.test_results.clone(),
        default_test_results: default_test_results(),
        limits: args.adapter.limits(),
        show_progress: !args.quiet,
        max_fail: args.stop.max_fail(),
        clients: args.clients,
        restart_backend: args.restart_backend.clone(),
        findings_dir: None,
    };
    if let Err(e) = config.selected_parts() {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    let out = match super::prepare_out(args.out.as_deref(), "check") {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    // Each fuzz finding is written as a vector in the run folder, to run again with
    // `loom vectors run --extra`.
    let mut config = config;
    config.findings_dir = Some(out.join("vectors"));
    let (mut report, notes) = match loom_harness::check::run(&config, &Bars { quiet: args.quiet }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            super::abandon_out(&out);
            return EXIT_USAGE;
        }
    };
    let store = args.store.clone();
    let kernel = args.kernel_cmd.clone();
    super::set_reproduce(&mut report.results, |r| {
        reproduce(r, &args, &store, kernel.as_deref())
    });
    report.environment.command = Some(super::command_line());
    report.recompute();

    let paths = match loom_report::render_all(&report, &out) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: writing the report into {}: {e}", out.display());
            return EXIT_USAGE;
        }
    };
    print_summary(&report, &notes.lines);
    super::print_report_paths(&paths, &report.digest);
    if report.summary.ok {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

fn reproduce(
    r: &CaseResult,
    args: &CheckArgs,
    store: &str,
    kernel: Option<&str>,
) -> Option<String> {
    match r.area.as_str() {
        "vectors" => Some(super::reproduce_vector(&r.case_id, kernel, None)),
        "kits" => Some(super::reproduce_kit(store, &r.suite, &r.case_id)),
        "sim" => super::reproduce_sim(&r.case_id, false),
        "fold" => fold_log_number(&r.case_id).map(|n| {
            format!(
                "loom check --only fold --seed {} --fold-logs {}",
                args.seed,
                n + 1
            )
        }),
        "golden" => Some(match kernel {
            Some(k) => format!("loom replay --corpus --kernel-cmd {}", super::shell_word(k)),
            None => "loom replay --corpus".to_string(),
        }),
        "fuzz" => kernel.map(|k| {
            format!(
                "loom vectors fuzz --kernel-cmd {} --seed {} --cases-per-check {}",
                super::shell_word(k),
                args.seed,
                args.fuzz_cases
            )
        }),
        "explore" => Some(format!(
            "loom conform --store {} --explore --seed {} --cases {}",
            super::shell_word(store),
            args.seed,
            args.explore_cases
        )),
        "tests" => Some("./scripts/test".to_string()),
        part if PARTS.contains(&part) => Some(format!("loom check --only {part}")),
        _ => None,
    }
}

/// The log number N of a fold case `log-<seed>-<N>/…`.
fn fold_log_number(case_id: &str) -> Option<u64> {
    let log = case_id.strip_prefix("log-")?.split('/').next()?;
    log.rsplit('-').next()?.parse().ok()
}

fn print_summary(report: &Report, notes: &[String]) {
    let s = &report.summary;
    println!(
        "\n{:<10} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7}",
        "area", "pass", "fail", "skip", "xfail", "error", "resdiff"
    );
    for (area, c) in &s.by_area {
        println!(
            "{:<10} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7}",
            area,
            c.get(Status::Pass),
            c.get(Status::Fail),
            c.get(Status::SkipNotClaimed) + c.get(Status::SkipUntestable),
            c.get(Status::Xfail),
            c.get(Status::Error) + c.get(Status::Timeout),
            c.get(Status::ResolutionDifference)
        );
    }
    super::print_resolution_differences(&report.results);
    let failures: Vec<&CaseResult> = report.failures().collect();
    if !failures.is_empty() {
        println!("\nfailures:");
        for r in failures.iter().take(20) {
            println!(
                "  {} [{}] {}",
                r.case_id,
                r.rules.join(", "),
                r.message.as_deref().unwrap_or("")
            );
            if let Some(f) = &r.failure {
                if let Some(i) = f.event_index {
                    println!("      at event index {i}");
                }
                if let Some(p) = &f.path {
                    println!("      first difference at {p}");
                }
            }
            if let Some(c) = &r.reproduce {
                println!("      reproduce: {c}");
            }
        }
        if failures.len() > 20 {
            println!("  … and {} more (see the report)", failures.len() - 20);
        }
    }
    println!();
    for line in report.figure_sentences() {
        println!("{line}");
    }
    for f in &s.subjects {
        if !f.binding_without_evidence.is_empty() && f.kind != "harness" {
            println!(
                "  {} binding rule(s) without a passing result against {}: {}",
                f.binding_without_evidence.len(),
                f.subject,
                f.binding_without_evidence.join(", ")
            );
        }
    }
    for line in notes {
        println!("note: {line}");
    }
    println!(
        "\nverdict: {}{}",
        report.verdict(),
        super::judged_suffix(report)
    );
    for reason in &s.verdict_reasons {
        println!("  - {reason}");
    }
    for line in report.partial_sentences() {
        println!("  - {line}");
    }
}
