//! Raw-wire scenarios: vectors whose request is exact JSON text (`rawInput`), sent to
//! the kernel byte for byte. A canonical file cannot carry unsorted keys, `-0`, `1E21`,
//! `1e-6`, integers above 2^53, escapes such as `\/`, `\u0008` or an uppercase
//! `\u001F`, escaped surrogate pairs, or keys whose order differs between code points and
//! UTF-16 code units; a kernel whose own JSON reader or canonical writer gets one of
//! them wrong passes every vector that is sent already canonical, and fails these.
//!
//! What each text must become is not written here: the reference kernel reads the text
//! with the protocol server's JSON parser and the generator records its answer. The
//! comments say what the spec (RFC 8785 as GAP-03 reads it) makes of each spelling.

use super::*;
use crate::format::Kind;
use crate::generate::Scenario;

fn raw(
    kind: Kind,
    id: &str,
    rules: &[&str],
    since: &str,
    description: &str,
    text: &str,
) -> Scenario {
    Scenario::raw(
        kind,
        format!("{}-wire-{id}", kind.as_str()),
        rules,
        description,
        text,
    )
    .since(since)
    .rests_by(match kind {
        Kind::Digest => super::digest_points,
        Kind::Ingress => super::ingress_points,
        Kind::Emit => super::emit_points,
        Kind::Runtime => super::runtime_points,
        _ => |_: &Scenario| Vec::new(),
    })
}

/// The canonical-JSON texts: (id, what it pins, the `value` as raw JSON text).
const CANONICAL: &[(&str, &str, &str)] = &[
    (
        "unsorted-keys",
        "Keys arrive in reverse order at every depth, `value` before `op`; the canonical form sorts them.",
        r#"{"value":{"c":{"z":0,"y":[3,{"k":1,"j":2}]},"b":1,"a":2},"op":"canonical"}"#,
    ),
    (
        "negative-zero",
        "`-0`, `-0.0`, `0.0`, `-0e5` and `0E-3` are all the number zero, written `0`.",
        r#"{"op":"canonical","value":[-0,-0.0,0.0,-0e5,0E-3]}"#,
    ),
    (
        "exponent-boundaries",
        "Exponent form starts below 1e-6 and at 1e21: `1e-6` is `0.000001`, `1e-7` is `1e-7`, `1E21` is `1e+21`, `1e20` is written out.",
        r#"{"op":"canonical","value":[1e-6,1E-6,0.000001,1e-7,9.99e-7,1E21,1e21,999999999999999999999,1e20,100000000000000000000]}"#,
    ),
    (
        "number-spellings",
        "Trailing zeros, `0.1e1`, `10e-1`, `1E+2`, a plus sign in the exponent and the extremes of the double range, in ECMAScript's shortest form.",
        r#"{"op":"canonical","value":[1.0,1.50,0.1e1,10e-1,1E+2,-1.0E+2,0.30000000000000004,5E-324,1.7976931348623157e308,2.5e-7,123e-2]}"#,
    ),
    (
        "integers-above-2-53",
        "Integers above 2^53 are doubles: 9007199254740993 is written 9007199254740992, ties go to even, and integers beyond 64 bits take exponent form at 1e21.",
        r#"{"op":"canonical","value":[9007199254740993,9007199254740995,-9007199254740993,18446744073709551615,18446744073709551616,123456789012345678901234567890]}"#,
    ),
    (
        "escapes",
        "`\\/` is `/`, `\\u0008` is `\\b`, `\\u000C` is `\\f`, an uppercase `\\u001F` is written lowercase, DEL, `é` and U+2028 are written as they are.",
        r#"{"op":"canonical","value":"a\/b\u0008\u000C\n\u001F\u001f\u007F\u00e9\u2028\"\\\t"}"#,
    ),
    (
        "escaped-surrogate-pairs",
        "An escaped surrogate pair in either case is one astral character, written as UTF-8.",
        r#"{"op":"canonical","value":["\ud83d\ude00","\uD83D\uDE00","😀","\ud834\udd1e"]}"#,
    ),
    (
        "astral-keys-utf16-order",
        "Keys with astral characters sort by UTF-16 code units, not code points: U+10000 and U+1F600 (surrogates D800, D83D) come before U+E000 and U+FF61.",
        r#"{"op":"canonical","value":{"\uff61":1,"😀":2,"\ue000":3,"\ud800\udc00":4,"z":5}}"#,
    ),
    (
        "lone-astral-key-and-value",
        "A key and a value that are one astral character each, beside a BMP key above the surrogates.",
        r#"{"op":"canonical","value":{"𝄞":"𝄞","\uffff":"\uffff","~":"~"}}"#,
    ),
    (
        "empty-and-prefix-keys",
        "The empty key sorts first, a key sorts before its extensions, `A` before `a`, and a control character in a key is escaped.",
        r#"{"op":"canonical","value":{"aa":1,"":0,"a":2,"A":3,"a\u0000":4,"a\u001F":5}}"#,
    ),
    (
        "numeric-string-keys",
        "Keys that look like array indexes sort as strings (`1` < `10` < `9`), not in the order a JavaScript object enumerates them.",
        r#"{"op":"canonical","value":{"10":"ten","9":"nine","1":"one","b":"bee","01":"zero-one"}}"#,
    ),
    (
        "insignificant-whitespace",
        "Spaces and tabs between tokens are not part of the value; the canonical form has none.",
        "{ \"op\" : \"canonical\" ,\t\"value\" : { \"k\" : [ 1 , { } , [ ] , \"a b\" ] , \"j\" :\tnull } }",
    ),
    (
        "deep-unsorted",
        "Objects inside arrays inside objects, each with unsorted keys.",
        r#"{"op":"canonical","value":[{"y":{"b":[{"d":1,"c":[{"f":-0,"e":1E1}]}],"a":true},"x":false}]}"#,
    ),
];

/// Every raw-wire scenario.
pub fn scenarios() -> Vec<Scenario> {
    let mut out = Vec::new();
    for (id, description, text) in CANONICAL {
        out.push(raw(
            Kind::Digest,
            &format!("canonical-{id}"),
            &["EMIT-04", "GAP-03"],
            "1.19.0",
            description,
            text,
        ));
    }
    // fnv1a64 hashes the UTF-8 bytes of the decoded text, not of its escaped spelling.
    out.push(raw(Kind::Digest, "fnv1a64-escaped-text", &["EMIT-02"], "1.19.0",
        "FNV-1a 64 over the UTF-8 of the decoded text: `\\u00e9`, `\\/`, `\\u0000` and an escaped surrogate pair are hashed as the characters they stand for.",
        r#"{"text":"\u00e9\/\u0000\ud83d\ude00","op":"fnv1a64"}"#));
    // The emit identity hashes the canonical [eventType, payload]; the answer's
    // `input` shows the exact text hashed.
    for (id, description, text) in [
        ("emit-unsorted-payload", "The emit identity hashes the canonical payload: keys arriving unsorted at every depth and `-0` give the digest of the sorted form.",
            r#"{"segment":2,"payload":{"b":[{"y":1,"x":2}],"a":-0},"eventType":"PROGRESS","op":"emit"}"#),
        ("emit-number-spellings", "The emit identity of a payload whose numbers are spelled `5E1`, `1e-7`, `1E21` and 9007199254740993.",
            r#"{"op":"emit","segment":0,"eventType":"METRIC","payload":{"pct":5E1,"ratio":1e-7,"huge":1E21,"big":9007199254740993}}"#),
        ("emit-escapes", "The emit identity of an escaped event type and payload: `\\/` and `\\u001F` are decoded, then written canonically.",
            r#"{"op":"emit","segment":1,"eventType":"A\/B","payload":"\u001F\u00e9\/"}"#),
        ("emit-short-escapes", "The emit identity of a payload with backspace and form feed (written `\\b`, `\\f`) and a tab spelled `\\u0009`.",
            r#"{"op":"emit","segment":4,"eventType":"LOG","payload":{"line":"a\u0008b\fc\u0009d"}}"#),
        ("emit-small-numbers", "The emit identity of payload numbers between 1e-7 and 1e-5, where the exponent form starts below 1e-6.",
            r#"{"op":"emit","segment":0,"eventType":"METRIC","payload":[0.000005,2.5e-6,1e-6,9.5e-7,0.00001]}"#),
        ("emit-astral-keys", "The emit identity of a payload whose keys sort differently by code point and by UTF-16.",
            r#"{"op":"emit","segment":3,"eventType":"UI","payload":{"\uff61":1,"😀":2,"\ue000":3}}"#),
    ] {
        out.push(raw(Kind::Digest, id, &["EMIT-02", "EMIT-04", "GAP-03"], "1.19.0", description, text));
    }
    for alg in ["sha256", "fnv1a"] {
        out.push(raw(Kind::Digest, &format!("flow-hash-{alg}-raw-definition"), &["FOLD-34", "EMIT-04", "GAP-03"], "1.23.0",
            &format!("The {alg} flow hash of a definition sent with unsorted keys, `1E2`, `-0` and `\\/`: it hashes the canonical JSON of the value."),
            &format!(r#"{{"algorithm":"{alg}","value":{{"body":[{{"payload":{{"b":1E2,"a":"\/","c":-0}},"eventType":"X","op":"emit"}}],"flowId":"f"}},"op":"flowHash"}}"#)));
    }
    out.extend(fold());
    out.extend(ingress());
    out.extend(emit());
    out.extend(runtime());
    out
}

fn envelope_text(seq: u64, event_type: &str, payload: &str) -> String {
    // Keys in an order no serializer that sorts would produce.
    format!(
        r#"{{"payload":{payload},"timestamp":{},"sequence":{seq},"executionId":"exec-1","workflowId":"flow","eventType":"{event_type}","id":"e{seq}"}}"#,
        1000 + 10 * seq
    )
}

fn events_text(events: &[(&str, &str)]) -> String {
    let list: Vec<String> = events
        .iter()
        .enumerate()
        .map(|(i, (t, p))| envelope_text(i as u64, t, p))
        .collect();
    format!("[{}]", list.join(","))
}

fn fold() -> Vec<Scenario> {
    let mut out = Vec::new();
    let started = ("EXECUTION_STARTED", r#"{"input":{"n":1}}"#);
    // Resource sums: the accumulator adds doubles (GAP-06); the spellings must read as
    // the same numbers.
    out.push(raw(Kind::Fold, "metered-spellings", &["RES-01", "GAP-06", "ABI-10", "FOLD-01", "RES-03"], "1.23.0",
        "RESOURCE_METERED fields spelled `1E2`, `1e-6`, `-0` and `2.50` sum as the numbers they are; envelope keys arrive unsorted.",
        &format!(r#"{{"events":{}}}"#, events_text(&[started,
            ("RESOURCE_METERED", r#"{"tokens":1E2,"costUsd":1e-6,"ms":-0}"#),
            ("RESOURCE_METERED", r#"{"costUsd":2.50,"tokens":5e0,"ms":0.0}"#)]))));
    out.push(raw(Kind::Fold, "escaped-step-ids", &["FOLD-08", "FOLD-48", "ABI-10", "FOLD-01"], "1.26.0",
        "A step id sent as `a\\/b` and then as `a/b` is one frame: escapes are decoded before the id keys the frame.",
        &format!(r#"{{"events":{}}}"#, events_text(&[started,
            ("STEP_STARTED", r#"{"stepId":"a\/b","input":{"x":1}}"#),
            ("STEP_COMPLETED", r#"{"output":"\u00e9","stepId":"a/b"}"#)]))));
    out.push(raw(Kind::Fold, "astral-decision-ids", &["FOLD-38", "FOLD-17", "ABI-10", "FOLD-01", "SNAP-09"], "1.24.0",
        "Decision ids that sort differently by code point and by UTF-16, sent escaped and unescaped; each keeps the sequence of its first record.",
        &format!(r#"{{"events":{}}}"#, events_text(&[started,
            ("DECISION_RECORDED", r#"{"choice":1,"id":"\uff61"}"#),
            ("DECISION_RECORDED", r#"{"id":"😀","choice":{"b":2,"a":1}}"#),
            ("DECISION_RECORDED", r#"{"id":"\ud83d\ude00","choice":3,"context":{"z":1E1,"y":-0}}"#)])))
        // The repeated id's entry is rebuilt from the later record (GAP-24).
        .rests_on(&["GAP-24"]));
    out.push(raw(Kind::Fold, "escaped-gate-resume", &["FOLD-15", "ABI-10", "FOLD-01"], "1.16.0",
        "A park and a resume whose payloads carry escapes and number spellings: the passthrough records the decoded values.",
        &format!(r#"{{"events":{}}}"#, events_text(&[started,
            ("EXECUTION_SUSPENDED", r#"{"on":"A\/B"}"#),
            ("EXECUTION_RESUMED", r#"{"answer":"\u0041\u00e9","n":1E2,"z":-0.0}"#)]))));
    out
}

fn log_text(events: Vec<Ev>) -> String {
    serde_json::to_string(&log(events)).unwrap_or_default()
}

fn ingress() -> Vec<Scenario> {
    let mut out = Vec::new();
    let parked = |gate: &str| log_text(vec![started(), suspended(gate)]);
    out.push(raw(Kind::Ingress, "escaped-gate-name", &["INGRESS-03", "INGRESS-15"], "1.21.0",
        "Parked on `A/B`, a resume typed `A\\/B` names the same gate once decoded: accepted.",
        &format!(r#"{{"request":{{"payload":{{"ok":true}},"eventType":"A\/B"}},"path":"resume","log":{},"flow":{{}}}}"#, parked("A/B"))));
    out.push(raw(Kind::Ingress, "unicode-escaped-gate-name", &["INGRESS-03", "INGRESS-15"], "1.21.0",
        "Parked on `é`, a resume typed `\\u00e9` is the same gate once decoded: accepted.",
        &format!(r#"{{"flow":{{}},"log":{},"path":"resume","request":{{"eventType":"\u00e9","payload":1}}}}"#, parked("é"))));
    out.push(raw(Kind::Ingress, "decomposed-gate-name-refused", &["INGRESS-03", "INGRESS-15"], "1.21.0",
        "Parked on `é` (U+00E9), a resume typed `e\\u0301` (e and a combining accent) is another string: refused, nothing appended.",
        &format!(r#"{{"flow":{{}},"log":{},"path":"resume","request":{{"eventType":"e\u0301","payload":1}}}}"#, parked("é"))));
    out.push(raw(Kind::Ingress, "escaped-kernel-type-refused", &["INGRESS-02", "INGRESS-15"], "1.21.0",
        "`STEP\\u005FCOMPLETED` is STEP_COMPLETED once decoded: a kernel event type, refused.",
        &format!(r#"{{"flow":{{}},"log":{},"path":"resume","request":{{"eventType":"STEP\u005FCOMPLETED","payload":{{"stepId":"s"}}}}}}"#, parked("STEP_COMPLETED"))));
    out.push(raw(Kind::Ingress, "raw-payload-recorded-parsed", &["INGRESS-22", "INGRESS-15"], "1.21.0",
        "A resume whose payload arrives with unsorted keys, `1E2`, `-0` and escapes records the decoded value in the caller's event and in EXECUTION_RESUMED.",
        &format!(r#"{{"request":{{"payload":{{"z":"\/","n":1E2,"a":[-0,1e-7]}},"eventType":"APPROVE"}},"path":"resume","log":{},"flow":{{"resumeSchemas":{{"APPROVE":{{"type":"object","required":["n"]}}}}}}}}"#, parked("APPROVE"))));
    out
}

fn emit() -> Vec<Scenario> {
    let mut out = Vec::new();
    let log = log_text(vec![started(), step_started("s1")]);
    let metered = |id: &str, description: &str, payload: &str| {
        raw(
            Kind::Emit,
            &format!("metered-{id}"),
            &["INGRESS-28", "GAP-05"],
            "1.21.0",
            description,
            &format!(
                r#"{{"payload":{payload},"eventType":"RESOURCE_METERED","source":{{"kind":"flow"}},"log":{log}}}"#
            ),
        )
    };
    out.push(metered(
        "negative-zero",
        "`-0` and `-0.0` are zero, not negative: a RESOURCE_METERED with them is accepted.",
        r#"{"tokens":-0,"costUsd":-0.0}"#,
    ));
    out.push(metered(
        "exponent-at-ceiling",
        "`1E15` is exactly the ceiling (accepted) and `1e-6` a small positive number.",
        r#"{"tokens":1E15,"costUsd":1e-6}"#,
    ));
    out.push(
        metered(
            "exponent-over-ceiling",
            "`1.000000000000001E15` is over the 1e15 ceiling: refused.",
            r#"{"tokens":1.000000000000001E15}"#,
        )
        // Over this ceiling, under another sanity ceiling (GAP-05).
        .rests_on(&["GAP-05"]),
    );
    out.push(metered(
        "integer-above-2-53",
        "9007199254740993 is over the ceiling: refused.",
        r#"{"tokens":9007199254740993}"#,
    ));
    out.push(metered(
        "custom-negative-zero",
        "`-0` in a custom dimension and `-0E0` in a standard one are zero: accepted.",
        r#"{"custom":{"gpuSeconds":-0},"ms":-0E0}"#,
    ));
    out.push(metered("just-over-ceiling-spelled-out", "1000000000000001 (the ceiling plus one, written out) is refused; the ceiling is inclusive.",
        r#"{"wallMs":1000000000000001}"#).rests_on(&["GAP-05"]));
    // QUOTA_EXCEEDED.reason is bounded in UTF-16 code units (GAP-05): an escaped
    // surrogate pair is one character and two units.
    let max = loom_kernel::limits::QUOTA_REASON_UTF16_UNITS_MAX;
    for (id, pairs) in [("at-bound", max / 2), ("over-bound", max / 2 + 1)] {
        let reason = "\\ud83d\\ude00".repeat(pairs);
        out.push(raw(Kind::Emit, &format!("quota-reason-astral-{id}"), &["INGRESS-29", "GAP-05"], "1.21.0",
            &format!("A QUOTA_EXCEEDED reason of {pairs} escaped surrogate pairs is {} UTF-16 units: the bound counts code units, not characters.", 2 * pairs),
            &format!(r#"{{"source":{{"kind":"flow"}},"log":{log},"eventType":"QUOTA_EXCEEDED","payload":{{"reason":"{reason}","dimension":"tokens"}}}}"#))
            // At the bound in UTF-16 units but over it in UTF-8 bytes: the unit is GAP-05's.
            .rests_on(if id == "at-bound" { &["GAP-05"] } else { &[] }));
    }
    out
}

fn runtime() -> Vec<Scenario> {
    let mut out = Vec::new();
    // The flow script itself arrives as raw text: `flowHash` is over its canonical JSON
    // (FOLD-34) and each emit is stamped with the digest of its canonical payload
    // (EMIT-02, EMIT-05).
    let script = r#"{"body":[{"payload":{"b":1E2,"a":[-0,1e-7,9007199254740993],"😀":"\u001F","\uff61":"\/"},"eventType":"PROGRESS","op":"emit"},{"on":"g","op":"suspend"},{"op":"ui","eventType":"CARD","payload":{"z":{"y":1,"x":2.50}}},{"op":"complete","output":{"b":1,"a":1E21}}],"flowId":"f"}"#;
    out.push(raw(Kind::Runtime, "emit-stamps-and-flow-hash", &["EMIT-05", "EMIT-02", "FOLD-34", "EMIT-04"], "1.23.0",
        "A flow script sent as raw text with unsorted keys and odd number spellings: flowHash hashes its canonical form, and each emit is stamped with the digest of its canonical payload.",
        &format!(r#"{{"steps":[{{"op":"start","flowId":"f","input":{{"y":-0,"x":1E2}}}},{{"payload":{{"b":"\/","a":1e-6}},"eventType":"g","op":"resume"}}],"flows":[{script}]}}"#)));
    let script = r#"{"flowId":"h","body":[{"op":"stream","eventType":"S","payload":{"k":[{"d":1,"c":2}],"\ue000":0,"\ud800\udc00":1}},{"op":"complete"}]}"#;
    out.push(raw(Kind::Runtime, "sha256-flow-hash-raw-script", &["FOLD-34", "EMIT-05", "EMIT-16"], "1.23.0",
        "With sha256FlowHash on, a raw script's sha256 flow hash and a stream emit's stamp over keys that sort differently by code point and by UTF-16.",
        &format!(r#"{{"flows":[{script}],"features":["sha256FlowHash"],"steps":[{{"op":"start","flowId":"h"}}]}}"#)));
    out
}
