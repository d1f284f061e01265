//! Canonical-JSON writers with one bug each, and the digests built on them. A kernel
//! has one canonical writer, so a bug in it changes the `canonical` digest op, every
//! emit digest, every flow hash and every emit stamp its runtime writes.

use super::Bug;
use loom_kernel::canonical::{utf16_cmp, write_number};
use loom_kernel::digest::fnv1a64_hex;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Whether `bug` lives in the canonical writer.
pub fn is_writer_bug(bug: Bug) -> bool {
    matches!(
        bug,
        Bug::KeysByCodePoint
            | Bug::NumberHostFormat
            | Bug::NegativeZero
            | Bug::BigIntegersExact
            | Bug::ExponentWithoutPlus
            | Bug::ExponentThresholdOffByOne
            | Bug::UppercaseHexEscape
            | Bug::EscapedSlash
            | Bug::EscapedNonAscii
            | Bug::NoShortEscapes
            | Bug::EscapedLineSeparators
    )
}

/// The canonical form of `v` as a kernel with `bug` writes it.
pub fn canonical(bug: Option<Bug>, v: &Value) -> String {
    let mut out = String::new();
    value(bug, &mut out, v);
    out
}

fn value(bug: Option<Bug>, out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => number(bug, out, n),
        Value::String(s) => string(bug, out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                value(bug, out, x);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            if bug == Some(Bug::KeysByCodePoint) {
                keys.sort();
            } else {
                keys.sort_by(|a, b| utf16_cmp(a, b));
            }
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(bug, out, k);
                out.push(':');
                value(bug, out, &m[k.as_str()]);
            }
            out.push('}');
        }
    }
}

fn number(bug: Option<Bug>, out: &mut String, n: &serde_json::Number) {
    let x = n.as_f64().unwrap_or(0.0);
    match bug {
        Some(Bug::BigIntegersExact) if n.is_u64() || n.is_i64() => out.push_str(&n.to_string()),
        Some(Bug::NumberHostFormat) => {
            if x.is_finite() {
                // `{}` on a double: no exponent ever, `-0` for negative zero.
                let text = if x == x.trunc() && x.abs() < 1e300 {
                    format!("{x:.0}")
                } else {
                    format!("{x}")
                };
                out.push_str(&text);
            } else {
                out.push_str("null");
            }
        }
        Some(Bug::NegativeZero) if x == 0.0 && x.is_sign_negative() => out.push_str("-0"),
        Some(Bug::ExponentWithoutPlus) => {
            let mut s = String::new();
            write_number(&mut s, x);
            out.push_str(&s.replace("e+", "e"));
        }
        Some(Bug::ExponentThresholdOffByOne) if x != 0.0 && x.abs() < 1e-5 && x.abs() >= 1e-6 => {
            // The exponent form starts one decade early: 0.000001 is written 1e-6.
            let mut s = String::new();
            write_number(&mut s, x * 1e6);
            if s.contains('.') || s.contains('e') {
                write_number(out, x);
            } else {
                out.push_str(&s);
                out.push_str("e-6");
            }
        }
        _ => write_number(out, x),
    }
}

fn string(bug: Option<Bug>, out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' if bug != Some(Bug::NoShortEscapes) => out.push_str("\\b"),
            '\u{0C}' if bug != Some(Bug::NoShortEscapes) => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                if bug == Some(Bug::UppercaseHexEscape) {
                    out.push_str(&format!("\\u{:04X}", c as u32));
                } else {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                }
            }
            '/' if bug == Some(Bug::EscapedSlash) => out.push_str("\\/"),
            '\u{2028}' | '\u{2029}' if bug == Some(Bug::EscapedLineSeparators) => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if !c.is_ascii() && bug == Some(Bug::EscapedNonAscii) => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// FNV-1a 64 (or FNV-1, with [`Bug::Fnv1NotFnv1a`]) as 16 lowercase hex digits.
pub fn fnv(bug: Option<Bug>, bytes: &[u8]) -> String {
    if bug != Some(Bug::Fnv1NotFnv1a) {
        return fnv1a64_hex(bytes);
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        h ^= u64::from(*b);
    }
    format!("{h:016x}")
}

/// The emit identity text and digest as a kernel with `bug` computes them.
pub fn emit_digest(
    bug: Option<Bug>,
    segment: u64,
    event_type: &str,
    payload: &Value,
) -> (String, String) {
    let array = Value::Array(vec![Value::String(event_type.to_owned()), payload.clone()]);
    let text = match bug {
        Some(Bug::EmitDigestWithoutSegment) => canonical(bug, &array),
        Some(Bug::EmitDigestPayloadOnly) => format!("{segment}|{}", canonical(bug, payload)),
        _ => format!("{segment}|{}", canonical(bug, &array)),
    };
    let mut digest = fnv(bug, text.as_bytes());
    if bug == Some(Bug::EmitDigestUppercase) {
        digest = digest.to_uppercase();
    }
    (text, digest)
}

/// The flow hash of `flow` as a kernel with `bug` computes it.
pub fn flow_hash(bug: Option<Bug>, flow: &Value, sha256: bool) -> String {
    let text = if bug == Some(Bug::FlowHashNotCanonical) {
        serde_json::to_string(flow).unwrap_or_default()
    } else {
        canonical(bug, flow)
    };
    if sha256 {
        let digest = Sha256::digest(text.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    } else {
        format!("fnv1a:{}", fnv(bug, text.as_bytes()))
    }
}

/// Whether `bug` changes digests (the canonical writer or the digest functions).
pub fn is_digest_bug(bug: Bug) -> bool {
    is_writer_bug(bug)
        || matches!(
            bug,
            Bug::Fnv1NotFnv1a
                | Bug::EmitDigestWithoutSegment
                | Bug::EmitDigestUppercase
                | Bug::EmitDigestPayloadOnly
                | Bug::FlowHashNotCanonical
        )
}
