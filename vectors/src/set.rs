//! The vector set: loading `vectors/cases/**`, its digest and `vectors/VERSION.json`.
//!
//! The committed set is also embedded in the crate at build time ([`embedded_set`],
//! [`export`]), so the `loom` binary carries the vectors it runs and never reads the
//! source tree it was built from.
//!
//! The digest is part of the set's version (the "wire fold-vector pin", CONF-02,
//! CONF-03): `sha256:` + the hex sha256 of the RFC 8785 canonical JSON of the array of
//! every vector, sorted by id. A test fails when `VERSION.json` does not match the
//! committed files, so any change to a vector is also a visible version change.

use crate::format::{read_vector_file, Kind, Vector, VectorError, FORMAT_VERSION};
use crate::limits::VECTOR_FILES_MAX;
use loom_kernel::digest::sha256_hex;
use loom_kernel::{canonical_json, EVENT_SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `vectors/VERSION.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VersionFile {
    /// The vector format version ([`FORMAT_VERSION`]).
    pub schema_version: u32,
    /// The EVENT_SCHEMA version the set was generated for.
    pub event_schema_version: String,
    /// How many vectors the set holds.
    pub count: usize,
    /// The set digest ([`set_digest`]).
    pub digest: String,
}

/// A loaded set.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorSet {
    /// The vectors, in file order (kind folder, then id).
    pub vectors: Vec<Vector>,
}

impl VectorSet {
    /// The set digest.
    pub fn digest(&self) -> String {
        set_digest(&self.vectors)
    }

    /// The version file describing this set.
    pub fn version_file(&self) -> VersionFile {
        version_file(&self.vectors)
    }
}

/// The files of the set this crate was built with, embedded by `build.rs`.
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// The crate's own `vectors/` directory in the source checkout (where `cases/` and
/// `VERSION.json` live). For the tests and the generator only: a `loom` binary never
/// reads it, it runs [`embedded_set`].
pub fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The committed cases directory in the source checkout, `vectors/cases` (see
/// [`vectors_dir`]).
pub fn default_cases_dir() -> PathBuf {
    vectors_dir().join("cases")
}

/// `sha256:<hex>` of the canonical JSON of every vector, sorted by id.
pub fn set_digest(vectors: &[Vector]) -> String {
    let mut sorted: Vec<&Vector> = vectors.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let array = Value::Array(sorted.iter().map(|v| v.to_value()).collect());
    format!("sha256:{}", sha256_hex(&canonical_json(&array)))
}

/// The version file for a set of vectors.
pub fn version_file(vectors: &[Vector]) -> VersionFile {
    VersionFile {
        schema_version: FORMAT_VERSION,
        event_schema_version: EVENT_SCHEMA_VERSION.to_owned(),
        count: vectors.len(),
        digest: set_digest(vectors),
    }
}

/// Reads `VERSION.json` beside a cases directory.
pub fn read_version_file(path: &Path) -> Result<VersionFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    crate::format::decode(&v, &path.display().to_string(), "").map_err(|e| e.to_string())
}

/// Every `*.json` file under `cases/<kind>/`, sorted. Other files are errors, so a stray
/// file cannot silently drop out of the set.
pub fn case_files(cases: &Path) -> Result<Vec<PathBuf>, VectorError> {
    let err = |p: &Path, m: String| VectorError {
        source: p.display().to_string(),
        path: "$".into(),
        message: m,
    };
    let mut out = Vec::new();
    let entries = std::fs::read_dir(cases).map_err(|e| err(cases, format!("cannot list: {e}")))?;
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().and_then(|s| s.to_str()).unwrap_or("");
        if !dir.is_dir() || Kind::parse(name).is_none() {
            return Err(err(
                &dir,
                "only one folder per kind (fold, normalize, digest, ingress, emit, runtime) belongs in cases/".into(),
            ));
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| err(&dir, format!("cannot list: {e}")))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .collect();
        files.sort();
        for f in files {
            if f.extension().and_then(|s| s.to_str()) != Some("json") {
                return Err(err(&f, "not a .json vector file".into()));
            }
            out.push(f);
            if out.len() > VECTOR_FILES_MAX {
                return Err(err(
                    cases,
                    format!("more than {VECTOR_FILES_MAX} vector files"),
                ));
            }
        }
    }
    Ok(out)
}

/// Loads and checks every vector under `cases`. Errors name each bad file; ids must be
/// unique.
pub fn load_set(cases: &Path) -> Result<VectorSet, Vec<VectorError>> {
    let files = case_files(cases).map_err(|e| vec![e])?;
    let mut errors = Vec::new();
    let mut vectors = Vec::with_capacity(files.len());
    for f in &files {
        match read_vector_file(f) {
            Ok(v) => vectors.push(v),
            Err(e) => errors.push(e),
        }
    }
    finish(vectors, errors, &cases.display().to_string())
}

/// The set, unless a file failed to parse or an id is used twice.
fn finish(
    vectors: Vec<Vector>,
    mut errors: Vec<VectorError>,
    source: &str,
) -> Result<VectorSet, Vec<VectorError>> {
    let mut ids: Vec<&str> = vectors.iter().map(|v| v.id.as_str()).collect();
    ids.sort_unstable();
    for w in ids.windows(2) {
        if w[0] == w[1] {
            errors.push(VectorError {
                source: source.to_owned(),
                path: "$.id".into(),
                message: format!("id `{}` is used twice", w[0]),
            });
        }
    }
    if errors.is_empty() {
        Ok(VectorSet { vectors })
    } else {
        Err(errors)
    }
}

/// Every file of the set embedded in this build, as `(path, contents)` with paths
/// relative to the set's root: `cases/<kind>/<id>.json`, `VERSION.json` and
/// `schema/vector.schema.json`, sorted by path.
pub fn embedded_files() -> &'static [(&'static str, &'static str)] {
    embedded::FILES
}

/// The golden-log corpus embedded in this build (`golden/<entry>/<file>`, sorted by
/// path): what [`crate::golden::embedded_corpus`] reads, so an installed `loom` replays
/// the corpus without the source tree.
pub fn embedded_golden_files() -> &'static [(&'static str, &'static str)] {
    embedded::GOLDEN_FILES
}

/// The set embedded in this build: what `loom vectors run` runs, so an installed binary
/// needs no source tree. Checked exactly as [`load_set`] checks files on disk.
pub fn embedded_set() -> Result<VectorSet, Vec<VectorError>> {
    let mut vectors = Vec::new();
    let mut errors = Vec::new();
    for (path, text) in embedded_files() {
        let Some(rel) = path.strip_prefix("cases/") else {
            continue;
        };
        let (folder, file) = rel.rsplit_once('/').unwrap_or(("", rel));
        let stem = file.strip_suffix(".json").unwrap_or(file);
        let source = format!("(embedded) {path}");
        match crate::format::parse_vector_file(text, &source, stem, folder) {
            Ok(v) => vectors.push(v),
            Err(e) => errors.push(e),
        }
    }
    finish(vectors, errors, "(embedded) cases")
}

/// The embedded `VERSION.json`.
pub fn embedded_version_file() -> Result<VersionFile, String> {
    let text = embedded_files()
        .iter()
        .find(|(p, _)| *p == "VERSION.json")
        .map(|(_, t)| *t)
        .ok_or("the build embedded no VERSION.json")?;
    let v: Value = serde_json::from_str(text).map_err(|e| format!("VERSION.json: {e}"))?;
    crate::format::decode(&v, "(embedded) VERSION.json", "").map_err(|e| e.to_string())
}

/// Writes the embedded set under `dir` (`cases/**`, `VERSION.json`, `schema/**`),
/// creating it. Refuses a `dir` that already holds a `cases/` folder or a
/// `VERSION.json`, unless `replace` is set; then the old `cases/` is removed first, so
/// no vector of an older set is left behind. Returns how many files were written.
pub fn export(dir: &Path, replace: bool) -> Result<usize, String> {
    let cases = dir.join("cases");
    let version = dir.join("VERSION.json");
    if cases.exists() || version.exists() {
        if !replace {
            return Err(format!(
                "{} already holds a vector set; pass --force to replace it",
                dir.display()
            ));
        }
        if cases.exists() {
            std::fs::remove_dir_all(&cases)
                .map_err(|e| format!("removing {}: {e}", cases.display()))?;
        }
    }
    let mut n = 0;
    for (rel, text) in embedded_files() {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("creating {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
        n += 1;
    }
    Ok(n)
}

/// Loads the vector files under each of `dirs` (the `cases/` layout: `<kind>/<id>.json`,
/// as `loom vectors fuzz` writes them) and appends them to `vectors`. An id that is
/// already in use, or a file that does not load, is an error naming it: an extra vector
/// never silently replaces or shadows one of the set.
pub fn add_extra(vectors: &mut Vec<Vector>, dirs: &[PathBuf]) -> Result<usize, String> {
    let mut added = 0;
    for dir in dirs {
        let set = load_set(dir).map_err(|errors| {
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })?;
        for v in set.vectors {
            if vectors.iter().any(|x| x.id == v.id) {
                return Err(format!(
                    "{}: vector id `{}` is already in use",
                    dir.display(),
                    v.id
                ));
            }
            vectors.push(v);
            added += 1;
        }
    }
    Ok(added)
}
