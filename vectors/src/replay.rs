//! Golden-log replay (`loom replay --log FILE --flow SCRIPT`): re-runs a flow script
//! against a recorded log and reports whether it replays unchanged.
//!
//! The recorded log's external inputs are delivered again to a fresh reference runtime
//! on a virtual clock that follows the log: the start (`EXECUTION_STARTED.input` at its
//! timestamp), every caller resume (the event the gate admitted before each
//! `EXECUTION_RESUMED`) and every timer wake (`TIMER_FIRED`). The produced log is then
//! compared with the recorded one event by event, with envelope `id` and `timestamp`
//! scrubbed ([`crate::scrub`]), and `EXECUTION_STARTED.flowHash` ignored (it hashes the
//! script, so every code change moves it). The first difference is reported as a structured diff:
//! its event index, both envelopes, and the syscall that diverged (derived from the
//! envelope the new run produced there, or recorded there).

use crate::scrub::{outcome_value, scrub_envelope};
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{block_on, Runtime, RuntimeConfig};
use loom_kernel::spi::{EventStore, ManualClock};

use loom_kernel::{decode_log, EventEnvelope};
use loom_stores::{MemoryEventStore, MemoryTimerStore};
use serde_json::{json, Value};
use std::sync::Arc;

/// The first difference between the recorded and the replayed log.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// Index of the first differing event.
    pub event_index: usize,
    /// The recorded envelope there (scrubbed), or `None` if the replay is longer.
    pub expected: Option<Value>,
    /// The replayed envelope there (scrubbed), or `None` if the replay is shorter.
    pub actual: Option<Value>,
    /// The syscall that diverged, e.g. `run(stepId "charge")`.
    pub syscall: String,
    /// The first differing JSON pointer inside the envelope, when both exist.
    pub path: Option<String>,
}

/// The result of a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayReport {
    /// Events in the recorded log.
    pub recorded_events: usize,
    /// Events the replay produced.
    pub replayed_events: usize,
    /// What each driver input led to.
    pub outcomes: Vec<Value>,
    /// The first difference, if any.
    pub divergence: Option<Divergence>,
}

impl ReplayReport {
    /// Whether the log replays unchanged.
    pub fn unchanged(&self) -> bool {
        self.divergence.is_none()
    }

    /// The report as JSON.
    pub fn to_value(&self) -> Value {
        json!({
            "unchanged": self.unchanged(),
            "recordedEvents": self.recorded_events,
            "replayedEvents": self.replayed_events,
            "outcomes": self.outcomes,
            "divergence": self.divergence.as_ref().map(|d| json!({
                "eventIndex": d.event_index,
                "syscall": d.syscall,
                "path": d.path,
                "expected": d.expected,
                "actual": d.actual,
            })),
        })
    }

    /// A human-readable rendering.
    pub fn render_text(&self) -> String {
        match &self.divergence {
            None => format!(
                "replays unchanged: {} events, identical after scrubbing ids and timestamps",
                self.recorded_events
            ),
            Some(d) => {
                let show = |v: &Option<Value>| {
                    v.as_ref()
                        .map(|v| serde_json::to_string(v).unwrap_or_default())
                        .unwrap_or_else(|| "<no event>".into())
                };
                format!(
                    "DIVERGED at event {} ({}){}\n  expected (recorded): {}\n  actual   (replayed): {}\n  recorded {} events, replayed {}",
                    d.event_index,
                    d.syscall,
                    d.path.as_ref().map(|p| format!(", first difference at {p}")).unwrap_or_default(),
                    show(&d.expected),
                    show(&d.actual),
                    self.recorded_events,
                    self.replayed_events
                )
            }
        }
    }
}

/// The syscall an envelope records.
pub fn syscall_of(e: &Value) -> String {
    let ty = e.get("eventType").and_then(Value::as_str).unwrap_or("?");
    let p = e.get("payload").cloned().unwrap_or(Value::Null);
    let s = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
    match ty {
        "STEP_STARTED" | "STEP_COMPLETED" | "STEP_FAILED" | "STEP_RETRYING" | "STEP_CANCELLED"
        | "EFFECT_INDOUBT" => format!("run/execute (stepId \"{}\", {ty})", s("stepId")),
        "DECISION_RECORDED" => format!("decide (id \"{}\")", s("id")),
        "EXECUTION_SUSPENDED" => format!("suspend (on \"{}\")", s("on")),
        "EXECUTION_STARTED" => "start".into(),
        "EXECUTION_COMPLETED" => "complete".into(),
        "EXECUTION_FAILED" => "fail".into(),
        "EXECUTION_RESUMED" | "TIMER_FIRED" | "APPROVAL_GRANTED" => format!("resume ({ty})"),
        other if loom_kernel::fold::is_known_event_type(other) => format!("kernel fact {other}"),
        other => format!("emit/stream/ui (eventType \"{other}\")"),
    }
}

/// Replays `log_text` (JSON array or lines) against the flow script `flow_text`.
pub fn replay_text(log_text: &str, flow_text: &str) -> Result<ReplayReport, String> {
    let log = decode_log(log_text).map_err(|e| format!("the log: {e}"))?;
    let flow: Value =
        serde_json::from_str(flow_text).map_err(|e| format!("the flow script is not JSON: {e}"))?;
    replay(&log, &flow)
}

/// Replays a decoded log against a flow script.
pub fn replay(log: &[EventEnvelope], flow: &Value) -> Result<ReplayReport, String> {
    let first = log.first().ok_or("the log is empty")?;
    if first.event_type != "EXECUTION_STARTED" {
        return Err("the log does not begin with EXECUTION_STARTED".into());
    }
    let id = first.execution_id.clone();
    let clock = Arc::new(ManualClock::new(first.timestamp_ms));
    let mut rt = Runtime::new(
        Arc::new(MemoryEventStore::new()),
        Arc::clone(&clock),
        RuntimeConfig::default(),
    )
    .with_timers(Arc::new(MemoryTimerStore::new()));
    rt.register_flow_json(flow)
        .map_err(|e| format!("the flow script: {e}"))?;
    let flow_id = flow
        .get("flowId")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut outcomes = vec![outcome_value(&block_on(rt.start(
        &id,
        &flow_id,
        first.payload.get("input").cloned().unwrap_or(Value::Null),
    )))];
    for (i, e) in log.iter().enumerate().skip(1) {
        if e.event_type == "TIMER_FIRED" {
            let wake = e
                .payload
                .get("firedAt")
                .and_then(Value::as_i64)
                .unwrap_or(e.timestamp_ms);
            clock.set(wake.max(e.timestamp_ms));
            match block_on(rt.fire_timers(clock_now(&clock))) {
                Ok(fired) => outcomes.extend(fired.iter().map(|(_, r)| outcome_value(r))),
                Err(err) => outcomes.push(json!({"error": err.to_string()})),
            }
            continue;
        }
        // The gate appends the caller's event, the facts it records with it (an
        // in-doubt verdict's kernel-stamped DECISION_RECORDED, an APPROVAL_GRANTED)
        // and then EXECUTION_RESUMED, in one batch.
        let next_is_resume = log[i + 1..]
            .iter()
            .find(|n| !(n.is_kernel_stamped() || n.event_type == "APPROVAL_GRANTED"))
            .is_some_and(|n| n.event_type == "EXECUTION_RESUMED");
        let is_caller_event =
            !loom_kernel::fold::is_known_event_type(&e.event_type) && !e.is_kernel_stamped();
        if next_is_resume && is_caller_event {
            clock.set(e.timestamp_ms);
            let request = ResumeRequest {
                event_type: e.event_type.clone(),
                payload: e.payload.to_value(),
                metadata: e.metadata.clone(),
            };
            outcomes.push(outcome_value(&block_on(rt.resume(&id, request))));
        }
    }
    let produced =
        block_on(rt.store().read(&id)).map_err(|e| format!("reading the replay: {e}"))?;
    let expected: Vec<Value> = log.iter().map(replay_scrub).collect();
    let actual: Vec<Value> = produced.iter().map(replay_scrub).collect();
    let divergence = first_divergence(&expected, &actual);
    Ok(ReplayReport {
        recorded_events: expected.len(),
        replayed_events: actual.len(),
        outcomes,
        divergence,
    })
}

/// The first difference between a recorded and a replayed log, both already scrubbed:
/// its event index, both envelopes (`None` past the end of the shorter log), the
/// syscall that diverged (from the replayed envelope, else the recorded one) and the
/// first differing JSON pointer when both envelopes exist.
pub fn first_divergence(expected: &[Value], actual: &[Value]) -> Option<Divergence> {
    (0..expected.len().max(actual.len())).find_map(|i| {
        let (x, y) = (expected.get(i), actual.get(i));
        (x != y).then(|| Divergence {
            event_index: i,
            expected: x.cloned(),
            actual: y.cloned(),
            syscall: y.or(x).map(syscall_of).unwrap_or_default(),
            path: match (x, y) {
                (Some(a), Some(b)) => loom_report::first_difference(a, b),
                _ => None,
            },
        })
    })
}

/// `v` as its RFC 8785 canonical text reads back: the form two envelopes are compared
/// in, so a number the runtime holds as `200.0` equals the `200` a log file spells
/// (JSON has one number type; `serde_json` values tell them apart).
pub fn comparable(v: &Value) -> Value {
    serde_json::from_str(&loom_kernel::canonical_string(v)).unwrap_or_else(|_| v.clone())
}

/// The scrub rule plus one replay-only rule: `EXECUTION_STARTED.flowHash` hashes the
/// script itself, so it changes with any code change and is not compared.
fn replay_scrub(e: &EventEnvelope) -> Value {
    let mut v = comparable(&scrub_envelope(&e.to_value()));
    if e.event_type == "EXECUTION_STARTED" {
        if let Some(Value::Object(p)) = v.get_mut("payload") {
            p.remove("flowHash");
        }
    }
    v
}

fn clock_now(c: &ManualClock) -> i64 {
    loom_kernel::spi::Clock::now_ms(c)
}
