//! The applicability table (spec/applicability.toml) resolves against the catalogue,
//! and what it says holds for the groups the issue and docs/coverage.md name.

use loom_spec::{Applicability, Catalogue};

#[test]
fn every_kernel_group_rule_applies_to_a_kernel_and_no_store_group_rule_does() {
    let table = Applicability::load();
    let catalogue = Catalogue::load();
    for rule in catalogue.rules() {
        let kinds = table.kinds_for(&rule.id);
        let kernel_group = [
            "FOLD", "SNAP", "EMIT", "REPLAY", "TYPED", "INGRESS", "ABI", "RES",
        ]
        .contains(&rule.group.as_str());
        if kernel_group {
            assert!(
                kinds.contains(&"kernel"),
                "{} should apply to a kernel",
                rule.id
            );
        }
        if ["CONF", "COMPAT"].contains(&rule.group.as_str()) {
            assert!(
                kinds.is_empty(),
                "{} is about the project, not an implementation",
                rule.id
            );
        }
    }
    assert!(table.kinds_for("SPI-06").contains(&"store"));
    assert!(!table.kinds_for("SPI-06").contains(&"kernel"));
    assert!(
        table.kinds_for("SPI-22").is_empty(),
        "packaging is not a store's rule"
    );
    assert!(table.kinds_for("FOLD-01").contains(&"kernel"));
    assert!(!table.kinds_for("FOLD-01").contains(&"store"));
}

#[test]
fn an_unknown_group_or_rule_in_the_table_is_an_error() {
    let catalogue = Catalogue::load();
    let base = |kernel: &str| {
        format!("[kernel]\n{kernel}\n[store]\ngroups = [\"SPI\"]\nrules = []\nexcept = []\n")
    };
    let bad_group = base("groups = [\"NOPE\"]\nrules = []\nexcept = []");
    assert!(Applicability::parse(&bad_group, &catalogue)
        .unwrap_err()
        .contains("NOPE"));
    let bad_rule = base("groups = []\nrules = [\"FOLD-99\"]\nexcept = []");
    assert!(Applicability::parse(&bad_rule, &catalogue)
        .unwrap_err()
        .contains("FOLD-99"));
    let ok = base("groups = [\"FOLD\"]\nrules = []\nexcept = [\"FOLD-01\"]");
    let table = Applicability::parse(&ok, &catalogue).unwrap();
    assert!(table.kinds_for("FOLD-01").is_empty());
    assert_eq!(table.kinds_for("FOLD-02"), ["kernel"]);
}
