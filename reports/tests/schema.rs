//! The published JSON Schema (`reports/schema/report.schema.json`) accepts
//! what this crate writes and rejects what its parser rejects.

mod common;

use common::*;
use loom_report::{merge, Report};
use serde_json::{json, Value};

const SCHEMA: &str = include_str!("../schema/report.schema.json");

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(SCHEMA).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

fn errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance).map(|e| e.to_string()).collect()
}

#[test]
fn generated_reports_validate_against_the_schema() {
    let v = validator();
    let mut full = sample_report();
    full.environment = loom_report::Environment::detect("loom", "0.1.0");
    full.environment.vector_set_digest = Some("sha256:00".into());
    full.environment.command = Some("loom vectors".into());
    full.environment
        .extra
        .insert("k".into(), json!({"nested": [1]}));
    full.results[0].failure = Some(loom_report::Failure::default().with_diff("d"));
    full.recompute();
    let merged = merge(&[green_report("a", 1, 2), sample_report()]).unwrap();
    for report in [sample_report(), green_report("x", 1, 0), full, merged] {
        let instance: Value = serde_json::from_str(&report.to_json_pretty()).unwrap();
        let errs = errors(&v, &instance);
        assert!(
            errs.is_empty(),
            "schema rejected a generated report: {errs:#?}"
        );
    }
}

#[test]
fn schema_rejects_what_the_parser_rejects() {
    let v = validator();
    let good = serde_json::to_value(sample_report()).unwrap();
    type Edit = fn(&mut Value);
    let edits: &[(&str, Edit)] = &[
        ("unknown top-level field", |r| r["surprise"] = json!(1)),
        ("unknown result field", |r| {
            r["results"][0]["colour"] = json!(1)
        }),
        ("unknown status", |r| {
            r["results"][0]["status"] = json!("passed")
        }),
        ("other schema version", |r| r["schema_version"] = json!(4)),
        ("bad digest", |r| r["digest"] = json!("md5:abc")),
        ("missing summary field", |r| {
            r["summary"].as_object_mut().unwrap().remove("ok");
        }),
    ];
    for (what, edit) in edits {
        let mut instance = good.clone();
        edit(&mut instance);
        assert!(!v.is_valid(&instance), "schema accepted: {what}");
        if *what != "bad digest" {
            assert!(
                Report::from_json_str(&instance.to_string()).is_err(),
                "parser accepted: {what}"
            );
        }
    }
}
