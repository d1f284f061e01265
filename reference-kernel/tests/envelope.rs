//! The envelope decoder: strict, with errors that name the event index and the field,
//! and never a panic on any input (ABI-10).

use loom_kernel::envelope::{check_sequences, decode_log, EnvelopeError};
use loom_kernel::{fold, fold_owned, ExecutionState};
use proptest::prelude::*;

const GOOD: &str = r#"{"id":"e0","workflowId":"f","executionId":"x","eventType":"EXECUTION_STARTED","sequence":0,"timestamp":1000,"payload":{"input":1}}"#;

fn with(field_json: &str) -> String {
    GOOD.replacen(r#""payload":{"input":1}"#, field_json, 1)
}

#[test]
fn abi_10_envelope_round_trips_and_metadata_is_optional() {
    let one = decode_log(GOOD).unwrap();
    assert_eq!(one.len(), 1);
    assert!(one[0].metadata.is_none());
    let text = serde_json::to_string(&one[0]).unwrap();
    assert_eq!(text, GOOD);
    let with_meta = GOOD.replace(
        r#""payload":{"input":1}"#,
        r#""payload":{"input":1},"metadata":{"kernel":true}"#,
    );
    let e = &decode_log(&with_meta).unwrap()[0];
    assert!(e.is_kernel_stamped());
    assert_eq!(serde_json::to_string(e).unwrap(), with_meta);
}

#[test]
fn array_and_json_lines_decode_the_same() {
    let second = GOOD
        .replace(r#""sequence":0"#, r#""sequence":1"#)
        .replace("e0", "e1");
    let array = format!("[{GOOD},\n{second}]");
    let lines = format!("{GOOD}\n\n{second}\n");
    assert_eq!(decode_log(&array).unwrap(), decode_log(&lines).unwrap());
}

fn err(text: &str) -> EnvelopeError {
    decode_log(text).unwrap_err()
}

#[test]
fn malformed_envelopes_name_index_and_field() {
    let table: &[(String, Option<&str>, &str)] = &[
        (
            GOOD.replace(r#""sequence":0,"#, ""),
            Some("sequence"),
            "missing",
        ),
        (
            GOOD.replace(r#""sequence":0"#, r#""sequence":1.5"#),
            Some("sequence"),
            "non-negative integer",
        ),
        (
            GOOD.replace(r#""sequence":0"#, r#""sequence":-1"#),
            Some("sequence"),
            "non-negative integer",
        ),
        (
            GOOD.replace(r#""timestamp":1000"#, r#""timestamp":"now""#),
            Some("timestamp"),
            "epoch milliseconds",
        ),
        (
            GOOD.replace(r#""eventType":"EXECUTION_STARTED""#, r#""eventType":7"#),
            Some("eventType"),
            "expected a string",
        ),
        (
            GOOD.replace(r#""eventType":"EXECUTION_STARTED""#, r#""eventType":"""#),
            Some("eventType"),
            "must not be empty",
        ),
        (
            with(r#""payload":1,"extra":true"#),
            Some("extra"),
            "unknown envelope field",
        ),
        (
            with(r#""payload":1,"metadata":null"#),
            Some("metadata"),
            "expected an object",
        ),
        (with(r#""payload":1,"payload":2"#), Some("payload"), "twice"),
        (
            GOOD.replace(r#","payload":{"input":1}"#, ""),
            Some("payload"),
            "missing",
        ),
    ];
    for (text, field, problem) in table {
        let lines = format!("{GOOD}\n{text}\n");
        let e = err(&lines);
        assert_eq!(e.index, Some(1), "{text}");
        assert_eq!(e.field.as_deref(), *field, "{text}");
        assert!(e.problem.contains(problem), "{e}");
        // The same error inside an array.
        let array = format!("[{GOOD},{text}]");
        let e = err(&array);
        assert_eq!(
            (e.index, e.field.as_deref()),
            (Some(1), *field),
            "array: {e}"
        );
    }
}

#[test]
fn syntax_errors_and_non_objects_are_typed_errors() {
    assert_eq!(err("[1]").index, Some(0));
    assert!(err(&format!("[{GOOD},")).to_string().contains("event 1"));
    assert!(err("{\"id\":").index.is_some());
    assert!(err("[").to_string().contains("event 0"));
}

#[test]
fn sequence_check_names_the_first_gap() {
    let mut log = decode_log(&format!(
        "{GOOD}\n{}",
        GOOD.replace(r#""sequence":0"#, r#""sequence":2"#)
    ))
    .unwrap();
    let e = check_sequences(&log).unwrap_err();
    assert_eq!((e.index, e.field.as_deref()), (Some(1), Some("sequence")));
    assert!(e.problem.contains("expected sequence 1"));
    log[1].sequence = 1;
    log[1].execution_id = "other".into();
    assert_eq!(
        check_sequences(&log).unwrap_err().field.as_deref(),
        Some("executionId")
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, .. ProptestConfig::default() })]

    #[test]
    fn decoder_never_panics_on_any_text(text in any::<String>()) {
        let _ = decode_log(&text);
    }

    #[test]
    fn decoder_never_panics_on_mutated_logs(cut in 0usize..400, byte in any::<u8>()) {
        let mut bytes = format!("[{GOOD},{GOOD}]").into_bytes();
        let i = cut % bytes.len();
        bytes[i] = byte;
        if let Ok(text) = String::from_utf8(bytes) {
            if let Ok(events) = decode_log(&text) {
                let _ = fold(&events);
            }
        }
    }

    #[test]
    fn fold_never_panics_on_any_payload_or_type(
        types in prop::collection::vec(prop_oneof![
            Just("EXECUTION_STARTED".to_string()), Just("STEP_STARTED".to_string()), Just("STEP_FAILED".to_string()),
            Just("EXECUTION_RESUMED".to_string()), Just("DECISION_RECORDED".to_string()), Just("INBOX_RELEASED".to_string()),
            Just("MESSAGE_CONSUMED".to_string()), Just("RESOURCE_METERED".to_string()), Just("EXECUTION_SUSPENDED".to_string()),
            Just("INBOX_QUARANTINED".to_string()), Just("EXECUTION_MIGRATED".to_string()), any::<String>()], 0..20),
        payloads in prop::collection::vec(arb_payload(), 20),
        kernel in any::<bool>(),
    ) {
        let events: Vec<_> = types.iter().enumerate().map(|(i, t)| {
            let mut e = decode_log(GOOD).unwrap().remove(0);
            e.event_type = t.clone();
            e.sequence = i as u64;
            e.payload = payloads[i].clone();
            if kernel {
                e.metadata = Some(serde_json::from_str(r#"{"kernel":true,"flowEmit":"x"}"#).unwrap());
            }
            e
        }).collect();
        let s = fold_owned(ExecutionState::new(), events);
        let _ = s.canonical();
    }
}

fn arb_payload() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)),
        any::<String>().prop_map(Value::String),
    ];
    let keys = prop_oneof![
        Just("stepId".to_string()),
        Just("id".to_string()),
        Just("choice".to_string()),
        Just("on".to_string()),
        Just("topic".to_string()),
        Just("messageId".to_string()),
        Just("operator".to_string()),
        Just("auto".to_string()),
        Just("deliver".to_string()),
        Just("__proto__".to_string()),
        Just("carry".to_string()),
        Just("custom".to_string()),
        Just("tokens".to_string()),
        Just("waitId".to_string()),
        any::<String>(),
    ];
    leaf.prop_recursive(4, 40, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
