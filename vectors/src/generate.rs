//! The generator: scenario definitions in, vectors out. Every expected value is
//! computed by the reference kernel through the protocol's method table, so nothing is
//! typed by hand; `loom vectors regen` writes the files, and a test regenerates them in
//! memory and fails with a diff if a committed file differs.
//!
//! The generator also checks what it pins: a fold vector whose snapshot/tail
//! equivalence fails, or a normalize vector whose restore diverges from the full fold
//! without a documented exception, is a generator error (a kernel bug), not a vector.

use crate::basis::{Alternative, Basis, Resolution};
use crate::format::{Exception, Kind, Vector};
use crate::protocol::Answer;
use crate::readings::{differing_pointers, widen_for, Reading, ReadingSet};
use crate::reference::ReferenceKernel;
use crate::runner::{strip_message, KernelClient};
use crate::set::{version_file, VersionFile};
use loom_kernel::{canonical_string, EVENT_SCHEMA_VERSION};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;

/// The most basis errors one generator run lists.
pub const BASIS_ERRORS_SHOWN_MAX: usize = 400;

/// A vector before its expected answer is known.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Stable id.
    pub id: String,
    /// Kind.
    pub kind: Kind,
    /// Rules proven.
    pub rules: Vec<String>,
    /// EVENT_SCHEMA version since which the expectation holds.
    pub since: String,
    /// Description.
    pub description: String,
    /// A documented exception.
    pub exception: Option<Exception>,
    /// The vector's input.
    pub input: Value,
    /// `fold`: check snapshot/tail equivalence at every k.
    pub every_k: bool,
    /// `normalize`: the whole log, whose fold the restore is compared with.
    pub full_log: Option<Vec<Value>>,
    /// The exact wire text of the first request's params (the vector's `rawInput`).
    pub raw_input: Option<String>,
    /// What the expected answer rests on, as reviewed against the spec: `Some(vec![])`
    /// when the spec's text determines it ([`Scenario::spec`]), the GAP ids of the open
    /// points it rests on otherwise ([`Scenario::rests_on`]). `None` (not stated) is a
    /// generator error: there is no default.
    pub basis: Option<Vec<String>>,
    /// Open points whose other readings' answers the vector accepts as alternatives
    /// ([`Scenario::accepts`]): the spec's text plainly allows each reading.
    pub accepts: Vec<String>,
    /// Scenarios that state one basis together (the vectors derived from one fold
    /// case): a stated open point must be changed by a reading in at least one of them.
    pub group: Option<String>,
}

impl Scenario {
    /// A scenario with the current schema version as `since`.
    pub fn new(
        kind: Kind,
        id: impl Into<String>,
        rules: &[&str],
        description: impl Into<String>,
        input: Value,
    ) -> Scenario {
        Scenario {
            id: id.into(),
            kind,
            rules: rules.iter().map(|r| (*r).to_owned()).collect(),
            since: EVENT_SCHEMA_VERSION.to_owned(),
            description: description.into(),
            exception: None,
            input,
            every_k: kind == Kind::Fold,
            full_log: None,
            raw_input: None,
            basis: None,
            accepts: Vec::new(),
            group: None,
        }
    }

    /// States the open points `rule` finds in the scenario (one of the rules in
    /// [`crate::scenarios`], each reasoned from the spec), on top of what is stated.
    pub fn rests_by(self, rule: fn(&Scenario) -> Vec<&'static str>) -> Scenario {
        let points = rule(&self);
        self.rests_on(&points)
    }

    /// Puts the scenario in a group that states one basis together.
    pub fn in_group(mut self, group: &str) -> Scenario {
        self.group = Some(group.to_owned());
        self
    }

    /// States that the spec's text allows the other readings of `gaps` here (a key
    /// dropped or the event refused; absent or `null`), so the vector accepts each
    /// reading's answer ([`crate::readings::Reading::accepted`]) as an alternative.
    pub fn accepts(mut self, gaps: &[&str]) -> Scenario {
        self.accepts.extend(gaps.iter().map(|g| (*g).to_owned()));
        self.accepts.sort();
        self.accepts.dedup();
        self
    }

    /// States that the spec's text determines the expected answer (the rules the
    /// scenario cites are the citation).
    pub fn spec(mut self) -> Scenario {
        self.basis = Some(self.basis.unwrap_or_default());
        self
    }

    /// States that the expected answer rests on this reference's resolution of the
    /// open points `gaps` (GAP ids, each with a decision record). Calls add up.
    pub fn rests_on(mut self, gaps: &[&str]) -> Scenario {
        let mut all = self.basis.unwrap_or_default();
        all.extend(gaps.iter().map(|g| (*g).to_owned()));
        all.sort();
        all.dedup();
        self.basis = Some(all);
        self
    }

    /// A scenario whose input is raw wire text: `input` is what the reference kernel's
    /// JSON parser reads from it, and the runner sends the text itself. Text that is not
    /// a JSON object gives a scenario the generator refuses (with the vector's checks).
    pub fn raw(
        kind: Kind,
        id: impl Into<String>,
        rules: &[&str],
        description: impl Into<String>,
        raw: &str,
    ) -> Scenario {
        let input = serde_json::from_str(raw).unwrap_or(Value::Null);
        let mut s = Scenario::new(kind, id, rules, description, input);
        s.raw_input = Some(raw.to_owned());
        s
    }

    /// Sets `since`.
    pub fn since(mut self, since: &str) -> Scenario {
        self.since = since.to_owned();
        self
    }
}

fn call(kernel: &ReferenceKernel, method: &str, params: &Value) -> Result<Value, String> {
    answer(kernel.handle(method, params), method)
}

/// The first request of a scenario: its raw text when it has one, read by the same
/// JSON parser the protocol server uses, else its input.
fn call_input(kernel: &ReferenceKernel, s: &Scenario) -> Result<Value, String> {
    let method = s.kind.method();
    match &s.raw_input {
        Some(raw) => {
            let params: Value = serde_json::from_str(raw)
                .map_err(|e| format!("{}: the raw input is not JSON: {e}", s.id))?;
            call(kernel, method, &params)
        }
        None => call(kernel, method, &s.input),
    }
}

fn answer(a: Answer, method: &str) -> Result<Value, String> {
    match a {
        Answer::Result(v) => Ok(v),
        Answer::Error { kind, message } => Err(format!("{method}: {kind}: {message}")),
        Answer::Unsupported(m) => Err(format!("{method}: unsupported: {m}")),
    }
}

/// Computes a scenario's expected answer with the reference kernel.
pub fn expected_for(s: &Scenario) -> Result<(Value, Option<Exception>), String> {
    expected_with(&ReferenceKernel::default(), s, true)
}

/// Computes a scenario's answer with `kernel` (the reference, or the reference with
/// other readings). With `strict` (the reference), what the vector pins is checked on
/// the kernel too: a fold vector's every-k equivalence, a normalize vector's restore
/// against the full fold.
pub fn expected_with(
    kernel: &ReferenceKernel,
    s: &Scenario,
    strict: bool,
) -> Result<(Value, Option<Exception>), String> {
    let kernel = *kernel;
    let id = &s.id;
    match s.kind {
        Kind::Fold => {
            let state = call_input(&kernel, s)?["state"].clone();
            let expected = json!({"state": state, "everyK": s.every_k});
            if s.every_k && strict {
                // Self-check: the reference must satisfy what the vector pins.
                let v = Vector {
                    id: id.clone(),
                    kind: Kind::Fold,
                    rules: s.rules.clone(),
                    since: s.since.clone(),
                    description: s.description.clone(),
                    exception: None,
                    input: s.input.clone(),
                    raw_input: s.raw_input.clone(),
                    expected: expected.clone(),
                    basis: Basis::spec(),
                    alternatives: Vec::new(),
                };
                let mut client = crate::runner::InProcessKernel { kernel };
                let claims =
                    crate::runner::Claims::from_hello(client.hello().map_err(|e| e.to_string())?);
                let r = crate::runner::run_vector(&mut client, &claims, &v);
                if r.status != loom_report::Status::Pass {
                    return Err(format!(
                        "{id}: the reference kernel fails its own every-k check: {:?} {:?}",
                        r.message, r.failure
                    ));
                }
            }
            Ok((expected, s.exception.clone()))
        }
        Kind::Normalize => {
            let snapshot = &s.input["snapshot"];
            let normalized = call(&kernel, "normalizeSnapshot", &json!({"snapshot": snapshot}))?
                ["state"]
                .clone();
            let restored = call(
                &kernel,
                "foldFrom",
                &json!({"snapshot": snapshot, "events": s.input["tail"]}),
            )?["state"]
                .clone();
            let full_log = s
                .full_log
                .as_ref()
                .ok_or_else(|| format!("{id}: a normalize scenario needs its full log"))?;
            let full = call(&kernel, "fold", &json!({"events": full_log}))?["state"].clone();
            let equal = canonical_string(&full) == canonical_string(&restored);
            if !strict {
                let mut expected = json!({"normalized": normalized, "restored": restored, "equalsFullFold": equal});
                if !equal {
                    expected["fullFold"] = full;
                }
                return Ok((expected, s.exception.clone()));
            }
            if !equal && s.exception.is_none() {
                return Err(format!("{id}: restore differs from the full fold without a documented exception:\n  full     {}\n  restored {}", canonical_string(&full), canonical_string(&restored)));
            }
            if equal && s.exception.is_some() {
                return Err(format!(
                    "{id}: marked as a documented exception, but the restore equals the full fold"
                ));
            }
            let mut expected =
                json!({"normalized": normalized, "restored": restored, "equalsFullFold": equal});
            if !equal {
                expected["fullFold"] = full;
            }
            Ok((expected, s.exception.clone()))
        }
        Kind::Digest => Ok((call_input(&kernel, s)?, None)),
        Kind::Ingress => Ok((strip_message(call_input(&kernel, s)?), None)),
        Kind::Emit => Ok((strip_message(call_input(&kernel, s)?), None)),
        Kind::Runtime => {
            let answer = call_input(&kernel, s)?;
            Ok((crate::scrub::scrub_answer(&answer)?, None))
        }
    }
}

/// The basis and alternatives of a scenario whose expected answer is `expected`: the
/// open points it states (a scenario that states none is an error: every expectation
/// says what it rests on), checked against the modelled other readings
/// ([`crate::readings`]). A reading that changes the answer must be stated, either as
/// a resolution the answer rests on (its differing JSON pointers become the
/// resolution's `paths`) or, for a reading the spec plainly allows, as an accepted
/// alternative. A point no reading models for this kind decides the whole answer.
/// Also returns the open points some reading changed (the generator checks each stated,
/// modelled point is changed somewhere in the scenario's group).
pub fn basis_for(
    s: &Scenario,
    expected: &Value,
) -> Result<(Basis, Vec<Alternative>, BTreeSet<String>), String> {
    let gaps = s.basis.as_ref().ok_or_else(|| {
        format!(
            "scenario `{}` states no basis: call .spec() when the spec's text determines its answer, or .rests_on(&[\"GAP-…\"]) (docs/vectors.md, Basis)",
            s.id
        )
    })?;
    for gap in gaps.iter().chain(&s.accepts) {
        if crate::basis::decision_for(gap).is_none() {
            return Err(format!(
                "scenario `{}` names {gap}, which no decision record of this reference resolves",
                s.id
            ));
        }
        if gaps.contains(gap) && s.accepts.contains(gap) {
            return Err(format!(
                "scenario `{}` both rests on {gap} and accepts its other readings",
                s.id
            ));
        }
    }
    let mut resolutions: Vec<Resolution> = Vec::new();
    let mut alternatives: Vec<Alternative> = Vec::new();
    let mut changed: BTreeSet<&str> = BTreeSet::new();
    let judged = |v: &Value| crate::basis::judged_part(s.kind, v);
    let want = canonical_string(&judged(expected));
    let text = format!(
        "{}{}",
        canonical_string(&s.input),
        s.raw_input.as_deref().unwrap_or("")
    );
    for r in Reading::ALL
        .iter()
        .copied()
        .filter(|r| r.kinds().contains(&s.kind) && r.may_change(&text))
    {
        let other = answer_under(s, ReadingSet::one(r))?;
        if canonical_string(&judged(&other)) == want {
            continue;
        }
        changed.insert(r.gap());
        if r.accepted() {
            if !s.accepts.iter().any(|g| g == r.gap()) {
                return Err(format!(
                    "scenario `{}`: the other reading {} ({}) changes its answer; the spec allows it, so state .accepts(&[\"{}\"])",
                    s.id,
                    r.as_str(),
                    r.gap(),
                    r.gap()
                ));
            }
            let mut own = Vec::new();
            for r2 in Reading::ALL.iter().copied() {
                if r2.gap() == r.gap() || !r2.kinds().contains(&s.kind) {
                    continue;
                }
                let both = answer_under(s, ReadingSet::one(r).with(r2))?;
                if canonical_string(&judged(&both)) != canonical_string(&judged(&other)) {
                    own.push(Resolution::new(
                        r2.gap(),
                        differing_pointers(&judged(&other), &judged(&both), widen_for(r2, s.kind)),
                    ));
                }
            }
            alternatives.push(Alternative {
                reading: r.as_str().to_owned(),
                gaps: vec![r.gap().to_owned()],
                description: r.description().to_owned(),
                expected: other,
                resolutions: Basis::from_resolutions(own).resolutions,
            });
        } else {
            if !gaps.iter().any(|g| g == r.gap()) {
                return Err(format!(
                    "scenario `{}`: the other reading {} ({}) changes its answer, so it rests on {}: state .rests_on(&[\"{}\"]) (and check it against the spec)",
                    s.id,
                    r.as_str(),
                    r.gap(),
                    r.gap(),
                    r.gap()
                ));
            }
            resolutions.push(Resolution::new(
                r.gap(),
                differing_pointers(&judged(expected), &judged(&other), widen_for(r, s.kind)),
            ));
        }
    }
    for gap in gaps {
        if !Reading::modelled_for(gap, s.kind) {
            resolutions.push(Resolution::new(gap, vec![String::new()]));
        }
    }
    alternatives.sort_by(|a, b| a.reading.cmp(&b.reading));
    let changed = changed.into_iter().map(str::to_owned).collect();
    Ok((Basis::from_resolutions(resolutions), alternatives, changed))
}

/// A vector found outside the scenario set (the deploy simulator's disagreements): no
/// one reviewed it against the spec, so its basis is measured. Every modelled other
/// reading that changes `expected` is stated: as an accepted alternative where the spec
/// plainly allows that reading, as a resolution the answer rests on otherwise. The open
/// points the finder already knows it rests on are stated in `s.basis` (the simulator's
/// snapshot vectors rest on GAP-15); one no reading models decides the whole answer.
pub fn found_vector(mut s: Scenario, expected: Value) -> Result<Vector, String> {
    let mut stated: Vec<String> = s.basis.take().unwrap_or_default();
    let judged = |v: &Value| crate::basis::judged_part(s.kind, v);
    let want = canonical_string(&judged(&expected));
    let text = format!(
        "{}{}",
        canonical_string(&s.input),
        s.raw_input.as_deref().unwrap_or("")
    );
    for r in Reading::ALL
        .iter()
        .copied()
        .filter(|r| r.kinds().contains(&s.kind) && r.may_change(&text))
    {
        let other = answer_under(&s, ReadingSet::one(r))?;
        if canonical_string(&judged(&other)) == want {
            continue;
        }
        let list = if r.accepted() {
            &mut s.accepts
        } else {
            &mut stated
        };
        if !list.iter().any(|g| g == r.gap()) {
            list.push(r.gap().to_owned());
        }
    }
    s.basis = Some(stated);
    let (basis, alternatives, _) = basis_for(&s, &expected)?;
    let v = Vector {
        id: s.id,
        kind: s.kind,
        rules: s.rules,
        since: s.since,
        description: s.description,
        exception: s.exception,
        input: s.input,
        raw_input: s.raw_input,
        expected,
        basis,
        alternatives,
    };
    v.check("found vector").map_err(|e| e.to_string())?;
    Ok(v)
}

/// Every open point a group of scenarios states must be changed by one of its
/// modelled readings in at least one scenario of the group, or be modelled for none of
/// their kinds (then it is stated by review alone and decides the whole answer).
fn check_stated_points(
    group: &str,
    members: &[(&Scenario, BTreeSet<String>)],
) -> Result<(), String> {
    let Some((first, _)) = members.first() else {
        return Ok(());
    };
    let stated: Vec<&String> = first.basis.iter().flatten().chain(&first.accepts).collect();
    for gap in stated {
        let modelled = members
            .iter()
            .any(|(s, _)| Reading::modelled_for(gap, s.kind));
        let changed = members.iter().any(|(_, c)| c.contains(gap.as_str()));
        if modelled && !changed {
            return Err(format!(
                "`{group}` states {gap}, but no modelled other reading of {gap} changes its answer: drop it, or model the reading that does"
            ));
        }
        if !modelled && first.accepts.contains(gap) {
            return Err(format!(
                "`{group}` accepts the other readings of {gap}, but none is modelled for its vectors"
            ));
        }
    }
    Ok(())
}

/// A scenario's answer from the reference with the readings `set`.
fn answer_under(s: &Scenario, set: ReadingSet) -> Result<Value, String> {
    expected_with(&ReferenceKernel::with_readings(set), s, false)
        .map(|(v, _)| v)
        .map_err(|e| format!("{} (under the readings {:?})", e, set.gaps()))
}

/// Builds every vector from every scenario, sorted by id. Fails on a duplicate id, a
/// malformed vector, or a self-check the reference kernel does not pass.
pub fn generate_all() -> Result<Vec<Vector>, String> {
    let scenarios = crate::scenarios::all();
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(scenarios.len());
    let mut groups: std::collections::BTreeMap<String, Vec<(&Scenario, BTreeSet<String>)>> =
        std::collections::BTreeMap::new();
    let mut built = Vec::with_capacity(scenarios.len());
    // Basis errors are gathered so one run names every scenario to state.
    let mut errors: Vec<String> = Vec::new();
    for s in &scenarios {
        if !seen.insert(s.id.clone()) {
            return Err(format!("scenario id `{}` is defined twice", s.id));
        }
        let (expected, exception) = expected_for(s)?;
        let (basis, alternatives, changed) = match basis_for(s, &expected) {
            Ok(b) => b,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let group = s.group.clone().unwrap_or_else(|| s.id.clone());
        groups.entry(group).or_default().push((s, changed));
        built.push((s.clone(), expected, exception, basis, alternatives));
    }
    for (group, members) in &groups {
        if let Err(e) = check_stated_points(group, members) {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        let n = errors.len();
        errors.truncate(BASIS_ERRORS_SHOWN_MAX);
        return Err(format!(
            "{n} scenario(s) state a basis the readings contradict:\n{}",
            errors.join("\n")
        ));
    }
    for (s, expected, exception, basis, alternatives) in built {
        let v = Vector {
            id: s.id,
            kind: s.kind,
            rules: s.rules,
            since: s.since,
            description: s.description,
            exception,
            input: s.input,
            raw_input: s.raw_input,
            expected,
            basis,
            alternatives,
        };
        v.check("generator").map_err(|e| e.to_string())?;
        out.push(v);
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// The files a set is written as: `(path relative to vectors/, bytes)`, including
/// `VERSION.json`.
pub fn files_for(vectors: &[Vector]) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = vectors
        .iter()
        .map(|v| (format!("cases/{}", v.relative_path()), v.to_file_text()))
        .collect();
    files.sort();
    let version: VersionFile = version_file(vectors);
    let version_value = serde_json::to_value(&version).unwrap_or(Value::Null);
    files.push((
        "VERSION.json".into(),
        crate::format::to_pretty(&version_value),
    ));
    files
}

/// Differences between the generated files and those under `vectors_dir`: one line per
/// changed, missing or stale file (with the first differing line for a change).
pub fn diff_against(vectors_dir: &Path, vectors: &[Vector]) -> Vec<String> {
    let files = files_for(vectors);
    let mut out = Vec::new();
    let wanted: BTreeSet<String> = files.iter().map(|(p, _)| p.clone()).collect();
    for (rel, text) in &files {
        match std::fs::read_to_string(vectors_dir.join(rel)) {
            Err(_) => out.push(format!("missing: {rel}")),
            Ok(old) if old != *text => {
                let line = old
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| old.lines().count().min(text.lines().count()));
                let old_line = old.lines().nth(line).unwrap_or("<end of file>");
                let new_line = text.lines().nth(line).unwrap_or("<end of file>");
                out.push(format!(
                    "changed: {rel} line {}\n  - {old_line}\n  + {new_line}",
                    line + 1
                ));
            }
            Ok(_) => {}
        }
    }
    if let Ok(paths) = crate::set::case_files(&vectors_dir.join("cases")) {
        for p in paths {
            let rel = p
                .strip_prefix(vectors_dir)
                .map(|r| r.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            if !wanted.contains(&rel) {
                out.push(format!("stale: {rel} (no scenario generates it)"));
            }
        }
    }
    out
}

/// Writes the set under `vectors_dir` (`cases/**` and `VERSION.json`), removing vector
/// files no scenario generates. Returns how many files changed.
pub fn write_set(vectors_dir: &Path, vectors: &[Vector]) -> Result<usize, String> {
    let files = files_for(vectors);
    let wanted: BTreeSet<String> = files.iter().map(|(p, _)| p.clone()).collect();
    let cases = vectors_dir.join("cases");
    let mut changed = 0;
    if cases.is_dir() {
        for kind in Kind::ALL {
            let dir = cases.join(kind.as_str());
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.filter_map(|e| e.ok()) {
                let rel = format!(
                    "cases/{}/{}",
                    kind.as_str(),
                    e.file_name().to_string_lossy()
                );
                if !wanted.contains(&rel) {
                    std::fs::remove_file(e.path()).map_err(|err| format!("{rel}: {err}"))?;
                    changed += 1;
                }
            }
        }
    }
    for (rel, text) in files {
        let path = vectors_dir.join(&rel);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{rel}: {e}"))?;
        changed += 1;
    }
    Ok(changed)
}
