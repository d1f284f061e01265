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
    ];
    for (status, name, failure) in table {
        assert_eq!(status.as_str(), name);
        assert_eq!(
            serde_json::to_value(status).unwrap(),
            serde_json::json!(name)
        );
        assert_eq!(status.is_failure(), failure, "{name}");
    }
}
