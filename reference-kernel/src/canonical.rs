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
        Value::Number(n) => match exact_integer(n) {
            // An integer a double holds exactly prints as its digits in ECMAScript
            // (below 1e21), which is what `write_number` gives, without its formatting.
            Some(i) => {
                let mut buf = [0u8; 20];
                out.push_str(integer_digits(i, &mut buf));
            }
            None => write_number(out, n.as_f64().unwrap_or(0.0)),
        },
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
            // The map's own (byte) order is UTF-16 order for most keys, and the sort
            // finds an ordered run in one pass; the entries are sorted with their values,
            // so no key is looked up again.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| utf16_cmp(a.0, b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, value);
            }
            out.push('}');
        }
    }
}

/// The largest integer below which every integer is a double: 2^53.
const EXACT_INTEGER_MAX: u64 = 1 << 53;

/// The number as an integer when it is one whose magnitude is at most 2^53 (so the double
/// the canonical form rounds it to is the integer itself).
fn exact_integer(n: &serde_json::Number) -> Option<i128> {
    if let Some(u) = n.as_u64() {
        return (u <= EXACT_INTEGER_MAX).then_some(i128::from(u));
    }
    n.as_i64()
        .filter(|i| i.unsigned_abs() <= EXACT_INTEGER_MAX)
        .map(i128::from)
}

/// The decimal digits of `i` (with a minus sign when negative), written into `buf`.
fn integer_digits(i: i128, buf: &mut [u8; 20]) -> &str {
    let mut at = buf.len();
    let mut m = i.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if i < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    // ASCII digits and a sign.
    std::str::from_utf8(&buf[at..]).unwrap_or("0")
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
    if crate::json::plain_run(s.as_bytes()) == s.len() {
        // Nothing to escape: the string as it is, in one copy.
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The integer fast path writes what the double path writes, at and past 2^53, for
    /// every integer type serde_json reads.
    #[test]
    fn integers_print_as_their_doubles_do() {
        let edge = EXACT_INTEGER_MAX as i64;
        let mut ints: Vec<Value> = vec![json!(u64::MAX), json!(i64::MIN), json!(i64::MAX)];
        for base in [0, 9, 10, 99, 100, edge - 1, edge, edge + 1, 1 << 60] {
            for i in [base, -base] {
                ints.push(json!(i));
            }
        }
        for v in ints {
            let mut slow = String::new();
            write_number(&mut slow, v.as_f64().unwrap());
            assert_eq!(canonical_string(&v), slow, "{v}");
        }
    }

    /// The plain-string fast path and the escaping path agree around every escape.
    #[test]
    fn strings_print_with_minimal_escapes() {
        for (s, want) in [
            ("plain", "\"plain\""),
            ("é😀/", "\"é😀/\""),
            ("a\"b", "\"a\\\"b\""),
            ("a\\b", "\"a\\\\b\""),
            ("\n\t\u{08}\u{0C}\r", "\"\\n\\t\\b\\f\\r\""),
            ("\u{1f}\u{7f}", "\"\\u001f\u{7f}\""),
        ] {
            assert_eq!(canonical_string(&json!(s)), want, "{s:?}");
        }
    }

    /// Object keys sort by UTF-16 code units, not by the map's byte order: U+FF61 (one
    /// unit, 0xFF61) sorts after U+1F600 (surrogates from 0xD83D) in UTF-16.
    #[test]
    fn keys_sort_by_utf16() {
        let v = json!({"\u{ff61}": 1, "\u{1f600}": 2, "b": 3, "a": 4});
        assert_eq!(
            canonical_string(&v),
            "{\"a\":4,\"b\":3,\"\u{1f600}\":2,\"\u{ff61}\":1}"
        );
    }
}
