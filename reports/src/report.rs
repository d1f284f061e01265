//! [`Report`]: a run's results with its environment, summary and digest.

use crate::canonical::sha256_digest;
use crate::environment::Environment;
use crate::model::{CaseResult, EvidenceBasis, RuleInfo, Status};
use crate::subject::{Expectations, Subject, SubjectKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

/// The value of [`Report::schema`].
pub const SCHEMA_NAME: &str = "loom-report";
/// The report format version this crate writes and the only one it reads.
pub const SCHEMA_VERSION: u32 = 3;
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
    /// The implementations the results were obtained against (and the harness
    /// self-check, when the run has one), sorted by id.
    #[serde(default)]
    pub subjects: Vec<Subject>,
    /// What the run promised: parts that must produce results, subjects whose
    /// run claims completeness, hand-written exemptions.
    #[serde(default, skip_serializing_if = "Expectations::is_empty")]
    pub expectations: Expectations,
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
    /// `resolution-difference` results.
    pub resolution_difference: u64,
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
            Status::ResolutionDifference => self.resolution_difference,
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
            Status::ResolutionDifference => &mut self.resolution_difference,
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
    /// The headline figure's denominator: the rules that apply to the primary
    /// subject ([`Report::primary_subject`]); with no subject, every rule that
    /// is not a gap.
    pub rules_total: u64,
    /// Of those, the rules with a passing result against that subject and no
    /// failing or expected-failing one.
    pub rules_with_passing_evidence: u64,
    /// Of those, the rules with a failing result against that subject.
    pub rules_failing: u64,
    /// Of the passing rules, those with a passing result whose expectation the
    /// spec's text decides (basis `spec`): passing on spec-based evidence alone.
    pub rules_spec_based: u64,
    /// Of those applicable rules, the ones with no pass and no failure but a result
    /// that differs from the reference's resolution of an open point.
    pub rules_resolution_difference: u64,
    /// The figure of every subject, in report order.
    #[serde(default)]
    pub subjects: Vec<SubjectFigure>,
    /// Results whose subject is missing (in a report with several judged
    /// subjects) or not among [`Report::subjects`].
    #[serde(default)]
    pub unattributed: u64,
    /// Why the verdict is FAIL, one sentence each; empty when it passes.
    #[serde(default)]
    pub verdict_reasons: Vec<String>,
    /// Rule IDs cited by results but absent from [`Report::rules`], sorted.
    pub unknown_rules: Vec<String>,
    /// `fail + error + timeout` results.
    pub failures: u64,
    /// `fail` results that are baseline entries that passed.
    pub unexpected_passes: u64,
    /// The verdict: true when [`Summary::verdict_reasons`] is empty. A run
    /// with no result never passes.
    pub ok: bool,
    /// True when the run left something out ([`Expectations::omitted`]): a passing
    /// verdict is then a partial pass ([`Verdict::PartialPass`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// A report's verdict as every rendering names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Everything asked for ran and passed, and the run left nothing out.
    Pass,
    /// What ran passed, but the run left something out ([`Report::partial_sentences`]
    /// says what and how to complete it). The exit status is still 0: a run narrowed on
    /// purpose (`--only fold`) is not a failure, but it is never shown as a full pass.
    PartialPass,
    /// A failure, an empty run or a broken promise ([`Summary::verdict_reasons`]).
    Fail,
}

impl Verdict {
    /// The word on the console, in report.md, summary.md and the HTML page.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::PartialPass => "PARTIAL PASS",
            Verdict::Fail => "FAIL",
        }
    }

    /// The machine-readable name (JUnit properties, HTML classes): `pass`,
    /// `partial-pass`, `fail`.
    pub fn slug(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::PartialPass => "partial-pass",
            Verdict::Fail => "fail",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One subject's compliance figure.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubjectFigure {
    /// The subject's id.
    pub subject: String,
    /// Its kind.
    pub kind: String,
    /// Results against it, per status.
    pub by_status: StatusCounts,
    /// Rules that apply to its kind (0 for the harness).
    pub rules_applicable: u64,
    /// Applicable rules with a passing result against it and no failing or
    /// expected-failing result.
    pub rules_passing: u64,
    /// Applicable rules with a failing (fail, error, timeout) result against it.
    pub rules_failing: u64,
    /// Applicable rules whose results against it include an expected failure and no failure.
    pub rules_xfail: u64,
    /// Passing rules with a passing result whose expectation the spec's text decides
    /// (basis `spec`): those judged on spec-based evidence alone.
    pub rules_spec_based: u64,
    /// Applicable rules whose results against it include a resolution difference and
    /// neither a pass nor a failure.
    pub rules_resolution_difference: u64,
    /// For a subject that states what it claims ([`crate::ClaimScope`]): the applicable
    /// rules of the claimed parts (0 when it states nothing).
    #[serde(default)]
    pub rules_claimed: u64,
    /// Of those, the ones with a passing result against it and no failing or
    /// expected-failing one.
    #[serde(default)]
    pub rules_claimed_passing: u64,
    /// Binding applicable rules with no passing result and no expected failure
    /// against it, sorted (exempted ones included; see
    /// [`Expectations::exempted`]).
    pub binding_without_evidence: Vec<String>,
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
    /// None passed or failed, but at least one differs from the reference's
    /// resolution of an open point the subject does not claim.
    ResolutionDifference,
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
            RuleStatus::ResolutionDifference => "resolution-difference",
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
    /// Whether the rule passes on spec-based evidence alone: it is `pass` and a
    /// passing citing result has basis `spec`.
    pub spec_based: bool,
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
    /// Builds a report with no subject: sorts rules by ID and results by
    /// `(area, suite, case_id)`, then computes the summary and the digest.
    /// Name what was tested with [`Report::with_subjects`].
    pub fn new(environment: Environment, rules: Vec<RuleInfo>, results: Vec<CaseResult>) -> Self {
        let mut report = Report {
            schema: SCHEMA_NAME.to_string(),
            schema_version: SCHEMA_VERSION,
            environment,
            shards: Vec::new(),
            subjects: Vec::new(),
            expectations: Expectations::default(),
            rules,
            results,
            summary: Summary::default(),
            digest: String::new(),
        };
        report.recompute();
        report
    }

    /// Sets the subjects. When exactly one of them is judged (not the harness),
    /// results that name no subject are assigned to it.
    pub fn with_subjects(mut self, subjects: Vec<Subject>) -> Self {
        self.subjects = subjects;
        self.recompute();
        self
    }

    /// Sets what the run promised (parts, completeness, exemptions).
    pub fn with_expectations(mut self, expectations: Expectations) -> Self {
        self.expectations = expectations;
        self.recompute();
        self
    }

    /// Re-sorts, fills in the sole judged subject, then recomputes the summary
    /// and the digest. Call it after changing any field.
    pub fn recompute(&mut self) {
        self.rules.sort_by(|a, b| a.id.cmp(&b.id));
        self.subjects.sort_by(|a, b| a.id.cmp(&b.id));
        self.expectations.normalize();
        // A `hello` of JSON null reads back as no hello at all, so it is stored as none:
        // otherwise the digest of the file written would not match the file read.
        let no_null = |hello: &mut Option<Value>| {
            if hello.as_ref().is_some_and(Value::is_null) {
                *hello = None;
            }
        };
        no_null(&mut self.environment.implementation_hello);
        self.shards
            .iter_mut()
            .for_each(|e| no_null(&mut e.implementation_hello));
        self.subjects.iter_mut().for_each(|s| no_null(&mut s.hello));
        let judged: Vec<&Subject> = self.subjects.iter().filter(|s| s.is_judged()).collect();
        if let [only] = judged.as_slice() {
            let id = only.id.clone();
            for r in &mut self.results {
                if r.subject.is_none() {
                    r.subject = Some(id.clone());
                }
            }
        }
        self.results.sort_by(|a, b| a.key().cmp(&b.key()));
        self.summary = self.compute_summary();
        self.digest = self.compute_digest();
    }

    /// The digest this report should carry: sha256 over the canonical JSON
    /// (keys sorted recursively, no whitespace) of the report without
    /// `digest`, without every result's `duration_ms` and without every
    /// environment's `started_at` and `command` (a command line names where
    /// the report was written, which is not part of its content).
    pub fn compute_digest(&self) -> String {
        sha256_digest(&self.digest_input())
    }

    /// True when [`Report::digest`] matches the content.
    pub fn verify_digest(&self) -> bool {
        self.digest == self.compute_digest()
    }

    fn digest_input(&self) -> Value {
        fn strip_env(env: &mut Value) {
            if let Value::Object(env) = env {
                env.remove("started_at");
                env.remove("command");
            }
        }
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.remove("digest");
            if let Some(env) = map.get_mut("environment") {
                strip_env(env);
            }
            if let Some(Value::Array(shards)) = map.get_mut("shards") {
                shards.iter_mut().for_each(strip_env);
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

    /// The subject the headline figure is about: the first judged subject in id
    /// order, preferring the reference, then a kernel, then a store.
    pub fn primary_subject(&self) -> Option<&Subject> {
        [
            SubjectKind::Reference,
            SubjectKind::Kernel,
            SubjectKind::Store,
        ]
        .iter()
        .find_map(|k| self.subjects.iter().find(|s| s.kind == *k))
    }

    /// The subjects the report judges (every one but the harness self-check).
    pub fn judged_subjects(&self) -> impl Iterator<Item = &Subject> {
        self.subjects.iter().filter(|s| s.is_judged())
    }

    /// The subject with `id`.
    pub fn subject(&self, id: &str) -> Option<&Subject> {
        self.subjects.iter().find(|s| s.id == id)
    }

    /// The results obtained against `subject_id`.
    pub fn results_for<'a>(&'a self, subject_id: &'a str) -> impl Iterator<Item = &'a CaseResult> {
        self.results
            .iter()
            .filter(move |r| r.subject.as_deref() == Some(subject_id))
    }

    /// Computes the summary and the verdict from `results`, `rules`, `subjects`
    /// and `expectations`.
    pub fn compute_summary(&self) -> Summary {
        let mut s = Summary {
            total: self.results.len() as u64,
            ..Summary::default()
        };
        let known: BTreeMap<&str, &RuleInfo> =
            self.rules.iter().map(|r| (r.id.as_str(), r)).collect();
        let subject_ids: BTreeSet<&str> = self.subjects.iter().map(|x| x.id.as_str()).collect();
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
            let attributed = match &result.subject {
                Some(id) => subject_ids.contains(id.as_str()),
                None => self.subjects.is_empty(),
            };
            if !attributed {
                s.unattributed += 1;
            }
        }
        s.unknown_rules = unknown.into_iter().collect();
        s.failures = s.by_status.failures();
        s.subjects = self.subjects.iter().map(|x| self.figure_for(x)).collect();

        // The headline figure: the primary subject's, or (with no subject at
        // all) every non-gap rule against every result.
        match self.primary_subject() {
            Some(primary) => {
                let f = self.figure_for(primary);
                s.rules_total = f.rules_applicable;
                s.rules_with_passing_evidence = f.rules_passing;
                s.rules_failing = f.rules_failing;
                s.rules_spec_based = f.rules_spec_based;
                s.rules_resolution_difference = f.rules_resolution_difference;
            }
            None => {
                let rows = self.matrix_over(self.results.iter().collect());
                for row in rows
                    .iter()
                    .filter(|r| known.contains_key(r.rule.id.as_str()))
                {
                    if row.rule.is_gap() {
                        continue;
                    }
                    s.rules_total += 1;
                    match row.status {
                        RuleStatus::Pass => s.rules_with_passing_evidence += 1,
                        RuleStatus::Fail => s.rules_failing += 1,
                        RuleStatus::ResolutionDifference => s.rules_resolution_difference += 1,
                        _ => {}
                    }
                    if row.spec_based {
                        s.rules_spec_based += 1;
                    }
                }
            }
        }
        s.verdict_reasons = self.verdict_reasons(&s);
        s.ok = s.verdict_reasons.is_empty();
        s.partial = !self.expectations.omitted.is_empty();
        s
    }

    /// The verdict: FAIL when the summary fails, else PARTIAL PASS when the run left
    /// something out, else PASS.
    pub fn verdict(&self) -> Verdict {
        if !self.summary.ok {
            Verdict::Fail
        } else if self.summary.partial {
            Verdict::PartialPass
        } else {
            Verdict::Pass
        }
    }

    /// One sentence per omission: what was not run against which subject, and how to
    /// make the run complete. Empty for a complete run.
    pub fn partial_sentences(&self) -> Vec<String> {
        self.expectations
            .omitted
            .iter()
            .map(|o| {
                format!(
                    "partial: not run against {}: {}; to complete the run, {}",
                    o.subject, o.not_run, o.complete_with
                )
            })
            .collect()
    }

    fn verdict_reasons(&self, s: &Summary) -> Vec<String> {
        let mut reasons = Vec::new();
        if s.total == 0 {
            reasons.push("the run produced no result: an empty run never passes".to_string());
        }
        if s.failures > 0 {
            reasons.push(format!(
                "{} result(s) failed, errored or timed out",
                s.failures
            ));
        }
        if s.unexpected_passes > 0 {
            reasons.push(format!(
                "{} expected failure(s) passed: remove them from the baseline or the expected-failure list",
                s.unexpected_passes
            ));
        }
        if s.unattributed > 0 {
            reasons.push(format!(
                "{} result(s) name no subject of this report, so nothing says what they tested",
                s.unattributed
            ));
        }
        for part in &self.expectations.parts {
            let ran = self.results.iter().any(|r| {
                r.area == part.area
                    && r.subject.as_deref() == Some(part.subject.as_str())
                    && !r.status.is_skip()
            });
            if !ran {
                reasons.push(format!(
                    "the {} part was asked for but produced no result against {} that is not a skip",
                    part.area, part.subject
                ));
            }
        }
        for f in &s.subjects {
            if f.kind == SubjectKind::Harness.as_str() || f.by_status.total() == 0 {
                continue;
            }
            if f.by_status.pass == 0 {
                reasons.push(format!(
                    "no result passed against {}: nothing in this run shows it conforms",
                    f.subject
                ));
            }
        }
        for id in &self.expectations.complete {
            let Some(f) = s.subjects.iter().find(|f| &f.subject == id) else {
                reasons.push(format!("the complete subject {id} is not in the report"));
                continue;
            };
            let missing: Vec<&str> = f
                .binding_without_evidence
                .iter()
                .map(String::as_str)
                .filter(|r| !self.expectations.exempted.contains_key(*r))
                .collect();
            if !missing.is_empty() {
                reasons.push(format!(
                    "{} binding rule(s) that apply to {id} have no passing result in this run: {}",
                    missing.len(),
                    missing.join(", ")
                ));
            }
        }
        reasons
    }

    /// The figure of `subject` in this report.
    pub fn figure_for(&self, subject: &Subject) -> SubjectFigure {
        let mine: Vec<&CaseResult> = self.results_for(&subject.id).collect();
        let mut by_status = StatusCounts::default();
        for r in &mine {
            by_status.add(r.status);
        }
        let mut f = SubjectFigure {
            subject: subject.id.clone(),
            kind: subject.kind.as_str().to_string(),
            by_status,
            ..SubjectFigure::default()
        };
        for row in self.matrix_over(mine) {
            if !row.rule.applies(subject.kind) {
                continue;
            }
            f.rules_applicable += 1;
            match row.status {
                RuleStatus::Pass => f.rules_passing += 1,
                RuleStatus::Fail => f.rules_failing += 1,
                RuleStatus::Xfail => f.rules_xfail += 1,
                RuleStatus::ResolutionDifference => f.rules_resolution_difference += 1,
                _ => {}
            }
            if row.spec_based {
                f.rules_spec_based += 1;
            }
            if let Some(scope) = &subject.claims {
                if scope.rules.binary_search(&row.rule.id).is_ok() {
                    f.rules_claimed += 1;
                    if row.status == RuleStatus::Pass {
                        f.rules_claimed_passing += 1;
                    }
                }
            }
            if row.rule.is_binding() && !matches!(row.status, RuleStatus::Pass | RuleStatus::Xfail)
            {
                f.binding_without_evidence.push(row.rule.id.clone());
            }
        }
        f
    }

    /// One sentence per judged subject stating its figure and what the
    /// denominator is, e.g. "reference (the reference kernel and stores): 223 / 224
    /// rules that apply to the reference have passing results against it in this run".
    pub fn figure_sentences(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.summary.subjects {
            let Some(subject) = self.subject(&f.subject) else {
                continue;
            };
            if !subject.is_judged() {
                out.push(format!(
                    "{} ({}): {} result(s) passed, {} failed, {} skipped (not counted toward any implementation's figure)",
                    subject.id,
                    subject.name,
                    f.by_status.pass,
                    f.by_status.failures(),
                    f.by_status.skip_not_claimed + f.by_status.skip_untestable
                ));
                continue;
            }
            let scope = match subject.kind {
                SubjectKind::Reference => "rules of the catalogue".to_string(),
                kind => format!("rules that apply to a {kind}"),
            };
            let mut line = match &subject.claims {
                Some(claims) => format!(
                    "{} ({}): {}; {} / {} rules of the claimed parts and {} / {} {scope} have passing results against it in this run",
                    subject.id,
                    subject.name,
                    claims.sentence(),
                    f.rules_claimed_passing,
                    f.rules_claimed,
                    f.rules_passing,
                    f.rules_applicable
                ),
                None => format!(
                    "{} ({}): {} / {} {scope} have passing results against it in this run",
                    subject.id, subject.name, f.rules_passing, f.rules_applicable
                ),
            };
            if f.rules_failing > 0 {
                line.push_str(&format!("; {} failing", f.rules_failing));
            }
            if f.rules_xfail > 0 {
                line.push_str(&format!("; {} expected failure(s)", f.rules_xfail));
            }
            // Only vectors state a basis; a store's kit results never do, so for a store
            // the count would always read 0 and say nothing.
            if f.by_status.pass > 0 && subject.kind != SubjectKind::Store {
                line.push_str(&format!(
                    "; {} of them on spec-based evidence alone",
                    f.rules_spec_based
                ));
            }
            if f.by_status.resolution_difference > 0 {
                line.push_str(&format!(
                    "; {} result(s) differ only from the reference's resolutions of open points it does not claim (neither failures nor passes; {} rule(s) judged by nothing else)",
                    f.by_status.resolution_difference, f.rules_resolution_difference
                ));
            }
            out.push(line);
        }
        out
    }

    /// One row per rule in [`Report::rules`], then one per cited rule that is
    /// not in the catalogue, in ID order, over the primary subject's results
    /// (every result when the report names no subject).
    ///
    /// A rule is `fail` if any citing result failed, errored or timed out;
    /// otherwise `xfail` if any is a known failure (a rule with a known
    /// failure is not met, even if other cases pass); otherwise `pass` if any
    /// passed; otherwise `skipped` if any was skipped; otherwise `no-result`.
    pub fn rule_matrix(&self) -> Vec<RuleRow> {
        match self.primary_subject() {
            Some(primary) => self.rule_matrix_for(&primary.id),
            None => self.matrix_over(self.results.iter().collect()),
        }
    }

    /// [`Report::rule_matrix`] as a reader of one subject's report wants it: first the
    /// rows that apply to the primary subject's kind or that one of its results cites,
    /// then, to be folded away, the rest (rules of other kinds, and gaps, that no result
    /// against it cites). With no primary subject nothing is folded.
    pub fn rule_matrix_folded(&self) -> (Vec<RuleRow>, Vec<RuleRow>) {
        let rows = self.rule_matrix();
        match self.primary_subject().map(|p| p.kind) {
            Some(kind) => rows
                .into_iter()
                .partition(|row| row.rule.applies(kind) || row.status != RuleStatus::NoResult),
            None => (rows, Vec::new()),
        }
    }

    /// The rule matrix over the results against `subject_id`.
    pub fn rule_matrix_for(&self, subject_id: &str) -> Vec<RuleRow> {
        self.matrix_over(self.results_for(subject_id).collect())
    }

    fn matrix_over(&self, results: Vec<&CaseResult>) -> Vec<RuleRow> {
        let mut citing: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
        for result in results {
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
    } else if any(|s| s == Status::ResolutionDifference) {
        RuleStatus::ResolutionDifference
    } else if any(Status::is_skip) {
        RuleStatus::Skipped
    } else {
        RuleStatus::NoResult
    };
    let cases = results
        .iter()
        .map(|r| format!("{}/{}/{}", r.area, r.suite, r.case_id))
        .collect();
    let spec_based = status == RuleStatus::Pass
        && results
            .iter()
            .any(|r| r.status == Status::Pass && r.basis == Some(EvidenceBasis::Spec));
    RuleRow {
        rule,
        status,
        cases,
        spec_based,
    }
}
