//! The documents describe the code as it is: folded states validate against
//! docs/schemas/state.schema.json, and docs/event-schema.md names every known kind.

mod common;
use common::gen::{events, FULL};
use common::*;
use loom_kernel::{fold, known_event_types};
use proptest::prelude::*;
use serde_json::Value;

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn state_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&read("docs/schemas/state.schema.json")).unwrap();
    jsonschema::validator_for(&schema).expect("the state schema compiles")
}

#[test]
fn abi_09_event_schema_page_names_every_kind() {
    let page = read("docs/event-schema.md");
    for kind in known_event_types() {
        assert!(
            page.contains(&format!("`{kind}`")),
            "docs/event-schema.md does not describe {kind}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn abi_09_folded_states_match_the_published_schema(evs in events(FULL, 24)) {
        let v = fold(&log(evs)).to_value();
        let validator = state_validator();
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        prop_assert!(errors.is_empty(), "{errors:?}\n{v}");
    }
}

#[test]
fn envelope_schema_accepts_what_the_decoder_writes() {
    let schema: Value = serde_json::from_str(&read("docs/schemas/envelope.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for e in log(vec![
        started(),
        step_started("a").stamp("00000000000000aa").kernel(),
    ]) {
        let v = e.to_value();
        assert!(validator.is_valid(&v), "{v}");
    }
}

/// docs/flow-scripts.md and decision 0002 say what `flowHash` hashes, and the runtime
/// does that: the whole script, except an empty `resumeSchemas` map, which hashes as
/// absent (INGRESS-23: the same flow with and without an empty map records identical
/// logs); a map with an entry is hashed.
#[test]
fn ingress_23_the_flow_hash_docs_match_the_code() {
    use loom_kernel::runtime::flow_hash;
    use loom_kernel::runtime::script::FlowScript;
    use loom_kernel::versions::KernelFeatures;
    let features = KernelFeatures::default();
    let body = serde_json::json!([{"op": "suspend", "on": "approve"}]);
    let hash = |extra: Option<Value>| {
        let mut v = serde_json::json!({"flowId": "f", "body": body});
        if let Some(x) = extra {
            v["resumeSchemas"] = x;
        }
        flow_hash(&FlowScript::parse(&v, &features).unwrap(), &features)
    };
    let without = hash(None);
    assert_eq!(
        hash(Some(serde_json::json!({}))),
        without,
        "an empty map hashes as absent"
    );
    assert_ne!(
        hash(Some(serde_json::json!({"approve": {"type": "object"}}))),
        without,
        "a map with an entry is part of the hash"
    );
    for doc in [
        "docs/flow-scripts.md",
        "docs/decisions/0002-canonical-json.md",
    ] {
        let text = read(doc).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains("an empty `resumeSchemas` map")
                && text.contains("as if it were absent")
                && text.contains("INGRESS-23"),
            "{doc} does not say that an empty resumeSchemas map is hashed as absent"
        );
    }
}
