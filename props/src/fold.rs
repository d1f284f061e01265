//! The fold properties: snapshot equivalence (SNAP-01, FOLD-06, FOLD-07, FOLD-38),
//! totality (FOLD-01, FOLD-05), the round trip and unknown kinds (FOLD-01, FOLD-04) and the versioned fold (SNAP-03, SNAP-06,
//! SNAP-07, FOLD-47).

use crate::kernel::{KernelUnderTest, Reference};
use crate::limits::{LOG_EVENTS_MAX, RAW_LOG_BYTES_MAX};
use crate::log::{envelope, to_json_lines, EventSpec, Grammar, LogSpec};
use crate::violation::{check_eq, PropertyViolation};
use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use loom_kernel::envelope::decode_log_strict;
use loom_kernel::envelope::{check_sequences, decode_one};
use loom_kernel::fold::{
    fold_general_with_diagnostics, fold_with_diagnostics, is_known_event_type, keys,
    ExecutionState, FoldVersion,
};
use loom_kernel::snapshot::{normalize_snapshot_state, SnapshotRecord};
use loom_kernel::{canonical_string, decode_log, EventEnvelope};
use serde_json::Value;

fn version(minor: u32) -> FoldVersion {
    FoldVersion::from_minor(minor).unwrap_or(FoldVersion::CURRENT)
}

// ---------------------------------------------------------------------------------
// fold_snapshot_equivalence

/// A log, the schema version of the fold that writes the snapshots, and where the fuzz
/// target snapshots it.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldSnapshotInput {
    /// The snapshot writer: the current fold most of the time, else 1.20–1.25.
    pub writer: FoldVersion,
    /// One to three snapshot points, each taken modulo the log length, for
    /// [`fold_snapshot_equivalence`]. [`fold_snapshot_equivalence_every_k`] ignores them.
    pub ks: Vec<u16>,
    /// The log.
    pub log: LogSpec,
}

impl<'a> Arbitrary<'a> for FoldSnapshotInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let minor = *u.choose(&[26u32, 26, 26, 26, 25, 24, 23, 22, 21, 20])?;
        let grammar = if minor == 26 {
            Grammar::FULL
        } else {
            Grammar::LEGACY
        };
        // The snapshot points come before the log, so the log's bytes running out
        // never pins them to 0.
        let mut ks = Vec::with_capacity(3);
        for _ in 0..u.int_in_range(1u8..=3)? {
            ks.push(u.arbitrary()?);
        }
        Ok(FoldSnapshotInput {
            writer: version(minor),
            ks,
            log: LogSpec::generate(u, grammar, LOG_EVENTS_MAX)?,
        })
    }
}

/// SNAP-01 (and SNAP-03 for older writers) at the snapshot points the input chooses
/// (`ks`, one to three per input): restoring the snapshot written at k (through its
/// stored JSON form and `normalize_snapshot_state`) and folding the tail gives the full
/// fold's canonical bytes, except exactly the documented exception shapes. For every
/// event: the state folded onto is unchanged (FOLD-06), status moves only on
/// execution-level kinds (FOLD-07), a decision keeps the `seq` of its first record
/// (FOLD-38), and the event-by-event fold equals the whole fold (FOLD-01).
///
/// This is the fuzz target's body: the fuzzer explores k through the input bytes, so
/// each input costs a linear number of event folds. [`fold_snapshot_equivalence_every_k`]
/// checks every k of one log (quadratic), for the bounded `cargo test` runs.
pub fn fold_snapshot_equivalence(input: &FoldSnapshotInput) -> Result<(), PropertyViolation> {
    fold_snapshot_equivalence_with(&Reference, input)
}

/// [`fold_snapshot_equivalence`] against any kernel.
pub fn fold_snapshot_equivalence_with(
    k: &dyn KernelUnderTest,
    input: &FoldSnapshotInput,
) -> Result<(), PropertyViolation> {
    snapshot_equivalence(k, input.writer, &input.log.envelopes(), Some(&input.ks))
}

/// [`fold_snapshot_equivalence`] at every k from 0 to the last event, ignoring `ks`.
pub fn fold_snapshot_equivalence_every_k(
    input: &FoldSnapshotInput,
) -> Result<(), PropertyViolation> {
    fold_snapshot_equivalence_every_k_with(&Reference, input)
}

/// [`fold_snapshot_equivalence_every_k`] against any kernel.
pub fn fold_snapshot_equivalence_every_k_with(
    k: &dyn KernelUnderTest,
    input: &FoldSnapshotInput,
) -> Result<(), PropertyViolation> {
    snapshot_equivalence(k, input.writer, &input.log.envelopes(), None)
}

/// The snapshot points: every index, or the chosen ones modulo `n`, sorted and unique.
/// The second value is the point whose record also goes through its stored JSON text.
fn snapshot_points(chosen: Option<&[u16]>, n: usize) -> (Vec<usize>, usize) {
    match chosen {
        None => ((0..n).collect(), n - 1),
        Some(c) => {
            let mut ks: Vec<usize> = c.iter().map(|&x| usize::from(x) % n).collect();
            let stored = ks.first().copied().unwrap_or(n - 1);
            if ks.is_empty() {
                ks.push(stored);
            }
            ks.sort_unstable();
            ks.dedup();
            (ks, stored)
        }
    }
}

/// The body of [`fold_snapshot_equivalence`] (and of the structure-aware
/// `fold_snapshot_structured`) on envelopes already built: `writer` snapshots at the
/// `chosen` points (every point when `None`).
pub(crate) fn snapshot_equivalence(
    k: &dyn KernelUnderTest,
    writer: FoldVersion,
    events: &[EventEnvelope],
    chosen: Option<&[u16]>,
) -> Result<(), PropertyViolation> {
    if events.is_empty() {
        return Ok(());
    }
    let (ks, stored_at) = snapshot_points(chosen, events.len());
    let full = k.fold_from(&ExecutionState::new(), events);
    // A current writer's prefix states are the event-by-event fold's states at the
    // points (the same kernel and version, event by event as a writer that snapshots
    // after every append; FOLD-01 ties that fold to the whole one), so they are kept
    // from that pass instead of folding the prefix again.
    let capture = if writer == FoldVersion::CURRENT {
        &ks[..]
    } else {
        &[]
    };
    let mut captured = per_event_invariants(
        k,
        events,
        &full,
        &|i| chosen.is_none() || ks.binary_search(&i).is_ok(),
        capture,
    )?
    .into_iter();

    if writer != FoldVersion::CURRENT && legacy_exception(writer, events).is_some() {
        return Ok(());
    }
    let strip = !writer.has(24);
    let mut full_cmp = full;
    if strip {
        strip_seq(&mut full_cmp);
    }
    let rule = if writer == FoldVersion::CURRENT {
        "SNAP-01"
    } else {
        "SNAP-03"
    };
    // The writer's prefix state, folded segment by segment up to each snapshot point.
    let mut prefix = ExecutionState::new();
    let mut folded = 0;
    for &i in &ks {
        // Event by event for every k, as a writer that snapshots after every append;
        // from the previous point to this one otherwise.
        prefix = match captured.next() {
            Some(state) => state,
            None => k.fold_owned(writer, prefix, &events[folded..=i]),
        };
        folded = i + 1;
        let mut record = SnapshotRecord::capture_as(writer, &prefix, events[i].sequence);
        if i == stored_at {
            // Once per input, through the stored form, as a snapshot store returns it.
            let stored = serde_json::to_string(&record).unwrap_or_default();
            record = serde_json::from_str(&stored).map_err(|err| {
                PropertyViolation::new(
                    "SNAP-01",
                    Some(i),
                    format!("snapshot record written by {writer} does not read back"),
                    "a record",
                    err.to_string(),
                )
            })?;
        }
        let normalized = normalize_snapshot_state(&record).map_err(|err| {
            PropertyViolation::new(
                rule,
                Some(i),
                format!("normalize_snapshot_state refused a {writer} snapshot"),
                "a state",
                err.to_string(),
            )
        })?;
        let mut restored = k.fold_owned(FoldVersion::CURRENT, normalized, &events[i + 1..]);
        if strip {
            strip_seq(&mut restored);
        }
        // Structural equality first (cheap); canonical bytes decide a mismatch and
        // give the message.
        if restored != full_cmp {
            check_eq(
                rule,
                Some(i),
                || {
                    format!(
                        "restore(snapshot written by {writer} at k={i}) + tail vs fold(all); log: {}",
                        show_log(events)
                    )
                },
                &full_cmp.canonical(),
                &restored.canonical(),
            )?;
        }
    }
    Ok(())
}

/// Removes every decision `seq` from `state` (SNAP-06: pre-1.24 writers compare modulo
/// `seq`); the structural twin of [`canon_stripped`].
fn strip_seq(state: &mut ExecutionState) {
    if let Some(d) = state.variables.decisions.as_mut() {
        let with_seq: Vec<(String, Value)> = d
            .iter()
            .filter_map(|(id, e)| match e.to_value() {
                Value::Object(m) if m.contains_key("seq") => {
                    let mut m = m.clone();
                    m.remove("seq");
                    Some((id.to_owned(), Value::Object(m)))
                }
                _ => None,
            })
            .collect();
        for (id, e) in with_seq {
            d.insert(id, e.into());
        }
    }
}

/// The per-event checks shared by the fold targets: FOLD-07 and FOLD-38 at every event,
/// FOLD-06 (the borrowed fold leaves the state it reads unchanged) at the events
/// `fold06_at` names, and FOLD-01 (the event-by-event fold equals `full`). Elsewhere
/// the step folds an owned state, so no event copies the state twice.
fn per_event_invariants(
    k: &dyn KernelUnderTest,
    events: &[EventEnvelope],
    full: &ExecutionState,
    fold06_at: &dyn Fn(usize) -> bool,
    capture: &[usize],
) -> Result<Vec<ExecutionState>, PropertyViolation> {
    let mut captured = Vec::with_capacity(capture.len());
    let mut s = ExecutionState::new();
    let mut seqs = DecisionSeqs::default();
    for (i, e) in events.iter().enumerate() {
        let status = s.status;
        let next = if fold06_at(i) {
            let kept = s.clone();
            let next = k.fold_from(&s, std::slice::from_ref(e));
            if kept != s {
                return Err(PropertyViolation::new(
                    "FOLD-06",
                    Some(i),
                    format!(
                        "the state folded onto changed in place while folding {}",
                        e.event_type
                    ),
                    kept.canonical(),
                    s.canonical(),
                ));
            }
            next
        } else {
            k.fold_owned(FoldVersion::CURRENT, s, std::slice::from_ref(e))
        };
        if next.status != status && !STATUS_KINDS.contains(&e.event_type.as_str()) {
            return Err(PropertyViolation::new(
                "FOLD-07",
                Some(i),
                format!("status moved on a {} event", e.event_type),
                status.as_str(),
                next.status.as_str(),
            ));
        }
        check_decision_seq(&mut seqs, &next, e, i)?;
        if capture.binary_search(&i).is_ok() {
            captured.push(next.clone());
        }
        s = next;
    }
    if &s == full {
        return Ok(captured);
    }
    check_eq(
        "FOLD-01",
        None,
        || {
            format!(
                "event-by-event fold vs whole fold; log: {}",
                show_log(events)
            )
        },
        &full.canonical(),
        &s.canonical(),
    )?;
    Ok(captured)
}

/// The kinds that may move `status` (FOLD-07).
const STATUS_KINDS: [&str; 7] = [
    "EXECUTION_STARTED",
    "EXECUTION_SUSPENDED",
    "EXECUTION_RESUMED",
    "EXECUTION_COMPLETED",
    "EXECUTION_FAILED",
    "EXECUTION_CANCELLED",
    "EXECUTION_CONTINUED",
];

/// Each decision id of a state with its entry's `seq` (`None` when the entry has none),
/// in the state's order. Updated in place after every event: an id is copied only when
/// it first appears, so the per-event check allocates nothing on most events.
#[derive(Default)]
struct DecisionSeqs(Vec<(String, Option<Value>)>);

/// FOLD-38: an entry keeps its `seq`; a new entry's `seq` is its envelope's sequence.
/// `seqs` holds the decision seqs before `e` and is brought up to those of `after`.
fn check_decision_seq(
    seqs: &mut DecisionSeqs,
    after: &ExecutionState,
    e: &EventEnvelope,
    i: usize,
) -> Result<(), PropertyViolation> {
    let Some(now) = after.variables.decisions.as_ref() else {
        seqs.0.clear();
        return Ok(());
    };
    let known = seqs.0.len();
    let mut matched = 0;
    for (id, entry) in now.iter() {
        let seq_now = entry.get("seq");
        match seqs.0[..known].iter().find(|(x, _)| x == id) {
            Some((_, prev)) => {
                matched += 1;
                if *prev != seq_now {
                    return Err(PropertyViolation::new(
                        "FOLD-38",
                        Some(i),
                        format!("decision `{id}`'s seq changed when folding {} (a repeated id keeps its first seq)", e.event_type),
                        show(prev.as_ref()),
                        show(seq_now.as_ref()),
                    ));
                }
            }
            None => {
                if seq_now
                    .as_ref()
                    .is_some_and(|s| s.as_u64() != Some(e.sequence))
                {
                    return Err(PropertyViolation::new(
                        "FOLD-38",
                        Some(i),
                        format!("new decision `{id}`'s seq is not its envelope's sequence"),
                        e.sequence.to_string(),
                        show(seq_now.as_ref()),
                    ));
                }
                seqs.0.push((id.to_owned(), seq_now));
            }
        }
    }
    if matched < known {
        // An entry left the state: start over from the state's entries, as a new entry
        // with that id would be checked as new.
        seqs.0 = now
            .iter()
            .map(|(id, entry)| (id.to_owned(), entry.get("seq")))
            .collect();
    }
    Ok(())
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "(absent)".to_owned(), canonical_string)
}

/// The log in a compact, readable form for messages.
pub fn show_log(events: &[EventEnvelope]) -> String {
    let parts: Vec<String> = events
        .iter()
        .map(|e| {
            let meta = e
                .metadata
                .as_ref()
                .map(|m| format!(" meta={}", canonical_string(&Value::Object(m.clone()))))
                .unwrap_or_default();
            format!("{} {}{meta}", e.event_type, canonical_string(&e.payload))
        })
        .collect();
    format!("[{}]", parts.join("; "))
}

/// Canonical bytes, with every decision `seq` removed when `strip` (SNAP-06).
fn canon_stripped(state: &ExecutionState, strip: bool) -> String {
    let mut v = state.to_value();
    if strip {
        if let Some(Value::Object(d)) = v
            .get_mut("variables")
            .and_then(|x| x.get_mut(keys::DECISIONS))
        {
            for entry in d.values_mut() {
                if let Value::Object(e) = entry {
                    e.remove("seq");
                }
            }
        }
    }
    canonical_string(&v)
}

/// Which documented exception a log falls under for snapshots written by `writer`:
/// the kernel's own description of them (docs/decisions/0003-snapshot-normalization.md).
pub use loom_kernel::snapshot::documented_exception as legacy_exception;

// ---------------------------------------------------------------------------------
// fold_total

/// Tokens spliced into serialized logs: kind names, structural bytes and the numbers
/// and keys the decoder treats specially.
pub const SPLICE_TOKENS: [&str; 14] = [
    "\"eventType\":\"STEP_FAILED\"",
    "\"__proto__\":",
    "{",
    "}",
    "[",
    "]",
    "null",
    "-0",
    "1e999",
    "0.5",
    "\"metadata\":null,",
    "\"sequence\":-1,",
    "\\ud800",
    "\n",
];

/// Names that are not event kinds at any schema version.
pub const UNKNOWN_KINDS: [&str; 8] = [
    "NOT_A_KERNEL_KIND",
    "app.progress",
    "step_completed",
    "EXECUTION_STARTED ",
    "",
    "__proto__",
    "X_STEP_FAILED",
    "EXECUTION_SNAPSHOT",
];

/// How `fold_total` feeds the decoder and the fold.
#[derive(Debug, Clone, PartialEq)]
pub enum FoldTotalInput {
    /// Raw text (any bytes, lossily UTF-8) given to `decode_log` and `decode_one`.
    Raw(Vec<u8>),
    /// A generated log, serialized as JSON lines, then one byte-level mutation.
    Mutated {
        /// The log.
        log: LogSpec,
        /// Where to mutate (taken modulo the text length).
        position: usize,
        /// 0 flip a byte, 1 splice a token, 2 truncate, 3 duplicate the text.
        op: u8,
        /// The byte for a flip, the token index for a splice.
        value: u8,
    },
}

impl<'a> Arbitrary<'a> for FoldTotalInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        // Byte 0 is the raw mode, as before the round-trip and unknown-kind checks
        // moved to `fold_roundtrip`, so committed raw inputs keep their meaning.
        Ok(match u.int_in_range(0u8..=1)? {
            0 => {
                let bytes = u.bytes(u.len().min(RAW_LOG_BYTES_MAX))?;
                FoldTotalInput::Raw(bytes.to_vec())
            }
            _ => FoldTotalInput::Mutated {
                position: u.arbitrary()?,
                op: u.int_in_range(0..=3)?,
                value: u.arbitrary()?,
                log: LogSpec::arbitrary(u)?,
            },
        })
    }
}

/// FOLD-01/05: the decoder and the fold never panic and always return on any bytes:
/// the fold's diagnostics stay linear in the number of envelopes, and no `__proto__`
/// key survives the fold; and every fast path of decoding and folding agrees with the
/// strict decoder and the general handler ([`text_path_agrees`], which runs both
/// checks on one decoding and one fold per version). The encoder round trip and
/// unknown-kind inertness are [`fold_roundtrip`].
pub fn fold_total(input: &FoldTotalInput) -> Result<(), PropertyViolation> {
    match input {
        FoldTotalInput::Raw(bytes) => {
            let text = String::from_utf8_lossy(bytes);
            let _ = decode_one(&text, 0);
            text_path_agrees(&text, bytes.len())
        }
        FoldTotalInput::Mutated {
            log,
            position,
            op,
            value,
        } => {
            let text = to_json_lines(&log.envelopes());
            let mutated = mutate(text.into_bytes(), *position, *op, *value);
            let mutated = String::from_utf8_lossy(&mutated);
            text_path_agrees(&mutated, *position)
        }
    }
}

// ---------------------------------------------------------------------------------
// fold_roundtrip

/// What `fold_roundtrip` checks on a generated log.
#[derive(Debug, Clone, PartialEq)]
pub enum FoldRoundtripInput {
    /// The log, encoded as JSON lines and decoded again (FOLD-01).
    Encoded(LogSpec),
    /// A generated log with an envelope of an unknown kind inserted (FOLD-04).
    Unknown {
        /// The log.
        log: LogSpec,
        /// Where the unknown envelope goes (modulo length + 1).
        position: usize,
        /// Its kind (never a known one).
        kind: String,
        /// Its payload.
        payload: Value,
        /// Whether it claims `metadata.kernel: true` (still inert).
        kernel: bool,
        /// A second fold version to check besides the current one.
        minor: u32,
    },
}

impl<'a> Arbitrary<'a> for FoldRoundtripInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        Ok(if u.arbitrary()? {
            FoldRoundtripInput::Encoded(LogSpec::arbitrary(u)?)
        } else {
            let kind = if u.ratio(3u8, 4u8)? {
                (*u.choose(&UNKNOWN_KINDS)?).to_owned()
            } else {
                let s: String = u.arbitrary()?;
                if is_known_event_type(&s) {
                    format!("{s}?")
                } else {
                    s
                }
            };
            FoldRoundtripInput::Unknown {
                position: u.arbitrary()?,
                kind,
                payload: crate::json::payload(u)?,
                kernel: u.arbitrary()?,
                minor: u.int_in_range(15..=26)?,
                log: LogSpec::arbitrary(u)?,
            }
        })
    }
}

/// FOLD-01/04, the costlier half of what `fold_total` once checked: the encoder and the
/// decoder round-trip a generated log to the same fold, and an unknown kind inserted
/// anywhere leaves the fold unchanged, at the current and at an older version.
///
/// Every comparison is structural first: identical envelopes fold identically, and an
/// unknown envelope that leaves the state it is folded onto unchanged leaves the whole
/// fold unchanged (the fold is a left fold, FOLD-01). Only when the cheap comparison
/// differs are the full folds compared in canonical bytes, which decide and give the
/// message.
pub fn fold_roundtrip(input: &FoldRoundtripInput) -> Result<(), PropertyViolation> {
    match input {
        FoldRoundtripInput::Encoded(log) => {
            let events = log.envelopes();
            let text = to_json_lines(&events);
            match decode_log(&text) {
                // The same envelopes back: the same fold, without folding.
                Ok(back) if back == events => Ok(()),
                Ok(back) => check_eq(
                    "FOLD-01",
                    None,
                    || format!("fold(decode(encode(log))) vs fold(log); text: {text}"),
                    &loom_kernel::fold(&events).canonical(),
                    &loom_kernel::fold(&back).canonical(),
                ),
                Err(e) => Err(PropertyViolation::new(
                    "FOLD-01",
                    e.index,
                    format!("a log the kernel's encoder wrote does not decode: {text}"),
                    "decodes",
                    e.to_string(),
                )),
            }
        }
        FoldRoundtripInput::Unknown {
            log,
            position,
            kind,
            payload,
            kernel,
            minor,
        } => {
            let events = log.envelopes();
            let at = position % (events.len() + 1);
            let mut spec = EventSpec::new(kind, payload.clone());
            if *kernel {
                spec = spec.kernel();
            }
            let seq = if at == 0 { 0 } else { events[at - 1].sequence };
            unknown_kind_inert(&events, at, &envelope(seq, spec), *minor)
        }
    }
}

/// FOLD-04 on envelopes already built: `unknown` (an envelope of an unknown kind)
/// inserted at `at` leaves the fold unchanged, at the current version and at `minor`.
/// The body of [`fold_roundtrip`]'s unknown-kind mode and of the structure-aware
/// `fold_roundtrip_structured`.
pub(crate) fn unknown_kind_inert(
    events: &[EventEnvelope],
    at: usize,
    unknown: &EventEnvelope,
    minor: u32,
) -> Result<(), PropertyViolation> {
    let kind = &unknown.event_type;
    for v in [FoldVersion::CURRENT, version(minor)] {
        let before = loom_kernel::fold_as(v, &ExecutionState::new(), &events[..at]);
        let after = loom_kernel::fold_as(v, &before, std::slice::from_ref(unknown));
        if after == before {
            continue;
        }
        // The unknown envelope moved the state: the whole folds decide.
        let mut with = events.to_vec();
        with.insert(at, unknown.clone());
        let a = loom_kernel::fold_as(v, &ExecutionState::new(), events).canonical();
        let b = loom_kernel::fold_as(v, &ExecutionState::new(), &with).canonical();
        check_eq(
            "FOLD-04",
            Some(at),
            || {
                format!(
                    "unknown kind {kind:?} inserted at {at}, fold {v}; log: {}",
                    show_log(events)
                )
            },
            &a,
            &b,
        )?;
    }
    Ok(())
}

/// FOLD-01: the fast paths of decoding and folding give what the strict decoder and the
/// fold of its envelopes give. `decode_log` (payloads already in normal form taken as
/// they are) gives the strict decoder's envelopes byte for byte, or its error; and the
/// fold's text path (`fold_text`: envelopes read in place, hot kinds folded from raw
/// payloads) gives the fold of the strictly decoded envelopes at the current and at an
/// older version: the same state, the same diagnostics, or the same decoding error. The
/// fold of `decode_log`'s envelopes is also held to the totality checks (FOLD-01/05), so
/// `fold_total` decodes and folds each input once per path.
pub fn text_path_agrees(text: &str, pick: usize) -> Result<(), PropertyViolation> {
    let strict = decode_log_strict(text);
    let decoded = decode_log(text);
    let bytes = |r: &Result<Vec<EventEnvelope>, loom_kernel::EnvelopeError>| match r {
        Ok(events) => events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => format!("error: {e:?}"),
    };
    if let Ok(events) = &decoded {
        // Never panics, whatever the sequences (a partial log folds; order is checked
        // apart).
        let _ = check_sequences(events);
    }
    let (want, got) = (bytes(&strict), bytes(&decoded));
    if want != got || strict != decoded {
        return Err(PropertyViolation::new(
            "FOLD-01",
            None,
            format!("decode_log differs from the strict decoder; text: {text}"),
            want,
            got,
        ));
    }
    let older = version(15 + (pick % 12) as u32);
    for v in [FoldVersion::CURRENT, older] {
        let whole = strict
            .clone()
            .map(|events| fold_general_with_diagnostics(v, &ExecutionState::new(), &events));
        let mut diags = Vec::new();
        let text_path = loom_kernel::fold::fold_text(ExecutionState::new(), text, v, &mut diags)
            .map(|(state, _)| (state, diags));
        // The fold of the decoded envelopes reads the hot kinds from their payload text.
        let of_decoded = decoded
            .as_ref()
            .map(|events| fold_with_diagnostics(v, &ExecutionState::new(), events))
            .map_err(Clone::clone);
        if let (Ok(events), Ok((state, diags))) = (&decoded, &of_decoded) {
            fold_is_total(v, events, state, diags)?;
        }
        for (path, fast) in [
            ("fold_text", text_path),
            ("the fold of decode_log's envelopes", of_decoded),
        ] {
            // FOLD-01 compares states by their canonical bytes, which `canonical()`
            // writes from the state's parts: it must give what the state's tree gives.
            if let Ok((state, _)) = &fast {
                let (direct, tree) = (state.canonical(), canonical_string(&state.to_value()));
                if direct != tree {
                    return Err(PropertyViolation::new(
                        "FOLD-01",
                        None,
                        format!(
                            "ExecutionState::canonical differs from the state's tree; text: {text}"
                        ),
                        tree,
                        direct,
                    ));
                }
            }
            let same = match (&whole, &fast) {
                (Ok(a), Ok(b)) => a == b,
                (Err(a), Err(b)) => a == b,
                _ => false,
            };
            if !same {
                let show = |r: &Result<
                    (ExecutionState, Vec<loom_kernel::fold::FoldDiagnostic>),
                    loom_kernel::EnvelopeError,
                >| match r {
                    Ok((s, d)) => format!("{} with diagnostics {d:?}", s.canonical()),
                    Err(e) => format!("error: {e}"),
                };
                return Err(PropertyViolation::new(
                    "FOLD-01",
                    None,
                    format!(
                        "{path} {v} differs from the strict decoder then the general handler \
                         alone; text: {text}"
                    ),
                    show(&whole),
                    show(&fast),
                ));
            }
        }
    }
    Ok(())
}

/// Folds decoded envelopes at the current version and one older version picked from
/// the input (`pick`), so each input stays cheap and a campaign still covers every
/// version, and holds each fold to [`fold_is_total`].
pub(crate) fn fold_everything(
    events: &[EventEnvelope],
    pick: usize,
) -> Result<(), PropertyViolation> {
    let _ = check_sequences(events);
    let older = version(15 + (pick % 12) as u32);
    for v in [FoldVersion::CURRENT, older] {
        let (state, diags) = fold_with_diagnostics(v, &ExecutionState::new(), events);
        fold_is_total(v, events, &state, &diags)?;
    }
    Ok(())
}

/// FOLD-01/05 on one fold of `events` at `v`: its diagnostics stay linear in the number
/// of envelopes and name only envelopes of the log, and no `__proto__` key survives.
fn fold_is_total(
    v: FoldVersion,
    events: &[EventEnvelope],
    state: &ExecutionState,
    diags: &[loom_kernel::fold::FoldDiagnostic],
) -> Result<(), PropertyViolation> {
    let bound = 4 * events.len() + 4;
    if diags.len() > bound || diags.iter().any(|d| d.index >= events.len()) {
        return Err(PropertyViolation::new(
            "FOLD-01",
            None,
            format!(
                "fold {v} of {} envelopes did superlinear or out-of-range work",
                events.len()
            ),
            format!("at most {bound} diagnostics, indexes < {}", events.len()),
            format!("{} diagnostics", diags.len()),
        ));
    }
    if state_has_proto_key(state) {
        return Err(PropertyViolation::new(
            "FOLD-05",
            None,
            format!("fold {v} kept a __proto__ key; log: {}", show_log(events)),
            "no __proto__ key in the state",
            state.canonical(),
        ));
    }
    Ok(())
}

/// Whether `__proto__` is a key anywhere in the state's JSON form, read off the struct
/// without serialising it. The destructuring names every field, so a field added to
/// the state does not compile until it is covered here.
fn state_has_proto_key(state: &ExecutionState) -> bool {
    use loom_kernel::fold::{Frame, Variables};
    let proto = loom_kernel::fold::PROTO_KEY;
    let ExecutionState {
        status: _,
        frames,
        variables: Variables { decisions, rest },
        sequence: _,
        started_at: _,
        updated_at: _,
    } = state;
    let frame_has = |f: &Frame| {
        let Frame {
            status: _,
            attempt: _,
            tool_id: _,
            kind: _,
            input,
            output,
            error,
            error_channel: _,
            error_payload,
            extra,
        } = f;
        [input, output, error, error_payload]
            .into_iter()
            .flatten()
            .any(|j| has_proto_key(&j.to_value()))
            || extra.iter().any(|(k, x)| k == proto || has_proto_key(x))
    };
    frames.iter().any(|(k, f)| k == proto || frame_has(f))
        || rest.iter().any(|(k, x)| k == proto || has_proto_key(x))
        || decisions.as_ref().is_some_and(|d| {
            d.iter()
                .any(|(k, x)| k == proto || has_proto_key(&x.to_value()))
        })
}

/// Whether `__proto__` appears as an object key at any depth.
fn has_proto_key(v: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .any(|(k, x)| k == loom_kernel::fold::PROTO_KEY || has_proto_key(x)),
        Value::Array(items) => items.iter().any(has_proto_key),
        _ => false,
    }
}

fn mutate(mut bytes: Vec<u8>, position: usize, op: u8, value: u8) -> Vec<u8> {
    if bytes.is_empty() {
        return bytes;
    }
    let at = position % bytes.len();
    match op {
        0 => bytes[at] ^= value.max(1),
        1 => {
            let token = SPLICE_TOKENS[usize::from(value) % SPLICE_TOKENS.len()];
            bytes.splice(at..at, token.bytes());
        }
        2 => bytes.truncate(at),
        _ => {
            let copy = bytes.clone();
            bytes.extend(copy);
        }
    }
    bytes
}

// ---------------------------------------------------------------------------------
// versioned_fold

/// A log, an older snapshot writer and where it snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionedFoldInput {
    /// The writer, 1.15–1.25.
    pub writer: FoldVersion,
    /// The log (legacy grammar).
    pub log: LogSpec,
    /// Where the snapshot is taken (modulo the length).
    pub k: usize,
}

impl<'a> Arbitrary<'a> for VersionedFoldInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let minor = u.int_in_range(15u32..=25)?;
        let grammar = if u.ratio(1u8, 4u8)? {
            Grammar::FULL
        } else {
            Grammar::LEGACY
        };
        Ok(VersionedFoldInput {
            writer: version(minor),
            k: u.arbitrary()?,
            log: LogSpec::generate(u, grammar, LOG_EVENTS_MAX)?,
        })
    }
}

/// Folding as 1.26 a snapshot written by an older minor, then the tail, gives what the
/// spec states: normalization is idempotent and a no-op on a current snapshot
/// (SNAP-03, SNAP-10); it never invents a `seq`, and an entry that lacks one never
/// regains it along the snapshot path (SNAP-06, SNAP-07); outside the documented
/// exceptions the restore equals the full 1.26 fold, modulo `seq` for pre-1.24 writers
/// (SNAP-03, SNAP-06); and a log without quarantine kinds folds to the same bytes under
/// 1.24 and 1.25 (FOLD-47).
pub fn versioned_fold(input: &VersionedFoldInput) -> Result<(), PropertyViolation> {
    versioned_fold_events(input.writer, input.k, &input.log.envelopes())
}

/// The body of [`versioned_fold`] (and of the structure-aware `versioned_fold_structured`)
/// on envelopes already built: `writer` snapshots the whole log and at `k` (modulo the
/// length).
pub(crate) fn versioned_fold_events(
    writer: FoldVersion,
    k: usize,
    events: &[EventEnvelope],
) -> Result<(), PropertyViolation> {
    // The writer's prefix state at the snapshot point, and its whole fold continued from
    // it: one pass over the log instead of two (the reference fold is a left fold; this
    // property is not the one that checks FOLD-01).
    let at = (!events.is_empty() && writer.has(20)).then(|| k % events.len());
    let (prefix, old) = match at {
        Some(k) => {
            let prefix = loom_kernel::fold_as(writer, &ExecutionState::new(), &events[..=k]);
            let old = loom_kernel::fold_as(writer, &prefix, &events[k + 1..]);
            (Some(prefix), old)
        }
        None => (
            None,
            loom_kernel::fold_as(writer, &ExecutionState::new(), events),
        ),
    };
    let record = SnapshotRecord::capture_as(writer, &old, events.last().map_or(0, |e| e.sequence));
    let once = normalize_snapshot_state(&record).map_err(|e| {
        PropertyViolation::new(
            "SNAP-03",
            None,
            format!("{writer} snapshot refused"),
            "a state",
            e.to_string(),
        )
    })?;
    let twice = normalize_snapshot_state(&SnapshotRecord::capture(&once, record.sequence))
        .map_err(|e| {
            PropertyViolation::new(
                "SNAP-03",
                None,
                "normalized snapshot refused",
                "a state",
                e.to_string(),
            )
        })?;
    if once != twice {
        check_eq(
            "SNAP-03",
            None,
            || format!("normalize is idempotent ({writer})"),
            &once.canonical(),
            &twice.canonical(),
        )?;
    }
    let current = loom_kernel::fold(events);
    let same = normalize_snapshot_state(&SnapshotRecord::capture(&current, record.sequence))
        .map_err(|e| {
            PropertyViolation::new(
                "SNAP-10",
                None,
                "current snapshot refused",
                "a state",
                e.to_string(),
            )
        })?;
    if current != same {
        check_eq(
            "SNAP-10",
            None,
            || "normalize is a no-op on a current snapshot".into(),
            &current.canonical(),
            &same.canonical(),
        )?;
    }
    // SNAP-06: no seq invented.
    let unstamped = unstamped_ids(&old);
    for id in &unstamped {
        if has_seq(&once, id) {
            return Err(PropertyViolation::new(
                "SNAP-06",
                None,
                format!("normalizing a {writer} snapshot gave decision `{id}` a seq"),
                "(absent)",
                show(
                    once.variables
                        .decisions
                        .as_ref()
                        .and_then(|d| d.get(id))
                        .and_then(|e| e.get("seq"))
                        .as_ref(),
                ),
            ));
        }
    }

    if let (Some(k), Some(prefix)) = (at, prefix) {
        let rec = SnapshotRecord::capture_as(writer, &prefix, events[k].sequence);
        let normalized = normalize_snapshot_state(&rec).map_err(|e| {
            PropertyViolation::new(
                "SNAP-03",
                Some(k),
                "snapshot refused",
                "a state",
                e.to_string(),
            )
        })?;
        let mut restored = Reference.fold_owned(FoldVersion::CURRENT, normalized, &events[k + 1..]);
        // SNAP-07: an unstamped entry stays unstamped along the snapshot path.
        for id in unstamped_ids(&prefix) {
            if has_seq(&restored, &id) {
                return Err(PropertyViolation::new(
                    "SNAP-07",
                    Some(k),
                    format!("decision `{id}` lost its seq in a {writer} snapshot and regained one from the tail"),
                    "(absent)",
                    "a seq",
                ));
            }
        }
        if legacy_exception(writer, events).is_none() {
            let same = if writer.has(24) {
                restored == current
            } else {
                let mut expected = current.clone();
                strip_seq(&mut expected);
                strip_seq(&mut restored);
                restored == expected
            };
            if !same {
                let strip = !writer.has(24);
                check_eq(
                    "SNAP-03",
                    Some(k),
                    || {
                        format!(
                            "1.26 restore of a {writer} snapshot at k={k} vs fold(all); log: {}",
                            show_log(events)
                        )
                    },
                    &canon_stripped(&current, strip),
                    &canon_stripped(&restored, strip),
                )?;
            }
        }
    }

    let quarantine = events.iter().any(|e| e.event_type.starts_with("INBOX_"));
    if !quarantine {
        // The writer's own fold already is one of the two when it is 1.24 or 1.25.
        let fold_at = |minor: u32| {
            if writer == version(minor) {
                old.clone()
            } else {
                loom_kernel::fold_as(version(minor), &ExecutionState::new(), events)
            }
        };
        let (v24, v25) = (fold_at(24), fold_at(25));
        if v24 != v25 {
            check_eq(
                "FOLD-47",
                None,
                || {
                    format!(
                        "a log without quarantine kinds under 1.24 vs 1.25; log: {}",
                        show_log(events)
                    )
                },
                &v24.canonical(),
                &v25.canonical(),
            )?;
        }
    }
    Ok(())
}

fn unstamped_ids(state: &ExecutionState) -> Vec<String> {
    state
        .variables
        .decisions
        .as_ref()
        .map(|d| {
            d.iter()
                .filter(|(_, e)| e.get("seq").is_none())
                .map(|(id, _)| id.to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn has_seq(state: &ExecutionState, id: &str) -> bool {
    state
        .variables
        .decisions
        .as_ref()
        .and_then(|d| d.get(id))
        .is_some_and(|e| e.get("seq").is_some())
}
