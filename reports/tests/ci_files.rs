//! `summary.md` (the GitHub job summary) and `badge.json` (a shields.io endpoint): what
//! a CI page shows without opening the report.

mod common;

use common::*;
use loom_report::{render_badge, render_summary, CaseResult, Failure, Report};
use serde_json::{json, Value};

#[test]
fn the_badge_is_a_shields_endpoint_green_on_pass_red_with_the_failure_count() {
    let green: Value = serde_json::from_str(&render_badge(&green_report("vectors", 1, 3))).unwrap();
    assert_eq!(green["schemaVersion"], 1);
    assert_eq!(green["message"], "pass");
    assert_eq!(green["color"], "brightgreen");
    assert!(green["label"].as_str().is_some_and(|l| !l.is_empty()));
    let red: Value = serde_json::from_str(&render_badge(&sample_report())).unwrap();
    // fail + error + timeout in the sample report.
    assert_eq!(red["message"], "3 failing");
    assert_eq!(red["color"], "red");
    for key in ["schemaVersion", "label", "message", "color"] {
        assert!(red.get(key).is_some(), "{key}");
    }
    assert_eq!(red.as_object().unwrap().len(), 4, "only keys shields knows");
}

#[test]
fn the_summary_leads_with_the_verdict_and_lists_each_failure_with_rule_and_place() {
    let report = sample_report();
    let md = render_summary(&report);
    assert!(md.starts_with("### Loom conformance: ❌ FAIL"), "{md}");
    assert!(md.contains("**3 failing** of 7 results"), "{md}");
    let row = md
        .lines()
        .find(|l| l.contains("vectors/fold/fold-009"))
        .expect("a row for the failing case");
    assert!(row.contains("FOLD-09") && row.contains("event 4"), "{row}");
    assert!(row.contains("`/status`"), "the first differing path: {row}");
    assert!(md.contains(&report.digest));
    let green = render_summary(&green_report("vectors", 1, 3));
    assert!(green.starts_with("### Loom conformance: ✅ PASS"));
    assert!(
        !green.contains("| status |"),
        "no failure table when nothing failed"
    );
}

#[test]
fn the_summary_is_short_and_escapes_what_results_carry() {
    let mut results: Vec<CaseResult> = (0..40)
        .map(|i| {
            CaseResult::fail(
                "kits",
                "event-store",
                format!("case-{i}"),
                ["SPI-03"],
                "<img src=x onerror=alert(1)> | broken\\nrow",
                Failure::values(json!(1), json!(2)),
            )
        })
        .collect();
    results.push(CaseResult::pass("kits", "event-store", "ok", ["SPI-03"]));
    let report = Report::new(env(1), rules(), results);
    let md = render_summary(&report);
    // Every `<` that is not our own <sub> is backslash-escaped, so no raw HTML survives.
    let ours = md.replace("<sub>", "").replace("</sub>", "");
    assert!(
        ours.match_indices('<')
            .all(|(i, _)| ours[..i].ends_with('\\')),
        "raw HTML leaked: {md}"
    );
    let rows = md.lines().filter(|l| l.starts_with("| fail |")).count();
    assert_eq!(rows, loom_report::SUMMARY_FAILURES_MAX);
    assert!(md.contains("…and 30 more"), "{md}");
    for line in md.lines().filter(|l| l.starts_with("| fail |")) {
        assert_eq!(
            line.matches(" | ").count(),
            4,
            "a pipe in a message split the row: {line}"
        );
    }
}
