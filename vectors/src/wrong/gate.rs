//! Ingress, emit-validation and runtime bugs, emulated on the reference's answer: the
//! buggy kernel answers what the reference answers, except where its one wrong line
//! changes the outcome (a refusal it lets through, a reason it names wrongly, an event
//! it records in another order or shape).

use super::canonical::{emit_digest, flow_hash};
use super::Bug;
use crate::format::{EmitInput, IngressInput};
use serde_json::{json, Map, Value};

/// Whether `bug` lives in the ingress gate.
pub fn is_ingress_bug(bug: Bug) -> bool {
    matches!(
        bug,
        Bug::RefusedResumeAppends
            | Bug::GateMismatchWrongReason
            | Bug::TimerAtUntimedGate
            | Bug::RecoverWhileParked
            | Bug::GateBeforeIdentity
            | Bug::RawPayloadRecorded
            | Bug::ApprovalNotRecorded
            | Bug::NullAfterParkedFailureAccepted
            | Bug::IndoubtRefusedAsGateMismatch
            | Bug::ResumeKernelMetadataAccepted
            | Bug::AuthorizerIgnored
            | Bug::ResumeBeforeCallerEvent
    )
}

fn reason(answer: &Value) -> Option<&str> {
    answer.get("reason").and_then(Value::as_str)
}

fn refused(answer: &Value) -> bool {
    answer.get("outcome").and_then(Value::as_str) == Some("refused")
}

fn caller_event(input: &IngressInput) -> Value {
    let mut m = Map::new();
    m.insert("eventType".into(), json!(input.request.event_type));
    m.insert("payload".into(), input.request.payload.clone());
    if let Some(meta) = &input.request.metadata {
        m.insert("metadata".into(), Value::Object(meta.clone()));
    }
    Value::Object(m)
}

/// What a gate that lets the refused resume through appends: the caller's event and
/// the resume carrying its payload.
fn let_through(input: &IngressInput, resumed: Value) -> Value {
    json!({"outcome": "appended", "events": [
        caller_event(input),
        {"eventType": "EXECUTION_RESUMED", "payload": resumed},
    ]})
}

/// The ingress answer of a kernel with `bug`, given the input and a function that runs
/// the reference gate on a (possibly changed) input.
pub fn ingress(
    bug: Bug,
    input: &IngressInput,
    reference: &dyn Fn(&IngressInput) -> Value,
) -> Value {
    let answer = reference(input);
    match bug {
        Bug::RefusedResumeAppends if refused(&answer) => json!({
            "outcome": "appended",
            "events": [caller_event(input)],
        }),
        Bug::GateMismatchWrongReason if reason(&answer) == Some("gate-mismatch") => {
            let mut a = answer;
            a["reason"] = json!("not-suspended");
            a
        }
        Bug::TimerAtUntimedGate if reason(&answer) == Some("not-timed") => {
            let_through(input, json!({"firedAt": null}))
        }
        Bug::RecoverWhileParked if reason(&answer) == Some("not-recoverable") => {
            json!({"outcome": "appended", "events": []})
        }
        Bug::NullAfterParkedFailureAccepted
            if reason(&answer) == Some("null-answer-after-parked-failure") =>
        {
            let_through(input, Value::Null)
        }
        Bug::IndoubtRefusedAsGateMismatch
            if answer.get("error").and_then(Value::as_str)
                == Some("ResumePayloadValidationError")
                && parked_in_doubt(input) =>
        {
            json!({"outcome": "refused", "error": "ResumeRefusedError", "reason": "gate-mismatch"})
        }
        Bug::GateBeforeIdentity
            if answer.get("error").and_then(Value::as_str)
                == Some("ResumeUnauthenticatedError") =>
        {
            let mut without = input.clone();
            without.authenticator = None;
            let gate = reference(&without);
            if refused(&gate) {
                gate
            } else {
                answer
            }
        }
        Bug::AuthorizerIgnored if input.authorizer.is_some() => {
            let mut without = input.clone();
            without.authorizer = None;
            reference(&without)
        }
        Bug::ResumeKernelMetadataAccepted if reason(&answer) == Some("kernel-metadata") => {
            let mut stripped = input.clone();
            if let Some(m) = stripped.request.metadata.as_mut() {
                for k in ["kernel", "flowEmit", "forkChain", "forkedBy", "seal"] {
                    m.remove(k);
                }
            }
            let mut through = reference(&stripped);
            if let Some(Value::Array(events)) = through.get_mut("events") {
                for e in events.iter_mut() {
                    if e.get("eventType") == Some(&json!(input.request.event_type)) {
                        if let Some(meta) = &input.request.metadata {
                            e["metadata"] = Value::Object(meta.clone());
                        }
                    }
                }
            }
            through
        }
        Bug::RawPayloadRecorded if !refused(&answer) => {
            let mut a = answer;
            if let Some(Value::Array(events)) = a.get_mut("events") {
                for e in events.iter_mut() {
                    let ty = e.get("eventType").and_then(Value::as_str).unwrap_or("");
                    let answers = ty == input.request.event_type
                        || (ty == "EXECUTION_RESUMED" && !e["payload"].is_null());
                    if answers {
                        e["payload"] = input.request.payload.clone();
                    }
                }
            }
            a
        }
        Bug::ApprovalNotRecorded if !refused(&answer) => {
            let mut a = answer;
            if let Some(Value::Array(events)) = a.get_mut("events") {
                events.retain(|e| e.get("eventType") != Some(&json!("APPROVAL_GRANTED")));
            }
            a
        }
        Bug::ResumeBeforeCallerEvent if !refused(&answer) => {
            let mut a = answer;
            if let Some(Value::Array(events)) = a.get_mut("events") {
                let caller = events
                    .iter()
                    .position(|e| e.get("eventType") == Some(&json!(input.request.event_type)));
                let resumed = events
                    .iter()
                    .position(|e| e.get("eventType") == Some(&json!("EXECUTION_RESUMED")));
                if let (Some(c), Some(r)) = (caller, resumed) {
                    let e = events.remove(r);
                    events.insert(c, e);
                }
            }
            a
        }
        _ => answer,
    }
}

fn parked_in_doubt(input: &IngressInput) -> bool {
    input
        .log
        .iter()
        .rev()
        .find(|e| e.get("eventType") == Some(&json!("EXECUTION_SUSPENDED")))
        .and_then(|e| e.pointer("/payload/on"))
        == Some(&json!("__loom_indoubt__"))
}

/// Whether `bug` lives in userspace emit validation.
pub fn is_emit_bug(bug: Bug) -> bool {
    matches!(
        bug,
        Bug::EmitAllowsKernelTypes
            | Bug::MeteredNegativeZeroRefused
            | Bug::MeteredCeilingExclusive
            | Bug::QuotaReasonCountsChars
            | Bug::EffectDecisionNotNamespaced
            | Bug::ChoiceChangeAccepted
            | Bug::RelayForwardsKernelKinds
            | Bug::EmitFlowEmitMetadataAccepted
    )
}

const ALLOW_LISTED: [&str; 7] = [
    "RESOURCE_METERED",
    "QUOTA_EXCEEDED",
    "SAFETY_BLOCKED",
    "EGRESS_DENIED",
    "EFFECT_DENIED",
    "OUTCOME_RECORDED",
    "DECISION_RECORDED",
];

fn accepted(input: &EmitInput) -> Value {
    json!({"outcome": "accepted", "eventType": input.event_type, "payload": input.payload})
}

fn metered_numbers(payload: &Value) -> Vec<f64> {
    let mut out = Vec::new();
    if let Some(m) = payload.as_object() {
        for (k, v) in m {
            if k == "custom" {
                if let Some(c) = v.as_object() {
                    out.extend(c.values().filter_map(Value::as_f64));
                }
            } else if let Some(x) = v.as_f64() {
                out.push(x);
            }
        }
    }
    out
}

/// The emit-validation answer of a kernel with `bug`.
pub fn validate_emit(bug: Bug, input: &EmitInput, answer: Value) -> Value {
    let ty = input.event_type.as_str();
    let why = reason(&answer).map(str::to_owned);
    match bug {
        Bug::EmitAllowsKernelTypes if why.as_deref() == Some("kernel-event-type") => {
            accepted(input)
        }
        Bug::MeteredNegativeZeroRefused
            if !refused(&answer)
                && ty == "RESOURCE_METERED"
                && metered_numbers(&input.payload)
                    .iter()
                    .any(|x| *x == 0.0 && x.is_sign_negative()) =>
        {
            json!({"outcome": "refused", "error": "EmitRefusedError", "reason": "invalid-payload"})
        }
        Bug::MeteredCeilingExclusive
            if !refused(&answer)
                && ty == "RESOURCE_METERED"
                && metered_numbers(&input.payload)
                    .iter()
                    .any(|x| *x >= loom_kernel::limits::RESOURCE_METERED_VALUE_MAX) =>
        {
            json!({"outcome": "refused", "error": "EmitRefusedError", "reason": "invalid-payload"})
        }
        Bug::QuotaReasonCountsChars if refused(&answer) && ty == "QUOTA_EXCEEDED" => {
            let fits = input
                .payload
                .get("reason")
                .and_then(Value::as_str)
                .is_some_and(|r| {
                    r.chars().count() <= loom_kernel::limits::QUOTA_REASON_UTF16_UNITS_MAX
                });
            if fits && why.as_deref() == Some("invalid-payload") {
                accepted(input)
            } else {
                answer
            }
        }
        Bug::EffectDecisionNotNamespaced
            if !refused(&answer) && ty == "DECISION_RECORDED" && input.source.kind == "effect" =>
        {
            let mut a = answer;
            if let Some(id) = input.payload.get("id") {
                a["payload"]["id"] = id.clone();
            }
            a
        }
        Bug::ChoiceChangeAccepted if why.as_deref() == Some("choice-change") => accepted(input),
        Bug::RelayForwardsKernelKinds
            if input.source.kind == "relay"
                && why.as_deref() == Some("kernel-event-type")
                && ALLOW_LISTED.contains(&ty) =>
        {
            accepted(input)
        }
        Bug::EmitFlowEmitMetadataAccepted
            if why.as_deref() == Some("kernel-metadata")
                && input.metadata.as_ref().is_some_and(|m| {
                    m.contains_key("flowEmit")
                        && !["kernel", "forkChain", "forkedBy", "seal"]
                            .iter()
                            .any(|k| m.contains_key(*k))
                }) =>
        {
            accepted(input)
        }
        _ => answer,
    }
}

/// Whether `bug` changes `runScenario` answers.
pub fn is_runtime_bug(bug: Bug) -> bool {
    matches!(bug, Bug::EmitsNeverStamped | Bug::FiredAtIsClock)
        || super::canonical::is_digest_bug(bug)
        || super::runtime::is_runtime_rewrite(bug)
}

/// The `runScenario` answer of a kernel with `bug`: the reference's, with the flow
/// hashes and emit stamps its digests would give, or its runtime line changed.
pub fn run_scenario(bug: Bug, input: &Value, mut answer: Value) -> Value {
    if super::runtime::is_runtime_rewrite(bug) {
        return super::runtime::run_scenario(bug, input, answer);
    }
    let flows: Vec<Value> = input
        .get("flows")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut logs: Vec<&mut Value> = Vec::new();
    let Value::Object(a) = &mut answer else {
        return answer;
    };
    for (k, v) in a.iter_mut() {
        match k.as_str() {
            "log" => logs.push(v),
            "continued" => {
                if let Value::Object(m) = v {
                    logs.extend(m.values_mut());
                }
            }
            _ => {}
        }
    }
    let fires = fire_clocks(input, a_outcomes(input, &flows));
    for log in logs {
        let Value::Array(events) = log else { continue };
        let mut timer = 0usize;
        let mut pending_fire: Option<i64> = None;
        for e in events.iter_mut() {
            let ty = e
                .get("eventType")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            match bug {
                Bug::EmitsNeverStamped => {
                    if let Some(Value::Object(m)) = e.get_mut("metadata") {
                        m.remove("flowEmit");
                        if m.is_empty() {
                            if let Value::Object(e) = e {
                                e.remove("metadata");
                            }
                        }
                    }
                }
                Bug::FiredAtIsClock => {
                    if ty == "TIMER_FIRED" {
                        pending_fire = fires.get(timer).copied();
                        timer += 1;
                    }
                    if matches!(ty.as_str(), "TIMER_FIRED" | "EXECUTION_RESUMED") {
                        if let (Some(now), Some(Value::Object(p))) =
                            (pending_fire, e.get_mut("payload"))
                        {
                            if p.contains_key("firedAt") {
                                p.insert("firedAt".into(), json!(now));
                            }
                        }
                        if ty == "EXECUTION_RESUMED" {
                            pending_fire = None;
                        }
                    }
                }
                _ => rewrite_digests(bug, &flows, e),
            }
        }
    }
    answer
}

/// The driver steps' clock at each timer a `fireTimers` step woke, in order.
fn fire_clocks(input: &Value, woke: Vec<usize>) -> Vec<i64> {
    let mut now = crate::scrub::SCENARIO_CLOCK_START_MS;
    let mut out = Vec::new();
    let mut fire_index = 0;
    for step in input
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match step.get("op").and_then(Value::as_str) {
            Some("advance") => now += step.get("ms").and_then(Value::as_i64).unwrap_or(0),
            Some("fireTimers") => {
                let n = woke.get(fire_index).copied().unwrap_or(0);
                out.extend(std::iter::repeat_n(now, n));
                fire_index += 1;
            }
            _ => {}
        }
    }
    out
}

/// How many timers each `fireTimers` step woke, from the reference's outcomes (the
/// reference and the buggy kernel wake the same timers; only `firedAt` differs).
fn a_outcomes(input: &Value, _flows: &[Value]) -> Vec<usize> {
    // The outcomes are not passed here; re-run the scenario to count (cheap: the
    // reference runtime in memory).
    let Ok(parsed) = crate::format::decode::<crate::format::RuntimeInput>(input, "params", "")
    else {
        return Vec::new();
    };
    let Ok(answer) = crate::scrub::run_scenario(&parsed) else {
        return Vec::new();
    };
    let steps = input
        .get("steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let outcomes = answer
        .get("outcomes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    steps
        .iter()
        .zip(outcomes.iter())
        .filter(|(s, _)| s.get("op").and_then(Value::as_str) == Some("fireTimers"))
        .map(|(_, o)| o.as_array().map_or(0, Vec::len))
        .collect()
}

/// Recomputes a start's flow hash and an emit's stamp with the buggy digests.
fn rewrite_digests(bug: Bug, flows: &[Value], e: &mut Value) {
    let ty = e
        .get("eventType")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if ty == "EXECUTION_STARTED" {
        let flow_id = e
            .pointer("/payload/flowId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let recorded = e
            .pointer("/payload/flowHash")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let (Some(id), Some(recorded)) = (flow_id, recorded) {
            if let Some(mut flow) = flows
                .iter()
                .find(|f| f.get("flowId") == Some(&json!(id)))
                .cloned()
            {
                if let Some(o) = flow.as_object_mut() {
                    if o.get("resumeSchemas")
                        .and_then(Value::as_object)
                        .is_some_and(|m| m.is_empty())
                    {
                        o.remove("resumeSchemas");
                    }
                }
                let sha = recorded.starts_with("sha256:");
                e["payload"]["flowHash"] = json!(flow_hash(Some(bug), &flow, sha));
            }
        }
    }
    let stamp = e
        .pointer("/metadata/flowEmit")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(stamp) = stamp {
        let payload = e.get("payload").cloned().unwrap_or(Value::Null);
        let segment = (0..=crate::scrub::SCENARIO_STEPS_MAX as u64)
            .find(|s| loom_kernel::digest::emit_digest(*s, &ty, &payload) == stamp);
        if let Some(segment) = segment {
            let (_, d) = emit_digest(Some(bug), segment, &ty, &payload);
            e["metadata"]["flowEmit"] = json!(d);
        }
    }
}
