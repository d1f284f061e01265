//! `loom conform --kit durability` as a store author runs it: the adapter's process
//! group is killed with SIGKILL at chosen points and started again, and what it
//! acknowledged must read back through the new process (docs/spi.md, "Kills and
//! restarts"). Planted bugs (buggy-stores/python/buggy_adapter.py) that only a kill
//! shows: `ack-before-commit` answers an append before committing it, and
//! `incarnation-in-memory` keeps its incarnation counter in the process. Each fails the
//! case citing its rule; the faithful adapter on a file passes; in memory (no
//! `durable: true` in hello) every case is skipped, visibly.

use std::path::Path;
use std::process::Output;

mod common;
use common::{buggy_variant, loom, scratch, show};

fn conform(store: &str, out: &Path) -> (Output, Vec<serde_json::Value>) {
    let o = loom(&[
        "conform",
        "--store",
        store,
        "--kit",
        "durability",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("report.json: {e}\n{}", show(&o)));
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    (o, report["results"].as_array().cloned().unwrap_or_default())
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
            "durability_cases_are_skipped_for_an_adapter_that_does_not_claim_durable",
            durability_cases_are_skipped_for_an_adapter_that_does_not_claim_durable,
        ),
    ])
}
