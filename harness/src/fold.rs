//! The fold part: generated logs (see [`crate::gen`]) checked against the rules they
//! exercise, with the reference fold as the subject. Each check compares the whole
//! state, and a failing case cites the same rules as the passing one, so a failure is
//! never quieter than a success.

use crate::gen;
use indicatif::ProgressBar;
use loom_kernel::fold::{fold_as, fold_owned, ExecutionState, FoldVersion};
use loom_kernel::snapshot::{normalize_snapshot_state, restore, SnapshotRecord};
use loom_kernel::{canonical_string, fold, EventEnvelope};
use loom_report::{CaseResult, Failure};
use serde_json::Value;

/// The area fold results are written under.
pub const AREA: &str = "fold";

/// The longest generated log, in events.
pub const LOG_EVENTS_MAX: u64 = 24;

/// The event kinds that may move an execution's status in the current fold (FOLD-07:
/// the execution-level kinds, EXECUTION_CONTINUED since 1.23.0). EXECUTION_MIGRATED is
/// execution-level but records a verdict without moving the status.
pub const STATUS_MOVERS: [&str; 7] = [
    "EXECUTION_STARTED",
    "EXECUTION_SUSPENDED",
    "EXECUTION_RESUMED",
    "EXECUTION_COMPLETED",
    "EXECUTION_FAILED",
    "EXECUTION_CANCELLED",
    "EXECUTION_CONTINUED",
];

/// A type no fold version knows.
const UNKNOWN_TYPE: &str = "SOMETHING_UNKNOWN";

const SNAPSHOT_RULES: [&str; 2] = ["SNAP-01", "FOLD-06"];
const INERT_RULES: [&str; 1] = ["FOLD-04"];
const STATUS_RULES: [&str; 2] = ["FOLD-07", "FOLD-09"];
const VERSIONED_RULES: [&str; 2] = ["SNAP-03", "SNAP-10"];

fn differ(expected: &ExecutionState, actual: &ExecutionState) -> Option<Failure> {
    let (e, a) = (expected.to_value(), actual.to_value());
    (canonical_string(&e) != canonical_string(&a)).then(|| Failure::values(e, a))
}

fn strip_seq(mut v: Value) -> Value {
    if let Some(Value::Object(d)) = v.get_mut("variables").and_then(|x| x.get_mut("_decisions")) {
        for e in d.values_mut() {
            if let Value::Object(e) = e {
                e.remove("seq");
            }
        }
    }
    v
}

fn result(
    suite: &str,
    case: String,
    rules: &[&str],
    failure: Option<(String, Failure)>,
) -> CaseResult {
    match failure {
        None => CaseResult::pass(AREA, suite, case, rules.iter().copied()),
        Some((message, f)) => {
            CaseResult::fail(AREA, suite, case, rules.iter().copied(), message, f)
        }
    }
}

/// Runs `n_logs` generated logs from `seed`; `bar` shows progress.
pub fn run(seed: u64, n_logs: u64, bar: &ProgressBar) -> Vec<CaseResult> {
    let mut rng = gen::Rng::new(seed);
    let writers: Vec<FoldVersion> = (20..=26).filter_map(FoldVersion::from_minor).collect();
    bar.set_length(n_logs);
    let mut out = Vec::new();
    for n in 0..n_logs {
        bar.inc(1);
        let events = gen::log(&mut rng, n, LOG_EVENTS_MAX);
        let full = fold(&events);
        let case = format!("log-{seed}-{n}");
        out.push(determinism(&events, &full, &case));
        out.push(snapshot_equivalence(&events, &full, &case));
        out.extend(versioned(&events, &full, &case, &writers));
        let at = rng.below(events.len() as u64 + 1) as usize;
        out.push(inert_unknown(&events, at, &case));
        out.push(status_movers(&events, &case));
        // Normalizing a current snapshot changes nothing (GAP-15); only a failure is
        // reported, as SNAP-03's idempotence side.
        let once = normalize_snapshot_state(&SnapshotRecord::capture(&full, 0)).unwrap_or_default();
        if let Some(f) = differ(&full, &once) {
            out.push(result(
                "normalize",
                format!("{case}/normalize-no-op"),
                &["SNAP-03"],
                Some(("normalizing a current snapshot changed it".into(), f)),
            ));
        }
    }
    out
}

/// FOLD-01: the same log folds to the same bytes, also from re-decoded text.
fn determinism(events: &[EventEnvelope], full: &ExecutionState, case: &str) -> CaseResult {
    let id = format!("{case}/determinism");
    let text = serde_json::to_string(events).unwrap_or_default();
    match loom_kernel::decode_log(&text).map(|e| fold_owned(ExecutionState::new(), e)) {
        Ok(s) => result(
            "determinism",
            id,
            &["FOLD-01"],
            differ(full, &s).map(|f| ("the same log folded to different bytes".into(), f)),
        ),
        Err(e) => CaseResult::error(
            AREA,
            "determinism",
            id,
            ["FOLD-01"],
            format!("re-decoding the generated log failed: {e}"),
        ),
    }
}

/// SNAP-01 at every k, and FOLD-06: folding on from a state leaves that state as it
/// was (the caller still holds it).
fn snapshot_equivalence(events: &[EventEnvelope], full: &ExecutionState, case: &str) -> CaseResult {
    let mut failure = None;
    let mut prefix = ExecutionState::new();
    for k in 0..events.len() {
        let kept = prefix.clone();
        let kept_bytes = kept.canonical();
        let next = loom_kernel::fold_from(&kept, &events[k..=k]);
        if kept.canonical() != kept_bytes {
            failure = Some((
                format!("folding event {k} changed the state the caller held (FOLD-06)"),
                Failure::default().with_event_index(k as u64),
            ));
            break;
        }
        prefix = next;
        let record = SnapshotRecord::capture(&prefix, events[k].sequence);
        let restored = match restore(&record, events) {
            Ok(s) => s,
            Err(e) => {
                failure = Some((
                    format!("restoring the snapshot at k={k} failed: {e}"),
                    Failure::default().with_event_index(k as u64),
                ));
                break;
            }
        };
        if let Some(f) = differ(full, &restored) {
            failure = Some((
                format!("fold(snapshot_k, tail) != fold(events) at k={k}"),
                f.with_event_index(k as u64),
            ));
            break;
        }
    }
    result(
        "snapshot-equivalence",
        format!("{case}/every-k"),
        &SNAPSHOT_RULES,
        failure,
    )
}

/// SNAP-03/SNAP-10: an older writer's snapshots normalize to the full fold.
fn versioned(
    events: &[EventEnvelope],
    full: &ExecutionState,
    case: &str,
    writers: &[FoldVersion],
) -> Vec<CaseResult> {
    let mut out = Vec::new();
    for writer in writers {
        if *writer == FoldVersion::CURRENT
            || loom_kernel::snapshot::documented_exception(*writer, events).is_some()
        {
            continue;
        }
        let full_v = if writer.has(24) {
            full.to_value()
        } else {
            strip_seq(full.to_value())
        };
        let mut bad = None;
        let mut old = ExecutionState::new();
        for k in 0..events.len() {
            old = fold_as(*writer, &old, &events[k..=k]);
            let record = SnapshotRecord::capture_as(*writer, &old, events[k].sequence);
            let got = match restore(&record, events) {
                Ok(s) => s.to_value(),
                Err(e) => {
                    bad = Some((
                        format!("a {writer} snapshot at k={k} cannot be restored: {e}"),
                        Failure::default().with_event_index(k as u64),
                    ));
                    break;
                }
            };
            let got = if writer.has(24) { got } else { strip_seq(got) };
            if canonical_string(&got) != canonical_string(&full_v) {
                bad = Some((
                    format!("a {writer} snapshot at k={k} does not normalize to the full fold"),
                    Failure::values(full_v.clone(), got).with_event_index(k as u64),
                ));
                break;
            }
        }
        out.push(result(
            "versioned-snapshots",
            format!("{case}/writer-{writer}"),
            &VERSIONED_RULES,
            bad,
        ));
    }
    out
}

/// `events` with every sequence from index `from` on moved up by one.
fn shifted(events: &[EventEnvelope], from: usize) -> Vec<EventEnvelope> {
    let mut out = events.to_vec();
    for e in out.iter_mut().skip(from) {
        e.sequence += 1;
    }
    out
}

/// FOLD-04: an event of an unknown kind (with no emit stamp, so the flow-emit counter
/// is not involved) inserted at `at` leaves the whole state as folding the log without
/// it, sequence and updatedAt included. The events after it move up one sequence in
/// both logs, so only the unknown event differs.
fn inert_unknown(events: &[EventEnvelope], at: usize, case: &str) -> CaseResult {
    let without = shifted(events, at);
    let mut with = without.clone();
    let mut extra = events[at.min(events.len() - 1)].clone();
    extra.event_type = UNKNOWN_TYPE.into();
    extra.metadata = None;
    extra.sequence = if at == 0 {
        events[0].sequence
    } else {
        events[at - 1].sequence + 1
    };
    extra.timestamp_ms += 1;
    extra.payload = serde_json::json!({"surprise": true}).into();
    with.insert(at, extra);
    let expected = fold(&without);
    let got = fold(&with);
    result(
        "inert-unknown",
        format!("{case}/unknown-at-{at}"),
        &INERT_RULES,
        differ(&expected, &got).map(|f| {
            (
                format!("an event of unknown type {UNKNOWN_TYPE} at index {at} changed the state"),
                f.with_event_index(at as u64),
            )
        }),
    )
}

/// FOLD-07/FOLD-09: only [`STATUS_MOVERS`] move the status; a step failure never does.
fn status_movers(events: &[EventEnvelope], case: &str) -> CaseResult {
    let mut st = ExecutionState::new();
    let mut moved_by = None;
    for (i, e) in events.iter().enumerate() {
        let before = st.status;
        st = loom_kernel::fold_from(&st, std::slice::from_ref(e));
        if st.status != before && !STATUS_MOVERS.contains(&e.event_type.as_str()) {
            moved_by = Some((i, before, st.status));
            break;
        }
    }
    result(
        "status",
        format!("{case}/status-movers"),
        &STATUS_RULES,
        moved_by.map(|(i, before, after)| {
            (
                format!(
                    "{} (event {i}) moved the status from {before:?} to {after:?}; only execution-level kinds may",
                    events[i].event_type
                ),
                Failure::values(
                    serde_json::json!(format!("{before:?}")),
                    serde_json::json!(format!("{after:?}")),
                )
                .with_event_index(i as u64),
            )
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_logs_pass_every_fold_check_and_each_check_cites_its_rules() {
        let results = run(3, 40, &ProgressBar::hidden());
        assert!(results.len() >= 40 * 4);
        let bad: Vec<_> = results.iter().filter(|r| r.status.is_failure()).collect();
        assert!(bad.is_empty(), "{bad:#?}");
        for suite in [
            "snapshot-equivalence",
            "inert-unknown",
            "status",
            "determinism",
        ] {
            assert!(results.iter().any(|r| r.suite == suite), "{suite}");
        }
    }

    #[test]
    fn a_state_change_by_an_unknown_kind_is_caught_with_its_index() {
        // A log where the "unknown" event is in fact a known status mover: the check
        // must notice the state moved.
        let mut rng = gen::Rng::new(11);
        let events = gen::log(&mut rng, 0, LOG_EVENTS_MAX);
        let mut with = events.clone();
        let mut extra = events[0].clone();
        extra.event_type = "EXECUTION_CANCELLED".into();
        extra.payload = serde_json::json!({}).into();
        extra.sequence = events.last().unwrap().sequence + 1;
        with.push(extra);
        assert!(differ(&fold(&events), &fold(&with)).is_some());
    }
}
