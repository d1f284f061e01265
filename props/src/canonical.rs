//! The canonical-JSON property and an independent RFC 8785 reference writer.
//!
//! The reference is deliberately simple and shares no code with the kernel's writer:
//! numbers take the shortest digit string by trying precisions 1..=17 with exact
//! (correctly rounded) formatting, or a neighbour in the last digit where the rounding
//! interval is lopsided, keeping the first that round-trips, then apply
//! ECMAScript's `Number::toString` layout rules from the digits and the exponent;
//! strings are escaped from a per-code-point table; keys are sorted by collected
//! UTF-16 code-unit vectors.

use crate::limits::{CANONICAL_DEPTH_MAX, CANONICAL_STRING_CHARS_MAX};
use crate::violation::{check_eq, PropertyViolation};
use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use loom_kernel::canonical_string;
use serde_json::{Map, Number, Value};

/// A value to canonicalize, and raw text to parse and canonicalize.
#[derive(Debug, Clone, PartialEq)]
pub struct CanonicalInput {
    /// A generated value (wide numbers, any Unicode, nesting).
    pub value: Value,
    /// Raw text; when it parses as JSON it is canonicalized too.
    pub text: String,
}

impl<'a> Arbitrary<'a> for CanonicalInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        Ok(CanonicalInput {
            value: wide_value(u, CANONICAL_DEPTH_MAX)?,
            text: u.arbitrary()?,
        })
    }

    /// As libFuzzer decodes it: the value, then every remaining byte as the text, so
    /// a crash file can end in plain JSON.
    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> ArbResult<Self> {
        let value = wide_value(&mut u, CANONICAL_DEPTH_MAX)?;
        let text = String::from_utf8_lossy(u.take_rest()).into_owned();
        Ok(CanonicalInput { value, text })
    }
}

fn wide_value(u: &mut Unstructured<'_>, depth: usize) -> ArbResult<Value> {
    let arms = if depth == 0 { 6 } else { 8 };
    Ok(match u.choose_index(arms)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => {
            let x = f64::from_bits(u.arbitrary()?);
            Number::from_f64(x).map_or(Value::Null, Value::Number)
        }
        3 => match u.choose_index(3)? {
            0 => Value::from(u.arbitrary::<i64>()?),
            1 => Value::from(u.arbitrary::<u64>()?),
            _ => {
                let m = f64::from(u.int_in_range(-99_999i32..=99_999)?);
                let e = u.int_in_range(-30i32..=30)?;
                Number::from_f64(m * 10f64.powi(e)).map_or(Value::Null, Value::Number)
            }
        },
        4 | 5 => Value::String(wide_string(u)?),
        6 => {
            let n = u.int_in_range(0..=4)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(wide_value(u, depth - 1)?);
            }
            Value::Array(items)
        }
        _ => {
            let n = u.int_in_range(0..=4)?;
            let mut m = Map::new();
            for _ in 0..n {
                m.insert(wide_string(u)?, wide_value(u, depth - 1)?);
            }
            Value::Object(m)
        }
    })
}

fn wide_string(u: &mut Unstructured<'_>) -> ArbResult<String> {
    let n = u.int_in_range(0..=CANONICAL_STRING_CHARS_MAX)?;
    let mut s = String::new();
    for _ in 0..n {
        let c = match u.choose_index(4)? {
            0 => char::from(u.int_in_range(0u8..=0x7f)?),
            1 => *u.choose(&[
                '"',
                '\\',
                '/',
                '\u{7f}',
                '\u{2028}',
                '\u{fffd}',
                'é',
                '\u{1f600}',
                '\u{10000}',
                '\u{ffff}',
            ])?,
            2 => char::from(u.int_in_range(0u8..=0x1f)?),
            _ => u.arbitrary()?,
        };
        s.push(c);
    }
    Ok(s)
}

/// Canonical form is idempotent, parses back to the same value (numbers compared as
/// doubles), and equals [`reference_canonical`] byte for byte; raw text that parses is
/// canonicalized idempotently too (DESIGN.md section 3, RFC 8785).
pub fn canonical_json(input: &CanonicalInput) -> Result<(), PropertyViolation> {
    check_value(&input.value)?;
    if let Ok(v) = serde_json::from_str::<Value>(&input.text) {
        check_value(&v)?;
    }
    Ok(())
}

fn check_value(v: &Value) -> Result<(), PropertyViolation> {
    let once = canonical_string(v);
    let reference = reference_canonical(v);
    check_eq(
        "EMIT-04",
        None,
        || format!("kernel vs reference canonical form of {v:?}"),
        &reference,
        &once,
    )?;
    let back: Value = serde_json::from_str(&once).map_err(|e| {
        PropertyViolation::new(
            "EMIT-04",
            None,
            format!("canonical form does not parse: {once}"),
            "JSON",
            e.to_string(),
        )
    })?;
    if !same_as_doubles(v, &back) {
        return Err(PropertyViolation::new(
            "EMIT-04",
            None,
            "parse(canonical(x)) == x as doubles",
            format!("{v:?}"),
            format!("{back:?}"),
        ));
    }
    check_eq(
        "EMIT-04",
        None,
        || "canonical form is idempotent".into(),
        &once,
        &canonical_string(&back),
    )
}

/// Structural equality with numbers compared as doubles.
pub fn same_as_doubles(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_as_doubles(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| same_as_doubles(p, q)))
        }
        _ => a == b,
    }
}

/// The reference canonical form (see the module docs).
pub fn reference_canonical(v: &Value) -> String {
    let mut out = String::new();
    ref_value(&mut out, v);
    out
}

fn ref_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&reference_number(n.as_f64().unwrap_or(0.0))),
        Value::String(s) => out.push_str(&reference_string(s)),
        Value::Array(items) => {
            out.push('[');
            let parts: Vec<String> = items.iter().map(reference_canonical).collect();
            out.push_str(&parts.join(","));
            out.push(']');
        }
        Value::Object(m) => {
            let mut entries: Vec<(Vec<u16>, &String, &Value)> = m
                .iter()
                .map(|(k, v)| (k.encode_utf16().collect(), k, v))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            out.push('{');
            let parts: Vec<String> = entries
                .iter()
                .map(|(_, k, v)| format!("{}:{}", reference_string(k), reference_canonical(v)))
                .collect();
            out.push_str(&parts.join(","));
            out.push('}');
        }
    }
}

/// ECMAScript `Number::toString(x)` for a finite double, by an independent route.
pub fn reference_number(x: f64) -> String {
    if !x.is_finite() {
        return "null".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    // Shortest digits that read back as the same double: for each length p, the
    // correctly rounded p-digit decimal (exact formatting, ties to even), or, where the
    // rounding interval is lopsided (x a power of two), its neighbour one unit above or
    // below in the last place.
    let (mut mantissa, mut exp10) = (0u64, 0i64);
    for p in 1..=17usize {
        let s = format!("{:.*e}", p - 1, a);
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m: u64 = m.replace('.', "").parse().unwrap_or(0);
        let e10 = e.parse::<i64>().unwrap_or(0) - (p as i64 - 1);
        let found = [m, m.saturating_sub(1), m + 1]
            .into_iter()
            .find(|c| format!("{c}e{e10}").parse::<f64>().ok() == Some(a));
        if let Some(c) = found {
            (mantissa, exp10) = (c, e10);
            break;
        }
    }
    let mut digits = mantissa.to_string();
    let mut n = digits.len() as i64 + exp10; // value = 0.d1d2.. * 10^n
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    if mantissa == 0 {
        digits = "0".into();
        n = 1;
    }
    let k = digits.len() as i64;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let esign = if e >= 0 { "+" } else { "-" };
        if k == 1 {
            format!("{digits}e{esign}{}", e.abs())
        } else {
            format!("{}.{}e{esign}{}", &digits[..1], &digits[1..], e.abs())
        }
    };
    format!("{sign}{body}")
}

/// RFC 8785 string escaping, one code point at a time from a table.
pub fn reference_string(s: &str) -> String {
    const SHORT: [(u32, &str); 7] = [
        (0x08, "\\b"),
        (0x09, "\\t"),
        (0x0a, "\\n"),
        (0x0c, "\\f"),
        (0x0d, "\\r"),
        (0x22, "\\\""),
        (0x5c, "\\\\"),
    ];
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::from("\"");
    for c in s.chars() {
        let cp = c as u32;
        if let Some((_, esc)) = SHORT.iter().find(|(k, _)| *k == cp) {
            out.push_str(esc);
        } else if cp < 0x20 {
            out.push_str("\\u00");
            out.push(char::from(HEX[(cp >> 4) as usize]));
            out.push(char::from(HEX[(cp & 0xf) as usize]));
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}
