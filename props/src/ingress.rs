//! The ingress property: hostile resumes against parked executions (INGRESS-02..39,
//! GAP-09) and hostile userspace emits (INGRESS-27..33, INGRESS-39).

use crate::fold::show_log;
use crate::kernel::{KernelUnderTest, Reference};
use crate::limits::INGRESS_LOG_EVENTS_MAX;
use crate::log::{suspend_payload, EventSpec, Grammar, LogSpec, STEP_IDS};
use crate::violation::{check_eq, PropertyViolation};
use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use loom_kernel::fold::{
    is_known_event_type, known_event_types, ExecutionState, Status, INDOUBT_GATE,
};
use loom_kernel::ingress::{
    discard_decision_id, orphan_answers, validate_user_emit, verdict_decision_id, EmitRefusal,
    EmitSource, ExecutionAuthorizer, GateConfig, NewEvent, ResumeAuthenticator, ResumePath,
    ResumeRequest, DISCARD_LEGACY_ANSWERS_KEY, KERNEL_METADATA_KEYS, USERSPACE_KERNEL_ALLOW_LIST,
};
use loom_kernel::{canonical_string, EventEnvelope};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Which authenticator is wired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
pub enum Auth {
    /// None.
    None,
    /// Accepts everything with a fixed verdict.
    Accept,
    /// Rejects everything.
    Reject,
}

/// A userspace emit attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct EmitAttempt {
    /// Which path emits.
    pub source: EmitSource,
    /// The event type.
    pub event_type: String,
    /// The payload.
    pub payload: Value,
    /// Metadata (sometimes forged).
    pub metadata: Option<Map<String, Value>>,
}

/// A parked (or not) execution, a hostile resume, the wiring, and a hostile emit.
#[derive(Debug, Clone, PartialEq)]
pub struct IngressInput {
    /// The execution's log.
    pub log: LogSpec,
    /// The entry point.
    pub path: ResumePath,
    /// The request.
    pub request: ResumeRequest,
    /// The authenticator.
    pub auth: Auth,
    /// Whether an authorizer that denies is wired.
    pub deny: bool,
    /// Whether the flow declares a `resumeSchemas` entry for the parked gate.
    pub schema: bool,
    /// A userspace emit to validate against the same state.
    pub emit: EmitAttempt,
}

/// The schema the flow declares for its gates when `schema` is set.
pub fn gate_schema() -> Value {
    json!({"type": "object", "properties": {"ok": {"type": "boolean", "default": true}}, "additionalProperties": false})
}

fn meta_of(pairs: &[(&str, Value)]) -> Option<Map<String, Value>> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}

impl<'a> Arbitrary<'a> for IngressInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let mut log = LogSpec::generate(u, Grammar::FULL, INGRESS_LOG_EVENTS_MAX)?;
        // Mostly end parked, sometimes with a sibling failure after the park (FOLD-10).
        if u.ratio(3u8, 4u8)? {
            let p = suspend_payload(u)?;
            log.events.push(EventSpec::new("EXECUTION_SUSPENDED", p));
            if u.ratio(1u8, 4u8)? {
                log.events.push(EventSpec::new(
                    "STEP_FAILED",
                    json!({"stepId": *u.choose(&STEP_IDS)?, "error": "late"}),
                ));
            }
        }
        let state = loom_kernel::fold(&log.envelopes());
        let park = state.suspended_on().cloned().unwrap_or_default();
        let gate = park
            .get("on")
            .and_then(Value::as_str)
            .unwrap_or("approve")
            .to_owned();
        let cond = park.get("condition").cloned().unwrap_or(Value::Null);

        let path = *u.choose(&[
            ResumePath::Resume,
            ResumePath::Resume,
            ResumePath::Resume,
            ResumePath::ResumeAs,
            ResumePath::Recover,
            ResumePath::Timer,
        ])?;
        let event_type = match u.choose_index(7)? {
            0 | 1 => gate.clone(),
            2 => (*u.choose(&["approve", "review", "other"])?).to_owned(),
            3 => (*u.choose(known_event_types())?).to_owned(),
            4 => (*u.choose(&["TIMER_FIRED", "EXECUTION_RECOVERED", INDOUBT_GATE])?).to_owned(),
            5 => (*u.choose(&["STEP_COMPLETED", "EXECUTION_MIGRATED", "APPROVAL_GRANTED"])?)
                .to_owned(),
            _ => u.arbitrary::<String>()?,
        };
        let payload = match u.choose_index(6)? {
            0 => Value::Null,
            1 => crate::json::payload(u)?,
            2 => json!({"ok": false}),
            3 => json!({"ok": "not a boolean"}),
            _ => {
                let step = if u.ratio(3u8, 4u8)? {
                    cond.get("stepId").cloned().unwrap_or(json!("a"))
                } else {
                    json!(*u.choose(&STEP_IDS)?)
                };
                let attempt = if u.ratio(3u8, 4u8)? {
                    cond.get("attempt").cloned().unwrap_or(json!(1))
                } else {
                    json!(u.int_in_range(0u8..=3)?)
                };
                let outcome = *u.choose(&["completed", "failed", "retry", "maybe"])?;
                json!({"verdict": {"stepId": step, "attempt": attempt, "outcome": outcome}})
            }
        };
        let metadata = match u.choose_index(5)? {
            0 | 1 => None,
            2 => meta_of(&[(*u.choose(&KERNEL_METADATA_KEYS)?, json!(true))]),
            3 => {
                let count = if u.arbitrary()? {
                    orphan_answers(&log.envelopes()) as u64
                } else {
                    u.int_in_range(0u64..=3)?
                };
                let step = cond.get("stepId").cloned().unwrap_or(json!("a"));
                meta_of(&[(
                    DISCARD_LEGACY_ANSWERS_KEY,
                    json!({"stepId": step, "count": count}),
                )])
            }
            _ => meta_of(&[("trace", json!("t-1"))]),
        };
        let emit = EmitAttempt::arbitrary(u)?;
        Ok(IngressInput {
            log,
            path,
            request: ResumeRequest {
                event_type,
                payload,
                metadata,
            },
            auth: u.arbitrary()?,
            deny: u.ratio(1u8, 8u8)?,
            schema: u.ratio(1u8, 4u8)?,
            emit,
        })
    }
}

impl<'a> Arbitrary<'a> for EmitAttempt {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let source = match u.choose_index(3)? {
            0 => EmitSource::Flow,
            1 => EmitSource::Effect {
                step_id: (*u.choose(&STEP_IDS)?).to_owned(),
                attempt: u.int_in_range(1u64..=2)?,
            },
            _ => EmitSource::Relay,
        };
        let event_type = match u.choose_index(4)? {
            0 => "DECISION_RECORDED".to_owned(),
            1 => (*u.choose(known_event_types())?).to_owned(),
            2 => (*u.choose(&USERSPACE_KERNEL_ALLOW_LIST)?).to_owned(),
            _ => "app.progress".to_owned(),
        };
        let id = *u.choose(&[
            "d1",
            "__loom_verdict:a#1",
            "__loom_",
            "__LOOM_x",
            "effect:a#1:d",
        ])?;
        let payload = match u.choose_index(4)? {
            0 | 1 => json!({"id": id, "choice": crate::json::payload(u)?}),
            2 => json!({"tokens": u.int_in_range(-5i32..=50)?, "reason": "r"}),
            _ => crate::json::payload(u)?,
        };
        let metadata = if u.ratio(1u8, 4u8)? {
            meta_of(&[(*u.choose(&KERNEL_METADATA_KEYS)?, json!(true))])
        } else {
            None
        };
        Ok(EmitAttempt {
            source,
            event_type,
            payload,
            metadata,
        })
    }
}

struct FixedAuth(bool);

impl ResumeAuthenticator for FixedAuth {
    fn verify(&self, _: &str, _: &ResumeRequest) -> Result<Value, String> {
        if self.0 {
            Ok(json!({"by": "fuzz"}))
        } else {
            Err("rejected by the fuzz authenticator".into())
        }
    }
}

struct Deny;

impl ExecutionAuthorizer for Deny {
    fn authorize(&self, _: &str, _: &ResumeRequest) -> Result<(), String> {
        Err("denied".into())
    }
}

/// INGRESS-15 and the gate rules: a refused resume appends nothing and leaves the
/// fold unchanged; a resume the rules must refuse is refused; an accepted resume
/// appends exactly the documented events in the GAP-09 order (checked against an
/// independent model, never by calling `admit` again); and a userspace emit is
/// refused or rewritten as INGRESS-27/32/33/39 say.
pub fn ingress_refusal(input: &IngressInput) -> Result<(), PropertyViolation> {
    ingress_refusal_with(&Reference, input)
}

/// [`ingress_refusal`] against any kernel.
pub fn ingress_refusal_with(
    k: &dyn KernelUnderTest,
    input: &IngressInput,
) -> Result<(), PropertyViolation> {
    let log = input.log.envelopes();
    let state = k.fold_from(&ExecutionState::new(), &log);
    let before = state.canonical();
    let schemas: BTreeMap<String, Value> = if input.schema {
        let gate = state.parked_gate().unwrap_or("approve").to_owned();
        [(gate, gate_schema())].into_iter().collect()
    } else {
        BTreeMap::new()
    };
    let accept = FixedAuth(true);
    let reject = FixedAuth(false);
    let gate = GateConfig {
        resume_schemas: input.schema.then_some(&schemas),
        authenticator: match input.auth {
            Auth::None => None,
            Auth::Accept => Some(&accept),
            Auth::Reject => Some(&reject),
        },
        authorizer: if input.deny { Some(&Deny) } else { None },
    };
    let req = &input.request;
    let out = k.resume("exec-1", &state, &log, input.path, req, &gate);
    let ctx = || {
        format!(
            "{:?} {:?} payload {} meta {:?} auth {:?} deny {} schema {} at status {} park {}; log: {}",
            input.path,
            req.event_type,
            canonical_string(&req.payload),
            req.metadata,
            input.auth,
            input.deny,
            input.schema,
            state.status.as_str(),
            state.suspended_on().map_or("-".into(), |p| canonical_string(&Value::Object(p.clone()))),
            show_log(&log)
        )
    };
    // The log after the call, as the store would hold it.
    let mut after = log.clone();
    for (i, e) in out.appended.iter().enumerate() {
        after.push(crate::log::envelope(
            log.len() as u64 + i as u64,
            EventSpec {
                event_type: e.event_type.clone(),
                payload: e.payload.clone(),
                metadata: e.metadata.clone(),
            },
        ));
    }
    match &out.result {
        Err(err) => {
            if !out.appended.is_empty() {
                return Err(PropertyViolation::new(
                    "INGRESS-15",
                    Some(log.len()),
                    format!("refused ({err}) but appended events: {}", ctx()),
                    "0 events appended",
                    format!(
                        "{} events appended: {}",
                        out.appended.len(),
                        show_new(&out.appended)
                    ),
                ));
            }
            let refolded = k.fold_from(&ExecutionState::new(), &after).canonical();
            check_eq(
                "INGRESS-15",
                Some(log.len()),
                || format!("refusal changed the fold: {}", ctx()),
                &before,
                &refolded,
            )?;
        }
        Ok(()) => {
            if let Some(rule) = must_refuse(input, &state, &log, &schemas) {
                return Err(PropertyViolation::new(
                    rule,
                    Some(log.len()),
                    format!("accepted a resume the rules refuse: {}", ctx()),
                    "refused, nothing appended",
                    format!("accepted, appended {}", show_new(&out.appended)),
                ));
            }
            let expected = expected_events(input, &state, &schemas);
            check_eq(
                "GAP-09",
                Some(log.len()),
                || {
                    format!(
                        "accepted resume appended other events than documented: {}",
                        ctx()
                    )
                },
                &show_new(&expected),
                &show_new(&out.appended),
            )?;
        }
    }
    check_emit(&state, &input.emit)
}

/// The rule a resume breaks that every kernel must refuse, per an independent reading
/// of §5 (a subset of the gate: where the model is sure).
fn must_refuse(
    input: &IngressInput,
    state: &ExecutionState,
    log: &[EventEnvelope],
    schemas: &BTreeMap<String, Value>,
) -> Option<&'static str> {
    let req = &input.request;
    let ty = req.event_type.as_str();
    let forged = req
        .metadata
        .as_ref()
        .is_some_and(|m| KERNEL_METADATA_KEYS.iter().any(|k| m.contains_key(*k)));
    let parked_on = state.parked_gate();
    let suspended = state.status == Status::Suspended;
    match input.path {
        ResumePath::Recover => {
            return (!matches!(state.status, Status::Running | Status::Pending))
                .then_some("INGRESS-05")
        }
        ResumePath::Timer => {
            let timed = state
                .suspended_on()
                .and_then(|p| p.get("wakeAt"))
                .is_some_and(|w| w.is_i64() || w.is_u64());
            return (!suspended || !timed || parked_on == Some(INDOUBT_GATE))
                .then_some("INGRESS-04");
        }
        ResumePath::Resume | ResumePath::ResumeAs => {}
    }
    if input.auth == Auth::Reject {
        return Some("INGRESS-21");
    }
    if input.deny {
        return Some("INGRESS-38");
    }
    if ty == "EXECUTION_RECOVERED" {
        return (!matches!(state.status, Status::Running | Status::Pending))
            .then_some("INGRESS-05");
    }
    if forged {
        return Some("INGRESS-39");
    }
    if is_known_event_type(ty) && ty != "TIMER_FIRED" {
        return Some("INGRESS-02");
    }
    if input.path == ResumePath::ResumeAs && !suspended {
        return None;
    }
    if !suspended {
        return Some("INGRESS-13");
    }
    if parked_on == Some(INDOUBT_GATE) {
        let cond = state.suspended_on().and_then(|p| p.get("condition"));
        let step = cond
            .and_then(|c| c.get("stepId"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let attempt = cond
            .and_then(|c| c.get("attempt"))
            .and_then(Value::as_u64)
            .unwrap_or(1);
        let v = req.payload.get("verdict");
        let ok = ty == INDOUBT_GATE
            && v.and_then(|v| v.get("stepId")).and_then(Value::as_str) == Some(step)
            && v.and_then(|v| v.get("attempt")).and_then(Value::as_u64) == Some(attempt)
            && matches!(
                v.and_then(|v| v.get("outcome")).and_then(Value::as_str),
                Some("completed" | "failed" | "retry")
            );
        return (!ok).then_some("INGRESS-10");
    }
    if ty == "TIMER_FIRED" {
        let timed = state
            .suspended_on()
            .and_then(|p| p.get("wakeAt"))
            .is_some_and(|w| w.is_i64() || w.is_u64());
        if !timed {
            return Some("INGRESS-04");
        }
    } else if Some(ty) != parked_on {
        return Some("INGRESS-03");
    }
    if ty != "TIMER_FIRED" && req.payload.is_null() && state.failed_while_parked() {
        return Some("INGRESS-14");
    }
    let orphans = orphan_answers(log);
    let discard = req
        .metadata
        .as_ref()
        .and_then(|m| m.get(DISCARD_LEGACY_ANSWERS_KEY));
    if orphans > 0 && (discard.is_none() || input.auth != Auth::Accept) {
        return Some("INGRESS-36");
    }
    if ty != "TIMER_FIRED" {
        if let Some(schema) = schemas.get(ty) {
            if loom_kernel::schema::parse_value(schema, &req.payload).is_err() {
                return Some("INGRESS-22");
            }
        }
    }
    None
}

/// The events an admitted resume appends, in the GAP-09 order: `APPROVAL_GRANTED`
/// (authenticator wired), the caller's event (parsed payload), a kernel
/// `DECISION_RECORDED` (in-doubt verdict or legacy-answer override), then
/// `EXECUTION_RESUMED` with the gate's answer.
fn expected_events(
    input: &IngressInput,
    state: &ExecutionState,
    schemas: &BTreeMap<String, Value>,
) -> Vec<NewEvent> {
    let req = &input.request;
    let plain = |t: &str, p: Value| NewEvent {
        event_type: t.to_owned(),
        payload: p,
        metadata: None,
    };
    let kernel = |t: &str, p: Value| NewEvent {
        event_type: t.to_owned(),
        payload: p,
        metadata: meta_of(&[("kernel", json!(true))]),
    };
    let wake = state
        .suspended_on()
        .and_then(|p| p.get("wakeAt"))
        .cloned()
        .unwrap_or(Value::Null);
    let fired = json!({"firedAt": wake});
    match input.path {
        ResumePath::Recover => return Vec::new(),
        ResumePath::Timer => {
            return vec![
                kernel("TIMER_FIRED", fired.clone()),
                plain("EXECUTION_RESUMED", fired),
            ]
        }
        _ => {}
    }
    if req.event_type == "EXECUTION_RECOVERED" {
        return Vec::new();
    }
    let mut out = Vec::new();
    if input.auth == Auth::Accept {
        out.push(kernel(
            "APPROVAL_GRANTED",
            json!({"eventType": req.event_type, "verdict": {"by": "fuzz"}}),
        ));
    }
    if input.path == ResumePath::ResumeAs && state.status != Status::Suspended {
        if state.status.is_terminal() {
            out.push(plain("EXECUTION_RESUMED", Value::Null));
        }
        return out;
    }
    if state.parked_gate() == Some(INDOUBT_GATE) {
        let v = req.payload.get("verdict").cloned().unwrap_or(Value::Null);
        let step = v.get("stepId").and_then(Value::as_str).unwrap_or("");
        let attempt = v.get("attempt").and_then(Value::as_u64).unwrap_or(1);
        out.push(plain(INDOUBT_GATE, req.payload.clone()));
        out.push(kernel(
            "DECISION_RECORDED",
            json!({"id": verdict_decision_id(step, attempt), "choice": v}),
        ));
        out.push(plain("EXECUTION_RESUMED", Value::Null));
        return out;
    }
    let answer = if req.event_type == "TIMER_FIRED" {
        fired
    } else {
        match schemas.get(&req.event_type) {
            Some(s) => loom_kernel::schema::parse_value(s, &req.payload).unwrap_or(Value::Null),
            None => req.payload.clone(),
        }
    };
    if req.event_type == "TIMER_FIRED" {
        out.push(kernel("TIMER_FIRED", answer.clone()));
    } else {
        out.push(NewEvent {
            event_type: req.event_type.clone(),
            payload: answer.clone(),
            metadata: req.metadata.clone(),
        });
    }
    if let Some(d) = req
        .metadata
        .as_ref()
        .and_then(|m| m.get(DISCARD_LEGACY_ANSWERS_KEY))
    {
        let step = d.get("stepId").and_then(Value::as_str).unwrap_or("");
        out.push(kernel(
            "DECISION_RECORDED",
            json!({"id": discard_decision_id(step), "choice": {"stepId": step, "count": d.get("count").cloned().unwrap_or(Value::Null)}}),
        ));
    }
    out.push(plain("EXECUTION_RESUMED", answer));
    out
}

fn show_new(events: &[NewEvent]) -> String {
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

/// INGRESS-27/32/33/39 for one emit.
fn check_emit(state: &ExecutionState, e: &EmitAttempt) -> Result<(), PropertyViolation> {
    let got = validate_user_emit(
        state,
        &e.source,
        &e.event_type,
        e.payload.clone(),
        e.metadata.as_ref(),
    );
    let forged = e
        .metadata
        .as_ref()
        .is_some_and(|m| KERNEL_METADATA_KEYS.iter().any(|k| m.contains_key(*k)));
    let known = is_known_event_type(&e.event_type);
    let ctx = || {
        format!(
            "emit {:?} {} {} meta {:?}",
            e.source,
            e.event_type,
            canonical_string(&e.payload),
            e.metadata
        )
    };
    let must: Option<(&'static str, EmitRefusal)> = if forged {
        Some(("INGRESS-39", EmitRefusal::KernelMetadata))
    } else if known && e.source == EmitSource::Relay {
        Some(("INGRESS-32", EmitRefusal::KernelEventType))
    } else if known && !USERSPACE_KERNEL_ALLOW_LIST.contains(&e.event_type.as_str()) {
        Some(("INGRESS-27", EmitRefusal::KernelEventType))
    } else if e.event_type == "DECISION_RECORDED"
        && e.source == EmitSource::Flow
        && e.payload.get("choice").is_some()
        && e.payload
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.starts_with("__loom_"))
    {
        Some(("INGRESS-33", EmitRefusal::ReservedDecisionId))
    } else {
        None
    };
    match (&got, must) {
        (Ok(_), Some((rule, _))) => {
            return Err(PropertyViolation::new(
                rule,
                None,
                ctx(),
                "refused",
                format!("{got:?}"),
            ))
        }
        (Err(r), Some((rule, reason))) if r.reason != reason => {
            return Err(PropertyViolation::new(
                rule,
                None,
                ctx(),
                reason.as_str(),
                r.reason.as_str(),
            ))
        }
        _ => {}
    }
    if let Ok((ty, payload)) = &got {
        check_eq(
            "INGRESS-27",
            None,
            || format!("event type rewritten: {}", ctx()),
            &e.event_type,
            ty,
        )?;
        if ty == "DECISION_RECORDED" {
            let id = payload.get("id").and_then(Value::as_str).unwrap_or("");
            if id.starts_with("__loom_") {
                return Err(PropertyViolation::new(
                    "INGRESS-33",
                    None,
                    ctx(),
                    "no __loom_ id reaches the log",
                    id.to_owned(),
                ));
            }
            if let EmitSource::Effect { step_id, attempt } = &e.source {
                let orig = e.payload.get("id").and_then(Value::as_str).unwrap_or("");
                let want = format!("effect:{step_id}#{attempt}:{orig}");
                check_eq(
                    "INGRESS-30",
                    None,
                    || format!("effect decision namespace: {}", ctx()),
                    &want,
                    id,
                )?;
            }
        } else if !known {
            check_eq(
                "INGRESS-27",
                None,
                || format!("application emit changed: {}", ctx()),
                &canonical_string(&e.payload),
                &canonical_string(payload),
            )?;
        }
    }
    Ok(())
}
