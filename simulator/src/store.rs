//! The store under simulation: every SPI the hosts use (event store, timer store,
//! snapshot store, dispatcher), chosen by name (`memory`, `sqlite[:DIR]`,
//! `postgres://…`, `cmd:COMMAND`).
//!
//! Key design decisions:
//!
//! - **Memory** (the default) is served inline by the store host: every call completes
//!   inside the task that made it, at the same simulated instant, so a seed replays byte for byte (CONF-05).
//! - **A real store** (SQLite, PostgreSQL, a `cmd:` adapter) is a *deployment's*
//!   store: each calling host (every worker, the client, the dispatcher's sweeper) has a
//!   connection of its own, served from a thread of its own: for `cmd:` its own adapter
//!   process of the same command (store protocol 1.2: `hello` carries `clientIndex` and
//!   `clientCount`; client 0 is the harness's own connection, the one that sends
//!   `reset` and reads for the checks), for SQLite and PostgreSQL its own connection.
//!   Requests the hosts make before the seed's runtime next parks are sent together
//!   and answered concurrently in real time; before simulated time moves on (the
//!   runtime's park hook) the run waits for every answer
//!   ([`SimStore::settle`]), so simulated time never runs ahead of the store and every
//!   answer lands at the instant of its request. What the backend decides between
//!   concurrent requests (which of two racing claims wins) is the backend's: that is
//!   what a real store can vary between two runs of a seed (docs/simulator.md,
//!   "Determinism with a real store"; docs/decisions/0012).
//! - An adapter whose `hello` does not answer `sharedBackend: true` gets one process,
//!   shared by every host (its processes would not see each other's writes).
//! - Kills: an adapter that answers `durable: true` may be killed (`SIGKILL` to its
//!   process group, [`loom_store_client::StdioStore::kill`]) between calls or
//!   between a write and its answer (`send_then_kill`); the next call starts it again.
//!
//! A store restart (the store host bounced) loses the requests in flight and their
//! acknowledgements. Committed data survives: SQLite and PostgreSQL connections are
//! opened again, `cmd:` adapter processes keep running (killing them is the kill fault).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use loom_kernel::runtime::block_on;
use loom_kernel::spi::{
    Anchor, AppendAck, EventStore, ExecutionDispatcher, ExecutionPackage, FenceToken, Lease,
    SnapshotStore, StoreError, StoreErrorKind, Timer, TimerStore,
};
use loom_kernel::{EventEnvelope, SnapshotRecord};
use loom_store_client::{StdioConfig, StdioStore};
use loom_stores::memory::MemoryEventStore;
use loom_stores::sqlite::SqliteStore;
use serde_json::{json, Value};

pub use crate::wire::TARGET;
/// Client indexes a `cmd:` store keeps free for hosts that appear after the start (a
/// second client of a concurrent resume, a planted bug's runtime).
pub const LATE_CLIENTS_MAX: usize = 4;
/// Longest real time the run waits for the answers in flight before time moves on; an
/// adapter's own call timeout ends a hung call well before it.
pub const SETTLE_WAIT_MS_MAX: u64 = 120_000;
/// Most adapter faults (crashes, garbled lines, with the adapter's stderr) kept per seed.
pub const ADAPTER_FAULTS_MAX: usize = 20;
/// The placeholder a `cmd:` command may carry: replaced by the seed, so a store with a
/// file of its own per seed (`--db /tmp/s-{seed}.db`) runs under `--jobs` > 1.
pub const SEED_PLACEHOLDER: &str = "{seed}";

/// Which store the store host serves.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StoreSpec {
    /// The in-memory reference store.
    #[default]
    Memory,
    /// The SQLite reference store: a file per seed (under the system's temp directory
    /// unless a directory is given), removed when the seed ends.
    Sqlite(Option<PathBuf>),
    /// The PostgreSQL reference store at this URL: a fresh schema per seed, dropped
    /// when the seed ends.
    Postgres(String),
    /// A store adapter speaking the store protocol, started with `sh -c COMMAND`, once
    /// per seed, and sent `reset` first.
    Cmd(String),
}

impl std::str::FromStr for StoreSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<StoreSpec, String> {
        if text == "memory" {
            Ok(StoreSpec::Memory)
        } else if text == "sqlite" {
            Ok(StoreSpec::Sqlite(None))
        } else if let Some(dir) = text.strip_prefix("sqlite:") {
            Ok(StoreSpec::Sqlite(
                (!dir.is_empty()).then(|| PathBuf::from(dir)),
            ))
        } else if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Ok(StoreSpec::Postgres(text.to_owned()))
        } else if let Some(cmd) = text.strip_prefix("cmd:") {
            let cmd = cmd.trim();
            if cmd.is_empty() {
                return Err("cmd: needs a command, e.g. cmd:'python3 adapter.py'".into());
            }
            Ok(StoreSpec::Cmd(cmd.to_owned()))
        } else {
            Err(format!(
                "unknown store `{text}`: use memory, sqlite[:DIR], postgres://URL or cmd:COMMAND"
            ))
        }
    }
}

impl std::fmt::Display for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreSpec::Memory => write!(f, "memory"),
            StoreSpec::Sqlite(None) => write!(f, "sqlite"),
            StoreSpec::Sqlite(Some(d)) => write!(f, "sqlite:{}", d.display()),
            StoreSpec::Postgres(url) => write!(f, "{url}"),
            StoreSpec::Cmd(c) => write!(f, "cmd:{c}"),
        }
    }
}

/// One SPI operation a host asks of the store.
#[derive(Debug, Clone)]
pub enum Op {
    /// `EventStore::append`.
    Append {
        /// The execution.
        exec: String,
        /// The sequence the first event must get.
        expected_next: u64,
        /// The events.
        events: Vec<EventEnvelope>,
        /// The fence token presented.
        fence: Option<u64>,
    },
    /// `EventStore::read`.
    Read(String),
    /// `EventStore::list_executions`.
    List,
    /// `EventStore::acquire_fence`.
    Fence(String),
    /// `EventStore::observe`.
    Observe(String),
    /// `TimerStore::schedule`.
    Schedule(Timer),
    /// `TimerStore::due`.
    Due {
        /// The caller's time.
        now_ms: i64,
        /// Most timers answered.
        limit: usize,
    },
    /// `TimerStore::cancel`.
    Cancel {
        /// The execution.
        exec: String,
        /// The timer's key.
        key: String,
    },
    /// `SnapshotStore::save`.
    SnapSave {
        /// The execution.
        exec: String,
        /// The snapshot.
        record: SnapshotRecord,
    },
    /// `SnapshotStore::load_latest`.
    SnapLoad(String),
    /// `SnapshotStore::delete_execution`.
    SnapDelete(String),
    /// `ExecutionDispatcher::dispatch`.
    Dispatch(ExecutionPackage),
    /// `ExecutionDispatcher::claim` for [`TARGET`].
    Claim {
        /// The claiming worker.
        worker: String,
        /// The caller's time.
        now_ms: i64,
    },
    /// `ExecutionDispatcher::complete`.
    Complete(Lease),
    /// `ExecutionDispatcher::register_target` for [`TARGET`].
    RegisterTarget,
}

impl Op {
    /// True for an operation that writes (a kill between it and its answer is the
    /// interesting one).
    pub fn writes(&self) -> bool {
        !matches!(
            self,
            Op::Read(_) | Op::List | Op::Observe(_) | Op::Due { .. } | Op::SnapLoad(_)
        )
    }

    /// The store-protocol request of an operation: method and params.
    fn protocol(&self) -> (&'static str, Value) {
        match self {
            Op::Append {
                exec,
                expected_next,
                events,
                fence,
            } => (
                "eventStore.append",
                json!({ "executionId": exec, "expectedNext": expected_next,
                    "events": events.iter().map(EventEnvelope::to_value).collect::<Vec<_>>(),
                    "fence": fence }),
            ),
            Op::Read(exec) => ("eventStore.read", json!({ "executionId": exec })),
            Op::List => ("eventStore.listExecutions", json!({})),
            Op::Fence(exec) => ("eventStore.acquireFence", json!({ "executionId": exec })),
            Op::Observe(exec) => ("eventStore.observe", json!({ "executionId": exec })),
            Op::Schedule(t) => ("timerStore.schedule", json!({ "timer": t })),
            Op::Due { now_ms, limit } => {
                ("timerStore.due", json!({ "nowMs": now_ms, "limit": limit }))
            }
            Op::Cancel { exec, key } => (
                "timerStore.cancel",
                json!({ "executionId": exec, "key": key }),
            ),
            Op::SnapSave { exec, record } => (
                "snapshotStore.save",
                json!({ "executionId": exec, "record": record }),
            ),
            Op::SnapLoad(exec) => ("snapshotStore.loadLatest", json!({ "executionId": exec })),
            Op::SnapDelete(exec) => (
                "snapshotStore.deleteExecution",
                json!({ "executionId": exec }),
            ),
            Op::Dispatch(p) => ("dispatcher.dispatch", json!({ "package": p })),
            Op::Claim { worker, now_ms } => (
                "dispatcher.claim",
                json!({ "target": TARGET, "workerId": worker, "nowMs": now_ms }),
            ),
            Op::Complete(l) => ("dispatcher.complete", json!({ "lease": l })),
            Op::RegisterTarget => ("dispatcher.registerTarget", json!({ "name": TARGET })),
        }
    }
}

/// What a store answered an [`Op`].
#[derive(Debug, Clone)]
pub enum Answer {
    /// An append's acknowledgement.
    Ack(AppendAck),
    /// A log.
    Log(Vec<EventEnvelope>),
    /// Execution ids.
    Ids(Vec<String>),
    /// A fence token, or a dispatch id.
    Number(u64),
    /// An anchor.
    Anchor(Anchor),
    /// A scheduled timer.
    Timer(Timer),
    /// Due timers.
    Timers(Vec<Timer>),
    /// A yes or no (cancel).
    Flag(bool),
    /// Nothing (save, complete).
    Done,
    /// A loaded snapshot.
    Snapshot(Option<SnapshotRecord>),
    /// A claim's lease.
    Lease(Option<Lease>),
}

/// Runs `op` against one store's four SPIs.
pub async fn run_op<E, T, S, D>(
    events: &E,
    timers: &T,
    snapshots: &S,
    dispatcher: &D,
    op: Op,
) -> Result<Answer, StoreError>
where
    E: EventStore,
    T: TimerStore,
    S: SnapshotStore,
    D: ExecutionDispatcher,
{
    Ok(match op {
        Op::Append {
            exec,
            expected_next,
            events: batch,
            fence,
        } => Answer::Ack(
            events
                .append(&exec, expected_next, batch, fence.map(FenceToken))
                .await?,
        ),
        Op::Read(exec) => Answer::Log(events.read(&exec).await?),
        Op::List => Answer::Ids(events.list_executions().await?),
        Op::Fence(exec) => Answer::Number(events.acquire_fence(&exec).await?.0),
        Op::Observe(exec) => Answer::Anchor(events.observe(&exec).await?),
        Op::Schedule(t) => Answer::Timer(timers.schedule(t).await?),
        Op::Due { now_ms, limit } => Answer::Timers(timers.due(now_ms, limit).await?),
        Op::Cancel { exec, key } => Answer::Flag(timers.cancel(&exec, &key).await?),
        Op::SnapSave { exec, record } => {
            snapshots.save(&exec, record).await?;
            Answer::Done
        }
        Op::SnapLoad(exec) => Answer::Snapshot(snapshots.load_latest(&exec).await?),
        Op::SnapDelete(exec) => Answer::Number(snapshots.delete_execution(&exec).await?),
        Op::Dispatch(p) => Answer::Number(dispatcher.dispatch(p).await?.0),
        Op::Claim { worker, now_ms } => {
            Answer::Lease(dispatcher.claim(TARGET, &worker, now_ms).await?)
        }
        Op::Complete(l) => {
            dispatcher.complete(&l).await?;
            Answer::Done
        }
        Op::RegisterTarget => Answer::Flag(dispatcher.register_target(TARGET).await?),
    })
}

/// The time limits of a `cmd:` store adapter, in real milliseconds: the adapter is a
/// real process, so they are wall-clock limits, unlike every other time in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdapterLimits {
    /// How long one call may take before the adapter is declared hung.
    pub timeout_ms: u64,
    /// How long the adapter may take to start and answer `hello`.
    pub hello_timeout_ms: u64,
}

impl Default for AdapterLimits {
    fn default() -> Self {
        AdapterLimits {
            timeout_ms: loom_store_client::CALL_TIMEOUT.as_millis() as u64,
            hello_timeout_ms: loom_store_client::HELLO_TIMEOUT.as_millis() as u64,
        }
    }
}

fn backend(message: impl Into<String>) -> StoreError {
    StoreError::new(StoreErrorKind::Backend, message)
}

fn unexpected(op: &str) -> StoreError {
    backend(format!("{op}: the store answered another shape"))
}

/// The event store of one seed, and for a real store every other SPI too.
pub enum SimStore {
    /// In memory, served inline (the timers, snapshots and dispatcher are the world's
    /// in-memory ones).
    Memory(MemoryEventStore),
    /// A real store: connections per host, answered concurrently.
    Real(RealStore),
}

/// One connection's backend, owned by its thread.
enum Backend {
    Sqlite {
        store: SqliteStore,
        path: PathBuf,
        lease_ms: i64,
    },
    Postgres {
        rt: tokio::runtime::Runtime,
        store: Option<loom_stores::postgres::PgStore>,
        url: String,
        schema: String,
        lease_ms: i64,
    },
    Cmd(StdioStore),
}

impl Backend {
    fn run(&mut self, op: Op, kill_after: Option<Duration>) -> Result<Answer, StoreError> {
        match self {
            Backend::Sqlite { store, .. } => block_on(run_op(
                &store.events(),
                &store.timers(),
                &store.snapshots(),
                &store.dispatcher(),
                op,
            )),
            Backend::Postgres { rt, store, .. } => match store {
                Some(s) => rt.block_on(run_op(
                    &s.events(),
                    &s.timers(),
                    &s.snapshots(),
                    &s.dispatcher(),
                    op,
                )),
                None => Err(backend("the PostgreSQL connection is closed")),
            },
            Backend::Cmd(s) => match kill_after {
                Some(delay) => {
                    let (method, params) = op.protocol();
                    s.send_then_kill(method, params, delay)?;
                    Err(backend(format!(
                        "{method}: the adapter was killed {} ms after the request, before its answer",
                        delay.as_millis()
                    )))
                }
                None => block_on(run_op(s, s, s, s, op)),
            },
        }
    }

    fn reconnect(&mut self) -> Result<(), String> {
        match self {
            Backend::Sqlite {
                store,
                path,
                lease_ms,
            } => {
                *store = open_sqlite(path, *lease_ms)?;
                Ok(())
            }
            Backend::Postgres {
                rt,
                store,
                url,
                schema,
                lease_ms,
            } => {
                *store = None;
                let fresh = rt
                    .block_on(loom_stores::postgres::PgStore::connect(url, schema))
                    .and_then(|s| s.with_lease_ms(*lease_ms))
                    .map_err(|e| format!("reconnecting to {url}: {e}"))?;
                *store = Some(fresh);
                Ok(())
            }
            Backend::Cmd(_) => Ok(()),
        }
    }
}

fn open_sqlite(path: &std::path::Path, lease_ms: i64) -> Result<SqliteStore, String> {
    SqliteStore::open(path)
        .and_then(|s| s.with_lease_ms(lease_ms))
        .map_err(|e| format!("opening {}: {e}", path.display()))
}

/// Where an answer goes: a host's waiting future, or the harness's blocked call.
type Reply = Box<dyn FnOnce(Result<Answer, StoreError>) + Send>;

enum Job {
    Op(Op, Option<Duration>, Reply),
    Reconnect(mpsc::Sender<Result<(), String>>),
}

/// Requests sent and not answered yet, across a seed's connections.
#[derive(Default)]
struct Inflight {
    count: Mutex<usize>,
    idle: Condvar,
}

impl Inflight {
    fn lock(&self) -> MutexGuard<'_, usize> {
        self.count.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One host's connection: a thread that owns the backend connection.
struct Conn {
    jobs: mpsc::Sender<Job>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The adapter process, for kills (a clone shares it).
    stdio: Option<StdioStore>,
    /// The next write on this connection is killed after this delay.
    kill_next_write: Option<Duration>,
}

impl Conn {
    fn start(
        open: impl FnOnce() -> Result<Backend, String> + Send + 'static,
        inflight: Arc<Inflight>,
        faults: Arc<Mutex<Vec<String>>>,
        name: String,
    ) -> Result<Conn, String> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<Option<StdioStore>, String>>();
        let thread = std::thread::Builder::new()
            .name(format!("sim-store-{name}"))
            .spawn(move || {
                let mut backend = match open() {
                    Ok(b) => b,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let stdio = match &backend {
                    Backend::Cmd(s) => Some(s.clone()),
                    _ => None,
                };
                let _ = ready_tx.send(Ok(stdio));
                while let Ok(job) = rx.recv() {
                    match job {
                        Job::Op(op, kill, reply) => {
                            let out = backend.run(op, kill);
                            if let Backend::Cmd(s) = &backend {
                                if let Some(f) = s.take_fault() {
                                    let mut faults =
                                        faults.lock().unwrap_or_else(|p| p.into_inner());
                                    if faults.len() < ADAPTER_FAULTS_MAX {
                                        faults.push(format!("{name}: {}", f.message));
                                    }
                                }
                            }
                            reply(out);
                            let mut n = inflight.lock();
                            *n = n.saturating_sub(1);
                            if *n == 0 {
                                inflight.idle.notify_all();
                            }
                        }
                        Job::Reconnect(done) => {
                            let _ = done.send(backend.reconnect());
                        }
                    }
                }
                if let Backend::Cmd(s) = &backend {
                    let _ = s.shutdown();
                }
            })
            .map_err(|e| format!("starting a store connection thread: {e}"))?;
        let stdio = ready_rx
            .recv()
            .map_err(|_| "the store connection thread ended".to_owned())??;
        Ok(Conn {
            jobs,
            thread: Some(thread),
            stdio,
            kill_next_write: None,
        })
    }

    fn stop(&mut self) {
        let (dead, _) = mpsc::channel();
        drop(std::mem::replace(&mut self.jobs, dead));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Opens one more connection to a real store, as the given client index.
type Opener = Arc<dyn Fn(usize) -> Result<Backend, String> + Send + Sync>;

/// A real store: the harness's connection and one per host.
pub struct RealStore {
    spec: StoreSpec,
    /// What opens one more connection (client index given).
    opener: Opener,
    /// The harness's own connection (client 0 of a `cmd:` store).
    observer: Mutex<Conn>,
    /// One connection per host, by host name.
    hosts: Mutex<BTreeMap<String, Conn>>,
    /// Hosts get connections of their own (false: a `cmd:` adapter that did not answer
    /// `sharedBackend: true`; every host uses the harness's process).
    per_host: bool,
    /// The adapter answered `durable: true` (kills are allowed), or the store is a
    /// reference database.
    durable: bool,
    next_index: Mutex<usize>,
    inflight: Arc<Inflight>,
    faults: Arc<Mutex<Vec<String>>>,
    cleanup: Cleanup,
}

enum Cleanup {
    None,
    Sqlite(PathBuf),
    Postgres { url: String, schema: String },
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl SimStore {
    /// Opens the store `spec` names for `seed` (empty, whatever ran before), with the
    /// harness's connection only and the default adapter time limits.
    pub fn open(spec: &StoreSpec, seed: u64) -> Result<SimStore, String> {
        Self::open_with(spec, seed, &[], 1_000, AdapterLimits::default())
    }

    /// Opens the store `spec` names for `seed` (empty, whatever ran before), with a
    /// connection for each of `hosts`, dispatcher leases of `lease_ms` where the store
    /// takes one (a `cmd:` adapter's lease is its own), and the time limits of a `cmd:`
    /// adapter (`--timeout-ms`, `--hello-timeout-ms`).
    pub fn open_with(
        spec: &StoreSpec,
        seed: u64,
        hosts: &[String],
        lease_ms: u64,
        limits: AdapterLimits,
    ) -> Result<SimStore, String> {
        let lease_ms = lease_ms as i64;
        let (opener, cleanup): (Opener, Cleanup) = match spec {
            StoreSpec::Memory => return Ok(SimStore::Memory(MemoryEventStore::new())),
            StoreSpec::Sqlite(dir) => {
                let dir = dir.clone().unwrap_or_else(std::env::temp_dir);
                // A missing directory is a setup error (as `loom conform` has it), named
                // with the fix instead of SQLite's "unable to open database file".
                if !dir.is_dir() {
                    return Err(format!(
                        "the directory {0} for the SQLite files does not exist or is not a directory: make it first (mkdir -p {0})",
                        dir.display()
                    ));
                }
                let path = dir.join(format!("loom-sim-{}-{seed}.db", std::process::id()));
                for p in sqlite_files(&path) {
                    let _ = std::fs::remove_file(p);
                }
                let p = path.clone();
                (
                    Arc::new(move |_| {
                        Ok(Backend::Sqlite {
                            store: open_sqlite(&p, lease_ms)?,
                            path: p.clone(),
                            lease_ms,
                        })
                    }),
                    Cleanup::Sqlite(path),
                )
            }
            StoreSpec::Postgres(url) => {
                let schema = format!("loom_sim_{}_{seed}", std::process::id());
                let (u, sch) = (url.clone(), schema.clone());
                (
                    Arc::new(move |index| {
                        // A runtime of its own that keeps running between calls: the
                        // connection task must send the ROLLBACK of a transaction an
                        // error path dropped, or its row locks stall the other hosts.
                        let rt = tokio::runtime::Builder::new_multi_thread()
                            .worker_threads(1)
                            .enable_all()
                            .build()
                            .map_err(|e| e.to_string())?;
                        let connect = async {
                            if index == 0 {
                                loom_stores::postgres::PgStore::connect_fresh(&u, &sch).await
                            } else {
                                loom_stores::postgres::PgStore::connect(&u, &sch).await
                            }
                        };
                        let store = rt
                            .block_on(connect)
                            .and_then(|s| s.with_lease_ms(lease_ms))
                            .map_err(|e| format!("connecting to {u}: {e}"))?;
                        Ok(Backend::Postgres {
                            rt,
                            store: Some(store),
                            url: u.clone(),
                            schema: sch.clone(),
                            lease_ms,
                        })
                    }),
                    Cleanup::Postgres {
                        url: url.clone(),
                        schema,
                    },
                )
            }
            StoreSpec::Cmd(command) => {
                let command = command.replace(SEED_PLACEHOLDER, &seed.to_string());
                let count = hosts.len() + 1 + LATE_CLIENTS_MAX;
                let config = StdioConfig {
                    call_timeout: Duration::from_millis(limits.timeout_ms),
                    hello_timeout: Duration::from_millis(limits.hello_timeout_ms),
                    ..StdioConfig::new(command)
                };
                (
                    Arc::new(move |index| {
                        StdioStore::start(&config.as_client(index, count))
                            .map(Backend::Cmd)
                            .map_err(|f| f.message)
                    }),
                    Cleanup::None,
                )
            }
        };
        let inflight = Arc::new(Inflight::default());
        let faults = Arc::new(Mutex::new(Vec::new()));
        let start = |index: usize, name: &str| {
            let opener = opener.clone();
            Conn::start(
                move || opener(index),
                inflight.clone(),
                faults.clone(),
                name.to_owned(),
            )
        };
        // Client 0 first: it lays out a fresh backend, the others join it.
        let observer = start(0, "harness")?;
        let (per_host, durable) = match &observer.stdio {
            Some(s) => {
                s.reset("exec-")?;
                (s.shared_backend(), s.durable())
            }
            None => (true, true),
        };
        let mut conns = BTreeMap::new();
        if per_host {
            // The hosts' connections open at once (an adapter's start is slow).
            let opened: Vec<(String, Result<Conn, String>)> = std::thread::scope(|scope| {
                let handles: Vec<_> = hosts
                    .iter()
                    .enumerate()
                    .map(|(i, h)| {
                        let start = &start;
                        (h.clone(), scope.spawn(move || start(i + 1, h)))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|(h, t)| {
                        let r = t
                            .join()
                            .unwrap_or_else(|_| Err("a connection thread panicked".into()));
                        (h, r)
                    })
                    .collect()
            });
            for (h, c) in opened {
                conns.insert(h.clone(), c.map_err(|e| format!("{h}'s connection: {e}"))?);
            }
        }
        let store = RealStore {
            spec: spec.clone(),
            opener,
            observer: Mutex::new(observer),
            hosts: Mutex::new(conns),
            per_host,
            durable,
            next_index: Mutex::new(hosts.len() + 1),
            inflight,
            faults,
            cleanup,
        };
        // The one target, registered before any host runs.
        store
            .call_blocking(None, Op::RegisterTarget)
            .map_err(|e| format!("registering the dispatcher target: {e}"))?;
        Ok(SimStore::Real(store))
    }

    /// The store host restarted: committed data must survive (see the module docs).
    pub fn restart(&self) -> Result<(), String> {
        match self {
            SimStore::Memory(_) => Ok(()),
            SimStore::Real(r) => r.reconnect_all(false),
        }
    }

    /// The in-memory store, when that is what runs (planted bugs rebuild it).
    pub fn memory(&self) -> Option<&MemoryEventStore> {
        match self {
            SimStore::Memory(m) => Some(m),
            _ => None,
        }
    }

    /// The real store, when that is what runs.
    pub fn real(&self) -> Option<&RealStore> {
        match self {
            SimStore::Real(r) => Some(r),
            _ => None,
        }
    }

    /// Waits until every request in flight is answered (a no-op in memory): called
    /// before simulated time moves on (the runtime's park hook).
    pub fn settle(&self) {
        if let SimStore::Real(r) = self {
            r.settle();
        }
    }

    fn harness(&self, op: Op) -> Result<Answer, StoreError> {
        match self {
            SimStore::Memory(m) => {
                let none = loom_stores::memory::MemoryTimerStore::new();
                let snaps = loom_stores::memory::MemorySnapshotStore::new();
                let d = loom_stores::memory::MemoryDispatcher::new();
                block_on(run_op(m, &none, &snaps, &d, op))
            }
            SimStore::Real(r) => r.call_blocking(None, op),
        }
    }

    /// `EventStore::append`, on the harness's connection.
    pub async fn append(
        &self,
        exec: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        if let SimStore::Memory(m) = self {
            return m.append(exec, expected_next, events, fence).await;
        }
        match self.harness(Op::Append {
            exec: exec.to_owned(),
            expected_next,
            events,
            fence: fence.map(|f| f.0),
        })? {
            Answer::Ack(a) => Ok(a),
            _ => Err(unexpected("append")),
        }
    }

    /// `EventStore::read`, on the harness's connection.
    pub async fn read(&self, exec: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        if let SimStore::Memory(m) = self {
            return m.read(exec).await;
        }
        match self.harness(Op::Read(exec.to_owned()))? {
            Answer::Log(l) => Ok(l),
            _ => Err(unexpected("read")),
        }
    }

    /// `EventStore::list_executions`, on the harness's connection.
    pub async fn list_executions(&self) -> Result<Vec<String>, StoreError> {
        if let SimStore::Memory(m) = self {
            return m.list_executions().await;
        }
        match self.harness(Op::List)? {
            Answer::Ids(l) => Ok(l),
            _ => Err(unexpected("list")),
        }
    }

    /// `EventStore::acquire_fence`, on the harness's connection.
    pub async fn acquire_fence(&self, exec: &str) -> Result<FenceToken, StoreError> {
        if let SimStore::Memory(m) = self {
            return m.acquire_fence(exec).await;
        }
        match self.harness(Op::Fence(exec.to_owned()))? {
            Answer::Number(t) => Ok(FenceToken(t)),
            _ => Err(unexpected("fence")),
        }
    }

    /// `TimerStore::due`, on the harness's connection (coverage scans).
    pub fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<Timer>, StoreError> {
        match self.harness(Op::Due { now_ms, limit })? {
            Answer::Timers(t) => Ok(t),
            _ => Err(unexpected("due")),
        }
    }
}

impl RealStore {
    /// The store's name as given.
    pub fn spec(&self) -> &StoreSpec {
        &self.spec
    }

    /// True when every host has a connection (process) of its own.
    pub fn per_host(&self) -> bool {
        self.per_host
    }

    /// True when the store's acknowledged writes survive a kill of its process (a
    /// `cmd:` adapter that answered `durable: true`, or a reference database).
    pub fn durable(&self) -> bool {
        self.durable
    }

    /// True for a store behind adapter processes (which can be killed).
    pub fn killable(&self) -> bool {
        lock(&self.observer).stdio.is_some() && self.durable
    }

    /// Records a fault of the store's own (a backend restart that failed).
    pub fn note_fault(&self, message: String) {
        let mut faults = lock(&self.faults);
        if faults.len() < ADAPTER_FAULTS_MAX {
            faults.push(message);
        }
    }

    /// The adapter faults seen so far (crashes, garbled output, with the adapter's
    /// stderr), each named by the connection's host.
    pub fn take_faults(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.faults))
    }

    fn settle(&self) {
        let n = self.inflight.lock();
        // Bounded in real time: an adapter's own call timeout ends a hung call first.
        let _ = self.inflight.idle.wait_timeout_while(
            n,
            Duration::from_millis(SETTLE_WAIT_MS_MAX),
            |n| *n > 0,
        );
    }

    fn send(&self, conn: &mut Conn, op: Op, tx: Reply) {
        let kill = if op.writes() {
            conn.kill_next_write.take()
        } else {
            None
        };
        *self.inflight.lock() += 1;
        if let Err(mpsc::SendError(Job::Op(_, _, tx))) = conn.jobs.send(Job::Op(op, kill, tx)) {
            let mut n = self.inflight.lock();
            *n = n.saturating_sub(1);
            tx(Err(backend("the store connection is closed")));
        }
    }

    fn submit(&self, host: Option<&str>, op: Op, tx: Reply) {
        match host.filter(|_| self.per_host) {
            None => self.send(&mut lock(&self.observer), op, tx),
            Some(h) => {
                let mut hosts = lock(&self.hosts);
                if !hosts.contains_key(h) {
                    // A host that appeared late: a connection of its own now.
                    let index = {
                        let mut i = lock(&self.next_index);
                        *i += 1;
                        *i - 1
                    };
                    let opener = self.opener.clone();
                    match Conn::start(
                        move || opener(index),
                        self.inflight.clone(),
                        self.faults.clone(),
                        h.to_owned(),
                    ) {
                        Ok(c) => {
                            hosts.insert(h.to_owned(), c);
                        }
                        Err(e) => {
                            tx(Err(backend(format!("{h}'s connection: {e}"))));
                            return;
                        }
                    }
                }
                if let Some(c) = hosts.get_mut(h) {
                    self.send(c, op, tx);
                }
            }
        }
    }

    /// Sends `op` on `host`'s connection (the harness's for `None`) and waits for it.
    pub async fn call(&self, host: Option<&str>, op: Op) -> Result<Answer, StoreError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.submit(
            host,
            op,
            Box::new(move |out| {
                let _ = tx.send(out);
            }),
        );
        rx.await
            .unwrap_or_else(|_| Err(backend("the store connection ended")))
    }

    /// Sends `op` and blocks until it is answered (the harness's own calls).
    pub fn call_blocking(&self, host: Option<&str>, op: Op) -> Result<Answer, StoreError> {
        let (tx, rx) = mpsc::channel();
        self.submit(
            host,
            op,
            Box::new(move |out| {
                let _ = tx.send(out);
            }),
        );
        rx.recv()
            .unwrap_or_else(|_| Err(backend("the store connection ended")))
    }

    /// Kills the adapter process of `host` (`SIGKILL` to its process group) now, or,
    /// with `during_write`, after that delay once its next write is sent and before
    /// its answer. False when nothing could be killed (not a `cmd:` store, or one that
    /// does not claim durability).
    pub fn kill(&self, host: &str, during_write: Option<Duration>) -> bool {
        if !self.killable() {
            return false;
        }
        let apply = |c: &mut Conn| match during_write {
            Some(d) => c.kill_next_write = Some(d),
            None => {
                if let Some(s) = &c.stdio {
                    s.kill();
                }
            }
        };
        if self.per_host {
            if let Some(c) = lock(&self.hosts).get_mut(host) {
                apply(c);
                return true;
            }
            false
        } else {
            apply(&mut lock(&self.observer));
            true
        }
    }

    /// Reopens every database connection; with `kill_adapters` (a backend restart)
    /// also kills every adapter process, which reconnects when it is started again. A
    /// store-host restart leaves adapter processes running: they are the disk.
    pub fn reconnect_all(&self, kill_adapters: bool) -> Result<(), String> {
        let mut errors = Vec::new();
        let mut each = |c: &mut Conn| {
            if let Some(s) = &c.stdio {
                if kill_adapters {
                    s.kill();
                }
                return;
            }
            let (tx, rx) = mpsc::channel();
            if c.jobs.send(Job::Reconnect(tx)).is_ok() {
                if let Ok(Err(e)) = rx.recv() {
                    errors.push(e);
                }
            }
        };
        each(&mut lock(&self.observer));
        for c in lock(&self.hosts).values_mut() {
            each(c);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

impl Drop for RealStore {
    fn drop(&mut self) {
        for c in lock(&self.hosts).values_mut() {
            c.stop();
        }
        lock(&self.observer).stop();
        match &self.cleanup {
            Cleanup::None => {}
            Cleanup::Sqlite(path) => {
                for p in sqlite_files(path) {
                    let _ = std::fs::remove_file(p);
                }
            }
            Cleanup::Postgres { url, schema } => {
                if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    let _ = rt.block_on(loom_stores::postgres::PgStore::drop_schema(url, schema));
                }
            }
        }
    }
}

/// A SQLite database file and its WAL companions.
fn sqlite_files(path: &std::path::Path) -> [PathBuf; 3] {
    let s = path.display().to_string();
    [
        path.to_path_buf(),
        PathBuf::from(format!("{s}-wal")),
        PathBuf::from(format!("{s}-shm")),
    ]
}
