//! Which parts of the state one envelope can change: its footprint.
//!
//! A checker that looks at the state after every event (the linear snapshot check of
//! `loom verify-log`, [`crate::verify`]) cannot afford to compare whole states, which
//! grow with the log. The footprint names the parts a handler may write, so the checker
//! compares those and carries what it knew about the rest. It is a superset: a handler
//! that does nothing (an inert or malformed envelope) still has the footprint of its
//! kind. It must stay in step with `handlers.rs`; `props/tests/verify_log.rs` checks,
//! on generated logs at every fold version, that no event changes anything outside it.
//!
//! The top-level fields (`status`, `sequence`, `startedAt`, `updatedAt`), the presence
//! of `_decisions`, the set of variable keys and the three variables a snapshot's
//! normalization reads (`_error`, `_suspendedOn`, `_failedWhileParked`) are small and
//! are always compared; they are not listed here.

use super::state::keys;
use crate::envelope::EventEnvelope;
use crate::json::JsonText;

/// How an event may touch one variable.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum VarTouch {
    /// The whole value may change.
    Whole(&'static str),
    /// Only the entry under this key of an object-valued variable may change (or the
    /// variable may appear as an object holding just that entry).
    Entry(&'static str, String),
    /// An element may be pushed onto an array-valued variable; earlier elements stay.
    Append(&'static str),
}

/// What one envelope may change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Every variable may change (an `EXECUTION_STARTED`, which can seed many).
    pub all_variables: bool,
    /// The frame under this step id.
    pub frame: Option<String>,
    /// The `_decisions` entry under this id.
    pub decision: Option<String>,
    /// Variables, whole or in part.
    pub variables: Vec<VarTouch>,
}

/// Variables whose value grows with the log and that handlers change one entry (or one
/// pushed element) at a time. A checker compares these by entry, never whole, except
/// where the footprint says [`Footprint::all_variables`].
pub const GROWING_VARIABLES: [&str; 7] = [
    keys::FLOW_EMITS,
    keys::RESUME_PAYLOADS,
    keys::WAIT_ANSWERS,
    keys::SCOPES,
    keys::INBOX,
    keys::QUARANTINED,
    keys::LIFECYCLE,
];

/// A payload's string field, read from its text (no tree is built).
fn string_field(payload: &JsonText, field: &str) -> Option<String> {
    payload.str_field(field).map(str::to_owned)
}

/// The footprint of `e` at any fold version (a superset of each version's).
pub fn footprint(e: &EventEnvelope) -> Footprint {
    let mut fp = Footprint::default();
    if let Some(d) = e.flow_emit() {
        fp.variables
            .push(VarTouch::Entry(keys::FLOW_EMITS, d.to_owned()));
    }
    let p = &e.payload;
    let park = [
        VarTouch::Whole(keys::SUSPENDED_ON),
        VarTouch::Whole(keys::FAILED_WHILE_PARKED),
    ];
    match e.event_type.as_str() {
        "EXECUTION_STARTED" => fp.all_variables = true,
        "EXECUTION_SUSPENDED" => {
            fp.variables.extend(park);
            fp.variables.push(VarTouch::Whole(keys::WAITS));
        }
        "EXECUTION_RESUMED" => {
            if let Some(w) = string_field(p, "waitId") {
                fp.variables.push(VarTouch::Entry(keys::WAIT_ANSWERS, w));
            }
            fp.variables.push(VarTouch::Append(keys::RESUME_PAYLOADS));
            fp.variables.extend(park);
        }
        "EXECUTION_COMPLETED"
        | "EXECUTION_FAILED"
        | "EXECUTION_CANCELLED"
        | "EXECUTION_CONTINUED" => {
            fp.variables.extend(park);
            fp.variables.extend([
                VarTouch::Whole(keys::OUTPUT),
                VarTouch::Whole(keys::ERROR),
                VarTouch::Whole(keys::CONTINUED_TO),
            ]);
        }
        "EXECUTION_MIGRATED" => fp.variables.extend([
            VarTouch::Whole(keys::INPUT),
            VarTouch::Whole(keys::CODE_HASH),
        ]),
        "STEP_STARTED" | "STEP_RETRYING" | "STEP_COMPLETED" | "STEP_FAILED" | "STEP_CANCELLED"
        | "EFFECT_INDOUBT" => {
            fp.frame = string_field(p, "stepId");
            fp.variables
                .push(VarTouch::Whole(keys::FAILED_WHILE_PARKED));
        }
        "DECISION_RECORDED" => fp.decision = string_field(p, "id"),
        "RESOURCE_METERED" => fp.variables.push(VarTouch::Whole(keys::RESOURCES)),
        "EVENTS_REHOMED" => fp.variables.push(VarTouch::Append(keys::LIFECYCLE)),
        "PARALLEL_COMPLETED" => {
            if let Some(s) = string_field(p, "scopeId") {
                fp.variables.push(VarTouch::Entry(keys::SCOPES, s));
            }
        }
        "MESSAGE_CONSUMED" | "INBOX_QUARANTINED" | "INBOX_RELEASED" => {
            if let Some(t) = string_field(p, "topic") {
                fp.variables.push(VarTouch::Entry(keys::INBOX, t.clone()));
                fp.variables.push(VarTouch::Entry(keys::QUARANTINED, t));
            }
            if let Some(w) = string_field(p, "waitId") {
                fp.variables.push(VarTouch::Entry(keys::WAIT_ANSWERS, w));
            }
        }
        _ => {}
    }
    fp
}
