//! Small JSON values for payloads: mostly ordinary, with `__proto__` keys, nulls,
//! fractions and nesting, because those are the shapes the fold treats specially.

use crate::limits::{PAYLOAD_DEPTH_MAX, PAYLOAD_WIDTH_MAX};
use arbitrary::{Result, Unstructured};
use serde_json::{Map, Number, Value};

/// Keys a generated object may use: the fold's field names and the one it refuses.
pub const KEYS: [&str; 7] = ["a", "b", "c", "__proto__", "id", "stepId", "error"];

/// A payload value nesting at most [`PAYLOAD_DEPTH_MAX`] levels.
pub fn payload(u: &mut Unstructured<'_>) -> Result<Value> {
    value(u, PAYLOAD_DEPTH_MAX)
}

/// A value nesting at most `depth` levels.
pub fn value(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let arms = if depth == 0 { 5 } else { 7 };
    Ok(match u.choose_index(arms)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::from(u.int_in_range(-1000i64..=1000)?),
        3 => number(f64::from(u.int_in_range(-4000i32..=4000)?) / 8.0),
        4 => Value::String(short_string(u)?),
        5 => {
            let n = u.int_in_range(0..=PAYLOAD_WIDTH_MAX)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(value(u, depth - 1)?);
            }
            Value::Array(items)
        }
        _ => {
            let n = u.int_in_range(0..=PAYLOAD_WIDTH_MAX)?;
            let mut m = Map::new();
            for _ in 0..n {
                let k = *u.choose(&KEYS)?;
                m.insert(k.to_owned(), value(u, depth - 1)?);
            }
            Value::Object(m)
        }
    })
}

/// A JSON number, or `null` for a non-finite double.
pub fn number(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn short_string(u: &mut Unstructured<'_>) -> Result<String> {
    const WORDS: [&str; 6] = ["", "x", "boom", "__proto__", "é", "a\"b"];
    Ok((*u.choose(&WORDS)?).to_owned())
}
