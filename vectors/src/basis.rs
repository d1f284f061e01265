//! What an expectation rests on (docs/vectors.md, "Basis"; decision 0008).
//!
//! Every vector says whether the spec's text determines its expected answer
//! (`basis.kind: "spec"`, the rules it cites being the citation) or whether part of the
//! answer rests on this reference's resolution of a point the spec leaves open
//! (`basis.kind: "resolution"`, each [`Resolution`] naming the GAP id, the decision
//! record that resolves it and the JSON pointers of the answer it decides). Where the
//! spec allows several readings and the vector can accept each of them, the other
//! readings' answers are listed as [`Alternative`]s and the vector stays `spec`.
//!
//! A kernel says in `hello` which of the reference's resolutions it follows
//! ([`ResolutionClaims`]): `"resolutions": ["reference"]` (all of them) or a list of
//! GAP ids. A resolution-based part of an answer is judged strictly for a kernel that
//! claims the resolution; for one that does not, a difference confined to that part is
//! reported as a resolution difference, never as a failure and never as a pass.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;

/// The named profile that claims every resolution of this reference.
pub const REFERENCE_PROFILE: &str = "reference";

/// The decision record that resolves each open point a vector can rest on, as a path
/// from the repository root. `vectors/tests/basis.rs` holds this table against
/// `docs/decisions/README.md`.
pub const DECISIONS: &[(&str, &str)] = &[
    ("GAP-01", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-02", "docs/decisions/0002-canonical-json.md"),
    ("GAP-03", "docs/decisions/0002-canonical-json.md"),
    ("GAP-04", "docs/decisions/0002-canonical-json.md"),
    ("GAP-05", "docs/decisions/0004-ingress.md"),
    ("GAP-06", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-07", "docs/decisions/0008-runtime-choices.md"),
    ("GAP-08", "docs/decisions/0004-ingress.md"),
    ("GAP-09", "docs/decisions/0004-ingress.md"),
    ("GAP-10", "docs/decisions/0004-ingress.md"),
    ("GAP-11", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-12", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-13", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-14", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-15", "docs/decisions/0003-snapshot-normalization.md"),
    ("GAP-16", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-17", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-18", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-19", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-20", "docs/decisions/0005-wave2-writers.md"),
    ("GAP-21", "docs/decisions/0008-runtime-choices.md"),
    ("GAP-22", "docs/decisions/0008-runtime-choices.md"),
    ("GAP-23", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-24", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-25", "docs/decisions/0004-ingress.md"),
    ("GAP-26", "docs/decisions/0008-runtime-choices.md"),
    ("GAP-27", "docs/decisions/0006-store-kit-judging.md"),
    ("GAP-30", "docs/decisions/0003-snapshot-normalization.md"),
    ("GAP-31", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-32", "docs/decisions/0004-ingress.md"),
    ("GAP-33", "docs/decisions/0008-runtime-choices.md"),
    ("GAP-34", "docs/decisions/0001-fold-shapes.md"),
    ("GAP-35", "docs/decisions/0004-ingress.md"),
    ("GAP-36", "docs/decisions/0004-ingress.md"),
];

/// The decision record that resolves `gap`, if this reference resolves it.
pub fn decision_for(gap: &str) -> Option<&'static str> {
    DECISIONS.iter().find(|(g, _)| *g == gap).map(|(_, d)| *d)
}

/// Whether the spec's text determines a vector's expected answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BasisKind {
    /// Every reading of the spec's text gives the expected answer (or one of the
    /// listed alternatives).
    Spec,
    /// Part of the answer rests on this reference's resolution of an open point.
    Resolution,
}

impl BasisKind {
    /// `spec` or `resolution`.
    pub fn as_str(self) -> &'static str {
        match self {
            BasisKind::Spec => "spec",
            BasisKind::Resolution => "resolution",
        }
    }
}

/// One open point an expected answer rests on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Resolution {
    /// The open point, e.g. `GAP-12`.
    pub gap: String,
    /// The decision record that resolves it ([`DECISIONS`]).
    pub decision: String,
    /// RFC 6901 pointers into the vector's `expected` whose values this resolution
    /// decides (`""`: the whole answer). A difference at or below one of them is a
    /// resolution difference for a kernel that does not claim the resolution.
    pub paths: Vec<String>,
}

impl Resolution {
    /// `gap` resolved by its decision record, deciding `paths`.
    pub fn new(gap: &str, paths: Vec<String>) -> Resolution {
        Resolution {
            gap: gap.to_owned(),
            decision: decision_for(gap).unwrap_or("").to_owned(),
            paths,
        }
    }
}

/// What a vector's expected answer rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Basis {
    /// `spec` or `resolution`.
    pub kind: BasisKind,
    /// For `resolution`: each open point, sorted by GAP id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolutions: Vec<Resolution>,
}

impl Basis {
    /// The spec's text determines the answer.
    pub fn spec() -> Basis {
        Basis {
            kind: BasisKind::Spec,
            resolutions: Vec::new(),
        }
    }

    /// The answer rests on these resolutions (sorted and merged by gap); with none,
    /// it is [`Basis::spec`].
    pub fn from_resolutions(resolutions: Vec<Resolution>) -> Basis {
        let mut merged: Vec<Resolution> = Vec::new();
        for r in resolutions {
            match merged.iter_mut().find(|m| m.gap == r.gap) {
                Some(m) => m.paths.extend(r.paths),
                None => merged.push(r),
            }
        }
        for m in &mut merged {
            m.paths = minimal_paths(std::mem::take(&mut m.paths));
        }
        merged.sort();
        if merged.is_empty() {
            Basis::spec()
        } else {
            Basis {
                kind: BasisKind::Resolution,
                resolutions: merged,
            }
        }
    }

    /// The GAP ids the answer rests on.
    pub fn gaps(&self) -> Vec<&str> {
        self.resolutions.iter().map(|r| r.gap.as_str()).collect()
    }

    /// Checks the shape: a `spec` basis lists nothing; a `resolution` lists at least
    /// one point, each a GAP id once, with its decision record and at least one
    /// pointer. `Err` says what is wrong (its JSON path under `basis`).
    pub fn check(&self) -> Result<(), (String, String)> {
        match self.kind {
            BasisKind::Spec if !self.resolutions.is_empty() => {
                return Err((
                    ".resolutions".into(),
                    "a `spec` basis rests on no resolution; make it `resolution` or drop the list"
                        .into(),
                ))
            }
            BasisKind::Resolution if self.resolutions.is_empty() => {
                return Err((
                    ".resolutions".into(),
                    "a `resolution` basis names at least one open point (GAP id)".into(),
                ))
            }
            _ => {}
        }
        let mut seen = BTreeSet::new();
        for (i, r) in self.resolutions.iter().enumerate() {
            if !is_gap_id(&r.gap) {
                return Err((
                    format!(".resolutions[{i}].gap"),
                    format!("`{}` is not a GAP id like GAP-12", r.gap),
                ));
            }
            if !seen.insert(r.gap.as_str()) {
                return Err((
                    format!(".resolutions[{i}].gap"),
                    format!("{} is listed twice", r.gap),
                ));
            }
            match decision_for(&r.gap) {
                None => {
                    return Err((
                        format!(".resolutions[{i}].gap"),
                        format!("{} has no decision record in this reference", r.gap),
                    ))
                }
                Some(d) if d != r.decision => {
                    return Err((
                        format!(".resolutions[{i}].decision"),
                        format!("{} is resolved in {d}, not `{}`", r.gap, r.decision),
                    ))
                }
                Some(_) => {}
            }
            if r.paths.is_empty() {
                return Err((
                    format!(".resolutions[{i}].paths"),
                    "name at least one JSON pointer (\"\" for the whole answer)".into(),
                ));
            }
            for (j, p) in r.paths.iter().enumerate() {
                if !(p.is_empty() || p.starts_with('/')) {
                    return Err((
                        format!(".resolutions[{i}].paths[{j}]"),
                        format!("`{p}` is not a JSON pointer"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Another answer the spec's text allows, from another reading of an open point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Alternative {
    /// The name of the reading (e.g. `gap11-proto-skips-event`).
    pub reading: String,
    /// The open points this reading takes differently from the reference, sorted.
    pub gaps: Vec<String>,
    /// The reading, in one sentence.
    pub description: String,
    /// The answer under that reading (the shape of `expected`).
    pub expected: Value,
    /// What this answer rests on besides its own reading.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolutions: Vec<Resolution>,
}

fn is_gap_id(s: &str) -> bool {
    s.strip_prefix("GAP-")
        .is_some_and(|n| n.len() == 2 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Keeps only the pointers no other pointer of the list is a prefix of, sorted.
pub fn minimal_paths(mut paths: Vec<String>) -> Vec<String> {
    paths.sort();
    paths.dedup();
    let all = paths.clone();
    paths.retain(|p| !all.iter().any(|q| q != p && covers(q, p)));
    paths
}

/// Whether pointer `outer` is `inner` or a parent of it.
pub fn covers(outer: &str, inner: &str) -> bool {
    inner == outer
        || outer.is_empty()
        || (inner.len() > outer.len()
            && inner.starts_with(outer)
            && inner.as_bytes()[outer.len()] == b'/')
}

/// Which of the reference's resolutions a kernel says in `hello` it follows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResolutionClaims {
    /// It claims the `reference` profile: every resolution.
    pub all: bool,
    /// The GAP ids it claims one by one.
    pub gaps: BTreeSet<String>,
    /// Entries of the `resolutions` list that are neither a GAP id this reference
    /// resolves nor a known profile (the hello is judged with them ignored).
    pub unknown: Vec<String>,
}

impl ResolutionClaims {
    /// Every resolution ([`REFERENCE_PROFILE`]).
    pub fn reference() -> ResolutionClaims {
        ResolutionClaims {
            all: true,
            ..ResolutionClaims::default()
        }
    }

    /// Reads `hello.resolutions`: absent claims nothing; a non-array, or an entry that
    /// is not a string, is listed in `unknown`.
    pub fn from_hello(hello: &Value) -> ResolutionClaims {
        let mut claims = ResolutionClaims::default();
        match hello.get("resolutions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items {
                    match item.as_str() {
                        Some(REFERENCE_PROFILE) => claims.all = true,
                        Some(g) if decision_for(g).is_some() => {
                            claims.gaps.insert(g.to_owned());
                        }
                        _ => claims.unknown.push(item.to_string()),
                    }
                }
            }
            Some(other) => claims.unknown.push(other.to_string()),
        }
        claims
    }

    /// Whether the kernel follows the reference's resolution of `gap`.
    pub fn claims(&self, gap: &str) -> bool {
        self.all || self.gaps.contains(gap)
    }
}

/// The part of a vector's answer that is judged, in the shape of its `expected`:
/// `{state}` for a fold (every-k restores are compared with the same state),
/// `{normalized, restored}` for a normalization (`equalsFullFold` and `fullFold` only
/// inform), the whole answer otherwise.
pub fn judged_part(kind: crate::format::Kind, expected: &Value) -> Value {
    use crate::format::Kind;
    let pick = |keys: &[&str]| {
        let mut m = serde_json::Map::new();
        for k in keys {
            if let Some(v) = expected.get(*k) {
                m.insert((*k).to_owned(), v.clone());
            }
        }
        Value::Object(m)
    };
    match kind {
        Kind::Fold => pick(&["state"]),
        Kind::Normalize => pick(&["normalized", "restored"]),
        _ => expected.clone(),
    }
}

/// A kernel's answer to a vector's requests, in the shape [`judged_part`] gives the
/// expected one: its `fold` (or `normalizeSnapshot` and `foldFrom`), digest, gate or
/// scenario answer, refusal messages dropped and runtime logs scrubbed. The every-k
/// restores of a fold vector are not part of it.
pub fn answer_of(
    client: &mut dyn crate::runner::KernelClient,
    v: &crate::format::Vector,
) -> Result<Value, crate::runner::CallError> {
    use crate::format::Kind;
    use crate::runner::{strip_message, CallError};
    let first = |client: &mut dyn crate::runner::KernelClient| match &v.raw_input {
        Some(raw) => client.call_raw(v.kind.method(), raw),
        None => client.call(v.kind.method(), &v.input),
    };
    Ok(match v.kind {
        Kind::Fold => {
            let a = first(client)?;
            serde_json::json!({"state": a.get("state").cloned().unwrap_or(Value::Null)})
        }
        Kind::Normalize => {
            let snapshot = &v.input["snapshot"];
            let n = client.call(
                "normalizeSnapshot",
                &serde_json::json!({ "snapshot": snapshot }),
            )?;
            let r = client.call(
                "foldFrom",
                &serde_json::json!({"snapshot": snapshot, "events": v.input["tail"]}),
            )?;
            serde_json::json!({
                "normalized": n.get("state").cloned().unwrap_or(Value::Null),
                "restored": r.get("state").cloned().unwrap_or(Value::Null),
            })
        }
        Kind::Runtime => crate::scrub::scrub_answer(&first(client)?).map_err(CallError::Broken)?,
        Kind::Ingress | Kind::Emit => strip_message(first(client)?),
        Kind::Digest => first(client)?,
    })
}
