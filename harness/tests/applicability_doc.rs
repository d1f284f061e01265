//! docs/coverage.md's applicability table is the one in spec/applicability.toml.

use loom_spec::{Applicability, Catalogue};

const DOC: &str = include_str!("../../docs/coverage.md");
const TABLE: &str = include_str!("../../spec/applicability.toml");

#[test]
fn the_documented_applicability_rows_match_the_table() {
    let table: toml::Value = toml::from_str(TABLE).unwrap();
    for kind in ["kernel", "store"] {
        let list = |key: &str| -> String {
            table[kind][key]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let row = format!(
            "| {kind} | {} | {} | {} |",
            list("groups"),
            list("rules"),
            list("except")
        )
        .replace("|  |", "| |");
        assert!(DOC.contains(&row), "docs/coverage.md lacks the row\n{row}");
    }
    // And the table resolves (no unknown id).
    let resolved = Applicability::load();
    let catalogue = Catalogue::load();
    assert!(catalogue
        .rules()
        .iter()
        .any(|r| !resolved.kinds_for(&r.id).is_empty()));
}
