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

use crate::json::JsonText;
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
    /// The event's payload: any JSON value, `null` included, kept as its normal text
    /// ([`JsonText`]: the fold reads its fields in place; code that wants a tree reads it
    /// through `Deref`, as `payload.get("stepId")`).
    pub payload: JsonText,
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

    /// Decodes one envelope from a JSON value, naming `index` in any error, with the
    /// strictness of the text decoder. The value is read where it lies (printing it
    /// as text to decode that again cost the simulator's store client a few percent of
    /// its CPU), so an error names no line or column: a value has none.
    pub fn from_value(value: &Value, index: usize) -> Result<EventEnvelope, EnvelopeError> {
        let slot = std::cell::RefCell::new(None);
        let seed = EnvelopeSeed {
            index,
            error: &slot,
        };
        seed.deserialize(value).map_err(|e| {
            slot.into_inner()
                .unwrap_or_else(|| EnvelopeError::from_json(Some(index), &e, 1))
        })
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
    /// The line of the log text (1-based, counting every line) where the problem was
    /// found, when the error comes from decoding text.
    pub line: Option<usize>,
    /// The column on that line (1-based, in bytes), for syntax errors.
    pub column: Option<usize>,
    /// A hint more precise than the field's, for a log whose layout is wrong.
    layout_hint: Option<&'static str>,
}

/// Hint for a JSON-lines log whose envelopes span several lines.
const HINT_ONE_PER_LINE: &str = "a JSON-lines log holds one whole envelope per line; a pretty-printed log must be a JSON array of envelopes ([ {...}, {...} ])";
/// Hint for a line that ends inside its envelope.
const HINT_CUT_SHORT: &str =
    "the envelope ends before its closing brace: was the log cut short or a line broken in two?";

impl EnvelopeError {
    fn syntax(index: usize, problem: String) -> Self {
        EnvelopeError {
            index: Some(index),
            field: None,
            problem,
            line: None,
            column: None,
            layout_hint: None,
        }
    }

    fn at_field(index: usize, field: &str, problem: String) -> Self {
        EnvelopeError {
            field: Some(field.to_owned()),
            ..EnvelopeError::syntax(index, problem)
        }
    }

    /// Takes a position from a serde_json error, whose message then drops its own
    /// "at line L column C" (which counts from the start of what serde_json was given).
    fn from_json(index: Option<usize>, e: &serde_json::Error, first_line: usize) -> Self {
        let text = e.to_string();
        let (problem, line, column) = if e.line() == 0 {
            (text, None, None)
        } else {
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            (
                text.strip_suffix(&suffix).unwrap_or(&text).to_owned(),
                Some(first_line + e.line() - 1),
                Some(e.column()),
            )
        };
        EnvelopeError {
            index,
            field: None,
            problem,
            line,
            column,
            layout_hint: None,
        }
    }

    /// A one-line hint at the fix, for CLI output.
    pub fn hint(&self) -> &'static str {
        if let Some(h) = self.layout_hint {
            return h;
        }
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
        match self.index {
            Some(i) => write!(f, "event {i}")?,
            None => write!(f, "log")?,
        }
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, " (line {l}, column {c})")?,
            (Some(l), None) => write!(f, " (line {l})")?,
            _ => {}
        }
        match &self.field {
            Some(field) if self.index.is_some() => {
                write!(f, ": field `{field}`: {}", self.problem)
            }
            _ => write!(f, ": {}", self.problem),
        }
    }
}

impl std::error::Error for EnvelopeError {}

/// The UTF-8 byte order mark. A log may start with one (some editors and shells write
/// it); it is skipped, and line and column numbers are those of the text after it.
pub const UTF8_BOM: char = '\u{feff}';

/// The shortest text an envelope can have: its seven required keys (a key's escapes only
/// lengthen it), an empty string for each string field but the kind (which must not be
/// empty) and one byte for each other value.
pub(crate) const SHORTEST_ENVELOPE: &str = r#"{"id":"","workflowId":"","executionId":"","eventType":"x","sequence":0,"timestamp":0,"payload":0}"#;

/// How many envelopes a log's text can hold at most, so that [`decode_log`] sizes its
/// vector once: grown by doubling, it copied every envelope decoded so far at each step
/// and held the old and the new vector at once (on the 10^6-event realistic log, sizing
/// it once lowered the peak memory of decoding and folding from 0.76 to 0.69 GB, at the
/// same CPU time). No log holds more envelopes than its length over
/// [`SHORTEST_ENVELOPE`]'s (so a text of blank lines reserves no more than a log of its
/// length could need); a long JSON-lines log, no more than it has lines (counted, since
/// real envelopes are longer than the shortest). Below [`LINE_COUNT_FROM_BYTES`] the
/// length alone bounds it: the most that over-reserves is a few dozen kilobytes, and a
/// fuzz build (the kernel instrumented, every input short) counts no line.
fn envelopes_at_most(text: &str) -> usize {
    let by_length = text.len() / SHORTEST_ENVELOPE.len();
    if text.len() < LINE_COUNT_FROM_BYTES {
        return by_length;
    }
    // Counted in byte lanes, 255 bytes at a time (no lane can overflow), branch-free:
    // vector code. Counting in `usize` lanes, or calling core's memchr once a line, cost
    // several times more on the 10^6-event log.
    let lines = text
        .as_bytes()
        .chunks(255)
        .map(|chunk| {
            let in_chunk = chunk.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n'));
            usize::from(in_chunk)
        })
        .sum::<usize>()
        + 1;
    lines.min(by_length)
}

/// The length from which [`envelopes_at_most`] counts a log's lines.
const LINE_COUNT_FROM_BYTES: usize = 64 * 1024;

/// Decodes a log given as a JSON array of envelopes or as JSON lines (one envelope per
/// non-blank line), optionally preceded by a UTF-8 byte order mark. Sequence order and
/// gaplessness are checked separately by [`check_sequences`], because a fold of a
/// partial log is legitimate. Errors name the envelope's index, its line in `text` and
/// (for syntax errors) the column.
pub fn decode_log(text: &str) -> Result<Vec<EventEnvelope>, EnvelopeError> {
    let mut out = Vec::with_capacity(envelopes_at_most(text));
    for_each_envelope(text, &mut |e| {
        out.push(e);
        Ok(())
    })?;
    Ok(out)
}

/// Decodes a log like [`decode_log`] through the strict decoder alone: every line's
/// payload is built as a tree and printed in normal form, where [`decode_log`] takes a
/// payload already in normal form as it is. It is the reference every fast path of
/// decoding and folding is held to (the same envelopes, byte for byte, or the same
/// error: tests/fold_text.rs and the `fold_total` property), and no faster than it.
pub fn decode_log_strict(text: &str) -> Result<Vec<EventEnvelope>, EnvelopeError> {
    let mut out = Vec::with_capacity(envelopes_at_most(text));
    match layout(text) {
        Layout::Array(text) => {
            decode_array(text, &mut |e| {
                out.push(e);
                Ok(())
            })?;
        }
        Layout::Lines(text) => {
            for (index, (line, line_no, more)) in envelope_lines(text).enumerate() {
                out.push(decode_line_strict(line, index, line_no, more)?);
            }
        }
    }
    Ok(out)
}

/// Decodes a log like [`decode_log`], handing each envelope to `sink` as soon as it is
/// decoded, so a caller can fold a log without holding all its envelopes. An error the
/// sink returns stops the decoding and is returned.
pub fn for_each_envelope(
    text: &str,
    sink: &mut dyn FnMut(EventEnvelope) -> Result<(), EnvelopeError>,
) -> Result<usize, EnvelopeError> {
    match layout(text) {
        Layout::Array(text) => decode_array(text, sink),
        Layout::Lines(text) => decode_lines(text, sink),
    }
}

/// How a log's text holds its envelopes, after an optional byte order mark.
pub(crate) enum Layout<'a> {
    /// A JSON array of envelopes.
    Array(&'a str),
    /// JSON lines, one envelope per non-blank line.
    Lines(&'a str),
}

/// The layout of a log's text (the byte order mark skipped).
pub(crate) fn layout(text: &str) -> Layout<'_> {
    let text = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    if text.trim_start().starts_with('[') {
        Layout::Array(text)
    } else {
        Layout::Lines(text)
    }
}

/// The non-blank lines of a JSON-lines log: each with its line number (from 1) and
/// whether any line follows it (what [`decode_line`] needs to word a cut envelope).
pub(crate) fn envelope_lines(text: &str) -> impl Iterator<Item = (&str, usize, bool)> {
    let mut lines = log_lines(text).enumerate().peekable();
    std::iter::from_fn(move || loop {
        let (i, line) = lines.next()?;
        if !line.trim().is_empty() {
            return Some((line, i + 1, lines.peek().is_some()));
        }
    })
}

/// The lines of `text` exactly as [`str::lines`] gives them (split at `\n`, one `\r`
/// before it dropped, no empty line after a final `\n`), each line end found by core's
/// `memchr` (a word at a time; the kernel takes no dependency beyond serde and sha2,
/// tests/tidy.rs, and a SIMD search saved under 2 % of the text path).
fn log_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let line = match rest.find('\n') {
            Some(end) => {
                // `\n` is ASCII, so both sides are on character boundaries.
                let (line, after) = rest.split_at(end);
                rest = &after[1..];
                line.strip_suffix('\r').unwrap_or(line)
            }
            None => std::mem::take(&mut rest),
        };
        Some(line)
    })
}

fn decode_lines(
    text: &str,
    sink: &mut dyn FnMut(EventEnvelope) -> Result<(), EnvelopeError>,
) -> Result<usize, EnvelopeError> {
    let mut index = 0;
    for (line, line_no, more) in envelope_lines(text) {
        sink(decode_line(line, index, line_no, more)?)?;
        index += 1;
    }
    Ok(index)
}

/// Decodes line `line_no` of a JSON-lines log, the `index`th envelope; `more` says
/// whether lines follow it (a lone `{` then means a pretty-printed log, not a cut one).
pub(crate) fn decode_line(
    line: &str,
    index: usize,
    line_no: usize,
    more: bool,
) -> Result<EventEnvelope, EnvelopeError> {
    match decode_fast(line) {
        Some(envelope) => Ok(envelope),
        None => decode_line_strict(line, index, line_no, more),
    }
}

/// [`decode_line`] through the strict decoder alone.
fn decode_line_strict(
    line: &str,
    index: usize,
    line_no: usize,
    more: bool,
) -> Result<EventEnvelope, EnvelopeError> {
    decode_at(line, index, line_no).map_err(|mut e| {
        if e.field.is_none() && e.problem.starts_with("EOF while parsing") {
            let lone_start = line.trim() == "{" || line.trim_end().ends_with('{');
            if lone_start && more {
                e.problem = format!(
                    "line {line_no} holds only the start of a JSON object, not a whole envelope"
                );
                e.column = None;
                e.layout_hint = Some(HINT_ONE_PER_LINE);
            } else {
                e.layout_hint = Some(HINT_CUT_SHORT);
            }
        }
        e
    })
}

/// The envelope of one line whose payload (and metadata) is already in normal form
/// ([`crate::json`]), without building the payload as a tree: a line in the writers' own
/// form (the wire reader, [`crate::fold::fold_text`]'s first path), or any other line
/// the raw read takes ([`RawEnvelope::read`]). Each is the envelope the strict decoder
/// gives for the same line (tests/fold_text.rs holds the two together); `None` sends the
/// line to the strict decoder for its envelope or its error. A payload or metadata that
/// is not in normal form, or nests deeper than the normal scan reads, always goes there,
/// so its tree is built, and its nesting limit counted, exactly as before.
fn decode_fast(line: &str) -> Option<EventEnvelope> {
    if let Some(w) = crate::fold::wire::read(line) {
        return Some(EventEnvelope {
            id: w.id.to_owned(),
            workflow_id: w.workflow_id.to_owned(),
            execution_id: w.execution_id.to_owned(),
            event_type: w.event_type.to_owned(),
            sequence: w.sequence,
            timestamp_ms: w.timestamp_ms,
            payload: JsonText::from_scanned(w.payload),
            // Scanned as normal already: built from its fields without a second check.
            metadata: w.metadata_map()?,
        });
    }
    // Normal text is what the strict decoder reads (numbers in range, no escape it
    // refuses, nesting within the scan's depth), so `read`'s checks are not repeated.
    let raw = RawEnvelope::read_fields(line)?;
    let payload = JsonText::from_normal_text(raw.payload.get())?;
    let metadata = match raw.metadata.map(|m| m.get()) {
        Some(t) if crate::json::is_normal_payload(t) => Some(serde_json::from_str(t).ok()?),
        Some(_) => return None,
        None => None,
    };
    Some(EventEnvelope {
        id: raw.id.into_owned(),
        workflow_id: raw.workflow_id.into_owned(),
        execution_id: raw.execution_id.into_owned(),
        event_type: raw.event_type.into_owned(),
        sequence: raw.sequence,
        timestamp_ms: raw.timestamp_ms,
        payload,
        metadata,
    })
}

/// An envelope read where it lies in the log text: strings borrowed unless they hold
/// escapes, the payload and metadata kept as their raw JSON text. The fold's text path
/// ([`crate::fold::fold_text`]) reads these; it takes one only where the strict decoder
/// would accept the same line and give the same envelope, so every line this cannot
/// read, or reads with a doubt, goes to the strict decoder for its envelope or its
/// error (the raw read is a fast path, never a second grammar).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEnvelope<'a> {
    /// Unique event id.
    #[serde(borrow)]
    pub id: std::borrow::Cow<'a, str>,
    /// The flow this execution runs.
    #[serde(rename = "workflowId", borrow)]
    pub workflow_id: std::borrow::Cow<'a, str>,
    /// The execution.
    #[serde(rename = "executionId", borrow)]
    pub execution_id: std::borrow::Cow<'a, str>,
    /// The event kind.
    #[serde(rename = "eventType", borrow)]
    pub event_type: std::borrow::Cow<'a, str>,
    /// Position in the log.
    pub sequence: u64,
    /// Epoch milliseconds.
    #[serde(rename = "timestamp")]
    pub timestamp_ms: i64,
    /// The payload's JSON text.
    #[serde(borrow)]
    pub payload: &'a serde_json::value::RawValue,
    /// The metadata's JSON text, when the field is present (`null` included: the
    /// caller sends such a line to the strict decoder, which refuses it).
    #[serde(default, borrow, deserialize_with = "raw_present")]
    pub metadata: Option<&'a serde_json::value::RawValue>,
}

/// A field's raw JSON text, `Some` whenever the field is present, `null` included (an
/// `Option` field alone would read a `null` as absent).
pub(crate) fn raw_present<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<&'de serde_json::value::RawValue>, D::Error> {
    <&serde_json::value::RawValue>::deserialize(d).map(Some)
}

impl<'a> RawEnvelope<'a> {
    /// Reads one line, when it is an envelope the strict decoder accepts as the same:
    /// `None` for anything else (a syntax error, a missing, repeated, unknown or wrongly
    /// typed field, an empty `eventType`, metadata that is not an object).
    ///
    /// serde_json captures a raw value by its syntax alone: a number past `f64`'s range
    /// (`1e999`), a lone surrogate escape (`"\ud800_"`) and nesting past its recursion
    /// limit pass, where the strict decoder, which builds the payload and metadata as
    /// trees, refuses all three. So each is also checked as the strict decoder reads it
    /// (as far as [`VALUE_NESTING_MAX`] levels; found by the `fold_total` campaign,
    /// props/regressions/fold_total/).
    pub fn read(line: &'a str) -> Option<RawEnvelope<'a>> {
        let raw = RawEnvelope::read_fields(line)?;
        let values_ok =
            strictly_readable(raw.payload) && raw.metadata.is_none_or(strictly_readable);
        values_ok.then_some(raw)
    }

    /// The line's fields as serde reads them, the payload and metadata unchecked beyond
    /// their syntax: the checks [`RawEnvelope::read`] adds are the caller's (the decoder
    /// requires both in normal form, which implies them).
    fn read_fields(line: &'a str) -> Option<RawEnvelope<'a>> {
        let raw: RawEnvelope<'a> = serde_json::from_str(line).ok()?;
        let metadata_ok = raw.metadata.is_none_or(|m| m.get().starts_with('{'));
        (metadata_ok && !raw.event_type.is_empty()).then_some(raw)
    }
}

/// Most containers nested in an envelope's payload (or metadata) the strict decoder
/// reads: serde_json's recursion limit of 128 counts the envelope's own object, and
/// refuses the container that takes the count to 128, so 126 levels remain for the value.
/// tests/fold_text.rs finds the edge from the strict decoder itself.
pub const VALUE_NESTING_MAX: usize = 126;

/// Whether a payload's (or metadata's) raw text is a value the strict decoder reads
/// where it stands in an envelope: every number within `f64`'s range, every string
/// escape one it can unescape, nesting within [`VALUE_NESTING_MAX`]. Normal text always is (one scan); other text is read through
/// serde_json as a tree would be read, without building one.
fn strictly_readable(raw: &serde_json::value::RawValue) -> bool {
    crate::json::is_normal_payload(raw.get()) || {
        let mut de = serde_json::Deserializer::from_str(raw.get());
        Readable {
            levels_left: VALUE_NESTING_MAX,
        }
        .deserialize(&mut de)
        .is_ok()
    }
}

/// Reads one value as `serde_json::Value`'s own reader does (`deserialize_any`: every
/// number parsed, every string unescaped), keeping nothing, and refuses nesting deeper
/// than `levels_left`.
struct Readable {
    levels_left: usize,
}

impl<'de> DeserializeSeed<'de> for Readable {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Readable {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.nested::<A::Error>()?;
        while seq.next_element_seed(Readable { ..inner })?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.nested::<A::Error>()?;
        while map.next_key_seed(Readable { ..inner })?.is_some() {
            map.next_value_seed(Readable { ..inner })?;
        }
        Ok(())
    }
}

impl Readable {
    /// The seed for the values inside a container, or the strict decoder's refusal.
    fn nested<E: de::Error>(&self) -> Result<Readable, E> {
        match self.levels_left.checked_sub(1) {
            Some(levels_left) => Ok(Readable { levels_left }),
            None => Err(E::custom("recursion limit exceeded")),
        }
    }
}

/// Decodes a single envelope from JSON text (a payload already in normal form taken as
/// it is, as [`decode_log`] takes it; errors from the strict decoder).
pub fn decode_one(text: &str, index: usize) -> Result<EventEnvelope, EnvelopeError> {
    match decode_fast(text) {
        Some(envelope) => Ok(envelope),
        None => decode_at(text, index, 1),
    }
}

/// Decodes one envelope that starts on line `line` of the log.
fn decode_at(text: &str, index: usize, line: usize) -> Result<EventEnvelope, EnvelopeError> {
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
        Err(e) => {
            let positioned = EnvelopeError::from_json(Some(index), &e, line);
            Err(match slot.into_inner() {
                Some(mut own) => {
                    own.line = positioned.line;
                    own
                }
                None => positioned,
            })
        }
    }
}

fn decode_array(
    text: &str,
    sink: &mut dyn FnMut(EventEnvelope) -> Result<(), EnvelopeError>,
) -> Result<usize, EnvelopeError> {
    let slot = std::cell::RefCell::new(None);
    let counter = std::cell::Cell::new(0usize);
    let mut de = serde_json::Deserializer::from_str(text);
    let visitor = LogVisitor {
        error: &slot,
        counter: &counter,
        sink: std::cell::RefCell::new(sink),
    };
    let result = de
        .deserialize_seq(visitor)
        .and_then(|v| de.end().map(|_| v));
    match result {
        Ok(n) => Ok(n),
        Err(e) => {
            let positioned = EnvelopeError::from_json(Some(counter.get()), &e, 1);
            Err(match slot.into_inner() {
                Some(mut own) => {
                    if own.line.is_none() {
                        own.line = positioned.line;
                    }
                    own
                }
                None => positioned,
            })
        }
    }
}

struct LogVisitor<'a, 's> {
    error: &'a std::cell::RefCell<Option<EnvelopeError>>,
    counter: &'a std::cell::Cell<usize>,
    sink: std::cell::RefCell<&'s mut dyn FnMut(EventEnvelope) -> Result<(), EnvelopeError>>,
}

impl<'de> Visitor<'de> for LogVisitor<'_, '_> {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of event envelopes")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut index = 0;
        loop {
            self.counter.set(index);
            match seq.next_element_seed(EnvelopeSeed {
                index,
                error: self.error,
            })? {
                Some(env) => {
                    if let Err(e) = (self.sink.borrow_mut())(env) {
                        let msg = e.to_string();
                        *self.error.borrow_mut() = Some(e);
                        return Err(de::Error::custom(msg));
                    }
                }
                None => return Ok(index),
            }
            index += 1;
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
        let err = match field {
            Some(f) => EnvelopeError::at_field(self.index, f, problem),
            None => EnvelopeError::syntax(self.index, problem),
        };
        let msg = err.to_string();
        *self.error.borrow_mut() = Some(err);
        E::custom(msg)
    }
}

/// The envelope's keys, read without allocating (an unknown key keeps its name for the
/// error).
enum Field {
    Id,
    WorkflowId,
    ExecutionId,
    EventType,
    Sequence,
    Timestamp,
    Payload,
    Metadata,
    Unknown(String),
}

impl Field {
    fn from_key(key: &str) -> Field {
        match key {
            "id" => Field::Id,
            "workflowId" => Field::WorkflowId,
            "executionId" => Field::ExecutionId,
            "eventType" => Field::EventType,
            "sequence" => Field::Sequence,
            "timestamp" => Field::Timestamp,
            "payload" => Field::Payload,
            "metadata" => Field::Metadata,
            other => Field::Unknown(other.to_owned()),
        }
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an envelope field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(Field::from_key(v))
            }
        }
        d.deserialize_identifier(V)
    }
}

/// A JSON scalar or container as the decoder met it where it wanted a string or an
/// integer: the value itself when it is one, else what kind of value it was.
enum Scalar {
    Str(String),
    U64(u64),
    I64(i64),
    F64(f64),
    Other(&'static str),
}

impl Scalar {
    fn kind(&self) -> &'static str {
        match self {
            Scalar::Str(_) => "a string",
            Scalar::U64(_) | Scalar::I64(_) | Scalar::F64(_) => "a number",
            Scalar::Other(k) => k,
        }
    }

    /// "the number N" for numbers (as serde_json prints them), the kind otherwise.
    fn show(&self) -> String {
        match self {
            Scalar::U64(n) => format!("the number {n}"),
            Scalar::I64(n) => format!("the number {n}"),
            Scalar::F64(x) => match serde_json::Number::from_f64(*x) {
                Some(n) => format!("the number {n}"),
                None => "a number".to_owned(),
            },
            other => other.kind().to_owned(),
        }
    }
}

/// Reads one value as a [`Scalar`]. Arrays and objects stop the decoding at once (the
/// caller reports their kind): nothing after a wrongly typed field is read.
struct ScalarSeed<'a, 'v> {
    field: &'static str,
    expected: &'static str,
    ctx: &'a EnvelopeVisitor<'v>,
}

impl<'de> DeserializeSeed<'de> for ScalarSeed<'_, '_> {
    type Value = Scalar;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarSeed<'_, '_> {
    type Value = Scalar;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expected)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::Str(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::U64(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::I64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::F64(v))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scalar, E> {
        Ok(Scalar::Other("a boolean"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Other("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Scalar, A::Error> {
        Err(self.ctx.fail(
            Some(self.field),
            format!("{}, found an array", self.expected),
        ))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Scalar, A::Error> {
        Err(self.ctx.fail(
            Some(self.field),
            format!("{}, found an object", self.expected),
        ))
    }
}

const EXPECT_STRING: &str = "expected a string";
const EXPECT_SEQUENCE: &str = "expected a non-negative integer";
const EXPECT_TIMESTAMP: &str = "expected integer epoch milliseconds";

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
        while let Some(field) = map.next_key::<Field>()? {
            let (name, slot) = match field {
                Field::Id => ("id", &mut id),
                Field::WorkflowId => ("workflowId", &mut workflow_id),
                Field::ExecutionId => ("executionId", &mut execution_id),
                Field::EventType => ("eventType", &mut event_type),
                Field::Sequence | Field::Timestamp => {
                    let (name, expected) = if matches!(field, Field::Sequence) {
                        ("sequence", EXPECT_SEQUENCE)
                    } else {
                        ("timestamp", EXPECT_TIMESTAMP)
                    };
                    let present = if name == "sequence" {
                        sequence.is_some()
                    } else {
                        timestamp.is_some()
                    };
                    if present {
                        return Err(self.fail(Some(name), "appears twice".into()));
                    }
                    let v = map.next_value_seed(ScalarSeed {
                        field: name,
                        expected,
                        ctx: &self,
                    })?;
                    if name == "sequence" {
                        match v {
                            Scalar::U64(n) => sequence = Some(n),
                            Scalar::I64(n) if n >= 0 => sequence = Some(n as u64),
                            other => {
                                return Err(self.fail(
                                    Some(name),
                                    format!("{expected}, found {}", other.show()),
                                ))
                            }
                        }
                    } else {
                        match v {
                            Scalar::I64(n) => timestamp = Some(n),
                            Scalar::U64(n) if i64::try_from(n).is_ok() => {
                                timestamp = Some(n as i64)
                            }
                            other => {
                                return Err(self.fail(
                                    Some(name),
                                    format!("{expected}, found {}", other.show()),
                                ))
                            }
                        }
                    }
                    continue;
                }
                Field::Payload => {
                    if payload.is_some() {
                        return Err(self.fail(Some("payload"), "appears twice".into()));
                    }
                    // Read as a tree, as it always was, so every error (a nesting limit
                    // counted from the envelope included) reads as before.
                    payload = Some(JsonText::from_value(&map.next_value::<Value>()?));
                    continue;
                }
                Field::Metadata => {
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
                    continue;
                }
                Field::Unknown(other) => {
                    return Err(self.fail(
                        Some(&other),
                        format!(
                            "unknown envelope field `{other}` (allowed: {})",
                            ENVELOPE_FIELDS.join(", ")
                        ),
                    ));
                }
            };
            if slot.is_some() {
                return Err(self.fail(Some(name), "appears twice".into()));
            }
            match map.next_value_seed(ScalarSeed {
                field: name,
                expected: EXPECT_STRING,
                ctx: &self,
            })? {
                Scalar::Str(s) => *slot = Some(s),
                other => {
                    return Err(self.fail(
                        Some(name),
                        format!("{EXPECT_STRING}, found {}", other.kind()),
                    ))
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

/// Checks that a log is one execution's, with sequences 0, 1, 2, … in order.
/// The first violation is returned, naming its index.
pub fn check_sequences(events: &[EventEnvelope]) -> Result<(), EnvelopeError> {
    let Some(first) = events.first() else {
        return Ok(());
    };
    for (i, e) in events.iter().enumerate() {
        if e.execution_id != first.execution_id {
            return Err(EnvelopeError::at_field(
                i,
                "executionId",
                format!(
                    "`{}` differs from the log's execution `{}`",
                    e.execution_id, first.execution_id
                ),
            ));
        }
        if e.sequence != i as u64 {
            return Err(EnvelopeError::at_field(
                i,
                "sequence",
                format!(
                    "expected sequence {i} (gapless from 0), found {}",
                    e.sequence
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{
        decode_log, envelopes_at_most, log_lines, LINE_COUNT_FROM_BYTES, SHORTEST_ENVELOPE,
    };

    /// The shortest envelope is an envelope, and a log of them, in either line ending,
    /// with or without a final line end, never holds more than `envelopes_at_most` says
    /// (the bound `decode_log` sizes its vector by; above it, the vector would only grow,
    /// but the bound's reasoning would be wrong).
    #[test]
    fn envelopes_at_most_bounds_every_log_of_shortest_envelopes() {
        // Short logs (bound by length) and long ones (lines counted).
        let long = LINE_COUNT_FROM_BYTES / SHORTEST_ENVELOPE.len();
        for ending in ["\n", "\r\n"] {
            for n in (0..40).chain(long - 2..long + 3).chain([3 * long]) {
                for last in ["", ending] {
                    let text = vec![SHORTEST_ENVELOPE; n].join(ending) + last;
                    let got = decode_log(&text).expect("shortest envelopes decode").len();
                    assert_eq!(got, n);
                    assert!(
                        envelopes_at_most(&text) >= n,
                        "{n} envelopes, {ending:?} {last:?}"
                    );
                }
            }
        }
        // One character fewer is no envelope: each key, string and value is as short as
        // it can be, so no field can give one up.
        for cut in 0..SHORTEST_ENVELOPE.len() {
            let mut shorter = SHORTEST_ENVELOPE.to_owned();
            shorter.remove(cut);
            assert!(decode_log(&shorter).is_err(), "{shorter}");
        }
        // Blank lines reserve no more than the text's length could hold; a long text of
        // one line, one envelope.
        assert_eq!(
            envelopes_at_most(&"\n".repeat(9_700)),
            9_700 / SHORTEST_ENVELOPE.len()
        );
        let blank = "\n".repeat(LINE_COUNT_FROM_BYTES);
        let by_length = LINE_COUNT_FROM_BYTES / SHORTEST_ENVELOPE.len();
        assert_eq!(envelopes_at_most(&blank), by_length);
        assert_eq!(envelopes_at_most(&"x".repeat(LINE_COUNT_FROM_BYTES)), 1);
    }

    /// The split gives the lines `str::lines` gives, line ends of every kind
    /// included.
    #[test]
    fn log_lines_are_str_lines() {
        let parts = ["", "a", "\n", "\r\n", "\r", "é", "\n\n", "{}", " \r \n"];
        for a in parts {
            for b in parts {
                for c in parts {
                    let text = format!("{a}{b}{c}");
                    let ours: Vec<&str> = log_lines(&text).collect();
                    let std: Vec<&str> = text.lines().collect();
                    assert_eq!(ours, std, "{text:?}");
                }
            }
        }
    }
}
