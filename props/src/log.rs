//! Generated event logs: mostly well-formed, with targeted corruption.
//!
//! A [`LogSpec`] is a list of (type, payload, metadata) triples; [`LogSpec::envelopes`]
//! numbers them 0.. with timestamps `1000 + 10 * sequence`. The grammar decides which
//! families of kinds may appear, so that a property about older snapshot writers can ask
//! for logs an older kernel could have written.

use crate::json::{number, payload};
use crate::limits::LOG_EVENTS_MAX;
use arbitrary::{Arbitrary, Result, Unstructured};
use loom_kernel::EventEnvelope;
use serde_json::{json, Map, Value};

/// Which families of events a generated log may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grammar {
    /// Wave 2 (1.23), quarantine (1.25) and `EVENTS_REHOMED` (1.22) kinds.
    pub newer_kinds: bool,
    /// `EXECUTION_FAILED` without `error` (the SNAP-04 (a) shape).
    pub failed_without_error: bool,
    /// Unknown kinds and stamped application events.
    pub foreign: bool,
    /// Targeted corruption of one or two events (wrong field types, `__proto__` keys,
    /// forged metadata, non-object payloads).
    pub corruption: bool,
}

impl Grammar {
    /// Everything.
    pub const FULL: Grammar = Grammar {
        newer_kinds: true,
        failed_without_error: true,
        foreign: true,
        corruption: true,
    };
    /// What a pre-1.22 kernel could have written, uncorrupted.
    pub const LEGACY: Grammar = Grammar {
        newer_kinds: false,
        failed_without_error: false,
        foreign: true,
        corruption: false,
    };
}

/// One event under construction.
#[derive(Debug, Clone, PartialEq)]
pub struct EventSpec {
    /// The kind.
    pub event_type: String,
    /// The payload.
    pub payload: Value,
    /// Envelope metadata.
    pub metadata: Option<Map<String, Value>>,
}

impl EventSpec {
    /// An event without metadata.
    pub fn new(event_type: &str, payload: Value) -> EventSpec {
        EventSpec {
            event_type: event_type.to_owned(),
            payload,
            metadata: None,
        }
    }

    /// Sets one metadata key.
    pub fn meta(mut self, key: &str, value: Value) -> EventSpec {
        self.metadata
            .get_or_insert_with(Map::new)
            .insert(key.to_owned(), value);
        self
    }

    /// Stamps `metadata.kernel: true`.
    pub fn kernel(self) -> EventSpec {
        self.meta("kernel", Value::Bool(true))
    }
}

/// A generated log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogSpec {
    /// The events, in log order.
    pub events: Vec<EventSpec>,
}

impl LogSpec {
    /// Envelopes numbered 0.. of execution `exec-1`.
    pub fn envelopes(&self) -> Vec<EventEnvelope> {
        self.events
            .iter()
            .enumerate()
            .map(|(i, e)| envelope(i as u64, e.clone()))
            .collect()
    }

    /// A log of up to `max` events (plus a leading `EXECUTION_STARTED` most of the time).
    pub fn generate(u: &mut Unstructured<'_>, g: Grammar, max: usize) -> Result<LogSpec> {
        let mut events = Vec::new();
        if u.ratio(7u8, 8u8)? {
            events.push(EventSpec::new("EXECUTION_STARTED", json!({"input": 0})));
        }
        let n = u.int_in_range(0..=max)?;
        for _ in 0..n {
            events.push(event(u, g)?);
        }
        if g.corruption && !events.is_empty() {
            for _ in 0..u.int_in_range(0..=2u8)? {
                let i = u.choose_index(events.len())?;
                corrupt(u, &mut events[i])?;
            }
        }
        Ok(LogSpec { events })
    }
}

impl<'a> Arbitrary<'a> for LogSpec {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        LogSpec::generate(u, Grammar::FULL, LOG_EVENTS_MAX)
    }
}

/// The envelope at `sequence` for `e`.
pub fn envelope(sequence: u64, e: EventSpec) -> EventEnvelope {
    EventEnvelope {
        id: format!("e{sequence}"),
        workflow_id: "flow".into(),
        execution_id: "exec-1".into(),
        event_type: e.event_type,
        sequence,
        timestamp_ms: 1000 + 10 * sequence as i64,
        payload: e.payload.into(),
        metadata: e.metadata,
    }
}

/// Step ids: ordinary ones and the key the fold refuses.
pub const STEP_IDS: [&str; 4] = ["a", "b", "c", "__proto__"];
/// Gates: two ordinary ones and the two reserved ones.
pub const GATES: [&str; 4] = ["approve", "review", "__loom_indoubt__", "__loom_diverged__"];
/// Decision ids, including array-index-like keys (JS map order) and a reserved one.
pub const DECISION_IDS: [&str; 5] = ["d1", "d2", "3", "10", "__loom_verdict:a#1"];

fn step(u: &mut Unstructured<'_>) -> Result<&'static str> {
    Ok(*u.choose(&STEP_IDS)?)
}

/// One well-formed event of the grammar.
pub fn event(u: &mut Unstructured<'_>, g: Grammar) -> Result<EventSpec> {
    let base = 18;
    let foreign = if g.foreign { 3 } else { 0 };
    let newer = if g.newer_kinds { 7 } else { 0 };
    let failed = usize::from(g.failed_without_error);
    let pick = u.choose_index(base + foreign + newer + failed)?;
    let e = |t: &str, p: Value| EventSpec::new(t, p);
    Ok(match pick {
        0 => e("EXECUTION_STARTED", json!({"input": payload(u)?})),
        1 | 2 => e(
            "STEP_STARTED",
            json!({"stepId": step(u)?, "input": payload(u)?}),
        ),
        3 | 4 => e(
            "STEP_COMPLETED",
            json!({"stepId": step(u)?, "output": payload(u)?}),
        ),
        5 => e("STEP_FAILED", json!({"stepId": step(u)?, "error": "boom"})),
        6 => e(
            "STEP_FAILED",
            json!({"stepId": step(u)?, "error": "typed", "channel": "c", "payload": payload(u)?}),
        ),
        7 => e(
            "STEP_RETRYING",
            json!({"stepId": step(u)?, "attempt": u.int_in_range(1u8..=3)?}),
        ),
        8 => e("STEP_CANCELLED", json!({"stepId": step(u)?})),
        9 => e(
            "EFFECT_INDOUBT",
            json!({"stepId": step(u)?, "attempt": u.int_in_range(1u8..=2)?}),
        ),
        10 => e("EXECUTION_SUSPENDED", suspend_payload(u)?),
        11 => {
            let p = if u.arbitrary()? {
                Value::Null
            } else {
                payload(u)?
            };
            e("EXECUTION_RESUMED", p)
        }
        12 | 13 => {
            let mut p = json!({"id": *u.choose(&DECISION_IDS)?, "choice": payload(u)?});
            if u.arbitrary()? {
                p["context"] = payload(u)?;
            }
            if u.ratio(1u8, 4u8)? {
                p["seq"] = json!(u.int_in_range(0u8..=40)?);
            }
            e("DECISION_RECORDED", p)
        }
        14 => e("EXECUTION_FAILED", json!({"error": payload(u)?})),
        15 => e("EXECUTION_COMPLETED", json!({"output": payload(u)?})),
        16 => match u.choose_index(4)? {
            0 => e("EXECUTION_CANCELLED", json!({})),
            1 => e("EXECUTION_MIGRATED", json!({"migratedInput": payload(u)?})),
            2 => e("TIMER_FIRED", json!({"firedAt": 5})),
            _ => e(
                "RESOURCE_METERED",
                json!({"tokens": u.int_in_range(0u8..=50)?, "costUsd": number(f64::from(u.int_in_range(0u8..=3)?) * 0.5)}),
            ),
        },
        17 => e("OUTCOME_RECORDED", json!({"outcome": payload(u)?})),
        p if p < base + foreign => match p - base {
            0 => e("app.progress", payload(u)?),
            1 => e("app.progress", json!({})).meta(
                "flowEmit",
                json!(*u.choose(&["00000000000000aa", "00000000000000bb"])?),
            ),
            _ => e("NOT_A_KERNEL_KIND", payload(u)?),
        },
        p if p < base + foreign + newer => {
            let kernel: bool = u.arbitrary()?;
            let ev = match p - base - foreign {
                0 => e(
                    "INBOX_QUARANTINED",
                    json!({"topic": "t", "messageId": *u.choose(&["q1", "q2"])?}),
                ),
                1 => {
                    let mut p = json!({"topic": "t"});
                    if u.arbitrary()? {
                        p["operator"] = json!("alice");
                    } else {
                        p["auto"] = json!(true);
                    }
                    if u.arbitrary()? {
                        p["deliver"] = json!(true);
                    }
                    e("INBOX_RELEASED", p)
                }
                2 => e(
                    "MESSAGE_CONSUMED",
                    json!({"topic": "t", "messageId": *u.choose(&["q1", "q2"])?, "waitId": "w"}),
                ),
                3 => e("EXECUTION_CONTINUED", json!({"continuedTo": "next"})),
                4 => e("PARALLEL_COMPLETED", json!({"scopeId": "p", "n": 2})),
                5 => e("EXECUTION_RESUMED", json!({"waitId": "w", "answer": 1})),
                _ => e("EVENTS_REHOMED", json!({"segment": 1})),
            };
            if kernel {
                ev.kernel()
            } else {
                ev
            }
        }
        _ => e("EXECUTION_FAILED", json!({})),
    })
}

/// An `EXECUTION_SUSPENDED` payload: a gate, sometimes timed, in-doubt parks with the
/// step and attempt they wait on.
pub fn suspend_payload(u: &mut Unstructured<'_>) -> Result<Value> {
    let gate = *u.choose(&GATES)?;
    let mut p = json!({"on": gate});
    if u.arbitrary()? {
        p["wakeAt"] = json!(u.int_in_range(0u16..=10_000)?);
    }
    if gate == "__loom_indoubt__" {
        p["condition"] = json!({"stepId": step(u)?, "attempt": u.int_in_range(1u8..=2)?});
    }
    Ok(p)
}

/// Applies one targeted corruption to `e`.
pub fn corrupt(u: &mut Unstructured<'_>, e: &mut EventSpec) -> Result<()> {
    match u.choose_index(9)? {
        // Drop a field.
        0 => {
            if let Value::Object(m) = &mut e.payload {
                if !m.is_empty() {
                    let i = u.choose_index(m.len())?;
                    if let Some(k) = m.keys().nth(i).cloned() {
                        m.remove(&k);
                    }
                }
            }
        }
        // A field of the wrong type.
        1 => {
            if let Value::Object(m) = &mut e.payload {
                let k = *u.choose(&["stepId", "id", "on", "attempt", "wakeAt", "error"])?;
                let bad = match u.choose_index(4)? {
                    0 => json!(7),
                    1 => json!(["x"]),
                    2 => Value::Null,
                    _ => json!({"k": 1}),
                };
                m.insert(k.to_owned(), bad);
            }
        }
        // A payload that is not an object.
        2 => {
            e.payload = match u.choose_index(4)? {
                0 => Value::Null,
                1 => json!("text"),
                2 => json!(42.5),
                _ => json!([1, 2]),
            }
        }
        // `__proto__` at depth 1 or 2 (FOLD-05).
        3 => {
            if let Value::Object(m) = &mut e.payload {
                let inner = json!({"__proto__": {"polluted": true}, "ok": 1});
                if u.arbitrary()? {
                    m.insert("__proto__".into(), json!({"polluted": true}));
                } else {
                    m.insert("nested".into(), inner);
                }
            }
        }
        // `metadata.kernel` in every spelling (FOLD-30).
        4 => {
            let k = match u.choose_index(5)? {
                0 => json!(true),
                1 => json!(false),
                2 => json!("true"),
                3 => json!(1),
                _ => Value::Null,
            };
            *e = e.clone().meta("kernel", k);
        }
        // `metadata.seal` (FOLD-40).
        5 => {
            *e = e.clone().meta(
                "seal",
                json!({"v": 1, "cipher": "x", "covers": ["payload"]}),
            )
        }
        // Fork metadata (FOLD-31).
        6 => {
            *e = e
                .clone()
                .meta("forkChain", json!(["p"]))
                .meta("forkedBy", json!("op"))
        }
        // A near-miss kind name.
        7 => {
            e.event_type = match u.choose_index(3)? {
                0 => e.event_type.to_lowercase(),
                1 => format!("{} ", e.event_type),
                _ => format!("X_{}", e.event_type),
            }
        }
        // A huge or fractional number where an integer is expected, or the largest
        // integer JSON text can carry into a u64 (a counter one `+ 1` from overflow:
        // props/regressions/fold_total/step-attempt-at-u64-max).
        _ => {
            if let Value::Object(m) = &mut e.payload {
                let k = *u.choose(&["attempt", "wakeAt", "tokens"])?;
                let x = match u.choose_index(5)? {
                    4 => Value::from(u64::MAX),
                    i => number([1e300, -1.0, 0.5, 9_007_199_254_740_993.0][i]),
                };
                m.insert(k.to_owned(), x);
            }
        }
    }
    Ok(())
}

/// The log as JSON lines, the text form `decode_log` reads.
pub fn to_json_lines(events: &[EventEnvelope]) -> String {
    let mut out = String::new();
    for e in events {
        out.push_str(&serde_json::to_string(e).unwrap_or_default());
        out.push('\n');
    }
    out
}
