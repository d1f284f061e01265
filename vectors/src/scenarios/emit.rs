//! Userspace-emit scenarios: what flow code (`ctx.emit`/`stream`/`ui`), an effect
//! (`EffectContext.emit`) and an isolated tool's relay may append, and how it is
//! rewritten.

use super::*;
use crate::format::Kind;
use crate::generate::Scenario;
use loom_kernel::fold::known_event_types;
use loom_kernel::limits::{QUOTA_REASON_UTF16_UNITS_MAX, RESOURCE_METERED_VALUE_MAX};

fn source(kind: &str) -> Value {
    match kind {
        "effect" => json!({"kind": "effect", "stepId": "s1", "attempt": 1}),
        other => json!({ "kind": other }),
    }
}

#[allow(clippy::too_many_arguments)]
fn e(
    id: &str,
    rules: &[&str],
    description: &str,
    log_events: Vec<Ev>,
    src: &str,
    ty: &str,
    payload: Value,
    meta: Option<Value>,
) -> Scenario {
    let mut input =
        json!({"log": log(log_events), "source": source(src), "eventType": ty, "payload": payload});
    if let Some(m) = meta {
        input["metadata"] = m;
    }
    Scenario::new(Kind::Emit, format!("emit-{id}"), rules, description, input)
        .since("1.21.0")
        .rests_by(super::emit_points)
}

fn base() -> Vec<Ev> {
    vec![started(), step_started("s1")]
}

/// Every emit scenario.
pub fn scenarios() -> Vec<Scenario> {
    let mut out = Vec::new();
    let mut kinds: Vec<&str> = known_event_types().to_vec();
    kinds.push("ORDER_SHIPPED");
    for kind in kinds {
        for src in ["flow", "effect", "relay"] {
            let rules: &[&str] = if src == "relay" {
                &["INGRESS-27", "INGRESS-32"]
            } else {
                &["INGRESS-27"]
            };
            out.push(e(&format!("ingress27-{}-{src}", slug(kind)), rules,
                &format!("{kind} emitted by the {src} path: kernel kinds are refused unless allow-listed (a relay forwards application types only)."),
                base(), src, kind, sample_payload(kind), None));
        }
    }
    let ceiling = RESOURCE_METERED_VALUE_MAX;
    for (name, payload) in [
        ("negative", json!({"tokens": -1})),
        ("over-ceiling", json!({"tokens": ceiling * 10.0})),
        ("at-ceiling", json!({"tokens": ceiling})),
        ("zero", json!({"tokens": 0})),
        ("normal", json!({"tokens": 120, "costUsd": 0.02, "ms": 340})),
        ("string-value", json!({"tokens": "5"})),
        ("negative-cost", json!({"costUsd": -0.01})),
        (
            "custom-ok",
            json!({"tokens": 1, "custom": {"gpuSeconds": 2.5}}),
        ),
        ("custom-negative", json!({"custom": {"gpuSeconds": -1}})),
        (
            "custom-over-ceiling",
            json!({"custom": {"gpuSeconds": ceiling * 10.0}}),
        ),
        ("empty", json!({})),
    ] {
        for src in ["flow", "effect"] {
            out.push(e(&format!("ingress28-metered-{name}-{src}"), &["INGRESS-28", "FOLD-29"],
                &format!("A userspace RESOURCE_METERED ({name}): fields must be finite, non-negative numbers under the ceiling."),
                base(), src, "RESOURCE_METERED", payload.clone(), None));
        }
    }
    let long = "x".repeat(QUOTA_REASON_UTF16_UNITS_MAX);
    let too_long = "x".repeat(QUOTA_REASON_UTF16_UNITS_MAX + 1);
    let astral = "😀".repeat(QUOTA_REASON_UTF16_UNITS_MAX / 2 + 1);
    for (name, payload) in [
        ("ok", json!({"reason": "budget exhausted"})),
        ("at-bound", json!({"reason": long})),
        ("over-bound", json!({"reason": too_long})),
        ("astral-over-bound", json!({"reason": astral})),
        ("non-string", json!({"reason": 42})),
        ("missing", json!({"dimension": "tokens"})),
    ] {
        out.push(e(&format!("ingress29-quota-{name}"), &["INGRESS-29"],
            &format!("A userspace QUOTA_EXCEEDED ({name}): reason must be a string of at most {QUOTA_REASON_UTF16_UNITS_MAX} UTF-16 code units."),
            base(), "flow", "QUOTA_EXCEEDED", payload, None));
    }
    for attempt in [1u64, 3] {
        out.push(Scenario::new(Kind::Emit, format!("emit-ingress30-effect-decision-rewritten-attempt{attempt}"), &["INGRESS-30"],
            "An effect's DECISION_RECORDED id is rewritten into effect:<stepId>#<attempt>:<id>.",
            json!({"log": log(base()), "source": {"kind": "effect", "stepId": "s1", "attempt": attempt}, "eventType": "DECISION_RECORDED", "payload": {"id": "k", "choice": 1}})).since("1.21.0").rests_by(super::emit_points));
    }
    let with_decision = vec![started(), decision("d", json!("x"))];
    out.push(e(
        "ingress31-choice-change-refused",
        &["INGRESS-31"],
        "A flow DECISION_RECORDED that changes a recorded choice is refused.",
        with_decision.clone(),
        "flow",
        "DECISION_RECORDED",
        json!({"id": "d", "choice": "y"}),
        None,
    ));
    out.push(e(
        "ingress31-same-choice-accepted",
        &["INGRESS-31"],
        "Repeating the recorded choice is accepted.",
        with_decision.clone(),
        "flow",
        "DECISION_RECORDED",
        json!({"id": "d", "choice": "x"}),
        None,
    ));
    out.push(e(
        "ingress31-new-decision-accepted",
        &["INGRESS-31"],
        "A decision for a new id is accepted.",
        with_decision,
        "flow",
        "DECISION_RECORDED",
        json!({"id": "e", "choice": "x"}),
        None,
    ));
    out.push(e(
        "ingress33-reserved-id-flow",
        &["INGRESS-33", "ABI-15"],
        "A flow-level DECISION_RECORDED with a __loom_ id is refused.",
        base(),
        "flow",
        "DECISION_RECORDED",
        json!({"id": "__loom_verdict:s1#1", "choice": 1}),
        None,
    ));
    out.push(e(
        "ingress33-reserved-id-effect",
        &["INGRESS-33", "INGRESS-30"],
        "Through an effect the __loom_ id is rewritten out of the reserved prefix.",
        base(),
        "effect",
        "DECISION_RECORDED",
        json!({"id": "__loom_x", "choice": 1}),
        None,
    ));
    out.push(e(
        "ingress33-reserved-prefix-only",
        &["INGRESS-33", "ABI-15"],
        "An id that merely contains __loom_ later is not reserved.",
        base(),
        "flow",
        "DECISION_RECORDED",
        json!({"id": "my__loom_x", "choice": 1}),
        None,
    ));
    out.push(e(
        "gap18-outcome-recorded-by-refused",
        &["FOLD-29", "INGRESS-27"],
        "A userspace OUTCOME_RECORDED may not set recordedBy (GAP-18, reference decision).",
        base(),
        "flow",
        "OUTCOME_RECORDED",
        json!({"stepId": "s1", "outcome": "ok", "recordedBy": "me"}),
        None,
    ));
    out.push(e(
        "gap18-outcome-late-refused",
        &["FOLD-29", "INGRESS-27"],
        "A userspace OUTCOME_RECORDED may not set late (GAP-18, reference decision).",
        base(),
        "flow",
        "OUTCOME_RECORDED",
        json!({"stepId": "s1", "outcome": "ok", "late": true}),
        None,
    ));
    for (key, value) in [
        ("kernel", json!(true)),
        ("flowEmit", json!("00000000000000aa")),
        ("forkChain", json!([])),
        ("forkedBy", json!("x")),
        ("seal", json!({"v": 1})),
    ] {
        for src in ["flow", "effect", "relay"] {
            let mut m = serde_json::Map::new();
            m.insert(key.into(), value.clone());
            out.push(e(&format!("ingress39-emit-metadata-{}-{src}", key.to_ascii_lowercase()), &["INGRESS-39", "ABI-14"],
                &format!("An emit on the {src} path whose metadata carries `{key}` is refused (kernel-metadata)."),
                base(), src, "ORDER_SHIPPED", json!({"id": 1}), Some(Value::Object(m))));
        }
    }
    out.push(e(
        "ingress39-emit-other-metadata",
        &["INGRESS-39"],
        "Other metadata does not make an emit refused.",
        base(),
        "flow",
        "ORDER_SHIPPED",
        json!({"id": 1}),
        Some(json!({"traceId": "t"})),
    ));
    out
}
