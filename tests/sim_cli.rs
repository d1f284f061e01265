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
    assert!(results.iter().all(|r| r["status"] == "pass"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn place_04_loom_sim_store_sqlite_runs_a_sweep() {
    sweep_passes("sqlite", "3", "sqlite");
}

#[test]
fn place_04_loom_sim_store_cmd_python_adapter_runs_a_sweep() {
    sweep_passes(
        "cmd:python3 examples/python-sqlite-store/adapter.py",
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
