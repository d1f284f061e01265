//! # loom-store-client: the client of the stdio store protocol
//!
//! A store written in any language runs as a child process that reads one JSON request
//! per line on stdin and writes one JSON response per line on stdout
//! (`docs/protocols/store.md`). This crate owns the Rust side of that conversation, for
//! everything that talks to such a store: the conformance kits, the concurrent campaign,
//! the exploration campaign and the deploy simulator.
//!
//! - [`StdioStore`] implements every SPI trait the protocol carries by calling the
//!   adapter, with the claims its `hello` made; [`StdioConfig`] says how to start it,
//!   [`CALL_TIMEOUT`] and [`HELLO_TIMEOUT`] are the default time limits.
//! - [`wire`] holds the value forms both sides of the protocol spell the same way: typed
//!   errors ([`encode_error`], [`decode_error`]), base64 blobs, envelope batches and
//!   the content store's answers. The reference stores'
//!   server (`loom store-adapter`) writes its answers with them.
//! - [`schedule`] records the order of a fleet's sends and answers and enforces it on a
//!   replay.
//! - Faults and blame: what went wrong with the adapter itself is kept per case
//!   ([`StdioStore::begin_case`], [`StdioStore::take_fault`],
//!   [`StdioStore::take_blames`]); turning it into a case result is the caller's (the
//!   kits' `StdioHooks`).
//!
//! Key design decisions:
//!
//! - **The process is `loom-process`'s.** Spawning in a process group of its own, the
//!   handshake and call time limits, restarts, per-process stderr, blame for stray lines
//!   and the shutdown all live in [`loom_process::Adapter`], shared with the kernel
//!   protocol's client. This crate owns what the answers mean: SPI results, the typed
//!   error kinds and their facts, and the claims of `hello`.
//! - **Nothing is replayed silently.** A crash, a hang, output that is not JSON, an
//!   answer to the wrong id or an unknown error kind is recorded as a [`Fault`] of the
//!   case whose request it was and surfaces as a `backend` error to the case; the caller
//!   takes the fault after the case and decides what it makes of it (the kits' runner
//!   reports the case as `error`, or `timeout` for a hang, whatever the case concluded).
//!   A stray line (a second answer, a line nobody asked for) is blamed on the case of the
//!   request it belongs to, even when that case already ended.
//! - **Isolation.** Before each case the caller sends `reset` with the case's namespace;
//!   the adapter drops all state. Execution ids are namespaced as well.
//!
//! Architecture invariant: this crate depends on `loom-kernel` (the SPI traits and
//! types), `loom-process`, serde and serde_json only. It knows nothing of kits, cases,
//! reports or the simulator's network: a fault is a message and whether it was a hang,
//! never a report status.
#![deny(missing_docs)]

pub mod schedule;
pub mod wire;

pub use wire::{base64_decode, base64_encode, decode_error, encode_error};
use wire::{content_ref, envelopes_json, put_stream_outcome};

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::spi::plugin::{Chunk, DurableStateStoreMethod, ReadModelStoreMethod};
use loom_kernel::spi::{
    Anchor, AppendAck, ArchiveStore, ArchiveStoreCapabilities, ArchiveStoreMethod, BranchRecord,
    BranchRegistry, Capabilities, ContentAccess, ContentRef, ContentStore,
    ContentStoreCapabilities, ContentStoreMethod, DispatchId, Document, DurableStateStore,
    DurableStateStoreCapabilities, EventStore, EventStoreCapabilities, EventStoreMethod,
    ExecutionDispatcher, ExecutionPackage, FenceToken, Lease, Page, PutStreamOutcome, QueryOptions,
    ReadModelPage, ReadModelStore, ReadModelStoreCapabilities, SealingCapability, SnapshotStore,
    SnapshotStoreCapabilities, SnapshotStoreMethod, SpiMethod, StoreError, Timer, TimerStore,
    Versioned, CONTENT_BYTES_MAX,
};
use loom_process::{Adapter, AdapterConfig, Blame, ShutdownReport};

/// The protocol version this client speaks; `hello` must answer the same major.
/// 1.1 added the dispatcher, the timer store and the three plugin-tier SPIs
/// (additive: a 1.0 adapter simply does not list them in `hello`). 1.2 added several
/// clients on one backend: `hello` carries `clientIndex` and `clientCount`, and the
/// adapter may answer `sharedBackend: true` (additive: a 1.1 adapter ignores the two
/// parameters, claims nothing, and its concurrent cases are `skip-not-claimed`).
pub const PROTOCOL_VERSION: &str = "1.2";
/// How long one call may take before the adapter is declared hung and ended, by default
/// (`loom conform --timeout-ms` changes it).
pub const CALL_TIMEOUT: Duration = Duration::from_millis(loom_process::CALL_TIMEOUT_MS_DEFAULT);
/// How long the adapter may take to start and answer `hello`, by default
/// (`--hello-timeout-ms`).
pub const HELLO_TIMEOUT: Duration = Duration::from_millis(loom_process::HELLO_TIMEOUT_MS_DEFAULT);
/// Longest response line accepted, in bytes; a longer one is a protocol fault.
pub const LINE_BYTES_MAX: usize = loom_process::LINE_BYTES_MAX_DEFAULT;
/// Most adapter restarts in one run; after that every call fails fast.
pub const RESTARTS_MAX: u32 = loom_process::RESTARTS_MAX_DEFAULT;
/// How a `backend` error made from an adapter crash or garbled output begins (the rest is
/// the runner's message, ending with the adapter's stderr).
pub const FAULT_PREFIX: &str = "adapter fault: ";
/// How a `backend` error made from an adapter that did not answer in time begins.
pub const TIMEOUT_PREFIX: &str = "adapter timeout: ";

/// What the runner calls the program in messages.
pub const ROLE: &str = "store adapter";

/// The SPI names `hello` uses as keys of `spis`.
pub const SPI_EVENT_STORE: &str = "eventStore";
/// See [`SPI_EVENT_STORE`].
pub const SPI_SNAPSHOT_STORE: &str = "snapshotStore";
/// See [`SPI_EVENT_STORE`].
pub const SPI_ARCHIVE_STORE: &str = "archiveStore";
/// See [`SPI_EVENT_STORE`].
pub const SPI_BRANCH_REGISTRY: &str = "branchRegistry";
/// See [`SPI_EVENT_STORE`] (protocol 1.1).
pub const SPI_DISPATCHER: &str = "dispatcher";
/// See [`SPI_EVENT_STORE`] (protocol 1.1).
pub const SPI_TIMER_STORE: &str = "timerStore";
/// See [`SPI_EVENT_STORE`] (protocol 1.1).
pub const SPI_CONTENT_STORE: &str = "contentStore";
/// See [`SPI_EVENT_STORE`] (protocol 1.1).
pub const SPI_DURABLE_STATE_STORE: &str = "durableStateStore";
/// See [`SPI_EVENT_STORE`] (protocol 1.1).
pub const SPI_READ_MODEL_STORE: &str = "readModelStore";

/// What went wrong with the adapter itself (not an SPI error it answered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// True for a hang (no answer within the time limit); false for a crash, garbled
    /// output, a malformed answer or a failed backend restart. The kits report the
    /// first as `timeout`, the rest as `error`.
    pub timeout: bool,
    /// What happened, for the report.
    pub message: String,
}

impl Fault {
    fn from_process(fault: &loom_process::Fault) -> Fault {
        Fault {
            timeout: fault.kind.is_timeout(),
            message: fault.message.clone(),
        }
    }
}

/// How to start a store adapter.
#[derive(Debug, Clone, PartialEq)]
pub struct StdioConfig {
    /// The command line, run by `sh -c`.
    pub command: String,
    /// Per-call time limit.
    pub call_timeout: Duration,
    /// Time limit for starting and answering `hello`.
    pub hello_timeout: Duration,
    /// This process's index among the clients started on one backend (0-based;
    /// protocol 1.2). Client 0 is the one that sends `reset`.
    pub client_index: usize,
    /// How many clients the harness starts on the backend (1 when only one).
    pub client_count: usize,
    /// A command (run by `sh -c`) that restarts the adapter's backend, run after every
    /// deliberate kill and before the adapter starts again (`--restart-backend`): a
    /// Redis or PostgreSQL restart, so what was acknowledged must survive the backend's
    /// restart too, not only the adapter's.
    pub restart_backend: Option<String>,
    /// How long the restart command may take.
    pub restart_backend_timeout: Duration,
}

/// Default time a `--restart-backend` command may take, in milliseconds: a database
/// restart with recovery can take a while on a loaded machine.
pub const RESTART_BACKEND_TIMEOUT_MS_DEFAULT: u64 = 120_000;

impl StdioConfig {
    /// A config with the default time limits.
    pub fn new(command: impl Into<String>) -> StdioConfig {
        StdioConfig {
            command: command.into(),
            call_timeout: CALL_TIMEOUT,
            hello_timeout: HELLO_TIMEOUT,
            client_index: 0,
            client_count: 1,
            restart_backend: None,
            restart_backend_timeout: Duration::from_millis(RESTART_BACKEND_TIMEOUT_MS_DEFAULT),
        }
    }

    /// The same adapter as client `index` of `count` on one backend.
    pub fn as_client(&self, index: usize, count: usize) -> StdioConfig {
        StdioConfig {
            client_index: index,
            client_count: count,
            ..self.clone()
        }
    }

    fn adapter_config(&self) -> AdapterConfig {
        let mut c = AdapterConfig::new(
            self.command.trim(),
            ROLE,
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "clientIndex": self.client_index,
                "clientCount": self.client_count,
            }),
        );
        c.call_timeout = self.call_timeout;
        c.hello_timeout = self.hello_timeout;
        c.restarts_max = RESTARTS_MAX;
        c.line_bytes_max = LINE_BYTES_MAX;
        c
    }
}

/// Checks a store adapter's `hello`: the protocol major must be this client's.
pub fn check_hello(hello: &Value) -> Result<(), String> {
    let theirs = hello.get("protocolVersion").and_then(Value::as_str);
    let ours = PROTOCOL_VERSION.split('.').next();
    match theirs {
        Some(v) if v.split('.').next() == ours => Ok(()),
        Some(v) => Err(format!(
            "the store adapter speaks protocol {v:?}, this harness {PROTOCOL_VERSION} (the major must match)"
        )),
        None => Err(format!(
            "the store adapter's hello has no string `protocolVersion` (this harness speaks {PROTOCOL_VERSION})"
        )),
    }
}

struct Session {
    adapter: Adapter,
    /// The backend restart run after each deliberate kill, and its time limit.
    restart_backend: Option<(String, Duration)>,
    /// Backend restarts run so far.
    backend_restarts: u64,
    /// This process's client index on its backend (protocol 1.2).
    client: usize,
    /// The fleet's schedule this client records into or follows, if any.
    schedule: Option<crate::schedule::Schedule>,
    /// The case the requests belong to (`kit/case`), for blame.
    tag: String,
    /// The first fault of the current case.
    fault: Option<Fault>,
    /// Faults blamed on cases other than the current one, not yet taken.
    blames: Vec<Blame>,
}

impl Session {
    fn collect_blames(&mut self) {
        for blame in self.adapter.take_blames() {
            if blame.tag == self.tag {
                self.record(Fault::from_process(&blame.fault));
            } else {
                self.blames.push(blame);
            }
        }
    }

    /// Runs the backend restart command, if there is one; a failure is the case's fault.
    fn restart_backend(&mut self) {
        let Some((command, limit)) = self.restart_backend.clone() else {
            return;
        };
        self.backend_restarts += 1;
        if let Err(e) = loom_process::run_to_completion(&command, limit) {
            self.record(Fault {
                timeout: false,
                message: format!("the backend restart (--restart-backend) failed: {e}"),
            });
        }
    }

    /// Keeps the first fault of a case: it is the cause, later ones are consequences.
    fn record(&mut self, fault: Fault) {
        if self.fault.is_none() {
            self.fault = Some(fault);
        }
    }
}

/// A store behind a child process speaking the stdio store protocol. Cloning shares the
/// process. Implements every SPI the protocol carries (EventStore, SnapshotStore,
/// ArchiveStore, BranchRegistry, ExecutionDispatcher, TimerStore, ContentStore,
/// DurableStateStore, ReadModelStore) with the claims the adapter's `hello` made.
#[derive(Clone)]
pub struct StdioStore {
    session: Arc<Mutex<Session>>,
}

fn lock(m: &Mutex<Session>) -> MutexGuard<'_, Session> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl StdioStore {
    /// Starts `command` (run by `sh -c`) with the default time limits and exchanges
    /// `hello`.
    pub fn spawn(command: &str) -> Result<StdioStore, String> {
        Self::start(&StdioConfig::new(command)).map_err(|f| f.message)
    }

    /// Starts the adapter and exchanges `hello`. A failed start or handshake is the
    /// runner's fault (kind `spawn` or `handshake`), naming the cause and what the
    /// adapter wrote on stderr; its process group is already ended.
    pub fn start(config: &StdioConfig) -> Result<StdioStore, loom_process::Fault> {
        let adapter = Adapter::start(config.adapter_config(), check_hello)?;
        Ok(StdioStore {
            session: Arc::new(Mutex::new(Session {
                adapter,
                restart_backend: config
                    .restart_backend
                    .clone()
                    .map(|c| (c, config.restart_backend_timeout)),
                backend_restarts: 0,
                client: config.client_index,
                schedule: None,
                tag: String::new(),
                fault: None,
                blames: Vec::new(),
            })),
        })
    }

    /// The adapter's `hello` answer.
    pub fn hello(&self) -> Option<Value> {
        lock(&self.session).adapter.hello().cloned()
    }

    /// True when `hello` answered `sharedBackend: true` (protocol 1.2): processes
    /// started with the same command share one backend, so what one client writes the
    /// others read.
    pub fn shared_backend(&self) -> bool {
        self.hello()
            .and_then(|h| h.get("sharedBackend").and_then(Value::as_bool))
            .unwrap_or(false)
    }

    /// True when `hello` answered `durable: true` (protocol 1.2): what the adapter
    /// acknowledged survives its process being killed and started again with the same
    /// command.
    pub fn durable(&self) -> bool {
        self.hello()
            .and_then(|h| h.get("durable").and_then(Value::as_bool))
            .unwrap_or(false)
    }

    /// Kills the adapter's whole process group with `SIGKILL` (docs/spi.md, "Kills and
    /// restarts"); the next call starts it again with `hello`.
    /// With a `restart_backend` command, the backend is restarted too, after the kill and
    /// before the next start; a restart that fails is the current case's fault.
    pub fn kill(&self) {
        let mut s = lock(&self.session);
        s.adapter.kill();
        s.restart_backend();
    }

    /// How many times the backend was restarted (`restart_backend`).
    pub fn backend_restarts(&self) -> u64 {
        lock(&self.session).backend_restarts
    }

    /// Sends `method` and kills the adapter after `delay`, before reading its answer: a
    /// crash between a write and its acknowledgement. `Err` when the request could not
    /// be written (recorded as the case's fault, like any adapter fault).
    pub fn send_then_kill(
        &self,
        method: &str,
        params: Value,
        delay: Duration,
    ) -> Result<(), StoreError> {
        let mut s = lock(&self.session);
        let tag = s.tag.clone();
        let outcome = s.adapter.send_then_kill(&tag, method, &params, delay);
        s.collect_blames();
        if outcome.is_ok() {
            s.restart_backend();
        }
        outcome.map_err(|fault| {
            let message = fault.message.clone();
            s.record(Fault::from_process(&fault));
            StoreError::backend(format!("adapter fault: {message}"))
        })
    }

    /// True when `hello` lists the SPI `spi` (e.g. [`SPI_SNAPSHOT_STORE`]).
    pub fn implements(&self, spi: &str) -> bool {
        self.hello()
            .and_then(|h| h.get("spis").and_then(|s| s.get(spi)).cloned())
            .is_some()
    }

    /// Names the case the next requests belong to (`kit/case`), and forgets the previous
    /// case's fault.
    pub fn begin_case(&self, tag: &str) {
        let mut s = lock(&self.session);
        s.collect_blames();
        s.tag = tag.to_string();
        s.fault = None;
    }

    /// Makes this client record its calls into `schedule`, or follow it when it is being
    /// replayed (`None`: neither).
    pub fn set_schedule(&self, schedule: Option<crate::schedule::Schedule>) {
        lock(&self.session).schedule = schedule;
    }

    /// Takes the fault recorded for the current case, if any.
    pub fn take_fault(&self) -> Option<Fault> {
        let mut s = lock(&self.session);
        s.collect_blames();
        s.fault.take()
    }

    /// Takes the faults blamed on cases other than the current one (a second answer to a
    /// request of an earlier case, a line written after a case ended), each with the tag
    /// of the case at fault.
    pub fn take_blames(&self) -> Vec<Blame> {
        let mut s = lock(&self.session);
        s.collect_blames();
        std::mem::take(&mut s.blames)
    }

    /// Ends the adapter: end of input, then `SIGTERM`, then `SIGKILL` to its whole
    /// process group. Reports lines written after the last answer (blamed on its case),
    /// an adapter that ignored end of input, and processes it left behind. Later calls
    /// fail fast.
    pub fn shutdown(&self) -> ShutdownReport {
        let mut s = lock(&self.session);
        s.collect_blames();
        let mut report = s.adapter.shutdown();
        let mut earlier = std::mem::take(&mut s.blames);
        earlier.append(&mut report.blames);
        report.blames = earlier;
        report
    }

    /// How many times the adapter was restarted.
    pub fn restarts(&self) -> u32 {
        lock(&self.session).adapter.restarts()
    }

    /// Sends `reset` with `namespace`: the adapter drops all its state.
    pub fn reset(&self, namespace: &str) -> Result<(), String> {
        self.call("reset", json!({ "namespace": namespace }))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Sends one request and waits for its answer. SPI errors come back as they were
    /// answered; adapter faults as `backend` errors (and are recorded for the case).
    pub fn call(&self, method: &str, params: Value) -> Result<Value, StoreError> {
        let mut s = lock(&self.session);
        let tag = s.tag.clone();
        let gate = s.schedule.clone().map(|g| (g, s.client));
        if let Some((g, client)) = &gate {
            g.step(*client, crate::schedule::At::Send, method);
        }
        let outcome = s.adapter.call(&tag, method, &params);
        if let Some((g, client)) = &gate {
            g.step(*client, crate::schedule::At::Answer, method);
        }
        s.collect_blames();
        let answer = match outcome {
            Ok(answer) => answer,
            Err(fault) => {
                let message = fault.message.clone();
                s.record(Fault::from_process(&fault));
                let prefix = if fault.kind.is_timeout() {
                    TIMEOUT_PREFIX
                } else {
                    FAULT_PREFIX
                };
                return Err(StoreError::backend(format!("{prefix}{message}")));
            }
        };
        let id = answer.get("id").cloned().unwrap_or(Value::Null);
        if let Some(result) = answer.get("result") {
            return Ok(result.clone());
        }
        let protocol_fault = |s: &mut Session, message: String| {
            s.record(Fault {
                timeout: false,
                message: message.clone(),
            });
            StoreError::backend(format!("{FAULT_PREFIX}{message}"))
        };
        match answer.get("error") {
            Some(error) => match decode_error(error) {
                Ok(e) => Err(e),
                Err(why) => Err(protocol_fault(
                    &mut s,
                    format!("the store adapter's error for {method} (id {id}) is malformed: {why}"),
                )),
            },
            None => Err(protocol_fault(
                &mut s,
                format!("the answer to {method} (id {id}) has neither result nor error"),
            )),
        }
    }

    /// Sets the per-call time limit of the running adapter (default [`CALL_TIMEOUT`]).
    pub fn with_call_timeout(self, timeout: Duration) -> StdioStore {
        lock(&self.session).adapter.set_call_timeout(timeout);
        self
    }

    fn claims<M: SpiMethod>(&self, spi: &str, default_version: &str) -> Capabilities<M> {
        let hello = self.hello().unwrap_or(Value::Null);
        let claim = hello.get("spis").and_then(|s| s.get(spi));
        let version = claim
            .and_then(|c| c.get("spiVersion"))
            .and_then(Value::as_str)
            .unwrap_or(default_version);
        let methods = claim
            .and_then(|c| c.get("methods"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .filter_map(M::from_name)
                    .collect::<Vec<M>>()
            })
            .unwrap_or_default();
        Capabilities::new(version, methods)
    }
}

fn decode<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> Result<T, StoreError> {
    serde_json::from_value(v)
        .map_err(|e| StoreError::backend(format!("malformed {what} from the adapter: {e}")))
}

fn envelopes(v: Value) -> Result<Vec<EventEnvelope>, StoreError> {
    let Value::Array(items) = v else {
        return Err(StoreError::backend(
            "the adapter answered a non-array where envelopes were expected",
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, e)| {
            EventEnvelope::from_value(e, i).map_err(|e| {
                StoreError::backend(format!("malformed envelope from the adapter: {e}"))
            })
        })
        .collect()
}

impl EventStore for StdioStore {
    fn capabilities(&self) -> EventStoreCapabilities {
        self.claims::<EventStoreMethod>(SPI_EVENT_STORE, "0.0.0")
    }
    async fn append(
        &self,
        id: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        let v = self.call("eventStore.append", json!({ "executionId": id, "expectedNext": expected_next, "events": envelopes_json(&events), "fence": fence.map(|f| f.0) }))?;
        decode(v, "append ack")
    }
    async fn read(&self, id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        envelopes(self.call("eventStore.read", json!({ "executionId": id }))?)
    }
    async fn list_executions(&self) -> Result<Vec<String>, StoreError> {
        decode(
            self.call("eventStore.listExecutions", json!({}))?,
            "execution ids",
        )
    }
    async fn read_range(
        &self,
        id: &str,
        from: u64,
        to: u64,
    ) -> Result<Vec<EventEnvelope>, StoreError> {
        envelopes(self.call(
            "eventStore.readRange",
            json!({ "executionId": id, "from": from, "to": to }),
        )?)
    }
    async fn acquire_fence(&self, id: &str) -> Result<FenceToken, StoreError> {
        decode(
            self.call("eventStore.acquireFence", json!({ "executionId": id }))?,
            "fence token",
        )
    }
    async fn acquire_fence_if(
        &self,
        id: &str,
        expected: Option<FenceToken>,
    ) -> Result<FenceToken, StoreError> {
        decode(
            self.call(
                "eventStore.acquireFenceIf",
                json!({ "executionId": id, "expectedCurrent": expected.map(|f| f.0) }),
            )?,
            "fence token",
        )
    }
    async fn observe(&self, id: &str) -> Result<Anchor, StoreError> {
        decode(
            self.call("eventStore.observe", json!({ "executionId": id }))?,
            "anchor",
        )
    }
    async fn append_if_unchanged(
        &self,
        id: &str,
        anchor: Anchor,
        events: Vec<EventEnvelope>,
    ) -> Result<AppendAck, StoreError> {
        let v = self.call(
            "eventStore.appendIfUnchanged",
            json!({ "executionId": id, "anchor": anchor, "events": envelopes_json(&events) }),
        )?;
        decode(v, "append ack")
    }
    async fn store_now(&self) -> Result<i64, StoreError> {
        decode(self.call("eventStore.storeNow", json!({}))?, "storeNow")
    }
    async fn sealing_capability(&self) -> Result<Option<SealingCapability>, StoreError> {
        decode(
            self.call("eventStore.sealingCapability", json!({}))?,
            "sealing capability",
        )
    }
    async fn delete_through(&self, id: &str, through: u64) -> Result<u64, StoreError> {
        decode(
            self.call(
                "eventStore.deleteThrough",
                json!({ "executionId": id, "through": through }),
            )?,
            "count",
        )
    }
    async fn copy_prefix(
        &self,
        source: &str,
        target: &str,
        through: u64,
    ) -> Result<AppendAck, StoreError> {
        decode(
            self.call(
                "eventStore.copyPrefix",
                json!({ "source": source, "target": target, "through": through }),
            )?,
            "append ack",
        )
    }
    async fn delete_execution(&self, id: &str) -> Result<bool, StoreError> {
        decode(
            self.call("eventStore.deleteExecution", json!({ "executionId": id }))?,
            "boolean",
        )
    }
    async fn list_executions_page(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<Page, StoreError> {
        decode(
            self.call(
                "eventStore.listExecutionsPage",
                json!({ "cursor": cursor, "limit": limit }),
            )?,
            "page",
        )
    }
}

impl SnapshotStore for StdioStore {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        self.claims::<SnapshotStoreMethod>(SPI_SNAPSHOT_STORE, "0.0.0")
    }
    async fn save(&self, id: &str, record: SnapshotRecord) -> Result<(), StoreError> {
        self.call(
            "snapshotStore.save",
            json!({ "executionId": id, "record": record }),
        )
        .map(|_| ())
    }
    async fn load_latest(&self, id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        decode(
            self.call("snapshotStore.loadLatest", json!({ "executionId": id }))?,
            "snapshot",
        )
    }
    async fn delete_execution(&self, id: &str) -> Result<u64, StoreError> {
        decode(
            self.call(
                "snapshotStore.deleteExecution",
                json!({ "executionId": id }),
            )?,
            "count",
        )
    }
    async fn load_latest_sealed(&self, id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        decode(
            self.call(
                "snapshotStore.loadLatestSealed",
                json!({ "executionId": id }),
            )?,
            "snapshot",
        )
    }
    async fn prune_snapshots(&self, id: &str, through: u64) -> Result<u64, StoreError> {
        decode(
            self.call(
                "snapshotStore.pruneSnapshots",
                json!({ "executionId": id, "throughSequence": through }),
            )?,
            "count",
        )
    }
    async fn list_sequences(&self, id: &str) -> Result<Vec<u64>, StoreError> {
        decode(
            self.call("snapshotStore.listSequences", json!({ "executionId": id }))?,
            "sequences",
        )
    }
}

impl ArchiveStore for StdioStore {
    fn capabilities(&self) -> ArchiveStoreCapabilities {
        self.claims::<ArchiveStoreMethod>(SPI_ARCHIVE_STORE, "0.0.0")
    }
    async fn archive(&self, id: &str, events: Vec<EventEnvelope>) -> Result<u64, StoreError> {
        decode(
            self.call(
                "archiveStore.archive",
                json!({ "executionId": id, "envelopes": envelopes_json(&events) }),
            )?,
            "count",
        )
    }
    async fn read_archived(&self, id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        envelopes(self.call("archiveStore.readArchived", json!({ "executionId": id }))?)
    }
    async fn delete_execution(&self, id: &str) -> Result<u64, StoreError> {
        decode(
            self.call("archiveStore.deleteExecution", json!({ "executionId": id }))?,
            "count",
        )
    }
    async fn replace_segments(
        &self,
        id: &str,
        events: Vec<EventEnvelope>,
    ) -> Result<(), StoreError> {
        self.call(
            "archiveStore.replaceSegments",
            json!({ "executionId": id, "envelopes": envelopes_json(&events) }),
        )
        .map(|_| ())
    }
}

impl BranchRegistry for StdioStore {
    fn spi_version(&self) -> String {
        self.hello()
            .and_then(|h| {
                h.pointer("/spis/branchRegistry/spiVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default()
    }
    async fn register(&self, record: BranchRecord) -> Result<(), StoreError> {
        self.call("branchRegistry.register", json!({ "record": record }))
            .map(|_| ())
    }
    async fn get(&self, id: &str) -> Result<Option<BranchRecord>, StoreError> {
        decode(
            self.call("branchRegistry.get", json!({ "executionId": id }))?,
            "branch record",
        )
    }
    async fn children(&self, parent: &str) -> Result<Vec<BranchRecord>, StoreError> {
        decode(
            self.call(
                "branchRegistry.children",
                json!({ "parentExecutionId": parent }),
            )?,
            "branch records",
        )
    }
}

impl StdioStore {
    /// The `spiVersion` `hello` claims for `spi`, or "" when it lists none.
    fn spi_version_of(&self, spi: &str) -> String {
        self.hello()
            .and_then(|h| {
                h.get("spis")
                    .and_then(|s| s.get(spi))
                    .and_then(|c| c.get("spiVersion"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default()
    }
}

impl ExecutionDispatcher for StdioStore {
    fn spi_version(&self) -> String {
        self.spi_version_of(SPI_DISPATCHER)
    }
    async fn register_target(&self, name: &str) -> Result<bool, StoreError> {
        decode(
            self.call("dispatcher.registerTarget", json!({ "name": name }))?,
            "boolean",
        )
    }
    async fn targets(&self) -> Result<Vec<String>, StoreError> {
        decode(self.call("dispatcher.targets", json!({}))?, "targets")
    }
    async fn dispatch(&self, package: ExecutionPackage) -> Result<DispatchId, StoreError> {
        decode(
            self.call("dispatcher.dispatch", json!({ "package": package }))?,
            "dispatch id",
        )
    }
    async fn claim(
        &self,
        target: &str,
        worker_id: &str,
        now_ms: i64,
    ) -> Result<Option<Lease>, StoreError> {
        decode(
            self.call(
                "dispatcher.claim",
                json!({ "target": target, "workerId": worker_id, "nowMs": now_ms }),
            )?,
            "lease",
        )
    }
    async fn renew(&self, lease: &Lease, now_ms: i64) -> Result<Lease, StoreError> {
        decode(
            self.call(
                "dispatcher.renew",
                json!({ "lease": lease, "nowMs": now_ms }),
            )?,
            "lease",
        )
    }
    async fn complete(&self, lease: &Lease) -> Result<(), StoreError> {
        self.call("dispatcher.complete", json!({ "lease": lease }))
            .map(|_| ())
    }
    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.call("dispatcher.release", json!({ "lease": lease }))
            .map(|_| ())
    }
    async fn expire_leases(&self, now_ms: i64) -> Result<Vec<DispatchId>, StoreError> {
        decode(
            self.call("dispatcher.expireLeases", json!({ "nowMs": now_ms }))?,
            "dispatch ids",
        )
    }
}

impl TimerStore for StdioStore {
    fn spi_version(&self) -> String {
        self.spi_version_of(SPI_TIMER_STORE)
    }
    async fn schedule(&self, timer: Timer) -> Result<Timer, StoreError> {
        decode(
            self.call("timerStore.schedule", json!({ "timer": timer }))?,
            "timer",
        )
    }
    async fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<Timer>, StoreError> {
        decode(
            self.call("timerStore.due", json!({ "nowMs": now_ms, "limit": limit }))?,
            "timers",
        )
    }
    async fn cancel(&self, execution_id: &str, key: &str) -> Result<bool, StoreError> {
        decode(
            self.call(
                "timerStore.cancel",
                json!({ "executionId": execution_id, "key": key }),
            )?,
            "boolean",
        )
    }
}

fn owner_json(owner: &Option<ContentAccess>) -> Value {
    owner.as_ref().map_or(Value::Null, |a| json!(a.owner))
}

impl ContentStore for StdioStore {
    fn capabilities(&self) -> ContentStoreCapabilities {
        self.claims::<ContentStoreMethod>(SPI_CONTENT_STORE, "0.0.0")
    }
    async fn put(
        &self,
        bytes: Vec<u8>,
        owner: Option<ContentAccess>,
    ) -> Result<ContentRef, StoreError> {
        let v = self.call(
            "contentStore.put",
            json!({ "data": base64_encode(&bytes), "owner": owner_json(&owner) }),
        )?;
        content_ref(&v)
    }
    async fn get(
        &self,
        digest: &str,
        owner: Option<ContentAccess>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let v = self.call(
            "contentStore.get",
            json!({ "digest": digest, "owner": owner_json(&owner) }),
        )?;
        match v {
            Value::Null => Ok(None),
            Value::String(text) => base64_decode(&text).map(Some).map_err(|e| {
                StoreError::backend(format!("malformed content from the adapter: {e}"))
            }),
            other => Err(StoreError::backend(format!(
                "the adapter answered {other} where base64 or null was expected"
            ))),
        }
    }
    async fn put_stream<I>(
        &self,
        chunks: I,
        owner: Option<ContentAccess>,
    ) -> Result<PutStreamOutcome, StoreError>
    where
        I: IntoIterator<Item = Chunk> + Send,
        I::IntoIter: Send,
    {
        // The whole stream travels in one request. The client stops reading the source
        // at the first failed chunk or at the chunk that takes the total past
        // CONTENT_BYTES_MAX (a source may be endless); that chunk is still sent, so the
        // adapter, not the client, decides the outcome.
        let mut wire = Vec::new();
        let mut total = 0usize;
        for chunk in chunks {
            match chunk {
                Ok(bytes) => {
                    total = total.saturating_add(bytes.len());
                    wire.push(json!({ "data": base64_encode(&bytes) }));
                    if total > CONTENT_BYTES_MAX {
                        break;
                    }
                }
                Err(message) => {
                    wire.push(json!({ "error": message }));
                    break;
                }
            }
        }
        let v = self.call(
            "contentStore.putStream",
            json!({ "chunks": wire, "owner": owner_json(&owner) }),
        )?;
        put_stream_outcome(&v)
    }
    async fn seals_content(&self) -> Result<bool, StoreError> {
        decode(
            self.call("contentStore.sealsContent", json!({}))?,
            "boolean",
        )
    }
}

impl DurableStateStore for StdioStore {
    fn capabilities(&self) -> DurableStateStoreCapabilities {
        self.claims::<DurableStateStoreMethod>(SPI_DURABLE_STATE_STORE, "0.0.0")
    }
    async fn get(&self, key: &str) -> Result<Option<Versioned>, StoreError> {
        let v = self.call("durableStateStore.get", json!({ "key": key }))?;
        if v.is_null() {
            return Ok(None);
        }
        let version = v.get("version").and_then(Value::as_u64);
        match (v.get("value"), version) {
            (Some(value), Some(version)) => Ok(Some(Versioned {
                value: value.clone(),
                version,
            })),
            _ => Err(StoreError::backend(format!(
                "malformed versioned value from the adapter: {v}"
            ))),
        }
    }
    async fn put(
        &self,
        key: &str,
        value: Value,
        expected_version: Option<u64>,
    ) -> Result<u64, StoreError> {
        decode(
            self.call(
                "durableStateStore.put",
                json!({ "key": key, "value": value, "expectedVersion": expected_version }),
            )?,
            "version",
        )
    }
    async fn delete(&self, key: &str, expected_version: u64) -> Result<(), StoreError> {
        self.call(
            "durableStateStore.delete",
            json!({ "key": key, "expectedVersion": expected_version }),
        )
        .map(|_| ())
    }
}

impl ReadModelStore for StdioStore {
    fn capabilities(&self) -> ReadModelStoreCapabilities {
        self.claims::<ReadModelStoreMethod>(SPI_READ_MODEL_STORE, "0.0.0")
    }
    async fn upsert(&self, collection: &str, id: &str, doc: Value) -> Result<(), StoreError> {
        self.call(
            "readModelStore.upsert",
            json!({ "collection": collection, "id": id, "doc": doc }),
        )
        .map(|_| ())
    }
    async fn get(&self, collection: &str, id: &str) -> Result<Option<Value>, StoreError> {
        // Wrapped as {"doc": ...} because a stored document may itself be JSON null.
        let v = self.call(
            "readModelStore.get",
            json!({ "collection": collection, "id": id }),
        )?;
        match v {
            Value::Null => Ok(None),
            Value::Object(mut o) => o.remove("doc").map(Some).ok_or_else(|| {
                StoreError::backend("the adapter's readModelStore.get answer lacks \"doc\"")
            }),
            other => Err(StoreError::backend(format!(
                "the adapter answered {other} where {{\"doc\": ...}} or null was expected"
            ))),
        }
    }
    async fn query(
        &self,
        collection: &str,
        options: QueryOptions,
    ) -> Result<ReadModelPage, StoreError> {
        let v = self.call(
            "readModelStore.query",
            json!({ "collection": collection, "limit": options.limit, "cursor": options.cursor }),
        )?;
        let malformed =
            || StoreError::backend(format!("malformed query page from the adapter: {v}"));
        let docs = v
            .get("docs")
            .and_then(Value::as_array)
            .ok_or_else(malformed)?
            .iter()
            .map(
                |d| match (d.get("id").and_then(Value::as_str), d.get("doc")) {
                    (Some(id), Some(doc)) => Ok(Document {
                        id: id.to_string(),
                        doc: doc.clone(),
                    }),
                    _ => Err(malformed()),
                },
            )
            .collect::<Result<Vec<_>, _>>()?;
        let next_cursor = match v.get("nextCursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.clone()),
            Some(_) => return Err(malformed()),
        };
        Ok(ReadModelPage { docs, next_cursor })
    }
}
