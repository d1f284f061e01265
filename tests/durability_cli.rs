//! `loom conform --kit durability` as a store author runs it: the adapter's process
//! group is killed with SIGKILL at chosen points and started again, and what it
//! acknowledged must read back through the new process (docs/spi.md, "Kills and
//! restarts"). Planted bugs (buggy-stores/python/buggy_adapter.py) that only a kill
//! shows: `ack-before-commit` answers an append before committing it, and
//! `incarnation-in-memory` keeps its incarnation counter in the process. Each fails the
//! case citing its rule; the faithful adapter on a file passes; in memory (no
//! `durable: true` in hello) every case is skipped, visibly. With `--restart-backend`,
//! the backend is restarted after every kill: a backend that keeps nothing across a
//! restart (its database files deleted, as a server with persistence off loses every
//! write) is caught, a faithful restart passes, and a restart command that fails is an
//! error of the case, never a pass.

use std::path::Path;
use std::process::Output;

mod common;
use common::{buggy_variant, loom, report_results, scratch, show};

fn conform(store: &str, out: &Path) -> (Output, Vec<serde_json::Value>) {
    conform_with(store, out, &[])
}

fn conform_with(store: &str, out: &Path, extra: &[&str]) -> (Output, Vec<serde_json::Value>) {
    let mut args = vec![
        "conform",
        "--store",
        store,
        "--kit",
        "durability",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = loom(&args);
    let results = report_results(out, &o);
    (o, results)
}

fn caught(python: &str, bug: &str, case: &str, rule: &str, says: &str) {
    let dir = scratch(bug);
    let (o, results) = conform(
        &buggy_variant(python, bug, Some(&dir.join("kept.db"))),
        &dir.join("r"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let r = results
        .iter()
        .find(|r| r["case_id"] == case)
        .unwrap_or_else(|| panic!("no {case}: {results:#?}"));
    assert_eq!(r["status"], "fail", "{r:#}");
    assert!(
        r["rules"].as_array().unwrap().iter().any(|x| x == rule),
        "{r:#}"
    );
    assert!(r["message"].as_str().unwrap_or("").contains(says), "{r:#}");
}

fn spi_23_a_kill_catches_an_append_answered_before_its_commit(python: &str) {
    caught(
        python,
        "ack-before-commit",
        "spi_23_acknowledged_appends_survive_a_kill",
        "SPI-23",
        "an acknowledged write did not survive the kill",
    );
}

fn spi_07_a_kill_catches_an_incarnation_counter_kept_in_memory(python: &str) {
    caught(
        python,
        "incarnation-in-memory",
        "spi_07_incarnations_differ_across_a_kill",
        "SPI-07",
        "the incarnation counter did not survive the kill",
    );
}

fn durability_the_faithful_adapter_on_a_file_passes_every_case(python: &str) {
    let dir = scratch("faithful");
    let (o, results) = conform(
        &buggy_variant(python, "faithful", Some(&dir.join("kept.db"))),
        &dir.join("r"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert_eq!(
        results.len(),
        loom_conformance::kits::durability::CASES.len(),
        "{results:#?}"
    );
    for r in &results {
        assert_eq!(r["status"], "pass", "{r:#}");
    }
}

fn durability_cases_are_skipped_for_an_adapter_that_does_not_claim_durable(python: &str) {
    let dir = scratch("memory");
    let (o, results) = conform(&buggy_variant(python, "faithful", None), &dir.join("r"));
    // A run of nothing but skips is not a pass.
    assert_ne!(o.status.code(), Some(0), "{}", show(&o));
    assert!(!results.is_empty());
    for r in &results {
        assert_eq!(r["status"], "skip-not-claimed", "{r:#}");
        assert!(r["message"].as_str().unwrap().contains("durable"), "{r:#}");
    }
}

/// The restart command for a backend at `db`: it logs each run to `log`, and with
/// `persistence_off` deletes the database and its write-ahead log, as a server that
/// keeps nothing on disk comes back empty.
fn restart_command(db: &Path, log: &Path, persistence_off: bool) -> String {
    let mut c = format!("echo restarted >> '{}'", log.display());
    if persistence_off {
        c.push_str(&format!("; rm -f '{0}' '{0}-wal' '{0}-shm'", db.display()));
    }
    c
}

fn restarts_logged(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .count()
}

fn spi_23_a_backend_restart_that_loses_everything_is_caught(python: &str) {
    let dir = scratch("restart-lossy");
    let (db, log) = (dir.join("kept.db"), dir.join("restarts.log"));
    let restart = restart_command(&db, &log, true);
    let (o, results) = conform_with(
        &buggy_variant(python, "faithful", Some(&db)),
        &dir.join("r"),
        &["--restart-backend", &restart],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let r = results
        .iter()
        .find(|r| r["case_id"] == "spi_23_acknowledged_appends_survive_a_kill")
        .unwrap_or_else(|| panic!("{results:#?}"));
    assert_eq!(r["status"], "fail", "{r:#}");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("an acknowledged write did not survive the kill"),
        "{r:#}"
    );
    assert!(
        restarts_logged(&log) >= results.len(),
        "one restart per kill at least"
    );
}

fn durability_a_faithful_backend_restart_after_every_kill_passes(python: &str) {
    let dir = scratch("restart-faithful");
    let (db, log) = (dir.join("kept.db"), dir.join("restarts.log"));
    let restart = restart_command(&db, &log, false);
    let (o, results) = conform_with(
        &buggy_variant(python, "faithful", Some(&db)),
        &dir.join("r"),
        &["--restart-backend", &restart],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert_eq!(
        results.len(),
        loom_conformance::kits::durability::CASES.len()
    );
    for r in &results {
        assert_eq!(r["status"], "pass", "{r:#}");
    }
    // Every case kills at least once, and each kill restarted the backend.
    assert!(
        restarts_logged(&log) >= results.len(),
        "{}",
        restarts_logged(&log)
    );
}

fn durability_a_failing_backend_restart_is_an_error_and_a_usage_mistake_exits_2(python: &str) {
    let dir = scratch("restart-broken");
    let (o, results) = conform_with(
        &buggy_variant(python, "faithful", Some(&dir.join("kept.db"))),
        &dir.join("r"),
        &[
            "--restart-backend",
            "echo 'cannot reach the server' >&2; exit 4",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(!results.is_empty());
    for r in &results {
        assert_ne!(r["status"], "pass", "{r:#}");
    }
    let errors: Vec<&serde_json::Value> =
        results.iter().filter(|r| r["status"] == "error").collect();
    assert!(!errors.is_empty(), "{results:#?}");
    let m = errors[0]["message"].as_str().unwrap();
    assert!(
        m.contains("backend restart (--restart-backend) failed"),
        "{m}"
    );
    assert!(
        m.contains("exited with code 4") && m.contains("cannot reach the server"),
        "{m}"
    );
    // In-process stores are not killed, so a restart command there is a mistake.
    for store in ["memory", "sqlite"] {
        let o = loom(&["conform", "--store", store, "--restart-backend", "true"]);
        assert_eq!(o.status.code(), Some(2), "{}", show(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("--restart-backend"),
            "{}",
            show(&o)
        );
    }
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, Tool};
    run(vec![
        needs(
            Tool::Python3,
            "spi_23_a_kill_catches_an_append_answered_before_its_commit",
            spi_23_a_kill_catches_an_append_answered_before_its_commit,
        ),
        needs(
            Tool::Python3,
            "spi_07_a_kill_catches_an_incarnation_counter_kept_in_memory",
            spi_07_a_kill_catches_an_incarnation_counter_kept_in_memory,
        ),
        needs(
            Tool::Python3,
            "durability_the_faithful_adapter_on_a_file_passes_every_case",
            durability_the_faithful_adapter_on_a_file_passes_every_case,
        ),
        needs(
            Tool::Python3,
            "spi_23_a_backend_restart_that_loses_everything_is_caught",
            spi_23_a_backend_restart_that_loses_everything_is_caught,
        ),
        needs(
            Tool::Python3,
            "durability_a_faithful_backend_restart_after_every_kill_passes",
            durability_a_faithful_backend_restart_after_every_kill_passes,
        ),
        needs(
            Tool::Python3,
            "durability_a_failing_backend_restart_is_an_error_and_a_usage_mistake_exits_2",
            durability_a_failing_backend_restart_is_an_error_and_a_usage_mistake_exits_2,
        ),
        needs(
            Tool::Python3,
            "durability_cases_are_skipped_for_an_adapter_that_does_not_claim_durable",
            durability_cases_are_skipped_for_an_adapter_that_does_not_claim_durable,
        ),
    ])
}
