//! Field coverage (issue 23 item 4): every field path of the state schema
//! (`docs/schemas/state.schema.json`) appears in the expected answer of some fold or
//! normalize vector, so a kernel that writes another value there, or leaves the field
//! out, fails that vector. Presence alone does not catch a kernel that gets only one
//! value of a field wrong, so two more things are required: every value an `enum` or
//! `const` allows appears at its path (a kernel that never writes `pending` is caught),
//! and every default the fold writes for an absent payload field (`_input: null`, a
//! frame's `input`, `output`, `error` and `errorPayload`) appears in a vector whose log leaves that
//! field out. The schema is walked, not listed here: a field added to it is uncovered
//! until a vector holds it.
//!
//! The wrong kernels behind the fields this test first found uncovered
//! (`wake-at-off-by-one`, `park-condition-dropped`, `step-kind-dropped`,
//! `absent-start-input-omitted`, `absent-output-omitted`, `absent-error-omitted`,
//! `initial-status-running`) fail only the `fields-` vectors, which
//! `wrong_kernels_of_uncovered_fields_fail_only_the_field_vectors` shows.

use loom_report::Status;
use loom_vectors::runner::{run_vector, Claims, InProcessKernel, KernelClient};
use loom_vectors::set::{default_cases_dir, load_set};
use loom_vectors::wrong::Bug;
use loom_vectors::{ReferenceKernel, Vector};
use serde_json::Value;
use std::collections::BTreeSet;

const STATE_SCHEMA: &str = include_str!("../../docs/schemas/state.schema.json");

/// One step of a field path: an object key, any key of a map (`*`), any array item (`#`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Seg {
    Key(String),
    AnyKey,
    AnyItem,
}

fn show(path: &[Seg]) -> String {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => format!("/{k}"),
            Seg::AnyKey => "/*".into(),
            Seg::AnyItem => "/#".into(),
        })
        .collect()
}

/// A field of the schema and the values it is limited to (`enum`, `const`), if any.
struct Field {
    path: Vec<Seg>,
    values: Vec<Value>,
}

fn walk(node: &Value, defs: &Value, path: Vec<Seg>, out: &mut Vec<Field>) {
    let node = match node.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap_or("");
            defs.get(name)
                .unwrap_or_else(|| panic!("{r} names no definition"))
        }
        None => node,
    };
    let mut values: Vec<Value> = node
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    values.extend(node.get("const").cloned());
    out.push(Field {
        path: path.clone(),
        values,
    });
    let props = node.get("properties").and_then(Value::as_object);
    for (k, child) in props.into_iter().flatten() {
        let mut p = path.clone();
        p.push(Seg::Key(k.clone()));
        walk(child, defs, p, out);
    }
    // A required key the schema gives no shape for is still a field (`_lifecycle`'s `seq`).
    for k in node
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if props.is_none_or(|p| !p.contains_key(k)) {
            let mut p = path.clone();
            p.push(Seg::Key(k.to_owned()));
            out.push(Field {
                path: p,
                values: Vec::new(),
            });
        }
    }
    if let Some(ap @ Value::Object(_)) = node.get("additionalProperties") {
        let mut p = path.clone();
        p.push(Seg::AnyKey);
        walk(ap, defs, p, out);
    }
    if let Some(items @ Value::Object(_)) = node.get("items") {
        let mut p = path;
        p.push(Seg::AnyItem);
        walk(items, defs, p, out);
    }
}

fn schema_fields() -> Vec<Field> {
    let schema: Value = serde_json::from_str(STATE_SCHEMA).expect("the state schema parses");
    let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let mut out = Vec::new();
    walk(&schema, &defs, Vec::new(), &mut out);
    out
}

/// Every state a fold or normalize vector expects: (vector id, state).
fn expected_states(vectors: &[Vector]) -> Vec<(&str, &Value)> {
    let mut out = Vec::new();
    for v in vectors {
        let names: &[&str] = match v.kind.as_str() {
            "fold" => &["state"],
            "normalize" => &["normalized", "restored", "fullFold"],
            _ => &[],
        };
        for n in names {
            if let Some(s) = v.expected.get(n) {
                out.push((v.id.as_str(), s));
            }
        }
    }
    out
}

/// Every value in `state` at a path matching `pattern`.
fn at<'a>(state: &'a Value, pattern: &[Seg], out: &mut Vec<&'a Value>) {
    let Some((first, rest)) = pattern.split_first() else {
        out.push(state);
        return;
    };
    match (first, state) {
        (Seg::Key(k), Value::Object(m)) => {
            if let Some(v) = m.get(k) {
                at(v, rest, out);
            }
        }
        (Seg::AnyKey, Value::Object(m)) => m.values().for_each(|v| at(v, rest, out)),
        (Seg::AnyItem, Value::Array(a)) => a.iter().for_each(|v| at(v, rest, out)),
        _ => {}
    }
}

fn vectors() -> Vec<Vector> {
    load_set(&default_cases_dir())
        .expect("the set loads")
        .vectors
}

/// The fold's defaults for an absent payload field: (state pointer, with `{stepId}` for
/// the event's step; event type; payload field).
const DEFAULTS: &[(&str, &str, &str)] = &[
    ("/variables/_input", "EXECUTION_STARTED", "input"),
    ("/frames/{stepId}/input", "STEP_STARTED", "input"),
    ("/frames/{stepId}/output", "STEP_COMPLETED", "output"),
    ("/frames/{stepId}/error", "STEP_FAILED", "error"),
    ("/frames/{stepId}/errorPayload", "STEP_FAILED", "payload"),
];

#[test]
fn every_state_schema_field_is_held_by_a_vector() {
    let vs = vectors();
    let states = expected_states(&vs);
    assert!(states.len() > 1000, "only {} expected states", states.len());
    let fields = schema_fields();
    // The walk reaches the nested definitions, not only the six top-level fields.
    for must in [
        "/variables/_suspendedOn/wakeAt",
        "/variables/_lifecycle/#/seq",
        "/variables/_quarantined/*/#/released/by",
        "/frames/*/kind",
    ] {
        assert!(
            fields.iter().any(|f| show(&f.path) == must),
            "the walk missed {must}"
        );
    }
    let mut uncovered = Vec::new();
    for f in &fields {
        let mut found = Vec::new();
        for (_, s) in &states {
            at(s, &f.path, &mut found);
        }
        if found.is_empty() {
            uncovered.push(format!("{}: in no expected state", show(&f.path)));
            continue;
        }
        for value in &f.values {
            if !found.contains(&value) {
                uncovered.push(format!(
                    "{}: the value {value} in no expected state",
                    show(&f.path)
                ));
            }
        }
    }
    assert!(
        uncovered.is_empty(),
        "{} of {} schema fields uncovered:\n{}",
        uncovered.len(),
        fields.len(),
        uncovered.join("\n")
    );
}

#[test]
fn every_absent_field_default_is_held_by_a_vector() {
    let vs = vectors();
    let mut missing = Vec::new();
    for (pointer, event_type, field) in DEFAULTS {
        let held = vs
            .iter()
            .filter(|v| v.kind.as_str() == "fold" && v.input.get("schemaVersion").is_none())
            .any(|v| {
                let events = v.input.get("events").and_then(Value::as_array);
                events.into_iter().flatten().any(|e| {
                    let p = e.get("payload");
                    let absent = e.get("eventType").and_then(Value::as_str) == Some(event_type)
                        && p.is_some_and(|p| p.is_object() && p.get(field).is_none());
                    let step = p
                        .and_then(|p| p.get("stepId"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let at = pointer.replace("{stepId}", step);
                    absent && v.expected.pointer(&format!("/state{at}")) == Some(&Value::Null)
                })
            });
        if !held {
            missing.push(format!(
                "{event_type} without `{field}`: no fold vector expects null at {pointer}"
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The wrong kernels of fields no vector held before the `fields-` cases.
const FIELD_BUGS: &[Bug] = &[
    Bug::WakeAtOffByOne,
    Bug::ParkConditionDropped,
    Bug::StepKindDropped,
    Bug::AbsentStartInputOmitted,
    Bug::AbsentOutputOmitted,
    Bug::AbsentErrorOmitted,
    Bug::InitialStatusRunning,
];

#[test]
fn wrong_kernels_of_uncovered_fields_fail_only_the_field_vectors() {
    let vs: Vec<Vector> = vectors()
        .into_iter()
        .filter(|v| matches!(v.kind.as_str(), "fold" | "normalize"))
        .collect();
    let mut problems = Vec::new();
    for bug in FIELD_BUGS {
        let mut kernel = InProcessKernel {
            kernel: ReferenceKernel::with_bug(*bug),
        };
        let claims = Claims::from_hello(kernel.hello().expect("hello"));
        let failed: BTreeSet<String> = vs
            .iter()
            .map(|v| run_vector(&mut kernel, &claims, v))
            .filter(|r| r.status != Status::Pass)
            .map(|r| r.case_id)
            .collect();
        // Caught by the new vectors, and by none of those before them.
        if !failed.iter().any(|id| id.contains("-fields-")) {
            problems.push(format!("{}: no fields- vector catches it", bug.as_str()));
        }
        let old: Vec<&String> = failed
            .iter()
            .filter(|id| !id.contains("-fields-"))
            .collect();
        if !old.is_empty() {
            problems.push(format!(
                "{}: also caught by vectors outside the field cases {old:?}",
                bug.as_str()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
