//! Other readings of the open points: the reference kernel with one (or several) of its
//! resolutions taken the other way, each a reading the spec's text also allows.
//!
//! They are the evidence behind every vector's `basis` (decision 0008). A vector whose
//! answer one of these readings changes rests on that reading's GAP, and must say so;
//! the generator derives, from the differences, which JSON pointers of the answer the
//! resolution decides (`basis.resolutions[].paths`), and a vector that accepts every
//! reading lists the other readings' answers as alternatives. `vectors/tests/basis.rs`
//! runs every reading against the committed set and fails when one makes a vector fail
//! (a vector that rests on a GAP it does not cite), or when a vector cites a modelled
//! GAP that no reading of it changes.
//!
//! A kernel with readings behaves as a kernel written from the spec that chose
//! differently would: `wrong-kernel --readings all` serves one over the stdio protocol,
//! its `hello` claiming only the reference's resolutions it still follows. The readings
//! are emulated around the reference the way the wrong kernels are (`crate::wrong`):
//! the event or request is changed before the reference sees it, or the answer after.

use crate::basis::{covers, DECISIONS};
use crate::format::Kind;
use crate::wrong::Bug;
use loom_kernel::fold::{is_known_event_type, keys, ExecutionState, Status, INDOUBT_GATE};
use loom_kernel::EventEnvelope;
use serde_json::{json, Value};

macro_rules! readings {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $gap:literal, $accepted:literal, $text:literal; )*) => {
        /// One other reading of an open point.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Reading {
            $( $(#[$doc])* $variant, )*
        }

        impl Reading {
            /// Every reading, in catalogue order.
            pub const ALL: &'static [Reading] = &[ $( Reading::$variant, )* ];

            /// The reading's name (`--readings NAME`, an alternative's `reading`).
            pub fn as_str(self) -> &'static str {
                match self { $( Reading::$variant => $name, )* }
            }

            /// The open point it takes the other way.
            pub fn gap(self) -> &'static str {
                match self { $( Reading::$variant => $gap, )* }
            }

            /// Whether a vector accepts this reading's answer as an alternative (the
            /// spec's text plainly allows both: key dropped or event refused, absent or
            /// `null`), instead of reporting a resolution difference.
            pub fn accepted(self) -> bool {
                match self { $( Reading::$variant => $accepted, )* }
            }

            /// The reading in one sentence.
            pub fn description(self) -> &'static str {
                match self { $( Reading::$variant => $text, )* }
            }
        }
    };
}

readings! {
    /// GAP-01: an optional payload field that is absent stays absent in the state.
    AbsentStaysAbsent = "gap01-absent-field-stays-absent", "GAP-01", true,
        "A payload field the event does not carry (EXECUTION_STARTED.input, STEP_STARTED.input, STEP_COMPLETED.output, STEP_FAILED.error) leaves its state key absent instead of null.";
    /// GAP-02: emit digests and fnv1a64 values written as decimal numbers.
    DecimalDigest = "gap02-decimal-digest", "GAP-02", false,
        "fnv1a64 values (emit digests, fnv1a: flow hashes) are written as the decimal digits of the 64-bit value, not 16 lowercase hex digits.";
    /// GAP-03: object keys sorted by code point (UTF-8 byte order).
    KeysByCodePoint = "gap03-keys-by-code-point", "GAP-03", false,
        "Canonical JSON sorts object keys by Unicode code point (UTF-8 byte order), as Go, Rust and Python sort strings, not by UTF-16 code units.";
    /// GAP-03: non-ASCII characters escaped.
    EscapedNonAscii = "gap03-escaped-non-ascii", "GAP-03", false,
        "Canonical JSON escapes every non-ASCII character as \\uXXXX (Python's json.dumps default).";
    /// GAP-05: other sanity bounds.
    OtherBounds = "gap05-other-bounds", "GAP-05", false,
        "The RESOURCE_METERED ceiling is Number.MAX_SAFE_INTEGER (2^53 - 1) and QUOTA_EXCEEDED.reason is bounded at 1,024 UTF-8 bytes.";
    /// GAP-08: an accepted EXECUTION_RECOVERED is recorded as an audit envelope.
    RecoveredRecorded = "gap08-recovered-recorded", "GAP-08", false,
        "An accepted EXECUTION_RECOVERED appends a kernel-stamped EXECUTION_RECOVERED audit envelope (which never folds into _resumePayloads) instead of nothing.";
    /// GAP-09: APPROVAL_GRANTED records the authenticator's approval as it is.
    ApprovalIsVerdict = "gap09-approval-is-the-verdict", "GAP-09", false,
        "APPROVAL_GRANTED's payload is the authenticator's approval itself, not {eventType, verdict}.";
    /// GAP-09: the verdict decision comes before the caller's event.
    VerdictDecisionFirst = "gap09-verdict-decision-first", "GAP-09", false,
        "An in-doubt verdict appends the kernel DECISION_RECORDED before the caller's event, not after it.";
    /// GAP-10: other reserved ids.
    OtherIds = "gap10-other-ids", "GAP-10", false,
        "The in-doubt gate is __loom_in_doubt__, a verdict decision __loom_verdict__/<stepId>/<attempt>, an override __loom_discard__/<stepId>.";
    /// GAP-11: an event carrying `__proto__` is refused whole.
    ProtoSkipsEvent = "gap11-proto-refuses-event", "GAP-11", true,
        "An envelope whose payload or metadata carries a __proto__ key at any depth is refused whole (folded as inert) instead of folded with the key dropped.";
    /// GAP-12: known kinds move the bookkeeping even when their handler does nothing.
    BookkeepingOnKnownKinds = "gap12-known-kinds-move-bookkeeping", "GAP-12", false,
        "Every envelope of a known kind sets sequence and updatedAt, also an audit fact, an unstamped gated kind or a payload the handler cannot use; unknown kinds stay inert.";
    /// GAP-12: every envelope moves the bookkeeping.
    BookkeepingOnEveryEnvelope = "gap12-every-envelope-moves-bookkeeping", "GAP-12", false,
        "Every envelope sets sequence and updatedAt, unknown kinds included.";
    /// GAP-13: a continued execution stays closed.
    ContinuedStaysClosed = "gap13-continued-stays-closed", "GAP-13", false,
        "A null EXECUTION_RESUMED does not re-open a continued execution (continued is final), where the reference re-opens it like any terminal status.";
    /// GAP-14: `_waits` ends with the park.
    WaitsEndWithPark = "gap14-waits-end-with-the-park", "GAP-14", false,
        "_waits is removed when the park ends (a resume or a terminal event), as _suspendedOn is, instead of kept until the next park replaces it.";
    /// GAP-17: the quarantine cap applies per topic.
    QuarantineCapPerTopic = "gap17-cap-per-topic", "GAP-17", false,
        "The 1,024-entry _quarantined cap applies to each topic's queue, not to the variable as a whole.";
    /// GAP-17: an auto release without `deliver` delivers.
    AutoReleaseDelivers = "gap17-auto-release-delivers", "GAP-17", false,
        "An INBOX_RELEASED with auto but no deliver releases for delivery, where the reference ignores it.";
    /// GAP-18: userspace may set OUTCOME_RECORDED's recordedBy and late.
    OutcomeFieldsAccepted = "gap18-outcome-fields-accepted", "GAP-18", false,
        "A userspace OUTCOME_RECORDED may carry recordedBy and late (the catalogue's alternative), where the reference refuses it.";
    /// GAP-19: fork metadata is not folded.
    ForkMetadataIgnored = "gap19-fork-metadata-ignored", "GAP-19", false,
        "metadata.forkChain and metadata.forkedBy are read but never fill _chain or _parent.";
    /// GAP-22: another text for a typed failure's error.
    TypedErrorText = "gap22-typed-error-text", "GAP-22", false,
        "A typed STEP_FAILED's error reads `TypedFailure: <channel>` instead of `TypedFailure(<channel>)`.";
    /// GAP-23: a wait answer is also a passthrough.
    WaitAnswerAlsoPassthrough = "gap23-wait-answer-also-passthrough", "GAP-23", false,
        "A kernel-stamped wait-addressed EXECUTION_RESUMED also appends its payload to _resumePayloads.";
    /// GAP-24: the first recorded choice wins.
    FirstChoiceWins = "gap24-first-choice-wins", "GAP-24", false,
        "A repeated DECISION_RECORDED id keeps the first record's entry whole (choice, context, policy, innerSteps), where the reference rebuilds it from the later record.";
    /// GAP-25: a timer wake is status-only.
    TimerWakeStatusOnly = "gap25-timer-wake-status-only", "GAP-25", false,
        "A timer wake appends an unstamped TIMER_FIRED {firedAt} and a null (status-only) EXECUTION_RESUMED, not a {firedAt} passthrough.";
    /// GAP-32: the execution authorizer runs after the gate.
    AuthorizerAfterGate = "gap32-authorizer-after-gate", "GAP-32", false,
        "The execution authorizer is consulted after the ingress gate's checks (before the shape), not right after the authenticator.";
    /// GAP-36: the refusals the spec does not name carry no reason of ours.
    UnnamedRefusals = "gap36-unnamed-refusals", "GAP-36", false,
        "A refusal the spec does not name (every reason but not-suspended, null-answer-after-parked-failure, ambiguous-legacy-answers and the in-doubt ResumePayloadValidationError) is reported as a generic RefusedError without a reason.";
    /// GAP-31: a null answer at an ordinary gate is status-only.
    NullAnswerStatusOnly = "gap31-null-answer-status-only", "GAP-31", false,
        "A null EXECUTION_RESUMED never adds a _resumePayloads entry, also at an ordinary park, where the reference records the null as the gate's answer.";
    /// GAP-06: the custom resource map is not bounded by the fold.
    CustomUnbounded = "gap06-custom-unbounded", "GAP-06", false,
        "RESOURCE_METERED.custom sums every name, where the reference folds at most 64 names.";
    /// GAP-15: a restore folds the whole tail it is handed.
    TailFoldedWhole = "gap15-tail-folded-whole", "GAP-15", false,
        "foldFrom folds every event of the tail it is handed, also those at or before the snapshot's sequence.";
    /// GAP-17: an operator release with `deliver` is ignored.
    OperatorDeliverIgnored = "gap17-operator-deliver-ignored", "GAP-17", false,
        "An INBOX_RELEASED with operator and deliver is ignored (operator releases only discard), where the reference releases it for delivery.";
    /// GAP-35: forged metadata is stripped, not refused.
    ForgedMetadataStripped = "gap35-forged-metadata-stripped", "GAP-35", false,
        "Kernel-read metadata keys (kernel, flowEmit, forkChain, forkedBy, seal) on a resume or userspace emit are stripped and the event accepted, not refused.";
}

impl Reading {
    /// Parses a reading's name.
    pub fn parse(text: &str) -> Option<Reading> {
        Reading::ALL.iter().copied().find(|r| r.as_str() == text)
    }

    /// The readings of `gap`.
    pub fn of_gap(gap: &str) -> impl Iterator<Item = Reading> + '_ {
        Reading::ALL.iter().copied().filter(move |r| r.gap() == gap)
    }

    /// Whether a reading of `gap` is modelled here.
    pub fn modelled(gap: &str) -> bool {
        Reading::of_gap(gap).next().is_some()
    }

    fn bit(self) -> u64 {
        1u64 << (self as u32)
    }

    /// The vector kinds this reading can change (a vector of another kind that rests
    /// on its gap is declared by hand, the whole answer deciding).
    pub fn kinds(self) -> &'static [Kind] {
        use Reading as R;
        const FOLDS: &[Kind] = &[Kind::Fold, Kind::Normalize];
        match self {
            R::DecimalDigest | R::KeysByCodePoint | R::EscapedNonAscii => {
                &[Kind::Digest, Kind::Runtime]
            }
            R::OtherBounds | R::OutcomeFieldsAccepted => &[Kind::Emit],
            R::RecoveredRecorded | R::ApprovalIsVerdict | R::AuthorizerAfterGate => {
                &[Kind::Ingress]
            }
            R::VerdictDecisionFirst | R::TimerWakeStatusOnly => &[Kind::Ingress, Kind::Runtime],
            R::OtherIds => &[
                Kind::Fold,
                Kind::Normalize,
                Kind::Ingress,
                Kind::Emit,
                Kind::Runtime,
            ],
            R::TypedErrorText => &[Kind::Runtime],
            R::ForgedMetadataStripped | R::UnnamedRefusals => &[Kind::Ingress, Kind::Emit],
            R::TailFoldedWhole => &[Kind::Normalize],
            _ => FOLDS,
        }
    }

    /// Whether this reading can change the answer to a request whose text (canonical
    /// and raw) is `text`: a cheap test that lets the generator skip a reading that
    /// reads nothing the request holds. Never false where the reading could change
    /// the answer (`vectors/tests/basis.rs` runs every reading on every vector without it).
    pub fn may_change(self, text: &str) -> bool {
        use Reading as R;
        let any = |needles: &[&str]| needles.iter().any(|n| text.contains(n));
        match self {
            R::KeysByCodePoint | R::EscapedNonAscii => !text.is_ascii() || text.contains("\\u"),
            R::OtherBounds => any(&["RESOURCE_METERED", "QUOTA_EXCEEDED"]),
            R::RecoveredRecorded => any(&["RECOVERED", "recover"]),
            R::ApprovalIsVerdict => any(&["authenticator", "APPROVAL_GRANTED"]),
            R::VerdictDecisionFirst | R::OtherIds => any(&[
                "__loom_",
                "indoubt",
                "verdict",
                "discardLegacyAnswers",
                "\\u",
            ]),
            R::ProtoSkipsEvent => any(&["__proto__", "\\u"]),
            R::ContinuedStaysClosed => any(&["EXECUTION_CONTINUED"]),
            R::WaitsEndWithPark => any(&["waits"]),
            R::QuarantineCapPerTopic => any(&["INBOX_QUARANTINED"]),
            R::AutoReleaseDelivers | R::OperatorDeliverIgnored => any(&["INBOX_RELEASED"]),
            R::OutcomeFieldsAccepted => any(&["OUTCOME_RECORDED"]),
            R::ForkMetadataIgnored => any(&["forkChain", "forkedBy"]),
            R::TypedErrorText => any(&["typed"]),
            R::WaitAnswerAlsoPassthrough => any(&["waitId"]),
            R::FirstChoiceWins => any(&["DECISION_RECORDED"]),
            R::TimerWakeStatusOnly => any(&["TIMER_FIRED", "wakeAt", "sleep", "timeout", "timer"]),
            R::AuthorizerAfterGate => any(&["authorizer"]),
            R::ForgedMetadataStripped => any(&["metadata"]),
            R::NullAnswerStatusOnly => any(&["EXECUTION_RESUMED"]),
            R::CustomUnbounded => any(&["custom"]),
            R::AbsentStaysAbsent
            | R::DecimalDigest
            | R::BookkeepingOnKnownKinds
            | R::BookkeepingOnEveryEnvelope
            | R::UnnamedRefusals
            | R::TailFoldedWhole => true,
        }
    }

    /// Whether a reading of `gap` can change a vector of `kind`.
    pub fn modelled_for(gap: &str, kind: Kind) -> bool {
        Reading::of_gap(gap).any(|r| r.kinds().contains(&kind))
    }

    /// The wrong kernel whose behaviour is this reading, when one is.
    fn as_bug(self) -> Option<Bug> {
        match self {
            Reading::KeysByCodePoint => Some(Bug::KeysByCodePoint),
            Reading::EscapedNonAscii => Some(Bug::EscapedNonAscii),
            Reading::QuarantineCapPerTopic => Some(Bug::QuarantineCapPerTopic),
            Reading::AutoReleaseDelivers => Some(Bug::AutoReleaseWithoutDeliver),
            Reading::WaitAnswerAlsoPassthrough => Some(Bug::WaitAnswerAlsoPassthrough),
            _ => None,
        }
    }

    /// Pointer prefixes a difference this reading makes is widened to: a reading that
    /// changes what the runtime does next decides the whole log from there on, and one
    /// that changes the appended batch decides the batch.
    fn widen(self, kind: Kind) -> &'static [&'static str] {
        use Reading as R;
        match (kind, self) {
            (Kind::Runtime, R::DecimalDigest | R::KeysByCodePoint | R::EscapedNonAscii) => &[],
            (Kind::Runtime, R::TypedErrorText) => &[],
            (Kind::Runtime, _) => &["/log", "/outcomes", "/continued"],
            (Kind::Ingress, R::ApprovalIsVerdict | R::VerdictDecisionFirst | R::OtherIds) => {
                &["/events"]
            }
            (Kind::Ingress, R::RecoveredRecorded | R::TimerWakeStatusOnly) => &["/events"],
            (Kind::Ingress | Kind::Emit, R::ForgedMetadataStripped | R::AuthorizerAfterGate) => {
                &[""]
            }
            (Kind::Ingress | Kind::Emit, R::OtherBounds | R::OutcomeFieldsAccepted) => &[""],
            _ => &[],
        }
    }
}

/// A set of readings (the kernel takes each of them instead of the reference's
/// resolution). `Copy`, so a [`crate::ReferenceKernel`] stays `Copy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ReadingSet(u64);

impl ReadingSet {
    /// No reading: the reference.
    pub const NONE: ReadingSet = ReadingSet(0);

    /// One reading.
    pub fn one(r: Reading) -> ReadingSet {
        ReadingSet(r.bit())
    }

    /// One reading of every modelled gap (the first of each): a kernel written from
    /// the spec that takes every open point the other way.
    pub fn every_gap() -> ReadingSet {
        let mut set = ReadingSet::NONE;
        let mut gaps = Vec::new();
        for r in Reading::ALL {
            if !gaps.contains(&r.gap()) {
                gaps.push(r.gap());
                set = set.with(*r);
            }
        }
        set
    }

    /// Parses `all` or a comma-separated list of reading names or GAP ids (a GAP id
    /// stands for its first reading). Two readings implemented by the same kind of
    /// wrong kernel (two canonical writers) cannot be combined.
    pub fn parse(text: &str) -> Result<ReadingSet, String> {
        if text == "all" {
            return Ok(ReadingSet::every_gap());
        }
        let mut set = ReadingSet::NONE;
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let r = Reading::parse(part)
                .or_else(|| Reading::of_gap(part).next())
                .ok_or_else(|| {
                    format!(
                        "unknown reading `{part}` (readings: {})",
                        Reading::ALL
                            .iter()
                            .map(|r| r.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })?;
            set = set.with(r);
        }
        set.check()?;
        Ok(set)
    }

    /// The set with `r` added.
    pub fn with(self, r: Reading) -> ReadingSet {
        ReadingSet(self.0 | r.bit())
    }

    /// Whether `r` is in the set.
    pub fn has(self, r: Reading) -> bool {
        self.0 & r.bit() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The readings in the set, in catalogue order.
    pub fn iter(self) -> impl Iterator<Item = Reading> {
        Reading::ALL.iter().copied().filter(move |r| self.has(*r))
    }

    /// The gaps the set takes the other way, sorted.
    pub fn gaps(self) -> Vec<&'static str> {
        let mut g: Vec<&str> = self.iter().map(Reading::gap).collect();
        g.sort();
        g.dedup();
        g
    }

    /// `Err` when two canonical-writer readings are combined (one writer at a time).
    pub fn check(self) -> Result<(), String> {
        let writers: Vec<&str> = self
            .iter()
            .filter(|r| {
                r.as_bug()
                    .is_some_and(crate::wrong::canonical::is_digest_bug)
            })
            .map(Reading::as_str)
            .collect();
        if writers.len() > 1 {
            return Err(format!(
                "readings {} both replace the canonical writer; take one",
                writers.join(" and ")
            ));
        }
        Ok(())
    }

    /// The canonical-writer bug this set's digests follow, if any.
    pub fn writer_bug(self) -> Option<Bug> {
        self.iter()
            .filter_map(Reading::as_bug)
            .find(|b| crate::wrong::canonical::is_digest_bug(*b))
    }

    fn fold_bugs(self) -> Vec<Bug> {
        self.iter()
            .filter_map(Reading::as_bug)
            .filter(|b| crate::wrong::fold::is_fold_bug(*b))
            .collect()
    }

    /// Whether any reading of the set changes the fold.
    pub fn changes_fold(self) -> bool {
        use Reading as R;
        self.iter().any(|r| {
            matches!(
                r,
                R::AbsentStaysAbsent
                    | R::OtherIds
                    | R::ProtoSkipsEvent
                    | R::BookkeepingOnKnownKinds
                    | R::BookkeepingOnEveryEnvelope
                    | R::ContinuedStaysClosed
                    | R::WaitsEndWithPark
                    | R::ForkMetadataIgnored
                    | R::FirstChoiceWins
                    | R::NullAnswerStatusOnly
                    | R::CustomUnbounded
                    | R::OperatorDeliverIgnored
            )
        }) || !self.fold_bugs().is_empty()
    }

    /// Whether `foldFrom` folds the whole tail it is handed (GAP-15's other reading).
    pub fn folds_whole_tail(self) -> bool {
        self.has(Reading::TailFoldedWhole)
    }

    /// The `hello.resolutions` of a kernel with these readings: every resolution of
    /// the reference it does not take the other way.
    pub fn claimed_resolutions(self) -> Vec<&'static str> {
        let other = self.gaps();
        let mut out: Vec<&str> = DECISIONS
            .iter()
            .map(|(g, _)| *g)
            .filter(|g| !other.contains(g))
            .collect();
        out.dedup();
        out
    }
}

// ---- the fold ----------------------------------------------------------------------

fn has_proto(v: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .any(|(k, x)| k == loom_kernel::fold::PROTO_KEY || has_proto(x)),
        Value::Array(a) => a.iter().any(has_proto),
        _ => false,
    }
}

/// The event as a kernel with `set` reads it (`None`: it refuses the event whole).
fn before_fold(set: ReadingSet, mut e: EventEnvelope) -> Option<EventEnvelope> {
    if set.has(Reading::ProtoSkipsEvent)
        && (has_proto(&e.payload)
            || e.metadata
                .as_ref()
                .is_some_and(|m| has_proto(&Value::Object(m.clone()))))
    {
        return None;
    }
    if set.has(Reading::OperatorDeliverIgnored)
        && e.event_type == "INBOX_RELEASED"
        && e.payload.get("operator").is_some_and(|x| !x.is_null())
        && e.payload.get("deliver") == Some(&Value::Bool(true))
    {
        return None;
    }
    if set.has(Reading::ForkMetadataIgnored) {
        if let Some(m) = e.metadata.as_mut() {
            m.remove("forkChain");
            m.remove("forkedBy");
        }
    }
    Some(e)
}

/// Whether [`after_fold`] needs the state from before `e` (cloned only then).
fn needs_before(set: ReadingSet, e: &EventEnvelope, fold_bugs: bool) -> bool {
    let ty = e.event_type.as_str();
    fold_bugs
        || (set.has(Reading::FirstChoiceWins) && ty == "DECISION_RECORDED")
        || (ty == "EXECUTION_RESUMED"
            && (set.has(Reading::ContinuedStaysClosed) || set.has(Reading::NullAnswerStatusOnly)))
        || (set.has(Reading::CustomUnbounded) && ty == "RESOURCE_METERED")
        || (set.has(Reading::AbsentStaysAbsent)
            && matches!(
                ty,
                "EXECUTION_STARTED" | "STEP_STARTED" | "STEP_COMPLETED" | "STEP_FAILED"
            ))
}

/// What a kernel with `set` changes after the reference folded `e`: `before` is the
/// state before it when [`needs_before`] asked for it, `was_parked` whether a park
/// record was open.
fn after_fold(
    set: ReadingSet,
    before: Option<&ExecutionState>,
    was_parked: bool,
    state: &mut ExecutionState,
    e: &EventEnvelope,
) {
    let ty = e.event_type.as_str();
    let step = e.payload.get("stepId").and_then(Value::as_str);
    if let Some(before) = before {
        if set.has(Reading::FirstChoiceWins) && ty == "DECISION_RECORDED" {
            let id = e.payload.get("id").and_then(Value::as_str);
            let existed = id.is_some_and(|id| {
                before
                    .variables
                    .decisions
                    .as_ref()
                    .is_some_and(|d| d.get(id).is_some())
            });
            if existed {
                *state = before.clone();
            }
        }
        if set.has(Reading::ContinuedStaysClosed)
            && ty == "EXECUTION_RESUMED"
            && before.status == Status::Continued
        {
            *state = before.clone();
        }
        if set.has(Reading::NullAnswerStatusOnly)
            && ty == "EXECUTION_RESUMED"
            && e.payload.is_null()
            && state.resume_payloads().len() == before.resume_payloads().len() + 1
        {
            let list = before.resume_payloads().to_vec();
            state
                .variables
                .set(keys::RESUME_PAYLOADS, Value::Array(list));
            if before.resume_payloads().is_empty() {
                state.variables.remove(keys::RESUME_PAYLOADS);
            }
        }
        if set.has(Reading::CustomUnbounded) && ty == "RESOURCE_METERED" && state != before {
            if let Some(Value::Object(custom)) = e.payload.get("custom") {
                let mut resources = state
                    .variables
                    .get(keys::RESOURCES)
                    .cloned()
                    .unwrap_or(json!({}));
                if let Some(Value::Object(acc)) = resources.get_mut("custom") {
                    for (k, x) in custom {
                        if k != loom_kernel::fold::PROTO_KEY && !acc.contains_key(k) {
                            if let Some(f) = x.as_f64() {
                                acc.insert(k.clone(), json!(f));
                            }
                        }
                    }
                }
                state.variables.set(keys::RESOURCES, resources);
            }
        }
        if set.has(Reading::AbsentStaysAbsent) && state != before {
            let lacks = |field: &str| {
                e.payload
                    .as_object()
                    .is_some_and(|m| !m.contains_key(field))
            };
            match ty {
                "EXECUTION_STARTED"
                    if lacks("input") && state.variables.get(keys::INPUT) == Some(&Value::Null) =>
                {
                    state.variables.remove(keys::INPUT);
                }
                "STEP_STARTED" | "STEP_COMPLETED" | "STEP_FAILED" => {
                    let field = match ty {
                        "STEP_STARTED" => "input",
                        "STEP_COMPLETED" => "output",
                        _ => "error",
                    };
                    if let Some(frame) = step.and_then(|s| state.frames.get_mut(s)) {
                        if lacks(field) {
                            let slot = match field {
                                "input" => &mut frame.input,
                                "output" => &mut frame.output,
                                _ => &mut frame.error,
                            };
                            if slot.as_ref().is_some_and(loom_kernel::Json::is_null) {
                                *slot = None;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if set.has(Reading::WaitsEndWithPark)
        && was_parked
        && !state.variables.contains(keys::SUSPENDED_ON)
    {
        state.variables.remove(keys::WAITS);
    }
    let moves = (set.has(Reading::BookkeepingOnKnownKinds) && is_known_event_type(ty))
        || set.has(Reading::BookkeepingOnEveryEnvelope);
    if moves {
        state.sequence = Some(e.sequence);
        state.updated_at = Some(e.timestamp_ms);
    }
}

/// Folds `events` onto `state` as a kernel with readings `set` (and optionally one
/// deliberate fold bug) does, one event at a time.
pub fn fold_events(
    set: ReadingSet,
    bug: Option<Bug>,
    version: loom_kernel::fold::FoldVersion,
    state: ExecutionState,
    events: Vec<EventEnvelope>,
) -> ExecutionState {
    let fold_bugs = set.fold_bugs();
    let mut state = state;
    for original in events {
        let need = needs_before(set, &original, !fold_bugs.is_empty());
        let before = need.then(|| state.clone());
        let was_parked = state.variables.contains(keys::SUSPENDED_ON);
        let mut e = before_fold(set, original.clone());
        for b in &fold_bugs {
            e = e.and_then(|e| crate::wrong::fold::before_fold(*b, e));
        }
        if let Some(e) = e {
            state = match bug.filter(|b| crate::wrong::fold::is_fold_bug(*b)) {
                Some(b) => crate::wrong::fold::fold_events(b, version, state, vec![e]),
                None => loom_kernel::fold::fold_versioned(
                    state,
                    std::iter::once(e),
                    version,
                    &mut loom_kernel::fold::NoDiagnostics,
                ),
            };
            if let Some(before) = &before {
                for b in &fold_bugs {
                    crate::wrong::fold::after_fold(*b, before, &mut state, &original);
                }
            }
        }
        after_fold(set, before.as_ref(), was_parked, &mut state, &original);
    }
    state
}

// ---- requests and answers ------------------------------------------------------------

const OUR_INDOUBT: &str = INDOUBT_GATE;
const OTHER_INDOUBT: &str = "__loom_in_doubt__";

/// GAP-10: our reserved id ↔ the other reading's, both ways (an involution).
fn swap_id(s: &str) -> Option<String> {
    if s == OUR_INDOUBT {
        return Some(OTHER_INDOUBT.into());
    }
    if s == OTHER_INDOUBT {
        return Some(OUR_INDOUBT.into());
    }
    if let Some(rest) = s.strip_prefix("__loom_verdict:") {
        let (step, attempt) = rest.rsplit_once('#')?;
        return Some(format!("__loom_verdict__/{step}/{attempt}"));
    }
    if let Some(rest) = s.strip_prefix("__loom_verdict__/") {
        let (step, attempt) = rest.rsplit_once('/')?;
        return Some(format!("__loom_verdict:{step}#{attempt}"));
    }
    if let Some(step) = s.strip_prefix("__loom_discard:") {
        return Some(format!("__loom_discard__/{step}"));
    }
    if let Some(step) = s.strip_prefix("__loom_discard__/") {
        return Some(format!("__loom_discard:{step}"));
    }
    None
}

fn swap_ids(v: &mut Value) {
    match v {
        Value::String(s) => {
            if let Some(t) = swap_id(s) {
                *s = t;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(swap_ids),
        Value::Object(m) => {
            let entries: Vec<(String, Value)> = std::mem::take(m).into_iter().collect();
            for (k, mut x) in entries {
                swap_ids(&mut x);
                m.insert(swap_id(&k).unwrap_or(k), x);
            }
        }
        _ => {}
    }
}

/// The params as the reference must see them to answer as a kernel with `set` would.
pub fn before_request(set: ReadingSet, method: &str, params: &Value) -> Value {
    let mut p = params.clone();
    if set.has(Reading::OtherIds) {
        swap_ids(&mut p);
    }
    if set.has(Reading::ForgedMetadataStripped) {
        let meta = match method {
            "ingress" => p.get_mut("request").and_then(|r| r.get_mut("metadata")),
            "validateEmit" => p.get_mut("metadata"),
            _ => None,
        };
        if let Some(Value::Object(m)) = meta {
            for k in ["kernel", "flowEmit", "forkChain", "forkedBy", "seal"] {
                m.remove(k);
            }
        }
    }
    p
}

fn fnv_decimal(hex: &str) -> Option<String> {
    (hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u64::from_str_radix(hex, 16).ok())
        .flatten()
        .map(|n| n.to_string())
}

/// GAP-02: every fnv1a64 value in a runtime log (emit stamps, `fnv1a:` flow hashes)
/// spelled in decimal.
fn decimal_stamps(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match (k.as_str(), &*x) {
                    ("flowEmit", Value::String(s)) => {
                        if let Some(d) = fnv_decimal(s) {
                            *x = Value::String(d);
                        }
                    }
                    ("flowHash", Value::String(s)) if s.starts_with("fnv1a:") => {
                        if let Some(d) = fnv_decimal(&s["fnv1a:".len()..]) {
                            *x = Value::String(format!("fnv1a:{d}"));
                        }
                    }
                    _ => decimal_stamps(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(decimal_stamps),
        _ => {}
    }
}

fn events_mut<'a>(answer: &'a mut Value, method: &str) -> Vec<&'a mut Vec<Value>> {
    let Value::Object(a) = answer else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in a.iter_mut() {
        match (method, k.as_str(), v) {
            ("ingress", "events", Value::Array(e)) | ("runScenario", "log", Value::Array(e)) => {
                out.push(e)
            }
            ("runScenario", "continued", Value::Object(m)) => {
                for log in m.values_mut() {
                    if let Value::Array(e) = log {
                        out.push(e);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The answer of a kernel with `set`, from the reference's answer to
/// [`before_request`]'s params. `answer` is `None` when the reference gave no result.
pub fn after_answer(
    set: ReadingSet,
    kernel: &crate::ReferenceKernel,
    method: &str,
    params: &Value,
    mut answer: Value,
) -> Value {
    if set.has(Reading::OtherIds) {
        swap_ids(&mut answer);
    }
    match method {
        "digest" if set.has(Reading::DecimalDigest) => {
            for key in ["digest", "fnv1a64"] {
                if let Some(Value::String(s)) = answer.get(key) {
                    if let Some(d) = fnv_decimal(s) {
                        answer[key] = Value::String(d);
                    }
                }
            }
            if let Some(Value::String(s)) = answer.get("flowHash") {
                if let Some(d) = s.strip_prefix("fnv1a:").and_then(fnv_decimal) {
                    answer["flowHash"] = Value::String(format!("fnv1a:{d}"));
                }
            }
        }
        "ingress" => ingress_after(set, kernel, params, &mut answer),
        "validateEmit" => emit_after(set, kernel, params, &mut answer),
        "runScenario" => runtime_after(set, &mut answer),
        _ => {}
    }
    answer
}

fn kernel_event(event_type: &str, payload: Value) -> Value {
    json!({"eventType": event_type, "payload": payload, "metadata": {"kernel": true}})
}

fn ingress_after(
    set: ReadingSet,
    kernel: &crate::ReferenceKernel,
    params: &Value,
    answer: &mut Value,
) {
    let appended = answer.get("outcome").and_then(Value::as_str) == Some("appended");
    if set.has(Reading::AuthorizerAfterGate)
        && params
            .get("authorizer")
            .and_then(|a| a.get("verdict"))
            .and_then(Value::as_str)
            == Some("deny")
        && !appended
    {
        // Without the authorizer, would the gate have refused first?
        let mut p = params.clone();
        if let Value::Object(m) = &mut p {
            m.remove("authorizer");
        }
        let plain = crate::ReferenceKernel {
            readings: ReadingSet::NONE,
            ..*kernel
        };
        if let crate::Answer::Result(v) = plain.handle("ingress", &p) {
            let gate_refused = v.get("outcome").and_then(Value::as_str) == Some("refused")
                && v.get("error").and_then(Value::as_str) == Some("ResumeRefusedError");
            if gate_refused {
                *answer = v;
            }
        }
    }
    let path = params.get("path").and_then(Value::as_str).unwrap_or("");
    let request_type = params
        .get("request")
        .and_then(|r| r.get("eventType"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let indoubt = request_type == OUR_INDOUBT || request_type == OTHER_INDOUBT;
    let approval = params
        .get("authenticator")
        .and_then(|a| a.get("approval"))
        .cloned()
        .unwrap_or(Value::Bool(true));
    let recover = path == "recover" || request_type == "EXECUTION_RECOVERED";
    for events in events_mut(answer, "ingress") {
        if set.has(Reading::ApprovalIsVerdict) {
            for e in events.iter_mut() {
                if e.get("eventType").and_then(Value::as_str) == Some("APPROVAL_GRANTED") {
                    e["payload"] = approval.clone();
                }
            }
        }
        if set.has(Reading::VerdictDecisionFirst) && indoubt {
            if let Some(i) = events.iter().position(|e| {
                e.get("eventType").and_then(Value::as_str) == Some("DECISION_RECORDED")
            }) {
                if i > 0 {
                    events.swap(i - 1, i);
                }
            }
        }
        if set.has(Reading::TimerWakeStatusOnly) {
            timer_status_only(events);
        }
        if set.has(Reading::RecoveredRecorded) && recover && appended {
            events.push(kernel_event("EXECUTION_RECOVERED", json!({})));
        }
    }
    if set.has(Reading::UnnamedRefusals) {
        let indoubt_park = params
            .get("log")
            .and_then(Value::as_array)
            .and_then(|l| crate::reference::envelopes(l).ok())
            .is_some_and(|l| loom_kernel::fold(&l).parked_gate() == Some(INDOUBT_GATE));
        let named = match (
            answer.get("error").and_then(Value::as_str),
            answer.get("reason").and_then(Value::as_str),
        ) {
            (Some("ResumeRefusedError"), Some(r)) => SPEC_REASONS.contains(&r),
            (Some("ResumePayloadValidationError"), _) => indoubt_park,
            _ => false,
        };
        if answer.get("outcome").and_then(Value::as_str) == Some("refused") && !named {
            unnamed_refusal(answer);
        }
    }
}

/// The refusal reasons the spec names (§5).
const SPEC_REASONS: [&str; 3] = [
    "not-suspended",
    "null-answer-after-parked-failure",
    "ambiguous-legacy-answers",
];

fn unnamed_refusal(answer: &mut Value) {
    answer["error"] = Value::String("RefusedError".into());
    answer["reason"] = Value::Null;
}

/// GAP-25 (other reading): every `TIMER_FIRED` of a batch or log unstamped, and the
/// resume after it status-only.
fn timer_status_only(events: &mut [Value]) {
    let mut after_timer = false;
    for e in events.iter_mut() {
        match e.get("eventType").and_then(Value::as_str) {
            Some("TIMER_FIRED") => {
                if let Value::Object(m) = e {
                    if let Some(Value::Object(meta)) = m.get_mut("metadata") {
                        meta.remove("kernel");
                        if meta.is_empty() {
                            m.remove("metadata");
                        }
                    }
                }
                after_timer = true;
            }
            Some("EXECUTION_RESUMED") if after_timer => {
                e["payload"] = Value::Null;
                after_timer = false;
            }
            _ => {}
        }
    }
}

fn emit_after(
    set: ReadingSet,
    kernel: &crate::ReferenceKernel,
    params: &Value,
    answer: &mut Value,
) {
    let ty = params
        .get("eventType")
        .and_then(Value::as_str)
        .unwrap_or("");
    let refused = answer.get("outcome").and_then(Value::as_str) == Some("refused");
    let reason = answer
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let accept = |answer: &mut Value, payload: Value| {
        *answer = json!({"outcome": "accepted", "eventType": ty, "payload": payload});
    };
    let plain = crate::ReferenceKernel {
        readings: ReadingSet::NONE,
        ..*kernel
    };
    let payload = params.get("payload").cloned().unwrap_or(Value::Null);
    if set.has(Reading::OutcomeFieldsAccepted)
        && refused
        && reason == "invalid-payload"
        && ty == "OUTCOME_RECORDED"
    {
        let mut p = params.clone();
        if let Some(Value::Object(m)) = p.get_mut("payload") {
            m.remove("recordedBy");
            m.remove("late");
        }
        if let crate::Answer::Result(v) = plain.handle("validateEmit", &p) {
            if v.get("outcome").and_then(Value::as_str) == Some("accepted") {
                accept(answer, payload.clone());
            }
        }
    }
    if set.has(Reading::UnnamedRefusals)
        && answer.get("outcome").and_then(Value::as_str) == Some("refused")
    {
        unnamed_refusal(answer);
    }
    if set.has(Reading::OtherBounds) {
        match ty {
            "RESOURCE_METERED" if refused && reason == "invalid-payload" => {
                // Accepted when every number is within the other ceiling.
                let ceiling = 9_007_199_254_740_991.0_f64;
                let ok_number = |x: &Value| {
                    x.as_f64()
                        .is_some_and(|f| f.is_finite() && f >= 0.0 && f <= ceiling)
                };
                let over_ours = |x: &Value| {
                    x.as_f64()
                        .is_some_and(|f| f > loom_kernel::limits::RESOURCE_METERED_VALUE_MAX)
                };
                let mut p = params.clone();
                let mut any_over = false;
                if let Some(Value::Object(m)) = p.get_mut("payload") {
                    for (k, x) in m.iter_mut() {
                        if k == "custom" {
                            if let Value::Object(c) = x {
                                for y in c.values_mut() {
                                    if over_ours(y) && ok_number(y) {
                                        any_over = true;
                                        *y = json!(0);
                                    }
                                }
                            }
                        } else if over_ours(x) && ok_number(x) {
                            any_over = true;
                            *x = json!(0);
                        }
                    }
                }
                if any_over {
                    if let crate::Answer::Result(v) = plain.handle("validateEmit", &p) {
                        if v.get("outcome").and_then(Value::as_str) == Some("accepted") {
                            accept(answer, payload.clone());
                        }
                    }
                }
            }
            "QUOTA_EXCEEDED" if !refused => {
                if let Some(Value::String(r)) = payload.get("reason") {
                    if r.len() > loom_kernel::limits::QUOTA_REASON_UTF16_UNITS_MAX
                        && utf16_len(r) <= loom_kernel::limits::QUOTA_REASON_UTF16_UNITS_MAX
                    {
                        *answer = json!({
                            "outcome": "refused",
                            "error": "EmitRefusedError",
                            "reason": "invalid-payload",
                        });
                    }
                }
            }
            _ => {}
        }
    }
}

fn runtime_after(set: ReadingSet, answer: &mut Value) {
    for events in events_mut(answer, "runScenario") {
        if set.has(Reading::DecimalDigest) {
            events.iter_mut().for_each(decimal_stamps);
        }
        if set.has(Reading::TimerWakeStatusOnly) {
            timer_status_only(events);
        }
        if set.has(Reading::VerdictDecisionFirst) {
            // The verdict batch: the caller's in-doubt event, then the verdict decision.
            for i in 1..events.len() {
                let verdict = events[i].get("eventType").and_then(Value::as_str)
                    == Some("DECISION_RECORDED")
                    && events[i]
                        .pointer("/payload/id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| id.starts_with("__loom_verdict"));
                let caller = events[i - 1].get("eventType").and_then(Value::as_str);
                if verdict && matches!(caller, Some(OUR_INDOUBT | OTHER_INDOUBT)) {
                    events.swap(i - 1, i);
                }
            }
        }
        if set.has(Reading::TypedErrorText) {
            for e in events.iter_mut() {
                if e.get("eventType").and_then(Value::as_str) != Some("STEP_FAILED") {
                    continue;
                }
                let Some(Value::Object(p)) = e.get_mut("payload") else {
                    continue;
                };
                let Some(Value::String(channel)) = p.get("channel").cloned() else {
                    continue;
                };
                if p.get("error").and_then(Value::as_str)
                    == Some(&format!("TypedFailure({channel})"))
                {
                    p.insert(
                        "error".into(),
                        Value::String(format!("TypedFailure: {channel}")),
                    );
                }
            }
        }
    }
}

// ---- how a vector's answer rests on the readings -------------------------------------

/// Every pointer at which `a` and `b` differ, widened to the shortest prefix in
/// `widen` that covers it. An array that differs in length differs at every index from
/// the shorter one's end; an object at every key only one of them has.
pub fn differing_pointers(a: &Value, b: &Value, widen: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    walk(a, b, String::new(), &mut out);
    let mut widened: Vec<String> = out
        .into_iter()
        .map(|p| {
            widen
                .iter()
                .filter(|w| covers(w, &p))
                .min_by_key(|w| w.len())
                .map_or(p, |w| (*w).to_owned())
        })
        .collect();
    widened.sort();
    widened.dedup();
    crate::basis::minimal_paths(widened)
}

fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

fn walk(a: &Value, b: &Value, at: String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let p = format!("{at}/{}", escape(k));
                match y.get(k) {
                    Some(vb) => walk(va, vb, p, out),
                    None => out.push(p),
                }
            }
            for k in y.keys().filter(|k| !x.contains_key(*k)) {
                out.push(format!("{at}/{}", escape(k)));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let p = format!("{at}/{i}");
                match (x.get(i), y.get(i)) {
                    (Some(va), Some(vb)) => walk(va, vb, p, out),
                    _ => out.push(p),
                }
            }
        }
        _ => {
            if loom_kernel::canonical_string(a) != loom_kernel::canonical_string(b) {
                out.push(at);
            }
        }
    }
}

/// The pointer prefixes a difference under `reading` is widened to, for a vector of
/// `kind`.
pub fn widen_for(reading: Reading, kind: Kind) -> &'static [&'static str] {
    reading.widen(kind)
}

// ---- a basis measured at run time ----------------------------------------------------

/// The basis of an answer no committed vector holds (a golden replay, a fuzz case),
/// measured now the way the generator measures a vector's: the reference answers
/// `method(params)`, then each reading of an open point `claims` does not claim answers
/// it too (every one: [`Reading::kinds`] is what the committed set was measured on, and
/// a fuzz case reaches further). Each reading that changes the judged part
/// (`judged`: the answer in the shape [`crate::basis::judged_part`] gives, `None` when
/// it cannot be judged) becomes a resolution at its differing pointers (widened as the
/// generator widens them), or, for a reading the spec plainly allows, an alternative.
/// `None` when the reference gives no answer. Returns the reference's judged answer,
/// the basis and the alternatives.
pub fn measure(
    kind: Kind,
    method: &str,
    params: &Value,
    claims: &crate::basis::ResolutionClaims,
    judged: &dyn Fn(Value) -> Option<Value>,
) -> Option<(Value, crate::basis::Basis, Vec<crate::basis::Alternative>)> {
    use crate::basis::{Alternative, Basis, Resolution};
    use crate::protocol::Answer;
    let answer =
        |set: ReadingSet| match crate::ReferenceKernel::with_readings(set).handle(method, params) {
            Answer::Result(v) => judged(v),
            _ => None,
        };
    let reference = answer(ReadingSet::NONE)?;
    let mut resolutions = Vec::new();
    let mut alternatives = Vec::new();
    for r in Reading::ALL
        .iter()
        .copied()
        .filter(|r| !claims.claims(r.gap()))
    {
        let Some(other) = answer(ReadingSet::one(r)) else {
            continue;
        };
        let paths = differing_pointers(&reference, &other, r.widen(kind));
        if paths.is_empty() {
            continue;
        }
        if r.accepted() {
            alternatives.push(Alternative {
                reading: r.as_str().to_owned(),
                gaps: vec![r.gap().to_owned()],
                description: r.description().to_owned(),
                expected: other,
                resolutions: Vec::new(),
            });
        }
        resolutions.push(Resolution::new(r.gap(), paths));
    }
    // The readings also act together (a `__proto__` event refused whole while inert
    // envelopes move the bookkeeping): what the first unclaimed reading of every point
    // changes together is laid to each point that changes the answer alone.
    let mut together = ReadingSet::NONE;
    for r in Reading::ALL
        .iter()
        .copied()
        .filter(|r| !claims.claims(r.gap()))
    {
        if !together.gaps().contains(&r.gap()) && together.with(r).check().is_ok() {
            together = together.with(r);
        }
    }
    if together.iter().count() > 1 && !resolutions.is_empty() {
        if let Some(other) = answer(together) {
            let widen: Vec<&str> = together
                .iter()
                .flat_map(|r| r.widen(kind).iter().copied())
                .collect();
            let paths = differing_pointers(&reference, &other, &widen);
            for r in &mut resolutions {
                r.paths.extend(paths.iter().cloned());
            }
        }
    }
    Some((
        reference,
        Basis::from_resolutions(resolutions),
        alternatives,
    ))
}
