//! `loom conform --clients N` as a store author runs it: N processes of one adapter
//! command on one backend (the Python example on one SQLite file, store protocol 1.2),
//! the concurrency kit judging their racing operations by linearizability.
//!
//! Planted bugs that only show when clients race (buggy-stores/python/buggy_adapter.py:
//! `racy-append` checks the next sequence in one transaction and writes in another,
//! `claim-without-cas` leases the package it saw queued without checking it still is,
//! `racy-state-put` compares the version, then writes it in a second transaction)
//! each fail the case citing their rule; the same adapter without the bug passes; an
//! adapter whose processes do not share a backend (the example without `--db`) and a
//! run with one client skip the concurrent cases, visibly, never pass them.

use std::path::Path;
use std::process::Output;

mod common;
use common::{buggy_variant, loom, scratch, show};

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
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("report.json: {e}\n{}", show(&o)));
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    let results = report["results"].as_array().cloned().unwrap_or_default();
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
}

fn spi_23_racing_appends_catch_a_read_check_write_append(python: &str) {
    caught(
        python,
        "racy-append",
        "spi_23_racing_appends_exactly_one_wins_each_sequence",
        "SPI-23",
        "an acknowledged write was overwritten",
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
