//! # The reference runtime
//!
//! This module owns the runtime half of the kernel: it interprets flow scripts
//! ([`script`]) over the SPI traits, and it is where the runtime rules live that the
//! pure fold cannot express: resume = re-run served from the log (REPLAY), flow-level
//! emit identity, serving and stamping (EMIT), typed failure channels and their
//! substitution (TYPED), metering and budgets (RES), kernel features and the handshake
//! (ABI), fencing and migration (PLACE), plus the static checks of [`verify`].
//!
//! Key design decisions:
//!
//! - **Resume is a re-run.** Every entry point (start, resume, resumeAs, recover, timer
//!   wake) reads the log, folds it once, and runs the flow from its first statement.
//!   Completed steps, typed failures and decisions are served from the folded state;
//!   gates take `_resumePayloads` entries in order. Each appended event is folded
//!   incrementally, so a run is linear in the log. With a SnapshotStore wired
//!   ([`Runtime::with_snapshots`]) the load restores the latest snapshot and folds only
//!   the tail, and runs write snapshots every N events and on park (see `snapshots`).
//! - **Ingress is not duplicated here.** Every resume goes through
//!   [`crate::ingress::admit`], and its events are appended in one atomic batch with the
//!   optimistic `expected_next` check (and the fence when the store has one), so two
//!   concurrent resumes cannot both succeed.
//! - **Wave 2 is kernel-driven.** Messages reach `receive` / `select` only through
//!   [`Runtime::deliver`], which records them (kernel-stamped) before any flow code
//!   sees them, and `continueAsNew` starts its successor itself; see `wave2`.
//! - **Deterministic by construction.** Time comes from the injected [`Clock`], ids are
//!   `<executionId>:<sequence>`, every map is ordered, and `parallel` is a cooperative,
//!   index-ordered scheduler.
//!
//! Architecture invariant: the runtime depends on no executor, clock or randomness; its
//! futures complete on any executor, and [`block_on`] drives them for stores that never
//! wait on I/O (the in-memory reference stores).

pub mod effects;
mod interp;
pub mod limits;
pub mod script;
mod snapshots;
pub mod verify;
mod wave2;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use serde_json::{json, Map, Value};

pub use effects::{
    Decider, EchoEffect, Effect, EffectCall, EffectMiddleware, EffectOutcome, EffectResult,
    GrantAll, Negotiator, ScriptedEffect, WithErrors,
};
pub use script::{CrashPoint, FlowScript, ScriptError, Stmt};
pub use snapshots::{check_record, LoadReport, LoadTotals, SnapshotPolicy};
pub use verify::{verify_flow, Finding, Wiring};
pub use wave2::{continuation_id, Delivery, Release};

use crate::envelope::EventEnvelope;
use crate::fold::{keys, ExecutionState, FoldVersion};
use crate::ingress::{
    self, ExecutionAuthorizer, GateConfig, IngressError, NewEvent, ResumeAuthenticator, ResumePath,
    ResumeRequest,
};
use crate::spi::{
    Clock, EventStore, EventStoreMethod, FenceToken, SnapshotStore, StoreError, StoreErrorKind,
    Timer, TimerStore,
};
use crate::versions::{effective_syscalls, KernelFeatures, KERNEL_ABI_VERSION, WIRE_ABI_VERSION};
use interp::Interp;
use limits::{DIAGNOSTICS_KEPT_MAX, TIMERS_PER_FIRE_MAX};

/// The control-stream prefix the EventStore SPI reserves (SPI-12): never an execution.
pub const QUARANTINE_PREFIX: &str = "__loom_quarantine__:";

/// What the replay-divergence detector does (FOLD-37).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DivergenceMode {
    /// Refuse the run and park it on `__loom_diverged__`.
    #[default]
    Fail,
    /// Do not check.
    Off,
}

/// Runtime configuration. Everything defaults to off (G2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuntimeConfig {
    /// `kernel.features`.
    pub features: KernelFeatures,
    /// The replay-divergence detector's mode.
    pub divergence: DivergenceMode,
    /// Budget caps per resource dimension (RES-05). Empty = no budget.
    pub budget: BTreeMap<String, f64>,
    /// Acquire the store's fence before appending, when the store claims `acquireFence`
    /// (PLACE-05). Off by default: a store without fencing is single-node (SPI-04).
    pub fencing: bool,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// `EXECUTION_COMPLETED`.
    Completed {
        /// The output.
        output: Value,
    },
    /// `EXECUTION_FAILED`.
    Failed {
        /// The error.
        error: String,
    },
    /// Parked on a gate.
    Parked {
        /// The gate.
        gate: String,
    },
    /// A worker crash: the run stopped; nothing more was appended.
    Crashed {
        /// Where (`before-effect`, `after-effect-before-append`, `after-append`, or
        /// `after-append-<n>` for an injected fault).
        point: String,
    },
    /// The divergence detector parked the run on `__loom_diverged__`.
    Diverged {
        /// Why.
        reason: String,
    },
    /// `EXECUTION_CANCELLED`.
    Cancelled,
    /// `continueAsNew`.
    Continued {
        /// The next execution's id.
        to: String,
    },
}

/// Why a runtime call did nothing (or stopped).
#[derive(Debug, Clone, PartialEq)]
pub enum RuntimeError {
    /// The ingress gate refused the resume; nothing was appended.
    Ingress(IngressError),
    /// The store refused: a newer worker holds the fence (PLACE-05); nothing appended.
    Fenced(StoreError),
    /// The store's optimistic check failed: someone else appended first.
    Conflict(StoreError),
    /// Any other store error.
    Store(StoreError),
    /// No flow is registered under this id.
    UnknownFlow(String),
    /// The id is reserved (`__loom_quarantine__:`, SPI-12) or empty.
    ReservedExecutionId(String),
    /// `start` on an execution that already has a log.
    AlreadyStarted(String),
    /// The execution has no log.
    NotStarted(String),
    /// The recorded code pin differs from the flow's code (PLACE-08): use `resume_as`.
    FlowCodeMismatch {
        /// The recorded `codeHash`.
        recorded: String,
        /// The current flow's fingerprint.
        current: Option<String>,
    },
    /// A `resume_as` transform failed; nothing was appended (INGRESS-20).
    TransformFailed(String),
    /// `cancel` on a terminal execution.
    Terminal(String),
}

impl RuntimeError {
    fn from_store(e: StoreError) -> RuntimeError {
        match e.kind {
            StoreErrorKind::Fenced { .. } => RuntimeError::Fenced(e),
            StoreErrorKind::Conflict { .. } | StoreErrorKind::AnchorChanged => {
                RuntimeError::Conflict(e)
            }
            _ => RuntimeError::Store(e),
        }
    }
}

impl std::fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuntimeError::Ingress(e) => write!(f, "{e}"),
            RuntimeError::Fenced(e) => write!(f, "fenced out by a newer worker (PLACE-05): {e}"),
            RuntimeError::Conflict(e) => write!(f, "concurrent append: {e}"),
            RuntimeError::Store(e) => write!(f, "store: {e}"),
            RuntimeError::UnknownFlow(id) => write!(f, "no flow is registered as `{id}`"),
            RuntimeError::ReservedExecutionId(id) => {
                write!(f, "execution id `{id}` is reserved (the `{QUARANTINE_PREFIX}` control-stream prefix, SPI-12) or empty")
            }
            RuntimeError::AlreadyStarted(id) => write!(f, "execution `{id}` already has a log"),
            RuntimeError::NotStarted(id) => write!(f, "execution `{id}` has no log"),
            RuntimeError::FlowCodeMismatch { recorded, current } => write!(
                f,
                "FlowCodeMismatchError: the log pins code `{recorded}`, the flow is {current:?}; resumeAs onto fixed code (PLACE-08)"
            ),
            RuntimeError::TransformFailed(why) => write!(f, "the resumeAs transform failed, nothing appended (INGRESS-20): {why}"),
            RuntimeError::Terminal(id) => write!(f, "execution `{id}` is already terminal"),
        }
    }
}

impl std::error::Error for RuntimeError {}

impl From<IngressError> for RuntimeError {
    fn from(e: IngressError) -> Self {
        RuntimeError::Ingress(e)
    }
}

/// An operator-supplied `resumeAs` state transform (K11.5): the execution input in,
/// the migrated input (or a refusal) out.
pub type Transform<'a> = &'a (dyn Fn(&Value) -> Result<Value, String> + Sync);

/// A crash injected into the next run: it stops right after its n-th append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultPlan {
    /// Crash after this many appends of the next run (1 = right after the first).
    pub crash_after_appends: u64,
}

/// Something the runtime reports outside the event log (a loud degradation, TYPED-05).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The execution.
    pub execution_id: String,
    /// The step, when there is one.
    pub step_id: Option<String>,
    /// The rule that explains it.
    pub rule: &'static str,
    /// What happened.
    pub message: String,
}

/// A TimerStore for runtimes wired without one: it holds nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTimerStore;

impl TimerStore for NoTimerStore {
    fn spi_version(&self) -> String {
        crate::spi::TIMER_STORE_SPI_VERSION.to_owned()
    }
    async fn schedule(&self, timer: Timer) -> Result<Timer, StoreError> {
        Ok(timer)
    }
    async fn due(&self, _now_ms: i64, _limit: usize) -> Result<Vec<Timer>, StoreError> {
        Ok(Vec::new())
    }
    async fn cancel(&self, _execution_id: &str, _key: &str) -> Result<bool, StoreError> {
        Ok(false)
    }
}

/// Invocation counts, for tests and reports (the "effect spy").
#[derive(Debug, Default)]
struct Spy {
    effect_calls: BTreeMap<String, u64>,
    step_calls: BTreeMap<String, u64>,
    decider_calls: BTreeMap<String, u64>,
    negotiator_calls: u64,
    diagnostics: Vec<Diagnostic>,
    last_load: Option<LoadReport>,
    load_totals: LoadTotals,
}

/// The reference runtime over an [`EventStore`], a [`Clock`] and an optional
/// [`TimerStore`].
pub struct Runtime<S, C, T = NoTimerStore> {
    store: Arc<S>,
    clock: C,
    timers: Option<Arc<T>>,
    config: RuntimeConfig,
    flows: BTreeMap<String, Arc<FlowScript>>,
    effects: BTreeMap<String, Arc<dyn Effect>>,
    deciders: BTreeMap<String, Arc<dyn Decider>>,
    negotiator: Arc<dyn Negotiator>,
    middleware: Vec<Arc<dyn EffectMiddleware>>,
    authenticator: Option<Arc<dyn ResumeAuthenticator + Send + Sync>>,
    authorizer: Option<Arc<dyn ExecutionAuthorizer + Send + Sync>>,
    spy: Mutex<Spy>,
    fault: Mutex<Option<FaultPlan>>,
    snapshots: Option<snapshots::Snapshots>,
    /// The schema minor whose fold this runtime reproduces (mixed fleets); current
    /// unless [`Runtime::folding_at`] says otherwise.
    fold_version: FoldVersion,
}

/// What firing one due timer found.
enum Fire {
    /// The timer's park is the current park: the wake ran (or failed).
    Ran(Result<RunOutcome, RuntimeError>),
    /// The park was answered, cancelled or replaced, or the execution ended: the
    /// timer can never wake anything and is dropped.
    ParkGone,
    /// The execution is running and its log holds no park under the timer's key yet:
    /// the parking run scheduled the timer and its append has not landed. The timer
    /// stays.
    NotYetParked,
}

/// Whether a timer whose key is not the current park's is gone for good or its park
/// is still to come. A park under `key` that is already in the log has been answered
/// (it is not current any more); an execution that is parked on another gate or has
/// ended will not append this park (a run that crashed between scheduling and
/// parking re-parks under a new key when it is recovered).
fn park_absent(log: &[EventEnvelope], state: &ExecutionState, key: &str) -> Fire {
    let landed = log.iter().any(|e| {
        e.event_type == "EXECUTION_SUSPENDED"
            && e.payload
                .get("on")
                .and_then(Value::as_str)
                .zip(e.payload.get("wakeAt").and_then(Value::as_i64))
                .is_some_and(|(on, w)| timer_key(on, w) == key)
    });
    if landed || state.status.is_terminal() || state.suspended_on().is_some() {
        Fire::ParkGone
    } else {
        Fire::NotYetParked
    }
}

/// The key a timed park's timer is stored under: the gate and the wake time, so a
/// stale timer can never wake a later park.
pub fn timer_key(gate: &str, wake_at_ms: i64) -> String {
    format!("{gate}@{wake_at_ms}")
}

/// The wire handshake: `kernelAbiVersion` next to the effective syscall list
/// (ABI-04, ABI-05, GAP-21).
pub fn handshake(features: &KernelFeatures) -> Value {
    json!({
        "kernelAbiVersion": KERNEL_ABI_VERSION,
        "wireAbiVersion": WIRE_ABI_VERSION,
        "syscalls": effective_syscalls(features),
    })
}

/// The `flowHash` a start records: `fnv1a:` by default, `sha256:` behind
/// `kernel.features.sha256FlowHash` (FOLD-34).
pub fn flow_hash(script: &FlowScript, features: &KernelFeatures) -> String {
    // An empty `resumeSchemas` map declares nothing: hash the flow as if it were absent,
    // so wiring the capability in its off state leaves the log byte-identical (G2,
    // INGRESS-23).
    let mut source = script.source.clone();
    if let Some(obj) = source.as_object_mut() {
        if obj
            .get("resumeSchemas")
            .and_then(Value::as_object)
            .is_some_and(|m| m.is_empty())
        {
            obj.remove("resumeSchemas");
        }
    }
    if features.sha256_flow_hash {
        crate::digest::sha256_flow_hash(&source)
    } else {
        crate::digest::fnv1a_flow_hash(&source)
    }
}

/// Drives a future to completion on the current thread. Meant for stores that never
/// wait on I/O (the in-memory reference stores): it polls in a loop.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

fn check_execution_id(id: &str) -> Result<(), RuntimeError> {
    if id.is_empty() || id.starts_with(QUARANTINE_PREFIX) {
        Err(RuntimeError::ReservedExecutionId(id.to_owned()))
    } else {
        Ok(())
    }
}

impl<S: EventStore, C: Clock> Runtime<S, C, NoTimerStore> {
    /// A runtime over `store` with `clock`, no TimerStore and nothing registered.
    pub fn new(store: Arc<S>, clock: C, config: RuntimeConfig) -> Self {
        Runtime {
            store,
            clock,
            timers: None,
            config,
            flows: BTreeMap::new(),
            effects: BTreeMap::new(),
            deciders: BTreeMap::new(),
            negotiator: Arc::new(GrantAll),
            middleware: Vec::new(),
            authenticator: None,
            authorizer: None,
            spy: Mutex::new(Spy::default()),
            fault: Mutex::new(None),
            snapshots: None,
            fold_version: FoldVersion::CURRENT,
        }
    }

    /// The same runtime with a TimerStore wired: timed suspends derive `wakeAt` from
    /// `timeout` and are woken by [`Runtime::fire_timers`] (REPLAY-10, REPLAY-12).
    pub fn with_timers<T2: TimerStore>(self, timers: Arc<T2>) -> Runtime<S, C, T2> {
        Runtime {
            store: self.store,
            clock: self.clock,
            timers: Some(timers),
            config: self.config,
            flows: self.flows,
            effects: self.effects,
            deciders: self.deciders,
            negotiator: self.negotiator,
            middleware: self.middleware,
            authenticator: self.authenticator,
            authorizer: self.authorizer,
            spy: self.spy,
            fault: self.fault,
            snapshots: self.snapshots,
            fold_version: self.fold_version,
        }
    }
}

impl<S, C, T> Runtime<S, C, T> {
    /// The same runtime folding as a node of schema `version` would: the state every
    /// run folds (whole log, snapshot tail, each appended event) follows that minor's
    /// fold, snapshots are written labelled with it, and a snapshot labelled with a
    /// newer schema is refused as such a node refuses it (the whole log is folded
    /// instead, SNAP-05). The seam exists to reproduce mixed fleets during rolling
    /// upgrades (SNAP-07, SNAP-11); it does not change what the runtime appends (event
    /// bytes did not change across these minors, COMPAT-09), nor the ingress gate's
    /// own fold, which stays current.
    pub fn folding_at(mut self, version: FoldVersion) -> Self {
        self.fold_version = version;
        self
    }

    /// The schema minor whose fold this runtime reproduces.
    pub fn fold_version(&self) -> FoldVersion {
        self.fold_version
    }

    /// Folds `events` onto `state` with this runtime's fold version.
    pub(crate) fn fold_with<E: std::borrow::Borrow<EventEnvelope>>(
        &self,
        state: ExecutionState,
        events: impl IntoIterator<Item = E>,
    ) -> ExecutionState {
        crate::fold::fold_versioned(
            state,
            events,
            self.fold_version,
            &mut crate::fold::NoDiagnostics,
        )
    }
}

impl<S: EventStore, C: Clock, T: TimerStore> Runtime<S, C, T> {
    /// The same runtime with a SnapshotStore wired: runs write snapshots as `policy`
    /// says and on park, and every load restores the latest usable snapshot and folds
    /// only the events after it (REPLAY-15; see `snapshots`). Without one, every load
    /// folds the whole log.
    pub fn with_snapshots<P: SnapshotStore + 'static>(
        mut self,
        store: Arc<P>,
        policy: SnapshotPolicy,
    ) -> Self {
        self.snapshots = Some(snapshots::Snapshots { store, policy });
        self
    }

    /// Registers a parsed flow under its `flowId`.
    pub fn register_flow(&mut self, script: FlowScript) {
        self.flows.insert(script.flow_id.clone(), Arc::new(script));
    }

    /// Registers a flow parsed once and shared (a host that builds many runtimes over
    /// the same flows parses each once).
    pub fn register_flow_shared(&mut self, script: Arc<FlowScript>) {
        self.flows.insert(script.flow_id.clone(), script);
    }

    /// Parses (with this runtime's features) and registers a flow.
    pub fn register_flow_json(&mut self, script: &Value) -> Result<(), ScriptError> {
        let parsed = FlowScript::parse(script, &self.config.features)?;
        self.register_flow(parsed);
        Ok(())
    }

    /// Registers an effect for a tool id; it wins over a script's scripted effect.
    pub fn register_effect(&mut self, tool_id: &str, effect: impl Effect + 'static) {
        self.effects.insert(tool_id.to_owned(), Arc::new(effect));
    }

    /// Registers a decider that `decide` statements name with `decider`.
    pub fn register_decider(&mut self, name: &str, decider: impl Decider + 'static) {
        self.deciders.insert(name.to_owned(), Arc::new(decider));
    }

    /// Sets the budget negotiator (default: grant what is asked).
    pub fn set_negotiator(&mut self, negotiator: impl Negotiator + 'static) {
        self.negotiator = Arc::new(negotiator);
    }

    /// Appends a middleware to the chain (outermost first).
    pub fn add_middleware(&mut self, middleware: impl EffectMiddleware + 'static) {
        self.middleware.push(Arc::new(middleware));
    }

    /// Wires a ResumeAuthenticator (K12, INGRESS-21).
    pub fn set_authenticator(
        &mut self,
        authenticator: impl ResumeAuthenticator + Send + Sync + 'static,
    ) {
        self.authenticator = Some(Arc::new(authenticator));
    }

    /// Wires an execution authorizer (INGRESS-38).
    pub fn set_authorizer(&mut self, authorizer: impl ExecutionAuthorizer + Send + Sync + 'static) {
        self.authorizer = Some(Arc::new(authorizer));
    }

    /// Injects a crash into the next run (consumed by it).
    pub fn inject_fault(&self, plan: FaultPlan) {
        *self.fault.lock().unwrap_or_else(|p| p.into_inner()) = Some(plan);
    }

    /// The configuration.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// The store.
    pub fn store(&self) -> &Arc<S> {
        &self.store
    }

    /// This runtime's handshake (see [`handshake`]).
    pub fn handshake(&self) -> Value {
        handshake(&self.config.features)
    }

    /// How many times the effect of `tool_id` was invoked by this runtime.
    pub fn effect_calls(&self, tool_id: &str) -> u64 {
        self.spy().effect_calls.get(tool_id).copied().unwrap_or(0)
    }

    /// How many times an effect was invoked for `step_id` by this runtime.
    pub fn step_calls(&self, step_id: &str) -> u64 {
        self.spy().step_calls.get(step_id).copied().unwrap_or(0)
    }

    /// How many times the decider of decision `id` was called by this runtime.
    pub fn decider_calls(&self, id: &str) -> u64 {
        self.spy().decider_calls.get(id).copied().unwrap_or(0)
    }

    /// How many times the budget negotiator was called.
    pub fn negotiator_calls(&self) -> u64 {
        self.spy().negotiator_calls
    }

    /// How the last load of an execution went: from a snapshot plus its tail, or from
    /// the whole log (see [`LoadReport`]).
    pub fn last_load(&self) -> Option<LoadReport> {
        self.spy().last_load.clone()
    }

    /// Counts over every load this runtime made with a SnapshotStore wired.
    pub fn load_totals(&self) -> LoadTotals {
        self.spy().load_totals
    }

    /// The execution's folded state, loaded exactly as a resume loads it (the latest
    /// usable snapshot plus the tail when a SnapshotStore is wired).
    pub async fn load_state(&self, execution_id: &str) -> Result<ExecutionState, RuntimeError> {
        check_execution_id(execution_id)?;
        self.read(execution_id).await.map(|(_, state)| state)
    }

    /// Whether a run writes a snapshot after appending the event at `sequence`.
    pub(crate) fn snapshot_due(&self, sequence: u64) -> bool {
        self.snapshots
            .as_ref()
            .is_some_and(|s| s.policy.due_at(sequence))
    }

    /// Whether a run writes a snapshot when it parks.
    pub(crate) fn snapshot_on_park(&self) -> bool {
        self.snapshots.as_ref().is_some_and(|s| s.policy.on_park)
    }

    /// Writes a snapshot of `state`, which covers the log through `sequence`. A failed
    /// write is a diagnostic: snapshots only bound the replay tail (SNAP-02).
    pub(crate) async fn write_snapshot(
        &self,
        execution_id: &str,
        state: &ExecutionState,
        sequence: u64,
    ) {
        if let Some(s) = &self.snapshots {
            if let Err(msg) =
                snapshots::save(s, execution_id, state, sequence, self.fold_version).await
            {
                self.diagnose(execution_id, None, "REPLAY-15", &msg);
            }
        }
    }

    /// Diagnostics reported outside the log (oldest first).
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.spy().diagnostics.clone()
    }

    fn spy(&self) -> MutexGuard<'_, Spy> {
        self.spy.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn diagnose(
        &self,
        execution_id: &str,
        step_id: Option<&str>,
        rule: &'static str,
        message: &str,
    ) {
        let mut spy = self.spy();
        if spy.diagnostics.len() >= DIAGNOSTICS_KEPT_MAX {
            spy.diagnostics.remove(0);
        }
        spy.diagnostics.push(Diagnostic {
            execution_id: execution_id.to_owned(),
            step_id: step_id.map(str::to_owned),
            rule,
            message: message.to_owned(),
        });
    }

    pub(crate) fn count_decider(&self, id: &str) {
        *self.spy().decider_calls.entry(id.to_owned()).or_default() += 1;
    }

    pub(crate) fn negotiate(&self, dimension: &str, request: f64) -> f64 {
        self.spy().negotiator_calls += 1;
        self.negotiator.negotiate(dimension, request)
    }

    /// Runs one attempt through the middleware chain; counts real invocations.
    pub(crate) fn call_effect(&self, effect: &dyn Effect, call: &EffectCall<'_>) -> EffectResult {
        let mut inner = |c: &EffectCall<'_>| {
            let r = effect.call(c);
            if r.crash != Some(CrashPoint::BeforeEffect) {
                let mut spy = self.spy();
                *spy.effect_calls.entry(c.tool_id.to_owned()).or_default() += 1;
                *spy.step_calls.entry(c.step_id.to_owned()).or_default() += 1;
            }
            r
        };
        fn chain(
            mw: &[Arc<dyn EffectMiddleware>],
            call: &EffectCall<'_>,
            inner: &mut dyn FnMut(&EffectCall<'_>) -> EffectResult,
        ) -> EffectResult {
            match mw.split_first() {
                None => inner(call),
                Some((first, rest)) => first.around(call, &mut |c| chain(rest, c, inner)),
            }
        }
        chain(&self.middleware, call, &mut inner)
    }

    fn flow(&self, flow_id: &str) -> Result<Arc<FlowScript>, RuntimeError> {
        self.flows
            .get(flow_id)
            .cloned()
            .ok_or_else(|| RuntimeError::UnknownFlow(flow_id.to_owned()))
    }

    /// The flow an execution runs now: the last `EXECUTION_MIGRATED.flowId`, else the
    /// started flow.
    fn current_flow(&self, log: &[EventEnvelope]) -> Result<Arc<FlowScript>, RuntimeError> {
        let migrated = log
            .iter()
            .rev()
            .filter(|e| e.event_type == "EXECUTION_MIGRATED")
            .find_map(|e| e.payload.get("flowId").and_then(Value::as_str));
        let started = log
            .iter()
            .find(|e| e.event_type == "EXECUTION_STARTED")
            .and_then(|e| e.payload.get("flowId").and_then(Value::as_str));
        let id = migrated
            .or(started)
            .or(log.first().map(|e| e.workflow_id.as_str()))
            .unwrap_or("");
        self.flow(id)
    }

    async fn fence(&self, execution_id: &str) -> Result<Option<FenceToken>, RuntimeError> {
        if !self.config.fencing
            || !self
                .store
                .capabilities()
                .claims(EventStoreMethod::AcquireFence)
        {
            return Ok(None);
        }
        self.store
            .acquire_fence(execution_id)
            .await
            .map(Some)
            .map_err(RuntimeError::from_store)
    }

    async fn read(
        &self,
        execution_id: &str,
    ) -> Result<(Vec<EventEnvelope>, ExecutionState), RuntimeError> {
        let log = self
            .store
            .read(execution_id)
            .await
            .map_err(RuntimeError::from_store)?;
        if log.is_empty() {
            return Err(RuntimeError::NotStarted(execution_id.to_owned()));
        }
        let Some(s) = &self.snapshots else {
            let state = self.fold_with(ExecutionState::new(), &log);
            return Ok((log, state));
        };
        let loaded = snapshots::load(s, execution_id, &log, self.fold_version).await;
        if let Some((rule, msg)) = &loaded.diagnostic {
            self.diagnose(execution_id, None, rule, msg);
        }
        let mut spy = self.spy();
        spy.load_totals.add(&loaded.report);
        spy.last_load = Some(loaded.report);
        drop(spy);
        Ok((log, loaded.state))
    }

    fn take_fault(&self) -> Option<u64> {
        self.fault
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .map(|f| f.crash_after_appends)
    }

    fn gate_config<'a>(&'a self, script: &'a FlowScript) -> GateConfig<'a> {
        GateConfig {
            resume_schemas: script.resume_schemas.as_ref(),
            authenticator: self
                .authenticator
                .as_deref()
                .map(|a| a as &dyn ResumeAuthenticator),
            authorizer: self
                .authorizer
                .as_deref()
                .map(|a| a as &dyn ExecutionAuthorizer),
        }
    }

    /// Starts an execution of `flow_id` with `input` and runs it until it parks, ends
    /// or crashes. Refuses an id under the quarantine prefix (SPI-12).
    pub async fn start(
        &self,
        execution_id: &str,
        flow_id: &str,
        input: Value,
    ) -> Result<RunOutcome, RuntimeError> {
        check_execution_id(execution_id)?;
        let script = self.flow(flow_id)?;
        let existing = self
            .store
            .read(execution_id)
            .await
            .map_err(RuntimeError::from_store)?;
        if !existing.is_empty() {
            return Err(RuntimeError::AlreadyStarted(execution_id.to_owned()));
        }
        let fence = self.fence(execution_id).await?;
        let mut started = Map::new();
        started.insert("input".into(), input);
        started.insert("flowId".into(), json!(script.flow_id));
        started.insert(
            "flowHash".into(),
            json!(flow_hash(&script, &self.config.features)),
        );
        if let Some(code) = &script.code_fingerprint {
            // FOLD-33 (R7): the code pin is recorded when the flow supplies one.
            started.insert("codeHash".into(), json!(code));
        }
        let interp = Interp::new(
            self,
            execution_id,
            flow_id,
            script,
            interp::Start {
                state: ExecutionState::new(),
                next_seq: 0,
                fence,
                crash_after: self.take_fault(),
                check_divergence: true,
                mail: interp::MailLog::default(),
            },
        );
        let outcome = interp.run(Some(Value::Object(started))).await;
        self.follow_continuations(execution_id, outcome).await
    }

    /// Resumes a parked execution: the ingress gate admits or refuses (nothing appended
    /// on refusal), the admitted events are appended atomically, and the flow re-runs.
    pub async fn resume(
        &self,
        execution_id: &str,
        request: ResumeRequest,
    ) -> Result<RunOutcome, RuntimeError> {
        check_execution_id(execution_id)?;
        let (log, state) = self.read(execution_id).await?;
        let script = self.current_flow(&log)?;
        let events = ingress::admit(
            execution_id,
            &state,
            &log,
            ResumePath::Resume,
            &request,
            &self.gate_config(&script),
        )?;
        self.rerun(execution_id, &log, state, events, script, true)
            .await
    }

    /// Re-drives a crashed execution (`EXECUTION_RECOVERED`): records nothing
    /// (INGRESS-06) and re-runs. A recorded code pin that differs from the flow's is a
    /// `FlowCodeMismatch` (PLACE-08).
    pub async fn recover(&self, execution_id: &str) -> Result<RunOutcome, RuntimeError> {
        check_execution_id(execution_id)?;
        let (log, state) = self.read(execution_id).await?;
        if let Some(to) = wave2::continued_to(&state) {
            // A continued execution is terminal; recovering it starts its successor when
            // a crash came between `EXECUTION_CONTINUED` and the successor's start.
            return self
                .follow_continuations(execution_id, Ok(RunOutcome::Continued { to }))
                .await;
        }
        let script = self.current_flow(&log)?;
        if let Some(recorded) = state.variables.get(keys::CODE_HASH).and_then(Value::as_str) {
            if script.code_fingerprint.as_deref() != Some(recorded) {
                return Err(RuntimeError::FlowCodeMismatch {
                    recorded: recorded.to_owned(),
                    current: script.code_fingerprint.clone(),
                });
            }
        }
        let request = ResumeRequest::new("EXECUTION_RECOVERED", Value::Null);
        let events = ingress::admit(
            execution_id,
            &state,
            &log,
            ResumePath::Recover,
            &request,
            &self.gate_config(&script),
        )?;
        self.rerun(execution_id, &log, state, events, script, true)
            .await
    }

    /// `resumeAs` (K11.3): moves the execution onto `target_flow_id`, optionally
    /// migrating its input with `transform` (K11.5). The transform's RESULT is recorded
    /// on `EXECUTION_MIGRATED.migratedInput` (INGRESS-19); a failing transform appends
    /// nothing (INGRESS-20). The ingress gate uses the TARGET flow's `resumeSchemas`.
    pub async fn resume_as(
        &self,
        execution_id: &str,
        request: ResumeRequest,
        target_flow_id: &str,
        transform: Option<Transform<'_>>,
    ) -> Result<RunOutcome, RuntimeError> {
        check_execution_id(execution_id)?;
        let (log, state) = self.read(execution_id).await?;
        let target = self.flow(target_flow_id)?;
        let admitted = ingress::admit(
            execution_id,
            &state,
            &log,
            ResumePath::ResumeAs,
            &request,
            &self.gate_config(&target),
        )?;
        let mut migrated = Map::new();
        migrated.insert("flowId".into(), json!(target.flow_id));
        if let Some(t) = transform {
            let input = state
                .variables
                .get(keys::INPUT)
                .cloned()
                .unwrap_or(Value::Null);
            let result = t(&input).map_err(RuntimeError::TransformFailed)?;
            migrated.insert("migratedInput".into(), result);
        }
        if let Some(code) = &target.code_fingerprint {
            migrated.insert("toCodeHash".into(), json!(code));
        }
        let mut events = vec![NewEvent {
            event_type: "EXECUTION_MIGRATED".into(),
            payload: Value::Object(migrated),
            metadata: None,
        }];
        events.extend(admitted);
        self.rerun(execution_id, &log, state, events, target, false)
            .await
    }

    /// Cancels a non-terminal execution (`EXECUTION_CANCELLED`) and drops its timer.
    pub async fn cancel(&self, execution_id: &str) -> Result<RunOutcome, RuntimeError> {
        check_execution_id(execution_id)?;
        let (log, state) = self.read(execution_id).await?;
        if state.status.is_terminal() {
            return Err(RuntimeError::Terminal(execution_id.to_owned()));
        }
        let fence = self.fence(execution_id).await?;
        let event = NewEvent {
            event_type: "EXECUTION_CANCELLED".into(),
            payload: json!({}),
            metadata: None,
        };
        self.append_batch(execution_id, &log, vec![event], fence)
            .await?;
        if let (Some(timers), Some(park)) = (&self.timers, state.suspended_on()) {
            if let (Some(on), Some(w)) = (
                park.get("on").and_then(Value::as_str),
                park.get("wakeAt").and_then(Value::as_i64),
            ) {
                timers
                    .cancel(execution_id, &timer_key(on, w))
                    .await
                    .map_err(RuntimeError::Store)?;
            }
        }
        Ok(RunOutcome::Cancelled)
    }

    /// Fires every timer due at `now_ms`: each becomes the kernel's `TIMER_FIRED` wake,
    /// recorded as a passthrough `{firedAt: wakeAt}` (GAP-25), and the flow re-runs.
    /// A timer whose park is gone (answered, cancelled, re-parked) is dropped.
    pub async fn fire_timers(
        &self,
        now_ms: i64,
    ) -> Result<Vec<(String, Result<RunOutcome, RuntimeError>)>, RuntimeError> {
        let Some(timers) = self.timers.clone() else {
            return Ok(Vec::new());
        };
        let due = timers
            .due(now_ms, TIMERS_PER_FIRE_MAX)
            .await
            .map_err(RuntimeError::Store)?;
        let mut out = Vec::new();
        for timer in due {
            let id = timer.execution_id.clone();
            match self.fire_one(&timer).await {
                // The park has not landed yet: the timer is scheduled before the park
                // is appended (REPLAY-17), so a worker can see a due timer (a 0 ms
                // sleep) while the parking run's append is in flight. Cancelling it
                // here would leave the park asleep forever: nothing else wakes a timed
                // park. Found by the deploy simulator (REPLAY-10).
                Fire::NotYetParked => {}
                // Keep the timer when the fire failed (a store error, a lost fence, a
                // partition before TIMER_FIRED was appended): another worker, or the
                // next call, fires it again. Delivery is at least once; the ingress
                // gate makes a second TIMER_FIRED harmless. Found by the deploy
                // simulator (REPLAY-10).
                Fire::Ran(Err(e)) => out.push((id, Err(e))),
                Fire::Ran(Ok(outcome)) => {
                    timers
                        .cancel(&timer.execution_id, &timer.key)
                        .await
                        .map_err(RuntimeError::Store)?;
                    out.push((id, Ok(outcome)));
                }
                Fire::ParkGone => {
                    timers
                        .cancel(&timer.execution_id, &timer.key)
                        .await
                        .map_err(RuntimeError::Store)?;
                }
            }
        }
        Ok(out)
    }

    async fn fire_one(&self, timer: &Timer) -> Fire {
        let (log, state) = match self.read(&timer.execution_id).await {
            Ok(x) => x,
            Err(e) => return Fire::Ran(Err(e)),
        };
        let current = state.suspended_on().and_then(|p| {
            Some(timer_key(
                p.get("on").and_then(Value::as_str)?,
                p.get("wakeAt").and_then(Value::as_i64)?,
            ))
        });
        if current.as_deref() != Some(timer.key.as_str()) {
            return park_absent(&log, &state, &timer.key);
        }
        let script = match self.current_flow(&log) {
            Ok(s) => s,
            Err(e) => return Fire::Ran(Err(e)),
        };
        let request = ResumeRequest::new("TIMER_FIRED", Value::Null);
        let events = match ingress::admit(
            &timer.execution_id,
            &state,
            &log,
            ResumePath::Timer,
            &request,
            &self.gate_config(&script),
        ) {
            Ok(events) => events,
            Err(e) => return Fire::Ran(Err(e.into())),
        };
        Fire::Ran(
            self.rerun(&timer.execution_id, &log, state, events, script, true)
                .await,
        )
    }

    async fn append_batch(
        &self,
        execution_id: &str,
        log: &[EventEnvelope],
        events: Vec<NewEvent>,
        fence: Option<FenceToken>,
    ) -> Result<Vec<EventEnvelope>, RuntimeError> {
        let next = log.last().map_or(0, |e| e.sequence + 1);
        let workflow_id = log
            .first()
            .map(|e| e.workflow_id.clone())
            .unwrap_or_default();
        let now = self.clock.now_ms();
        let envs: Vec<EventEnvelope> = events
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                let sequence = next + i as u64;
                EventEnvelope {
                    id: format!("{execution_id}:{sequence}"),
                    workflow_id: workflow_id.clone(),
                    execution_id: execution_id.to_owned(),
                    event_type: e.event_type,
                    sequence,
                    timestamp_ms: now,
                    payload: e.payload.into(),
                    metadata: e.metadata,
                }
            })
            .collect();
        if !envs.is_empty() {
            self.store
                .append(execution_id, next, envs.clone(), fence)
                .await
                .map_err(RuntimeError::from_store)?;
        }
        Ok(envs)
    }

    /// Appends admitted events atomically, then re-runs the flow over the whole log.
    async fn rerun(
        &self,
        execution_id: &str,
        log: &[EventEnvelope],
        state: ExecutionState,
        events: Vec<NewEvent>,
        script: Arc<FlowScript>,
        check_divergence: bool,
    ) -> Result<RunOutcome, RuntimeError> {
        let fence = self.fence(execution_id).await?;
        let appended = self.append_batch(execution_id, log, events, fence).await?;
        self.run_appended(
            execution_id,
            log,
            state,
            appended,
            fence,
            script,
            check_divergence,
        )
        .await
    }

    /// Re-runs the flow over `log` plus the events just `appended` for it.
    #[allow(clippy::too_many_arguments)]
    async fn run_appended(
        &self,
        execution_id: &str,
        log: &[EventEnvelope],
        state: ExecutionState,
        appended: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
        script: Arc<FlowScript>,
        check_divergence: bool,
    ) -> Result<RunOutcome, RuntimeError> {
        let next = appended.last().or(log.last()).map_or(0, |e| e.sequence + 1);
        let mail = interp::MailLog::from_events(log.iter().chain(appended.iter()));
        let state = self.fold_with(state, appended);
        let workflow_id = log
            .first()
            .map(|e| e.workflow_id.clone())
            .unwrap_or_default();
        let interp = Interp::new(
            self,
            execution_id,
            &workflow_id,
            script,
            interp::Start {
                state,
                next_seq: next,
                fence,
                crash_after: self.take_fault(),
                check_divergence,
                mail,
            },
        );
        let outcome = interp.run(None).await;
        self.follow_continuations(execution_id, outcome).await
    }
}
