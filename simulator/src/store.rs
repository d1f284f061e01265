//! The store under simulation: the event store the store host serves, chosen by name
//! (`memory`, `sqlite[:PATH]`, `postgres://…`, `cmd:COMMAND`).
//!
//! Key design decision: the store host reaches every store through the SPI (the
//! `EventStore` trait), and a `cmd:` store through the documented store protocol (the
//! conformance kits' `StdioStore` over `loom-process`), so a store author's adapter runs
//! under exactly the faults the reference does. Every call completes before simulated
//! time moves on (the simulation thread waits for it), so a store that answers the same
//! way keeps a seed deterministic. Timers and the dispatcher stay in memory: the event
//! store is what a store author brings.
//!
//! A store restart (the store host bounced) loses the requests in flight and their
//! acknowledgements. Committed data survives: a SQLite file is closed and opened again,
//! a PostgreSQL store reconnects to its schema, a `cmd:` adapter process keeps running
//! (it is the disk; restarting it would be a different fault, data loss).

use std::path::PathBuf;
use std::sync::mpsc;

use loom_conformance::stdio::StdioStore;
use loom_kernel::spi::{Anchor, AppendAck, EventStore, FenceToken, StoreError, StoreErrorKind};
use loom_kernel::EventEnvelope;
use loom_stores::memory::MemoryEventStore;
use loom_stores::sqlite::{SqliteEventStore, SqliteStore};

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

/// The event store of one seed.
pub enum SimStore {
    /// In memory.
    Memory(MemoryEventStore),
    /// A SQLite file.
    Sqlite {
        /// The open store (replaced by a fresh connection on a restart).
        store: std::sync::Mutex<SqliteEventStore>,
        /// Its file, removed on drop.
        path: PathBuf,
    },
    /// A PostgreSQL schema, served from a thread of its own.
    Postgres(PgHost),
    /// A store adapter process.
    Cmd(StdioStore),
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
            timeout_ms: loom_conformance::stdio::CALL_TIMEOUT.as_millis() as u64,
            hello_timeout_ms: loom_conformance::stdio::HELLO_TIMEOUT.as_millis() as u64,
        }
    }
}

fn backend(message: impl Into<String>) -> StoreError {
    StoreError::new(StoreErrorKind::Backend, message)
}

impl SimStore {
    /// Opens the store `spec` names for `seed` (empty, whatever ran before), with the
    /// default adapter time limits.
    pub fn open(spec: &StoreSpec, seed: u64) -> Result<SimStore, String> {
        Self::open_with(spec, seed, AdapterLimits::default())
    }

    /// [`SimStore::open`] with the time limits of a `cmd:` adapter (`--timeout-ms`,
    /// `--hello-timeout-ms`).
    pub fn open_with(
        spec: &StoreSpec,
        seed: u64,
        limits: AdapterLimits,
    ) -> Result<SimStore, String> {
        match spec {
            StoreSpec::Memory => Ok(SimStore::Memory(MemoryEventStore::new())),
            StoreSpec::Sqlite(dir) => {
                let dir = dir.clone().unwrap_or_else(std::env::temp_dir);
                let path = dir.join(format!("loom-sim-{}-{seed}.db", std::process::id()));
                for p in sqlite_files(&path) {
                    let _ = std::fs::remove_file(p);
                }
                let store = SqliteStore::open(&path)
                    .map_err(|e| format!("opening {}: {e}", path.display()))?
                    .events();
                Ok(SimStore::Sqlite {
                    store: std::sync::Mutex::new(store),
                    path,
                })
            }
            StoreSpec::Postgres(url) => PgHost::start(url, seed).map(SimStore::Postgres),
            StoreSpec::Cmd(command) => {
                let config = loom_conformance::stdio::StdioConfig {
                    call_timeout: std::time::Duration::from_millis(limits.timeout_ms),
                    hello_timeout: std::time::Duration::from_millis(limits.hello_timeout_ms),
                    ..loom_conformance::stdio::StdioConfig::new(command.as_str())
                };
                let store = StdioStore::start(&config).map_err(|f| f.message)?;
                store.reset("exec-")?;
                Ok(SimStore::Cmd(store))
            }
        }
    }

    /// The store host restarted: committed data must survive (see the module docs).
    pub fn restart(&self) -> Result<(), String> {
        match self {
            SimStore::Memory(_) | SimStore::Cmd(_) => Ok(()),
            SimStore::Sqlite { store, path } => {
                let fresh = SqliteStore::open(path)
                    .map_err(|e| format!("reopening {}: {e}", path.display()))?
                    .events();
                *store.lock().unwrap_or_else(|p| p.into_inner()) = fresh;
                Ok(())
            }
            SimStore::Postgres(pg) => pg.reconnect(),
        }
    }

    fn sqlite(store: &std::sync::Mutex<SqliteEventStore>) -> SqliteEventStore {
        store.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The in-memory store, when that is what runs (planted bugs rebuild it).
    pub fn memory(&self) -> Option<&MemoryEventStore> {
        match self {
            SimStore::Memory(m) => Some(m),
            _ => None,
        }
    }

    /// `EventStore::append`.
    pub async fn append(
        &self,
        exec: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        match self {
            SimStore::Memory(s) => s.append(exec, expected_next, events, fence).await,
            SimStore::Sqlite { store, .. } => {
                Self::sqlite(store)
                    .append(exec, expected_next, events, fence)
                    .await
            }
            SimStore::Cmd(s) => s.append(exec, expected_next, events, fence).await,
            SimStore::Postgres(pg) => {
                let exec = exec.to_owned();
                pg.call(move |s| {
                    Box::pin(async move { s.append(&exec, expected_next, events, fence).await })
                })
            }
        }
    }

    /// `EventStore::read`.
    pub async fn read(&self, exec: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        match self {
            SimStore::Memory(s) => s.read(exec).await,
            SimStore::Sqlite { store, .. } => Self::sqlite(store).read(exec).await,
            SimStore::Cmd(s) => s.read(exec).await,
            SimStore::Postgres(pg) => {
                let exec = exec.to_owned();
                pg.call(move |s| Box::pin(async move { s.read(&exec).await }))
            }
        }
    }

    /// `EventStore::list_executions`.
    pub async fn list_executions(&self) -> Result<Vec<String>, StoreError> {
        match self {
            SimStore::Memory(s) => s.list_executions().await,
            SimStore::Sqlite { store, .. } => Self::sqlite(store).list_executions().await,
            SimStore::Cmd(s) => s.list_executions().await,
            SimStore::Postgres(pg) => {
                pg.call(|s| Box::pin(async move { s.list_executions().await }))
            }
        }
    }

    /// `EventStore::acquire_fence`.
    pub async fn acquire_fence(&self, exec: &str) -> Result<FenceToken, StoreError> {
        match self {
            SimStore::Memory(s) => s.acquire_fence(exec).await,
            SimStore::Sqlite { store, .. } => Self::sqlite(store).acquire_fence(exec).await,
            SimStore::Cmd(s) => s.acquire_fence(exec).await,
            SimStore::Postgres(pg) => {
                let exec = exec.to_owned();
                pg.call(move |s| Box::pin(async move { s.acquire_fence(&exec).await }))
            }
        }
    }

    /// `EventStore::observe`.
    pub async fn observe(&self, exec: &str) -> Result<Anchor, StoreError> {
        match self {
            SimStore::Memory(s) => s.observe(exec).await,
            SimStore::Sqlite { store, .. } => Self::sqlite(store).observe(exec).await,
            SimStore::Cmd(s) => s.observe(exec).await,
            SimStore::Postgres(pg) => {
                let exec = exec.to_owned();
                pg.call(move |s| Box::pin(async move { s.observe(&exec).await }))
            }
        }
    }
}

impl Drop for SimStore {
    fn drop(&mut self) {
        match self {
            SimStore::Sqlite { path, .. } => {
                for p in sqlite_files(path) {
                    let _ = std::fs::remove_file(p);
                }
            }
            SimStore::Cmd(s) => {
                let _ = s.shutdown();
            }
            _ => {}
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

type PgFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;
type PgJob =
    Box<dyn FnOnce(&tokio::runtime::Runtime, &mut Option<loom_stores::postgres::PgStore>) + Send>;

/// A PostgreSQL store served from a thread of its own: tokio-postgres needs a tokio
/// runtime with I/O, and the simulation's hosts run on turmoil's runtimes, which
/// cannot block on another. Each call is sent to the thread and waited for.
pub struct PgHost {
    jobs: mpsc::Sender<PgJob>,
    url: String,
    schema: String,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PgHost {
    fn start(url: &str, seed: u64) -> Result<PgHost, String> {
        let schema = format!("loom_sim_{}_{seed}", std::process::id());
        let (jobs, rx) = mpsc::channel::<PgJob>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let (u, sch) = (url.to_owned(), schema.clone());
        let thread = std::thread::spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                    return;
                }
            };
            let mut store =
                match rt.block_on(loom_stores::postgres::PgStore::connect_fresh(&u, &sch)) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("connecting to {u}: {e}")));
                        return;
                    }
                };
            let _ = ready_tx.send(Ok(()));
            while let Ok(job) = rx.recv() {
                job(&rt, &mut store);
            }
            store = None;
            drop(store);
            let _ = rt.block_on(loom_stores::postgres::PgStore::drop_schema(&u, &sch));
        });
        ready_rx
            .recv()
            .map_err(|_| "the PostgreSQL thread ended".to_owned())??;
        Ok(PgHost {
            jobs,
            url: url.to_owned(),
            schema,
            thread: Some(thread),
        })
    }

    fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(loom_stores::postgres::PgEventStore) -> PgFuture<Result<T, StoreError>>
            + Send
            + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = mpsc::channel();
        let job: PgJob = Box::new(move |rt, store| {
            let out = match store {
                Some(s) => rt.block_on(f(s.events())),
                None => Err(backend("the PostgreSQL store is closed")),
            };
            let _ = tx.send(out);
        });
        self.jobs
            .send(job)
            .map_err(|_| backend("the PostgreSQL thread ended"))?;
        rx.recv()
            .map_err(|_| backend("the PostgreSQL thread ended"))?
    }

    /// A restart: a new connection to the same schema (committed rows survive).
    fn reconnect(&self) -> Result<(), String> {
        let (url, schema) = (self.url.clone(), self.schema.clone());
        let (tx, rx) = mpsc::channel();
        let job: PgJob = Box::new(move |rt, store| {
            let fresh = rt.block_on(loom_stores::postgres::PgStore::connect(&url, &schema));
            let _ = tx.send(match fresh {
                Ok(s) => {
                    *store = Some(s);
                    Ok(())
                }
                Err(e) => Err(e.to_string()),
            });
        });
        self.jobs
            .send(job)
            .map_err(|_| "the PostgreSQL thread ended".to_owned())?;
        rx.recv()
            .map_err(|_| "the PostgreSQL thread ended".to_owned())?
    }
}

impl Drop for PgHost {
    fn drop(&mut self) {
        // Closing the channel ends the thread, which drops the schema.
        let (dead, _) = mpsc::channel();
        drop(std::mem::replace(&mut self.jobs, dead));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
