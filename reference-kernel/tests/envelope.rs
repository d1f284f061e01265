//! The envelope decoder: strict, with errors that name the event index and the field,
//! and never a panic on any input (ABI-10).

use loom_kernel::envelope::{check_sequences, decode_log, EnvelopeError, EventEnvelope};
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
        // The same error from the envelope as a JSON value (the stores' and protocols'
        // path), where the text has no repeated key a value cannot hold.
        if !problem.contains("twice") {
            let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
            let e = EventEnvelope::from_value(&value, 1).unwrap_err();
            assert_eq!(
                (e.index, e.field.as_deref(), e.line),
                (Some(1), *field, None),
                "value: {e}"
            );
            assert!(e.problem.contains(problem), "value: {e}");
        }
    }
}

/// `from_value` decodes what the text decoder decodes, field for field.
#[test]
fn abi_10_from_value_decodes_as_the_text_decoder_does() {
    let texts = [
        GOOD.to_owned(),
        with(r#""payload":null,"metadata":{"kernel":true,"flowEmit":"d"}"#),
        with(r#""payload":[1,{"a":"\u00e9"}]"#),
        GOOD.replace(r#""sequence":0"#, r#""sequence":18446744073709551615"#),
        GOOD.replace(r#""timestamp":1000"#, r#""timestamp":-5"#),
    ];
    for text in texts {
        let from_text = decode_log(&text).expect("decodes").remove(0);
        let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let from_value = EventEnvelope::from_value(&value, 0).expect("decodes");
        assert_eq!(from_value, from_text, "{text}");
    }
    let e = EventEnvelope::from_value(&serde_json::json!("x"), 3).unwrap_err();
    assert_eq!(e.index, Some(3));
    assert!(
        e.problem.contains("expected an event envelope object"),
        "{e}"
    );
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

#[test]
fn abi_10_errors_name_the_line_of_the_log_text() {
    let second = GOOD.replace(r#""sequence":0"#, r#""sequence":1"#);
    // JSON lines: blank lines count, the column is the line's own.
    let e = err(&format!("\n{GOOD}\n\n{}\n", &second[..54]));
    assert_eq!(
        (e.index, e.line, e.column),
        (Some(1), Some(4), Some(54)),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("event 1 (line 4, column 54): EOF"),
        "{e}"
    );
    assert!(
        !e.problem.contains(" at line "),
        "no second, relative position: {e}"
    );
    assert!(e.hint().contains("cut short"), "{}", e.hint());
    // A field error names its line.
    let e = err(&format!(
        "{GOOD}\n{}",
        GOOD.replace(r#""timestamp":1000"#, r#""timestamp":true"#)
    ));
    assert_eq!(
        (e.index, e.line, e.field.as_deref()),
        (Some(1), Some(2), Some("timestamp"))
    );
    assert_eq!(
        e.to_string(),
        "event 1 (line 2): field `timestamp`: expected integer epoch milliseconds, found a boolean"
    );
    // A pretty-printed array: the line where the bad value is.
    let v: serde_json::Value = serde_json::from_str(GOOD).unwrap();
    let mut bad = v.clone();
    bad["sequence"] = serde_json::json!(-3);
    let text = serde_json::to_string_pretty(&vec![v, bad]).unwrap();
    let line = text.lines().position(|l| l.contains("-3")).unwrap() + 1;
    let e = err(&format!("\n\n{text}"));
    assert_eq!((e.index, e.line), (Some(1), Some(line + 2)), "{e}");
    assert!(e.problem.contains("found the number -3"), "{e}");
}

#[test]
fn abi_10_a_byte_order_mark_is_skipped_and_pretty_arrays_decode() {
    let second = GOOD.replace(r#""sequence":0"#, r#""sequence":1"#);
    let want = decode_log(&format!("{GOOD}\n{second}")).unwrap();
    let values: Vec<serde_json::Value> = [GOOD, second.as_str()]
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
    let pretty = serde_json::to_string_pretty(&values).unwrap();
    for text in [
        format!("\u{feff}{GOOD}\n{second}"),
        format!("\u{feff}{pretty}"),
        format!("\u{feff}\n  {pretty}\n"),
        pretty.clone(),
    ] {
        assert_eq!(decode_log(&text).unwrap(), want, "{text:?}");
    }
    // Only a leading mark is skipped; one elsewhere is a syntax error.
    let e = err(&format!("{GOOD}\n\u{feff}{second}"));
    assert_eq!((e.index, e.line), (Some(1), Some(2)), "{e}");
}

#[test]
fn abi_10_pretty_printed_envelopes_outside_an_array_are_refused_with_a_hint() {
    let v: serde_json::Value = serde_json::from_str(GOOD).unwrap();
    let one = serde_json::to_string_pretty(&v).unwrap();
    let e = err(&format!("{one}\n{one}\n"));
    assert_eq!((e.index, e.line), (Some(0), Some(1)), "{e}");
    assert!(e.problem.contains("only the start of a JSON object"), "{e}");
    assert!(e.hint().contains("JSON array"), "{}", e.hint());
}

#[test]
fn for_each_envelope_streams_what_decode_log_returns() {
    let second = GOOD.replace(r#""sequence":0"#, r#""sequence":1"#);
    for text in [format!("{GOOD}\n{second}"), format!("[{GOOD},{second}]")] {
        let mut seen = Vec::new();
        let n = loom_kernel::envelope::for_each_envelope(&text, &mut |e| {
            seen.push(e);
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 2);
        assert_eq!(seen, decode_log(&text).unwrap());
    }
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
            e.payload = payloads[i].clone().into();
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
