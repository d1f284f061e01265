//! `loom conform --explore` as a store author runs it, through the store protocol: the
//! campaign against the Python example adapter with one planted bug the kits cannot see
//! (`buggy-stores/python/buggy_adapter.py state-delete-at-version-zero`: a durable-state
//! delete expecting version 0 deletes whatever version the key is at) finds it within a
//! stated budget, exploring every SPI the adapter implements,
//! names the rule and writes a replay file; `loom conform --replay` of that file fails
//! again against the buggy adapter and passes once the bug is fixed (the faithful
//! variant of the same adapter). The faithful adapter explored from the same seed
//! passes and writes no replay file.

use std::path::Path;
use std::process::Output;

mod common;
use common::{buggy_variant, loom, scratch, show};

/// Cases the campaign gets to find the planted bug (from this seed it needs 89; seeds 1
/// and 2 need 44 and 21).
const EXPLORE_BUDGET_CASES: &str = "400";
/// The campaign seed of this test.
const EXPLORE_SEED: &str = "12";
/// The file `loom conform --explore` writes next to the report (src/cli/explore.rs).
const REPLAY_FILE_NAME: &str = "explore-replay.json";

fn explore(store: &str, out: &Path) -> Output {
    loom(&[
        "conform",
        "--store",
        store,
        "--explore",
        "--cases",
        EXPLORE_BUDGET_CASES,
        "--seed",
        EXPLORE_SEED,
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ])
}

fn replay(store: &str, file: &Path, out: &Path) -> Output {
    loom(&[
        "conform",
        "--store",
        store,
        "--replay",
        file.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ])
}

fn spi_20_explore_finds_a_planted_adapter_bug_and_its_replay_fails_until_fixed(python: &str) {
    let buggy = buggy_variant(python, "state-delete-at-version-zero", None);
    let fixed = buggy_variant(python, "faithful", None);
    let found = scratch("found");
    let o = explore(&buggy, &found);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("SPI-20"), "{}", show(&o));
    let file = found.join(REPLAY_FILE_NAME);
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", file.display(), show(&o)));
    assert!(text.contains("stateDelete"), "{text}");

    let again = replay(&buggy, &file, &scratch("again"));
    assert_eq!(again.status.code(), Some(1), "{}", show(&again));
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("SPI-20"),
        "{}",
        show(&again)
    );
    let passes = replay(&fixed, &file, &scratch("fixed"));
    assert_eq!(passes.status.code(), Some(0), "{}", show(&passes));

    let clean = scratch("faithful");
    let o = explore(&fixed, &clean);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(!clean.join(REPLAY_FILE_NAME).exists());
}

/// The example adapter behind the hostile proxy (tests/adapters/hostile.py), meeting
/// `mode` at request `n` in its first process only. From seed 12, request 47 is a step
/// of the third case (not a `reset` or the lease probe at a case's start, which are
/// harness errors); a change to the generator may move it.
fn hostile(python: &str, mode: &str, n: u32) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    format!(
        "cmd:{python} {root}/tests/adapters/hostile.py {mode} {n} -- {python} {root}/examples/python-sqlite-store/adapter.py"
    )
}

fn explore_with(store: &str, out: &Path, once: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "conform",
        "--store",
        store,
        "--explore",
        "--cases",
        "20",
        "--seed",
        EXPLORE_SEED,
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_loom"));
    cmd.args(&args).env("LOOM_TEST_ONCE", once);
    cmd.output().expect("loom runs")
}

/// A step the adapter does not answer in time is a `timeout` naming the step and its
/// request (method and id), with a replay file; the campaign does not shrink it.
fn explore_reports_a_hang_as_a_timeout_naming_the_step_and_its_request(python: &str) {
    let out = scratch("hang");
    let once = scratch("hang-once").join("once");
    let o = explore_with(
        &hostile(python, "hang", 47),
        &out,
        &once,
        &["--timeout-ms", "400"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("timeout at step"), "{}", show(&o));
    assert!(
        stdout.contains("(id "),
        "the request is named: {}",
        show(&o)
    );
    assert!(
        stdout.contains("400 ms"),
        "the limit is named: {}",
        show(&o)
    );
    assert!(out.join(REPLAY_FILE_NAME).exists(), "{}", show(&o));
}

/// An adapter that dies during the campaign is reported with the operation, its own
/// stderr and a replay file, not as restarts exhausted.
fn explore_reports_an_adapter_crash_with_its_operation_stderr_and_a_replay_file(python: &str) {
    let out = scratch("crash");
    let once = scratch("crash-once").join("once");
    let o = explore_with(&hostile(python, "partial-exit", 47), &out, &once, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("the adapter failed at step"),
        "{}",
        show(&o)
    );
    assert!(
        stdout.contains("hostile proxy"),
        "its stderr is quoted: {}",
        show(&o)
    );
    assert!(!stdout.contains("restarted 32 times"), "{}", show(&o));
    let file = out.join(REPLAY_FILE_NAME);
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", file.display(), show(&o)));
    assert!(text.contains("\"fault\": \"crash\""), "{text}");
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, Tool};
    run(vec![
        needs(
            Tool::Python3,
            "spi_20_explore_finds_a_planted_adapter_bug_and_its_replay_fails_until_fixed",
            spi_20_explore_finds_a_planted_adapter_bug_and_its_replay_fails_until_fixed,
        ),
        needs(
            Tool::Python3,
            "explore_reports_a_hang_as_a_timeout_naming_the_step_and_its_request",
            explore_reports_a_hang_as_a_timeout_naming_the_step_and_its_request,
        ),
        needs(
            Tool::Python3,
            "explore_reports_an_adapter_crash_with_its_operation_stderr_and_a_replay_file",
            explore_reports_an_adapter_crash_with_its_operation_stderr_and_a_replay_file,
        ),
    ])
}
