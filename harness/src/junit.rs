//! Reads a JUnit XML file (as cargo-nextest writes it): one [`TestCase`] per
//! `<testcase>`, with its outcome. [`crate::tests_part`] decides what they credit.

/// One `<testcase>` of the file.
pub struct TestCase {
    /// The `<testsuite>` name (nextest: the binary id, `crate::test-target`).
    pub suite: String,
    /// The test's name.
    pub name: String,
    /// What happened.
    pub outcome: Outcome,
}

/// A test's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It ran and passed.
    Pass,
    /// It failed or errored, with the message.
    Fail(String),
    /// It did not run (ignored, skipped).
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

/// Every `<testcase>` of `xml`, in document order.
pub fn parse(xml: &str) -> Vec<TestCase> {
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
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nextest_junit_outcomes_are_read_with_their_suite() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="3" failures="1">
  <testsuite name="loom-kernel::fold" tests="3">
    <testcase name="fold_09_step_failed_does_not_fail_execution" classname="loom-kernel::fold" time="0.01"/>
    <testcase name="snap_01_and_snap_10_x" classname="loom-kernel::snapshot" time="0.01">
      <failure message="assertion &quot;a&quot; failed" type="test failure">boom</failure>
    </testcase>
    <testcase name="ignored_one" classname="x"><skipped/></testcase>
  </testsuite>
</testsuites>"#;
        let cases = parse(xml);
        assert_eq!(cases.len(), 3);
        assert_eq!(cases[0].suite, "loom-kernel::fold");
        assert_eq!(cases[0].outcome, Outcome::Pass);
        assert_eq!(
            cases[1].outcome,
            Outcome::Fail("assertion \"a\" failed".into())
        );
        assert_eq!(cases[2].outcome, Outcome::Skip);
    }
}
