//! `loom sim` as a store author runs it: a sweep that runs no seed fails and says why,
//! and the SQLite store and the Python example adapter run a sweep under simulation
//! through `--store`, with a summary that names seeds, time and fault counts.

use std::process::Command;

fn loom(args: &[&str], out: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(args)
        .arg("--out")
        .arg(out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the loom binary runs")
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("loom-sim-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_sweep_that_runs_no_seed_fails_and_says_why() {
    for args in [
        vec!["sim", "--seeds", "0", "--quiet"],
        vec![
            "sim",
            "--seeds",
            "2",
            "--from",
            "18446744073709551615",
            "--quiet",
        ],
        vec![
            "sim", "--seeds", "1", "--from", "1", "--shard", "0/2", "--quiet",
        ],
    ] {
        let dir = scratch("none");
        let o = loom(&args, &dir);
        let err = String::from_utf8_lossy(&o.stderr);
        // Arguments that select nothing are a usage error, as `vectors run --filter` and
        // `conform --case` matching nothing are.
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("no seed to run"), "{args:?}: {err}");
        assert!(!dir.join("report.json").exists(), "{args:?} wrote a report");
    }
}

fn sweep_passes(store: &str, seeds: &str, name: &str) {
    let dir = scratch(name);
    let o = loom(
        &[
            "sim", "--store", store, "--seeds", seeds, "--jobs", "2", "--quiet",
        ],
        &dir,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{store}: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains(&format!("{seeds} seed(s) on `")), "{out}");
    assert!(out.contains("s simulated in"), "{out}");
    assert!(out.contains("store-restarts="), "{out}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        seeds.parse::<usize>().unwrap() * loom_sim::RULES.len()
    );
    // A rule a seed did not reach is a skip saying which counter stayed at zero; every
    // other result passes, and each pass names its evidence.
    for r in results {
        match r["status"].as_str() {
            Some("pass") => assert!(r["message"].as_str().is_some(), "{r}"),
            Some("skip-untestable") => assert!(
                r["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("did not exercise it")),
                "{r}"
            ),
            _ => panic!("{store}: {r}"),
        }
    }
    assert!(
        results.iter().any(|r| r["status"] == "pass"),
        "{store}: no rule credited"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn place_04_loom_sim_store_sqlite_runs_a_sweep() {
    sweep_passes("sqlite", "3", "sqlite");
}

#[test]
fn place_04_loom_sim_store_cmd_python_adapter_runs_a_sweep() {
    sweep_passes(
        "cmd:python3 examples/python-sqlite-store/adapter.py --lease-ms 1000",
        "3",
        "cmd",
    );
}

/// A schedule file replays in another process, without the seed's draw, to the same
/// run (the same trace digest); a file that is not a schedule is a usage error.
#[test]
fn conf_05_loom_sim_replay_runs_a_schedule_file_to_the_same_digest() {
    let out = loom_sim::run_seed(1, &loom_sim::SimConfig::default());
    let dir = scratch("replay");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("schedule.json");
    std::fs::write(&file, serde_json::to_string_pretty(&out.schedule).unwrap()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(["sim", "replay"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(&format!("digest {}", loom_sim::trace_digest(&out))),
        "{stdout}"
    );
    std::fs::write(&file, "{\"workers\": 2}").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(["sim", "replay"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The trace digests of a sweep do not depend on how many threads ran it (CONF-05): the
/// `--digests` files of one job and two jobs are the same, line for line, and the report
/// holds the same digests.
#[test]
fn conf_05_digests_of_one_job_and_two_jobs_are_the_same() {
    let dir = scratch("digests");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for jobs in ["1", "2"] {
        let file = dir.join(format!("digests-{jobs}.txt"));
        let o = loom(
            &[
                "sim",
                "--seeds",
                "6",
                "--jobs",
                jobs,
                "--quiet",
                "--digests",
                file.to_str().unwrap(),
            ],
            &dir.join(format!("out-{jobs}")),
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        // -q: nothing on standard error but errors, and there were none.
        assert!(
            o.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = std::fs::read_to_string(&file).unwrap();
        let report: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("out-{jobs}/report.json"))).unwrap(),
        )
        .unwrap();
        let in_report = &report["environment"]["extra"]["traceDigests"];
        for (i, line) in text.lines().enumerate() {
            let (seed, digest) = line.split_once(' ').unwrap();
            assert_eq!(seed, i.to_string());
            assert_eq!(digest.len(), 16, "{line}");
            assert_eq!(in_report[seed], digest, "{line}");
        }
        files.push(text);
    }
    assert_eq!(files[0].lines().count(), 6);
    assert_eq!(
        files[0], files[1],
        "one job and two jobs traced differently"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--fail-fast` stops starting seeds at the first failing result: a `cmd:` store that
/// does not start makes seed 0 an error, and seeds 1..4 are reported as skipped, not run,
/// in a partial run. Without it every seed runs. Progress on standard error is plain
/// lines when it is not a terminal.
#[test]
fn loom_sim_fail_fast_stops_at_the_first_failing_seed() {
    let dir = scratch("fail-fast");
    let o = loom(
        &[
            "sim",
            "--store",
            "cmd:exit 3",
            "--seeds",
            "5",
            "--fail-fast",
        ],
        &dir.join("a"),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("4 seed(s) not run"), "{out}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("sim: 1/5 seeds run"), "{err}");
    assert!(!err.contains('\r'), "a log gets plain lines: {err:?}");
    let report = loom_report::Report::load(dir.join("a/report.json")).unwrap();
    let ran: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.status == loom_report::Status::Error)
        .collect();
    assert_eq!(ran.len(), loom_sim::RULES.len(), "seed 0 only");
    assert!(ran.iter().all(|r| r.case_id.starts_with("seed-0/")));
    let skipped = report
        .results
        .iter()
        .filter(|r| r.status == loom_report::Status::SkipUntestable)
        .count();
    assert_eq!(skipped, 4 * loom_sim::RULES.len());
    let partial = report.partial_sentences().join("\n");
    assert!(partial.contains("stopped after 1 failure"), "{partial}");
    let o = loom(
        &["sim", "--store", "cmd:exit 3", "--seeds", "3", "--quiet"],
        &dir.join("b"),
    );
    assert_eq!(o.status.code(), Some(1));
    let report = loom_report::Report::load(dir.join("b/report.json")).unwrap();
    assert!(report
        .results
        .iter()
        .all(|r| r.status == loom_report::Status::Error));
    assert_eq!(report.results.len(), 3 * loom_sim::RULES.len());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--hello-timeout-ms` reaches a `cmd:` adapter under simulation: one that never
/// answers `hello` is ended at the limit given, and its seed is an error naming it.
#[test]
fn loom_sim_hello_timeout_ms_ends_an_adapter_that_never_answers() {
    let dir = scratch("hello-timeout");
    let o = loom(
        &[
            "sim",
            "--store",
            "cmd:sleep 30",
            "--seeds",
            "1",
            "--hello-timeout-ms",
            "300",
            "--quiet",
        ],
        &dir,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("not run: seed 0"), "{out}");
    // The message names the limit given, not the default.
    assert!(out.contains("did not answer hello"), "{out}");
    assert!(out.contains("within 300 ms"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An adapter that exits at once runs no seed to a verdict: the count line says how many
/// seeds could not run, each is named, and the verdict is FAIL with its reason, so the
/// output never reads as "0 failing seed(s)" alone.
#[test]
fn an_adapter_that_exits_at_once_is_counted_and_the_verdict_fails() {
    let dir = scratch("exits-at-once");
    let o = loom(
        &[
            "sim",
            "--store",
            "cmd:sh -c \"exit 3\"",
            "--seeds",
            "2",
            "--quiet",
        ],
        &dir,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("0 failing seed(s), 2 seed(s) that could not run (errors)"),
        "{out}"
    );
    assert!(out.contains("not run: seed 0"), "{out}");
    assert!(out.contains("not run: seed 1"), "{out}");
    assert!(out.contains("exited with code 3"), "{out}");
    assert!(out.contains("verdict: FAIL"), "{out}");
    assert!(out.contains("failed, errored or timed out"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A failing seed is shrunk in at most `--shrink-runs` runs, with progress on standard
/// error, and the printed replay command names `shrunk.json` and the store; with
/// `--no-shrink` nothing is shrunk and the command names the whole `schedule.json`. The
/// store is the example adapter that accepts stale fences (PLACE-05), which fails seed 1
/// under `--stormy`.
#[test]
fn place_05_loom_sim_shrinks_within_its_budget_or_not_at_all() {
    let dir = scratch("shrink");
    let store = "cmd:python3 simulator/tests/data/stale_fence_adapter.py --lease-ms 1000";
    let args = ["sim", "--store", store, "--seed", "1", "--stormy"];
    let o = loom(
        &[&args[..], &["--shrink-runs", "2"]].concat(),
        &dir.join("a"),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("PLACE-05"), "{out}");
    assert!(dir.join("a/seed-1/shrunk.json").exists(), "{out}");
    assert!(
        out.contains("replay the shrunk run with `loom sim --store"),
        "{out}"
    );
    assert!(
        err.contains("shrinking seed 1: run 2 of at most 2"),
        "{err}"
    );
    assert!(!err.contains("run 3 of"), "{err}");
    let o = loom(
        &[&args[..], &["--no-shrink", "--quiet"]].concat(),
        &dir.join("b"),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(!dir.join("b/seed-1/shrunk.json").exists(), "{out}");
    assert!(dir.join("b/seed-1/schedule.json").exists(), "{out}");
    assert!(out.contains("replay the whole run with"), "{out}");
    assert!(out.contains("shrinking 0.0 s of it"), "{out}");
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
