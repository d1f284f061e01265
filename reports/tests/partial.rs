//! A run that left something out passes only as a **partial** pass, in every rendering:
//! the console's words come from `Report::verdict` and `Report::partial_sentences`, and
//! report.md, summary.md, report.html, the badge and the JUnit properties say it too.
//! And a subject's rule matrix shows the rules that apply to its kind, the rest folded.

mod common;

use common::*;
use loom_report::{
    render_badge, render_html, render_junit, render_markdown, render_summary, CaseResult,
    Expectations, Report, RuleInfo, Subject, SubjectKind, Verdict, BADGE_PARTIAL,
};
use serde_json::Value;

const NOT_RUN: &str = "the sim and tests parts";
const COMPLETE_WITH: &str = "run loom check without --only and --skip";

fn partial(report: Report) -> Report {
    report.with_expectations(Expectations::default().omit("reference", NOT_RUN, COMPLETE_WITH))
}

/// The same passing report, complete and partial.
fn pair() -> (Report, Report) {
    let subject = Subject::new("reference", SubjectKind::Reference, "the reference");
    let complete = green_report("fold", 1, 3).with_subjects(vec![subject]);
    let partial = partial(complete.clone());
    (complete, partial)
}

#[test]
fn a_run_that_left_something_out_is_a_partial_pass_never_a_pass() {
    let (complete, partial) = pair();
    assert_eq!(complete.verdict(), Verdict::Pass);
    assert!(complete.partial_sentences().is_empty());
    assert_eq!(partial.verdict(), Verdict::PartialPass);
    assert!(
        partial.summary.ok,
        "what ran passed: the exit status stays 0"
    );
    assert!(partial.summary.partial);
    let sentences = partial.partial_sentences();
    assert_eq!(sentences.len(), 1);
    for needed in ["partial", NOT_RUN, "reference", COMPLETE_WITH] {
        assert!(sentences[0].contains(needed), "{needed}: {}", sentences[0]);
    }
    // A failing run stays a failure whatever it left out.
    let failing = self::partial(sample_report());
    assert_eq!(failing.verdict(), Verdict::Fail);
    // The JSON carries it, and reads back with the same digest.
    let json = partial.to_json_pretty();
    let back = Report::from_json_str(&json).unwrap();
    assert!(back.verify_digest());
    assert_eq!(back.verdict(), Verdict::PartialPass);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["summary"]["partial"], true);
    assert_eq!(v["expectations"]["omitted"][0]["notRun"], NOT_RUN);
    // A complete report's JSON has neither field (older readers see nothing new).
    let v: Value = serde_json::from_str(&complete.to_json_pretty()).unwrap();
    assert!(v["summary"].get("partial").is_none());
}

#[test]
fn every_rendering_says_partial_and_how_to_complete_the_run() {
    let (complete, partial) = pair();
    let md = render_markdown(&partial);
    assert!(
        md.starts_with("## Loom conformance report: ⚠️ PARTIAL PASS"),
        "{md}"
    );
    assert!(md.contains(COMPLETE_WITH), "{md}");
    let summary = render_summary(&partial);
    assert!(
        summary.starts_with("### Loom conformance: ⚠️ PARTIAL PASS"),
        "{summary}"
    );
    assert!(
        summary.contains(NOT_RUN) && summary.contains(COMPLETE_WITH),
        "{summary}"
    );
    let html = render_html(&partial).unwrap();
    assert!(html.contains(r#"<span id="verdict" class="verdict partial-pass">PARTIAL PASS</span>"#));
    assert!(html.contains("<title>PARTIAL PASS: Loom conformance report</title>"));
    assert!(html.contains(COMPLETE_WITH));
    let junit = render_junit(&partial).unwrap();
    assert!(
        junit.contains(r#"<property name="verdict" value="partial-pass"/>"#),
        "{junit}"
    );
    assert!(junit.contains(r#"<property name="partial" value="partial: not run against reference: the sim and tests parts"#), "{junit}");

    let badge: Value = serde_json::from_str(&render_badge(&partial)).unwrap();
    assert_eq!(badge["message"], BADGE_PARTIAL.0);
    assert_eq!(badge["color"], BADGE_PARTIAL.1);
    let green: Value = serde_json::from_str(&render_badge(&complete)).unwrap();
    assert_ne!(
        green["color"], badge["color"],
        "a partial pass has its own colour"
    );
    assert_ne!(green["message"], badge["message"]);

    // The complete report says none of it.
    for text in [
        render_markdown(&complete),
        render_summary(&complete),
        render_html(&complete).unwrap(),
        render_junit(&complete).unwrap(),
    ] {
        assert!(!text.contains("PARTIAL") && !text.contains(r#"="partial-pass""#));
        assert!(!text.contains(COMPLETE_WITH));
    }
}

#[test]
fn a_merge_is_partial_when_any_input_is() {
    let (complete, partial) = pair();
    let mut other = green_report("vectors", 2, 2).with_subjects(vec![Subject::new(
        "reference",
        SubjectKind::Reference,
        "the reference",
    )]);
    other.recompute();
    let merged = loom_report::merge(&[complete.clone(), other.clone()]).unwrap();
    assert_eq!(merged.verdict(), Verdict::Pass);
    let merged = loom_report::merge(&[partial, other]).unwrap();
    assert_eq!(merged.verdict(), Verdict::PartialPass);
}

/// Rules of two kinds and a gap; the store's results cite a store rule and the gap.
fn store_report() -> Report {
    let rules = vec![
        RuleInfo::new("SPI-03", "MUST", "SPI", "fences reject stale writers")
            .with_applies_to([SubjectKind::Store]),
        RuleInfo::new("SPI-04", "MUST", "SPI", "appends are atomic")
            .with_applies_to([SubjectKind::Store]),
        RuleInfo::new("FOLD-01", "MUST", "FOLD", "events fold in sequence order")
            .with_applies_to([SubjectKind::Kernel]),
        RuleInfo::new("FOLD-02", "MUST", "FOLD", "unknown kinds are inert")
            .with_applies_to([SubjectKind::Kernel]),
        RuleInfo::new("GAP-27", loom_report::GAP_LEVEL, "GAP", "an open point"),
        RuleInfo::new(
            "GAP-28",
            loom_report::GAP_LEVEL,
            "GAP",
            "another open point",
        ),
    ];
    let results = vec![CaseResult::pass(
        "kits",
        "event-store",
        "fence",
        ["SPI-03", "GAP-27"],
    )];
    Report::new(env(1), rules, results).with_subjects(vec![Subject::new(
        "store",
        SubjectKind::Store,
        "a store",
    )])
}

#[test]
fn a_store_matrix_shows_its_rules_and_folds_the_rest_away() {
    let report = store_report();
    let (shown, folded) = report.rule_matrix_folded();
    let ids =
        |rows: &[loom_report::RuleRow]| rows.iter().map(|r| r.rule.id.clone()).collect::<Vec<_>>();
    // Both store rules (one without a result), and the gap a result cites.
    assert_eq!(ids(&shown), ["GAP-27", "SPI-03", "SPI-04"]);
    assert_eq!(ids(&folded), ["FOLD-01", "FOLD-02", "GAP-28"]);

    let html = render_html(&report).unwrap();
    let (open, closed) = html
        .split_once(r#"<details id="matrix-other">"#)
        .expect("a folded block");
    assert!(
        html.contains("Rule matrix (2 rules that apply to a store, 1 more that its results cite)")
    );
    assert!(closed.contains("3 catalogue entries that do not apply to a store"));
    let matrix = open.split_once(r#"<section id="matrix">"#).unwrap().1;
    for id in ["SPI-03", "SPI-04", "GAP-27"] {
        assert!(
            matrix.contains(&format!(r#"<tr id="rule-{}""#, id.to_lowercase())),
            "{id}"
        );
    }
    for id in ["FOLD-01", "FOLD-02", "GAP-28"] {
        assert!(
            !matrix.contains(&format!(r#"<tr id="rule-{}""#, id.to_lowercase())),
            "{id}"
        );
        assert!(
            closed.contains(&format!(r#"<tr id="rule-{}""#, id.to_lowercase())),
            "{id}"
        );
    }
    // The rows are markup, not escaped text.
    assert!(!html.contains("&lt;tr id="));

    let md = render_markdown(&report);
    let rules = md
        .split_once("### Rules (2 that apply to a store, 1 more that its results cite)")
        .expect(&md)
        .1;
    assert!(
        rules.contains("| `SPI-04` | MUST | no-result | 0 |"),
        "{rules}"
    );
    assert!(
        !rules.contains("FOLD-01") && !rules.contains("GAP-28"),
        "{rules}"
    );
    assert!(
        rules.contains("3 catalogue entries do not apply to a store"),
        "{rules}"
    );
}

#[test]
fn a_report_without_a_subject_folds_nothing() {
    let mut report = store_report();
    report.subjects.clear();
    report.recompute();
    let (shown, folded) = report.rule_matrix_folded();
    assert_eq!(shown.len(), 6);
    assert!(folded.is_empty());
    assert!(!render_html(&report).unwrap().contains("matrix-other"));
    assert!(!render_markdown(&report).contains("catalogue entries"));
}
