//! The top-level fields of a JSON object in normal form ([`crate::json`]), found in one
//! scan: what the hot kinds' fast handlers read, from a log line (the wire path) or from
//! a decoded envelope's payload text (the general path), without building a tree.

use super::raw::{Text, View};
use super::PROTO_KEY;
use crate::json::{plain_run, scan_normal_object, NORMAL_SCAN_DEPTH_MAX};
use std::borrow::Cow;

/// Most top-level payload (or metadata) fields a scan records; a payload with more
/// takes the slower path (the raw read, or the general handler). The hot kinds'
/// payloads have at most five.
pub(super) const FIELDS_MAX: usize = 8;

/// The top-level fields of a scanned object: key (without quotes) and value text.
#[derive(Clone, Copy)]
pub(super) struct Fields<'a> {
    n: usize,
    /// Set when the object had more than [`FIELDS_MAX`] fields.
    pub(super) overflow: bool,
    at: [(&'a str, &'a str); FIELDS_MAX],
}

impl<'a> Fields<'a> {
    fn new() -> Fields<'a> {
        Fields {
            n: 0,
            overflow: false,
            at: [("", ""); FIELDS_MAX],
        }
    }

    fn push(&mut self, key: &'a str, value: &'a str) {
        if self.n == FIELDS_MAX {
            self.overflow = true;
        } else {
            self.at[self.n] = (key, value);
            self.n += 1;
        }
    }

    /// Every field recorded, in the object's order: key (without quotes) and text.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&'a str, &'a str)> + '_ {
        self.at[..self.n].iter().copied()
    }

    /// A field's normal text.
    pub(super) fn get(&self, key: &str) -> Option<Text<'a>> {
        self.at[..self.n]
            .iter()
            .find(|(k, _)| *k == key)
            .map(|&(_, text)| Text { text, normal: true })
    }

    /// A field as serde reads an `Option<&RawValue>` with a default: absent and `null`
    /// are both `None`.
    pub(super) fn opt(&self, key: &str) -> Option<Text<'a>> {
        self.get(key).filter(|t| t.text != "null")
    }

    /// A field that must be a string (serde's `Cow<str>`): `None` when it is absent or
    /// another type. Normal text holds no escape, so the string is what lies between the
    /// quotes.
    pub(super) fn string(&self, key: &str) -> Option<Cow<'a, str>> {
        let t = self.get(key)?.text;
        t.starts_with('"')
            .then(|| Cow::Borrowed(&t[1..t.len() - 1]))
    }
}

/// An object's top-level fields, the object scanned in normal form.
pub(super) fn object<'a>(line: &'a str, at: &mut usize) -> Option<Fields<'a>> {
    let mut fields = Fields::new();
    // Keys and values begin and end at ASCII bytes, so each is a slice of the line.
    let mut sliced = true;
    let ok = scan_normal_object(
        line.as_bytes(),
        at,
        &mut |k, v| match (line.get(k), line.get(v)) {
            (Some(k), Some(v)) => fields.push(k, v),
            _ => sliced = false,
        },
    );
    (ok && sliced).then_some(fields)
}

/// The fields of a whole text that is one normal-form object with no `__proto__` key at
/// any depth, the form checked as it is scanned; `None` for anything else (another
/// value, more text after it). The split the fold uses ([`of_payload`]) is held to it.
#[cfg(test)]
fn of_object(text: &str) -> Option<Fields<'_>> {
    let mut at = 0;
    let fields = object(text, &mut at)?;
    (at == text.len()).then_some(fields)
}

/// The fields of a decoded envelope's payload text, which is already one value in normal
/// form (a [`crate::JsonText`]), split at its top level without checking the form again
/// (the decoder did, or the payload was printed from a tree). `None` for another value,
/// or one holding an escape or a `__proto__` key anywhere, or a field nested deeper than
/// the normal scan reads: the fast handlers read strings between their quotes and keep
/// values as normal text the scan takes, and FOLD-05's scrub is the general handler's.
pub(super) fn of_payload(text: &str) -> Option<Fields<'_>> {
    let b = text.as_bytes();
    if b.first() != Some(&b'{') || b.contains(&b'\\') || text.contains(PROTO_KEY) {
        return None;
    }
    let mut fields = Fields::new();
    if text == "{}" {
        return Some(fields);
    }
    let mut at = 1;
    loop {
        // A key: a string without escapes, then its colon.
        if b.get(at) != Some(&b'"') {
            return None;
        }
        let key_at = at + 1;
        let key_end = key_at + plain_run(&b[key_at..]);
        if b.get(key_end) != Some(&b'"') || b.get(key_end + 1) != Some(&b':') {
            return None;
        }
        let value_at = key_end + 2;
        at = value_end(b, value_at)?;
        // Keys and values begin and end at ASCII bytes, so each is a slice of the text.
        fields.push(text.get(key_at..key_end)?, text.get(value_at..at)?);
        match b.get(at) {
            Some(b',') => at += 1,
            Some(b'}') if at + 1 == b.len() => return Some(fields),
            _ => return None,
        }
    }
}

/// Where the value at `b[at]` ends (the comma or brace after it), in normal text without
/// escapes: strings skipped to their closing quote, containers counted, no deeper than
/// the normal scan reads.
fn value_end(b: &[u8], mut at: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *b.get(at)? {
            b'"' => {
                let inner = at + 1;
                at = inner + plain_run(&b[inner..]);
                if b.get(at) != Some(&b'"') {
                    return None;
                }
                at += 1;
            }
            b'{' | b'[' => {
                depth += 1;
                // The payload's own object is the first level the scan counts.
                if depth >= NORMAL_SCAN_DEPTH_MAX {
                    return None;
                }
                at += 1;
                continue;
            }
            b'}' | b']' if depth > 0 => {
                depth -= 1;
                at += 1;
            }
            b',' | b'}' | b']' if depth == 0 => return Some(at),
            _ => {
                at += 1;
                continue;
            }
        }
        if depth == 0 {
            return Some(at);
        }
    }
}

/// Whether [`fields_view`] reads `kind` (the hot kinds a long log is made of).
pub(super) fn has_fast_handler(kind: &str) -> bool {
    matches!(
        kind,
        "STEP_STARTED" | "STEP_COMPLETED" | "DECISION_RECORDED" | "EXECUTION_SUSPENDED"
    )
}

/// The hot kinds' views of a payload's scanned fields (a wire line's, or a decoded
/// envelope's payload text): `None` when the payload is not the object the kind's fast
/// handler reads (the general handler decides) or it has no fast handler.
pub(super) fn fields_view<'a>(kind: &str, f: &Fields<'a>) -> Option<View<'a>> {
    Some(match kind {
        "STEP_STARTED" => View::StepStarted {
            step_id: f.string("stepId")?,
            tool_id: f.opt("toolId"),
            kind: f.opt("kind"),
            attempt: f.opt("attempt"),
            input: f.opt("input"),
        },
        "STEP_COMPLETED" => View::StepCompleted {
            step_id: f.string("stepId")?,
            output: f.opt("output"),
        },
        "DECISION_RECORDED" => View::Decision {
            id: f.string("id")?,
            // Present with `null` is present, as the raw path reads these three.
            choice: f.get("choice")?,
            context: f.get("context"),
            policy: f.get("policy"),
        },
        "EXECUTION_SUSPENDED" => View::Suspended {
            on: f.string("on")?,
            wake_at: f.opt("wakeAt"),
            condition: f.opt("condition"),
            waits: f.opt("waits"),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On normal text, the split of a payload gives the fields the validating scan gives,
    /// or leaves the payload to the general handler where the scan would too (an
    /// escape, a `__proto__` key, a field past the scan's depth); it never splits text
    /// the scan refuses into fields.
    #[test]
    fn of_payload_is_of_object_on_normal_text() {
        let deep = |d: usize| "[".repeat(d) + &"]".repeat(d);
        let cases = [
            "{}".to_owned(),
            r#"{"a":1}"#.to_owned(),
            r#"{"a":"x,}]","b":[1,{"c":"}"}],"c":{"d":[]},"e":-0.5,"f":true,"g":null}"#.to_owned(),
            r#"{"a":"tab	here"}"#.to_owned(),
            r#"{"__proto__":1,"a":2}"#.to_owned(),
            r#"{"a":{"__proto__":1}}"#.to_owned(),
            r#"{"a":"__proto__"}"#.to_owned(),
            format!(r#"{{"a":{}}}"#, deep(NORMAL_SCAN_DEPTH_MAX - 1)),
            format!(r#"{{"a":{}}}"#, deep(NORMAL_SCAN_DEPTH_MAX)),
            format!(r#"{{"a":{}}}"#, deep(NORMAL_SCAN_DEPTH_MAX + 1)),
            r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}"#.to_owned(),
            "[1]".to_owned(),
            r#""s""#.to_owned(),
            "7".to_owned(),
        ];
        fn pairs<'a>(f: &Fields<'a>) -> (bool, Vec<(&'a str, &'a str)>) {
            (f.overflow, f.at[..f.n].to_vec())
        }
        for text in &cases {
            let split = of_payload(text);
            if let Some(split) = &split {
                let scanned = of_object(text)
                    .unwrap_or_else(|| panic!("split what the scan refuses: {text}"));
                assert_eq!(pairs(split), pairs(&scanned), "{text}");
            }
            // Where the scan takes a payload without an escape or `__proto__`, so does the split.
            if !text.contains('\\') && !text.contains(PROTO_KEY) {
                assert_eq!(split.is_some(), of_object(text).is_some(), "{text}");
            }
        }
    }

    /// The kind check before the scan names exactly the kinds the views read.
    #[test]
    fn has_fast_handler_is_the_kinds_fields_view_reads() {
        let payload = r#"{"choice":1,"id":"d","on":"g","stepId":"s"}"#;
        let fields = of_object(payload).expect("a normal object");
        for kind in crate::fold::known_event_types() {
            assert_eq!(
                fields_view(kind, &fields).is_some(),
                has_fast_handler(kind),
                "{kind}"
            );
        }
    }
}
