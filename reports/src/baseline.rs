//! Baselines: the list of known failures, each with its reason.
//!
//! Following wasmtime's test harness, expected failures still run; a listed
//! case that fails becomes `xfail`, a listed case that passes fails the run
//! (so the list only shrinks), and an entry that matches nothing is reported
//! as an `error` so stale entries get removed.

use crate::model::{CaseResult, Failure, Status};
use crate::report::UNEXPECTED_PASS_PREFIX;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::fmt;
use std::path::Path;

/// The area of the results that report stale baseline entries.
pub const STALE_AREA: &str = "baseline";
/// The suite of the results that report stale baseline entries.
pub const STALE_SUITE: &str = "stale-entries";

/// One known failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineEntry {
    /// The case ID, exact, or a prefix followed by a single trailing `*`.
    pub case_id: String,
    /// Restricts the entry to one area.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub area: Option<String>,
    /// Restricts the entry to one suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// Why the failure is expected. Required and non-empty.
    pub reason: String,
}

impl BaselineEntry {
    /// True when this entry covers `result`.
    pub fn matches(&self, result: &CaseResult) -> bool {
        if self.area.as_deref().is_some_and(|a| a != result.area) {
            return false;
        }
        if self.suite.as_deref().is_some_and(|s| s != result.suite) {
            return false;
        }
        match self.case_id.strip_suffix('*') {
            Some(prefix) => result.case_id.starts_with(prefix),
            None => result.case_id == self.case_id,
        }
    }

    /// `area/suite/case_id` with the parts that are not restricted left out.
    fn label(&self) -> String {
        let mut label = String::new();
        for part in [&self.area, &self.suite].into_iter().flatten() {
            label.push_str(part);
            label.push('/');
        }
        label.push_str(&self.case_id);
        label
    }
}

/// A baseline file: `[[entries]]` tables in TOML, or `{"entries": [...]}` in
/// JSON.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The known failures.
    #[serde(default)]
    pub entries: Vec<BaselineEntry>,
}

/// What [`Baseline::apply`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BaselineOutcome {
    /// Failures turned into `xfail`.
    pub xfailed: usize,
    /// Passes turned into `fail`.
    pub unexpected_passes: usize,
    /// Entries that matched no result, reported as `error` results.
    pub stale: usize,
}

/// Why a baseline could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineError {
    /// The file or other source being read.
    pub source_name: String,
    /// What is wrong, naming the entry where there is one.
    pub message: String,
}

impl fmt::Display for BaselineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: invalid baseline: {}",
            self.source_name, self.message
        )
    }
}

impl std::error::Error for BaselineError {}

impl Baseline {
    /// Parses a TOML baseline and validates it.
    pub fn from_toml_str(text: &str) -> Result<Baseline, BaselineError> {
        let baseline: Baseline = toml::from_str(text).map_err(|e| BaselineError {
            source_name: "baseline".to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        baseline.validated("baseline")
    }

    /// Parses a JSON baseline and validates it.
    pub fn from_json_str(text: &str) -> Result<Baseline, BaselineError> {
        let baseline: Baseline = serde_json::from_str(text).map_err(|e| BaselineError {
            source_name: "baseline".to_string(),
            message: e.to_string(),
        })?;
        baseline.validated("baseline")
    }

    /// Loads a baseline file: JSON when the name ends in `.json`, TOML
    /// otherwise. Errors name the file.
    pub fn load(path: impl AsRef<Path>) -> Result<Baseline, BaselineError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| BaselineError {
            source_name: name.clone(),
            message: format!("cannot read: {e}"),
        })?;
        let is_json = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
        let parsed = if is_json {
            Self::from_json_str(&text)
        } else {
            Self::from_toml_str(&text)
        };
        parsed.map_err(|e| BaselineError {
            source_name: name,
            message: e.message,
        })
    }

    /// Checks every entry: a non-empty case ID with `*` only at the end, a
    /// non-empty reason, and no two entries alike.
    pub fn validate(&self) -> Result<(), String> {
        for (idx, entry) in self.entries.iter().enumerate() {
            let which = format!("entry {} (case_id {:?})", idx + 1, entry.case_id);
            if entry.case_id.trim().is_empty() {
                return Err(format!("entry {}: case_id is empty", idx + 1));
            }
            let star_inside = entry
                .case_id
                .strip_suffix('*')
                .unwrap_or(&entry.case_id)
                .contains('*');
            if star_inside {
                return Err(format!("{which}: `*` is only allowed at the end"));
            }
            if entry.reason.trim().is_empty() {
                return Err(format!("{which}: reason is required and must not be empty"));
            }
            let duplicate = self.entries[..idx].iter().position(|e| {
                e.case_id == entry.case_id && e.area == entry.area && e.suite == entry.suite
            });
            if let Some(first) = duplicate {
                return Err(format!("{which}: duplicates entry {}", first + 1));
            }
        }
        Ok(())
    }

    fn validated(self, source_name: &str) -> Result<Baseline, BaselineError> {
        self.validate().map_err(|message| BaselineError {
            source_name: source_name.to_string(),
            message,
        })?;
        Ok(self)
    }

    /// Applies the baseline to `results`. For each result, the first entry
    /// that matches it decides:
    ///
    /// - `fail`, `error`, `timeout` become `xfail` with the entry's reason
    ///   (the message and failure details are kept);
    /// - `pass` becomes `fail` with a message starting with
    ///   [`UNEXPECTED_PASS_PREFIX`];
    /// - skips and `xfail` are left alone (a skipped case still counts as
    ///   matched, so its entry is not stale).
    ///
    /// Entries that match no result at all are appended as `error` results in
    /// area [`STALE_AREA`], suite [`STALE_SUITE`].
    pub fn apply(&self, results: &mut Vec<CaseResult>) -> BaselineOutcome {
        let mut outcome = BaselineOutcome::default();
        let mut used = vec![false; self.entries.len()];
        for result in results.iter_mut() {
            let Some(idx) = self.entries.iter().position(|e| e.matches(result)) else {
                continue;
            };
            used[idx] = true;
            let reason = &self.entries[idx].reason;
            match result.status {
                s if s.is_failure() => {
                    result.status = Status::Xfail;
                    result.xfail_reason = Some(reason.clone());
                    outcome.xfailed += 1;
                }
                Status::Pass => {
                    result.status = Status::Fail;
                    result.message = Some(format!(
                        "{UNEXPECTED_PASS_PREFIX} baseline expects failure ({reason}); remove the entry"
                    ));
                    result.failure = Some(Failure {
                        expected: Some(json!("fail")),
                        actual: Some(json!("pass")),
                        ..Failure::default()
                    });
                    outcome.unexpected_passes += 1;
                }
                _ => {}
            }
        }
        for (entry, used) in self.entries.iter().zip(used) {
            if used {
                continue;
            }
            outcome.stale += 1;
            results.push(CaseResult::error(
                STALE_AREA,
                STALE_SUITE,
                entry.label(),
                Vec::<String>::new(),
                format!(
                    "stale baseline entry: {:?} matched no result; remove it (reason was: {})",
                    entry.label(),
                    entry.reason
                ),
            ));
        }
        outcome
    }
}
