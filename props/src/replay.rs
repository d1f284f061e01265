//! Replaying committed inputs: the seed corpora, crash artifacts and named regressions.

use crate::{run_target, PropertyViolation, Target};
use std::path::{Path, PathBuf};

/// Inputs known to fail today, each with the reason: `(target, file name, reason)`.
/// The replay test requires each of them to still fail (an unexpected pass means the
/// bug was fixed: delete the entry) and every other input to pass.
pub const EXPECTED_FAILURES: &[(&str, &str, &str)] = &[(
    "canonical_json",
    "ecmascript-tie-rounds-to-even-562949953421327.2",
    "kernel bug (reference-kernel/src/canonical.rs write_number): the double \
     562949953421327.25 has two shortest round-trip forms, ...327.2 and ...327.3, equally \
     close; ECMAScript Number::toString (and so RFC 8785) takes the even digit, ...327.2, \
     but Rust's `{:e}` shortest formatting gives ...327.3. Fix: keep the digit count k of \
     `{:e}` but take the digits from `format!(\"{:.*e}\", k - 1, x.abs())` (exact, \
     round-half-even)",
)];

/// One committed input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    /// Its target.
    pub target: Target,
    /// Its path.
    pub path: PathBuf,
}

/// Every committed input under `fuzz/corpus/<target>/`, `fuzz/artifacts/<target>/` and
/// `props/regressions/<target>/`, given the workspace root. Sorted by path.
pub fn committed_inputs(root: &Path) -> Vec<Committed> {
    let mut out = Vec::new();
    for base in ["fuzz/corpus", "fuzz/artifacts", "props/regressions"] {
        for target in Target::ALL {
            let dir = root.join(base).join(target.name());
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_file()
                    && !path
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                {
                    out.push(Committed { target, path });
                }
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Runs one committed input.
pub fn replay(input: &Committed) -> Result<(), PropertyViolation> {
    let bytes = std::fs::read(&input.path).unwrap_or_default();
    run_target(input.target, &bytes)
}

/// The expected-failure entry for `input`, if any.
pub fn expected_failure(input: &Committed) -> Option<&'static str> {
    let name = input.path.file_name()?.to_string_lossy().into_owned();
    EXPECTED_FAILURES
        .iter()
        .find(|(t, n, _)| *t == input.target.name() && *n == name)
        .map(|(_, _, why)| *why)
}

/// Whether `v` is an instance of a known kernel bug listed in [`EXPECTED_FAILURES`],
/// so the random-input tests stay green until it is fixed (the named regression file
/// keeps it visible and detects the fix). Today: the canonical-number tie (EMIT-04),
/// recognised as a kernel form that differs from the reference only in a number whose
/// two spellings denote the same double.
pub fn known_kernel_bug(v: &PropertyViolation) -> Option<&'static str> {
    if v.rule != "EMIT-04" || !v.context.starts_with("kernel vs reference") {
        return None;
    }
    let a: serde_json::Value = serde_json::from_str(&v.expected).ok()?;
    let b: serde_json::Value = serde_json::from_str(&v.actual).ok()?;
    crate::canonical::same_as_doubles(&a, &b).then_some(EXPECTED_FAILURES[0].2)
}
