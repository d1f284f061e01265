//! CONF-01: every binding rule has evidence and every cited id exists, over the real
//! workspace; plus fixtures proving each failure mode is caught.

use loom_spec::{
    check_evidence, ids_in_test_name, load_exemptions, parse_exemptions, scan_evidence, Catalogue,
    Exemption, SiteKind,
};
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn the_source_mentions_every_binding_rule_and_every_cited_id_exists() {
    // A lint, not evidence: a mention in the source proves nothing ran, so this test
    // carries no rule id in its name and credits no rule (loom check credits results).
    let catalogue = Catalogue::load();
    let index = scan_evidence(&workspace_root());
    let exemptions = load_exemptions().unwrap_or_else(|e| panic!("spec/exemptions.toml: {e}"));
    let check = check_evidence(&catalogue, &index, &exemptions);
    println!("{check}");
    for skipped in &index.skipped {
        println!("note: scan skipped {skipped}");
    }
    assert!(check.is_ok(), "\n{check}");
}

#[test]
fn embedded_exemptions_parse_and_name_real_rules() {
    let catalogue = Catalogue::load();
    let exemptions = load_exemptions().expect("spec/exemptions.toml parses");
    for ex in &exemptions {
        assert!(catalogue.get(&ex.rule).is_some(), "{}", ex.rule);
        assert!(!ex.reason.trim().is_empty(), "{}", ex.rule);
    }
}

// ---- fixtures ----------------------------------------------------------------------

/// A small catalogue: two binding rules, one MAY rule, one gap.
fn mini_catalogue() -> Catalogue {
    let text = [
        ("FOLD-01", "MUST"),
        ("FOLD-02", "MAY"),
        ("SNAP-01", "GUARANTEE"),
    ]
    .iter()
    .map(|(id, level)| {
        let group = id.split('-').next().unwrap_or("");
        format!("[[rule]]\nid = \"{id}\"\nlevel = \"{level}\"\ngroup = \"{group}\"\nsection = \"§4\"\nsummary = \"S.\"\nevidence = [\"test\"]\n\n")
    })
    .collect::<String>()
        + "[[gap]]\nid = \"GAP-01\"\ntitle = \"T\"\nresolution = \"R.\"\n";
    Catalogue::parse(&text).expect("fixture catalogue")
}

/// A fresh directory under the system temp dir, removed when dropped.
struct Fixture(PathBuf);

impl Fixture {
    fn new(name: &str) -> Fixture {
        let dir = std::env::temp_dir().join(format!("loom-spec-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Fixture(dir)
    }

    fn write(&self, rel: &str, text: &str) -> &Fixture {
        let path = self.0.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("fixture dir");
        }
        std::fs::write(path, text).expect("fixture file");
        self
    }

    fn root(&self) -> &Path {
        &self.0
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn exemption(rule: &str, reason: &str) -> Exemption {
    Exemption {
        rule: rule.to_string(),
        reason: reason.to_string(),
        issue: String::new(),
    }
}

#[test]
fn test_names_yield_rule_ids() {
    assert_eq!(
        ids_in_test_name("fold_09_step_failed_does_not_fail_execution"),
        ["FOLD-09"]
    );
    assert_eq!(
        ids_in_test_name("snap_01_and_snap_10_agree"),
        ["SNAP-01", "SNAP-10"]
    );
    assert_eq!(ids_in_test_name("regression_gap_17_cap"), ["GAP-17"]);
    assert_eq!(ids_in_test_name("fold_09_twice_fold_09"), ["FOLD-09"]);
    assert!(ids_in_test_name("fold_9_short").is_empty());
    assert!(ids_in_test_name("fold_009_long").is_empty());
    assert!(ids_in_test_name("refold_09_not_a_token").is_empty());
    assert!(ids_in_test_name("fold09").is_empty());
    assert!(ids_in_test_name("FOLD_09_upper").is_empty());
}

#[test]
fn missing_evidence_is_reported() {
    let fx = Fixture::new("missing");
    fx.write(
        "reference-kernel/tests/fold.rs",
        "#[test]\nfn fold_01_replay_is_identical() {}\n",
    );
    let index = scan_evidence(fx.root());
    let check = check_evidence(&mini_catalogue(), &index, &[]);
    assert_eq!(check.total, 2, "MAY rules are not counted");
    assert_eq!(check.covered, 1);
    assert_eq!(check.missing, ["SNAP-01"]);
    assert!(!check.is_ok());
    let text = check.to_string();
    assert!(
        text.contains("SNAP-01") && text.contains("snap_01_"),
        "{text}"
    );
    // An exemption with a reason makes it pass.
    let check = check_evidence(
        &mini_catalogue(),
        &index,
        &[exemption("SNAP-01", "not built yet")],
    );
    assert!(check.is_ok(), "{check}");
    assert_eq!(check.exempted, 1);
}

#[test]
fn every_test_form_counts_and_plain_fns_do_not() {
    let fx = Fixture::new("forms");
    fx.write(
        "reference-kernel/src/fold.rs",
        concat!(
            "pub fn fold_01_helper_not_a_test() {}\n",
            "#[cfg(not(test))]\nfn fold_01_only_outside_tests() {}\n",
            "#[cfg(test)]\nmod tests {\n    fn snap_01_inside_cfg_test_module() {}\n}\n",
        ),
    );
    fx.write(
        "stores/src/lib.rs",
        concat!(
            "#[tokio::test(flavor = \"multi_thread\")]\nasync fn fold_01_tokio_test() {}\n",
            "proptest! {\n    #[test]\n    fn snap_01_in_proptest(x in 0..3u8) { let _ = x; }\n}\n",
        ),
    );
    let index = scan_evidence(fx.root());
    let fold = index.sites_for("FOLD-01");
    assert_eq!(fold.len(), 1, "{fold:?}");
    assert_eq!(
        (fold[0].file.as_str(), fold[0].line, fold[0].name.as_str()),
        ("stores/src/lib.rs", 2, "fold_01_tokio_test")
    );
    assert_eq!(fold[0].kind, SiteKind::Test);
    let snap: Vec<&str> = index
        .sites_for("SNAP-01")
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        snap,
        ["snap_01_inside_cfg_test_module", "snap_01_in_proptest"]
    );
}

#[test]
fn unknown_citation_in_fn_name_is_reported() {
    let fx = Fixture::new("unknown-fn");
    fx.write(
        "reference-kernel/tests/fold.rs",
        "\n\n#[test]\nfn fold_99_does_not_exist() {}\n",
    );
    let check = check_evidence(
        &mini_catalogue(),
        &scan_evidence(fx.root()),
        &[exemption("FOLD-01", "later"), exemption("SNAP-01", "later")],
    );
    assert!(!check.is_ok());
    assert_eq!(check.unknown_citations.len(), 1);
    let (id, site) = &check.unknown_citations[0];
    assert_eq!(
        (id.as_str(), site.file.as_str(), site.line),
        ("FOLD-99", "reference-kernel/tests/fold.rs", 4)
    );
    let text = check.to_string();
    assert!(
        text.contains("reference-kernel/tests/fold.rs:4") && text.contains("FOLD-99"),
        "{text}"
    );
}

#[test]
fn unknown_citation_in_string_literal_is_reported() {
    let fx = Fixture::new("unknown-literal");
    fx.write(
        "conformance-kits/src/event_store.rs",
        "pub fn cases() -> Vec<Case> {\n    vec![case(\"append_is_ordered\", &[\"SNAP-01\", \"SPI-99\"])]\n}\n",
    );
    fx.write(
        "vectors/fold/step-failed.json",
        "{\n  \"id\": \"step-failed\",\n  \"rules\": [\"FOLD-01\",\n            \"GAP-01\", \"GAP-77\"]\n}\n",
    );
    fx.write(
        "simulator/src/invariants.rs",
        "const GAPLESS: Invariant = Invariant { rule: \"SNAP-01\" };\n",
    );
    let index = scan_evidence(fx.root());
    let check = check_evidence(&mini_catalogue(), &index, &[]);
    assert!(check.missing.is_empty(), "{check}");
    let unknown: Vec<(&str, &str, usize)> = check
        .unknown_citations
        .iter()
        .map(|(id, s)| (id.as_str(), s.file.as_str(), s.line))
        .collect();
    assert_eq!(
        unknown,
        [
            ("GAP-77", "vectors/fold/step-failed.json", 4),
            ("SPI-99", "conformance-kits/src/event_store.rs", 2)
        ]
    );
    let kit = &index.sites_for("SNAP-01")[0];
    assert_eq!((kit.kind, kit.name.as_str()), (SiteKind::Kit, "cases"));
    let vector = &index.sites_for("FOLD-01")[0];
    assert_eq!(
        (vector.kind, vector.name.as_str(), vector.line),
        (SiteKind::Vector, "step-failed", 3)
    );
    assert_eq!(index.sites_for("SNAP-01")[1].kind, SiteKind::Invariant);
    assert!(index.has_evidence("GAP-01"), "gap ids are known citations");
}

#[test]
fn stale_exemptions_are_reported() {
    let fx = Fixture::new("stale");
    fx.write(
        "reference-kernel/tests/fold.rs",
        "#[test]\nfn fold_01_replay_is_identical() {}\n",
    );
    let index = scan_evidence(fx.root());
    let exemptions = [
        exemption("FOLD-01", "not built yet"), // now has evidence
        exemption("SNAP-01", ""),              // empty reason
        exemption("FOLD-77", "typo"),          // unknown rule
        exemption("FOLD-02", "optional"),      // MAY: needs no exemption
        exemption("GAP-01", "gap"),            // not a rule
    ];
    let check = check_evidence(&mini_catalogue(), &index, &exemptions);
    assert_eq!(
        check.stale_exemptions,
        ["FOLD-01", "SNAP-01", "FOLD-77", "FOLD-02", "GAP-01"]
    );
    assert!(
        check.stale_reasons[0].contains("reference-kernel/tests/fold.rs:2"),
        "{}",
        check.stale_reasons[0]
    );
    assert!(!check.is_ok());
    let text = check.to_string();
    assert!(
        text.contains("no longer needed") && text.contains("empty reason"),
        "{text}"
    );
    // Duplicates are stale too.
    let dup = [exemption("SNAP-01", "a"), exemption("SNAP-01", "b")];
    assert_eq!(
        check_evidence(&mini_catalogue(), &index, &dup).stale_exemptions,
        ["SNAP-01"]
    );
}

#[test]
fn prose_mentions_do_not_count() {
    let fx = Fixture::new("prose");
    fx.write(
        "reference-kernel/tests/fold.rs",
        concat!(
            "//! Covers FOLD-01; see fn fold_01_in_a_comment.\n",
            "/// fn snap_01_in_a_doc_comment() {}\n",
            "/* #[test] fn fold_99_in_a_block_comment() {} */\n",
            "#[test]\nfn unrelated() {\n",
            "    let src = \"#[test]\\nfn fold_98_inside_a_string() {}\";\n",
            "    let note = \"see FOLD-01 for details\";\n",
            "    let _ = (src, note);\n}\n",
        ),
    );
    fx.write("src/main.rs", "fn main() { let _ = \"FOLD-01\"; }\n");
    fx.write(
        "docs/rules.json",
        "{ \"rules\": [\"FOLD-01\", \"FOLD-97\"] }\n",
    );
    fx.write("vectors/README.md", "FOLD-01 \"FOLD-01\"\n");
    fx.write(
        "target/debug/build/x.rs",
        "#[test]\nfn fold_01_in_target() {}\n",
    );
    fx.write(".git/hooks/x.rs", "#[test]\nfn fold_01_in_git() {}\n");
    let index = scan_evidence(fx.root());
    assert!(
        index.sites.is_empty(),
        "nothing here is evidence: {:?}",
        index.sites
    );
}

#[test]
fn exemption_file_is_strict() {
    assert!(parse_exemptions(
        "[[exemption]]\nrule = \"FOLD-01\"\nreason = \"r\"\nissue = \"#4\"\n"
    )
    .is_ok());
    assert!(
        parse_exemptions("[[exemption]]\nrule = \"FOLD-01\"\nreason = \"r\"\nowner = \"x\"\n")
            .is_err()
    );
    assert!(
        parse_exemptions("[[exemption]]\nrule = \"FOLD-01\"\n").is_err(),
        "reason is required"
    );
    assert_eq!(parse_exemptions("").map(|v| v.len()), Ok(0));
}
