//! No silent death: an adapter that exits before it reads `hello` (a command that ends at
//! once, a path that does not exist, a file that is not executable, a program that closes
//! its input and lingers) is a handshake error of the run. Every command that starts an
//! adapter must then print what happened, write its report and exit 1, every time.
//!
//! The race is real: loom writes `hello` into a pipe whose reader may or may not have
//! exited yet, so a single run proves little. Each adapter runs several times through
//! each command (`LOOM_EARLY_EXIT_RUNS`, or the count in [`COMMANDS`]); the adapter that
//! closes its input first makes the write fail every time, so that path is never left
//! to chance.

mod common;

use common::{code, scratch};
use std::path::Path;
use std::process::Command;

/// The commands that start an adapter, with how many runs of each adapter they get when
/// `LOOM_EARLY_EXIT_RUNS` is not set: `check --kernel-cmd` starts the adapter three
/// times per run (vectors, golden replay, campaign) and loads the vector set, so it gets
/// fewer runs of its own.
const COMMANDS: [(&str, usize); 4] = [
    ("conform-store", 4),
    ("check-store", 3),
    ("check-kernel", 2),
    ("sim-store", 3),
];

/// The adapters, each with what it is: (name, command line).
fn adapters(dir: &Path) -> Vec<(&'static str, String)> {
    let not_executable = dir.join("adapter.py");
    std::fs::write(&not_executable, "print('never run')\n").unwrap();
    vec![
        ("exits at once", "true".to_string()),
        (
            "a wrong path",
            dir.join("no-such-adapter").display().to_string(),
        ),
        ("not executable", not_executable.display().to_string()),
        (
            "closes its input and lingers",
            "exec 0<&-; sleep 5".to_string(),
        ),
    ]
}

/// The arguments of command `name` for adapter command `cmd` and report folder `out`.
fn command(name: &str, cmd: &str, out: &str) -> Vec<String> {
    let store = format!("cmd:{cmd}");
    let words: Vec<&str> = match name {
        "conform-store" => vec!["conform", "--store", &store],
        "check-store" => vec!["check", "--store", &store],
        "check-kernel" => vec!["check", "--kernel-cmd", cmd],
        "sim-store" => vec!["sim", "--store", &store, "--seeds", "2"],
        other => panic!("no command {other}"),
    };
    words
        .into_iter()
        .chain(["--quiet", "--out", out])
        .map(str::to_string)
        .collect()
}

/// Runs every early-exit adapter through command `name`, `runs` times each (or
/// `LOOM_EARLY_EXIT_RUNS`), and requires exit 1, a verifiable report naming the failed
/// handshake, and the report's path on standard output every time.
fn every_run_is_reported(name: &str, runs: usize) {
    let runs: usize = std::env::var("LOOM_EARLY_EXIT_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(runs);
    let dir = scratch(name);
    let mut checked = 0;
    for (what, cmd) in adapters(&dir) {
        for run in 0..runs {
            let out = dir.join(format!("out-{checked}"));
            let args = command(name, &cmd, out.to_str().unwrap());
            let o = Command::new(env!("CARGO_BIN_EXE_loom"))
                .args(&args)
                .current_dir(&dir)
                .output()
                .unwrap();
            let said = format!(
                "loom {} ({what}, run {run}): exit {:?}\nstdout:\n{}\nstderr:\n{}",
                args.join(" "),
                o.status,
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(code(&o), 1, "{said}");
            let report = loom_report::Report::load(out.join("report.json"))
                .unwrap_or_else(|e| panic!("no readable report: {e}\n{said}"));
            assert!(report.verify_digest(), "the report verifies: {said}");
            assert!(!report.summary.ok, "{said}");
            let handshake = report.results.iter().any(|r| {
                r.status.is_failure()
                    && r.message
                        .as_deref()
                        .is_some_and(|m| m.contains("handshake failed"))
            });
            assert!(handshake, "the report names the failed handshake: {said}");
            assert!(
                String::from_utf8_lossy(&o.stdout).contains("report.json"),
                "the report's path is printed: {said}"
            );
            std::fs::remove_dir_all(&out).unwrap();
            checked += 1;
        }
    }
    assert_eq!(checked, runs * 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn runs_of(name: &str) -> usize {
    COMMANDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, r)| *r)
        .unwrap()
}

#[test]
fn conform_reports_an_adapter_that_exits_early() {
    every_run_is_reported("conform-store", runs_of("conform-store"));
}

#[test]
fn check_store_reports_an_adapter_that_exits_early() {
    every_run_is_reported("check-store", runs_of("check-store"));
}

#[test]
fn check_kernel_cmd_reports_an_adapter_that_exits_early() {
    every_run_is_reported("check-kernel", runs_of("check-kernel"));
}

#[test]
fn sim_store_reports_an_adapter_that_exits_early() {
    every_run_is_reported("sim-store", runs_of("sim-store"));
}
