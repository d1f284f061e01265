//! Normalize scenarios, derived from the fold cases: a snapshot written by an older
//! fold (every minor from 1.15 to 1.25) at a k where its bytes differ from the current fold's, the
//! tail after it, and the restore compared with the full fold. Divergences are allowed
//! only as documented exceptions (SNAP-04 for the two pre-1.21 shapes, SNAP-06 for a
//! decision `seq` a pre-1.24 snapshot cannot have); the generator refuses any other.

use super::fold::{cases, FoldCase};
use super::*;
use crate::format::{Exception, Kind};
use crate::generate::Scenario;
use loom_kernel::fold::{fold, fold_as, known_event_types_at, ExecutionState, FoldVersion};
use loom_kernel::snapshot::{restore, SnapshotRecord};
use loom_kernel::{canonical_string, EventEnvelope};

/// The older folds whose snapshots the vectors normalize: every minor the schema
/// history records (SNAP-03/04 hold for snapshots from any of them).
pub const WRITERS: [u32; 11] = [15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25];

fn strip_seq(mut v: Value) -> Value {
    if let Some(Value::Object(d)) = v.pointer_mut("/variables/_decisions") {
        for e in d.values_mut() {
            if let Value::Object(e) = e {
                e.remove("seq");
            }
        }
    }
    v
}

fn scenario_for(
    case: &FoldCase,
    writer: FoldVersion,
    envs: &[EventEnvelope],
    values: &[Value],
    k: usize,
) -> Scenario {
    let prefix = fold_as(writer, &ExecutionState::new(), &envs[..=k]);
    let record = SnapshotRecord::capture_as(writer, &prefix, envs[k].sequence);
    let full = fold(envs).to_value();
    let restored = restore(&record, envs)
        .map(|s| s.to_value())
        .unwrap_or(Value::Null);
    let mut rules: Vec<&str> = vec!["SNAP-01"];
    if !writer.has(21) {
        rules.push("SNAP-03");
    }
    let settled_input = prefix
        .frames
        .values()
        .any(|f| f.status.is_settled() && f.input.is_some());
    if settled_input {
        rules.push("SNAP-10");
    }
    let mut exception = None;
    if canonical_string(&full) != canonical_string(&restored) {
        if case.snap_exception.is_some() && !writer.has(21) {
            rules.push("SNAP-04");
            rules.push("SNAP-05");
            exception = Some(Exception {
                rule: "SNAP-04".into(),
                note: "a pre-1.21 snapshot of this shape cannot be told from a genuine failure; delete the execution's snapshots to make the log authoritative (SNAP-05)".into(),
            });
        } else if canonical_string(&strip_seq(full.clone()))
            == canonical_string(&strip_seq(restored.clone()))
        {
            rules.push("SNAP-06");
            rules.push("SNAP-07");
            exception = Some(Exception {
                rule: "SNAP-06".into(),
                note: "decisions absorbed from a pre-1.24 snapshot stay legacy: normalization never invents a seq".into(),
            });
        }
    }
    let mut s = Scenario::new(
        Kind::Normalize,
        format!("normalize-{}-w1-{}-k{k}", case.id, writer.minor()),
        &rules,
        format!("Snapshot written by the {writer} fold after event {k}, normalized and restored with the tail. Log: {}", case.description),
        json!({
            "snapshot": {"schemaVersion": record.schema_version, "sequence": record.sequence, "state": record.state},
            "tail": values[k + 1..].to_vec(),
        }),
    )
    .since("1.26.0");
    s.exception = exception;
    s.full_log = Some(values.to_vec());
    case.state_basis(s)
}

/// Whether a fold of minor `writer` reads this log as the current fold does, up to the
/// changes normalization (1.21, 1.26) and the documented `seq` exception (1.24) account
/// for: a fold older than another change this log exercises (a typed channel before
/// 1.17, a stamp count before 1.19, …) folds it to a state normalization cannot repair,
/// and the spec gives no such snapshot a meaning.
fn writer_could_have_written(envs: &[EventEnvelope], writer: u32) -> bool {
    (writer + 1..=FoldVersion::CURRENT.minor()).all(|m| {
        if matches!(m, 21 | 24 | 26) {
            return true;
        }
        let (Some(old), Some(new)) = (FoldVersion::from_minor(m - 1), FoldVersion::from_minor(m))
        else {
            return true;
        };
        (0..envs.len()).all(|k| {
            canonical_string(&fold_as(old, &ExecutionState::new(), &envs[..=k]).to_value())
                == canonical_string(&fold_as(new, &ExecutionState::new(), &envs[..=k]).to_value())
        })
    })
}

/// Every normalize scenario.
pub fn scenarios() -> Vec<Scenario> {
    let mut out = Vec::new();
    for case in cases() {
        if !case.history {
            continue;
        }
        let values = log(case.events.clone());
        let envs = crate::reference::envelopes(&values).unwrap_or_default();
        for minor in WRITERS {
            let Some(writer) = FoldVersion::from_minor(minor) else {
                continue;
            };
            // A fold older than the feature a case pins cannot have written a snapshot
            // holding it, except for the changes normalization and the documented
            // exceptions exist for: 1.21 (SNAP-03), 1.24 (SNAP-06) and 1.26 (SNAP-10).
            let since_minor: u32 = case
                .since
                .split('.')
                .nth(1)
                .and_then(|m| m.parse().ok())
                .unwrap_or(0);
            if minor < since_minor && !matches!(since_minor, 21 | 24 | 26) {
                continue;
            }
            if !writer_could_have_written(&envs, minor) {
                continue;
            }
            // The k where the writer's snapshot differs from the current fold's prefix.
            // A fold older than a kind cannot have written a snapshot covering it.
            let known = known_event_types_at(writer);
            let ks: Vec<usize> = (0..envs.len())
                .filter(|&k| {
                    envs[..=k].iter().all(|e| {
                        known.contains(&e.event_type.as_str())
                            || !loom_kernel::fold::is_known_event_type(&e.event_type)
                    })
                })
                .filter(|&k| {
                    let old = fold_as(writer, &ExecutionState::new(), &envs[..=k]).to_value();
                    let new = fold(&envs[..=k]).to_value();
                    canonical_string(&old) != canonical_string(&new)
                })
                .collect();
            let mut picked: Vec<usize> = Vec::new();
            if let Some(&first) = ks.first() {
                picked.push(first);
            }
            if let Some(&last) = ks.last() {
                if !picked.contains(&last) {
                    picked.push(last);
                }
            }
            for k in picked {
                out.push(scenario_for(&case, writer, &envs, &values, k));
            }
        }
    }
    out.extend(extra());
    out
}

/// Snapshot shapes no fold case produces on its own.
fn extra() -> Vec<Scenario> {
    let mut out = Vec::new();
    // SNAP-07: a mixed snapshot (one stamped, one legacy entry) plus a tail repeating the legacy id.
    let events = log(vec![
        started(),
        decision("a", json!(1)),
        decision("b", json!(2)),
        decision("b", json!(3)),
        decision("c", json!(4)),
    ]);
    let snapshot_state = json!({
        "status": "running", "frames": {}, "sequence": 2, "startedAt": 1000, "updatedAt": 1020,
        "variables": {"_input": {"n": 1}, "_decisions": {"a": {"choice": 1, "seq": 1}, "b": {"choice": 2}}},
    });
    let mut s = Scenario::new(Kind::Normalize, "normalize-snap07-mixed-snapshot-keeps-legacy", &["SNAP-07", "SNAP-06"],
        "A mixed 1.23/1.24 snapshot: the legacy entry stays unstamped even when the tail repeats its id; the stamped one keeps its seq; a new id is stamped.",
        json!({"snapshot": {"schemaVersion": "1.24.0", "sequence": 2, "state": snapshot_state}, "tail": events[3..].to_vec()}))
        .since("1.24.0").rests_on(&["GAP-24"]);
    s.exception = Some(Exception {
        rule: "SNAP-07".into(),
        note: "an entry that lost its seq never gets one back along the snapshot-plus-tail path"
            .into(),
    });
    s.full_log = Some(events);
    out.push(s);
    // SNAP-06: a 1.23 snapshot with decisions normalizes without inventing seq.
    let events = log(vec![
        started(),
        decision("x", json!("a")),
        decision("y", json!("b")),
        step_started("s"),
    ]);
    let envs = crate::reference::envelopes(&events).unwrap_or_default();
    let w23 = FoldVersion::from_minor(23).unwrap_or(FoldVersion::CURRENT);
    let prefix = fold_as(w23, &ExecutionState::new(), &envs[..=2]);
    let mut s = Scenario::new(Kind::Normalize, "normalize-snap06-no-invented-seq", &["SNAP-06"],
        "Normalizing a 1.23 snapshot adds no seq to any _decisions entry.",
        json!({"snapshot": {"schemaVersion": "1.23.0", "sequence": 2, "state": prefix.to_value()}, "tail": events[3..].to_vec()}))
        .since("1.24.0").spec();
    s.exception = Some(Exception {
        rule: "SNAP-06".into(),
        note: "legacy entries absorbed from a 1.23 snapshot have no seq".into(),
    });
    s.full_log = Some(events);
    out.push(s);
    // SNAP-12 / SNAP-02: snapshot right after EXECUTION_MIGRATED.
    let events = log(vec![
        started(),
        ev("EXECUTION_MIGRATED", json!({"migratedInput": {"n": 7}})),
        suspended("G"),
        resumed(json!(1)),
    ]);
    let envs = crate::reference::envelopes(&events).unwrap_or_default();
    let prefix = fold(&envs[..=1]);
    let mut s = Scenario::new(Kind::Normalize, "normalize-snap12-migrated-input-restored", &["SNAP-12", "SNAP-01", "FOLD-14"],
        "A current snapshot taken after EXECUTION_MIGRATED restores the migrated _input.",
        json!({"snapshot": {"schemaVersion": "1.26.0", "sequence": 1, "state": prefix.to_value()}, "tail": events[2..].to_vec()}))
        .since("1.15.0").spec();
    s.full_log = Some(events);
    out.push(s);
    // SNAP-03 with a parked failure: pre-1.21 failed status while parked → suspended + _failedWhileParked.
    let events = log(vec![
        started(),
        step_started("a"),
        suspended("G"),
        step_failed("a"),
        resumed(json!({"ok": 1})),
    ]);
    let envs = crate::reference::envelopes(&events).unwrap_or_default();
    let w20 = FoldVersion::from_minor(20).unwrap_or(FoldVersion::CURRENT);
    let prefix = fold_as(w20, &ExecutionState::new(), &envs[..=3]);
    let mut s = Scenario::new(Kind::Normalize, "normalize-snap03-parked-failure", &["SNAP-03", "FOLD-10"],
        "A 1.20 snapshot whose status is failed only because a sibling step failed while parked normalizes to suspended with _failedWhileParked.",
        json!({"snapshot": {"schemaVersion": "1.20.0", "sequence": 3, "state": prefix.to_value()}, "tail": events[4..].to_vec()}))
        .since("1.21.0").spec();
    s.full_log = Some(events);
    out.push(s);
    out.extend(failed_without_error_from_1_21_on());
    out
}

/// The other side of the 1.21 boundary (SNAP-03, GAP-15): a snapshot written by 1.21
/// or later whose status is `failed` without `_error` (an `EXECUTION_FAILED` without
/// `error`, at a park and outside one) is a real failure, and normalization must leave
/// it alone. Only pre-1.21 snapshots of that shape are reopened; a kernel whose version
/// test reaches one minor too far reopens these and restores a state the full fold
/// never reaches.
fn failed_without_error_from_1_21_on() -> Vec<Scenario> {
    let mut out = Vec::new();
    let shapes = [
        (
            "parked",
            "at a park",
            vec![
                started(),
                suspended("G"),
                ev("EXECUTION_FAILED", json!({})),
                decision("after", json!(1)),
            ],
        ),
        (
            "running",
            "while running",
            vec![
                started(),
                step_started("a"),
                ev("EXECUTION_FAILED", json!({})),
                decision("after", json!(1)),
            ],
        ),
    ];
    for (shape, words, evs) in shapes {
        let events = log(evs);
        let envs = crate::reference::envelopes(&events).unwrap_or_default();
        for minor in [21u32, 25, FoldVersion::CURRENT.minor()] {
            let Some(writer) = FoldVersion::from_minor(minor) else {
                continue;
            };
            let prefix = fold_as(writer, &ExecutionState::new(), &envs[..=2]);
            let record = SnapshotRecord::capture_as(writer, &prefix, envs[2].sequence);
            let mut s = Scenario::new(
                Kind::Normalize,
                format!("normalize-failed-without-error-{shape}-w1-{minor}-kept"),
                &["SNAP-01", "SNAP-03", "GAP-15"],
                format!("A {writer} snapshot of an execution failed {words} by an EXECUTION_FAILED without error stays failed: only a pre-1.21 snapshot of that shape is reopened, so normalize plus the tail equals the full fold."),
                json!({
                    "snapshot": {"schemaVersion": record.schema_version, "sequence": record.sequence, "state": record.state},
                    "tail": events[3..].to_vec(),
                }),
            )
            .since("1.21.0")
            // A post-1.21 failure is a real one: the spec's own 1.21 text decides it.
            .spec();
            s.full_log = Some(events.clone());
            out.push(s);
        }
    }
    out
}
