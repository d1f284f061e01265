//! The end-of-run invariants and their report results.

/// How often the final check reads an execution's log before the read is an error (an
/// adapter killed at the end starts again on the next call).
pub const FINAL_READ_ATTEMPTS: usize = 3;

/// The final log of `exec`, read through the harness's connection; `Err` when every
/// attempt failed (an error of the read, never an empty log).
pub fn final_read(
    world: &crate::world::World,
    exec: &str,
) -> Result<Vec<loom_kernel::EventEnvelope>, loom_kernel::spi::StoreError> {
    let mut last = None;
    for _ in 0..FINAL_READ_ATTEMPTS {
        match loom_kernel::runtime::block_on(world.events().read(exec)) {
            Ok(log) => return Ok(log),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| loom_kernel::spi::StoreError::backend("no read was made")))
}

use std::collections::BTreeMap;
use std::sync::Arc;

use loom_kernel::runtime::{block_on, RunOutcome, Runtime, RuntimeConfig};
use loom_kernel::snapshot::restore;
use loom_kernel::spi::{EventStore, ManualClock};
use loom_kernel::{fold, EventEnvelope, SnapshotRecord};
use loom_report::{CaseResult, Failure};
use loom_stores::memory::{MemoryEventStore, MemoryTimerStore};
use loom_vectors::generate::{found_vector, Scenario as FoundScenario};
use loom_vectors::Kind;
use serde_json::{json, Value};

use crate::config::PlantedBug;
use crate::workload::{resume_for, CountingEffect, Scenario, GATE_PREFIX, TOOL};
use crate::world::{LedgerEntry, Violation};

/// Every invariant the simulator checks, one report result each per seed.
pub const RULES: [&str; 13] = [
    "SPI-23",
    "PLACE-02",
    "PLACE-05",
    "REPLAY-01",
    "REPLAY-02",
    "REPLAY-09",
    "TYPED-09",
    "EMIT-01",
    "SNAP-01",
    "INGRESS-03",
    "INGRESS-15",
    "PLACE-04",
    "REPLAY-10",
];

/// Most runs the crash-free reference takes for one execution (each gate or timer
/// costs one); a generated flow needs far fewer.
const REFERENCE_RUNS_MAX: usize = 64;

/// The invariants checked on the final logs.
#[cfg(test)]
pub fn final_checks(
    scenarios: &[Scenario],
    logs: &[(String, Vec<EventEnvelope>)],
) -> Vec<Violation> {
    final_checks_with(scenarios, logs, None)
}

/// The start of a SNAP-01 message from the final-log check: a fold disagreement of the
/// kernel itself, which `fold_vector` turns into a vector.
pub const SNAP_01_FINAL_LOG: &str = "snapshot at ";

/// The kernel's restore, or the planted [`PlantedBug::RestoreTailOffByOne`]'s: a
/// kernel that folds the snapshot's own event again (the vectors' bug of that name).
fn restore_as(
    bug: Option<PlantedBug>,
    record: &SnapshotRecord,
    log: &[EventEnvelope],
) -> Option<Value> {
    let state = if bug == Some(PlantedBug::RestoreTailOffByOne) {
        let state = loom_kernel::normalize_snapshot_state(record).ok()?;
        let tail = log
            .iter()
            .filter(|e| e.sequence >= record.sequence)
            .cloned();
        loom_kernel::fold::fold_owned(state, tail)
    } else {
        restore(record, log).ok()?
    };
    serde_json::to_value(state).ok()
}

/// An execution id as a vector id part: a successor's `~` (`exec-4~1`) is not a
/// vector id character, so it reads `exec-4.1`.
fn vector_id_part(exec: &str) -> String {
    exec.replace('~', ".")
}

/// A `normalize` vector (docs/vectors.md) for a log whose SNAP-01 check failed at
/// `k`: the current snapshot of the log's first `k + 1` events, restored with the whole
/// log as its tail (as the simulator restores it; only events after the snapshot's
/// sequence may be folded, GAP-15), must give the full fold. The expected answers are
/// the reference kernel's; a kernel with the disagreement fails the vector.
pub fn snapshot_vector(seed: u64, exec: &str, log: &[EventEnvelope], k: u64) -> Value {
    let prefix: Vec<EventEnvelope> = log.iter().filter(|e| e.sequence <= k).cloned().collect();
    let record = SnapshotRecord::capture(&fold(&prefix), k);
    let normalized = loom_kernel::normalize_snapshot_state(&record)
        .ok()
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(Value::Null);
    let full = serde_json::to_value(fold(log)).unwrap_or(Value::Null);
    let tail: Vec<Value> = log.iter().map(EventEnvelope::to_value).collect();
    let mut scenario = FoundScenario::new(
        Kind::Normalize,
        format!("normalize-sim-seed-{seed}-{}-k{k}", vector_id_part(exec)),
        &["SNAP-01", "GAP-15"],
        format!("Found by the deploy simulator (seed {seed}, {exec}): the snapshot at sequence {k}, restored with the whole log as its tail, must fold only the events after it and give the full fold."),
        json!({ "snapshot": record, "tail": tail }),
    )
    .rests_on(&["GAP-15"]);
    scenario.full_log = Some(tail);
    let expected = json!({ "normalized": normalized, "restored": full, "equalsFullFold": true });
    found(scenario, expected)
}

/// A found vector as its file's JSON, its basis measured against the other readings
/// ([`loom_vectors::generate::found_vector`]). A vector whose basis cannot be measured
/// is still kept, as JSON the loader refuses with the reason (never silently dropped).
fn found(scenario: FoundScenario, expected: Value) -> Value {
    let id = scenario.id.clone();
    match found_vector(scenario, expected) {
        Ok(v) => serde_json::to_value(v).unwrap_or(Value::Null),
        Err(e) => {
            json!({ "id": id, "error": format!("the basis of this vector could not be measured: {e}") })
        }
    }
}

/// An `ingress` vector (docs/vectors.md) for a resume the simulated runtime admitted:
/// the log the client read, the request on the `resume` path, and the reference gate's
/// answer. `None` when the reference admits it too (no disagreement to keep).
pub fn ingress_vector(
    seed: u64,
    exec: &str,
    n: usize,
    log: &[EventEnvelope],
    request: &loom_kernel::ingress::ResumeRequest,
) -> Option<Value> {
    let state = fold(log);
    let gate = loom_kernel::ingress::GateConfig::default();
    let refusal = loom_kernel::ingress::admit(
        exec,
        &state,
        log,
        loom_kernel::ingress::ResumePath::Resume,
        request,
        &gate,
    )
    .err()?;
    let mut req = json!({ "eventType": request.event_type, "payload": request.payload });
    if let Some(m) = &request.metadata {
        req["metadata"] = json!(m);
    }
    let scenario = FoundScenario::new(
        Kind::Ingress,
        format!("ingress-sim-seed-{seed}-{}-{n}", vector_id_part(exec)),
        &["INGRESS-03"],
        format!("Found by the deploy simulator (seed {seed}, {exec}): a `{}` resume the simulated runtime admitted; the gate must refuse it on this log.", request.event_type),
        json!({
            "log": log.iter().map(EventEnvelope::to_value).collect::<Vec<_>>(),
            "path": "resume",
            "request": req,
            "flow": {},
        }),
    )
    .spec();
    let expected = json!({
        "outcome": "refused",
        "error": refusal.name(),
        "reason": refusal.reason().map(|r| r.as_str()),
    });
    Some(found(scenario, expected))
}

/// [`final_checks`] with the kernel's restore replaced by a planted bug's, if any.
pub fn final_checks_with(
    scenarios: &[Scenario],
    logs: &[(String, Vec<EventEnvelope>)],
    bug: Option<PlantedBug>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for (exec, log) in logs {
        let scenario = scenarios.iter().find(|s| &s.execution_id == exec);
        let reference = scenario.and_then(|s| reference_log(s, scenarios));
        let v = |rule: &str, message: String, idx: Option<u64>| Violation {
            rule: rule.into(),
            message,
            execution_id: Some(exec.clone()),
            event_index: idx,
        };
        // SPI-23 at the end too: the final read is 0..n without gaps.
        if let Some((i, e)) = log
            .iter()
            .enumerate()
            .find(|(i, e)| e.sequence != *i as u64)
        {
            out.push(v(
                "SPI-23",
                format!("event {i} has sequence {}", e.sequence),
                Some(i as u64),
            ));
        }
        // EMIT-01: stamped copies of a flow emit are never more than the crash-free
        // run emits of that content: once, unless the flow emits identical content on
        // purpose (both copies then share a digest and are both stamped).
        let mut stamped: BTreeMap<&str, u64> = BTreeMap::new();
        for e in log {
            if let Some(d) = e.flow_emit() {
                let n = stamped.entry(d).or_default();
                *n += 1;
                let same =
                    |r: &EventEnvelope| r.event_type == e.event_type && r.payload == e.payload;
                let bound = reference
                    .as_ref()
                    .map_or(1, |r| r.iter().filter(|r| same(r)).count() as u64)
                    .max(1);
                if *n == bound + 1 {
                    out.push(v(
                        "EMIT-01",
                        format!(
                            "flow emit digest {d} is stamped {} times; the crash-free run emits that content {bound} time(s)",
                            *n
                        ),
                        Some(e.sequence),
                    ));
                }
            }
        }
        // SNAP-01: a snapshot at every k plus the tail folds to the full fold.
        let full = serde_json::to_value(fold(log)).unwrap_or(Value::Null);
        for k in 0..log.len() {
            let record = SnapshotRecord::capture(&fold(&log[..=k]), log[k].sequence);
            let restored = restore_as(bug, &record, log).unwrap_or(Value::Null);
            if restored != full {
                out.push(v(
                    "SNAP-01",
                    format!("{SNAP_01_FINAL_LOG}{k} plus tail differs from the full fold"),
                    Some(k as u64),
                ));
                break;
            }
        }
        // Liveness (PLACE-04, REPLAY-10): after the fault-free phase every execution
        // has ended; a timed park still waiting means its timer never fired.
        let state = fold(log);
        if !state.status.is_terminal() {
            let timed = state
                .suspended_on()
                .is_some_and(|p| p.get("wakeAt").is_some());
            let rule = if timed { "REPLAY-10" } else { "PLACE-04" };
            out.push(v(
                rule,
                format!(
                    "{NOT_FINISHED}: status {}, parked on {}",
                    json!(state.status.as_str()),
                    json!(state.suspended_on().and_then(|p| p.get("on")).cloned())
                ),
                log.last().map(|e| e.sequence),
            ));
            continue;
        }
        // PLACE-04: the result equals the crash-free run's, modulo at-least-once
        // artefacts (re-run steps, recovery facts, re-appended unstamped emits).
        if scenario.is_some() {
            match &reference {
                Some(reference) => {
                    let (want, got) = (summary(reference), summary(log));
                    if want != got {
                        out.push(Violation {
                            rule: "PLACE-04".into(),
                            message: format!("final result differs from the crash-free run: want {want}, got {got}"),
                            execution_id: Some(exec.clone()),
                            event_index: None,
                        });
                    }
                    if let Some(missing) = missing_emit(reference, log) {
                        out.push(v(
                            "EMIT-01",
                            format!("the crash-free run's emit {missing} is missing"),
                            None,
                        ));
                    }
                }
                None => out.push(v(
                    "PLACE-04",
                    "the crash-free reference run did not finish".into(),
                    None,
                )),
            }
        }
    }
    out
}

/// How a liveness finding (PLACE-04, REPLAY-10) of an execution that never ended
/// begins; `run` adds the lease the store still held on it, when that lease outlived
/// the run.
pub const NOT_FINISHED: &str = "the execution did not finish after the liveness phase";

/// What PLACE-04 compares: status, completion output (which carries every value the
/// flow read), each step's first output, each decision, each gate's stored answer and
/// the branch each `if` took (its emits). Timestamps, retries, untyped failures (re-run
/// on every replay), recovery facts and in-doubt verdicts are left out on purpose: they
/// are at-least-once artefacts.
fn summary(log: &[EventEnvelope]) -> Value {
    let state = fold(log);
    let mut steps = BTreeMap::new();
    let mut decisions = BTreeMap::new();
    let mut answers = BTreeMap::new();
    let mut branches = std::collections::BTreeSet::new();
    let mut output = Value::Null;
    for e in log {
        let p = &e.payload;
        match e.event_type.as_str() {
            "STEP_COMPLETED" => {
                if let Some(id) = p.get("stepId").and_then(Value::as_str) {
                    steps
                        .entry(id.to_owned())
                        .or_insert_with(|| p.get("output").cloned());
                }
            }
            "DECISION_RECORDED" => {
                // In-doubt verdicts (`__loom_verdict:`) are in-doubt facts: a crash
                // before the effect skips the in-doubt attempt, so a run may have none.
                // What a verdict settles is compared as the step's output.
                if let Some(id) = p
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.starts_with("__loom_"))
                {
                    decisions
                        .entry(id.to_owned())
                        .or_insert_with(|| p.get("choice").cloned());
                }
            }
            "EXECUTION_COMPLETED" => output = p.get("output").cloned().unwrap_or(Value::Null),
            "app.note" => {
                branches.insert(p.to_string());
            }
            t if t.starts_with(GATE_PREFIX) => {
                answers.entry(t.to_owned()).or_insert_with(|| p.clone());
            }
            _ => {}
        }
    }
    json!({
        "status": serde_json::to_value(state.status).unwrap_or(Value::Null),
        "output": output,
        "steps": steps,
        "decisions": decisions,
        "answers": answers,
        "branches": branches,
    })
}

/// SPI-23 across store restarts: every event the store acknowledged is in the final
/// log at its sequence, the same envelope.
pub fn acknowledged_survive(
    acked: &BTreeMap<(String, u64), Value>,
    logs: &[(String, Vec<EventEnvelope>)],
) -> Vec<Violation> {
    let mut out = Vec::new();
    for (exec, log) in logs {
        let lost = acked
            .range((exec.clone(), 0)..=(exec.clone(), u64::MAX))
            .find(|((_, seq), envelope)| {
                log.get(*seq as usize)
                    .is_none_or(|e| e.sequence != *seq || &e.to_value() != *envelope)
            });
        if let Some(((_, seq), envelope)) = lost {
            out.push(Violation {
                rule: "SPI-23".into(),
                message: format!(
                    "the store acknowledged `{}` at sequence {seq}; the final log does not hold that envelope there (an acknowledged append was lost)",
                    envelope["type"].as_str().or(envelope["eventType"].as_str()).unwrap_or("?")
                ),
                execution_id: Some(exec.clone()),
                event_index: Some(*seq),
            });
        }
    }
    out
}

/// REPLAY-02 against the effect ledger: every recorded step output is a value the
/// step's effect really returned (a store cannot invent or alter a completion), or the
/// output of an in-doubt verdict recorded for that step (`__loom_verdict:<step>#n`,
/// outcome `completed`). REPLAY-09: every real invocation of a step has an attempt
/// number of its own (a recovered run continues the count, n+1; a runtime that started
/// again from 1, or ran one attempt twice, shows here).
pub fn ledger_backs_every_output(
    ledger: &[LedgerEntry],
    logs: &[(String, Vec<EventEnvelope>)],
) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut attempts: BTreeMap<(&str, &str, u64), u64> = BTreeMap::new();
    for l in ledger {
        let n = attempts
            .entry((l.execution_id.as_str(), l.step_id.as_str(), l.attempt))
            .or_default();
        *n += 1;
        if *n == 2 {
            out.push(Violation {
                rule: "REPLAY-09".into(),
                message: format!(
                    "step `{}` was invoked twice as attempt {} (at {} ms the second time)",
                    l.step_id, l.attempt, l.t_ms
                ),
                execution_id: Some(l.execution_id.clone()),
                event_index: None,
            });
        }
    }
    for (exec, log) in logs {
        let verdict_backs = |step: &str, output: Option<&Value>| {
            let prefix = format!("__loom_verdict:{step}#");
            log.iter().any(|d| {
                d.event_type == "DECISION_RECORDED"
                    && d.payload["id"]
                        .as_str()
                        .is_some_and(|id| id.starts_with(&prefix))
                    && d.payload["choice"]["outcome"] == "completed"
                    && Some(&d.payload["choice"]["output"]) == output
            })
        };
        let unbacked = log.iter().find(|e| {
            let step = e.payload.get("stepId").and_then(Value::as_str);
            e.event_type == "STEP_COMPLETED"
                && !ledger.iter().any(|l| {
                    &l.execution_id == exec
                        && l.outcome == "value"
                        && Some(l.step_id.as_str()) == step
                        && Some(&l.output) == e.payload.get("output")
                })
                && !verdict_backs(step.unwrap_or(""), e.payload.get("output"))
        });
        if let Some(e) = unbacked {
            out.push(Violation {
                rule: "REPLAY-02".into(),
                message: format!(
                    "STEP_COMPLETED records output {} that no invocation of the step returned",
                    e.payload.get("output").cloned().unwrap_or(Value::Null)
                ),
                execution_id: Some(exec.clone()),
                event_index: Some(e.sequence),
            });
        }
    }
    out
}

/// What the stored-snapshot check found.
pub struct StoredSnapshots {
    /// Snapshots whose restore differs from the full fold beyond the allowances.
    pub violations: Vec<Violation>,
    /// Snapshots written by a worker folding at an older minor.
    pub old_writers: u64,
    /// Of those, the ones holding `input` on a settled frame (SNAP-11's stray input).
    pub stray_inputs: u64,
}

/// Removes `seq` from every `_decisions` entry in `v`: SNAP-06 and SNAP-07 allow a
/// snapshot chain that passed through a pre-1.24 node to lack it.
fn strip_decision_seq(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == loom_kernel::fold::keys::DECISIONS {
                    if let Some(entries) = x.as_object_mut() {
                        for e in entries.values_mut() {
                            if let Some(e) = e.as_object_mut() {
                                e.remove("seq");
                            }
                        }
                    }
                } else {
                    strip_decision_seq(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_decision_seq),
        _ => {}
    }
}

/// SNAP-01 over every snapshot the runtimes stored during the run, in a fleet whose
/// workers may fold at older minors: the snapshot, normalized, plus the tail of the
/// final log folds to the full fold of the final log. The spec's documented
/// differences are allowed and nothing else: `_decisions[*].seq` when a pre-1.24 node
/// ran (SNAP-06, SNAP-07), the shapes `documented_exception` names for the writer's
/// minor (SNAP-04, decision 0003, SNAP-11's retry on a settled frame). SNAP-11's stray
/// `input` on settled frames is removed by normalization (SNAP-10), so it must not
/// show; old writers' snapshots that hold one are counted (the window was reached).
pub fn stored_snapshots(
    saved: &[(String, SnapshotRecord, String)],
    logs: &[(String, Vec<EventEnvelope>)],
    pre_1_24: bool,
) -> StoredSnapshots {
    let mut out = StoredSnapshots {
        violations: Vec::new(),
        old_writers: 0,
        stray_inputs: 0,
    };
    for (exec, record, host) in saved {
        let Some((_, log)) = logs.iter().find(|(id, _)| id == exec) else {
            continue;
        };
        let Ok(writer) = loom_kernel::FoldVersion::parse(&record.schema_version) else {
            out.violations.push(Violation {
                rule: "SNAP-01".into(),
                message: format!(
                    "{host} stored a snapshot labelled `{}`, not a schema this fold knows",
                    record.schema_version
                ),
                execution_id: Some(exec.clone()),
                event_index: Some(record.sequence),
            });
            continue;
        };
        if writer != loom_kernel::FoldVersion::CURRENT {
            out.old_writers += 1;
            let stray = record.state["frames"].as_object().is_some_and(|frames| {
                frames.values().any(|f| {
                    f.get("input").is_some()
                        && matches!(
                            f.get("status").and_then(Value::as_str),
                            Some("completed" | "failed" | "cancelled")
                        )
                })
            });
            if stray {
                out.stray_inputs += 1;
            }
            if loom_kernel::snapshot::documented_exception(writer, log).is_some() {
                continue;
            }
        }
        let restored = restore(record, log)
            .ok()
            .and_then(|s| serde_json::to_value(s).ok());
        let mut full = serde_json::to_value(fold(log)).unwrap_or(Value::Null);
        let Some(mut restored) = restored else {
            out.violations.push(Violation {
                rule: "SNAP-01".into(),
                message: format!(
                    "the {writer} snapshot {host} stored at sequence {} does not restore",
                    record.sequence
                ),
                execution_id: Some(exec.clone()),
                event_index: Some(record.sequence),
            });
            continue;
        };
        if pre_1_24 {
            strip_decision_seq(&mut restored);
            strip_decision_seq(&mut full);
        }
        if restored != full {
            out.violations.push(Violation {
                rule: "SNAP-01".into(),
                message: format!(
                    "the {writer} snapshot {host} stored at sequence {} plus the tail differs from the full fold{}",
                    record.sequence,
                    if pre_1_24 { " beyond SNAP-06/07's decision seq" } else { "" }
                ),
                execution_id: Some(exec.clone()),
                event_index: Some(record.sequence),
            });
        }
    }
    out
}

/// EMIT-01's containment half: every emit of the crash-free run is in the final log,
/// and at least as often as the crash-free run stamped it. Copies the crash-free run
/// appended unstamped are at-least-once artefacts of its own re-runs (every resume
/// re-runs the flow, and after an untyped failure or an in-doubt park emits are
/// appended again, unstamped), and how many re-runs there are depends on when inputs
/// arrive: a message delivered before its `receive` parks saves a re-run the
/// reference had. So for those only presence is required. Returns the first missing.
fn missing_emit(reference: &[EventEnvelope], log: &[EventEnvelope]) -> Option<String> {
    let count = |l: &[EventEnvelope], stamped_only: bool| {
        let mut m: BTreeMap<String, u64> = BTreeMap::new();
        for e in l.iter().filter(|e| e.event_type == "app.note") {
            let n = m.entry(e.payload.to_string()).or_default();
            if !stamped_only || e.flow_emit().is_some() {
                *n += 1;
            }
        }
        m
    };
    let (want, got) = (count(reference, true), count(log, false));
    want.into_iter()
        .find(|(k, n)| got.get(k).copied().unwrap_or(0) < (*n).max(1))
        .map(|(k, _)| k)
}

/// The crash-free run of a scenario on in-memory stores: answers every gate the way
/// the simulated client does and fires every timer. A successor's (`<exec>~<n>`) is the
/// crash-free run of its chain from the first execution, read at the successor.
fn reference_log(s: &Scenario, scenarios: &[Scenario]) -> Option<Vec<EventEnvelope>> {
    let store = Arc::new(MemoryEventStore::new());
    let clock = Arc::new(ManualClock::new(crate::clock::EPOCH_MS));
    let config = RuntimeConfig {
        fencing: true,
        features: crate::workload::sim_features(),
        ..RuntimeConfig::default()
    };
    let mut rt = Runtime::new(store.clone(), clock.clone(), config)
        .with_timers(Arc::new(MemoryTimerStore::new()));
    rt.register_flow_json(&s.flow).ok()?;
    rt.register_effect(TOOL, CountingEffect);
    let flow_id = s.flow["flowId"].as_str()?;
    // The chain's first execution: the scenario itself, or the one it continues.
    let mut first = s;
    while let Some(prev) = &first.continues {
        first = scenarios.iter().find(|p| &p.execution_id == prev)?;
    }
    let input = first.input.clone();
    let mut cur = first.execution_id.clone();
    let mut outcome = block_on(rt.start(&cur, flow_id, input)).ok()?;
    for _ in 0..REFERENCE_RUNS_MAX {
        if let RunOutcome::Continued { to } = &outcome {
            // The run went on into a successor; it may have parked there.
            cur = to.clone();
            let state = fold(&block_on(store.read(&cur)).ok()?);
            match state.suspended_on().and_then(|p| p.get("on")?.as_str()) {
                Some(gate) => {
                    outcome = RunOutcome::Parked {
                        gate: gate.to_owned(),
                    }
                }
                None => break,
            }
        }
        let RunOutcome::Parked { gate } = outcome else {
            break;
        };
        let log = block_on(store.read(&cur)).ok()?;
        let wake = fold(&log)
            .suspended_on()
            .and_then(|p| p.get("wakeAt").and_then(Value::as_i64));
        let park = fold(&log).suspended_on().cloned().unwrap_or_default();
        if let Some(topic) = crate::workload::wait_topic(&fold(&log)) {
            // A receive / select park: the client delivers the message.
            let (id, body) = crate::workload::message(&cur, &topic);
            let d = block_on(rt.deliver(&cur, &topic, &id, body));
            outcome = match d.ok()? {
                loom_kernel::runtime::Delivery::Resumed { outcome, .. } => outcome,
                _ => return None,
            };
            continue;
        }
        outcome = match wake {
            Some(w) => {
                clock.set(w);
                let fired = block_on(rt.fire_timers(w)).ok()?;
                fired.into_iter().find(|(id, _)| id == &cur)?.1.ok()?
            }
            None => {
                debug_assert_eq!(park.get("on").and_then(Value::as_str), Some(gate.as_str()));
                block_on(rt.resume(&cur, resume_for(&cur, &park, &log))).ok()?
            }
        };
    }
    block_on(store.read(&s.execution_id)).ok()
}

fn failure_of(v: &Violation) -> Failure {
    let f = Failure::values(json!(null), json!(v.message));
    match v.event_index {
        Some(i) => f.with_event_index(i),
        None => f,
    }
}

/// One result per rule in [`RULES`] for `seed`: pass, or fail with the first
/// violation and the count.
pub fn results(seed: u64, violations: &[Violation]) -> Vec<CaseResult> {
    RULES
        .iter()
        .map(|rule| {
            let case = format!("seed-{seed}/{rule}");
            let hits: Vec<&Violation> = violations.iter().filter(|v| v.rule == *rule).collect();
            match hits.first() {
                None => CaseResult::pass("sim", "deploy", case, [*rule]),
                Some(first) => CaseResult::fail(
                    "sim",
                    "deploy",
                    case,
                    [*rule],
                    format!(
                        "seed {seed}: {} violation(s); first: {}{}",
                        hits.len(),
                        first
                            .execution_id
                            .as_deref()
                            .map(|e| format!("{e}: "))
                            .unwrap_or_default(),
                        first.message
                    ),
                    failure_of(first),
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// A scenario with a step and an emit, and its crash-free log.
    fn finished() -> (Scenario, Vec<EventEnvelope>) {
        let s = Scenario::new(
            "exec-0".into(),
            json!({ "flowId": "flow-0", "body": [
                { "op": "run", "stepId": "s0", "toolId": TOOL, "input": { "i": 0 } },
                { "op": "emit", "eventType": "app.note", "payload": { "i": 1 } },
                { "op": "complete", "output": { "done": 2 } }
            ]}),
            json!({ "n": 0 }),
        );
        let log = reference_log(&s, &[]).expect("the reference run finishes");
        (s, log)
    }

    fn rules(v: &[Violation]) -> Vec<&str> {
        v.iter().map(|v| v.rule.as_str()).collect()
    }

    #[test]
    fn place_04_snap_01_a_crash_free_log_passes_every_final_check() {
        let (s, log) = finished();
        let out = final_checks(&[s], &[("exec-0".into(), log)]);
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn emit_01_a_second_stamped_copy_is_a_violation() {
        let (s, mut log) = finished();
        let stamped = log
            .iter()
            .find(|e| e.flow_emit().is_some())
            .cloned()
            .expect("the emit is stamped");
        let mut copy = stamped;
        copy.sequence = log.len() as u64;
        copy.id = format!("exec-0:{}", copy.sequence);
        log.push(copy);
        let out = final_checks(&[s], &[("exec-0".into(), log)]);
        assert!(rules(&out).contains(&"EMIT-01"), "{out:?}");
    }

    /// Identical emits on purpose: the crash-free run stamps both copies with one
    /// digest (EMIT-01 allows as many stamped copies as the uninterrupted run emits),
    /// so two pass and a third stamped copy is a violation.
    #[test]
    fn emit_01_identical_emits_on_purpose_bound_the_stamped_copies() {
        let s = Scenario::new(
            "exec-0".into(),
            json!({ "flowId": "flow-0", "body": [
                { "op": "emit", "eventType": "app.note", "payload": { "i": 1 } },
                { "op": "emit", "eventType": "app.note", "payload": { "i": 1 } },
                { "op": "run", "stepId": "s0", "toolId": TOOL, "input": { "i": 0 } },
                { "op": "complete", "output": { "done": 3 } }
            ]}),
            json!({ "n": 0 }),
        );
        let mut log = reference_log(&s, &[]).expect("the reference run finishes");
        let stamped: Vec<&EventEnvelope> = log.iter().filter(|e| e.flow_emit().is_some()).collect();
        assert_eq!(stamped.len(), 2, "both copies are stamped");
        assert_eq!(
            stamped[0].flow_emit(),
            stamped[1].flow_emit(),
            "with one digest"
        );
        let ok = final_checks(std::slice::from_ref(&s), &[("exec-0".into(), log.clone())]);
        assert!(ok.is_empty(), "{ok:?}");
        let mut third = stamped[0].clone();
        let end = log.pop().expect("EXECUTION_COMPLETED");
        third.sequence = log.len() as u64;
        third.id = format!("exec-0:{}", third.sequence);
        log.push(third);
        let mut end = end;
        end.sequence = log.len() as u64;
        end.id = format!("exec-0:{}", end.sequence);
        log.push(end);
        let out = final_checks(&[s], &[("exec-0".into(), log)]);
        assert!(rules(&out).contains(&"EMIT-01"), "{out:?}");
    }

    fn entry(step: &str, attempt: u64, outcome: &'static str, output: Value) -> LedgerEntry {
        LedgerEntry {
            execution_id: "exec-0".into(),
            step_id: step.into(),
            tool_id: "t".into(),
            attempt,
            input: Value::Null,
            outcome,
            output,
            t_ms: 0,
        }
    }

    fn event(seq: u64, kind: &str, payload: Value) -> EventEnvelope {
        EventEnvelope {
            id: format!("exec-0:{seq}"),
            workflow_id: "flow-0".into(),
            execution_id: "exec-0".into(),
            event_type: kind.into(),
            sequence: seq,
            timestamp_ms: 0,
            payload: payload.into(),
            metadata: None,
        }
    }

    #[test]
    fn replay_09_an_attempt_invoked_twice_is_a_violation() {
        let fine = [
            entry("r", 1, "error", json!("e")),
            entry("r", 2, "value", json!(1)),
        ];
        assert!(ledger_backs_every_output(&fine, &[]).is_empty());
        let twice = [
            entry("r", 1, "error", json!("e")),
            entry("r", 1, "value", json!(1)),
        ];
        assert_eq!(
            rules(&ledger_backs_every_output(&twice, &[])),
            ["REPLAY-09"]
        );
    }

    #[test]
    fn replay_02_a_completion_is_backed_by_an_invocation_or_a_verdict() {
        let done = event(
            1,
            "STEP_COMPLETED",
            json!({ "stepId": "q", "output": { "i": 3 } }),
        );
        let verdict = event(
            0,
            "DECISION_RECORDED",
            json!({ "id": "__loom_verdict:q#1", "choice": { "stepId": "q", "attempt": 1, "outcome": "completed", "output": { "i": 3 } } }),
        );
        let doubt = [entry("q", 1, "indoubt", Value::Null)];
        let logs = [("exec-0".to_owned(), vec![verdict.clone(), done.clone()])];
        assert!(ledger_backs_every_output(&doubt, &logs).is_empty());
        let invoked = [entry("q", 1, "value", json!({ "i": 3 }))];
        let plain = [("exec-0".to_owned(), vec![done.clone()])];
        assert!(ledger_backs_every_output(&invoked, &plain).is_empty());
        // Neither an invocation returned it nor a verdict settled it: invented.
        assert_eq!(
            rules(&ledger_backs_every_output(&doubt, &plain)),
            ["REPLAY-02"]
        );
        // A failed invocation's output backs nothing.
        let failed = [entry("q", 1, "typed", json!({ "i": 3 }))];
        assert_eq!(
            rules(&ledger_backs_every_output(&failed, &plain)),
            ["REPLAY-02"]
        );
    }

    #[test]
    fn spi_23_a_gap_is_a_violation() {
        let (s, mut log) = finished();
        let last = log.len() - 1;
        log[last].sequence += 1;
        let out = final_checks(&[s], &[("exec-0".into(), log)]);
        assert!(rules(&out).contains(&"SPI-23"), "{out:?}");
    }

    #[test]
    fn place_04_an_unfinished_execution_is_a_violation() {
        let (s, log) = finished();
        let cut = log[..2].to_vec();
        let out = final_checks(&[s], &[("exec-0".into(), cut)]);
        assert!(rules(&out).contains(&"PLACE-04"), "{out:?}");
    }

    #[test]
    fn generated_flows_parse_and_finish_crash_free() {
        let mut rng = Rng::new(7);
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for i in 0..80 {
            let base = crate::workload::scenario(&mut rng, i);
            assert!(base.script.is_some(), "{}", base.flow);
            // The execution and the successors its continueAsNew chain starts: each
            // ends, and the chain is at most CONTINUATIONS_PER_CHAIN_MAX long.
            let chain = crate::workload::with_successors(std::slice::from_ref(&base));
            assert!(chain.len() as u64 <= 1 + crate::workload::CONTINUATIONS_PER_CHAIN_MAX);
            for s in &chain {
                let log = reference_log(s, &chain).expect("reference run");
                assert!(
                    fold(&log).status.is_terminal(),
                    "{} {}",
                    s.execution_id,
                    s.flow
                );
                assert!(final_checks(&chain, &[(s.execution_id.clone(), log.clone())]).is_empty());
                for e in &log {
                    let kind = match e.event_type.as_str() {
                        "STEP_RETRYING" => "retry",
                        "STEP_FAILED" if e.payload.get("channel").is_some() => "typed",
                        "STEP_FAILED" => "untyped",
                        "EFFECT_INDOUBT" => "indoubt",
                        "DECISION_RECORDED"
                            if e.payload["id"]
                                .as_str()
                                .is_some_and(|d| d.starts_with("__loom_verdict:")) =>
                        {
                            "verdict"
                        }
                        "STEP_COMPLETED"
                            if e.payload["stepId"]
                                .as_str()
                                .is_some_and(|d| d.starts_with('p')) =>
                        {
                            "parallel"
                        }
                        "app.note" if e.payload["branch"] == "twice" && e.flow_emit().is_some() => {
                            "twice"
                        }
                        "MESSAGE_CONSUMED" => "message",
                        "EXECUTION_CONTINUED" => "continued",
                        _ => continue,
                    };
                    *seen.entry(kind).or_default() += 1;
                }
            }
        }
        // Every workload kind is reached by the crash-free runs of generated flows.
        for kind in [
            "retry",
            "typed",
            "untyped",
            "indoubt",
            "verdict",
            "parallel",
            "twice",
            "message",
            "continued",
        ] {
            assert!(seen.get(kind).is_some_and(|n| *n > 0), "{kind}: {seen:?}");
        }
    }

    #[test]
    fn results_name_each_rule_once() {
        let v = Violation {
            rule: "SNAP-01".into(),
            message: "m".into(),
            execution_id: None,
            event_index: Some(3),
        };
        let r = results(9, &[v]);
        assert_eq!(r.len(), RULES.len());
        let failed: Vec<_> = r
            .iter()
            .filter(|r| r.status == loom_report::Status::Fail)
            .collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].case_id, "seed-9/SNAP-01");
    }
}
