//! Userspace emit validation (INGRESS-27..33, INGRESS-39): what flow code and effects
//! may append, and how it is rewritten before it reaches the log.

use super::KERNEL_METADATA_KEYS;
use crate::fold::handlers_api::RESOURCE_DIMENSIONS;
use crate::fold::{is_known_event_type, ExecutionState, RESERVED_DECISION_PREFIX};
use crate::limits::{
    QUOTA_REASON_UTF16_UNITS_MAX, RESOURCE_CUSTOM_KEYS_MAX, RESOURCE_METERED_VALUE_MAX,
};
use serde_json::{Map, Value};

/// Kernel kinds userspace may emit (ADR 0104). Every other kernel kind is refused.
pub const USERSPACE_KERNEL_ALLOW_LIST: [&str; 7] = [
    "RESOURCE_METERED",
    "QUOTA_EXCEEDED",
    "SAFETY_BLOCKED",
    "EGRESS_DENIED",
    "EFFECT_DENIED",
    "OUTCOME_RECORDED",
    "DECISION_RECORDED",
];

/// Which userspace path emits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmitSource {
    /// `ctx.emit`, `ctx.stream`, `ctx.ui` in flow code.
    Flow,
    /// `EffectContext.emit` inside the effect of a step attempt.
    Effect {
        /// The step whose effect emits.
        step_id: String,
        /// Its attempt (from 1).
        attempt: u64,
    },
    /// An isolated tool's relay: application types only (INGRESS-32).
    Relay,
}

/// Why an emit was refused (`EmitRefusedError`, GAP-36 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmitRefusal {
    /// A kernel kind not on the allow-list (or any kernel kind through a relay).
    KernelEventType,
    /// A validated field is out of bounds or malformed.
    InvalidPayload,
    /// A `__loom_` decision id from flow code.
    ReservedDecisionId,
    /// A decision that would change an already-recorded choice.
    ChoiceChange,
    /// A kernel-only metadata key.
    KernelMetadata,
}

impl EmitRefusal {
    /// Stable kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            EmitRefusal::KernelEventType => "kernel-event-type",
            EmitRefusal::InvalidPayload => "invalid-payload",
            EmitRefusal::ReservedDecisionId => "reserved-decision-id",
            EmitRefusal::ChoiceChange => "choice-change",
            EmitRefusal::KernelMetadata => "kernel-metadata",
        }
    }
}

/// A refused emit: nothing is appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmitRefused {
    /// Why.
    pub reason: EmitRefusal,
    /// Explanation naming the rule.
    pub message: String,
}

impl std::fmt::Display for EmitRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "EmitRefusedError ({}): {}",
            self.reason.as_str(),
            self.message
        )
    }
}

impl std::error::Error for EmitRefused {}

fn refuse(reason: EmitRefusal, message: impl Into<String>) -> Result<(String, Value), EmitRefused> {
    Err(EmitRefused {
        reason,
        message: message.into(),
    })
}

/// Validates a userspace emit and returns the event type and payload to append.
/// An effect's `DECISION_RECORDED` id is rewritten into its step's namespace
/// `effect:<stepId>#<attempt>:<id>` (INGRESS-30).
pub fn validate_user_emit(
    state: &ExecutionState,
    source: &EmitSource,
    event_type: &str,
    payload: Value,
    metadata: Option<&Map<String, Value>>,
) -> Result<(String, Value), EmitRefused> {
    if let Some(key) =
        metadata.and_then(|m| KERNEL_METADATA_KEYS.iter().find(|k| m.contains_key(**k)))
    {
        return refuse(
            EmitRefusal::KernelMetadata,
            format!("metadata key `{key}` is written only by the kernel (INGRESS-39)"),
        );
    }
    if !is_known_event_type(event_type) {
        return Ok((event_type.to_owned(), payload));
    }
    if *source == EmitSource::Relay {
        return refuse(EmitRefusal::KernelEventType, format!("an isolated tool's relay forwards application event types only, not `{event_type}` (INGRESS-32)"));
    }
    if !USERSPACE_KERNEL_ALLOW_LIST.contains(&event_type) {
        return refuse(
            EmitRefusal::KernelEventType,
            format!("`{event_type}` is a kernel event type userspace may not emit (INGRESS-27)"),
        );
    }
    match event_type {
        "RESOURCE_METERED" => validate_metering(&payload).map(|_| (event_type.to_owned(), payload)),
        "QUOTA_EXCEEDED" => {
            let ok = payload
                .get("reason")
                .and_then(Value::as_str)
                .is_some_and(|r| r.encode_utf16().count() <= QUOTA_REASON_UTF16_UNITS_MAX);
            if ok {
                Ok((event_type.to_owned(), payload))
            } else {
                refuse(EmitRefusal::InvalidPayload, format!("QUOTA_EXCEEDED.reason must be a string of at most {QUOTA_REASON_UTF16_UNITS_MAX} UTF-16 code units (INGRESS-29)"))
            }
        }
        "OUTCOME_RECORDED" => {
            if payload.get("recordedBy").is_some() || payload.get("late").is_some() {
                refuse(
                    EmitRefusal::InvalidPayload,
                    "OUTCOME_RECORDED.recordedBy and .late are kernel-written (GAP-18)",
                )
            } else {
                Ok((event_type.to_owned(), payload))
            }
        }
        "DECISION_RECORDED" => validate_decision(state, source, payload),
        _ => Ok((event_type.to_owned(), payload)),
    }
}

fn bounded(x: &Value) -> bool {
    x.as_f64()
        .is_some_and(|v| v.is_finite() && (0.0..=RESOURCE_METERED_VALUE_MAX).contains(&v))
}

fn validate_metering(payload: &Value) -> Result<(), EmitRefused> {
    let bad = |why: String| EmitRefused {
        reason: EmitRefusal::InvalidPayload,
        message: format!("{why} (INGRESS-28)"),
    };
    let Some(m) = payload.as_object() else {
        return Err(bad("RESOURCE_METERED payload must be an object".into()));
    };
    for d in RESOURCE_DIMENSIONS {
        if let Some(x) = m.get(d) {
            if !bounded(x) {
                return Err(bad(format!("`{d}` must be a finite, non-negative number no larger than {RESOURCE_METERED_VALUE_MAX}, found {x}")));
            }
        }
    }
    if let Some(custom) = m.get("custom") {
        let Some(c) = custom.as_object() else {
            return Err(bad("`custom` must be an object".into()));
        };
        if c.len() > RESOURCE_CUSTOM_KEYS_MAX {
            return Err(bad(format!(
                "`custom` holds more than {RESOURCE_CUSTOM_KEYS_MAX} keys"
            )));
        }
        if let Some((k, x)) = c.iter().find(|(_, x)| !bounded(x)) {
            return Err(bad(format!("custom `{k}` must be a finite, non-negative number no larger than {RESOURCE_METERED_VALUE_MAX}, found {x}")));
        }
    }
    Ok(())
}

fn validate_decision(
    state: &ExecutionState,
    source: &EmitSource,
    payload: Value,
) -> Result<(String, Value), EmitRefused> {
    // Work on plain data: the id read here is the id that will be folded (INGRESS-33).
    let Value::Object(mut m) = payload else {
        return refuse(
            EmitRefusal::InvalidPayload,
            "DECISION_RECORDED payload must be an object",
        );
    };
    let Some(Value::String(id)) = m.get("id").cloned() else {
        return refuse(
            EmitRefusal::InvalidPayload,
            "DECISION_RECORDED.id must be a string",
        );
    };
    if !m.contains_key("choice") {
        return refuse(
            EmitRefusal::InvalidPayload,
            "DECISION_RECORDED.choice is missing",
        );
    }
    let folded_id = match source {
        EmitSource::Effect { step_id, attempt } => format!("effect:{step_id}#{attempt}:{id}"),
        _ => id,
    };
    if folded_id.starts_with(RESERVED_DECISION_PREFIX) {
        return refuse(EmitRefusal::ReservedDecisionId, format!("decision ids beginning `{RESERVED_DECISION_PREFIX}` are reserved for the kernel (INGRESS-33)"));
    }
    if let Some(existing) = state
        .variables
        .decisions
        .as_ref()
        .and_then(|d| d.get(&folded_id))
    {
        // Choices are JSON values: equal as canonical JSON, whatever the spelling
        // (`1.0` is `1`, keys in any order), as the fold and every digest compare them.
        let same = match (existing.get("choice"), m.get("choice")) {
            (Some(a), Some(b)) => crate::canonical_string(&a) == crate::canonical_string(b),
            (a, b) => a.as_ref() == b,
        };
        if !same {
            return refuse(EmitRefusal::ChoiceChange, format!("decision `{folded_id}` is already recorded with a different choice (INGRESS-31)"));
        }
    }
    m.insert("id".into(), Value::String(folded_id));
    Ok(("DECISION_RECORDED".into(), Value::Object(m)))
}
