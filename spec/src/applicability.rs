//! Which rules apply to which kind of implementation (`spec/applicability.toml`).
//!
//! The table is data so that people can review it next to the catalogue, and so that
//! every figure in a report ("rules that apply to a kernel") has one definition.

use crate::catalogue::Catalogue;
use serde::Deserialize;
use std::collections::BTreeSet;

/// The table's text, embedded at build time.
const APPLICABILITY_TOML: &str = include_str!("../applicability.toml");

/// The kinds of implementation the table names, besides the reference (every rule)
/// and the harness (no rule).
pub const APPLICABILITY_KINDS: [&str; 2] = ["kernel", "store"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KindTable {
    groups: Vec<String>,
    rules: Vec<String>,
    except: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    kernel: KindTable,
    store: KindTable,
}

/// The applicability table resolved against the catalogue.
#[derive(Debug, Clone)]
pub struct Applicability {
    kernel: BTreeSet<String>,
    store: BTreeSet<String>,
}

impl Applicability {
    /// The embedded table, resolved against the embedded catalogue.
    pub fn load() -> Applicability {
        Self::parse(APPLICABILITY_TOML, &Catalogue::load())
            .unwrap_or_else(|e| panic!("spec/applicability.toml is invalid: {e}"))
    }

    /// Parses a table and resolves it against `catalogue`: an unknown group or rule id
    /// is an error, so the table cannot silently name nothing.
    pub fn parse(text: &str, catalogue: &Catalogue) -> Result<Applicability, String> {
        let table: Table = toml::from_str(text).map_err(|e| e.to_string())?;
        let resolve = |kind: &str, t: &KindTable| -> Result<BTreeSet<String>, String> {
            let mut out = BTreeSet::new();
            for g in &t.groups {
                if !crate::catalogue::RULE_GROUPS.contains(&g.as_str()) {
                    return Err(format!("[{kind}] names an unknown group {g:?}"));
                }
                out.extend(
                    catalogue
                        .rules()
                        .iter()
                        .filter(|r| &r.group == g)
                        .map(|r| r.id.clone()),
                );
            }
            for id in t.rules.iter().chain(&t.except) {
                if catalogue.get(id).is_none() {
                    return Err(format!("[{kind}] names an unknown rule {id:?}"));
                }
            }
            out.extend(t.rules.iter().cloned());
            for id in &t.except {
                out.remove(id);
            }
            Ok(out)
        };
        Ok(Applicability {
            kernel: resolve("kernel", &table.kernel)?,
            store: resolve("store", &table.store)?,
        })
    }

    /// The kinds (`"kernel"`, `"store"`) a rule applies to, besides the reference.
    pub fn kinds_for(&self, rule_id: &str) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.kernel.contains(rule_id) {
            out.push("kernel");
        }
        if self.store.contains(rule_id) {
            out.push("store");
        }
        out
    }

    /// The rules that apply to `kind` (`"kernel"` or `"store"`), sorted.
    pub fn rules_for(&self, kind: &str) -> Vec<&str> {
        let set = match kind {
            "kernel" => &self.kernel,
            "store" => &self.store,
            _ => return Vec::new(),
        };
        set.iter().map(String::as_str).collect()
    }
}
