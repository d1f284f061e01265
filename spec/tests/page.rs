//! docs/rules.md is the catalogue, generated: the page cannot drift from spec/rules.toml,
//! and no document points readers at a rules file the repository does not have.

use loom_spec::page::{anchor, rules_markdown};
use loom_spec::Catalogue;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn conf_01_the_rules_page_is_generated_from_the_catalogue() {
    let catalogue = Catalogue::load();
    let generated = rules_markdown(&catalogue);
    let path = root().join("docs/rules.md");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/rules.md differs from spec/rules.toml; regenerate it with `cargo run -- rules --markdown > docs/rules.md`"
    );
    for r in catalogue.rules() {
        assert!(
            generated.contains(&format!("<a id=\"{}\"></a>{}", anchor(&r.id), r.id)),
            "{} has no anchor",
            r.id
        );
    }
    for g in catalogue.gaps() {
        assert!(generated.contains(&format!("<a id=\"{}\"></a>", anchor(&g.id))));
    }
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() && !name.starts_with('.') && name != "target" && name != "node_modules" {
            markdown_files(&p, out);
        } else if name.ends_with(".md") {
            out.push(p);
        }
    }
}

#[test]
fn documents_cite_the_rules_page_not_a_missing_catalogue_file() {
    let mut files = Vec::new();
    markdown_files(&root(), &mut files);
    assert!(files.len() > 10, "found only {} documents", files.len());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            !text.contains("spec/RULES.md"),
            "{} cites spec/RULES.md, which is not in the repository; cite docs/rules.md",
            f.display()
        );
    }
}
