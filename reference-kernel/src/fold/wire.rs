//! The fold's wire path: a JSON line in the form this project's writers give an
//! envelope, read in one pass that looks at each byte once.
//!
//! The form is what `serde_json` prints for an [`crate::EventEnvelope`]: the keys in
//! wire order (`id`, `workflowId`, `executionId`, `eventType`, `sequence`, `timestamp`,
//! `payload`, then `metadata` when present), no whitespace, the four strings without
//! escapes, `sequence` and `timestamp` as plain integers, the payload and metadata in
//! the normal form [`crate::json`] scans (compact, keys in byte order and each once, no
//! escape, no `__proto__` key at any depth). Every line in that form is a valid
//! envelope the strict decoder reads as the same envelope, so the wire path is a fast
//! path of the one grammar, never a second one: a line it does not take, for any reason,
//! goes to the raw path ([`super::raw`]) and from there, when that cannot take it either,
//! to the strict decoder, which gives its envelope or its error.
//!
//! While it scans the payload it records the payload's top-level fields, so the hot
//! kinds' handlers ([`super::raw::apply_view`], shared with the raw path) read them
//! without a second scan; a kept value (a step's input or output, a decision's parts)
//! goes into the state as the text it is, already known to be normal.
//! `tests/fold_text.rs` and the `fold_total` property hold the whole text path, this
//! part included, to `decode_log` then the fold.

use super::fields::{fields_view, object, Fields};
use super::handlers::{apply_parts, bookkeep, count_flow_emit, Head};
use super::raw::{apply_view, Fast};
use super::{is_known_event_type, DiagnosticSink, ExecutionState, FoldVersion};
use crate::json::{digits_value, scan_normal, scan_plain_string};
use serde_json::{Map, Value};

/// One line read in the wire form.
pub(crate) struct WireLine<'a> {
    pub id: &'a str,
    pub workflow_id: &'a str,
    pub execution_id: &'a str,
    pub event_type: &'a str,
    pub sequence: u64,
    pub timestamp_ms: i64,
    /// The payload's normal text.
    pub payload: &'a str,
    /// The metadata's normal text, when the line has metadata.
    pub metadata_text: Option<&'a str>,
    /// Its top-level fields, when it is an object.
    fields: Option<Fields<'a>>,
    /// The metadata's top-level fields, when the line has metadata.
    metadata: Option<Fields<'a>>,
}

impl WireLine<'_> {
    /// The metadata as the strict decoder builds it, from the fields the scan recorded
    /// (`Some(None)` when the line has none): in normal form a string holds no escape
    /// and each key stands once, so strings and literals are built as they lie, where
    /// serde_json would scan the text again; a number or a container, and metadata with
    /// more fields than a scan records, are parsed by serde_json. `None` leaves the line
    /// to the strict decoder.
    pub(crate) fn metadata_map(&self) -> Option<Option<Map<String, Value>>> {
        let (Some(text), Some(fields)) = (self.metadata_text, &self.metadata) else {
            return Some(None);
        };
        if fields.overflow {
            return serde_json::from_str(text).ok().map(Some);
        }
        let mut map = Map::new();
        for (key, value) in fields.iter() {
            let value = match value.as_bytes().first()? {
                b'"' => Value::String(value[1..value.len() - 1].to_owned()),
                b't' => Value::Bool(true),
                b'f' => Value::Bool(false),
                b'n' => Value::Null,
                _ => serde_json::from_str(value).ok()?,
            };
            map.insert(key.to_owned(), value);
        }
        Some(Some(map))
    }
}

/// Reads `b[*at..]` as exactly `literal`.
fn expect(b: &[u8], at: &mut usize, literal: &[u8]) -> Option<()> {
    b[*at..].starts_with(literal).then(|| *at += literal.len())
}

/// A string without escapes, as `&str` (the line is UTF-8 and a string's contents end at
/// an ASCII quote, so the slice is UTF-8 too).
fn plain<'a>(line: &'a str, at: &mut usize) -> Option<&'a str> {
    let start = *at + 1;
    let inner = scan_plain_string(line.as_bytes(), at)?;
    line.get(start..start + inner.len())
}

/// Plain integer digits at `b[*at..]` (no sign, no leading zero, no fraction or exponent
/// after them), as text.
fn digits<'a>(line: &'a str, at: &mut usize) -> Option<&'a str> {
    let b = line.as_bytes();
    let n = b[*at..].iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || (n > 1 && b[*at] == b'0') || matches!(b.get(*at + n), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    let text = &line[*at..*at + n];
    *at += n;
    Some(text)
}

/// Reads a line in the wire form; `None` for any other line (the raw path's then).
pub(crate) fn read(line: &str) -> Option<WireLine<'_>> {
    let b = line.as_bytes();
    let mut at = 0;
    expect(b, &mut at, b"{\"id\":")?;
    let id = plain(line, &mut at)?;
    expect(b, &mut at, b",\"workflowId\":")?;
    let workflow_id = plain(line, &mut at)?;
    expect(b, &mut at, b",\"executionId\":")?;
    let execution_id = plain(line, &mut at)?;
    expect(b, &mut at, b",\"eventType\":")?;
    let event_type = plain(line, &mut at)?;
    if event_type.is_empty() {
        return None;
    }
    expect(b, &mut at, b",\"sequence\":")?;
    let sequence = digits_value(digits(line, &mut at)?.as_bytes())?;
    expect(b, &mut at, b",\"timestamp\":")?;
    let negative = b.get(at) == Some(&b'-');
    at += usize::from(negative);
    let magnitude = digits(line, &mut at)?;
    // `-0` reads as a float, which the strict decoder refuses as a timestamp.
    let magnitude = digits_value(magnitude.as_bytes())?;
    let timestamp_ms = if negative {
        if magnitude == 0 {
            return None;
        }
        0i64.checked_sub_unsigned(magnitude)?
    } else {
        i64::try_from(magnitude).ok()?
    };
    expect(b, &mut at, b",\"payload\":")?;
    let payload_at = at;
    let fields = if b.get(at) == Some(&b'{') {
        Some(object(line, &mut at)?)
    } else {
        scan_normal(b, &mut at).then_some(())?;
        None
    };
    let payload = &line[payload_at..at];
    let (metadata, metadata_text) = if b.get(at) == Some(&b',') {
        expect(b, &mut at, b",\"metadata\":")?;
        let metadata_at = at;
        let fields = object(line, &mut at)?;
        (Some(fields), Some(&line[metadata_at..at]))
    } else {
        (None, None)
    };
    expect(b, &mut at, b"}")?;
    (at == b.len()).then_some(WireLine {
        id,
        workflow_id,
        execution_id,
        event_type,
        sequence,
        timestamp_ms,
        payload,
        metadata_text,
        fields,
        metadata,
    })
}

/// Folds one wire line, as the raw path would fold the same line: `false` (nothing
/// folded) when it leaves the line to the raw path.
pub(super) fn apply_wire(
    state: &mut ExecutionState,
    w: &WireLine<'_>,
    index: usize,
    v: FoldVersion,
    sink: &mut dyn DiagnosticSink,
) -> bool {
    let kind = w.event_type;
    if !is_known_event_type(kind) {
        // FOLD-04: an unknown kind is inert and its payload never read; only a string
        // `flowEmit` stamp counts (FOLD-19), and a stamp of another type is no stamp.
        let Some(meta) = &w.metadata else {
            return true;
        };
        if meta.overflow {
            return false;
        }
        if let Some(d) = meta.string("flowEmit").filter(|_| v.has(19)) {
            if count_flow_emit(state, &d) {
                bookkeep(state, w.sequence, w.timestamp_ms);
            }
        }
        return true;
    }
    if w.metadata.is_some() {
        // A known kind's metadata (a kernel stamp, a `flowEmit`) is the raw path's.
        return false;
    }
    let fast = match &w.fields {
        Some(f) if f.overflow => return false,
        Some(f) => match fields_view(kind, f) {
            Some(view) => match apply_view(state, view, w.sequence, v) {
                Ok(fast) => fast,
                Err(_) => return false,
            },
            None => Fast::General,
        },
        None => Fast::General,
    };
    if let Fast::Done = fast {
        bookkeep(state, w.sequence, w.timestamp_ms);
        return true;
    }
    // The general handler, with the payload built as a tree from its normal text (which
    // holds no `__proto__` key, so the handler's scrub finds none).
    let Ok(payload) = serde_json::from_str::<Value>(w.payload) else {
        return false;
    };
    let head = Head {
        event_type: kind,
        sequence: w.sequence,
        timestamp_ms: w.timestamp_ms,
        index,
    };
    apply_parts(state, head, payload, None, v, sink);
    true
}
