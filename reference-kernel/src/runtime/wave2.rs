//! Wave 2 kernel APIs: delivering topic messages to `receive` / `select`, holding and
//! releasing them (the 1.25.0 inbox quarantine), and starting the execution a
//! `continueAsNew` names.
//!
//! Every fact written here is kernel-stamped (`metadata.kernel: true`), so the fold
//! acts on it (FOLD-24, FOLD-28, FOLD-41), and every one is written only while
//! `receive` or `select` (for messages) or `continueAsNew` (for continuations) is
//! enabled: with the flags off the kernel writes no Wave 2 kind (COMPAT-11).
//!
//! Delivery never runs flow code out of order. A message that answers a parked wait is
//! appended with the wait-addressed resume in one atomic batch and the flow re-runs;
//! any later re-run (a resume, a recovery after a crash) serves the same answer from
//! the log, so a message is consumed exactly once.

use serde_json::{json, Map, Value};

use super::interp::{self, Interp};
use super::limits::{CONTINUATIONS_PER_CALL_MAX, DELIVERY_ATTEMPTS_MAX};
use super::{check_execution_id, flow_hash, RunOutcome, Runtime, RuntimeError};
use crate::envelope::EventEnvelope;
use crate::fold::{keys, ExecutionState, Status};
use crate::ingress::{park_fence_holds, NewEvent};
use crate::limits::QUARANTINED_ENTRIES_MAX;
use crate::spi::{Anchor, Clock, EventStore, EventStoreMethod, TimerStore};

/// What [`Runtime::deliver`] did with a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivery {
    /// The message answered an open wait of the parked execution: a kernel-stamped
    /// `MESSAGE_CONSUMED { topic, messageId, message, waitId }` and a kernel-stamped
    /// `EXECUTION_RESUMED { waitId, answer }` were appended together and the flow re-ran.
    Resumed {
        /// The wait the message answered.
        wait_id: String,
        /// How the re-run ended.
        outcome: RunOutcome,
    },
    /// No open wait listens on the topic: a kernel-stamped `MESSAGE_CONSUMED` without
    /// `waitId` moved the `_inbox` cursor, and a later `receive` / `select` on the topic
    /// is served the message from the log. Nothing re-ran.
    Buffered,
    /// The message is held in `_quarantined` and not released for delivery: nothing
    /// appended. Deliver it again after [`Runtime::release`] with delivery.
    Held,
    /// The log already records this `messageId` consumed on this topic: nothing
    /// appended (a redelivery is not consumed twice).
    Duplicate,
    /// Neither `receive` nor `select` is enabled: nothing appended (COMPAT-11).
    Disabled,
}

/// How [`Runtime::release`] releases the head of a topic's quarantine queue. The three
/// forms are the valid `INBOX_RELEASED` shapes (FOLD-42): exactly one of `operator` /
/// `auto`, and `auto` only with delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Release {
    /// An operator releases the message for delivery (`operator`, `deliver: true`).
    Deliver {
        /// Who released it.
        operator: String,
    },
    /// An operator drops the hold without delivering (`operator`, no `deliver`).
    Discard {
        /// Who released it.
        operator: String,
    },
    /// The kernel's automatic release, always for delivery (`auto: true, deliver: true`).
    Auto,
}

/// The id of the execution a `continueAsNew` of `execution_id` starts: `<base>~<n+1>`
/// when the id already ends in `~<n>`, else `<id>~1`. Deterministic, so a re-run and a
/// recovery derive the same id.
pub fn continuation_id(execution_id: &str) -> String {
    if let Some((base, n)) = execution_id.rsplit_once('~') {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            if let Some(next) = n.parse::<u64>().ok().and_then(|n| n.checked_add(1)) {
                return format!("{base}~{next}");
            }
        }
    }
    format!("{execution_id}~1")
}

/// The successor a continued execution names, when its status is `continued`.
pub(super) fn continued_to(state: &ExecutionState) -> Option<String> {
    if state.status != Status::Continued {
        return None;
    }
    state
        .variables
        .get(keys::CONTINUED_TO)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn kernel_meta() -> Option<Map<String, Value>> {
    let mut m = Map::new();
    m.insert("kernel".into(), Value::Bool(true));
    Some(m)
}

fn is_kernel(e: &EventEnvelope) -> bool {
    e.metadata
        .as_ref()
        .and_then(|m| m.get("kernel"))
        .is_some_and(|k| k == &Value::Bool(true))
}

/// A usable topic or message id: the fold refuses empty ones and `__proto__`.
fn usable_key(s: &str) -> bool {
    !s.is_empty() && s != crate::fold::PROTO_KEY
}

/// Drops every `__proto__` key at every depth, as the fold does (FOLD-05), so a message
/// served from `_waitAnswers` and one served from the log are the same value.
fn without_proto(value: Value) -> Value {
    match value {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, _)| k != crate::fold::PROTO_KEY)
                .map(|(k, v)| (k, without_proto(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_proto).collect()),
        other => other,
    }
}

/// The quarantine queue of `topic`, when there is one.
fn queue<'a>(state: &'a ExecutionState, topic: &str) -> Option<&'a Vec<Value>> {
    state
        .variables
        .get(keys::QUARANTINED)
        .and_then(|q| q.get(topic))
        .and_then(Value::as_array)
}

fn entry_id(entry: &Value) -> Option<&str> {
    entry.get("messageId").and_then(Value::as_str)
}

fn released_for_delivery(entry: &Value) -> bool {
    entry.get("released").and_then(|r| r.get("deliver")) == Some(&Value::Bool(true))
}

fn already_consumed(log: &[EventEnvelope], topic: &str, message_id: &str) -> bool {
    log.iter().any(|e| {
        e.event_type == "MESSAGE_CONSUMED"
            && is_kernel(e)
            && e.payload.get("topic").and_then(Value::as_str) == Some(topic)
            && e.payload.get("messageId").and_then(Value::as_str) == Some(message_id)
    })
}

/// The first wait of the current park that listens on `topic` and is not answered yet.
fn open_wait(state: &ExecutionState, topic: &str) -> Option<String> {
    if state.status != Status::Suspended {
        return None;
    }
    let answers = state
        .variables
        .get(keys::WAIT_ANSWERS)
        .and_then(Value::as_object);
    state
        .variables
        .get(keys::WAITS)
        .and_then(Value::as_array)?
        .iter()
        .filter(|w| w.get("topic").and_then(Value::as_str) == Some(topic))
        .filter_map(|w| w.get("waitId").and_then(Value::as_str))
        .find(|w| !answers.is_some_and(|a| a.contains_key(*w)))
        .map(str::to_owned)
}

impl<S: EventStore, C: Clock, T: TimerStore> Runtime<S, C, T> {
    fn messages_enabled(&self) -> bool {
        self.config.features.receive || self.config.features.select
    }

    /// Reads a non-terminal execution for a message API.
    async fn read_open(
        &self,
        execution_id: &str,
    ) -> Result<(Vec<EventEnvelope>, ExecutionState), RuntimeError> {
        check_execution_id(execution_id)?;
        let (log, state) = self.read(execution_id).await?;
        if state.status.is_terminal() {
            return Err(RuntimeError::Terminal(execution_id.to_owned()));
        }
        Ok((log, state))
    }

    /// Delivers `message` (id `message_id`) on `topic` to an execution (the kernel-side
    /// delivery API of `receive` / `select`).
    ///
    /// - When the execution is parked and one of its waits (`_waits`) listens on the
    ///   topic and is unanswered, the first such wait is answered: a kernel-stamped
    ///   `MESSAGE_CONSUMED` with `waitId` and a kernel-stamped wait-addressed
    ///   `EXECUTION_RESUMED { waitId, answer }` (no `_resumePayloads` entry, GAP-23) are
    ///   appended in one batch and the flow re-runs ([`Delivery::Resumed`]).
    /// - Otherwise the message is consumed for no wait ([`Delivery::Buffered`]) and a
    ///   later `receive` / `select` on the topic takes it, in log order.
    /// - A message held in `_quarantined` and not released for delivery is
    ///   [`Delivery::Held`]; an id already consumed on the topic is
    ///   [`Delivery::Duplicate`]. Neither appends anything.
    ///
    /// When another writer appended first and everything it appended is a quarantine
    /// fact (ignorable for the park fence, FOLD-46), the delivery is decided again on the
    /// new log (at most `DELIVERY_ATTEMPTS_MAX` times); any other race is
    /// [`RuntimeError::Conflict`] with nothing appended.
    ///
    /// `__proto__` keys are dropped from the message before it is recorded (FOLD-05).
    /// A terminal execution is [`RuntimeError::Terminal`]. An empty or `__proto__` topic
    /// or message id (keys the fold refuses) appends nothing and reports
    /// [`Delivery::Disabled`], like delivery with the features off.
    pub async fn deliver(
        &self,
        execution_id: &str,
        topic: &str,
        message_id: &str,
        message: Value,
    ) -> Result<Delivery, RuntimeError> {
        if !self.messages_enabled() || !usable_key(topic) || !usable_key(message_id) {
            return Ok(Delivery::Disabled);
        }
        let message = without_proto(message);
        let mut attempts = 0;
        loop {
            attempts += 1;
            let (log, state) = self.read_open(execution_id).await?;
            if let Some(q) = queue(&state, topic) {
                if let Some(i) = q.iter().position(|e| entry_id(e) == Some(message_id)) {
                    if i != 0 || !released_for_delivery(&q[0]) {
                        return Ok(Delivery::Held);
                    }
                }
            }
            if already_consumed(&log, topic, message_id) {
                return Ok(Delivery::Duplicate);
            }
            let wait = open_wait(&state, topic);
            let mut consumed = Map::new();
            consumed.insert("topic".into(), json!(topic));
            consumed.insert("messageId".into(), json!(message_id));
            consumed.insert("message".into(), message.clone());
            let mut events = Vec::with_capacity(2);
            if let Some(w) = &wait {
                consumed.insert("waitId".into(), json!(w));
            }
            events.push(NewEvent {
                event_type: "MESSAGE_CONSUMED".into(),
                payload: Value::Object(consumed),
                metadata: kernel_meta(),
            });
            if let Some(w) = &wait {
                events.push(NewEvent {
                    event_type: "EXECUTION_RESUMED".into(),
                    payload: json!({ "waitId": w, "answer": message.clone() }),
                    metadata: kernel_meta(),
                });
            }
            let script = match wait {
                Some(_) => Some(self.current_flow(&log)?),
                None => None,
            };
            let fence = self.fence(execution_id).await?;
            let appended = match self.append_batch(execution_id, &log, events, fence).await {
                Ok(appended) => appended,
                Err(RuntimeError::Conflict(e)) => {
                    // FOLD-46: quarantine facts appended meanwhile do not move the park
                    // fence; decide again on the new log. Anything else is a conflict.
                    if attempts >= DELIVERY_ATTEMPTS_MAX
                        || !self.only_quarantine_facts_since(execution_id, &log).await?
                    {
                        return Err(RuntimeError::Conflict(e));
                    }
                    continue;
                }
                Err(e) => return Err(e),
            };
            let (Some(wait_id), Some(script)) = (wait, script) else {
                return Ok(Delivery::Buffered);
            };
            let outcome = self
                .run_appended(execution_id, &log, state, appended, fence, script, true)
                .await?;
            return Ok(Delivery::Resumed { wait_id, outcome });
        }
    }

    /// Whether the events appended to `execution_id` after `log` are all ignorable for
    /// the park fence (and there is at least one).
    async fn only_quarantine_facts_since(
        &self,
        execution_id: &str,
        log: &[EventEnvelope],
    ) -> Result<bool, RuntimeError> {
        let next = log.last().map_or(0, |e| e.sequence + 1);
        let now = self
            .store
            .read(execution_id)
            .await
            .map_err(RuntimeError::from_store)?;
        let since: Vec<EventEnvelope> = now.into_iter().filter(|e| e.sequence >= next).collect();
        Ok(!since.is_empty() && park_fence_holds(&since))
    }

    /// Holds message `message_id` of `topic` (a kernel-stamped `INBOX_QUARANTINED`):
    /// [`Runtime::deliver`] reports it [`Delivery::Held`] until it is released for
    /// delivery. `Ok(false)` (nothing appended) when the messages features are off, the
    /// message is already held or consumed, or the 1,024-entry cap is reached (the fold
    /// would ignore the fact). The fact is ignorable for the park fence (FOLD-46).
    pub async fn quarantine(
        &self,
        execution_id: &str,
        topic: &str,
        message_id: &str,
    ) -> Result<bool, RuntimeError> {
        if !self.messages_enabled() || !usable_key(topic) || !usable_key(message_id) {
            return Ok(false);
        }
        let (log, state) = self.read_open(execution_id).await?;
        let total: usize = state
            .variables
            .get(keys::QUARANTINED)
            .and_then(Value::as_object)
            .map_or(0, |q| {
                q.values().filter_map(Value::as_array).map(Vec::len).sum()
            });
        let held =
            queue(&state, topic).is_some_and(|q| q.iter().any(|e| entry_id(e) == Some(message_id)));
        if held || total >= QUARANTINED_ENTRIES_MAX || already_consumed(&log, topic, message_id) {
            return Ok(false);
        }
        let event = NewEvent {
            event_type: "INBOX_QUARANTINED".into(),
            payload: json!({ "topic": topic, "messageId": message_id }),
            metadata: kernel_meta(),
        };
        let fence = self.fence(execution_id).await?;
        self.append_batch(execution_id, &log, vec![event], fence)
            .await?;
        Ok(true)
    }

    /// Releases the head of `topic`'s quarantine queue (a kernel-stamped
    /// `INBOX_RELEASED`), which must be `message_id` (releases keep order, FOLD-41).
    /// With [`Release::Deliver`] or [`Release::Auto`] the entry stays at the head marked
    /// released until [`Runtime::deliver`] consumes the message, which drops it
    /// (FOLD-44); [`Release::Discard`] drops the hold at once. `Ok(false)` (nothing
    /// appended) when the features are off or `message_id` is not an unreleased head.
    pub async fn release(
        &self,
        execution_id: &str,
        topic: &str,
        message_id: &str,
        how: Release,
    ) -> Result<bool, RuntimeError> {
        if !self.messages_enabled() || !usable_key(topic) || !usable_key(message_id) {
            return Ok(false);
        }
        let (log, state) = self.read_open(execution_id).await?;
        let head_ok = queue(&state, topic)
            .and_then(|q| q.first())
            .is_some_and(|h| entry_id(h) == Some(message_id) && h.get("released").is_none());
        if !head_ok {
            return Ok(false);
        }
        let mut payload = Map::new();
        payload.insert("topic".into(), json!(topic));
        payload.insert("messageId".into(), json!(message_id));
        match how {
            Release::Deliver { operator } => {
                payload.insert("operator".into(), json!(operator));
                payload.insert("deliver".into(), json!(true));
            }
            Release::Discard { operator } => {
                payload.insert("operator".into(), json!(operator));
            }
            Release::Auto => {
                payload.insert("auto".into(), json!(true));
                payload.insert("deliver".into(), json!(true));
            }
        }
        let event = NewEvent {
            event_type: "INBOX_RELEASED".into(),
            payload: Value::Object(payload),
            metadata: kernel_meta(),
        };
        let fence = self.fence(execution_id).await?;
        self.append_batch(execution_id, &log, vec![event], fence)
            .await?;
        Ok(true)
    }

    /// The park fence of a parked execution (GAP-20): when every event appended since
    /// its last `EXECUTION_SUSPENDED` is an ignorable quarantine fact
    /// ([`park_fence_holds`], FOLD-46), the store's anchor re-observed now, for an
    /// `appendIfUnchanged` that answers the park. `Ok(None)` when the execution is not
    /// parked, something else was appended since the park, or the store has no
    /// `appendIfUnchanged`.
    pub async fn park_anchor(&self, execution_id: &str) -> Result<Option<Anchor>, RuntimeError> {
        check_execution_id(execution_id)?;
        let (log, state) = self.read(execution_id).await?;
        if state.status != Status::Suspended
            || !self
                .store
                .capabilities()
                .claims(EventStoreMethod::AppendIfUnchanged)
        {
            return Ok(None);
        }
        let Some(park) = log
            .iter()
            .rposition(|e| e.event_type == "EXECUTION_SUSPENDED")
        else {
            return Ok(None);
        };
        if !park_fence_holds(&log[park + 1..]) {
            return Ok(None);
        }
        let anchor = self
            .store
            .observe(execution_id)
            .await
            .map_err(RuntimeError::from_store)?;
        let next = log.last().map_or(0, |e| e.sequence + 1);
        Ok((anchor.next_sequence == next).then_some(anchor))
    }

    /// After a run that ended in `continueAsNew`, starts the continuing execution and
    /// runs it; repeats while successors continue, at most
    /// [`CONTINUATIONS_PER_CALL_MAX`] times per call. Any other outcome passes through.
    /// The result is `Continued { to }` naming the last execution this call started
    /// (or, when its successor was already started, that successor).
    pub(super) async fn follow_continuations(
        &self,
        execution_id: &str,
        outcome: Result<RunOutcome, RuntimeError>,
    ) -> Result<RunOutcome, RuntimeError> {
        let mut outcome = outcome;
        let mut prev = execution_id.to_owned();
        for _ in 0..CONTINUATIONS_PER_CALL_MAX {
            let to = match &outcome {
                Ok(RunOutcome::Continued { to }) => to.clone(),
                _ => return outcome,
            };
            match self.start_successor(&prev, &to).await? {
                Some(next @ RunOutcome::Continued { .. }) => {
                    outcome = Ok(next);
                    prev = to;
                }
                _ => return Ok(RunOutcome::Continued { to }),
            }
        }
        // The hop limit: `prev` is continued and its successor not started yet;
        // `recover(prev)` starts it.
        match outcome {
            Ok(RunOutcome::Continued { .. }) => Ok(RunOutcome::Continued { to: prev }),
            other => other,
        }
    }

    /// Starts `to`, the execution continuing `prev`. `Ok(None)` when `to` was already
    /// started as `prev`'s successor; `AlreadyStarted` when `to` holds another log.
    async fn start_successor(
        &self,
        prev: &str,
        to: &str,
    ) -> Result<Option<RunOutcome>, RuntimeError> {
        check_execution_id(to)?;
        let (log, state) = self.read(prev).await?;
        let script = self.current_flow(&log)?;
        let existing = self
            .store
            .read(to)
            .await
            .map_err(RuntimeError::from_store)?;
        if let Some(first) = existing.first() {
            let ours = first.event_type == "EXECUTION_STARTED"
                && first
                    .payload
                    .pointer("/continuedFrom/executionId")
                    .and_then(Value::as_str)
                    == Some(prev);
            return if ours {
                Ok(None)
            } else {
                Err(RuntimeError::AlreadyStarted(to.to_owned()))
            };
        }
        let input = log
            .iter()
            .rev()
            .find(|e| e.event_type == "EXECUTION_CONTINUED" && is_kernel(e))
            .and_then(|e| e.payload.get("input"))
            .cloned()
            .unwrap_or(Value::Null);
        let mut started = Map::new();
        started.insert("input".into(), input);
        started.insert("flowId".into(), json!(script.flow_id));
        started.insert(
            "flowHash".into(),
            json!(flow_hash(&script, &self.config.features)),
        );
        if let Some(code) = &script.code_fingerprint {
            started.insert("codeHash".into(), json!(code));
        }
        let mut carried = Map::new();
        if let Some(q) = state
            .variables
            .get(keys::QUARANTINED)
            .filter(|q| q.as_object().is_some_and(|m| !m.is_empty()))
        {
            carried.insert("quarantined".into(), q.clone());
        }
        started.insert(
            "continuedFrom".into(),
            json!({ "executionId": prev, "carried": carried }),
        );
        let mut carry = Map::new();
        for (field, key) in [("resources", keys::RESOURCES), ("inbox", keys::INBOX)] {
            if let Some(v) = state.variables.get(key) {
                carry.insert(field.into(), v.clone());
            }
        }
        if !carry.is_empty() {
            started.insert("carry".into(), Value::Object(carry));
        }
        let fence = self.fence(to).await?;
        let flow_id = script.flow_id.clone();
        let run = Interp::new(
            self,
            to,
            &flow_id,
            script,
            interp::Start {
                state: ExecutionState::new(),
                next_seq: 0,
                fence,
                crash_after: None,
                check_divergence: true,
                mail: interp::MailLog::default(),
            },
        );
        run.run(Some(Value::Object(started))).await.map(Some)
    }
}
