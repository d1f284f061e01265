//! `loom vectors fuzz` as a kernel implementer runs it: the campaign against the
//! reference adapter finds nothing (exit 0); against a Python kernel with a canonical
//! JSON bug it finds the bug (exit 1), names the rule and writes a vector file; that
//! file fails again under `loom vectors run --extra` and passes once the kernel is
//! fixed (the faithful variant of the same kernel).

use loom_report::Status;
use std::path::{Path, PathBuf};

mod common;
use common::{loom, scratch, show};

fn adapter() -> String {
    format!("{} kernel-adapter", env!("CARGO_BIN_EXE_loom"))
}

fn python_kernel(bug: &str) -> String {
    format!(
        "python3 {}/vectors/tests/kernels/digest_proxy.py --bug {bug} -- {}",
        env!("CARGO_MANIFEST_DIR"),
        adapter()
    )
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// `loom vectors run` of only the found vectors under `found` against `kernel`.
fn run_found(kernel: &str, found: &Path, out: &Path) -> std::process::Output {
    loom(&[
        "vectors",
        "run",
        "--kernel-cmd",
        kernel,
        "--extra",
        found.to_str().unwrap(),
        "--filter=-fuzz-",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ])
}

fn conf_01_fuzzing_the_reference_adapter_finds_nothing() {
    let out = scratch("reference");
    let o = loom(&[
        "vectors",
        "fuzz",
        "--kernel-cmd",
        &adapter(),
        "--cases",
        "160",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let report = std::fs::read_to_string(out.join("report.json")).expect("report.json");
    assert!(report.contains("\"fuzz\""), "{report}");
    assert!(files_under(&out.join("vectors")).is_empty());
}

/// Standard error is a pipe here, as in CI: progress is plain lines, never `\r` redraws.
fn progress_into_a_log_is_plain_lines() {
    let out = scratch("progress");
    let o = loom(&[
        "vectors",
        "fuzz",
        "--cases",
        "40",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !stderr.contains('\r'),
        "a carriage return in a log: {stderr:?}"
    );
    assert!(stderr.contains("fuzz: "), "no progress at all: {stderr:?}");
    // The first state and the last: a handful of lines, not one per case.
    let lines = stderr.lines().filter(|l| l.starts_with("fuzz: ")).count();
    assert!((1..=3).contains(&lines), "{lines} progress lines: {stderr}");
}

fn emit_04_a_kernel_sorting_keys_by_code_point_is_found_written_and_replayed() {
    let out = scratch("code-point");
    let buggy = python_kernel("code-point");
    let o = loom(&[
        "vectors",
        "fuzz",
        "--kernel-cmd",
        &buggy,
        "--check",
        "digest",
        "--cases",
        "3000",
        "--seed",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("[EMIT-04]"), "{}", show(&o));
    let found = out.join("vectors");
    let files = files_under(&found);
    assert_eq!(files.len(), 1, "{files:?}");
    let replay = |kernel: &str, dir: &str| run_found(kernel, &found, &out.join(dir));
    let again = replay(&buggy, "replay-buggy");
    assert_eq!(again.status.code(), Some(1), "{}", show(&again));
    let fixed = replay(&python_kernel("none"), "replay-fixed");
    assert_eq!(fixed.status.code(), Some(0), "{}", show(&fixed));
}

/// `loom check --kernel-cmd`'s fuzz part writes each finding as a vector into the run
/// folder, prints the `loom vectors run --extra` command and puts it on the failing
/// results; that command fails again against the buggy kernel and passes once it is fixed.
fn conf_01_check_fuzz_part_writes_each_finding_as_a_vector_that_fails_again() {
    let out = scratch("check-fuzz");
    let buggy = python_kernel("code-point");
    let o = loom(&[
        "check",
        "--kernel-cmd",
        &buggy,
        "--only",
        "fuzz",
        "--fuzz-cases",
        "600",
        "--seed",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let found = out.join("vectors");
    let files = files_under(&found);
    assert_eq!(files.len(), 1, "{files:?}\n{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("loom vectors run --kernel-cmd"),
        "{}",
        show(&o)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let failing: Vec<&serde_json::Value> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "fail")
        .collect();
    assert!(!failing.is_empty());
    for r in &failing {
        let again = r["reproduce"].as_str().unwrap_or("");
        assert!(
            again.contains("--extra") && again.contains(found.to_str().unwrap()),
            "{r:#}"
        );
    }
    let replay = |kernel: &str, dir: &str| run_found(kernel, &found, &out.join(dir));
    let again = replay(&buggy, "replay-buggy");
    assert_eq!(again.status.code(), Some(1), "{}", show(&again));
    let fixed = replay(&python_kernel("none"), "replay-fixed");
    assert_eq!(fixed.status.code(), Some(0), "{}", show(&fixed));
}

/// `--fail-fast` stops the campaign at its first finding, as in `vectors run` and
/// `conform`: the checks that had not run to their budget are skips saying why (never a
/// pass, never the error of a check that sent nothing) and the run is partial. Without
/// it every check runs its budget.
fn conf_01_fuzz_fail_fast_stops_at_the_first_finding_and_says_what_did_not_run() {
    let out = scratch("fail-fast");
    let buggy = python_kernel("code-point");
    let run = |dir: &str, stop: &[&str]| {
        let mut args = vec![
            "vectors",
            "fuzz",
            "--kernel-cmd",
            &buggy,
            "--cases-per-check",
            "400",
            "--seed",
            "1",
            "--quiet",
            "--out",
        ];
        let dir = out.join(dir);
        let dir = dir.to_str().unwrap().to_owned();
        args.push(&dir);
        args.extend(stop);
        let o = loom(&args);
        let r = loom_report::Report::load(Path::new(&dir).join("report.json"))
            .unwrap_or_else(|e| panic!("{e}: {}", show(&o)));
        (o, r)
    };
    let (o, r) = run("stopped", &["--fail-fast"]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let fuzz: Vec<_> = r.results.iter().filter(|x| x.area == "fuzz").collect();
    let failed: Vec<_> = fuzz.iter().filter(|x| x.status == Status::Fail).collect();
    assert_eq!(failed.len(), 1, "{fuzz:#?}");
    assert!(
        failed[0].rules.iter().any(|x| x == "EMIT-04"),
        "{:?}",
        failed[0]
    );
    let not_run: Vec<_> = fuzz
        .iter()
        .filter(|x| x.status == Status::SkipUntestable)
        .collect();
    assert!(!not_run.is_empty(), "{fuzz:#?}");
    for x in &not_run {
        let m = x.message.as_deref().unwrap_or("");
        assert!(
            m.contains("not run: the run stopped after 1 failure"),
            "{m}"
        );
    }
    assert!(fuzz.iter().all(|x| x.status != Status::Error), "{fuzz:#?}");
    let partial = r.partial_sentences().join("\n");
    assert!(partial.contains("stopped after 1 failure"), "{partial}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("stopped early"));
    // Without it, the other checks run their budget and pass.
    let (o, r) = run("whole", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let fuzz: Vec<_> = r.results.iter().filter(|x| x.area == "fuzz").collect();
    assert!(
        fuzz.iter()
            .all(|x| matches!(x.status, Status::Fail | Status::Pass)),
        "{fuzz:#?}"
    );
    assert!(fuzz.iter().filter(|x| x.status == Status::Pass).count() >= not_run.len());
    // --max-fail N is the same limit, and both at once is a usage error.
    let both = loom(&["vectors", "fuzz", "--fail-fast", "--max-fail", "2"]);
    assert_eq!(both.status.code(), Some(2), "{}", show(&both));
}

/// An adapter that crashes under the campaign is reported as `vectors run` reports it:
/// one finding for the check that crashed it, naming the adapter's own stderr, the
/// input that crashed it written as a vector with the command to run it again; the
/// crash is not shrunk, so the adapter's restarts are not used up and every other
/// check runs its budget (before, shrinking used them up and every check reported
/// "adapter broke … wrote nothing on stderr").
fn conf_01_a_crash_under_fuzz_names_its_stderr_and_writes_the_crashing_input() {
    let out = scratch("crash");
    let crashing = format!(
        "python3 {}/tests/adapters/hostile.py crash-on-ingress 0 -- {}",
        env!("CARGO_MANIFEST_DIR"),
        adapter()
    );
    let o = loom(&[
        "vectors",
        "fuzz",
        "--kernel-cmd",
        &crashing,
        "--cases-per-check",
        "100",
        "--seed",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let r = loom_report::Report::load(out.join("report.json")).unwrap();
    let fuzz: Vec<_> = r.results.iter().filter(|x| x.area == "fuzz").collect();
    let bad: Vec<_> = fuzz.iter().filter(|x| x.status != Status::Pass).collect();
    assert_eq!(bad.len(), 1, "{fuzz:#?}");
    assert_eq!(bad[0].suite, "ingress", "{:?}", bad[0]);
    let m = bad[0].message.as_deref().unwrap_or("");
    assert!(m.contains("hostile proxy crashing on ingress"), "{m}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("--extra"), "{stdout}");
    let files = files_under(&out.join("vectors"));
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        files[0].to_str().unwrap().contains("/ingress/"),
        "{files:?}"
    );
    // The written input crashes it again under `vectors run`, and the reference passes it.
    let replay = |kernel: &str, dir: &str| {
        loom(&[
            "vectors",
            "run",
            "--kernel-cmd",
            kernel,
            "--extra",
            out.join("vectors").to_str().unwrap(),
            "--filter=-fuzz-",
            "--quiet",
            "--out",
            out.join(dir).to_str().unwrap(),
        ])
    };
    let again = replay(&crashing, "again");
    assert_eq!(again.status.code(), Some(1), "{}", show(&again));
    let fixed = replay(&adapter(), "fixed");
    assert_eq!(fixed.status.code(), Some(0), "{}", show(&fixed));
}

/// A kernel that does not start or answer `hello` gets a report, as under `vectors
/// run`: one error result naming the cause, exit 1.
fn conf_01_a_failed_handshake_under_fuzz_writes_a_report() {
    let out = scratch("handshake");
    let o = loom(&[
        "vectors",
        "fuzz",
        "--kernel-cmd",
        "true",
        "--cases",
        "10",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let r = loom_report::Report::load(out.join("report.json"))
        .unwrap_or_else(|e| panic!("{e}: {}", show(&o)));
    assert_eq!(r.results.len(), 1, "{:#?}", r.results);
    assert_eq!(r.results[0].status, Status::Error);
    assert_eq!(r.results[0].case_id, "adapter/handshake");
    assert!(!r.results[0].message.as_deref().unwrap_or("").is_empty());
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, test, Tool};
    run(vec![
        test(
            "conf_01_fuzzing_the_reference_adapter_finds_nothing",
            conf_01_fuzzing_the_reference_adapter_finds_nothing,
        ),
        test(
            "progress_into_a_log_is_plain_lines",
            progress_into_a_log_is_plain_lines,
        ),
        test(
            "conf_01_a_failed_handshake_under_fuzz_writes_a_report",
            conf_01_a_failed_handshake_under_fuzz_writes_a_report,
        ),
        needs(
            Tool::Python3,
            "conf_01_a_crash_under_fuzz_names_its_stderr_and_writes_the_crashing_input",
            |_| conf_01_a_crash_under_fuzz_names_its_stderr_and_writes_the_crashing_input(),
        ),
        needs(
            Tool::Python3,
            "conf_01_fuzz_fail_fast_stops_at_the_first_finding_and_says_what_did_not_run",
            |_| conf_01_fuzz_fail_fast_stops_at_the_first_finding_and_says_what_did_not_run(),
        ),
        needs(
            Tool::Python3,
            "conf_01_check_fuzz_part_writes_each_finding_as_a_vector_that_fails_again",
            |_| conf_01_check_fuzz_part_writes_each_finding_as_a_vector_that_fails_again(),
        ),
        needs(
            Tool::Python3,
            "emit_04_a_kernel_sorting_keys_by_code_point_is_found_written_and_replayed",
            |_| emit_04_a_kernel_sorting_keys_by_code_point_is_found_written_and_replayed(),
        ),
    ])
}
