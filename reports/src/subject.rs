//! The implementation a result was obtained against ([`Subject`]), what kind of
//! implementation it is ([`SubjectKind`]), and what a run promised to produce
//! ([`Expectations`]).
//!
//! A report's compliance figure is always *per subject*: the rules that apply
//! to the subject's kind, and of those, the ones with passing results against
//! that subject in this run. Results about the harness itself form their own
//! subject of kind [`SubjectKind::Harness`], so they are never counted into a
//! third party's figure.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// The id of the harness self-check subject (the tool's own tests and checks).
pub const HARNESS_SUBJECT_ID: &str = "harness";

/// What kind of implementation a subject is. It decides which rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubjectKind {
    /// The reference implementation (kernel, runtime and stores together): every
    /// rule of the catalogue applies.
    Reference,
    /// A kernel: the rules the applicability table assigns to kernels.
    Kernel,
    /// A store (any SPI): the rules the applicability table assigns to stores.
    Store,
    /// The conformance harness itself: no rule of the spec applies; its results
    /// are a self-check.
    Harness,
}

impl SubjectKind {
    /// The serialized name, e.g. `"kernel"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectKind::Reference => "reference",
            SubjectKind::Kernel => "kernel",
            SubjectKind::Store => "store",
            SubjectKind::Harness => "harness",
        }
    }

    /// Parses a serialized name.
    pub fn parse(text: &str) -> Option<SubjectKind> {
        [
            SubjectKind::Reference,
            SubjectKind::Kernel,
            SubjectKind::Store,
            SubjectKind::Harness,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

impl fmt::Display for SubjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One implementation under test (or the harness itself).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subject {
    /// A short id results refer to, unique within a report, e.g. `"kernel"`.
    pub id: String,
    /// What kind of implementation it is.
    pub kind: SubjectKind,
    /// Its name, from its `hello` when it has one.
    pub name: String,
    /// Its version, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How it was reached: the adapter command, the store URL, `in-process`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Its answer to `hello`, verbatim, when it speaks a protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hello: Option<Value>,
    /// What it claims (a kernel's vector kinds and syscalls in `hello`): the parts it
    /// was judged on, the parts it does not claim (shown, never judged), and the rules
    /// of the claimed parts (the first denominator of its figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<ClaimScope>,
}

/// What a subject claims to implement, and so what it was judged on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimScope {
    /// The claimed parts that were judged, e.g. `["fold", "digest"]`.
    pub judged: Vec<String>,
    /// The parts it does not claim, e.g. `["runtime", "ingress", "emit"]`: their
    /// results are `skip-not-claimed` and never fail the verdict.
    pub not_claimed: Vec<String>,
    /// The rule IDs the claimed parts exercise, sorted.
    pub rules: Vec<String>,
}

impl ClaimScope {
    /// "judged: fold, digest; not claimed: runtime, ingress, emit".
    pub fn sentence(&self) -> String {
        let list = |v: &[String]| {
            if v.is_empty() {
                "nothing".to_string()
            } else {
                v.join(", ")
            }
        };
        format!(
            "judged: {}; not claimed: {}",
            list(&self.judged),
            list(&self.not_claimed)
        )
    }
}

impl Subject {
    /// A subject with only id, kind and name.
    pub fn new(id: impl Into<String>, kind: SubjectKind, name: impl Into<String>) -> Self {
        Subject {
            id: id.into(),
            kind,
            name: name.into(),
            version: None,
            endpoint: None,
            hello: None,
            claims: None,
        }
    }

    /// The harness self-check subject of `tool` at `version`.
    pub fn harness(tool: &str, version: &str) -> Self {
        Subject::new(
            HARNESS_SUBJECT_ID,
            SubjectKind::Harness,
            format!("{tool} (harness self-check)"),
        )
        .with_version(version)
    }

    /// Sets the version.
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Sets the endpoint.
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Sets the hello answer.
    pub fn with_hello(mut self, hello: Value) -> Self {
        self.hello = Some(hello);
        self
    }

    /// Sets what it claims (and so what it is judged on).
    pub fn with_claims(mut self, mut claims: ClaimScope) -> Self {
        claims.rules.sort();
        claims.rules.dedup();
        self.claims = Some(claims);
        self
    }

    /// True for every kind but the harness: a subject the report judges.
    pub fn is_judged(&self) -> bool {
        self.kind != SubjectKind::Harness
    }
}

/// One part of a run that was asked for: it must produce at least one result
/// that is not a skip against `subject`, or the run fails.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedPart {
    /// The area the part writes its results under.
    pub area: String,
    /// The subject it runs against.
    pub subject: String,
}

/// Something a run left out: a part, a filter's cut or a test run it could not credit.
/// A report with any passes only as **partial**: every rendering says "partial", what
/// was not run and how to make the run complete.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Omission {
    /// The subject the run would need it for.
    pub subject: String,
    /// What was not run, as a phrase ("the sim and tests parts").
    pub not_run: String,
    /// How to make the run complete, as an instruction.
    pub complete_with: String,
}

/// What a run promised, so that a report can tell an empty or partial run
/// from a passing one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// Parts that were asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ExpectedPart>,
    /// Subjects whose run claims to be complete: every binding rule that applies
    /// to them must have passing results (or an expected failure, or an
    /// exemption below).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub complete: Vec<String>,
    /// Rules exempted by hand from the completeness requirement, with the reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub exempted: BTreeMap<String, String>,
    /// What the run left out; any entry makes a passing verdict partial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<Omission>,
}

impl Expectations {
    /// True when nothing is expected.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
            && self.complete.is_empty()
            && self.exempted.is_empty()
            && self.omitted.is_empty()
    }

    /// Adds a part that must produce results against `subject`.
    pub fn part(mut self, area: impl Into<String>, subject: impl Into<String>) -> Self {
        self.parts.push(ExpectedPart {
            area: area.into(),
            subject: subject.into(),
        });
        self
    }

    /// Marks `subject`'s run as complete.
    pub fn complete(mut self, subject: impl Into<String>) -> Self {
        self.complete.push(subject.into());
        self
    }

    /// Exempts `rule` from completeness, with `reason`.
    pub fn exempt(mut self, rule: impl Into<String>, reason: impl Into<String>) -> Self {
        self.exempted.insert(rule.into(), reason.into());
        self
    }

    /// Records that the run left `not_run` out for `subject`; `complete_with` says how
    /// to run it completely.
    pub fn omit(
        mut self,
        subject: impl Into<String>,
        not_run: impl Into<String>,
        complete_with: impl Into<String>,
    ) -> Self {
        self.omitted.push(Omission {
            subject: subject.into(),
            not_run: not_run.into(),
            complete_with: complete_with.into(),
        });
        self
    }

    /// Sorts and de-duplicates, so two equal expectations serialize alike.
    pub fn normalize(&mut self) {
        self.omitted.sort();
        self.omitted.dedup();
        self.parts.sort();
        self.parts.dedup();
        self.complete.sort();
        self.complete.dedup();
    }
}
