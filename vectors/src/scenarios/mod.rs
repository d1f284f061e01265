//! Scenario definitions: the source of every vector. Each module lists scenarios as
//! Rust data (inputs only); the generator computes every expected value with the
//! reference kernel. Ids are stable: renaming one is a new vector.

pub mod digest;
pub mod edges;
pub mod emit;
pub mod fold;
pub mod ingress;
pub mod normalize;
pub mod runtime;
pub mod syscalls;
pub mod wire;

use crate::generate::Scenario;
use serde_json::{json, Map, Value};

/// Every scenario, in module order.
pub fn all() -> Vec<Scenario> {
    let mut out = Vec::new();
    out.extend(fold::scenarios());
    out.extend(normalize::scenarios());
    out.extend(digest::scenarios());
    out.extend(ingress::scenarios());
    out.extend(emit::scenarios());
    out.extend(runtime::scenarios());
    out.extend(edges::scenarios());
    out.extend(syscalls::scenarios());
    out.extend(wire::scenarios());
    out
}

/// An envelope under construction; [`log`] assigns id, sequence and timestamp.
#[derive(Debug, Clone, PartialEq)]
pub struct Ev {
    /// Event type.
    pub event_type: String,
    /// Payload.
    pub payload: Value,
    /// Metadata.
    pub metadata: Option<Map<String, Value>>,
}

/// An event of `event_type` with `payload`.
pub fn ev(event_type: &str, payload: Value) -> Ev {
    Ev {
        event_type: event_type.into(),
        payload,
        metadata: None,
    }
}

impl Ev {
    /// Adds one metadata key.
    pub fn meta(mut self, key: &str, value: Value) -> Ev {
        self.metadata
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }
    /// Marks the envelope kernel-stamped (`metadata.kernel: true`).
    pub fn kernel(self) -> Ev {
        self.meta("kernel", Value::Bool(true))
    }
    /// Stamps a flow emit digest (`metadata.flowEmit`).
    pub fn stamp(self, digest: &str) -> Ev {
        self.meta("flowEmit", Value::String(digest.into()))
    }
}

/// Envelopes as JSON: ids `e<i>`, sequences from 0, timestamps `1000 + 10 * i`,
/// workflow `flow`, execution `exec-1`.
pub fn log(events: Vec<Ev>) -> Vec<Value> {
    events
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let mut m = Map::new();
            m.insert("id".into(), json!(format!("e{i}")));
            m.insert("workflowId".into(), json!("flow"));
            m.insert("executionId".into(), json!("exec-1"));
            m.insert("eventType".into(), json!(e.event_type));
            m.insert("sequence".into(), json!(i));
            m.insert("timestamp".into(), json!(1000 + 10 * i as i64));
            m.insert("payload".into(), e.payload);
            if let Some(meta) = e.metadata {
                m.insert("metadata".into(), Value::Object(meta));
            }
            Value::Object(m)
        })
        .collect()
}

/// `EXECUTION_STARTED {input: {n: 1}}`.
pub fn started() -> Ev {
    ev("EXECUTION_STARTED", json!({"input": {"n": 1}}))
}
/// `STEP_STARTED` of step `id`.
pub fn step_started(id: &str) -> Ev {
    ev(
        "STEP_STARTED",
        json!({"stepId": id, "toolId": "tool", "input": {"x": id}}),
    )
}
/// `STEP_COMPLETED` of step `id`.
pub fn step_completed(id: &str, output: Value) -> Ev {
    ev("STEP_COMPLETED", json!({"stepId": id, "output": output}))
}
/// An untyped `STEP_FAILED` of step `id`.
pub fn step_failed(id: &str) -> Ev {
    ev("STEP_FAILED", json!({"stepId": id, "error": "boom"}))
}
/// A typed `STEP_FAILED` on `channel`.
pub fn step_failed_typed(id: &str, channel: &str, payload: Value) -> Ev {
    ev(
        "STEP_FAILED",
        json!({"stepId": id, "error": format!("TypedFailure({channel})"), "channel": channel, "payload": payload}),
    )
}
/// `EXECUTION_SUSPENDED {on: gate}`.
pub fn suspended(gate: &str) -> Ev {
    ev("EXECUTION_SUSPENDED", json!({ "on": gate }))
}
/// A timed park.
pub fn suspended_timed(gate: &str, wake_at: i64) -> Ev {
    ev(
        "EXECUTION_SUSPENDED",
        json!({"on": gate, "wakeAt": wake_at}),
    )
}
/// `EXECUTION_RESUMED` with `payload`.
pub fn resumed(payload: Value) -> Ev {
    ev("EXECUTION_RESUMED", payload)
}
/// `DECISION_RECORDED {id, choice}`.
pub fn decision(id: &str, choice: Value) -> Ev {
    ev("DECISION_RECORDED", json!({"id": id, "choice": choice}))
}

/// Lowercase, dash-separated form of an event type for ids.
pub fn slug(event_type: &str) -> String {
    event_type.to_ascii_lowercase().replace('_', "-")
}

/// A representative payload for every known kind (reference-defined shapes, DESIGN.md
/// §3 and docs/event-schema.md).
pub fn sample_payload(kind: &str) -> Value {
    match kind {
        "APPROVAL_GRANTED" => json!({"eventType": "APPROVE", "verdict": true}),
        "DECISION_RECORDED" => json!({"id": "d1", "choice": "a"}),
        "EFFECT_DENIED" => json!({"stepId": "s1", "reason": "policy"}),
        "EFFECT_INDOUBT" => json!({"stepId": "s1", "attempt": 1}),
        "EGRESS_DENIED" => json!({"host": "example.invalid"}),
        "EVENTS_REHOMED" => json!({"segment": 1, "from": "blank", "to": "exec-1"}),
        "EXECUTION_CANCELLED" => json!({}),
        "EXECUTION_COMPLETED" => json!({"output": {"ok": true}}),
        "EXECUTION_CONTINUED" => json!({"continuedTo": "exec-2"}),
        "EXECUTION_FAILED" => json!({"error": "boom"}),
        "EXECUTION_MIGRATED" => json!({"migratedInput": {"n": 2}}),
        "EXECUTION_RECOVERED" => json!({}),
        "EXECUTION_RESUMED" => json!({"answer": "yes"}),
        "EXECUTION_STARTED" => json!({"input": {"n": 9}}),
        "EXECUTION_SUSPENDED" => json!({"on": "LATER"}),
        "INBOX_QUARANTINED" => json!({"topic": "t", "messageId": "m1"}),
        "INBOX_RELEASED" => json!({"topic": "t", "operator": "ops", "deliver": true}),
        "MESSAGE_CONSUMED" => json!({"topic": "t", "messageId": "m1"}),
        "OUTCOME_RECORDED" => json!({"stepId": "s1", "outcome": "good"}),
        "PARALLEL_COMPLETED" => json!({"scopeId": "p1", "results": [1, 2]}),
        "QUOTA_EXCEEDED" => json!({"dimension": "tokens", "reason": "budget"}),
        "RESOURCE_METERED" => json!({"tokens": 5, "costUsd": 0.25}),
        "SAFETY_BLOCKED" => json!({"reason": "unsafe"}),
        "STEP_CANCELLED" => json!({"stepId": "s1"}),
        "STEP_COMPLETED" => json!({"stepId": "s1", "output": 42}),
        "STEP_FAILED" => json!({"stepId": "s1", "error": "boom"}),
        "STEP_RETRYING" => json!({"stepId": "s1", "attempt": 2}),
        "STEP_STARTED" => json!({"stepId": "s2", "toolId": "tool", "input": {"y": 1}}),
        "TIMER_FIRED" => json!({"firedAt": 5000}),
        _ => json!({"note": "application event"}),
    }
}

// ---- what an answer rests on, by rule ------------------------------------------------
//
// The scenario helpers of the ingress, emit, digest and runtime modules state their
// vectors' basis with these rules, each reasoned from the spec's text (decision 0008):
// the generator then checks every stated point against the modelled other readings
// (`crate::readings`), so a rule that states too much or too little fails the build.

use crate::generate::expected_for;

fn answer_of(s: &Scenario) -> Value {
    expected_for(s).map(|(v, _)| v).unwrap_or(Value::Null)
}

fn has_str(v: &Value, pred: &dyn Fn(&str) -> bool) -> bool {
    match v {
        Value::String(s) => pred(s),
        Value::Array(a) => a.iter().any(|x| has_str(x, pred)),
        Value::Object(m) => m.iter().any(|(k, x)| pred(k) || has_str(x, pred)),
        _ => false,
    }
}

fn events_of<'a>(v: &'a Value, key: &str) -> Vec<&'a Value> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn type_of(e: &Value) -> &str {
    e.get("eventType").and_then(Value::as_str).unwrap_or("")
}

/// The envelope metadata keys the fold reads, and the sealing marker (GAP-35).
const KERNEL_READ_KEYS: [&str; 5] = ["kernel", "flowEmit", "forkChain", "forkedBy", "seal"];

/// The refusal reasons the spec names (§5); every other refusal identity is GAP-36's.
const SPEC_REFUSAL_REASONS: [&str; 3] = [
    "not-suspended",
    "null-answer-after-parked-failure",
    "ambiguous-legacy-answers",
];

/// What an ingress vector's answer rests on:
/// - GAP-36 when it is a refusal the spec does not name (only `ResumeRefusedError` with
///   the three reasons of §5 and `ResumePayloadValidationError` at an in-doubt park are
///   named);
/// - GAP-35 when the request carries a kernel-read metadata key (refused, not stripped);
/// - GAP-09 when the appended batch holds `APPROVAL_GRANTED` (its payload) or a
///   verdict decision (its place in the batch);
/// - GAP-10 when the log parks in doubt or the batch names a reserved decision id;
/// - GAP-08 when `EXECUTION_RECOVERED` is accepted (it records nothing);
/// - GAP-25 when a timer wake is accepted (a `{firedAt}` passthrough, kernel-stamped).
pub fn ingress_points(s: &Scenario) -> Vec<&'static str> {
    let mut out = cited_unmodelled(s);
    let answer = answer_of(s);
    let log = s.input["log"].as_array().cloned().unwrap_or_default();
    let indoubt = crate::reference::envelopes(&log).ok().is_some_and(|l| {
        loom_kernel::fold(&l).parked_gate() == Some(loom_kernel::fold::INDOUBT_GATE)
    });
    let refused = answer["outcome"] == "refused";
    let named = match (answer["error"].as_str(), answer["reason"].as_str()) {
        (Some("ResumeRefusedError"), Some(r)) => SPEC_REFUSAL_REASONS.contains(&r),
        (Some("ResumePayloadValidationError"), _) => indoubt,
        _ => false,
    };
    if refused && !named {
        out.push("GAP-36");
    }
    let meta = &s.input["request"]["metadata"];
    if KERNEL_READ_KEYS.iter().any(|k| meta.get(k).is_some()) {
        out.push("GAP-35");
    }
    let events = events_of(&answer, "events");
    let verdict = events.iter().any(|e| {
        type_of(e) == "DECISION_RECORDED"
            && e["payload"]["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("__loom_verdict"))
    });
    if events.iter().any(|e| type_of(e) == "APPROVAL_GRANTED") || verdict {
        out.push("GAP-09");
    }
    if indoubt
        || has_str(&answer, &|x| {
            x.starts_with("__loom_verdict") || x.starts_with("__loom_discard")
        })
    {
        out.push("GAP-10");
    }
    let request_type = s.input["request"]["eventType"].as_str().unwrap_or("");
    let recover = s.input["path"] == "recover" || request_type == "EXECUTION_RECOVERED";
    if recover && answer["outcome"] == "appended" {
        out.push("GAP-08");
    }
    if events.iter().any(|e| type_of(e) == "TIMER_FIRED") {
        out.push("GAP-25");
    }
    out
}

/// What an emit vector's answer rests on: GAP-36 for every refusal (the spec names no
/// emit refusal), GAP-35 when the emit carries a kernel-read metadata key, GAP-18 when a
/// userspace `OUTCOME_RECORDED` sets `recordedBy` or `late`.
pub fn emit_points(s: &Scenario) -> Vec<&'static str> {
    let mut out = cited_unmodelled(s);
    let answer = answer_of(s);
    if answer["outcome"] == "refused" {
        out.push("GAP-36");
    }
    if KERNEL_READ_KEYS
        .iter()
        .any(|k| s.input["metadata"].get(k).is_some())
    {
        out.push("GAP-35");
    }
    if s.input["eventType"] == "OUTCOME_RECORDED"
        && ["recordedBy", "late"]
            .iter()
            .any(|k| s.input["payload"].get(k).is_some())
    {
        out.push("GAP-18");
    }
    out
}

/// The open points a scenario cites among its rules that no modelled reading changes
/// for its kind: the author wrote the vector about that resolution, so it rests on it.
fn cited_unmodelled(s: &Scenario) -> Vec<&'static str> {
    crate::basis::DECISIONS
        .iter()
        .map(|(g, _)| *g)
        .filter(|g| s.rules.iter().any(|r| r == g))
        .filter(|g| !crate::readings::Reading::modelled_for(g, s.kind))
        .collect()
}

fn non_ascii(v: &Value) -> bool {
    has_str(v, &|x| !x.is_ascii())
}

/// What a digest vector's answer rests on: GAP-02 for an fnv1a64 value (its spelling:
/// 16 lowercase hex digits), GAP-03 when the canonical text of a value holding a
/// non-ASCII character is part of the answer (escaping, key order beyond ASCII).
pub fn digest_points(s: &Scenario) -> Vec<&'static str> {
    let mut out = cited_unmodelled(s);
    let op = s.input["op"].as_str().unwrap_or("");
    let fnv =
        matches!(op, "fnv1a64" | "emit") || (op == "flowHash" && s.input["algorithm"] == "fnv1a");
    if fnv {
        out.push("GAP-02");
    }
    let hashed = match op {
        "emit" => s.input["payload"].clone(),
        "fnv1a64" => Value::Null,
        _ => s.input["value"].clone(),
    };
    if non_ascii(&hashed) || (op == "emit" && non_ascii(&s.input["eventType"])) {
        out.push("GAP-03");
    }
    out
}

/// What a runtime vector's answer rests on, from the log it records:
/// - GAP-02 when the log holds an fnv1a64 value (an `fnv1a:` flow hash, an emit stamp);
/// - GAP-03 when a flow script or an emitted payload holds a non-ASCII character (the
///   flow hash and stamps hash its canonical text);
/// - GAP-22 when it records a typed failure (its `error` text);
/// - GAP-25 when a timer wakes the flow;
/// - GAP-09 and GAP-10 when an in-doubt park is answered (the batch order, the ids).
pub fn runtime_points(s: &Scenario) -> Vec<&'static str> {
    let answer = answer_of(s);
    let mut logs: Vec<&Value> = events_of(&answer, "log");
    if let Some(Value::Object(c)) = answer.get("continued") {
        for l in c.values() {
            logs.extend(l.as_array().into_iter().flatten());
        }
    }
    let mut out = cited_unmodelled(s);
    let fnv = logs.iter().any(|e| {
        e["payload"]["flowHash"]
            .as_str()
            .is_some_and(|h| h.starts_with("fnv1a:"))
            || e["metadata"]["flowEmit"].is_string()
    });
    if fnv {
        out.push("GAP-02");
    }
    let hashed_non_ascii = s.input["flows"]
        .as_array()
        .is_some_and(|f| f.iter().any(non_ascii))
        || logs
            .iter()
            .any(|e| e["metadata"]["flowEmit"].is_string() && non_ascii(&e["payload"]));
    if hashed_non_ascii {
        out.push("GAP-03");
    }
    if logs
        .iter()
        .any(|e| type_of(e) == "STEP_FAILED" && e["payload"]["channel"].is_string())
    {
        out.push("GAP-22");
    }
    if logs.iter().any(|e| type_of(e) == "TIMER_FIRED") {
        out.push("GAP-25");
    }
    // GAP-07: does a timer wake or a status-only resume count as a gate segment? An emit
    // stamped after one depends on it.
    let mut after_uncounted = false;
    let mut stamp_after_uncounted = false;
    for e in &logs {
        let status_only = type_of(e) == "EXECUTION_RESUMED" && e["payload"].is_null();
        if type_of(e) == "TIMER_FIRED" || status_only {
            after_uncounted = true;
        } else if after_uncounted && e["metadata"]["flowEmit"].is_string() {
            stamp_after_uncounted = true;
        }
    }
    if stamp_after_uncounted {
        out.push("GAP-07");
    }
    // GAP-08: a re-drive of a crashed execution records nothing.
    if s.input["steps"]
        .as_array()
        .is_some_and(|st| st.iter().any(|x| x["op"] == "recover"))
    {
        out.push("GAP-08");
    }
    let indoubt_park = logs
        .iter()
        .any(|e| e["payload"]["on"] == loom_kernel::fold::INDOUBT_GATE);
    if indoubt_park {
        out.push("GAP-10");
        if logs.iter().any(|e| {
            e["payload"]["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("__loom_verdict"))
        }) {
            out.push("GAP-09");
        }
    }
    out
}
