//! The stdio kernel protocol end to end: the whole set through the reference adapter,
//! every wrong kernel caught by rule id, and a crashing, hanging or lying adapter
//! reported as error/timeout (never a hang, never a silent pass). The Python adapter's
//! test needs `python3`; without it that test is reported as skipped.

use loom_report::{CaseResult, Status};
use loom_vectors::runner::run_set;
use loom_vectors::set::{default_cases_dir, load_set};
use loom_vectors::wrong::Bug;
use loom_vectors::{KernelProcess, KernelProcessConfig, Vector};
use std::collections::BTreeSet;

fn vectors() -> Vec<Vector> {
    load_set(&default_cases_dir())
        .expect("the set loads")
        .vectors
}

fn run(command: String, vectors: &[Vector], timeout_ms: u64) -> Vec<CaseResult> {
    let mut config = KernelProcessConfig::new(command);
    config.call_timeout_ms = timeout_ms;
    let mut p = KernelProcess::start(config).expect("adapter starts");
    run_set(&mut p, vectors, &mut |_| {}).expect("hello").1
}

fn wrong(bug: &str) -> String {
    format!("{} --bug {bug}", env!("CARGO_BIN_EXE_wrong-kernel"))
}

fn whole_set_passes_through_the_reference_adapter() {
    let vs = vectors();
    let started = std::time::Instant::now();
    let results = run(
        env!("CARGO_BIN_EXE_reference-kernel-adapter").to_owned(),
        &vs,
        10_000,
    );
    let bad: Vec<_> = results
        .iter()
        .filter(|r| r.status != Status::Pass)
        .collect();
    assert!(
        bad.is_empty(),
        "{} not passing, first: {:?}",
        bad.len(),
        bad.first()
    );
    eprintln!(
        "{} vectors through the protocol in {:?}",
        vs.len(),
        started.elapsed()
    );
}

/// A sample of the wrong kernels, one per method they change, over the protocol: the
/// full catalogue runs in-process in `tests/judging.rs`, through the same method table.
const OVER_THE_WIRE: [Bug; 6] = [
    Bug::KeysByCodePoint,
    Bug::StepFailedFailsExecution,
    Bug::RestoreTailOffByOne,
    Bug::GateBeforeIdentity,
    Bug::MeteredNegativeZeroRefused,
    Bug::FiredAtIsClock,
];

fn sampled_wrong_kernels_fail_the_vectors_of_their_rules_over_stdio() {
    let vs = vectors();
    for bug in OVER_THE_WIRE {
        let wanted: Vec<Vector> = vs
            .iter()
            .filter(|v| bug.kinds().contains(&v.kind.as_str()))
            .cloned()
            .collect();
        let results = run(wrong(bug.as_str()), &wanted, 10_000);
        let failed: Vec<&CaseResult> = results
            .iter()
            .filter(|r| r.status != Status::Pass)
            .collect();
        for r in &failed {
            assert_eq!(
                r.status,
                Status::Fail,
                "{}: {} should fail, not {}: {:?}",
                bug.as_str(),
                r.case_id,
                r.status,
                r.message
            );
            assert!(
                bug.kinds().contains(&r.suite.as_str()),
                "{}: unexpected failure of {} ({})",
                bug.as_str(),
                r.case_id,
                r.suite
            );
        }
        let rules: BTreeSet<&str> = failed
            .iter()
            .flat_map(|r| r.rules.iter().map(String::as_str))
            .collect();
        for rule in bug.must_fail_rules() {
            assert!(
                rules.contains(rule),
                "{}: no failing vector proves {rule}; failed rules: {rules:?}",
                bug.as_str()
            );
        }
        eprintln!(
            "{}: {} vectors fail; rules {:?}",
            bug.as_str(),
            failed.len(),
            rules
        );
    }
}

fn pick(vs: &[Vector], kind: &str, n: usize) -> Vec<Vector> {
    vs.iter()
        .filter(|v| v.kind.as_str() == kind)
        .take(n)
        .cloned()
        .collect()
}

fn a_crashing_adapter_is_an_error_and_is_restarted() {
    let vs = vectors();
    let mut set = pick(&vs, "ingress", 2);
    set.extend(pick(&vs, "fold", 2));
    set.extend(pick(&vs, "ingress", 1));
    let results = run(wrong("crash-on-ingress"), &set, 10_000);
    let statuses: Vec<Status> = results.iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        [
            Status::Error,
            Status::Error,
            Status::Pass,
            Status::Pass,
            Status::Error,
            // adapter/hello-abi (ABI-05), judged after the vectors
            Status::Pass
        ]
    );
    assert!(
        results[0]
            .message
            .as_deref()
            .unwrap_or("")
            .contains("exited"),
        "{:?}",
        results[0].message
    );
}

fn a_hanging_adapter_times_out_and_the_run_goes_on() {
    let vs = vectors();
    let mut set = pick(&vs, "digest", 1);
    set.extend(pick(&vs, "fold", 1));
    let results = run(wrong("hang-on-digest"), &set, 300);
    assert_eq!(results[0].status, Status::Timeout, "{:?}", results[0]);
    assert_eq!(results[1].status, Status::Pass, "{:?}", results[1]);
}

fn garbage_and_wrong_ids_are_errors() {
    let vs = vectors();
    let set = pick(&vs, "emit", 1);
    let r = run(wrong("garbage-on-emit"), &set, 10_000);
    assert_eq!(r[0].status, Status::Error);
    assert!(
        r[0].message.as_deref().unwrap_or("").contains("not JSON"),
        "{:?}",
        r[0].message
    );
    let set = pick(&vs, "normalize", 1);
    let r = run(wrong("wrong-id-on-normalize"), &set, 10_000);
    assert_eq!(r[0].status, Status::Error);
    assert!(
        r[0].message
            .as_deref()
            .unwrap_or("")
            .contains("answered id -1, which was never asked"),
        "{:?}",
        r[0].message
    );
}

fn an_adapter_that_claims_only_digest_skips_the_rest() {
    let vs = vectors();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/minimal_kernel.py");
    let results = run(format!("python3 {script}"), &vs, 10_000);
    for r in &results {
        if r.suite == "digest" {
            assert!(
                matches!(r.status, Status::Pass | Status::Error | Status::Fail),
                "{r:?}"
            );
        } else {
            assert_eq!(r.status, Status::SkipNotClaimed, "{r:?}");
        }
    }
    let fnv = results
        .iter()
        .filter(|r| r.case_id.starts_with("digest-fnv1a64"))
        .collect::<Vec<_>>();
    assert!(
        !fnv.is_empty() && fnv.iter().all(|r| r.status == Status::Pass),
        "{fnv:?}"
    );
}

// ---------------------------------------------------------------------------------
// ABI-05: the hello carries the syscall list next to the ABI version.

/// The reference adapter's hello, as a process sends it.
fn reference_hello_line() -> String {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_reference-kernel-adapter"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the adapter starts");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"id":1,"method":"hello","params":{{"protocolVersion":1}}}}"#
    )
    .unwrap();
    drop(stdin);
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    child.wait().unwrap();
    line.trim_end().to_owned()
}

fn abi_05_the_hello_golden_message_carries_the_syscalls_next_to_the_abi_version() {
    use loom_kernel::versions::{effective_syscalls, KERNEL_ABI_VERSION};
    let line = reference_hello_line();
    let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
    let hello = &answer["result"];
    assert_eq!(hello["kernelAbiVersion"], KERNEL_ABI_VERSION);
    assert_eq!(
        hello["syscalls"],
        serde_json::json!(effective_syscalls(&Default::default()))
    );
    // The documented transcript is this golden message, byte for byte.
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/protocols/kernel.md"
    ))
    .unwrap();
    let documented = doc
        .lines()
        .find(|l| l.starts_with("< {\"id\":1,"))
        .expect("the transcript's hello answer");
    assert_eq!(documented, format!("< {line}"));
}

fn abi_05_the_client_judges_the_hello_against_the_manifest() {
    use loom_vectors::client::{check_hello_abi, HelloAbi};
    use loom_vectors::runner::{hello_abi_result, Claims, HELLO_ABI_CASE};
    use serde_json::json;
    let base = |v: serde_json::Value, s: serde_json::Value| {
        json!({"name": "k", "version": "1", "protocolVersion": 1, "kinds": ["fold", "runtime"],
               "kernelAbiVersion": v, "syscalls": s})
    };
    let ten = json!([
        "execute",
        "run",
        "decide",
        "parallel",
        "suspend",
        "sleep",
        "sleepUntil",
        "emit",
        "stream",
        "ui"
    ]);
    let with = |extra: &[&str]| {
        let mut v = ten.as_array().unwrap().clone();
        v.extend(extra.iter().map(|s| json!(s)));
        serde_json::Value::Array(v)
    };
    // Consistent: the base ten at 1.0.0 and at 1.3.0; Wave 2 syscalls at 1.3.0 (ABI-06:
    // a flag-gated syscall may be absent); a syscall unknown to the manifest from a
    // newer minor (adding one is a MINOR change, ABI-07).
    for (v, s) in [
        (json!("1.0.0"), ten.clone()),
        (json!("1.3.0"), ten.clone()),
        (json!("1.3.0"), with(&["select", "receive"])),
        (json!("1.4.0"), with(&["continueAsNew", "teleport"])),
    ] {
        let hello = base(v.clone(), s.clone());
        assert!(
            matches!(check_hello_abi(&hello), HelloAbi::Consistent { .. }),
            "{v} {s}: {:?}",
            check_hello_abi(&hello)
        );
        let r = hello_abi_result(&Claims::from_hello(hello));
        assert_eq!(r.status, Status::Pass, "{r:?}");
        assert_eq!(
            (r.case_id.as_str(), r.rules.as_slice()),
            (HELLO_ABI_CASE, &["ABI-05".to_owned()][..])
        );
    }
    // Mismatches: each an `error` naming ABI-05 and what disagrees.
    let mut only_version = base(json!("1.3.0"), ten.clone());
    only_version.as_object_mut().unwrap().remove("syscalls");
    let mut only_list = base(json!("1.3.0"), ten.clone());
    only_list
        .as_object_mut()
        .unwrap()
        .remove("kernelAbiVersion");
    let no_suspend = {
        let mut v = ten.as_array().unwrap().clone();
        v.retain(|s| s != "suspend");
        serde_json::Value::Array(v)
    };
    for (hello, words) in [
        (only_version, "no syscalls list"),
        (only_list, "no kernelAbiVersion"),
        (base(json!(13), ten.clone()), "not a string"),
        (base(json!("1.3"), ten.clone()), "MAJOR.MINOR.PATCH"),
        (base(json!("2.0.0"), ten.clone()), "another major"),
        (base(json!("1.3.0"), json!("execute,run")), "not an array"),
        (base(json!("1.3.0"), with(&["run"])), "`run` twice"),
        (
            base(json!("1.2.0"), with(&["select"])),
            "`select` came with KERNEL_ABI 1.3.0",
        ),
        (
            base(json!("1.3.0"), with(&["teleport"])),
            "`teleport` is not a syscall",
        ),
        (base(json!("1.3.0"), no_suspend), "lacks them"),
    ] {
        match check_hello_abi(&hello) {
            HelloAbi::Mismatch(why) => assert!(why.contains(words), "{words}: {why}"),
            other => panic!("{words}: {other:?}"),
        }
        let r = hello_abi_result(&Claims::from_hello(hello));
        assert_eq!(r.status, Status::Error, "{words}: {r:?}");
        let m = r.message.unwrap_or_default();
        assert!(m.contains("ABI-05") && m.contains(words), "{m}");
    }
    // Absent: a failure for a kernel that runs flows, a skip for one that does not.
    let bare =
        json!({"name": "k", "version": "1", "protocolVersion": 1, "kinds": ["fold", "runtime"]});
    assert_eq!(check_hello_abi(&bare), HelloAbi::Absent);
    assert_eq!(
        hello_abi_result(&Claims::from_hello(bare)).status,
        Status::Fail
    );
    let fold_only = json!({"name": "k", "version": "1", "protocolVersion": 1, "kinds": ["fold"]});
    assert_eq!(
        hello_abi_result(&Claims::from_hello(fold_only)).status,
        Status::SkipNotClaimed
    );
}

fn abi_05_every_vectors_run_reports_the_hello_abi_once() {
    let vs = pick(&vectors(), "digest", 2);
    let results = run(
        env!("CARGO_BIN_EXE_reference-kernel-adapter").to_owned(),
        &vs,
        10_000,
    );
    assert_eq!(results.len(), vs.len() + 1);
    let last = results.last().unwrap();
    assert_eq!(last.case_id, loom_vectors::runner::HELLO_ABI_CASE);
    assert_eq!(last.status, Status::Pass, "{last:?}");
    // A wrong kernel whose hello drops the list is caught through the protocol.
    let results = run(wrong("hello-without-syscalls"), &vs, 10_000);
    let last = results.last().unwrap();
    assert_eq!(last.status, Status::Error, "{last:?}");
    assert!(last.message.as_deref().unwrap_or("").contains("ABI-05"));
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, test, Tool};
    run(vec![
        test(
            "whole_set_passes_through_the_reference_adapter",
            whole_set_passes_through_the_reference_adapter,
        ),
        test(
            "sampled_wrong_kernels_fail_the_vectors_of_their_rules_over_stdio",
            sampled_wrong_kernels_fail_the_vectors_of_their_rules_over_stdio,
        ),
        test(
            "a_crashing_adapter_is_an_error_and_is_restarted",
            a_crashing_adapter_is_an_error_and_is_restarted,
        ),
        test(
            "a_hanging_adapter_times_out_and_the_run_goes_on",
            a_hanging_adapter_times_out_and_the_run_goes_on,
        ),
        test(
            "garbage_and_wrong_ids_are_errors",
            garbage_and_wrong_ids_are_errors,
        ),
        needs(
            Tool::Python3,
            "an_adapter_that_claims_only_digest_skips_the_rest",
            |_| an_adapter_that_claims_only_digest_skips_the_rest(),
        ),
        test(
            "abi_05_the_hello_golden_message_carries_the_syscalls_next_to_the_abi_version",
            abi_05_the_hello_golden_message_carries_the_syscalls_next_to_the_abi_version,
        ),
        test(
            "abi_05_the_client_judges_the_hello_against_the_manifest",
            abi_05_the_client_judges_the_hello_against_the_manifest,
        ),
        test(
            "abi_05_every_vectors_run_reports_the_hello_abi_once",
            abi_05_every_vectors_run_reports_the_hello_abi_once,
        ),
    ])
}
