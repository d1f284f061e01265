//! Replays every committed seed, crash artifact and named regression through the same
//! property functions the fuzz targets call. Not capped by time: every file runs.

use loom_props::replay::{committed_inputs, expected_failure, replay, EXPECTED_FAILURES};
use std::path::Path;

#[test]
fn spi_23_snap_01_ingress_15_emit_06_every_committed_corpus_and_regression_replays() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let inputs = committed_inputs(&root);
    assert!(
        !inputs.is_empty(),
        "no committed inputs found under fuzz/corpus, fuzz/artifacts or props/regressions"
    );
    let mut failures = Vec::new();
    for input in &inputs {
        let result = replay(input);
        match (result, expected_failure(input)) {
            (Ok(()), None) | (Err(_), Some(_)) => {}
            (Err(v), None) => failures.push(format!("{}: {v}", input.path.display())),
            (Ok(()), Some(why)) => failures.push(format!(
                "{}: passes now but is listed as an expected failure ({why}); remove it from EXPECTED_FAILURES",
                input.path.display()
            )),
        }
    }
    for (target, name, _) in EXPECTED_FAILURES {
        assert!(
            inputs.iter().any(|i| i.target.name() == *target
                && i.path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy() == *name)),
            "expected failure {target}/{name} has no file"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} inputs failed:\n{}",
        failures.len(),
        inputs.len(),
        failures.join("\n\n")
    );
}
