//! `loom conform --clients N` as a store author runs it: N processes of one adapter
//! command on one backend (the Python example on one SQLite file, store protocol 1.2),
//! the concurrency kit judging their racing operations by linearizability.
//!
//! Planted bugs that only show when clients race (buggy-stores/python/buggy_adapter.py:
//! `racy-append` checks the next sequence in one transaction and writes in another,
//! `claim-without-cas` leases the package it saw queued without checking it still is,
//! `racy-state-put` compares the version, then writes it in a second transaction,
//! `racy-renew` writes a renewed lease back over an expiry, `racy-timer-cancel` and
//! `racy-timer-schedule` look a timer up before they change it, `racy-upsert` looks a
//! document up before it inserts it) each fail the case citing their rule, and only that
//! concurrent case; the same adapter without the bug passes; an
//! adapter whose processes do not share a backend (the example without `--db`) and a
//! run with one client skip the concurrent cases, visibly, never pass them. A failed case
//! writes a replay file of its interleaving that fails again (`loom conform --replay`)
//! while the bug is there and passes against the adapter without it.

use std::path::Path;
use std::process::Output;

mod common;
use common::{buggy_variant, loom, report_results, scratch, show};

/// Clients each run starts: the default of `loom conform`.
const CLIENTS: &str = "4";

/// Runs the concurrency kit and returns the run and its results.
fn conform(store: &str, clients: &str, out: &Path) -> (Output, Vec<serde_json::Value>) {
    let o = loom(&[
        "conform",
        "--store",
        store,
        "--kit",
        "concurrency",
        "--clients",
        clients,
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let results = report_results(out, &o);
    (o, results)
}

fn status_of<'a>(results: &'a [serde_json::Value], case: &str) -> &'a serde_json::Value {
    results
        .iter()
        .find(|r| r["case_id"] == case)
        .unwrap_or_else(|| panic!("no result for {case}: {results:#?}"))
}

/// `bug` fails `case` (which cites `rule`) with a message containing `says`.
fn caught(python: &str, bug: &str, case: &str, rule: &str, says: &str) {
    caught_also(python, bug, case, rule, says, &[]);
}

/// As [`caught`], where the bug may also fail the concurrent cases `also` (a racy append
/// breaks every case that appends concurrently).
fn caught_also(python: &str, bug: &str, case: &str, rule: &str, says: &str, also: &[&str]) {
    let dir = scratch(bug);
    let db = dir.join("shared.db");
    let out = dir.join("report");
    let (o, results) = conform(&buggy_variant(python, bug, Some(&db)), CLIENTS, &out);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let r = status_of(&results, case);
    assert_eq!(r["status"], "fail", "{r:#}\n{}", show(&o));
    assert!(
        r["rules"].as_array().unwrap().iter().any(|x| x == rule),
        "{r:#}"
    );
    let message = r["message"].as_str().unwrap_or("");
    assert!(message.contains(says), "{message}");
    only_cases(&results, case, also, bug);
}

/// Every concurrent case but `case` (and `also`) passes under `bug`: the case class is
/// what catches it, not a neighbour.
fn only_cases(results: &[serde_json::Value], case: &str, also: &[&str], bug: &str) {
    for r in results {
        let id = r["case_id"].as_str().unwrap_or("");
        if id != case && !also.contains(&id) {
            assert_eq!(r["status"], "pass", "{bug} also broke another case: {r:#}");
        }
    }
}

fn place_02_renew_racing_expiry_catches_a_renew_that_writes_the_lease_back(python: &str) {
    caught(
        python,
        "racy-renew",
        "place_02_renew_races_lease_expiry",
        "PLACE-02",
        "are not linearizable",
    );
}

fn replay_10_racing_sweepers_catch_a_cancel_that_looks_before_it_deletes(python: &str) {
    caught(
        python,
        "racy-timer-cancel",
        "replay_10_racing_timer_schedule_and_cancel",
        "REPLAY-10",
        "answered that it existed; exactly one was expected",
    );
}

fn replay_10_racing_schedules_catch_a_schedule_that_replaces(python: &str) {
    caught(
        python,
        "racy-timer-schedule",
        "replay_10_racing_timer_schedule_and_cancel",
        "REPLAY-10",
        "are not linearizable",
    );
}

fn spi_20_racing_upserts_catch_an_upsert_that_looks_before_it_inserts(python: &str) {
    caught(
        python,
        "racy-upsert",
        "spi_20_racing_upserts_keep_one_document_per_id",
        "SPI-20",
        "are not linearizable",
    );
}

fn spi_23_racing_appends_catch_a_read_check_write_append(python: &str) {
    caught_also(
        python,
        "racy-append",
        "spi_23_racing_appends_exactly_one_wins_each_sequence",
        "SPI-23",
        "an acknowledged write was overwritten",
        &[
            "place_05_zombie_append_races_the_new_holder",
            "spi_09_delete_through_races_appends",
        ],
    );
}

fn place_02_racing_claims_catch_a_claim_without_compare_and_set(python: &str) {
    caught(
        python,
        "claim-without-cas",
        "place_02_racing_claims_never_share_a_lease",
        "PLACE-02",
        "two live leases on one execution",
    );
}

fn spi_20_racing_compare_and_set_catches_a_put_that_checks_then_writes(python: &str) {
    caught(
        python,
        "racy-state-put",
        "spi_20_racing_compare_and_set_one_winner_per_version",
        "SPI-20",
        "are not linearizable",
    );
}

/// Replays `file` against `store` (`None`: the store the file names) and returns the run
/// and the replayed case's result.
fn replay(file: &Path, store: Option<&str>, out: &Path) -> (Output, serde_json::Value) {
    let mut args = vec![
        "conform",
        "--replay",
        file.to_str().unwrap(),
        "--quiet",
        "--out",
    ];
    args.push(out.to_str().unwrap());
    if let Some(s) = store {
        args.extend(["--store", s]);
    }
    let o = loom(&args);
    let results = report_results(out, &o);
    assert_eq!(results.len(), 1, "{results:#?}");
    (o, results[0].clone())
}

/// Replays of a failed concurrent case: the failure writes a replay file and prints the
/// command; every replay runs the same case with the same clients under the recorded
/// interleaving and fails again by the same rule; the same file against the adapter
/// without the bug passes.
fn concurrency_a_failed_case_writes_a_replay_that_fails_again_until_fixed(python: &str) {
    for (bug, case, rule) in [
        (
            "racy-state-put",
            "spi_20_racing_compare_and_set_one_winner_per_version",
            "SPI-20",
        ),
        (
            "racy-renew",
            "place_02_renew_races_lease_expiry",
            "PLACE-02",
        ),
    ] {
        let dir = scratch(&format!("replay-{bug}"));
        let store = buggy_variant(python, bug, Some(&dir.join("shared.db")));
        let (o, results) = conform(&store, CLIENTS, &dir.join("run"));
        assert_eq!(o.status.code(), Some(1), "{}", show(&o));
        let r = status_of(&results, case);
        assert_eq!(r["status"], "fail", "{r:#}");
        let file = dir
            .join("run")
            .join(format!("concurrency-replay-{case}.json"));
        assert!(file.is_file(), "{r:#}");
        let reproduce = r["reproduce"].as_str().unwrap();
        assert!(
            reproduce.contains("--replay") && reproduce.contains(file.to_str().unwrap()),
            "{reproduce}"
        );
        for i in 0..REPLAYS {
            let (o, again) = replay(&file, None, &dir.join(format!("again-{i}")));
            assert_eq!(o.status.code(), Some(1), "{bug} replay {i}: {}", show(&o));
            assert_eq!(again["case_id"], case);
            assert_eq!(again["status"], "fail", "{again:#}");
            assert!(again["rules"].as_array().unwrap().iter().any(|x| x == rule));
            assert!(
                again["message"].as_str().unwrap().contains("interleaving"),
                "{again:#}"
            );
        }
        let fixed = buggy_variant(python, "faithful", Some(&dir.join("fixed.db")));
        let (o, passed) = replay(&file, Some(&fixed), &dir.join("fixed"));
        assert_eq!(o.status.code(), Some(0), "{bug} fixed: {}", show(&o));
        assert_eq!(passed["status"], "pass", "{passed:#}");
    }
}

/// Replays each failure file this many times: each must fail.
const REPLAYS: usize = 3;

fn concurrency_the_faithful_adapter_on_one_file_passes_every_concurrent_case(python: &str) {
    let dir = scratch("faithful");
    let (o, results) = conform(
        &buggy_variant(python, "faithful", Some(&dir.join("shared.db"))),
        CLIENTS,
        &dir.join("report"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let kit = loom_conformance::kits::concurrency::CASES;
    assert_eq!(results.len(), kit.len(), "{results:#?}");
    for r in &results {
        assert_eq!(r["status"], "pass", "{r:#}");
    }
}

fn concurrency_cases_are_skipped_without_a_shared_backend_or_a_second_client(python: &str) {
    // In memory: each process has its own data, and hello says so.
    let dir = scratch("unshared");
    let (_, results) = conform(
        &buggy_variant(python, "faithful", None),
        CLIENTS,
        &dir.join("a"),
    );
    assert!(!results.is_empty());
    for r in &results {
        assert_eq!(r["status"], "skip-not-claimed", "{r:#}");
        assert!(
            r["message"].as_str().unwrap().contains("sharedBackend"),
            "{r:#}"
        );
    }
    // One client: nothing to race.
    let (_, results) = conform(
        &buggy_variant(python, "faithful", Some(&dir.join("one.db"))),
        "1",
        &dir.join("b"),
    );
    assert!(!results.is_empty());
    for r in &results {
        assert_eq!(r["status"], "skip-not-claimed", "{r:#}");
        assert!(
            r["message"].as_str().unwrap().contains("--clients 1"),
            "{r:#}"
        );
    }
}

fn reference_stores_pass(stores: &[&str]) {
    for store in stores {
        let dir = scratch("reference");
        let (o, results) = conform(store, CLIENTS, &dir);
        assert_eq!(o.status.code(), Some(0), "{store}: {}", show(&o));
        assert!(
            results.iter().all(|r| r["status"] == "pass") && !results.is_empty(),
            "{store}: {results:#?}"
        );
    }
}

fn concurrency_the_memory_and_sqlite_stores_pass_with_one_handle_per_client() {
    reference_stores_pass(&["memory", "sqlite"]);
}

fn concurrency_the_postgres_store_passes_with_one_connection_per_client(url: &str) {
    reference_stores_pass(&[url]);
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, test, Tool};
    run(vec![
        needs(
            Tool::Python3,
            "spi_23_racing_appends_catch_a_read_check_write_append",
            spi_23_racing_appends_catch_a_read_check_write_append,
        ),
        needs(
            Tool::Python3,
            "place_02_racing_claims_catch_a_claim_without_compare_and_set",
            place_02_racing_claims_catch_a_claim_without_compare_and_set,
        ),
        needs(
            Tool::Python3,
            "spi_20_racing_compare_and_set_catches_a_put_that_checks_then_writes",
            spi_20_racing_compare_and_set_catches_a_put_that_checks_then_writes,
        ),
        needs(
            Tool::Python3,
            "place_02_renew_racing_expiry_catches_a_renew_that_writes_the_lease_back",
            place_02_renew_racing_expiry_catches_a_renew_that_writes_the_lease_back,
        ),
        needs(
            Tool::Python3,
            "replay_10_racing_sweepers_catch_a_cancel_that_looks_before_it_deletes",
            replay_10_racing_sweepers_catch_a_cancel_that_looks_before_it_deletes,
        ),
        needs(
            Tool::Python3,
            "replay_10_racing_schedules_catch_a_schedule_that_replaces",
            replay_10_racing_schedules_catch_a_schedule_that_replaces,
        ),
        needs(
            Tool::Python3,
            "spi_20_racing_upserts_catch_an_upsert_that_looks_before_it_inserts",
            spi_20_racing_upserts_catch_an_upsert_that_looks_before_it_inserts,
        ),
        needs(
            Tool::Python3,
            "concurrency_a_failed_case_writes_a_replay_that_fails_again_until_fixed",
            concurrency_a_failed_case_writes_a_replay_that_fails_again_until_fixed,
        ),
        needs(
            Tool::Python3,
            "concurrency_the_faithful_adapter_on_one_file_passes_every_concurrent_case",
            concurrency_the_faithful_adapter_on_one_file_passes_every_concurrent_case,
        ),
        needs(
            Tool::Python3,
            "concurrency_cases_are_skipped_without_a_shared_backend_or_a_second_client",
            concurrency_cases_are_skipped_without_a_shared_backend_or_a_second_client,
        ),
        test(
            "concurrency_the_memory_and_sqlite_stores_pass_with_one_handle_per_client",
            concurrency_the_memory_and_sqlite_stores_pass_with_one_handle_per_client,
        ),
        needs(
            Tool::Postgres,
            "concurrency_the_postgres_store_passes_with_one_connection_per_client",
            concurrency_the_postgres_store_passes_with_one_connection_per_client,
        ),
    ])
}
