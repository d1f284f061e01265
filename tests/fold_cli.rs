//! `loom fold` and `loom verify-log` as a user meets them: errors that name the file's
//! own line, a byte order mark and pretty-printed arrays, warnings for logs that are
//! not one gapless execution, and the verify-log modes agreeing on the failing k.

use std::path::PathBuf;
use std::process::Output;

mod common;
use common::{code, loom};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Writes `text` to a fresh file and returns its path.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loom-fold-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn envelope(seq: u64, exec: &str, kind: &str, payload: &str) -> String {
    format!(
        r#"{{"id":"e{seq}","workflowId":"f","executionId":"{exec}","eventType":"{kind}","sequence":{seq},"timestamp":{},"payload":{payload}}}"#,
        1000 + seq * 10
    )
}

fn good_log() -> Vec<String> {
    vec![
        envelope(0, "x", "EXECUTION_STARTED", r#"{"input":1}"#),
        envelope(1, "x", "STEP_STARTED", r#"{"stepId":"a","input":2}"#),
        envelope(2, "x", "STEP_COMPLETED", r#"{"stepId":"a","output":3}"#),
        envelope(3, "x", "RESOURCE_METERED", r#"{"tokens":5}"#),
    ]
}

fn fold_path(path: &std::path::Path) -> Output {
    loom(&["fold", path.to_str().unwrap()])
}

#[test]
fn abi_10_fold_names_the_files_own_line_and_column() {
    let log = good_log();
    // A truncated second envelope, after a blank first line: the file's line 3.
    let cut = &log[1][..54];
    let path = file("truncated.jsonl", &format!("\n{}\n{cut}\n", log[0]));
    let o = fold_path(&path);
    assert_eq!(
        code(&o),
        2,
        "a log that does not decode is unreadable input"
    );
    let err = stderr(&o);
    assert!(
        err.contains("event 1 (line 3, column 54)"),
        "the error names the file's line and column: {err}"
    );
    assert!(!err.contains("line 1 column"), "{err}");
    assert!(err.contains("hint: ") && err.contains("cut short"), "{err}");

    // A field error names the line too.
    let bad = log[2].replace(r#""sequence":2"#, r#""sequence":"two""#);
    let path = file("field.jsonl", &format!("{}\n{}\n\n{bad}\n", log[0], log[1]));
    let err = stderr(&fold_path(&path));
    assert!(
        err.contains("event 2 (line 4): field `sequence`") && err.contains("hint"),
        "{err}"
    );
}

#[test]
fn abi_10_fold_accepts_a_byte_order_mark_and_pretty_printed_arrays() {
    let log = good_log();
    let plain = fold_path(&file("plain.jsonl", &log.join("\n")));
    assert_eq!(code(&plain), 0, "{}", stderr(&plain));
    let values: Vec<serde_json::Value> = log
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let pretty = serde_json::to_string_pretty(&values).unwrap();
    for (name, text) in [
        ("bom.jsonl", format!("\u{feff}{}", log.join("\n"))),
        ("pretty.json", pretty.clone()),
        ("bom-pretty.json", format!("\u{feff}{pretty}")),
        ("leading-blank.json", format!("\n\n{pretty}\n")),
    ] {
        let o = fold_path(&file(name, &text));
        assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
        assert_eq!(stdout(&o), stdout(&plain), "{name}: same state");
        assert!(stderr(&o).is_empty(), "{name}: no warning: {}", stderr(&o));
    }
    // An error inside a pretty-printed array names the line where it is.
    let broken = pretty.replacen("\"sequence\": 2", "\"sequence\": 2.5", 1);
    let line = broken.lines().position(|l| l.contains("2.5")).unwrap() + 1;
    let err = stderr(&fold_path(&file("pretty-bad.json", &broken)));
    assert!(
        err.contains(&format!("event 2 (line {line})")) && err.contains("the number 2.5"),
        "line {line}: {err}"
    );
}

#[test]
fn abi_10_fold_refuses_pretty_printed_envelopes_outside_an_array_with_a_hint() {
    let log = good_log();
    let objects: Vec<String> = log
        .iter()
        .map(|l| {
            serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(l).unwrap())
                .unwrap()
        })
        .collect();
    let o = fold_path(&file("pretty-objects.json", &objects.join("\n")));
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(
        err.contains("line 1 holds only the start of a JSON object")
            && err.contains("one whole envelope per line")
            && err.contains("JSON array"),
        "{err}"
    );
}

#[test]
fn abi_10_fold_warns_on_gaps_and_mixed_executions_but_still_folds() {
    let log = good_log();
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "gap",
            vec![
                log[0].clone(),
                log[1].clone(),
                envelope(5, "x", "STEP_COMPLETED", r#"{"stepId":"a"}"#),
            ],
            "event 2: a gap: sequence 5 follows 1 (missing 2..4)",
        ),
        (
            "repeat",
            vec![
                log[0].clone(),
                log[1].clone(),
                envelope(1, "x", "STEP_COMPLETED", r#"{"stepId":"a"}"#),
            ],
            "event 2: sequence 1 follows 1: repeated or out of order",
        ),
        (
            "second-execution",
            vec![
                log[0].clone(),
                log[1].clone(),
                envelope(2, "y", "STEP_COMPLETED", r#"{"stepId":"a"}"#),
            ],
            "event 2: execution `y` differs from the log's first execution `x`",
        ),
        (
            "second-start",
            vec![
                log[0].clone(),
                log[1].clone(),
                envelope(0, "y", "EXECUTION_STARTED", r#"{"input":9}"#),
            ],
            "event 2: a second EXECUTION_STARTED",
        ),
        (
            "tail-only",
            log[2..].to_vec(),
            "event 0: the log starts at sequence 2, not 0",
        ),
    ];
    for (name, lines, warning) in cases {
        let o = fold_path(&file(&format!("{name}.jsonl"), &lines.join("\n")));
        assert_eq!(code(&o), 0, "{name}: a warning is not a failure");
        assert!(stdout(&o).starts_with('{'), "{name}: the state is printed");
        let err = stderr(&o);
        assert!(
            err.contains(&format!("warning: {warning}")),
            "{name}: {err}"
        );
    }
    let clean = fold_path(&file("clean.jsonl", &log.join("\n")));
    assert!(stderr(&clean).is_empty(), "{}", stderr(&clean));
}

#[test]
fn snap_01_verify_log_modes_report_the_same_first_failing_k() {
    // The fourth envelope repeats sequence 2: a snapshot at k=2 (sequence 2) restores
    // without it, and the state differs in `_resources`.
    let lines = [
        envelope(0, "x", "EXECUTION_STARTED", r#"{"input":1}"#),
        envelope(1, "x", "RESOURCE_METERED", r#"{"tokens":1}"#),
        envelope(2, "x", "RESOURCE_METERED", r#"{"tokens":2}"#),
        envelope(2, "x", "RESOURCE_METERED", r#"{"tokens":4}"#).replace("\"e2\"", "\"e3\""),
        envelope(3, "x", "RESOURCE_METERED", r#"{"tokens":8}"#).replace("\"e3\"", "\"e4\""),
    ];
    let bad = file("repeat.jsonl", &lines.join("\n"));
    let fail_line = |o: &Output| {
        stdout(o)
            .lines()
            .find(|l| l.starts_with("FAIL  snapshot"))
            .map(str::to_owned)
    };
    let linear = loom(&["verify-log", bad.to_str().unwrap()]);
    let exhaustive = loom(&["verify-log", "--exhaustive", bad.to_str().unwrap()]);
    let sampled = loom(&["verify-log", "--sample", "5", bad.to_str().unwrap()]);
    assert_eq!(code(&linear), 1);
    assert_eq!(code(&exhaustive), 1);
    let expected = "FAIL  snapshot at k=2 (event 2, sequence 2) plus the tail differs from the full fold at /variables/_resources/tokens (SNAP-01)";
    assert_eq!(
        fail_line(&linear).as_deref(),
        Some(expected),
        "{}",
        stdout(&linear)
    );
    assert_eq!(fail_line(&exhaustive).as_deref(), Some(expected));
    assert_eq!(fail_line(&sampled).as_deref(), Some(expected));

    let good = file("good.jsonl", &good_log().join("\n"));
    for args in [vec![], vec!["--exhaustive"], vec!["--sample", "2"]] {
        let mut all = vec!["verify-log"];
        all.extend(args.iter().copied());
        all.push(good.to_str().unwrap());
        let o = loom(&all);
        assert_eq!(code(&o), 0, "{args:?}: {}", stdout(&o));
        assert!(stdout(&o).contains("ok    fold(snapshot_k, tail) == fold(events)"));
    }
    let both = loom(&[
        "verify-log",
        "--exhaustive",
        "--sample",
        "3",
        good.to_str().unwrap(),
    ]);
    assert_eq!(code(&both), 2, "conflicting modes are a usage error");
    assert_eq!(
        code(&loom(&[
            "verify-log",
            "--sample",
            "0",
            good.to_str().unwrap()
        ])),
        2
    );
    assert_eq!(code(&loom(&["verify-log", "/nonexistent/log.jsonl"])), 2);
}

#[test]
fn verify_log_prints_progress_on_request() {
    let good = file("progress.jsonl", &good_log().join("\n"));
    let o = loom(&["verify-log", "--progress", good.to_str().unwrap()]);
    assert_eq!(code(&o), 0);
    let err = stderr(&o);
    assert!(
        err.contains("verify-log: decoded 4 envelopes")
            && err.contains("verify-log: checked 4 snapshot points"),
        "{err}"
    );
    let quiet = loom(&["verify-log", good.to_str().unwrap()]);
    assert!(stderr(&quiet).is_empty(), "a short log prints no progress");
}

#[test]
fn fold_of_an_empty_log_warns_that_nothing_was_folded() {
    for (name, text) in [
        ("empty.jsonl", ""),
        ("blank.jsonl", "\n\n"),
        ("array.json", "[]"),
    ] {
        let o = fold_path(&file(name, text));
        // The exit status the help states: an empty log still folds (to the initial state).
        assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("holds no envelope: nothing was folded"),
            "{name}: {}",
            stderr(&o)
        );
    }
    let o = fold_path(&file("one.jsonl", &good_log()[0]));
    assert!(!stderr(&o).contains("no envelope"), "{}", stderr(&o));
}

#[test]
fn verify_log_names_the_sequences_it_found_gapless() {
    let log = good_log();
    let o = loom(&[
        "verify-log",
        file("two.jsonl", &log[..2].join("\n")).to_str().unwrap(),
    ]);
    assert!(
        stdout(&o).contains("2 envelopes decode; sequences 0 and 1 are gapless"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("0..2"), "{}", stdout(&o));
}
