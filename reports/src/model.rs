//! The per-case result model: [`Status`], [`Failure`], [`CaseResult`] and the
//! rule metadata the caller passes in, [`RuleInfo`].

use crate::subject::SubjectKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The level of a gap entry in the rules list (an open question with a
/// reference resolution, not itself a rule).
pub const GAP_LEVEL: &str = "GAP";

/// The levels that bind an implementation: a conforming implementation must
/// have passing evidence for every binding rule that applies to it. A
/// GUARANTEE binds like a MUST; reference-defined rules bind this kernel.
pub const BINDING_LEVELS: [&str; 4] = ["MUST", "MUST NOT", "GUARANTEE", "reference-defined"];
use std::fmt;

/// The outcome of one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The implementation behaved as the rule requires.
    Pass,
    /// The implementation behaved differently; see the result's [`Failure`].
    Fail,
    /// Not run: the implementation does not claim the capability under test.
    SkipNotClaimed,
    /// Not run: the harness cannot test this here (platform, configuration).
    SkipUntestable,
    /// A known failure listed in a baseline, with its reason. Not a failure.
    Xfail,
    /// The harness or the adapter broke (crash, malformed output, bad claim).
    Error,
    /// The case did not finish within its time limit.
    Timeout,
    /// The answer differs from the expected one only where the expectation rests on
    /// this reference's resolution of an open point that the implementation does not
    /// claim to follow (docs/vectors.md, "Basis"). Neither a failure nor a pass: the
    /// spec allows the other reading, and the message names the GAP, its decision
    /// record and the differing pointers.
    ResolutionDifference,
}

impl Status {
    /// Every status, in the order reports list them.
    pub const ALL: [Status; 8] = [
        Status::Pass,
        Status::Fail,
        Status::SkipNotClaimed,
        Status::SkipUntestable,
        Status::Xfail,
        Status::Error,
        Status::Timeout,
        Status::ResolutionDifference,
    ];

    /// True for `fail`, `error` and `timeout`: the statuses that fail a run.
    /// `xfail` and the skips do not.
    pub fn is_failure(self) -> bool {
        matches!(self, Status::Fail | Status::Error | Status::Timeout)
    }

    /// True for the two skip statuses.
    pub fn is_skip(self) -> bool {
        matches!(self, Status::SkipNotClaimed | Status::SkipUntestable)
    }

    /// The serialized (kebab-case) name, e.g. `"skip-not-claimed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::SkipNotClaimed => "skip-not-claimed",
            Status::SkipUntestable => "skip-untestable",
            Status::Xfail => "xfail",
            Status::Error => "error",
            Status::Timeout => "timeout",
            Status::ResolutionDifference => "resolution-difference",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a result's expectation rests on (docs/vectors.md, "Basis").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceBasis {
    /// The spec's text decides the expected answer.
    Spec,
    /// Part of it rests on this reference's resolution of an open point
    /// ([`CaseResult::resolutions`] names them).
    Resolution,
}

impl EvidenceBasis {
    /// `spec` or `resolution`.
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceBasis::Spec => "spec",
            EvidenceBasis::Resolution => "resolution",
        }
    }
}

/// What differed in a failing case. Every field is optional: a harness fills
/// in what it knows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// The value the rule requires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// The value the implementation produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<Value>,
    /// The first differing JSON path (an RFC 6901 JSON pointer), e.g.
    /// `"/variables/_decisions/a/seq"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The index of the first event at which the outcome diverged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_index: Option<u64>,
    /// Optional human-readable diff text, shown verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

impl Failure {
    /// A failure with `expected` and `actual`, and `path` set to the first
    /// place where they differ (see [`crate::first_difference`]).
    pub fn values(expected: Value, actual: Value) -> Self {
        let path = crate::diff::first_difference(&expected, &actual);
        Failure {
            expected: Some(expected),
            actual: Some(actual),
            path,
            event_index: None,
            diff: None,
        }
    }

    /// Sets the first differing JSON path.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Sets the index of the first diverging event.
    pub fn with_event_index(mut self, event_index: u64) -> Self {
        self.event_index = Some(event_index);
        self
    }

    /// Sets the human-readable diff text.
    pub fn with_diff(mut self, diff: impl Into<String>) -> Self {
        self.diff = Some(diff.into());
        self
    }
}

/// One case's result. `(area, suite, case_id)` identifies it within a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseResult {
    /// Which harness produced it: `"vectors"`, `"kits"`, `"gates"`, `"fold"`,
    /// `"fuzz"`, `"sim"`, `"baseline"`, ...
    pub area: String,
    /// The group within the area, e.g. a kit name (`"event-store"`) or a
    /// vector kind.
    pub suite: String,
    /// The case's identifier within its suite.
    pub case_id: String,
    /// Rule IDs this case is evidence for, e.g. `"FOLD-09"`.
    #[serde(default)]
    pub rules: Vec<String>,
    /// The outcome.
    pub status: Status,
    /// A one-line explanation (failure message, skip reason, error text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What differed, for `fail` (and sometimes `error`/`timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Why this failure is expected (from the baseline), for `xfail`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xfail_reason: Option<String>,
    /// A command line that runs this case again, set by the harness that ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduce: Option<String>,
    /// The id of the [`crate::Subject`] this case exercised. A report with a
    /// single judged subject fills it in for results that leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What the expectation rests on, when the harness knows (vectors do; a
    /// result without it counts toward no spec-based figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<EvidenceBasis>,
    /// For a `resolution` basis: the open points (GAP ids) the expectation rests on;
    /// for a `resolution-difference`, the ones the answer differs on come first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolutions: Vec<String>,
    /// Wall-clock duration. Not part of the digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

impl CaseResult {
    /// A result with the given status and nothing else filled in.
    pub fn new<I>(
        area: impl Into<String>,
        suite: impl Into<String>,
        case_id: impl Into<String>,
        rules: I,
        status: Status,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        CaseResult {
            area: area.into(),
            suite: suite.into(),
            case_id: case_id.into(),
            rules: rules.into_iter().map(Into::into).collect(),
            status,
            message: None,
            failure: None,
            xfail_reason: None,
            reproduce: None,
            subject: None,
            basis: None,
            resolutions: Vec::new(),
            duration_ms: None,
        }
    }

    /// A passing case.
    pub fn pass<I>(
        area: impl Into<String>,
        suite: impl Into<String>,
        case_id: impl Into<String>,
        rules: I,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        Self::new(area, suite, case_id, rules, Status::Pass)
    }

    /// A failing case with its message and what differed.
    pub fn fail<I>(
        area: impl Into<String>,
        suite: impl Into<String>,
        case_id: impl Into<String>,
        rules: I,
        message: impl Into<String>,
        failure: Failure,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let mut r = Self::new(area, suite, case_id, rules, Status::Fail);
        r.message = Some(message.into());
        r.failure = Some(failure);
        r
    }

    /// The harness or adapter broke while running this case.
    pub fn error<I>(
        area: impl Into<String>,
        suite: impl Into<String>,
        case_id: impl Into<String>,
        rules: I,
        message: impl Into<String>,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        Self::new(area, suite, case_id, rules, Status::Error).with_message(message)
    }

    /// The case ran out of time.
    pub fn timeout<I>(
        area: impl Into<String>,
        suite: impl Into<String>,
        case_id: impl Into<String>,
        rules: I,
        message: impl Into<String>,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        Self::new(area, suite, case_id, rules, Status::Timeout).with_message(message)
    }

    /// Not run because the implementation does not claim the capability.
    pub fn skip_not_claimed<I>(
        area: impl Into<String>,
        suite: impl Into<String>,
        case_id: impl Into<String>,
        rules: I,
        reason: impl Into<String>,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        Self::new(area, suite, case_id, rules, Status::SkipNotClaimed).with_message(reason)
    }

    /// Not run because the harness cannot test it here.
    pub fn skip_untestable<I>(
        area: impl Into<String>,
        suite: impl Into<String>,
        case_id: impl Into<String>,
        rules: I,
        reason: impl Into<String>,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        Self::new(area, suite, case_id, rules, Status::SkipUntestable).with_message(reason)
    }

    /// An answer that differs only where the expectation rests on a resolution the
    /// implementation does not claim: `message` names the GAP, its decision record
    /// and the pointers, `failure` the values.
    pub fn resolution_difference<I>(
        area: impl Into<String>,
        suite: impl Into<String>,
        case_id: impl Into<String>,
        rules: I,
        message: impl Into<String>,
        failure: Failure,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let mut r = Self::new(area, suite, case_id, rules, Status::ResolutionDifference);
        r.message = Some(message.into());
        r.failure = Some(failure);
        r
    }

    /// A known failure. Usually produced by [`crate::Baseline::apply`].
    pub fn xfail<I>(
        area: impl Into<String>,
        suite: impl Into<String>,
        case_id: impl Into<String>,
        rules: I,
        reason: impl Into<String>,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let mut r = Self::new(area, suite, case_id, rules, Status::Xfail);
        r.xfail_reason = Some(reason.into());
        r
    }

    /// Sets the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Sets the failure details.
    pub fn with_failure(mut self, failure: Failure) -> Self {
        self.failure = Some(failure);
        self
    }

    /// Sets the command line that runs this case again.
    pub fn with_reproduce(mut self, command: impl Into<String>) -> Self {
        self.reproduce = Some(command.into());
        self
    }

    /// Sets the subject this case exercised.
    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// Sets what the expectation rests on: `spec` when `resolutions` is empty,
    /// otherwise `resolution` with those GAP ids.
    pub fn with_basis<I>(mut self, resolutions: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.resolutions = resolutions.into_iter().map(Into::into).collect();
        self.basis = Some(if self.resolutions.is_empty() {
            EvidenceBasis::Spec
        } else {
            EvidenceBasis::Resolution
        });
        self
    }

    /// Sets the duration.
    pub fn with_duration_ms(mut self, duration_ms: u64) -> Self {
        self.duration_ms = Some(duration_ms);
        self
    }

    /// `(area, suite, case_id)`: the identity of a case within a report.
    pub fn key(&self) -> (&str, &str, &str) {
        (&self.area, &self.suite, &self.case_id)
    }
}

/// A rule's metadata, passed in by the caller (this crate does not read the
/// rule catalogue itself).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleInfo {
    /// The rule ID, e.g. `"FOLD-09"`.
    pub id: String,
    /// `MUST`, `MUST NOT`, `SHOULD`, `MAY`, `GUARANTEE` or `reference-defined`.
    pub level: String,
    /// The rule group, e.g. `"FOLD"`, `"SNAP"`.
    pub group: String,
    /// One line saying what the rule requires.
    pub summary: String,
    /// Where the specification states it, e.g. `§4` or `§7; ADR0060 D3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// The kinds of implementation the rule applies to (besides the reference,
    /// to which every rule applies). Empty: it applies to the reference only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applies_to: Vec<SubjectKind>,
}

impl RuleInfo {
    /// A rule with no evidence listed.
    pub fn new(
        id: impl Into<String>,
        level: impl Into<String>,
        group: impl Into<String>,
        summary: impl Into<String>,
    ) -> Self {
        RuleInfo {
            id: id.into(),
            level: level.into(),
            group: group.into(),
            summary: summary.into(),
            section: None,
            applies_to: Vec::new(),
        }
    }

    /// Sets the specification section that states the rule.
    pub fn with_section(mut self, section: impl Into<String>) -> Self {
        self.section = Some(section.into());
        self
    }

    /// Sets the kinds the rule applies to.
    pub fn with_applies_to(mut self, kinds: impl IntoIterator<Item = SubjectKind>) -> Self {
        self.applies_to = kinds.into_iter().collect();
        self.applies_to.sort();
        self.applies_to.dedup();
        self
    }

    /// True for a gap entry (an open question, not a rule).
    pub fn is_gap(&self) -> bool {
        self.level == GAP_LEVEL
    }

    /// True when the rule binds: its level is one of [`BINDING_LEVELS`].
    pub fn is_binding(&self) -> bool {
        BINDING_LEVELS.contains(&self.level.as_str())
    }

    /// Whether the rule applies to a subject of `kind`: every rule (not a gap)
    /// applies to the reference, none to the harness, and to a kernel or a store
    /// when [`RuleInfo::applies_to`] says so.
    pub fn applies(&self, kind: SubjectKind) -> bool {
        match kind {
            _ if self.is_gap() => false,
            SubjectKind::Reference => true,
            SubjectKind::Harness => false,
            k => self.applies_to.contains(&k),
        }
    }

    /// The group of a rule ID that is not in the catalogue: everything before
    /// the last `-` (`"FOLD-09"` gives `"FOLD"`), or the whole ID.
    pub fn group_of_id(id: &str) -> &str {
        match id.rsplit_once('-') {
            Some((group, _)) if !group.is_empty() => group,
            _ => id,
        }
    }
}
