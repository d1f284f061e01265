//! The JUnit XML is read by real consumers: the `junitparser` package and
//! Python's stdlib `xml.etree`. This test needs a Python with `junitparser`:
//! `$LOOM_PYTHON` (`./scripts/test` points it at a virtual environment it sets up), else
//! `python3`; without it the test fails and says so.

mod common;

use common::*;
use loom_report::{render_junit, Status};
use std::process::Command;

const CHECK_SCRIPT: &str = r#"
import json, sys
import xml.etree.ElementTree as ET
from junitparser import JUnitXml, Failure, Error, Skipped

path = sys.argv[1]
xml = JUnitXml.fromfile(path)
cases = failures = errors = skipped = 0
rules = {}
xfail = {}
for suite in xml:
    for case in suite:
        cases += 1
        kinds = [type(r) for r in case.result]
        failures += kinds.count(Failure)
        errors += kinds.count(Error)
        skipped += kinds.count(Skipped)
        key = case.classname + "::" + case.name
        props = case.child(__import__("junitparser").Properties)
        if props is not None:
            rules[key] = [p.value for p in props if p.name == "rule"]
            xfail[key] = [p.value for p in props if p.name == "xfail"]

root = ET.parse(path).getroot()
etree_cases = len(root.findall(".//testcase"))
etree_failures = len(root.findall(".//testcase/failure"))
etree_errors = len(root.findall(".//testcase/error"))
etree_skipped = len(root.findall(".//testcase/skipped"))
suites = sorted(s.get("name") for s in root.findall("testsuite"))

print(json.dumps({
    "cases": cases, "failures": failures, "errors": errors, "skipped": skipped,
    "etree": [etree_cases, etree_failures, etree_errors, etree_skipped],
    "suites": suites, "rules": rules, "xfail": xfail,
}))
"#;

/// `$LOOM_PYTHON` (the virtual environment `./scripts/test` sets up), else `python3`.
fn python_with_junitparser() -> String {
    let python = std::env::var("LOOM_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let probe = Command::new(&python)
        .args(["-c", "import junitparser"])
        .output();
    match probe {
        Ok(out) if out.status.success() => python,
        Ok(out) => panic!(
            "python3 cannot import junitparser; run `pip install junitparser` (stderr: {})",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => {
            panic!("python3 is not available ({e}); install it and run `pip install junitparser`")
        }
    }
}

#[test]
fn junit_is_accepted_by_junitparser_and_xml_etree() {
    let python = python_with_junitparser();
    let report = sample_report();
    let xml = render_junit(&report).expect("junit");
    let dir = std::env::temp_dir().join(format!("loom-report-junit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("report.xml");
    std::fs::write(&path, &xml).unwrap();

    let out = Command::new(python)
        .args(["-c", CHECK_SCRIPT])
        .arg(&path)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python failed to parse the JUnit file:\n{}\n--- xml ---\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("script output");

    let count =
        |pred: fn(Status) -> bool| report.results.iter().filter(|r| pred(r.status)).count() as u64;
    let n_fail = count(|s| s == Status::Fail);
    let n_error = count(|s| matches!(s, Status::Error | Status::Timeout));
    let n_skip = count(Status::is_skip);
    let n_cases = report.results.len() as u64;
    assert_eq!(got["cases"], n_cases, "{got}");
    assert_eq!(got["failures"], n_fail, "{got}");
    assert_eq!(got["errors"], n_error, "{got}");
    assert_eq!(got["skipped"], n_skip, "{got}");
    assert_eq!(
        got["etree"],
        serde_json::json!([n_cases, n_fail, n_error, n_skip])
    );
    assert_eq!(
        got["suites"],
        serde_json::json!([
            "kits.event-store",
            "kits.snapshot-store",
            "sim.deploy",
            "vectors.fold"
        ])
    );
    assert_eq!(
        got["rules"]["vectors.fold::fold-009"],
        serde_json::json!(["FOLD-09"])
    );
    assert_eq!(
        got["xfail"]["kits.snapshot-store::snap-1"],
        serde_json::json!(["issue 12"])
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn junit_failure_text_carries_expected_actual_and_path() {
    let xml = render_junit(&sample_report()).unwrap();
    assert!(
        xml.contains(r#"<failure message="state differs" type="fail">"#),
        "{xml}"
    );
    assert!(xml.contains("first differing path: /status"));
    assert!(xml.contains("event index: 4"));
    assert!(xml.contains("expected:\n{"));
    assert!(xml.contains("actual:\n{"));
    assert!(
        xml.contains(r#"<error message="hung for 30s" type="timeout"/>"#),
        "{xml}"
    );
    assert!(xml.contains(r#"<property name="rule" value="FOLD-09"/>"#));
}
