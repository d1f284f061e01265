//! Replaying committed inputs: the seed corpora, crash artifacts and named regressions.

use crate::{run_target, PropertyViolation, Target};
use std::path::{Path, PathBuf};

/// Inputs known to fail today, each with the reason: `(target, file name, reason)`.
/// The replay test requires each of them to still fail (an unexpected pass means the
/// bug was fixed: delete the entry) and every other input to pass.
pub const EXPECTED_FAILURES: &[(&str, &str, &str)] = &[
    // Empty: the one kernel bug the fuzzers found (canonical number ties,
    // `ecmascript-tie-rounds-to-even-562949953421327.2`) is fixed in
    // reference-kernel/src/canonical.rs; its regression file now must pass.
];

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
/// so the random-input tests stay green until it is fixed. None is known today.
pub fn known_kernel_bug(_v: &PropertyViolation) -> Option<&'static str> {
    None
}
