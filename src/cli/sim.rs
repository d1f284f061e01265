//! `loom sim`: sweeps of the deploy simulator (`loom-sim`), sharded for CI matrices,
//! with a report and, for each failing seed, files that reproduce it.

use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use clap::Args;
use loom_report::{CaseResult, Environment, Report};
use loom_sim::{run_seeds_until, run_seeds_with, write_artifacts, SimConfig, SimStats, StoreSpec};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The progress line, whichever thread reports: a poisoned lock still shows progress.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Most characters of an adapter fault a failing seed's line quotes.
const ADAPTER_FAULT_CHARS_MAX: usize = 400;

/// What a failing seed's line says of a real store's own faults (crashes, garbled
/// output, each with the adapter's stderr), which its trace holds as `adapterFault`
/// lines: the count and the first one, or nothing.
fn adapter_faults(trace: &[String]) -> String {
    let faults: Vec<String> = trace
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            v.get("adapterFault")
                .and_then(|f| f.as_str())
                .map(str::to_owned)
        })
        .collect();
    match faults.first() {
        None => String::new(),
        Some(first) => format!(
            "; {} adapter fault(s) (all in trace.jsonl), the first: {}",
            faults.len(),
            first
                .chars()
                .take(ADAPTER_FAULT_CHARS_MAX)
                .collect::<String>()
        ),
    }
}

/// ` --store '…'` for a printed command, or nothing for the default memory store.
fn store_option(store: &StoreSpec) -> String {
    match store {
        StoreSpec::Memory => String::new(),
        s => format!(" --store {}", super::shell_word(&s.to_string())),
    }
}

/// ` --workload heavy` for a printed command, or nothing for the default profile.
fn workload_option(w: loom_sim::Workload) -> &'static str {
    match w {
        loom_sim::Workload::Default => "",
        loom_sim::Workload::Heavy => " --workload heavy",
    }
}

/// ` --restart-backend '…'` for a printed command, or nothing.
fn restart_option(cmd: Option<&str>) -> String {
    cmd.map(|c| format!(" --restart-backend {}", super::shell_word(c)))
        .unwrap_or_default()
}

/// Arguments of `loom sim`.
#[derive(Args)]
#[command(
    after_help = "Each seed draws a whole deployment (2-5 stateless workers, a dispatcher, a shared store on a \
simulated network, fault rates, latencies, flows) and runs a safety phase with crashes, partitions, zombie writers \
and hostile resumes, then a liveness phase with faults off. Invariants are named by rule id (`loom rules ID` prints one).\n\n\
Examples:\n  loom sim --seeds 200 --jobs 2\n  loom sim --seeds 1000 --stormy --shard 0/4 --out shard-0/\n  loom sim --seed 53 --stormy\n  \
loom sim --store sqlite --seeds 50\n  loom sim --seeds 20 --twice\n  loom sim --seeds 200 --jobs 2 --digests digests.txt\n  \
loom sim --seeds 500 --stormy --fail-fast --no-shrink\n  loom sim --store 'cmd:python3 adapter.py' --seeds 20 --timeout-ms 60000\n  loom sim --scenario two-recoverers-racing\n  loom sim --scenario my-scenario.toml\n  loom sim --store 'cmd:python3 adapter.py' --seeds 20\n\n\
Scenarios built in (--scenario NAME): crash-during-retry, resume-before-park, store-restart-mid-recovery, \
two-recoverers-racing, zombie-after-fencing; `loom sim --print-scenario NAME` prints one as a start for your own.\n\
The same seed gives the same trace, byte for byte, on any number of --jobs: --digests FILE writes one \
`seed digest` line per seed (the report holds them too) to compare two runs. Every failing seed is shrunk to a \
`shrunk.json` (--no-shrink skips it; --shrink-runs caps it); the printed wall time includes shrinking. A rule \
a seed did not reach (no stale fence, no typed failure, no timer) is a skip for that seed, not a pass. \
Progress goes to standard error (plain lines when it is not a terminal; nothing with -q but errors). \
Shards merge with `loom report merge`.\n\
Exit status: 0 every invariant held, 1 a violation (its seed and files are printed) or a cmd: store adapter that did not \
start or answer hello, 2 usage error or a run that could not be set up (e.g. --seeds 0: no seed to run; a database that \
cannot be opened): nothing is reported then."
)]
pub struct SimArgs {
    /// `replay FILE`: run a schedule file (a failing seed's `schedule.json` or
    /// `shrunk.json`) instead of drawing seeds.
    #[command(subcommand)]
    pub action: Option<SimAction>,
    /// How many seeds to run.
    #[arg(long, default_value_t = 100)]
    pub seeds: u64,
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    pub from: u64,
    /// Run this one seed (the same as --from S --seeds 1).
    #[arg(long, value_name = "S", conflicts_with_all = ["from", "seeds"])]
    pub seed: Option<u64>,
    /// The event store under simulation: memory, sqlite[:DIR], postgres://URL or cmd:COMMAND (a store adapter
    /// speaking the store protocol: `loom docs store-protocol`).
    #[arg(long, default_value = "memory")]
    pub store: String,
    /// With a real store: run CMD (`sh -c`, within 60 s) at points each seed draws in the
    /// safety phase, e.g. a restart of the database the adapter uses; the connections
    /// (or adapter processes) are started again after it. Also taken by `replay`
    /// (before or after it), so a failing seed's printed replay command restarts too.
    #[arg(long, value_name = "CMD", global = true)]
    pub restart_backend: Option<String>,
    /// Run a scenario instead of drawing seeds: the name of one built in (see below) or a
    /// file (TOML or JSON: workers, rates, latencies, faults, flows).
    #[arg(long, value_name = "NAME|FILE", conflicts_with_all = ["seed", "from", "seeds", "shard"])]
    pub scenario: Option<PathBuf>,
    /// Print the built-in scenario NAME (TOML) and exit: a start for a scenario of your own.
    #[arg(long, value_name = "NAME", conflicts_with = "scenario")]
    pub print_scenario: Option<String>,
    /// Seeds run on this many threads at once (reproduce a failing seed alone, with --seed).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Run every seed twice and compare the trace digests (a CONF-05 result per seed,
    /// naming the first differing trace line when they differ).
    #[arg(long)]
    pub twice: bool,
    /// Run only seeds with seed % N == I (I/N), for a CI matrix.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Raise every fault rate to its cap (crashes, zombies, hostile resumes).
    #[arg(long)]
    pub stormy: bool,
    /// The workload profile: `default` (2-5 workers, 3-6 executions) or `heavy` (5-8
    /// workers, 20-40 executions started in a burst, crashes and zombies at 30% or more:
    /// tens of executions active at once, many fences each), for a store's concurrency bugs.
    /// Also taken by `replay`, whose file holds the drawn setup but not the phase lengths.
    #[arg(long, value_name = "PROFILE", default_value = "default", global = true)]
    pub workload: loom_sim::Workload,
    /// Directory for the report files and the failing seeds' files (default: ./loom-reports/sim-<UTC time>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Shrink every failing seed to a smaller schedule that still fails (`shrunk.json`);
    /// the default. Shrinking time is part of the printed wall time.
    #[arg(long, overrides_with = "no_shrink")]
    pub shrink: bool,
    /// Do not shrink failing seeds (their `schedule.json` still replays them).
    #[arg(long)]
    pub no_shrink: bool,
    /// Most runs shrinking one failing seed may take.
    #[arg(long, value_name = "N", default_value_t = loom_sim::SHRINK_RUNS_MAX)]
    pub shrink_runs: usize,
    /// Write every seed's trace digest to FILE, one `seed digest` line per seed in seed
    /// order, so two runs (or two --jobs counts) can be compared with `diff`.
    #[arg(long, value_name = "FILE")]
    pub digests: Option<PathBuf>,
    /// Time limits of a `cmd:` store adapter (real time; the simulation's own time is simulated).
    #[command(flatten)]
    pub adapter: super::AdapterArgs,
    /// When to stop starting seeds.
    #[command(flatten)]
    pub stop: super::StopArgs,
    /// No progress on standard error (errors only).
    #[arg(long, short)]
    pub quiet: bool,
}

/// What `loom sim` does besides a sweep.
#[derive(clap::Subcommand)]
pub enum SimAction {
    /// Replays a schedule file written for a failing seed (`schedule.json`, or the
    /// shrunk `shrunk.json`): workers, rates, faults and flows come from the file; the
    /// file's seed seeds only the per-host choices and the network's latency draws.
    #[command(
        after_help = "Examples:\n  loom sim replay loom-reports/sim-<time>/seed-17/shrunk.json\n  loom sim --store sqlite replay seed-17/shrunk.json\n  \
loom sim --store 'cmd:python3 adapter.py --db /tmp/s-{seed}.db' replay seed-17/shrunk.json --restart-backend 'rm -f /tmp/s-{seed}.db-wal'\n\n\
Exit status: 0 every invariant held, 1 a violation or a cmd: store adapter that did not start, 2 usage error, an unreadable file or a database that cannot be opened."
    )]
    Replay {
        /// The schedule file.
        file: PathBuf,
    },
}

fn parse_shard(text: &str) -> Result<(u32, u32), String> {
    let (i, n) = text
        .split_once('/')
        .ok_or_else(|| format!("--shard expects I/N, got `{text}`"))?;
    let (i, n): (u32, u32) = (
        i.parse().map_err(|_| format!("bad shard index `{i}`"))?,
        n.parse().map_err(|_| format!("bad shard count `{n}`"))?,
    );
    if n == 0 || i >= n {
        return Err(format!("--shard {text}: need 0 <= I < N"));
    }
    Ok((i, n))
}

/// Runs `loom sim`.
pub fn run(args: SimArgs) -> u8 {
    if let Some(name) = &args.print_scenario {
        return print_scenario(name);
    }
    let shard = match args.shard.as_deref().map(parse_shard).transpose() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let store: StoreSpec = match args.store.parse() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: --store: {e}");
            return EXIT_USAGE;
        }
    };
    if let Err(e) = preflight(&store) {
        eprintln!("error: --store: {e}");
        return EXIT_USAGE;
    }
    let adapter = loom_sim::store::AdapterLimits {
        timeout_ms: args.adapter.timeout_ms,
        hello_timeout_ms: args.adapter.hello_timeout_ms,
    };
    // What a replay needs besides the file: the store, its limits and its restarts.
    let replay_config = SimConfig {
        store: store.clone(),
        adapter,
        restart_backend: args.restart_backend.clone(),
        ..SimConfig::default()
    }
    .with_workload(args.workload);
    if let Some(SimAction::Replay { file }) = &args.action {
        return replay_file(file, &replay_config);
    }
    if let Some(file) = &args.scenario {
        if let Some((_, text)) = builtin_scenario(&file.to_string_lossy()) {
            return replay_text(text, &file.to_string_lossy(), &replay_config);
        }
        return replay_file(file, &replay_config);
    }
    let (from, count) = match args.seed {
        Some(s) => (s, 1),
        None => (args.from, args.seeds),
    };
    // An exclusive range: seeds from..from+count, cut at u64::MAX (which is never run).
    let seeds: Vec<u64> = (from..from.saturating_add(count))
        .filter(|s| shard.is_none_or(|(i, n)| s % u64::from(n) == u64::from(i)))
        .collect();
    if seeds.is_empty() {
        // An empty sweep proves nothing; passing it would read as a green run.
        eprintln!(
            "error: no seed to run: --seeds {count} from {from}{} selects none (a sweep must run at least one seed)",
            args.shard
                .as_deref()
                .map(|s| format!(" in shard {s}"))
                .unwrap_or_default()
        );
        return EXIT_USAGE;
    }
    let out = match super::prepare_out(args.out.as_deref(), "sim") {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let mut config = if args.stormy {
        SimConfig {
            crash_per_mille_max: 1000,
            zombie_per_mille_max: 1000,
            hostile_per_mille_max: 1000,
            resume_fault_per_mille_max: 1000,
            ..SimConfig::default()
        }
    } else {
        SimConfig::default()
    };
    config.artifacts_dir = None;
    config.store = store.clone();
    config.adapter = adapter;
    config.restart_backend = args.restart_backend.clone();
    let config = config.with_workload(args.workload);
    let shrink = !args.no_shrink || args.shrink;
    let budget = args.stop.budget();
    let progress = Mutex::new(super::ProgressLine::new(args.quiet));
    let finished = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let total = seeds.len();
    let wall = std::time::Instant::now();
    let outcomes = run_seeds_until(
        &seeds,
        &config,
        args.jobs,
        |o| {
            o.results.iter().for_each(|r| budget.record(r));
            let n = finished.fetch_add(1, Ordering::SeqCst) + 1;
            let bad = failed.fetch_add(usize::from(!o.violations.is_empty()), Ordering::SeqCst)
                + usize::from(!o.violations.is_empty());
            lock(&progress).update(&format!(
                "sim: {n}/{total} seeds run, {bad} failing (last: seed {})",
                o.seed
            ));
        },
        || budget.exhausted(),
    );
    let ran: Vec<u64> = outcomes.iter().map(|o| o.seed).collect();
    let again = if args.twice {
        run_seeds_with(&ran, &config, args.jobs, |o| {
            lock(&progress).update(&format!("sim: second run, seed {} done", o.seed));
        })
    } else {
        Vec::new()
    };
    let mut results: Vec<CaseResult> = Vec::new();
    let mut failing = Vec::new();
    let mut unrunnable = Vec::new();
    let mut stats = SimStats::default();
    let mut digests = serde_json::Map::new();
    let mut shrink_s = 0.0;
    for (i, outcome) in outcomes.into_iter().enumerate() {
        if let Some(second) = again.get(i) {
            let r = loom_sim::determinism_result(&outcome, second);
            if r.status != loom_report::Status::Pass {
                println!("{}", r.message.as_deref().unwrap_or(""));
            }
            results.push(r);
        }
        stats.add(&outcome.stats);
        digests.insert(
            outcome.seed.to_string(),
            serde_json::Value::String(loom_sim::trace_digest(&outcome)),
        );
        if let Some(e) = &outcome.error {
            unrunnable.push(e.clone());
        }
        if !outcome.violations.is_empty() {
            let files = write_artifacts(&out, &outcome)
                .and_then(|p| {
                    if shrink {
                        let started = std::time::Instant::now();
                        // Keep the failure small: cut what it does not need, then write
                        // the file that replays it without the seed's draw.
                        let seed = outcome.seed;
                        let runs_max = args.shrink_runs;
                        let (small, _) =
                            loom_sim::shrink_with(&outcome, &config, runs_max, &mut |n| {
                                lock(&progress).update(&format!(
                                    "sim: shrinking seed {seed}: run {n} of at most {runs_max}"
                                ));
                            });
                        shrink_s += started.elapsed().as_secs_f64();
                        let text = serde_json::to_string_pretty(&small).unwrap_or_default();
                        std::fs::write(p.join("shrunk.json"), text)?;
                    }
                    Ok(p)
                })
                .map(|p| {
                    // A fold or ingress disagreement was also written as vectors.
                    let vectors = if outcome.vectors.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; {} vector(s): `loom vectors run --extra {}`",
                            outcome.vectors.len(),
                            super::shown(&p.join("vectors"))
                        )
                    };
                    let file = if shrink {
                        "shrunk.json"
                    } else {
                        "schedule.json"
                    };
                    format!(
                        "{}; replay the {} run with `loom sim{}{}{} replay {}`{vectors}",
                        super::shown(&p),
                        if shrink { "shrunk" } else { "whole" },
                        workload_option(args.workload),
                        store_option(&store),
                        restart_option(args.restart_backend.as_deref()),
                        super::shown(&p.join(file))
                    )
                })
                .unwrap_or_else(|e| format!("(files not written: {e})"));
            let files = files + &adapter_faults(&outcome.trace);
            failing.push((outcome.seed, outcome.violations.clone(), files));
        }
        results.extend(outcome.results);
    }
    lock(&progress).finish();
    // The wall time covers everything the sweep did: both runs and the shrinking.
    let wall_s = wall.elapsed().as_secs_f64();
    let not_run: Vec<u64> = seeds
        .iter()
        .copied()
        .filter(|s| !digests.contains_key(&s.to_string()))
        .collect();
    for seed in &not_run {
        for rule in loom_sim::RULES {
            results.push(budget.not_run("sim", "deploy", &format!("seed-{seed}/{rule}"), [rule]));
        }
    }
    if let Some(file) = &args.digests {
        let lines: String = ran
            .iter()
            .filter_map(|s| {
                let d = digests.get(&s.to_string())?.as_str()?;
                Some(format!("{s} {d}\n"))
            })
            .collect();
        if let Err(e) = std::fs::write(file, lines) {
            eprintln!("error: writing --digests {}: {e}", file.display());
            return EXIT_USAGE;
        }
    }
    let rules = loom_harness::rules::rule_infos();
    let mut env = Environment::detect("loom", env!("CARGO_PKG_VERSION"));
    env.seed = Some(args.from);
    env.command = Some(super::command_line());
    env.extra.insert("seeds".into(), serde_json::json!({"from": from, "count": count, "shard": args.shard, "stormy": args.stormy, "workload": format!("{:?}", args.workload).to_lowercase(), "store": store.to_string()}));
    // Each seed's trace digest: two runs, or two job counts, compare seed by seed.
    env.extra
        .insert("traceDigests".into(), serde_json::Value::Object(digests));
    // The report's reproduce command carries what the seed needs, as the printed one.
    let needs = format!(
        "{}{}{}",
        workload_option(args.workload),
        store_option(&store),
        restart_option(args.restart_backend.as_deref())
    );
    super::set_reproduce(&mut results, |r| {
        super::reproduce_sim(&r.case_id, args.stormy).map(|c| c + &needs)
    });
    // A cmd: store is a third party's: the run judges it; the others are the reference's.
    let (subject, part) = match &store {
        StoreSpec::Cmd(_) => (
            loom_harness::subjects::store(&args.store, None),
            loom_harness::subjects::STORE,
        ),
        _ => (
            loom_harness::subjects::reference(&args.store),
            loom_harness::subjects::REFERENCE,
        ),
    };
    let mut expectations = loom_report::Expectations::default().part("sim", part);
    if !not_run.is_empty() {
        expectations = expectations.omit(
            part,
            format!(
                "{} seed(s) after the last failure counted: {}",
                not_run.len(),
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
    let runs = if args.twice { 2.0 } else { 1.0 };
    let simulated_s = runs * stats.simulated_ms as f64 / 1000.0;
    let jobs = args.jobs.clamp(1, loom_sim::JOBS_MAX);
    println!(
        "{} seed(s){} on `{store}`, {jobs} job(s): {simulated_s:.1} s simulated in {wall_s:.1} s wall ({:.0}x, {:.0}x per job, {:.1} seeds/s; shrinking {shrink_s:.1} s of it)",
        ran.len(),
        if args.twice { " twice" } else { "" },
        simulated_s / wall_s.max(1e-9),
        simulated_s / wall_s.max(1e-9) / jobs as f64,
        runs * ran.len() as f64 / wall_s.max(1e-9)
    );
    println!("faults and coverage: {}", stats.counts());
    if store != StoreSpec::Memory {
        println!(
            "store under test: adapter-kills={} backend-restarts={} adapter-faults={} history-checks={}{}",
            stats.store_kills,
            stats.backend_restarts,
            stats.adapter_faults,
            stats.history_checks,
            if stats.shared_process_seeds > 0 {
                format!("; one process shared by every host in {} seed(s): the adapter did not answer sharedBackend: true", stats.shared_process_seeds)
            } else {
                String::new()
            }
        );
    }
    println!(
        "{}",
        summary_line(
            report.results.len(),
            failing.len(),
            unrunnable.len(),
            &not_run,
            &budget.reason()
        )
    );
    for e in unrunnable.iter().take(3) {
        println!("not run: {e}");
    }
    if unrunnable.len() > 3 {
        println!(
            "not run: … and {} more seed(s) (the report names each)",
            unrunnable.len() - 3
        );
    }
    for (seed, violations, files) in &failing {
        println!(
            "seed {seed}: reproduce with `loom sim --seed {seed}{}{}{}{}`; files: {files}",
            if args.stormy { " --stormy" } else { "" },
            workload_option(args.workload),
            store_option(&store),
            restart_option(args.restart_backend.as_deref())
        );
        for v in violations.iter().take(5) {
            println!(
                "  {} {}: {}",
                v.rule,
                v.execution_id.as_deref().unwrap_or("-"),
                v.message
            );
        }
    }
    super::print_report_paths(&paths, &report.digest);
    println!("verdict: {}", report.verdict());
    for reason in &report.summary.verdict_reasons {
        println!("  - {reason}");
    }
    for line in report.partial_sentences() {
        println!("  - {line}");
    }
    if failing.is_empty() && unrunnable.is_empty() && report.summary.ok {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// The sweep's count line: results, seeds that failed a check, seeds that could not run
/// to a verdict (a store that did not open or answer: errors, not passes), and seeds
/// the failure budget left out.
fn summary_line(
    results: usize,
    failing: usize,
    unrunnable: usize,
    not_run: &[u64],
    budget_reason: &str,
) -> String {
    let mut line = format!("{results} results, {failing} failing seed(s)");
    if unrunnable > 0 {
        line += &format!(", {unrunnable} seed(s) that could not run (errors)");
    }
    if !not_run.is_empty() {
        line += &format!("; {} seed(s) not run: {budget_reason}", not_run.len());
    }
    line
}

/// Opens a reference store once before the sweep: a database that cannot be opened is a
/// run that could not be set up (exit 2), not a failure of every seed. A `cmd:` adapter
/// is not started here: one that fails to start is the store under test failing (exit 1).
fn preflight(store: &StoreSpec) -> Result<(), String> {
    match store {
        StoreSpec::Memory | StoreSpec::Cmd(_) => Ok(()),
        StoreSpec::Sqlite(_) | StoreSpec::Postgres(_) => {
            loom_sim::store::SimStore::open(store, PREFLIGHT_SEED).map(drop)
        }
    }
}

/// The seed number the pre-flight store is opened for (it names its scratch file or
/// schema); no sweep runs it.
const PREFLIGHT_SEED: u64 = u64::MAX;

/// The scenarios built into the binary (simulator/scenarios/), by name, so
/// `--scenario NAME` works without the source tree.
pub const BUILTIN_SCENARIOS: [(&str, &str); 5] = [
    (
        "crash-during-retry",
        include_str!("../../simulator/scenarios/crash-during-retry.toml"),
    ),
    (
        "resume-before-park",
        include_str!("../../simulator/scenarios/resume-before-park.toml"),
    ),
    (
        "store-restart-mid-recovery",
        include_str!("../../simulator/scenarios/store-restart-mid-recovery.toml"),
    ),
    (
        "two-recoverers-racing",
        include_str!("../../simulator/scenarios/two-recoverers-racing.toml"),
    ),
    (
        "zombie-after-fencing",
        include_str!("../../simulator/scenarios/zombie-after-fencing.toml"),
    ),
];

/// The built-in scenario `name` (with or without `.toml`), unless a file of that name
/// exists: a file the user names wins.
fn builtin_scenario(name: &str) -> Option<(&'static str, &'static str)> {
    if std::path::Path::new(name).exists() {
        return None;
    }
    let name = name.strip_suffix(".toml").unwrap_or(name);
    BUILTIN_SCENARIOS.iter().copied().find(|(n, _)| *n == name)
}

/// `loom sim --print-scenario NAME`.
pub fn print_scenario(name: &str) -> u8 {
    match BUILTIN_SCENARIOS.iter().find(|(n, _)| *n == name) {
        Some((_, text)) => {
            print!("{text}");
            EXIT_OK
        }
        None => {
            let names: Vec<&str> = BUILTIN_SCENARIOS.iter().map(|(n, _)| *n).collect();
            eprintln!(
                "error: no built-in scenario {name:?} (scenarios: {})",
                names.join(", ")
            );
            EXIT_USAGE
        }
    }
}

/// `loom sim replay FILE`.
fn replay_file(file: &std::path::Path, config: &SimConfig) -> u8 {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            let names: Vec<&str> = BUILTIN_SCENARIOS.iter().map(|(n, _)| *n).collect();
            eprintln!(
                "error: reading {}: {e} (built-in scenarios: {})",
                file.display(),
                names.join(", ")
            );
            return EXIT_USAGE;
        }
    };
    replay_text(&text, &file.display().to_string(), config)
}

/// Runs a schedule or scenario given as text; `source` names it in messages.
fn replay_text(text: &str, source: &str, config: &SimConfig) -> u8 {
    let file = std::path::Path::new(source);
    let schedule = match loom_sim::scenario_from_text(text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {}: {e}", file.display());
            return EXIT_USAGE;
        }
    };
    match loom_sim::replay(&schedule, config) {
        Err(e) => {
            eprintln!("error: {}: {e}", file.display());
            EXIT_USAGE
        }
        Ok(outcome) => {
            if let Some(e) = &outcome.error {
                println!("not run: {e}");
                return EXIT_FAILED;
            }
            println!(
                "replayed {}: {} trace lines, digest {}, {} violation(s)",
                file.display(),
                outcome.trace.len(),
                loom_sim::trace_digest(&outcome),
                outcome.violations.len()
            );
            if config.store != StoreSpec::Memory {
                let st = &outcome.stats;
                println!(
                    "store under test: adapter-kills={} backend-restarts={} adapter-faults={} history-checks={} linear-judged={} linear-unknown-writes={} linear-not-judged={}",
                    st.store_kills, st.backend_restarts, st.adapter_faults, st.history_checks, st.linear_judged, st.linear_unknown_writes, st.linear_not_judged
                );
            }
            for v in outcome.violations.iter().take(10) {
                println!(
                    "  {} {}: {}",
                    v.rule,
                    v.execution_id.as_deref().unwrap_or("-"),
                    v.message
                );
            }
            if outcome.violations.len() > 10 {
                println!(
                    "  … and {} more violation(s)",
                    outcome.violations.len() - 10
                );
            }
            if outcome.violations.is_empty() {
                EXIT_OK
            } else {
                EXIT_FAILED
            }
        }
    }
}
