//! Canonical JSON (RFC 8785) and digests: known answers reasoned from the RFC, from
//! ECMAScript's Number::toString, and from the published FNV-1a and SHA-256 values.
//! The cross-check against a JavaScript engine is in canonical_node.rs (it needs Node.js).

use loom_kernel::canonical::{canonical_string, canonicalize_text, utf16_cmp};
use loom_kernel::digest::{
    emit_digest, emit_digest_input, fnv1a64_hex, sha256_flow_hash, sha256_hex,
};
use proptest::prelude::*;
use serde_json::{json, Value};

fn canon_text(text: &str) -> String {
    canonicalize_text(text).unwrap()
}

#[test]
fn rfc8785_example_object() {
    // RFC 8785 section 3.2.2's input and its canonical output.
    let input = r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}"#;
    assert_eq!(
        canon_text(input),
        r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
    );
}

#[test]
fn ecmascript_number_forms() {
    let table: &[(&str, &str)] = &[
        ("0", "0"),
        ("-0", "0"),
        ("-0.0", "0"),
        ("1", "1"),
        ("-1.5", "-1.5"),
        ("1e21", "1e+21"),
        ("1e20", "100000000000000000000"),
        ("999999999999999900000", "999999999999999900000"),
        ("1e-7", "1e-7"),
        ("1e-6", "0.000001"),
        ("0.1", "0.1"),
        ("123.456e2", "12345.6"),
        ("9007199254740992", "9007199254740992"),
        // 2^53 + 1 is not a double: JavaScript reads it as 2^53.
        ("9007199254740993", "9007199254740992"),
        ("5e-324", "5e-324"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("-1e-7", "-1e-7"),
        ("1.5e300", "1.5e+300"),
        // Two shortest spellings are equally close: ECMAScript takes the even digit
        // (found by the canonical_json fuzz target).
        ("562949953421327.25", "562949953421327.2"),
        ("216398094627271.125", "216398094627271.12"),
        // A power of two: the round-trip interval is lopsided (found by the same target).
        ("7.291122019556398e-304", "7.291122019556398e-304"),
    ];
    for (input, expected) in table {
        assert_eq!(canon_text(input), *expected, "{input}");
    }
}

#[test]
fn strings_escape_minimally() {
    assert_eq!(canonical_string(&json!("a/b")), r#""a/b""#);
    assert_eq!(canonical_string(&json!("tab\there")), r#""tab\there""#);
    assert_eq!(canonical_string(&json!("\u{1}\u{1f}")), r#""\u0001\u001f""#);
    assert_eq!(canonical_string(&json!("\u{7f}")), "\"\u{7f}\"");
    assert_eq!(canonical_string(&json!("héllo ✓ 😀")), "\"héllo ✓ 😀\"");
    assert_eq!(
        canonical_string(&json!("\u{8}\u{c}\r\n\"\\")),
        r#""\b\f\r\n\"\\""#
    );
}

#[test]
fn lone_surrogates_are_refused_with_a_position() {
    // serde_json values cannot hold a lone UTF-16 surrogate; such input is an error,
    // never a silent replacement (docs/decisions/0002-canonical-json.md).
    let err = canonicalize_text(r#"{"a": "\ud800"}"#).unwrap_err();
    assert!(
        err.starts_with("not JSON") && err.contains("column"),
        "{err}"
    );
    // A valid surrogate pair is one character.
    assert_eq!(canon_text(r#""\ud83d\ude00""#), "\"😀\"");
}

#[test]
fn keys_sorted_by_utf16_code_units_at_every_depth() {
    // In UTF-8 bytes U+E000 sorts before U+1F600; in UTF-16 the emoji is the surrogate
    // pair D83D DE00, which sorts before E000. RFC 8785 uses the UTF-16 order.
    let v = json!({"\u{e000}": 1, "😀": 2, "b": {"z": 1, "a": [ {"y": 1, "x": 2} ]}, "a": 0, "B": 3, "": 4});
    let expected = format!(
        r#"{{"":4,"B":3,"a":0,"b":{{"a":[{{"x":2,"y":1}}],"z":1}},"😀":2,"{}":1}}"#,
        '\u{e000}'
    );
    assert_eq!(canonical_string(&v), expected);
    assert_eq!(utf16_cmp("😀", "\u{e000}"), std::cmp::Ordering::Less);
    assert_eq!(
        "😀".cmp("\u{e000}"),
        std::cmp::Ordering::Greater,
        "byte order differs, which is why it matters"
    );
}

#[test]
fn fnv1a64_known_answers() {
    assert_eq!(fnv1a64_hex(b""), "cbf29ce484222325");
    assert_eq!(fnv1a64_hex(b"a"), "af63dc4c8601ec8c");
    assert_eq!(fnv1a64_hex(b"foobar"), "85944171f73967e8");
}

#[test]
fn emit_02_digest_input_and_form() {
    let payload = json!({"b": 1, "a": [true, null]});
    assert_eq!(
        emit_digest_input(3, "progress", &payload),
        r#"3|["progress",{"a":[true,null],"b":1}]"#
    );
    let d = emit_digest(3, "progress", &payload);
    assert_eq!(d, fnv1a64_hex(br#"3|["progress",{"a":[true,null],"b":1}]"#));
    assert_eq!(d.len(), 16);
    assert!(d
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
}

#[test]
fn emit_03_segment_changes_the_digest() {
    let p = json!({"x": 1});
    assert_ne!(emit_digest(0, "e", &p), emit_digest(1, "e", &p));
}

#[test]
fn emit_04_key_order_does_not_change_the_digest() {
    let a: Value = serde_json::from_str(r#"{"a":1,"b":{"c":2,"d":3}}"#).unwrap();
    let b: Value = serde_json::from_str(r#"{"b":{"d":3,"c":2},"a":1}"#).unwrap();
    assert_eq!(emit_digest(0, "e", &a), emit_digest(0, "e", &b));
}

#[test]
fn sha256_known_answers() {
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        sha256_flow_hash(&json!({})),
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    );
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn canonical_form_is_idempotent_and_round_trips(v in arb_json()) {
        let once = canonical_string(&v);
        let reparsed: Value = serde_json::from_str(&once).unwrap();
        prop_assert_eq!(canonical_string(&reparsed), once.clone());
        // Numbers compare as doubles (the canonical form's number model).
        prop_assert_eq!(canonical_string(&v), once);
    }

    #[test]
    fn numbers_round_trip_exactly_as_doubles(x in any::<f64>().prop_filter("finite", |x| x.is_finite())) {
        let text = canonical_string(&json!(x));
        let back: f64 = text.parse().unwrap();
        prop_assert_eq!(back, if x == 0.0 { 0.0 } else { x });
    }
}
