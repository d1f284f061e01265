//! [`Report`]: a run's results with its environment, summary and digest.

use crate::canonical::sha256_digest;
use crate::environment::Environment;
use crate::model::{CaseResult, RuleInfo, Status};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

/// The value of [`Report::schema`].
pub const SCHEMA_NAME: &str = "loom-report";
/// The report format version this crate writes and the only one it reads.
pub const SCHEMA_VERSION: u32 = 1;
/// How the message of a baseline's unexpected pass starts.
pub const UNEXPECTED_PASS_PREFIX: &str = "unexpected pass:";

/// A run's report: the JSON document that is the source of truth for every
/// rendering.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Always [`SCHEMA_NAME`].
    pub schema: String,
    /// The format version, [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The run's environment (for a merge, the first input's).
    pub environment: Environment,
    /// One environment per input of a merge; empty for a single run.
    #[serde(default)]
    pub shards: Vec<Environment>,
    /// The rules the run is evidence for, sorted by ID.
    #[serde(default)]
    pub rules: Vec<RuleInfo>,
    /// Every case's result, sorted by `(area, suite, case_id)`.
    pub results: Vec<CaseResult>,
    /// Counts derived from `results` and `rules`.
    pub summary: Summary,
    /// `"sha256:<hex>"` over the canonical form; see [`Report::compute_digest`].
    pub digest: String,
}

/// Counts of results per status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct StatusCounts {
    /// `pass` results.
    pub pass: u64,
    /// `fail` results.
    pub fail: u64,
    /// `skip-not-claimed` results.
    pub skip_not_claimed: u64,
    /// `skip-untestable` results.
    pub skip_untestable: u64,
    /// `xfail` results.
    pub xfail: u64,
    /// `error` results.
    pub error: u64,
    /// `timeout` results.
    pub timeout: u64,
}

impl StatusCounts {
    /// Counts one more result with `status`.
    pub fn add(&mut self, status: Status) {
        *self.slot(status) += 1;
    }

    /// The count for `status`.
    pub fn get(&self, status: Status) -> u64 {
        match status {
            Status::Pass => self.pass,
            Status::Fail => self.fail,
            Status::SkipNotClaimed => self.skip_not_claimed,
            Status::SkipUntestable => self.skip_untestable,
            Status::Xfail => self.xfail,
            Status::Error => self.error,
            Status::Timeout => self.timeout,
        }
    }

    /// All results counted.
    pub fn total(&self) -> u64 {
        Status::ALL.iter().map(|s| self.get(*s)).sum()
    }

    /// `fail + error + timeout`.
    pub fn failures(&self) -> u64 {
        self.fail + self.error + self.timeout
    }

    fn slot(&mut self, status: Status) -> &mut u64 {
        match status {
            Status::Pass => &mut self.pass,
            Status::Fail => &mut self.fail,
            Status::SkipNotClaimed => &mut self.skip_not_claimed,
            Status::SkipUntestable => &mut self.skip_untestable,
            Status::Xfail => &mut self.xfail,
            Status::Error => &mut self.error,
            Status::Timeout => &mut self.timeout,
        }
    }
}

/// What [`Report::new`] derives from the results and rules.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Number of results.
    pub total: u64,
    /// Results per status.
    pub by_status: StatusCounts,
    /// Results per area.
    pub by_area: BTreeMap<String, StatusCounts>,
    /// Results per rule group. A result citing several rules of one group
    /// counts once for that group; a result citing no rule counts nowhere.
    pub by_group: BTreeMap<String, StatusCounts>,
    /// Number of rules in [`Report::rules`].
    pub rules_total: u64,
    /// Rules in [`Report::rules`] cited by at least one `pass` result.
    pub rules_with_passing_evidence: u64,
    /// Rules whose matrix status is `fail`.
    pub rules_failing: u64,
    /// Rule IDs cited by results but absent from [`Report::rules`], sorted.
    pub unknown_rules: Vec<String>,
    /// `fail + error + timeout` results.
    pub failures: u64,
    /// `fail` results that are baseline entries that passed.
    pub unexpected_passes: u64,
    /// True when there is no failure and no unexpected pass.
    pub ok: bool,
}

/// A rule's status in the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleStatus {
    /// At least one citing result passed and none failed or is a known failure.
    Pass,
    /// At least one citing result failed, errored or timed out.
    Fail,
    /// No citing result failed, but at least one is a known failure (`xfail`).
    Xfail,
    /// Every citing result was skipped.
    Skipped,
    /// No result cites the rule.
    NoResult,
}

impl RuleStatus {
    /// The serialized name, e.g. `"no-result"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleStatus::Pass => "pass",
            RuleStatus::Fail => "fail",
            RuleStatus::Xfail => "xfail",
            RuleStatus::Skipped => "skipped",
            RuleStatus::NoResult => "no-result",
        }
    }
}

impl fmt::Display for RuleStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the rule matrix.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleRow {
    /// The rule (synthesised with level `"unknown"` for a cited rule that is
    /// not in the catalogue).
    pub rule: RuleInfo,
    /// Its status, from the results that cite it.
    pub status: RuleStatus,
    /// The citing cases, as `area/suite/case_id`.
    pub cases: Vec<String>,
}

/// Why a report could not be read.
#[derive(Debug)]
pub enum ReportError {
    /// The file could not be read.
    Io {
        /// The path.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The text is not a valid report (bad JSON, wrong field, wrong type).
    Parse {
        /// What was being read.
        source_name: String,
        /// serde_json's message, with line and column.
        message: String,
    },
    /// `schema` is not [`SCHEMA_NAME`].
    WrongSchema {
        /// What was being read.
        source_name: String,
        /// The schema found.
        found: String,
    },
    /// `schema_version` is not one this crate reads.
    UnsupportedVersion {
        /// What was being read.
        source_name: String,
        /// The version found.
        found: u32,
    },
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Io { path, source } => write!(f, "{path}: cannot read report: {source}"),
            ReportError::Parse {
                source_name,
                message,
            } => write!(f, "{source_name}: not a valid loom report: {message}"),
            ReportError::WrongSchema { source_name, found } => write!(
                f,
                "{source_name}: schema is {found:?}, expected {SCHEMA_NAME:?}"
            ),
            ReportError::UnsupportedVersion { source_name, found } => write!(
                f,
                "{source_name}: schema_version {found} is not supported (this reader knows {SCHEMA_VERSION})"
            ),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl Report {
    /// Builds a report: sorts rules by ID and results by
    /// `(area, suite, case_id)`, then computes the summary and the digest.
    pub fn new(environment: Environment, rules: Vec<RuleInfo>, results: Vec<CaseResult>) -> Self {
        let mut report = Report {
            schema: SCHEMA_NAME.to_string(),
            schema_version: SCHEMA_VERSION,
            environment,
            shards: Vec::new(),
            rules,
            results,
            summary: Summary::default(),
            digest: String::new(),
        };
        report.recompute();
        report
    }

    /// Re-sorts, then recomputes the summary and the digest. Call it after
    /// changing any field.
    pub fn recompute(&mut self) {
        self.rules.sort_by(|a, b| a.id.cmp(&b.id));
        self.results.sort_by(|a, b| a.key().cmp(&b.key()));
        self.summary = self.compute_summary();
        self.digest = self.compute_digest();
    }

    /// The digest this report should carry: sha256 over the canonical JSON
    /// (keys sorted recursively, no whitespace) of the report without
    /// `digest`, without every result's `duration_ms` and without every
    /// environment's `started_at`.
    pub fn compute_digest(&self) -> String {
        sha256_digest(&self.digest_input())
    }

    /// True when [`Report::digest`] matches the content.
    pub fn verify_digest(&self) -> bool {
        self.digest == self.compute_digest()
    }

    fn digest_input(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.remove("digest");
            if let Some(Value::Object(env)) = map.get_mut("environment") {
                env.remove("started_at");
            }
            if let Some(Value::Array(shards)) = map.get_mut("shards") {
                for shard in shards {
                    if let Value::Object(env) = shard {
                        env.remove("started_at");
                    }
                }
            }
            if let Some(Value::Array(results)) = map.get_mut("results") {
                for result in results {
                    if let Value::Object(r) = result {
                        r.remove("duration_ms");
                    }
                }
            }
        }
        value
    }

    /// Computes the summary from `results` and `rules`.
    pub fn compute_summary(&self) -> Summary {
        let mut s = Summary {
            total: self.results.len() as u64,
            rules_total: self.rules.len() as u64,
            ..Summary::default()
        };
        let known: BTreeMap<&str, &RuleInfo> =
            self.rules.iter().map(|r| (r.id.as_str(), r)).collect();
        let mut unknown = BTreeSet::new();
        for result in &self.results {
            s.by_status.add(result.status);
            s.by_area
                .entry(result.area.clone())
                .or_default()
                .add(result.status);
            let mut groups = BTreeSet::new();
            for id in &result.rules {
                match known.get(id.as_str()) {
                    Some(info) => groups.insert(info.group.clone()),
                    None => {
                        unknown.insert(id.clone());
                        groups.insert(RuleInfo::group_of_id(id).to_string())
                    }
                };
            }
            for group in groups {
                s.by_group.entry(group).or_default().add(result.status);
            }
            if result.status == Status::Fail
                && result
                    .message
                    .as_deref()
                    .is_some_and(|m| m.starts_with(UNEXPECTED_PASS_PREFIX))
            {
                s.unexpected_passes += 1;
            }
        }
        s.unknown_rules = unknown.into_iter().collect();
        for row in self.rule_matrix() {
            if !known.contains_key(row.rule.id.as_str()) {
                continue;
            }
            if row.status == RuleStatus::Fail {
                s.rules_failing += 1;
            }
            let has_pass = self
                .results
                .iter()
                .any(|r| r.status == Status::Pass && r.rules.contains(&row.rule.id));
            if has_pass {
                s.rules_with_passing_evidence += 1;
            }
        }
        s.failures = s.by_status.failures();
        s.ok = s.failures == 0 && s.unexpected_passes == 0;
        s
    }

    /// One row per rule in [`Report::rules`], then one per cited rule that is
    /// not in the catalogue, in ID order.
    ///
    /// A rule is `fail` if any citing result failed, errored or timed out;
    /// otherwise `xfail` if any is a known failure (a rule with a known
    /// failure is not met, even if other cases pass); otherwise `pass` if any
    /// passed; otherwise `skipped` if any was skipped; otherwise `no-result`.
    pub fn rule_matrix(&self) -> Vec<RuleRow> {
        let mut citing: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
        for result in &self.results {
            for id in &result.rules {
                let list = citing.entry(id.as_str()).or_default();
                // A result citing the same rule twice counts once.
                if !list.iter().any(|r| std::ptr::eq(*r, result)) {
                    list.push(result);
                }
            }
        }
        let mut rows: Vec<RuleRow> = Vec::new();
        let mut seen = BTreeSet::new();
        for rule in &self.rules {
            seen.insert(rule.id.as_str());
            rows.push(row_for(rule.clone(), citing.get(rule.id.as_str())));
        }
        for (id, results) in &citing {
            if seen.contains(id) {
                continue;
            }
            let info = RuleInfo::new(
                *id,
                "unknown",
                RuleInfo::group_of_id(id),
                "(not in the rule catalogue)",
            );
            rows.push(row_for(info, Some(results)));
        }
        rows.sort_by(|a, b| a.rule.id.cmp(&b.rule.id));
        rows
    }

    /// Parses a report strictly (unknown fields are errors) and checks its
    /// schema name and version. Does not verify the digest; see
    /// [`Report::verify_digest`].
    pub fn from_json_str(text: &str) -> Result<Report, ReportError> {
        Self::from_json_str_named(text, "report")
    }

    /// Like [`Report::from_json_str`], naming `source_name` in errors.
    pub fn from_json_str_named(text: &str, source_name: &str) -> Result<Report, ReportError> {
        // Check the header first so a newer format gets a clear message
        // instead of an "unknown field" error.
        let header: Value = serde_json::from_str(text).map_err(|e| ReportError::Parse {
            source_name: source_name.to_string(),
            message: e.to_string(),
        })?;
        match header.get("schema").and_then(Value::as_str) {
            Some(SCHEMA_NAME) => {}
            Some(other) => {
                return Err(ReportError::WrongSchema {
                    source_name: source_name.to_string(),
                    found: other.to_string(),
                })
            }
            None => {
                return Err(ReportError::Parse {
                    source_name: source_name.to_string(),
                    message: "missing string field `schema`".to_string(),
                })
            }
        }
        if let Some(version) = header.get("schema_version").and_then(Value::as_u64) {
            if version != u64::from(SCHEMA_VERSION) {
                return Err(ReportError::UnsupportedVersion {
                    source_name: source_name.to_string(),
                    found: u32::try_from(version).unwrap_or(u32::MAX),
                });
            }
        }
        serde_json::from_str(text).map_err(|e| ReportError::Parse {
            source_name: source_name.to_string(),
            message: e.to_string(),
        })
    }

    /// Reads and parses a report file.
    pub fn load(path: impl AsRef<Path>) -> Result<Report, ReportError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ReportError::Io {
            path: name.clone(),
            source,
        })?;
        Self::from_json_str_named(&text, &name)
    }

    /// The report as pretty-printed JSON (fields in declaration order).
    pub fn to_json_pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The failing results (`fail`, `error`, `timeout`), in report order.
    pub fn failures(&self) -> impl Iterator<Item = &CaseResult> {
        self.results.iter().filter(|r| r.status.is_failure())
    }
}

fn row_for(rule: RuleInfo, results: Option<&Vec<&CaseResult>>) -> RuleRow {
    let results: &[&CaseResult] = results.map(|v| v.as_slice()).unwrap_or(&[]);
    let any = |pred: fn(Status) -> bool| results.iter().any(|r| pred(r.status));
    let status = if any(Status::is_failure) {
        RuleStatus::Fail
    } else if any(|s| s == Status::Xfail) {
        RuleStatus::Xfail
    } else if any(|s| s == Status::Pass) {
        RuleStatus::Pass
    } else if any(Status::is_skip) {
        RuleStatus::Skipped
    } else {
        RuleStatus::NoResult
    };
    let cases = results
        .iter()
        .map(|r| format!("{}/{}/{}", r.area, r.suite, r.case_id))
        .collect();
    RuleRow {
        rule,
        status,
        cases,
    }
}
