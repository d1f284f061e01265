//! The stdio kernel protocol end to end: the whole set through the reference adapter,
//! every wrong kernel caught by rule id, and a crashing, hanging or lying adapter
//! reported as error/timeout (never a hang, never a silent pass).

use loom_report::{CaseResult, Status};
use loom_vectors::runner::run_set;
use loom_vectors::set::{default_cases_dir, load_set};
use loom_vectors::wrong::Bug;
use loom_vectors::{KernelProcess, KernelProcessConfig, Vector};
use std::collections::BTreeSet;

fn vectors() -> Vec<Vector> {
    load_set(&default_cases_dir())
        .expect("the set loads")
        .vectors
}

fn run(command: String, vectors: &[Vector], timeout_ms: u64) -> Vec<CaseResult> {
    let mut config = KernelProcessConfig::new(command);
    config.call_timeout_ms = timeout_ms;
    let mut p = KernelProcess::start(config).expect("adapter starts");
    run_set(&mut p, vectors, &mut |_| {}).expect("hello").1
}

fn wrong(bug: &str) -> String {
    format!("{} --bug {bug}", env!("CARGO_BIN_EXE_wrong-kernel"))
}

#[test]
fn whole_set_passes_through_the_reference_adapter() {
    let vs = vectors();
    let started = std::time::Instant::now();
    let results = run(
        env!("CARGO_BIN_EXE_reference-kernel-adapter").to_owned(),
        &vs,
        10_000,
    );
    let bad: Vec<_> = results
        .iter()
        .filter(|r| r.status != Status::Pass)
        .collect();
    assert!(
        bad.is_empty(),
        "{} not passing, first: {:?}",
        bad.len(),
        bad.first()
    );
    eprintln!(
        "{} vectors through the protocol in {:?}",
        vs.len(),
        started.elapsed()
    );
}

/// A sample of the wrong kernels, one per method they change, over the protocol: the
/// full catalogue runs in-process in `tests/judging.rs`, through the same method table.
const OVER_THE_WIRE: [Bug; 6] = [
    Bug::KeysByCodePoint,
    Bug::StepFailedFailsExecution,
    Bug::RestoreTailOffByOne,
    Bug::GateBeforeIdentity,
    Bug::MeteredNegativeZeroRefused,
    Bug::FiredAtIsClock,
];

#[test]
fn sampled_wrong_kernels_fail_the_vectors_of_their_rules_over_stdio() {
    let vs = vectors();
    for bug in OVER_THE_WIRE {
        let wanted: Vec<Vector> = vs
            .iter()
            .filter(|v| bug.kinds().contains(&v.kind.as_str()))
            .cloned()
            .collect();
        let results = run(wrong(bug.as_str()), &wanted, 10_000);
        let failed: Vec<&CaseResult> = results
            .iter()
            .filter(|r| r.status != Status::Pass)
            .collect();
        for r in &failed {
            assert_eq!(
                r.status,
                Status::Fail,
                "{}: {} should fail, not {}: {:?}",
                bug.as_str(),
                r.case_id,
                r.status,
                r.message
            );
            assert!(
                bug.kinds().contains(&r.suite.as_str()),
                "{}: unexpected failure of {} ({})",
                bug.as_str(),
                r.case_id,
                r.suite
            );
        }
        let rules: BTreeSet<&str> = failed
            .iter()
            .flat_map(|r| r.rules.iter().map(String::as_str))
            .collect();
        for rule in bug.must_fail_rules() {
            assert!(
                rules.contains(rule),
                "{}: no failing vector proves {rule}; failed rules: {rules:?}",
                bug.as_str()
            );
        }
        eprintln!(
            "{}: {} vectors fail; rules {:?}",
            bug.as_str(),
            failed.len(),
            rules
        );
    }
}

fn pick(vs: &[Vector], kind: &str, n: usize) -> Vec<Vector> {
    vs.iter()
        .filter(|v| v.kind.as_str() == kind)
        .take(n)
        .cloned()
        .collect()
}

#[test]
fn a_crashing_adapter_is_an_error_and_is_restarted() {
    let vs = vectors();
    let mut set = pick(&vs, "ingress", 2);
    set.extend(pick(&vs, "fold", 2));
    set.extend(pick(&vs, "ingress", 1));
    let results = run(wrong("crash-on-ingress"), &set, 10_000);
    let statuses: Vec<Status> = results.iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        [
            Status::Error,
            Status::Error,
            Status::Pass,
            Status::Pass,
            Status::Error
        ]
    );
    assert!(
        results[0]
            .message
            .as_deref()
            .unwrap_or("")
            .contains("exited"),
        "{:?}",
        results[0].message
    );
}

#[test]
fn a_hanging_adapter_times_out_and_the_run_goes_on() {
    let vs = vectors();
    let mut set = pick(&vs, "digest", 1);
    set.extend(pick(&vs, "fold", 1));
    let results = run(wrong("hang-on-digest"), &set, 300);
    assert_eq!(results[0].status, Status::Timeout, "{:?}", results[0]);
    assert_eq!(results[1].status, Status::Pass, "{:?}", results[1]);
}

#[test]
fn garbage_and_wrong_ids_are_errors() {
    let vs = vectors();
    let set = pick(&vs, "emit", 1);
    let r = run(wrong("garbage-on-emit"), &set, 10_000);
    assert_eq!(r[0].status, Status::Error);
    assert!(
        r[0].message.as_deref().unwrap_or("").contains("not JSON"),
        "{:?}",
        r[0].message
    );
    let set = pick(&vs, "normalize", 1);
    let r = run(wrong("wrong-id-on-normalize"), &set, 10_000);
    assert_eq!(r[0].status, Status::Error);
    assert!(
        r[0].message
            .as_deref()
            .unwrap_or("")
            .contains("answered id -1, which was never asked"),
        "{:?}",
        r[0].message
    );
}

#[test]
fn an_adapter_that_claims_only_digest_skips_the_rest() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("python3 not found; skipping");
        return;
    }
    let vs = vectors();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/minimal_kernel.py");
    let results = run(format!("python3 {script}"), &vs, 10_000);
    for r in &results {
        if r.suite == "digest" {
            assert!(
                matches!(r.status, Status::Pass | Status::Error | Status::Fail),
                "{r:?}"
            );
        } else {
            assert_eq!(r.status, Status::SkipNotClaimed, "{r:?}");
        }
    }
    let fnv = results
        .iter()
        .filter(|r| r.case_id.starts_with("digest-fnv1a64"))
        .collect::<Vec<_>>();
    assert!(
        !fnv.is_empty() && fnv.iter().all(|r| r.status == Status::Pass),
        "{fnv:?}"
    );
}
