//! The runner against a small echo adapter that misbehaves on request: every fault is
//! reported on the right request with the right kind, and no process of the adapter's
//! group is alive afterwards.

#![cfg(unix)]

use loom_process::{live_group_members, live_groups, Adapter, AdapterConfig, FaultKind};
use serde_json::{json, Value};
use std::time::Duration;

fn python() -> Option<&'static str> {
    let ok = std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Some("python3")
    } else {
        require_or_skip("python3 is not installed");
        None
    }
}

/// A missing tool is a skip locally and a failure where `LOOM_REQUIRE_TOOLS=1` (CI).
fn require_or_skip(why: &str) {
    if std::env::var("LOOM_REQUIRE_TOOLS").as_deref() == Ok("1") {
        panic!("{why}, and LOOM_REQUIRE_TOOLS=1 forbids skipping");
    }
    eprintln!("skipped: {why}");
}

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

#[test]
fn a_good_adapter_answers_and_ends_on_end_of_input() {
    let Some(_) = python() else { return };
    let mut a = start("good", "");
    let pgid = a.process_group().unwrap();
    let answer = a.call("case-1", "ping", &json!({"x": 1})).unwrap();
    assert_eq!(answer["result"]["params"], json!({"x": 1}));
    let raw = a
        .call_with_params_text("case-1", "raw", r#"{"b":1,"a":1E2}"#)
        .unwrap();
    assert_eq!(raw["result"]["params"], json!({"b": 1, "a": 100.0}));
    let report = a.shutdown();
    assert!(
        report.blames.is_empty() && report.problems.is_empty(),
        "{report:?}"
    );
    assert_group_gone(pgid);
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

#[test]
fn every_fault_is_the_faulty_request_s_and_the_group_is_ended() {
    let Some(_) = python() else { return };
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

#[test]
fn a_crash_quotes_only_the_crashed_process_s_stderr() {
    let Some(_) = python() else { return };
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

#[test]
fn a_second_answer_is_blamed_on_its_own_request_not_the_next() {
    let Some(_) = python() else { return };
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

#[test]
fn shutdown_ends_an_adapter_that_ignores_end_of_input_or_leaves_a_child() {
    let Some(_) = python() else { return };
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

#[test]
fn a_hung_adapter_that_ignores_sigterm_is_killed_within_the_grace() {
    let Some(_) = python() else { return };
    let mut a = start("ignore-term", "bad");
    let pgid = a.process_group().unwrap();
    let started = std::time::Instant::now();
    let fault = a.call("c", "bad", &json!({})).unwrap_err();
    assert_eq!(fault.kind, FaultKind::Timeout);
    assert_group_gone(pgid);
    // Call timeout plus term grace plus reaping; far below "forever".
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn handshake_failures_name_the_cause() {
    let Some(_) = python() else { return };
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

#[test]
fn the_restart_cap_stops_restarting() {
    let Some(_) = python() else { return };
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
