//! The rule catalogue (`rules.toml`) as typed data.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The catalogue text, embedded at build time so the binary cannot drift from the file.
const RULES_TOML: &str = include_str!("../rules.toml");

/// The rule groups, in catalogue order. A rule id is `<GROUP>-<NN>`.
pub const RULE_GROUPS: [&str; 12] = [
    "FOLD", "SNAP", "EMIT", "REPLAY", "TYPED", "INGRESS", "ABI", "SPI", "PLACE", "RES", "COMPAT",
    "CONF",
];

/// The prefix of gap ids (`GAP-NN`): open questions with a reference resolution.
pub const GAP_GROUP: &str = "GAP";

/// Whether `text` has the shape of a catalogue id: one of [`RULE_GROUPS`] or `GAP`, a
/// hyphen and exactly two ASCII digits. Says nothing about whether the id exists.
pub fn is_id_shaped(text: &str) -> bool {
    let Some((group, number)) = text.split_once('-') else {
        return false;
    };
    (RULE_GROUPS.contains(&group) || group == GAP_GROUP)
        && number.len() == 2
        && number.bytes().all(|b| b.is_ascii_digit())
}

/// The normative strength of a rule, exactly as RULES.md labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Level {
    /// RFC 2119 MUST.
    #[serde(rename = "MUST")]
    Must,
    /// RFC 2119 MUST NOT.
    #[serde(rename = "MUST NOT")]
    MustNot,
    /// RFC 2119 SHOULD.
    #[serde(rename = "SHOULD")]
    Should,
    /// RFC 2119 MAY.
    #[serde(rename = "MAY")]
    May,
    /// A fact the spec states without a keyword; binds exactly as a MUST does.
    #[serde(rename = "GUARANTEE")]
    Guarantee,
    /// A rule the spec implies but does not state; this kernel's choice (INGRESS-39).
    #[serde(rename = "reference-defined")]
    ReferenceDefined,
}

impl Level {
    /// The label as RULES.md writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Should => "SHOULD",
            Level::May => "MAY",
            Level::Guarantee => "GUARANTEE",
            Level::ReferenceDefined => "reference-defined",
        }
    }

    /// Whether a conforming implementation is bound by a rule of this level. SHOULD and
    /// MAY are not; everything else is.
    pub fn is_binding(self) -> bool {
        !matches!(self, Level::Should | Level::May)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A kind of evidence a rule is planned to get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlannedEvidence {
    /// A Rust test (unit, integration or property test).
    Test,
    /// A golden vector (event log → expected state bytes).
    Vector,
    /// A conformance-kit case run against every implementation of an SPI.
    Kit,
    /// A deterministic-simulation invariant or scenario.
    Sim,
    /// A fuzz target or property test over generated input.
    Fuzz,
    /// A benchmark gate.
    Bench,
    /// A pin test over a constant, a catalogue or a shape.
    Pin,
}

/// One rule of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Stable id, `<GROUP>-<NN>`.
    pub id: String,
    /// Normative level.
    pub level: Level,
    /// The group, equal to the id's prefix.
    pub group: String,
    /// The spec section or ADR decision cited, e.g. `§4` or `§4.1; ADR0060 D3`.
    pub section: String,
    /// One sentence, in our words; RULES.md stays the authority for the wording.
    pub summary: String,
    /// The kinds of evidence planned for the rule.
    pub evidence: Vec<PlannedEvidence>,
}

impl Rule {
    /// Whether a conforming implementation is bound by this rule (see [`Level::is_binding`]).
    pub fn is_binding(&self) -> bool {
        self.level.is_binding()
    }
}

/// One gap: a question the spec leaves open, with the reference resolution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gap {
    /// Stable id, `GAP-NN`.
    pub id: String,
    /// Short title of the open question.
    pub title: String,
    /// One sentence, in our words, of the resolution this reference kernel adopts.
    pub resolution: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueFile {
    rule: Vec<Rule>,
    gap: Vec<Gap>,
}

/// The whole catalogue: every rule and every gap, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalogue {
    rules: Vec<Rule>,
    gaps: Vec<Gap>,
}

impl Catalogue {
    /// The embedded catalogue.
    ///
    /// # Panics
    ///
    /// Only if the embedded `rules.toml` is malformed, which `tests/catalogue.rs` guards
    /// against: it is a build artefact, not input.
    pub fn load() -> Catalogue {
        match Catalogue::parse(RULES_TOML) {
            Ok(catalogue) => catalogue,
            Err(err) => panic!("the embedded spec/rules.toml is malformed: {err}"),
        }
    }

    /// Parses and validates a catalogue text: strict fields, id shapes, group prefixes,
    /// no duplicate ids, non-empty summaries and at least one planned evidence kind.
    pub fn parse(text: &str) -> Result<Catalogue, String> {
        let file: CatalogueFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut seen = std::collections::BTreeSet::new();
        for rule in &file.rule {
            if !is_id_shaped(&rule.id) || rule.id.starts_with("GAP-") {
                return Err(format!("rule id `{}` is not <GROUP>-<NN>", rule.id));
            }
            if !rule.id.starts_with(&format!("{}-", rule.group)) {
                return Err(format!("rule `{}` has group `{}`", rule.id, rule.group));
            }
            if rule.summary.trim().is_empty() || rule.section.trim().is_empty() {
                return Err(format!(
                    "rule `{}` has an empty summary or section",
                    rule.id
                ));
            }
            if rule.evidence.is_empty() {
                return Err(format!("rule `{}` plans no evidence", rule.id));
            }
            if !seen.insert(rule.id.clone()) {
                return Err(format!("rule id `{}` appears twice", rule.id));
            }
        }
        for gap in &file.gap {
            if !gap.id.starts_with("GAP-") || !is_id_shaped(&gap.id) {
                return Err(format!("gap id `{}` is not GAP-<NN>", gap.id));
            }
            if gap.title.trim().is_empty() || gap.resolution.trim().is_empty() {
                return Err(format!("gap `{}` has an empty title or resolution", gap.id));
            }
            if !seen.insert(gap.id.clone()) {
                return Err(format!("gap id `{}` appears twice", gap.id));
            }
        }
        Ok(Catalogue {
            rules: file.rule,
            gaps: file.gap,
        })
    }

    /// Every rule, in catalogue order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Every gap, in catalogue order.
    pub fn gaps(&self) -> &[Gap] {
        &self.gaps
    }

    /// The rule with this id, if any. Gap ids are not rules: use [`Catalogue::gap`].
    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// The gap with this id, if any.
    pub fn gap(&self, id: &str) -> Option<&Gap> {
        self.gaps.iter().find(|g| g.id == id)
    }

    /// Whether `id` names a rule or a gap of this catalogue.
    pub fn is_known_id(&self, id: &str) -> bool {
        self.get(id).is_some() || self.gap(id).is_some()
    }

    /// The binding rules (see [`Rule::is_binding`]), in catalogue order.
    pub fn binding_rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().filter(|r| r.is_binding())
    }
}
