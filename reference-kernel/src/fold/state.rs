//! The folded state: `ExecutionState { status, frames, variables, sequence, startedAt,
//! updatedAt }` (ABI-09), frames keyed by step id, reserved variables under their spec
//! names. Every map is ordered, so iteration never depends on hashing.

use crate::canonical::utf16_cmp;
use crate::json::Json;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Execution status. `pending` holds before any `EXECUTION_STARTED` (GAP-13);
/// `continued` arrived with 1.23.0 (FOLD-32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// No `EXECUTION_STARTED` folded yet.
    Pending,
    /// Started or resumed.
    Running,
    /// Parked at a gate (`variables._suspendedOn` names it).
    Suspended,
    /// Terminal: `EXECUTION_COMPLETED`.
    Completed,
    /// Terminal: `EXECUTION_FAILED`.
    Failed,
    /// Terminal: `EXECUTION_CANCELLED`.
    Cancelled,
    /// Terminal: a kernel-stamped `EXECUTION_CONTINUED` (1.23.0).
    Continued,
}

impl Status {
    /// The status as the state JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Running => "running",
            Status::Suspended => "suspended",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
            Status::Continued => "continued",
        }
    }

    /// Completed, failed, cancelled or continued.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Status::Completed | Status::Failed | Status::Cancelled | Status::Continued
        )
    }
}

/// Lifecycle of one task (step) frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FrameStatus {
    /// `STEP_STARTED` folded; not settled.
    Running,
    /// `STEP_RETRYING` folded; not settled.
    Retrying,
    /// `EFFECT_INDOUBT`: the attempt's outcome is unknown.
    Indoubt,
    /// Settled by `STEP_COMPLETED`.
    Completed,
    /// Settled by `STEP_FAILED`.
    Failed,
    /// Settled by `STEP_CANCELLED`.
    Cancelled,
}

impl FrameStatus {
    /// Completed, failed or cancelled: the frame's `input` is dropped (1.26.0, FOLD-48).
    pub fn is_settled(self) -> bool {
        matches!(
            self,
            FrameStatus::Completed | FrameStatus::Failed | FrameStatus::Cancelled
        )
    }
}

/// One task's frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Frame {
    /// Where the task is in its lifecycle.
    pub status: FrameStatus,
    /// Attempt number, from 1.
    pub attempt: u64,
    /// The effect the task resolves to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_id: Option<String>,
    /// Task kind (step, llm, agent, tool, ui, human, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The task input; present only while the frame is unsettled (1.26.0).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input: Option<Json>,
    /// Recorded output of a completed task (served on replay).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output: Option<Json>,
    /// Recorded error of a failed task.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub error: Option<Json>,
    /// Typed-failure channel (1.17.0, FOLD-16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_channel: Option<String>,
    /// Typed-failure payload (1.17.0, FOLD-16).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub error_payload: Option<Json>,
    /// Fields a snapshot carried that this fold does not write; kept as they were.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// A present field is `Some`, even when its value is JSON `null` (a completed step
/// whose output is `null` keeps `"output": null` through a snapshot).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Json>, D::Error> {
    Json::deserialize(d).map(Some)
}

impl Frame {
    pub(crate) fn new(status: FrameStatus, attempt: u64) -> Frame {
        Frame {
            status,
            attempt,
            tool_id: None,
            kind: None,
            input: None,
            output: None,
            error: None,
            error_channel: None,
            error_payload: None,
            extra: BTreeMap::new(),
        }
    }
}

/// The `_decisions` map, which keeps its keys in JavaScript object order:
/// insertion order as folded (or document order as read), with a rebuilt entry
/// keeping its place. Decision order itself comes from `seq` (1.24.0); this order
/// only matters for legacy entries without one (SNAP-08).
#[derive(Debug, Clone, Default)]
pub struct DecisionMap {
    entries: Vec<(String, Json)>,
    index: BTreeMap<String, usize>,
}

impl PartialEq for DecisionMap {
    /// Key order is not part of equality (canonical JSON sorts keys).
    fn eq(&self, other: &Self) -> bool {
        self.entries.len() == other.entries.len()
            && self.entries.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl DecisionMap {
    /// The entry for a decision id.
    pub fn get(&self, id: &str) -> Option<&Json> {
        self.index.get(id).map(|&i| &self.entries[i].1)
    }

    /// Inserts or replaces, keeping the key's first position.
    pub fn insert(&mut self, id: String, entry: Json) {
        self.upsert(id, |_| entry);
    }

    /// Inserts or replaces the entry for `id` with what `make` builds from the entry
    /// it replaces (`None` for a new id), keeping the key's first position: one walk
    /// of the index, where a lookup and then an insert were two (and a copy of the id).
    pub fn upsert(&mut self, id: String, make: impl FnOnce(Option<&Json>) -> Json) {
        match self.index.entry(id) {
            std::collections::btree_map::Entry::Occupied(slot) => {
                let i = *slot.get();
                let entry = make(Some(&self.entries[i].1));
                self.entries[i].1 = entry;
            }
            std::collections::btree_map::Entry::Vacant(slot) => {
                let entry = make(None);
                self.entries.push((slot.key().clone(), entry));
                slot.insert(self.entries.len() - 1);
            }
        }
    }

    /// Entries in map order (insertion or document order).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of decisions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Keys in JavaScript property order: array-index keys ascending, then the rest in
    /// map order. This is the "folded-map order" legacy entries are read in.
    pub fn js_order(&self) -> Vec<&str> {
        let mut index_keys: Vec<(u32, &str)> = self
            .entries
            .iter()
            .filter_map(|(k, _)| array_index(k).map(|n| (n, k.as_str())))
            .collect();
        index_keys.sort();
        let mut out: Vec<&str> = index_keys.into_iter().map(|(_, k)| k).collect();
        out.extend(
            self.entries
                .iter()
                .filter(|(k, _)| array_index(k).is_none())
                .map(|(k, _)| k.as_str()),
        );
        out
    }
}

/// A canonical array index as JavaScript orders object keys: "0" … "4294967294".
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty()
        || (key.len() > 1 && key.starts_with('0'))
        || !key.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    key.parse::<u32>().ok().filter(|n| *n != u32::MAX)
}

impl Serialize for DecisionMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for DecisionMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DecisionMap;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of decision id to decision entry")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<DecisionMap, A::Error> {
                let mut out = DecisionMap::default();
                while let Some((k, v)) = m.next_entry::<String, Json>()? {
                    out.insert(k, v);
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// Reserved `variables` keys, as the state JSON names them.
pub mod keys {
    /// The execution input (start input, or the migrated input).
    pub const INPUT: &str = "_input";
    /// The error of `EXECUTION_FAILED`; kept by a re-open.
    pub const ERROR: &str = "_error";
    /// The output of `EXECUTION_COMPLETED` (reference-defined).
    pub const OUTPUT: &str = "_output";
    /// The recorded flow hash (GAP-13, reference-defined key).
    pub const FLOW_HASH: &str = "_flowHash";
    /// Gate passthroughs, in order (1.16.0).
    pub const RESUME_PAYLOADS: &str = "_resumePayloads";
    /// Set by a step failure while parked (1.21.0).
    pub const FAILED_WHILE_PARKED: &str = "_failedWhileParked";
    /// Stamped flow-emit counts per digest (1.19.0).
    pub const FLOW_EMITS: &str = "_flowEmits";
    /// Recorded decisions.
    pub const DECISIONS: &str = "_decisions";
    /// Resource accumulator.
    pub const RESOURCES: &str = "_resources";
    /// Inbox cursors per topic (1.23.0).
    pub const INBOX: &str = "_inbox";
    /// Answers per wait id (1.23.0).
    pub const WAIT_ANSWERS: &str = "_waitAnswers";
    /// The waits of the current park (1.23.0).
    pub const WAITS: &str = "_waits";
    /// Parallel scopes (1.23.0).
    pub const SCOPES: &str = "_scopes";
    /// Principal (1.23.0).
    pub const PRINCIPAL: &str = "_principal";
    /// Parent execution (1.23.0).
    pub const PARENT: &str = "_parent";
    /// Fork chain (1.23.0).
    pub const CHAIN: &str = "_chain";
    /// Code pin (1.23.0, R7).
    pub const CODE_HASH: &str = "_codeHash";
    /// Where a continued execution went (1.23.0).
    pub const CONTINUED_TO: &str = "_continuedTo";
    /// Lifecycle audit (1.22.0).
    pub const LIFECYCLE: &str = "_lifecycle";
    /// Held inbox messages per topic (1.25.0).
    pub const QUARANTINED: &str = "_quarantined";
    /// The open park record `{ on, wakeAt?, condition? }` (GAP-14, reference-defined).
    pub const SUSPENDED_ON: &str = "_suspendedOn";
}

/// `variables`: `_decisions` keeps its own key order; every other key lives in an
/// ordered map.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Variables {
    /// `_decisions`, when any decision has been folded.
    pub decisions: Option<DecisionMap>,
    /// Every other variable.
    pub rest: BTreeMap<String, Value>,
}

impl Variables {
    /// A variable by key (`_decisions` lives in [`Variables::decisions`]).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.rest.get(key)
    }

    /// Whether a key is present.
    pub fn contains(&self, key: &str) -> bool {
        if key == keys::DECISIONS {
            self.decisions.is_some()
        } else {
            self.rest.contains_key(key)
        }
    }

    /// Sets a key (not `_decisions`).
    pub fn set(&mut self, key: &str, value: Value) {
        self.rest.insert(key.to_owned(), value);
    }

    /// Removes a key (not `_decisions`).
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.rest.remove(key)
    }

    /// A mutable object under `key`, created empty when absent or not an object.
    pub(crate) fn object_mut(&mut self, key: &str) -> &mut Map<String, Value> {
        // Look up before inserting: the key is allocated only when it is new (this runs
        // for every stamped envelope).
        if !matches!(self.rest.get(key), Some(Value::Object(_))) {
            self.rest.insert(key.to_owned(), Value::Object(Map::new()));
        }
        match self.rest.get_mut(key) {
            Some(Value::Object(m)) => m,
            _ => unreachable!("just made an object"),
        }
    }

    /// A mutable array under `key`, created empty when absent or not an array.
    pub(crate) fn array_mut(&mut self, key: &str) -> &mut Vec<Value> {
        if !matches!(self.rest.get(key), Some(Value::Array(_))) {
            self.rest.insert(key.to_owned(), Value::Array(Vec::new()));
        }
        match self.rest.get_mut(key) {
            Some(Value::Array(a)) => a,
            _ => unreachable!("just made an array"),
        }
    }
}

impl Serialize for Variables {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut keys: Vec<&str> = self.rest.keys().map(String::as_str).collect();
        if self.decisions.is_some() {
            keys.push(keys::DECISIONS);
        }
        keys.sort_by(|a, b| utf16_cmp(a, b));
        let mut map = s.serialize_map(Some(keys.len()))?;
        for k in keys {
            if k == keys::DECISIONS && !self.rest.contains_key(k) {
                map.serialize_entry(k, self.decisions.as_ref().expect("checked"))?;
            } else {
                map.serialize_entry(k, &self.rest[k])?;
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Variables {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Variables;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("the variables object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Variables, A::Error> {
                let mut out = Variables::default();
                while let Some(k) = m.next_key::<String>()? {
                    if k == keys::DECISIONS {
                        out.decisions = Some(m.next_value::<DecisionMap>()?);
                    } else {
                        let v: Value = m.next_value()?;
                        out.rest.insert(k, v);
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// The folded form of an execution (ABI-09).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionState {
    /// Execution status; moved only by execution-level events (FOLD-07).
    pub status: Status,
    /// Task frames keyed by step id.
    pub frames: BTreeMap<String, Frame>,
    /// Reserved variables.
    pub variables: Variables,
    /// Sequence of the last envelope a handler acted on; `null` before any (GAP-12).
    pub sequence: Option<u64>,
    /// `EXECUTION_STARTED.timestamp`.
    pub started_at: Option<i64>,
    /// Timestamp of the last envelope a handler acted on.
    pub updated_at: Option<i64>,
}

impl Default for ExecutionState {
    fn default() -> Self {
        ExecutionState {
            status: Status::Pending,
            frames: BTreeMap::new(),
            variables: Variables::default(),
            sequence: None,
            started_at: None,
            updated_at: None,
        }
    }
}

impl ExecutionState {
    /// The empty state every fold starts from.
    pub fn new() -> ExecutionState {
        ExecutionState::default()
    }

    /// The state as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The state's canonical JSON (RFC 8785): the bytes every equivalence check compares.
    /// Written from the state itself, as `canonical_string(&self.to_value())` writes it
    /// (tests/fold_text.rs holds the two together): building the whole state as one tree
    /// first was two thirds of `loom fold`'s time on a long log.
    pub fn canonical(&self) -> String {
        let mut out = String::with_capacity(1024);
        if write_canonical_state(&mut out, self) {
            out
        } else {
            crate::canonical::canonical_string(&self.to_value())
        }
    }

    /// Reads a state from JSON (a snapshot's `state`). Unknown frame fields and variables
    /// are kept; an unknown top-level field or a wrong type is an error naming it.
    pub fn from_value(value: &Value) -> Result<ExecutionState, String> {
        ExecutionState::deserialize(value).map_err(|e| format!("not an ExecutionState: {e}"))
    }

    /// The open park record, if the execution is parked.
    pub fn suspended_on(&self) -> Option<&Map<String, Value>> {
        self.variables
            .get(keys::SUSPENDED_ON)
            .and_then(Value::as_object)
    }

    /// The gate the execution is parked on.
    pub fn parked_gate(&self) -> Option<&str> {
        self.suspended_on()
            .and_then(|p| p.get("on"))
            .and_then(Value::as_str)
    }

    /// `variables._resumePayloads` as a slice (empty when absent).
    pub fn resume_payloads(&self) -> &[Value] {
        match self.variables.get(keys::RESUME_PAYLOADS) {
            Some(Value::Array(a)) => a,
            _ => &[],
        }
    }

    /// Whether `variables._failedWhileParked` is set.
    pub fn failed_while_parked(&self) -> bool {
        self.variables.contains(keys::FAILED_WHILE_PARKED)
    }

    /// The count of stamped flow emits of digest `d` (1.19.0).
    pub fn flow_emit_count(&self, digest: &str) -> u64 {
        self.variables
            .get(keys::FLOW_EMITS)
            .and_then(|m| m.get(digest))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }
}

/// A frame's fields as its serialization names them, in the order the derive writes them.
const FRAME_FIELDS: [&str; 9] = [
    "status",
    "attempt",
    "toolId",
    "kind",
    "input",
    "output",
    "error",
    "errorChannel",
    "errorPayload",
];

impl FrameStatus {
    /// The status as the state JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            FrameStatus::Running => "running",
            FrameStatus::Retrying => "retrying",
            FrameStatus::Indoubt => "indoubt",
            FrameStatus::Completed => "completed",
            FrameStatus::Failed => "failed",
            FrameStatus::Cancelled => "cancelled",
        }
    }
}

/// One member of an object the canonical writer is about to sort and write.
enum Member<'a> {
    Str(&'a str),
    U64(u64),
    Json(&'a Json),
    Value(&'a Value),
}

/// Writes `{members}` with the keys in UTF-16 order.
fn write_members(out: &mut String, mut members: Vec<(&str, Member<'_>)>) {
    use crate::canonical::{write_string, write_value};
    members.sort_by(|a, b| utf16_cmp(a.0, b.0));
    out.push('{');
    for (i, (key, member)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        match member {
            Member::Str(s) => write_string(out, s),
            Member::U64(n) => write_value(out, &Value::from(n)),
            Member::Json(j) => j.write_canonical(out),
            Member::Value(v) => write_value(out, v),
        }
    }
    out.push('}');
}

/// A frame's canonical JSON, as its derived serialization would give it; `false` when a
/// field the frame carried from a snapshot (`extra`) shares a name with one it writes
/// itself, where the tree the derive builds keeps only one of the two (the caller then
/// writes that tree).
fn write_canonical_frame(out: &mut String, f: &Frame) -> bool {
    if f.extra.keys().any(|k| FRAME_FIELDS.contains(&k.as_str())) {
        return false;
    }
    let mut m: Vec<(&str, Member<'_>)> = Vec::with_capacity(4 + f.extra.len());
    m.push(("status", Member::Str(f.status.as_str())));
    m.push(("attempt", Member::U64(f.attempt)));
    let texts = [
        ("toolId", &f.tool_id),
        ("kind", &f.kind),
        ("errorChannel", &f.error_channel),
    ];
    for (key, text) in texts {
        if let Some(t) = text {
            m.push((key, Member::Str(t)));
        }
    }
    let values = [
        ("input", &f.input),
        ("output", &f.output),
        ("error", &f.error),
        ("errorPayload", &f.error_payload),
    ];
    for (key, value) in values {
        if let Some(j) = value {
            m.push((key, Member::Json(j)));
        }
    }
    m.extend(f.extra.iter().map(|(k, v)| (k.as_str(), Member::Value(v))));
    write_members(out, m);
    true
}

/// The state's canonical JSON, written from its parts; `false` when a frame cannot be
/// (see [`write_canonical_frame`]).
fn write_canonical_state(out: &mut String, s: &ExecutionState) -> bool {
    use crate::canonical::{write_string, write_value};
    let optional = |n: Option<u64>| n.map_or(Value::Null, Value::from);
    let started = s.started_at.map_or(Value::Null, Value::from);
    let updated = s.updated_at.map_or(Value::Null, Value::from);
    // The top-level keys in UTF-16 order: frames, sequence, startedAt, status, updatedAt,
    // variables.
    out.push_str("{\"frames\":{");
    let mut frames: Vec<(&String, &Frame)> = s.frames.iter().collect();
    frames.sort_by(|a, b| utf16_cmp(a.0, b.0));
    for (i, (id, frame)) in frames.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, id);
        out.push(':');
        if !write_canonical_frame(out, frame) {
            return false;
        }
    }
    out.push_str("},\"sequence\":");
    write_value(out, &optional(s.sequence));
    out.push_str(",\"startedAt\":");
    write_value(out, &started);
    out.push_str(",\"status\":");
    write_string(out, s.status.as_str());
    out.push_str(",\"updatedAt\":");
    write_value(out, &updated);
    out.push_str(",\"variables\":");
    let mut vars: Vec<(&str, Member<'_>)> = s
        .variables
        .rest
        .iter()
        .map(|(k, v)| (k.as_str(), Member::Value(v)))
        .collect();
    let decisions = s
        .variables
        .decisions
        .as_ref()
        .filter(|_| !s.variables.rest.contains_key(keys::DECISIONS));
    // `_decisions` is written as its own object, after the others are placed.
    vars.sort_by(|a, b| utf16_cmp(a.0, b.0));
    out.push('{');
    let mut first = true;
    let mut decisions_written = decisions.is_none();
    let write_decisions = |out: &mut String, first: &mut bool| {
        if let Some(d) = decisions {
            if !*first {
                out.push(',');
            }
            *first = false;
            write_string(out, keys::DECISIONS);
            out.push(':');
            let members = d.iter().map(|(id, j)| (id, Member::Json(j))).collect();
            write_members(out, members);
        }
    };
    for (key, member) in vars {
        if !decisions_written && utf16_cmp(keys::DECISIONS, key).is_lt() {
            write_decisions(out, &mut first);
            decisions_written = true;
        }
        if !first {
            out.push(',');
        }
        first = false;
        write_string(out, key);
        out.push(':');
        if let Member::Value(v) = member {
            write_value(out, v);
        }
    }
    if !decisions_written {
        write_decisions(out, &mut first);
    }
    out.push_str("}}");
    true
}
