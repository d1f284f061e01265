//! A `harness = false` test binary in miniature, for tests/skips.rs: one trial that
//! passes, one that cannot run here (an unclaimed capability), and one that needs
//! `python3`. It shows what a runner sees of a skip: the listing, `--list --ignored`,
//! the console line and the exit code.

use loom_test_support::{needs, run, skipped, test, Tool};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    run(vec![
        test("demo_passes", || assert_eq!("loom".len(), 4)),
        skipped(
            "demo_cannot_run",
            "skip-not-claimed readRange",
            "the store does not claim readRange",
        ),
        needs(Tool::Python3, "demo_needs_python3", |python| {
            let status = Command::new(python).arg("--version").status();
            assert!(
                status.is_ok_and(|s| s.success()),
                "{python} --version failed"
            );
        }),
    ])
}
