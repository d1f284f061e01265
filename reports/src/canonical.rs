//! The canonical JSON form that the report digest is computed over.
//!
//! We write it ourselves instead of trusting `serde_json::to_string`: with the
//! `preserve_order` feature (which Cargo unifies across the workspace) a
//! `Value`'s object keys keep insertion order, so the same report could
//! serialize two ways. Here keys are sorted recursively by UTF-16 code units
//! (the RFC 8785 order), there is no whitespace, strings use serde_json's
//! escaping and numbers serde_json's shortest round-trip formatting.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Writes `value` in canonical form: object keys sorted recursively by UTF-16
/// code units, no insignificant whitespace.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// `"sha256:<64 lowercase hex digits>"` of the canonical form of `value`.
pub fn sha256_digest(value: &Value) -> String {
    let hash = Sha256::digest(canonical_json(value).as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Orders keys by their UTF-16 code units, as RFC 8785 does.
pub(crate) fn utf16_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

fn write_string(out: &mut String, s: &str) {
    // Serializing a &str cannot fail; the fallback keeps this panic-free anyway.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (idx, item) in items.iter().enumerate() {
                if idx > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| utf16_cmp(a, b));
            out.push('{');
            for (idx, key) in keys.iter().enumerate() {
                if idx > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, &map[key.as_str()]);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_recursively_without_whitespace() {
        let v = json!({"b": [ {"z": 1, "a": 2} ], "a": "x\n", "\u{e9}": null, "Z": true});
        assert_eq!(
            canonical_json(&v),
            r#"{"Z":true,"a":"x\n","b":[{"a":2,"z":1}],"é":null}"#
        );
    }

    #[test]
    fn utf16_order_differs_from_byte_order_for_astral_chars() {
        // U+FF61 sorts after U+1F600 in UTF-8 byte order but before it in UTF-16.
        let v = json!({"\u{1F600}": 1, "\u{FF61}": 2});
        assert_eq!(canonical_json(&v), "{\"\u{1F600}\":1,\"\u{FF61}\":2}");
    }

    #[test]
    fn digest_has_prefix_and_hex() {
        let d = sha256_digest(&json!({}));
        assert_eq!(
            d,
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
