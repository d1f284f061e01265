//! One handler per event kind. Each reads only its envelope and the prior state.

use super::fields::{fields_view, has_fast_handler, of_payload};
use super::raw::{apply_view, Fast};
use super::state::{keys, Frame, FrameStatus, Status};
use super::{
    is_known_event_type, DiagnosticKind, DiagnosticSink, ExecutionState, FoldDiagnostic,
    FoldVersion, DIVERGED_GATE, INDOUBT_GATE, PROTO_KEY,
};
use crate::envelope::EventEnvelope;
use crate::json::Json;
use crate::limits::{QUARANTINED_ENTRIES_MAX, RESOURCE_CUSTOM_KEYS_MAX};
use serde_json::{Map, Value};

/// The resource dimensions (RES-03). `custom` is a payload field, not a dimension.
pub const RESOURCE_DIMENSIONS: [&str; 6] =
    ["tokens", "costUsd", "ms", "memBytes", "wallMs", "netBytes"];

/// Unwraps a handler's precondition (an object payload, a usable key) or returns the
/// inert outcome that explains why the envelope does nothing.
macro_rules! require {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(outcome) => return outcome,
        }
    };
}

/// What a handler did with its envelope.
enum Outcome {
    /// The handler changed the state: bookkeeping moves.
    Acted,
    /// The envelope is inert (already reported, or nothing to report).
    Inert,
    /// The envelope is inert for this reason.
    Ignored(DiagnosticKind),
}

struct Ctx<'a> {
    index: usize,
    sequence: u64,
    event_type: &'a str,
    sink: &'a mut dyn DiagnosticSink,
}

impl Ctx<'_> {
    fn report(&mut self, kind: DiagnosticKind) {
        self.sink.push(FoldDiagnostic {
            index: self.index,
            sequence: self.sequence,
            event_type: self.event_type.to_owned(),
            kind,
        });
    }
}

/// Which handlers fold a decoded envelope.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Handlers {
    /// A hot kind's payload (`STEP_STARTED`, `STEP_COMPLETED`, `DECISION_RECORDED`,
    /// `EXECUTION_SUSPENDED`) is read in place from its normal text by the fast handlers
    /// the text path uses (`raw::apply_view`), when they can act exactly as the handlers
    /// here would.
    Fast,
    /// Every known kind's payload is built as a tree for the handlers here: the
    /// reference the fast ones are held to (`fold::fold_general_with_diagnostics`).
    GeneralOnly,
}

/// Folds one envelope. An unknown kind's payload is never read (FOLD-04); a known kind's
/// is read by the fast handlers where `handlers` allows and they can, else built as a
/// tree for the handlers below. Nothing of the envelope is copied but what the state
/// keeps.
pub(super) fn apply(
    state: &mut ExecutionState,
    event: &EventEnvelope,
    index: usize,
    v: FoldVersion,
    sink: &mut dyn DiagnosticSink,
    handlers: Handlers,
) {
    let head = Head {
        event_type: &event.event_type,
        sequence: event.sequence,
        timestamp_ms: event.timestamp_ms,
        index,
    };
    let metadata = event.metadata.as_ref();
    if !is_known_event_type(&event.event_type) {
        apply_parts(state, head, Value::Null, metadata, v, sink);
        return;
    }
    // A known kind's metadata (a kernel stamp, a `flowEmit`) is the general handler's.
    if handlers == Handlers::Fast && metadata.is_none() {
        if let Some(Fast::Done) = fast(state, event, v) {
            bookkeep(state, event.sequence, event.timestamp_ms);
            return;
        }
    }
    apply_parts(state, head, event.payload.to_value(), metadata, v, sink);
}

/// The fast handlers on a decoded envelope's payload text: `None` or `General` (nothing
/// changed) when the payload is not the object a fast handler reads (more fields than
/// the scan records, a `__proto__` key at any depth, nesting deeper than the scan reads)
/// or the kind has none.
fn fast(state: &mut ExecutionState, event: &EventEnvelope, v: FoldVersion) -> Option<Fast> {
    // The kind first: a payload no fast handler reads is not scanned.
    if !has_fast_handler(&event.event_type) {
        return None;
    }
    let fields = of_payload(event.payload.as_str()).filter(|f| !f.overflow)?;
    let view = fields_view(&event.event_type, &fields)?;
    apply_view(state, view, event.sequence, v).ok()
}

/// An envelope's fields other than its payload and metadata, as the handlers read them.
#[derive(Clone, Copy)]
pub(super) struct Head<'a> {
    pub event_type: &'a str,
    pub sequence: u64,
    pub timestamp_ms: i64,
    /// The envelope's position in the folded log, for diagnostics.
    pub index: usize,
}

/// [`apply`] of an envelope given in parts: the envelope's identity strings are not
/// needed, so the text path (`raw`) calls this without building them.
pub(super) fn apply_parts(
    state: &mut ExecutionState,
    head: Head<'_>,
    mut payload: Value,
    metadata: Option<&Map<String, Value>>,
    v: FoldVersion,
    sink: &mut dyn DiagnosticSink,
) {
    let Head {
        event_type,
        sequence,
        timestamp_ms,
        index,
    } = head;
    let mut cx = Ctx {
        index,
        sequence,
        event_type,
        sink,
    };
    let kernel = matches!(
        metadata.and_then(|m| m.get("kernel")),
        Some(Value::Bool(true))
    );

    // FOLD-19: a stamp counts on ANY envelope, known kind or not.
    let mut acted = false;
    if v.has(19) {
        if let Some(Value::String(d)) = metadata.and_then(|m| m.get("flowEmit")) {
            acted = count_flow_emit(state, d);
        }
    }

    if !is_known_event_type(event_type) {
        // FOLD-04: an unknown kind is inert.
        if acted {
            bookkeep(state, sequence, timestamp_ms);
        }
        return;
    }

    let dropped = scrub_proto(&mut payload);
    if dropped > 0 {
        cx.report(DiagnosticKind::ProtoKeysDropped(dropped));
    }

    let meta = metadata;
    let outcome = match event_type {
        "EXECUTION_STARTED" => execution_started(state, payload, timestamp_ms, meta, v),
        "EXECUTION_SUSPENDED" => execution_suspended(state, payload, v),
        "EXECUTION_RESUMED" => execution_resumed(state, payload, kernel, v),
        "EXECUTION_COMPLETED" => {
            execution_ended(state, Status::Completed, payload, "output", keys::OUTPUT)
        }
        "EXECUTION_FAILED" => execution_ended(state, Status::Failed, payload, "error", keys::ERROR),
        "EXECUTION_CANCELLED" => execution_ended(state, Status::Cancelled, payload, "", ""),
        "EXECUTION_CONTINUED" => gated(v, 23, kernel, |_| execution_continued(state, payload)),
        "EXECUTION_MIGRATED" => execution_migrated(state, payload, v),
        "STEP_STARTED" => step_started(state, payload),
        "STEP_RETRYING" => step_retrying(state, payload),
        "STEP_COMPLETED" => step_settled(state, payload, FrameStatus::Completed, v),
        "STEP_FAILED" => step_settled(state, payload, FrameStatus::Failed, v),
        "STEP_CANCELLED" => step_settled(state, payload, FrameStatus::Cancelled, v),
        "EFFECT_INDOUBT" => effect_indoubt(state, payload),
        "DECISION_RECORDED" => decision_recorded(state, payload, sequence, kernel, v),
        "RESOURCE_METERED" => resource_metered(state, payload, v),
        "EVENTS_REHOMED" => {
            if v.has(22) {
                events_rehomed(state, payload, sequence)
            } else {
                Outcome::Ignored(DiagnosticKind::NotYetKnown)
            }
        }
        "PARALLEL_COMPLETED" => {
            // Before 1.23 (and unstamped since) the kind has no payload handler.
            if v.has(23) && kernel {
                parallel_completed(state, payload)
            } else {
                Outcome::Inert
            }
        }
        "MESSAGE_CONSUMED" => gated(v, 23, kernel, |v| message_consumed(state, payload, v)),
        "INBOX_QUARANTINED" => gated(v, 25, kernel, |_| {
            inbox_quarantined(state, payload, sequence)
        }),
        "INBOX_RELEASED" => gated(v, 25, kernel, |_| inbox_released(state, payload)),
        // Known kinds with no fold effect: audit facts and ingress-only kinds.
        _ => Outcome::Inert,
    };
    match outcome {
        Outcome::Acted => acted = true,
        Outcome::Inert => {}
        Outcome::Ignored(kind) => cx.report(kind),
    }
    if acted {
        bookkeep(state, sequence, timestamp_ms);
    }
}

/// Counts a `metadata.flowEmit` stamp of digest `d` (FOLD-19); whether it counted (a
/// `__proto__` digest does not).
pub(super) fn count_flow_emit(state: &mut ExecutionState, d: &str) -> bool {
    if d == PROTO_KEY {
        return false;
    }
    let counts = state.variables.object_mut(keys::FLOW_EMITS);
    // One walk of the counts (an entry): a long log stamps a new digest per turn, so the
    // map grows with the log. The digest's copy is cheaper than a second walk.
    match counts.entry(d.to_owned()) {
        // Saturating, as every counter below: a count or attempt at u64::MAX (a hostile
        // payload or snapshot) stays there instead of overflowing, so debug and release
        // builds fold alike. Its double, 2^64, is also what a JavaScript kernel's `n + 1`
        // gives (decision 0002: numbers compare as doubles).
        serde_json::map::Entry::Occupied(mut slot) => {
            let n = slot.get().as_u64().unwrap_or(0).saturating_add(1);
            slot.insert(Value::from(n));
        }
        serde_json::map::Entry::Vacant(slot) => {
            slot.insert(Value::from(1u64));
        }
    }
    true
}

pub(super) fn bookkeep(state: &mut ExecutionState, sequence: u64, timestamp_ms: i64) {
    state.sequence = Some(sequence);
    state.updated_at = Some(timestamp_ms);
}

/// A kind introduced at `since` that folds only from kernel-stamped envelopes.
fn gated(
    v: FoldVersion,
    since: u32,
    kernel: bool,
    f: impl FnOnce(FoldVersion) -> Outcome,
) -> Outcome {
    if !v.has(since) {
        Outcome::Ignored(DiagnosticKind::NotYetKnown)
    } else if !kernel {
        Outcome::Ignored(DiagnosticKind::NotKernelStamped)
    } else {
        f(v)
    }
}

/// Drops every `__proto__` key at every depth (FOLD-05, GAP-11); returns how many.
pub fn scrub_proto(value: &mut Value) -> usize {
    match value {
        Value::Object(map) => {
            let mut n = usize::from(map.remove(PROTO_KEY).is_some());
            for v in map.values_mut() {
                n += scrub_proto(v);
            }
            n
        }
        Value::Array(items) => items.iter_mut().map(scrub_proto).sum(),
        _ => 0,
    }
}

/// A payload field the state keeps (`null` when absent), as the tree it came as.
fn kept(field: Option<Value>) -> Json {
    field.map_or_else(Json::null, Json::tree)
}

fn invalid(why: impl Into<String>) -> Outcome {
    Outcome::Ignored(DiagnosticKind::InvalidPayload(why.into()))
}

fn take_object(payload: Value, kind: &str) -> Result<Map<String, Value>, Outcome> {
    match payload {
        Value::Object(m) => Ok(m),
        _ => Err(invalid(format!("{kind} payload must be an object"))),
    }
}

/// A usable map key: a non-empty string that is not `__proto__`.
fn key_field(m: &Map<String, Value>, field: &str) -> Result<String, Outcome> {
    match m.get(field) {
        Some(Value::String(s)) if !s.is_empty() && s != PROTO_KEY => Ok(s.clone()),
        Some(Value::String(s)) if s == PROTO_KEY => Err(invalid(format!(
            "`{field}` must not be `__proto__` (FOLD-05)"
        ))),
        _ => Err(invalid(format!("`{field}` must be a non-empty string"))),
    }
}

fn end_park(state: &mut ExecutionState) {
    state.variables.remove(keys::SUSPENDED_ON);
    state.variables.remove(keys::FAILED_WHILE_PARKED);
}

fn execution_started(
    state: &mut ExecutionState,
    payload: Value,
    timestamp_ms: i64,
    meta: Option<&Map<String, Value>>,
    v: FoldVersion,
) -> Outcome {
    let mut m = require!(take_object(payload, "EXECUTION_STARTED"));
    state.status = Status::Running;
    state.started_at = Some(timestamp_ms);
    state
        .variables
        .set(keys::INPUT, m.remove("input").unwrap_or(Value::Null));
    if let Some(Value::String(h)) = m.remove("flowHash") {
        state.variables.set(keys::FLOW_HASH, Value::String(h));
    }
    if v.has(23) {
        for (field, key) in [
            ("principal", keys::PRINCIPAL),
            ("parent", keys::PARENT),
            ("chain", keys::CHAIN),
            ("codeHash", keys::CODE_HASH),
        ] {
            if let Some(value) = m.remove(field).filter(|x| !x.is_null()) {
                state.variables.set(key, value);
            }
        }
        // GAP-19: fork metadata fills lineage the payload does not state.
        if let Some(meta) = meta {
            if !state.variables.contains(keys::CHAIN) {
                if let Some(chain @ Value::Array(_)) = meta.get("forkChain") {
                    let mut chain = chain.clone();
                    scrub_proto(&mut chain);
                    state.variables.set(keys::CHAIN, chain);
                }
            }
            if !state.variables.contains(keys::PARENT) {
                if let Some(Value::String(by)) = meta.get("forkedBy") {
                    state.variables.set(keys::PARENT, Value::String(by.clone()));
                }
            }
        }
        if let Some(carry) = m.remove("carry") {
            if let Some((resources, inbox)) = validate_carry(&carry) {
                if let Some(r) = resources {
                    state.variables.set(keys::RESOURCES, r);
                }
                if let Some(i) = inbox {
                    state.variables.set(keys::INBOX, i);
                }
            }
        }
    }
    if v.has(25) {
        if let Some(q) = m
            .get("continuedFrom")
            .and_then(|c| c.get("carried"))
            .and_then(|c| c.get("quarantined"))
            .filter(|q| valid_quarantine(q))
        {
            state.variables.set(keys::QUARANTINED, q.clone());
        }
    }
    Outcome::Acted
}

/// A carry seeds `_resources` and `_inbox` only when all of it is valid (GAP-18):
/// `resources` maps dimensions (and `custom`) to finite non-negative numbers; `inbox`
/// maps topics to `{ consumed: n, lastMessageId? }`.
fn validate_carry(carry: &Value) -> Option<(Option<Value>, Option<Value>)> {
    let c = carry.as_object()?;
    if c.keys().any(|k| k != "resources" && k != "inbox") {
        return None;
    }
    let resources = match c.get("resources") {
        None => None,
        Some(Value::Object(r)) => {
            for (k, val) in r {
                if k == "custom" {
                    let custom = val.as_object()?;
                    if custom.len() > RESOURCE_CUSTOM_KEYS_MAX
                        || !custom.values().all(nonneg_number)
                    {
                        return None;
                    }
                } else if !RESOURCE_DIMENSIONS.contains(&k.as_str()) || !nonneg_number(val) {
                    return None;
                }
            }
            Some(Value::Object(r.clone()))
        }
        Some(_) => return None,
    };
    let inbox = match c.get("inbox") {
        None => None,
        Some(Value::Object(i)) => {
            for entry in i.values() {
                let e = entry.as_object()?;
                e.get("consumed").and_then(Value::as_u64)?;
                if e.keys().any(|k| k != "consumed" && k != "lastMessageId") {
                    return None;
                }
                if e.get("lastMessageId").is_some_and(|m| !m.is_string()) {
                    return None;
                }
            }
            Some(Value::Object(i.clone()))
        }
        Some(_) => return None,
    };
    Some((resources, inbox))
}

fn nonneg_number(v: &Value) -> bool {
    v.as_f64().is_some_and(|x| x.is_finite() && x >= 0.0)
}

fn execution_suspended(state: &mut ExecutionState, payload: Value, v: FoldVersion) -> Outcome {
    let mut m = require!(take_object(payload, "EXECUTION_SUSPENDED"));
    let on = match m.get("on") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return invalid("`on` must be a non-empty string (the gate)"),
    };
    let mut park = Map::new();
    park.insert("on".into(), Value::String(on));
    if let Some(w) = m.remove("wakeAt").filter(|w| w.is_i64() || w.is_u64()) {
        park.insert("wakeAt".into(), w);
    }
    if let Some(c) = m.remove("condition").filter(Value::is_object) {
        park.insert("condition".into(), c);
    }
    state.status = Status::Suspended;
    state.variables.remove(keys::FAILED_WHILE_PARKED);
    state.variables.set(keys::SUSPENDED_ON, Value::Object(park));
    if v.has(23) {
        match m.remove("waits") {
            Some(w @ Value::Array(_)) => state.variables.set(keys::WAITS, w),
            _ => {
                state.variables.remove(keys::WAITS);
            }
        }
    }
    Outcome::Acted
}

fn execution_resumed(
    state: &mut ExecutionState,
    payload: Value,
    kernel: bool,
    v: FoldVersion,
) -> Outcome {
    // FOLD-28 / GAP-23: a kernel-stamped, wait-addressed resume answers a wait, not a gate.
    let wait_id = match &payload {
        Value::Object(m) if v.has(23) && kernel => match m.get("waitId") {
            Some(Value::String(w)) if w != PROTO_KEY => Some(w.clone()),
            _ => None,
        },
        _ => None,
    };
    if let Some(wait_id) = wait_id {
        let answer = payload.get("answer").cloned().unwrap_or(Value::Null);
        state
            .variables
            .object_mut(keys::WAIT_ANSWERS)
            .insert(wait_id, answer);
    } else if v.has(16) {
        let passthrough = if payload.is_null() && v.has(20) {
            // GAP-34: a null answers a gate only at an ordinary park with no parked failure.
            let gate = state.parked_gate();
            state.status == Status::Suspended
                && gate != Some(INDOUBT_GATE)
                && !(v.has(23) && gate == Some(DIVERGED_GATE))
                && !state.failed_while_parked()
        } else {
            true
        };
        if passthrough {
            state
                .variables
                .array_mut(keys::RESUME_PAYLOADS)
                .push(payload);
        }
    }
    state.status = Status::Running;
    end_park(state);
    Outcome::Acted
}

fn execution_ended(
    state: &mut ExecutionState,
    status: Status,
    payload: Value,
    field: &str,
    key: &str,
) -> Outcome {
    if !field.is_empty() {
        if let Value::Object(mut m) = payload {
            if let Some(value) = m.remove(field) {
                state.variables.set(key, value);
            }
        }
    }
    state.status = status;
    end_park(state);
    Outcome::Acted
}

fn execution_continued(state: &mut ExecutionState, payload: Value) -> Outcome {
    let to = match payload.get("continuedTo") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return invalid("`continuedTo` must be a non-empty string"),
    };
    state.status = Status::Continued;
    state.variables.set(keys::CONTINUED_TO, Value::String(to));
    end_park(state);
    Outcome::Acted
}

fn execution_migrated(state: &mut ExecutionState, payload: Value, v: FoldVersion) -> Outcome {
    let mut m = match payload {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        _ => return invalid("EXECUTION_MIGRATED payload must be an object"),
    };
    if v.has(15) {
        if let Some(input) = m.remove("migratedInput") {
            state.variables.set(keys::INPUT, input);
        }
    }
    if v.has(23) {
        if let Some(Value::String(h)) = m.remove("toCodeHash") {
            state.variables.set(keys::CODE_HASH, Value::String(h));
        }
    }
    Outcome::Acted
}

fn step_started(state: &mut ExecutionState, payload: Value) -> Outcome {
    let mut m = require!(take_object(payload, "STEP_STARTED"));
    let step_id = require!(key_field(&m, "stepId"));
    let explicit = m.get("attempt").and_then(Value::as_u64);
    let mut frame = Frame::new(FrameStatus::Running, 0);
    frame.tool_id = m.get("toolId").and_then(Value::as_str).map(str::to_owned);
    frame.kind = m.get("kind").and_then(Value::as_str).map(str::to_owned);
    frame.input = Some(kept(m.remove("input")));
    start_frame(state, step_id, frame, explicit);
    Outcome::Acted
}

/// `STEP_STARTED`'s frame goes in under its step id, its attempt the payload's or one
/// more than the frame it replaces (1 for a new step).
pub(super) fn start_frame(
    state: &mut ExecutionState,
    step_id: String,
    mut frame: Frame,
    explicit: Option<u64>,
) {
    // One walk of the frame map (an entry, not a lookup and then an insert): in a long
    // log with a step per turn the map holds every step, and each walk is a chain of
    // cache misses over string keys (docs/performance.md, "Parse + fold").
    match state.frames.entry(step_id) {
        std::collections::btree_map::Entry::Occupied(mut slot) => {
            frame.attempt = explicit.unwrap_or(slot.get().attempt.saturating_add(1));
            slot.insert(frame);
        }
        std::collections::btree_map::Entry::Vacant(slot) => {
            frame.attempt = explicit.unwrap_or(1);
            slot.insert(frame);
        }
    }
}

fn step_retrying(state: &mut ExecutionState, payload: Value) -> Outcome {
    let m = require!(take_object(payload, "STEP_RETRYING"));
    let step_id = require!(key_field(&m, "stepId"));
    let frame = state
        .frames
        .entry(step_id)
        .or_insert_with(|| Frame::new(FrameStatus::Retrying, 1));
    frame.status = FrameStatus::Retrying;
    if let Some(a) = m.get("attempt").and_then(Value::as_u64) {
        frame.attempt = a;
    }
    Outcome::Acted
}

fn step_settled(
    state: &mut ExecutionState,
    payload: Value,
    status: FrameStatus,
    v: FoldVersion,
) -> Outcome {
    let mut m = require!(take_object(payload, "STEP_*"));
    let step_id = require!(key_field(&m, "stepId"));
    let frame = state
        .frames
        .entry(step_id)
        .or_insert_with(|| Frame::new(status, 1));
    frame.status = status;
    frame.output = None;
    frame.error = None;
    frame.error_channel = None;
    frame.error_payload = None;
    match status {
        FrameStatus::Completed => frame.output = Some(kept(m.remove("output"))),
        FrameStatus::Failed => {
            frame.error = Some(kept(m.remove("error")));
            if v.has(17) {
                if let Some(Value::String(channel)) = m.remove("channel") {
                    frame.error_channel = Some(channel);
                    frame.error_payload = Some(kept(m.remove("payload")));
                }
            }
        }
        _ => {}
    }
    if v.has(26) {
        frame.input = None;
    }
    if status == FrameStatus::Failed {
        if v.has(21) {
            // FOLD-09/FOLD-10: never fails the execution; a parked failure is remembered.
            if state.status == Status::Suspended {
                state
                    .variables
                    .set(keys::FAILED_WHILE_PARKED, Value::Bool(true));
            }
        } else if matches!(state.status, Status::Running | Status::Suspended) {
            // Before 1.21.0 a step failure moved a live execution to failed.
            state.status = Status::Failed;
        }
    }
    Outcome::Acted
}

fn effect_indoubt(state: &mut ExecutionState, payload: Value) -> Outcome {
    let m = require!(take_object(payload, "EFFECT_INDOUBT"));
    let step_id = require!(key_field(&m, "stepId"));
    let frame = state
        .frames
        .entry(step_id)
        .or_insert_with(|| Frame::new(FrameStatus::Indoubt, 1));
    frame.status = FrameStatus::Indoubt;
    if let Some(a) = m.get("attempt").and_then(Value::as_u64) {
        frame.attempt = a;
    }
    Outcome::Acted
}

fn decision_recorded(
    state: &mut ExecutionState,
    payload: Value,
    sequence: u64,
    kernel: bool,
    v: FoldVersion,
) -> Outcome {
    let mut m = require!(take_object(payload, "DECISION_RECORDED"));
    let id = require!(key_field(&m, "id"));
    let Some(choice) = m.remove("choice") else {
        return invalid("`choice` is missing");
    };
    let mut entry = Map::new();
    entry.insert("choice".into(), choice);
    if v.has(18) {
        for field in ["context", "policy"] {
            if let Some(x) = m.remove(field) {
                entry.insert(field.into(), x);
            }
        }
    }
    if v.has(23) && kernel {
        if let Some(x) = m.remove("innerSteps") {
            entry.insert("innerSteps".into(), x);
        }
    }
    let decisions = state
        .variables
        .decisions
        .get_or_insert_with(Default::default);
    decisions.upsert(id, |prev| {
        if v.has(24) {
            // FOLD-38: the FIRST envelope's sequence; a repeat keeps it, and a legacy
            // entry without one never gains one (SNAP-07).
            let seq = match prev {
                Some(prev) => prev.get("seq"),
                None => Some(Value::from(sequence)),
            };
            if let Some(seq) = seq {
                entry.insert("seq".into(), seq);
            }
        }
        Json::tree(Value::Object(entry))
    });
    Outcome::Acted
}

fn resource_metered(state: &mut ExecutionState, payload: Value, v: FoldVersion) -> Outcome {
    let m = require!(take_object(payload, "RESOURCE_METERED"));
    let measured: Vec<(&str, f64)> = RESOURCE_DIMENSIONS
        .iter()
        .filter_map(|d| m.get(*d).and_then(Value::as_f64).map(|x| (*d, x)))
        .collect();
    let custom: Vec<(String, f64)> = if v.has(23) {
        m.get("custom")
            .and_then(Value::as_object)
            .map(|c| {
                c.iter()
                    .filter(|(k, _)| *k != PROTO_KEY)
                    .filter_map(|(k, x)| x.as_f64().map(|x| (k.clone(), x)))
                    .collect()
            })
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    if measured.is_empty() && custom.is_empty() {
        return invalid("no measured dimension");
    }
    let acc = state.variables.object_mut(keys::RESOURCES);
    for (d, x) in measured {
        add_number(acc, d, x);
    }
    if !custom.is_empty() {
        let slot = acc
            .entry("custom")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(c) = slot {
            for (k, x) in custom {
                if c.contains_key(&k) || c.len() < RESOURCE_CUSTOM_KEYS_MAX {
                    add_number(c, &k, x);
                }
            }
        }
    }
    Outcome::Acted
}

/// Sums into a JSON number; whole results stay integers so bytes match a JS fold.
fn add_number(map: &mut Map<String, Value>, key: &str, x: f64) {
    let prev = map.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    map.insert(key.to_owned(), number(prev + x));
}

pub(crate) fn number(x: f64) -> Value {
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

fn events_rehomed(state: &mut ExecutionState, payload: Value, sequence: u64) -> Outcome {
    let mut m = require!(take_object(payload, "EVENTS_REHOMED"));
    m.insert("seq".into(), Value::from(sequence));
    state
        .variables
        .array_mut(keys::LIFECYCLE)
        .push(Value::Object(m));
    Outcome::Acted
}

fn parallel_completed(state: &mut ExecutionState, payload: Value) -> Outcome {
    let mut m = require!(take_object(payload, "PARALLEL_COMPLETED"));
    let scope = require!(key_field(&m, "scopeId"));
    m.remove("scopeId");
    state
        .variables
        .object_mut(keys::SCOPES)
        .insert(scope, Value::Object(m));
    Outcome::Acted
}

fn message_consumed(state: &mut ExecutionState, payload: Value, v: FoldVersion) -> Outcome {
    let mut m = require!(take_object(payload, "MESSAGE_CONSUMED"));
    let topic = require!(key_field(&m, "topic"));
    let message_id = require!(key_field(&m, "messageId"));
    let inbox = state.variables.object_mut(keys::INBOX);
    let consumed = inbox
        .get(&topic)
        .and_then(|t| t.get("consumed"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let mut cursor = Map::new();
    cursor.insert("consumed".into(), Value::from(consumed.saturating_add(1)));
    cursor.insert("lastMessageId".into(), Value::String(message_id.clone()));
    inbox.insert(topic.clone(), Value::Object(cursor));
    if let Some(Value::String(wait_id)) = m.remove("waitId") {
        if wait_id != PROTO_KEY {
            let message = m.remove("message").unwrap_or(Value::Null);
            state
                .variables
                .object_mut(keys::WAIT_ANSWERS)
                .insert(wait_id, message);
        }
    }
    // FOLD-44 (1.25.0): drop the delivered released entry, only when quarantine state exists.
    if v.has(25) && state.variables.contains(keys::QUARANTINED) {
        let q = state.variables.object_mut(keys::QUARANTINED);
        let mut emptied = false;
        if let Some(Value::Array(queue)) = q.get_mut(&topic) {
            let head_matches = queue.first().is_some_and(|e| {
                e.get("messageId").and_then(Value::as_str) == Some(message_id.as_str())
                    && e.get("released").and_then(|r| r.get("deliver")) == Some(&Value::Bool(true))
            });
            if head_matches {
                queue.remove(0);
                emptied = queue.is_empty();
            }
        }
        if emptied {
            q.remove(&topic);
        }
    }
    Outcome::Acted
}

fn quarantine_total(state: &ExecutionState) -> usize {
    state
        .variables
        .get(keys::QUARANTINED)
        .and_then(Value::as_object)
        .map_or(0, |q| {
            q.values().filter_map(Value::as_array).map(Vec::len).sum()
        })
}

fn inbox_quarantined(state: &mut ExecutionState, payload: Value, sequence: u64) -> Outcome {
    let m = require!(take_object(payload, "INBOX_QUARANTINED"));
    let topic = require!(key_field(&m, "topic"));
    let message_id = require!(key_field(&m, "messageId"));
    if quarantine_total(state) >= QUARANTINED_ENTRIES_MAX {
        return Outcome::Ignored(DiagnosticKind::QuarantineCapReached);
    }
    let q = state.variables.object_mut(keys::QUARANTINED);
    let queue = q.entry(topic).or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(queue) = queue {
        if queue
            .iter()
            .any(|e| e.get("messageId").and_then(Value::as_str) == Some(message_id.as_str()))
        {
            return invalid("message is already held on this topic");
        }
        let mut entry = Map::new();
        entry.insert("messageId".into(), Value::String(message_id));
        entry.insert("seq".into(), Value::from(sequence));
        queue.push(Value::Object(entry));
    }
    Outcome::Acted
}

fn inbox_released(state: &mut ExecutionState, payload: Value) -> Outcome {
    let m = require!(take_object(payload, "INBOX_RELEASED"));
    let topic = require!(key_field(&m, "topic"));
    let operator = m.get("operator").is_some_and(|x| !x.is_null());
    let auto = m
        .get("auto")
        .is_some_and(|x| !x.is_null() && x != &Value::Bool(false));
    let deliver = m.get("deliver") == Some(&Value::Bool(true));
    // FOLD-42: exactly one of operator / auto; auto only with deliver (GAP-17).
    if operator == auto {
        return invalid("INBOX_RELEASED must carry exactly one of `operator` and `auto`");
    }
    if auto && !deliver {
        return invalid("`auto` release requires `deliver: true`");
    }
    let by = if operator { "operator" } else { "auto" };
    // Look before touching: a release with nothing to release leaves the state as it
    // was (GAP-12), `_quarantined` included, so no empty map is created here.
    let held = matches!(
        state.variables.get(keys::QUARANTINED).and_then(|q| q.get(&topic)),
        Some(Value::Array(queue)) if !queue.is_empty()
    );
    if !held {
        return invalid("nothing is held on this topic");
    }
    let q = state.variables.object_mut(keys::QUARANTINED);
    let Some(Value::Array(queue)) = q.get_mut(&topic) else {
        return invalid("nothing is held on this topic");
    };
    // The head is the only entry a release can touch (shape `released? held*`).
    let Some(Value::Object(head)) = queue.first_mut() else {
        return invalid("nothing is held on this topic");
    };
    if head.contains_key("released") {
        return invalid("the head entry is already released and awaits delivery");
    }
    if let Some(Value::String(id)) = m.get("messageId") {
        if head.get("messageId").and_then(Value::as_str) != Some(id.as_str()) {
            return invalid("release must name the head entry of the topic (order-preserving)");
        }
    }
    if deliver {
        let mut released = Map::new();
        released.insert("by".into(), Value::String(by.into()));
        released.insert("deliver".into(), Value::Bool(true));
        head.insert("released".into(), Value::Object(released));
    } else {
        // An operator release without delivery discards the hold.
        queue.remove(0);
        if queue.is_empty() {
            q.remove(&topic);
        }
    }
    Outcome::Acted
}

/// Whether a carried `_quarantined` value has the folded shape: topic → queue of
/// entries `released? held*`, at most 1,024 entries in total.
pub fn valid_quarantine(q: &Value) -> bool {
    let Some(topics) = q.as_object() else {
        return false;
    };
    let mut total = 0usize;
    for (topic, queue) in topics {
        if topic == PROTO_KEY {
            return false;
        }
        let Some(queue) = queue.as_array() else {
            return false;
        };
        total += queue.len();
        for (i, e) in queue.iter().enumerate() {
            let Some(e) = e.as_object() else { return false };
            if !e.get("messageId").is_some_and(Value::is_string)
                || !e.get("seq").is_some_and(Value::is_u64)
            {
                return false;
            }
            if e.contains_key("released") && i != 0 {
                return false;
            }
        }
    }
    total <= QUARANTINED_ENTRIES_MAX
}
