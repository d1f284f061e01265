//! Judging power: every deliberately wrong kernel (`loom_vectors::wrong::Bug`) fails the
//! vectors of the rules it breaks, by rule id, and nothing else: no error, no failure
//! of a kind the bug cannot touch. The faithful kernel passes everything (see
//! `tests/vectors.rs` and `tests/protocol.rs`). Bugs no fixed vector catches are marked
//! `fuzz_only`; this test checks that claim too (the vectors really pass them), and
//! `tests/fuzz.rs` shows the differential campaign finds them.
//!
//! The wrong kernels run in-process here (the same method table the protocol serves);
//! `tests/protocol.rs` runs a sample of them, and the Python proxies, over stdio.

use loom_report::{CaseResult, Status};
use loom_vectors::runner::{run_vector, Claims, InProcessKernel, KernelClient};
use loom_vectors::set::{default_cases_dir, load_set};
use loom_vectors::wrong::Bug;
use loom_vectors::{ReferenceKernel, Vector};
use std::collections::BTreeSet;

fn vectors() -> Vec<Vector> {
    load_set(&default_cases_dir())
        .expect("the set loads")
        .vectors
}

fn run_bug(bug: Bug, vectors: &[Vector]) -> Vec<CaseResult> {
    let mut kernel = InProcessKernel {
        kernel: ReferenceKernel::with_bug(bug),
    };
    let claims = Claims::from_hello(kernel.hello().expect("hello"));
    vectors
        .iter()
        .filter(|v| bug.kinds().contains(&v.kind.as_str()))
        .map(|v| run_vector(&mut kernel, &claims, v))
        .collect()
}

/// What is wrong with how the vectors judged `bug`, if anything.
fn judge(bug: Bug, results: &[CaseResult]) -> Vec<String> {
    let mut problems = Vec::new();
    let failed: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.status != Status::Pass)
        .collect();
    for r in &failed {
        if r.status != Status::Fail {
            problems.push(format!(
                "{}: {} is {}, not fail: {:?}",
                bug.as_str(),
                r.case_id,
                r.status,
                r.message
            ));
        }
    }
    let rules: BTreeSet<&str> = failed
        .iter()
        .flat_map(|r| r.rules.iter().map(String::as_str))
        .collect();
    if bug.fuzz_only() {
        if !failed.is_empty() {
            problems.push(format!(
                "{}: marked fuzz-only, but {} vector(s) catch it (first {}); move it to the vector-caught list",
                bug.as_str(),
                failed.len(),
                failed[0].case_id
            ));
        }
        return problems;
    }
    for rule in bug.must_fail_rules() {
        if !rules.contains(rule) {
            problems.push(format!(
                "{}: no failing vector proves {rule}; failed rules: {rules:?}",
                bug.as_str()
            ));
        }
    }
    problems
}

#[test]
fn every_wrong_kernel_fails_with_the_right_rule() {
    let vs = vectors();
    let bugs: Vec<Bug> = Bug::ALL.to_vec();
    assert!(
        bugs.iter().filter(|b| !b.fuzz_only()).count() >= 40,
        "the judging-power set holds at least 40 kernels the vectors must catch"
    );
    // Two threads: the machine the suite runs on has two cores.
    let (a, b) = bugs.split_at(bugs.len() / 2);
    let vs = &vs;
    let problems: Vec<String> = std::thread::scope(|s| {
        let run = move |part: &[Bug]| {
            part.iter()
                .flat_map(|bug| {
                    let results = run_bug(*bug, vs);
                    let failing: Vec<&CaseResult> = results
                        .iter()
                        .filter(|r| r.status != Status::Pass)
                        .collect();
                    let rules: BTreeSet<&str> = failing
                        .iter()
                        .flat_map(|r| r.rules.iter().map(String::as_str))
                        .collect();
                    eprintln!(
                        "{:<40} {:>5} of {:>5} fail, citing {rules:?}",
                        bug.as_str(),
                        failing.len(),
                        results.len()
                    );
                    judge(*bug, &results)
                })
                .collect::<Vec<_>>()
        };
        let first = s.spawn(move || run(a));
        let mut out = run(b);
        out.extend(first.join().expect("thread"));
        out
    });
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_bug_has_a_distinct_name_and_a_rule() {
    let mut names = BTreeSet::new();
    for bug in Bug::ALL {
        assert!(names.insert(bug.as_str()), "{} twice", bug.as_str());
        assert_eq!(Bug::parse(bug.as_str()), Some(*bug));
        assert!(!bug.must_fail_rules().is_empty(), "{}", bug.as_str());
        assert!(!bug.kinds().is_empty(), "{}", bug.as_str());
    }
}
