//! The resume ingress gate and userspace-emit validation: pure functions of the folded
//! state, the log and the request.
//!
//! The gate is always on (INGRESS-01): every resume path of the runtime calls
//! [`admit`], which either refuses with a typed error and appends nothing
//! (INGRESS-15), or returns the exact events to append atomically. Checks run in the
//! order the spec fixes (INGRESS-24, GAP-32):
//! 1. identity: the `ResumeAuthenticator` sees the raw request; then the execution
//!    authorizer (INGRESS-38) — so no gate name leaks to an unauthenticated caller;
//! 2. the gate: kernel namespace and forged metadata (INGRESS-02, INGRESS-39), the
//!    execution's state (INGRESS-05, INGRESS-13), the recorded gate or the timed wake
//!    (INGRESS-03, INGRESS-04) — or, at an in-doubt park, the verdict check
//!    (INGRESS-10) — then the null answer after a parked failure (INGRESS-14), then
//!    ambiguous legacy answers (INGRESS-36/37);
//! 3. shape: the flow's `resumeSchemas` entry parses the payload and the PARSED value is
//!    recorded (INGRESS-22).
//!
//! Successful resumes append, in this order (GAP-09): `APPROVAL_GRANTED` (when an
//! authenticator is wired), the caller's event with its parsed payload, a kernel
//! `DECISION_RECORDED` for an in-doubt verdict or a legacy-answer override, then
//! `EXECUTION_RESUMED` carrying the gate's answer.

mod emit;

pub use emit::{
    validate_user_emit, EmitRefusal, EmitRefused, EmitSource, USERSPACE_KERNEL_ALLOW_LIST,
};

use crate::envelope::EventEnvelope;
use crate::fold::{
    is_known_event_type, keys, ExecutionState, Status, INDOUBT_GATE, RESERVED_DECISION_PREFIX,
};
use crate::schema;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Envelope metadata keys only the kernel's own writers may set (ABI-14, INGRESS-39).
pub const KERNEL_METADATA_KEYS: [&str; 5] = ["kernel", "flowEmit", "forkChain", "forkedBy", "seal"];

/// The metadata key an operator's resume uses to discard unattributable legacy answers.
pub const DISCARD_LEGACY_ANSWERS_KEY: &str = "discardLegacyAnswers";

/// A resume as a caller (or the kernel) delivers it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeRequest {
    /// The event type: the gate name, `TIMER_FIRED`, or `EXECUTION_RECOVERED`.
    pub event_type: String,
    /// The gate's answer.
    pub payload: Value,
    /// Caller metadata (never a kernel-read key).
    pub metadata: Option<Map<String, Value>>,
}

impl ResumeRequest {
    /// A request with no metadata.
    pub fn new(event_type: impl Into<String>, payload: Value) -> ResumeRequest {
        ResumeRequest {
            event_type: event_type.into(),
            payload,
            metadata: None,
        }
    }
}

/// Which entry point delivers the resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumePath {
    /// `resume(executionId, event)`: wire `execution.resume`, A2A `provideInput`, …
    Resume,
    /// `resumeAs`: onto a crashed or terminal execution only the namespace rule applies;
    /// onto a parked one every resume rule does (INGRESS-17, INGRESS-18).
    ResumeAs,
    /// A dispatcher re-driving a crashed execution (`EXECUTION_RECOVERED`, INGRESS-05).
    Recover,
    /// The kernel's own timer wake (`TIMER_FIRED` from the TimerStore): a trusted path
    /// that skips the authenticator but not the gate (GAP-32).
    Timer,
}

/// Verifies who may resume (K12). `Ok(verdict)` is recorded as `APPROVAL_GRANTED`.
pub trait ResumeAuthenticator {
    /// Verifies the exact request the caller signed.
    fn verify(&self, execution_id: &str, request: &ResumeRequest) -> Result<Value, String>;
}

/// Decides whether this caller may act on this execution (INGRESS-38).
pub trait ExecutionAuthorizer {
    /// `Err(reason)` refuses the resume.
    fn authorize(&self, execution_id: &str, request: &ResumeRequest) -> Result<(), String>;
}

/// What the flow (for `resumeAs`: the TARGET flow) declares, and what is wired.
#[derive(Clone, Copy, Default)]
pub struct GateConfig<'a> {
    /// `resumeSchemas`: gate → schema (ADR 0077). Absent map or entry: no shape check.
    pub resume_schemas: Option<&'a BTreeMap<String, Value>>,
    /// The ResumeAuthenticator, when wired.
    pub authenticator: Option<&'a dyn ResumeAuthenticator>,
    /// The execution authorizer, when wired.
    pub authorizer: Option<&'a dyn ExecutionAuthorizer>,
}

/// One event the runtime must append (it assigns id, sequence and timestamp).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// Event type.
    pub event_type: String,
    /// Payload.
    pub payload: Value,
    /// Metadata (`kernel: true` on kernel facts).
    pub metadata: Option<Map<String, Value>>,
}

impl NewEvent {
    fn plain(event_type: &str, payload: Value) -> NewEvent {
        NewEvent {
            event_type: event_type.into(),
            payload,
            metadata: None,
        }
    }
    fn kernel(event_type: &str, payload: Value) -> NewEvent {
        let mut m = Map::new();
        m.insert("kernel".into(), Value::Bool(true));
        NewEvent {
            event_type: event_type.into(),
            payload,
            metadata: Some(m),
        }
    }
}

/// Why `ResumeRefusedError` refused. Reasons beyond the spec's three are this kernel's
/// choice (GAP-36) and are named as such in the docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalReason {
    /// The execution is not parked (INGRESS-13).
    NotSuspended,
    /// A null answer while `_failedWhileParked` is set (INGRESS-14).
    NullAnswerAfterParkedFailure,
    /// Legacy answers cannot be attributed (INGRESS-36).
    AmbiguousLegacyAnswers,
    /// The event type is a kernel kind (INGRESS-02).
    KernelEventType,
    /// The event type is not the recorded gate (INGRESS-03).
    GateMismatch,
    /// `TIMER_FIRED` at an untimed park (INGRESS-04).
    NotTimed,
    /// `EXECUTION_RECOVERED` on a parked or terminal execution (INGRESS-05).
    NotRecoverable,
    /// The execution authorizer denied the caller (INGRESS-38).
    Unauthorized,
    /// The request carries a kernel-only metadata key (INGRESS-39).
    KernelMetadata,
}

impl RefusalReason {
    /// The stable kebab-case name used in errors, vectors and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalReason::NotSuspended => "not-suspended",
            RefusalReason::NullAnswerAfterParkedFailure => "null-answer-after-parked-failure",
            RefusalReason::AmbiguousLegacyAnswers => "ambiguous-legacy-answers",
            RefusalReason::KernelEventType => "kernel-event-type",
            RefusalReason::GateMismatch => "gate-mismatch",
            RefusalReason::NotTimed => "not-timed",
            RefusalReason::NotRecoverable => "not-recoverable",
            RefusalReason::Unauthorized => "unauthorized",
            RefusalReason::KernelMetadata => "kernel-metadata",
        }
    }
}

/// A refused resume. Nothing was appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IngressError {
    /// `ResumeRefusedError` with its reason.
    ResumeRefused {
        /// The reason.
        reason: RefusalReason,
        /// A human-readable explanation.
        message: String,
    },
    /// `ResumePayloadValidationError`: a failed `resumeSchemas` parse, or a resume at an
    /// in-doubt park that is not a verdict for the parked step and attempt.
    PayloadValidation {
        /// What failed.
        message: String,
    },
    /// The ResumeAuthenticator rejected the request.
    Unauthenticated {
        /// The authenticator's reason.
        message: String,
    },
}

impl IngressError {
    /// The error's name: `ResumeRefusedError`, `ResumePayloadValidationError` or
    /// `ResumeUnauthenticatedError`.
    pub fn name(&self) -> &'static str {
        match self {
            IngressError::ResumeRefused { .. } => "ResumeRefusedError",
            IngressError::PayloadValidation { .. } => "ResumePayloadValidationError",
            IngressError::Unauthenticated { .. } => "ResumeUnauthenticatedError",
        }
    }

    /// The refusal reason, for `ResumeRefusedError`.
    pub fn reason(&self) -> Option<RefusalReason> {
        match self {
            IngressError::ResumeRefused { reason, .. } => Some(*reason),
            _ => None,
        }
    }

    fn refused(reason: RefusalReason, message: impl Into<String>) -> IngressError {
        IngressError::ResumeRefused {
            reason,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for IngressError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IngressError::ResumeRefused { reason, message } => {
                write!(f, "ResumeRefusedError ({}): {message}", reason.as_str())
            }
            IngressError::PayloadValidation { message } => {
                write!(f, "ResumePayloadValidationError: {message}")
            }
            IngressError::Unauthenticated { message } => {
                write!(f, "ResumeUnauthenticatedError: {message}")
            }
        }
    }
}

impl std::error::Error for IngressError {}

/// The verdict decision id for an in-doubt step attempt (GAP-10).
pub fn verdict_decision_id(step_id: &str, attempt: u64) -> String {
    format!("{RESERVED_DECISION_PREFIX}verdict:{step_id}#{attempt}")
}

/// The override decision id for discarded legacy answers (GAP-10).
pub fn discard_decision_id(step_id: &str) -> String {
    format!("{RESERVED_DECISION_PREFIX}discard:{step_id}")
}

/// Admits or refuses a resume. See the module docs for the order of checks.
pub fn admit(
    execution_id: &str,
    state: &ExecutionState,
    log: &[EventEnvelope],
    path: ResumePath,
    request: &ResumeRequest,
    gate: &GateConfig<'_>,
) -> Result<Vec<NewEvent>, IngressError> {
    let override_request = request
        .metadata
        .as_ref()
        .and_then(|m| m.get(DISCARD_LEGACY_ANSWERS_KEY))
        .is_some();

    // Trusted kernel paths: no authenticator, but still the gate (GAP-32).
    match path {
        ResumePath::Recover => return recover(state, request, override_request),
        ResumePath::Timer => {
            if override_request {
                return Err(IngressError::refused(
                    RefusalReason::KernelMetadata,
                    "discardLegacyAnswers is never accepted on TIMER_FIRED (INGRESS-37)",
                ));
            }
            return timer_wake(state);
        }
        ResumePath::Resume | ResumePath::ResumeAs => {}
    }

    // 1. Identity, then authorization.
    let approval = match gate.authenticator {
        Some(auth) => Some(
            auth.verify(execution_id, request)
                .map_err(|message| IngressError::Unauthenticated { message })?,
        ),
        None => None,
    };
    if let Some(authz) = gate.authorizer {
        authz.authorize(execution_id, request).map_err(|why| {
            IngressError::refused(
                RefusalReason::Unauthorized,
                format!("not authorized to resume this execution: {why}"),
            )
        })?;
    }

    // 2. The gate: namespace and forged metadata first.
    if request.event_type == "EXECUTION_RECOVERED" {
        // GAP-08: the one non-gate resume has its own path, checked before the namespace rule.
        return recover(state, request, override_request);
    }
    if let Some(key) = request
        .metadata
        .as_ref()
        .and_then(|m| KERNEL_METADATA_KEYS.iter().find(|k| m.contains_key(**k)))
    {
        return Err(IngressError::refused(
            RefusalReason::KernelMetadata,
            format!("metadata key `{key}` is written only by the kernel (INGRESS-39)"),
        ));
    }
    let is_timer = request.event_type == "TIMER_FIRED";
    if is_known_event_type(&request.event_type) && !is_timer {
        return Err(IngressError::refused(
            RefusalReason::KernelEventType,
            format!(
                "`{}` is a kernel event type and cannot be delivered as a resume (INGRESS-02)",
                request.event_type
            ),
        ));
    }

    let mut events = Vec::new();
    if let Some(verdict) = approval {
        events.push(NewEvent::kernel(
            "APPROVAL_GRANTED",
            json!({"eventType": request.event_type, "verdict": verdict}),
        ));
    }

    if path == ResumePath::ResumeAs && state.status != Status::Suspended {
        // INGRESS-17: nothing is parked; only the namespace rule applied.
        if override_request {
            return Err(IngressError::refused(
                RefusalReason::KernelMetadata,
                "discardLegacyAnswers only applies at a parked gate",
            ));
        }
        if state.status.is_terminal() {
            // INGRESS-07: a terminal execution is re-opened by a status-only null resume.
            events.push(NewEvent::plain("EXECUTION_RESUMED", Value::Null));
        }
        // A crashed (running/pending) execution is re-driven: no EXECUTION_RESUMED (INGRESS-06).
        return Ok(events);
    }

    if state.status != Status::Suspended {
        return Err(IngressError::refused(
            RefusalReason::NotSuspended,
            format!(
                "the execution is {}, not parked; retry once it parks (INGRESS-13)",
                state.status.as_str()
            ),
        ));
    }
    let park = state.suspended_on().cloned().unwrap_or_default();
    let parked_on = park.get("on").and_then(Value::as_str).unwrap_or("");

    if parked_on == INDOUBT_GATE {
        return admit_verdict(state, request, &park, events);
    }

    let timed = park.get("wakeAt").is_some_and(|w| w.is_i64() || w.is_u64());
    if is_timer {
        if !timed {
            return Err(IngressError::refused(
                RefusalReason::NotTimed,
                "TIMER_FIRED can only wake a timed park (one with a recorded wakeAt) (INGRESS-04)",
            ));
        }
    } else if request.event_type != parked_on {
        return Err(IngressError::refused(
            RefusalReason::GateMismatch,
            format!(
                "the execution is parked on `{parked_on}`, not `{}` (INGRESS-03)",
                request.event_type
            ),
        ));
    }

    if request.payload.is_null() && !is_timer && state.failed_while_parked() {
        return Err(IngressError::refused(
            RefusalReason::NullAnswerAfterParkedFailure,
            "a step failed while the execution was parked; a null answer would be status-only, so send a real answer (INGRESS-14)",
        ));
    }

    let override_event = check_legacy_answers(state, log, request, gate)?;

    // 3. Shape.
    let answer = if is_timer {
        // GAP-25: the wake's passthrough comes from the log, never from the caller or a clock.
        json!({"firedAt": park.get("wakeAt").cloned().unwrap_or(Value::Null)})
    } else {
        match gate.resume_schemas.and_then(|m| m.get(&request.event_type)) {
            Some(schema) => schema::parse_value(schema, &request.payload).map_err(|e| {
                IngressError::PayloadValidation {
                    message: format!(
                        "resumeSchemas[`{}`] refused the payload {e} (INGRESS-22)",
                        request.event_type
                    ),
                }
            })?,
            None => request.payload.clone(),
        }
    };

    let mut caller = NewEvent::plain(&request.event_type, answer.clone());
    caller.metadata = request.metadata.clone();
    if is_timer {
        caller = NewEvent::kernel("TIMER_FIRED", answer.clone());
    }
    events.push(caller);
    if let Some(e) = override_event {
        events.push(e);
    }
    events.push(NewEvent::plain("EXECUTION_RESUMED", answer));
    Ok(events)
}

fn recover(
    state: &ExecutionState,
    _request: &ResumeRequest,
    override_request: bool,
) -> Result<Vec<NewEvent>, IngressError> {
    if override_request {
        return Err(IngressError::refused(
            RefusalReason::KernelMetadata,
            "discardLegacyAnswers is never accepted on EXECUTION_RECOVERED (INGRESS-37)",
        ));
    }
    match state.status {
        // INGRESS-05/06: re-drive; nothing is recorded.
        Status::Running | Status::Pending => Ok(Vec::new()),
        other => Err(IngressError::refused(
            RefusalReason::NotRecoverable,
            format!("EXECUTION_RECOVERED re-drives a crashed (running or pending) execution; this one is {} (INGRESS-05)", other.as_str()),
        )),
    }
}

fn timer_wake(state: &ExecutionState) -> Result<Vec<NewEvent>, IngressError> {
    if state.status != Status::Suspended {
        return Err(IngressError::refused(
            RefusalReason::NotSuspended,
            "the timer's execution is no longer parked",
        ));
    }
    let park = state.suspended_on().cloned().unwrap_or_default();
    if park.get("on").and_then(Value::as_str) == Some(INDOUBT_GATE) {
        return Err(IngressError::PayloadValidation {
            message: "an in-doubt park only accepts a verdict for its step (INGRESS-10)".into(),
        });
    }
    let Some(wake_at) = park
        .get("wakeAt")
        .filter(|w| w.is_i64() || w.is_u64())
        .cloned()
    else {
        return Err(IngressError::refused(
            RefusalReason::NotTimed,
            "the park has no recorded wakeAt (INGRESS-04)",
        ));
    };
    let answer = json!({"firedAt": wake_at});
    Ok(vec![
        NewEvent::kernel("TIMER_FIRED", answer.clone()),
        NewEvent::plain("EXECUTION_RESUMED", answer),
    ])
}

/// An in-doubt park accepts only a verdict for the parked step and attempt
/// (INGRESS-10): `{ "verdict": { "stepId", "attempt", "outcome": "completed" | "failed" |
/// "retry", "output"?, "error"? } }` delivered on the in-doubt gate.
fn admit_verdict(
    _state: &ExecutionState,
    request: &ResumeRequest,
    park: &Map<String, Value>,
    mut events: Vec<NewEvent>,
) -> Result<Vec<NewEvent>, IngressError> {
    let condition = park.get("condition").and_then(Value::as_object);
    let step = condition
        .and_then(|c| c.get("stepId"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let attempt = condition
        .and_then(|c| c.get("attempt"))
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let refuse = |why: String| {
        Err(IngressError::PayloadValidation { message: format!("{why}; the execution is parked in doubt on step `{step}` attempt {attempt} and only accepts its verdict (INGRESS-10)") })
    };
    if request.event_type != INDOUBT_GATE {
        return refuse(format!("`{}` is not a verdict", request.event_type));
    }
    let Some(verdict) = request.payload.get("verdict").and_then(Value::as_object) else {
        return refuse("the payload has no `verdict` object".into());
    };
    if verdict.get("stepId").and_then(Value::as_str) != Some(step)
        || verdict.get("attempt").and_then(Value::as_u64) != Some(attempt)
    {
        return refuse(format!(
            "the verdict names step {:?} attempt {:?}",
            verdict.get("stepId"),
            verdict.get("attempt")
        ));
    }
    let outcome = verdict.get("outcome").and_then(Value::as_str);
    if !matches!(outcome, Some("completed" | "failed" | "retry")) {
        return refuse("`outcome` must be completed, failed or retry".into());
    }
    events.push(NewEvent::plain(INDOUBT_GATE, request.payload.clone()));
    events.push(NewEvent::kernel(
        "DECISION_RECORDED",
        json!({"id": verdict_decision_id(step, attempt), "choice": Value::Object(verdict.clone())}),
    ));
    events.push(NewEvent::plain("EXECUTION_RESUMED", Value::Null));
    Ok(events)
}

/// Counts `_resumePayloads` entries that answered no suspend point (pushed while the
/// execution was not parked at an ordinary gate). Such an entry would be served to the
/// next gate positionally (REPLAY-07), so an open park after one cannot be attributed.
pub fn orphan_answers(log: &[EventEnvelope]) -> usize {
    legacy_answer_warnings(log).len()
}

/// INGRESS-36/37: a legacy (pre-0104) log with answers that answered no gate makes the
/// open park's answer unattributable. Refused unless the operator's request carries
/// `discardLegacyAnswers { stepId, count }` matching the orphan count AND the
/// authenticator verified it; then the override is recorded as a kernel decision.
fn check_legacy_answers(
    state: &ExecutionState,
    log: &[EventEnvelope],
    request: &ResumeRequest,
    gate: &GateConfig<'_>,
) -> Result<Option<NewEvent>, IngressError> {
    let orphans = orphan_answers(log);
    let discard = request
        .metadata
        .as_ref()
        .and_then(|m| m.get(DISCARD_LEGACY_ANSWERS_KEY));
    if orphans == 0 {
        return match discard {
            None => Ok(None),
            Some(_) => Err(IngressError::refused(
                RefusalReason::KernelMetadata,
                "discardLegacyAnswers given, but no legacy answer is ambiguous",
            )),
        };
    }
    let ambiguous = || {
        IngressError::refused(
            RefusalReason::AmbiguousLegacyAnswers,
            format!("{orphans} recorded answer(s) answered no gate, so this park's answer cannot be attributed; an operator resume with discardLegacyAnswers {{stepId, count: {orphans}}}, verified by the ResumeAuthenticator, resolves it (INGRESS-36)"),
        )
    };
    let Some(discard) = discard else {
        return Err(ambiguous());
    };
    if gate.authenticator.is_none() {
        return Err(ambiguous());
    }
    let step_id = discard.get("stepId").and_then(Value::as_str);
    let count = discard.get("count").and_then(Value::as_u64);
    let parked_step = state
        .suspended_on()
        .and_then(|p| p.get("condition"))
        .and_then(|c| c.get("stepId"))
        .and_then(Value::as_str);
    match (step_id, count) {
        (Some(s), Some(c)) if c as usize == orphans && parked_step.is_none_or(|p| p == s) => {
            Ok(Some(NewEvent::kernel(
                "DECISION_RECORDED",
                json!({"id": discard_decision_id(s), "choice": {"stepId": s, "count": c}}),
            )))
        }
        _ => Err(ambiguous()),
    }
}

/// Whether a decision id is reserved for the kernel (INGRESS-33).
pub fn is_reserved_decision_id(id: &str) -> bool {
    id.starts_with(RESERVED_DECISION_PREFIX)
}

/// The reserved variable the gate consults for parked failures (re-exported for docs).
pub const FAILED_WHILE_PARKED: &str = keys::FAILED_WHILE_PARKED;

/// A warning about a legacy answer that answered no suspend point (INGRESS-12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyAnswerWarning {
    /// Index in the log of the `EXECUTION_RESUMED` that recorded the entry.
    pub event_index: usize,
    /// Its position in `_resumePayloads`.
    pub entry: usize,
    /// Whether a later suspend point already consumed it positionally (REPLAY-07).
    pub spent: bool,
}

/// Lists every `_resumePayloads` entry of a (legacy) log that answered no suspend
/// point, and whether it is already spent: entry i is spent once the log records more
/// than i ordinary-gate parks, because `ctx.suspend` serves entries by position.
pub fn legacy_answer_warnings(log: &[EventEnvelope]) -> Vec<LegacyAnswerWarning> {
    let mut state = ExecutionState::new();
    let mut out = Vec::new();
    for (i, e) in log.iter().enumerate() {
        let before = state.resume_payloads().len();
        // A non-null answer while `_failedWhileParked` is set still answers the gate
        // (INGRESS-14); only an in-doubt park or an unparked execution has no gate.
        let parked_at_gate =
            state.status == Status::Suspended && state.parked_gate() != Some(INDOUBT_GATE);
        state = crate::fold::fold_owned(state, [e.clone()]);
        if e.event_type == "EXECUTION_RESUMED"
            && state.resume_payloads().len() > before
            && !parked_at_gate
        {
            out.push(LegacyAnswerWarning {
                event_index: i,
                entry: before,
                spent: false,
            });
        }
    }
    let parks = log
        .iter()
        .filter(|e| {
            e.event_type == "EXECUTION_SUSPENDED"
                && e.payload
                    .get("on")
                    .and_then(Value::as_str)
                    .is_some_and(|g| g != INDOUBT_GATE)
        })
        .count();
    for w in &mut out {
        w.spent = w.entry < parks;
    }
    out
}

/// Kinds the park fence ignores (FOLD-46, GAP-20): appending them after a park does not
/// count as a change to the parked execution.
pub const PARK_FENCE_IGNORABLE: [&str; 2] = ["INBOX_QUARANTINED", "INBOX_RELEASED"];

/// Whether the events appended since a park leave the park fence where it was: true
/// iff every one of them is an ignorable quarantine fact. A runtime that observed the
/// store's anchor at park time re-observes it and uses `appendIfUnchanged` when this
/// holds; otherwise the execution changed under it.
pub fn park_fence_holds(appended_since_park: &[EventEnvelope]) -> bool {
    appended_since_park
        .iter()
        .all(|e| PARK_FENCE_IGNORABLE.contains(&e.event_type.as_str()))
}
