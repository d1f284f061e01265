//! The runner against a small echo adapter that misbehaves on request: every fault is
//! reported on the right request with the right kind, and no process of the adapter's
//! group is alive afterwards. Every test needs `python3` (the adapter is a Python
//! script) and process groups (unix); without them it is reported as skipped.

use loom_process::{live_group_members, live_groups, Adapter, AdapterConfig, FaultKind};
use loom_test_support::{needs, skipped, Tool, Trial};
use serde_json::{json, Value};
use std::time::Duration;

fn config(mode: &str, at: &str) -> AdapterConfig {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/echo.py");
    let mut c = AdapterConfig::new(
        format!("python3 {script} {mode} {at}"),
        "test adapter",
        json!({"protocolVersion": "1.0"}),
    );
    c.call_timeout = Duration::from_millis(3_000);
    c.hello_timeout = Duration::from_millis(5_000);
    c.shutdown_grace = Duration::from_millis(500);
    c.term_grace = Duration::from_millis(300);
    c.restarts_max = 3;
    c.line_bytes_max = 100_000;
    c
}

fn start(mode: &str, at: &str) -> Adapter {
    Adapter::start(config(mode, at), |_| Ok(())).expect("the adapter starts")
}

fn assert_group_gone(pgid: i32) {
    assert!(
        live_group_members(pgid).is_empty(),
        "processes of group {pgid} are still alive: {:?}",
        live_group_members(pgid)
    );
    assert!(
        !live_groups().contains(&pgid),
        "group {pgid} is still registered"
    );
}

fn a_good_adapter_answers_and_ends_on_end_of_input() {
    let mut a = start("good", "");
    let pgid = a.process_group().unwrap();
    let answer = a.call("case-1", "ping", &json!({"x": 1})).unwrap();
    assert_eq!(answer["result"]["params"], json!({"x": 1}));
    let raw = a
        .call_with_params_text("case-1", "raw", r#"{"b":1,"a":1E2}"#)
        .unwrap();
    assert_eq!(raw["result"]["params"], json!({"b": 1, "a": 100.0}));
    // Raw text with a line break cannot travel as one line: refused as malformed before
    // it is sent (a fault, so the next call gets a fresh adapter), and the next request
    // is answered. A value's line break is escaped by the JSON writer, so it travels.
    for broken in ["{\"a\":\n1}", "{\"a\":\r1}"] {
        let f = a
            .call_with_params_text("case-1", "raw", broken)
            .unwrap_err();
        assert_eq!(f.kind, FaultKind::Malformed, "{f:?}");
        assert!(f.message.contains("line break"), "{}", f.message);
    }
    let text = a
        .call("case-1", "ping", &json!({"s": "two\nlines\r"}))
        .unwrap();
    assert_eq!(text["result"]["params"], json!({"s": "two\nlines\r"}));
    let now = a.process_group().unwrap();
    let report = a.shutdown();
    assert!(
        report.blames.is_empty() && report.problems.is_empty(),
        "{report:?}"
    );
    assert_group_gone(pgid);
    assert_group_gone(now);
}

/// Each row: mode, the request it hits, the fault kind expected on that request, and
/// words the message must contain.
const FAULTS: &[(&str, FaultKind, &str)] = &[
    ("hang", FaultKind::Timeout, "did not answer bad (id"),
    ("ignore-term", FaultKind::Timeout, "did not answer bad"),
    ("crash", FaultKind::Crashed, "exited with code 3"),
    ("garbage", FaultKind::Malformed, "not JSON"),
    ("partial", FaultKind::IncompleteLine, "incomplete line"),
    (
        "no-newline",
        FaultKind::Timeout,
        "incomplete line (no newline)",
    ),
    ("wrong-id", FaultKind::WrongId, "id 99999"),
    ("huge", FaultKind::LineTooLong, "more than 100000 bytes"),
];

fn every_fault_is_the_faulty_request_s_and_the_group_is_ended() {
    for (mode, kind, words) in FAULTS {
        let mut a = start(mode, "bad");
        let pgid = a.process_group().unwrap();
        a.call("case-1", "fine", &json!({})).unwrap();
        let fault = a.call("case-2", "bad", &json!({})).unwrap_err();
        assert_eq!(fault.kind, *kind, "{mode}: {fault}");
        assert!(fault.message.contains(words), "{mode}: {}", fault.message);
        assert_eq!(
            fault.request.as_ref().map(|r| r.tag.as_str()),
            Some("case-2")
        );
        assert!(
            fault.message.contains(&format!("mode {mode}")),
            "{mode}: the message quotes this process's stderr: {}",
            fault.message
        );
        assert_group_gone(pgid);
        // The next call starts a fresh process.
        let again = a.call("case-3", "fine", &json!({})).unwrap();
        assert_eq!(again["result"]["method"], "fine");
        assert_eq!(a.restarts(), 1, "{mode}");
        let next = a.process_group().unwrap();
        a.shutdown();
        assert_group_gone(next);
    }
}

fn a_crash_quotes_only_the_crashed_process_s_stderr() {
    let mut a = start("crash", "bad");
    let first = a.call("c1", "bad", &json!({})).unwrap_err();
    let second = a.call("c2", "bad", &json!({})).unwrap_err();
    assert_eq!(first.stderr.len(), 2, "{:?}", first.stderr);
    assert_eq!(second.stderr.len(), 2, "{:?}", second.stderr);
    assert_ne!(
        first.stderr[0], second.stderr[0],
        "each process has its own lines"
    );
}

fn a_second_answer_is_blamed_on_its_own_request_not_the_next() {
    let mut a = start("twice", "bad");
    let first = a.call("case-1", "bad", &json!({})).unwrap();
    assert_eq!(first["result"]["method"], "bad");
    // The innocent next request of the same case is answered correctly.
    let next = a.call("case-1", "fine", &json!({})).unwrap();
    assert_eq!(next["result"]["method"], "fine");
    let blames = a.take_blames();
    assert_eq!(blames.len(), 1, "{blames:?}");
    assert_eq!(blames[0].tag, "case-1");
    assert_eq!(blames[0].fault.kind, FaultKind::ExtraLine);
    assert!(blames[0].fault.message.contains("a second time"));
    // A new case gets a fresh process.
    let before = a.process_group();
    a.call("case-2", "fine", &json!({})).unwrap();
    assert_ne!(before, a.process_group());
    a.shutdown();
}

fn shutdown_ends_an_adapter_that_ignores_end_of_input_or_leaves_a_child() {
    for (mode, kind) in [
        ("ignore-eof", FaultKind::IgnoredEndOfInput),
        ("grandchild", FaultKind::LeftProcessesBehind),
    ] {
        let mut a = start(mode, "");
        let pgid = a.process_group().unwrap();
        a.call("c", "fine", &json!({})).unwrap();
        let report = a.shutdown();
        let kinds: Vec<FaultKind> = report.problems.iter().map(|p| p.kind).collect();
        assert!(kinds.contains(&kind), "{mode}: {report:?}");
        assert_group_gone(pgid);
    }
}

fn a_hung_adapter_that_ignores_sigterm_is_killed_within_the_grace() {
    let mut a = start("ignore-term", "bad");
    let pgid = a.process_group().unwrap();
    let started = std::time::Instant::now();
    let fault = a.call("c", "bad", &json!({})).unwrap_err();
    assert_eq!(fault.kind, FaultKind::Timeout);
    assert_group_gone(pgid);
    // Call timeout plus term grace plus reaping; far below "forever".
    assert!(started.elapsed() < Duration::from_secs(10));
}

fn handshake_failures_name_the_cause() {
    let rows: &[(&str, &str, &str)] = &[
        ("hang", "hello", "did not answer hello"),
        ("no-newline", "hello", "no newline"),
        ("crash", "hello", "exited with code 3"),
        ("good", "", "wrong major"),
    ];
    for (mode, at, words) in rows {
        let mut c = config(mode, at);
        c.hello_timeout = Duration::from_millis(4_000);
        let fault = Adapter::start(c, |_: &Value| Err("wrong major".to_string()))
            .err()
            .unwrap_or_else(|| panic!("{mode}: the handshake must fail"));
        assert_eq!(fault.kind, FaultKind::Handshake, "{mode}: {fault}");
        assert!(fault.message.contains(words), "{mode}: {}", fault.message);
        assert!(
            fault.message.contains("stderr"),
            "{mode}: {}",
            fault.message
        );
    }
}

fn the_restart_cap_stops_restarting() {
    let mut a = start("crash", "bad");
    for i in 0..3 {
        let f = a.call(&format!("c{i}"), "bad", &json!({})).unwrap_err();
        assert_eq!(f.kind, FaultKind::Crashed);
    }
    let f = a.call("c4", "bad", &json!({})).unwrap_err();
    assert_eq!(f.kind, FaultKind::Crashed, "the third restart still runs");
    let f = a.call("c5", "bad", &json!({})).unwrap_err();
    assert_eq!(f.kind, FaultKind::RestartCap, "{f}");
}

/// A test of the runner: it needs python3, and process groups (unix).
fn adapter_test(name: &str, body: fn()) -> Trial {
    if cfg!(unix) {
        needs(Tool::Python3, name, move |_| body())
    } else {
        skipped(name, "skip-not-unix", "process groups are a unix feature")
    }
}

fn main() -> std::process::ExitCode {
    use loom_test_support::run;
    run(vec![
        adapter_test(
            "a_good_adapter_answers_and_ends_on_end_of_input",
            a_good_adapter_answers_and_ends_on_end_of_input,
        ),
        adapter_test(
            "every_fault_is_the_faulty_request_s_and_the_group_is_ended",
            every_fault_is_the_faulty_request_s_and_the_group_is_ended,
        ),
        adapter_test(
            "a_crash_quotes_only_the_crashed_process_s_stderr",
            a_crash_quotes_only_the_crashed_process_s_stderr,
        ),
        adapter_test(
            "a_second_answer_is_blamed_on_its_own_request_not_the_next",
            a_second_answer_is_blamed_on_its_own_request_not_the_next,
        ),
        adapter_test(
            "shutdown_ends_an_adapter_that_ignores_end_of_input_or_leaves_a_child",
            shutdown_ends_an_adapter_that_ignores_end_of_input_or_leaves_a_child,
        ),
        adapter_test(
            "a_hung_adapter_that_ignores_sigterm_is_killed_within_the_grace",
            a_hung_adapter_that_ignores_sigterm_is_killed_within_the_grace,
        ),
        adapter_test(
            "handshake_failures_name_the_cause",
            handshake_failures_name_the_cause,
        ),
        adapter_test(
            "the_restart_cap_stops_restarting",
            the_restart_cap_stops_restarting,
        ),
    ])
}
