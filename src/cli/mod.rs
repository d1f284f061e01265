//! Subcommand implementations.

pub mod check;
pub mod conform;
pub mod docs_cmd;
pub mod explore;
pub mod fold_cmd;
pub mod internal;
pub mod manifest;
pub mod report_cmd;
pub mod rules;
pub mod sim;
pub mod store_adapter;
pub mod vectors;
pub mod vectors_fuzz;

/// Time limits for a foreign adapter (a `cmd:` store or a `--kernel-cmd` kernel), shared
/// by every command that runs one.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct AdapterArgs {
    /// Per-call time limit for a foreign adapter, in milliseconds (a hang is a `timeout`
    /// result and the adapter is ended and restarted).
    #[arg(long, value_name = "MS", default_value_t = loom_process::CALL_TIMEOUT_MS_DEFAULT)]
    pub timeout_ms: u64,
    /// Time limit for a foreign adapter to start and answer `hello`, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = loom_process::HELLO_TIMEOUT_MS_DEFAULT)]
    pub hello_timeout_ms: u64,
}

impl AdapterArgs {
    /// The limits as the harness takes them.
    pub fn limits(&self) -> loom_harness::AdapterLimits {
        loom_harness::AdapterLimits {
            timeout_ms: self.timeout_ms,
            hello_timeout_ms: self.hello_timeout_ms,
        }
    }
}

impl Default for AdapterArgs {
    fn default() -> Self {
        AdapterArgs {
            timeout_ms: loom_process::CALL_TIMEOUT_MS_DEFAULT,
            hello_timeout_ms: loom_process::HELLO_TIMEOUT_MS_DEFAULT,
        }
    }
}

/// When a run that runs cases stops: `--fail-fast` and `--max-fail N`, shared by every
/// command that runs cases (`check`, `conform`, `vectors run`).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct StopArgs {
    /// Stop at the first failing case (the same as --max-fail 1); the cases not run are
    /// reported as skipped, and the run is partial.
    #[arg(long, conflicts_with = "max_fail")]
    pub fail_fast: bool,
    /// Stop after N failing cases (fail, error or timeout); the cases not run are
    /// reported as skipped, and the run is partial.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_fail: Option<u64>,
}

impl StopArgs {
    /// The failure limit these flags set, if any.
    pub fn max_fail(&self) -> Option<u64> {
        if self.fail_fast {
            Some(1)
        } else {
            self.max_fail
        }
    }

    /// The shared budget of one run.
    pub fn budget(&self) -> loom_report::FailureBudget {
        loom_report::FailureBudget::new(self.max_fail())
    }
}

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: the check ran and found a failure (or an incompatibility).
pub const EXIT_FAILED: u8 = 1;
/// Exit code: bad usage or unreadable input.
pub const EXIT_USAGE: u8 = 2;

/// Where runs write when `--out` is not given: this folder of the directory `loom` runs
/// in, one sub-folder per run (`loom-reports/<command>-<UTC time>/`). It never depends
/// on where `loom` was built.
pub const REPORTS_DIR: &str = "loom-reports";

/// The name of a run folder: `<command>-<YYYYMMDD>T<HHMMSS>Z` (UTC), the one scheme
/// every command uses, where `<command>` is the words of the subcommand joined by `-`
/// (`check`, `conform`, `sim`, `vectors-run`, `vectors-fuzz`); each `--out` help names
/// its default folder, and a test checks the help against this scheme.
pub fn run_folder_name(command: &str, epoch_secs: u64) -> String {
    let days = (epoch_secs / 86_400) as i64;
    let rem = epoch_secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{command}-{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The directory a run writes its report into, created and checked now, before the run
/// starts: `out` when given, else a fresh `loom-reports/<command>-<time>/` (with `-2`,
/// `-3`, … when two runs start in the same second). The error says which directory
/// cannot be written and why.
pub fn prepare_out(
    out: Option<&std::path::Path>,
    command: &str,
) -> Result<std::path::PathBuf, String> {
    let cannot = |dir: &std::path::Path, e: std::io::Error| {
        format!("cannot write the report into {}: {e}", dir.display())
    };
    let dir = match out {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| cannot(dir, e))?;
            dir.to_path_buf()
        }
        None => {
            let root = std::path::Path::new(REPORTS_DIR);
            if !root.exists() {
                CREATED_REPORTS_DIR.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            std::fs::create_dir_all(root).map_err(|e| cannot(root, e))?;
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let name = run_folder_name(command, secs);
            let mut n = 1u32;
            loop {
                let dir = if n == 1 {
                    root.join(&name)
                } else {
                    root.join(format!("{name}-{n}"))
                };
                match std::fs::create_dir(&dir) {
                    Ok(()) => break dir,
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                    Err(e) => return Err(cannot(&dir, e)),
                }
            }
        }
    };
    // A directory can exist and still refuse files (permissions, a read-only mount).
    let probe = dir.join(format!(".loom-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| cannot(&dir, e))?;
    let _ = std::fs::remove_file(&probe);
    Ok(dir)
}

/// Whether [`prepare_out`] created [`REPORTS_DIR`] in this process (so a run that gives
/// up may take it away again).
static CREATED_REPORTS_DIR: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Undoes [`prepare_out`] for a run that stopped before writing anything: removes the
/// run folder if it is still empty, and `loom-reports/` too when this process created
/// it and it is empty. Nothing with files in it is ever removed.
pub fn abandon_out(dir: &std::path::Path) {
    if std::fs::remove_dir(dir).is_err() {
        return;
    }
    if CREATED_REPORTS_DIR.load(std::sync::atomic::Ordering::Relaxed) {
        let _ = std::fs::remove_dir(REPORTS_DIR); // only if empty
    }
}

/// A path as the user should see it: absolute, so it can be pasted from any directory.
pub fn shown(path: &std::path::Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// " (judged: fold, digest; not claimed: runtime, ingress, emit)" for a report whose
/// primary subject states what it claims, else nothing: the verdict says what it is about.
pub fn judged_suffix(report: &loom_report::Report) -> String {
    report
        .primary_subject()
        .and_then(|s| s.claims.as_ref())
        .map(|c| format!(" ({})", c.sentence()))
        .unwrap_or_default()
}

/// At most this many resolution differences are printed; the report lists them all.
pub const RESOLUTION_DIFFERENCES_PRINTED_MAX: usize = 20;

/// Prints the results that differ only from the reference's resolutions of open points
/// the kernel does not claim: neither failures nor passes, each naming its GAP.
pub fn print_resolution_differences(results: &[loom_report::CaseResult]) {
    let differing: Vec<&loom_report::CaseResult> = results
        .iter()
        .filter(|r| r.status == loom_report::Status::ResolutionDifference)
        .collect();
    if differing.is_empty() {
        return;
    }
    println!(
        "\nresolution differences ({}; not failures, not passes):",
        differing.len()
    );
    for r in differing.iter().take(RESOLUTION_DIFFERENCES_PRINTED_MAX) {
        println!(
            "  {} [{}] {}",
            r.case_id,
            r.rules.join(", "),
            r.message.as_deref().unwrap_or("")
        );
    }
    if differing.len() > RESOLUTION_DIFFERENCES_PRINTED_MAX {
        println!(
            "  … and {} more (see the report)",
            differing.len() - RESOLUTION_DIFFERENCES_PRINTED_MAX
        );
    }
}

/// Prints where a report was written, the same way in every command: the HTML page to
/// open, then the JSON (the source of truth) with its digest.
pub fn print_report_paths(paths: &loom_report::Paths, digest: &str) {
    println!("\nreport: {}", shown(&paths.html));
    println!(
        "        {} (JSON, the source of truth; digest {digest})",
        shown(&paths.json)
    );
}

/// `text` as one shell word (single-quoted when it needs quoting), for the command
/// lines reports print.
pub use loom_harness::shell::word as shell_word;

/// This process's command line as a shell would need it typed: every argument a
/// [`shell_word`], so the report's `environment.command` can be pasted and run.
pub fn command_line() -> String {
    quoted_command(std::env::args())
}

/// `args` as one pasteable shell command line.
pub use loom_harness::shell::command as quoted_command;

/// The command that runs one vector again.
pub fn reproduce_vector(
    case_id: &str,
    kernel_cmd: Option<&str>,
    vectors: Option<&std::path::Path>,
) -> String {
    let mut cmd = format!("loom vectors run --filter {}", shell_word(case_id));
    if let Some(k) = kernel_cmd {
        cmd.push_str(&format!(" --kernel-cmd {}", shell_word(k)));
    }
    if let Some(d) = vectors {
        cmd.push_str(&format!(
            " --vectors {}",
            shell_word(&d.display().to_string())
        ));
    }
    cmd
}

/// The command that runs one kit case again.
pub fn reproduce_kit(store: &str, kit: &str, case_id: &str) -> String {
    format!(
        "loom conform --store {} --kit {} --case {}",
        shell_word(store),
        shell_word(kit),
        shell_word(case_id)
    )
}

/// The command that runs one simulator seed again, for a case named `seed-N/…`.
pub fn reproduce_sim(case_id: &str, stormy: bool) -> Option<String> {
    let seed: u64 = case_id
        .strip_prefix("seed-")?
        .split('/')
        .next()?
        .parse()
        .ok()?;
    Some(format!(
        "loom sim --from {seed} --seeds 1{}",
        if stormy { " --stormy" } else { "" }
    ))
}

/// Sets `reproduce` on every failing result that has none, from `command`.
pub fn set_reproduce(
    results: &mut [loom_report::CaseResult],
    command: impl Fn(&loom_report::CaseResult) -> Option<String>,
) {
    for r in results.iter_mut() {
        if (r.status.is_failure() || r.status == loom_report::Status::Xfail)
            && r.reproduce.is_none()
        {
            r.reproduce = command(r);
        }
    }
}

/// When standard error is not a terminal (a CI log), a progress line is printed at most
/// this often: a terminal's line is redrawn in place with `\r`, but a log keeps every
/// redraw, which made `vectors fuzz` write 78 KB per 20 s into CI logs.
pub const PROGRESS_LINE_INTERVAL_MS: u64 = 10_000;

/// One line of progress on standard error: redrawn in place on a terminal, else printed
/// as a plain line every [`PROGRESS_LINE_INTERVAL_MS`] (and once at the end).
pub struct ProgressLine {
    quiet: bool,
    terminal: bool,
    last_printed: Option<std::time::Instant>,
    pending: Option<String>,
}

impl ProgressLine {
    /// Progress on standard error, or none at all when `quiet`.
    pub fn new(quiet: bool) -> Self {
        use std::io::IsTerminal;
        Self::with_terminal(quiet, std::io::stderr().is_terminal())
    }

    fn with_terminal(quiet: bool, terminal: bool) -> Self {
        ProgressLine {
            quiet,
            terminal,
            last_printed: None,
            pending: None,
        }
    }

    /// What the line says now; returns what was written (for tests).
    pub fn update(&mut self, text: &str) -> Option<String> {
        if self.quiet {
            return None;
        }
        let shown = if self.terminal {
            format!("\r{text}   ")
        } else {
            let due = self.last_printed.is_none_or(|t| {
                t.elapsed() >= std::time::Duration::from_millis(PROGRESS_LINE_INTERVAL_MS)
            });
            if !due {
                self.pending = Some(text.to_string());
                return None;
            }
            self.last_printed = Some(std::time::Instant::now());
            self.pending = None;
            format!("{text}\n")
        };
        eprint!("{shown}");
        Some(shown)
    }

    /// Ends the line: a terminal gets its newline, a log the last state not yet printed.
    pub fn finish(&mut self) {
        if self.quiet {
            return;
        }
        if self.terminal {
            eprintln!();
        } else if let Some(text) = self.pending.take() {
            eprintln!("{text}");
        }
    }
}

/// Reads a file, or standard input for "-".
pub fn read_input(path: &str) -> Result<String, String> {
    if path == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| format!("reading standard input: {e}"))?;
        Ok(s)
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_folders_are_named_by_command_and_utc_time() {
        assert_eq!(run_folder_name("check", 0), "check-19700101T000000Z");
        assert_eq!(run_folder_name("sim", 951_782_400), "sim-20000229T000000Z");
        assert_eq!(
            run_folder_name("vectors", 1_700_000_000),
            "vectors-20231114T221320Z"
        );
        assert_eq!(
            run_folder_name("conform", 1_709_251_199),
            "conform-20240229T235959Z"
        );
    }

    #[test]
    fn shell_words_survive_a_shell() {
        assert_eq!(shell_word("fold-001"), "fold-001");
        assert_eq!(shell_word("cmd:node a.mjs"), "'cmd:node a.mjs'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(
            reproduce_sim("seed-53/REPLAY-10", true).as_deref(),
            Some("loom sim --from 53 --seeds 1 --stormy")
        );
        assert_eq!(reproduce_sim("nope", false), None);
        // The report's command line pastes back into a shell as the same arguments.
        let args = [
            "loom",
            "conform",
            "--store",
            "cmd:python3 my adapter.py",
            "--case",
            "it's",
        ];
        assert_eq!(
            quoted_command(args.iter().map(|a| a.to_string())),
            r"loom conform --store 'cmd:python3 my adapter.py' --case 'it'\''s'"
        );
    }

    #[test]
    fn progress_in_a_log_is_plain_lines_at_an_interval() {
        let mut log = ProgressLine::with_terminal(false, false);
        let first = log.update("fuzz: 1 cases").unwrap();
        assert_eq!(first, "fuzz: 1 cases\n", "no carriage return in a log");
        // The next updates inside the interval are held back, not written.
        assert_eq!(log.update("fuzz: 2 cases"), None);
        assert_eq!(log.pending.as_deref(), Some("fuzz: 2 cases"));
        let mut tty = ProgressLine::with_terminal(false, true);
        assert_eq!(tty.update("fuzz: 1 cases").unwrap(), "\rfuzz: 1 cases   ");
        assert!(
            tty.update("fuzz: 2 cases").is_some(),
            "a terminal redraws each time"
        );
        assert_eq!(ProgressLine::with_terminal(true, false).update("x"), None);
    }

    #[test]
    fn prepare_out_refuses_a_directory_it_cannot_create() {
        let file = std::env::temp_dir().join(format!("loom-out-file-{}", std::process::id()));
        std::fs::write(&file, b"x").unwrap();
        let err = prepare_out(Some(&file.join("sub")), "check").unwrap_err();
        assert!(err.contains("cannot write the report into"), "{err}");
        std::fs::remove_file(&file).unwrap();
    }
}
