//! CONF-07: capability badges claim only evidence that exists.

use loom_spec::{
    check_capabilities, check_capability_list, load_capabilities, parse_capabilities,
    scan_evidence, Catalogue, Maturity,
};
use std::path::PathBuf;

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn conf_07_capability_badges_claim_only_existing_evidence() {
    let root = workspace_root();
    let catalogue = Catalogue::load();
    let index = scan_evidence(&root);
    let problems = check_capabilities(&root, &catalogue, &index);
    let report: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert!(problems.is_empty(), "\n{}", report.join("\n"));
}

#[test]
fn required_capabilities_are_registered() {
    let caps = load_capabilities().expect("spec/capabilities.toml parses");
    for id in [
        "typed-failure-channels",
        "pure-fold",
        "snapshot-normalization",
        "versioned-fold",
        "kernel-manifest",
        "compatibility-check",
    ] {
        assert!(caps.iter().any(|c| c.id == id), "missing capability {id}");
    }
    let typed = caps
        .iter()
        .find(|c| c.id == "typed-failure-channels")
        .expect("registered");
    for rule in ["CONF-09", "FOLD-16", "TYPED-09"] {
        assert!(
            typed.rules.iter().any(|r| r == rule),
            "typed-failure-channels cites {rule}"
        );
    }
}

fn fixture_root(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loom-spec-caps-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("reference-kernel/tests")).expect("fixture dir");
    std::fs::write(
        dir.join("reference-kernel/tests/fold.rs"),
        "#[test]\nfn fold_09_step_failed_keeps_running() {}\n",
    )
    .expect("fixture file");
    dir
}

fn problems_for(toml: &str, name: &str) -> Vec<String> {
    let root = fixture_root(name);
    let caps = parse_capabilities(toml).expect("fixture registry parses");
    let catalogue = Catalogue::load();
    let index = scan_evidence(&root);
    let out = check_capability_list(&caps, &root, &catalogue, &index)
        .iter()
        .map(ToString::to_string)
        .collect();
    let _ = std::fs::remove_dir_all(&root);
    out
}

fn cap(maturity: &str, rules: &str, evidence: &str, note: &str) -> String {
    format!("[[capability]]\nid = \"c\"\ntitle = \"C\"\nmaturity = \"{maturity}\"\nrules = [{rules}]\nevidence = [{evidence}]\nnote = \"{note}\"\n")
}

#[test]
fn shipped_with_evidence_passes() {
    let toml = cap(
        "shipped",
        "\"FOLD-09\"",
        "\"reference-kernel/tests/*.rs\"",
        "",
    );
    assert_eq!(problems_for(&toml, "ok"), Vec::<String>::new());
}

#[test]
fn shipped_with_a_missing_path_fails() {
    let toml = cap(
        "shipped",
        "\"FOLD-09\"",
        "\"reference-kernel/tests/fold.rs\", \"benches/fold.rs\"",
        "",
    );
    let problems = problems_for(&toml, "missing-path");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("benches/fold.rs"));
}

#[test]
fn shipped_with_an_unevidenced_binding_rule_fails() {
    let toml = cap(
        "shipped",
        "\"FOLD-09\", \"FOLD-10\", \"SPI-02\"",
        "\"reference-kernel/tests/fold.rs\"",
        "",
    );
    let problems = problems_for(&toml, "unevidenced");
    assert_eq!(problems.len(), 1, "SPI-02 is a MAY rule: {problems:?}");
    assert!(problems[0].contains("FOLD-10"));
}

#[test]
fn no_existing_evidence_fails_at_any_maturity() {
    for maturity in ["shipped", "reference-defined", "provisional"] {
        let toml = cap(maturity, "\"GAP-01\"", "\"nowhere/*.rs\"", "why");
        let problems = problems_for(&toml, &format!("none-{maturity}"));
        assert!(
            problems
                .iter()
                .any(|p| p.contains("no evidence path that exists")),
            "{maturity}: {problems:?}"
        );
    }
}

#[test]
fn reference_defined_must_cite_a_gap() {
    let toml = cap(
        "reference-defined",
        "\"FOLD-09\"",
        "\"reference-kernel/tests/fold.rs\"",
        "",
    );
    let problems = problems_for(&toml, "refdef");
    assert_eq!(problems.len(), 1);
    assert!(problems[0].contains("GAP"));
}

#[test]
fn provisional_needs_a_note_and_ids_must_exist() {
    let toml = cap(
        "provisional",
        "\"FOLD-99\"",
        "\"reference-kernel/tests/fold.rs\", \"../etc/passwd\"",
        "",
    );
    let problems = problems_for(&toml, "provisional");
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("FOLD-99")));
    assert!(problems.iter().any(|p| p.contains("relative path")));
    assert!(problems.iter().any(|p| p.contains("note")));
}

#[test]
fn maturity_labels_parse() {
    let caps =
        parse_capabilities(&cap("reference-defined", "\"GAP-28\"", "\"x\"", "")).expect("parses");
    assert_eq!(caps[0].maturity, Maturity::ReferenceDefined);
    assert!(parse_capabilities(&cap("beta", "\"GAP-28\"", "\"x\"", "")).is_err());
}

#[test]
fn conf_09_typed_failure_channels_resolve_to_runtime_and_fold_suites() {
    let caps = loom_spec::load_capabilities().expect("capabilities parse");
    let typed = caps
        .iter()
        .find(|c| c.id == "typed-failure-channels")
        .expect("the L2 capability is registered");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for suite in [
        "reference-kernel/tests/runtime_typed.rs",
        "reference-kernel/tests/fold.rs",
    ] {
        assert!(
            typed.evidence.iter().any(|e| e == suite),
            "typed-failure-channels does not cite {suite}"
        );
        assert!(root.join(suite).exists(), "{suite} is missing");
    }
}
