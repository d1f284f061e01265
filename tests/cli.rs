//! The `loom` binary as a user runs it: exit codes, the files it writes, the messages it
//! prints on bad input.

use std::path::Path;
use std::process::Command;

mod common;
use common::{code, loom, scratch};

#[test]
fn compat_05_compat_is_a_deployment_gate() {
    assert_eq!(
        code(&loom(&[
            "compat",
            "--abi",
            "1.3.0",
            "--event-schema",
            "1.20.0"
        ])),
        0
    );
    let bad = loom(&["compat", "--abi", "2.0.0"]);
    assert_eq!(code(&bad), 1, "{}", String::from_utf8_lossy(&bad.stdout));
    assert_eq!(code(&loom(&["compat", "--abi", "one"])), 2);
    assert_eq!(code(&loom(&["compat", "--set", "NOT_A_CONSTANT=1.0.0"])), 2);
    assert_eq!(
        code(&loom(&["compat"])),
        2,
        "nothing declared is a usage error"
    );
}

fn report_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

#[test]
fn conf_04_kits_pass_against_the_memory_and_sqlite_stores() {
    for store in ["memory", "sqlite"] {
        let out = scratch(&format!("conform-{store}"));
        let o = loom(&[
            "conform",
            "--store",
            store,
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(
            code(&o),
            0,
            "{store}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        let r = report_json(&out);
        assert_eq!(r["summary"]["ok"], serde_json::json!(true));
        assert!(
            r["results"].as_array().unwrap().len() > 50,
            "{store}: the kits ran"
        );
    }
}

#[test]
fn check_writes_all_four_report_formats_and_a_verifiable_digest() {
    let out = scratch("check");
    let o = loom(&[
        "check",
        "--quiet",
        "--fold-logs",
        "20",
        "--sim-seeds",
        "2",
        // Hermetic: a JUnit file from the developer's last test run must not decide this.
        "--skip",
        "tests",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 0, "{stdout}");
    for f in ["report.json", "report.xml", "report.md", "report.html"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    assert!(
        stdout.contains("rules of the catalogue have passing results against it in this run"),
        "{stdout}"
    );
    assert!(stdout.contains("verdict: PARTIAL PASS"), "{stdout}");
    assert!(
        stdout.contains("partial: not run against reference: the tests part"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(out.join("report.json")).unwrap();
    let report = loom_report::Report::from_json_str(&text).unwrap();
    assert!(report.verify_digest());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("SNAP-01") && html.contains("FOLD-09"),
        "the HTML carries the rule matrix"
    );
}

#[test]
fn check_rejects_an_unknown_part_as_a_usage_error() {
    assert_eq!(code(&loom(&["check", "--only", "everything"])), 2);
}

const GOOD: &str = r#"{"id":"e0","workflowId":"f","executionId":"x","eventType":"EXECUTION_STARTED","sequence":0,"timestamp":1000,"payload":{"input":1}}"#;

#[test]
fn fold_and_verify_log_name_the_event_and_field_on_bad_input() {
    let dir = scratch("logs");
    let good = dir.join("good.jsonl");
    let second = GOOD
        .replace(r#""sequence":0"#, r#""sequence":1"#)
        .replace("EXECUTION_STARTED", "STEP_STARTED")
        .replace(r#"{"input":1}"#, r#"{"stepId":"a"}"#);
    std::fs::write(&good, format!("{GOOD}\n{second}\n")).unwrap();
    let o = loom(&["fold", good.to_str().unwrap()]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with(r#"{"frames":{"a":"#));
    let v = loom(&["verify-log", good.to_str().unwrap()]);
    assert_eq!(code(&v), 0, "{}", String::from_utf8_lossy(&v.stdout));

    let bad = dir.join("bad.jsonl");
    std::fs::write(
        &bad,
        format!(
            "{GOOD}\n{}\n",
            GOOD.replace(r#""sequence":0"#, r#""sequence":"one""#)
        ),
    )
    .unwrap();
    let o = loom(&["fold", bad.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "an undecodable log is unreadable input");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("event 1") && err.contains("sequence") && err.contains("hint"),
        "{err}"
    );

    let gap = dir.join("gap.jsonl");
    std::fs::write(
        &gap,
        format!(
            "{GOOD}\n{}\n",
            second.replace(r#""sequence":1"#, r#""sequence":5"#)
        ),
    )
    .unwrap();
    let o = loom(&["verify-log", gap.to_str().unwrap()]);
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stdout).contains("expected sequence 1"));
}

#[test]
fn conf_08_fitness_functions_are_listed_where_they_live_and_ci_runs_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = std::fs::read_to_string(root.join("docs/fitness-functions.md")).unwrap();
    let mut paths = 0;
    for cell in table.split('`') {
        let looks_like_path = cell.contains('/')
            && !cell.contains(' ')
            && (cell.ends_with(".rs")
                || cell.ends_with(".json")
                || cell.ends_with(".toml")
                || cell.ends_with('/'));
        if looks_like_path {
            assert!(
                root.join(cell).exists(),
                "docs/fitness-functions.md cites {cell}, which does not exist"
            );
            paths += 1;
        }
    }
    assert!(paths >= 10, "found only {paths} locations");
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(ci.contains("./scripts/test") && ci.contains("cargo fmt") && ci.contains("clippy"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("./scripts/test") && readme.contains("./scripts/check"));
}

#[test]
fn a_run_refused_before_it_starts_leaves_no_run_folder() {
    let dir = scratch("no-folder");
    let missing = dir.join("no-such-set");
    for args in [
        vec![
            "vectors",
            "run",
            "--quiet",
            "--vectors",
            missing.to_str().unwrap(),
        ],
        vec![
            "vectors",
            "run",
            "--quiet",
            "--filter",
            "no vector has this id",
        ],
        vec![
            "conform",
            "--store",
            "memory",
            "--quiet",
            "--case",
            "no_such_case",
        ],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_loom"))
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(
            code(&o),
            2,
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // The directory held nothing before: a refused run leaves it as it found it,
        // without even an empty loom-reports/ folder.
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
    // A loom-reports/ folder the user already had stays, even when it is empty.
    std::fs::create_dir(dir.join("loom-reports")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_loom"))
        .args([
            "vectors",
            "run",
            "--quiet",
            "--filter",
            "no vector has this id",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(
        dir.join("loom-reports").is_dir(),
        "the user's own folder was removed"
    );
    assert_eq!(
        std::fs::read_dir(dir.join("loom-reports")).unwrap().count(),
        0
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
