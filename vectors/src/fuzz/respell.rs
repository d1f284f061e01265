//! JSON text that says the same thing in another spelling: keys in another order,
//! numbers written with exponents, a trailing `.0` or `-0`, characters escaped (`\/`,
//! `\u00e9` in either case, astral characters as surrogate pairs), and whitespace
//! between tokens. A kernel must read every spelling as the same value; one whose
//! reader or canonical writer depends on the spelling gives another answer.
//!
//! Every choice is drawn from the case's bytes, so the same bytes give the same text
//! (the campaign shrinks and replays by bytes).

use arbitrary::Unstructured;
use serde_json::{Number, Value};

/// `value` respelled. The text always parses back to `value` (compared as canonical
/// JSON); when a spelling would not, the compact form is used for that number.
pub fn respell(u: &mut Unstructured<'_>, value: &Value) -> String {
    let mut out = String::new();
    write(u, &mut out, value);
    out
}

fn pick(u: &mut Unstructured<'_>, n: usize) -> usize {
    u.choose_index(n).unwrap_or(0)
}

// Every choice maps 0 to "as written": shrinking drives bytes to zero, so a shrunk
// case is spelled plainly except where the spelling is what makes it fail.

fn space(u: &mut Unstructured<'_>, out: &mut String) {
    match pick(u, 8) {
        6 => out.push(' '),
        7 => out.push('\t'),
        _ => {}
    }
}

fn write(u: &mut Unstructured<'_>, out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => number(u, out, n),
        Value::String(s) => string(u, out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                space(u, out);
                write(u, out, x);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            // A permutation drawn from the bytes: reversed, rotated or as stored.
            match pick(u, 3) {
                2 => keys.reverse(),
                1 if !keys.is_empty() => {
                    let k = pick(u, keys.len());
                    keys.rotate_left(k);
                }
                _ => {}
            }
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                space(u, out);
                string(u, out, k);
                space(u, out);
                out.push(':');
                write(u, out, &m[k.as_str()]);
            }
            out.push('}');
        }
    }
}

fn number(u: &mut Unstructured<'_>, out: &mut String, n: &Number) {
    let plain = n.to_string();
    // Integers keep their spelling: envelope fields such as `sequence` are integers,
    // and a reader may insist on an integer token there. Fractions take any spelling.
    if n.is_u64() || n.is_i64() {
        out.push_str(&plain);
        return;
    }
    let x = n.as_f64().unwrap_or(0.0);
    let candidate = match pick(u, 5) {
        4 if x == 0.0 => "-0.0".to_owned(),
        1 if x.is_finite() => format!("{x:e}").replace('e', "E+").replace("E+-", "E-"),
        2 if x.is_finite() => format!("{x:e}"),
        3 if x.is_finite() && x.abs() >= 1.0 => format!("{}e-2", x * 100.0),
        _ => plain.clone(),
    };
    // Keep the spelling only if it reads back as the same double.
    let same = candidate
        .parse::<f64>()
        .is_ok_and(|y| y == x || (x == 0.0 && y == 0.0));
    out.push_str(if same { &candidate } else { &plain });
}

fn string(u: &mut Unstructured<'_>, out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        let escape = pick(u, 6) == 5;
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || escape => unicode_escape(u, out, c),
            '/' if pick(u, 2) == 1 => out.push_str("\\/"),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn unicode_escape(u: &mut Unstructured<'_>, out: &mut String, c: char) {
    let upper = pick(u, 2) == 1;
    let mut units = [0u16; 2];
    for unit in c.encode_utf16(&mut units) {
        if upper {
            out.push_str(&format!("\\u{unit:04X}"));
        } else {
            out.push_str(&format!("\\u{unit:04x}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_spelling_reads_back_as_the_same_value() {
        let values = [
            json!({"b": [1, 2.5, -0.0, 1e21, 1e-7, 9007199254740993u64], "a": "é/😀\u{1}", "": null}),
            json!([{"z": {"y": true}}, "\u{2028}", -1.5e-300, 12345678901234567890u64]),
        ];
        for v in values {
            for seed in 0u8..64 {
                let bytes: Vec<u8> = (0..512)
                    .map(|i| (i as u8).wrapping_mul(seed).wrapping_add(seed))
                    .collect();
                let mut u = Unstructured::new(&bytes);
                let text = respell(&mut u, &v);
                let back: Value = serde_json::from_str(&text).expect(&text);
                assert_eq!(
                    loom_kernel::canonical_string(&back),
                    loom_kernel::canonical_string(&v),
                    "{text}"
                );
                assert!(!text.contains('\n'), "{text}");
            }
        }
    }
}
