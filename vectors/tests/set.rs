//! The vector set as a whole: the committed files are exactly what the generator
//! produces (the reviewable diff), VERSION.json pins the set's digest (the wire
//! fold-vector pin, CONF-02/CONF-03), and the whole set passes in-process.
//!
//! To accept a change after reviewing it: `LOOM_VECTORS_UPDATE=1 cargo test -p
//! loom-vectors --test set` (or `loom vectors regen`). Under `CI=true` nothing is
//! written.

use loom_vectors::generate::{diff_against, generate_all, write_set};
use loom_vectors::set::{default_cases_dir, load_set, read_version_file, vectors_dir};

fn update_requested() -> bool {
    std::env::var("LOOM_VECTORS_UPDATE").is_ok_and(|v| v == "1")
        && !std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

#[test]
fn committed_files_match_the_generator() {
    let vectors = generate_all().expect("the generator runs");
    if update_requested() {
        let n = write_set(&vectors_dir(), &vectors).expect("write the set");
        eprintln!("wrote {n} changed file(s)");
        return;
    }
    let diff = diff_against(&vectors_dir(), &vectors);
    assert!(
        diff.is_empty(),
        "the committed vectors differ from what the generator produces ({} file(s)); review and run `loom vectors regen` (or LOOM_VECTORS_UPDATE=1):\n{}",
        diff.len(),
        diff.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn generator_is_byte_identical_run_to_run() {
    let a = loom_vectors::generate::files_for(&generate_all().unwrap());
    let b = loom_vectors::generate::files_for(&generate_all().unwrap());
    assert_eq!(a, b);
}

#[test]
fn conf_02_conf_03_version_file_pins_the_set_digest() {
    let set = load_set(&default_cases_dir()).unwrap_or_else(|errors| {
        panic!(
            "{}",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    let pinned = read_version_file(&vectors_dir().join("VERSION.json")).unwrap();
    let actual = set.version_file();
    assert_eq!(
        pinned, actual,
        "vectors/VERSION.json does not pin the committed set: any change to a vector changes the set's version"
    );
    assert!(
        actual.count >= 400,
        "the set holds {} vectors",
        actual.count
    );
}

/// The scenario a vector comes from: a versioned fold (`fold-as-1-NN-<case>`) and a
/// snapshot normalization of a fold case (`normalize-<case>-w1-NN-kK`) share their fold
/// case's scenario; a snapshot family with its own log keeps its own name; every other
/// vector is its own scenario.
fn scenario_of(id: &str) -> String {
    if let Some(rest) = id.strip_prefix("fold-as-1-") {
        let case = rest.split_once('-').map_or(rest, |(_, c)| c);
        return format!("fold-{case}");
    }
    if let Some(rest) = id.strip_prefix("normalize-") {
        if let Some(i) = rest.rfind("-w1-") {
            let base = &rest[..i];
            return if base.starts_with("gap15-") {
                format!("normalize-{base}")
            } else {
                format!("fold-{base}")
            };
        }
    }
    id.to_owned()
}

/// No rule rests on one vector: every rule id a vector cites is cited by vectors from at
/// least three different scenarios, so one wrong or weak vector cannot be the only
/// evidence that a kernel keeps the rule.
#[test]
fn every_cited_rule_has_three_vectors_from_different_scenarios() {
    use std::collections::{BTreeMap, BTreeSet};
    let set = load_set(&default_cases_dir()).expect("the set loads");
    let mut by_rule: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for v in &set.vectors {
        for r in &v.rules {
            by_rule.entry(r).or_default().insert(scenario_of(&v.id));
        }
    }
    let thin: Vec<String> = by_rule
        .iter()
        .filter(|(_, scenarios)| scenarios.len() < 3)
        .map(|(rule, scenarios)| format!("{rule}: {scenarios:?}"))
        .collect();
    assert!(
        thin.is_empty(),
        "{} rule(s) rest on fewer than three scenarios:\n{}",
        thin.len(),
        thin.join("\n")
    );
}

#[test]
fn scenario_families_are_derived_from_ids() {
    for (id, family) in [
        ("fold-as-1-20-fold09-caught", "fold-fold09-caught"),
        ("normalize-fold09-caught-w1-20-k2", "fold-fold09-caught"),
        (
            "normalize-gap15-overlap-x-w1-26-k4-from2",
            "normalize-gap15-overlap-x",
        ),
        (
            "ingress-ingress03-gate-match",
            "ingress-ingress03-gate-match",
        ),
    ] {
        assert_eq!(scenario_of(id), family, "{id}");
    }
}

/// The counts table in docs/vectors.md is the committed set's: per kind, the vectors,
/// how many are `spec` and `resolution`, and how many carry alternatives.
#[test]
fn docs_count_table_matches_the_set() {
    let docs =
        std::fs::read_to_string(vectors_dir().join("../docs/vectors.md")).expect("docs/vectors.md");
    let set = load_set(&default_cases_dir()).expect("the set loads");
    for kind in loom_vectors::Kind::ALL {
        let of_kind: Vec<_> = set.vectors.iter().filter(|v| v.kind == kind).collect();
        let spec = of_kind
            .iter()
            .filter(|v| v.basis.kind == loom_vectors::basis::BasisKind::Spec)
            .count();
        let with_alternatives = of_kind
            .iter()
            .filter(|v| !v.alternatives.is_empty())
            .count();
        let want = [
            of_kind.len().to_string(),
            spec.to_string(),
            (of_kind.len() - spec).to_string(),
            with_alternatives.to_string(),
        ];
        let row = docs
            .lines()
            .find(|l| l.starts_with(&format!("| {}", kind.as_str())))
            .unwrap_or_else(|| panic!("docs/vectors.md has no count row for {kind}"));
        let cells: Vec<&str> = row
            .split('|')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(
            cells[1..].to_vec(),
            want.to_vec(),
            "docs/vectors.md counts for {kind} (vectors, spec, resolution, with alternatives): {row}"
        );
    }
}
