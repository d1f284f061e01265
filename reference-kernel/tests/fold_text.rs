//! FOLD-01: the fast paths give exactly what the strict decoder (`decode_log_strict`)
//! and then the fold of its envelopes give: `decode_log` the same envelopes, byte for
//! byte, and both the fold of those and the text path (`fold_text`) the same state,
//! diagnostics, or decoding error, at every schema version, over the payload shapes its fast handlers take and every shape they
//! must hand to the general handler: nulls, repeated and unknown fields, escapes,
//! `__proto__` keys spelled plainly or with `\u` escapes, floats, non-object payloads,
//! metadata, and lines the strict decoder refuses.

use loom_kernel::envelope::decode_log_strict;
use loom_kernel::fold::{
    fold_general_with_diagnostics, fold_text, fold_with_diagnostics, FoldVersion,
};
use loom_kernel::{decode_log, ExecutionState};
use proptest::prelude::*;

fn line(seq: usize, kind: &str, payload: &str, meta: Option<&str>) -> String {
    let meta = meta.map_or(String::new(), |m| format!(",\"metadata\":{m}"));
    format!(
        "{{\"id\":\"e{seq}\",\"workflowId\":\"w\",\"executionId\":\"x\",\"eventType\":\"{kind}\",\"sequence\":{seq},\"timestamp\":{},\"payload\":{payload}{meta}}}",
        1_700_000_000_000u64 + seq as u64
    )
}

/// The payload as `serde_json` prints it (compact, keys sorted, escapes as it writes
/// them): the form the text path's wire reader takes in one pass. `None` when the text
/// is not JSON.
fn normal(payload: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(payload)
        .ok()
        .map(|v| v.to_string())
}

/// `decode_log` gives the strict decoder's envelopes, byte for byte, or its error; and at
/// every version the text path and the fold of the decoded envelopes agree with the fold
/// of the strictly decoded ones.
fn agree(text: &str) {
    let strict = decode_log_strict(text);
    let decoded = decode_log(text);
    match (&strict, &decoded) {
        (Ok(a), Ok(b)) => {
            assert_eq!(
                a, b,
                "decode_log differs from the strict decoder on\n{text}"
            );
            for (a, b) in a.iter().zip(b) {
                assert_eq!(
                    serde_json::to_string(a).unwrap(),
                    serde_json::to_string(b).unwrap(),
                    "decode_log's envelope prints differently on\n{text}"
                );
            }
        }
        (Err(a), Err(b)) => assert_eq!(a, b, "decode_log's error differs on\n{text}"),
        _ => panic!("one decoder failed: {strict:?} vs {decoded:?} on\n{text}"),
    }
    for v in FoldVersion::all() {
        let whole = strict
            .clone()
            .map(|events| fold_general_with_diagnostics(v, &ExecutionState::new(), &events));
        // The fold of the decoded envelopes reads the hot kinds from their payload text.
        let of_decoded = decoded
            .clone()
            .map(|events| fold_with_diagnostics(v, &ExecutionState::new(), &events));
        let mut diags = Vec::new();
        let text_path =
            fold_text(ExecutionState::new(), text, v, &mut diags).map(|(s, _)| (s, diags));
        for (path, fast) in [
            ("the fold of decode_log's envelopes", &of_decoded),
            ("fold_text", &text_path),
        ] {
            match (&whole, fast) {
                (Ok((a, da)), Ok((b, db))) => {
                    // The canonical writer works from the state's parts; the tree is the
                    // reference it must give byte for byte (kept values as trees on the
                    // general handler's path, as text on the fast ones).
                    for s in [a, b] {
                        assert_eq!(
                            s.canonical(),
                            loom_kernel::canonical_string(&s.to_value()),
                            "{v}: the canonical writer differs from the tree on\n{text}"
                        );
                    }
                    assert_eq!(
                        a.canonical(),
                        b.canonical(),
                        "{v}: {path}: states differ on\n{text}"
                    );
                    assert_eq!(a, b, "{v}: {path}: states differ structurally on\n{text}");
                    assert_eq!(da, db, "{v}: {path}: diagnostics differ on\n{text}");
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{v}: {path}: errors differ on\n{text}"),
                _ => panic!("{v}: {path}: one path failed: {whole:?} vs {fast:?} on\n{text}"),
            }
        }
    }
}

/// Payloads of the hot kinds, and of the kinds around them, that the fast handlers must
/// fold as the general handler does, or leave to it.
const PAYLOADS: &[(&str, &str)] = &[
    (
        "STEP_STARTED",
        r#"{"attempt":1,"input":{"a":1},"kind":"llm","stepId":"s","toolId":"t"}"#,
    ),
    (
        "STEP_STARTED",
        r#"{"stepId":"s","input":{"b":1,"a":[1, 2]}}"#,
    ),
    (
        "STEP_STARTED",
        r#"{"stepId":"s","input":null,"toolId":null,"kind":7,"attempt":null}"#,
    ),
    ("STEP_STARTED", r#"{"stepId":"s","attempt":2.0}"#),
    ("STEP_STARTED", r#"{"stepId":"s","attempt":-1}"#),
    ("STEP_STARTED", r#"{"stepId":"s","attempt":-0}"#),
    (
        "STEP_STARTED",
        r#"{"stepId":"s","attempt":18446744073709551616}"#,
    ),
    ("STEP_STARTED", r#"{"stepId":"s","attempt":3}"#),
    ("STEP_STARTED", r#"{"stepId":"s","stepId":"t"}"#),
    ("STEP_STARTED", r#"{"stepId":"","input":1}"#),
    ("STEP_STARTED", r#"{"stepId":"__proto__"}"#),
    (
        "STEP_STARTED",
        r#"{"stepId":"s","input":{"__proto__":{"x":1},"y":2}}"#,
    ),
    (
        "STEP_STARTED",
        r#"{"stepId":"s","junk":{"\u005f_proto__":1}}"#,
    ),
    (
        "STEP_STARTED",
        r#"{"stepId":"s\u0041","input":"line\nbreak \"quoted\""}"#,
    ),
    ("STEP_STARTED", r#"{"stepId":7}"#),
    ("STEP_STARTED", r#"["s"]"#),
    ("STEP_STARTED", r#"null"#),
    (
        "STEP_STARTED",
        r#"{"stepId":"s","input":1.5e3,"toolId":"a\"b"}"#,
    ),
    (
        "STEP_COMPLETED",
        r#"{"output":{"text":"done","tokens":412},"stepId":"s"}"#,
    ),
    ("STEP_COMPLETED", r#"{"stepId":"s"}"#),
    ("STEP_COMPLETED", r#"{"stepId":"s","output":null}"#),
    ("STEP_COMPLETED", r#"{"stepId":"s","output":-0.0}"#),
    (
        "STEP_COMPLETED",
        r#"{"stepId":"s","output":{"z":1,"a":{"__proto__":null}}}"#,
    ),
    (
        "STEP_COMPLETED",
        r#"{"stepId":"fresh","output":[true,false,null]}"#,
    ),
    ("STEP_COMPLETED", r#"{"stepId":"s","output":1,"output":2}"#),
    (
        "STEP_FAILED",
        r#"{"stepId":"s","error":"boom","channel":"c","payload":{"a":1}}"#,
    ),
    ("STEP_RETRYING", r#"{"stepId":"s","attempt":4}"#),
    (
        "DECISION_RECORDED",
        r#"{"choice":{"model":"small"},"context":{"len":412},"id":"d","policy":{"name":"router","propensity":0.9}}"#,
    ),
    ("DECISION_RECORDED", r#"{"id":"d","choice":"again"}"#),
    (
        "DECISION_RECORDED",
        r#"{"id":"d2","choice":null,"context":null,"policy":null}"#,
    ),
    ("DECISION_RECORDED", r#"{"id":"d3","context":1}"#),
    (
        "DECISION_RECORDED",
        r#"{"id":"d4","choice":{"b":1,"a":2},"innerSteps":["s"]}"#,
    ),
    ("DECISION_RECORDED", r#"{"id":"","choice":1}"#),
    ("DECISION_RECORDED", r#"{"id":"d5","choice":1,"choice":2}"#),
    (
        "DECISION_RECORDED",
        r#"{"id":"d6","choice":{"__proto__":1}}"#,
    ),
    ("DECISION_RECORDED", r#"{"id":"d7","choice":1e400}"#),
    ("EXECUTION_SUSPENDED", r#"{"on":"next","wakeAt":5}"#),
    ("EXECUTION_SUSPENDED", r#"{"on":"next"}"#),
    (
        "EXECUTION_SUSPENDED",
        r#"{"on":"g","wakeAt":-0,"condition":{"b":1,"a":2},"waits":[{"id":"w"}]}"#,
    ),
    (
        "EXECUTION_SUSPENDED",
        r#"{"on":"g","wakeAt":-5,"condition":[1],"waits":{"a":1}}"#,
    ),
    (
        "EXECUTION_SUSPENDED",
        r#"{"on":"g","wakeAt":5.0,"condition":null,"waits":null}"#,
    ),
    ("EXECUTION_SUSPENDED", r#"{"on":"g","wakeAt":1e3}"#),
    (
        "EXECUTION_SUSPENDED",
        r#"{"on":"g","wakeAt":18446744073709551615}"#,
    ),
    ("EXECUTION_SUSPENDED", r#"{"on":"g","wakeAt":"5"}"#),
    ("EXECUTION_SUSPENDED", r#"{"on":""}"#),
    ("EXECUTION_SUSPENDED", r#"{"on":7}"#),
    ("EXECUTION_SUSPENDED", r#"{"on":"a","on":"b"}"#),
    ("EXECUTION_SUSPENDED", r#""next""#),
    ("EXECUTION_RESUMED", r#"{"approved":true}"#),
    ("EXECUTION_RESUMED", r#"null"#),
    ("ui.progress", r#"{"pct":1,"__proto__":{}}"#),
    ("ui.progress", r#"[1, 2 ,3]"#),
];

const METADATA: &[Option<&str>] = &[
    None,
    Some(r#"{"flowEmit":"00ab"}"#),
    Some(r#"{"flowEmit":"__proto__"}"#),
    Some(r#"{"kernel":true}"#),
    Some(r#"{"kernel":true,"flowEmit":"00ab"}"#),
    Some(r#"{"flowEmit":7}"#),
    Some(r#"{}"#),
    // Every kind of value, which the wire path builds from the scanned fields (strings
    // and literals) or parses (numbers, containers); escapes, a key twice and more
    // fields than a scan records, which are not normal and take another path.
    Some(r#"{"a":null,"b":false,"c":true,"d":"","e":"é😀","f":-0.5,"g":1e3}"#),
    Some(r#"{"h":18446744073709551615,"i":-9223372036854775808,"j":[1,{"k":"l"}],"m":{}}"#),
    Some(r#"{"kernel":"true","flowEmit":null,"n":"a\"b","o\u0041":1}"#),
    Some(r#"{"flowEmit":"a","flowEmit":"b"}"#),
    Some(r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"kernel":true}"#),
];

/// Each payload alone after a start, under each metadata, and all of them in one log.
#[test]
fn fold_01_text_path_agrees_on_every_payload_shape() {
    let start = line(0, "EXECUTION_STARTED", r#"{"input":{"goal":"g"}}"#, None);
    let mut all = vec![start.clone()];
    for (kind, payload) in PAYLOADS {
        // Each payload as written, and in the writer's normal form, which the wire
        // reader takes (metadata too).
        let normalized = normal(payload);
        for payload in std::iter::once(*payload).chain(normalized.as_deref()) {
            for meta in METADATA {
                let text = format!("{start}\n{}\n", line(1, kind, payload, *meta));
                agree(&text);
                all.push(line(all.len(), kind, payload, *meta));
                if let Some(m) = meta.and_then(normal) {
                    // Alone too: in the whole log below, a line the strict decoder
                    // refuses ends the comparison there.
                    agree(&format!("{start}\n{}\n", line(1, kind, payload, Some(&m))));
                    all.push(line(all.len(), kind, payload, Some(&m)));
                }
            }
        }
    }
    agree(&(all.join("\n") + "\n"));
    // The same log with CRLF line ends, blank lines and a byte order mark.
    agree(&format!("\u{feff}{}\r\n\r\n", all.join("\r\n\n")));
}

/// Lines the strict decoder refuses are refused with the same error (line, field, hint),
/// wherever in the log they stand; lines it accepts with a doubt (metadata `null`, an
/// unknown field, an empty kind, a float sequence) too.
#[test]
fn fold_01_text_path_refuses_what_the_strict_decoder_refuses() {
    let ok = line(0, "EXECUTION_STARTED", "{}", None);
    for bad in [
        r#"{"id":"e1","workflowId":"w","executionId":"x","eventType":"STEP_STARTED","sequence":1,"timestamp":1,"payload":{},"metadata":null}"#,
        r#"{"id":"e1","workflowId":"w","executionId":"x","eventType":"STEP_STARTED","sequence":1,"timestamp":1,"payload":{},"extra":1}"#,
        r#"{"id":"e1","workflowId":"w","executionId":"x","eventType":"","sequence":1,"timestamp":1,"payload":{}}"#,
        r#"{"id":"e1","workflowId":"w","executionId":"x","eventType":"A","sequence":1.0,"timestamp":1,"payload":{}}"#,
        r#"{"id":"e1","workflowId":"w","executionId":"x","eventType":"A","sequence":-1,"timestamp":1,"payload":{}}"#,
        r#"{"id":"e1","workflowId":"w","executionId":"x","eventType":"A","sequence":1,"timestamp":1.5,"payload":{}}"#,
        r#"{"id":"e1","workflowId":"w","executionId":"x","eventType":"A","sequence":1,"timestamp":18446744073709551615,"payload":{}}"#,
        r#"{"id":"e1","workflowId":"w","executionId":"x","eventType":"A","sequence":1,"timestamp":1}"#,
        r#"{"id":"e1","id":"e2","workflowId":"w","executionId":"x","eventType":"A","sequence":1,"timestamp":1,"payload":{}}"#,
        r#"{"id":1,"workflowId":"w","executionId":"x","eventType":"A","sequence":1,"timestamp":1,"payload":{}}"#,
        r#"{"id":"e1","workflowId":"w","executionId":"x","eventType":"A","sequence":1,"timestamp":1,"payload":{},"metadata":[]}"#,
        r#"{"id":"e1","workflowId":"w","executionId":"x","eventType":"A","sequence":1,"timestamp":1,"payload":{} } trailing"#,
        r#"{"id":"e1","workflowId":"w""#,
        "{",
        "[1]",
        "not json",
    ] {
        agree(&format!("{ok}\n{bad}\n{ok}\n"));
        agree(&format!("{bad}\n"));
        agree(&format!("{ok}\n{bad}"));
    }
    // A log given as a JSON array takes the whole-log path, and agrees.
    agree(&format!("[{ok},\n{ok}]"));
    agree("");
    agree("\n\n");
}

/// Envelopes in the wire form and beside it: the wire reader takes a line only when the
/// strict decoder reads it as the same envelope, and leaves every other line (a number
/// or string it must not read, a space, a repeated or missing key) to the paths behind it,
/// which refuse or take it as the strict decoder does.
#[test]
fn fold_01_wire_reader_takes_only_what_the_strict_decoder_reads_alike() {
    let ok = line(0, "EXECUTION_STARTED", "{}", None);
    let head = |id: &str, seq: &str, ts: &str| {
        format!(
            "{{\"id\":{id},\"workflowId\":\"w\",\"executionId\":\"x\",\"eventType\":\"STEP_STARTED\",\"sequence\":{seq},\"timestamp\":{ts},\"payload\":{{\"stepId\":\"s\"}}}}"
        )
    };
    let mut cases = Vec::new();
    for ts in [
        "1",
        "0",
        "-0",
        "-5",
        "-05",
        "05",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "1.0",
        "1e3",
        "-",
        "\"1\"",
    ] {
        cases.push(head("\"e1\"", "1", ts));
    }
    for seq in [
        "1",
        "01",
        "18446744073709551615",
        "18446744073709551616",
        "1.0",
        "-1",
        "1e0",
    ] {
        cases.push(head("\"e1\"", seq, "1"));
    }
    for id in [
        "\"\"",
        "\"é😀\"",
        "\"a\\\"b\"",
        "\"\\u0041\"",
        "\"tab\there\"",
        "1",
        "null",
    ] {
        cases.push(head(id, "1", "1"));
    }
    let base = head("\"e1\"", "1", "1");
    cases.push(base.replace("{\"stepId\"", "{ \"stepId\""));
    cases.push(base.replace(",\"sequence\"", ", \"sequence\""));
    cases.push(format!("{base} "));
    cases.push(base.replace("}}", "},\"metadata\":{}}"));
    cases.push(base.replace("}}", "},\"metadata\":{\"b\":1,\"a\":2}}"));
    cases.push(base.replace("}}", "},\"metadata\":null}"));
    cases.push(base.replace("}}", "},\"metadata\":{},\"metadata\":{}}"));
    cases.push(base.replace("}}", "},\"extra\":1}"));
    cases.push(base.replace("\"eventType\":\"STEP_STARTED\"", "\"eventType\":\"\""));
    cases.push(base.replace(
        "\"eventType\":\"STEP_STARTED\"",
        "\"eventType\":\"ui.progress\"",
    ));
    cases.push(base.replace(
        "{\"stepId\":\"s\"}",
        "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"stepId\":\"s\"}",
    ));
    cases.push(base.replace(
        "{\"stepId\":\"s\"}",
        "{\"input\":{\"deep\":[[[[1]]]]},\"stepId\":\"s\"}",
    ));
    cases.push(base.replace("{\"stepId\":\"s\"}", "{\"input\":0.1,\"stepId\":\"s\"}"));
    cases.push(base.replace("{\"stepId\":\"s\"}", "{\"input\":1.50,\"stepId\":\"s\"}"));
    cases.push(base.replace("{\"stepId\":\"s\"}", "{\"stepId\":\"s\",\"attempt\":1}"));
    cases.push(base.replace(
        "\"payload\":{\"stepId\":\"s\"}",
        "\"payload\":{\"stepId\":\"s\"},\"payload\":null",
    ));
    cases.push(base.replace(",\"payload\":{\"stepId\":\"s\"}", ""));
    for case in &cases {
        agree(&format!("{ok}\n{case}\n{ok}\n"));
        agree(&format!("{ok}\r\n{case}\r\n"));
    }
    // Metadata with more fields than the reader records, on a custom kind's stamp.
    let many: Vec<String> = (0..12).map(|i| format!("\"k{i:02}\":{i}")).collect();
    let stamp = format!("{{\"flowEmit\":\"ab\",{}}}", many.join(","));
    agree(&format!(
        "{ok}\n{}\n",
        line(1, "ui.progress", "{}", Some(&stamp))
    ));
}

/// The canonical writer gives what the tree gives for states read from snapshots: frame
/// fields it does not write itself (one of them sharing a written field's name, where
/// the tree keeps one), keys outside the BMP and above U+E000 (UTF-16 order is not byte
/// order there), a variable named `_decisions` beside the decision map, big integers.
#[test]
fn fold_01_canonical_writer_agrees_with_the_tree_on_snapshot_states() {
    let states = [
        r#"{"status":"running","frames":{"\uff61":{"status":"running","attempt":1},"\ud83d\ude00":{"status":"completed","attempt":9007199254740993,"output":{"b":1e21,"a":-0.0},"zeta":[1],"\u00e9":null}},"variables":{"_decisions":{"d":{"choice":1}},"\uff61x":1,"\ud83d\ude00":2,"_a":{"z":1,"a":[0.1]}},"sequence":3,"startedAt":-1,"updatedAt":null}"#,
        r#"{"status":"pending","frames":{},"variables":{},"sequence":null,"startedAt":null,"updatedAt":null}"#,
        r#"{"status":"failed","frames":{"s":{"status":"failed","attempt":2,"error":"e","errorChannel":"c\n","errorPayload":null,"toolId":"t","kind":"k"}},"variables":{"z":null},"sequence":0,"startedAt":0,"updatedAt":0}"#,
    ];
    for text in states {
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        let state = ExecutionState::from_value(&value).unwrap();
        assert_eq!(
            state.canonical(),
            loom_kernel::canonical_string(&state.to_value()),
            "{text}"
        );
    }
    // A frame field from a snapshot named like one the frame writes itself, and a
    // `_decisions` variable beside the map: the tree's answer either way.
    let mut state = ExecutionState::from_value(&serde_json::from_str(states[2]).unwrap()).unwrap();
    let frame = state.frames.get_mut("s").unwrap();
    frame
        .extra
        .insert("status".into(), serde_json::json!("odd"));
    state
        .variables
        .rest
        .insert("_decisions".into(), serde_json::json!({"x": 1}));
    state.variables.decisions = Some(Default::default());
    assert_eq!(
        state.canonical(),
        loom_kernel::canonical_string(&state.to_value())
    );
    frame_less(&mut state);
    assert_eq!(
        state.canonical(),
        loom_kernel::canonical_string(&state.to_value())
    );
}

/// The canonical writer's names of frame statuses are the serialization's.
#[test]
fn fold_01_frame_status_names_are_the_serialized_ones() {
    use loom_kernel::fold::FrameStatus::*;
    for status in [Running, Retrying, Indoubt, Completed, Failed, Cancelled] {
        assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
    }
}

fn frame_less(state: &mut ExecutionState) {
    state.frames.clear();
}

fn json_scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        Just("0.5".to_owned()),
        Just("-0.0".to_owned()),
        Just("1e2".to_owned()),
        "[a-z_]{0,6}".prop_map(|s| format!("\"{s}\"")),
        Just("\"\\u005f_proto__\"".to_owned()),
        Just("\"a\\nb\"".to_owned()),
    ]
}

fn json_text() -> impl Strategy<Value = String> {
    json_scalar().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("a".to_owned()),
                        Just("b".to_owned()),
                        Just("__proto__".to_owned()),
                        Just("\\u005f_proto__".to_owned()),
                        Just("stepId".to_owned()),
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|kv| format!(
                "{{{}}}",
                kv.iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            )),
        ]
    })
}

/// A payload of a hot kind: its known fields (each maybe absent, `null`, of another
/// type or repeated) in any order, with extra fields.
fn hot_payload() -> impl Strategy<Value = (String, String)> {
    let kinds = prop_oneof![
        Just("STEP_STARTED"),
        Just("STEP_COMPLETED"),
        Just("DECISION_RECORDED"),
        Just("EXECUTION_SUSPENDED"),
        Just("EXECUTION_RESUMED"),
        Just("STEP_FAILED"),
        Just("x.custom"),
    ];
    let field = prop_oneof![
        Just("stepId"),
        Just("id"),
        Just("input"),
        Just("output"),
        Just("choice"),
        Just("context"),
        Just("policy"),
        Just("attempt"),
        Just("toolId"),
        Just("kind"),
        Just("on"),
        Just("wakeAt"),
        Just("condition"),
        Just("waits"),
        Just("extra"),
    ];
    let value = prop_oneof![
        3 => prop_oneof![Just("\"s1\"".to_owned()), Just("\"s2\"".to_owned())],
        2 => json_text(),
    ];
    (
        kinds,
        prop::collection::vec((field, value), 0..6),
        any::<bool>(),
    )
        .prop_map(|(kind, fields, spaced)| {
            let sep = if spaced { ", " } else { "," };
            let body = fields
                .iter()
                .map(|(k, v)| format!("\"{k}\":{v}"))
                .collect::<Vec<_>>()
                .join(sep);
            (kind.to_owned(), format!("{{{body}}}"))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Generated logs of hot-kind payloads, some stamped, agree at every version.
    #[test]
    fn fold_01_text_path_agrees_on_generated_logs(
        events in prop::collection::vec(
            (hot_payload(), prop::option::of(0usize..METADATA.len()), any::<bool>()),
            0..12,
        )
    ) {
        let mut lines = vec![line(0, "EXECUTION_STARTED", "{}", None)];
        for ((kind, payload), meta, normalize) in &events {
            let meta = meta.and_then(|i| METADATA[i]);
            // Half the payloads in the writer's normal form, which the wire reader takes.
            let payload = match normal(payload).filter(|_| *normalize) {
                Some(p) => p,
                None => payload.clone(),
            };
            lines.push(line(lines.len(), kind, &payload, meta));
        }
        agree(&lines.join("\n"));
    }
}

/// FOLD-01, found by the fold_total campaign: a line the raw read takes must be one the
/// strict decoder reads. serde_json captures a raw value by its syntax alone, so a number
/// past `f64`'s range and nesting past the recursion limit passed the text path (an
/// unknown kind's payload is never read, a hot kind's extra field never built) while the
/// strict decoder refused the log; so did a lone surrogate escape. Each in every place a value stands: an unknown kind's
/// payload, a hot kind's unread field, metadata; spaced (the raw path) and compact.
#[test]
fn fold_01_text_path_refuses_numbers_and_nesting_the_strict_decoder_refuses() {
    let start = line(0, "EXECUTION_STARTED", "{}", None);
    let big_digits = "9".repeat(400);
    let values = [
        "1e999".to_owned(),
        "-2421e999".to_owned(),
        "1.5E+400".to_owned(),
        big_digits.clone(),
        format!("-{big_digits}"),
        "1e-999".to_owned(),
        "1e308".to_owned(),
        // A lone surrogate escape: syntax the raw capture passes, a string the strict
        // decoder cannot build (props/regressions/fold_total/cut-unicode-escape-*).
        "\"__proto_\\ud800_\"".to_owned(),
        "\"\\udc00\"".to_owned(),
    ];
    for value in &values {
        for (kind, payload, meta) in [
            ("x.custom", format!("{{\"n\": {value}}}"), None),
            ("x.custom", format!("{{\"n\":{value}}}"), None),
            ("x.custom", value.clone(), None),
            (
                "STEP_STARTED",
                format!("{{\"extra\": {value}, \"stepId\": \"s\"}}"),
                None,
            ),
            (
                "STEP_STARTED",
                format!("{{\"input\": [{value}], \"stepId\": \"s\"}}"),
                None,
            ),
            (
                "x.custom",
                "{}".to_owned(),
                Some(format!("{{\"n\": {value}}}")),
            ),
        ] {
            agree(&format!(
                "{start}\n{}\n",
                line(1, kind, &payload, meta.as_deref())
            ));
        }
    }
    // Nesting: the strict decoder's edge, found from it, is the raw read's too.
    let nested = |d: usize| "[".repeat(d) + &"]".repeat(d);
    let accepts = |d: usize| {
        let text = format!("{start}\n{}\n", line(1, "x.custom", &nested(d), None));
        decode_log_strict(&text).is_ok()
    };
    let edge = (1..200)
        .find(|&d| !accepts(d))
        .expect("the strict decoder has a limit")
        - 1;
    assert_eq!(edge, loom_kernel::envelope::VALUE_NESTING_MAX);
    for d in edge - 1..=edge + 2 {
        for (kind, payload) in [
            ("x.custom", format!("{{\"a\": {}}}", nested(d - 1))),
            ("x.custom", nested(d)),
            (
                "STEP_STARTED",
                format!("{{\"stepId\": \"s\", \"x\": {}}}", nested(d - 1)),
            ),
            (
                "STEP_COMPLETED",
                format!("{{\"output\": {}, \"stepId\": \"s\"}}", nested(d - 1)),
            ),
        ] {
            agree(&format!("{start}\n{}\n", line(1, kind, &payload, None)));
        }
        let meta = format!("{{\"flowEmit\": \"d\", \"x\": {}}}", nested(d - 1));
        agree(&format!(
            "{start}\n{}\n",
            line(1, "x.custom", "{}", Some(&meta))
        ));
    }
}
