//! Which rule a divergence breaks. The campaign knows where two answers first differ
//! (a JSON pointer, and for a fold the first event whose prefix folds differently); the
//! rule follows from that place and that event, as the catalogue assigns them.

use loom_kernel::fold::is_known_event_type;
use serde_json::Value;

/// The rule a fold divergence at `path`, first seen after folding `event`, breaks.
pub fn fold_rule(event: &Value, path: &str, expected: &Value, actual: &Value) -> &'static str {
    let ty = event.get("eventType").and_then(Value::as_str).unwrap_or("");
    let meta = event.get("metadata");
    let kernel = meta.and_then(|m| m.get("kernel")) == Some(&Value::Bool(true));
    // Kinds the fold acts on only when kernel-stamped: unstamped, the reference ignores
    // them; a wait-addressed resume unstamped folds as a plain resume, so only its wait
    // answer is gated.
    let gated = matches!(
        ty,
        "EXECUTION_CONTINUED"
            | "MESSAGE_CONSUMED"
            | "PARALLEL_COMPLETED"
            | "INBOX_QUARANTINED"
            | "INBOX_RELEASED"
    ) || (ty == "EXECUTION_RESUMED"
        && event.pointer("/payload/waitId").is_some()
        && path.starts_with("/variables/_waitAnswers"));
    if path.split('/').any(|p| p == "__proto__") {
        return "FOLD-05";
    }
    if meta.and_then(|m| m.get("seal")).is_some() {
        return "FOLD-40";
    }
    if gated && !kernel {
        return "FOLD-30";
    }
    if !is_known_event_type(ty) {
        return if path.starts_with("/variables/_flowEmits") {
            "FOLD-19"
        } else {
            "FOLD-04"
        };
    }
    let var = path
        .strip_prefix("/variables/")
        .map(|rest| rest.split('/').next().unwrap_or(""));
    if let Some(var) = var {
        return match var {
            "_decisions" if path.ends_with("/seq") => "FOLD-38",
            "_decisions" if path.contains("/context") || path.contains("/policy") => "FOLD-17",
            "_decisions" if path.contains("/innerSteps") => "FOLD-35",
            "_decisions" => "FOLD-38",
            "_failedWhileParked" if ty == "STEP_FAILED" => "FOLD-10",
            "_failedWhileParked" => "FOLD-11",
            "_resumePayloads" => match ty {
                "EXECUTION_RESUMED" if kernel && event.pointer("/payload/waitId").is_some() => {
                    "FOLD-28"
                }
                "EXECUTION_RESUMED" if event.get("payload").is_some_and(Value::is_null) => {
                    "FOLD-20"
                }
                _ => "FOLD-15",
            },
            "_flowEmits" => "FOLD-19",
            "_input" if ty == "EXECUTION_MIGRATED" => "FOLD-14",
            // A custom name held on one side only is the cap that keeps the accumulator
            // fixed-size (RES-01, bounded by GAP-06), not a false zero.
            "_resources"
                if path.starts_with("/variables/_resources/custom/")
                    && (expected.is_null() || actual.is_null()) =>
            {
                "RES-01"
            }
            "_resources" => resources_rule(expected, actual),
            "_quarantined" => match ty {
                "INBOX_RELEASED" => "FOLD-42",
                "MESSAGE_CONSUMED" => "FOLD-44",
                "EXECUTION_STARTED" => "FOLD-45",
                _ => "FOLD-41",
            },
            "_inbox" => "FOLD-24",
            "_waitAnswers" if ty == "EXECUTION_RESUMED" => "FOLD-28",
            "_waitAnswers" => "FOLD-24",
            "_waits" => "FOLD-27",
            "_scopes" => "FOLD-25",
            "_continuedTo" => "FOLD-23",
            "_lifecycle" => "FOLD-22",
            "_principal" | "_parent" | "_chain" | "_codeHash" | "_input" => "FOLD-26",
            "_suspendedOn" => "GAP-14",
            _ => "FOLD-01",
        };
    }
    if let Some(rest) = path.strip_prefix("/frames/") {
        let field = rest.split('/').nth(1).unwrap_or("");
        return match field {
            "input" => "FOLD-48",
            "errorChannel" | "errorPayload" => "FOLD-16",
            _ => "FOLD-08",
        };
    }
    match path {
        "/status" => match ty {
            "STEP_FAILED" => "FOLD-09",
            "EXECUTION_CONTINUED" => "FOLD-23",
            t if t.starts_with("STEP_") => "FOLD-08",
            _ => "FOLD-07",
        },
        "/sequence" | "/updatedAt" | "/startedAt" => "GAP-12",
        "" if ty.starts_with("STEP_") => "FOLD-08",
        _ => "FOLD-01",
    }
}

/// The metadata keys the fold reads or reserves (ABI-14): any other has no effect.
pub const FOLD_METADATA_KEYS: [&str; 5] = ["flowEmit", "kernel", "forkChain", "forkedBy", "seal"];

/// Whether an envelope's metadata holds a key outside [`FOLD_METADATA_KEYS`].
pub fn has_unknown_metadata_key(event: &Value) -> bool {
    event
        .get("metadata")
        .and_then(Value::as_object)
        .is_some_and(|m| m.keys().any(|k| !FOLD_METADATA_KEYS.contains(&k.as_str())))
}

/// A resource sum that differs only in the last bits is GAP-06 (how sums aggregate);
/// a dimension present on one side only is RES-04 (no false zeros); otherwise RES-01.
fn resources_rule(expected: &Value, actual: &Value) -> &'static str {
    match (expected.as_f64(), actual.as_f64()) {
        (Some(a), Some(b)) if (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0) => "GAP-06",
        _ if expected.is_null() || actual.is_null() => "RES-04",
        _ => "RES-01",
    }
}

fn refusal(v: &Value) -> Option<(&str, Option<&str>)> {
    if v.get("outcome").and_then(Value::as_str) != Some("refused") {
        return None;
    }
    Some((
        v.get("error").and_then(Value::as_str).unwrap_or(""),
        v.get("reason").and_then(Value::as_str),
    ))
}

fn reason_rule(error: &str, reason: Option<&str>, indoubt: bool) -> &'static str {
    match (error, reason) {
        ("ResumeUnauthenticatedError", _) => "INGRESS-21",
        ("ResumePayloadValidationError", _) if indoubt => "INGRESS-10",
        ("ResumePayloadValidationError", _) => "INGRESS-22",
        (_, Some("not-suspended")) => "INGRESS-13",
        (_, Some("gate-mismatch")) => "INGRESS-03",
        (_, Some("not-timed")) => "INGRESS-04",
        (_, Some("not-recoverable")) => "INGRESS-05",
        (_, Some("kernel-event-type")) => "INGRESS-02",
        (_, Some("null-answer-after-parked-failure")) => "INGRESS-14",
        (_, Some("ambiguous-legacy-answers")) => "INGRESS-36",
        (_, Some("unauthorized")) => "INGRESS-38",
        (_, Some("kernel-metadata")) => "INGRESS-39",
        _ => "INGRESS-15",
    }
}

/// The rules an ingress divergence breaks, the most specific first. `indoubt`: the
/// execution is parked in doubt.
pub fn ingress_rules(expected: &Value, actual: &Value, indoubt: bool) -> Vec<&'static str> {
    match (refusal(expected), refusal(actual)) {
        // It should have refused: the rule behind the refusal, and INGRESS-15 (a
        // refusal appends nothing).
        (Some((e, r)), None) => {
            let rule = reason_rule(e, r, indoubt);
            if rule == "INGRESS-15" {
                vec![rule]
            } else {
                vec![rule, "INGRESS-15"]
            }
        }
        _ => vec![ingress_rule(expected, actual, indoubt)],
    }
}

fn ingress_rule(expected: &Value, actual: &Value, indoubt: bool) -> &'static str {
    match (refusal(expected), refusal(actual)) {
        (Some((e, r)), None) => reason_rule(e, r, indoubt),
        // The wrong refusal: identity comes first (INGRESS-24); otherwise the rule
        // whose refusal was due.
        (Some(("ResumeUnauthenticatedError", _)), Some(_)) => "INGRESS-24",
        (Some((e, r)), Some(_)) => reason_rule(e, r, indoubt),
        // It refused what the gate admits: the rule it wrongly applied.
        (None, Some((e, r))) => reason_rule(e, r, indoubt),
        (None, None) => appended_rule(expected, actual),
    }
}

fn types(v: &Value) -> Vec<&str> {
    v.get("events")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|e| e.get("eventType").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

fn appended_rule(expected: &Value, actual: &Value) -> &'static str {
    let (a, b) = (types(expected), types(actual));
    let approvals = |t: &[&str]| t.iter().filter(|x| **x == "APPROVAL_GRANTED").count();
    if approvals(&a) != approvals(&b) {
        return "INGRESS-21";
    }
    if a.contains(&"DECISION_RECORDED") || b.contains(&"DECISION_RECORDED") {
        return "INGRESS-09";
    }
    let mut sa = a.clone();
    let mut sb = b.clone();
    sa.sort_unstable();
    sb.sort_unstable();
    if sa == sb && a != b {
        return "INGRESS-21";
    }
    "INGRESS-22"
}

/// The rules an emit-validation divergence breaks, the most specific first: a kernel
/// kind through a relay breaks INGRESS-32 and, as a userspace emit, INGRESS-27.
pub fn emit_rules(params: &Value, expected: &Value, actual: &Value) -> Vec<&'static str> {
    match emit_rule(params, expected, actual) {
        "INGRESS-32" => vec!["INGRESS-32", "INGRESS-27"],
        rule => vec![rule],
    }
}

fn emit_rule(params: &Value, expected: &Value, actual: &Value) -> &'static str {
    let ty = params
        .get("eventType")
        .and_then(Value::as_str)
        .unwrap_or("");
    let relay = params.pointer("/source/kind").and_then(Value::as_str) == Some("relay");
    let reason = refusal(expected)
        .or_else(|| refusal(actual))
        .and_then(|(_, r)| r);
    match reason {
        Some("kernel-event-type") if relay => "INGRESS-32",
        Some("kernel-event-type") => "INGRESS-27",
        Some("invalid-payload") => match ty {
            "RESOURCE_METERED" => "INGRESS-28",
            "QUOTA_EXCEEDED" => "INGRESS-29",
            "OUTCOME_RECORDED" => "GAP-18",
            _ => "INGRESS-27",
        },
        Some("reserved-decision-id") => "INGRESS-33",
        Some("choice-change") => "INGRESS-31",
        Some("kernel-metadata") => "INGRESS-39",
        _ if ty == "DECISION_RECORDED" => "INGRESS-30",
        _ => "INGRESS-27",
    }
}

/// The rule a digest divergence breaks, from the op and the two answers.
pub fn digest_rule(params: &Value, expected: &Value, actual: &Value) -> &'static str {
    match params.get("op").and_then(Value::as_str) {
        Some("canonical") => canonical_rule(
            expected
                .get("canonical")
                .and_then(Value::as_str)
                .unwrap_or(""),
            actual
                .get("canonical")
                .and_then(Value::as_str)
                .unwrap_or(""),
        ),
        Some("emit") => {
            let (a, b) = (expected.get("input"), actual.get("input"));
            match (a.and_then(Value::as_str), b.and_then(Value::as_str)) {
                (Some(a), Some(b)) if a != b => match (a.split_once('|'), b.split_once('|')) {
                    (Some((sa, ra)), Some((sb, rb))) if sa == sb => canonical_rule(ra, rb),
                    _ => "EMIT-03",
                },
                _ => "EMIT-02",
            }
        }
        Some("flowHash") => "FOLD-34",
        _ => "EMIT-02",
    }
}

/// Canonical texts that hold the same data in another key order break EMIT-04; any
/// other difference (numbers, escapes, whitespace) breaks the canonical form itself
/// (GAP-03).
pub fn canonical_rule(expected: &str, actual: &str) -> &'static str {
    let (Ok(a), Ok(b)) = (
        serde_json::from_str::<Value>(expected),
        serde_json::from_str::<Value>(actual),
    ) else {
        return "GAP-03";
    };
    let same_data = loom_kernel::canonical_string(&a) == loom_kernel::canonical_string(&b);
    // Reordering keys only permutes the text: the same characters, in another order.
    let mut x: Vec<char> = expected.chars().collect();
    let mut y: Vec<char> = actual.chars().collect();
    x.sort_unstable();
    y.sort_unstable();
    if same_data && x == y {
        "EMIT-04"
    } else {
        "GAP-03"
    }
}
