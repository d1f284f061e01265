//! Baselines of known failures: fail becomes xfail, an unexpected pass fails
//! the run, stale entries are reported, and a missing reason is rejected.

mod common;

use common::*;
use loom_report::{
    Baseline, BaselineOutcome, CaseResult, Failure, Report, Status, UNEXPECTED_PASS_PREFIX,
};

fn results() -> Vec<CaseResult> {
    vec![
        CaseResult::fail(
            "vectors",
            "fold",
            "fold-009",
            ["FOLD-09"],
            "differs",
            Failure::default(),
        ),
        CaseResult::error("kits", "event-store", "fence-1", ["SPI-03"], "crash"),
        CaseResult::timeout("sim", "deploy", "seed-8", ["SNAP-02"], "hung"),
        CaseResult::pass("vectors", "fold", "fold-001", ["FOLD-01"]),
        CaseResult::skip_untestable("kits", "event-store", "fence-2", ["SPI-03"], "no clock"),
        CaseResult::fail(
            "vectors",
            "digest",
            "fold-009",
            ["FOLD-09"],
            "differs",
            Failure::default(),
        ),
    ]
}

const TOML: &str = r#"
[[entries]]
case_id = "fold-009"
area = "vectors"
suite = "fold"
reason = "issue 12: decision seq off by one"

[[entries]]
case_id = "fence-*"
area = "kits"
reason = "fencing not implemented yet"

[[entries]]
case_id = "seed-8"
reason = "slow store"

[[entries]]
case_id = "fold-001"
reason = "used to fail"

[[entries]]
case_id = "gone-*"
area = "vectors"
reason = "fixed long ago"
"#;

#[test]
fn baseline_turns_failures_into_xfail_and_passes_into_failures() {
    let baseline = Baseline::from_toml_str(TOML).expect("valid baseline");
    let mut results = results();
    let outcome = baseline.apply(&mut results);
    assert_eq!(
        outcome,
        BaselineOutcome {
            xfailed: 3,
            unexpected_passes: 1,
            stale: 1
        }
    );
    // Data-driven expectations: (area, suite, case_id, status, reason).
    let expected: &[(&str, &str, &str, Status, Option<&str>)] = &[
        (
            "vectors",
            "fold",
            "fold-009",
            Status::Xfail,
            Some("issue 12: decision seq off by one"),
        ),
        (
            "kits",
            "event-store",
            "fence-1",
            Status::Xfail,
            Some("fencing not implemented yet"),
        ),
        ("sim", "deploy", "seed-8", Status::Xfail, Some("slow store")),
        ("vectors", "fold", "fold-001", Status::Fail, None),
        // Skips are left alone (and their entry is not stale).
        (
            "kits",
            "event-store",
            "fence-2",
            Status::SkipUntestable,
            None,
        ),
        // The entry is restricted to suite "fold": this one still fails.
        ("vectors", "digest", "fold-009", Status::Fail, None),
        (
            "baseline",
            "stale-entries",
            "vectors/gone-*",
            Status::Error,
            None,
        ),
    ];
    assert_eq!(results.len(), expected.len());
    for (r, (area, suite, case_id, status, reason)) in results.iter().zip(expected) {
        assert_eq!(r.key(), (*area, *suite, *case_id));
        assert_eq!(r.status, *status, "{case_id}");
        assert_eq!(r.xfail_reason.as_deref(), *reason, "{case_id}");
    }
    let unexpected = &results[3];
    let message = unexpected.message.as_deref().unwrap();
    assert!(message.starts_with(UNEXPECTED_PASS_PREFIX));
    assert_eq!(
        message,
        "unexpected pass: baseline expects failure (used to fail); remove the entry"
    );
    assert!(results[6].message.as_deref().unwrap().contains("gone-*"));

    let report = Report::new(env(1), rules(), results);
    assert!(!report.summary.ok);
    assert_eq!(report.summary.unexpected_passes, 1);
    assert_eq!(report.summary.by_status.xfail, 3);
}

#[test]
fn baseline_with_only_real_failures_makes_the_run_ok() {
    let baseline =
        Baseline::from_json_str(r#"{"entries": [{"case_id": "fold-009", "reason": "issue 12"}]}"#)
            .unwrap();
    let mut results = vec![
        CaseResult::fail(
            "vectors",
            "fold",
            "fold-009",
            ["FOLD-09"],
            "x",
            Failure::default(),
        ),
        CaseResult::pass("vectors", "fold", "fold-001", ["FOLD-01"]),
    ];
    baseline.apply(&mut results);
    let report = Report::new(env(1), rules(), results);
    assert!(report.summary.ok, "{:?}", report.summary);
    assert_eq!(report.summary.failures, 0);
}

#[test]
fn baseline_rejects_bad_entries() {
    let cases: &[(&str, &str)] = &[
        ("[[entries]]\ncase_id = \"a\"\n", "reason"),
        ("[[entries]]\ncase_id = \"a\"\nreason = \"  \"\n", "reason is required"),
        ("[[entries]]\ncase_id = \"\"\nreason = \"r\"\n", "case_id is empty"),
        ("[[entries]]\ncase_id = \"a*b\"\nreason = \"r\"\n", "only allowed at the end"),
        (
            "[[entries]]\ncase_id = \"a\"\nreason = \"r\"\n[[entries]]\ncase_id = \"a\"\nreason = \"s\"\n",
            "duplicates entry 1",
        ),
        ("[[entries]]\ncase_id = \"a\"\nreason = \"r\"\nowner = \"me\"\n", "owner"),
        ("entries = 3\n", "invalid type"),
    ];
    for (text, needle) in cases {
        let err = Baseline::from_toml_str(text).expect_err(text);
        assert!(
            err.to_string().contains(needle),
            "error for {text:?} should mention {needle:?}: {err}"
        );
    }
    let err =
        Baseline::from_json_str(r#"{"entries": [{"case_id": "a", "reason": ""}]}"#).unwrap_err();
    assert!(err.to_string().contains("reason is required"), "{err}");
}

#[test]
fn baseline_load_picks_format_by_extension_and_names_the_file() {
    let dir = std::env::temp_dir().join(format!("loom-report-baseline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml_path = dir.join("known.toml");
    std::fs::write(&toml_path, TOML).unwrap();
    assert_eq!(Baseline::load(&toml_path).unwrap().entries.len(), 5);
    let json_path = dir.join("known.json");
    std::fs::write(
        &json_path,
        r#"{"entries": [{"case_id": "x", "reason": "r"}]}"#,
    )
    .unwrap();
    assert_eq!(Baseline::load(&json_path).unwrap().entries.len(), 1);
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[[entries]]\ncase_id = \"x\"\n").unwrap();
    let err = Baseline::load(&bad).unwrap_err();
    assert!(err.to_string().contains("bad.toml"), "{err}");
    let missing = Baseline::load(dir.join("missing.toml")).unwrap_err();
    assert!(missing.to_string().contains("missing.toml"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}
