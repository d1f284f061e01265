//! Self-checks on the source tree (rust-analyzer's tidy, in our terms): the kernel's
//! dependency allow-list, crate docs everywhere, and the fold's purity by construction.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The `[dependencies]` names of a manifest (not dev-dependencies).
fn normal_dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t == "[dependencies]";
            continue;
        }
        if inside && !t.is_empty() && !t.starts_with('#') {
            if let Some((name, _)) = t.split_once('=') {
                out.push(name.trim().trim_end_matches(".workspace").to_string());
            }
        }
    }
    out
}

#[test]
fn place_01_kernel_depends_on_serde_and_sha2_only() {
    // Placement is a kernel concern, cloud-provider logic is not (P10); the kernel also
    // knows no database, async runtime, clock or randomness crate.
    let deps = normal_dependencies(&read(&root().join("reference-kernel/Cargo.toml")));
    assert_eq!(
        deps,
        ["serde", "serde_json", "sha2"],
        "loom-kernel gained a dependency: {deps:?}"
    );
}

#[test]
fn fold_02_fold_code_reads_no_clock_randomness_environment_or_hash_order() {
    let forbidden = [
        "SystemTime",
        "Instant",
        "std::env",
        "HashMap",
        "HashSet",
        "thread_rng",
        "rand::",
        "std::fs",
        "std::net",
    ];
    for file in [
        "fold/mod.rs",
        "fold/handlers.rs",
        "fold/state.rs",
        "snapshot.rs",
        "canonical.rs",
        "digest.rs",
        "ingress/mod.rs",
        "ingress/emit.rs",
        "schema.rs",
    ] {
        let text = read(&root().join("reference-kernel/src").join(file));
        for word in forbidden {
            assert!(!text.contains(word), "reference-kernel/src/{file} mentions `{word}`: the fold and the gate must stay pure");
        }
    }
}

#[test]
fn every_crate_opens_with_a_crate_doc() {
    let mut checked = 0;
    for entry in std::fs::read_dir(root()).unwrap().flatten() {
        let lib = entry.path().join("src/lib.rs");
        if lib.exists() {
            let text = read(&lib);
            assert!(
                text.trim_start().starts_with("//!"),
                "{} does not open with a `//!` crate doc",
                lib.display()
            );
            checked += 1;
        }
    }
    assert!(read(&root().join("src/main.rs"))
        .trim_start()
        .starts_with("//!"));
    assert!(
        checked >= 5,
        "expected the workspace's library crates, found {checked}"
    );
}
