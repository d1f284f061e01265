//! The catalogue is complete and well-formed: 224 rules, 36 gaps, ids of the pinned shape,
//! and exactly the ids and levels RULES.md gives. RULES.md lives outside this repository,
//! so what it defines is pinned in `spec/pins/rules-md.json`: rules.toml is checked
//! against the pin wherever the repository is checked out, and the pin against RULES.md
//! itself wherever that is found (`LOOM_RULES_MD`, or `shared/spec/RULES.md` above the
//! repository; without it that test is reported as skipped).

use loom_spec::{is_id_shaped, Catalogue, Level, RULE_GROUPS};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The pin of what RULES.md defines: rule ids with their levels, and gap ids.
const PIN: &str = "pins/rules-md.json";

/// Set to 1 to rewrite the pin from RULES.md instead of comparing.
const UPDATE_PINS_ENV: &str = "LOOM_UPDATE_PINS";

fn pin_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(PIN)
}

/// The pin's rules (id to level) and gaps.
fn pinned() -> (BTreeMap<String, String>, BTreeSet<String>) {
    let text = std::fs::read_to_string(pin_path()).expect("read spec/pins/rules-md.json");
    let pin: Value = serde_json::from_str(&text).expect("spec/pins/rules-md.json is JSON");
    let rules = pin["rules"]
        .as_object()
        .expect("a rules object")
        .iter()
        .map(|(id, level)| (id.clone(), level.as_str().unwrap_or_default().to_string()))
        .collect();
    let gaps = pin["gaps"]
        .as_array()
        .expect("a gaps array")
        .iter()
        .map(|g| g.as_str().unwrap_or_default().to_string())
        .collect();
    (rules, gaps)
}

fn embedded_catalogue_parses() {
    let text = include_str!("../rules.toml");
    if let Err(e) = Catalogue::parse(text) {
        panic!("spec/rules.toml is malformed: {e}");
    }
    // `load` must then not panic.
    assert_eq!(Catalogue::load().rules().len(), 224);
}

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

/// rules.toml defines exactly the rules, levels and gaps the pin of RULES.md holds; runs
/// wherever the repository is checked out.
fn ids_and_levels_match_the_rules_md_pin() {
    let catalogue = Catalogue::load();
    let (rules, gaps) = pinned();
    assert_eq!(rules.len(), 224, "the pin holds every rule");
    let ours: BTreeMap<String, String> = catalogue
        .rules()
        .iter()
        .map(|r| (r.id.clone(), r.level.as_str().to_string()))
        .collect();
    for (id, level) in &rules {
        assert_eq!(
            ours.get(id),
            Some(level),
            "{id}: rules.toml and the RULES.md pin differ"
        );
    }
    let missing: Vec<&String> = ours.keys().filter(|id| !rules.contains_key(*id)).collect();
    assert!(missing.is_empty(), "rules not in RULES.md: {missing:?}");
    let our_gaps: BTreeSet<String> = catalogue.gaps().iter().map(|g| g.id.clone()).collect();
    assert_eq!(
        our_gaps, gaps,
        "rules.toml and the RULES.md pin define different gaps"
    );
}

/// RULES.md itself: the pin is what it defines (`LOOM_UPDATE_PINS=1` rewrites the pin),
/// rules.toml agrees with it, and no summary copies its text.
fn ids_and_levels_match_rules_md(rules_md: &str) {
    let text = std::fs::read_to_string(rules_md).expect("read RULES.md");
    let catalogue = Catalogue::load();
    let (md_rules, md_gaps, md_levels) = ids_in_rules_md(&text);
    let pin = json!({
        "source": "the specification's spec/RULES.md (outside this repository); rewrite with LOOM_UPDATE_PINS=1 cargo test -p loom-spec --test catalogue",
        "rules": md_levels.iter().cloned().collect::<BTreeMap<String, String>>(),
        "gaps": md_gaps,
    });
    let pin_text = format!("{}\n", serde_json::to_string_pretty(&pin).unwrap());
    if std::env::var(UPDATE_PINS_ENV).as_deref() == Ok("1") {
        std::fs::write(pin_path(), &pin_text).expect("write the pin");
    }
    let (rules, gaps) = pinned();
    assert_eq!(
        (&rules, &gaps),
        (
            &md_levels
                .iter()
                .cloned()
                .collect::<BTreeMap<String, String>>(),
            &md_gaps
        ),
        "spec/pins/rules-md.json is not what {rules_md} defines; review the change and \
         rewrite the pin with LOOM_UPDATE_PINS=1 cargo test -p loom-spec --test catalogue"
    );
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

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, test, Tool};
    run(vec![
        needs(
            Tool::RulesMd,
            "ids_and_levels_match_rules_md",
            ids_and_levels_match_rules_md,
        ),
        test("embedded_catalogue_parses", embedded_catalogue_parses),
        test(
            "count_and_id_pattern_are_pinned",
            count_and_id_pattern_are_pinned,
        ),
        test("levels_and_binding", levels_and_binding),
        test("known_ids", known_ids),
        test(
            "summaries_are_single_sentences",
            summaries_are_single_sentences,
        ),
        test("parse_rejects_bad_catalogues", parse_rejects_bad_catalogues),
        test(
            "ids_and_levels_match_the_rules_md_pin",
            ids_and_levels_match_the_rules_md_pin,
        ),
    ])
}
