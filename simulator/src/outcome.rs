//! What one seed produced, the files a failing seed leaves, its trace digest and the
//! determinism result comparing two runs of it (CONF-05).

use std::path::{Path, PathBuf};

use loom_report::CaseResult;
use serde_json::{json, Value};

use crate::stats::SimStats;
use crate::world::Violation;

/// What one seed produced.
#[derive(Debug, Clone)]
pub struct SimOutcome {
    /// The seed.
    pub seed: u64,
    /// Ordered store operations and results, one JSON object per line.
    pub trace: Vec<String>,
    /// Broken invariants.
    pub violations: Vec<Violation>,
    /// One result per invariant (area `sim`).
    pub results: Vec<CaseResult>,
    /// The drawn setup and fault schedule, as JSON.
    pub schedule: Value,
    /// The final event logs, by execution id.
    pub logs: Vec<(String, Vec<Value>)>,
    /// What the faults did: evidence that a passing seed exercised something.
    pub stats: SimStats,
    /// The effect ledger: every real effect invocation, one JSON object each.
    pub ledger: Vec<Value>,
    /// Vectors (docs/vectors.md) made of the failures that are fold disagreements of
    /// the kernel (SNAP-01 in the final-log check, as `normalize` vectors); written
    /// under `vectors/<kind>/<id>.json`.
    pub vectors: Vec<Value>,
    /// Why the seed could not run (its store did not open), if it could not.
    pub error: Option<String>,
}

/// Writes a failing seed's files under `dir/seed-<seed>/`: the seed, the drawn setup
/// and fault schedule, the violations, the trace and every final event log.
pub fn write_artifacts(dir: &Path, outcome: &SimOutcome) -> std::io::Result<PathBuf> {
    let base = dir.join(format!("seed-{}", outcome.seed));
    std::fs::create_dir_all(base.join("logs"))?;
    std::fs::write(base.join("seed.txt"), format!("{}\n", outcome.seed))?;
    std::fs::write(
        base.join("schedule.json"),
        serde_json::to_string_pretty(&outcome.schedule).unwrap_or_default(),
    )?;
    let violations: Vec<String> = outcome
        .violations
        .iter()
        .map(|v| {
            json!({ "rule": v.rule, "message": v.message, "executionId": v.execution_id, "eventIndex": v.event_index })
                .to_string()
        })
        .collect();
    std::fs::write(base.join("violations.jsonl"), violations.join("\n") + "\n")?;
    std::fs::write(base.join("trace.jsonl"), outcome.trace.join("\n") + "\n")?;
    let ledger: Vec<String> = outcome.ledger.iter().map(Value::to_string).collect();
    std::fs::write(base.join("ledger.jsonl"), ledger.join("\n") + "\n")?;
    for v in &outcome.vectors {
        let kind = v["kind"].as_str().unwrap_or("fold");
        let id = v["id"].as_str().unwrap_or("vector");
        let dir = base.join("vectors").join(kind);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join(format!("{id}.json")),
            serde_json::to_string_pretty(v).unwrap_or_default() + "\n",
        )?;
    }
    for (id, log) in &outcome.logs {
        let lines: Vec<String> = log.iter().map(Value::to_string).collect();
        std::fs::write(
            base.join("logs").join(format!("{id}.jsonl")),
            lines.join("\n") + "\n",
        )?;
    }
    Ok(base)
}

/// A digest of a run: FNV-1a 64 over every trace line and every final log, as hex.
/// Two runs of a seed must give the same digest (CONF-05).
pub fn trace_digest(outcome: &SimOutcome) -> String {
    let mut parts: Vec<String> = outcome.trace.clone();
    for (id, log) in &outcome.logs {
        parts.push(id.clone());
        parts.extend(log.iter().map(Value::to_string));
    }
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    format!("{:016x}", crate::workload::fnv(&refs))
}

/// CONF-05 for one seed: `first` and `second` are two runs of it. Passes when their
/// digests match; otherwise fails naming the first differing trace line (or log).
pub fn determinism_result(first: &SimOutcome, second: &SimOutcome) -> CaseResult {
    let seed = first.seed;
    let case = format!("seed-{seed}/CONF-05");
    let (a, b) = (trace_digest(first), trace_digest(second));
    if a == b {
        return CaseResult::pass("sim", "determinism", case, ["CONF-05"]);
    }
    let n = first.trace.len().max(second.trace.len());
    let differ = (0..n).find(|&i| first.trace.get(i) != second.trace.get(i));
    let message = match differ {
        Some(i) => format!(
            "seed {seed} ran twice with different traces (digest {a} vs {b}); first difference at trace line {}: `{}` vs `{}`",
            i + 1,
            first.trace.get(i).map_or("(none)", String::as_str),
            second.trace.get(i).map_or("(none)", String::as_str)
        ),
        None => format!(
            "seed {seed} ran twice with the same trace but different final logs (digest {a} vs {b})"
        ),
    };
    let failure = loom_report::Failure::values(json!(a), json!(b));
    let failure = match differ {
        Some(i) => failure.with_event_index(i as u64),
        None => failure,
    };
    CaseResult::fail("sim", "determinism", case, ["CONF-05"], message, failure)
}
