//! The top-level fields of a JSON object in normal form ([`crate::json`]), found in one
//! scan: what the hot kinds' fast handlers read, from a log line (the wire path) or from
//! a decoded envelope's payload text (the general path), without building a tree.

use super::raw::{Text, View};
use crate::json::scan_normal_object;
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
/// any depth; `None` for anything else (another value, more text after it).
pub(super) fn of_object(text: &str) -> Option<Fields<'_>> {
    let mut at = 0;
    let fields = object(text, &mut at)?;
    (at == text.len()).then_some(fields)
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
