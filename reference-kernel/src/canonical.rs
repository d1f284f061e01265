//! Canonical JSON per RFC 8785 (the JSON Canonicalization Scheme).
//!
//! Object keys are sorted by their UTF-16 code units at every depth, numbers are
//! written as ECMAScript's `Number.prototype.toString` writes them (shortest
//! round-trip digits, exponent form at >= 1e21 and < 1e-6, `-0` as `0`), strings use
//! the minimal escapes (`\"`, `\\`, `\b \f \n \r \t`, other control characters as
//! lowercase `\u00xx`; `/` and non-ASCII are written as they are), and there is no
//! whitespace. This is the form hashed by every digest and compared by every
//! equivalence check, so it never depends on how a map happens to be ordered.
//!
//! JSON numbers are IEEE doubles here, as in the original TypeScript kernel: an
//! integer above 2^53 is rounded to the nearest double before it is written
//! (`9007199254740993` canonicalises to `9007199254740992`).

use serde_json::Value;

/// The canonical form of a JSON value, as a string.
pub fn canonical_string(value: &Value) -> String {
    let mut out = String::with_capacity(64);
    write_value(&mut out, value);
    out
}

/// The canonical form of a JSON value, as UTF-8 bytes.
pub fn canonical_json(value: &Value) -> Vec<u8> {
    canonical_string(value).into_bytes()
}

/// Appends the canonical form of `value` to `out`.
pub fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            write_number(out, x);
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
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
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
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

/// Orders two strings by their UTF-16 code units, as RFC 8785 sorts object keys.
pub fn utf16_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    // Fast path: for code points below U+D800 UTF-8 byte order equals UTF-16 order.
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Writes a string with RFC 8785 escaping.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes a double as ECMAScript's `Number.prototype.toString` does.
/// NaN and the infinities have no JSON form; they are written as `null`, as
/// `JSON.stringify` persists them (GAP-03).
pub fn write_number(out: &mut String, x: f64) {
    if !x.is_finite() {
        out.push_str("null");
        return;
    }
    if x == 0.0 {
        out.push('0');
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    // Rust's `{:e}` gives the shortest round-trip digit COUNT k, but when two k-digit
    // spellings are equally close to x it may pick the odd one; ECMAScript picks the one
    // closest to x, ties to even (562949953421327.25 → …327.2). Re-rendering with k-1
    // fraction digits rounds the exact value half-to-even, and both tie candidates
    // round-trip, so the digits below are the ECMAScript ones.
    // At a power of two the round-trip interval is lopsided and the nearest k-digit
    // decimal may fall outside it; then the shortest form is the ECMAScript one.
    let shortest = format!("{:e}", x.abs());
    let k_digits = shortest
        .split_once('e')
        .map_or(1, |(m, _)| m.chars().filter(char::is_ascii_digit).count());
    let nearest = format!("{:.*e}", k_digits.saturating_sub(1), x.abs());
    let sci = if nearest.parse::<f64>().ok() == Some(x.abs()) {
        nearest
    } else {
        shortest
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp.parse::<i32>().unwrap_or(0) + 1;
    if k <= n && n <= 21 {
        out.push_str(&digits);
        for _ in 0..(n - k) {
            out.push('0');
        }
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        for _ in 0..(-n) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
}

/// Parses JSON text and returns its canonical form. Input that is not JSON (including
/// a lone UTF-16 surrogate escape, which `serde_json` refuses) is an error naming the
/// position.
pub fn canonicalize_text(text: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    Ok(canonical_string(&value))
}
