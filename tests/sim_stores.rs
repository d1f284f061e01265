//! `loom sim --store 'cmd:…'` as a store author's test: every SPI goes to the store,
//! each host has its own adapter process on one `--db` file, adapter processes are
//! killed (SIGKILL) at points the seed draws, and the store's answers are checked as
//! they arrive. Planted bugs (buggy-stores/python/buggy_adapter.py) that only a
//! deployment shows: a write-behind cache that loses acknowledged appends when its
//! process is killed (SPI-23), a fence-token cache that drops entries (PLACE-05), a
//! replica three reads behind (SPI-23), a claim without compare-and-set (PLACE-02) and a
//! cancel that keeps the timer, so it fires twice (REPLAY-10), and a `fenced` refusal
//! naming the presented token as current (PLACE-05, which only the per-execution
//! linearizability check of `simulator/src/linear.rs` sees), and an append whose commit
//! timed out, answered `backend`, then removed though other hosts had read it (SPI-23,
//! which only that check sees, and only since it judges writes of unknown outcome both
//! ways). Each is caught within
//! [`SEEDS_BUDGET`] seeds by its rule, and the printed replay command fails again (a real
//! store may decide a race the other way, so it is run up to [`REPLAY_ATTEMPTS`] times);
//! the faithful adapter passes the same seeds with kills.

use std::process::{Command, Output};

mod common;
use common::{buggy_variant, code, loom, scratch, show};

/// Seeds each planted bug must be caught within (docs/simulator.md states it). A race
/// inside real adapter processes is not fixed by the seed: claim-without-cas, caught at
/// seed 1 when measured, once passed seeds 0-3 in a fresh-clone CI run, hence 8.
const SEEDS_BUDGET: u64 = 8;
/// The sweep stops after this many failing seeds: their replay commands are the ones
/// tried, and a caught bug need not run the rest of the budget.
const FAILING_SEEDS_MAX: u64 = 2;
/// Runs of each printed replay command; one run of one of them must fail again.
const REPLAY_ATTEMPTS: usize = 3;

/// (bug, the rule that must catch it).
const BUGS: [(&str, &str); 7] = [
    ("write-behind-appends", "SPI-23"),
    ("fence-cache-drops", "PLACE-05"),
    ("stale-replica-reads", "SPI-23"),
    ("claim-without-cas", "PLACE-02"),
    ("timer-cancel-keeps", "REPLAY-10"),
    // Only the per-execution linearizability check sees it: a zombie is still refused,
    // but the refusal names the token it presented as the current one.
    ("fenced-current-wrong", "PLACE-05"),
    // Only the linearizability check with writes of unknown outcome judged both ways
    // sees it: the write it undoes was answered `backend`, so every other check (and
    // that check before, which left such executions not judged) lets it pass.
    ("timed-out-append-undone", "SPI-23"),
];

/// The store string of `bug` on a file per seed, with a lease shorter than a run.
fn store_of(bug: &str, dir: &std::path::Path) -> String {
    let db = dir.join("s-{seed}.db");
    format!(
        "{} --lease-ms 1000",
        buggy_variant("python3", bug, Some(&db))
    )
}

fn sweep(store: &str, out: &std::path::Path) -> Output {
    loom(&[
        "sim",
        "--store",
        store,
        "--seeds",
        &SEEDS_BUDGET.to_string(),
        "--jobs",
        "2",
        "--quiet",
        "--no-shrink",
        "--max-fail",
        &FAILING_SEEDS_MAX.to_string(),
        "--out",
        out.to_str().unwrap(),
    ])
}

/// The `loom sim --seed …` commands the failing seeds' lines print, in order.
fn replay_commands(stdout: &str) -> Vec<String> {
    const MARK: &str = "reproduce with `";
    stdout
        .lines()
        .filter_map(|line| {
            let start = line.find(MARK)? + MARK.len();
            let end = start + line[start..].find('`')?;
            Some(line[start..end].to_owned())
        })
        .collect()
}

fn caught(bug: &str, rule: &str) -> Result<(), String> {
    let dir = scratch(bug);
    let store = store_of(bug, &dir);
    let o = sweep(&store, &dir.join("out"));
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    if code(&o) != 1 || !stdout.contains(&format!("  {rule} ")) {
        return Err(format!(
            "{bug}: not caught by {rule} within {SEEDS_BUDGET} seeds:\n{}",
            show(&o)
        ));
    }
    let commands = replay_commands(&stdout);
    if commands.is_empty() {
        return Err(format!("{bug}: no replay command printed:\n{stdout}"));
    }
    // The store is a real process, so a seed replays its schedule but not the timing
    // inside the adapter: a seed whose failure hangs on that timing (fenced-current-wrong
    // at seed 0 failed again in 1 of 6 runs on a quiet machine, seeds 1-3 in every run)
    // may pass when replayed. Each failing seed's command gets REPLAY_ATTEMPTS runs; one
    // of them must fail again by the same rule.
    let mut last = String::new();
    for cmd in &commands {
        let Some(args) = cmd.strip_prefix("loom ") else {
            return Err(format!(
                "{bug}: the replay command is not a loom command: {cmd}"
            ));
        };
        for _ in 1..=REPLAY_ATTEMPTS {
            let _ = std::fs::remove_dir_all(dir.join("replay"));
            let line = format!(
                "{} {args} --quiet --no-shrink --out {}",
                env!("CARGO_BIN_EXE_loom"),
                dir.join("replay").display()
            );
            let r = Command::new("sh").arg("-c").arg(&line).output().unwrap();
            let out = String::from_utf8_lossy(&r.stdout).to_string();
            if code(&r) == 1 && out.contains(&format!("  {rule} ")) {
                let _ = std::fs::remove_dir_all(&dir);
                return Ok(());
            }
            last = show(&r);
        }
    }
    Err(format!(
        "{bug}: none of the {} printed replay commands failed again by {rule} in {REPLAY_ATTEMPTS} runs each ({}); the last run:\n{last}",
        commands.len(),
        commands.join("; ")
    ))
}

#[test]
fn place_02_place_05_replay_10_spi_23_planted_store_bugs_are_caught_and_replay() {
    let failures: Vec<String> = std::thread::scope(|scope| {
        let runs: Vec<_> = BUGS
            .iter()
            .map(|(bug, rule)| scope.spawn(move || caught(bug, rule)))
            .collect();
        runs.into_iter()
            .filter_map(|r| r.join().expect("a bug's run").err())
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The control: the faithful adapter on a file per seed passes the bugs' seeds with its
/// processes killed, and the summary shows the kills and the history checks happened.
#[test]
fn place_04_spi_23_the_faithful_python_store_passes_with_kills() {
    let dir = scratch("faithful");
    let o = sweep(&store_of("faithful", &dir), &dir.join("out"));
    assert_eq!(code(&o), 0, "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let count = |key: &str| summary_count(&stdout, key);
    assert!(count("adapter-kills=") > 0, "no kill happened: {stdout}");
    assert!(count("history-checks=") > 0, "no history check: {stdout}");
    assert!(!stdout.contains("one process shared"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The number after `key` (`adapter-kills=`) in a sweep's summary, 0 when absent.
fn summary_count(stdout: &str, key: &str) -> u64 {
    stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Seeds the control `commit-times-out` runs: every process's 5th append is of unknown
/// outcome, so each seed has several, and two seeds judge some both ways.
const COMMIT_TIMEOUT_SEEDS: u64 = 2;

/// The control of `timed-out-append-undone`: the same appends answered `backend` though
/// they committed, kept. Writes of unknown outcome are allowed: the seeds pass, with
/// such writes judged both ways (counted in `linear-unknown-writes`) rather than their
/// executions left not judged.
#[test]
fn spi_23_place_05_a_store_whose_commits_time_out_passes_with_its_unknown_writes_judged() {
    let dir = scratch("commit-times-out");
    let o = loom(&[
        "sim",
        "--store",
        &store_of("commit-times-out", &dir),
        "--seeds",
        &COMMIT_TIMEOUT_SEEDS.to_string(),
        "--jobs",
        "2",
        "--quiet",
        "--no-shrink",
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        summary_count(&stdout, "linear-unknown-writes=") > 0,
        "no write of unknown outcome was judged: {stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An adapter that keeps its data in its process (no `--db`) answers neither
/// `sharedBackend` nor `durable`: every host shares its one process, it is never
/// killed, and the summary says so.
#[test]
fn an_adapter_without_a_shared_backend_gets_one_process_and_no_kills() {
    let dir = scratch("memory");
    let store = format!(
        "{} --lease-ms 1000",
        buggy_variant("python3", "faithful", None)
    );
    let o = loom(&[
        "sim",
        "--store",
        &store,
        "--seeds",
        "1",
        "--quiet",
        "--no-shrink",
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("adapter-kills=0 "), "{stdout}");
    assert!(
        stdout.contains("one process shared by every host in 1 seed(s)"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The control of a store that crashes once (`crashes-once`: client 1's process exits
/// at its 40th request, after everything it acknowledged was committed): the seed
/// passes, no call that failed is taken for lost data, and the crash, with the line the
/// adapter wrote on stderr, is in the seed's trace and counted in the summary.
#[test]
fn spi_23_a_durable_store_that_crashes_once_passes_and_its_crash_is_reported() {
    let dir = scratch("crashes-once");
    let out = dir.join("out");
    let o = loom(&[
        "sim",
        "--store",
        &store_of("crashes-once", &dir),
        "--seed",
        "3",
        "--quiet",
        "--no-shrink",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!stdout.contains("adapter-faults=0 "), "{stdout}");
    assert!(
        dir.join("s-3.db.crashed").exists(),
        "the control never crashed: {stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `loom sim … replay FILE` command a failing seed's line prints.
fn replay_file_command(stdout: &str) -> Option<String> {
    let start = stdout.find("run with `")? + "run with `".len();
    let end = start + stdout[start..].find('`')?;
    Some(stdout[start..end].to_owned())
}

/// `loom sim replay` takes `--restart-backend` (issue 26): a failing seed of a run with
/// backend restarts prints a replay command that carries it, and that command fails
/// again and runs the restart command at the drawn points (it appends a line to a
/// marker file each time); the same replay without it restarts nothing.
#[test]
fn place_05_the_printed_replay_command_carries_restart_backend_and_restarts() {
    let dir = scratch("replay-restart");
    let store = store_of("fenced-current-wrong", &dir);
    let marker = dir.join("restarts.txt");
    let restart = format!("echo restarted >> {}", marker.display());
    let o = loom(&[
        "sim",
        "--store",
        &store,
        "--seed",
        "1",
        "--restart-backend",
        &restart,
        "--quiet",
        "--no-shrink",
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(code(&o), 1, "{}", show(&o));
    let cmd = replay_file_command(&stdout).expect("a replay command");
    assert!(cmd.contains(" --restart-backend "), "{cmd}");
    let args = cmd.strip_prefix("loom ").expect("a loom command");
    let run = |args: &str| {
        let _ = std::fs::remove_file(&marker);
        let line = format!("{} {args}", env!("CARGO_BIN_EXE_loom"));
        Command::new("sh").arg("-c").arg(&line).output().unwrap()
    };
    let restarts = |out: &str| -> u64 {
        out.split_whitespace()
            .find_map(|w| w.strip_prefix("backend-restarts="))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let mut failed_again = false;
    for _ in 0..REPLAY_ATTEMPTS {
        let r = run(args);
        let out = String::from_utf8_lossy(&r.stdout).to_string();
        let n = restarts(&out);
        assert!(n >= 1, "the replay restarted nothing: {}", show(&r));
        let lines = std::fs::read_to_string(&marker).unwrap_or_default();
        assert_eq!(lines.lines().count() as u64, n, "{}", show(&r));
        if code(&r) == 1 && out.contains("  PLACE-05 ") {
            failed_again = true;
            break;
        }
    }
    assert!(failed_again, "`{cmd}` did not fail again by PLACE-05");
    let without = args.split(" --restart-backend ").next().unwrap().to_owned()
        + " replay "
        + args.rsplit(" replay ").next().unwrap();
    let r = run(&without);
    assert_eq!(
        restarts(&String::from_utf8_lossy(&r.stdout)),
        0,
        "{}",
        show(&r)
    );
    assert!(!marker.exists(), "{}", show(&r));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Seeds the heavy workload is given to catch `replica-3-writes-behind`.
const HEAVY_SEEDS_BUDGET: u64 = 1;
/// Shrinking runs the heavy failure may take (each is a whole run on the real store).
const HEAVY_SHRINK_RUNS: &str = "1";

/// `replica-3-writes-behind` (a replica shared by every process that applies appends
/// three appends late, each process seeing its own) under `--workload heavy`: caught by
/// SPI-23 within [`HEAVY_SEEDS_BUDGET`] seed, and its shrunk file, replayed through the
/// same store by the printed command (which carries `--workload heavy` and `--store`),
/// fails again by SPI-23.
#[test]
fn spi_23_a_replica_three_writes_behind_is_caught_under_the_heavy_workload_and_replays() {
    let dir = scratch("replica-heavy");
    let o = loom(&[
        "sim",
        "--workload",
        "heavy",
        "--store",
        &store_of("replica-3-writes-behind", &dir),
        "--seeds",
        &HEAVY_SEEDS_BUDGET.to_string(),
        "--shrink-runs",
        HEAVY_SHRINK_RUNS,
        "--quiet",
        "--fail-fast",
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(code(&o), 1, "{}", show(&o));
    assert!(stdout.contains("  SPI-23 "), "{stdout}");
    let cmd = replay_file_command(&stdout).expect("a replay command");
    assert!(
        cmd.contains("--workload heavy")
            && cmd.contains("replica-3-writes-behind")
            && cmd.ends_with("shrunk.json"),
        "{cmd}"
    );
    let args = cmd.strip_prefix("loom ").expect("a loom command");
    let mut failed_again = false;
    for _ in 0..REPLAY_ATTEMPTS {
        let line = format!("{} {args}", env!("CARGO_BIN_EXE_loom"));
        let r = Command::new("sh").arg("-c").arg(&line).output().unwrap();
        if code(&r) == 1 && String::from_utf8_lossy(&r.stdout).contains("  SPI-23 ") {
            failed_again = true;
            break;
        }
    }
    assert!(failed_again, "`{cmd}` did not fail again by SPI-23");
    let _ = std::fs::remove_dir_all(&dir);
}
