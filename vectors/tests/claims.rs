//! Judging by claims (docs/vectors.md "Basis", decision 0009): a kernel that takes the
//! open points the other way (`loom_vectors::readings`, `wrong-kernel --readings all`)
//! and claims in `hello` only the resolutions it still follows passes every vector or
//! gets a `resolution-difference` naming the GAP, its decision record and the
//! pointers; never a failure. The same kernel with a spec-breaking bug still fails the
//! vectors of the rule the bug breaks, and a kernel that claims a resolution and
//! answers another reading fails.

use loom_report::{CaseResult, Status};
use loom_vectors::basis::{decision_for, ResolutionClaims};
use loom_vectors::readings::{Reading, ReadingSet};
use loom_vectors::runner::{judge, run_vector, Claims, InProcessKernel, Judgement, KernelClient};
use loom_vectors::set::{default_cases_dir, load_set};
use loom_vectors::wrong::Bug;
use loom_vectors::{ReferenceKernel, Vector};
use serde_json::json;
use std::collections::BTreeMap;

fn vectors() -> Vec<Vector> {
    load_set(&default_cases_dir())
        .expect("the set loads")
        .vectors
}

fn run(kernel: ReferenceKernel, vectors: &[Vector]) -> Vec<CaseResult> {
    let mut client = InProcessKernel { kernel };
    let claims = Claims::from_hello(client.hello().expect("hello"));
    vectors
        .iter()
        .map(|v| run_vector(&mut client, &claims, v))
        .collect()
}

#[test]
fn a_kernel_with_every_other_reading_fails_nothing_and_each_difference_names_its_gap() {
    let vs = vectors();
    let results = run(ReferenceKernel::with_readings(ReadingSet::every_gap()), &vs);
    let mut by_status: BTreeMap<Status, usize> = BTreeMap::new();
    for r in &results {
        *by_status.entry(r.status).or_default() += 1;
    }
    let bad: Vec<String> = results
        .iter()
        .filter(|r| r.status.is_failure())
        .map(|r| format!("{}: {} {:?}", r.case_id, r.status, r.message))
        .collect();
    assert!(
        bad.is_empty(),
        "{} failing under every other reading, first: {:#?}",
        bad.len(),
        &bad[..bad.len().min(8)]
    );
    let differences: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.status == Status::ResolutionDifference)
        .collect();
    assert!(
        differences.len() > 50,
        "the readings change many answers: {by_status:?}"
    );
    for r in &differences {
        let m = r.message.as_deref().unwrap_or("");
        assert!(!r.resolutions.is_empty(), "{}: no gap", r.case_id);
        for gap in &r.resolutions[..1] {
            let decision = decision_for(gap).expect("a resolved gap");
            assert!(
                m.contains(&format!(
                    "differs from the reference's resolution of {gap} ({decision}) at "
                )),
                "{}: {m}",
                r.case_id
            );
        }
        assert!(r.failure.as_ref().is_some_and(|f| f.path.is_some()));
    }
    // Alternatives pass: some vector is answered the way an accepted reading allows.
    assert!(
        results.iter().any(|r| r.status == Status::Pass
            && r.message
                .as_deref()
                .is_some_and(|m| m.contains("answered as the other reading"))),
        "no alternative was taken: {by_status:?}"
    );
    eprintln!("every other reading: {by_status:?}");
}

/// Each reading alone: nothing fails either (the vectors' bases were measured one
/// reading at a time, so this is the judging of each basis as stated).
#[test]
fn each_other_reading_alone_fails_nothing() {
    let vs = vectors();
    let mut problems = Vec::new();
    for r in Reading::ALL {
        let set = ReadingSet::one(*r);
        let kinds = r.kinds();
        let subset: Vec<Vector> = vs
            .iter()
            .filter(|v| kinds.contains(&v.kind))
            .cloned()
            .collect();
        for res in run(ReferenceKernel::with_readings(set), &subset) {
            if res.status.is_failure() {
                problems.push(format!(
                    "{} under {}: {} {:?}",
                    res.case_id,
                    r.as_str(),
                    res.status,
                    res.message
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{:#?}", problems);
}

/// A spec-breaking bug under every other reading still fails the vectors of its rule:
/// the resolution differences do not hide it.
#[test]
fn a_spec_breaking_bug_still_fails_under_every_other_reading() {
    let vs = vectors();
    for bug in [Bug::StepFailedFailsExecution, Bug::RefusedResumeAppends] {
        let mut kernel = ReferenceKernel::with_readings(ReadingSet::every_gap());
        kernel.bug = Some(bug);
        let subset: Vec<Vector> = vs
            .iter()
            .filter(|v| bug.kinds().contains(&v.kind.as_str()))
            .cloned()
            .collect();
        let results = run(kernel, &subset);
        let failed: Vec<&CaseResult> = results
            .iter()
            .filter(|r| r.status == Status::Fail)
            .collect();
        for rule in bug.must_fail_rules() {
            assert!(
                failed.iter().any(|r| r.rules.iter().any(|x| x == rule)),
                "{} under every other reading fails no vector of {rule}",
                bug.as_str()
            );
        }
    }
}

/// The judge on one hand-made vector: claimed, an answer of the other reading fails;
/// unclaimed, a difference inside the resolution's pointers is a resolution difference
/// and one outside them fails, naming the pointer that is not explained.
#[test]
fn the_judge_follows_the_claims() {
    let vs = vectors();
    let v =
        vs.iter()
            .find(|v| {
                v.kind == loom_vectors::format::Kind::Fold
                    && v.basis.resolutions.iter().any(|r| {
                        r.gap == "GAP-12" && r.paths.iter().any(|p| p == "/state/sequence")
                    })
            })
            .expect("a fold vector resting on GAP-12 at /state/sequence");
    let mut actual = json!({"state": v.expected["state"].clone()});
    actual["state"]["sequence"] = json!(987_654);
    let none = ResolutionClaims::from_hello(&json!({}));
    let all = ResolutionClaims::from_hello(&json!({"resolutions": ["reference"]}));
    let gap12 = ResolutionClaims::from_hello(&json!({"resolutions": ["GAP-12"]}));
    match judge(v, &none, &actual, "fold differs") {
        Judgement::ResolutionDifference(d) => {
            assert!(d.message.contains("differs from the reference's resolution of GAP-12 (docs/decisions/0001-fold-shapes.md) at /state/sequence"), "{}", d.message);
            assert_eq!(d.gaps, vec!["GAP-12".to_owned()]);
        }
        other => panic!("{other:?}"),
    }
    for claims in [&all, &gap12] {
        assert!(matches!(
            judge(v, claims, &actual, "fold differs"),
            Judgement::Fail(..)
        ));
    }
    // A difference outside the resolution's pointers fails, and says so.
    actual["state"]["status"] = json!("no-such-status");
    match judge(v, &none, &actual, "fold differs") {
        Judgement::Fail(m, f) => {
            assert_eq!(f.path.as_deref(), Some("/state/status"), "{m}");
            assert!(m.contains("the one at /state/status is not"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // An absent `resolutions` claims nothing; unknown entries are listed, not claimed.
    let odd =
        ResolutionClaims::from_hello(&json!({"resolutions": ["no-such-resolution", 3, "GAP-12"]}));
    assert!(odd.claims("GAP-12") && !odd.claims("GAP-11") && odd.unknown.len() == 2);
    assert!(!none.claims("GAP-12") && all.claims("GAP-12"));
}

/// Over stdio, as `loom vectors run --kernel-cmd` runs it: `wrong-kernel --readings all`
/// fails nothing, and with a spec-breaking bug as well it fails.
#[test]
fn wrong_kernel_with_every_other_reading_over_stdio() {
    use loom_vectors::runner::run_set;
    use loom_vectors::{KernelProcess, KernelProcessConfig};
    let vs: Vec<Vector> = vectors()
        .into_iter()
        .filter(|v| v.kind == loom_vectors::format::Kind::Fold)
        .collect();
    let run = |extra: &str| {
        let cmd = format!(
            "{} --readings all {extra}",
            env!("CARGO_BIN_EXE_wrong-kernel")
        );
        let mut p = KernelProcess::start(KernelProcessConfig::new(&cmd)).expect("starts");
        let (claims, results) = run_set(&mut p, &vs, &mut |_| {}).expect("hello");
        assert!(!claims.resolutions.claims("GAP-12") && claims.resolutions.claims("GAP-16"));
        results
    };
    let plain = run("");
    assert!(
        plain.iter().all(|r| !r.status.is_failure()),
        "{:?}",
        plain.iter().find(|r| r.status.is_failure())
    );
    assert!(plain
        .iter()
        .any(|r| r.status == Status::ResolutionDifference));
    let buggy = run("--bug step-failed-fails-execution");
    assert!(buggy
        .iter()
        .any(|r| r.status == Status::Fail && r.rules.iter().any(|x| x == "FOLD-09")));
}

/// The differential campaign judges a kernel of other readings the same way: a case
/// that differs from the reference only where it rests on an unclaimed resolution
/// (measured against the other readings) is counted, not a finding; a spec-breaking bug
/// under the same readings is still found.
#[test]
fn the_campaign_measures_resolution_differences_and_still_finds_a_spec_bug() {
    use loom_vectors::fuzz::{run_campaign, Check, FuzzConfig};
    let config = FuzzConfig {
        seed: 7,
        cases: Some(400),
        cases_per_check: None,
        time_ms: None,
        checks: Check::ALL.to_vec(),
        shrink_iters_max: 256,
        stop_after_findings: None,
    };
    let mut readings = InProcessKernel {
        kernel: ReferenceKernel::with_readings(ReadingSet::every_gap()),
    };
    let report = run_campaign(&mut readings, &config, &mut |_| {});
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    let explained: u64 = report.resolution_cases.values().map(|(n, _)| n).sum();
    assert!(explained > 0, "{:?}", report.resolution_cases);
    let gaps: Vec<&String> = report
        .resolution_cases
        .values()
        .flat_map(|(_, g)| g)
        .collect();
    assert!(gaps.iter().all(|g| decision_for(g).is_some()), "{gaps:?}");

    let mut buggy = InProcessKernel {
        kernel: ReferenceKernel {
            bug: Some(Bug::StepFailedFailsExecution),
            readings: ReadingSet::every_gap(),
        },
    };
    let config = FuzzConfig {
        cases: Some(3_000),
        checks: vec![Check::Fold],
        stop_after_findings: Some(1),
        ..config
    };
    let report = run_campaign(&mut buggy, &config, &mut |_| {});
    assert!(
        report.findings.iter().any(|f| f.check == Check::Fold),
        "not found in {} cases: {:?}",
        report.cases,
        report.resolution_cases
    );
}

/// The golden replay too: every entry's log differs from the reference's only at
/// unclaimed resolutions (a resolution difference, measured against the readings) or
/// not at all.
#[test]
fn golden_replay_of_a_kernel_of_other_readings_fails_nothing() {
    let mut client = InProcessKernel {
        kernel: ReferenceKernel::with_readings(ReadingSet::every_gap()),
    };
    let results = loom_vectors::golden::corpus_kernel_results(&mut client);
    assert!(!results.is_empty());
    let bad: Vec<_> = results.iter().filter(|r| r.status.is_failure()).collect();
    assert!(bad.is_empty(), "{bad:#?}");
    assert!(results
        .iter()
        .any(|r| r.status == Status::ResolutionDifference
            && r.message
                .as_deref()
                .is_some_and(|m| m.contains("GAP-02 (docs/decisions/0002-canonical-json.md)"))));
}
