//! What the tests part credits: only tests that ran and passed in a recorded test run of
//! this very source tree. A stale, edited or hand-written JUnit file, a skipped or
//! ignored test, and a rule id that only appears in a message credit nothing.

use loom_harness::tests_part::{self, record, record_path, TestRunRecord};
use loom_report::Status;
use std::path::PathBuf;

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("loom-credit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const JUNIT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run">
  <testsuite name="loom-kernel::fold" tests="4">
    <testcase name="fold_09_step_failed_does_not_fail_execution" classname="loom-kernel::fold"/>
    <testcase name="fold_13_never_ran" classname="loom-kernel::fold"><skipped/></testcase>
    <testcase name="plain_helper_test" classname="loom-kernel::fold"/>
    <testcase name="message_only" classname="loom-kernel::fold"><failure message="FOLD-03 broke"/></testcase>
  </testsuite>
  <testsuite name="loom-report::matrix" tests="1">
    <testcase name="fold_01_a_report_test" classname="loom-report::matrix"/>
  </testsuite>
</testsuites>"#;

fn write(dir: &Dir, text: &str) -> PathBuf {
    let p = dir.0.join("junit.xml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_recorded_run_credits_passed_tests_by_name_and_skips_and_messages_credit_nothing() {
    let dir = Dir::new("recorded");
    let junit = write(&dir, JUNIT);
    record(&junit).unwrap();
    let results = tests_part::run(&junit).unwrap();
    let passed: Vec<&str> = results
        .iter()
        .filter(|r| r.status == Status::Pass)
        .flat_map(|r| r.rules.iter().map(String::as_str))
        .collect();
    assert!(passed.contains(&"FOLD-09"));
    assert_eq!(
        passed.len(),
        2,
        "FOLD-09 and the report crate's FOLD-01: {passed:?}"
    );
    assert!(
        !passed.contains(&"FOLD-13"),
        "a skipped test is not evidence"
    );
    assert!(
        !passed.contains(&"FOLD-03"),
        "a rule in a message is not evidence"
    );
    let skipped = results
        .iter()
        .find(|r| r.case_id.ends_with("fold_13_never_ran"))
        .unwrap();
    assert_eq!(skipped.status, Status::SkipUntestable);
    // A failing test fails the run even though its name cites no rule.
    let failed = results
        .iter()
        .find(|r| r.case_id.ends_with("message_only"))
        .unwrap();
    assert_eq!(failed.status, Status::Fail);
    // The report crate's own test is the harness's self-check, not the reference's.
    let own = results
        .iter()
        .find(|r| r.case_id.ends_with("fold_01_a_report_test"))
        .unwrap();
    assert_eq!(own.subject.as_deref(), Some("harness"));
    let kernel = results.iter().find(|r| r.rules == ["FOLD-09"]).unwrap();
    assert_eq!(kernel.subject.as_deref(), Some("reference"));
}

fn only_error(results: &[loom_report::CaseResult], needle: &str) {
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0].status, Status::Error);
    assert!(results[0].rules.is_empty(), "a stale file cites no rule");
    let msg = results[0].message.as_deref().unwrap();
    assert!(msg.contains(needle), "{msg}");
    assert!(msg.contains("credits nothing"), "{msg}");
}

#[test]
fn a_hand_written_junit_without_a_record_credits_nothing() {
    let dir = Dir::new("handwritten");
    let junit = write(
        &dir,
        r#"<testsuites><testsuite name="loom-kernel::fold"><testcase name="fold_13_never_existed"/></testsuite></testsuites>"#,
    );
    only_error(&tests_part::run(&junit).unwrap(), "has no record");
}

#[test]
fn a_junit_edited_after_its_record_credits_nothing() {
    let dir = Dir::new("edited");
    let junit = write(&dir, JUNIT);
    record(&junit).unwrap();
    std::fs::write(&junit, JUNIT.replace("<skipped/>", "")).unwrap();
    only_error(&tests_part::run(&junit).unwrap(), "changed after");
}

#[test]
fn a_junit_from_another_source_tree_credits_nothing() {
    let dir = Dir::new("stale");
    let junit = write(&dir, JUNIT);
    record(&junit).unwrap();
    let mut rec: TestRunRecord =
        serde_json::from_str(&std::fs::read_to_string(record_path(&junit)).unwrap()).unwrap();
    rec.source_tree_digest = "sha256:0000".into();
    std::fs::write(record_path(&junit), serde_json::to_string(&rec).unwrap()).unwrap();
    only_error(&tests_part::run(&junit).unwrap(), "another source tree");
}

#[test]
fn no_junit_file_is_an_error_for_the_caller_to_report() {
    let dir = Dir::new("missing");
    assert!(tests_part::run(&dir.0.join("nope.xml")).is_err());
}

#[test]
fn the_compat_gate_and_manifest_tests_of_loom_spec_exercise_the_reference() {
    assert_eq!(
        tests_part::subject_of_suite("loom-spec::compat"),
        "reference"
    );
    assert_eq!(
        tests_part::subject_of_suite("loom-spec::manifest"),
        "reference"
    );
    assert_eq!(
        tests_part::subject_of_suite("loom-spec::evidence"),
        "harness"
    );
    assert_eq!(
        tests_part::subject_of_suite("loom-report::matrix"),
        "harness"
    );
    assert_eq!(
        tests_part::subject_of_suite("loom-kernel::fold"),
        "reference"
    );
    assert_eq!(tests_part::subject_of_suite("loom::cli"), "reference");
}
