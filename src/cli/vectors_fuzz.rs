//! `loom vectors fuzz`: the differential campaign of `loom_vectors::fuzz` against a
//! kernel under test (a `--kernel-cmd` adapter, or the reference in-process). This file
//! only parses arguments, shows progress, writes the findings as vector files and the
//! report, and picks the exit code.

use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use clap::Args;
use loom_report::{Environment, Report};
use loom_vectors::fuzz::{run_campaign, write_findings, Check, FuzzConfig};
use loom_vectors::runner::{InProcessKernel, KernelClient};
use loom_vectors::{KernelProcess, KernelProcessConfig};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Arguments of `loom vectors fuzz`.
#[derive(Args)]
#[command(
    after_help = "Drives the kernel with generated event logs, resumes, emits and JSON values (most requests respelled as raw text) and compares every answer with the reference kernel; `restore` also checks the kernel against itself (foldFrom(fold(events[..=k]), tail) == fold(events)). A divergence is shrunk and written as a vector file; run it again with `loom vectors run --kernel-cmd CMD --extra DIR/vectors`.\n\nExamples:\n  loom vectors fuzz --kernel-cmd 'node my-kernel.mjs' --time 60\n  loom vectors fuzz --kernel-cmd ./kernel --cases 5000 --seed 7 --check fold,restore\n  loom vectors fuzz --kernel-cmd ./kernel --cases-per-check 500 --fail-fast\n\nExit status: 0 no divergence, 1 a divergence (or the kernel stopped answering), 2 usage error."
)]
pub struct FuzzArgs {
    /// The adapter command line (run through `sh -c`); default: the reference kernel in-process.
    #[arg(long)]
    pub kernel_cmd: Option<String>,
    /// Stop after this many seconds (checked between batches of 32 cases).
    #[arg(long, value_name = "SECS")]
    pub time: Option<u64>,
    /// Stop after this many cases, all checks together.
    #[arg(long)]
    pub cases: Option<u64>,
    /// Run this many cases in each check (the budget `loom check --fuzz-cases` gives):
    /// every check sends cases, and one that sent none is an error.
    #[arg(long, value_name = "N")]
    pub cases_per_check: Option<u64>,
    /// The campaign's seed: the same seed and case budget replay the same campaign.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Which checks to run (comma-separated): fold, restore, digest, ingress, emit.
    #[arg(long, value_delimiter = ',')]
    pub check: Vec<String>,
    /// Directory for the report and the found vectors (default: ./loom-reports/vectors-fuzz-<UTC time>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Per-call timeout for a foreign kernel, in milliseconds.
    #[arg(long, default_value_t = loom_vectors::limits::CALL_TIMEOUT_MS_DEFAULT)]
    pub timeout_ms: u64,
    /// No progress line.
    #[arg(long, short)]
    pub quiet: bool,
    /// When to stop early: at the first finding (--fail-fast) or the N-th (--max-fail
    /// N); the checks without a finding are then reported as not run, and the run is
    /// partial.
    #[command(flatten)]
    pub stop: super::StopArgs,
}

/// Runs `loom vectors fuzz`.
pub fn fuzz(args: FuzzArgs) -> u8 {
    let mut checks = Vec::new();
    for name in &args.check {
        match Check::parse(name.trim()) {
            Some(c) => checks.push(c),
            None => {
                eprintln!("error: unknown check `{name}` (fold, restore, digest, ingress, emit)");
                return EXIT_USAGE;
            }
        }
    }
    if checks.is_empty() {
        checks = Check::ALL.to_vec();
    }
    let config = FuzzConfig {
        seed: args.seed,
        cases: args.cases,
        cases_per_check: args.cases_per_check,
        time_ms: match (args.time, args.cases.or(args.cases_per_check)) {
            (Some(s), _) => Some(s.saturating_mul(1000)),
            (None, Some(_)) => None,
            (None, None) => Some(60_000),
        },
        checks,
        stop_after_findings: args
            .stop
            .max_fail()
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        ..FuzzConfig::default()
    };
    let budget = args.stop.budget();
    let out = match super::prepare_out(args.out.as_deref(), "vectors-fuzz") {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    // A start or handshake that fails is a result in a written report, as under
    // `vectors run`, not a run that leaves nothing behind.
    let mut handshake: Option<String> = None;
    let mut client: Option<Box<dyn KernelClient>> = match &args.kernel_cmd {
        None => Some(Box::new(InProcessKernel::default())),
        Some(cmd) => {
            let mut c = KernelProcessConfig::new(cmd.clone());
            c.call_timeout_ms = args.timeout_ms;
            match KernelProcess::start(c) {
                Ok(p) => Some(Box::new(p)),
                Err(e) => {
                    eprintln!("error: starting the kernel adapter `{cmd}`: {e}");
                    handshake = Some(e.message);
                    None
                }
            }
        }
    };
    let mut line = super::ProgressLine::new(args.quiet);
    let report = match client.as_mut() {
        Some(client) => run_campaign(client.as_mut(), &config, &mut |p| {
            line.update(&format!(
                "fuzz: {} cases, {} finding(s), {:.1} s",
                p.cases,
                p.findings,
                p.elapsed_ms as f64 / 1000.0
            ));
        }),
        None => loom_vectors::fuzz::FuzzReport::default(),
    };
    line.finish();
    drop(client);
    let vectors_dir = out.join("vectors");
    let written = match write_findings(&vectors_dir, &report.findings) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: writing the found vectors: {e}");
            return EXIT_USAGE;
        }
    };
    let mut env = Environment::detect("loom", env!("CARGO_PKG_VERSION"));
    env.command = Some(super::command_line());
    env.extra.insert(
        "kernel".into(),
        Value::String(
            args.kernel_cmd
                .clone()
                .unwrap_or_else(|| "reference (in-process)".into()),
        ),
    );
    env.extra.insert(
        "fuzz".into(),
        json!({
            "seed": config.seed,
            "cases": report.cases,
            "casesByCheck": report.cases_by_check.iter().map(|(c, n)| (c.as_str().to_owned(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "shrinkSteps": report.shrink_steps,
            "elapsedMs": report.elapsed_ms,
            "casesPerSecond": (report.cases_per_second() * 10.0).round() / 10.0,
        }),
    );
    let results = match &handshake {
        None => report.results(&config),
        Some(why) => vec![loom_report::CaseResult::error(
            loom_vectors::fuzz::AREA,
            loom_vectors::runner::ADAPTER_SUITE,
            "adapter/handshake",
            Vec::<String>::new(),
            why.clone(),
        )],
    };
    let subject = match &args.kernel_cmd {
        Some(cmd) => loom_harness::subjects::foreign_kernel(cmd, None),
        None => loom_report::Subject::new(
            loom_harness::subjects::KERNEL,
            loom_report::SubjectKind::Kernel,
            "loom reference kernel",
        )
        .with_endpoint("in-process"),
    };
    let mut expectations = loom_report::Expectations::default()
        .part(loom_vectors::fuzz::AREA, loom_harness::subjects::KERNEL);
    if report.stopped_at_limit {
        expectations = expectations.omit(
            loom_harness::subjects::KERNEL,
            format!(
                "the checks after the last finding counted: {}",
                budget.reason()
            ),
            "fix the failures, or run without --fail-fast and --max-fail",
        );
    }
    let report_doc = Report::new(env, loom_harness::rules::rule_infos(), results)
        .with_subjects(vec![subject])
        .with_expectations(expectations);
    let paths = match loom_report::render_all(&report_doc, &out) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: writing the report into {}: {e}", out.display());
            return EXIT_USAGE;
        }
    };
    println!(
        "{} cases in {:.1} s ({:.0}/s), seed {}",
        report.cases,
        report.elapsed_ms as f64 / 1000.0,
        report.cases_per_second(),
        config.seed
    );
    for (c, why) in &report.skipped {
        println!("  skipped {}: {why}", c.as_str());
    }
    for f in &report.findings {
        let d = &f.divergence;
        println!(
            "  {} [{}] {}{}{}",
            f.check.as_str(),
            d.rules().join(","),
            d.message,
            d.index.map(|i| format!(" (event {i})")).unwrap_or_default(),
            d.path
                .as_ref()
                .map(|p| format!(" at {p}"))
                .unwrap_or_default(),
        );
        println!(
            "      expected {}\n      actual   {}",
            loom_kernel::canonical_string(&d.expected),
            loom_kernel::canonical_string(&d.actual)
        );
    }
    if let Some(why) = &report.aborted {
        println!("  stopped early: {why}");
    }
    if report.stopped_at_limit {
        println!("  stopped early: {}", budget.reason());
    }
    if !written.is_empty() {
        println!(
            "{} vector file(s) under {}; run them again with:\n  loom vectors run{} --extra {}",
            written.len(),
            super::shown(&vectors_dir),
            args.kernel_cmd
                .as_ref()
                .map(|c| format!(" --kernel-cmd '{c}'"))
                .unwrap_or_default(),
            super::shell_word(&super::shown(&vectors_dir))
        );
    }
    super::print_report_paths(&paths, &report_doc.digest);
    if report.findings.is_empty() && report.aborted.is_none() && handshake.is_none() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}
