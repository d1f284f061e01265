//! Shared fixtures for the loom-report integration tests.
#![allow(dead_code)]

use loom_report::{CaseResult, Environment, Failure, Report, RuleInfo};
use serde_json::json;

/// A fixed environment (no clock, no processes) so digests are reproducible.
pub fn env(seed: u64) -> Environment {
    let mut e = Environment::new("loom", "0.1.0");
    e.os = "linux-x86_64".to_string();
    e.seed = Some(seed);
    e.kit_version = Some("kits-1".to_string());
    e.implementation_hello = Some(json!({"name": "reference", "version": "0.1.0"}));
    e
}

pub fn rules() -> Vec<RuleInfo> {
    let fold9 = RuleInfo::new(
        "FOLD-09",
        "MUST",
        "FOLD",
        "STEP_FAILED does not fail the execution",
    );
    vec![
        fold9,
        RuleInfo::new("FOLD-01", "MUST", "FOLD", "events fold in sequence order"),
        RuleInfo::new(
            "SNAP-02",
            "MUST",
            "SNAP",
            "fold(snapshot, tail) == fold(events)",
        ),
        RuleInfo::new("SPI-03", "SHOULD", "SPI", "fences reject stale writers"),
        RuleInfo::new("GATE-01", "MAY", "GATE", "gates may refuse"),
    ]
}

/// A report with one result of every status.
pub fn sample_results() -> Vec<CaseResult> {
    vec![
        CaseResult::pass("vectors", "fold", "fold-001", ["FOLD-01"]).with_duration_ms(3),
        CaseResult::fail(
            "vectors",
            "fold",
            "fold-009",
            ["FOLD-09"],
            "state differs",
            Failure::values(
                json!({"status": "running", "variables": {"_decisions": {"a": {"seq": 1}}}}),
                json!({"status": "failed", "variables": {"_decisions": {"a": {"seq": 2}}}}),
            )
            .with_event_index(4),
        ),
        CaseResult::skip_not_claimed("kits", "event-store", "fence-1", ["SPI-03"], "not claimed"),
        CaseResult::skip_untestable("kits", "event-store", "fence-2", ["SPI-03"], "no clock"),
        CaseResult::xfail("kits", "snapshot-store", "snap-1", ["SNAP-02"], "issue 12"),
        CaseResult::error("sim", "deploy", "seed-7", ["SNAP-02"], "adapter crashed"),
        CaseResult::timeout(
            "sim",
            "deploy",
            "seed-8",
            Vec::<String>::new(),
            "hung for 30s",
        ),
    ]
}

pub fn sample_report() -> Report {
    Report::new(env(7), rules(), sample_results())
}

/// A report where every result passes.
pub fn green_report(area: &str, seed: u64, n: usize) -> Report {
    let results = (0..n)
        .map(|i| CaseResult::pass(area, "suite", format!("case-{i}"), ["FOLD-01"]))
        .collect();
    Report::new(env(seed), rules(), results)
}
