//! Digest scenarios: canonical JSON (RFC 8785), fnv1a64, the flow-emit identity and
//! flow hashes, as known answers.

use super::*;
use crate::format::Kind;
use crate::generate::Scenario;

fn d(id: &str, rules: &[&str], description: &str, input: Value) -> Scenario {
    Scenario::new(
        Kind::Digest,
        format!("digest-{id}"),
        rules,
        description,
        input,
    )
    .since("1.19.0")
    .rests_by(super::digest_points)
}

/// Every digest scenario.
// The number-ties literals are exact doubles written in full on purpose: their point is
// which of two equally short spellings a canonicaliser picks.
#[allow(clippy::excessive_precision)]
pub fn scenarios() -> Vec<Scenario> {
    let mut out = Vec::new();
    let canon: Vec<(&str, Value)> = vec![
        ("empty-object", json!({})),
        ("empty-array", json!([])),
        ("null", json!(null)),
        ("booleans", json!([true, false])),
        (
            "key-order",
            json!({"b": 1, "a": 2, "c": {"z": 0, "y": [3, {"k": 1, "j": 2}]}}),
        ),
        (
            "integers",
            json!([0, 1, -1, 9007199254740991_i64, -9007199254740991_i64]),
        ),
        ("fractions", json!([0.5, 0.1, -2.25, 1.0e-7, 123.456])),
        ("large-exponents", json!([1.0e21, 1.0e20, 1.5e300, 5e-324])),
        ("float-sum", json!(0.30000000000000004)),
        // Found by the canonical_json fuzz target: two shortest spellings equally close
        // (ECMAScript takes the even digit), and a power of two whose round-trip
        // interval is lopsided. Regression inputs live in props/regressions/canonical_json/.
        (
            "number-ties-and-powers-of-two",
            json!([
                562949953421327.25,
                216398094627271.125,
                7.291122019556398e-304
            ]),
        ),
        (
            "string-escapes",
            json!("quote\" backslash\\ tab\t newline\n control\u{1}"),
        ),
        ("string-unicode", json!("é € 😀 \u{2028}")),
        (
            "utf16-key-order",
            json!({"\u{20ac}": 1, "\u{1f600}": 2, "a": 3, "A": 4, "\u{e9}": 5}),
        ),
        ("nested-arrays", json!([[[]], [{}], [[1, [2, [3]]]]])),
        (
            "numeric-keys",
            json!({"10": "a", "2": "b", "1": "c", "b": "d"}),
        ),
        (
            "deep-object",
            json!({"a": {"b": {"c": {"d": {"e": {"f": "g"}}}}}}),
        ),
        (
            "mixed-envelope",
            json!({"eventType": "STEP_COMPLETED", "payload": {"stepId": "s", "output": [1, "2", null]}, "sequence": 3}),
        ),
    ];
    for (id, value) in canon {
        out.push(d(
            &format!("canonical-{id}"),
            &["EMIT-04"],
            &format!("RFC 8785 canonical form: {id}."),
            json!({"op": "canonical", "value": value}),
        ));
    }
    for (i, text) in [
        "",
        "a",
        "foobar",
        "0|[\"X\",null]",
        "hello world",
        "€uro",
        "\u{0}",
    ]
    .iter()
    .enumerate()
    {
        out.push(d(
            &format!("fnv1a64-{i}"),
            &["EMIT-02"],
            &format!("FNV-1a 64 of {text:?} as 16 lowercase hex digits."),
            json!({"op": "fnv1a64", "text": text}),
        ));
    }
    let payloads: Vec<(&str, &str, Value)> = vec![
        ("progress", "PROGRESS", json!({"pct": 50})),
        (
            "ui-card",
            "UI",
            json!({"card": {"title": "Hi", "items": [1, 2]}}),
        ),
        ("null-payload", "STREAM", json!(null)),
        ("string-payload", "LOG", json!("line")),
        (
            "decision-type",
            "DECISION_RECORDED",
            json!({"id": "d", "choice": 1}),
        ),
    ];
    for (name, ty, payload) in &payloads {
        for segment in [0u64, 1, 2, 17] {
            out.push(d(&format!("emit-{name}-segment{segment}"), &["EMIT-02", "EMIT-03"],
                &format!("Emit identity of a {ty} emit in gate segment {segment}: fnv1a64 over `<segment>|<canonical [eventType, payload]>`."),
                json!({"op": "emit", "segment": segment, "eventType": ty, "payload": payload})));
        }
    }
    // EMIT-04: key order never matters.
    for (i, payload) in [
        json!({"a": 1, "b": 2}),
        json!({"b": 2, "a": 1}),
        json!({"z": {"y": 1, "x": 2}, "a": [{"d": 1, "c": 2}]}),
        json!({"a": [{"c": 2, "d": 1}], "z": {"x": 2, "y": 1}}),
    ]
    .iter()
    .enumerate()
    {
        out.push(d(
            &format!("emit-key-permutation-{i}"),
            &["EMIT-04", "EMIT-02"],
            "Payloads that differ only in key insertion order have the same emit identity.",
            json!({"op": "emit", "segment": 1, "eventType": "PROGRESS", "payload": payload}),
        ));
    }
    let flow =
        json!({"flowId": "checkout", "body": [{"run": "charge"}, {"suspend": {"on": "APPROVE"}}]});
    for alg in ["sha256", "fnv1a"] {
        out.push(d(
            &format!("flow-hash-{alg}"),
            &["FOLD-34"],
            &format!("The {alg} flow hash over the canonical JSON of a flow definition."),
            json!({"op": "flowHash", "algorithm": alg, "value": flow}),
        ));
        out.push(d(&format!("flow-hash-{alg}-reordered"), &["FOLD-34", "EMIT-04"], &format!("The {alg} flow hash does not depend on key order."),
            json!({"op": "flowHash", "algorithm": alg, "value": {"body": [{"run": "charge"}, {"suspend": {"on": "APPROVE"}}], "flowId": "checkout"}})));
    }
    out
}
