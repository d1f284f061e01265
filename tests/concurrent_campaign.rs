//! The concurrent campaign (`loom conform --explore --clients N`, and `loom check`'s
//! explore part) as a store author runs it: generated rounds of reads, appends, fence
//! acquisitions and compare-and-set writes from every client at once, over plain and
//! hostile ids, judged per execution and key by linearizability.
//!
//! Planted bugs that only show when clients race (buggy-stores/python/buggy_adapter.py):
//! `racy-append` and `racy-state-put` each fail the campaign by the history they break;
//! the faithful adapter on one file, and the memory and SQLite reference stores, pass
//! the same seed; one client, or an adapter whose processes share nothing, is a visible
//! skip, never a pass.

use std::path::Path;
use std::process::Output;

mod common;
use common::{buggy_variant, loom, report_results, scratch, show};

/// The seed of every run here.
const SEED: &str = "3";

/// Runs the exploration (a few cases) and the concurrent campaign; returns the run and
/// the campaign's result.
fn campaign(store: &str, clients: &str, out: &Path) -> (Output, serde_json::Value) {
    let o = loom(&[
        "conform",
        "--store",
        store,
        "--explore",
        "--cases",
        "4",
        "--seed",
        SEED,
        "--clients",
        clients,
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let results = report_results(out, &o);
    let r = results
        .iter()
        .find(|r| r["suite"] == "concurrency-campaign")
        .cloned()
        .unwrap_or_else(|| panic!("no campaign result: {results:#?}"));
    (o, r)
}

fn spi_23_spi_20_the_campaign_catches_racing_writes_by_the_history_they_break(python: &str) {
    for (bug, says) in [
        ("racy-append", "the operations on"),
        ("racy-state-put", "the writes of key"),
    ] {
        let dir = scratch(bug);
        let store = buggy_variant(python, bug, Some(&dir.join("shared.db")));
        let (o, r) = campaign(&store, "4", &dir.join("r"));
        assert_eq!(o.status.code(), Some(1), "{bug}: {}", show(&o));
        assert_eq!(r["status"], "fail", "{bug}: {r:#}");
        let m = r["message"].as_str().unwrap();
        assert!(
            m.contains(says) && m.contains("are not linearizable"),
            "{bug}: {m}"
        );
        assert!(m.contains(&format!("seed {SEED}")), "{m}");
        for rule in ["SPI-23", "SPI-20", "GAP-27"] {
            assert!(
                r["rules"].as_array().unwrap().iter().any(|x| x == rule),
                "{r:#}"
            );
        }
    }
}

fn concurrency_the_faithful_adapter_passes_the_campaign_and_it_ran(python: &str) {
    let dir = scratch("faithful");
    let store = buggy_variant(python, "faithful", Some(&dir.join("shared.db")));
    let (o, r) = campaign(&store, "4", &dir.join("r"));
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert_eq!(r["status"], "pass", "{r:#}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r/report.json")).unwrap()).unwrap();
    let c = &report["environment"]["extra"]["concurrentCampaign"];
    assert!(c["rounds"].as_u64().unwrap() > 0, "{c:#}");
    assert!(c["operations"].as_u64().unwrap() > 0, "{c:#}");
    assert_eq!(c["clients"], 4);
}

fn concurrency_no_shared_backend_or_one_client_is_a_skip(python: &str) {
    let dir = scratch("unshared");
    let (_, r) = campaign(
        &buggy_variant(python, "faithful", None),
        "4",
        &dir.join("a"),
    );
    assert_eq!(r["status"], "skip-not-claimed", "{r:#}");
    assert!(
        r["message"].as_str().unwrap().contains("sharedBackend"),
        "{r:#}"
    );
    let (_, r) = campaign(
        &buggy_variant(python, "faithful", Some(&dir.join("one.db"))),
        "1",
        &dir.join("b"),
    );
    assert_eq!(r["status"], "skip-not-claimed", "{r:#}");
    assert!(
        r["message"].as_str().unwrap().contains("--clients 1"),
        "{r:#}"
    );
}

fn concurrency_the_memory_and_sqlite_stores_pass_the_campaign() {
    for store in ["memory", "sqlite"] {
        let dir = scratch(store);
        let (o, r) = campaign(store, "4", &dir);
        assert_eq!(o.status.code(), Some(0), "{store}: {}", show(&o));
        assert_eq!(r["status"], "pass", "{store}: {r:#}");
    }
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, test, Tool};
    run(vec![
        needs(
            Tool::Python3,
            "spi_23_spi_20_the_campaign_catches_racing_writes_by_the_history_they_break",
            spi_23_spi_20_the_campaign_catches_racing_writes_by_the_history_they_break,
        ),
        needs(
            Tool::Python3,
            "concurrency_the_faithful_adapter_passes_the_campaign_and_it_ran",
            concurrency_the_faithful_adapter_passes_the_campaign_and_it_ran,
        ),
        needs(
            Tool::Python3,
            "concurrency_no_shared_backend_or_one_client_is_a_skip",
            concurrency_no_shared_backend_or_one_client_is_a_skip,
        ),
        test(
            "concurrency_the_memory_and_sqlite_stores_pass_the_campaign",
            concurrency_the_memory_and_sqlite_stores_pass_the_campaign,
        ),
    ])
}
