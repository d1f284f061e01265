//! Fold, normalization and restore bugs. Each is emulated around the reference fold,
//! one event at a time: the event is changed before the reference folds it (a field
//! the buggy kernel never reads), or the state is patched after (a line the buggy
//! kernel has wrong). Either way the buggy state is what the protocol answers and what
//! the next event folds onto, as in a real kernel.

use super::Bug;
use loom_kernel::fold::{
    fold_as, is_known_event_type, keys, ExecutionState, FoldVersion, FrameStatus, Status,
};
use loom_kernel::fold::{fold_versioned, NoDiagnostics};
use loom_kernel::limits::{QUARANTINED_ENTRIES_MAX, RESOURCE_CUSTOM_KEYS_MAX};
use loom_kernel::snapshot::{normalize_snapshot_state, SnapshotRecord};
use loom_kernel::EventEnvelope;
use serde_json::{Map, Value};

/// Whether `bug` lives in the fold (and so in `fold`, `foldFrom` and every restore).
pub fn is_fold_bug(bug: Bug) -> bool {
    matches!(
        bug,
        Bug::StepFailedFailsExecution
            | Bug::ContinuedNotTerminal
            | Bug::SecondParkedFailureFails
            | Bug::CancelledNotReopened
            | Bug::ResumePayloadsCapped
            | Bug::NullResumeAlwaysPassthrough
            | Bug::DivergedNullResumePassthrough
            | Bug::UnparkedResumeDropped
            | Bug::WaitAnswerAlsoPassthrough
            | Bug::ParkedFailureNotRecorded
            | Bug::ParkedFailureKeptOnResume
            | Bug::ParkedFailureKeptOnTerminal
            | Bug::SeqFromPayload
            | Bug::SeqLastWins
            | Bug::DecisionContextDropped
            | Bug::RetryingDropsInput
            | Bug::AbsentInputOmitted
            | Bug::AbsentAttemptIsOne
            | Bug::TypedChannelDropped
            | Bug::MigratedInputIgnored
            | Bug::FlowEmitsAppKindsOnly
            | Bug::KernelStampTruthy
            | Bug::KernelStampIgnored
            | Bug::UnknownKindBookkeeping
            | Bug::SealedEventSkipped
            | Bug::RehomedIgnored
            | Bug::ResourceSumsRounded
            | Bug::UnmeteredDimensionsZero
            | Bug::QuarantineCapPerTopic
            | Bug::AutoReleaseWithoutDeliver
            | Bug::Gate125OneMinorLate
            | Bug::PrototypeNamesPresent
            | Bug::WakeAtOffByOne
            | Bug::ParkConditionDropped
            | Bug::StepKindDropped
            | Bug::AbsentStartInputOmitted
            | Bug::AbsentOutputOmitted
            | Bug::AbsentErrorOmitted
            | Bug::InitialStatusRunning
            | Bug::WaitsKeyedByTopic
            | Bug::LifecycleSeqFromPayload
            | Bug::QuarantineCounterNeverDecrements
            | Bug::CustomCapPerEvent
            | Bug::UnknownMetadataDropsStamp
    )
}

/// Names every plain JavaScript object answers for (`Object.prototype` members).
pub const PROTOTYPE_NAMES: [&str; 7] = [
    "constructor",
    "toString",
    "valueOf",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
];

/// Folds `events` onto `state` as a kernel with `bug` does.
pub fn fold_events(
    bug: Bug,
    version: FoldVersion,
    state: ExecutionState,
    events: Vec<EventEnvelope>,
) -> ExecutionState {
    let mut state = state;
    // A kernel whose empty state says `running`: only a log that never starts shows it.
    if bug == Bug::InitialStatusRunning && state == ExecutionState::new() {
        state.status = Status::Running;
    }
    // The 1.25 gate one minor late: folding as 1.25 is folding as 1.24.
    let version = match (bug, FoldVersion::from_minor(24)) {
        (Bug::Gate125OneMinorLate, Some(v24))
            if version == FoldVersion::from_minor(25).unwrap_or(v24) =>
        {
            v24
        }
        _ => version,
    };
    if matches!(
        bug,
        Bug::QuarantineCounterNeverDecrements | Bug::CustomCapPerEvent
    ) {
        return fold_long_log_bug(bug, version, state, events);
    }
    for original in events {
        let Some(e) = before_fold(bug, original.clone()) else {
            continue;
        };
        if after_fold_ignores(bug, &e.event_type) {
            // No line of this bug runs after such an event: folded onto the owned state,
            // without the copy a long log's thousand held entries make costly.
            state = fold_versioned(state, std::iter::once(e), version, &mut NoDiagnostics);
            continue;
        }
        let before = state.clone();
        state = fold_as(version, &before, std::slice::from_ref(&e));
        after_fold(bug, &before, &mut state, &original);
    }
    state
}

/// Whether [`after_fold`] leaves the state of an `event_type` event alone for `bug`: the
/// kinds the long-log family sends by the thousand, for every bug whose patch after the
/// fold never looks at them (the per-kind arms name other kinds; the capped
/// `_resumePayloads` buffer is cut where a payload is added, never by these kinds).
fn after_fold_ignores(bug: Bug, event_type: &str) -> bool {
    match event_type {
        "INBOX_QUARANTINED" | "INBOX_RELEASED" | "MESSAGE_CONSUMED" => {
            bug != Bug::QuarantineCapPerTopic
        }
        "RESOURCE_METERED" => {
            !matches!(bug, Bug::ResourceSumsRounded | Bug::UnmeteredDimensionsZero)
        }
        "DECISION_RECORDED" => !matches!(
            bug,
            Bug::PrototypeNamesPresent | Bug::SeqFromPayload | Bug::SeqLastWins
        ),
        _ => false,
    }
}

/// The metadata keys ABI-14 lists: the only ones [`Bug::UnknownMetadataDropsStamp`]
/// accepts.
pub const KNOWN_METADATA_KEYS: [&str; 5] = ["flowEmit", "kernel", "forkChain", "forkedBy", "seal"];

fn quarantine_total(state: &ExecutionState) -> usize {
    state
        .variables
        .get(keys::QUARANTINED)
        .and_then(Value::as_object)
        .map_or(0, |q| {
            q.values().filter_map(Value::as_array).map(Vec::len).sum()
        })
}

/// The long-log bugs, folded without the state copy per event the other bugs make (a
/// long log holds a thousand entries, and a copy of them per event made one case cost
/// seconds): each event is folded onto the owned state, and only the few values the bug
/// reads are kept from before it.
fn fold_long_log_bug(
    bug: Bug,
    version: FoldVersion,
    mut state: ExecutionState,
    events: Vec<EventEnvelope>,
) -> ExecutionState {
    // The buggy kernel's counter starts from what it restored, and only ever grows.
    let mut holds = quarantine_total(&state);
    for mut e in events {
        let fold_one = |s: ExecutionState, e: EventEnvelope| {
            fold_versioned(s, std::iter::once(e), version, &mut NoDiagnostics)
        };
        if bug == Bug::QuarantineCounterNeverDecrements && e.event_type == "INBOX_QUARANTINED" {
            if holds >= QUARANTINED_ENTRIES_MAX {
                // Its counter says full: it ignores the hold, as the reference ignores
                // any hold it does not fold (an unstamped one changes nothing).
                if let Some(m) = e.metadata.as_mut() {
                    m.remove("kernel");
                }
            }
            let before = quarantine_total(&state);
            state = fold_one(state, e);
            if quarantine_total(&state) > before {
                holds += 1;
            }
            continue;
        }
        let custom: Vec<(String, f64)> = if e.event_type == "RESOURCE_METERED" && version.has(23) {
            e.payload
                .get("custom")
                .and_then(Value::as_object)
                .map(|c| {
                    c.iter()
                        .filter(|(k, _)| *k != "__proto__")
                        .filter_map(|(k, x)| x.as_f64().map(|x| (k.clone(), x)))
                        .collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        if custom.is_empty() || bug == Bug::QuarantineCounterNeverDecrements {
            state = fold_one(state, e);
            continue;
        }
        let held = |s: &ExecutionState| {
            s.variables
                .get(keys::RESOURCES)
                .and_then(|r| r.get("custom"))
                .and_then(Value::as_object)
                .cloned()
        };
        let before = held(&state);
        state = fold_one(state, e);
        // The buggy line, over the names as the reference visits them.
        let mut c = before.clone().unwrap_or_default();
        let names_before = c.len();
        for (k, x) in custom {
            if c.contains_key(&k) || names_before < RESOURCE_CUSTOM_KEYS_MAX {
                let prev = c.get(&k).and_then(Value::as_f64).unwrap_or(0.0);
                c.insert(k, whole_or_float(prev + x));
            }
        }
        if let Some(Value::Object(mut acc)) = state.variables.get(keys::RESOURCES).cloned() {
            if c.is_empty() {
                acc.remove("custom");
            } else {
                acc.insert("custom".into(), Value::Object(c));
            }
            state.variables.set(keys::RESOURCES, Value::Object(acc));
        }
    }
    state
}

/// A sum as the reference writes it: whole sums stay JSON integers.
fn whole_or_float(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        if x >= 0.0 {
            Value::from(x as u64)
        } else {
            Value::from(x as i64)
        }
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

/// Edits the payload when it is an object.
fn edit_obj(e: &mut EventEnvelope, f: impl FnOnce(&mut Map<String, Value>)) {
    e.payload.edit(|p| p.as_object_mut().map(f));
}

/// The event as the buggy kernel reads it (`None`: it skips the event).
pub(crate) fn before_fold(bug: Bug, mut e: EventEnvelope) -> Option<EventEnvelope> {
    let ty = e.event_type.clone();
    match bug {
        Bug::UnknownMetadataDropsStamp
            if e.metadata
                .as_ref()
                .is_some_and(|m| m.keys().any(|k| !KNOWN_METADATA_KEYS.contains(&k.as_str()))) =>
        {
            e.metadata = None;
        }
        Bug::DecisionContextDropped if ty == "DECISION_RECORDED" => {
            edit_obj(&mut e, |m| {
                m.remove("context");
                m.remove("policy");
            });
        }
        Bug::AbsentAttemptIsOne if ty == "STEP_STARTED" => {
            edit_obj(&mut e, |m| {
                m.entry("attempt").or_insert(Value::from(1));
            });
        }
        Bug::TypedChannelDropped if ty == "STEP_FAILED" => {
            edit_obj(&mut e, |m| {
                m.remove("channel");
                m.remove("payload");
            });
        }
        Bug::MigratedInputIgnored if ty == "EXECUTION_MIGRATED" => {
            edit_obj(&mut e, |m| {
                m.remove("migratedInput");
            });
        }
        Bug::FlowEmitsAppKindsOnly if is_known_event_type(&ty) => {
            if let Some(m) = e.metadata.as_mut() {
                m.remove("flowEmit");
            }
        }
        Bug::KernelStampTruthy => {
            if let Some(m) = e.metadata.as_mut() {
                let truthy = matches!(m.get("kernel"), Some(Value::String(s)) if !s.is_empty())
                    || m.get("kernel")
                        .and_then(Value::as_f64)
                        .is_some_and(|x| x != 0.0);
                if truthy {
                    m.insert("kernel".into(), Value::Bool(true));
                }
            }
        }
        Bug::KernelStampIgnored => {
            let gated = matches!(
                ty.as_str(),
                "EXECUTION_CONTINUED"
                    | "MESSAGE_CONSUMED"
                    | "PARALLEL_COMPLETED"
                    | "INBOX_QUARANTINED"
                    | "INBOX_RELEASED"
            ) || (ty == "EXECUTION_RESUMED" && e.payload.get("waitId").is_some());
            if gated {
                e.metadata
                    .get_or_insert_with(Map::new)
                    .insert("kernel".into(), Value::Bool(true));
            }
        }
        Bug::StepKindDropped if ty == "STEP_STARTED" => {
            edit_obj(&mut e, |m| {
                m.remove("kind");
            });
        }
        Bug::SealedEventSkipped if e.metadata.as_ref().is_some_and(|m| m.contains_key("seal")) => {
            return None;
        }
        Bug::RehomedIgnored if ty == "EVENTS_REHOMED" => return None,
        Bug::AutoReleaseWithoutDeliver if ty == "INBOX_RELEASED" => {
            edit_obj(&mut e, |m| {
                if m.get("auto") == Some(&Value::Bool(true)) && !m.contains_key("deliver") {
                    m.insert("deliver".into(), Value::Bool(true));
                }
            });
        }
        _ => {}
    }
    Some(e)
}

fn set_passthroughs(state: &mut ExecutionState, list: Vec<Value>) {
    state
        .variables
        .set(keys::RESUME_PAYLOADS, Value::Array(list));
}

fn bookkeep(state: &mut ExecutionState, e: &EventEnvelope) {
    state.sequence = Some(e.sequence);
    state.updated_at = Some(e.timestamp_ms);
}

/// The line the buggy kernel has wrong, applied after the reference folded `e`.
pub(crate) fn after_fold(
    bug: Bug,
    before: &ExecutionState,
    state: &mut ExecutionState,
    e: &EventEnvelope,
) {
    let ty = e.event_type.as_str();
    let acted = state != before;
    let step = e.payload.get("stepId").and_then(Value::as_str);
    match bug {
        Bug::PrototypeNamesPresent if ty == "DECISION_RECORDED" => {
            let id = e.payload.get("id").and_then(Value::as_str).unwrap_or("");
            let fresh = before
                .variables
                .decisions
                .as_ref()
                .is_none_or(|d| d.get(id).is_none());
            if fresh && PROTOTYPE_NAMES.contains(&id) {
                if let Some(d) = state.variables.decisions.as_mut() {
                    if let Some(Value::Object(mut entry)) = d.get(id).map(|j| j.to_value()) {
                        entry.remove("seq");
                        d.insert(id.to_owned(), Value::Object(entry).into());
                    }
                }
            }
        }
        Bug::StepFailedFailsExecution if ty == "STEP_FAILED" && state.status == Status::Running => {
            state.status = Status::Failed;
        }
        Bug::ContinuedNotTerminal
            if ty == "EXECUTION_CONTINUED" && state.status == Status::Continued =>
        {
            state.status = before.status;
        }
        Bug::SecondParkedFailureFails
            if ty == "STEP_FAILED"
                && before.status == Status::Suspended
                && before.failed_while_parked() =>
        {
            state.status = Status::Failed;
        }
        Bug::CancelledNotReopened
            if ty == "EXECUTION_RESUMED"
                && e.payload.is_null()
                && before.status == Status::Cancelled =>
        {
            state.status = Status::Cancelled;
        }
        Bug::ResumePayloadsCapped if state.resume_payloads().len() > 3 => {
            let list = state.resume_payloads()[..3].to_vec();
            set_passthroughs(state, list);
        }
        Bug::NullResumeAlwaysPassthrough | Bug::DivergedNullResumePassthrough
            if ty == "EXECUTION_RESUMED"
                && e.payload.is_null()
                && acted
                && state.resume_payloads().len() == before.resume_payloads().len() =>
        {
            let diverged = before.parked_gate() == Some("__loom_diverged__");
            if bug == Bug::NullResumeAlwaysPassthrough || diverged {
                let mut list = state.resume_payloads().to_vec();
                list.push(Value::Null);
                set_passthroughs(state, list);
            }
        }
        Bug::UnparkedResumeDropped
            if ty == "EXECUTION_RESUMED"
                && !e.payload.is_null()
                && before.status != Status::Suspended
                && state.resume_payloads().len() > before.resume_payloads().len() =>
        {
            let mut list = state.resume_payloads().to_vec();
            list.pop();
            set_passthroughs(state, list);
        }
        Bug::WaitAnswerAlsoPassthrough
            if ty == "EXECUTION_RESUMED"
                && e.payload.get("waitId").is_some()
                && state.variables.get(keys::WAIT_ANSWERS)
                    != before.variables.get(keys::WAIT_ANSWERS) =>
        {
            let mut list = state.resume_payloads().to_vec();
            list.push(e.payload.to_value());
            set_passthroughs(state, list);
        }
        Bug::ParkedFailureNotRecorded if ty == "STEP_FAILED" && !before.failed_while_parked() => {
            state.variables.remove(keys::FAILED_WHILE_PARKED);
        }
        Bug::ParkedFailureKeptOnResume
            if ty == "EXECUTION_RESUMED" && before.failed_while_parked() =>
        {
            state
                .variables
                .set(keys::FAILED_WHILE_PARKED, Value::Bool(true));
        }
        Bug::ParkedFailureKeptOnTerminal
            if matches!(
                ty,
                "EXECUTION_COMPLETED" | "EXECUTION_FAILED" | "EXECUTION_CANCELLED"
            ) && before.failed_while_parked() =>
        {
            state
                .variables
                .set(keys::FAILED_WHILE_PARKED, Value::Bool(true));
        }
        Bug::SeqFromPayload if ty == "DECISION_RECORDED" => {
            let id = e.payload.get("id").and_then(Value::as_str);
            let seq = e.payload.get("seq").and_then(Value::as_u64);
            let new = id.is_some_and(|id| {
                before
                    .variables
                    .decisions
                    .as_ref()
                    .and_then(|d| d.get(id))
                    .is_none()
            });
            if let (Some(id), Some(seq), true) = (id, seq, new) {
                set_seq(state, id, seq);
            }
        }
        Bug::SeqLastWins if ty == "DECISION_RECORDED" => {
            if let Some(id) = e.payload.get("id").and_then(Value::as_str) {
                let had_seq = before
                    .variables
                    .decisions
                    .as_ref()
                    .and_then(|d| d.get(id))
                    .and_then(|entry| entry.get("seq"))
                    .is_some();
                if had_seq {
                    set_seq(state, id, e.sequence);
                }
            }
        }
        Bug::RetryingDropsInput if ty == "STEP_RETRYING" => {
            if let Some(f) = step.and_then(|s| state.frames.get_mut(s)) {
                f.input = None;
            }
        }
        Bug::AbsentInputOmitted if ty == "STEP_STARTED" && e.payload.get("input").is_none() => {
            if let Some(f) = step.and_then(|s| state.frames.get_mut(s)) {
                f.input = None;
            }
        }
        Bug::UnknownKindBookkeeping if !is_known_event_type(ty) && !acted => bookkeep(state, e),
        Bug::WakeAtOffByOne | Bug::ParkConditionDropped if ty == "EXECUTION_SUSPENDED" => {
            if let Some(Value::Object(mut park)) = state.variables.get(keys::SUSPENDED_ON).cloned()
            {
                if bug == Bug::ParkConditionDropped {
                    park.remove("condition");
                } else if let Some(w) = park.get("wakeAt").and_then(Value::as_i64) {
                    park.insert("wakeAt".into(), Value::from(w.saturating_add(1)));
                }
                state.variables.set(keys::SUSPENDED_ON, Value::Object(park));
            }
        }
        Bug::WaitsKeyedByTopic if ty == "EXECUTION_SUSPENDED" => {
            if let Some(Value::Array(waits)) = state.variables.get(keys::WAITS).cloned() {
                let topic = |w: &Value| w.get("topic").and_then(Value::as_str).map(str::to_owned);
                let kept: Vec<Value> = waits
                    .iter()
                    .enumerate()
                    .filter(|(i, w)| {
                        topic(w).is_none_or(|t| {
                            !waits[i + 1..]
                                .iter()
                                .any(|later| topic(later).as_deref() == Some(&t))
                        })
                    })
                    .map(|(_, w)| w.clone())
                    .collect();
                state.variables.set(keys::WAITS, Value::Array(kept));
            }
        }
        Bug::LifecycleSeqFromPayload if ty == "EVENTS_REHOMED" && acted => {
            if let (Some(seq), Some(Value::Array(mut list))) = (
                e.payload.get("seq").cloned(),
                state.variables.get(keys::LIFECYCLE).cloned(),
            ) {
                if let Some(Value::Object(last)) = list.last_mut() {
                    last.insert("seq".into(), seq);
                }
                state.variables.set(keys::LIFECYCLE, Value::Array(list));
            }
        }
        Bug::AbsentStartInputOmitted
            if ty == "EXECUTION_STARTED" && acted && e.payload.get("input").is_none() =>
        {
            state.variables.remove(keys::INPUT);
        }
        Bug::AbsentOutputOmitted | Bug::AbsentErrorOmitted => {
            let (kind, field) = if bug == Bug::AbsentOutputOmitted {
                ("STEP_COMPLETED", "output")
            } else {
                ("STEP_FAILED", "error")
            };
            if ty == kind && e.payload.get(field).is_none() {
                if let Some(f) = step.and_then(|s| state.frames.get_mut(s)) {
                    if field == "output" {
                        f.output = None;
                    } else {
                        f.error = None;
                    }
                }
            }
        }
        Bug::ResourceSumsRounded if ty == "RESOURCE_METERED" => {
            if let Some(Value::Object(acc)) = state.variables.get(keys::RESOURCES).cloned() {
                state
                    .variables
                    .set(keys::RESOURCES, Value::Object(rounded(acc)));
            }
        }
        Bug::UnmeteredDimensionsZero if ty == "RESOURCE_METERED" && acted => {
            if let Some(Value::Object(mut acc)) = state.variables.get(keys::RESOURCES).cloned() {
                for d in ["tokens", "costUsd", "ms", "memBytes", "wallMs", "netBytes"] {
                    acc.entry(d).or_insert(Value::from(0));
                }
                state.variables.set(keys::RESOURCES, Value::Object(acc));
            }
        }
        Bug::QuarantineCapPerTopic
            if ty == "INBOX_QUARANTINED"
                && !acted
                && e.metadata.as_ref().and_then(|m| m.get("kernel"))
                    == Some(&Value::Bool(true)) =>
        {
            per_topic_cap(state, e);
        }
        _ => {}
    }
}

fn set_seq(state: &mut ExecutionState, id: &str, seq: u64) {
    if let Some(d) = state.variables.decisions.as_mut() {
        if let Some(Value::Object(mut entry)) = d.get(id).map(|j| j.to_value()) {
            entry.insert("seq".into(), Value::from(seq));
            d.insert(id.to_owned(), Value::Object(entry).into());
        }
    }
}

fn rounded(map: Map<String, Value>) -> Map<String, Value> {
    map.into_iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Object(m) => Value::Object(rounded(m)),
                Value::Number(n) => {
                    let x = n.as_f64().unwrap_or(0.0);
                    let r = (x * 1e9).round() / 1e9;
                    serde_json::Number::from_f64(r).map_or(Value::Number(n), Value::Number)
                }
                other => other,
            };
            (k, v)
        })
        .collect()
}

/// Holds the message the reference ignored because the total cap was reached, when its
/// own topic's queue is still under the cap.
fn per_topic_cap(state: &mut ExecutionState, e: &EventEnvelope) {
    let (Some(topic), Some(id)) = (
        e.payload.get("topic").and_then(Value::as_str),
        e.payload.get("messageId").and_then(Value::as_str),
    ) else {
        return;
    };
    let mut all = match state.variables.get(keys::QUARANTINED) {
        Some(Value::Object(m)) => m.clone(),
        _ => return,
    };
    let total: usize = all.values().filter_map(Value::as_array).map(Vec::len).sum();
    let queue = all.entry(topic).or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(queue) = queue else { return };
    let held = queue
        .iter()
        .any(|x| x.get("messageId").and_then(Value::as_str) == Some(id));
    if total < QUARANTINED_ENTRIES_MAX || held || queue.len() >= QUARANTINED_ENTRIES_MAX {
        return;
    }
    let mut entry = Map::new();
    entry.insert("messageId".into(), Value::String(id.to_owned()));
    entry.insert("seq".into(), Value::from(e.sequence));
    queue.push(Value::Object(entry));
    state.variables.set(keys::QUARANTINED, Value::Object(all));
    bookkeep(state, e);
}

/// `normalizeSnapshot` as a kernel with `bug` does it.
pub fn normalized(bug: Option<Bug>, record: &SnapshotRecord) -> Result<ExecutionState, String> {
    match bug {
        Some(Bug::NormalizeSkipped) => ExecutionState::from_value(&record.state),
        Some(Bug::NormalizeKeepsSettledInput) => {
            let mut state = normalize_snapshot_state(record).map_err(|e| e.to_string())?;
            let frames = record.state.get("frames").and_then(Value::as_object);
            for (id, frame) in state.frames.iter_mut() {
                let input = frames
                    .and_then(|f| f.get(id))
                    .and_then(|f| f.get("input"))
                    .cloned();
                if frame.status.is_settled() && frame.status != FrameStatus::Running {
                    if let Some(input) = input {
                        frame.input = Some(input.into());
                    }
                }
            }
            Ok(state)
        }
        Some(Bug::NormalizeInventsSeq) => {
            let mut state = normalize_snapshot_state(record).map_err(|e| e.to_string())?;
            if let Some(d) = state.variables.decisions.as_mut() {
                let ids: Vec<String> = d.iter().map(|(id, _)| id.to_owned()).collect();
                for id in ids {
                    if let Some(Value::Object(mut entry)) = d.get(&id).map(|j| j.to_value()) {
                        if !entry.contains_key("seq") {
                            entry.insert("seq".into(), Value::from(record.sequence));
                            d.insert(id, Value::Object(entry).into());
                        }
                    }
                }
            }
            Ok(state)
        }
        Some(
            bug @ (Bug::NormalizeStatusFixMisses120
            | Bug::NormalizeStatusFixIncludes121
            | Bug::NormalizeInputStripMisses125),
        ) => {
            // A version boundary one minor off: the snapshot is normalized as if the
            // fold of the neighbouring minor had written it.
            let (from, as_if) = match bug {
                Bug::NormalizeStatusFixMisses120 => ("1.20.", "1.21.0"),
                Bug::NormalizeStatusFixIncludes121 => ("1.21.", "1.20.0"),
                _ => ("1.25.", "1.26.0"),
            };
            let mut shifted = record.clone();
            if shifted.schema_version.starts_with(from) {
                shifted.schema_version = as_if.to_string();
            }
            normalize_snapshot_state(&shifted).map_err(|e| e.to_string())
        }
        _ => normalize_snapshot_state(record).map_err(|e| e.to_string()),
    }
}

/// Whether the restore folds a tail event of sequence `seq` after a snapshot at `k`.
pub fn folds_tail_event(bug: Option<Bug>, seq: u64, k: u64) -> bool {
    if bug == Some(Bug::RestoreTailOffByOne) {
        seq >= k
    } else {
        seq > k
    }
}

/// Removes every `seq` from the answer's `_decisions` ([`Bug::NoSeq`]).
pub fn strip_seq(v: &mut Value) {
    if let Some(Value::Object(d)) = v.pointer_mut("/variables/_decisions") {
        for entry in d.values_mut() {
            if let Value::Object(e) = entry {
                e.remove("seq");
            }
        }
    }
}
