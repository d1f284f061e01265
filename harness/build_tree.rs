//! Which directory is the source tree a `loom-harness` build belongs to (shared by
//! `build.rs` and its test, so the rule is tested where it is used).
//!
//! A build from a checkout has the workspace root as this crate's parent: a Cargo.toml
//! that declares a `[workspace]` whose members include `harness`. A build from a
//! published package (crates.io, `cargo install loom-conform`, `cargo package`'s verify
//! step) has a registry or package directory as its parent, which is no source tree:
//! digesting it would name whatever happens to sit beside the package.

use std::path::{Path, PathBuf};

/// The workspace root this crate was built in, or `None` when it was built from a
/// published package.
pub fn source_root(manifest_dir: &Path) -> Option<PathBuf> {
    let root = manifest_dir.parent()?;
    let cargo_toml = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    let declares_workspace = cargo_toml.lines().any(|l| l.trim() == "[workspace]");
    let harness_is_member = cargo_toml
        .lines()
        .filter(|l| l.trim_start().starts_with("members"))
        .any(|l| l.contains("\"harness\""));
    let this_crate = manifest_dir.file_name()? == "harness";
    (declares_workspace && harness_is_member && this_crate).then(|| root.to_path_buf())
}

/// The digest value recorded when there is no source tree: it never equals a digest
/// (those start `sha256:`), so no JUnit file's record can match it.
pub const NO_SOURCE_TREE: &str = "none: built from a published package";
