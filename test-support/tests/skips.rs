//! A test that cannot run is reported as skipped, never as passed: the demo binary
//! (src/bin/skip_demo.rs) is run the way nextest runs a test binary, and what it lists,
//! prints and exits with is checked, with `python3` present, missing, and missing under
//! `LOOM_REQUIRE_TOOLS=1`. The tool is faked through `PATH`, so the test means the same
//! on every machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const DEMO: &str = env!("CARGO_BIN_EXE_loom-skip-demo");

/// A directory for `PATH`: empty, or holding a `python3` that answers `--version`.
fn path_dir(with_python: bool) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "loom-skip-demo-{}-{}",
        std::process::id(),
        if with_python { "python" } else { "empty" }
    ));
    std::fs::create_dir_all(&dir).unwrap();
    if with_python {
        let fake = dir.join("python3");
        std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    dir
}

fn demo(path: &Path, require: bool, args: &[&str]) -> Output {
    let mut cmd = Command::new(DEMO);
    cmd.args(args)
        .env("PATH", path)
        .env_remove("LOOM_REQUIRE_TOOLS");
    if require {
        cmd.env("LOOM_REQUIRE_TOOLS", "1");
    }
    cmd.output().expect("run the demo binary")
}

/// True when the console has a line `test <name> ... <outcome>` (libtest pads the name).
fn reported(text: &str, name: &str, outcome: &str) -> bool {
    text.lines().any(|l| {
        l.strip_prefix("test ")
            .and_then(|rest| rest.split_once(" ... "))
            .is_some_and(|(n, o)| n.trim_end() == name && o == outcome)
    })
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The names a runner sees, as `--list --format terse` prints them.
fn listed(path: &Path, require: bool, ignored: bool) -> Vec<String> {
    let mut args = vec!["--list", "--format", "terse"];
    if ignored {
        args.push("--ignored");
    }
    let out = demo(path, require, &args);
    assert!(out.status.success(), "{}", stdout(&out));
    let mut names: Vec<String> = stdout(&out)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

#[test]
fn a_test_that_cannot_run_is_listed_as_ignored_with_its_reason_in_the_name() {
    let python = path_dir(true);
    assert_eq!(
        listed(&python, false, false),
        [
            "demo_cannot_run [skip-not-claimed readRange]",
            "demo_needs_python3",
            "demo_passes"
        ]
    );
    // `--list --ignored` is how nextest learns which tests to report as SKIP.
    assert_eq!(
        listed(&python, false, true),
        ["demo_cannot_run [skip-not-claimed readRange]"]
    );
    let empty = path_dir(false);
    assert_eq!(
        listed(&empty, false, true),
        [
            "demo_cannot_run [skip-not-claimed readRange]",
            "demo_needs_python3 [skip-missing python3]"
        ]
    );
}

#[test]
fn a_run_counts_skips_as_ignored_not_passed() {
    let out = demo(&path_dir(true), false, &[]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        reported(
            &text,
            "demo_cannot_run [skip-not-claimed readRange]",
            "ignored"
        ),
        "{text}"
    );
    assert!(reported(&text, "demo_needs_python3", "ok"), "{text}");
    assert!(text.contains("2 passed; 0 failed; 1 ignored"), "{text}");

    let out = demo(&path_dir(false), false, &[]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        reported(
            &text,
            "demo_needs_python3 [skip-missing python3]",
            "ignored"
        ),
        "{text}"
    );
    assert!(text.contains("1 passed; 0 failed; 2 ignored"), "{text}");
}

#[test]
fn require_tools_turns_a_missing_tool_into_a_failure_that_says_how_to_provide_it() {
    let empty = path_dir(false);
    // The tool-gated test is no longer ignored: it is listed under its plain name and fails.
    assert_eq!(
        listed(&empty, true, true),
        ["demo_cannot_run [skip-not-claimed readRange]"]
    );
    let out = demo(&empty, true, &[]);
    let text = stdout(&out);
    assert!(!out.status.success(), "{text}");
    assert!(reported(&text, "demo_needs_python3", "FAILED"), "{text}");
    for needle in [
        "python3 is missing",
        "LOOM_REQUIRE_TOOLS=1",
        "apt-get install -y python3",
    ] {
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
    assert!(text.contains("1 passed; 1 failed; 1 ignored"), "{text}");
}

#[test]
fn a_skipped_test_forced_to_run_fails_with_its_reason() {
    let out = demo(
        &path_dir(true),
        false,
        &[
            "--ignored",
            "--exact",
            "demo_cannot_run [skip-not-claimed readRange]",
        ],
    );
    let text = stdout(&out);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains(
            "cannot run here (skip-not-claimed readRange): the store does not claim readRange"
        ),
        "{text}"
    );
}

/// nextest leaves skipped tests out of its JUnit file unless the profile asks for them;
/// `loom check` reads that file, so the CI profile must keep them as `<skipped/>`.
#[test]
fn the_ci_profile_writes_ignored_tests_into_junit_as_skipped() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.config/nextest.toml");
    let text = std::fs::read_to_string(&config).expect("read .config/nextest.toml");
    let junit = text
        .split("[profile.ci.junit]")
        .nth(1)
        .expect("a [profile.ci.junit] section");
    let section = junit.split("\n[").next().unwrap_or_default();
    assert!(
        section
            .lines()
            .any(|l| l.split('#').next().unwrap_or_default().trim()
                == r#"report-skipped = "ignored""#),
        "[profile.ci.junit] lacks report-skipped = \"ignored\": {section}"
    );
}
