//! `loom check` reports say what was tested: a foreign kernel's report holds only its
//! own results and figure, a stale JUnit credits nothing, and an empty or partial run
//! cannot pass (docs/coverage.md).

use loom_report::{Report, SubjectKind};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn loom(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("loom runs")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("loom-subjects-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn report(dir: &Path) -> Report {
    Report::load(dir.join("report.json")).expect("report.json")
}

fn python() -> Option<&'static str> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some("python3")
}

#[test]
fn a_foreign_kernels_report_holds_only_its_results_and_its_own_figure() {
    let Some(py) = python() else {
        assert!(
            std::env::var_os("LOOM_REQUIRE_TOOLS").is_none(),
            "python3 is required"
        );
        eprintln!("skip: python3 not found");
        return;
    };
    let out = scratch("foreign");
    let cmd = format!("{py} vectors/examples/minimal_kernel.py");
    let o = loom(&[
        "check",
        "--quiet",
        "--kernel-cmd",
        &cmd,
        "--fuzz-cases",
        "8",
        "--out",
        out.to_str().unwrap(),
    ]);
    let r = report(&out);
    assert_eq!(r.subjects.len(), 1, "{:?}", r.subjects);
    assert_eq!(r.subjects[0].kind, SubjectKind::Kernel);
    assert_eq!(r.subjects[0].endpoint.as_deref(), Some(cmd.as_str()));
    for result in &r.results {
        assert_eq!(result.subject.as_deref(), Some("kernel"), "{result:?}");
        assert!(
            ["vectors", "golden", "fuzz"].contains(&result.area.as_str()),
            "the reference's own {} part ran in a foreign kernel's report",
            result.area
        );
    }
    // The figure is over kernel rules only.
    let kernel_rules = r
        .rules
        .iter()
        .filter(|x| x.applies(SubjectKind::Kernel))
        .count() as u64;
    assert_eq!(r.summary.rules_total, kernel_rules);
    assert!(kernel_rules < 224);
    assert!(
        text(&o).contains("rules that apply to a kernel have passing results against it"),
        "{}",
        text(&o)
    );
    // Whatever the verdict, the exit status agrees with it.
    assert_eq!(o.status.code(), Some(if r.summary.ok { 0 } else { 1 }));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_reference_check_with_a_hand_written_junit_credits_nothing_and_fails() {
    let out = scratch("stale");
    let junit = out.join("junit.xml");
    std::fs::write(
        &junit,
        r#"<testsuites><testsuite name="loom-kernel::fold"><testcase name="fold_13_never_existed"/></testsuite></testsuites>"#,
    )
    .unwrap();
    let o = loom(&[
        "check",
        "--quiet",
        "--only",
        "gates",
        "--only",
        "tests",
        "--test-results",
        junit.to_str().unwrap(),
        "--out",
        out.join("r").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r = report(&out.join("r"));
    assert!(!r.summary.ok);
    assert!(r
        .results
        .iter()
        .all(|x| !(x.status == loom_report::Status::Pass
            && x.rules.iter().any(|id| id == "FOLD-13"))));
    assert!(text(&o).contains("credits nothing"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn an_empty_or_partial_run_cannot_pass() {
    let out = scratch("partial");
    // The spec part alone has nothing to trace: only skips, so the verdict fails.
    let o = loom(&[
        "check",
        "--quiet",
        "--only",
        "spec",
        "--out",
        out.join("a").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("no result passed against reference"),
        "{}",
        text(&o)
    );

    // A filter that matches no vector is refused, not passed.
    let o = loom(&[
        "vectors",
        "run",
        "--quiet",
        "--filter",
        "zzz-no-such-vector",
        "--out",
        out.join("b").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));

    // An empty log verifies nothing.
    let empty = out.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let o = loom(&["verify-log", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("nothing was verified"));

    // A part that cannot exercise a foreign kernel is a usage error, not silently dropped.
    let o = loom(&["check", "--kernel-cmd", "true", "--only", "gates"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&out);
}

/// Every file of a run folder and the console, for the checks below.
fn renderings(dir: &Path, console: &str) -> Vec<(&'static str, String)> {
    let mut out = vec![("console", console.to_string())];
    for f in [
        "report.md",
        "summary.md",
        "report.html",
        "report.xml",
        "badge.json",
    ] {
        // minijinja escapes `/` in HTML; read it back as the reader sees it.
        let body = std::fs::read_to_string(dir.join(f)).expect(f);
        out.push((f, body.replace("&#x2f;", "/")));
    }
    out
}

#[test]
fn a_check_without_a_test_run_is_a_partial_pass_in_every_rendering() {
    let out = scratch("no-test-run");
    // Run from an empty directory: no ./target/nextest/ci/junit.xml, so no test run.
    let cwd = out.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_loom"))
        .args([
            "check",
            "--quiet",
            "--only",
            "fold",
            "--only",
            "tests",
            "--fold-logs",
            "5",
        ])
        .args(["--out", out.join("r").to_str().unwrap()])
        .current_dir(&cwd)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "what ran passed: {}", text(&o));
    let dir = out.join("r");
    for (name, body) in renderings(&dir, &text(&o)) {
        let said = match name {
            "badge.json" => body.contains("\"partial pass\"") && body.contains("yellow"),
            "report.xml" => body.contains(r#"name="verdict" value="partial-pass""#),
            _ => body.contains("PARTIAL PASS"),
        };
        assert!(said, "{name} does not say partial:\n{body}");
        assert!(
            !body.contains("✅ PASS") && !body.contains("brightgreen"),
            "{name}"
        );
        if name != "badge.json" {
            // What was not run and how to complete it.
            assert!(
                body.contains("./scripts/test"),
                "{name}: how to complete it"
            );
            assert!(
                body.contains("the gates, vectors, replay, kits, explore, sim and spec parts"),
                "{name}"
            );
        }
    }
    let r = report(&dir);
    assert!(r.summary.partial && r.summary.ok);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_stores_report_lists_the_store_rules_and_folds_the_rest_away() {
    let out = scratch("store-matrix");
    let o = loom(&[
        "conform",
        "--quiet",
        "--store",
        "memory",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = report(&out);
    let figure = &r.summary.subjects[0];
    // Every binding store rule has store evidence: none is listed for a store that
    // passes everything (SNAP-02 and SNAP-05 are the kernel's, docs/coverage.md).
    assert_eq!(figure.binding_without_evidence, Vec::<String>::new());
    assert_eq!(r.verdict(), loom_report::Verdict::Pass);
    let (shown, folded) = r.rule_matrix_folded();
    assert!(shown
        .iter()
        .all(|row| row.rule.applies(SubjectKind::Store) || !row.cases.is_empty()));
    assert!(
        folded.iter().any(|row| row.rule.id == "FOLD-09"),
        "kernel rules are folded"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let open = html.split_once(r#"<details id="matrix-other">"#).unwrap().0;
    assert!(open.contains(r#"<tr id="rule-spi-03""#) && !open.contains(r#"<tr id="rule-fold-09""#));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("| `SPI-03` |") && !md.contains("| `FOLD-09` |"),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_harness_self_check_is_a_separate_subject_that_credits_no_implementation() {
    let out = scratch("harness");
    let junit = out.join("junit.xml");
    // One test of the report crate (the harness) citing SNAP-01, one of the kernel citing FOLD-09.
    std::fs::write(
        &junit,
        r#"<testsuites>
<testsuite name="loom-report::matrix"><testcase name="snap_01_only_a_report_test" classname="loom-report::matrix"/></testsuite>
<testsuite name="loom-kernel::fold"><testcase name="fold_09_step_failed_does_not_fail_execution" classname="loom-kernel::fold"/></testsuite>
</testsuites>"#,
    )
    .unwrap();
    let o = loom(&["internal", "record-test-run", junit.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = loom(&[
        "check",
        "--quiet",
        "--only",
        "gates",
        "--only",
        "tests",
        "--test-results",
        junit.to_str().unwrap(),
        "--out",
        out.join("r").to_str().unwrap(),
    ]);
    let r = report(&out.join("r"));
    let kinds: Vec<SubjectKind> = r.subjects.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [SubjectKind::Harness, SubjectKind::Reference],
        "{}",
        text(&o)
    );
    let reference = r
        .summary
        .subjects
        .iter()
        .find(|f| f.subject == "reference")
        .unwrap();
    let matrix = r.rule_matrix_for("reference");
    let snap01 = matrix.iter().find(|row| row.rule.id == "SNAP-01").unwrap();
    assert_eq!(
        snap01.status,
        loom_report::RuleStatus::NoResult,
        "a harness test credits no implementation"
    );
    let fold09 = matrix.iter().find(|row| row.rule.id == "FOLD-09").unwrap();
    assert_eq!(fold09.status, loom_report::RuleStatus::Pass);
    assert!(reference.rules_passing >= 1);
    let harness = r
        .summary
        .subjects
        .iter()
        .find(|f| f.subject == "harness")
        .unwrap();
    assert_eq!(harness.rules_applicable, 0);
    assert!(
        text(&o).contains("not counted toward any implementation"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// The campaign's budget is per check (`--fuzz-cases`): every check sends cases, each
/// pass says how many, and `loom check` prints the budget it used.
#[test]
fn conf_01_check_fuzz_budget_is_per_check_and_printed() {
    let dir = scratch("fuzz-budget");
    let kernel = format!("{} kernel-adapter", env!("CARGO_BIN_EXE_loom"));
    let o = loom(&[
        "check",
        "--kernel-cmd",
        &kernel,
        "--only",
        "fuzz",
        "--fuzz-cases",
        "24",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("fuzz: budget 24 cases per check (--fuzz-cases), seed 0: fold "),
        "{stdout}"
    );
    assert!(!stdout.contains(" 0 sent"), "{stdout}");
    let r = report(&dir);
    let fuzz: Vec<_> = r.results.iter().filter(|x| x.area == "fuzz").collect();
    assert_eq!(fuzz.len(), 5, "{fuzz:#?}");
    for x in &fuzz {
        assert_eq!(x.status, loom_report::Status::Pass, "{x:?}");
        assert!(
            x.message.as_deref().unwrap_or("").starts_with("24 cases"),
            "{x:?}"
        );
    }
}
