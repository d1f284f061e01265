//! Runtime bugs, one per syscall or outcome the runtime vectors cover: the buggy
//! kernel answers `runScenario` as the reference does, except for the events its one
//! wrong line writes differently (a field it forgets, an event it drops or writes
//! twice, a kind it confuses with another, a value it takes from the wrong place).
//! This is the "proxy that rewrites one answer class" of the judging-power issue: the
//! rest of the run (later events, outcomes) is left as the reference wrote it, so a
//! vector fails exactly where the bug first shows.

use super::Bug;
use serde_json::{json, Value};

/// Whether `bug` is one of this module's runtime bugs.
pub fn is_runtime_rewrite(bug: Bug) -> bool {
    matches!(
        bug,
        Bug::RetryAttemptNotCounted
            | Bug::HangRecordedTyped
            | Bug::IndoubtVerdictNotRecorded
            | Bug::CancelledEffectAsFailure
            | Bug::BudgetNegotiatedAgainOnReplay
            | Bug::SleepUntilPastWakesNow
            | Bug::CancelKeepsTimer
            | Bug::MessageConsumedUnstamped
            | Bug::ContinuationWithoutOrigin
            | Bug::ParallelJoinInCompletionOrder
            | Bug::TypedFailureRecordedUntyped
            | Bug::ReleaseNotRecorded
            | Bug::MigrationWithoutCodePin
    )
}

fn ty(e: &Value) -> &str {
    e.get("eventType").and_then(Value::as_str).unwrap_or("")
}

fn payload_mut(e: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    e.get_mut("payload").and_then(Value::as_object_mut)
}

/// Renumbers a log's sequences from 0 after events were added or removed.
fn renumber(events: &mut [Value]) {
    for (i, e) in events.iter_mut().enumerate() {
        if let Some(m) = e.as_object_mut() {
            m.insert("sequence".into(), json!(i));
        }
    }
}

/// Replaces every JSON value equal to `from` by `to`, at any depth.
fn replace_value(v: &mut Value, from: &Value, to: &Value) {
    if v == from {
        *v = to.clone();
        return;
    }
    match v {
        Value::Array(a) => a.iter_mut().for_each(|x| replace_value(x, from, to)),
        Value::Object(o) => o.values_mut().for_each(|x| replace_value(x, from, to)),
        _ => {}
    }
}

/// The driver's clock after each step: `advance` moves it, nothing else does.
fn clocks(input: &Value) -> Vec<(String, i64)> {
    let mut now = crate::scrub::SCENARIO_CLOCK_START_MS;
    let mut out = Vec::new();
    for step in input
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let op = step.get("op").and_then(Value::as_str).unwrap_or("");
        if op == "advance" {
            now += step.get("ms").and_then(Value::as_i64).unwrap_or(0);
        }
        out.push((op.to_owned(), now));
    }
    out
}

/// Rewrites one log (the main execution's or a continuation's) as the buggy kernel
/// writes it.
fn rewrite_log(bug: Bug, input: &Value, events: &mut Vec<Value>) {
    match bug {
        // Attempts never counted: every start and retry says attempt 1.
        Bug::RetryAttemptNotCounted => {
            for e in events.iter_mut() {
                if matches!(ty(e), "STEP_STARTED" | "STEP_RETRYING") {
                    if let Some(p) = payload_mut(e) {
                        if p.contains_key("attempt") {
                            p.insert("attempt".into(), json!(1));
                        }
                    }
                }
            }
        }
        // A hang's timeout recorded on a `timeout` channel, as if typed.
        Bug::HangRecordedTyped => {
            for e in events.iter_mut() {
                if ty(e) != "STEP_FAILED" {
                    continue;
                }
                if let Some(p) = payload_mut(e) {
                    let timeout = p
                        .get("error")
                        .and_then(Value::as_str)
                        .is_some_and(|s| s.starts_with("timeout"));
                    if timeout && !p.contains_key("channel") {
                        p.insert("channel".into(), json!("timeout"));
                        p.insert("payload".into(), Value::Null);
                    }
                }
            }
        }
        // The verdict's kernel decision is not written; only the resume is.
        Bug::IndoubtVerdictNotRecorded => {
            let before = events.len();
            events.retain(|e| {
                !(ty(e) == "DECISION_RECORDED"
                    && e.pointer("/payload/id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| id.starts_with("__loom_verdict:")))
            });
            if events.len() != before {
                renumber(events);
            }
        }
        // A cancelled effect written as a failure with the error "cancelled".
        Bug::CancelledEffectAsFailure => {
            for e in events.iter_mut() {
                if ty(e) == "STEP_CANCELLED" {
                    e["eventType"] = json!("STEP_FAILED");
                    if let Some(p) = payload_mut(e) {
                        p.insert("error".into(), json!("cancelled"));
                    }
                }
            }
        }
        // The grant is negotiated again when the flow re-runs after a resume, so a
        // second decision is recorded instead of the first being served.
        Bug::BudgetNegotiatedAgainOnReplay => {
            let grants: Vec<Value> = events
                .iter()
                .filter(|e| {
                    ty(e) == "DECISION_RECORDED"
                        && e.pointer("/payload/choice/granted").is_some()
                        && e.get("metadata").is_none()
                })
                .cloned()
                .collect();
            if let (Some(at), false) = (
                events.iter().position(|e| ty(e) == "EXECUTION_RESUMED"),
                grants.is_empty(),
            ) {
                let first_grant = events.iter().position(|e| e == &grants[0]);
                if first_grant.is_some_and(|g| g < at) {
                    for (i, g) in grants.into_iter().enumerate() {
                        events.insert(at + 1 + i, g);
                    }
                    renumber(events);
                }
            }
        }
        // `sleepUntil` a past time parks with wakeAt = now, not the requested time.
        Bug::SleepUntilPastWakesNow => {
            let mut swap = None;
            for e in events.iter() {
                if ty(e) == "EXECUTION_SUSPENDED"
                    && e.pointer("/payload/on").and_then(Value::as_str) == Some("sleep")
                {
                    let wake = e.pointer("/payload/wakeAt").and_then(Value::as_i64);
                    let at = e.get("timestamp").and_then(Value::as_i64);
                    if let (Some(w), Some(t)) = (wake, at) {
                        if w < t {
                            swap = Some((w, t));
                            break;
                        }
                    }
                }
            }
            if let Some((w, t)) = swap {
                for e in events.iter_mut() {
                    if let Some(p) = e.get_mut("payload") {
                        replace_value(p, &json!(w), &json!(t));
                    }
                }
            }
        }
        // Cancelling a timed park leaves its timer scheduled: a later fire past the
        // deadline still appends a TIMER_FIRED to the cancelled execution.
        Bug::CancelKeepsTimer => {
            let Some(cancelled) = events.iter().position(|e| ty(e) == "EXECUTION_CANCELLED") else {
                return;
            };
            let wake = events[..cancelled]
                .iter()
                .rev()
                .find(|e| ty(e) == "EXECUTION_SUSPENDED")
                .and_then(|e| e.pointer("/payload/wakeAt"))
                .and_then(Value::as_i64);
            let Some(wake) = wake else { return };
            let steps = clocks(input);
            let Some(cancel_step) = steps.iter().position(|(op, _)| op == "cancel") else {
                return;
            };
            let fired = steps[cancel_step..]
                .iter()
                .any(|(op, now)| op == "fireTimers" && *now >= wake);
            if fired {
                let mut timer = events[cancelled].clone();
                timer["eventType"] = json!("TIMER_FIRED");
                timer["payload"] = json!({ "firedAt": wake });
                timer["metadata"] = json!({ "kernel": true });
                events.push(timer);
                renumber(events);
            }
        }
        // MESSAGE_CONSUMED appended without the kernel stamp.
        Bug::MessageConsumedUnstamped => {
            for e in events.iter_mut() {
                if ty(e) != "MESSAGE_CONSUMED" {
                    continue;
                }
                if let Some(m) = e.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove("kernel");
                    if m.is_empty() {
                        if let Some(o) = e.as_object_mut() {
                            o.remove("metadata");
                        }
                    }
                }
            }
        }
        // The continuation's EXECUTION_STARTED does not say where it came from.
        Bug::ContinuationWithoutOrigin => {
            for e in events.iter_mut() {
                if ty(e) == "EXECUTION_STARTED" {
                    if let Some(p) = payload_mut(e) {
                        p.remove("continuedFrom");
                    }
                }
            }
        }
        // The join's array in the order the branches finished, not the order they
        // were given.
        Bug::ParallelJoinInCompletionOrder => {
            let finished: Vec<Value> = events
                .iter()
                .filter(|e| ty(e) == "STEP_COMPLETED")
                .filter_map(|e| e.pointer("/payload/output").cloned())
                .collect();
            for e in events.iter_mut() {
                if ty(e) != "EXECUTION_COMPLETED" {
                    continue;
                }
                let Some(Value::Array(out)) = e.pointer_mut("/payload/output") else {
                    continue;
                };
                if out.len() < 2 || out.len() > finished.len() {
                    continue;
                }
                let mut in_finish_order: Vec<Value> = finished
                    .iter()
                    .filter(|x| out.contains(x))
                    .cloned()
                    .collect();
                in_finish_order.dedup();
                if in_finish_order.len() == out.len() {
                    *out = in_finish_order;
                }
            }
        }
        // A declared-channel failure recorded without its channel and payload.
        Bug::TypedFailureRecordedUntyped => {
            for e in events.iter_mut() {
                if ty(e) == "STEP_FAILED" {
                    if let Some(p) = payload_mut(e) {
                        p.remove("channel");
                        p.remove("payload");
                    }
                }
            }
        }
        // An operator's release is applied but not recorded.
        Bug::ReleaseNotRecorded => {
            let before = events.len();
            events.retain(|e| ty(e) != "INBOX_RELEASED");
            if events.len() != before {
                renumber(events);
            }
        }
        // EXECUTION_MIGRATED written without the target's code pin.
        Bug::MigrationWithoutCodePin => {
            for e in events.iter_mut() {
                if ty(e) == "EXECUTION_MIGRATED" {
                    if let Some(p) = payload_mut(e) {
                        p.remove("toCodeHash");
                    }
                }
            }
        }
        _ => {}
    }
}

/// The `runScenario` answer of a kernel with `bug`: the reference's `answer` with each
/// log rewritten as the bug writes it; outcomes are left as the reference gave them,
/// except where the bug changes a value the flow returns.
pub fn run_scenario(bug: Bug, input: &Value, mut answer: Value) -> Value {
    let Some(a) = answer.as_object_mut() else {
        return answer;
    };
    let mut changed_outputs: Vec<(Value, Value)> = Vec::new();
    for (k, v) in a.iter_mut() {
        let logs: Vec<&mut Value> = match (k.as_str(), v) {
            ("log", v) => vec![v],
            ("continued", Value::Object(m)) => m.values_mut().collect(),
            _ => continue,
        };
        for log in logs {
            let Value::Array(events) = log else { continue };
            let before: Option<Value> = events
                .iter()
                .rev()
                .find(|e| ty(e) == "EXECUTION_COMPLETED")
                .and_then(|e| e.pointer("/payload/output").cloned());
            rewrite_log(bug, input, events);
            let after: Option<Value> = events
                .iter()
                .rev()
                .find(|e| ty(e) == "EXECUTION_COMPLETED")
                .and_then(|e| e.pointer("/payload/output").cloned());
            if let (Some(b), Some(a)) = (before, after) {
                if b != a {
                    changed_outputs.push((b, a));
                }
            }
        }
    }
    // The flow returned what the buggy run gave it, so its outcome says so too.
    if let Some(outcomes) = a.get_mut("outcomes") {
        for (from, to) in &changed_outputs {
            replace_value(outcomes, from, to);
        }
    }
    answer
}
