//! Subjects for the stores `loom conform --store` names: `memory`, `sqlite` (a fresh
//! in-memory database per case), `sqlite:PATH` (a scratch file, emptied per case),
//! `postgres://…` (a scratch schema, dropped and made again per case; feature
//! `postgres`) and `cmd:COMMAND` (a stdio store adapter, `reset` per case).

use std::future::Future;

use loom_store_client::{self as stdio, StdioStore};
use loom_stores::sqlite::{
    SqliteArchiveStore, SqliteBranchRegistry, SqliteDispatcher, SqliteEventStore,
    SqliteSnapshotStore, SqliteStore, SqliteTimerStore,
};
use loom_stores::sqlite_plugin::{
    SqliteContentStore, SqliteDurableStateStore, SqliteReadModelStore,
};

use super::subject::{memory_stores, Stores, SubjectFactory};
use super::{explore, replay, ExploreOptions, ExploreOutcome, ReplayFile};

/// What to do with the store.
#[derive(Debug, Clone)]
pub enum Mode {
    /// A campaign.
    Explore(ExploreOptions),
    /// One replay file.
    Replay(Box<ReplayFile>),
}

fn go<F: SubjectFactory>(factory: &F, store: &str, mode: &Mode) -> ExploreOutcome {
    match mode {
        Mode::Explore(opts) => explore(factory, store, opts),
        Mode::Replay(file) => replay(factory, file),
    }
}

/// Every SPI of a SQLite database.
pub type SqliteStores = Stores<
    SqliteEventStore,
    SqliteSnapshotStore,
    SqliteArchiveStore,
    SqliteContentStore,
    SqliteDurableStateStore,
    SqliteReadModelStore,
    SqliteDispatcher,
    SqliteTimerStore,
    SqliteBranchRegistry,
>;

/// Every SPI of one SQLite database as a subject.
pub fn sqlite_stores(db: &SqliteStore) -> SqliteStores {
    Stores {
        events: Some(db.events()),
        snapshots: Some(db.snapshots()),
        archive: Some(db.archive()),
        content: Some(db.content()),
        state: Some(db.durable_state()),
        models: Some(db.read_models()),
        dispatcher: Some(db.dispatcher()),
        timers: Some(db.timers()),
        branches: Some(db.branches()),
    }
}

/// The SPIs an adapter's `hello` lists, as a subject over the one process.
pub type StdioStores = Stores<
    StdioStore,
    StdioStore,
    StdioStore,
    StdioStore,
    StdioStore,
    StdioStore,
    StdioStore,
    StdioStore,
    StdioStore,
>;

/// The SPIs `adapter`'s `hello` lists, each a handle on the same process.
pub fn stdio_stores(adapter: &StdioStore) -> StdioStores {
    let has = |spi: &str| adapter.implements(spi).then(|| adapter.clone());
    Stores {
        events: has(stdio::SPI_EVENT_STORE),
        snapshots: has(stdio::SPI_SNAPSHOT_STORE),
        archive: has(stdio::SPI_ARCHIVE_STORE),
        content: has(stdio::SPI_CONTENT_STORE),
        state: has(stdio::SPI_DURABLE_STATE_STORE),
        models: has(stdio::SPI_READ_MODEL_STORE),
        dispatcher: has(stdio::SPI_DISPATCHER),
        timers: has(stdio::SPI_TIMER_STORE),
        branches: has(stdio::SPI_BRANCH_REGISTRY),
    }
}

struct Factory<F>(F);

impl<S: super::Subject, Fut: Future<Output = Result<S, String>>, F: Fn() -> Fut> SubjectFactory
    for Factory<F>
{
    type Subject = S;
    fn fresh(&self) -> impl Future<Output = Result<S, String>> {
        (self.0)()
    }
}

/// Runs `mode` against the store named `store` (as `loom conform --store` names it),
/// with the default adapter time limits.
pub fn run_on(store: &str, mode: &Mode) -> Result<ExploreOutcome, String> {
    run_on_with(store, mode, stdio::CALL_TIMEOUT, stdio::HELLO_TIMEOUT)
}

/// As [`run_on`], with these time limits for a `cmd:` adapter (each call, and starting
/// with `hello`).
pub fn run_on_with(
    store: &str,
    mode: &Mode,
    call_timeout: std::time::Duration,
    hello_timeout: std::time::Duration,
) -> Result<ExploreOutcome, String> {
    if store == "memory" {
        let f = Factory(|| async { Ok(memory_stores()) });
        return Ok(go(&f, store, mode));
    }
    if store == "sqlite" || store == "sqlite::memory:" {
        let f = Factory(|| async {
            SqliteStore::open_in_memory()
                .map(|db| sqlite_stores(&db))
                .map_err(|e| e.to_string())
        });
        return Ok(go(&f, store, mode));
    }
    if let Some(path) = store.strip_prefix("sqlite:") {
        let path = path.to_string();
        let f = Factory(move || {
            let path = path.clone();
            async move {
                for suffix in ["", "-wal", "-shm"] {
                    let file = format!("{path}{suffix}");
                    match std::fs::remove_file(&file) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(format!("emptying the scratch file {file}: {e}")),
                    }
                }
                SqliteStore::open(&path)
                    .map(|db| sqlite_stores(&db))
                    .map_err(|e| format!("opening {path}: {e}"))
            }
        });
        return Ok(go(&f, store, mode));
    }
    if store.starts_with("postgres://") || store.starts_with("postgresql://") {
        return postgres(store, mode);
    }
    if let Some(command) = store.strip_prefix("cmd:") {
        let mut config = stdio::StdioConfig::new(command.trim());
        config.call_timeout = call_timeout;
        config.hello_timeout = hello_timeout;
        let adapter = StdioStore::start(&config).map_err(|f| f.message)?;
        let f = Factory(|| {
            let adapter = adapter.clone();
            async move {
                let _ = adapter.take_fault();
                adapter.reset(&format!(
                    "explore.{}.",
                    loom_conformance::runner::fresh_run_id()
                ))?;
                Ok(stdio_stores(&adapter))
            }
        });
        let mut outcome = go(&f, store, mode);
        let reported = outcome
            .divergence
            .as_ref()
            .is_some_and(|d| d.fault.is_some());
        if let Some(fault) = adapter.take_fault().filter(|_| !reported) {
            let why = format!("the adapter failed: {}", fault.message);
            outcome.error = Some(match outcome.error {
                Some(e) => format!("{e}; {why}"),
                None => why,
            });
        }
        return Ok(outcome);
    }
    Err(format!(
        "unknown store {store:?}: use memory, sqlite[:PATH], postgres://URL or cmd:\"COMMAND\""
    ))
}

#[cfg(feature = "postgres")]
fn postgres(url: &str, mode: &Mode) -> Result<ExploreOutcome, String> {
    use loom_stores::postgres::PgStore;
    let schema = format!("loom_explore_{}", loom_conformance::runner::fresh_run_id());
    let f = Factory(|| {
        let (url, schema) = (url.to_string(), schema.clone());
        async move {
            PgStore::connect_fresh(&url, &schema)
                .await
                .map(|db| Stores {
                    events: Some(db.events()),
                    snapshots: Some(db.snapshots()),
                    archive: Some(db.archive()),
                    content: Some(db.content()),
                    state: Some(db.durable_state()),
                    models: Some(db.read_models()),
                    dispatcher: Some(db.dispatcher()),
                    timers: Some(db.timers()),
                    branches: Some(db.branches()),
                })
                .map_err(|e| format!("connecting to {url} (schema {schema}): {e}"))
        }
    });
    let outcome = go(&f, url, mode);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    if let Err(e) = rt.block_on(PgStore::drop_schema(url, &schema)) {
        eprintln!("warning: could not drop the scratch schema {schema}: {e}");
    }
    Ok(outcome)
}

#[cfg(not(feature = "postgres"))]
fn postgres(url: &str, _mode: &Mode) -> Result<ExploreOutcome, String> {
    Err(format!(
        "{url}: this build has no PostgreSQL support (loom-props feature `postgres`)"
    ))
}
