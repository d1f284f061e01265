//! The flow-script interpreter: one run of a flow from its start, served from the log.
//!
//! A run folds the log once when it begins and then folds each event it appends
//! incrementally, so a run over a 10,000-step log is linear, not quadratic.
//!
//! Concurrency is cooperative and deterministic: `parallel` polls its branches in index
//! order, round after round, and an effect or decider that is "in flight" yields for a
//! scripted number of ticks. No clock or randomness decides an interleaving (EMIT-11).
//! Every append is made one at a time, and all mutable run state sits behind one mutex
//! that is never held across an `.await`.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use crate::json::Json;
use serde_json::{json, Map, Value};

use super::effects::{Effect, EffectCall, EffectOutcome, EffectResult, ScriptedEffect};
use super::limits::{EFFECT_TICKS_MAX, RUN_STATEMENTS_MAX};
use super::script::{CrashPoint, DeciderSpec, EmitSpec, FlowScript, Ref, RefRoot, StepStmt, Stmt};
use super::{DivergenceMode, RunOutcome, Runtime, RuntimeError};
use crate::envelope::EventEnvelope;
use crate::fold::{
    get_decision, is_known_event_type, keys, ExecutionState, FrameStatus, DIVERGED_GATE,
    INDOUBT_GATE, RESERVED_DECISION_PREFIX,
};
use crate::ingress::{validate_user_emit, verdict_decision_id, EmitSource};
use crate::limits::TYPED_FAILURE_PAYLOAD_BYTES_MAX;
use crate::spi::{Clock, EventStore, FenceToken, Timer, TimerStore};

/// A boxed, `Send` future borrowing the interpreter.
type Fut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A failure the flow can catch: a step's typed or untyped failure, or a throw.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FlowError {
    pub message: String,
    pub channel: Option<String>,
    pub payload: Option<Value>,
}

impl FlowError {
    fn untyped(message: impl Into<String>) -> FlowError {
        FlowError {
            message: message.into(),
            channel: None,
            payload: None,
        }
    }
}

/// Why a block stopped early.
#[derive(Debug)]
pub(crate) enum Stop {
    /// A failure travelling to the nearest matching `catch`, else failing the execution.
    Error(FlowError),
    /// `complete`.
    Complete(Value),
    /// The execution parked on this gate (the park is already in the log).
    Park(String),
    /// The replay-divergence detector refused the run (FOLD-37).
    Diverged(String),
    /// A scripted or injected worker crash: nothing more is appended.
    Crash(String),
    /// The store refused an append or a read (fenced, conflict, backend).
    Store(RuntimeError),
    /// `continueAsNew` ended the execution.
    Continued(String),
}

impl Stop {
    /// Stops that end the whole run at once, even inside `parallel`.
    fn aborts(&self) -> bool {
        matches!(self, Stop::Crash(_) | Stop::Store(_) | Stop::Diverged(_))
    }
}

/// Mutable state of one run.
pub(crate) struct RunState {
    /// The folded log, kept current by folding each append.
    state: ExecutionState,
    /// Next sequence to append at.
    next_seq: u64,
    /// Events appended by this run.
    appended: u64,
    /// `_resumePayloads` entries consumed by suspend points so far: the emit segment.
    cursor: usize,
    /// A step or decision of the current segment ran live in this run (EMIT-06 (b)).
    live_in_segment: bool,
    /// Effects and deciders started and not yet settled (GAP-26).
    in_flight: u64,
    /// An earlier outcome of this run is one a re-run does not serve (EMIT-08 (c)).
    unserved: bool,
    /// Stamped emit counts per digest in the log when the run began.
    logged_emits: Map<String, Value>,
    /// Emits per digest made so far in this run (the `n` of EMIT-06).
    run_emits: BTreeMap<String, u64>,
    /// Values bound with `bind` / `set`.
    vars: BTreeMap<String, Value>,
    /// Step ids and flow decision ids the log records, and those this run reached.
    recorded: BTreeSet<String>,
    visited: BTreeSet<String>,
    unvisited: usize,
    /// A recorded step ran again live (untyped failure, crash, retry verdict); the log
    /// past it may legitimately differ, so the position check stops.
    reexecuted: bool,
    /// The divergence detector is on for this run.
    detector: bool,
    /// Nesting of `parallel`.
    depth: u32,
    /// The gate this run parked on, once it has.
    parked: Option<String>,
    /// Crash after this many appends (a fault plan).
    crash_after: Option<u64>,
    /// Statements executed (bounded by RUN_STATEMENTS_MAX).
    statements: u64,
    /// Where the log answers waits and buffers messages (Wave 2 `receive` / `select`).
    mail: MailLog,
    /// Buffered messages per topic already served to a `receive` / `select` this run.
    mail_taken: BTreeMap<String, usize>,
    /// The sequence of the last snapshot this run wrote or queued (REPLAY-15).
    snapshot_at: Option<u64>,
    /// A snapshot that fell due inside `parallel`, written once the branches are done
    /// so that a store that makes the write wait cannot reorder the branches' appends.
    pending_snapshot: Option<(ExecutionState, u64)>,
    /// An append is in flight: `parallel` branches take turns, one append at a time.
    appending: bool,
    /// Branches waiting for their turn to append.
    append_waiters: Vec<Waker>,
}

/// What the log says about messages: the sequence at which each wait was first
/// answered (a kernel-stamped `MESSAGE_CONSUMED` with `waitId`, or a kernel-stamped
/// wait-addressed `EXECUTION_RESUMED`), and, per topic, the messages consumed for no
/// wait, in log order. A re-run serves `receive` / `select` from this, never from the
/// deliverer, so a delivered message is consumed exactly once.
#[derive(Debug, Clone, Default)]
pub(crate) struct MailLog {
    answered_at: BTreeMap<String, u64>,
    buffered: BTreeMap<String, Vec<(u64, Value)>>,
}

impl MailLog {
    /// Indexes the kernel-stamped message facts of `events`.
    pub(crate) fn from_events<'a>(events: impl IntoIterator<Item = &'a EventEnvelope>) -> MailLog {
        let mut mail = MailLog::default();
        for e in events {
            let kernel = e
                .metadata
                .as_ref()
                .and_then(|m| m.get("kernel"))
                .is_some_and(|k| k == &Value::Bool(true));
            if !kernel {
                continue;
            }
            let wait = e.payload.get("waitId").and_then(Value::as_str);
            match e.event_type.as_str() {
                "MESSAGE_CONSUMED" => match wait {
                    Some(w) => {
                        mail.answered_at.entry(w.to_owned()).or_insert(e.sequence);
                    }
                    None => {
                        if let Some(topic) = e.payload.get("topic").and_then(Value::as_str) {
                            let message = e.payload.get("message").cloned().unwrap_or(Value::Null);
                            mail.buffered
                                .entry(topic.to_owned())
                                .or_default()
                                .push((e.sequence, message));
                        }
                    }
                },
                "EXECUTION_RESUMED" => {
                    if let Some(w) = wait {
                        mail.answered_at.entry(w.to_owned()).or_insert(e.sequence);
                    }
                }
                _ => {}
            }
        }
        mail
    }
}

/// Where a run begins: the folded log, the next sequence, the fence, a fault plan.
pub(crate) struct Start {
    pub state: ExecutionState,
    pub next_seq: u64,
    pub fence: Option<FenceToken>,
    pub crash_after: Option<u64>,
    /// Whether the divergence detector runs. A `resumeAs` run moves the execution onto
    /// other code on purpose, so it is not checked against the old code's log.
    pub check_divergence: bool,
    /// The log's message facts (see [`MailLog`]).
    pub mail: MailLog,
}

/// One run of a flow over one execution.
pub(crate) struct Interp<'r, S, C, T> {
    rt: &'r Runtime<S, C, T>,
    exec_id: String,
    workflow_id: String,
    script: Arc<FlowScript>,
    scripted: BTreeMap<String, Arc<dyn Effect>>,
    fence: Option<FenceToken>,
    st: Mutex<RunState>,
}

fn step_key(id: &str) -> String {
    format!("step:{id}")
}

fn decision_key(id: &str) -> String {
    format!("decision:{id}")
}

impl<'r, S: EventStore, C: Clock, T: TimerStore> Interp<'r, S, C, T> {
    pub(crate) fn new(
        rt: &'r Runtime<S, C, T>,
        exec_id: &str,
        workflow_id: &str,
        script: Arc<FlowScript>,
        start: Start,
    ) -> Self {
        let Start {
            state,
            next_seq,
            fence,
            crash_after,
            check_divergence,
            mail,
        } = start;
        let mut recorded: BTreeSet<String> = state.frames.keys().map(|k| step_key(k)).collect();
        if let Some(d) = &state.variables.decisions {
            for (id, _) in d.iter() {
                if !id.starts_with(RESERVED_DECISION_PREFIX) && !id.starts_with("effect:") {
                    recorded.insert(decision_key(id));
                }
            }
        }
        let logged_emits = state
            .variables
            .get(keys::FLOW_EMITS)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let scripted = script
            .effects
            .iter()
            .map(|(tool, spec)| {
                (
                    tool.clone(),
                    Arc::new(ScriptedEffect::new(spec.clone())) as Arc<dyn Effect>,
                )
            })
            .collect();
        let unvisited = recorded.len();
        Interp {
            rt,
            exec_id: exec_id.to_owned(),
            workflow_id: workflow_id.to_owned(),
            script,
            scripted,
            fence,
            st: Mutex::new(RunState {
                state,
                next_seq,
                appended: 0,
                cursor: 0,
                live_in_segment: false,
                in_flight: 0,
                unserved: false,
                logged_emits,
                run_emits: BTreeMap::new(),
                vars: BTreeMap::new(),
                recorded,
                visited: BTreeSet::new(),
                unvisited,
                reexecuted: false,
                detector: check_divergence,
                depth: 0,
                parked: None,
                crash_after,
                statements: 0,
                mail,
                mail_taken: BTreeMap::new(),
                snapshot_at: None,
                pending_snapshot: None,
                appending: false,
                append_waiters: Vec::new(),
            }),
        }
    }

    fn st(&self) -> MutexGuard<'_, RunState> {
        // Nothing panics while holding the lock, so a poisoned lock still holds
        // consistent data.
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs the flow: appends `started` first when given (a fresh start), then the body,
    /// then the terminal event.
    pub(crate) async fn run(&self, started: Option<Value>) -> Result<RunOutcome, RuntimeError> {
        let script = Arc::clone(&self.script);
        let result = match started {
            Some(payload) => match self.append("EXECUTION_STARTED", payload, None).await {
                Ok(_) => self.exec_block(&script.body).await,
                Err(stop) => Err(stop),
            },
            None => self.exec_block(&script.body).await,
        };
        self.finish(result).await
    }

    async fn finish(&self, result: Result<(), Stop>) -> Result<RunOutcome, RuntimeError> {
        let result = match result {
            Ok(()) => Err(Stop::Complete(Value::Null)),
            Err(stop) => Err(stop),
        };
        let stop = match result {
            Err(Stop::Complete(output)) => match self.check_reached() {
                Err(stop) => stop,
                Ok(()) => match self
                    .append(
                        "EXECUTION_COMPLETED",
                        json!({ "output": output.clone() }),
                        None,
                    )
                    .await
                {
                    Ok(_) => return Ok(RunOutcome::Completed { output }),
                    Err(stop) => stop,
                },
            },
            Err(Stop::Error(fe)) => match self.check_reached() {
                Err(stop) => stop,
                Ok(()) => match self
                    .append(
                        "EXECUTION_FAILED",
                        json!({ "error": fe.message.clone() }),
                        None,
                    )
                    .await
                {
                    Ok(_) => return Ok(RunOutcome::Failed { error: fe.message }),
                    Err(stop) => stop,
                },
            },
            Err(other) => other,
            Ok(()) => Stop::Complete(Value::Null),
        };
        match stop {
            Stop::Park(gate) => {
                self.snapshot_on_park().await;
                Ok(RunOutcome::Parked { gate })
            }
            Stop::Crash(point) => Ok(RunOutcome::Crashed { point }),
            Stop::Store(e) => Err(e),
            Stop::Continued(to) => Ok(RunOutcome::Continued { to }),
            Stop::Diverged(reason) => {
                let payload =
                    json!({ "on": DIVERGED_GATE, "condition": { "reason": reason.clone() } });
                match self.append("EXECUTION_SUSPENDED", payload, None).await {
                    Ok(_) => {
                        self.snapshot_on_park().await;
                        Ok(RunOutcome::Diverged { reason })
                    }
                    Err(Stop::Crash(point)) => Ok(RunOutcome::Crashed { point }),
                    Err(Stop::Store(e)) => Err(e),
                    Err(_) => Ok(RunOutcome::Diverged { reason }),
                }
            }
            // Complete and Error were handled above; reaching here is impossible, but a
            // fallback is cheaper than a panic.
            Stop::Complete(output) => Ok(RunOutcome::Completed { output }),
            Stop::Error(fe) => Ok(RunOutcome::Failed { error: fe.message }),
        }
    }

    /// Appends one event, folds it, and applies the fault plan.
    async fn append(
        &self,
        event_type: &str,
        payload: Value,
        metadata: Option<Map<String, Value>>,
    ) -> Result<u64, Stop> {
        // One append in flight per run: `parallel` branches are polled in turn, and
        // with a store whose append really waits (a network round trip) a second
        // branch would otherwise send sequence n+1 while n is in flight; a store that
        // receives them out of order refuses one (a conflict), and the run fails
        // every time it is re-driven. Found by the deploy simulator (PLACE-04).
        let _turn = AppendTurn { interp: self }.await;
        let env = {
            let mut st = self.st();
            let sequence = st.next_seq;
            st.next_seq += 1;
            EventEnvelope {
                id: format!("{}:{}", self.exec_id, sequence),
                workflow_id: self.workflow_id.clone(),
                execution_id: self.exec_id.clone(),
                event_type: event_type.to_owned(),
                sequence,
                timestamp_ms: self.rt.clock.now_ms(),
                payload: payload.into(),
                metadata,
            }
        };
        let sequence = env.sequence;
        let appended = self
            .rt
            .store
            .append(&self.exec_id, sequence, vec![env.clone()], self.fence)
            .await;
        if let Err(e) = appended {
            self.st().next_seq = sequence;
            return Err(Stop::Store(RuntimeError::from_store(e)));
        }
        let snapshot = {
            let mut st = self.st();
            let state = std::mem::take(&mut st.state);
            st.state = self.rt.fold_with(state, std::iter::once(env));
            st.appended += 1;
            if st.crash_after == Some(st.appended) {
                return Err(Stop::Crash(format!("after-append-{}", st.appended)));
            }
            // REPLAY-15: a snapshot after each event that closes a block of the policy.
            if self.rt.snapshot_due(sequence) {
                st.snapshot_at = Some(sequence);
                let state = st.state.clone();
                if st.depth > 0 {
                    st.pending_snapshot = Some((state, sequence));
                    None
                } else {
                    Some(state)
                }
            } else {
                None
            }
        };
        if let Some(state) = snapshot {
            self.rt
                .write_snapshot(&self.exec_id, &state, sequence)
                .await;
        }
        Ok(sequence)
    }

    /// REPLAY-15: a parked execution is snapshotted, so its resume folds no tail but
    /// the resume's own events.
    async fn snapshot_on_park(&self) {
        if !self.rt.snapshot_on_park() {
            return;
        }
        let snapshot = {
            let mut st = self.st();
            match st.next_seq.checked_sub(1) {
                Some(last) if st.snapshot_at != Some(last) => {
                    st.snapshot_at = Some(last);
                    Some((st.state.clone(), last))
                }
                _ => None,
            }
        };
        if let Some((state, sequence)) = snapshot {
            self.rt
                .write_snapshot(&self.exec_id, &state, sequence)
                .await;
        }
    }

    /// FOLD-37 (fail mode): the run has reached a live point; every step and decision
    /// the log records must have been reached by now, unless a recorded step was
    /// re-executed (at-least-once) or branches are still running.
    fn check_reached(&self) -> Result<(), Stop> {
        let st = self.st();
        if self.rt.config.divergence == DivergenceMode::Off
            || !st.detector
            || st.depth > 0
            || st.reexecuted
            || st.unvisited == 0
        {
            return Ok(());
        }
        let missing = st
            .recorded
            .iter()
            .find(|k| !st.visited.contains(*k))
            .cloned()
            .unwrap_or_default();
        Err(Stop::Diverged(format!(
            "replay divergence: the log records {missing} but this run reached a new syscall without reaching it (FOLD-37)"
        )))
    }

    fn visit(&self, key: String) {
        let mut st = self.st();
        if st.recorded.contains(&key) && st.visited.insert(key) {
            st.unvisited -= 1;
        }
    }

    fn exec_block<'a>(&'a self, stmts: &'a [Stmt]) -> Fut<'a, Result<(), Stop>> {
        Box::pin(async move {
            for s in stmts {
                self.exec_stmt(s).await?;
            }
            Ok(())
        })
    }

    fn exec_stmt<'a>(&'a self, stmt: &'a Stmt) -> Fut<'a, Result<(), Stop>> {
        Box::pin(async move {
            {
                let mut st = self.st();
                st.statements += 1;
                if st.statements > RUN_STATEMENTS_MAX {
                    return Err(Stop::Error(FlowError::untyped(format!(
                        "the run executed more than {RUN_STATEMENTS_MAX} statements"
                    ))));
                }
            }
            match stmt {
                Stmt::Step(s) => match self.exec_step(s).await {
                    Ok(_) => Ok(()),
                    Err(Stop::Error(fe)) => {
                        let handler = fe
                            .channel
                            .as_ref()
                            .and_then(|c| s.catch.get(c))
                            .or_else(|| s.catch.get("*"));
                        match handler {
                            Some(h) => self.exec_block(h).await,
                            None => Err(Stop::Error(fe)),
                        }
                    }
                    Err(other) => Err(other),
                },
                Stmt::Decide {
                    id,
                    decider,
                    ticks,
                    catch,
                } => match self.exec_decide(id, decider, *ticks).await {
                    Err(Stop::Error(fe)) => match catch {
                        Some(h) => self.exec_block(h).await,
                        None => Err(Stop::Error(fe)),
                    },
                    other => other,
                },
                Stmt::NegotiateBudget {
                    id,
                    dimension,
                    request,
                } => self.exec_negotiate(id, dimension, *request).await,
                Stmt::Parallel(branches) => self.exec_parallel(branches).await,
                Stmt::Suspend {
                    on,
                    timeout,
                    wake_at,
                    correlation_key,
                    condition,
                    bind,
                } => {
                    if let Some(answer) = self.take_answer() {
                        self.bind(bind, answer);
                        return Ok(());
                    }
                    self.check_reached()?;
                    // INGRESS-35: only the kernel sets condition.stepId.
                    let condition = condition.clone().map(|mut c| {
                        c.remove("stepId");
                        c
                    });
                    let wake = wake_at.or_else(|| {
                        // REPLAY-12: with a TimerStore wired, wakeAt derives from timeout.
                        match (timeout, &self.rt.timers) {
                            (Some(t), Some(_)) => Some(self.rt.clock.now_ms().saturating_add(*t)),
                            _ => None,
                        }
                    });
                    self.park(on, wake, *timeout, correlation_key.clone(), condition, None)
                        .await
                }
                Stmt::Sleep { on, ms, bind } => {
                    if let Some(answer) = self.take_answer() {
                        self.bind(bind, answer);
                        return Ok(());
                    }
                    self.check_reached()?;
                    let wake = self.rt.clock.now_ms().saturating_add(*ms);
                    self.park(on, Some(wake), None, None, None, None).await
                }
                Stmt::SleepUntil { on, at, bind } => {
                    if let Some(answer) = self.take_answer() {
                        self.bind(bind, answer);
                        return Ok(());
                    }
                    self.check_reached()?;
                    self.park(on, Some(*at), None, None, None, None).await
                }
                Stmt::Emit { spec, opaque, .. } => self.exec_emit(spec, *opaque).await,
                Stmt::If {
                    cond,
                    equals,
                    then,
                    otherwise,
                } => {
                    let value = self.read_ref(cond);
                    if &value == equals {
                        self.exec_block(then).await
                    } else {
                        self.exec_block(otherwise).await
                    }
                }
                Stmt::Set { name, value } => {
                    let v = self.resolve(value);
                    self.st().vars.insert(name.clone(), v);
                    Ok(())
                }
                Stmt::Complete(output) => Err(Stop::Complete(self.resolve(output))),
                Stmt::Fail(message) => Err(Stop::Error(FlowError::untyped(message.clone()))),
                Stmt::ContinueAsNew(input) => {
                    self.check_reached()?;
                    let to = super::wave2::continuation_id(&self.exec_id);
                    let payload =
                        json!({ "continuedTo": to.clone(), "input": self.resolve(input) });
                    self.append("EXECUTION_CONTINUED", payload, Some(kernel_meta()))
                        .await?;
                    Err(Stop::Continued(to))
                }
                Stmt::Receive {
                    topic,
                    wait_id,
                    bind,
                } => {
                    self.exec_waits(&[(wait_id.clone(), topic.clone())], bind, false)
                        .await
                }
                Stmt::Select { waits, bind } => self.exec_waits(waits, bind, true).await,
            }
        })
    }

    fn bind(&self, name: &Option<String>, value: Value) {
        if let Some(n) = name {
            self.st().vars.insert(n.clone(), value);
        }
    }

    /// The next `_resumePayloads` entry, consumed by a suspend point: the segment
    /// advances and its live-work flag resets (GAP-07).
    fn take_answer(&self) -> Option<Value> {
        let mut st = self.st();
        let answer = st.state.resume_payloads().get(st.cursor).cloned()?;
        st.cursor += 1;
        st.live_in_segment = false;
        Some(answer)
    }

    /// Durably parks: schedules the timer first (idempotent, so a crash between the two
    /// loses nothing), then appends `EXECUTION_SUSPENDED` (REPLAY-17).
    async fn park(
        &self,
        on: &str,
        wake_at: Option<i64>,
        timeout: Option<i64>,
        correlation_key: Option<String>,
        condition: Option<Map<String, Value>>,
        waits: Option<Value>,
    ) -> Result<(), Stop> {
        if self.st().parked.is_some() {
            // A sibling branch already parked the execution.
            return Err(Stop::Park(on.to_owned()));
        }
        let mut p = Map::new();
        p.insert("on".into(), Value::String(on.to_owned()));
        if let Some(w) = wake_at {
            p.insert("wakeAt".into(), Value::from(w));
        }
        if let Some(t) = timeout {
            p.insert("timeout".into(), Value::from(t));
        }
        if let Some(k) = correlation_key {
            p.insert("correlationKey".into(), Value::String(k));
        }
        if let Some(c) = condition {
            p.insert("condition".into(), Value::Object(c));
        }
        if let Some(w) = waits {
            p.insert("waits".into(), w);
        }
        if let (Some(timers), Some(w)) = (&self.rt.timers, wake_at) {
            let timer = Timer {
                execution_id: self.exec_id.clone(),
                wake_at_ms: w,
                key: super::timer_key(on, w),
            };
            timers
                .schedule(timer)
                .await
                .map_err(|e| Stop::Store(RuntimeError::Store(e)))?;
        }
        self.append("EXECUTION_SUSPENDED", Value::Object(p), None)
            .await?;
        self.st().parked = Some(on.to_owned());
        Err(Stop::Park(on.to_owned()))
    }

    fn resolve_effect(&self, tool_id: &str) -> Arc<dyn Effect> {
        if let Some(e) = self.rt.effects.get(tool_id) {
            return Arc::clone(e);
        }
        if let Some(e) = self.scripted.get(tool_id) {
            return Arc::clone(e);
        }
        Arc::new(super::effects::EchoEffect)
    }

    async fn exec_step(&self, s: &StepStmt) -> Result<Value, Stop> {
        let input = self.resolve(&s.input);
        self.visit(step_key(&s.step_id));
        if s.kind.as_deref() == Some("human") {
            return self.exec_human(s, input).await;
        }
        let frame = self.st().state.frames.get(&s.step_id).cloned();
        let mut attempt = 1;
        if let Some(f) = &frame {
            if let Some(recorded) = &f.tool_id {
                if recorded != &s.tool_id
                    && self.rt.config.divergence == DivergenceMode::Fail
                    && self.st().detector
                {
                    return Err(Stop::Diverged(format!(
                        "replay divergence: step `{}` is recorded with toolId `{recorded}`, the flow now calls `{}` (FOLD-37)",
                        s.step_id, s.tool_id
                    )));
                }
            }
            match f.status {
                // REPLAY-02: a completed task is served; its effect never runs again.
                FrameStatus::Completed => {
                    return Ok(f.output.as_ref().map_or(Value::Null, Json::to_value))
                }
                // TYPED-09/10: substitution, zero events, zero middleware, zero calls.
                FrameStatus::Failed if f.error_channel.is_some() => {
                    return Err(Stop::Error(FlowError {
                        message: f
                            .error
                            .as_ref()
                            .map(Json::to_value)
                            .as_ref()
                            .and_then(Value::as_str)
                            .unwrap_or("TypedFailure")
                            .to_owned(),
                        channel: f.error_channel.clone(),
                        payload: Some(f.error_payload.as_ref().map_or(Value::Null, Json::to_value)),
                    }))
                }
                FrameStatus::Indoubt => {
                    let vid = verdict_decision_id(&s.step_id, f.attempt);
                    let verdict = get_decision(&self.st().state, &vid);
                    match verdict
                        .as_ref()
                        .and_then(|v| v.get("outcome"))
                        .and_then(Value::as_str)
                    {
                        Some("completed") => {
                            let output = verdict
                                .as_ref()
                                .and_then(|v| v.get("output"))
                                .cloned()
                                .unwrap_or(Value::Null);
                            self.append(
                                "STEP_COMPLETED",
                                json!({"stepId": s.step_id, "output": output.clone()}),
                                None,
                            )
                            .await?;
                            self.st().live_in_segment = true;
                            return Ok(output);
                        }
                        Some("failed") => {
                            // Operator verdicts are not domain channels: untyped (D4).
                            let error = verdict
                                .as_ref()
                                .and_then(|v| v.get("error"))
                                .and_then(Value::as_str)
                                .unwrap_or("in-doubt verdict: failed")
                                .to_owned();
                            self.append(
                                "STEP_FAILED",
                                json!({"stepId": s.step_id, "error": error.clone()}),
                                None,
                            )
                            .await?;
                            let mut st = self.st();
                            st.live_in_segment = true;
                            st.unserved = true;
                            return Err(Stop::Error(FlowError::untyped(error)));
                        }
                        Some(_) => attempt = f.attempt.saturating_add(1),
                        None => {
                            // Parked in doubt but the park itself was lost (a crash
                            // between the two appends): park again.
                            let cond = json!({"stepId": s.step_id, "attempt": f.attempt});
                            let cond = cond.as_object().cloned();
                            return self
                                .park(INDOUBT_GATE, None, None, None, cond, None)
                                .await
                                .map(|_| Value::Null);
                        }
                    }
                }
                _ => attempt = f.attempt.saturating_add(1),
            }
        }
        if frame.is_some() {
            // REPLAY-09: an untyped failure (or an unsettled attempt) runs again.
            self.st().reexecuted = true;
        } else {
            self.check_reached()?;
        }
        // RES-05: admission control refuses the next effect once a budget is exceeded.
        if let Some(dimension) = self.exceeded_dimension() {
            let payload = json!({"stepId": s.step_id, "toolId": s.tool_id, "reason": "quota-exceeded", "dimension": dimension});
            self.append("EFFECT_DENIED", payload, None).await?;
            let mut st = self.st();
            st.unserved = true;
            st.live_in_segment = true;
            return Err(Stop::Error(FlowError::untyped(format!(
                "QuotaExceeded: budget for `{dimension}` is exhausted (RES-05)"
            ))));
        }
        let mut started = Map::new();
        started.insert("stepId".into(), json!(s.step_id));
        started.insert("toolId".into(), json!(s.tool_id));
        if let Some(k) = &s.kind {
            started.insert("kind".into(), json!(k));
        }
        started.insert("attempt".into(), json!(attempt));
        started.insert("input".into(), input.clone());
        self.append("STEP_STARTED", Value::Object(started), None)
            .await?;
        {
            let mut st = self.st();
            st.live_in_segment = true;
            st.in_flight += 1;
        }
        let result = self.attempts(s, input, attempt).await;
        self.st().in_flight -= 1;
        result
    }

    /// The attempts of one live step, with the retry middleware's policy.
    async fn attempts(&self, s: &StepStmt, input: Value, mut attempt: u64) -> Result<Value, Stop> {
        let effect = self.resolve_effect(&s.tool_id);
        let policy = s.retry;
        let first = attempt;
        loop {
            let resources = self
                .st()
                .state
                .variables
                .get(keys::RESOURCES)
                .cloned()
                .unwrap_or_else(|| json!({}));
            let call = EffectCall {
                execution_id: &self.exec_id,
                step_id: &s.step_id,
                tool_id: &s.tool_id,
                attempt,
                input: &input,
                resources: &resources,
            };
            let result = self.rt.call_effect(effect.as_ref(), &call);
            let EffectResult {
                mut outcome,
                emits,
                meter,
                ticks,
                crash,
            } = result;
            if crash == Some(CrashPoint::BeforeEffect) {
                return Err(Stop::Crash(CrashPoint::BeforeEffect.as_str().into()));
            }
            // EffectContext.emit: validated, namespaced, never stamped (EMIT-14).
            for e in emits {
                let source = EmitSource::Effect {
                    step_id: s.step_id.clone(),
                    attempt,
                };
                let checked = {
                    let st = self.st();
                    validate_user_emit(
                        &st.state,
                        &source,
                        &e.event_type,
                        e.payload.clone(),
                        e.metadata.as_ref(),
                    )
                };
                match checked {
                    Ok((event_type, payload)) => {
                        self.append(&event_type, payload, e.metadata.clone())
                            .await?;
                    }
                    Err(refused) => {
                        outcome = EffectOutcome::Error(refused.to_string());
                        break;
                    }
                }
            }
            if let Some(m) = meter {
                self.meter(&s.step_id, m).await?;
            }
            if crash == Some(CrashPoint::AfterEffectBeforeAppend) {
                return Err(Stop::Crash(
                    CrashPoint::AfterEffectBeforeAppend.as_str().into(),
                ));
            }
            for _ in 0..ticks.min(EFFECT_TICKS_MAX) {
                YieldNow(false).await;
            }
            let max = u64::from(policy.map_or(1, |p| p.max_attempts));
            let retryable = match &outcome {
                EffectOutcome::Typed { .. } => policy.is_some_and(|p| p.retry_typed),
                EffectOutcome::Error(_) | EffectOutcome::Timeout => true,
                _ => false,
            };
            if retryable && attempt + 1 - first < max {
                attempt += 1;
                self.append(
                    "STEP_RETRYING",
                    json!({"stepId": s.step_id, "attempt": attempt}),
                    None,
                )
                .await?;
                continue;
            }
            let settled = match outcome {
                EffectOutcome::Value(v) => {
                    self.append(
                        "STEP_COMPLETED",
                        json!({"stepId": s.step_id, "output": v.clone()}),
                        None,
                    )
                    .await?;
                    Ok(v)
                }
                EffectOutcome::Typed { channel, payload } => Err(self
                    .record_typed(s, effect.as_ref(), channel, payload)
                    .await?),
                EffectOutcome::Error(message) => {
                    Err(self.record_untyped(&s.step_id, message).await?)
                }
                EffectOutcome::Timeout => Err(self
                    .record_untyped(&s.step_id, "timeout: the effect did not settle".into())
                    .await?),
                EffectOutcome::Cancelled => {
                    self.append("STEP_CANCELLED", json!({"stepId": s.step_id}), None)
                        .await?;
                    self.st().unserved = true;
                    Err(FlowError::untyped("cancelled"))
                }
                EffectOutcome::InDoubt => {
                    self.append(
                        "EFFECT_INDOUBT",
                        json!({"stepId": s.step_id, "attempt": attempt}),
                        None,
                    )
                    .await?;
                    self.st().unserved = true;
                    if crash == Some(CrashPoint::AfterAppend) {
                        return Err(Stop::Crash(CrashPoint::AfterAppend.as_str().into()));
                    }
                    let cond = json!({"stepId": s.step_id, "attempt": attempt})
                        .as_object()
                        .cloned();
                    return self
                        .park(INDOUBT_GATE, None, None, None, cond, None)
                        .await
                        .map(|_| Value::Null);
                }
            };
            if crash == Some(CrashPoint::AfterAppend) {
                return Err(Stop::Crash(CrashPoint::AfterAppend.as_str().into()));
            }
            return settled.map_err(Stop::Error);
        }
    }

    async fn record_untyped(&self, step_id: &str, message: String) -> Result<FlowError, Stop> {
        self.append(
            "STEP_FAILED",
            json!({"stepId": step_id, "error": message.clone()}),
            None,
        )
        .await?;
        self.st().unserved = true;
        Ok(FlowError::untyped(message))
    }

    /// TYPED-04..08: resolve the channel map (step wins wholesale, effect falls back),
    /// validate and parse the payload, cap it, and degrade loudly otherwise.
    async fn record_typed(
        &self,
        s: &StepStmt,
        effect: &dyn Effect,
        channel: String,
        payload: Value,
    ) -> Result<FlowError, Stop> {
        let map = s.errors.clone().or_else(|| effect.declared_errors());
        let schema = map.as_ref().and_then(|m| m.get(&channel));
        let degraded = match schema {
            None => Some((
                "TYPED-05",
                format!("TypedFailure({channel}): channel `{channel}` is not declared for this invocation; recorded untyped"),
            )),
            Some(schema) => match crate::schema::parse_value(schema, &payload) {
                Err(e) => Some(("TYPED-07", format!("TypedFailure({channel}): payload fails the channel schema {e}; recorded untyped"))),
                Ok(parsed) => {
                    let bytes = crate::canonical::canonical_json(&parsed).len();
                    if bytes > TYPED_FAILURE_PAYLOAD_BYTES_MAX {
                        Some((
                            "TYPED-08",
                            format!(
                                "TypedFailure({channel}): payload is {bytes} bytes, over the {TYPED_FAILURE_PAYLOAD_BYTES_MAX}-byte cap; recorded untyped"
                            ),
                        ))
                    } else {
                        let error = format!("TypedFailure({channel})");
                        let event = json!({"stepId": s.step_id, "error": error.clone(), "channel": channel.clone(), "payload": parsed.clone()});
                        self.append("STEP_FAILED", event, None).await?;
                        // EMIT-10: a typed failure is a served outcome; `unserved` stays.
                        return Ok(FlowError { message: error, channel: Some(channel), payload: Some(parsed) });
                    }
                }
            },
        };
        let (rule, message) = degraded.unwrap_or(("TYPED-05", String::new()));
        self.rt
            .diagnose(&self.exec_id, Some(&s.step_id), rule, &message);
        self.record_untyped(&s.step_id, message).await
    }

    /// RES-01/05: meter into `_resources`; exceeding a budget appends QUOTA_EXCEEDED once.
    async fn meter(&self, step_id: &str, measured: Map<String, Value>) -> Result<(), Stop> {
        let before = self.exceeded_dimension();
        let mut payload = measured;
        payload.insert("stepId".into(), json!(step_id));
        self.append("RESOURCE_METERED", Value::Object(payload), None)
            .await?;
        if before.is_none() {
            if let Some(dimension) = self.exceeded_dimension() {
                let (limit, used) = {
                    let st = self.st();
                    let used = st
                        .state
                        .variables
                        .get(keys::RESOURCES)
                        .and_then(|r| r.get(&dimension))
                        .cloned();
                    (self.rt.config.budget.get(&dimension).copied(), used)
                };
                let payload = json!({
                    "dimension": dimension,
                    "limit": limit,
                    "used": used,
                    "reason": format!("budget for `{dimension}` exceeded"),
                });
                self.append("QUOTA_EXCEEDED", payload, None).await?;
            }
        }
        Ok(())
    }

    fn exceeded_dimension(&self) -> Option<String> {
        if self.rt.config.budget.is_empty() {
            return None;
        }
        let st = self.st();
        let resources = st.state.variables.get(keys::RESOURCES)?;
        self.rt
            .config
            .budget
            .iter()
            .find(|(dim, cap)| {
                resources
                    .get(dim.as_str())
                    .and_then(Value::as_f64)
                    .is_some_and(|used| used > **cap)
            })
            .map(|(dim, _)| dim.clone())
    }

    /// REPLAY-08: a human step consumes its `_resumePayloads` entry in order with the
    /// suspend gates, live and on replay past the completed step.
    async fn exec_human(&self, s: &StepStmt, input: Value) -> Result<Value, Stop> {
        let frame = self.st().state.frames.get(&s.step_id).cloned();
        if let Some(f) = frame
            .as_ref()
            .filter(|f| f.status == FrameStatus::Completed)
        {
            let _ = self.take_answer();
            return Ok(f.output.as_ref().map_or(Value::Null, Json::to_value));
        }
        if let Some(answer) = self.take_answer() {
            if frame.is_none() {
                self.append("STEP_STARTED", human_started(s, &input), None)
                    .await?;
            }
            self.append(
                "STEP_COMPLETED",
                json!({"stepId": s.step_id, "output": answer.clone()}),
                None,
            )
            .await?;
            self.st().live_in_segment = true;
            return Ok(answer);
        }
        self.check_reached()?;
        if frame.is_none() {
            self.append("STEP_STARTED", human_started(s, &input), None)
                .await?;
        }
        let gate = s.gate.clone().unwrap_or_else(|| s.step_id.clone());
        // INGRESS-35: the kernel records condition.stepId on a human step's park.
        let cond = json!({"stepId": s.step_id}).as_object().cloned();
        self.park(&gate, None, None, None, cond, None)
            .await
            .map(|_| Value::Null)
    }

    async fn exec_decide(&self, id: &str, decider: &DeciderSpec, ticks: u32) -> Result<(), Stop> {
        if id.starts_with(RESERVED_DECISION_PREFIX) {
            return Err(Stop::Error(FlowError::untyped(format!(
                "EmitRefusedError (reserved-decision-id): decision id `{id}` is reserved for the kernel (INGRESS-33)"
            ))));
        }
        self.visit(decision_key(id));
        if get_decision(&self.st().state, id).is_some() {
            // REPLAY-04: served; the decider is not called.
            return Ok(());
        }
        self.check_reached()?;
        self.st().in_flight += 1;
        for _ in 0..ticks.min(EFFECT_TICKS_MAX) {
            YieldNow(false).await;
        }
        self.rt.count_decider(id);
        let choice = match decider {
            DeciderSpec::Choice(c) => Ok(c.clone()),
            DeciderSpec::Throw(m) => Err(m.clone()),
            DeciderSpec::Named(name) => match self.rt.deciders.get(name) {
                Some(d) => d.decide(id),
                None => Err(format!("no decider is registered as `{name}`")),
            },
        };
        {
            let mut st = self.st();
            st.in_flight -= 1;
            st.live_in_segment = true;
        }
        match choice {
            Ok(choice) => {
                self.append(
                    "DECISION_RECORDED",
                    json!({"id": id, "choice": choice}),
                    None,
                )
                .await?;
                Ok(())
            }
            Err(message) => {
                self.st().unserved = true;
                Err(Stop::Error(FlowError::untyped(format!(
                    "decider threw: {message}"
                ))))
            }
        }
    }

    /// RES-06/07: a grant through the decision seam; advisory only.
    async fn exec_negotiate(&self, id: &str, dimension: &str, request: f64) -> Result<(), Stop> {
        if id.starts_with(RESERVED_DECISION_PREFIX) {
            return Err(Stop::Error(FlowError::untyped(format!(
                "decision id `{id}` is reserved for the kernel (INGRESS-33)"
            ))));
        }
        self.visit(decision_key(id));
        if get_decision(&self.st().state, id).is_some() {
            return Ok(());
        }
        self.check_reached()?;
        let granted = self.rt.negotiate(dimension, request);
        self.st().live_in_segment = true;
        let choice = json!({"dimension": dimension, "request": request, "granted": granted});
        self.append(
            "DECISION_RECORDED",
            json!({"id": id, "choice": choice}),
            None,
        )
        .await?;
        Ok(())
    }

    async fn exec_parallel(&self, branches: &[Vec<Stmt>]) -> Result<(), Stop> {
        self.st().depth += 1;
        let futs = branches.iter().map(|b| Some(self.exec_block(b))).collect();
        let done = JoinAll {
            futs,
            done: Vec::new(),
        }
        .await;
        let pending = {
            let mut st = self.st();
            st.depth -= 1;
            let crashed = done.iter().any(|(_, r)| matches!(r, Err(s) if s.aborts()));
            if st.depth == 0 && !crashed {
                st.pending_snapshot.take()
            } else {
                None
            }
        };
        if let Some((state, sequence)) = pending {
            self.rt
                .write_snapshot(&self.exec_id, &state, sequence)
                .await;
        }
        // Fail-fast join: the first branch to stop (in completion order) decides; the
        // siblings have already run to settlement (TYPED-15).
        for (_, r) in done {
            r?;
        }
        Ok(())
    }

    /// EMIT-01..16: flow-level emit identity, serving and stamping.
    async fn exec_emit(&self, spec: &EmitSpec, opaque: bool) -> Result<(), Stop> {
        let payload = self.resolve(&spec.payload);
        let checked = {
            let st = self.st();
            validate_user_emit(
                &st.state,
                &EmitSource::Flow,
                &spec.event_type,
                payload,
                spec.metadata.as_ref(),
            )
        };
        let (event_type, payload) =
            checked.map_err(|e| Stop::Error(FlowError::untyped(e.to_string())))?;
        let metadata = spec.metadata.clone();
        if opaque {
            // EMIT-13: no JSON form, so no identity: appended unstamped, never skipped.
            // The log records `null` where the payload would be.
            self.append(&event_type, Value::Null, metadata).await?;
            return Ok(());
        }
        if is_known_event_type(&event_type) {
            // EMIT-14: kernel facts are never stamped, whoever emits them.
            self.append(&event_type, payload, metadata).await?;
            return Ok(());
        }
        let stamp = {
            let mut st = self.st();
            let d = crate::digest::emit_digest(st.cursor as u64, &event_type, &payload);
            let n = st.run_emits.get(&d).copied().unwrap_or(0);
            st.run_emits.insert(d.clone(), n + 1);
            let logged = st.logged_emits.get(&d).and_then(Value::as_u64).unwrap_or(0);
            if logged > n && !st.live_in_segment {
                // EMIT-06: the log proves this emit; serve it.
                return Ok(());
            }
            (n >= logged && st.in_flight == 0 && !st.unserved).then_some(d)
        };
        let metadata = match stamp {
            Some(d) => {
                let mut m = metadata.unwrap_or_default();
                m.insert("flowEmit".into(), Value::String(d));
                Some(m)
            }
            None => metadata,
        };
        self.append(&event_type, payload, metadata).await?;
        Ok(())
    }

    /// `receive` / `select`: served from the log, else parks with `waits[]`.
    ///
    /// The candidates are the waits answered in `_waitAnswers` and, per listed topic,
    /// the next message consumed for no wait that this run has not served yet. The one
    /// the log recorded first wins (`select` resolves by log order; ties by list order).
    async fn exec_waits(
        &self,
        waits: &[(String, String)],
        bind: &Option<String>,
        select: bool,
    ) -> Result<(), Stop> {
        let answered = {
            let mut st = self.st();
            let answers = st
                .state
                .variables
                .get(keys::WAIT_ANSWERS)
                .and_then(Value::as_object);
            // (log position, list index, wait id, value, buffered topic)
            let mut best: Option<(u64, usize, String, Value, Option<String>)> = None;
            for (i, (w, t)) in waits.iter().enumerate() {
                let mut offer = |seq: u64, value: Value, topic: Option<String>| {
                    if best.as_ref().is_none_or(|b| (seq, i) < (b.0, b.1)) {
                        best = Some((seq, i, w.clone(), value, topic));
                    }
                };
                if let Some(a) = answers.and_then(|m| m.get(w)) {
                    let seq = st.mail.answered_at.get(w).copied().unwrap_or(u64::MAX);
                    offer(seq, a.clone(), None);
                }
                let taken = st.mail_taken.get(t).copied().unwrap_or(0);
                if let Some((seq, m)) = st.mail.buffered.get(t).and_then(|q| q.get(taken)) {
                    offer(*seq, m.clone(), Some(t.clone()));
                }
            }
            if let Some((_, _, _, _, Some(topic))) = &best {
                *st.mail_taken.entry(topic.clone()).or_default() += 1;
            }
            best.map(|(_, _, w, v, _)| (w, v))
        };
        if let Some((wait_id, answer)) = answered {
            let value = if select {
                json!({"waitId": wait_id, "value": answer})
            } else {
                answer
            };
            self.bind(bind, value);
            return Ok(());
        }
        self.check_reached()?;
        let list: Vec<Value> = waits
            .iter()
            .map(|(w, t)| json!({"waitId": w, "topic": t}))
            .collect();
        let gate = if select {
            "__loom_select__".to_owned()
        } else {
            format!("receive:{}", waits[0].1)
        };
        self.park(&gate, None, None, None, None, Some(Value::Array(list)))
            .await
    }

    /// Replaces every `{"$ref": …}` / `{"$resume": n}` inside `value`.
    fn resolve(&self, value: &Value) -> Value {
        match value {
            Value::Object(m) => {
                if let Some(Ok(r)) = super::script::as_ref_object(m) {
                    return self.read_ref(&r);
                }
                Value::Object(
                    m.iter()
                        .map(|(k, v)| (k.clone(), self.resolve(v)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| self.resolve(v)).collect()),
            other => other.clone(),
        }
    }

    /// Reads a reference; anything missing reads as `null`.
    fn read_ref(&self, r: &Ref) -> Value {
        let st = self.st();
        let base = match &r.root {
            RefRoot::Input => st.state.variables.get(keys::INPUT).cloned(),
            RefRoot::Step(id, field) => {
                st.state.frames.get(id).and_then(|f| match field.as_str() {
                    "output" => f.output.as_ref().map(Json::to_value),
                    "error" => f.error.as_ref().map(Json::to_value),
                    "errorChannel" => f.error_channel.clone().map(Value::String),
                    "errorPayload" => f.error_payload.as_ref().map(Json::to_value),
                    _ => serde_json::to_value(f.status).ok(),
                })
            }
            RefRoot::Decision(id) => get_decision(&st.state, id),
            RefRoot::Var(name) => st.vars.get(name).cloned(),
            RefRoot::Resume(n) => st.state.resume_payloads().get(*n).cloned(),
        }
        .unwrap_or(Value::Null);
        if r.pointer.is_empty() {
            base
        } else {
            base.pointer(&r.pointer).cloned().unwrap_or(Value::Null)
        }
    }
}

fn human_started(s: &StepStmt, input: &Value) -> Value {
    json!({"stepId": s.step_id, "toolId": s.tool_id, "kind": "human", "attempt": 1, "input": input})
}

fn kernel_meta() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("kernel".into(), Value::Bool(true));
    m
}

/// Yields once: the cooperative scheduler's tick.
/// Waits until no other branch of the run has an append in flight, then holds the
/// turn until the returned guard is dropped (also when the branch is dropped mid-append,
/// as an aborting `parallel` join does).
struct AppendTurn<'i, 'a, S, C, T> {
    interp: &'i Interp<'a, S, C, T>,
}

/// Holds a run's append turn; dropping it hands the turn on.
struct AppendTurnGuard<'i> {
    st: &'i Mutex<RunState>,
}

impl Drop for AppendTurnGuard<'_> {
    fn drop(&mut self) {
        let waiters = {
            let mut st = self.st.lock().unwrap_or_else(|p| p.into_inner());
            st.appending = false;
            std::mem::take(&mut st.append_waiters)
        };
        for w in waiters {
            w.wake();
        }
    }
}

impl<'i, S, C, T> Future for AppendTurn<'i, '_, S, C, T> {
    type Output = AppendTurnGuard<'i>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let st_lock = &self.interp.st;
        let mut st = st_lock.lock().unwrap_or_else(|p| p.into_inner());
        if st.appending {
            st.append_waiters.push(cx.waker().clone());
            return Poll::Pending;
        }
        st.appending = true;
        Poll::Ready(AppendTurnGuard { st: st_lock })
    }
}

struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Polls branches in index order every round; returns their results in completion
/// order. A crash, a store error or a divergence aborts at once.
struct JoinAll<'a> {
    futs: Vec<Option<Fut<'a, Result<(), Stop>>>>,
    done: Vec<(usize, Result<(), Stop>)>,
}

impl Future for JoinAll<'_> {
    type Output = Vec<(usize, Result<(), Stop>)>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        for i in 0..this.futs.len() {
            let Some(f) = this.futs[i].as_mut() else {
                continue;
            };
            if let Poll::Ready(r) = f.as_mut().poll(cx) {
                this.futs[i] = None;
                let abort = matches!(&r, Err(stop) if stop.aborts());
                this.done.push((i, r));
                if abort {
                    this.futs.clear();
                    let mut done = std::mem::take(&mut this.done);
                    // The abort decides: move it first.
                    let last = done.len() - 1;
                    done.swap(0, last);
                    return Poll::Ready(done);
                }
            }
        }
        if this.futs.iter().all(Option::is_none) {
            Poll::Ready(std::mem::take(&mut this.done))
        } else {
            Poll::Pending
        }
    }
}
