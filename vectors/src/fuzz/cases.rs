//! One differential case per check, built from bytes by the property library's
//! generators (`loom-props`): event logs (`LogSpec`, every grammar family and its
//! targeted corruption), hostile resumes and emits (`IngressInput`), and wide JSON
//! values (`CanonicalInput`). Bytes in, case out, deterministically, so proptest can
//! shrink the bytes and the smaller bytes still build a (smaller) case.

use super::respell::respell;
use arbitrary::{Arbitrary, Unstructured};
use loom_kernel::fold::FoldVersion;
use loom_kernel::ingress::{EmitSource, ResumePath};
use loom_props::ingress::{gate_schema, Auth, IngressInput as PropsIngress};
use loom_props::{CanonicalInput, Grammar, LogSpec};
use serde_json::{json, Map, Value};

/// What a case checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// `fold(events)` against the reference fold.
    Fold,
    /// `foldFrom(fold(events[..=k]), events[k+1..]) == fold(events)` on the kernel itself.
    Restore,
    /// Canonical JSON, fnv1a64, emit digests and flow hashes against the reference.
    Digest,
    /// The ingress gate's decision against the reference.
    Ingress,
    /// Userspace emit validation against the reference.
    Emit,
}

impl Check {
    /// Every check, in the order the campaign takes turns.
    pub const ALL: [Check; 5] = [
        Check::Fold,
        Check::Restore,
        Check::Digest,
        Check::Ingress,
        Check::Emit,
    ];

    /// The check's name (`--check` values, report suites).
    pub fn as_str(self) -> &'static str {
        match self {
            Check::Fold => "fold",
            Check::Restore => "restore",
            Check::Digest => "digest",
            Check::Ingress => "ingress",
            Check::Emit => "emit",
        }
    }

    /// Parses a check name.
    pub fn parse(text: &str) -> Option<Check> {
        Check::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// The rules a passing check is evidence for.
    pub fn rules(self) -> &'static [&'static str] {
        match self {
            Check::Fold => &["FOLD-01", "FOLD-07", "FOLD-38", "FOLD-48"],
            Check::Restore => &["SNAP-01"],
            Check::Digest => &["EMIT-02", "EMIT-04", "GAP-03", "FOLD-34"],
            Check::Ingress => &["INGRESS-02", "INGRESS-03", "INGRESS-15", "INGRESS-24"],
            Check::Emit => &["INGRESS-27", "INGRESS-28", "INGRESS-33", "INGRESS-39"],
        }
    }
}

/// One generated case: the request the kernel gets, as a value and, when respelled,
/// as the exact text sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// What it checks.
    pub check: Check,
    /// The protocol method of the first request.
    pub method: &'static str,
    /// Its params.
    pub params: Value,
    /// Its params as sent, when respelled (a vector's `rawInput`).
    pub raw: Option<String>,
    /// `restore`: the snapshot points.
    pub ks: Vec<usize>,
    /// `restore`: for each snapshot point, where its tail starts (`k + 1` mostly; at or
    /// before `k` to overlap the snapshot, GAP-15).
    pub tail_from: Vec<usize>,
}

/// One fold or restore log in this many has its ids renamed to [`HOSTILE_NAMES`].
pub const HOSTILE_NAMES_ODDS: u8 = 3;

/// Names a kernel written on a map or a plain object gets wrong: `Object.prototype`
/// members, case twins, ids with separators.
pub const HOSTILE_NAMES: [&str; 14] = [
    "constructor",
    "toString",
    "valueOf",
    "hasOwnProperty",
    "isPrototypeOf",
    "toLocaleString",
    "Plan",
    "plan",
    "PLAN",
    "a/b",
    "a.b",
    "a:b",
    "a#1",
    "0",
];

/// Renames every distinct step id (`stepId`) and decision id (`DECISION_RECORDED`'s
/// `id`) of a fold log's events to a name drawn from [`HOSTILE_NAMES`] (two ids may get
/// twins or the same name). `__proto__` and the reserved `__loom_` ids keep theirs.
pub fn rename_hostile(u: &mut Unstructured, params: &mut Value) -> Option<()> {
    let mut names: std::collections::BTreeMap<String, &'static str> = Default::default();
    let events = params.get_mut("events")?.as_array_mut()?;
    for e in events.iter_mut() {
        let decision = e.get("eventType").and_then(Value::as_str) == Some("DECISION_RECORDED");
        let Some(payload) = e.get_mut("payload").and_then(Value::as_object_mut) else {
            continue;
        };
        for key in ["stepId", "id"] {
            if key == "id" && !decision {
                continue;
            }
            let Some(Value::String(old)) = payload.get(key).cloned() else {
                continue;
            };
            if old == "__proto__" || old.starts_with("__loom_") {
                continue;
            }
            let name = match names.get(&old) {
                Some(n) => *n,
                None => {
                    let n = *u.choose(&HOSTILE_NAMES).ok()?;
                    names.insert(old.clone(), n);
                    n
                }
            };
            payload.insert(key.to_owned(), json!(name));
        }
    }
    Some(())
}

/// One fold or restore log in this many has its inbox topics redrawn from
/// [`TOPICS`] and a wait list with two waits on one topic on every park
/// ([`topics_and_waits`]).
pub const TOPICS_AND_WAITS_ONE_IN: u8 = 4;

/// One fold or restore log in this many has payload fields named like envelope fields
/// ([`envelope_named_fields`]).
pub const ENVELOPE_NAMED_FIELDS_ONE_IN: u8 = 4;

/// The topics [`topics_and_waits`] draws: with the generators' two message ids, one
/// message id lands on several topics.
pub const TOPICS: [&str; 2] = ["t", "u"];

/// Fields an envelope has, and what a payload named so carries instead.
pub const ENVELOPE_FIELDS: [&str; 7] = [
    "seq",
    "sequence",
    "timestamp",
    "id",
    "eventType",
    "executionId",
    "metadata",
];

/// Redraws the topic of every inbox event (INBOX_QUARANTINED, INBOX_RELEASED,
/// MESSAGE_CONSUMED) from [`TOPICS`], so one message id is held or consumed on several
/// topics, and gives every park a wait list of two or three waits, the first two on
/// one topic (a kernel keeping waits by topic keeps one).
pub fn topics_and_waits(u: &mut Unstructured, params: &mut Value) -> Option<()> {
    for e in params.get_mut("events")?.as_array_mut()? {
        let ty = e
            .get("eventType")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let Some(payload) = e.get_mut("payload").and_then(Value::as_object_mut) else {
            continue;
        };
        match ty.as_str() {
            "INBOX_QUARANTINED" | "INBOX_RELEASED" | "MESSAGE_CONSUMED" => {
                payload.insert("topic".into(), json!(*u.choose(&TOPICS).ok()?));
            }
            "EXECUTION_SUSPENDED" => {
                let same = *u.choose(&TOPICS).ok()?;
                let mut waits = vec![
                    json!({"waitId": "w", "topic": same}),
                    json!({"waitId": "w2", "topic": same}),
                ];
                if u.arbitrary::<bool>().ok()? {
                    waits.push(json!({"waitId": "w3", "topic": *u.choose(&TOPICS).ok()?}));
                }
                payload.insert("waits".into(), Value::Array(waits));
            }
            _ => {}
        }
    }
    Some(())
}

/// Gives about half the events' object payloads one field named like an envelope field
/// ([`ENVELOPE_FIELDS`]): an EVENTS_REHOMED carrying its own `seq`, a decision its own
/// `sequence`, a step a `metadata` claiming the kernel stamp. The fold reads the
/// envelope's, never these.
pub fn envelope_named_fields(u: &mut Unstructured, params: &mut Value) -> Option<()> {
    for e in params.get_mut("events")?.as_array_mut()? {
        let Some(payload) = e.get_mut("payload").and_then(Value::as_object_mut) else {
            continue;
        };
        if !u.arbitrary::<bool>().ok()? {
            continue;
        }
        let field = *u.choose(&ENVELOPE_FIELDS).ok()?;
        let value = match field {
            "seq" | "sequence" | "timestamp" => json!(u.int_in_range(0u16..=900).ok()?),
            "metadata" => json!({"kernel": true, "flowEmit": "00000000000000aa"}),
            "eventType" => json!("EXECUTION_COMPLETED"),
            _ => json!("forged"),
        };
        payload.insert(field.to_owned(), value);
    }
    Some(())
}

/// One fold or restore log in this many has envelope metadata keys no kernel reads
/// ([`unknown_metadata_keys`]).
pub const UNKNOWN_METADATA_ONE_IN: u8 = 4;

/// Metadata keys outside ABI-14's list (`flowEmit`, `kernel`, `forkChain`, `forkedBy`,
/// `seal`): a tracing id, and case twins of two keys the fold does read. "Any other key
/// has no effect on the fold" (ABI-14).
pub const UNKNOWN_METADATA_KEYS: [&str; 4] = ["traceId", "spanId", "Kernel", "flowemit"];

/// Gives about half the events of a log one metadata key from
/// [`UNKNOWN_METADATA_KEYS`], on stamped and unstamped envelopes alike (an event without
/// metadata gets a metadata object holding only that key).
pub fn unknown_metadata_keys(u: &mut Unstructured, params: &mut Value) -> Option<()> {
    for e in params.get_mut("events")?.as_array_mut()? {
        if !u.arbitrary::<bool>().ok()? {
            continue;
        }
        let key = *u.choose(&UNKNOWN_METADATA_KEYS).ok()?;
        let Some(env) = e.as_object_mut() else {
            continue;
        };
        let meta = env.entry("metadata").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert(key.to_owned(), json!("t-1"));
        } else {
            *meta = json!({ key: "t-1" });
        }
    }
    Some(())
}

/// One fold or restore case in this many is a long log ([`long_log`]) instead of the
/// grammar's. Few, because one costs a hundred short ones to fold; enough that a
/// 3,000-case campaign sends a few dozen.
pub const LONG_LOG_ONE_IN: u8 = 32;
/// The most segments (bursts of one kind) in a long log.
pub const LONG_LOG_SEGMENTS_MAX: u8 = 6;
/// The most holds, releases or deliveries in one segment.
pub const LONG_LOG_SEGMENT_EVENTS_MAX: u16 = 700;
/// The most events in a long log (the segments stop there): beyond the 1,024-entry
/// quarantine cap (GAP-17) with room to cross it both ways, and a bound on what one case
/// costs to fold, locate and shrink.
pub const LONG_LOG_EVENTS_MAX: usize = 2_000;
/// One long log in this many runs to thousands of events; the others stop at
/// [`LONG_LOG_MEDIUM_EVENTS_MAX`] (a campaign's cost is mostly its longest logs).
pub const LONG_LOG_THOUSANDS_ONE_IN: u8 = 3;
/// The most events in a long log that does not run to thousands.
pub const LONG_LOG_MEDIUM_EVENTS_MAX: usize = 500;
/// Topics a long log holds messages on.
pub const LONG_LOG_TOPICS: [&str; 3] = ["t", "u", "v"];
/// Distinct `custom` resource names a long log meters: more than the 64 the accumulator
/// keeps (`RESOURCE_CUSTOM_KEYS_MAX`, GAP-06), so its cap is crossed.
pub const LONG_LOG_CUSTOM_NAMES: usize = 96;
/// Decision ids a long log records, each many times.
pub const LONG_LOG_DECISION_IDS: usize = 5;

/// A long log (hundreds to thousands of events), from a handful of bytes: after an
/// `EXECUTION_STARTED`, segments of kernel-stamped holds (in a log of thousands, the first is 512 to 1,088
/// holds, the second releases or deliveries, the third holds again) (`INBOX_QUARANTINED`), operator
/// releases that discard the head, or auto releases each followed by its delivery
/// (`MESSAGE_CONSUMED`), with a `RESOURCE_METERED` of one to three `custom` names every
/// few events and a repeated `DECISION_RECORDED` every few more. The generator keeps the
/// queues as the fold will (a hold beyond the 1,024-entry cap is not held), so every
/// release names a held head, and the quarantine cap and the custom-name cap are crossed
/// in both directions: caps and counters that go wrong only after many events.
pub fn long_log(u: &mut Unstructured) -> Option<Vec<Value>> {
    use loom_kernel::limits::QUARANTINED_ENTRIES_MAX;
    use loom_props::log::EventSpec;
    use std::collections::VecDeque;
    let meter_every = usize::from(u.int_in_range(2u8..=5).ok()?);
    let decide_every = usize::from(u.int_in_range(3u8..=17).ok()?);
    let salt = usize::from(u.arbitrary::<u8>().ok()?);
    let mut events = vec![EventSpec::new("EXECUTION_STARTED", json!({"input": 0}))];
    let mut queues: Vec<VecDeque<String>> = vec![VecDeque::new(); LONG_LOG_TOPICS.len()];
    let (mut next_id, mut meters, mut fillers) = (0usize, 0usize, 0usize);
    let segments = u.int_in_range(3u8..=LONG_LOG_SEGMENTS_MAX).ok()?;
    // Most long logs are hundreds of events (the custom cap is crossed within them);
    // one in LONG_LOG_THOUSANDS_ONE_IN runs to thousands, past the quarantine cap.
    let thousands = u.ratio(1u8, LONG_LOG_THOUSANDS_ONE_IN).ok()?;
    let max_events = if thousands {
        LONG_LOG_EVENTS_MAX
    } else {
        LONG_LOG_MEDIUM_EVENTS_MAX
    };
    'segments: for segment in 0..segments {
        // The first segment holds half the cap to a little over it, so what follows
        // crosses the cap (and a counter of holds) one way or the other.
        let (kind, count) = if segment == 0 && thousands {
            let cap = QUARANTINED_ENTRIES_MAX as u16;
            (0, u.int_in_range(cap / 2..=cap + 64).ok()?)
        } else if segment == 1 && thousands {
            // Then some let go, so the holds that follow fit under the cap again while
            // the holds made in all pass it.
            let kind = 2 + u.choose_index(2).ok()?;
            (
                kind,
                u.int_in_range(1u16..=LONG_LOG_SEGMENT_EVENTS_MAX).ok()?,
            )
        } else if segment == 2 && thousands {
            (0, u.int_in_range(1u16..=LONG_LOG_SEGMENT_EVENTS_MAX).ok()?)
        } else {
            let kind = u.choose_index(4).ok()?;
            (
                kind,
                u.int_in_range(1u16..=LONG_LOG_SEGMENT_EVENTS_MAX).ok()?,
            )
        };
        for i in 0..usize::from(count) {
            if events.len() >= max_events {
                break 'segments;
            }
            let t = (i + salt) % LONG_LOG_TOPICS.len();
            let topic = LONG_LOG_TOPICS[t];
            match kind {
                // Holds, twice as likely as either way of letting go.
                0 | 1 => {
                    let id = format!("m{next_id}");
                    next_id += 1;
                    let total: usize = queues.iter().map(VecDeque::len).sum();
                    if total < QUARANTINED_ENTRIES_MAX {
                        queues[t].push_back(id.clone());
                    }
                    events.push(
                        EventSpec::new(
                            "INBOX_QUARANTINED",
                            json!({"topic": topic, "messageId": id}),
                        )
                        .kernel(),
                    );
                }
                2 => {
                    if queues[t].pop_front().is_none() {
                        continue;
                    }
                    events.push(
                        EventSpec::new(
                            "INBOX_RELEASED",
                            json!({"topic": topic, "operator": "ops"}),
                        )
                        .kernel(),
                    );
                }
                _ => {
                    let Some(id) = queues[t].pop_front() else {
                        continue;
                    };
                    events.push(
                        EventSpec::new(
                            "INBOX_RELEASED",
                            json!({"topic": topic, "auto": true, "deliver": true, "messageId": id}),
                        )
                        .kernel(),
                    );
                    events.push(
                        EventSpec::new(
                            "MESSAGE_CONSUMED",
                            json!({"topic": topic, "messageId": id, "message": 1}),
                        )
                        .kernel(),
                    );
                }
            }
            fillers += 1;
            if fillers % meter_every == 0 {
                let names = 1 + (meters + salt) % 3;
                let custom: Map<String, Value> = (0..names)
                    .map(|j| {
                        let n = (meters * 7 + j * 13 + salt) % LONG_LOG_CUSTOM_NAMES;
                        (format!("k{n:02}"), json!(1 + j))
                    })
                    .collect();
                meters += 1;
                events.push(EventSpec::new(
                    "RESOURCE_METERED",
                    json!({"tokens": 1, "custom": custom}),
                ));
            }
            if fillers % decide_every == 0 {
                let id = format!("d{}", fillers % LONG_LOG_DECISION_IDS);
                events.push(EventSpec::new(
                    "DECISION_RECORDED",
                    json!({"id": id, "choice": fillers}),
                ));
            }
        }
    }
    Some(log_values(&LogSpec { events }))
}

/// Whether the family drawn one in `n` applies: one byte, `n - 1` modulo `n`, so that a
/// case whose bytes ran out (0) never takes it.
fn one_in(u: &mut Unstructured, n: u8) -> bool {
    u.arbitrary::<u8>().unwrap_or(0) % n == n - 1
}

/// One `fold` case in this many folds "as" an older EVENT_SCHEMA minor.
pub const FOLD_AS_OLDER_ODDS: u8 = 4;

fn log_values(log: &LogSpec) -> Vec<Value> {
    log.envelopes().iter().map(|e| e.to_value()).collect()
}

/// Builds the case `bytes` describe for `check`; `None` when the bytes are too few to
/// build one (the case then passes, as libFuzzer skips such inputs).
pub fn generate(check: Check, bytes: &[u8]) -> Option<Case> {
    let mut u = Unstructured::new(bytes);
    let u = &mut u;
    let (method, params, respell_odds) = match check {
        Check::Fold | Check::Restore => {
            let log =
                LogSpec::generate(u, Grammar::FULL, loom_props::limits::LOG_EVENTS_MAX).ok()?;
            let mut params = json!({ "events": log_values(&log) });
            // One log in three has its step and decision ids renamed to hostile names
            // (a plain object's own members, case twins, ids with separators).
            if u.ratio(1u8, HOSTILE_NAMES_ODDS).ok()? {
                rename_hostile(u, &mut params)?;
            }
            // One fold in four is "as" an older minor, drawn from every supported one, so
            // each behaviour change is folded on both sides of its boundary (a version
            // gate one minor late is a divergence only there).
            if check == Check::Fold && u.ratio(1u8, FOLD_AS_OLDER_ODDS).ok()? {
                let versions: Vec<FoldVersion> = FoldVersion::all().collect();
                let v = versions[u.choose_index(versions.len()).ok()?];
                params["schemaVersion"] = json!(v.to_string());
            }
            ("fold", params, 3u8)
        }
        Check::Digest => {
            let value = CanonicalInput::arbitrary(u).ok()?.value;
            let params = match u.choose_index(5).ok()? {
                0 | 1 => json!({"op": "canonical", "value": value}),
                2 => {
                    let segment = u.int_in_range(0u64..=20).ok()?;
                    let ty = *u
                        .choose(&["PROGRESS", "UI", "DECISION_RECORDED", "é/😀", "a\"b"])
                        .ok()?;
                    json!({"op": "emit", "segment": segment, "eventType": ty, "payload": value})
                }
                3 => json!({"op": "fnv1a64", "text": loom_kernel::canonical_string(&value)}),
                _ => {
                    let alg = *u.choose(&["sha256", "fnv1a"]).ok()?;
                    json!({"op": "flowHash", "algorithm": alg, "value": {"flowId": "f", "body": value}})
                }
            };
            ("digest", params, 1)
        }
        Check::Ingress | Check::Emit => {
            let input = PropsIngress::arbitrary(u).ok()?;
            if check == Check::Ingress {
                ("ingress", ingress_params(&input), 3)
            } else {
                ("validateEmit", emit_params(&input), 3)
            }
        }
    };
    let ks = if check == Check::Restore {
        let n = params["events"].as_array().map_or(0, Vec::len);
        if n == 0 {
            return None;
        }
        let mut ks: Vec<usize> = (0..u.int_in_range(1u8..=3).ok()?)
            .map(|_| u.choose_index(n).unwrap_or(0))
            .collect();
        ks.sort_unstable();
        ks.dedup();
        ks
    } else {
        Vec::new()
    };
    let tail_from: Vec<usize> = ks
        .iter()
        .map(|&k| match u.choose_index(4).unwrap_or(0) {
            3 => k.saturating_sub(u.choose_index(3).unwrap_or(0)),
            _ => k + 1,
        })
        .collect();
    // Most requests go out respelled; some in the compact form a serializer writes.
    let mut raw = if u.ratio(respell_odds, respell_odds + 1).unwrap_or(false) {
        Some(respell(u, &params))
    } else {
        None
    };
    let mut params = params;
    // The families drawn after everything else, so a case that takes neither is the
    // case the bytes gave before they existed (and so is every earlier finding); a case
    // that takes one goes out in compact form (its respelling was of the log before).
    if matches!(check, Check::Fold | Check::Restore) {
        if one_in(u, TOPICS_AND_WAITS_ONE_IN) {
            topics_and_waits(u, &mut params)?;
            raw = None;
        }
        if one_in(u, ENVELOPE_NAMED_FIELDS_ONE_IN) {
            envelope_named_fields(u, &mut params)?;
            raw = None;
        }
    }
    let mut ks = ks;
    let mut tail_from = tail_from;
    if matches!(check, Check::Fold | Check::Restore) {
        if one_in(u, UNKNOWN_METADATA_ONE_IN) {
            unknown_metadata_keys(u, &mut params)?;
            raw = None;
        }
        // Last of all, so every case before it is the case it was. A long log replaces
        // the grammar's (and is sent compact: respelling thousands of events buys
        // nothing the short logs do not); a restore snapshots it at one or two points.
        if one_in(u, LONG_LOG_ONE_IN) {
            let events = long_log(u)?;
            let n = events.len();
            params["events"] = Value::Array(events);
            raw = None;
            if check == Check::Restore {
                ks = vec![u.choose_index(n).ok()?];
                if u.arbitrary::<bool>().ok()? {
                    ks.push(u.choose_index(n).ok()?);
                }
                ks.sort_unstable();
                ks.dedup();
                tail_from = ks.iter().map(|k| k + 1).collect();
            }
        }
    }
    Some(Case {
        check,
        method,
        params,
        raw,
        ks,
        tail_from,
    })
}

fn path_name(p: ResumePath) -> &'static str {
    match p {
        ResumePath::Resume => "resume",
        ResumePath::ResumeAs => "resumeAs",
        ResumePath::Recover => "recover",
        ResumePath::Timer => "timer",
    }
}

/// The protocol's `ingress` params for a generated hostile resume.
pub fn ingress_params(input: &PropsIngress) -> Value {
    let mut request = Map::new();
    request.insert("eventType".into(), json!(input.request.event_type));
    request.insert("payload".into(), input.request.payload.clone());
    if let Some(m) = &input.request.metadata {
        request.insert("metadata".into(), Value::Object(m.clone()));
    }
    let mut flow = Map::new();
    if input.schema {
        let state = loom_kernel::fold(&input.log.envelopes());
        let gate = state.parked_gate().unwrap_or("approve").to_owned();
        flow.insert("resumeSchemas".into(), json!({ gate: gate_schema() }));
    }
    let mut params = json!({
        "log": log_values(&input.log),
        "path": path_name(input.path),
        "request": request,
        "flow": flow,
    });
    match input.auth {
        Auth::None => {}
        Auth::Accept => {
            params["authenticator"] = json!({"verdict": "accept", "approval": {"by": "fuzz"}})
        }
        Auth::Reject => {
            params["authenticator"] = json!({"verdict": "reject", "reason": "rejected"})
        }
    }
    if input.deny {
        params["authorizer"] = json!({"verdict": "deny", "reason": "denied"});
    }
    params
}

/// The protocol's `validateEmit` params for a generated hostile emit.
pub fn emit_params(input: &PropsIngress) -> Value {
    let e = &input.emit;
    let source = match &e.source {
        EmitSource::Flow => json!({"kind": "flow"}),
        EmitSource::Relay => json!({"kind": "relay"}),
        EmitSource::Effect { step_id, attempt } => {
            json!({"kind": "effect", "stepId": step_id, "attempt": attempt})
        }
    };
    let mut params = json!({
        "log": log_values(&input.log),
        "source": source,
        "eventType": e.event_type,
        "payload": e.payload,
    });
    if let Some(m) = &e.metadata {
        params["metadata"] = Value::Object(m.clone());
    }
    params
}
