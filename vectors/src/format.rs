//! The vector format (documented in `docs/vectors.md`, schema in
//! `vectors/schema/vector.schema.json`).
//!
//! A vector file holds one JSON object: `id`, `kind`, `rules`, `since`, `description`,
//! an optional documented `exception`, the `input` and the `expected` answer. Every
//! object is parsed with `deny_unknown_fields`, and an error names the file and the
//! JSON path of the offending value. Files are written by [`to_pretty`]: keys sorted by
//! UTF-16 code units, two-space indentation, RFC 8785 numbers and strings, so the
//! generator's output is byte-identical run to run whatever serde_json features the
//! workspace unifies.

use crate::basis::{Alternative, Basis};
use loom_kernel::canonical::{utf16_cmp, write_number, write_string};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::Path;

/// The version of this vector format (`VERSION.json` `schemaVersion`). Version 2 added
/// the optional `rawInput` (the exact wire text of a request's `params`); version 3 the
/// required `basis` and the optional `alternatives` ([`crate::basis`]).
pub const FORMAT_VERSION: u32 = 3;

/// What a vector exercises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Events in, folded state out, plus snapshot/tail equivalence at every k.
    Fold,
    /// An older snapshot in, the normalized snapshot (and its restore) out.
    Normalize,
    /// Canonical JSON, fnv1a64, emit-digest and flow-hash known answers.
    Digest,
    /// A log, the flow's declaration and a resume request in; a refusal or the events
    /// to append out.
    Ingress,
    /// A userspace emit in; a refusal or the rewritten event out.
    Emit,
    /// A flow script and driver steps in; the scrubbed final log out.
    Runtime,
}

impl Kind {
    /// Every kind, in folder order.
    pub const ALL: [Kind; 6] = [
        Kind::Fold,
        Kind::Normalize,
        Kind::Digest,
        Kind::Ingress,
        Kind::Emit,
        Kind::Runtime,
    ];

    /// The name used in files, folders and `hello` claims.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Fold => "fold",
            Kind::Normalize => "normalize",
            Kind::Digest => "digest",
            Kind::Ingress => "ingress",
            Kind::Emit => "emit",
            Kind::Runtime => "runtime",
        }
    }

    /// Parses a kind name.
    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// The protocol method a vector of this kind is checked with (besides `fold` and
    /// `foldFrom`, which fold vectors also use).
    pub fn method(self) -> &'static str {
        match self {
            Kind::Fold => "fold",
            Kind::Normalize => "normalizeSnapshot",
            Kind::Digest => "digest",
            Kind::Ingress => "ingress",
            Kind::Emit => "validateEmit",
            Kind::Runtime => "runScenario",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A documented exception: the vector pins a divergence the spec allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Exception {
    /// The rule that documents the exception, e.g. `SNAP-04`.
    pub rule: String,
    /// Why the divergence is allowed.
    pub note: String,
}

/// One vector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Vector {
    /// Stable id; also the file name (`cases/<kind>/<id>.json`).
    pub id: String,
    /// What the vector exercises.
    pub kind: Kind,
    /// The rule ids it proves.
    pub rules: Vec<String>,
    /// The EVENT_SCHEMA version since which the expectation holds.
    pub since: String,
    /// One or two sentences.
    pub description: String,
    /// A documented exception, when the vector pins an allowed divergence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<Exception>,
    /// The input (its shape depends on `kind`).
    pub input: Value,
    /// The exact wire text of the request's `params`, when the vector is about how a
    /// kernel reads raw JSON (key order, number spellings, escapes) that a canonical
    /// file cannot carry. `input` is then what the reference kernel parses it to, and
    /// the runner sends these bytes unchanged instead of re-serializing `input`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<String>,
    /// The expected answer (its shape depends on `kind`).
    pub expected: Value,
    /// Whether the spec's text determines `expected`, or which of this reference's
    /// resolutions of open points it rests on.
    pub basis: Basis,
    /// Other answers the spec's text allows (another reading of an open point); any of
    /// them passes for a kernel that does not claim the reference's resolution of it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<Alternative>,
}

/// A malformed vector: the file (or source), the JSON path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorError {
    /// File path or other source name.
    pub source: String,
    /// JSON path from `$`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for VectorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: at {}: {}", self.source, self.path, self.message)
    }
}

impl std::error::Error for VectorError {}

/// Converts a serde_path_to_error path (`input.events[2].payload`) to `$.…`.
fn dollar_path(prefix: &str, inner: &str) -> String {
    let mut p = String::from("$");
    for part in [prefix, inner] {
        if part.is_empty() || part == "." {
            continue;
        }
        if !part.starts_with('[') {
            p.push('.');
        }
        p.push_str(part);
    }
    p
}

/// Decodes a typed body strictly, naming the JSON path of a failure.
pub fn decode<T: DeserializeOwned>(
    value: &Value,
    source: &str,
    prefix: &str,
) -> Result<T, VectorError> {
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| VectorError {
        source: source.to_owned(),
        path: dollar_path(prefix, &e.path().to_string()),
        message: e.inner().to_string(),
    })
}

// ---- kind bodies -----------------------------------------------------------------

/// `fold` input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FoldInput {
    /// The envelopes, in log order.
    pub events: Vec<Value>,
    /// Fold "as" this older EVENT_SCHEMA version (a versioned-fold expectation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<String>,
}

/// `fold` expected answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FoldExpected {
    /// The folded state, compared as RFC 8785 canonical bytes.
    pub state: Value,
    /// Whether `foldFrom(fold(events[..=k]), events[k+1..]) == state` is checked for
    /// every k (SNAP-01).
    pub every_k: bool,
}

/// A snapshot as the protocol carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SnapshotInput {
    /// EVENT_SCHEMA version of the fold that wrote it.
    pub schema_version: String,
    /// Sequence of the last envelope it covers.
    pub sequence: u64,
    /// The folded state.
    pub state: Value,
}

/// `normalize` input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NormalizeInput {
    /// The older snapshot.
    pub snapshot: SnapshotInput,
    /// The events after the snapshot's sequence.
    pub tail: Vec<Value>,
}

/// `normalize` expected answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NormalizeExpected {
    /// `normalizeSnapshot(snapshot)`.
    pub normalized: Value,
    /// `foldFrom(snapshot, tail)`.
    pub restored: Value,
    /// Whether `restored` equals the full fold of the log (false only under a
    /// documented exception).
    pub equals_full_fold: bool,
    /// The full fold of the log, recorded when it differs from `restored`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_fold: Option<Value>,
}

/// `ingress` / `emit` / `digest` / `runtime` bodies are checked as whole JSON objects
/// against the adapter's answer; their inputs are validated by [`check_body`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IngressInput {
    /// The execution's log.
    pub log: Vec<Value>,
    /// `resume`, `resumeAs`, `recover` or `timer`.
    pub path: String,
    /// The resume request.
    pub request: ResumeRequestInput,
    /// What the flow (the TARGET flow for resumeAs) declares.
    pub flow: FlowDeclaration,
    /// The ResumeAuthenticator's scripted verdict, when one is wired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authenticator: Option<Verdict>,
    /// The execution authorizer's scripted verdict, when one is wired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorizer: Option<Verdict>,
}

/// A resume request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResumeRequestInput {
    /// The event type.
    pub event_type: String,
    /// The payload.
    pub payload: Value,
    /// Caller metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// The flow's declaration the gate consults.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FlowDeclaration {
    /// `resumeSchemas`: gate → schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_schemas: Option<Map<String, Value>>,
}

/// A scripted authenticator or authorizer verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Verdict {
    /// `accept`/`reject` (authenticator) or `allow`/`deny` (authorizer).
    pub verdict: String,
    /// The approval an accepting authenticator records in `APPROVAL_GRANTED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Value>,
    /// The reason of a rejection or denial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `emit` input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EmitInput {
    /// The execution's log (its fold is the state the validation reads).
    pub log: Vec<Value>,
    /// Which userspace path emits.
    pub source: EmitSourceInput,
    /// The event type.
    pub event_type: String,
    /// The payload.
    pub payload: Value,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// The emit path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EmitSourceInput {
    /// `flow`, `effect` or `relay`.
    pub kind: String,
    /// The step whose effect emits (`effect` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// Its attempt (`effect` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u64>,
}

/// `digest` input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DigestInput {
    /// `canonical`, `fnv1a64`, `emit` or `flowHash`.
    pub op: String,
    /// `canonical`: the value (`null` included); `flowHash`: the flow definition.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub value: Option<Value>,
    /// `fnv1a64`: the UTF-8 text hashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `emit`: the gate segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<u64>,
    /// `emit`: the event type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    /// `emit`: the payload (`null` included).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub payload: Option<Value>,
    /// `flowHash`: `sha256` or `fnv1a`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
}

/// A present field is `Some`, even when it is JSON `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `runtime` input: a flow script plus driver steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuntimeInput {
    /// The flow scripts to register (the first is started).
    pub flows: Vec<Value>,
    /// `kernel.features` flags to turn on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// Whether a TimerStore is wired.
    #[serde(default)]
    pub timers: bool,
    /// The driver steps, in order.
    pub steps: Vec<Value>,
}

/// Checks that `input` and `expected` (and every alternative's answer) have the shape
/// `kind` requires.
pub fn check_body(v: &Vector, source: &str) -> Result<(), VectorError> {
    for (i, a) in v.alternatives.iter().enumerate() {
        check_expected(
            v.kind,
            &a.expected,
            source,
            &format!("alternatives[{i}].expected"),
        )?;
    }
    match v.kind {
        Kind::Fold => {
            decode::<FoldInput>(&v.input, source, "input")?;
            decode::<FoldExpected>(&v.expected, source, "expected")?;
        }
        Kind::Normalize => {
            decode::<NormalizeInput>(&v.input, source, "input")?;
            decode::<NormalizeExpected>(&v.expected, source, "expected")?;
        }
        Kind::Digest => {
            decode::<DigestInput>(&v.input, source, "input")?;
            object(&v.expected, source, "$.expected")?;
        }
        Kind::Ingress => {
            decode::<IngressInput>(&v.input, source, "input")?;
            object(&v.expected, source, "$.expected")?;
        }
        Kind::Emit => {
            decode::<EmitInput>(&v.input, source, "input")?;
            object(&v.expected, source, "$.expected")?;
        }
        Kind::Runtime => {
            decode::<RuntimeInput>(&v.input, source, "input")?;
            object(&v.expected, source, "$.expected")?;
        }
    }
    Ok(())
}

fn check_expected(kind: Kind, expected: &Value, source: &str, at: &str) -> Result<(), VectorError> {
    match kind {
        Kind::Fold => decode::<FoldExpected>(expected, source, at).map(|_| ()),
        Kind::Normalize => decode::<NormalizeExpected>(expected, source, at).map(|_| ()),
        _ => object(expected, source, &format!("$.{at}")),
    }
}

fn object(v: &Value, source: &str, path: &str) -> Result<(), VectorError> {
    if v.is_object() {
        Ok(())
    } else {
        Err(VectorError {
            source: source.into(),
            path: path.into(),
            message: "expected a JSON object".into(),
        })
    }
}

/// The kinds whose first request's `params` is the vector's `input` as it stands, so a
/// raw wire text can replace it (a `normalize` vector builds its requests from parts).
pub fn carries_raw_input(kind: Kind) -> bool {
    !matches!(kind, Kind::Normalize)
}

/// `rawInput` must be one JSON object on one line (the protocol frames requests by
/// line) whose parsed value is `input`, compared as canonical bytes: the raw text may
/// spell the same value differently, never say something else.
fn check_raw_input(kind: Kind, raw: &str, input: &Value) -> Result<(), String> {
    if !carries_raw_input(kind) {
        return Err(format!(
            "`{kind}` vectors cannot carry a raw input (their requests are built from parts)"
        ));
    }
    if raw.contains(['\n', '\r']) {
        return Err("a raw input is one line: it must not contain a line break".into());
    }
    let parsed: Value =
        serde_json::from_str(raw).map_err(|e| format!("the raw input is not JSON: {e}"))?;
    if !parsed.is_object() {
        return Err("the raw input must be a JSON object (a request's params)".into());
    }
    let (a, b) = (
        loom_kernel::canonical_string(&parsed),
        loom_kernel::canonical_string(input),
    );
    if a != b {
        return Err(format!(
            "the raw input parses to {a}, which is not the vector's input {b}"
        ));
    }
    Ok(())
}

fn is_rule_id(s: &str) -> bool {
    let Some((group, num)) = s.split_once('-') else {
        return false;
    };
    !group.is_empty()
        && group.bytes().all(|b| b.is_ascii_uppercase())
        && num.len() == 2
        && num.bytes().all(|b| b.is_ascii_digit())
}

fn is_semver(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

impl Vector {
    /// Parses and checks one vector from JSON text. `source` names the file in errors.
    pub fn from_json(text: &str, source: &str) -> Result<Vector, VectorError> {
        let value: Value = serde_json::from_str(text).map_err(|e| VectorError {
            source: source.into(),
            path: format!("line {} column {}", e.line(), e.column()),
            message: format!("not JSON: {e}"),
        })?;
        Vector::from_value(&value, source)
    }

    /// Parses and checks one vector from a JSON value.
    pub fn from_value(value: &Value, source: &str) -> Result<Vector, VectorError> {
        let v: Vector = decode(value, source, "")?;
        v.check(source)?;
        Ok(v)
    }

    /// The checks serde cannot express: id form, rule ids, `since`, the body's shape.
    pub fn check(&self, source: &str) -> Result<(), VectorError> {
        let bad = |path: &str, message: String| VectorError {
            source: source.into(),
            path: path.into(),
            message,
        };
        let id_ok = !self.id.is_empty()
            && self.id.len() <= 120
            && self
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
        if !id_ok {
            return Err(bad(
                "$.id",
                format!(
                    "`{}`: an id is 1-120 characters of a-z, 0-9, `-` and `.`",
                    self.id
                ),
            ));
        }
        if self.rules.is_empty() {
            return Err(bad("$.rules", "a vector proves at least one rule".into()));
        }
        for (i, r) in self.rules.iter().enumerate() {
            if !is_rule_id(r) {
                return Err(bad(
                    &format!("$.rules[{i}]"),
                    format!("`{r}` is not a rule id like FOLD-09"),
                ));
            }
        }
        if !is_semver(&self.since) {
            return Err(bad(
                "$.since",
                format!("`{}` is not a MAJOR.MINOR.PATCH version", self.since),
            ));
        }
        if self.description.trim().is_empty() {
            return Err(bad("$.description", "must not be empty".into()));
        }
        if let Some(raw) = &self.raw_input {
            check_raw_input(self.kind, raw, &self.input).map_err(|m| bad("$.rawInput", m))?;
        }
        self.basis
            .check()
            .map_err(|(at, m)| bad(&format!("$.basis{at}"), m))?;
        self.check_alternatives()
            .map_err(|(at, m)| bad(&format!("$.alternatives{at}"), m))?;
        check_body(self, source)
    }

    /// Each alternative names a reading once, takes at least one open point
    /// differently, and gives an answer that is neither `expected` nor another
    /// alternative's; what it rests on has the shape of a basis.
    fn check_alternatives(&self) -> Result<(), (String, String)> {
        let mut answers = vec![loom_kernel::canonical_string(&self.expected)];
        let mut readings = std::collections::BTreeSet::new();
        for (i, a) in self.alternatives.iter().enumerate() {
            if a.reading.is_empty() || !readings.insert(a.reading.as_str()) {
                return Err((
                    format!("[{i}].reading"),
                    format!("`{}`: a reading is named once, and not empty", a.reading),
                ));
            }
            if a.gaps.is_empty() {
                return Err((
                    format!("[{i}].gaps"),
                    "an alternative takes at least one open point (GAP id) differently".into(),
                ));
            }
            if let Some(g) = a
                .gaps
                .iter()
                .find(|g| crate::basis::decision_for(g).is_none())
            {
                return Err((
                    format!("[{i}].gaps"),
                    format!("`{g}` is not an open point this reference resolves"),
                ));
            }
            if a.description.trim().is_empty() {
                return Err((format!("[{i}].description"), "must not be empty".into()));
            }
            let text = loom_kernel::canonical_string(&a.expected);
            if answers.contains(&text) {
                return Err((
                    format!("[{i}].expected"),
                    "the same answer as `expected` or an earlier alternative".into(),
                ));
            }
            answers.push(text);
            Basis::from_resolutions(a.resolutions.clone())
                .check()
                .map_err(|(at, m)| (format!("[{i}]{at}"), m))?;
        }
        Ok(())
    }

    /// The vector as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The file bytes: [`to_pretty`] of the vector.
    pub fn to_file_text(&self) -> String {
        to_pretty(&self.to_value())
    }

    /// The path of this vector under a `cases/` directory.
    pub fn relative_path(&self) -> String {
        format!("{}/{}.json", self.kind.as_str(), self.id)
    }
}

/// Reads one vector file, refusing a file over [`crate::limits::VECTOR_FILE_BYTES_MAX`].
pub fn read_vector_file(path: &Path) -> Result<Vector, VectorError> {
    let source = path.display().to_string();
    let io = |e: std::io::Error| VectorError {
        source: source.clone(),
        path: "$".into(),
        message: format!("cannot read: {e}"),
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.len() > crate::limits::VECTOR_FILE_BYTES_MAX {
        return Err(VectorError {
            source,
            path: "$".into(),
            message: format!(
                "{} bytes is over the {}-byte limit",
                meta.len(),
                crate::limits::VECTOR_FILE_BYTES_MAX
            ),
        });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let folder = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|s| s.to_str())
        .unwrap_or("");
    parse_vector_file(&text, &source, stem, folder)
}

/// Parses the text of the vector file `<folder>/<stem>.json` (`source` names it in
/// errors): the id must equal the file stem and the kind the folder name, wherever the
/// text came from (a file, or the set embedded in the binary).
pub fn parse_vector_file(
    text: &str,
    source: &str,
    stem: &str,
    folder: &str,
) -> Result<Vector, VectorError> {
    let source = source.to_owned();
    let v = Vector::from_json(text, &source)?;
    if stem != v.id {
        return Err(VectorError {
            source,
            path: "$.id".into(),
            message: format!("id `{}` does not match the file name `{stem}.json`", v.id),
        });
    }
    if folder != v.kind.as_str() {
        return Err(VectorError {
            source,
            path: "$.kind".into(),
            message: format!(
                "kind `{}` does not match the folder `{folder}/`",
                v.kind.as_str()
            ),
        });
    }
    Ok(v)
}

/// Deterministic pretty JSON: keys sorted by UTF-16 code units, two-space indent,
/// RFC 8785 number and string forms, a trailing newline.
pub fn to_pretty(value: &Value) -> String {
    let mut out = String::new();
    pretty(&mut out, value, 0);
    out.push('\n');
    out
}

fn pretty(out: &mut String, value: &Value, depth: usize) {
    let indent = |out: &mut String, d: usize| {
        out.push('\n');
        for _ in 0..d {
            out.push_str("  ");
        }
    };
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (_, Some(u)) => out.push_str(&u.to_string()),
            _ => write_number(out, n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => write_string(out, s),
        Value::Array(a) => {
            if a.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                pretty(out, x, depth + 1);
            }
            indent(out, depth);
            out.push(']');
        }
        Value::Object(m) => {
            if m.is_empty() {
                out.push_str("{}");
                return;
            }
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_by(|a, b| utf16_cmp(a, b));
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                write_string(out, k);
                out.push_str(": ");
                pretty(out, &m[k.as_str()], depth + 1);
            }
            indent(out, depth);
            out.push('}');
        }
    }
}
