//! The event envelope and its strict decoder.
//!
//! Every event is `{ id, workflowId, executionId, eventType, sequence, timestamp,
//! payload, metadata? }` (ABI-10). `sequence` is an integer from 0, gapless per
//! execution; `timestamp` is integer epoch milliseconds (DESIGN.md section 3).
//!
//! Decoding is strict and never panics: a malformed envelope becomes an
//! [`EnvelopeError`] that names the index in the log, the field and what was wrong,
//! with a hint at the fix. Unknown top-level keys, duplicate keys, a fractional or
//! negative `sequence`, a `null` `metadata` and a missing `payload` are all errors.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// One event of an execution's log.
#[derive(Debug, Clone, PartialEq)]
pub struct EventEnvelope {
    /// Unique event id.
    pub id: String,
    /// The flow (workflow) this execution runs.
    pub workflow_id: String,
    /// The execution this event belongs to.
    pub execution_id: String,
    /// The event kind; kernel kinds are listed by [`crate::known_event_types`].
    pub event_type: String,
    /// Position in the execution's log, from 0, gapless.
    pub sequence: u64,
    /// Epoch milliseconds, written by whoever appended the event. The fold copies it;
    /// it never reads a clock.
    pub timestamp_ms: i64,
    /// The event's payload: any JSON value, `null` included.
    pub payload: Value,
    /// Optional envelope metadata (`flowEmit`, `kernel`, `forkChain`, `forkedBy`, `seal`, …).
    pub metadata: Option<Map<String, Value>>,
}

impl EventEnvelope {
    /// `metadata.kernel === true`: the envelope was written by the kernel itself.
    /// Only the boolean `true` counts (FOLD-30).
    pub fn is_kernel_stamped(&self) -> bool {
        matches!(self.meta("kernel"), Some(Value::Bool(true)))
    }

    /// `metadata.flowEmit`, when it is a string.
    pub fn flow_emit(&self) -> Option<&str> {
        self.meta("flowEmit").and_then(Value::as_str)
    }

    /// A metadata value by key.
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.metadata.as_ref().and_then(|m| m.get(key))
    }

    /// The envelope as a JSON value (field names as on the wire).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Decodes one envelope from a JSON value, naming `index` in any error.
    pub fn from_value(value: &Value, index: usize) -> Result<EventEnvelope, EnvelopeError> {
        let text = serde_json::to_string(value)
            .map_err(|e| EnvelopeError::syntax(index, e.to_string()))?;
        decode_one(&text, index)
    }
}

/// The fields of an envelope, in wire order.
pub const ENVELOPE_FIELDS: [&str; 8] = [
    "id",
    "workflowId",
    "executionId",
    "eventType",
    "sequence",
    "timestamp",
    "payload",
    "metadata",
];

impl Serialize for EventEnvelope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let n = if self.metadata.is_some() { 8 } else { 7 };
        let mut map = serializer.serialize_map(Some(n))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("workflowId", &self.workflow_id)?;
        map.serialize_entry("executionId", &self.execution_id)?;
        map.serialize_entry("eventType", &self.event_type)?;
        map.serialize_entry("sequence", &self.sequence)?;
        map.serialize_entry("timestamp", &self.timestamp_ms)?;
        map.serialize_entry("payload", &self.payload)?;
        if let Some(m) = &self.metadata {
            map.serialize_entry("metadata", m)?;
        }
        map.end()
    }
}

/// Why an envelope (or a whole log) could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeError {
    /// Index of the envelope in the log (0-based); `None` when the log itself is malformed.
    pub index: Option<usize>,
    /// The offending field, when one can be named.
    pub field: Option<String>,
    /// What was wrong, in words.
    pub problem: String,
}

impl EnvelopeError {
    fn syntax(index: usize, problem: String) -> Self {
        EnvelopeError {
            index: Some(index),
            field: None,
            problem,
        }
    }

    /// A one-line hint at the fix, for CLI output.
    pub fn hint(&self) -> &'static str {
        match self.field.as_deref() {
            Some("sequence") => "`sequence` must be a non-negative integer (0, 1, 2, …), gapless per execution",
            Some("timestamp") => "`timestamp` must be an integer: epoch milliseconds",
            Some("payload") => "every envelope needs a `payload` (use null for none)",
            Some("metadata") => "`metadata` must be an object, or be left out",
            Some(_) => "check the field against the envelope format in docs/event-schema.md",
            None => "each envelope must be a JSON object with id, workflowId, executionId, eventType, sequence, timestamp, payload and optional metadata",
        }
    }
}

impl fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.index, &self.field) {
            (Some(i), Some(field)) => write!(f, "event {i}: field `{field}`: {}", self.problem),
            (Some(i), None) => write!(f, "event {i}: {}", self.problem),
            (None, _) => write!(f, "log: {}", self.problem),
        }
    }
}

impl std::error::Error for EnvelopeError {}

/// Decodes a log given as a JSON array of envelopes or as JSON lines (one envelope per
/// non-blank line). Sequence order and gaplessness are checked separately by
/// [`check_sequences`], because a fold of a partial log is legitimate.
pub fn decode_log(text: &str) -> Result<Vec<EventEnvelope>, EnvelopeError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        decode_array(trimmed)
    } else {
        decode_lines(text)
    }
}

fn decode_lines(text: &str) -> Result<Vec<EventEnvelope>, EnvelopeError> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let index = out.len();
        out.push(decode_one(line, index)?);
    }
    Ok(out)
}

/// Decodes a single envelope from JSON text.
pub fn decode_one(text: &str, index: usize) -> Result<EventEnvelope, EnvelopeError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let slot = std::cell::RefCell::new(None);
    let seed = EnvelopeSeed {
        index,
        error: &slot,
    };
    match seed
        .deserialize(&mut de)
        .and_then(|env| de.end().map(|_| env))
    {
        Ok(env) => Ok(env),
        Err(e) => Err(slot
            .into_inner()
            .unwrap_or_else(|| EnvelopeError::syntax(index, e.to_string()))),
    }
}

fn decode_array(text: &str) -> Result<Vec<EventEnvelope>, EnvelopeError> {
    let slot = std::cell::RefCell::new(None);
    let counter = std::cell::Cell::new(0usize);
    let mut de = serde_json::Deserializer::from_str(text);
    let visitor = LogVisitor {
        error: &slot,
        counter: &counter,
    };
    let result = de
        .deserialize_seq(visitor)
        .and_then(|v| de.end().map(|_| v));
    match result {
        Ok(v) => Ok(v),
        Err(e) => Err(slot.into_inner().unwrap_or_else(|| EnvelopeError {
            index: Some(counter.get()),
            field: None,
            problem: e.to_string(),
        })),
    }
}

struct LogVisitor<'a> {
    error: &'a std::cell::RefCell<Option<EnvelopeError>>,
    counter: &'a std::cell::Cell<usize>,
}

impl<'de> Visitor<'de> for LogVisitor<'_> {
    type Value = Vec<EventEnvelope>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of event envelopes")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        loop {
            let index = out.len();
            self.counter.set(index);
            match seq.next_element_seed(EnvelopeSeed {
                index,
                error: self.error,
            })? {
                Some(env) => out.push(env),
                None => return Ok(out),
            }
        }
    }
}

struct EnvelopeSeed<'a> {
    index: usize,
    error: &'a std::cell::RefCell<Option<EnvelopeError>>,
}

impl<'de> DeserializeSeed<'de> for EnvelopeSeed<'_> {
    type Value = EventEnvelope;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<EventEnvelope, D::Error> {
        d.deserialize_map(EnvelopeVisitor {
            index: self.index,
            error: self.error,
        })
    }
}

struct EnvelopeVisitor<'a> {
    index: usize,
    error: &'a std::cell::RefCell<Option<EnvelopeError>>,
}

impl EnvelopeVisitor<'_> {
    fn fail<E: de::Error>(&self, field: Option<&str>, problem: String) -> E {
        let err = EnvelopeError {
            index: Some(self.index),
            field: field.map(str::to_owned),
            problem,
        };
        let msg = err.to_string();
        *self.error.borrow_mut() = Some(err);
        E::custom(msg)
    }
}

/// Accepts only JSON integers; names the problem otherwise.
struct IntegerValue(Value);
impl<'de> Deserialize<'de> for IntegerValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(IntegerValue)
    }
}

impl<'de> Visitor<'de> for EnvelopeVisitor<'_> {
    type Value = EventEnvelope;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event envelope object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EventEnvelope, A::Error> {
        let mut id = None;
        let mut workflow_id = None;
        let mut execution_id = None;
        let mut event_type: Option<String> = None;
        let mut sequence = None;
        let mut timestamp = None;
        let mut payload = None;
        let mut metadata = None;
        let mut seen_metadata = false;
        while let Some(key) = map.next_key::<String>()? {
            let dup = |present: bool| present;
            match key.as_str() {
                "id" | "workflowId" | "executionId" | "eventType" => {
                    let slot = match key.as_str() {
                        "id" => &mut id,
                        "workflowId" => &mut workflow_id,
                        "executionId" => &mut execution_id,
                        _ => &mut event_type,
                    };
                    if dup(slot.is_some()) {
                        return Err(self.fail(Some(&key), "appears twice".into()));
                    }
                    let v: Value = map.next_value()?;
                    match v {
                        Value::String(s) => *slot = Some(s),
                        other => {
                            return Err(self.fail(
                                Some(&key),
                                format!("expected a string, found {}", kind(&other)),
                            ))
                        }
                    }
                }
                "sequence" | "timestamp" => {
                    let present = if key == "sequence" {
                        sequence.is_some()
                    } else {
                        timestamp.is_some()
                    };
                    if present {
                        return Err(self.fail(Some(&key), "appears twice".into()));
                    }
                    let IntegerValue(v) = map.next_value()?;
                    if key == "sequence" {
                        match v.as_u64() {
                            Some(n) => sequence = Some(n),
                            None => {
                                return Err(self.fail(
                                    Some("sequence"),
                                    format!("expected a non-negative integer, found {}", show(&v)),
                                ))
                            }
                        }
                    } else {
                        match v.as_i64() {
                            Some(n) => timestamp = Some(n),
                            None => {
                                return Err(self.fail(
                                    Some("timestamp"),
                                    format!(
                                        "expected integer epoch milliseconds, found {}",
                                        show(&v)
                                    ),
                                ))
                            }
                        }
                    }
                }
                "payload" => {
                    if payload.is_some() {
                        return Err(self.fail(Some("payload"), "appears twice".into()));
                    }
                    payload = Some(map.next_value::<Value>()?);
                }
                "metadata" => {
                    if seen_metadata {
                        return Err(self.fail(Some("metadata"), "appears twice".into()));
                    }
                    seen_metadata = true;
                    match map.next_value::<Value>()? {
                        Value::Object(m) => metadata = Some(m),
                        other => {
                            return Err(self.fail(
                                Some("metadata"),
                                format!("expected an object, found {}", kind(&other)),
                            ))
                        }
                    }
                }
                other => {
                    return Err(self.fail(
                        Some(other),
                        format!(
                            "unknown envelope field `{other}` (allowed: {})",
                            ENVELOPE_FIELDS.join(", ")
                        ),
                    ));
                }
            }
        }
        let missing = |name: &str| self.fail::<A::Error>(Some(name), "is missing".into());
        let event_type = event_type.ok_or_else(|| missing("eventType"))?;
        if event_type.is_empty() {
            return Err(self.fail(Some("eventType"), "must not be empty".into()));
        }
        Ok(EventEnvelope {
            id: id.ok_or_else(|| missing("id"))?,
            workflow_id: workflow_id.ok_or_else(|| missing("workflowId"))?,
            execution_id: execution_id.ok_or_else(|| missing("executionId"))?,
            event_type,
            sequence: sequence.ok_or_else(|| missing("sequence"))?,
            timestamp_ms: timestamp.ok_or_else(|| missing("timestamp"))?,
            payload: payload.ok_or_else(|| missing("payload"))?,
            metadata,
        })
    }
}

impl<'de> Deserialize<'de> for EventEnvelope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let slot = std::cell::RefCell::new(None);
        EnvelopeSeed {
            index: 0,
            error: &slot,
        }
        .deserialize(d)
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Number(n) => format!("the number {n}"),
        other => kind(other).to_string(),
    }
}

/// Checks that a log is one execution's, with sequences 0, 1, 2, … in order.
/// The first violation is returned, naming its index.
pub fn check_sequences(events: &[EventEnvelope]) -> Result<(), EnvelopeError> {
    let Some(first) = events.first() else {
        return Ok(());
    };
    for (i, e) in events.iter().enumerate() {
        if e.execution_id != first.execution_id {
            return Err(EnvelopeError {
                index: Some(i),
                field: Some("executionId".into()),
                problem: format!(
                    "`{}` differs from the log's execution `{}`",
                    e.execution_id, first.execution_id
                ),
            });
        }
        if e.sequence != i as u64 {
            return Err(EnvelopeError {
                index: Some(i),
                field: Some("sequence".into()),
                problem: format!(
                    "expected sequence {i} (gapless from 0), found {}",
                    e.sequence
                ),
            });
        }
    }
    Ok(())
}
