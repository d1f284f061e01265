//! `loom vectors …`, `loom kernel-adapter` and `loom replay`: the CLI over the
//! `loom-vectors` crate. List and run the language-neutral vectors (in-process against
//! the reference kernel, or against a foreign kernel over the stdio kernel protocol),
//! regenerate them from the scenario definitions, serve the reference kernel over
//! stdio, and re-run a flow script against a recorded log.

use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use clap::{Args, Subcommand};
use loom_report::{Baseline, CaseResult, Environment, Report, Status};
use loom_vectors::runner::KernelClient;
use loom_vectors::{KernelProcess, KernelProcessConfig, Kind, Vector};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `loom vectors …`.
#[derive(Subcommand)]
pub enum VectorsCommand {
    /// List vectors (id, kind, rules).
    #[command(
        after_help = "Examples:\n  loom vectors list --rule FOLD-09\n  loom vectors list --kind digest\n  loom vectors list --filter snap04 --kind fold\n\nExit status: 0 listed, 2 usage error, an unreadable set, or filters that match no vector."
    )]
    List {
        /// Only vectors whose id contains this text (the same filter as `loom vectors run --filter`).
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
        /// Only vectors proving this rule id (e.g. FOLD-09).
        #[arg(long)]
        rule: Option<String>,
        /// Only vectors of this kind: fold, normalize, digest, ingress, emit, runtime.
        #[arg(long)]
        kind: Option<String>,
        /// List the set under this directory (as `loom vectors export` writes it)
        /// instead of the set built into this binary.
        #[arg(long, value_name = "DIR")]
        vectors: Option<PathBuf>,
    },
    /// Run vectors against the reference kernel in-process, or a foreign kernel.
    Run(RunArgs),
    /// Differential fuzzing of a kernel against the reference; divergences become vector files.
    Fuzz(super::vectors_fuzz::FuzzArgs),
    /// Write the vector set built into this binary (cases, VERSION.json, schema) to a directory.
    #[command(
        after_help = "Writes DIR/cases/<kind>/<id>.json, DIR/VERSION.json (count and set digest) and \
DIR/schema/vector.schema.json: the set `loom vectors run` runs, for a kernel's own test suite.\n\n\
Examples:\n  loom vectors export vendor/loom-vectors\n  loom vectors run --vectors vendor/loom-vectors --kernel-cmd 'node kernel.mjs'\n\n\
Exit status: 0 written, 2 usage error (the directory already holds a set: use --force) or a directory that cannot be written."
    )]
    Export {
        /// The directory to write into (created if missing).
        dir: PathBuf,
        /// Replace a set already in DIR (its cases/ folder is removed first).
        #[arg(long)]
        force: bool,
    },
    /// Regenerate vectors/cases/** and vectors/VERSION.json from the scenarios (in a source checkout).
    #[command(
        after_help = "Run it in the repository's root (or pass --root): it rewrites the committed vectors \
there. Review the diff, then rebuild: the binary carries the set it was built with.\n\n\
Examples:\n  loom vectors regen --check\n  cargo run -- vectors regen\n\n\
Exit status: 0 up to date (or rewritten), 1 --check found a difference or the generator failed, 2 usage error (no checkout at --root)."
    )]
    Regen {
        /// Only report what would change; exit 1 if anything would.
        #[arg(long)]
        check: bool,
        /// The repository root whose vectors/ folder is regenerated.
        #[arg(long, value_name = "DIR", default_value = ".")]
        root: PathBuf,
    },
}

/// Arguments of `loom vectors run`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  loom vectors run\n  loom vectors run --kernel-cmd \"python3 my_kernel.py\" --out report/\n  loom vectors run --filter fold09 --quiet\n  loom vectors run --smoke --kernel-cmd \"python3 my_kernel.py\"\n  loom vectors run --kernel-cmd \"./my-kernel\" --fail-fast\n  loom vectors run --kernel-cmd \"./my-kernel\" --extra fuzz-found/\n\nExit status: 0 all passed (skips allowed; a PARTIAL PASS with --filter, --smoke or a stop), 1 a failure, error or timeout, 2 usage error or a run that could not be set up."
)]
pub struct RunArgs {
    /// The adapter command line (run through `sh -c`); default: the reference kernel in-process.
    #[arg(long)]
    pub kernel_cmd: Option<String>,
    /// Only vectors whose id contains this substring.
    #[arg(long)]
    pub filter: Option<String>,
    /// Also run the vector files under DIR (`DIR/<kind>/<id>.json`, e.g. what
    /// `loom vectors fuzz` wrote); repeatable. Their ids must not clash with the set's.
    #[arg(long, value_name = "DIR")]
    pub extra: Vec<PathBuf>,
    /// Directory for the report files (default: ./loom-reports/vectors-run-<UTC time>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run the set under this directory (as `loom vectors export` writes it) instead of
    /// the set built into this binary.
    #[arg(long, value_name = "DIR")]
    pub vectors: Option<PathBuf>,
    /// Known failures (TOML or JSON): a matching failure becomes xfail; a matching pass fails.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Time limits for a foreign kernel adapter.
    #[command(flatten)]
    pub adapter: super::AdapterArgs,
    /// When to stop early.
    #[command(flatten)]
    pub stop: super::StopArgs,
    /// A quick check that a kernel speaks the protocol: the handshake and the first
    /// few vectors of each kind (seconds; the run is partial).
    #[arg(long)]
    pub smoke: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Arguments of `loom kernel-adapter` (none: it serves the reference kernel on
/// stdin/stdout until stdin closes).
#[derive(Args)]
#[command(
    after_help = "Reads one JSON request per line on stdin and answers on stdout (the kernel protocol: `loom docs kernel-protocol`), until stdin closes. \
It is the reference your own adapter is compared with, and a way to try the protocol by hand.\n\n\
Examples:\n  echo '{\"id\":1,\"method\":\"hello\",\"params\":{\"protocolVersion\":1}}' | loom kernel-adapter\n  \
loom vectors run --kernel-cmd 'loom kernel-adapter'\n  \
loom check --kernel-cmd 'loom kernel-adapter --readings all'\n\nExit status: 0 stdin closed, 2 usage error, or standard input or output failed (a request is \
never a reason to exit: a malformed one gets an error answer)."
)]
pub struct KernelAdapterArgs {
    /// Take these open points the other way (`all`: one other reading of every open
    /// point this reference models, or a comma-separated list of reading names or GAP
    /// ids), as a kernel written from the spec that resolved them otherwise would; its
    /// hello then claims only the resolutions it still follows. Shows how such a kernel
    /// is judged: resolution differences, not failures.
    #[arg(long, value_name = "all|NAME,...")]
    pub readings: Option<String>,
}

/// Arguments of `loom replay`.
#[derive(Args)]
#[command(
    after_help = "Re-runs the flow script against the recorded log (served from the log, as a resume would) and reports whether it replays unchanged.\n\n\
With --corpus, replays every entry of a golden-log corpus: the corpus built into this binary \
when no DIR is given, else the one under DIR; with --kernel-cmd, through a foreign kernel's runScenario. --record writes \
the log of every entry under DIR that has none yet (review it before committing).\n\n\
Examples:\n  loom replay --log run.jsonl --flow flow.json\n  loom replay --log run.jsonl --flow flow.json --json\n  loom replay --corpus\n  \
loom replay --corpus --kernel-cmd 'python3 my_kernel.py'\n\n\
Exit status: 0 replays unchanged (or recorded), 1 diverged, 2 usage error or unreadable input."
)]
pub struct ReplayArgs {
    /// The recorded log: a JSON array of envelopes or JSON lines.
    #[arg(long, required_unless_present = "corpus", requires = "flow")]
    pub log: Option<PathBuf>,
    /// The flow script (JSON; its schema: `loom docs event-schema --schema`).
    #[arg(long, required_unless_present = "corpus", requires = "log")]
    pub flow: Option<PathBuf>,
    /// Replay a golden-log corpus: the built-in one, or the one under DIR.
    #[arg(long, value_name = "DIR", num_args = 0..=1, conflicts_with_all = ["log", "flow"])]
    pub corpus: Option<Option<PathBuf>>,
    /// With --corpus DIR: record the log of every entry that has none yet.
    #[arg(long, requires = "corpus", conflicts_with = "kernel_cmd")]
    pub record: bool,
    /// With --record: record every entry again, replacing its reviewed log.
    #[arg(long, requires = "record")]
    pub force: bool,
    /// With --corpus: replay through this foreign kernel's runScenario (the stdio kernel
    /// protocol) instead of the reference runtime.
    #[arg(long, value_name = "COMMAND", requires = "corpus")]
    pub kernel_cmd: Option<String>,
    /// Time limits for a foreign kernel adapter.
    #[command(flatten)]
    pub adapter: super::AdapterArgs,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `loom vectors …`.
pub fn run(cmd: VectorsCommand) -> u8 {
    match cmd {
        VectorsCommand::List {
            filter,
            rule,
            kind,
            vectors,
        } => list(filter, rule, kind, vectors.as_deref()),
        VectorsCommand::Run(args) => run_vectors(args),
        VectorsCommand::Fuzz(args) => super::vectors_fuzz::fuzz(args),
        VectorsCommand::Export { dir, force } => export(&dir, force),
        VectorsCommand::Regen { check, root } => regen(check, &root),
    }
}

fn list(
    filter: Option<String>,
    rule: Option<String>,
    kind: Option<String>,
    dir: Option<&Path>,
) -> u8 {
    let kind = match kind.as_deref().map(|k| (k, Kind::parse(k))) {
        Some((k, None)) => {
            eprintln!(
                "error: unknown kind `{k}` (fold, normalize, digest, ingress, emit, runtime)"
            );
            return EXIT_USAGE;
        }
        Some((_, Some(k))) => Some(k),
        None => None,
    };
    let vectors = match loom_harness::vectors::load(dir) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let mut n = 0;
    for v in &vectors {
        if kind.is_some_and(|k| k != v.kind) {
            continue;
        }
        if let Some(r) = &rule {
            if !v.rules.iter().any(|x| x.eq_ignore_ascii_case(r)) {
                continue;
            }
        }
        if filter.as_deref().is_some_and(|f| !v.id.contains(f)) {
            continue;
        }
        n += 1;
        let exception = v
            .exception
            .as_ref()
            .map(|e| format!("  [documented exception {}]", e.rule))
            .unwrap_or_default();
        println!(
            "{:<10} {:<70} {}{exception}",
            v.kind.as_str(),
            v.id,
            v.rules.join(",")
        );
    }
    eprintln!("{n} of {} vectors", vectors.len());
    if n == 0 {
        eprintln!("error: no vector matches the filters");
        return EXIT_USAGE;
    }
    EXIT_OK
}

/// How many vectors of each kind `--smoke` sends: the handshake and a few of every kind
/// show that an adapter speaks the protocol, in seconds.
pub const SMOKE_VECTORS_PER_KIND: usize = 3;

/// The first [`SMOKE_VECTORS_PER_KIND`] vectors of each kind, in set order.
fn smoke_selection(vectors: &mut Vec<Vector>) {
    let mut per_kind: BTreeMap<&'static str, usize> = BTreeMap::new();
    vectors.retain(|v| {
        let n = per_kind.entry(v.kind.as_str()).or_default();
        *n += 1;
        *n <= SMOKE_VECTORS_PER_KIND
    });
}

fn export(dir: &Path, force: bool) -> u8 {
    match loom_vectors::set::export(dir, force) {
        Ok(n) => {
            let version = loom_vectors::set::embedded_version_file()
                .map(|v| format!("{} vectors, set digest {}", v.count, v.digest))
                .unwrap_or_default();
            println!("wrote {n} files into {} ({version})", super::shown(dir));
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_USAGE
        }
    }
}

fn regen(check: bool, root: &Path) -> u8 {
    let dir = root.join("vectors");
    if !dir.join("VERSION.json").is_file() || !dir.join("cases").is_dir() {
        eprintln!(
            "error: {} is not the root of a Loom Conformance checkout (no vectors/VERSION.json); run this in the repository or pass --root",
            super::shown(root)
        );
        return EXIT_USAGE;
    }
    let vectors = match loom_vectors::generate::generate_all() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: the generator failed: {e}");
            return EXIT_FAILED;
        }
    };
    if check {
        let diff = loom_vectors::generate::diff_against(&dir, &vectors);
        for d in &diff {
            println!("{d}");
        }
        println!(
            "{} vector(s); {} file(s) would change",
            vectors.len(),
            diff.len()
        );
        return if diff.is_empty() {
            EXIT_OK
        } else {
            EXIT_FAILED
        };
    }
    match loom_vectors::generate::write_set(&dir, &vectors) {
        Ok(n) => {
            let v = loom_vectors::set::version_file(&vectors);
            println!(
                "{} vectors; {n} file(s) changed under {}\nset digest {}",
                v.count,
                super::shown(&dir),
                v.digest
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAILED
        }
    }
}

fn run_vectors(args: RunArgs) -> u8 {
    let out = match super::prepare_out(args.out.as_deref(), "vectors-run") {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    // A run that stops before it has results leaves no empty run folder behind.
    let give_up = |out: &Path, code: u8| {
        super::abandon_out(out);
        code
    };
    let mut vectors = match loom_harness::vectors::load(args.vectors.as_deref()) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return give_up(&out, EXIT_USAGE);
        }
    };
    let digest = loom_vectors::set::set_digest(&vectors);
    if let Err(e) = loom_vectors::set::add_extra(&mut vectors, &args.extra) {
        eprintln!("error: {e}");
        return give_up(&out, EXIT_USAGE);
    }
    if let Some(f) = &args.filter {
        vectors.retain(|v| v.id.contains(f.as_str()));
        if vectors.is_empty() {
            eprintln!("error: no vector id contains {f:?} (see `loom vectors list`)");
            return give_up(&out, EXIT_USAGE);
        }
    }
    if args.smoke {
        smoke_selection(&mut vectors);
    }
    let budget = args.stop.budget();
    let (claims, mut results) = match loom_harness::vectors::run_with(
        args.kernel_cmd.as_deref(),
        args.adapter.limits(),
        &vectors,
        &budget,
        !args.quiet,
    ) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return give_up(&out, EXIT_USAGE);
        }
    };
    super::set_reproduce(&mut results, |r| {
        Some(super::reproduce_vector(
            &r.case_id,
            args.kernel_cmd.as_deref(),
            args.vectors.as_deref(),
        ))
    });
    if let Some(path) = &args.baseline {
        match Baseline::load(path) {
            Ok(b) => {
                b.apply(&mut results);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return give_up(&out, EXIT_USAGE);
            }
        }
    }
    let mut env = Environment::detect("loom", env!("CARGO_PKG_VERSION"));
    env.vector_set_digest = Some(digest);
    env.implementation_hello = Some(claims.hello.clone());
    env.command = Some(super::command_line());
    if !args.extra.is_empty() {
        env.extra.insert(
            "extraVectorDirs".into(),
            Value::Array(
                args.extra
                    .iter()
                    .map(|d| Value::String(d.display().to_string()))
                    .collect(),
            ),
        );
    }
    env.extra.insert(
        "kernel".into(),
        Value::String(
            args.kernel_cmd
                .clone()
                .unwrap_or_else(|| "reference (in-process)".into()),
        ),
    );
    let subject = match &args.kernel_cmd {
        Some(cmd) => {
            let s = loom_harness::subjects::foreign_kernel(cmd, Some(&claims.hello));
            match loom_harness::subjects::kernel_claims(Some(&claims.hello), &results) {
                Some(c) => s.with_claims(c),
                None => s,
            }
        }
        None => loom_report::Subject::new(
            loom_harness::subjects::KERNEL,
            loom_report::SubjectKind::Kernel,
            "loom reference kernel",
        )
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_endpoint("in-process"),
    };
    let mut expectations = loom_report::Expectations::default()
        .part(loom_harness::vectors::AREA, loom_harness::subjects::KERNEL);
    if let Some(f) = &args.filter {
        expectations = expectations.omit(
            loom_harness::subjects::KERNEL,
            format!("every vector whose id does not contain {f:?}"),
            "run loom vectors run without --filter",
        );
    }
    if args.smoke {
        expectations = expectations.omit(
            loom_harness::subjects::KERNEL,
            format!("every vector but the first {SMOKE_VECTORS_PER_KIND} of each kind (--smoke)"),
            "run loom vectors run without --smoke",
        );
    }
    if budget.exhausted() {
        expectations = expectations.omit(
            loom_harness::subjects::KERNEL,
            format!(
                "the vectors after the last failure counted: {}",
                budget.reason()
            ),
            "fix the failures, or run without --fail-fast and --max-fail",
        );
    }
    let report = Report::new(env, loom_harness::rules::rule_infos(), results)
        .with_subjects(vec![subject])
        .with_expectations(expectations);
    let paths = match loom_report::render_all(&report, &out) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: writing the report into {}: {e}", out.display());
            return EXIT_USAGE;
        }
    };
    print_table(&report.results);
    // Every failure is listed: a run that shows some of them and stops leaves the
    // reader to guess how many more there are.
    for r in report.results.iter().filter(|r| r.status.is_failure()) {
        let f = r.failure.as_ref();
        println!(
            "  {} {} [{}] {}{}",
            r.status,
            r.case_id,
            r.rules.join(","),
            r.message.as_deref().unwrap_or(""),
            f.and_then(|f| f.path.as_ref())
                .map(|p| format!(" at {p}"))
                .unwrap_or_default()
        );
    }
    for line in report.figure_sentences() {
        println!("{line}");
    }
    println!(
        "verdict: {}{}",
        report.verdict(),
        super::judged_suffix(&report)
    );
    for reason in &report.summary.verdict_reasons {
        println!("  - {reason}");
    }
    for line in report.partial_sentences() {
        println!("  - {line}");
    }
    super::print_report_paths(&paths, &report.digest);
    if report.summary.ok {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

fn print_table(results: &[CaseResult]) {
    let mut by_kind: BTreeMap<&str, BTreeMap<Status, u64>> = BTreeMap::new();
    for r in results {
        *by_kind
            .entry(r.suite.as_str())
            .or_default()
            .entry(r.status)
            .or_default() += 1;
    }
    println!(
        "\n{:<10} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7}",
        "kind", "pass", "fail", "skip", "xfail", "error", "timeout", "resdiff"
    );
    let get = |m: &BTreeMap<Status, u64>, s: Status| m.get(&s).copied().unwrap_or(0);
    for (kind, m) in &by_kind {
        println!(
            "{:<10} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7}",
            kind,
            get(m, Status::Pass),
            get(m, Status::Fail),
            get(m, Status::SkipNotClaimed) + get(m, Status::SkipUntestable),
            get(m, Status::Xfail),
            get(m, Status::Error),
            get(m, Status::Timeout),
            get(m, Status::ResolutionDifference)
        );
    }
    super::print_resolution_differences(results);
}

/// Runs `loom kernel-adapter`: serves the reference kernel over the stdio kernel
/// protocol on stdin/stdout.
pub fn kernel_adapter(args: KernelAdapterArgs) -> u8 {
    let readings = match args
        .readings
        .as_deref()
        .map(loom_vectors::readings::ReadingSet::parse)
    {
        None => loom_vectors::readings::ReadingSet::NONE,
        Some(Ok(set)) => set,
        Some(Err(e)) => {
            eprintln!("error: --readings: {e}");
            return EXIT_USAGE;
        }
    };
    let kernel = loom_vectors::ReferenceKernel::with_readings(readings);
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    match loom_vectors::protocol::serve(&kernel, stdin.lock(), stdout.lock()) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            // Reading stdin or writing stdout failed: an I/O error, not a finding.
            eprintln!("error: kernel-adapter: {e}");
            EXIT_USAGE
        }
    }
}

/// Runs `loom replay`: re-runs a flow script against a recorded log and reports
/// whether it replays unchanged (a divergence is a structured diff).
pub fn replay(args: ReplayArgs) -> u8 {
    if let Some(dir) = &args.corpus {
        return replay_corpus(dir.as_deref(), &args);
    }
    let (Some(log), Some(flow)) = (&args.log, &args.flow) else {
        eprintln!("error: pass --log FILE --flow SCRIPT, or --corpus [DIR]");
        return EXIT_USAGE;
    };
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let (log_text, flow_text) = match (read(log), read(flow)) {
        (Ok(l), Ok(f)) => (l, f),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    match loom_vectors::replay::replay_text(&log_text, &flow_text) {
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_USAGE
        }
        Ok(report) => {
            if args.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report.to_value()).unwrap_or_default()
                );
            } else {
                println!("{}", report.render_text());
            }
            if report.unchanged() {
                EXIT_OK
            } else {
                EXIT_FAILED
            }
        }
    }
}

/// `loom replay --corpus [DIR]`: records (`--record`) or replays every entry of a
/// golden-log corpus, through the reference runtime or `--kernel-cmd`.
fn replay_corpus(dir: Option<&Path>, args: &ReplayArgs) -> u8 {
    use loom_vectors::golden;
    if args.record {
        let Some(dir) = dir else {
            eprintln!("error: --record writes into a corpus folder: pass --corpus DIR");
            return EXIT_USAGE;
        };
        return match golden::record_corpus(dir, args.force) {
            Ok(ids) => {
                for id in &ids {
                    println!("recorded {id}");
                }
                println!(
                    "{} entr{} recorded under {}; review the logs before committing them",
                    ids.len(),
                    if ids.len() == 1 { "y" } else { "ies" },
                    super::shown(dir)
                );
                EXIT_OK
            }
            Err(e) => {
                eprintln!("error: {e}");
                EXIT_FAILED
            }
        };
    }
    let entries = match dir {
        None => golden::embedded_corpus(),
        Some(d) => golden::load_corpus(d),
    };
    let entries = match entries {
        Ok(e) => e,
        Err(errors) => {
            eprintln!("error: {}", errors.join("\n"));
            return EXIT_USAGE;
        }
    };
    let results = match &args.kernel_cmd {
        None => golden::replay_corpus(&entries),
        Some(cmd) => {
            let mut config = KernelProcessConfig::new(cmd);
            config.call_timeout_ms = args.adapter.timeout_ms;
            config.hello_timeout_ms = args.adapter.hello_timeout_ms;
            match KernelProcess::start(config) {
                Ok(mut p) => {
                    let mut r = golden::replay_corpus_on(&mut p, &entries);
                    let report = p.shutdown();
                    loom_vectors::runner::apply_blames(&mut r, report.blames);
                    r.extend(report.problems.into_iter().map(|problem| {
                        CaseResult::error(
                            golden::AREA,
                            loom_vectors::runner::ADAPTER_SUITE,
                            "adapter/shutdown",
                            Vec::<String>::new(),
                            problem.message,
                        )
                    }));
                    r
                }
                Err(fault) => vec![CaseResult::error(
                    golden::AREA,
                    loom_vectors::runner::ADAPTER_SUITE,
                    "adapter/handshake",
                    Vec::<String>::new(),
                    fault.message,
                )],
            }
        }
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&results).unwrap_or_default()
        );
    } else {
        for r in &results {
            println!("{:<8} {}", r.status.as_str(), r.case_id);
            if let Some(m) = r.message.as_deref().filter(|_| r.status.is_failure()) {
                println!("         {m}");
            }
        }
        let failed = results.iter().filter(|r| r.status.is_failure()).count();
        println!(
            "{} of {} entries replay unchanged{}",
            results.iter().filter(|r| r.status == Status::Pass).count(),
            results.len(),
            if failed > 0 {
                format!("; {failed} failing")
            } else {
                String::new()
            }
        );
    }
    let all_pass = !results.is_empty() && results.iter().all(|r| r.status == Status::Pass);
    if all_pass {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}
