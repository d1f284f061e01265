//! Helpers the `loom` binary's integration tests share: run the binary, make a scratch
//! directory, read an exit code. Each test file includes this module and uses some of it.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `loom` binary this package built, with `args`, in the test's directory.
pub fn loom(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(args)
        .output()
        .expect("the loom binary runs")
}

/// A fresh, empty directory under the system's temporary directory, named after the
/// test file (the crate), this process and `name`, so concurrent tests never share one.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "loom-{}-{}-{name}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The process's exit code; -1 when a signal ended it.
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// A finished run as a test failure shows it: exit code, stdout and stderr.
pub fn show(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The store string of a planted-bug variant of the Python example adapter
/// (buggy-stores/python/buggy_adapter.py BUG), keeping its data in `db` when given.
pub fn buggy_variant(python: &str, bug: &str, db: Option<&std::path::Path>) -> String {
    let mut s = format!(
        "cmd:{python} {}/buggy-stores/python/buggy_adapter.py {bug}",
        env!("CARGO_MANIFEST_DIR")
    );
    if let Some(db) = db {
        s.push_str(&format!(" --db {}", db.display()));
    }
    s
}

/// The `results` of the `report.json` a run wrote under `out`; the run's output is in
/// the message when the file is missing (the run then failed before writing it).
pub fn report_results(out: &std::path::Path, o: &Output) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("report.json: {e}\n{}", show(o)));
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    report["results"].as_array().cloned().unwrap_or_default()
}
