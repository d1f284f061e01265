//! `loom check`: the main job. Runs every part that exists against the embedded default
//! (the reference kernel and the SQLite store), prints a summary per area and rule
//! group, writes report.{json,xml,md,html} into a run directory and exits non-zero on
//! any failure.

use super::gen;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use loom_kernel::fold::{fold_as, fold_owned, ExecutionState, FoldVersion, Status};
use loom_kernel::snapshot::{normalize_snapshot_state, restore, SnapshotRecord};
use loom_kernel::{canonical_string, fold};
use loom_report::{Baseline, CaseResult, Environment, Failure, Report, RuleInfo};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Every part `loom check` knows, in the order it runs them.
pub const PARTS: [&str; 7] = ["gates", "fold", "vectors", "kits", "sim", "tests", "spec"];

/// Arguments of `loom check`.
#[derive(Args)]
#[command(
    after_help = "Parts: gates (ABI, event-schema and manifest pins, the compat gate), fold (generated logs: \
fold(snapshot, tail) == fold(events) at every k, versioned snapshots, determinism), vectors (the language-neutral \
vectors against the reference kernel or --kernel-cmd), kits (the SPI conformance kits against --store), sim (a short \
sweep of the deploy simulator), tests (the \
JUnit of the last ./scripts/test run, credited to the rules its test names carry), spec (every rule has evidence; \
capabilities are backed).\n\n\
Examples:\n  loom check\n  loom check --only fold --seed 7 --fold-logs 2000\n  loom check --store sqlite:/tmp/loom.db --out ci-report/\n  \
loom check --kernel-cmd 'python3 my_kernel.py' --only vectors\n  loom check --baseline known-failures.toml\n\nExit status: 0 all passed, 1 a failure (or an unexpected pass of a baseline entry), 2 usage error."
)]
pub struct CheckArgs {
    /// Directory for the report files (default: ./loom-reports/check-<UTC time>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run only these parts (repeatable): gates, fold, vectors, kits, sim, tests, spec.
    #[arg(long, value_name = "PART")]
    pub only: Vec<String>,
    /// Skip these parts (repeatable).
    #[arg(long, value_name = "PART")]
    pub skip: Vec<String>,
    /// The store the kits run against: memory, sqlite[:PATH], postgres://URL or cmd:"COMMAND".
    #[arg(long, default_value = "sqlite")]
    pub store: String,
    /// Run the vectors against a foreign kernel speaking the stdio kernel protocol
    /// (docs/protocols/kernel.md) instead of the reference kernel.
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
    /// Known failures (TOML or JSON): a matching failure becomes xfail; a matching pass fails the run.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Source tree whose tests, vectors and kits the spec part scans for rule evidence.
    #[arg(long, default_value = env!("CARGO_MANIFEST_DIR"))]
    pub workspace: PathBuf,
    /// JUnit XML of a test run (default: target/nextest/ci/junit.xml, which `./scripts/test`
    /// writes); tests whose names carry rule ids count as evidence for those rules.
    #[arg(long, value_name = "FILE")]
    pub test_results: Option<PathBuf>,
    /// Time limits for a foreign adapter (`--store cmd:…`, `--kernel-cmd`).
    #[command(flatten)]
    pub adapter: super::AdapterArgs,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `loom check`.
pub fn run(args: CheckArgs) -> u8 {
    for p in args.only.iter().chain(&args.skip) {
        if !PARTS.contains(&p.as_str()) {
            eprintln!("error: unknown part `{p}` (parts: {})", PARTS.join(", "));
            return EXIT_USAGE;
        }
    }
    let selected: Vec<&str> = PARTS
        .iter()
        .copied()
        .filter(|p| args.only.is_empty() || args.only.iter().any(|o| o == p))
        .filter(|p| !args.skip.iter().any(|s| s == p))
        .collect();
    let out = match super::prepare_out(args.out.as_deref(), "check") {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };

    let catalogue = loom_spec::Catalogue::load();
    let mut results: Vec<CaseResult> = Vec::new();
    let mut vector_set_digest = None;
    let mut store_hello = None;
    for part in &selected {
        let bar = progress(&args, part);
        let mut part_results = match *part {
            "gates" => gates(),
            "fold" => fold_part(args.seed, args.fold_logs, &bar),
            "kits" => {
                match super::conform::kit_results_with_hello(&args.store, args.adapter, !args.quiet)
                {
                    Ok((r, hello)) => {
                        store_hello = hello;
                        r
                    }
                    Err(e) => vec![CaseResult::error(
                        "kits",
                        "harness",
                        "kits/start",
                        Vec::<String>::new(),
                        e,
                    )],
                }
            }
            "spec" => spec_part(&args.workspace, &catalogue),
            "tests" => tests_part(&args),
            "sim" => loom_sim::sim_results(args.sim_seeds, false),
            "vectors" => {
                match super::vectors::vector_results(
                    args.kernel_cmd.as_deref(),
                    args.adapter,
                    !args.quiet,
                ) {
                    Ok((r, digest)) => {
                        vector_set_digest = Some(digest);
                        r
                    }
                    Err(e) => vec![CaseResult::error(
                        "vectors",
                        "harness",
                        "vectors/start",
                        Vec::<String>::new(),
                        e,
                    )],
                }
            }
            _ => Vec::new(),
        };
        bar.finish_and_clear();
        results.append(&mut part_results);
    }

    super::set_reproduce(&mut results, |r| match r.area.as_str() {
        "vectors" => Some(super::reproduce_vector(
            &r.case_id,
            args.kernel_cmd.as_deref(),
            None,
        )),
        "kits" => Some(super::reproduce_kit(&args.store, &r.suite, &r.case_id)),
        "sim" => super::reproduce_sim(&r.case_id, false),
        "fold" => fold_log_number(&r.case_id).map(|n| {
            format!(
                "loom check --only fold --seed {} --fold-logs {}",
                args.seed,
                n + 1
            )
        }),
        part if PARTS.contains(&part) => Some(format!("loom check --only {part}")),
        _ => None,
    });

    if let Some(path) = &args.baseline {
        match Baseline::load(path) {
            Ok(b) => {
                b.apply(&mut results);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        }
    }

    let index = loom_spec::scan_evidence(&args.workspace);
    let rules: Vec<RuleInfo> = catalogue
        .rules()
        .iter()
        .map(|r| {
            let mut info = RuleInfo::new(&r.id, r.level.as_str(), &r.group, &r.summary)
                .with_section(&r.section);
            info.evidence = index
                .sites_for(&r.id)
                .iter()
                .take(3)
                .map(|s| format!("{}:{} {}", s.file, s.line, s.name))
                .collect();
            info
        })
        .collect();
    let mut rules = rules;
    rules.extend(
        catalogue
            .gaps()
            .iter()
            .map(|g| RuleInfo::new(&g.id, "GAP", "GAP", &g.title)),
    );
    let mut env = Environment::detect("loom", env!("CARGO_PKG_VERSION"));
    env.seed = Some(args.seed);
    env.vector_set_digest = vector_set_digest;
    env.implementation_hello = store_hello.or_else(|| {
        selected.contains(&"kits").then(|| serde_json::json!({"name": "loom-stores (reference)", "store": args.store, "version": env!("CARGO_PKG_VERSION")}))
    });
    env.kit_version = Some(env!("CARGO_PKG_VERSION").to_string());
    env.command = Some(std::env::args().collect::<Vec<_>>().join(" "));
    env.extra
        .insert("store".into(), Value::String(args.store.clone()));
    env.extra
        .insert("parts".into(), serde_json::json!(selected));
    env.extra.insert(
        "eventSchemaVersion".into(),
        Value::String(loom_kernel::EVENT_SCHEMA_VERSION.into()),
    );
    let report = Report::new(env, rules, results);

    let paths = match loom_report::render_all(&report, &out) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: writing the report into {}: {e}", out.display());
            return EXIT_USAGE;
        }
    };
    print_summary(&report);
    super::print_report_paths(&paths, &report.digest);
    if report.summary.ok {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// The log number N of a fold case `log-<seed>-<N>/…`.
fn fold_log_number(case_id: &str) -> Option<u64> {
    let log = case_id.strip_prefix("log-")?.split('/').next()?;
    log.rsplit('-').next()?.parse().ok()
}

fn progress(args: &CheckArgs, part: &str) -> ProgressBar {
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template("{prefix:>6} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(part.to_string());
    bar
}

fn print_summary(report: &Report) {
    let s = &report.summary;
    println!(
        "\n{:<10} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "area", "pass", "fail", "skip", "xfail", "error"
    );
    for (area, c) in &s.by_area {
        println!(
            "{:<10} {:>6} {:>6} {:>6} {:>6} {:>6}",
            area,
            c.get(loom_report::Status::Pass),
            c.get(loom_report::Status::Fail),
            c.get(loom_report::Status::SkipNotClaimed) + c.get(loom_report::Status::SkipUntestable),
            c.get(loom_report::Status::Xfail),
            c.get(loom_report::Status::Error) + c.get(loom_report::Status::Timeout)
        );
    }
    println!("\n{:<10} {:>6} {:>6}", "group", "pass", "fail");
    for (group, c) in &s.by_group {
        println!(
            "{:<10} {:>6} {:>6}",
            group,
            c.get(loom_report::Status::Pass),
            c.failures()
        );
    }
    let matrix = report.rule_matrix();
    let rules: Vec<_> = matrix.iter().filter(|r| r.rule.group != "GAP").collect();
    let passing = rules
        .iter()
        .filter(|r| r.status == loom_report::RuleStatus::Pass)
        .count();
    println!(
        "\nrules with passing evidence in this run: {passing} / {}",
        rules.len()
    );
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
                if let Some(p) = &f.path {
                    println!("      first difference at {p}");
                }
                if let Some(i) = f.event_index {
                    println!("      at event index {i}");
                }
            }
        }
        if failures.len() > 20 {
            println!("  … and {} more (see the report)", failures.len() - 20);
        }
    }
    println!("\nverdict: {}", if s.ok { "PASS" } else { "FAIL" });
}

// ---- gates ---------------------------------------------------------------------------

const PINNED_ABI: &str = include_str!("../../spec/pins/abi.json");
const PINNED_EVENT_SCHEMA: &str = include_str!("../../spec/pins/event-schema.json");

fn pin_result(
    case: &str,
    rules: &[&str],
    pinned_text: &str,
    actual: Value,
    fix: &str,
) -> CaseResult {
    let pinned: Value = match serde_json::from_str(pinned_text) {
        Ok(v) => v,
        Err(e) => {
            return CaseResult::error(
                "gates",
                "pins",
                case,
                rules.iter().copied(),
                format!("pin file is not JSON: {e}"),
            )
        }
    };
    if canonical_string(&pinned) == canonical_string(&actual) {
        CaseResult::pass("gates", "pins", case, rules.iter().copied())
    } else {
        CaseResult::fail(
            "gates",
            "pins",
            case,
            rules.iter().copied(),
            format!("undocumented drift: {fix}"),
            Failure::values(pinned, actual),
        )
    }
}

/// The fitness gates: pins and the compat gate.
pub fn gates() -> Vec<CaseResult> {
    use loom_kernel::versions::*;
    let syscalls: Vec<Value> = SYSCALL_CATALOGUE
        .iter()
        .map(|s| serde_json::json!({"name": s.name, "since": s.since, "feature": s.feature}))
        .collect();
    let mut out = vec![
        pin_result(
            "abi-pin",
            &["CONF-02", "ABI-01", "ABI-07"],
            PINNED_ABI,
            serde_json::json!({"kernelAbiVersion": KERNEL_ABI_VERSION, "syscalls": syscalls}),
            "the syscall catalogue or KERNEL_ABI_VERSION changed; bump the version and update spec/pins/abi.json together",
        ),
        pin_result(
            "event-schema-pin",
            &["CONF-02", "COMPAT-02", "ABI-11"],
            PINNED_EVENT_SCHEMA,
            serde_json::json!({"eventSchemaVersion": EVENT_SCHEMA_VERSION, "knownEventTypes": loom_kernel::known_event_types()}),
            "knownEventTypes() or EVENT_SCHEMA_VERSION changed; change both together and update spec/pins/event-schema.json",
        ),
    ];
    // The manifest is built from the constants (COMPAT-03).
    let m = loom_spec::kernel_manifest();
    let mv = serde_json::to_value(&m).unwrap_or(Value::Null);
    let ok = mv["eventSchemaVersion"] == EVENT_SCHEMA_VERSION
        && mv["kernelAbiVersion"] == KERNEL_ABI_VERSION
        && mv["wireAbiVersion"] == WIRE_ABI_VERSION;
    out.push(if ok {
        CaseResult::pass(
            "gates",
            "manifest",
            "manifest-from-constants",
            ["COMPAT-03"],
        )
    } else {
        CaseResult::fail(
            "gates",
            "manifest",
            "manifest-from-constants",
            ["COMPAT-03"],
            "the manifest disagrees with the kernel constants",
            Failure::values(
                serde_json::json!(EVENT_SCHEMA_VERSION),
                mv["eventSchemaVersion"].clone(),
            ),
        )
    });
    // The deployment gate: the kernel's own versions pass; a next major fails; garbage is a usage error.
    let own: std::collections::BTreeMap<String, String> = [
        ("abi", KERNEL_ABI_VERSION),
        ("eventSchema", EVENT_SCHEMA_VERSION),
        ("wire", WIRE_ABI_VERSION),
        ("eventStore", EVENT_STORE_SPI_VERSION),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let next_major: std::collections::BTreeMap<String, String> =
        [("abi".to_string(), "2.0.0".to_string())].into();
    let garbage: std::collections::BTreeMap<String, String> =
        [("abi".to_string(), "one.two".to_string())].into();
    let codes = (
        loom_spec::check_compatibility(&own).exit_code(),
        loom_spec::check_compatibility(&next_major).exit_code(),
        loom_spec::check_compatibility(&garbage).exit_code(),
    );
    out.push(if codes == (0, 1, 2) {
        CaseResult::pass(
            "gates",
            "compat",
            "compat-gate-exit-codes",
            ["COMPAT-04", "COMPAT-05"],
        )
    } else {
        CaseResult::fail(
            "gates",
            "compat",
            "compat-gate-exit-codes",
            ["COMPAT-04", "COMPAT-05"],
            "exit codes for (own, next major, malformed) must be (0, 1, 2)",
            Failure::values(
                serde_json::json!([0, 1, 2]),
                serde_json::json!([codes.0, codes.1, codes.2]),
            ),
        )
    });
    out.push(CaseResult::skip_untestable(
        "gates",
        "g2",
        "g2-zero-overhead",
        ["CONF-06", "COMPAT-08"],
        "timing is never asserted here: run `cargo bench -p loom-kernel --bench g2` (see docs/performance.md)",
    ));
    out
}

// ---- fold ----------------------------------------------------------------------------

fn differ(expected: &ExecutionState, actual: &ExecutionState) -> Option<Failure> {
    let (e, a) = (expected.to_value(), actual.to_value());
    (canonical_string(&e) != canonical_string(&a)).then(|| Failure::values(e, a))
}

fn strip_seq(mut v: Value) -> Value {
    if let Some(Value::Object(d)) = v.get_mut("variables").and_then(|x| x.get_mut("_decisions")) {
        for e in d.values_mut() {
            if let Value::Object(e) = e {
                e.remove("seq");
            }
        }
    }
    v
}

/// The fold part: generated logs, every snapshot point, every older writer.
pub fn fold_part(seed: u64, n_logs: u64, bar: &ProgressBar) -> Vec<CaseResult> {
    let mut rng = gen::Rng::new(seed);
    let writers: Vec<FoldVersion> = (20..=26).filter_map(FoldVersion::from_minor).collect();
    bar.set_length(n_logs);
    let mut out = Vec::new();
    for n in 0..n_logs {
        bar.inc(1);
        let events = gen::log(&mut rng, n, 24);
        let full = fold(&events);
        let case = format!("log-{seed}-{n}");

        // FOLD-01: same bytes, folded twice and from re-decoded bytes.
        let text = serde_json::to_string(&events).unwrap_or_default();
        let redecoded =
            loom_kernel::decode_log(&text).map(|e| fold_owned(ExecutionState::new(), e));
        out.push(match redecoded {
            Ok(s) if s.canonical() == full.canonical() => CaseResult::pass(
                "fold",
                "determinism",
                format!("{case}/determinism"),
                ["FOLD-01"],
            ),
            Ok(s) => CaseResult::fail(
                "fold",
                "determinism",
                format!("{case}/determinism"),
                ["FOLD-01"],
                "the same log folded to different bytes",
                differ(&full, &s).unwrap_or_else(|| Failure::values(Value::Null, Value::Null)),
            ),
            Err(e) => CaseResult::error(
                "fold",
                "determinism",
                format!("{case}/determinism"),
                ["FOLD-01"],
                format!("re-decoding failed: {e}"),
            ),
        });

        // SNAP-01 and FOLD-06 for every k, current writer.
        let mut failure = None;
        let mut prefix = ExecutionState::new();
        for k in 0..events.len() {
            let kept = prefix.canonical();
            prefix = loom_kernel::fold_from(&prefix, &events[k..=k]);
            let record = SnapshotRecord::capture(&prefix, events[k].sequence);
            let restored = restore(&record, &events).unwrap_or_default();
            if let Some(f) = differ(&full, &restored) {
                failure = Some((k, f, "fold(snapshot_k, tail) != fold(events)"));
                break;
            }
            let _ = kept;
        }
        out.push(match failure {
            None => CaseResult::pass(
                "fold",
                "snapshot-equivalence",
                format!("{case}/every-k"),
                ["SNAP-01", "SNAP-02", "FOLD-06"],
            ),
            Some((k, f, msg)) => CaseResult::fail(
                "fold",
                "snapshot-equivalence",
                format!("{case}/every-k"),
                ["SNAP-01"],
                format!("{msg} at k={k}"),
                f.with_event_index(k as u64),
            ),
        });

        // SNAP-03/SNAP-10: an older writer's snapshots normalize to the full fold.
        for writer in &writers {
            if *writer == FoldVersion::CURRENT {
                continue;
            }
            if loom_kernel::snapshot::documented_exception(*writer, &events).is_some() {
                continue;
            }
            let mut bad = None;
            let full_v = if writer.has(24) {
                full.to_value()
            } else {
                strip_seq(full.to_value())
            };
            let mut old = ExecutionState::new();
            for k in 0..events.len() {
                old = fold_as(*writer, &old, &events[k..=k]);
                let record = SnapshotRecord::capture_as(*writer, &old, events[k].sequence);
                let got = match restore(&record, &events) {
                    Ok(s) => s.to_value(),
                    Err(e) => {
                        bad = Some((
                            k,
                            Failure::values(Value::Null, Value::String(e.to_string())),
                        ));
                        break;
                    }
                };
                let got = if writer.has(24) { got } else { strip_seq(got) };
                if canonical_string(&got) != canonical_string(&full_v) {
                    bad = Some((k, Failure::values(full_v.clone(), got)));
                    break;
                }
            }
            let id = format!("{case}/writer-{writer}");
            out.push(match bad {
                None => CaseResult::pass("fold", "versioned-snapshots", id, ["SNAP-03", "SNAP-10"]),
                Some((k, f)) => CaseResult::fail(
                    "fold",
                    "versioned-snapshots",
                    id,
                    ["SNAP-03"],
                    format!("a {writer} snapshot at k={k} does not normalize to the full fold"),
                    f.with_event_index(k as u64),
                ),
            });
        }

        // FOLD-04: an unknown kind inserted anywhere changes nothing.
        let at = rng.below(events.len() as u64 + 1) as usize;
        let mut with_unknown = events.clone();
        let mut extra = events[0].clone();
        extra.event_type = "SOMETHING_UNKNOWN".into();
        extra.metadata = None;
        with_unknown.insert(at, extra);
        let s = fold(&with_unknown);
        let same =
            s.status == full.status && s.frames == full.frames && s.variables == full.variables;
        out.push(if same {
            CaseResult::pass(
                "fold",
                "inert-unknown",
                format!("{case}/unknown-at-{at}"),
                ["FOLD-04"],
            )
        } else {
            CaseResult::fail(
                "fold",
                "inert-unknown",
                format!("{case}/unknown-at-{at}"),
                ["FOLD-04"],
                "an unknown kind changed the state",
                differ(&full, &s)
                    .unwrap_or_else(|| Failure::values(Value::Null, Value::Null))
                    .with_event_index(at as u64),
            )
        });

        // FOLD-07: status moves only on execution-level events.
        let mut st = ExecutionState::new();
        let mut moved_by = None;
        for (i, e) in events.iter().enumerate() {
            let before: Status = st.status;
            st = loom_kernel::fold_from(&st, std::slice::from_ref(e));
            if st.status != before && !e.event_type.starts_with("EXECUTION_") {
                moved_by = Some(i);
                break;
            }
        }
        out.push(match moved_by {
            None => CaseResult::pass(
                "fold",
                "status",
                format!("{case}/status-movers"),
                ["FOLD-07", "FOLD-09"],
            ),
            Some(i) => CaseResult::fail(
                "fold",
                "status",
                format!("{case}/status-movers"),
                ["FOLD-07"],
                format!("{} moved the status", events[i].event_type),
                Failure::values(Value::Null, Value::Null).with_event_index(i as u64),
            ),
        });

        // Normalization is idempotent (GAP-15).
        let once = normalize_snapshot_state(&SnapshotRecord::capture(&full, 0)).unwrap_or_default();
        if once.canonical() != full.canonical() {
            out.push(CaseResult::fail(
                "fold",
                "normalize",
                format!("{case}/normalize-no-op"),
                ["SNAP-03"],
                "normalizing a current snapshot changed it",
                differ(&full, &once).unwrap_or_else(|| Failure::values(Value::Null, Value::Null)),
            ));
        }
    }
    out
}

// ---- tests ---------------------------------------------------------------------------

fn tests_part(args: &CheckArgs) -> Vec<CaseResult> {
    let path = args.test_results.clone().unwrap_or_else(|| {
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| args.workspace.join("target"));
        target.join("nextest").join("ci").join("junit.xml")
    });
    let xml = match std::fs::read_to_string(&path) {
        Ok(x) => x,
        Err(_) => {
            return vec![CaseResult::skip_untestable(
                "tests",
                "junit",
                "test-results",
                ["CONF-01"],
                format!(
                    "no test results at {} (run ./scripts/test first, or pass --test-results FILE)",
                    path.display()
                ),
            )]
        }
    };
    let age_s = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .map_or(0, |d| d.as_secs());
    if !args.quiet {
        eprintln!("tests: crediting rules from {} (written {} min ago; rerun ./scripts/test after a change)", path.display(), age_s / 60);
    }
    let (results, total) = super::junit::results(&xml);
    if total == 0 {
        return vec![CaseResult::error(
            "tests",
            "junit",
            "test-results",
            ["CONF-01"],
            format!("{} holds no <testcase>", path.display()),
        )];
    }
    results
}

// ---- spec ----------------------------------------------------------------------------

fn spec_part(root: &Path, catalogue: &loom_spec::Catalogue) -> Vec<CaseResult> {
    if !root.join("spec").join("rules.toml").exists() {
        return vec![CaseResult::skip_untestable(
            "spec",
            "evidence",
            "evidence-check",
            ["CONF-01"],
            format!("no source tree at {} (pass --workspace)", root.display()),
        )];
    }
    let index = loom_spec::scan_evidence(root);
    let exemptions = loom_spec::load_exemptions().unwrap_or_default();
    let check = loom_spec::check_evidence(catalogue, &index, &exemptions);
    let mut out = vec![if check.is_ok() {
        CaseResult::pass("spec", "evidence", "evidence-check", ["CONF-01"]).with_message(format!(
            "{} of {} binding rules have evidence; {} exempted with a reason",
            check.covered, check.total, check.exempted
        ))
    } else {
        CaseResult::fail(
            "spec",
            "evidence",
            "evidence-check",
            ["CONF-01"],
            check.to_string(),
            Failure::values(Value::Null, Value::Null),
        )
    }];
    let problems = loom_spec::check_capabilities(root, catalogue, &index);
    out.push(if problems.is_empty() {
        CaseResult::pass(
            "spec",
            "capabilities",
            "maturity-backed-by-evidence",
            ["CONF-07", "CONF-09"],
        )
    } else {
        CaseResult::fail(
            "spec",
            "capabilities",
            "maturity-backed-by-evidence",
            ["CONF-07"],
            problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            Failure::values(Value::Null, Value::Null),
        )
    });
    out
}
