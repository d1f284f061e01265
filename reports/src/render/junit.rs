//! JUnit XML through `quick-junit`: one testsuite per `(area, suite)`, one
//! testcase per result.

use super::{pretty, RenderError};
use crate::model::{CaseResult, Status};
use crate::report::Report;
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};
use std::collections::BTreeMap;
use std::time::Duration;

/// Renders the report as JUnit XML.
///
/// Each `(area, suite)` is a `<testsuite name="area.suite">`; each result a
/// `<testcase name="case_id" classname="area.suite">` with one
/// `<property name="rule" value="..."/>` per rule ID. `fail` is a
/// `<failure>` whose text holds the path, event index, expected, actual and
/// diff; `error` and `timeout` are `<error>`; skips are `<skipped>`; `xfail`
/// passes with a property `xfail` holding the reason. Every suite carries the run's
/// `verdict` (`pass`, `partial-pass`, `fail`) and one `partial` property per thing the
/// run left out.
pub fn render_junit(report: &Report) -> Result<String, RenderError> {
    let mut junit = quick_junit::Report::new("loom-report");
    let mut suites: BTreeMap<(&str, &str), Vec<&CaseResult>> = BTreeMap::new();
    for result in &report.results {
        suites
            .entry((result.area.as_str(), result.suite.as_str()))
            .or_default()
            .push(result);
    }
    let partial = report.partial_sentences();
    for ((area, suite), results) in suites {
        let name = format!("{area}.{suite}");
        let mut ts = TestSuite::new(name.as_str());
        ts.add_property(Property::new("digest", report.digest.as_str()));
        ts.add_property(Property::new("tool", report.environment.tool.as_str()));
        ts.add_property(Property::new(
            "tool_version",
            report.environment.tool_version.as_str(),
        ));
        ts.add_property(Property::new("verdict", report.verdict().slug()));
        for line in &partial {
            ts.add_property(Property::new("partial", line.as_str()));
        }
        for result in results {
            ts.add_test_case(test_case(result, &name));
        }
        junit.add_test_suite(ts);
    }
    junit.to_string().map_err(|e| RenderError {
        format: "JUnit XML",
        message: e.to_string(),
    })
}

fn test_case(result: &CaseResult, classname: &str) -> TestCase {
    let status = match result.status {
        Status::Pass | Status::Xfail => TestCaseStatus::success(),
        Status::Fail | Status::Error | Status::Timeout => {
            let kind = if result.status == Status::Fail {
                NonSuccessKind::Failure
            } else {
                NonSuccessKind::Error
            };
            let mut status = TestCaseStatus::non_success(kind);
            status.set_type(result.status.as_str());
            status.set_message(
                result
                    .message
                    .clone()
                    .unwrap_or_else(|| result.status.as_str().to_string()),
            );
            let details = failure_text(result);
            if !details.is_empty() {
                status.set_description(details);
            }
            status
        }
        Status::SkipNotClaimed | Status::SkipUntestable => {
            let mut status = TestCaseStatus::skipped();
            status.set_type(result.status.as_str());
            if let Some(message) = &result.message {
                status.set_message(message.as_str());
            }
            status
        }
        // Neither a failure nor a pass: skipped with its own type, the message naming
        // the open point and the details saying where the answer differs.
        Status::ResolutionDifference => {
            let mut status = TestCaseStatus::skipped();
            status.set_type(result.status.as_str());
            if let Some(message) = &result.message {
                status.set_message(message.as_str());
            }
            let details = failure_text(result);
            if !details.is_empty() {
                status.set_description(details);
            }
            status
        }
    };
    let mut tc = TestCase::new(result.case_id.as_str(), status);
    tc.set_classname(classname);
    if let Some(ms) = result.duration_ms {
        tc.set_time(Duration::from_millis(ms));
    }
    tc.add_property(Property::new("status", result.status.as_str()));
    if let Some(subject) = &result.subject {
        tc.add_property(Property::new("subject", subject.as_str()));
    }
    for rule in &result.rules {
        tc.add_property(Property::new("rule", rule.as_str()));
    }
    if let Some(reason) = &result.xfail_reason {
        tc.add_property(Property::new("xfail", reason.as_str()));
    }
    if let Some(basis) = result.basis {
        tc.add_property(Property::new("basis", basis.as_str()));
    }
    for gap in &result.resolutions {
        tc.add_property(Property::new("resolution", gap.as_str()));
    }
    tc
}

/// The failure's details as plain text.
fn failure_text(result: &CaseResult) -> String {
    let Some(f) = &result.failure else {
        return String::new();
    };
    let mut out = String::new();
    if let Some(path) = &f.path {
        out.push_str(&format!("first differing path: {path}\n"));
    }
    if let Some(idx) = f.event_index {
        out.push_str(&format!("event index: {idx}\n"));
    }
    if let Some(expected) = &f.expected {
        out.push_str(&format!("expected:\n{}\n", pretty(expected)));
    }
    if let Some(actual) = &f.actual {
        out.push_str(&format!("actual:\n{}\n", pretty(actual)));
    }
    if let Some(diff) = &f.diff {
        out.push_str(&format!("diff:\n{diff}\n"));
    }
    out
}
