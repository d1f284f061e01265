//! The pure fold: `state = fold(events)`.
//!
//! Every handler is a pure `(state, event) -> state` step (FOLD-03). The fold reads
//! nothing but the envelopes: no clock, randomness, environment or hash order (FOLD-01,
//! FOLD-02). It never panics and never stops on bad input: an envelope whose kind is
//! unknown, whose payload is malformed, or which is gated off (a Wave 2 kind without
//! `metadata.kernel: true`) is inert and leaves the whole state unchanged, `sequence`
//! and `updatedAt` included (FOLD-04, GAP-12); the one exception is the `_flowEmits`
//! count, which counts a `metadata.flowEmit` stamp on any envelope (FOLD-19).
//!
//! `fold_from` takes the prior state by reference and returns a new one, so a state a
//! caller holds is never changed in place (FOLD-06).
//!
//! Behaviour that changed between EVENT_SCHEMA minors is selected by [`FoldVersion`],
//! from 1.15.0 to the current 1.26.0, so mixed fleets and the documented snapshot
//! exceptions can be reproduced.

mod fields;
pub mod footprint;
mod handlers;
mod raw;
pub mod state;
pub(crate) mod wire;

/// Constants the handlers define that other kernel modules share.
pub mod handlers_api {
    pub use super::handlers::RESOURCE_DIMENSIONS;
}

use handlers::Handlers;
pub use state::{keys, DecisionMap, ExecutionState, Frame, FrameStatus, Status, Variables};

use crate::envelope::{
    decode_line, envelope_lines, for_each_envelope, layout, EnvelopeError, EventEnvelope, Layout,
    RawEnvelope,
};
use crate::versions::{SemVer, EVENT_SCHEMA_VERSION};
use serde_json::Value;
use std::borrow::Borrow;

/// Which EVENT_SCHEMA minor's fold behaviour to reproduce (major 1 only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FoldVersion {
    minor: u32,
}

impl FoldVersion {
    /// The oldest minor this fold can reproduce.
    pub const OLDEST: FoldVersion = FoldVersion { minor: 15 };
    /// The current minor (EVENT_SCHEMA_VERSION 1.26.0).
    pub const CURRENT: FoldVersion = FoldVersion { minor: 26 };

    /// `1.<minor>.0`, if this fold can reproduce it.
    pub fn from_minor(minor: u32) -> Option<FoldVersion> {
        (Self::OLDEST.minor..=Self::CURRENT.minor)
            .contains(&minor)
            .then_some(FoldVersion { minor })
    }

    /// Parses `1.MINOR.PATCH`. A major other than 1, or a minor outside 1.15–1.26, is an
    /// error naming the supported range.
    pub fn parse(text: &str) -> Result<FoldVersion, String> {
        let v = SemVer::parse(text)?;
        if v.major != 1 {
            return Err(format!("schema {text}: only EVENT_SCHEMA major 1 exists"));
        }
        u32::try_from(v.minor)
            .ok()
            .and_then(FoldVersion::from_minor)
            .ok_or_else(|| {
                format!("schema {text}: this fold reproduces 1.15.0 through {EVENT_SCHEMA_VERSION}")
            })
    }

    /// The minor number.
    pub fn minor(self) -> u32 {
        self.minor
    }

    /// Whether behaviour introduced in `1.<minor>.0` is on.
    pub fn has(self, minor: u32) -> bool {
        self.minor >= minor
    }

    /// Every version this fold reproduces, oldest first.
    pub fn all() -> impl Iterator<Item = FoldVersion> {
        (Self::OLDEST.minor..=Self::CURRENT.minor).map(|minor| FoldVersion { minor })
    }
}

impl std::fmt::Display for FoldVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "1.{}.0", self.minor)
    }
}

/// Every event kind the fold knows at EVENT_SCHEMA_VERSION, sorted. Pinned together
/// with the version by the event-schema pin test (COMPAT-02). The 1.13.0/1.14.0 audit
/// facts are not named by the spec and are therefore absent (GAP-01).
pub fn known_event_types() -> &'static [&'static str] {
    &KNOWN_EVENT_TYPES
}

/// Declares the known kinds once: the table [`EVENT_KINDS_SINCE`] and the `match` that
/// [`is_known_event_type`] runs on every envelope (a `match` on string literals compiles
/// to a switch on the length and a compare with the few kinds of that length, where a
/// binary search over the table called `memcmp` five times).
macro_rules! known_kinds {
    ($($kind:literal => $since:literal,)*) => {
        /// The known kinds, with the schema minor that introduced each (0 = before 1.15).
        pub const EVENT_KINDS_SINCE: [(&str, u32); 29] = [$(($kind, $since)),*];

        fn is_kernel_kind(event_type: &str) -> bool {
            matches!(event_type, $($kind)|*)
        }
    };
}

known_kinds! {
    "APPROVAL_GRANTED" => 0,
    "DECISION_RECORDED" => 0,
    "EFFECT_DENIED" => 0,
    "EFFECT_INDOUBT" => 0,
    "EGRESS_DENIED" => 0,
    "EVENTS_REHOMED" => 22,
    "EXECUTION_CANCELLED" => 0,
    "EXECUTION_COMPLETED" => 0,
    "EXECUTION_CONTINUED" => 23,
    "EXECUTION_FAILED" => 0,
    "EXECUTION_MIGRATED" => 0,
    "EXECUTION_RECOVERED" => 0,
    "EXECUTION_RESUMED" => 0,
    "EXECUTION_STARTED" => 0,
    "EXECUTION_SUSPENDED" => 0,
    "INBOX_QUARANTINED" => 25,
    "INBOX_RELEASED" => 25,
    "MESSAGE_CONSUMED" => 23,
    "OUTCOME_RECORDED" => 0,
    "PARALLEL_COMPLETED" => 0,
    "QUOTA_EXCEEDED" => 0,
    "RESOURCE_METERED" => 0,
    "SAFETY_BLOCKED" => 0,
    "STEP_CANCELLED" => 0,
    "STEP_COMPLETED" => 0,
    "STEP_FAILED" => 0,
    "STEP_RETRYING" => 0,
    "STEP_STARTED" => 0,
    "TIMER_FIRED" => 0,
}

const KNOWN_EVENT_TYPES: [&str; 29] = {
    let mut out = [""; 29];
    let mut i = 0;
    while i < 29 {
        // `is_known_event_type` rejects a kind by its first byte when it is not upper
        // case: a kernel kind that were not would not build.
        assert!(EVENT_KINDS_SINCE[i].0.as_bytes()[0].is_ascii_uppercase());
        out[i] = EVENT_KINDS_SINCE[i].0;
        i += 1;
    }
    out
};

/// Whether `event_type` is a kernel kind (a member of [`known_event_types`]).
pub fn is_known_event_type(event_type: &str) -> bool {
    // Every kernel kind is upper case: a custom kind (`ui.progress`, most of the unknown
    // kinds a long log holds) is told apart by its first byte, before any compare.
    event_type
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_uppercase)
        && is_kernel_kind(event_type)
}

/// The kinds a given fold version knows.
pub fn known_event_types_at(version: FoldVersion) -> Vec<&'static str> {
    EVENT_KINDS_SINCE
        .iter()
        .filter(|(_, since)| version.has(*since))
        .map(|(k, _)| *k)
        .collect()
}

/// Reserved gate of an in-doubt park (GAP-10, reference-defined).
pub const INDOUBT_GATE: &str = "__loom_indoubt__";
/// Reserved gate of the replay-divergence detector in fail mode (FOLD-36, FOLD-37).
pub const DIVERGED_GATE: &str = "__loom_diverged__";
/// Decision ids with this prefix are the kernel's own records (INGRESS-33).
pub const RESERVED_DECISION_PREFIX: &str = "__loom_";
/// The one container key the fold refuses at every depth (FOLD-05).
pub const PROTO_KEY: &str = "__proto__";

/// Something the fold noticed and set aside. The fold never stops; diagnostics say
/// what it ignored and why, for `loom verify-log` and the reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldDiagnostic {
    /// Position of the envelope in the folded slice.
    pub index: usize,
    /// The envelope's sequence.
    pub sequence: u64,
    /// The envelope's kind.
    pub event_type: String,
    /// What happened.
    pub kind: DiagnosticKind,
}

/// What a [`FoldDiagnostic`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// `__proto__` keys were dropped from the payload (FOLD-05, GAP-11); the count.
    ProtoKeysDropped(usize),
    /// A known kind with a payload the fold cannot use; the event is inert.
    InvalidPayload(String),
    /// A kernel-only kind (or field) without `metadata.kernel: true`; inert (FOLD-30).
    NotKernelStamped,
    /// A kind this fold version does not know yet; inert.
    NotYetKnown,
    /// A quarantine fact over the 1,024-entry cap; inert (GAP-17).
    QuarantineCapReached,
}

impl std::fmt::Display for FoldDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "event {} (sequence {}, {}): ",
            self.index, self.sequence, self.event_type
        )?;
        match &self.kind {
            DiagnosticKind::ProtoKeysDropped(n) => {
                write!(f, "dropped {n} `__proto__` key(s) (FOLD-05)")
            }
            DiagnosticKind::InvalidPayload(why) => write!(f, "ignored: {why}"),
            DiagnosticKind::NotKernelStamped => write!(
                f,
                "ignored: kernel-only kind without metadata.kernel: true (FOLD-30)"
            ),
            DiagnosticKind::NotYetKnown => {
                write!(f, "ignored: kind not known at this schema version")
            }
            DiagnosticKind::QuarantineCapReached => {
                write!(f, "ignored: _quarantined is at its 1024-entry cap (GAP-17)")
            }
        }
    }
}

/// Folds a whole log from the empty state at the current schema version.
pub fn fold(events: &[EventEnvelope]) -> ExecutionState {
    fold_from(&ExecutionState::new(), events)
}

/// Folds `tail` onto a copy of `state` (the caller's value is untouched, FOLD-06).
pub fn fold_from(state: &ExecutionState, tail: &[EventEnvelope]) -> ExecutionState {
    fold_versioned(
        state.clone(),
        tail,
        FoldVersion::CURRENT,
        &mut NoDiagnostics,
    )
}

/// Folds envelopes (owned or borrowed) onto an owned state: the state is not copied,
/// and no envelope is (the fold never copies an envelope, only what the state keeps of
/// it).
pub fn fold_owned<E: Borrow<EventEnvelope>>(
    state: ExecutionState,
    events: impl IntoIterator<Item = E>,
) -> ExecutionState {
    fold_versioned(state, events, FoldVersion::CURRENT, &mut NoDiagnostics)
}

/// Folds as a given schema version.
pub fn fold_as(
    version: FoldVersion,
    state: &ExecutionState,
    tail: &[EventEnvelope],
) -> ExecutionState {
    fold_versioned(state.clone(), tail, version, &mut NoDiagnostics)
}

/// Folds and also returns what the fold set aside.
pub fn fold_with_diagnostics(
    version: FoldVersion,
    state: &ExecutionState,
    tail: &[EventEnvelope],
) -> (ExecutionState, Vec<FoldDiagnostic>) {
    let mut diags = Vec::new();
    let state = fold_versioned(state.clone(), tail, version, &mut diags);
    (state, diags)
}

/// Folds a log given as text (JSON lines or a JSON array, as [`crate::decode_log`]
/// reads it) onto `state`: the same state, diagnostics and decoding errors as
/// `decode_log` and then [`fold_versioned`], without holding the envelopes and, for the
/// kinds a long log is made of, without building their payloads as trees (the kept
/// values go into the state as compact text). Returns the state and the number of
/// envelopes.
pub fn fold_text(
    state: ExecutionState,
    text: &str,
    version: FoldVersion,
    sink: &mut dyn DiagnosticSink,
) -> Result<(ExecutionState, usize), EnvelopeError> {
    fold_text_observed(state, text, version, sink, &mut |_| {})
}

fn seen(e: &EventEnvelope) -> Seen<'_> {
    Seen {
        execution_id: &e.execution_id,
        event_type: &e.event_type,
        sequence: e.sequence,
    }
}

/// Who an envelope is, as [`fold_text_observed`] shows each one it folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen<'a> {
    /// `executionId`.
    pub execution_id: &'a str,
    /// `eventType`.
    pub event_type: &'a str,
    /// `sequence`.
    pub sequence: u64,
}

/// [`fold_text`], showing `observe` each envelope as it is folded, in log order (`loom
/// fold` judges the log's order and executions as it goes).
pub fn fold_text_observed(
    state: ExecutionState,
    text: &str,
    version: FoldVersion,
    sink: &mut dyn DiagnosticSink,
    observe: &mut dyn FnMut(Seen<'_>),
) -> Result<(ExecutionState, usize), EnvelopeError> {
    let mut folder = Folder::new(state, version, sink);
    match layout(text) {
        Layout::Array(_) => {
            for_each_envelope(text, &mut |e| {
                observe(seen(&e));
                folder.push(&e);
                Ok(())
            })?;
        }
        Layout::Lines(body) => {
            for (line, line_no, more) in envelope_lines(body) {
                if let Some(w) = wire::read(line) {
                    if folder.push_wire(&w) {
                        observe(Seen {
                            execution_id: w.execution_id,
                            event_type: w.event_type,
                            sequence: w.sequence,
                        });
                        continue;
                    }
                }
                if let Some(raw) = RawEnvelope::read(line) {
                    // A line read raw always parses again; were it ever not to, the strict
                    // decoder below takes it.
                    if folder.push_raw(&raw).is_ok() {
                        observe(Seen {
                            execution_id: &raw.execution_id,
                            event_type: &raw.event_type,
                            sequence: raw.sequence,
                        });
                        continue;
                    }
                }
                let e = decode_line(line, folder.pushed(), line_no, more)?;
                observe(seen(&e));
                folder.push(&e);
            }
        }
    }
    let n = folder.pushed();
    Ok((folder.finish(), n))
}

/// Receives diagnostics during a fold.
pub trait DiagnosticSink {
    /// Records one diagnostic.
    fn push(&mut self, diagnostic: FoldDiagnostic);
}

impl DiagnosticSink for Vec<FoldDiagnostic> {
    fn push(&mut self, diagnostic: FoldDiagnostic) {
        Vec::push(self, diagnostic)
    }
}

/// Discards diagnostics.
pub struct NoDiagnostics;

impl DiagnosticSink for NoDiagnostics {
    fn push(&mut self, _: FoldDiagnostic) {}
}

/// The general fold: an owned state, envelopes (owned or borrowed: none is copied), a
/// version and a diagnostic sink.
pub fn fold_versioned<E: Borrow<EventEnvelope>>(
    state: ExecutionState,
    events: impl IntoIterator<Item = E>,
    version: FoldVersion,
    sink: &mut dyn DiagnosticSink,
) -> ExecutionState {
    let mut folder = Folder::new(state, version, sink);
    for event in events {
        folder.push(event.borrow());
    }
    folder.finish()
}

/// [`fold_with_diagnostics`] with every envelope through the general handler, its
/// payload built as a tree: the fast handlers (the hot kinds read in place from their
/// payload's text) are left out. It is the fold every fast path is held to
/// (tests/fold_text.rs, and the `fold_total` property on every fuzz input), slower and
/// otherwise the same fold.
pub fn fold_general_with_diagnostics(
    version: FoldVersion,
    state: &ExecutionState,
    tail: &[EventEnvelope],
) -> (ExecutionState, Vec<FoldDiagnostic>) {
    let mut diags = Vec::new();
    let mut folder = Folder::new(state.clone(), version, &mut diags);
    folder.handlers = Handlers::GeneralOnly;
    for event in tail {
        folder.push(event);
    }
    (folder.finish(), diags)
}

/// The fold one envelope at a time, for a caller that decodes a log as it goes and does
/// not keep the envelopes (`loom fold` on a long log): the same steps as
/// [`fold_versioned`], with each envelope's index counted across pushes, so diagnostics
/// name the same index as a fold of the whole slice.
pub struct Folder<'s> {
    state: ExecutionState,
    version: FoldVersion,
    next_index: usize,
    sink: &'s mut dyn DiagnosticSink,
    handlers: Handlers,
}

impl<'s> Folder<'s> {
    /// Starts from `state` (owned: nobody else sees it change, FOLD-06).
    pub fn new(
        state: ExecutionState,
        version: FoldVersion,
        sink: &'s mut dyn DiagnosticSink,
    ) -> Folder<'s> {
        Folder {
            state,
            version,
            next_index: 0,
            sink,
            handlers: Handlers::Fast,
        }
    }

    /// Folds the next envelope.
    pub fn push(&mut self, event: &EventEnvelope) {
        handlers::apply(
            &mut self.state,
            event,
            self.next_index,
            self.version,
            self.sink,
            self.handlers,
        );
        self.next_index += 1;
    }

    /// Folds the next envelope from the log text it was read from, without building
    /// its payload where the fold does not need to (`fold_text`): the same state and
    /// diagnostics as [`Folder::push`] of its owned envelope. `Err` (nothing folded)
    /// only when its raw text does not decode, which a [`RawEnvelope::read`] result
    /// always does.
    pub fn push_raw(&mut self, raw: &RawEnvelope<'_>) -> Result<(), serde_json::Error> {
        raw::apply_raw(
            &mut self.state,
            raw,
            self.next_index,
            self.version,
            self.sink,
        )?;
        self.next_index += 1;
        Ok(())
    }

    /// Folds the next envelope from a line in the wire form (`fold_text`); `false`
    /// (nothing folded) when the line is the raw path's to fold.
    fn push_wire(&mut self, w: &wire::WireLine<'_>) -> bool {
        let done = wire::apply_wire(&mut self.state, w, self.next_index, self.version, self.sink);
        self.next_index += usize::from(done);
        done
    }

    /// The state so far.
    pub fn state(&self) -> &ExecutionState {
        &self.state
    }

    /// How many envelopes were pushed.
    pub fn pushed(&self) -> usize {
        self.next_index
    }

    /// The folded state.
    pub fn finish(self) -> ExecutionState {
        self.state
    }
}

/// `getDecision`: the recorded choice for a decision id, and nothing else (FOLD-18).
/// `context`, `policy`, `seq` and `innerSteps` are never returned.
pub fn get_decision(state: &ExecutionState, id: &str) -> Option<Value> {
    state.variables.decisions.as_ref()?.get(id)?.get("choice")
}

/// `evidenceEvents` order of decision ids (SNAP-08): stamped entries by `seq`; each
/// unstamped (legacy) entry immediately after the stamped entry before it in folded-map
/// order; unstamped entries with no stamped entry before them come first, in map order
/// (GAP-16).
pub fn evidence_order(state: &ExecutionState) -> Vec<String> {
    let Some(decisions) = state.variables.decisions.as_ref() else {
        return Vec::new();
    };
    let order = decisions.js_order();
    let seq_of = |id: &str| {
        decisions
            .get(id)
            .and_then(|e| e.get("seq"))
            .and_then(|s| s.as_u64())
    };
    let mut leading: Vec<String> = Vec::new();
    // (seq, map position, id, followers)
    let mut stamped: Vec<(u64, usize, String, Vec<String>)> = Vec::new();
    for (pos, id) in order.iter().enumerate() {
        match seq_of(id) {
            Some(seq) => stamped.push((seq, pos, (*id).to_owned(), Vec::new())),
            None => match stamped.last_mut() {
                Some(last) => last.3.push((*id).to_owned()),
                None => leading.push((*id).to_owned()),
            },
        }
    }
    stamped.sort_by_key(|s| (s.0, s.1));
    let mut out = leading;
    for (_, _, id, followers) in stamped {
        out.push(id);
        out.extend(followers);
    }
    out
}
