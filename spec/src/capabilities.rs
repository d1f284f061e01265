//! The capability registry (`capabilities.toml`) and its self-check (CONF-07, CONF-09).
//!
//! A capability is a badge with a maturity. The badge may only claim what exists: a
//! `shipped` capability needs every evidence path to resolve and every binding rule it
//! cites to have evidence; a `reference-defined` one must cite the gap that makes it
//! ours; a `provisional` one must say why it is not shipped. Every capability must point
//! at some evidence that exists today.

use crate::catalogue::Catalogue;
use crate::evidence::EvidenceIndex;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

const CAPABILITIES_TOML: &str = include_str!("../capabilities.toml");

/// How far a capability has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Maturity {
    /// Implemented, with evidence for every binding rule it cites.
    Shipped,
    /// Implemented where the spec is silent; it cites the GAP that records our choice.
    ReferenceDefined,
    /// Not (fully) built yet; `note` says what is missing.
    Provisional,
}

impl Maturity {
    /// The label as written in `capabilities.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Maturity::Shipped => "shipped",
            Maturity::ReferenceDefined => "reference-defined",
            Maturity::Provisional => "provisional",
        }
    }
}

/// One capability badge.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capability {
    /// Stable id, e.g. `typed-failure-channels`.
    pub id: String,
    /// Human title.
    pub title: String,
    /// Maturity claimed by the badge.
    pub maturity: Maturity,
    /// Rule and gap ids the capability implements.
    pub rules: Vec<String>,
    /// Paths relative to the workspace root; the last component may hold `*` wildcards.
    pub evidence: Vec<String>,
    /// Why the maturity is what it is (required for `provisional`).
    #[serde(default)]
    pub note: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CapabilityFile {
    capability: Vec<Capability>,
}

/// Parses a capability registry text.
pub fn parse_capabilities(text: &str) -> Result<Vec<Capability>, String> {
    toml::from_str::<CapabilityFile>(text)
        .map(|f| f.capability)
        .map_err(|e| e.to_string())
}

/// The embedded `spec/capabilities.toml`.
pub fn load_capabilities() -> Result<Vec<Capability>, String> {
    parse_capabilities(CAPABILITIES_TOML)
}

/// One thing wrong with a capability badge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapabilityProblem {
    /// The capability id (or `capabilities.toml` when the file itself is broken).
    pub capability: String,
    /// What is wrong and how to fix it.
    pub problem: String,
}

impl fmt::Display for CapabilityProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "capability `{}`: {}", self.capability, self.problem)
    }
}

/// Checks the embedded registry against the workspace at `root`.
pub fn check_capabilities(
    root: &Path,
    catalogue: &Catalogue,
    index: &EvidenceIndex,
) -> Vec<CapabilityProblem> {
    match load_capabilities() {
        Ok(capabilities) => check_capability_list(&capabilities, root, catalogue, index),
        Err(e) => vec![CapabilityProblem {
            capability: "capabilities.toml".to_string(),
            problem: format!("cannot be parsed: {e}"),
        }],
    }
}

/// Checks a list of capabilities against the workspace at `root` (see the module docs).
pub fn check_capability_list(
    capabilities: &[Capability],
    root: &Path,
    catalogue: &Catalogue,
    index: &EvidenceIndex,
) -> Vec<CapabilityProblem> {
    let mut problems = Vec::new();
    let mut ids = BTreeSet::new();
    for cap in capabilities {
        let mut report = |problem: String| {
            problems.push(CapabilityProblem {
                capability: cap.id.clone(),
                problem,
            })
        };
        if !ids.insert(cap.id.as_str()) {
            report("is declared twice".to_string());
        }
        if cap.rules.is_empty() {
            report("cites no rule; list the rule ids it implements".to_string());
        }
        for id in &cap.rules {
            if !catalogue.is_known_id(id) {
                report(format!("cites `{id}`, which is not in spec/rules.toml"));
            }
        }
        let mut any_exists = false;
        for path in &cap.evidence {
            match resolve_evidence_path(root, path) {
                Ok(true) => any_exists = true,
                Ok(false) => {
                    if cap.maturity == Maturity::Shipped {
                        report(format!(
                            "is `shipped` but its evidence `{path}` does not exist; add it or lower the maturity"
                        ));
                    }
                }
                Err(why) => report(format!("evidence `{path}` {why}")),
            }
        }
        if !any_exists {
            report(
                "lists no evidence path that exists; every badge needs at least one".to_string(),
            );
        }
        match cap.maturity {
            Maturity::Shipped => {
                for id in &cap.rules {
                    let binding = catalogue.get(id).is_some_and(|r| r.is_binding());
                    if binding && !index.has_evidence(id) {
                        report(format!(
                            "is `shipped` but its binding rule {id} has no evidence; add a test or lower the maturity"
                        ));
                    }
                }
            }
            Maturity::ReferenceDefined => {
                if !cap.rules.iter().any(|r| r.starts_with("GAP-")) {
                    report(
                        "is `reference-defined` but cites no GAP id recording the choice"
                            .to_string(),
                    );
                }
            }
            Maturity::Provisional => {
                if cap.note.trim().is_empty() {
                    report("is `provisional` without a note saying what is missing".to_string());
                }
            }
        }
    }
    problems
}

/// Whether an evidence path (relative, `*` allowed in its last component) resolves to at
/// least one existing file or directory.
fn resolve_evidence_path(root: &Path, path: &str) -> Result<bool, String> {
    if path.is_empty() || path.starts_with('/') || path.split('/').any(|c| c == "..") {
        return Err("must be a relative path inside the workspace".to_string());
    }
    let (dir, last) = path.rsplit_once('/').unwrap_or(("", path));
    if dir.contains('*') {
        return Err("may use `*` only in its last component".to_string());
    }
    if !last.contains('*') {
        return Ok(root.join(path).exists());
    }
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return Ok(false);
    };
    Ok(entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .any(|name| wildcard_match(last, &name)))
}

/// `*` matches any run of characters; everything else matches itself.
fn wildcard_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = parts.split_first().unwrap_or((&"", &[]));
    let Some(mut remaining) = name.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return remaining.is_empty();
    };
    for part in middle {
        match remaining.find(part) {
            Some(i) => remaining = &remaining[i + part.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::wildcard_match;

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*.rs", "fold.rs"));
        assert!(wildcard_match("fold*.rs", "fold_tests.rs"));
        assert!(!wildcard_match("*.rs", "fold.json"));
        assert!(wildcard_match("a*b*c", "aXbYc"));
        assert!(!wildcard_match("a*b*c", "aXcYb"));
        assert!(wildcard_match("exact", "exact"));
        assert!(!wildcard_match("exact", "exactly"));
    }
}
