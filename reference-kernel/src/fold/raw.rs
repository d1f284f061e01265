//! The fold's text path: envelopes read where they lie in the log text
//! ([`RawEnvelope`]), the hot kinds folded from their payload's raw JSON without
//! building a `Value` tree, the kept values stored as compact text ([`Json`]).
//!
//! It is a fast path of the one fold in `handlers`, not a second fold: each handler here
//! takes an envelope only when it can act exactly as the general handler would, and
//! every other envelope (an unusual payload, a `__proto__` key or a `\u` escape anywhere
//! in it, metadata on a known kind, a kind without a handler here) goes to the general
//! handler (`handlers::apply_parts`) with its payload and metadata built as trees. The
//! property `fold_text(text) == fold(decode_log(text))`, diagnostics and errors
//! included, holds it to that (tests/fold_text.rs, and `loom_props::fold::
//! text_path_agrees`, which the `fold_total` fuzz target runs on every input).

use super::handlers::{apply_parts, bookkeep, count_flow_emit, start_frame, Head};
use super::state::{keys, Frame, FrameStatus, Status};
use super::{is_known_event_type, DiagnosticSink, ExecutionState, FoldVersion, PROTO_KEY};
use crate::envelope::{raw_present, RawEnvelope};
use crate::json::Json;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// What a fast handler did: folded the envelope, or left it to the general handler.
pub(super) enum Fast {
    Done,
    General,
}

/// Folds one raw envelope: at once when a fast handler takes it, else through the
/// general handler with its payload (and metadata) built as trees. `Err` (nothing
/// folded) only when its raw text does not parse, which a `RawEnvelope::read` result
/// always does.
pub(super) fn apply_raw(
    state: &mut ExecutionState,
    raw: &RawEnvelope<'_>,
    index: usize,
    v: FoldVersion,
    sink: &mut dyn DiagnosticSink,
) -> Result<(), serde_json::Error> {
    let kind = raw.event_type.as_ref();
    let head = Head {
        event_type: kind,
        sequence: raw.sequence,
        timestamp_ms: raw.timestamp_ms,
        index,
    };
    let known = is_known_event_type(kind);
    if !known {
        // FOLD-04: an unknown kind is inert and its payload never read; only a
        // `flowEmit` stamp counts (FOLD-19).
        if let Some(meta) = raw.metadata.filter(|_| v.has(19)) {
            match serde_json::from_str::<Stamp>(meta.get()) {
                Ok(Stamp { flow_emit: Some(d) }) => {
                    if count_flow_emit(state, &d) {
                        bookkeep(state, raw.sequence, raw.timestamp_ms);
                    }
                }
                Ok(Stamp { flow_emit: None }) => {}
                // A repeated or non-string `flowEmit`: as the general handler reads it.
                Err(_) => {
                    let meta: Map<String, Value> = serde_json::from_str(meta.get())?;
                    apply_parts(state, head, Value::Null, Some(&meta), v, sink);
                }
            }
        }
        return Ok(());
    }
    if raw.metadata.is_none() && proto_free(raw.payload) {
        let done = match raw_view(kind, raw.payload) {
            Some(view) => apply_view(state, view, raw.sequence, v)?,
            None => Fast::General,
        };
        if let Fast::Done = done {
            bookkeep(state, raw.sequence, raw.timestamp_ms);
            return Ok(());
        }
    }
    let payload: Value = serde_json::from_str(raw.payload.get())?;
    let meta: Option<Map<String, Value>> = raw
        .metadata
        .map(|m| serde_json::from_str(m.get()))
        .transpose()?;
    apply_parts(state, head, payload, meta.as_ref(), v, sink);
    Ok(())
}

/// The one metadata field an unknown kind folds.
#[derive(Deserialize)]
struct Stamp<'a> {
    #[serde(rename = "flowEmit", default, borrow)]
    flow_emit: Option<Cow<'a, str>>,
}

/// Whether a payload's text can hold no `__proto__` key at any depth, so the general
/// handler's scrub would drop nothing and report nothing (FOLD-05). A key spelled with
/// `\u` escapes could still be one, so any `\u` sends the envelope the general way.
fn proto_free(payload: &RawValue) -> bool {
    let text = payload.get();
    !text.contains(PROTO_KEY) && !text.contains("\\u")
}

/// A payload field's JSON text, and whether it is already known to be in normal form
/// (the wire path scanned it so; the raw path's text is checked when it is kept).
#[derive(Clone, Copy)]
pub(super) struct Text<'a> {
    pub text: &'a str,
    pub normal: bool,
}

impl<'a> Text<'a> {
    fn raw(r: &'a RawValue) -> Text<'a> {
        Text {
            text: r.get(),
            normal: false,
        }
    }
}

/// A kept field's value as compact text: the raw text itself when it is already in
/// normal form, else its tree printed (`null` when the field is absent).
fn kept(raw: Option<Text<'_>>) -> Result<Json, ()> {
    match raw {
        None => Ok(Json::from_value(&Value::Null)),
        Some(Text { text, normal: true }) => Ok(Json::from_scanned_normal_text(text)),
        Some(Text { text, .. }) => match Json::from_normal_text(text) {
            Some(j) => Ok(j),
            None => serde_json::from_str::<Value>(text)
                .map(|v| Json::from_value(&v))
                .map_err(drop),
        },
    }
}

/// A field's value as normal-form text: the text itself when it already is (no copy),
/// else its tree printed.
fn kept_text(raw: Text<'_>) -> Result<Cow<'_, str>, ()> {
    if raw.normal || crate::json::is_normal(raw.text) {
        return Ok(Cow::Borrowed(raw.text));
    }
    serde_json::from_str::<Value>(raw.text)
        .map(|v| Cow::Owned(v.to_string()))
        .map_err(drop)
}

/// A usable map key, as `handlers::key_field` reads one: a non-empty string that is
/// not `__proto__` (anything else is the general handler's to report).
fn key(s: Cow<'_, str>) -> Option<String> {
    (!s.is_empty() && s != PROTO_KEY).then(|| s.into_owned())
}

/// `Value::as_u64` of a raw number: digits only (a float, a negative or a number past
/// `u64` is not one).
fn as_u64(raw: Option<Text<'_>>) -> Option<u64> {
    raw.and_then(|r| r.text.parse::<u64>().ok())
}

/// `Value::as_str` of a raw value, owned.
fn as_string(raw: Option<Text<'_>>) -> Option<String> {
    let r = raw?;
    if !r.text.starts_with('"') {
        return None;
    }
    if r.normal {
        // Normal text holds no escape: the string is what lies between the quotes.
        return Some(r.text[1..r.text.len() - 1].to_owned());
    }
    serde_json::from_str::<Cow<'_, str>>(r.text)
        .ok()
        .map(Cow::into_owned)
}

/// Reads a payload object into `T`; `None` when it is not an object or a field `T`
/// names is missing, repeated or of another type (the general handler decides those).
fn payload<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> Option<T> {
    if !raw.get().starts_with('{') {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// What the fast handlers read of a payload, from either path: the raw path's typed
/// read ([`payload`]) or the wire path's scanned fields.
pub(super) enum View<'a> {
    StepStarted {
        step_id: Cow<'a, str>,
        tool_id: Option<Text<'a>>,
        kind: Option<Text<'a>>,
        attempt: Option<Text<'a>>,
        input: Option<Text<'a>>,
    },
    StepCompleted {
        step_id: Cow<'a, str>,
        output: Option<Text<'a>>,
    },
    Decision {
        id: Cow<'a, str>,
        choice: Text<'a>,
        context: Option<Text<'a>>,
        policy: Option<Text<'a>>,
    },
    Suspended {
        on: Cow<'a, str>,
        wake_at: Option<Text<'a>>,
        condition: Option<Text<'a>>,
        waits: Option<Text<'a>>,
    },
}

/// The raw path's view of a hot kind's payload: `None` when the typed read refuses it
/// (the general handler then decides) or the kind has no fast handler.
fn raw_view<'a>(kind: &str, raw: &'a RawValue) -> Option<View<'a>> {
    let t = |r: Option<&'a RawValue>| r.map(Text::raw);
    Some(match kind {
        "STEP_STARTED" => {
            let p = payload::<StepStarted>(raw)?;
            View::StepStarted {
                step_id: p.step_id,
                tool_id: t(p.tool_id),
                kind: t(p.kind),
                attempt: t(p.attempt),
                input: t(p.input),
            }
        }
        "STEP_COMPLETED" => {
            let p = payload::<StepCompleted>(raw)?;
            View::StepCompleted {
                step_id: p.step_id,
                output: t(p.output),
            }
        }
        "DECISION_RECORDED" => {
            let p = payload::<DecisionRecorded>(raw)?;
            View::Decision {
                id: p.id,
                choice: Text::raw(p.choice),
                context: t(p.context),
                policy: t(p.policy),
            }
        }
        "EXECUTION_SUSPENDED" => {
            let p = payload::<Suspended>(raw)?;
            View::Suspended {
                on: p.on,
                wake_at: t(p.wake_at),
                condition: t(p.condition),
                waits: t(p.waits),
            }
        }
        _ => return None,
    })
}

/// Folds a hot kind's payload as the general handler would, when it can: `General`
/// (nothing changed) when the general handler must decide. `Err` (nothing changed) when
/// a value the state keeps as a tree does not parse, which read text always does.
pub(super) fn apply_view(
    state: &mut ExecutionState,
    view: View<'_>,
    sequence: u64,
    v: FoldVersion,
) -> Result<Fast, serde_json::Error> {
    Ok(match view {
        View::StepStarted {
            step_id,
            tool_id,
            kind,
            attempt,
            input,
        } => step_started(state, step_id, tool_id, kind, attempt, input),
        View::StepCompleted { step_id, output } => step_completed(state, step_id, output, v),
        View::Decision {
            id,
            choice,
            context,
            policy,
        } => decision_recorded(state, id, choice, context, policy, sequence, v),
        View::Suspended {
            on,
            wake_at,
            condition,
            waits,
        } => execution_suspended(state, on, wake_at, condition, waits, v)?,
    })
}

#[derive(Deserialize)]
struct StepStarted<'a> {
    #[serde(rename = "stepId", borrow)]
    step_id: Cow<'a, str>,
    #[serde(default, borrow, rename = "toolId")]
    tool_id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    kind: Option<&'a RawValue>,
    #[serde(default, borrow)]
    attempt: Option<&'a RawValue>,
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
}

fn step_started(
    state: &mut ExecutionState,
    step_id: Cow<'_, str>,
    tool_id: Option<Text<'_>>,
    kind: Option<Text<'_>>,
    attempt: Option<Text<'_>>,
    input: Option<Text<'_>>,
) -> Fast {
    let (Some(step_id), Ok(input)) = (key(step_id), kept(input)) else {
        return Fast::General;
    };
    let explicit = as_u64(attempt);
    let mut frame = Frame::new(FrameStatus::Running, 0);
    frame.tool_id = as_string(tool_id);
    frame.kind = as_string(kind);
    frame.input = Some(input);
    start_frame(state, step_id, frame, explicit);
    Fast::Done
}

#[derive(Deserialize)]
struct StepCompleted<'a> {
    #[serde(rename = "stepId", borrow)]
    step_id: Cow<'a, str>,
    #[serde(default, borrow)]
    output: Option<&'a RawValue>,
}

fn step_completed(
    state: &mut ExecutionState,
    step_id: Cow<'_, str>,
    output: Option<Text<'_>>,
    v: FoldVersion,
) -> Fast {
    let (Some(step_id), Ok(output)) = (key(step_id), kept(output)) else {
        return Fast::General;
    };
    let status = FrameStatus::Completed;
    let frame = state
        .frames
        .entry(step_id)
        .or_insert_with(|| Frame::new(status, 1));
    frame.status = status;
    frame.output = Some(output);
    frame.error = None;
    frame.error_channel = None;
    frame.error_payload = None;
    if v.has(26) {
        frame.input = None;
    }
    Fast::Done
}

#[derive(Deserialize)]
struct DecisionRecorded<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    choice: &'a RawValue,
    // Present with `null` is present: the entry keeps `"context": null`.
    #[serde(default, borrow, deserialize_with = "raw_present")]
    context: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "raw_present")]
    policy: Option<&'a RawValue>,
}

/// Unstamped decisions only (a kernel stamp may add `innerSteps`, and stamps come with
/// metadata, which takes the general path).
fn decision_recorded(
    state: &mut ExecutionState,
    id: Cow<'_, str>,
    choice: Text<'_>,
    context: Option<Text<'_>>,
    policy: Option<Text<'_>>,
    sequence: u64,
    v: FoldVersion,
) -> Fast {
    let Some(id) = key(id) else {
        return Fast::General;
    };
    // The entry's text in normal form: its keys `choice`, `context`, `policy`, `seq`
    // are in byte order already, and each value is normal text (borrowed from the line
    // when it already is, so a part costs no allocation of its own).
    let mut parts: [(&str, Cow<'_, str>); 3] = Default::default();
    let mut n = 0;
    let fields = [
        ("choice", Some(choice)),
        ("context", context),
        ("policy", policy),
    ];
    for (name, field) in fields.into_iter().take(if v.has(18) { 3 } else { 1 }) {
        if let Some(f) = field {
            let Ok(text) = kept_text(f) else {
                return Fast::General;
            };
            parts[n] = (name, text);
            n += 1;
        }
    }
    let parts = &parts[..n];
    let decisions = state
        .variables
        .decisions
        .get_or_insert_with(Default::default);
    decisions.upsert(id, |prev| {
        // Room for the parts, their keys and punctuation, and a `seq` of 20 digits.
        let size: usize = parts.iter().map(|(k, t)| k.len() + t.len() + 4).sum();
        let mut text = String::with_capacity(size + 30);
        text.push('{');
        for (i, (name, part)) in parts.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push('"');
            text.push_str(name);
            text.push_str("\":");
            text.push_str(part);
        }
        if v.has(24) {
            // FOLD-38: the first envelope's sequence; a repeat keeps it, and a legacy
            // entry without one never gains one (SNAP-07).
            let seq = match prev {
                Some(prev) => prev.get("seq"),
                None => Some(Value::from(sequence)),
            };
            if let Some(seq) = seq {
                // A `Value` prints in normal form.
                text.push_str(",\"seq\":");
                text.push_str(&seq.to_string());
            }
        }
        text.push('}');
        // Normal parts under keys in byte order: the whole is normal.
        Json::from_built_normal_text(text)
    });
    Fast::Done
}

#[derive(Deserialize)]
struct Suspended<'a> {
    #[serde(borrow)]
    on: Cow<'a, str>,
    #[serde(rename = "wakeAt", default, borrow)]
    wake_at: Option<&'a RawValue>,
    #[serde(default, borrow)]
    condition: Option<&'a RawValue>,
    #[serde(default, borrow)]
    waits: Option<&'a RawValue>,
}

fn execution_suspended(
    state: &mut ExecutionState,
    on: Cow<'_, str>,
    wake_at: Option<Text<'_>>,
    condition: Option<Text<'_>>,
    waits: Option<Text<'_>>,
    v: FoldVersion,
) -> Result<Fast, serde_json::Error> {
    if on.is_empty() {
        return Ok(Fast::General);
    }
    let mut park = Map::new();
    park.insert("on".into(), Value::String(on.into_owned()));
    // An integer `wakeAt` (`Value::is_i64 || is_u64`): digits, maybe a minus sign, but
    // not `-0`, which serde_json reads as a float.
    if let Some(w) = wake_at.filter(|w| {
        let t = w.text;
        t != "-0" && (t.parse::<i64>().is_ok() || t.parse::<u64>().is_ok())
    }) {
        park.insert("wakeAt".into(), serde_json::from_str(w.text)?);
    }
    if let Some(c) = condition.filter(|c| c.text.starts_with('{')) {
        park.insert("condition".into(), serde_json::from_str(c.text)?);
    }
    // Every tree is built before the state changes, so an error leaves it as it was.
    let waits: Option<Value> = match waits.filter(|w| w.text.starts_with('[')) {
        Some(w) => Some(serde_json::from_str(w.text)?),
        None => None,
    };
    state.status = Status::Suspended;
    state.variables.remove(keys::FAILED_WHILE_PARKED);
    state.variables.set(keys::SUSPENDED_ON, Value::Object(park));
    if v.has(23) {
        match waits {
            Some(w) => state.variables.set(keys::WAITS, w),
            None => {
                state.variables.remove(keys::WAITS);
            }
        }
    }
    Ok(Fast::Done)
}
