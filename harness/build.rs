//! Embeds the digest of the source tree this binary was built from
//! (`LOOM_SOURCE_TREE_DIGEST`), so that `loom check` can tell whether a JUnit file
//! came from a test run of the same tree (docs/coverage.md, "Evidence that ran").
//!
//! The digest is sha256 over every file's relative path and sha256, in path order,
//! skipping build output and caches. Cargo reruns this script when anything under the
//! scanned top-level entries changes. A build from a published package has no source
//! tree (`build_tree::source_root`); it records `build_tree::NO_SOURCE_TREE`, which no
//! test run's record matches.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

#[path = "build_tree.rs"]
mod build_tree;

/// Directory names never part of the source tree (build output, caches, run output).
const SKIPPED_DIRS: [&str; 8] = [
    "target",
    ".git",
    "node_modules",
    "__pycache__",
    "loom-reports",
    "artifacts",
    ".venv",
    ".pytest_cache",
];

fn skipped(name: &str) -> bool {
    SKIPPED_DIRS.contains(&name) || name.ends_with(".pyc") || name == ".DS_Store"
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if skipped(&name) {
            continue;
        }
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-changed=build_tree.rs");
    let Some(root) = build_tree::source_root(&manifest) else {
        println!(
            "cargo:rustc-env=LOOM_SOURCE_TREE_DIGEST={}",
            build_tree::NO_SOURCE_TREE
        );
        println!("cargo:rustc-env=LOOM_SOURCE_TREE_FILES=0");
        return;
    };
    let mut files = Vec::new();
    walk(&root, &mut files);
    if let Ok(entries) = std::fs::read_dir(&root) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !skipped(&name) {
                println!("cargo:rerun-if-changed={}", entry.path().display());
            }
        }
    }
    let mut rel: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter_map(|p| {
            let r = p
                .strip_prefix(&root)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            Some((r, p))
        })
        .collect();
    rel.sort();
    let mut tree = Sha256::new();
    for (name, path) in &rel {
        let bytes = std::fs::read(path).unwrap_or_default();
        let file = Sha256::digest(&bytes);
        tree.update(name.as_bytes());
        tree.update([0]);
        tree.update(file);
    }
    let hex: String = tree.finalize().iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=LOOM_SOURCE_TREE_DIGEST=sha256:{hex}");
    println!("cargo:rustc-env=LOOM_SOURCE_TREE_FILES={}", rel.len());
}
