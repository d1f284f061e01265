//! The catalogue as report rules: level, group, section and the kinds each applies to.

use loom_report::{RuleInfo, SubjectKind, GAP_LEVEL};

/// Every rule and gap of the catalogue, with its applicability.
pub fn rule_infos() -> Vec<RuleInfo> {
    let catalogue = loom_spec::Catalogue::load();
    let table = loom_spec::Applicability::load();
    let mut out: Vec<RuleInfo> = catalogue
        .rules()
        .iter()
        .map(|r| {
            let kinds = table
                .kinds_for(&r.id)
                .into_iter()
                .filter_map(SubjectKind::parse);
            RuleInfo::new(&r.id, r.level.as_str(), &r.group, &r.summary)
                .with_section(&r.section)
                .with_applies_to(kinds)
        })
        .collect();
    out.extend(
        catalogue
            .gaps()
            .iter()
            .map(|g| RuleInfo::new(&g.id, GAP_LEVEL, "GAP", &g.title)),
    );
    out
}
