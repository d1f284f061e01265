//! Exit statuses CI can trust: 2 means the run could not be set up (a store string that
//! names nothing, an adapter command that is empty, a database that cannot be opened, an
//! `--out` that cannot be written), in every command, and such a run leaves no report
//! behind (so no badge can show it as a failing implementation). 1 is kept for the
//! implementation failing; `tests/early_exit.rs` holds an adapter that dies at once to it.

mod common;

use common::{code, scratch};
use std::process::Command;

#[test]
fn a_run_that_cannot_be_set_up_exits_2_and_reports_nothing() {
    let dir = scratch("setup");
    let file = dir.join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let under_file = file.join("out");
    let under_file = under_file.to_str().unwrap();
    let missing_db = "sqlite:/nonexistent-loom-dir/x.db";
    // A port nothing listens on: the connection is refused at once.
    let no_server = "postgres://postgres@127.0.0.1:1/test";
    let cases: Vec<Vec<&str>> = vec![
        vec!["conform"],
        vec!["conform", "--store", "bogus"],
        vec!["conform", "--store", ""],
        vec!["conform", "--store", "cmd:"],
        vec!["conform", "--store", "cmd:   "],
        vec!["conform", "--store", missing_db],
        vec!["conform", "--store", no_server],
        vec!["conform", "--store", "memory", "--kit", "no-such-kit"],
        vec!["conform", "--store", "memory", "--out", under_file],
        vec!["check", "--store", "bogus"],
        vec!["check", "--store", "cmd:"],
        vec!["check", "--store", missing_db],
        vec!["check", "--kernel-cmd", ""],
        vec!["check", "--only", "no-such-part"],
        vec!["check", "--out", under_file],
        vec!["vectors", "run", "--kernel-cmd", " "],
        vec!["vectors", "run", "--out", under_file],
        vec!["sim", "--store", "bogus"],
        vec!["sim", "--store", "cmd:"],
        vec!["sim", "--store", "sqlite:/nonexistent-loom-dir"],
        vec!["sim", "--seeds", "1", "--out", under_file],
    ];
    for args in &cases {
        let mut all: Vec<&str> = args.clone();
        all.push("--quiet");
        let o = Command::new(env!("CARGO_BIN_EXE_loom"))
            .args(&all)
            .current_dir(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            code(&o),
            2,
            "loom {all:?}\nstdout:\n{}\nstderr:\n{stderr}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(
            stderr.contains("error"),
            "loom {all:?} says what is wrong:\n{stderr}"
        );
        let left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "a-file")
            .collect();
        assert!(left.is_empty(), "loom {all:?} left {left:?} behind");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
