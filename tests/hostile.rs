//! Hostile adapters, for both stdio protocols: a proxy (tests/adapters/hostile.py) in
//! front of a real adapter misbehaves in one way per row. For each row the test runs the
//! real `loom` binary and asserts the result kinds in the report, the exit code, the
//! request blamed, and that no process of any adapter group it started is alive
//! afterwards. The same matrix runs against the store protocol (`loom conform` over the
//! Python example store) and the kernel protocol (`loom vectors run` over
//! `loom kernel-adapter`). Every test needs `python3` (the proxy is a Python script) and
//! process groups (unix); without them it is reported as skipped.

use loom_test_support::{needs, skipped, test, Tool, Trial};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LOOM: &str = env!("CARGO_BIN_EXE_loom");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[derive(Clone, Copy, PartialEq, Debug)]
enum Protocol {
    Store,
    Kernel,
}

/// What a row expects of the run.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// The handshake fails: one `error` result for `adapter/handshake`, nothing else.
    Handshake(&'static str),
    /// Exactly one case has `status`, its message holds the words and names the
    /// request the adapter misbehaved on; every other case passes.
    OneCase(&'static str, &'static str),
    /// Every case passes; the shutdown adds one `error` result with the words.
    Shutdown(&'static str),
}

/// mode, request number (0 is hello), expectation.
const MATRIX: &[(&str, u32, Expect)] = &[
    ("hang", 0, Expect::Handshake("did not answer hello")),
    ("wrong-major", 0, Expect::Handshake("the major must match")),
    ("hello-no-newline", 0, Expect::Handshake("no newline")),
    ("hang", 3, Expect::OneCase("timeout", "did not answer")),
    (
        "ignore-term",
        3,
        Expect::OneCase("timeout", "did not answer"),
    ),
    ("late", 3, Expect::OneCase("timeout", "did not answer")),
    (
        "exit-after-hello",
        0,
        Expect::OneCase("error", "closed its output"),
    ),
    ("twice", 3, Expect::OneCase("error", "a second time")),
    ("non-json", 3, Expect::OneCase("error", "not JSON")),
    (
        "partial-exit",
        3,
        Expect::OneCase("error", "incomplete line"),
    ),
    ("huge", 3, Expect::OneCase("error", "more than")),
    ("grandchild", 99, Expect::Shutdown("left 1 process")),
    ("ignore-eof", 99, Expect::Shutdown("did not exit")),
];

struct Run {
    dir: PathBuf,
    code: Option<i32>,
    report: Option<Value>,
}

impl Run {
    fn results(&self) -> Vec<Value> {
        self.report
            .as_ref()
            .and_then(|r| r["results"].as_array().cloned())
            .unwrap_or_default()
    }

    fn groups(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
            .collect()
    }

    fn blamed_ids(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("events"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split("id=").nth(1).map(|s| format!("(id {s})")))
            .collect()
    }
}

fn command_for(protocol: Protocol, mode: &str, n: u32, out: &Path, timeout_ms: &str) -> Command {
    let proxy = format!("{ROOT}/tests/adapters/hostile.py");
    let mut c = Command::new(LOOM);
    match protocol {
        Protocol::Store => {
            let real = format!("python3 {ROOT}/examples/python-sqlite-store/adapter.py");
            c.args([
                "conform",
                "--store",
                &format!("cmd:python3 {proxy} {mode} {n} -- {real}"),
                "--kit",
                "branch-registry",
            ]);
        }
        Protocol::Kernel => {
            c.args([
                "vectors",
                "run",
                "--kernel-cmd",
                &format!("python3 {proxy} {mode} {n} -- {LOOM} kernel-adapter"),
                "--filter",
                "digest-fnv1a64-",
            ]);
        }
    }
    c.args([
        "--timeout-ms",
        timeout_ms,
        "--hello-timeout-ms",
        "4000",
        "--quiet",
    ])
    .arg("--out")
    .arg(out.join("report"))
    .env("LOOM_TEST_PIDFILE", out.join("pids"))
    .env("LOOM_TEST_EVENTS", out.join("events"))
    .env("LOOM_TEST_ONCE", out.join("once"))
    .env("LOOM_TEST_LATE_S", "3")
    // Over both protocols' line limits (64 MiB store, 16 MiB kernel).
    .env("LOOM_TEST_HUGE_BYTES", "68000000")
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loom-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn run(protocol: Protocol, mode: &str, n: u32) -> Run {
    let dir = scratch(&format!("{protocol:?}-{mode}-{n}"));
    // A line over 64 MiB takes a while to write on a loaded machine.
    let timeout_ms = if mode == "huge" { "30000" } else { "2000" };
    let output = command_for(protocol, mode, n, &dir, timeout_ms)
        .output()
        .expect("loom runs");
    let report = std::fs::read_to_string(dir.join("report").join("report.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    if report.is_none() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    }
    Run {
        dir,
        code: output.status.code(),
        report,
    }
}

fn assert_no_process_left(run: &Run, what: &str) {
    let groups = run.groups();
    assert!(
        !groups.is_empty(),
        "{what}: no adapter process was recorded"
    );
    // Reaping by init can lag a moment behind loom's exit.
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let alive: Vec<(i32, Vec<i32>)> = groups
            .iter()
            .map(|g| (*g, loom_process::live_group_members(*g)))
            .filter(|(_, m)| !m.is_empty())
            .collect();
        if alive.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            panic!("{what}: adapter processes are still alive (group, pids): {alive:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn check(protocol: Protocol, mode: &str, n: u32, expect: Expect) {
    let what = format!("{protocol:?} {mode} at {n}");
    let run = run(protocol, mode, n);
    assert_eq!(run.code, Some(1), "{what}: exit code");
    let results = run.results();
    assert!(
        !results.is_empty(),
        "{what}: a report with results is written"
    );
    let status = |r: &Value| r["status"].as_str().unwrap_or("").to_string();
    let message = |r: &Value| r["message"].as_str().unwrap_or("").to_string();
    match expect {
        Expect::Handshake(words) => {
            assert_eq!(results.len(), 1, "{what}: {results:?}");
            assert_eq!(results[0]["case_id"], "adapter/handshake", "{what}");
            assert_eq!(status(&results[0]), "error", "{what}");
            assert!(
                message(&results[0]).contains(words),
                "{what}: {}",
                message(&results[0])
            );
            assert!(
                message(&results[0]).contains("hostile proxy"),
                "{what}: the message quotes the adapter's stderr: {}",
                message(&results[0])
            );
        }
        Expect::OneCase(kind, words) => {
            let bad: Vec<&Value> = results.iter().filter(|r| status(r) != "pass").collect();
            assert_eq!(
                bad.len(),
                1,
                "{what}: exactly one case is not a pass: {bad:?}"
            );
            assert_eq!(status(bad[0]), kind, "{what}: {:?}", bad[0]);
            let m = message(bad[0]);
            assert!(m.contains(words), "{what}: {m}");
            let ids = run.blamed_ids();
            if mode == "exit-after-hello" {
                // The request blamed is the first one the vanished adapter could not take.
                assert!(m.contains("exited with code 0"), "{what}: {m}");
            } else {
                assert!(
                    ids.iter().any(|id| m.contains(id.as_str())),
                    "{what}: the message names the request the adapter misbehaved on {ids:?}: {m}"
                );
            }
            assert!(results.len() >= 3, "{what}: the other cases ran");
        }
        Expect::Shutdown(words) => {
            let shutdown: Vec<&Value> = results
                .iter()
                .filter(|r| r["case_id"] == "adapter/shutdown")
                .collect();
            assert_eq!(shutdown.len(), 1, "{what}: {results:?}");
            assert_eq!(status(shutdown[0]), "error");
            assert!(
                message(shutdown[0]).contains(words),
                "{what}: {}",
                message(shutdown[0])
            );
            let others_pass = results
                .iter()
                .filter(|r| r["case_id"] != "adapter/shutdown")
                .all(|r| status(r) == "pass");
            assert!(others_pass, "{what}: {results:?}");
        }
    }
    assert_no_process_left(&run, &what);
    let _ = std::fs::remove_dir_all(&run.dir);
}

macro_rules! matrix_tests {
    ($($name:ident: $idx:expr;)*) => {
        /// One test per row and protocol (`store::<row>`, `kernel::<row>`), and the check
        /// that the rows are all there.
        fn matrix_trials() -> Vec<Trial> {
            let mut trials = Vec::new();
            $(
                trials.push(hostile(concat!("store::", stringify!($name)), || {
                    let (mode, n, expect) = MATRIX[$idx];
                    check(Protocol::Store, mode, n, expect);
                }));
                trials.push(hostile(concat!("kernel::", stringify!($name)), || {
                    let (mode, n, expect) = MATRIX[$idx];
                    check(Protocol::Kernel, mode, n, expect);
                }));
            )*
            trials.push(test("the_matrix_has_a_test_per_row", || {
                let idx: &[usize] = &[$($idx),*];
                assert_eq!(idx, (0..MATRIX.len()).collect::<Vec<_>>().as_slice());
            }));
            trials
        }
    };
}

matrix_tests! {
    hang_in_hello: 0;
    wrong_protocol_major: 1;
    hello_without_newline: 2;
    hang_on_request: 3;
    hang_ignoring_sigterm: 4;
    answer_late: 5;
    exit_after_hello: 6;
    answer_twice: 7;
    non_json_line: 8;
    partial_line_then_exit: 9;
    huge_line: 10;
    grandchild_holds_stdout: 11;
    ignore_end_of_input: 12;
}

/// Ctrl-C during a run ends every adapter group, for both protocols.
fn an_interrupted_run_leaves_no_adapter_behind() {
    for protocol in [Protocol::Store, Protocol::Kernel] {
        let dir = scratch(&format!("interrupt-{protocol:?}"));
        let mut c = command_for(protocol, "ignore-term", 3, &dir, "60000");
        let mut child = c.spawn().expect("loom starts");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !dir.join("events").exists() {
            assert!(
                Instant::now() < deadline,
                "{protocol:?}: the adapter never hung"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: signalling our own child process.
        #[cfg(unix)]
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        let status = child.wait().expect("loom ends");
        assert_eq!(status.code(), Some(130), "{protocol:?}: 128 + SIGINT");
        let run = Run {
            dir: dir.clone(),
            code: status.code(),
            report: None,
        };
        assert_no_process_left(&run, &format!("{protocol:?} interrupted"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A hostile-adapter test: it needs python3 and process groups (unix).
fn hostile(name: &str, body: fn()) -> Trial {
    if cfg!(unix) {
        needs(Tool::Python3, name, move |_| body())
    } else {
        skipped(
            name,
            "skip-not-unix",
            "adapter process groups are a unix feature",
        )
    }
}

/// An adapter that hangs on every case costs a call time limit per case; `--max-fail 2`
/// stops the run at the second timeout, and every case not run is a skip saying why
/// (never left out, never a pass). Both protocols.
fn a_hanging_adapter_stops_the_run_at_the_failure_limit() {
    for protocol in [Protocol::Store, Protocol::Kernel] {
        let dir = std::env::temp_dir().join(format!(
            "loom-hostile-max-fail-{protocol:?}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut c = command_for(protocol, "hang", 1, &dir, "300");
        // Every restarted process hangs again: no LOOM_TEST_ONCE.
        c.env_remove("LOOM_TEST_ONCE").args(["--max-fail", "2"]);
        let out = c.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{protocol:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("report/report.json")).unwrap())
                .unwrap();
        let results = report["results"].as_array().unwrap();
        let with = |status: &str| results.iter().filter(|r| r["status"] == status).count();
        assert_eq!(
            with("timeout"),
            2,
            "{protocol:?}: stopped at the limit: {results:?}"
        );
        let not_run: Vec<&Value> = results
            .iter()
            .filter(|r| {
                r["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("not run: the run stopped after 2 failures"))
            })
            .collect();
        assert!(
            !not_run.is_empty(),
            "{protocol:?}: the cases not run are reported"
        );
        assert!(not_run.iter().all(|r| r["status"] == "skip-untestable"));
        // Only the handshake's own result (the hello's ABI, kernel protocol) may pass.
        let passed_cases = results
            .iter()
            .filter(|r| r["status"] == "pass" && r["suite"] != "adapter")
            .count();
        assert_eq!(passed_cases, 0, "{protocol:?}: {results:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn main() -> std::process::ExitCode {
    let mut trials = matrix_trials();
    trials.push(hostile(
        "a_hanging_adapter_stops_the_run_at_the_failure_limit",
        a_hanging_adapter_stops_the_run_at_the_failure_limit,
    ));
    trials.push(hostile(
        "an_interrupted_run_leaves_no_adapter_behind",
        an_interrupted_run_leaves_no_adapter_behind,
    ));
    loom_test_support::run(trials)
}
