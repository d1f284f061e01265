//! `loom vectors fuzz` as a kernel implementer runs it: the campaign against the
//! reference adapter finds nothing (exit 0); against a Python kernel with a canonical
//! JSON bug it finds the bug (exit 1), names the rule and writes a vector file; that
//! file fails again under `loom vectors run --extra` and passes once the kernel is
//! fixed (the faithful variant of the same kernel).

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
    let replay = |kernel: &str, dir: &str| {
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
            out.join(dir).to_str().unwrap(),
        ])
    };
    let again = replay(&buggy, "replay-buggy");
    assert_eq!(again.status.code(), Some(1), "{}", show(&again));
    let fixed = replay(&python_kernel("none"), "replay-fixed");
    assert_eq!(fixed.status.code(), Some(0), "{}", show(&fixed));
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
        needs(
            Tool::Python3,
            "emit_04_a_kernel_sorting_keys_by_code_point_is_found_written_and_replayed",
            |_| emit_04_a_kernel_sorting_keys_by_code_point_is_found_written_and_replayed(),
        ),
    ])
}
