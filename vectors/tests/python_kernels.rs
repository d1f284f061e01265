//! Kernels written in another language: the Python minimal kernel
//! (`vectors/examples/minimal_kernel.py`) passes every vector of the kind it claims, and
//! a Python kernel whose own canonical JSON has one realistic bug
//! (`tests/kernels/digest_proxy.py`) fails the vectors of the rule it breaks. These
//! kernels read each request with their own JSON parser, which keeps the key order and
//! the number spellings of the raw text, so the raw-wire vectors (`rawInput`) are what
//! catches the insertion-order bug: a request serialized from a canonical file arrives
//! sorted already. Every test needs `python3`; without it the tests are reported as
//! skipped.

use loom_report::{CaseResult, Status};
use loom_vectors::runner::run_set;
use loom_vectors::set::{default_cases_dir, load_set};
use loom_vectors::{KernelProcess, KernelProcessConfig, Vector};
use std::collections::BTreeSet;

fn vectors() -> Vec<Vector> {
    load_set(&default_cases_dir())
        .expect("the set loads")
        .vectors
}

fn run(command: String, vectors: &[Vector]) -> Vec<CaseResult> {
    let mut p = KernelProcess::start(KernelProcessConfig::new(command)).expect("adapter starts");
    run_set(&mut p, vectors, &mut |_| {}).expect("hello").1
}

fn proxy(bug: &str) -> String {
    format!(
        "python3 {}/tests/kernels/digest_proxy.py --bug {bug} -- {}",
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_BIN_EXE_reference-kernel-adapter")
    )
}

fn conf_01_the_python_minimal_kernel_passes_every_digest_vector() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/minimal_kernel.py");
    let results = run(format!("python3 {script}"), &vectors());
    let mut digests = 0;
    for r in &results {
        if r.suite == "digest" {
            digests += 1;
            assert_eq!(r.status, Status::Pass, "{r:?}");
        } else {
            assert_eq!(r.status, Status::SkipNotClaimed, "{r:?}");
        }
    }
    assert!(digests > 0);
}

fn conf_01_the_faithful_python_proxy_passes_everything() {
    let results = run(proxy("none"), &vectors());
    let bad: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.status != Status::Pass)
        .collect();
    assert!(
        bad.is_empty(),
        "{} not passing, first {:?}",
        bad.len(),
        bad.first()
    );
}

fn every_python_canonical_json_bug_fails_with_its_rule() {
    let digests: Vec<Vector> = vectors()
        .into_iter()
        .filter(|v| v.kind.as_str() == "digest")
        .collect();
    let mut problems = Vec::new();
    for (bug, rule) in [
        ("insertion-order", "EMIT-04"),
        ("code-point", "EMIT-04"),
        ("python-floats", "GAP-03"),
        ("exact-integers", "GAP-03"),
        ("ensure-ascii", "GAP-03"),
    ] {
        let results = run(proxy(bug), &digests);
        let failed: Vec<&CaseResult> = results
            .iter()
            .filter(|r| r.status != Status::Pass)
            .collect();
        for r in &failed {
            if r.status != Status::Fail {
                problems.push(format!(
                    "{bug}: {} is {}: {:?}",
                    r.case_id, r.status, r.message
                ));
            }
        }
        let rules: BTreeSet<&str> = failed
            .iter()
            .flat_map(|r| r.rules.iter().map(String::as_str))
            .collect();
        if !rules.contains(rule) {
            problems.push(format!(
                "{bug}: no failing vector proves {rule}; failed: {rules:?}"
            ));
        }
        // ASCII keys out of order reach the kernel only as raw text.
        if bug == "insertion-order"
            && !failed
                .iter()
                .any(|r| r.case_id == "digest-wire-canonical-unsorted-keys")
        {
            problems.push(format!(
                "{bug}: the raw unsorted-keys vector does not catch it"
            ));
        }
        eprintln!(
            "{bug:<16} {} digest vectors fail; rules {rules:?}",
            failed.len()
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, Tool};
    run(vec![
        needs(
            Tool::Python3,
            "conf_01_the_python_minimal_kernel_passes_every_digest_vector",
            |_| conf_01_the_python_minimal_kernel_passes_every_digest_vector(),
        ),
        needs(
            Tool::Python3,
            "conf_01_the_faithful_python_proxy_passes_everything",
            |_| conf_01_the_faithful_python_proxy_passes_everything(),
        ),
        needs(
            Tool::Python3,
            "every_python_canonical_json_bug_fails_with_its_rule",
            |_| every_python_canonical_json_bug_fails_with_its_rule(),
        ),
    ])
}
