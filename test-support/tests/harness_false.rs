//! In a `harness = false` test target, `#[test]` functions are not compiled at all (the
//! target is built without `--test`), so a test added there the usual way would never
//! run and nothing would say so. Every such target of the workspace must register its
//! tests as trials in `main`: none may hold a `#[test]` or `#[tokio::test]` attribute or a
//! `proptest!` block.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// The members of the workspace, from the root manifest's `members = [...]`.
fn members(root: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("a members list");
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(|m| root.join(m))
        .collect()
}

/// The files of a manifest's `[[test]]` targets with `harness = false`.
fn harness_false_files(dir: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    manifest
        .split("\n[")
        .filter(|section| section.starts_with("[test]]"))
        .filter(|section| {
            section
                .lines()
                .any(|l| l.split('#').next().unwrap().replace(' ', "") == "harness=false")
        })
        .map(|section| {
            let field = |key: &str| {
                section.lines().find_map(|l| {
                    let (k, v) = l.split_once('=')?;
                    (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
                })
            };
            match field("path") {
                Some(path) => dir.join(path),
                None => dir
                    .join("tests")
                    .join(format!("{}.rs", field("name").unwrap())),
            }
        })
        .collect()
}

#[test]
fn harness_false_test_files_hold_no_test_attributes() {
    let root = workspace();
    let mut files = Vec::new();
    for member in members(&root) {
        files.extend(harness_false_files(&member));
    }
    // The reader finds the targets: the kit tests and the vector files are two of them.
    for known in ["stores/tests/memory.rs", "vectors/tests/vectors.rs"] {
        assert!(
            files.iter().any(|f| f.ends_with(known)),
            "{known} not among the harness = false test files found: {files:?}"
        );
    }
    let mut offenders = Vec::new();
    for file in &files {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("#[test]")
                || code.starts_with("#[tokio::test")
                || code.starts_with("proptest!")
            {
                offenders.push(format!("{}:{}: {code}", file.display(), n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "these tests are never compiled (their target is harness = false); register each \
         in the file's main as a loom_test_support trial instead:\n{}",
        offenders.join("\n")
    );
}
