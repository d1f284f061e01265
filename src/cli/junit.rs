//! Reads a JUnit XML file (as cargo-nextest writes it) into results: each test whose name
//! carries rule ids (`fold_09_…`) becomes evidence for those rules in the report. This is
//! how `loom check` credits the rules proven by `cargo test` without re-running it.

use loom_report::{CaseResult, Failure};

/// One `<testcase>` of the file.
struct TestCase {
    suite: String,
    name: String,
    outcome: Outcome,
}

enum Outcome {
    Pass,
    Fail(String),
    Skip,
}

/// Decodes the five XML entities and numeric references.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let end = tail.find(';').unwrap_or(0);
        let entity = &tail[1..end.max(1)];
        let decoded = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e if e.starts_with("#x") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) if end > 0 => {
                out.push(c);
                rest = &tail[end + 1..];
            }
            _ => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')? + start;
    Some(unescape(&tag[start..end]))
}

fn parse(xml: &str) -> Vec<TestCase> {
    let mut out = Vec::new();
    let mut suite = String::new();
    let mut rest = xml;
    while let Some(i) = rest.find('<') {
        rest = &rest[i..];
        let Some(end) = rest.find('>') else { break };
        let tag = &rest[..=end];
        if tag.starts_with("<testsuite ") || tag.starts_with("<testsuite>") {
            suite = attr(tag, "name").unwrap_or_default();
        } else if tag.starts_with("<testcase") {
            let name = attr(tag, "name").unwrap_or_default();
            let self_closing = tag.ends_with("/>");
            let body_end = if self_closing {
                0
            } else {
                rest.find("</testcase>").unwrap_or(0)
            };
            let body = &rest[..body_end];
            let outcome = if body.contains("<failure") || body.contains("<error") {
                let msg = body
                    .find("<failure")
                    .or_else(|| body.find("<error"))
                    .and_then(|j| {
                        attr(
                            &body[j..body[j..].find('>').map_or(body.len(), |k| j + k + 1)],
                            "message",
                        )
                    })
                    .unwrap_or_else(|| "failed".into());
                Outcome::Fail(msg)
            } else if body.contains("<skipped") {
                Outcome::Skip
            } else {
                Outcome::Pass
            };
            out.push(TestCase {
                suite: suite.clone(),
                name,
                outcome,
            });
        }
        rest = &rest[end + 1..];
    }
    out
}

/// Results for every test that cites a rule. Tests citing none are counted in the
/// returned total but produce no result (they are evidence of nothing in particular).
pub fn results(xml: &str) -> (Vec<CaseResult>, usize) {
    let cases = parse(xml);
    let total = cases.len();
    let mut out = Vec::new();
    for c in cases {
        let leaf = c.name.rsplit("::").next().unwrap_or(&c.name);
        let rules = loom_spec::ids_in_test_name(leaf);
        if rules.is_empty() {
            continue;
        }
        let case_id = format!("{}::{}", c.suite, c.name);
        out.push(match c.outcome {
            Outcome::Pass => CaseResult::pass("tests", &c.suite, case_id, rules),
            Outcome::Skip => CaseResult::skip_untestable(
                "tests",
                &c.suite,
                case_id,
                rules,
                "skipped by the test runner",
            ),
            Outcome::Fail(msg) => CaseResult::fail(
                "tests",
                &c.suite,
                case_id,
                rules,
                msg,
                Failure::values(serde_json::Value::Null, serde_json::Value::Null),
            ),
        });
    }
    (out, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nextest_junit_maps_named_tests_to_rules() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="3" failures="1">
  <testsuite name="loom-kernel::fold" tests="3">
    <testcase name="fold_09_step_failed_does_not_fail_execution" classname="loom-kernel::fold" time="0.01"/>
    <testcase name="snap_01_and_snap_10_x" classname="loom-kernel::snapshot" time="0.01">
      <failure message="assertion &quot;a&quot; failed" type="test failure">boom</failure>
    </testcase>
    <testcase name="helper_without_rule" classname="x"></testcase>
  </testsuite>
</testsuites>"#;
        let (results, total) = results(xml);
        assert_eq!(total, 3);
        assert_eq!(results.len(), 2);
        assert_eq!(results[0].rules, ["FOLD-09"]);
        assert_eq!(results[0].status, loom_report::Status::Pass);
        assert_eq!(results[1].rules, ["SNAP-01", "SNAP-10"]);
        assert_eq!(results[1].status, loom_report::Status::Fail);
        assert_eq!(
            results[1].message.as_deref(),
            Some("assertion \"a\" failed")
        );
    }
}
