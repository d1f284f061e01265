//! A small, strict JSON-Schema subset that *parses*: validation plus defaults.
//!
//! Flows declare `resumeSchemas` (gate → schema) and typed-failure `errors` maps
//! (channel → schema). The spec requires the PARSED value (defaults applied) to be what
//! is recorded (INGRESS-22, GAP-33), so validation here returns a new value.
//!
//! Supported keywords: `type` (a name or a list), `properties`, `required`,
//! `additionalProperties` (boolean), `default`, `enum`, `const`, `minimum`, `maximum`,
//! `minLength`, `maxLength` (in UTF-16 code units, as JavaScript counts), `items`,
//! `minItems`, `maxItems`, and the annotations `title`, `description`, `$schema`.
//! A schema that uses any other keyword is rejected when it is checked
//! ([`check_schema`]), never silently half-applied.

use serde_json::{Map, Value};

/// Why a value (or a schema) was refused. `path` is a JSON pointer into the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// JSON pointer to the offending part of the value ("" is the root).
    pub path: String,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "at {at}: {}", self.message)
    }
}

impl std::error::Error for SchemaError {}

const KEYWORDS: [&str; 18] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "default",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "items",
    "minItems",
    "maxItems",
    "title",
    "description",
    "$schema",
    "$comment",
];

/// Checks that a schema only uses supported keywords, recursively.
pub fn check_schema(schema: &Value) -> Result<(), SchemaError> {
    check_at(schema, "#")
}

fn check_at(schema: &Value, at: &str) -> Result<(), SchemaError> {
    let Value::Object(s) = schema else {
        return match schema {
            Value::Bool(_) => Ok(()),
            _ => Err(SchemaError {
                path: at.into(),
                message: "a schema must be an object or a boolean".into(),
            }),
        };
    };
    for k in s.keys() {
        if !KEYWORDS.contains(&k.as_str()) {
            return Err(SchemaError {
                path: at.into(),
                message: format!("unsupported schema keyword `{k}`"),
            });
        }
    }
    if let Some(Value::Object(props)) = s.get("properties") {
        for (name, sub) in props {
            check_at(sub, &format!("{at}/properties/{name}"))?;
        }
    }
    if let Some(items) = s.get("items") {
        check_at(items, &format!("{at}/items"))?;
    }
    Ok(())
}

/// Validates `value` against `schema` and returns the parsed value: missing properties
/// that declare a `default` are filled in. The input is never changed.
pub fn parse_value(schema: &Value, value: &Value) -> Result<Value, SchemaError> {
    check_schema(schema)?;
    parse_at(schema, value, "")
}

fn fail(path: &str, message: String) -> SchemaError {
    SchemaError {
        path: path.to_owned(),
        message,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n)
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|x| x.fract() == 0.0) =>
        {
            "integer"
        }
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(expected: &str, v: &Value) -> bool {
    let actual = type_name(v);
    expected == actual || (expected == "number" && actual == "integer")
}

fn parse_at(schema: &Value, value: &Value, path: &str) -> Result<Value, SchemaError> {
    let s = match schema {
        Value::Bool(true) => return Ok(value.clone()),
        Value::Bool(false) => return Err(fail(path, "no value is allowed here".into())),
        Value::Object(s) => s,
        _ => return Err(fail(path, "invalid schema".into())),
    };
    if let Some(t) = s.get("type") {
        let allowed: Vec<&str> = match t {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !allowed.iter().any(|a| type_matches(a, value)) {
            return Err(fail(
                path,
                format!(
                    "expected {}, found {}",
                    allowed.join(" or "),
                    type_name(value)
                ),
            ));
        }
    }
    if let Some(c) = s.get("const") {
        if c != value {
            return Err(fail(path, format!("expected the constant {c}")));
        }
    }
    if let Some(Value::Array(options)) = s.get("enum") {
        if !options.contains(value) {
            return Err(fail(
                path,
                format!("expected one of {}", Value::Array(options.clone())),
            ));
        }
    }
    if let Some(x) = value.as_f64() {
        if let Some(min) = s.get("minimum").and_then(Value::as_f64) {
            if x < min {
                return Err(fail(path, format!("{x} is below the minimum {min}")));
            }
        }
        if let Some(max) = s.get("maximum").and_then(Value::as_f64) {
            if x > max {
                return Err(fail(path, format!("{x} is above the maximum {max}")));
            }
        }
    }
    if let Value::String(text) = value {
        let units = text.encode_utf16().count() as u64;
        if let Some(min) = s.get("minLength").and_then(Value::as_u64) {
            if units < min {
                return Err(fail(path, format!("string shorter than {min}")));
            }
        }
        if let Some(max) = s.get("maxLength").and_then(Value::as_u64) {
            if units > max {
                return Err(fail(path, format!("string longer than {max}")));
            }
        }
    }
    match value {
        Value::Array(items) => {
            if let Some(min) = s.get("minItems").and_then(Value::as_u64) {
                if (items.len() as u64) < min {
                    return Err(fail(path, format!("fewer than {min} items")));
                }
            }
            if let Some(max) = s.get("maxItems").and_then(Value::as_u64) {
                if (items.len() as u64) > max {
                    return Err(fail(path, format!("more than {max} items")));
                }
            }
            if let Some(item_schema) = s.get("items") {
                let parsed: Result<Vec<Value>, _> = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| parse_at(item_schema, item, &format!("{path}/{i}")))
                    .collect();
                return Ok(Value::Array(parsed?));
            }
            Ok(value.clone())
        }
        Value::Object(obj) => {
            let props = s.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for (k, v) in obj {
                let child = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                match props.and_then(|p| p.get(k)) {
                    Some(sub) => {
                        out.insert(k.clone(), parse_at(sub, v, &child)?);
                    }
                    None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        return Err(fail(&child, format!("property `{k}` is not allowed")));
                    }
                    None => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            if let Some(props) = props {
                for (k, sub) in props {
                    if !out.contains_key(k) {
                        if let Some(d) = sub.get("default") {
                            out.insert(k.clone(), d.clone());
                        }
                    }
                }
            }
            if let Some(Value::Array(required)) = s.get("required") {
                for r in required.iter().filter_map(Value::as_str) {
                    if !out.contains_key(r) {
                        return Err(fail(path, format!("required property `{r}` is missing")));
                    }
                }
            }
            Ok(Value::Object(out))
        }
        _ => Ok(value.clone()),
    }
}
