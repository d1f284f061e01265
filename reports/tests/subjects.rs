//! Subjects, per-subject figures and the verdict rules (docs/report-format.md,
//! "Subjects and the verdict").

use loom_report::{
    CaseResult, Environment, Expectations, Failure, Report, RuleInfo, Status, Subject, SubjectKind,
};
use serde_json::json;

fn env() -> Environment {
    Environment::new("loom", "0.0.0")
}

/// Two kernel rules, one store rule, one rule only the reference answers for,
/// one SHOULD and a gap.
fn rules() -> Vec<RuleInfo> {
    use SubjectKind::{Kernel, Store};
    vec![
        RuleInfo::new("FOLD-01", "MUST", "FOLD", "f1").with_applies_to([Kernel]),
        RuleInfo::new("FOLD-02", "GUARANTEE", "FOLD", "f2").with_applies_to([Kernel]),
        RuleInfo::new("SPI-01", "MUST", "SPI", "s1").with_applies_to([Store]),
        RuleInfo::new("CONF-01", "MUST", "CONF", "c1"),
        RuleInfo::new("EMIT-09", "SHOULD", "EMIT", "e9").with_applies_to([Kernel]),
        RuleInfo::new("GAP-01", "GAP", "GAP", "an open question"),
    ]
}

fn kernel() -> Subject {
    Subject::new("kernel", SubjectKind::Kernel, "my-kernel").with_version("0.3.1")
}

fn harness() -> Subject {
    Subject::harness("loom", "0.0.0")
}

fn fail(case: &str, rules: &[&str]) -> CaseResult {
    CaseResult::fail(
        "vectors",
        "fold",
        case,
        rules.iter().copied(),
        "state differs",
        Failure::values(json!(1), json!(2)),
    )
}

#[test]
fn a_foreign_kernels_figure_counts_only_its_own_results_over_kernel_rules() {
    let results = vec![
        CaseResult::pass("vectors", "fold", "v1", ["FOLD-01"]).with_subject("kernel"),
        // The harness's own test of a kernel rule must not credit the kernel.
        CaseResult::pass("tests", "loom-report", "fold_02_x", ["FOLD-02"]).with_subject("harness"),
    ];
    let report = Report::new(env(), rules(), results).with_subjects(vec![kernel(), harness()]);
    let s = &report.summary;
    // Kernel rules: FOLD-01, FOLD-02, EMIT-09; only FOLD-01 passed against the kernel.
    assert_eq!((s.rules_with_passing_evidence, s.rules_total), (1, 3));
    let kernel_figure = &s.subjects.iter().find(|f| f.subject == "kernel").unwrap();
    assert_eq!(kernel_figure.binding_without_evidence, ["FOLD-02"]);
    let harness_figure = &s.subjects.iter().find(|f| f.subject == "harness").unwrap();
    assert_eq!(harness_figure.rules_applicable, 0);
    assert_eq!(harness_figure.by_status.pass, 1);
    assert!(s.ok, "{:?}", s.verdict_reasons);
    let sentences = report.figure_sentences();
    assert!(
        sentences
            .iter()
            .any(|l| l.starts_with("kernel (my-kernel): 1 / 3 rules that apply to a kernel")),
        "{sentences:?}"
    );
}

#[test]
fn the_sole_judged_subject_is_filled_in_and_a_stray_subject_fails_the_verdict() {
    let results = vec![CaseResult::pass("vectors", "fold", "v1", ["FOLD-01"])];
    let report = Report::new(env(), rules(), results).with_subjects(vec![kernel(), harness()]);
    assert_eq!(report.results[0].subject.as_deref(), Some("kernel"));
    assert!(report.summary.ok);

    let results = vec![
        CaseResult::pass("vectors", "fold", "v1", ["FOLD-01"]).with_subject("kernel"),
        CaseResult::pass("vectors", "fold", "v2", ["FOLD-01"]).with_subject("nobody"),
    ];
    let report = Report::new(env(), rules(), results).with_subjects(vec![kernel()]);
    assert_eq!(report.summary.unattributed, 1);
    assert!(!report.summary.ok);
}

#[test]
fn a_rule_with_any_failing_result_counts_as_failing_not_as_evidenced() {
    let results = vec![
        CaseResult::pass("vectors", "fold", "v1", ["FOLD-01"]),
        fail("v2", &["FOLD-01"]),
        CaseResult::pass("vectors", "fold", "v3", ["FOLD-02"]),
    ];
    let report = Report::new(env(), rules(), results).with_subjects(vec![kernel()]);
    let s = &report.summary;
    assert_eq!(s.rules_with_passing_evidence, 1);
    assert_eq!(s.rules_failing, 1);
    assert!(!s.ok);
}

#[test]
fn an_empty_run_never_passes() {
    let report = Report::new(env(), rules(), vec![]);
    assert!(!report.summary.ok);
    assert!(report.summary.verdict_reasons[0].contains("no result"));
    let report = Report::new(env(), rules(), vec![]).with_subjects(vec![kernel()]);
    assert!(!report.summary.ok);
}

#[test]
fn a_run_of_only_skips_does_not_pass() {
    let results = vec![CaseResult::skip_not_claimed(
        "kits",
        "event-store",
        "c1",
        ["SPI-01"],
        "not claimed",
    )];
    let store = Subject::new("store", SubjectKind::Store, "s");
    let report = Report::new(env(), rules(), results).with_subjects(vec![store]);
    assert!(!report.summary.ok);
    assert!(report.summary.verdict_reasons[0].contains("no result passed"));
}

#[test]
fn a_part_that_was_asked_for_must_produce_a_result_that_is_not_a_skip() {
    let results = vec![
        CaseResult::pass("vectors", "fold", "v1", ["FOLD-01"]),
        CaseResult::skip_untestable("sim", "seeds", "s", ["FOLD-02"], "no seeds"),
    ];
    let expectations = Expectations::default()
        .part("vectors", "kernel")
        .part("sim", "kernel");
    let report = Report::new(env(), rules(), results)
        .with_subjects(vec![kernel()])
        .with_expectations(expectations);
    assert!(!report.summary.ok);
    assert_eq!(report.summary.verdict_reasons.len(), 1);
    assert!(report.summary.verdict_reasons[0].contains("the sim part"));
}

#[test]
fn a_complete_subject_needs_every_binding_rule_exemptions_and_expected_failures_aside() {
    let reference = Subject::new("reference", SubjectKind::Reference, "ref");
    let mut results: Vec<CaseResult> = ["FOLD-01", "FOLD-02", "SPI-01"]
        .iter()
        .map(|r| CaseResult::pass("x", "y", *r, [*r]))
        .collect();
    let base = Expectations::default().complete("reference");
    let report = Report::new(env(), rules(), results.clone())
        .with_subjects(vec![reference.clone()])
        .with_expectations(base.clone());
    // CONF-01 binds and applies to the reference; EMIT-09 is a SHOULD; gaps do not count.
    assert!(!report.summary.ok);
    assert!(report.summary.verdict_reasons[0].contains("CONF-01"));
    assert!(!report.summary.verdict_reasons[0].contains("EMIT-09"));
    assert_eq!(report.summary.rules_total, 5);

    let exempted = base.clone().exempt("CONF-01", "§12 says so");
    let report = Report::new(env(), rules(), results.clone())
        .with_subjects(vec![reference.clone()])
        .with_expectations(exempted);
    assert!(report.summary.ok, "{:?}", report.summary.verdict_reasons);

    results.push(CaseResult::xfail("x", "y", "c", ["CONF-01"], "GAP-01"));
    let report = Report::new(env(), rules(), results)
        .with_subjects(vec![reference])
        .with_expectations(base);
    assert!(report.summary.ok, "{:?}", report.summary.verdict_reasons);
    assert_eq!(report.summary.subjects[0].rules_xfail, 1);
}

#[test]
fn the_digest_does_not_depend_on_the_command_line_or_the_start_time() {
    let results = vec![CaseResult::pass("vectors", "fold", "v1", ["FOLD-01"])];
    let mut a_env = env();
    a_env.command = Some("loom check --out /tmp/a".into());
    a_env.started_at = Some("2026-01-01T00:00:00Z".into());
    let mut b_env = env();
    b_env.command = Some("loom check --out /elsewhere/b".into());
    let a = Report::new(a_env, rules(), results.clone()).with_subjects(vec![kernel()]);
    let b = Report::new(b_env, rules(), results).with_subjects(vec![kernel()]);
    assert_eq!(a.digest, b.digest);
    assert!(a.verify_digest());
}

#[test]
fn statuses_of_a_subject_are_counted_in_its_figure() {
    let results = vec![
        CaseResult::pass("vectors", "fold", "v1", ["FOLD-01"]),
        CaseResult::new("vectors", "fold", "v2", ["FOLD-02"], Status::Timeout),
    ];
    let report = Report::new(env(), rules(), results).with_subjects(vec![kernel()]);
    let f = &report.summary.subjects[0];
    assert_eq!(f.by_status.pass, 1);
    assert_eq!(f.by_status.timeout, 1);
    assert_eq!(f.rules_failing, 1);
}

/// A subject that states what it claims is judged as a claim: its figure is given
/// against the rules of the claimed parts and against every rule of its kind, and
/// the sentence names what was judged and what was not claimed.
#[test]
fn a_partial_claim_is_judged_as_a_claim() {
    use loom_report::{
        CaseResult, ClaimScope, Environment, Report, RuleInfo, Subject, SubjectKind,
    };
    let rule =
        |id: &str| RuleInfo::new(id, "MUST", "R", "r").with_applies_to([SubjectKind::Kernel]);
    let results = vec![
        CaseResult::pass("vectors", "fold", "a", ["R-1"]),
        CaseResult::pass("vectors", "digest", "b", ["R-2"]),
        CaseResult::skip_not_claimed("vectors", "runtime", "c", ["R-3"], "not claimed"),
    ];
    let kernel = Subject::new("kernel", SubjectKind::Kernel, "k").with_claims(ClaimScope {
        judged: vec!["fold".into(), "digest".into()],
        not_claimed: vec!["runtime".into()],
        rules: vec!["R-2".into(), "R-1".into()],
    });
    let report = Report::new(
        Environment::new("loom", "0"),
        vec![rule("R-1"), rule("R-2"), rule("R-3")],
        results,
    )
    .with_subjects(vec![kernel]);
    assert!(report.summary.ok, "{:?}", report.summary.verdict_reasons);
    let f = &report.summary.subjects[0];
    assert_eq!((f.rules_claimed_passing, f.rules_claimed), (2, 2));
    assert_eq!((f.rules_passing, f.rules_applicable), (2, 3));
    let sentence = report.figure_sentences().join("\n");
    assert!(
        sentence.contains("judged: fold, digest; not claimed: runtime; 2 / 2 rules of the claimed parts and 2 / 3 rules that apply to a kernel"),
        "{sentence}"
    );
    let back = Report::from_json_str(&report.to_json_pretty()).unwrap();
    assert_eq!(back, report);
}
