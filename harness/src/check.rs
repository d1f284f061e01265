//! `loom check` as a library call: chooses the parts that can exercise the subjects
//! named by the configuration, runs them, ties every result to its subject and builds
//! one report whose expectations make an empty or partial run visible.
//!
//! With neither a kernel command nor a `cmd:` store, the subject is the reference (the
//! reference kernel, runtime and stores) and every reference part runs; its report
//! claims completeness when every part ran and the tests part credited a test run of
//! this source tree. With a kernel command, the subject is that kernel and only the
//! parts that drive it run (vectors, golden replay, the differential campaign); with a
//! `cmd:` store, the store and the kits. The reference's own gates, fold checks,
//! simulator seeds and unit tests never appear in a foreign subject's report.

use crate::subjects::{self, KERNEL, REFERENCE, STORE};
use crate::{AdapterLimits, PartProgress};
use loom_report::{Baseline, CaseResult, Environment, Expectations, Report, Status, Subject};
use loom_vectors::runner::{InProcessKernel, KernelClient};
use loom_vectors::{KernelProcess, KernelProcessConfig};
use serde_json::Value;
use std::path::PathBuf;

/// Every part, in the order they run.
pub const PARTS: [&str; 10] = [
    "gates", "fold", "vectors", "replay", "fuzz", "kits", "explore", "sim", "tests", "spec",
];

/// The parts that exercise the reference.
pub const REFERENCE_PARTS: [&str; 9] = [
    "gates", "fold", "vectors", "replay", "kits", "explore", "sim", "tests", "spec",
];

/// The parts that exercise a foreign kernel.
pub const KERNEL_PARTS: [&str; 3] = ["vectors", "replay", "fuzz"];

/// The parts that exercise a `cmd:` store.
pub const STORE_PARTS: [&str; 2] = ["kits", "explore"];

/// Cases the exploration campaign (`loom conform --explore`) runs per check against the
/// store, unless [`EXPLORE_SECONDS_DEFAULT`] runs out first. Measured on the reference
/// (SQLite): about 1 s (docs/performance.md).
pub const EXPLORE_CASES_DEFAULT: u64 = 64;
/// The campaign's time limit per check, in seconds.
pub const EXPLORE_SECONDS_DEFAULT: u64 = 30;

/// Cases the differential campaign runs per check in `loom check --kernel-cmd`
/// (`loom vectors fuzz` runs longer campaigns).
pub const FUZZ_CASES_DEFAULT: u64 = 64;

/// The area each part writes its results under.
pub fn area_of(part: &str) -> &str {
    match part {
        "replay" => loom_vectors::golden::AREA,
        "fuzz" => loom_vectors::fuzz::AREA,
        other => other,
    }
}

/// What `loom check` runs.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// Only these parts (empty: every part that applies).
    pub only: Vec<String>,
    /// Not these parts.
    pub skip: Vec<String>,
    /// The store the kits run against.
    pub store: String,
    /// A foreign kernel's command.
    pub kernel_cmd: Option<String>,
    /// Seed for generated inputs.
    pub seed: u64,
    /// Simulator seeds.
    pub sim_seeds: u64,
    /// Generated logs for the fold part.
    pub fold_logs: u64,
    /// Differential-campaign cases per check (foreign kernel).
    pub fuzz_cases: u64,
    /// Exploration-campaign cases per check (the store).
    pub explore_cases: u64,
    /// The exploration campaign's time limit, in seconds.
    pub explore_seconds: u64,
    /// Known failures.
    pub baseline: Option<Baseline>,
    /// JUnit of a test run given explicitly (a missing file is then an error).
    pub test_results: Option<PathBuf>,
    /// Where `./scripts/test` writes its JUnit (used when `test_results` is not given;
    /// a missing file there means the tests part is unavailable, not an error).
    pub default_test_results: PathBuf,
    /// Adapter time limits.
    pub limits: AdapterLimits,
    /// Draw progress bars.
    pub show_progress: bool,
    /// Stop after this many failing results (`--fail-fast` is 1, `--max-fail N`): the
    /// cases and parts not run are reported as such, and the run is partial.
    pub max_fail: Option<u64>,
    /// Clients the kits start on the store's backend for the concurrent cases
    /// (`--clients`; a `cmd:` store runs that many adapter processes).
    pub clients: usize,
    /// The backend restart run after each kill of the durability kit (`--restart-backend`).
    pub restart_backend: Option<String>,
    /// Where the fuzz part writes each finding as a vector file (`<kind>/<id>.json`, the
    /// layout `loom vectors run --extra DIR` reads); `None`: nowhere.
    pub findings_dir: Option<PathBuf>,
}

impl CheckConfig {
    /// Every reference part against SQLite, seed 0, the default sizes.
    pub fn new() -> Self {
        CheckConfig {
            only: Vec::new(),
            skip: Vec::new(),
            store: "sqlite".into(),
            kernel_cmd: None,
            seed: 0,
            sim_seeds: 20,
            fold_logs: 300,
            fuzz_cases: FUZZ_CASES_DEFAULT,
            explore_cases: EXPLORE_CASES_DEFAULT,
            explore_seconds: EXPLORE_SECONDS_DEFAULT,
            baseline: None,
            test_results: None,
            default_test_results: PathBuf::from("target/nextest/ci/junit.xml"),
            limits: AdapterLimits::default(),
            show_progress: false,
            max_fail: None,
            clients: loom_conformance::kits::concurrency::CLIENTS_DEFAULT,
            restart_backend: None,
            findings_dir: None,
        }
    }

    fn foreign_store(&self) -> bool {
        self.store.starts_with("cmd:")
    }

    /// The parts that apply to the configured subjects, before `only`/`skip`.
    pub fn applicable_parts(&self) -> Vec<&'static str> {
        if self.kernel_cmd.is_none() && !self.foreign_store() {
            return REFERENCE_PARTS.to_vec();
        }
        PARTS
            .iter()
            .copied()
            .filter(|p| {
                (self.kernel_cmd.is_some() && KERNEL_PARTS.contains(p))
                    || (self.foreign_store() && STORE_PARTS.contains(p))
            })
            .collect()
    }

    /// The parts to run: applicable ones filtered by `only` and `skip`. `Err` names a
    /// part that does not exist or cannot exercise the configured subject.
    pub fn selected_parts(&self) -> Result<Vec<&'static str>, String> {
        let applicable = self.applicable_parts();
        for p in self.only.iter().chain(&self.skip) {
            if !PARTS.contains(&p.as_str()) {
                return Err(format!("unknown part `{p}` (parts: {})", PARTS.join(", ")));
            }
        }
        for p in &self.only {
            if !applicable.contains(&p.as_str()) {
                return Err(format!(
                    "the {p} part cannot exercise the subject of this run (parts that can: {}); the reference's own parts run without --kernel-cmd and a cmd: store",
                    applicable.join(", ")
                ));
            }
        }
        let selected: Vec<&'static str> = applicable
            .into_iter()
            .filter(|p| self.only.is_empty() || self.only.iter().any(|o| o == p))
            .filter(|p| !self.skip.iter().any(|s| s == p))
            .collect();
        if selected.is_empty() {
            return Err("no part left to run after --only/--skip".into());
        }
        Ok(selected)
    }
}

impl Default for CheckConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// What a check produced besides the report: lines for the console.
#[derive(Debug, Default)]
pub struct CheckNotes {
    /// Things the user should know (a part unavailable here, completeness not claimed).
    pub lines: Vec<String>,
}

fn start_kernel(cmd: &str, limits: AdapterLimits) -> Result<KernelProcess, String> {
    let mut config = KernelProcessConfig::new(cmd);
    config.call_timeout_ms = limits.timeout_ms;
    config.hello_timeout_ms = limits.hello_timeout_ms;
    KernelProcess::start(config).map_err(|f| f.message)
}

/// The exploration campaign against the store, as one result (area `explore`).
fn explore_part(config: &CheckConfig) -> (Vec<CaseResult>, String) {
    use loom_props::explore::stores::{run_on_with, Mode};
    use loom_props::explore::{explored_rules, ExploreOptions, Spis, EXPLORE_AREA};
    let opts = ExploreOptions {
        cases: Some(config.explore_cases),
        time: Some(std::time::Duration::from_secs(config.explore_seconds)),
        seed: config.seed,
    };
    let case_id = format!("explore seed {}", config.seed);
    let rules = explored_rules(Spis::ALL);
    let limit = std::time::Duration::from_millis;
    match run_on_with(
        &config.store,
        &Mode::Explore(opts),
        limit(config.limits.timeout_ms),
        limit(config.limits.hello_timeout_ms),
    ) {
        Ok(outcome) => (
            vec![outcome.to_case_result(&case_id, &rules)],
            format!(
                "explore: {} cases, {} operations in {:.1} s from seed {} (budget {} cases or {} s, whichever comes first: --explore-cases, --explore-seconds)",
                outcome.cases,
                outcome.ops,
                outcome.elapsed.as_secs_f64(),
                config.seed,
                config.explore_cases,
                config.explore_seconds
            ),
        ),
        Err(e) => (
            vec![CaseResult::error(
                EXPLORE_AREA,
                "store",
                &case_id,
                rules.iter().copied(),
                format!("the campaign could not start: {e}"),
            )],
            format!("explore: the campaign could not start: {e}"),
        ),
    }
}

/// Rounds of the concurrent campaign in the explore part (`loom check --store`); its time
/// limit is the exploration's (`--explore-seconds`).
pub const CAMPAIGN_ROUNDS_DEFAULT: u64 = 20;

/// The concurrent campaign on the store with `--clients` clients, and its note.
fn concurrent_campaign_part(config: &CheckConfig) -> (CaseResult, String) {
    let mut options = crate::kits::KitOptions::new(&config.store);
    options.limits = config.limits;
    options.clients = config.clients;
    let budget = loom_conformance::kits::concurrency_campaign::Budget {
        rounds: CAMPAIGN_ROUNDS_DEFAULT,
        time: std::time::Duration::from_secs(config.explore_seconds),
    };
    let case_id = crate::kits::campaign_case_id(config.seed);
    match crate::kits::concurrent_campaign(&options, config.seed, budget) {
        Ok((r, Some(o))) => {
            let note = format!(
                "concurrent campaign: {}, {} rounds, {} operations from {} clients in {:.1} s (budget {} rounds or {} s: --clients, --explore-seconds)",
                r.status,
                o.rounds,
                o.operations,
                config.clients,
                o.elapsed.as_secs_f64(),
                budget.rounds,
                budget.time.as_secs()
            );
            (r, note)
        }
        Ok((r, None)) => {
            let note = format!(
                "concurrent campaign: {} ({})",
                r.status,
                r.message.clone().unwrap_or_default()
            );
            (r, note)
        }
        Err(e) => (
            CaseResult::error(
                crate::kits::AREA,
                crate::kits::CAMPAIGN_SUITE,
                &case_id,
                loom_conformance::kits::concurrency_campaign::RULES,
                format!("the concurrent campaign could not start: {e}"),
            ),
            format!("concurrent campaign: could not start: {e}"),
        ),
    }
}

/// Runs the check. `Err` means the run could not be set up (a usage problem, a store
/// that cannot be opened); nothing is reported then.
pub fn run(
    config: &CheckConfig,
    progress: &dyn PartProgress,
) -> Result<(Report, CheckNotes), String> {
    let parts = config.selected_parts()?;
    // A store that names nothing, or a database that cannot be opened, stops the run
    // before any part has spent its time.
    crate::kits::preflight(&config.store)?;
    if config
        .kernel_cmd
        .as_deref()
        .is_some_and(|c| c.trim().is_empty())
    {
        return Err(crate::vectors::EMPTY_KERNEL_CMD.into());
    }
    let reference_mode = config.kernel_cmd.is_none() && !config.foreign_store();
    let mut notes = CheckNotes::default();
    let mut results: Vec<CaseResult> = Vec::new();
    let mut subjects: Vec<Subject> = Vec::new();
    let mut expectations = Expectations::default();
    let mut kernel_hello: Option<Value> = None;
    let mut store_hello: Option<Value> = None;
    let mut vector_set_digest = None;
    let mut tests_credited = false;
    let kernel_subject = if reference_mode { REFERENCE } else { KERNEL };
    let store_subject = if reference_mode { REFERENCE } else { STORE };

    let budget = loom_report::FailureBudget::new(config.max_fail);
    let mut stopped: Vec<&str> = Vec::new();
    for part in &parts {
        if budget.exhausted() {
            if *part != "spec" {
                stopped.push(part);
            }
            continue;
        }
        let bar = progress.start(part);
        let mut produced: Vec<CaseResult> = match *part {
            "gates" => crate::gates::run(),
            "fold" => crate::fold::run(config.seed, config.fold_logs, &bar),
            "vectors" => {
                let vectors = crate::vectors::load(None)?;
                vector_set_digest = Some(loom_vectors::set::set_digest(&vectors));
                let (claims, r) = crate::vectors::run_with(
                    config.kernel_cmd.as_deref(),
                    config.limits,
                    &vectors,
                    &budget,
                    config.show_progress,
                )?;
                if config.kernel_cmd.is_some() {
                    kernel_hello = Some(claims.hello.clone());
                }
                r
            }
            "replay" => match &config.kernel_cmd {
                None => loom_vectors::golden::corpus_results(),
                Some(cmd) => match start_kernel(cmd, config.limits) {
                    Ok(mut k) => {
                        let mut r = loom_vectors::golden::corpus_kernel_results(&mut k);
                        finish_kernel(&mut k, loom_vectors::golden::AREA, &mut r);
                        r
                    }
                    Err(e) => vec![handshake_error("golden", &e)],
                },
            },
            "fuzz" => match &config.kernel_cmd {
                None => Vec::new(),
                Some(cmd) => match start_kernel(cmd, config.limits) {
                    Ok(mut k) => {
                        let fuzz = loom_vectors::fuzz::FuzzConfig {
                            seed: config.seed,
                            cases: None,
                            cases_per_check: Some(config.fuzz_cases),
                            time_ms: None,
                            ..loom_vectors::fuzz::FuzzConfig::default()
                        };
                        let report = loom_vectors::fuzz::run_campaign(&mut k, &fuzz, &mut |_| {});
                        notes.lines.push(fuzz_budget_note(&fuzz, &report));
                        let mut r = report.results(&fuzz);
                        if let (Some(dir), false) =
                            (&config.findings_dir, report.findings.is_empty())
                        {
                            match loom_vectors::fuzz::write_findings(dir, &report.findings) {
                                Ok(written) if !written.is_empty() => {
                                    let again = format!(
                                        "loom vectors run --kernel-cmd {} --extra {}",
                                        crate::shell::word(cmd),
                                        crate::shell::word(&dir.display().to_string())
                                    );
                                    notes.lines.push(format!(
                                        "fuzz: {} finding(s) written as vectors under {}; run them again: {again}",
                                        written.len(),
                                        dir.display()
                                    ));
                                    for x in r.iter_mut().filter(|x| x.status.is_failure()) {
                                        x.reproduce.get_or_insert_with(|| again.clone());
                                    }
                                }
                                Ok(_) => {}
                                Err(e) => notes
                                    .lines
                                    .push(format!("fuzz: the findings could not be written: {e}")),
                            }
                        }
                        finish_kernel(&mut k, loom_vectors::fuzz::AREA, &mut r);
                        r
                    }
                    Err(e) => vec![handshake_error("fuzz", &e)],
                },
            },
            "kits" => {
                let mut options = crate::kits::KitOptions::new(&config.store);
                options.limits = config.limits;
                options.show_progress = config.show_progress;
                options.budget = budget.clone();
                options.clients = config.clients;
                options.restart_backend = config.restart_backend.clone();
                let (r, hello) = crate::kits::run(&options)?;
                store_hello = hello;
                r
            }
            "explore" => {
                let (mut r, note) = explore_part(config);
                notes.lines.push(note);
                let (c, note) = concurrent_campaign_part(config);
                notes.lines.push(note);
                r.push(c);
                r
            }
            "sim" => loom_sim::sim_results(config.sim_seeds, false),
            "tests" => {
                let (path, explicit) = match &config.test_results {
                    Some(p) => (p.clone(), true),
                    None => (config.default_test_results.clone(), false),
                };
                match crate::tests_part::run(&path) {
                    Ok(r) => {
                        tests_credited = r.iter().all(|x| x.case_id != "test-run");
                        r
                    }
                    Err(e) if explicit => vec![CaseResult::error(
                        crate::tests_part::AREA,
                        "junit",
                        "test-run",
                        Vec::<String>::new(),
                        format!("cannot read the test results: {e}"),
                    )],
                    Err(_) => {
                        notes.lines.push(format!(
                            "tests: no test run at {}: the unit tests credit nothing and completeness is not claimed (run ./scripts/test in the source tree, or pass --test-results FILE)",
                            path.display()
                        ));
                        vec![CaseResult::skip_untestable(
                            crate::tests_part::AREA,
                            "junit",
                            "test-run",
                            Vec::<String>::new(),
                            format!("no test results at {}", path.display()),
                        )]
                    }
                }
            }
            // The spec part reads the other parts' results; it runs last, below.
            _ => Vec::new(),
        };
        bar.finish_and_clear();
        let subject = match *part {
            "kits" | "explore" => store_subject,
            _ => kernel_subject,
        };
        for r in &mut produced {
            if r.subject.is_none() {
                r.subject = Some(subject.to_string());
            }
        }
        // The kits and vectors parts count their own failures as they go.
        if !["kits", "vectors"].contains(part) {
            produced.iter().for_each(|r| budget.record(r));
        }
        // A part whose every result is "not claimed" by a kernel that claims some kinds
        // (a golden replay of a kernel that runs no flows) is shown as not claimed and
        // not expected; a part that produced nothing at all is still expected.
        let not_claimed = config.kernel_cmd.is_some()
            && subject == KERNEL
            && !produced.is_empty()
            && produced.iter().all(|r| r.status == Status::SkipNotClaimed)
            && kernel_hello
                .as_ref()
                .and_then(|h| h.get("kinds"))
                .and_then(Value::as_array)
                .is_some_and(|k| !k.is_empty());
        if !["tests", "spec"].contains(part) && !not_claimed {
            expectations = expectations.part(area_of(part), subject);
        }
        results.append(&mut produced);
    }

    if !stopped.is_empty() || budget.exhausted() {
        let subject = if reference_mode {
            REFERENCE
        } else if config.kernel_cmd.is_some() {
            KERNEL
        } else {
            STORE
        };
        let what = if stopped.is_empty() {
            "the cases after the last failure counted".to_string()
        } else {
            format!(
                "{} (and the cases after the last failure counted)",
                parts_phrase(&stopped)
            )
        };
        expectations = expectations.omit(
            subject,
            format!("{what}: {}", budget.reason()),
            "fix the failures, or run without --fail-fast and --max-fail",
        );
    }
    crate::expected::apply(&mut results);
    let rules = crate::rules::rule_infos();
    let exempted = crate::spec_part::exemptions()?;
    let complete = reference_mode
        && REFERENCE_PARTS
            .iter()
            .filter(|p| **p != "spec")
            .all(|p| parts.contains(p))
        && tests_credited
        && stopped.is_empty()
        && !budget.exhausted();
    if parts.contains(&"spec") {
        results.extend(crate::spec_part::run(&results, &rules, &exempted, complete));
        if complete {
            expectations = expectations.part("spec", REFERENCE);
        }
    }
    if let Some(b) = &config.baseline {
        b.apply(&mut results);
    }

    if reference_mode {
        subjects.push(subjects::reference(&config.store));
        if results
            .iter()
            .any(|r| r.subject.as_deref() == Some(loom_report::HARNESS_SUBJECT_ID))
        {
            subjects.push(subjects::harness());
        }
        if complete {
            expectations = expectations.complete(REFERENCE);
            for (rule, reason) in &exempted {
                expectations = expectations.exempt(rule, reason);
            }
        } else {
            let left_out: Vec<&str> = REFERENCE_PARTS
                .iter()
                .copied()
                .filter(|p| !parts.contains(p))
                .collect();
            if !left_out.is_empty() {
                expectations = expectations.omit(
                    REFERENCE,
                    parts_phrase(&left_out),
                    "run loom check without --only and --skip",
                );
            }
            if parts.contains(&"tests") && !tests_credited {
                expectations = expectations.omit(
                    REFERENCE,
                    "a test run of this source tree (the tests part credited none, so the unit tests are no evidence)",
                    "run ./scripts/test in the source tree (it records the run) or pass --test-results FILE, then run loom check again",
                );
            }
        }
    } else {
        let left_out: Vec<&str> = config
            .applicable_parts()
            .into_iter()
            .filter(|p| !parts.contains(p))
            .collect();
        for (subject, of_subject) in [(KERNEL, &KERNEL_PARTS[..]), (STORE, &STORE_PARTS[..])] {
            let mine: Vec<&str> = left_out
                .iter()
                .copied()
                .filter(|p| of_subject.contains(p))
                .collect();
            if !mine.is_empty() {
                expectations = expectations.omit(
                    subject,
                    parts_phrase(&mine),
                    "run loom check without --only and --skip",
                );
            }
        }
        if let Some(cmd) = &config.kernel_cmd {
            let mut kernel = subjects::foreign_kernel(cmd, kernel_hello.as_ref());
            if let Some(claims) = subjects::kernel_claims(kernel_hello.as_ref(), &results) {
                kernel = kernel.with_claims(claims);
            }
            subjects.push(kernel);
        }
        if config.foreign_store() && (parts.contains(&"kits") || parts.contains(&"explore")) {
            subjects.push(subjects::store(&config.store, store_hello.as_ref()));
        }
    }

    let mut env = Environment::detect("loom", env!("CARGO_PKG_VERSION"));
    env.seed = Some(config.seed);
    env.vector_set_digest = vector_set_digest;
    env.kit_version = Some(env!("CARGO_PKG_VERSION").to_string());
    env.implementation_hello = kernel_hello.or(store_hello);
    env.extra.insert("parts".into(), serde_json::json!(parts));
    env.extra
        .insert("store".into(), Value::String(config.store.clone()));
    env.extra.insert(
        "sourceTreeDigest".into(),
        Value::String(crate::SOURCE_TREE_DIGEST.into()),
    );
    env.extra.insert(
        "eventSchemaVersion".into(),
        Value::String(loom_kernel::EVENT_SCHEMA_VERSION.into()),
    );
    let report = Report::new(env, rules, results)
        .with_subjects(subjects)
        .with_expectations(expectations);
    Ok((report, notes))
}

/// "the sim part", "the sim and tests parts", "the fold, sim and tests parts".
fn parts_phrase(parts: &[&str]) -> String {
    match parts {
        [one] => format!("the {one} part"),
        [init @ .., last] => format!("the {} and {last} parts", init.join(", ")),
        [] => "no part".to_string(),
    }
}

/// The budget the differential campaign used, for the console: the cases per check it
/// was given and what each check sent.
pub fn fuzz_budget_note(
    config: &loom_vectors::fuzz::FuzzConfig,
    report: &loom_vectors::fuzz::FuzzReport,
) -> String {
    let per_check: Vec<String> = config
        .checks
        .iter()
        .map(|c| match report.skipped.iter().find(|(s, _)| s == c) {
            Some(_) => format!("{} not claimed", c.as_str()),
            None => format!(
                "{} {} sent",
                c.as_str(),
                report.sent_by_check.get(c).copied().unwrap_or(0)
            ),
        })
        .collect();
    format!(
        "fuzz: budget {} cases per check (--fuzz-cases), seed {}: {}",
        config.cases_per_check.unwrap_or(0),
        config.seed,
        per_check.join(", ")
    )
}

/// Ends a kernel adapter: blames for stray lines go to their cases, problems at
/// shutdown (ignored end of input, processes left behind) become `error` results.
fn finish_kernel(k: &mut dyn KernelClient, area: &str, results: &mut Vec<CaseResult>) {
    let blames = k.take_blames();
    loom_vectors::runner::apply_blames(results, blames);
    let report = k.shutdown();
    loom_vectors::runner::apply_blames(results, report.blames);
    for problem in report.problems {
        results.push(CaseResult::error(
            area,
            "adapter",
            "adapter/shutdown",
            Vec::<String>::new(),
            problem.message,
        ));
    }
}

fn handshake_error(area_part: &str, message: &str) -> CaseResult {
    CaseResult::error(
        area_of(area_part),
        "adapter",
        "adapter/handshake",
        Vec::<String>::new(),
        format!("the kernel adapter did not start: {message}"),
    )
}

/// The in-process reference kernel as a client (for library users comparing against it).
pub fn reference_kernel() -> Box<dyn KernelClient> {
    Box::new(InProcessKernel::default())
}
