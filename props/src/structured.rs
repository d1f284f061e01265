//! Structure-aware fold inputs: a compact log model that the fuzzer mutates record by
//! record, turned into [`EventEnvelope`]s directly (no JSON text, no decoder).
//!
//! An input is a short fixed header followed by fixed-width event records of
//! [`EVENT_RECORD_BYTES`] bytes: `[kind, ids, shape, leaf]`. One byte picks the kind
//! ([`Ev`], 32 kinds drawn from the fold's handlers), one the small ids (step, gate,
//! decision id, attempt, flags), two the payload ([`Val`], a bounded JSON shape). Fixed
//! widths keep libFuzzer's byte mutations local: flipping a byte changes one field of
//! one event and never shifts the rest of the log, and the log grows by whole records
//! as the fuzzer grows the input. `derive(Arbitrary)` was not used for the model: its
//! enum tag is a little-endian `u32` (four bytes, the variant decided by the last), so a
//! one-byte mutation rarely changes a kind, and variants of different sizes shift every
//! later event.
//!
//! The header (one to six bytes) carries what [`crate::log::LogSpec`] decides per log
//! (the leading `EXECUTION_STARTED`, the snapshot writer and points); it is short so
//! that a few bytes already make a log. A record whose kind byte is at least
//! [`CORRUPTION_KIND_MIN`] is a targeted corruption of the event before it, applied by
//! the same [`crate::log::corrupt`] the text-form targets use.
//! The envelopes leave `id`, `workflowId` and `executionId` empty: the fold never reads
//! them, and an empty `String` clones without allocating, so each fold of the log
//! allocates only what the fold itself keeps.

use crate::fold::{
    fold_everything, snapshot_equivalence, unknown_kind_inert, versioned_fold_events,
};
use crate::json::{number, KEYS};
use crate::kernel::{KernelUnderTest, Reference};
use crate::limits::LOG_EVENTS_MAX;
use crate::log::{corrupt, EventSpec, DECISION_IDS, GATES, STEP_IDS};
use crate::violation::PropertyViolation;
use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use loom_kernel::fold::{is_known_event_type, known_event_types, FoldVersion};
use loom_kernel::EventEnvelope;
use serde_json::{Map, Value};

/// Bytes per event record: kind, ids, payload shape, payload leaf.
pub const EVENT_RECORD_BYTES: usize = 4;
/// Kind bytes from this value up make a record a corruption of the event before it
/// (16 of 256 values: about one and a half per 24 records, as `LogSpec::generate`'s
/// zero to two per log), in the full grammar.
pub const CORRUPTION_KIND_MIN: u8 = 240;
/// Bytes of the event records the model reads at most; bytes past them are ignored.
const RECORDS_BYTES_MAX: usize = LOG_EVENTS_MAX * EVENT_RECORD_BYTES;

/// A scalar payload leaf.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Leaf {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer, -500..=520.
    Int(i16),
    /// A multiple of 1/8 (a fraction the canonical writer must spell exactly).
    Eighths(i16),
    /// One of the generator's short strings (`""`, `"__proto__"`, `"é"`, a quote…).
    Word(u8),
}

const WORDS: [&str; 6] = ["", "x", "boom", "__proto__", "é", "a\"b"];

impl Leaf {
    /// The leaf a byte names: the low bits pick the kind, the rest the value.
    pub fn from_byte(b: u8) -> Leaf {
        let arg = b / 5;
        match b % 5 {
            0 => Leaf::Null,
            1 => Leaf::Bool(arg & 1 == 1),
            2 => Leaf::Int(i16::from(arg) * 20 - 500),
            3 => Leaf::Eighths((i16::from(arg) - 25) * 13),
            _ => Leaf::Word(arg % WORDS.len() as u8),
        }
    }

    fn value(self) -> Value {
        match self {
            Leaf::Null => Value::Null,
            Leaf::Bool(b) => Value::Bool(b),
            Leaf::Int(i) => Value::from(i),
            Leaf::Eighths(x) => number(f64::from(x) / 8.0),
            Leaf::Word(w) => Value::String(WORDS[usize::from(w)].to_owned()),
        }
    }
}

/// A bounded payload shape: the JSON forms the fold stores, scrubs or refuses, nesting
/// at most three levels ([`crate::limits::PAYLOAD_DEPTH_MAX`]). Keys are indexes into
/// [`KEYS`] (which holds `__proto__`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Val {
    /// A scalar.
    Leaf(Leaf),
    /// `[]`.
    EmptyArray,
    /// `[leaf]`.
    Array1(Leaf),
    /// `[leaf, leaf2]`.
    Array2(Leaf, Leaf),
    /// `{}`.
    EmptyObject,
    /// `{key: leaf}`.
    Object(u8, Leaf),
    /// `{key: leaf, key2: leaf2}`.
    Object2(u8, Leaf, u8, Leaf),
    /// `{key: {key2: leaf}}`.
    Nested(u8, u8, Leaf),
    /// `[{key: leaf}]`.
    ArrayOfObject(u8, Leaf),
    /// `{key: {key2: [leaf]}}`: three levels.
    Deep(u8, u8, Leaf),
}

impl Val {
    /// The shape two bytes name: `shape` picks the form and the keys, `leaf` the values.
    pub fn from_bytes(shape: u8, leaf: u8) -> Val {
        let keys = KEYS.len() as u8;
        let (k1, k2) = ((shape / 10) % keys, (shape / 3) % keys);
        let a = Leaf::from_byte(leaf);
        let b = Leaf::from_byte(leaf.rotate_left(3));
        match shape % 10 {
            0 | 1 => Val::Leaf(a),
            2 => Val::EmptyArray,
            3 => Val::Array1(a),
            4 => Val::Array2(a, b),
            5 => Val::EmptyObject,
            6 => Val::Object(k1, a),
            7 => Val::Object2(k1, a, k2, b),
            8 => Val::Nested(k1, k2, a),
            _ if shape & 0x80 == 0 => Val::ArrayOfObject(k1, a),
            _ => Val::Deep(k1, k2, a),
        }
    }

    /// The JSON value.
    pub fn value(self) -> Value {
        let key = |k: u8| KEYS[usize::from(k) % KEYS.len()].to_owned();
        let obj = |pairs: &mut dyn Iterator<Item = (String, Value)>| {
            let mut m = Map::new();
            for (k, v) in pairs {
                m.insert(k, v);
            }
            Value::Object(m)
        };
        match self {
            Val::Leaf(a) => a.value(),
            Val::EmptyArray => Value::Array(Vec::new()),
            Val::Array1(a) => Value::Array(vec![a.value()]),
            Val::Array2(a, b) => Value::Array(vec![a.value(), b.value()]),
            Val::EmptyObject => Value::Object(Map::new()),
            Val::Object(k, a) => obj(&mut std::iter::once((key(k), a.value()))),
            Val::Object2(k, a, k2, b) => {
                obj(&mut [(key(k), a.value()), (key(k2), b.value())].into_iter())
            }
            Val::Nested(k, k2, a) => obj(&mut std::iter::once((
                key(k),
                obj(&mut std::iter::once((key(k2), a.value()))),
            ))),
            Val::ArrayOfObject(k, a) => {
                Value::Array(vec![obj(&mut std::iter::once((key(k), a.value())))])
            }
            Val::Deep(k, k2, a) => obj(&mut std::iter::once((
                key(k),
                obj(&mut std::iter::once((
                    key(k2),
                    Value::Array(vec![a.value()]),
                ))),
            ))),
        }
    }
}

/// One event of the model: a kind with its small ids and payload. The kinds and their
/// weights follow [`crate::log::event`]'s grammar (two records each for the commonest
/// step and decision kinds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ev {
    /// `EXECUTION_STARTED {input}`.
    Started(Val),
    /// `STEP_STARTED {stepId, input}` (step index into [`STEP_IDS`]).
    StepStarted(u8, Val),
    /// `STEP_COMPLETED {stepId, output}`.
    StepCompleted(u8, Val),
    /// `STEP_FAILED {stepId, error: "boom"}`.
    StepFailed(u8),
    /// `STEP_FAILED {stepId, error: "typed", channel, payload}`.
    StepFailedTyped(u8, Val),
    /// `STEP_RETRYING {stepId, attempt}`.
    StepRetrying(u8, u8),
    /// `STEP_CANCELLED {stepId}`.
    StepCancelled(u8),
    /// `EFFECT_INDOUBT {stepId, attempt}`.
    EffectIndoubt(u8, u8),
    /// `EXECUTION_SUSPENDED {on, wakeAt?, condition?}` (gate index into [`GATES`]).
    Suspended {
        /// The gate.
        gate: u8,
        /// `wakeAt`, when timed.
        wake_at: Option<u16>,
        /// The in-doubt condition's step (used for the in-doubt gate only).
        step: u8,
        /// The in-doubt condition's attempt.
        attempt: u8,
    },
    /// `EXECUTION_RESUMED` with a payload, or `null`.
    Resumed(Option<Val>),
    /// `DECISION_RECORDED {id, choice, context?, seq?}` (id index into [`DECISION_IDS`]).
    Decision {
        /// The decision id.
        id: u8,
        /// The choice.
        choice: Val,
        /// The context, when recorded.
        context: Option<Leaf>,
        /// A `seq` forged into the payload (the fold must ignore it).
        seq: Option<u8>,
    },
    /// `EXECUTION_FAILED {error}`.
    Failed(Val),
    /// `EXECUTION_COMPLETED {output}`.
    Completed(Val),
    /// `EXECUTION_CANCELLED {}`.
    Cancelled,
    /// `EXECUTION_MIGRATED {migratedInput}`.
    Migrated(Val),
    /// `TIMER_FIRED {firedAt: 5}`.
    TimerFired,
    /// `RESOURCE_METERED {tokens, costUsd}` (cost in halves).
    Metered(u8, u8),
    /// `OUTCOME_RECORDED {outcome}`.
    Outcome(Val),
    /// `app.progress` with any payload.
    AppProgress(Val),
    /// `app.progress {}` stamped with `metadata.flowEmit` (one of two digests).
    AppProgressStamped(bool),
    /// `NOT_A_KERNEL_KIND` with any payload.
    Foreign(Val),
    /// `INBOX_QUARANTINED {topic, messageId}`; the flag is `metadata.kernel: true`.
    Quarantined(bool, bool),
    /// `INBOX_RELEASED {topic, operator | auto, deliver?}`.
    Released {
        /// `operator: "alice"` (else `auto: true`).
        operator: bool,
        /// `deliver: true`.
        deliver: bool,
        /// Kernel-stamped.
        kernel: bool,
    },
    /// `MESSAGE_CONSUMED {topic, messageId, waitId}`.
    Consumed(bool, bool),
    /// `EXECUTION_CONTINUED {continuedTo}`.
    Continued(bool),
    /// `PARALLEL_COMPLETED {scopeId, n}`.
    ParallelCompleted(bool),
    /// `EXECUTION_RESUMED {waitId, answer}` (a wait resume).
    ResumedWait(bool),
    /// `EVENTS_REHOMED {segment}`.
    Rehomed(bool),
    /// `EXECUTION_FAILED {}` (no `error`: the SNAP-04 (a) shape).
    FailedBare,
}

/// Kinds an older kernel could have written: the first this many of the kind byte's
/// 32 values (the rest are the 1.22+ kinds and the error-less failure).
const LEGACY_KINDS: u8 = 24;
/// Kind byte values.
const KINDS: u8 = 32;

impl Ev {
    /// The event a record names. `legacy` folds the kind byte into the kinds a pre-1.22
    /// kernel wrote (as [`crate::log::Grammar::LEGACY`]).
    pub fn from_record(r: [u8; EVENT_RECORD_BYTES], legacy: bool) -> Ev {
        let [kind, x, s, l] = r;
        let mut kind = kind % KINDS;
        if legacy {
            kind %= LEGACY_KINDS;
        }
        let step = x % STEP_IDS.len() as u8;
        let val = Val::from_bytes(s, l);
        let kernel = x & 0x80 != 0;
        match kind {
            0 => Ev::Started(val),
            1 | 2 => Ev::StepStarted(step, val),
            3 | 4 => Ev::StepCompleted(step, val),
            5 => Ev::StepFailed(step),
            6 => Ev::StepFailedTyped(step, val),
            7 => Ev::StepRetrying(step, 1 + (x / 4) % 3),
            8 => Ev::StepCancelled(step),
            9 => Ev::EffectIndoubt(step, 1 + (x / 4) % 2),
            10 => Ev::Suspended {
                gate: x % GATES.len() as u8,
                wake_at: (x & 4 != 0).then(|| (u16::from(s) * 40).min(10_000)),
                step: (x / 8) % STEP_IDS.len() as u8,
                attempt: 1 + (x / 32) % 2,
            },
            11 => Ev::Resumed((x & 1 == 0).then_some(val)),
            12 | 13 => Ev::Decision {
                id: x % DECISION_IDS.len() as u8,
                choice: val,
                context: (x & 8 != 0).then(|| Leaf::from_byte(l.rotate_left(5))),
                seq: ((x / 16) % 4 == 0).then_some(s % 41),
            },
            14 => Ev::Failed(val),
            15 => Ev::Completed(val),
            16 => Ev::Cancelled,
            17 => Ev::Migrated(val),
            18 => Ev::TimerFired,
            19 => Ev::Metered(s % 51, l % 4),
            20 => Ev::Outcome(val),
            21 => Ev::AppProgress(val),
            22 => Ev::AppProgressStamped(x & 1 == 1),
            23 => Ev::Foreign(val),
            24 => Ev::Quarantined(x & 1 == 1, kernel),
            25 => Ev::Released {
                operator: x & 2 != 0,
                deliver: x & 4 != 0,
                kernel,
            },
            26 => Ev::Consumed(x & 1 == 1, kernel),
            27 => Ev::Continued(kernel),
            28 => Ev::ParallelCompleted(kernel),
            29 => Ev::ResumedWait(kernel),
            30 => Ev::Rehomed(kernel),
            _ => Ev::FailedBare,
        }
    }

    /// The kind, payload and metadata of the event.
    pub fn spec(self) -> EventSpec {
        fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
            let mut m = Map::new();
            for (k, v) in pairs {
                m.insert(k.to_owned(), v);
            }
            Value::Object(m)
        }
        let step = |i: u8| Value::from(STEP_IDS[usize::from(i)]);
        let msg = |b: bool| Value::from(if b { "q2" } else { "q1" });
        let e = EventSpec::new;
        let stamped = |spec: EventSpec, kernel: bool| if kernel { spec.kernel() } else { spec };
        match self {
            Ev::Started(v) => e("EXECUTION_STARTED", obj([("input", v.value())])),
            Ev::StepStarted(s, v) => e(
                "STEP_STARTED",
                obj([("stepId", step(s)), ("input", v.value())]),
            ),
            Ev::StepCompleted(s, v) => e(
                "STEP_COMPLETED",
                obj([("stepId", step(s)), ("output", v.value())]),
            ),
            Ev::StepFailed(s) => e(
                "STEP_FAILED",
                obj([("stepId", step(s)), ("error", Value::from("boom"))]),
            ),
            Ev::StepFailedTyped(s, v) => e(
                "STEP_FAILED",
                obj([
                    ("stepId", step(s)),
                    ("error", Value::from("typed")),
                    ("channel", Value::from("c")),
                    ("payload", v.value()),
                ]),
            ),
            Ev::StepRetrying(s, a) => e(
                "STEP_RETRYING",
                obj([("stepId", step(s)), ("attempt", Value::from(a))]),
            ),
            Ev::StepCancelled(s) => e("STEP_CANCELLED", obj([("stepId", step(s))])),
            Ev::EffectIndoubt(s, a) => e(
                "EFFECT_INDOUBT",
                obj([("stepId", step(s)), ("attempt", Value::from(a))]),
            ),
            Ev::Suspended {
                gate,
                wake_at,
                step: s,
                attempt,
            } => {
                let gate = GATES[usize::from(gate)];
                let mut p = Map::new();
                p.insert("on".into(), Value::from(gate));
                if let Some(w) = wake_at {
                    p.insert("wakeAt".into(), Value::from(w));
                }
                if gate == "__loom_indoubt__" {
                    p.insert(
                        "condition".into(),
                        obj([("stepId", step(s)), ("attempt", Value::from(attempt))]),
                    );
                }
                e("EXECUTION_SUSPENDED", Value::Object(p))
            }
            Ev::Resumed(v) => e("EXECUTION_RESUMED", v.map_or(Value::Null, Val::value)),
            Ev::Decision {
                id,
                choice,
                context,
                seq,
            } => {
                let mut p = Map::new();
                p.insert("id".into(), Value::from(DECISION_IDS[usize::from(id)]));
                p.insert("choice".into(), choice.value());
                if let Some(c) = context {
                    p.insert("context".into(), c.value());
                }
                if let Some(s) = seq {
                    p.insert("seq".into(), Value::from(s));
                }
                e("DECISION_RECORDED", Value::Object(p))
            }
            Ev::Failed(v) => e("EXECUTION_FAILED", obj([("error", v.value())])),
            Ev::Completed(v) => e("EXECUTION_COMPLETED", obj([("output", v.value())])),
            Ev::Cancelled => e("EXECUTION_CANCELLED", Value::Object(Map::new())),
            Ev::Migrated(v) => e("EXECUTION_MIGRATED", obj([("migratedInput", v.value())])),
            Ev::TimerFired => e("TIMER_FIRED", obj([("firedAt", Value::from(5))])),
            Ev::Metered(tokens, halves) => e(
                "RESOURCE_METERED",
                obj([
                    ("tokens", Value::from(tokens)),
                    ("costUsd", number(f64::from(halves) * 0.5)),
                ]),
            ),
            Ev::Outcome(v) => e("OUTCOME_RECORDED", obj([("outcome", v.value())])),
            Ev::AppProgress(v) => e("app.progress", v.value()),
            Ev::AppProgressStamped(b) => e("app.progress", Value::Object(Map::new())).meta(
                "flowEmit",
                Value::from(if b {
                    "00000000000000bb"
                } else {
                    "00000000000000aa"
                }),
            ),
            Ev::Foreign(v) => e("NOT_A_KERNEL_KIND", v.value()),
            Ev::Quarantined(m, k) => stamped(
                e(
                    "INBOX_QUARANTINED",
                    obj([("topic", Value::from("t")), ("messageId", msg(m))]),
                ),
                k,
            ),
            Ev::Released {
                operator,
                deliver,
                kernel,
            } => {
                let mut p = Map::new();
                p.insert("topic".into(), Value::from("t"));
                if operator {
                    p.insert("operator".into(), Value::from("alice"));
                } else {
                    p.insert("auto".into(), Value::Bool(true));
                }
                if deliver {
                    p.insert("deliver".into(), Value::Bool(true));
                }
                stamped(e("INBOX_RELEASED", Value::Object(p)), kernel)
            }
            Ev::Consumed(m, k) => stamped(
                e(
                    "MESSAGE_CONSUMED",
                    obj([
                        ("topic", Value::from("t")),
                        ("messageId", msg(m)),
                        ("waitId", Value::from("w")),
                    ]),
                ),
                k,
            ),
            Ev::Continued(k) => stamped(
                e(
                    "EXECUTION_CONTINUED",
                    obj([("continuedTo", Value::from("next"))]),
                ),
                k,
            ),
            Ev::ParallelCompleted(k) => stamped(
                e(
                    "PARALLEL_COMPLETED",
                    obj([("scopeId", Value::from("p")), ("n", Value::from(2))]),
                ),
                k,
            ),
            Ev::ResumedWait(k) => stamped(
                e(
                    "EXECUTION_RESUMED",
                    obj([("waitId", Value::from("w")), ("answer", Value::from(1))]),
                ),
                k,
            ),
            Ev::Rehomed(k) => stamped(e("EVENTS_REHOMED", obj([("segment", Value::from(1))])), k),
            Ev::FailedBare => e("EXECUTION_FAILED", Value::Object(Map::new())),
        }
    }
}

/// A log of the model: the events, a leading `EXECUTION_STARTED` or not, and the
/// corruptions to apply (full grammar only).
#[derive(Debug, Clone, PartialEq)]
pub struct LogModel {
    /// Whether the log opens with `EXECUTION_STARTED {input: 0}` (7 of 8 header values).
    pub started: bool,
    /// The events; with the corruptions, at most [`LOG_EVENTS_MAX`] records.
    pub events: Vec<Ev>,
    /// Each corruption: the index of the event it applies to (among the envelopes,
    /// counting the leading start) and the bytes that [`crate::log::corrupt`] reads to
    /// pick the corruption and its arguments.
    pub corruptions: Vec<(usize, [u8; 3])>,
}

impl LogModel {
    /// Reads the records to the end of the input: an event, or (kind byte at least
    /// [`CORRUPTION_KIND_MIN`], full grammar only) a corruption of the event before it.
    /// The header comes first and is short, so an input of a header and two records is
    /// already a two-event log.
    fn read(u: Unstructured<'_>, started: bool, legacy: bool) -> LogModel {
        let mut events = Vec::new();
        let mut corruptions = Vec::new();
        for c in u
            .take_rest()
            .chunks_exact(EVENT_RECORD_BYTES)
            .take(LOG_EVENTS_MAX)
        {
            let r = [c[0], c[1], c[2], c[3]];
            if !legacy && r[0] >= CORRUPTION_KIND_MIN {
                let envelopes = usize::from(started) + events.len();
                if envelopes > 0 {
                    corruptions.push((envelopes - 1, [r[1], r[2], r[3]]));
                }
            } else {
                events.push(Ev::from_record(r, legacy));
            }
        }
        LogModel {
            started,
            events,
            corruptions,
        }
    }

    /// The envelopes, numbered 0.. with timestamps `1000 + 10 * sequence` (as
    /// [`crate::log::LogSpec::envelopes`]), ids empty.
    pub fn envelopes(&self) -> Vec<EventEnvelope> {
        let mut specs: Vec<EventSpec> = Vec::with_capacity(self.events.len() + 1);
        if self.started {
            specs.push(EventSpec::new(
                "EXECUTION_STARTED",
                Value::Object(Map::from_iter([("input".to_owned(), Value::from(0))])),
            ));
        }
        specs.extend(self.events.iter().map(|e| e.spec()));
        for (at, bytes) in &self.corruptions {
            if let Some(spec) = specs.get_mut(*at) {
                // Never fails: a short Unstructured yields zeros.
                let _ = corrupt(&mut Unstructured::new(bytes), spec);
            }
        }
        specs
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                let sequence = i as u64;
                EventEnvelope {
                    id: String::new(),
                    workflow_id: String::new(),
                    execution_id: String::new(),
                    event_type: e.event_type,
                    sequence,
                    timestamp_ms: 1000 + 10 * sequence as i64,
                    payload: e.payload.into(),
                    metadata: e.metadata,
                }
            })
            .collect()
    }
}

fn version(minor: u32) -> FoldVersion {
    FoldVersion::from_minor(minor).unwrap_or(FoldVersion::CURRENT)
}

fn header<const N: usize>(u: &mut Unstructured<'_>) -> ArbResult<[u8; N]> {
    u.arbitrary()
}

// ---------------------------------------------------------------------------------
// fold_snapshot_structured

/// The structure-aware twin of [`crate::FoldSnapshotInput`]. Header (4 bytes): writer,
/// leading start and how many points in one byte, then three snapshot points.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotModel {
    /// The snapshot writer: the current fold most of the time, else 1.20–1.25.
    pub writer: FoldVersion,
    /// One to three snapshot points, each taken modulo the log length.
    pub ks: Vec<u16>,
    /// The log (full grammar for the current writer, legacy otherwise).
    pub log: LogModel,
}

impl SnapshotModel {
    /// Header bytes before the records.
    pub const HEADER_BYTES: usize = 4;
    /// The longest input that still means something: the header and
    /// [`LOG_EVENTS_MAX`] records (the target's libFuzzer `max_len`,
    /// `fuzz/options/<target>.options`).
    pub const INPUT_BYTES_MAX: usize = Self::HEADER_BYTES + RECORDS_BYTES_MAX;
}

impl<'a> Arbitrary<'a> for SnapshotModel {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        Self::arbitrary_take_rest(std::mem::replace(u, Unstructured::new(&[])))
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> ArbResult<Self> {
        let [w, k0, k1, k2] = header::<4>(&mut u)?;
        // w: the writer (mod 10), the leading start ((w / 10) mod 8 != 7), the number
        // of points (1 + (w / 80) mod 3).
        let minor = [26u32, 26, 26, 26, 25, 24, 23, 22, 21, 20][usize::from(w % 10)];
        let ks = [k0, k1, k2][..1 + usize::from((w / 80) % 3)]
            .iter()
            .map(|&k| u16::from(k))
            .collect();
        Ok(SnapshotModel {
            writer: version(minor),
            ks,
            log: LogModel::read(u, (w / 10) % 8 != 7, minor != 26),
        })
    }
}

/// SNAP-01/03, FOLD-01/06/07/38 on a model log: the body of
/// [`crate::fold_snapshot_equivalence`] on the model's envelopes.
pub fn fold_snapshot_structured(input: &SnapshotModel) -> Result<(), PropertyViolation> {
    fold_snapshot_structured_with(&Reference, input)
}

/// [`fold_snapshot_structured`] against any kernel.
pub fn fold_snapshot_structured_with(
    k: &dyn KernelUnderTest,
    input: &SnapshotModel,
) -> Result<(), PropertyViolation> {
    snapshot_equivalence(k, input.writer, &input.log.envelopes(), Some(&input.ks))
}

/// [`fold_snapshot_structured`] at every snapshot point (quadratic; `cargo test`).
pub fn fold_snapshot_structured_every_k(input: &SnapshotModel) -> Result<(), PropertyViolation> {
    snapshot_equivalence(&Reference, input.writer, &input.log.envelopes(), None)
}

// ---------------------------------------------------------------------------------
// fold_total_structured

/// The structure-aware half of [`crate::FoldTotalInput`]: a model log (full grammar,
/// corrupted) folded directly. Header (1 byte): the older version to fold besides the
/// current one (mod 12) and the leading start ((byte / 12) mod 8 != 7).
#[derive(Debug, Clone, PartialEq)]
pub struct TotalModel {
    /// Picks the older version (1.15 + pick mod 12).
    pub pick: u8,
    /// The log.
    pub log: LogModel,
}

impl TotalModel {
    /// Header bytes before the records.
    pub const HEADER_BYTES: usize = 1;
    /// The longest input that still means something (see [`SnapshotModel::INPUT_BYTES_MAX`]).
    pub const INPUT_BYTES_MAX: usize = Self::HEADER_BYTES + RECORDS_BYTES_MAX;
}

impl<'a> Arbitrary<'a> for TotalModel {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        Self::arbitrary_take_rest(std::mem::replace(u, Unstructured::new(&[])))
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> ArbResult<Self> {
        let [pick] = header::<1>(&mut u)?;
        Ok(TotalModel {
            pick,
            log: LogModel::read(u, (pick / 12) % 8 != 7, false),
        })
    }
}

/// FOLD-01/05 on a model log: the current fold and an older one return, with linear
/// diagnostics in range, and keep no `__proto__` key. The decoder half of
/// [`crate::fold_total`] (raw and mutated text) stays in that target.
pub fn fold_total_structured(input: &TotalModel) -> Result<(), PropertyViolation> {
    fold_everything(&input.log.envelopes(), usize::from(input.pick))
}

// ---------------------------------------------------------------------------------
// versioned_fold_structured

/// The structure-aware twin of [`crate::VersionedFoldInput`]. Header (3 bytes): writer,
/// flags (leading start, grammar), the snapshot point.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionedModel {
    /// The writer, 1.15–1.25.
    pub writer: FoldVersion,
    /// Where the snapshot is taken (modulo the length).
    pub k: u8,
    /// The log (legacy grammar three times in four).
    pub log: LogModel,
}

impl VersionedModel {
    /// Header bytes before the records.
    pub const HEADER_BYTES: usize = 3;
    /// The longest input that still means something (see [`SnapshotModel::INPUT_BYTES_MAX`]).
    pub const INPUT_BYTES_MAX: usize = Self::HEADER_BYTES + RECORDS_BYTES_MAX;
}

impl<'a> Arbitrary<'a> for VersionedModel {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        Self::arbitrary_take_rest(std::mem::replace(u, Unstructured::new(&[])))
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> ArbResult<Self> {
        let [w, flags, k] = header::<3>(&mut u)?;
        let legacy = (flags >> 3) % 4 != 0;
        Ok(VersionedModel {
            writer: version(15 + u32::from(w % 11)),
            k,
            log: LogModel::read(u, flags % 8 != 7, legacy),
        })
    }
}

/// SNAP-03/06/07/10, FOLD-47 on a model log: the body of [`crate::versioned_fold`] on
/// the model's envelopes.
pub fn versioned_fold_structured(input: &VersionedModel) -> Result<(), PropertyViolation> {
    versioned_fold_events(input.writer, usize::from(input.k), &input.log.envelopes())
}

// ---------------------------------------------------------------------------------
// fold_roundtrip_structured

/// The structure-aware half of [`crate::FoldRoundtripInput`]: an envelope of an unknown
/// kind inserted into a model log. Header (6 bytes): position, kind, flags (leading
/// start, kernel stamp), the second fold version, the payload's two bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownModel {
    /// Where the unknown envelope goes (modulo length + 1).
    pub position: u8,
    /// Its kind: one of [`crate::fold::UNKNOWN_KINDS`] or a near miss of a known kind.
    pub kind: String,
    /// Its payload.
    pub payload: Val,
    /// Whether it claims `metadata.kernel: true` (still inert).
    pub kernel: bool,
    /// A second fold version to check besides the current one, 1.15–1.26.
    pub minor: u32,
    /// The log.
    pub log: LogModel,
}

impl UnknownModel {
    /// Header bytes before the records.
    pub const HEADER_BYTES: usize = 6;
    /// The longest input that still means something (see [`SnapshotModel::INPUT_BYTES_MAX`]).
    pub const INPUT_BYTES_MAX: usize = Self::HEADER_BYTES + RECORDS_BYTES_MAX;
}

impl<'a> Arbitrary<'a> for UnknownModel {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        Self::arbitrary_take_rest(std::mem::replace(u, Unstructured::new(&[])))
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> ArbResult<Self> {
        let [position, kind, flags, minor, s, l] = header::<6>(&mut u)?;
        let known = known_event_types();
        let kind = if kind & 0x80 == 0 {
            crate::fold::UNKNOWN_KINDS[usize::from(kind) % crate::fold::UNKNOWN_KINDS.len()]
                .to_owned()
        } else {
            // A near miss of a known kind: never itself known.
            let k = known[usize::from(kind & 0x7f) % known.len()];
            let near = match (kind >> 5) & 1 {
                0 => k.to_lowercase(),
                _ => format!("{k}?"),
            };
            if is_known_event_type(&near) {
                format!("{near}?")
            } else {
                near
            }
        };
        Ok(UnknownModel {
            position,
            kind,
            payload: Val::from_bytes(s, l),
            kernel: flags & 0x40 != 0,
            minor: 15 + u32::from(minor % 12),
            log: LogModel::read(u, flags % 8 != 7, false),
        })
    }
}

/// FOLD-04 on a model log: the unknown-kind half of [`crate::fold_roundtrip`]. The
/// encoder and decoder round trip stays in that target (it is about the text).
pub fn fold_roundtrip_structured(input: &UnknownModel) -> Result<(), PropertyViolation> {
    let events = input.log.envelopes();
    let at = usize::from(input.position) % (events.len() + 1);
    let mut spec = EventSpec::new(&input.kind, input.payload.value());
    if input.kernel {
        spec = spec.kernel();
    }
    let sequence = if at == 0 { 0 } else { events[at - 1].sequence };
    let unknown = EventEnvelope {
        id: String::new(),
        workflow_id: String::new(),
        execution_id: String::new(),
        event_type: spec.event_type,
        sequence,
        timestamp_ms: 1000 + 10 * sequence as i64,
        payload: spec.payload.into(),
        metadata: spec.metadata,
    };
    unknown_kind_inert(&events, at, &unknown, input.minor)
}
