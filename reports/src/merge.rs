//! Merging the reports of sharded runs into one.

use crate::environment::Environment;
use crate::model::RuleInfo;
use crate::report::{Report, ReportError, SCHEMA_VERSION};
use crate::subject::{Expectations, Subject};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

/// Why reports could not be merged. Every variant names the offending input
/// (its file name, or `input #N` counting from 1).
#[derive(Debug)]
pub enum MergeError {
    /// Nothing to merge.
    NoInputs,
    /// An input file could not be read or parsed.
    Load(ReportError),
    /// An input has another schema version.
    SchemaVersion {
        /// The input.
        input: String,
        /// Its version.
        found: u32,
    },
    /// An input's digest does not match its content.
    BadDigest {
        /// The input.
        input: String,
    },
    /// Two inputs report the same case.
    DuplicateCase {
        /// The area.
        area: String,
        /// The suite.
        suite: String,
        /// The case ID.
        case_id: String,
        /// The input where it first appeared.
        first: String,
        /// The input where it appeared again.
        second: String,
    },
    /// Two inputs describe one rule differently.
    ConflictingRule {
        /// The rule ID.
        id: String,
        /// The input whose description was kept.
        first: String,
        /// The input that disagrees.
        second: String,
    },
    /// Two inputs name one subject id for different implementations.
    ConflictingSubject {
        /// The subject id.
        id: String,
        /// The input whose subject was kept.
        first: String,
        /// The input that disagrees.
        second: String,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::NoInputs => f.write_str("no reports to merge"),
            MergeError::Load(e) => write!(f, "{e}"),
            MergeError::SchemaVersion { input, found } => write!(
                f,
                "{input}: schema_version {found} differs from {SCHEMA_VERSION}; cannot merge"
            ),
            MergeError::BadDigest { input } => write!(
                f,
                "{input}: digest does not match the content (edited or truncated?); refusing to merge"
            ),
            MergeError::DuplicateCase {
                area,
                suite,
                case_id,
                first,
                second,
            } => write!(
                f,
                "case {area}/{suite}/{case_id} appears in both {first} and {second}; shards must not overlap"
            ),
            MergeError::ConflictingRule { id, first, second } => write!(
                f,
                "rule {id} is described differently in {first} and {second}; were they run against different catalogues?"
            ),
            MergeError::ConflictingSubject { id, first, second } => write!(
                f,
                "subject {id} names different implementations in {first} and {second}; only shards of one run against one implementation can be merged"
            ),
        }
    }
}

impl std::error::Error for MergeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MergeError::Load(e) => Some(e),
            _ => None,
        }
    }
}

/// Merges shard reports: results are concatenated (a case reported by two
/// inputs is an error), rules are united by ID (two different descriptions
/// of one rule are an error; their static evidence lists are united), each input's environment goes into `shards`
/// (an input that is itself a merge contributes its shards), the first
/// input's environment is the primary one, and summary and digest are
/// recomputed. Inputs with another schema version or a digest that does not
/// verify are refused. Errors name inputs as `input #N`, from 1.
pub fn merge(reports: &[Report]) -> Result<Report, MergeError> {
    let labelled: Vec<(String, &Report)> = reports
        .iter()
        .enumerate()
        .map(|(idx, r)| (format!("input #{}", idx + 1), r))
        .collect();
    merge_labelled(&labelled)
}

/// Loads report files and merges them like [`merge`]; errors name the file.
pub fn merge_files<P: AsRef<Path>>(paths: &[P]) -> Result<Report, MergeError> {
    let mut loaded = Vec::with_capacity(paths.len());
    for path in paths {
        let path = path.as_ref();
        let report = Report::load(path).map_err(MergeError::Load)?;
        loaded.push((path.display().to_string(), report));
    }
    let labelled: Vec<(String, &Report)> = loaded.iter().map(|(n, r)| (n.clone(), r)).collect();
    merge_labelled(&labelled)
}

/// Whether two inputs describe a subject alike: the same kind, name and version
/// (shards of one sweep may reach it through different endpoints).
fn same_subject(a: &Subject, b: &Subject) -> bool {
    a.kind == b.kind && a.name == b.name && a.version == b.version
}

/// Whether two inputs describe a rule alike: the same level, group and summary.
fn same_description(a: &RuleInfo, b: &RuleInfo) -> bool {
    a.level == b.level && a.group == b.group && a.summary == b.summary
}

fn merge_labelled(inputs: &[(String, &Report)]) -> Result<Report, MergeError> {
    let Some((_, first)) = inputs.first() else {
        return Err(MergeError::NoInputs);
    };
    let mut rules: BTreeMap<String, (RuleInfo, &str)> = BTreeMap::new();
    let mut seen: HashMap<(String, String, String), &str> = HashMap::new();
    let mut results = Vec::new();
    let mut shards: Vec<Environment> = Vec::new();
    let mut subjects: BTreeMap<String, (Subject, &str)> = BTreeMap::new();
    let mut expectations = Expectations::default();
    for (label, report) in inputs {
        if report.schema_version != SCHEMA_VERSION {
            return Err(MergeError::SchemaVersion {
                input: label.clone(),
                found: report.schema_version,
            });
        }
        if !report.verify_digest() {
            return Err(MergeError::BadDigest {
                input: label.clone(),
            });
        }
        for rule in &report.rules {
            match rules.get_mut(&rule.id) {
                Some((kept, first_label)) if !same_description(kept, rule) => {
                    return Err(MergeError::ConflictingRule {
                        id: rule.id.clone(),
                        first: first_label.to_string(),
                        second: label.clone(),
                    })
                }
                Some(_) => {}
                None => {
                    rules.insert(rule.id.clone(), (rule.clone(), label.as_str()));
                }
            }
        }
        for subject in &report.subjects {
            match subjects.get(&subject.id) {
                Some((kept, first_label)) if !same_subject(kept, subject) => {
                    return Err(MergeError::ConflictingSubject {
                        id: subject.id.clone(),
                        first: first_label.to_string(),
                        second: label.clone(),
                    })
                }
                Some(_) => {}
                None => {
                    subjects.insert(subject.id.clone(), (subject.clone(), label.as_str()));
                }
            }
        }
        expectations
            .parts
            .extend(report.expectations.parts.iter().cloned());
        expectations
            .complete
            .extend(report.expectations.complete.iter().cloned());
        // A merge is as partial as any of its inputs: a shard's omission is not
        // known to be made up by another shard.
        expectations
            .omitted
            .extend(report.expectations.omitted.iter().cloned());
        for (rule, reason) in &report.expectations.exempted {
            expectations
                .exempted
                .entry(rule.clone())
                .or_insert_with(|| reason.clone());
        }
        for result in &report.results {
            let key = (
                result.area.clone(),
                result.suite.clone(),
                result.case_id.clone(),
            );
            if let Some(first_label) = seen.get(&key) {
                return Err(MergeError::DuplicateCase {
                    area: key.0,
                    suite: key.1,
                    case_id: key.2,
                    first: first_label.to_string(),
                    second: label.clone(),
                });
            }
            seen.insert(key, label.as_str());
            results.push(result.clone());
        }
        if report.shards.is_empty() {
            shards.push(report.environment.clone());
        } else {
            shards.extend(report.shards.iter().cloned());
        }
    }
    let mut merged = Report::new(
        first.environment.clone(),
        rules.into_values().map(|(r, _)| r).collect(),
        results,
    );
    merged.shards = shards;
    merged.subjects = subjects.into_values().map(|(s, _)| s).collect();
    merged.expectations = expectations;
    merged.recompute();
    Ok(merged)
}
