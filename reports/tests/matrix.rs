//! The rule-by-rule matrix and the summary's rule counts.

mod common;

use common::*;
use loom_report::{CaseResult, Failure, Report, RuleInfo, RuleStatus, Status};

fn result(case: &str, status: Status) -> CaseResult {
    let mut r = CaseResult::pass("vectors", "kind", case, ["R-1"]);
    r.status = status;
    if status == Status::Fail {
        r.failure = Some(Failure::default());
    }
    r
}

#[test]
fn rule_status_follows_the_citing_results() {
    use RuleStatus as R;
    use Status as S;
    // (statuses of the results citing the rule, expected rule status)
    let table: &[(&[Status], RuleStatus)] = &[
        (&[], R::NoResult),
        (&[S::Pass], R::Pass),
        (&[S::Pass, S::Pass], R::Pass),
        (&[S::Pass, S::Fail], R::Fail),
        (&[S::Pass, S::Error], R::Fail),
        (&[S::Timeout], R::Fail),
        (&[S::Xfail, S::Fail], R::Fail),
        (&[S::Pass, S::Xfail], R::Xfail),
        (&[S::Xfail], R::Xfail),
        (&[S::SkipNotClaimed, S::SkipUntestable], R::Skipped),
        (&[S::SkipNotClaimed, S::Pass], R::Pass),
        (&[S::SkipNotClaimed, S::Xfail], R::Xfail),
        (&[S::ResolutionDifference], R::ResolutionDifference),
        (
            &[S::ResolutionDifference, S::SkipNotClaimed],
            R::ResolutionDifference,
        ),
        (&[S::ResolutionDifference, S::Pass], R::Pass),
        (&[S::ResolutionDifference, S::Fail], R::Fail),
    ];
    for (statuses, expected) in table {
        let results = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| result(&format!("c{i}"), *s))
            .collect();
        let report = Report::new(
            env(1),
            vec![RuleInfo::new("R-1", "MUST", "R", "r")],
            results,
        );
        let matrix = report.rule_matrix();
        assert_eq!(matrix.len(), 1);
        assert_eq!(matrix[0].status, *expected, "results {statuses:?}");
        assert_eq!(matrix[0].cases.len(), statuses.len());
        // A rule with a failing or expected-failing result is not evidenced, whatever passed.
        let passing = u64::from(*expected == R::Pass);
        assert_eq!(
            report.summary.rules_with_passing_evidence, passing,
            "{statuses:?}"
        );
        assert_eq!(
            report.summary.rules_failing,
            u64::from(*expected == R::Fail),
            "{statuses:?}"
        );
    }
}

#[test]
fn matrix_of_the_sample_report() {
    let report = sample_report();
    let rows: Vec<(String, RuleStatus, usize)> = report
        .rule_matrix()
        .into_iter()
        .map(|r| (r.rule.id, r.status, r.cases.len()))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("FOLD-01".to_string(), RuleStatus::Pass, 1),
            ("FOLD-09".to_string(), RuleStatus::Fail, 1),
            ("GATE-01".to_string(), RuleStatus::NoResult, 0),
            ("SNAP-02".to_string(), RuleStatus::Fail, 2),
            ("SPI-03".to_string(), RuleStatus::Skipped, 2),
        ]
    );
    let s = &report.summary;
    assert_eq!(s.rules_total, 5);
    assert_eq!(s.rules_with_passing_evidence, 1);
    assert_eq!(s.rules_failing, 2);
    assert_eq!(s.failures, 3);
    assert!(!s.ok);
    assert_eq!(s.by_group["FOLD"].pass, 1);
    assert_eq!(s.by_group["FOLD"].fail, 1);
    assert_eq!(s.by_group["SNAP"].error, 1);
    assert_eq!(s.by_group["SPI"].total(), 2);
    assert!(!s.by_group.contains_key("GATE"));
    assert_eq!(s.by_area["sim"].timeout, 1);
}

#[test]
fn cited_rules_missing_from_the_catalogue_are_listed() {
    let report = Report::new(
        env(1),
        rules(),
        vec![CaseResult::pass(
            "vectors",
            "k",
            "c",
            ["NEW-RULE-07", "FOLD-01"],
        )],
    );
    assert_eq!(report.summary.unknown_rules, ["NEW-RULE-07"]);
    assert_eq!(report.summary.by_group["NEW-RULE"].pass, 1);
    assert_eq!(report.summary.rules_with_passing_evidence, 1);
    let row = report
        .rule_matrix()
        .into_iter()
        .find(|r| r.rule.id == "NEW-RULE-07")
        .expect("unknown rule gets a row");
    assert_eq!(row.rule.level, "unknown");
    assert_eq!(row.status, RuleStatus::Pass);
}

#[test]
fn a_result_citing_a_rule_twice_counts_once() {
    let report = Report::new(
        env(1),
        rules(),
        vec![CaseResult::pass(
            "vectors",
            "k",
            "c",
            ["FOLD-01", "FOLD-01"],
        )],
    );
    let row = &report.rule_matrix()[0];
    assert_eq!(row.cases.len(), 1);
    assert_eq!(report.summary.by_group["FOLD"].pass, 1);
}

#[test]
fn status_names_and_failure_classes() {
    let table = [
        (Status::Pass, "pass", false),
        (Status::Fail, "fail", true),
        (Status::SkipNotClaimed, "skip-not-claimed", false),
        (Status::SkipUntestable, "skip-untestable", false),
        (Status::Xfail, "xfail", false),
        (Status::Error, "error", true),
        (Status::Timeout, "timeout", true),
        (Status::ResolutionDifference, "resolution-difference", false),
    ];
    assert_eq!(table.len(), Status::ALL.len());
    for (status, name, failure) in table {
        assert_eq!(status.as_str(), name);
        assert_eq!(
            serde_json::to_value(status).unwrap(),
            serde_json::json!(name)
        );
        assert_eq!(status.is_failure(), failure, "{name}");
    }
}

/// A resolution difference is neither a failure nor a pass: it does not fail the
/// verdict, credits no rule, and the spec-based figure counts only passes whose
/// expectation the spec's text decides.
#[test]
fn resolution_differences_neither_fail_nor_pass_and_spec_based_rules_are_counted() {
    use loom_report::{Subject, SubjectKind};
    let kernel =
        |id: &str| RuleInfo::new(id, "MUST", "R", "r").with_applies_to([SubjectKind::Kernel]);
    let rules = vec![kernel("R-1"), kernel("R-2"), kernel("R-3"), kernel("R-4")];
    let results = vec![
        // R-1: passes on a spec-based vector.
        CaseResult::pass("vectors", "fold", "a", ["R-1"]).with_basis(Vec::<String>::new()),
        // R-2: passes only on a vector that rests on a resolution the kernel claims.
        CaseResult::pass("vectors", "fold", "b", ["R-2"]).with_basis(["GAP-12"]),
        // R-3: only differs from an unclaimed resolution.
        CaseResult::resolution_difference(
            "vectors",
            "fold",
            "c",
            ["R-3"],
            "differs from the reference's resolution of GAP-12 (docs/decisions/0001-fold-shapes.md) at /state/sequence",
            Failure::values(serde_json::json!(3), serde_json::json!(4)),
        )
        .with_basis(["GAP-12"]),
        // R-4: passes on a result that states no basis (not spec-based evidence).
        CaseResult::pass("fuzz", "fold", "d", ["R-4"]),
    ];
    let report = Report::new(env(1), rules, results).with_subjects(vec![Subject::new(
        "kernel",
        SubjectKind::Kernel,
        "k",
    )]);
    let s = &report.summary;
    assert!(s.ok, "{:?}", s.verdict_reasons);
    assert_eq!(s.failures, 0);
    assert_eq!(s.by_status.resolution_difference, 1);
    assert_eq!(s.rules_total, 4);
    assert_eq!(s.rules_with_passing_evidence, 3);
    assert_eq!(s.rules_spec_based, 1);
    assert_eq!(s.rules_resolution_difference, 1);
    let f = &s.subjects[0];
    assert_eq!((f.rules_spec_based, f.rules_resolution_difference), (1, 1));
    assert!(f.binding_without_evidence.contains(&"R-3".to_string()));
    let sentence = report.figure_sentences().join(" ");
    assert!(
        sentence.contains("1 of them on spec-based evidence alone"),
        "{sentence}"
    );
    assert!(
        sentence.contains("1 result(s) differ only from the reference's resolutions"),
        "{sentence}"
    );
    // Visible in every rendering.
    let md = loom_report::render_markdown(&report);
    assert!(md.contains("Resolution differences (1)"), "{md}");
    assert!(md.contains("GAP\\-12") || md.contains("GAP-12"), "{md}");
    let html = loom_report::render_html(&report).unwrap();
    assert!(html.contains("id=\"resolution-differences\""));
    assert!(html.contains("0001-fold-shapes.md") && html.contains("GAP-12"));
    let junit = loom_report::render_junit(&report).unwrap();
    assert!(junit.contains("type=\"resolution-difference\""), "{junit}");
    assert!(!junit.contains("<failure"), "{junit}");
    // A only-resolution-difference run against a subject with no pass still fails.
    let only = Report::new(
        env(1),
        vec![kernel("R-3")],
        vec![CaseResult::resolution_difference(
            "vectors",
            "fold",
            "c",
            ["R-3"],
            "m",
            Failure::default(),
        )],
    )
    .with_subjects(vec![Subject::new("kernel", SubjectKind::Kernel, "k")]);
    assert!(!only.summary.ok);
}

/// A store's kit results state no basis (only vectors do), so a store's figure leaves
/// out the spec-based count, which would always read 0 (console and Markdown).
#[test]
fn a_store_figure_names_no_spec_based_count() {
    use loom_report::{Subject, SubjectKind};
    let rules = vec![RuleInfo::new("R-1", "MUST", "R", "r").with_applies_to([SubjectKind::Store])];
    let results = vec![CaseResult::pass("kits", "event-store", "a", ["R-1"])];
    let report = Report::new(env(1), rules, results).with_subjects(vec![Subject::new(
        "store",
        SubjectKind::Store,
        "s",
    )]);
    let sentence = report.figure_sentences().join(" ");
    assert!(
        sentence.contains("1 / 1 rules that apply to a store"),
        "{sentence}"
    );
    assert!(!sentence.contains("spec-based"), "{sentence}");
    let md = loom_report::render_markdown(&report);
    assert!(
        md.contains("1 / 1 applicable rules passing; 0 failing"),
        "{md}"
    );
    assert!(!md.contains("spec-based"), "{md}");
}
