//! Shrinking a failing seed: cut faults, lossy links, skewed clocks, executions and
//! workers one at a time while a rule the original broke still breaks.

use serde_json::{json, Value};

use crate::config::SimConfig;
use crate::outcome::SimOutcome;
use crate::run::replay;
use crate::schedule::worker_name;

/// Most runs shrinking a failure may take.
pub const SHRINK_RUNS_MAX: usize = 80;

/// Shrinks a failing outcome's schedule: drops faults one at a time, then executions,
/// then workers, keeping each cut while a rule the original broke still breaks.
/// Returns the smallest schedule found (the original when nothing could go) and the
/// number of runs it took.
pub fn shrink(failing: &SimOutcome, config: &SimConfig) -> (Value, usize) {
    shrink_with(failing, config, SHRINK_RUNS_MAX, &mut |_| {})
}

/// [`shrink`] in at most `runs_max` runs, calling `progress` with the number of runs
/// taken after each (for a progress line).
pub fn shrink_with(
    failing: &SimOutcome,
    config: &SimConfig,
    runs_max: usize,
    progress: &mut dyn FnMut(usize),
) -> (Value, usize) {
    let rules: std::collections::BTreeSet<&str> =
        failing.violations.iter().map(|v| v.rule.as_str()).collect();
    let mut best = failing.schedule.clone();
    let mut runs = 0;
    let mut still_fails = |candidate: &Value, runs: &mut usize| -> bool {
        *runs += 1;
        let fails = replay(candidate, config)
            .map(|o| o.violations.iter().any(|v| rules.contains(v.rule.as_str())))
            .unwrap_or(false);
        progress(*runs);
        fails
    };
    // Faults first: each one kept only if the failure needs it.
    let mut i = 0;
    while runs < runs_max {
        let Some(faults) = best["faults"].as_array().cloned() else {
            break;
        };
        if i >= faults.len() {
            break;
        }
        let mut candidate = best.clone();
        let mut fewer = faults;
        fewer.remove(i);
        candidate["faults"] = json!(fewer);
        if still_fails(&candidate, &mut runs) {
            best = candidate;
        } else {
            i += 1;
        }
    }
    // Then the lossy links and the skewed clocks, one at a time.
    for field in ["lossPerMille", "clockSkewMs"] {
        let hosts: Vec<String> = best[field]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for host in hosts {
            if runs >= runs_max {
                break;
            }
            let mut candidate = best.clone();
            if let Some(m) = candidate[field].as_object_mut() {
                m.remove(&host);
            }
            if still_fails(&candidate, &mut runs) {
                best = candidate;
            }
        }
    }
    // Then executions, from the last.
    let mut i = best["flows"].as_array().map_or(0, Vec::len);
    while i > 0 && runs < runs_max {
        i -= 1;
        let flows = best["flows"].as_array().cloned().unwrap_or_default();
        if flows.len() <= 1 {
            break;
        }
        let mut candidate = best.clone();
        let mut fewer = flows;
        fewer.remove(i);
        candidate["flows"] = json!(fewer);
        if still_fails(&candidate, &mut runs) {
            best = candidate;
        }
    }
    // Then workers, from the last (faults on a removed worker go with it).
    while runs < runs_max {
        let workers = best["workers"].as_u64().unwrap_or(1);
        if workers <= 1 {
            break;
        }
        let gone = worker_name(workers as usize - 1);
        let on_gone = |f: &Value| {
            f.get("cut")
                .and_then(Value::as_array)
                .is_some_and(|c| c.iter().any(|h| h.as_str() == Some(gone.as_str())))
        };
        let mut candidate = best.clone();
        candidate["workers"] = json!(workers - 1);
        for field in ["lossPerMille", "clockSkewMs"] {
            if let Some(m) = candidate[field].as_object_mut() {
                m.remove(&gone);
            }
        }
        let kept: Vec<Value> = best["faults"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|f| {
                f.get("bounce").and_then(Value::as_str) != Some(gone.as_str())
                    && f.get("partition").and_then(Value::as_str) != Some(gone.as_str())
                    && f.get("spike").and_then(Value::as_str) != Some(gone.as_str())
                    && !on_gone(f)
            })
            .collect();
        candidate["faults"] = json!(kept);
        if still_fails(&candidate, &mut runs) {
            best = candidate;
        } else {
            break;
        }
    }
    (best, runs)
}
