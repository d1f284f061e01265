//! The catalogue as text for people: `docs/rules.md` (generated, and checked against the
//! catalogue by a test so it cannot go stale) and one rule's entry for `loom rules ID`.

use crate::catalogue::{Catalogue, Gap, Level, Rule, RULE_GROUPS};
use std::fmt::Write as _;

/// The anchor of a rule or gap on the rules page and in an HTML report: the id in lower
/// case (`FOLD-09` → `fold-09`), as GitHub derives heading anchors.
pub fn anchor(id: &str) -> String {
    id.to_ascii_lowercase()
}

/// Escapes text for a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The whole rules page (`docs/rules.md`), generated from the catalogue.
pub fn rules_markdown(catalogue: &Catalogue) -> String {
    let mut out = String::new();
    let rules = catalogue.rules();
    let binding = rules.iter().filter(|r| r.is_binding()).count();
    out.push_str("# The rule catalogue\n\n");
    out.push_str(
        "<!-- Generated from spec/rules.toml by `loom rules --markdown`; do not edit. \
A test (spec/tests/page.rs) fails when this page and the catalogue differ. -->\n\n",
    );
    let _ = writeln!(
        out,
        "Every testable rule of the Loom kernel specification, with the stable id that tests, \
vectors, kit cases, simulator invariants and reports cite. {} rules ({binding} binding: \
MUST, MUST NOT, GUARANTEE and reference-defined; the rest SHOULD or MAY) and {} open \
gaps with the resolution this reference kernel adopts. Summaries are one-sentence \
paraphrases; the specification's text is the authority. `loom rules ID` prints one entry.\n",
        rules.len(),
        catalogue.gaps().len()
    );
    out.push_str("| level | rules |\n|---|---|\n");
    for level in [
        Level::Must,
        Level::MustNot,
        Level::Guarantee,
        Level::ReferenceDefined,
        Level::Should,
        Level::May,
    ] {
        let n = rules.iter().filter(|r| r.level == level).count();
        if n > 0 {
            let _ = writeln!(out, "| {} | {n} |", level.as_str());
        }
    }
    out.push_str("\nGroups: ");
    let groups: Vec<String> = RULE_GROUPS
        .iter()
        .filter(|g| rules.iter().any(|r| r.group == **g))
        .map(|g| format!("[{g}](#{})", anchor(g)))
        .chain(std::iter::once("[GAP](#gaps)".to_string()))
        .collect();
    out.push_str(&groups.join(" · "));
    out.push('\n');
    for group in RULE_GROUPS {
        let mine: Vec<&Rule> = rules.iter().filter(|r| r.group == group).collect();
        if mine.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n## {group}\n");
        out.push_str("| id | level | section | rule | planned evidence |\n|---|---|---|---|---|\n");
        for r in mine {
            let evidence: Vec<String> = r
                .evidence
                .iter()
                .map(|e| format!("{e:?}").to_ascii_lowercase())
                .collect();
            let _ = writeln!(
                out,
                "| <a id=\"{}\"></a>{} | {} | {} | {} | {} |",
                anchor(&r.id),
                r.id,
                r.level.as_str(),
                cell(&r.section),
                cell(&r.summary),
                evidence.join(", ")
            );
        }
    }
    out.push_str("\n## Gaps\n\n");
    out.push_str("Questions the specification leaves open, and how this reference kernel answers them (the reasons are in [docs/decisions/](decisions/)).\n\n");
    out.push_str("| id | question | resolution |\n|---|---|---|\n");
    for g in catalogue.gaps() {
        let _ = writeln!(
            out,
            "| <a id=\"{}\"></a>{} | {} | {} |",
            anchor(&g.id),
            g.id,
            cell(&g.title),
            cell(&g.resolution)
        );
    }
    out
}

/// One rule's entry as `loom rules ID` prints it.
pub fn rule_entry(rule: &Rule) -> String {
    let evidence: Vec<String> = rule
        .evidence
        .iter()
        .map(|e| format!("{e:?}").to_ascii_lowercase())
        .collect();
    format!(
        "{}  {}{}\n  section:          {}\n  group:            {}\n  planned evidence: {}\n\n  {}\n",
        rule.id,
        rule.level.as_str(),
        if rule.is_binding() {
            " (binding)"
        } else {
            " (not binding)"
        },
        rule.section,
        rule.group,
        evidence.join(", "),
        rule.summary
    )
}

/// One gap's entry as `loom rules GAP-NN` prints it.
pub fn gap_entry(gap: &Gap) -> String {
    format!(
        "{}  open question: {}\n\n  resolution: {}\n",
        gap.id, gap.title, gap.resolution
    )
}
