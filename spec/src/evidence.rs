//! The evidence check (CONF-01): every binding rule has evidence, and every rule id cited
//! as evidence exists.
//!
//! Evidence is found by a scan of the workspace, never declared by hand:
//!
//! * a Rust **test** function whose name carries a rule token: `<group>_<NN>` as a whole
//!   `_`-separated token, with `<group>` one of the lowercase rule groups (or `gap`) and
//!   `<NN>` exactly two digits. `fn snap_01_and_snap_10_agree` cites SNAP-01 and SNAP-10.
//!   A function counts as a test when an attribute above it mentions `test` (`#[test]`,
//!   `#[tokio::test(..)]`), when it sits inside a `proptest!` block or a `#[cfg(test)] mod`,
//!   or when its file lies under a `tests/` directory;
//! * a **string literal that is exactly a rule id** (`"FOLD-09"`) in Rust files under
//!   `conformance-kits/`, `simulator/`, `vectors/`, `fuzz/` and `reference-kernel/tests/`,
//!   and any JSON string that is exactly a rule id in `vectors/**/*.json` (the `"rules"`
//!   array of a vector).
//!
//! Comments (doc comments included) and any other prose never count: the scan lexes Rust
//! first and only looks at code and at whole string literals.

use crate::catalogue::{is_id_shaped, Catalogue, RULE_GROUPS};
use crate::lexer::{json_strings, lex_rust};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

/// The embedded exemption list.
const EXEMPTIONS_TOML: &str = include_str!("../exemptions.toml");

/// The scan does not descend deeper than this many directory levels.
pub const SCAN_DEPTH_MAX: usize = 32;
/// Files larger than this are skipped (and listed in [`EvidenceIndex::skipped`]).
pub const SCAN_FILE_BYTES_MAX: u64 = 8 * 1024 * 1024;
/// The scan stops collecting files after this many.
pub const SCAN_FILES_MAX: usize = 100_000;

/// Where string-literal citations count, and what kind of evidence they are.
const LITERAL_SCOPES: [(&str, SiteKind); 5] = [
    ("conformance-kits/", SiteKind::Kit),
    ("simulator/", SiteKind::Invariant),
    ("vectors/", SiteKind::Vector),
    ("fuzz/", SiteKind::Fuzz),
    ("reference-kernel/tests/", SiteKind::Test),
];

/// The kind of an evidence site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SiteKind {
    /// A Rust test function, or a citation inside the kernel's tests.
    Test,
    /// A conformance-kit case.
    Kit,
    /// A golden vector.
    Vector,
    /// A simulator invariant or scenario.
    Invariant,
    /// A fuzz target or its shared property.
    Fuzz,
}

impl SiteKind {
    /// `"test"`, `"kit"`, `"vector"`, `"invariant"` or `"fuzz"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SiteKind::Test => "test",
            SiteKind::Kit => "kit",
            SiteKind::Vector => "vector",
            SiteKind::Invariant => "invariant",
            SiteKind::Fuzz => "fuzz",
        }
    }
}

impl fmt::Display for SiteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One place that cites a rule id as evidence.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EvidenceSite {
    /// Path relative to the workspace root, `/`-separated.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What kind of evidence it is.
    pub kind: SiteKind,
    /// The test function's name, the enclosing function of a literal, or the vector's id.
    pub name: String,
}

impl fmt::Display for EvidenceSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} ({} `{}`)",
            self.file, self.line, self.kind, self.name
        )
    }
}

/// Every evidence site found, by cited id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvidenceIndex {
    /// Cited id → sites, in scan order (files sorted by path).
    pub sites: BTreeMap<String, Vec<EvidenceSite>>,
    /// Files or directories the scan could not read or chose to skip, with the reason.
    pub skipped: Vec<String>,
}

impl EvidenceIndex {
    /// The sites citing `id` (empty when none).
    pub fn sites_for(&self, id: &str) -> &[EvidenceSite] {
        self.sites.get(id).map_or(&[], Vec::as_slice)
    }

    /// Whether anything cites `id`.
    pub fn has_evidence(&self, id: &str) -> bool {
        !self.sites_for(id).is_empty()
    }

    /// Records a site for `id`.
    pub fn insert(&mut self, id: String, site: EvidenceSite) {
        self.sites.entry(id).or_default().push(site);
    }
}

/// The rule ids a test name cites: every `<group>_<NN>` token pair, deduplicated, in
/// order. `fold_09_step_failed` → `["FOLD-09"]`; `snap_01_and_snap_10` → both.
pub fn ids_in_test_name(name: &str) -> Vec<String> {
    let tokens: Vec<&str> = name.split('_').collect();
    let mut ids: Vec<String> = Vec::new();
    for pair in tokens.windows(2) {
        let (group, number) = (pair[0], pair[1]);
        let upper = group.to_ascii_uppercase();
        let group_ok = group.bytes().all(|b| b.is_ascii_lowercase())
            && (RULE_GROUPS.contains(&upper.as_str()) || upper == "GAP");
        if group_ok && number.len() == 2 && number.bytes().all(|b| b.is_ascii_digit()) {
            let id = format!("{upper}-{number}");
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    ids
}

/// Scans the workspace at `workspace_root` for evidence sites (see the module docs).
/// Never panics; unreadable files are listed in [`EvidenceIndex::skipped`].
pub fn scan_evidence(workspace_root: &Path) -> EvidenceIndex {
    let mut index = EvidenceIndex::default();
    let mut files = Vec::new();
    walk(workspace_root, "", 0, &mut files, &mut index.skipped);
    files.sort();
    for rel in files {
        let path = workspace_root.join(&rel);
        let text = match std::fs::read(&path).map(String::from_utf8) {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => {
                index.skipped.push(format!("{rel}: not UTF-8"));
                continue;
            }
            Err(e) => {
                index.skipped.push(format!("{rel}: {e}"));
                continue;
            }
        };
        if rel.ends_with(".rs") {
            scan_rust(&rel, &text, &mut index);
        } else if rel.ends_with(".json") && rel.starts_with("vectors/") {
            scan_json(&rel, &text, &mut index);
        }
    }
    index
}

fn walk(root: &Path, rel: &str, depth: usize, files: &mut Vec<String>, skipped: &mut Vec<String>) {
    if depth > SCAN_DEPTH_MAX {
        skipped.push(format!("{rel}: deeper than SCAN_DEPTH_MAX"));
        return;
    }
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) => {
            skipped.push(format!("{}: {e}", if rel.is_empty() { "." } else { rel }));
            return;
        }
    };
    let mut names: Vec<(String, std::fs::FileType)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.file_type().ok()?)))
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, file_type) in names {
        let child = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if file_type.is_dir() {
            if name == "target" || name == "node_modules" || name.starts_with('.') {
                continue;
            }
            walk(root, &child, depth + 1, files, skipped);
        } else if file_type.is_file() && (name.ends_with(".rs") || name.ends_with(".json")) {
            if files.len() >= SCAN_FILES_MAX {
                skipped.push(format!("{child}: more than SCAN_FILES_MAX files"));
                return;
            }
            let too_big = std::fs::metadata(root.join(&child))
                .map(|m| m.len() > SCAN_FILE_BYTES_MAX)
                .unwrap_or(false);
            if too_big {
                skipped.push(format!("{child}: larger than SCAN_FILE_BYTES_MAX"));
            } else {
                files.push(child);
            }
        }
    }
}

fn file_stem(rel: &str) -> String {
    let base = rel.rsplit('/').next().unwrap_or(rel);
    base.split('.').next().unwrap_or(base).to_string()
}

/// A function found in lexed code: byte offset in the code, line and name.
struct FnItem {
    pos: usize,
    line: usize,
    name: String,
}

fn find_fns(code: &str) -> Vec<FnItem> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut line = 1usize;
    let mut last = 0usize;
    let mut search = 0usize;
    while let Some(found) = code[search..].find("fn") {
        let pos = search + found;
        search = pos + 2;
        let before_ok = pos == 0 || !is_ident_byte(bytes[pos - 1]);
        let after_ok = bytes.get(pos + 2).is_some_and(|b| b.is_ascii_whitespace());
        if !(before_ok && after_ok) {
            continue;
        }
        let rest = code[pos + 2..].trim_start();
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        line += code[last..pos].matches('\n').count();
        last = pos;
        out.push(FnItem { pos, line, name });
    }
    out
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The byte index just past the bracket group opening at `open`, or the end of `code`.
fn match_brackets(code: &str, open: usize) -> usize {
    let mut depth = 0i64;
    for (i, b) in code.bytes().enumerate().skip(open) {
        match b {
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Byte ranges of `proptest! { .. }` blocks and `#[cfg(test)] mod x { .. }` bodies.
fn test_regions(code: &str) -> Vec<(usize, usize)> {
    let bytes = code.as_bytes();
    let mut regions = Vec::new();
    let mut search = 0usize;
    while let Some(found) = code[search..].find("proptest!") {
        let pos = search + found;
        search = pos + 9;
        if pos > 0 && is_ident_byte(bytes[pos - 1]) {
            continue;
        }
        if let Some(open) = code[search..].find(['{', '(', '[']) {
            let open = search + open;
            if code[search..open].trim().is_empty() {
                regions.push((open, match_brackets(code, open)));
            }
        }
    }
    search = 0;
    while let Some(found) = code[search..].find("cfg(test)") {
        let pos = search + found;
        search = pos + 9;
        let Some(stop) = code[search..].find(['{', ';']) else {
            break;
        };
        let stop = search + stop;
        let between = &code[search..stop];
        let is_mod = bytes[stop] == b'{'
            && between
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == "mod");
        if is_mod {
            regions.push((stop, match_brackets(code, stop)));
        }
    }
    regions
}

/// Whether the attributes directly above the item at `pos` mention `test` (but not
/// `cfg(not(test))`).
fn has_test_attribute(code: &str, pos: usize) -> bool {
    let start = code[..pos].rfind([';', '{', '}']).map_or(0, |i| i + 1);
    let prefix = &code[start..pos];
    let mut search = 0usize;
    while let Some(found) = prefix[search..].find("#[") {
        let open = search + found + 1;
        let end = match_brackets(prefix, open);
        let attribute: String = prefix[open..end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if attribute.contains("test") && !attribute.contains("not(test") {
            return true;
        }
        search = end.max(open + 1);
    }
    false
}

fn scan_rust(rel: &str, text: &str, index: &mut EvidenceIndex) {
    let lexed = lex_rust(text);
    let fns = find_fns(&lexed.code);
    let in_tests_dir = rel.split('/').rev().skip(1).any(|c| c == "tests");
    let regions = test_regions(&lexed.code);
    let fn_kind = if rel.starts_with("fuzz/") {
        SiteKind::Fuzz
    } else if rel.starts_with("conformance-kits/") {
        SiteKind::Kit
    } else {
        SiteKind::Test
    };
    for item in &fns {
        let ids = ids_in_test_name(&item.name);
        if ids.is_empty() {
            continue;
        }
        let is_test = in_tests_dir
            || regions.iter().any(|(a, b)| (*a..*b).contains(&item.pos))
            || has_test_attribute(&lexed.code, item.pos);
        if !is_test {
            continue;
        }
        for id in ids {
            let site = EvidenceSite {
                file: rel.to_string(),
                line: item.line,
                kind: fn_kind,
                name: item.name.clone(),
            };
            index.insert(id, site);
        }
    }
    let Some(kind) = LITERAL_SCOPES
        .iter()
        .find(|(p, _)| rel.starts_with(p))
        .map(|(_, k)| *k)
    else {
        return;
    };
    for (line, content) in &lexed.strings {
        if !is_id_shaped(content) {
            continue;
        }
        let name = fns
            .iter()
            .rev()
            .find(|f| f.line <= *line)
            .map_or_else(|| file_stem(rel), |f| f.name.clone());
        let site = EvidenceSite {
            file: rel.to_string(),
            line: *line,
            kind,
            name,
        };
        index.insert(content.clone(), site);
    }
}

fn scan_json(rel: &str, text: &str, index: &mut EvidenceIndex) {
    let name = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("id").and_then(|id| id.as_str()).map(str::to_string))
        .unwrap_or_else(|| file_stem(rel));
    for (line, content) in json_strings(text) {
        if is_id_shaped(&content) {
            let site = EvidenceSite {
                file: rel.to_string(),
                line,
                kind: SiteKind::Vector,
                name: name.clone(),
            };
            index.insert(content, site);
        }
    }
}

/// One entry of `spec/exemptions.toml`: a binding rule that may lack evidence for now.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exemption {
    /// The rule id.
    pub rule: String,
    /// Why the rule has no evidence yet. Must not be empty.
    pub reason: String,
    /// The issue that tracks the missing evidence, if one is filed.
    #[serde(default)]
    pub issue: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExemptionFile {
    #[serde(default)]
    exemption: Vec<Exemption>,
}

/// Parses an exemption list (`[[exemption]] rule, reason, issue`).
pub fn parse_exemptions(text: &str) -> Result<Vec<Exemption>, String> {
    toml::from_str::<ExemptionFile>(text)
        .map(|f| f.exemption)
        .map_err(|e| e.to_string())
}

/// The embedded `spec/exemptions.toml`.
pub fn load_exemptions() -> Result<Vec<Exemption>, String> {
    parse_exemptions(EXEMPTIONS_TOML)
}

/// The outcome of [`check_evidence`]. It fails both ways: missing evidence, and evidence
/// (or exemptions) that name nothing real.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvidenceCheck {
    /// Binding rules with at least one evidence site.
    pub covered: usize,
    /// Binding rules in the catalogue.
    pub total: usize,
    /// Binding rules without evidence but with a valid exemption.
    pub exempted: usize,
    /// Binding rules with neither evidence nor an exemption.
    pub missing: Vec<String>,
    /// Sites citing an id that is neither a rule nor a gap of the catalogue.
    pub unknown_citations: Vec<(String, EvidenceSite)>,
    /// Exemptions that must go: no longer needed, unknown or non-binding rule, empty
    /// reason, or duplicated.
    pub stale_exemptions: Vec<String>,
    /// For each entry of `stale_exemptions`, in the same order, what is wrong and the fix.
    pub stale_reasons: Vec<String>,
}

impl EvidenceCheck {
    /// True when there is nothing to fix.
    pub fn is_ok(&self) -> bool {
        self.missing.is_empty()
            && self.unknown_citations.is_empty()
            && self.stale_exemptions.is_empty()
    }
}

/// Checks the index against the catalogue and the exemptions (CONF-01).
pub fn check_evidence(
    catalogue: &Catalogue,
    index: &EvidenceIndex,
    exemptions: &[Exemption],
) -> EvidenceCheck {
    let mut check = EvidenceCheck::default();
    let exempt: BTreeSet<&str> = exemptions.iter().map(|e| e.rule.as_str()).collect();
    for rule in catalogue.binding_rules() {
        check.total += 1;
        if index.has_evidence(&rule.id) {
            check.covered += 1;
        } else if exempt.contains(rule.id.as_str()) {
            check.exempted += 1;
        } else {
            check.missing.push(rule.id.clone());
        }
    }
    for (id, sites) in &index.sites {
        if !catalogue.is_known_id(id) {
            for site in sites {
                check.unknown_citations.push((id.clone(), site.clone()));
            }
        }
    }
    let mut seen = BTreeSet::new();
    for ex in exemptions {
        let problem = if !seen.insert(ex.rule.as_str()) {
            Some("is listed twice; keep one entry".to_string())
        } else if ex.reason.trim().is_empty() {
            Some("has an empty reason; say why the evidence is missing".to_string())
        } else {
            match catalogue.get(&ex.rule) {
                None => Some("names no rule of spec/rules.toml; fix the id or delete the entry".to_string()),
                Some(rule) if !rule.is_binding() => Some(format!(
                    "is a {} rule, which needs no evidence; delete the entry",
                    rule.level
                )),
                Some(_) => index.sites_for(&ex.rule).first().map(|site| {
                    format!("is no longer needed: the rule now has evidence at {site}; delete the entry")
                }),
            }
        };
        if let Some(problem) = problem {
            check.stale_exemptions.push(ex.rule.clone());
            check.stale_reasons.push(problem);
        }
    }
    check
}

impl fmt::Display for EvidenceCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let problems =
            self.missing.len() + self.unknown_citations.len() + self.stale_exemptions.len();
        writeln!(
            f,
            "evidence check: {}/{} binding rules have evidence, {} exempted, {} problem(s)",
            self.covered, self.total, self.exempted, problems
        )?;
        if !self.missing.is_empty() {
            writeln!(
                f,
                "\nbinding rules with no evidence and no exemption ({}):",
                self.missing.len()
            )?;
            for id in &self.missing {
                let (group, number) = id.split_once('-').unwrap_or((id, ""));
                writeln!(
                    f,
                    "  {id}: add a test named `{}_{number}_<what_it_checks>` or cite \"{id}\" in a kit case, vector or invariant",
                    group.to_ascii_lowercase()
                )?;
            }
            writeln!(
                f,
                "  (if the evidence cannot exist yet, add an [[exemption]] with a reason and an issue to spec/exemptions.toml)"
            )?;
        }
        if !self.unknown_citations.is_empty() {
            writeln!(
                f,
                "\nevidence citing ids that are not in spec/rules.toml ({}):",
                self.unknown_citations.len()
            )?;
            for (id, site) in &self.unknown_citations {
                writeln!(
                    f,
                    "  {}:{}: {} `{}` cites {id}, which does not exist; fix the id (or add the rule to RULES.md and spec/rules.toml)",
                    site.file, site.line, site.kind, site.name
                )?;
            }
        }
        if !self.stale_exemptions.is_empty() {
            writeln!(
                f,
                "\nexemptions to fix in spec/exemptions.toml ({}):",
                self.stale_exemptions.len()
            )?;
            for (id, why) in self.stale_exemptions.iter().zip(&self.stale_reasons) {
                writeln!(f, "  {id}: {why}")?;
            }
        }
        Ok(())
    }
}
