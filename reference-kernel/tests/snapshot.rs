//! Snapshots: fold(snapshot, tail) == fold(events), normalization and the documented
//! exceptions (SNAP group), plus the versioned fold against older snapshot writers.

mod common;
use common::gen::{events, Grammar, FULL};
use common::*;
use loom_kernel::fold::{
    evidence_order, fold_as, get_decision, keys, ExecutionState, FoldVersion, Status,
};
use loom_kernel::snapshot::{normalize_snapshot_state, restore, SnapshotRecord};
use loom_kernel::{fold, EventEnvelope};
use proptest::prelude::*;
use serde_json::{json, Value};

fn v(minor: u32) -> FoldVersion {
    FoldVersion::from_minor(minor).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_global_rejects: 1_000_000, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn snap_01_every_k_snapshot_plus_tail_equals_full_fold(evs in events(FULL, 24)) {
        let events = log(evs);
        if let Some((k, full, got)) = first_snapshot_divergence(FoldVersion::CURRENT, &events) {
            prop_assert!(false, "k={k}\nfull:     {full}\nrestored: {got}");
        }
    }

    #[test]
    fn snap_03_older_snapshots_normalize_to_the_full_fold(
        evs in events(Grammar { newer_kinds: false, failed_without_error: false, foreign: true }, 20),
        minor in 20u32..=25,
    ) {
        let events = log(evs);
        prop_assume!(!reopened_after_genuine_failure(&events));
        let writer = v(minor);
        prop_assume!(minor >= 26 || !retry_after_settle(&events));
        // A second EXECUTION_STARTED is never kernel-written; after a pre-1.21 "failure"
        // it re-opens the execution like shape (b) of SNAP-04.
        prop_assume!(minor >= 21 || !events.iter().skip(1).any(|e| e.event_type == "EXECUTION_STARTED"));
        // 1.23.0 made a null resume of `__loom_diverged__` status-only; an older node
        // recorded a passthrough, which is log history a normalizer cannot undo.
        prop_assume!(minor >= 23 || !events.iter().any(|e| e.payload.get("on") == Some(&json!("__loom_diverged__"))));
        let full = strip_seq_if(minor < 24, fold(&events).to_value());
        for k in 0..events.len() {
            let prefix = fold_as(writer, &ExecutionState::new(), &events[..=k]);
            let record = SnapshotRecord::capture_as(writer, &prefix, events[k].sequence);
            let restored = restore(&record, &events).unwrap();
            let got = strip_seq_if(minor < 24, restored.to_value());
            prop_assert_eq!(loom_kernel::canonical_string(&got), loom_kernel::canonical_string(&full), "writer {} k={}", writer, k);
        }
    }

    #[test]
    fn snap_01_normalize_is_idempotent_and_a_no_op_on_current(evs in events(FULL, 16), minor in 15u32..=26) {
        let events = log(evs);
        let writer = v(minor);
        let s = fold_as(writer, &ExecutionState::new(), &events);
        let once = normalize_snapshot_state(&SnapshotRecord::capture_as(writer, &s, 0)).unwrap();
        let twice = normalize_snapshot_state(&SnapshotRecord::capture(&once, 0)).unwrap();
        prop_assert_eq!(canon(&once), canon(&twice));
        let current = fold(&events);
        let same = normalize_snapshot_state(&SnapshotRecord::capture(&current, 0)).unwrap();
        prop_assert_eq!(canon(&current), canon(&same));
    }
}

/// SNAP-04 shape (b): an execution that genuinely failed (so `_error` is set and stays
/// set through any re-open) and later folds a step failure.
fn reopened_after_genuine_failure(events: &[EventEnvelope]) -> bool {
    let mut failed = false;
    for e in events {
        match e.event_type.as_str() {
            "EXECUTION_FAILED" => failed = true,
            "STEP_FAILED" if failed => return true,
            _ => {}
        }
    }
    false
}

/// A `STEP_RETRYING` (or `EFFECT_INDOUBT`) on a frame a pre-1.26 node already settled:
/// the stale input it kept is indistinguishable from a live retry's input, so a pre-1.26
/// snapshot keeps it (a stray input, harmless as SNAP-11 says). Recorded in
/// docs/decisions/0003-snapshot-normalization.md.
fn retry_after_settle(events: &[EventEnvelope]) -> bool {
    let mut settled = std::collections::BTreeSet::new();
    for e in events {
        let step = e
            .payload
            .get("stepId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match e.event_type.as_str() {
            "STEP_COMPLETED" | "STEP_FAILED" | "STEP_CANCELLED" => {
                settled.insert(step);
            }
            "STEP_STARTED" => {
                settled.remove(&step);
            }
            "STEP_RETRYING" | "EFFECT_INDOUBT" if settled.contains(&step) => return true,
            _ => {}
        }
    }
    false
}

fn strip_seq_if(strip: bool, mut state: Value) -> Value {
    if strip {
        if let Some(Value::Object(d)) = state
            .get_mut("variables")
            .and_then(|v| v.get_mut(keys::DECISIONS))
        {
            for entry in d.values_mut() {
                if let Value::Object(e) = entry {
                    e.remove("seq");
                }
            }
        }
    }
    state
}

#[test]
fn snap_02_snapshots_are_out_of_band() {
    let events = log(vec![
        started(),
        step_started("a"),
        step_completed("a", json!(1)),
        suspended("g"),
    ]);
    let bytes_before = serde_json::to_string(&events).unwrap();
    let record = SnapshotRecord::capture(&fold(&events[..2]), 1);
    assert_eq!(
        serde_json::to_string(&events).unwrap(),
        bytes_before,
        "taking a snapshot wrote nothing to the log"
    );
    assert!(events.iter().all(|e| !e.event_type.contains("SNAPSHOT")));
    assert_eq!(
        canon(&restore(&record, &events).unwrap()),
        canon(&fold(&events)),
        "with or without a snapshot: same state"
    );
}

#[test]
fn snap_03_pre_1_21_snapshot_of_a_caught_step_failure() {
    // Running flow caught a step failure; a 1.20 node folded it `failed` (no _error).
    let events = log(vec![
        started(),
        step_started("a"),
        step_failed("a"),
        step_started("b"),
        step_completed("b", json!(2)),
    ]);
    let old = fold_as(v(20), &ExecutionState::new(), &events[..3]);
    assert_eq!(old.status, Status::Failed);
    let record = SnapshotRecord::capture_as(v(20), &old, 2);
    assert_eq!(
        normalize_snapshot_state(&record).unwrap().status,
        Status::Running
    );
    assert_eq!(
        canon(&restore(&record, &events).unwrap()),
        canon(&fold(&events))
    );
    // Parked variant: becomes suspended with _failedWhileParked, and a null resume is status-only.
    let parked = log(vec![
        started(),
        step_started("a"),
        suspended("g"),
        step_failed("a"),
        resumed(Value::Null),
    ]);
    let old = fold_as(v(20), &ExecutionState::new(), &parked[..4]);
    let n = normalize_snapshot_state(&SnapshotRecord::capture_as(v(20), &old, 3)).unwrap();
    assert_eq!(n.status, Status::Suspended);
    assert!(n.failed_while_parked());
    let rec = SnapshotRecord::capture_as(v(20), &old, 3);
    assert_eq!(
        canon(&restore(&rec, &parked).unwrap()),
        canon(&fold(&parked))
    );
}

#[test]
fn snap_04_documented_exceptions_diverge_as_stated() {
    // (a) EXECUTION_FAILED without error (never kernel-written).
    let a = log(vec![
        started(),
        ev("EXECUTION_FAILED", json!({})),
        step_started("x"),
    ]);
    let (k, _, _) = first_snapshot_divergence(v(20), &a).expect("shape (a) is a known divergence");
    assert_eq!(k, 1);
    // (b) genuine failure, re-opened by resumeAs (stale _error kept), then a caught step failure.
    let b = log(vec![
        started(),
        ev("EXECUTION_FAILED", json!({"error": "real"})),
        resumed(Value::Null),
        step_started("s"),
        step_failed("s"),
        step_started("t"),
    ]);
    let (k, _, _) = first_snapshot_divergence(v(20), &b).expect("shape (b) is a known divergence");
    assert_eq!(k, 4);
    // Current snapshots of the same logs do not diverge.
    assert!(first_snapshot_divergence(FoldVersion::CURRENT, &a).is_none());
    assert!(first_snapshot_divergence(FoldVersion::CURRENT, &b).is_none());
}

/// Loads an execution as a runtime does: snapshot plus tail when a snapshot exists.
fn load(snapshot: Option<&SnapshotRecord>, events: &[EventEnvelope]) -> ExecutionState {
    match snapshot {
        Some(r) => restore(r, events).unwrap(),
        None => fold(events),
    }
}

#[test]
fn snap_05_deleting_snapshots_makes_the_log_authoritative() {
    let a = log(vec![
        started(),
        ev("EXECUTION_FAILED", json!({})),
        step_started("x"),
    ]);
    let mut snapshots = vec![SnapshotRecord::capture_as(
        v(20),
        &fold_as(v(20), &ExecutionState::new(), &a[..2]),
        1,
    )];
    assert_ne!(canon(&load(snapshots.last(), &a)), canon(&fold(&a)));
    snapshots.clear(); // SnapshotStore.deleteExecution
    assert_eq!(canon(&load(snapshots.last(), &a)), canon(&fold(&a)));
}

#[test]
fn snap_06_normalization_never_invents_seq() {
    let events = log(vec![
        started(),
        decision("d1", json!(1)),
        decision("d2", json!(2)),
        step_started("z"),
    ]);
    let v23 = fold_as(v(23), &ExecutionState::new(), &events[..3]);
    let record = SnapshotRecord::capture_as(v(23), &v23, 2);
    let n = normalize_snapshot_state(&record).unwrap();
    for (_, entry) in n.variables.decisions.as_ref().unwrap().iter() {
        assert!(entry.get("seq").is_none());
    }
    // The documented difference from the full fold: only the seq fields.
    let restored = restore(&record, &events).unwrap();
    assert_ne!(canon(&restored), canon(&fold(&events)));
    assert_eq!(
        loom_kernel::canonical_string(&strip_seq_if(true, restored.to_value())),
        loom_kernel::canonical_string(&strip_seq_if(true, fold(&events).to_value()))
    );
}

#[test]
fn snap_07_legacy_entry_never_regains_seq() {
    let legacy = json!({
        "status": "running", "frames": {}, "sequence": 3, "startedAt": 1000, "updatedAt": 1030,
        "variables": {"_input": 0, "_decisions": {"old": {"choice": 1}, "new": {"choice": 2, "seq": 2}}}
    });
    let record = SnapshotRecord {
        schema_version: "1.24.0".into(),
        sequence: 3,
        state: legacy,
    };
    let tail = vec![EventEnvelope {
        sequence: 4,
        ..log(vec![decision("old", json!(5))]).remove(0)
    }];
    let s = restore(&record, &tail).unwrap();
    let d = s.variables.decisions.as_ref().unwrap();
    assert!(
        d.get("old").unwrap().get("seq").is_none(),
        "a repeat never invents a seq"
    );
    assert_eq!(d.get("old").unwrap().to_value()["choice"], json!(5));
    assert_eq!(d.get("new").unwrap().to_value()["seq"], json!(2));
    // A 1.23 node rebuilding a stamped entry drops its seq.
    let stamped = fold(&log(vec![started(), decision("d", json!(1))]));
    let rebuilt = fold_as(
        v(23),
        &stamped,
        &[EventEnvelope {
            sequence: 2,
            ..log(vec![decision("d", json!(1))]).remove(0)
        }],
    );
    assert!(rebuilt
        .variables
        .decisions
        .as_ref()
        .unwrap()
        .get("d")
        .unwrap()
        .get("seq")
        .is_none());
}

fn state_with_decisions(json_text: &str) -> ExecutionState {
    let text = format!(
        r#"{{"status":"running","frames":{{}},"sequence":1,"startedAt":1,"updatedAt":1,"variables":{{"_decisions":{json_text}}}}}"#
    );
    serde_json::from_str(&text).unwrap()
}

#[test]
fn snap_08_evidence_order_of_mixed_maps() {
    let cases = [
        // stamped by seq; each unstamped entry right after the stamped entry before it in map order
        (
            r#"{"b":{"choice":1,"seq":5},"x":{"choice":0},"a":{"choice":1,"seq":2},"y":{"choice":0}}"#,
            vec!["a", "y", "b", "x"],
        ),
        // GAP-16: unstamped entries with no stamped entry before them come first, in map order
        (
            r#"{"z":{"choice":0},"w":{"choice":0},"a":{"choice":1,"seq":1}}"#,
            vec!["z", "w", "a"],
        ),
        // array-index keys come first in JavaScript map order
        (
            r#"{"k":{"choice":1,"seq":1},"10":{"choice":1,"seq":3},"2":{"choice":0}}"#,
            vec!["2", "k", "10"],
        ),
    ];
    for (map, expected) in cases {
        assert_eq!(
            evidence_order(&state_with_decisions(map)),
            expected,
            "{map}"
        );
    }
}

/// Writes a JSON value the way a normalising store (jsonb) returns it: object keys
/// shorter first, then bytewise; array-index-looking keys therefore first.
fn jsonb_text(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_by(|a, b| (a.len(), a.as_bytes()).cmp(&(b.len(), b.as_bytes())));
            let parts: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        serde_json::to_string(k).unwrap(),
                        jsonb_text(&m[*k])
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(jsonb_text).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

#[test]
fn snap_09_decision_order_survives_a_key_reordering_store() {
    let events = log(vec![
        started(),
        decision("zeta", json!(1)),
        decision("10", json!(2)),
        decision("alpha", json!(3)),
        decision("2", json!(4)),
    ]);
    let s = fold(&events);
    let before = evidence_order(&s);
    assert_eq!(
        before,
        ["zeta", "10", "alpha", "2"],
        "the order decisions were made in"
    );
    let reordered: ExecutionState = serde_json::from_str(&jsonb_text(&s.to_value())).unwrap();
    assert_eq!(evidence_order(&reordered), before);
}

#[test]
fn snap_10_pre_1_26_snapshot_inputs_stripped_from_settled_frames() {
    let events = log(vec![
        started(),
        step_started("a"),
        step_completed("a", json!(1)),
        step_started("b"),
        step_failed("b"),
        step_started("c"),
    ]);
    let old = fold_as(v(25), &ExecutionState::new(), &events[..5]);
    assert!(old.frames["a"].input.is_some());
    let record = SnapshotRecord::capture_as(v(25), &old, 4);
    let n = normalize_snapshot_state(&record).unwrap();
    assert!(n.frames["a"].input.is_none() && n.frames["b"].input.is_none());
    assert_eq!(
        canon(&restore(&record, &events).unwrap()),
        canon(&fold(&events))
    );
}

#[test]
fn snap_11_stray_input_from_a_pre_1_26_node_is_harmless() {
    let events = log(vec![
        started(),
        step_started("a"),
        decision("d", json!("x")),
        step_completed("a", json!({"r": 1})),
        suspended("g"),
        resumed(json!(7)),
    ]);
    let new = fold(&events);
    let old_node = fold_as(v(25), &ExecutionState::new(), &events);
    assert!(old_node.frames["a"].input.is_some());
    assert_eq!(old_node.status, new.status);
    assert_eq!(old_node.frames["a"].output, new.frames["a"].output);
    assert_eq!(old_node.resume_payloads(), new.resume_payloads());
    assert_eq!(get_decision(&old_node, "d"), get_decision(&new, "d"));
}

#[test]
fn snap_12_restore_shows_migrated_input() {
    let events = log(vec![
        started(),
        ev("EXECUTION_MIGRATED", json!({"migratedInput": {"n": 2}})),
        suspended("g"),
        resumed(json!(1)),
    ]);
    let record = SnapshotRecord::capture(&fold(&events[..2]), 1);
    let s = restore(&record, &events).unwrap();
    assert_eq!(s.variables.get(keys::INPUT), Some(&json!({"n": 2})));
}

#[test]
fn snapshot_from_the_future_or_garbage_is_an_error() {
    let s = fold(&log(vec![started()]));
    let future = SnapshotRecord {
        schema_version: "1.99.0".into(),
        sequence: 0,
        state: s.to_value(),
    };
    assert!(normalize_snapshot_state(&future)
        .unwrap_err()
        .to_string()
        .contains("1.99.0"));
    let garbage = SnapshotRecord {
        schema_version: "1.26.0".into(),
        sequence: 0,
        state: json!({"status": 5}),
    };
    assert!(normalize_snapshot_state(&garbage).is_err());
}
