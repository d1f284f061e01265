//! The catalogue is complete and well-formed: 224 rules, 36 gaps, ids of the pinned shape,
//! and (when `shared/spec/RULES.md` is present) exactly the ids and levels RULES.md gives.

use loom_spec::{is_id_shaped, Catalogue, Level, RULE_GROUPS};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn rules_md() -> Option<String> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    [
        manifest.join("../../shared/spec/RULES.md"),
        manifest.join("../shared/spec/RULES.md"),
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok())
}

#[test]
fn embedded_catalogue_parses() {
    let text = include_str!("../rules.toml");
    if let Err(e) = Catalogue::parse(text) {
        panic!("spec/rules.toml is malformed: {e}");
    }
    // `load` must then not panic.
    assert_eq!(Catalogue::load().rules().len(), 224);
}

#[test]
fn count_and_id_pattern_are_pinned() {
    let catalogue = Catalogue::load();
    assert_eq!(catalogue.rules().len(), 224, "the catalogue has 224 rules");
    assert_eq!(catalogue.gaps().len(), 36, "the catalogue has 36 gaps");
    let per_group: Vec<(&str, usize)> = RULE_GROUPS
        .iter()
        .map(|g| {
            (
                *g,
                catalogue.rules().iter().filter(|r| r.group == *g).count(),
            )
        })
        .collect();
    assert_eq!(
        per_group,
        vec![
            ("FOLD", 50),
            ("SNAP", 12),
            ("EMIT", 16),
            ("REPLAY", 17),
            ("TYPED", 17),
            ("INGRESS", 39),
            ("ABI", 15),
            ("SPI", 23),
            ("PLACE", 8),
            ("RES", 7),
            ("COMPAT", 11),
            ("CONF", 9),
        ]
    );
    for rule in catalogue.rules() {
        assert!(
            is_id_shaped(&rule.id) && !rule.id.starts_with("GAP-"),
            "{}",
            rule.id
        );
        assert!(
            rule.id.starts_with(&format!("{}-", rule.group)),
            "{}",
            rule.id
        );
    }
    // Numbers run 01..=N without holes inside each group, and gaps run 01..=36.
    for group in RULE_GROUPS {
        let numbers: Vec<u32> = catalogue
            .rules()
            .iter()
            .filter(|r| r.group == group)
            .filter_map(|r| r.id[group.len() + 1..].parse().ok())
            .collect();
        assert_eq!(
            numbers,
            (1..=numbers.len() as u32).collect::<Vec<_>>(),
            "{group}"
        );
    }
    let gap_ids: Vec<String> = catalogue.gaps().iter().map(|g| g.id.clone()).collect();
    assert_eq!(
        gap_ids,
        (1..=36).map(|n| format!("GAP-{n:02}")).collect::<Vec<_>>()
    );
}

#[test]
fn levels_and_binding() {
    let catalogue = Catalogue::load();
    let count = |level: Level| {
        catalogue
            .rules()
            .iter()
            .filter(|r| r.level == level)
            .count()
    };
    assert_eq!(count(Level::Must), 42);
    assert_eq!(count(Level::MustNot), 8);
    assert_eq!(count(Level::Should), 1);
    assert_eq!(count(Level::May), 7);
    assert_eq!(count(Level::Guarantee), 165);
    assert_eq!(count(Level::ReferenceDefined), 1);
    assert_eq!(
        catalogue.get("INGRESS-39").map(|r| r.level),
        Some(Level::ReferenceDefined)
    );
    assert_eq!(catalogue.binding_rules().count(), 216);
    assert!(
        !catalogue.get("INGRESS-12").is_some_and(|r| r.is_binding()),
        "SHOULD is not binding"
    );
    assert!(
        !catalogue.get("SPI-02").is_some_and(|r| r.is_binding()),
        "MAY is not binding"
    );
    assert!(catalogue.get("FOLD-01").is_some_and(|r| r.is_binding()));
    assert!(
        catalogue.get("SNAP-04").is_some_and(|r| r.is_binding()),
        "GUARANTEE binds"
    );
}

#[test]
fn known_ids() {
    let catalogue = Catalogue::load();
    assert!(catalogue.is_known_id("FOLD-09"));
    assert!(catalogue.is_known_id("GAP-17"));
    assert!(!catalogue.is_known_id("FOLD-99"));
    assert!(!catalogue.is_known_id("GAP-37"));
    assert!(!catalogue.is_known_id("fold-09"));
    assert!(catalogue.get("GAP-17").is_none(), "gaps are not rules");
    assert!(catalogue.gap("GAP-17").is_some());
}

#[test]
fn summaries_are_single_sentences() {
    let catalogue = Catalogue::load();
    let texts = catalogue
        .rules()
        .iter()
        .map(|r| (&r.id, &r.summary))
        .chain(catalogue.gaps().iter().map(|g| (&g.id, &g.resolution)));
    for (id, text) in texts {
        assert!(
            text.ends_with('.'),
            "{id}: a sentence ends with a full stop"
        );
        assert!(
            !text.trim_end_matches('.').contains(". "),
            "{id}: one sentence only"
        );
    }
}

#[test]
fn parse_rejects_bad_catalogues() {
    let good = "[[rule]]\nid = \"FOLD-01\"\nlevel = \"MUST\"\ngroup = \"FOLD\"\nsection = \"§1\"\nsummary = \"S.\"\nevidence = [\"test\"]\n\n[[gap]]\nid = \"GAP-01\"\ntitle = \"T\"\nresolution = \"R.\"\n";
    assert!(Catalogue::parse(good).is_ok());
    for (bad, why) in [
        (good.replace("\"MUST\"", "\"MUSTN'T\""), "unknown level"),
        (good.replace("FOLD-01", "FOLD-1"), "bad id"),
        (
            good.replace("group = \"FOLD\"", "group = \"SNAP\""),
            "group mismatch",
        ),
        (good.replace("[\"test\"]", "[]"), "no evidence"),
        (
            good.replace("[\"test\"]", "[\"prayer\"]"),
            "unknown evidence kind",
        ),
        (
            good.replace("summary = \"S.\"", "summary = \"S.\"\nextra = 1"),
            "unknown field",
        ),
        (good.replace("GAP-01", "FOLD-01"), "duplicate id"),
        ("not toml at all [".to_string(), "syntax"),
    ] {
        assert!(Catalogue::parse(&bad).is_err(), "{why} must be rejected");
    }
}

/// The rule ids (`**XXX-NN**`) and gap ids (`**GAP-NN — …**`) RULES.md defines, and the
/// level each rule line gives.
fn ids_in_rules_md(text: &str) -> (BTreeSet<String>, BTreeSet<String>, Vec<(String, String)>) {
    let mut rules = BTreeSet::new();
    let mut gaps = BTreeSet::new();
    let mut levels = Vec::new();
    for (i, segment) in text.split("**").enumerate() {
        if i % 2 == 1 && is_id_shaped(segment) {
            rules.insert(segment.to_string());
        }
        if i % 2 == 1
            && segment.starts_with("GAP-")
            && segment.len() > 6
            && is_id_shaped(&segment[..6])
        {
            gaps.insert(segment[..6].to_string());
        }
    }
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("- **") else {
            continue;
        };
        let Some((id, after)) = rest.split_once("** (") else {
            continue;
        };
        if !is_id_shaped(id) {
            continue;
        }
        let raw = after.split(')').next().unwrap_or("");
        let level = raw.split([',', ';']).next().unwrap_or("").trim();
        let level = if level.starts_with("GUARANTEE") {
            "GUARANTEE"
        } else {
            level
        };
        levels.push((id.to_string(), level.to_string()));
    }
    (rules, gaps, levels)
}

#[test]
fn ids_and_levels_match_rules_md() {
    let Some(text) = rules_md() else {
        println!("note: shared/spec/RULES.md is absent; skipping the id-set comparison (the count and id pattern are still pinned)");
        return;
    };
    let catalogue = Catalogue::load();
    let (md_rules, md_gaps, md_levels) = ids_in_rules_md(&text);
    let ours: BTreeSet<String> = catalogue.rules().iter().map(|r| r.id.clone()).collect();
    assert_eq!(
        ours, md_rules,
        "rules.toml and RULES.md define different rule ids"
    );
    let our_gaps: BTreeSet<String> = catalogue.gaps().iter().map(|g| g.id.clone()).collect();
    assert_eq!(
        our_gaps, md_gaps,
        "rules.toml and RULES.md define different gap ids"
    );
    assert_eq!(md_levels.len(), 224);
    for (id, level) in md_levels {
        let rule = catalogue.get(&id).map(|r| r.level.as_str());
        assert_eq!(
            rule,
            Some(level.as_str()),
            "{id}: level differs from RULES.md"
        );
    }
    // Summaries are our own words: none is lifted verbatim from the catalogue.
    for rule in catalogue.rules() {
        let body = rule.summary.trim_end_matches('.');
        assert!(!text.contains(body), "{}: summary copies RULES.md", rule.id);
    }
}
