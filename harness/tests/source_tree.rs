//! harness/build_tree.rs decides whether a build has a source tree to digest: a
//! checkout's workspace does, a published package (whose parent is a registry directory
//! holding other crates) does not, whatever sits beside it.

#[path = "../build_tree.rs"]
mod build_tree;

use std::path::Path;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_checkout_this_test_runs_in_is_a_source_tree() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = build_tree::source_root(manifest).expect("a checkout is a source tree");
    assert_eq!(root, manifest.parent().unwrap());
    assert!(root.join("harness/build.rs").is_file());
}

#[test]
fn parents_that_are_not_this_workspace_are_no_source_tree() {
    let dir = std::env::temp_dir().join(format!("loom-build-tree-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // (parent Cargo.toml or none, crate directory name, is a source tree?)
    let cases: [(Option<&str>, &str, bool); 5] = [
        // A registry directory: crates side by side, no Cargo.toml of its own.
        (None, "loom-harness-0.1.0", false),
        // Another project's workspace that happens to hold the unpacked package.
        (
            Some("[workspace]\nmembers = [\"app\"]\n"),
            "loom-harness-0.1.0",
            false,
        ),
        // A package beside a Cargo.toml that is not a workspace.
        (
            Some("[package]\nname = \"x\"\nmembers = [\"harness\"]\n"),
            "harness",
            false,
        ),
        // The right workspace shape but the crate is not the `harness` member.
        (
            Some("[workspace]\nmembers = [\"harness\"]\n"),
            "loom-harness-0.1.0",
            false,
        ),
        // This project's workspace shape.
        (
            Some("[workspace]\nmembers = [\".\", \"harness\", \"stores\"]\n"),
            "harness",
            true,
        ),
    ];
    for (i, (parent_toml, crate_dir, expected)) in cases.into_iter().enumerate() {
        let root = dir.join(format!("case{i}"));
        let manifest = root.join(crate_dir);
        write(
            &manifest.join("Cargo.toml"),
            "[package]\nname = \"loom-harness\"\n",
        );
        if let Some(text) = parent_toml {
            write(&root.join("Cargo.toml"), text);
        }
        let got = build_tree::source_root(&manifest);
        assert_eq!(
            got.is_some(),
            expected,
            "case {i}: {parent_toml:?} / {crate_dir}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_no_tree_marker_can_never_match_a_recorded_digest() {
    assert!(!build_tree::NO_SOURCE_TREE.starts_with("sha256:"));
}
