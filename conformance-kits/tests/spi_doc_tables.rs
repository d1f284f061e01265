//! docs/spi.md's tables of the concurrency and durability kits ("Concurrent cases",
//! "Kills and restarts") list exactly the kits' cases, each with the rules its case
//! table cites, so the page cannot drift from the code.

use loom_conformance::kits::{concurrency, durability};
use loom_conformance::CaseInfo;

/// The `| `case` | rules | …` rows of the table under `heading`.
fn table_rows(doc: &str, heading: &str) -> Vec<(String, Vec<String>)> {
    let (_, after) = doc
        .split_once(heading)
        .unwrap_or_else(|| panic!("docs/spi.md has no heading {heading:?}"));
    after
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let id = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let rules = cells.get(2)?.split(", ").map(str::to_owned).collect();
            Some((id.to_owned(), rules))
        })
        .collect()
}

fn holds(heading: &str, cases: &[CaseInfo]) {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/spi.md"))
        .expect("docs/spi.md");
    let rows = table_rows(&doc, heading);
    let want: Vec<(String, Vec<String>)> = cases
        .iter()
        .map(|c| {
            (
                c.id.to_owned(),
                c.rules.iter().map(|r| (*r).to_owned()).collect(),
            )
        })
        .collect();
    assert_eq!(rows, want, "docs/spi.md, {heading}");
}

#[test]
fn spi_md_lists_every_concurrent_case_with_its_rules() {
    holds("## Concurrent cases", concurrency::CASES);
}

#[test]
fn spi_md_lists_every_durability_case_with_its_rules() {
    holds("## Kills and restarts", durability::CASES);
}
