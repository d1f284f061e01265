//! docs/report-format.md names every field of the JSON Schema, every status
//! and the schema version, so the documentation cannot drift from the format.

use serde_json::Value;

const DOC: &str = include_str!("../../docs/report-format.md");
const SCHEMA: &str = include_str!("../schema/report.schema.json");

fn collect_properties(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            for v in map.values() {
                collect_properties(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_properties(v, out)),
        _ => {}
    }
}

#[test]
fn every_schema_field_is_documented() {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let mut fields = Vec::new();
    collect_properties(&schema, &mut fields);
    fields.sort();
    fields.dedup();
    assert!(fields.len() > 30, "found {} fields", fields.len());
    let missing: Vec<&String> = fields
        .iter()
        .filter(|f| !DOC.contains(&format!("`{f}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "fields missing from docs/report-format.md: {missing:?}"
    );
}

#[test]
fn every_status_and_the_version_are_documented() {
    for status in loom_report::Status::ALL {
        assert!(DOC.contains(&format!("`{status}`")), "{status}");
    }
    assert!(DOC.contains(&format!("schema version {}", loom_report::SCHEMA_VERSION)));
    assert!(DOC.contains(loom_report::UNEXPECTED_PASS_PREFIX));
}
