//! Embeds the committed vector set (`cases/**`, `VERSION.json`, `schema/*.json`) and the
//! golden-log corpus (`golden/**`) into the crate, so a `loom` binary carries its vectors
//! and its corpus and runs without the source tree.
//!
//! Writes `$OUT_DIR/embedded.rs`: one `(relative path, include_str!(…))` pair per file,
//! in sorted order, in `FILES` (the vector set) and `GOLDEN_FILES` (the corpus). Only
//! the file contents end up in the binary, never a build path.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    // A directory makes cargo re-run this script when any file below it changes.
    for watched in ["cases", "schema", "VERSION.json", "golden"] {
        println!("cargo:rerun-if-changed={watched}");
    }
    let mut files = Vec::new();
    files_under(&manifest.join("cases"), &mut files);
    files_under(&manifest.join("schema"), &mut files);
    files.push(manifest.join("VERSION.json"));

    let mut code = String::from("/// Every embedded file: (path relative to `vectors/`, contents).\npub static FILES: &[(&str, &str)] = &[\n");
    push_files(&mut code, &manifest, &files);
    code.push_str("];\n");
    let mut golden = Vec::new();
    files_under(&manifest.join("golden"), &mut golden);
    code.push_str("/// The golden-log corpus: (path relative to `vectors/`, contents).\npub static GOLDEN_FILES: &[(&str, &str)] = &[\n");
    push_files(&mut code, &manifest, &golden);
    code.push_str("];\n");
    std::fs::write(out_dir.join("embedded.rs"), code).expect("write embedded.rs");
}

fn push_files(code: &mut String, manifest: &Path, files: &[PathBuf]) {
    for f in files {
        let rel = f
            .strip_prefix(manifest)
            .expect("under the manifest dir")
            .to_string_lossy()
            .replace('\\', "/");
        writeln!(
            code,
            "    ({rel:?}, include_str!({:?})),",
            f.to_string_lossy()
        )
        .expect("writing to a String");
    }
}
