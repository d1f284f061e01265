//! The tests part: credits rules from a test run of *this* source tree.
//!
//! `./scripts/test` runs nextest, which writes JUnit XML, and then
//! `loom internal record-test-run JUNIT`, which writes `JUNIT.record.json` beside it:
//! the digest of the source tree the binary was built from and the sha256 of the JUnit
//! file. This part credits the file only when both still match: a JUnit file from
//! another tree, an older run, or written by hand credits nothing and is reported as
//! stale (one `error` result saying why).
//!
//! Of a credited file, a test that ran and passed is a `pass` for the rules its name
//! carries (`fold_09_…` → FOLD-09), a failed test is a `fail` (with or without rule
//! ids), and a skipped or ignored test is a skip, never evidence. Tests of the harness's
//! own crates are results against the harness subject; all others exercise the
//! reference.

use crate::junit::{self, Outcome};
use crate::subjects::REFERENCE;
use loom_report::{CaseResult, Failure, HARNESS_SUBJECT_ID};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The area tests results are written under.
pub const AREA: &str = "tests";

/// Crates whose tests check the harness itself (the report model, the catalogue, the
/// process runner, this crate, the test-skip helper): their results are the harness self-check and credit no
/// implementation.
pub const HARNESS_CRATES: [&str; 5] = [
    "loom-report",
    "loom-spec",
    "loom-process",
    "loom-harness",
    "loom-test-support",
];

/// Test binaries inside harness crates that exercise the reference rather than the
/// harness: `loom-spec` also holds the kernel manifest and the `loom compat` deployment
/// gate, which are part of the reference implementation.
pub const REFERENCE_SUITES: [&str; 2] = ["loom-spec::compat", "loom-spec::manifest"];

/// The suffix of the record written next to a JUnit file.
pub const RECORD_SUFFIX: &str = ".record.json";

/// What `loom internal record-test-run` writes next to a JUnit file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestRunRecord {
    /// The source tree the tests were built from ([`crate::SOURCE_TREE_DIGEST`]).
    pub source_tree_digest: String,
    /// `sha256:<hex>` of the JUnit file's bytes.
    pub junit_sha256: String,
}

/// The record's path for a JUnit file.
pub fn record_path(junit: &Path) -> PathBuf {
    let mut name = junit.as_os_str().to_owned();
    name.push(RECORD_SUFFIX);
    PathBuf::from(name)
}

fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Writes the record for `junit` (called by `./scripts/test` right after nextest).
pub fn record(junit: &Path) -> Result<PathBuf, String> {
    let bytes = std::fs::read(junit).map_err(|e| format!("{}: {e}", junit.display()))?;
    let record = TestRunRecord {
        source_tree_digest: crate::SOURCE_TREE_DIGEST.to_string(),
        junit_sha256: sha256_hex(&bytes),
    };
    let path = record_path(junit);
    let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Why a JUnit file credits nothing.
fn stale(junit: &Path, why: String) -> Vec<CaseResult> {
    vec![CaseResult::error(
        AREA,
        "junit",
        "test-run",
        Vec::<String>::new(),
        format!(
            "{}: {why}; it credits nothing. Run ./scripts/test in this source tree (it records the run), then check again",
            junit.display()
        ),
    )
    .with_subject(REFERENCE)]
}

/// The subject a test's suite belongs to: the harness for its own crates, else the
/// reference.
pub fn subject_of_suite(suite: &str) -> &'static str {
    let krate = suite.split("::").next().unwrap_or(suite);
    if HARNESS_CRATES.contains(&krate) && !REFERENCE_SUITES.contains(&suite) {
        HARNESS_SUBJECT_ID
    } else {
        REFERENCE
    }
}

/// Results from the JUnit file at `junit`, credited only when its record matches this
/// binary's source tree and the file's bytes. `Err` when there is no file at all.
pub fn run(junit: &Path) -> Result<Vec<CaseResult>, String> {
    let bytes = std::fs::read(junit).map_err(|e| format!("{}: {e}", junit.display()))?;
    let record_file = record_path(junit);
    let record: TestRunRecord = match std::fs::read_to_string(&record_file) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(r) => r,
            Err(e) => {
                return Ok(stale(
                    junit,
                    format!("its record {} is not valid: {e}", record_file.display()),
                ))
            }
        },
        Err(_) => {
            return Ok(stale(
                junit,
                format!(
                    "has no record ({} is missing), so nothing says which source tree it tested",
                    record_file.display()
                ),
            ))
        }
    };
    if record.junit_sha256 != sha256_hex(&bytes) {
        return Ok(stale(
            junit,
            "was changed after its test run was recorded".to_string(),
        ));
    }
    if !crate::SOURCE_TREE_DIGEST.starts_with("sha256:") {
        return Ok(stale(
            junit,
            format!(
                "cannot be matched to this binary: it was built from a published package, \
                 not a source tree ({}), so no test run is known to have tested it; run \
                 `./scripts/test` and then `loom check` from a checkout to credit the tests",
                crate::SOURCE_TREE_DIGEST
            ),
        ));
    }
    if record.source_tree_digest != crate::SOURCE_TREE_DIGEST {
        return Ok(stale(
            junit,
            format!(
                "is from a test run of another source tree ({}; this binary was built from {})",
                record.source_tree_digest,
                crate::SOURCE_TREE_DIGEST
            ),
        ));
    }
    let xml = String::from_utf8_lossy(&bytes);
    let cases = junit::parse(&xml);
    if cases.is_empty() {
        return Ok(stale(junit, "holds no <testcase>".to_string()));
    }
    Ok(results(&cases))
}

/// Results of parsed test cases (already known to be from this tree).
pub fn results(cases: &[junit::TestCase]) -> Vec<CaseResult> {
    let mut out = Vec::new();
    // Per subject: (passed, failed, skipped).
    let mut counts: std::collections::BTreeMap<&str, (u64, u64, u64)> = Default::default();
    for c in cases {
        let subject = subject_of_suite(&c.suite);
        let leaf = c.name.rsplit("::").next().unwrap_or(&c.name);
        let rules = loom_spec::ids_in_test_name(leaf);
        let case_id = format!("{}::{}", c.suite, c.name);
        let entry = counts.entry(subject).or_default();
        let result = match &c.outcome {
            Outcome::Pass => {
                entry.0 += 1;
                if rules.is_empty() {
                    continue;
                }
                CaseResult::pass(AREA, &c.suite, case_id, rules)
            }
            Outcome::Skip => {
                entry.2 += 1;
                if rules.is_empty() {
                    continue;
                }
                CaseResult::skip_untestable(
                    AREA,
                    &c.suite,
                    case_id,
                    rules,
                    "skipped or ignored by the test run: it did not run, so it is not evidence",
                )
            }
            // A failing test fails the run whether or not its name cites a rule.
            Outcome::Fail(msg) => {
                entry.1 += 1;
                CaseResult::fail(
                    AREA,
                    &c.suite,
                    case_id,
                    rules,
                    msg.clone(),
                    Failure::default(),
                )
            }
        };
        out.push(result.with_subject(subject));
    }
    for (subject, (passed, failed, skipped)) in counts {
        let message = format!("{passed} passed, {failed} failed, {skipped} skipped");
        let r = if failed == 0 && passed > 0 {
            CaseResult::pass(
                AREA,
                "junit",
                format!("test-run/{subject}"),
                Vec::<String>::new(),
            )
            .with_message(message)
        } else if failed == 0 {
            CaseResult::skip_untestable(
                AREA,
                "junit",
                format!("test-run/{subject}"),
                Vec::<String>::new(),
                message,
            )
        } else {
            CaseResult::fail(
                AREA,
                "junit",
                format!("test-run/{subject}"),
                Vec::<String>::new(),
                message,
                Failure::default(),
            )
        };
        out.push(r.with_subject(subject));
    }
    out
}
