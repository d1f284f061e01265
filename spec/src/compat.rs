//! `checkCompatibility` (COMPAT-04, COMPAT-05, GAP-28) and the supported matrix
//! (COMPAT-06).
//!
//! Input is a map from a constant name to a declared semver string. Each entry is compared
//! with the manifest constant of the same name: compatible iff the majors are equal. There
//! is no special case for 0.x, and pre-release or build tags are ignored. An unknown name,
//! a malformed version or an empty map is a usage error.

use crate::manifest::{VersionConstant, VERSION_CONSTANTS};
use loom_kernel::versions::SemVer;
use std::collections::BTreeMap;
use std::fmt;

/// Exit code: every declared version is compatible.
pub const EXIT_COMPATIBLE: i32 = 0;
/// Exit code: at least one declared version has a different major.
pub const EXIT_INCOMPATIBLE: i32 = 1;
/// Exit code: usage error (empty input, unknown name, malformed version).
pub const EXIT_USAGE: i32 = 2;

/// The verdict for one declared version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Same major as the kernel's constant.
    Compatible,
    /// Different major.
    Incompatible,
    /// The entry could not be judged; the text says why.
    Error(String),
}

/// One line of a [`CompatReport`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompatEntry {
    /// The name as the caller wrote it.
    pub name: String,
    /// The version the caller declared.
    pub declared: String,
    /// The kernel constant it was compared with (`NAME=value`), or empty when the name is
    /// unknown.
    pub kernel: String,
    /// The outcome.
    pub verdict: Verdict,
}

/// The result of [`check_compatibility`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompatReport {
    /// One entry per declared name, in the input map's (sorted) order.
    pub entries: Vec<CompatEntry>,
}

impl CompatReport {
    /// True iff there is at least one entry and every entry is compatible.
    pub fn is_compatible(&self) -> bool {
        !self.entries.is_empty()
            && self
                .entries
                .iter()
                .all(|e| e.verdict == Verdict::Compatible)
    }

    /// True iff the input was empty or any entry is a usage error.
    pub fn has_errors(&self) -> bool {
        self.entries.is_empty()
            || self
                .entries
                .iter()
                .any(|e| matches!(e.verdict, Verdict::Error(_)))
    }

    /// The process exit code for `loom compat`: 2 on a usage error (it wins, since the
    /// answer is unknown), else 1 on any incompatibility, else 0.
    pub fn exit_code(&self) -> i32 {
        if self.has_errors() {
            EXIT_USAGE
        } else if self.is_compatible() {
            EXIT_COMPATIBLE
        } else {
            EXIT_INCOMPATIBLE
        }
    }
}

impl fmt::Display for CompatReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.entries.is_empty() {
            return writeln!(
                f,
                "error: no versions declared (try `loom compat --abi 1.3.0`)"
            );
        }
        for e in &self.entries {
            match &e.verdict {
                Verdict::Compatible => writeln!(
                    f,
                    "ok            {} {} ~ kernel {}",
                    e.name, e.declared, e.kernel
                )?,
                Verdict::Incompatible => writeln!(
                    f,
                    "INCOMPATIBLE  {} {} ~ kernel {} (majors differ)",
                    e.name, e.declared, e.kernel
                )?,
                Verdict::Error(why) => {
                    writeln!(f, "error         {} {}: {why}", e.name, e.declared)?
                }
            }
        }
        Ok(())
    }
}

/// Folds a name for lookup: ASCII-lowercased with `-` and `_` removed, so
/// `EVENT_STORE_SPI_VERSION`, `event-store-spi` and `eventStore` meet.
pub fn normalize_name(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Resolves a constant name or one of its short names (see
/// [`VersionConstant::aliases`]) to the kernel constant.
pub fn resolve_name(name: &str) -> Option<&'static VersionConstant> {
    let wanted = normalize_name(name);
    if wanted.is_empty() {
        return None;
    }
    VERSION_CONSTANTS.iter().find(|c| {
        normalize_name(c.name) == wanted || c.aliases.iter().any(|a| normalize_name(a) == wanted)
    })
}

/// Compares each declared version with the kernel constant of the same name (GAP-28).
pub fn check_compatibility(declared: &BTreeMap<String, String>) -> CompatReport {
    let entries = declared
        .iter()
        .map(|(name, version)| {
            let Some(constant) = resolve_name(name) else {
                return CompatEntry {
                    name: name.clone(),
                    declared: version.clone(),
                    kernel: String::new(),
                    verdict: Verdict::Error(format!(
                        "unknown contract name `{name}` (see docs/compatibility.md for the names)"
                    )),
                };
            };
            let kernel = format!("{}={}", constant.name, constant.value);
            let verdict = match (SemVer::parse(version.trim()), SemVer::parse(constant.value)) {
                (Err(why), _) => Verdict::Error(why),
                (_, Err(why)) => Verdict::Error(format!("kernel constant is malformed: {why}")),
                (Ok(d), Ok(k)) if d.major == k.major => Verdict::Compatible,
                (Ok(_), Ok(_)) => Verdict::Incompatible,
            };
            CompatEntry {
                name: name.clone(),
                declared: version.clone(),
                kernel,
                verdict,
            }
        })
        .collect();
    CompatReport { entries }
}

/// One supported combination of contract majors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatrixRow {
    /// A label for the row.
    pub label: &'static str,
    /// `(constant name, supported major)` for every constant of
    /// [`VERSION_CONSTANTS`].
    pub majors: &'static [(&'static str, u64)],
}

impl MatrixRow {
    /// The supported major for a constant name (exact constant name), if the row lists it.
    pub fn major_of(&self, constant: &str) -> Option<u64> {
        self.majors
            .iter()
            .find(|(n, _)| *n == constant)
            .map(|(_, m)| *m)
    }
}

/// The compatibility matrix (COMPAT-06). Loom moves in lockstep, so there is exactly one
/// supported row. The majors are pinned here on purpose: `tests/compat.rs` fails when a
/// kernel constant's major moves without this row (and docs/compatibility.md) moving too.
/// Note the EventStore SPI is major 2 although the spec says "all 1.x" (see the doc).
pub const SUPPORTED_MATRIX: &[MatrixRow] = &[MatrixRow {
    label: "lockstep (EVENT_SCHEMA 1.x, KERNEL_ABI 1.x, EventStore SPI 2.x)",
    majors: &[
        ("EVENT_SCHEMA_VERSION", 1),
        ("KERNEL_ABI_VERSION", 1),
        ("WIRE_ABI_VERSION", 1),
        ("EVENT_STORE_SPI_VERSION", 2),
        ("SNAPSHOT_STORE_SPI_VERSION", 1),
        ("ARCHIVE_STORE_SPI_VERSION", 1),
        ("BRANCH_REGISTRY_SPI_VERSION", 1),
        ("DISPATCHER_SPI_VERSION", 1),
        ("CONTENT_STORE_SPI_VERSION", 1),
        ("DURABLE_STATE_STORE_SPI_VERSION", 1),
        ("READ_MODEL_STORE_SPI_VERSION", 1),
    ],
}];
