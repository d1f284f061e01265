//! The embedded default: all six SPIs over one SQLite database (rusqlite, bundled).
//! The plugin-tier SPIs live over the same database in [`crate::sqlite_plugin`]; their
//! tables are part of the schema below.
//!
//! Design:
//!
//! - One [`SqliteStore`] owns one connection behind a `Mutex`; the per-SPI handles
//!   ([`SqliteEventStore`], ...) share it. Every method that writes runs in one
//!   `BEGIN IMMEDIATE` transaction, so the concurrency and fence checks and the write
//!   are atomic even with other processes on the same file (they wait on the
//!   busy timeout, [`SQLITE_BUSY_TIMEOUT_MS`]).
//! - Files use WAL mode. A `loom_schema_version` table records the schema; opening a
//!   database written by a newer schema is refused.
//! - Events keep `payload` and `metadata` as TEXT exactly as serde_json wrote them, so the
//!   stored bytes are the appended bytes; `copyPrefix` copies rows with `INSERT ... SELECT`
//!   and never re-serialises.
//! - Stream heads (`loom_streams`) hold `live`, the incarnation, the next sequence and
//!   the fence. Incarnations come from the `loom_counters` table (SPI-07: store
//!   metadata, never an event). A deleted stream keeps its head row as a tombstone, so
//!   its fence and last incarnation survive (anchors and tokens never go back).
//! - `storeNow` is not implemented and not claimed: a single-process store has no
//!   shared clock (SPI-08); callers use their injected clock.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use serde_json::{Map, Value};

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::spi::{
    check, Anchor, AppendAck, ArchiveStore, ArchiveStoreCapabilities, ArchiveStoreMethod,
    BranchRecord, BranchRegistry, Capabilities, DispatchId, EventStore, EventStoreCapabilities,
    EventStoreMethod, ExecutionDispatcher, ExecutionPackage, FenceToken, Lease, Page,
    SealingCapability, SnapshotStore, SnapshotStoreCapabilities, SnapshotStoreMethod, StoreError,
    Timer, TimerStore, DISPATCH_QUEUE_LEN_MAX, LEASE_DURATION_MS_DEFAULT, TIMER_STORE_SPI_VERSION,
};
use loom_kernel::versions::{
    ARCHIVE_STORE_SPI_VERSION, BRANCH_REGISTRY_SPI_VERSION, DISPATCHER_SPI_VERSION,
    EVENT_STORE_SPI_VERSION, SNAPSHOT_STORE_SPI_VERSION,
};
use loom_kernel::JsonText;

use crate::lease_duration_checked;

/// The schema version this code writes and reads. Version 2 keeps the dispatcher's
/// held-package count in `loom_counters` (`dispatch_held`); a version 1 database is
/// migrated when it is opened (the count taken from its rows), and a build that reads
/// only version 1 refuses a version 2 database, so no writer can skip the count.
pub const SQLITE_SCHEMA_VERSION: i64 = 2;
/// How long a writer waits for another process's lock before failing with `backend`.
pub const SQLITE_BUSY_TIMEOUT_MS: u64 = 5_000;

/// The EventStore methods the SQLite store claims: all but `storeNow`.
pub const SQLITE_EVENT_STORE_METHODS: [EventStoreMethod; 9] = [
    EventStoreMethod::ReadRange,
    EventStoreMethod::AcquireFence,
    EventStoreMethod::AcquireFenceIf,
    EventStoreMethod::AppendIfUnchanged,
    EventStoreMethod::DeleteThrough,
    EventStoreMethod::SealingCapability,
    EventStoreMethod::CopyPrefix,
    EventStoreMethod::DeleteExecution,
    EventStoreMethod::ListExecutionsPage,
];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS loom_schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS loom_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO loom_counters (name, value) VALUES
    ('incarnation', 0), ('dispatch', 0), ('queue_position', 0), ('lease', 0),
    ('read_model_cursor', 0);
CREATE TABLE IF NOT EXISTS loom_streams (
    execution_id TEXT PRIMARY KEY,
    live INTEGER NOT NULL,
    incarnation INTEGER NOT NULL,
    next_sequence INTEGER NOT NULL,
    fence INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_events (
    execution_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    timestamp_ms INTEGER NOT NULL,
    payload TEXT NOT NULL,
    metadata TEXT,
    PRIMARY KEY (execution_id, sequence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_snapshots (
    execution_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    schema_version TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (execution_id, sequence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_archive (
    execution_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    timestamp_ms INTEGER NOT NULL,
    payload TEXT NOT NULL,
    metadata TEXT,
    PRIMARY KEY (execution_id, sequence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_branches (
    execution_id TEXT PRIMARY KEY,
    parent_execution_id TEXT NOT NULL,
    forked_at_sequence INTEGER NOT NULL,
    chain TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS loom_branches_parent ON loom_branches (parent_execution_id, execution_id);
CREATE TABLE IF NOT EXISTS loom_targets (name TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_dispatch (
    dispatch_id INTEGER PRIMARY KEY,
    execution_id TEXT NOT NULL UNIQUE,
    flow_id TEXT NOT NULL,
    resume_hint TEXT,
    compute_target TEXT,
    queue_position INTEGER,
    lease_id INTEGER,
    target TEXT,
    worker_id TEXT,
    deadline_ms INTEGER
);
CREATE INDEX IF NOT EXISTS loom_dispatch_queue ON loom_dispatch (queue_position);
-- How many packages loom_dispatch holds, kept with every insert and delete, so the queue
-- limit is one row read instead of a count of up to DISPATCH_QUEUE_LEN_MAX rows. A
-- database written before the counter existed starts it from its rows.
INSERT OR IGNORE INTO loom_counters (name, value)
    SELECT 'dispatch_held', COUNT(*) FROM loom_dispatch;
CREATE TABLE IF NOT EXISTS loom_timers (
    execution_id TEXT NOT NULL,
    key TEXT NOT NULL,
    wake_at_ms INTEGER NOT NULL,
    PRIMARY KEY (execution_id, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS loom_timers_due ON loom_timers (wake_at_ms, execution_id, key);
CREATE TABLE IF NOT EXISTS loom_content (
    digest TEXT PRIMARY KEY,
    bytes BLOB NOT NULL,
    public INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_content_owners (
    digest TEXT NOT NULL,
    owner TEXT NOT NULL,
    PRIMARY KEY (digest, owner)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_state (
    key TEXT PRIMARY KEY,
    value TEXT,
    version INTEGER NOT NULL,
    live INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_read_models (
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (collection, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_read_model_cursors (
    serial INTEGER PRIMARY KEY,
    token TEXT NOT NULL UNIQUE,
    collection TEXT NOT NULL,
    last_id TEXT NOT NULL
);
";

pub(crate) fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::backend(format!("sqlite: {e}"))
}

/// A stored integer that must be a non-negative u64.
pub(crate) fn unsigned(value: i64, what: &str) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| backend(format!("{what} {value} is negative")))
}

/// A checked (<= SEQUENCE_MAX) u64 as the signed column type.
fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// One SQLite database holding every SPI's tables.
#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    lease_ms: i64,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`; `":memory:"` opens a private
    /// in-memory database. Files are switched to WAL mode.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref();
        if path.as_os_str() == ":memory:" {
            return SqliteStore::open_in_memory();
        }
        let conn = Connection::open(path).map_err(backend)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(backend)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(backend(format!(
                "could not switch {} to WAL (journal mode {mode})",
                path.display()
            )));
        }
        SqliteStore::init(conn)
    }

    /// Opens a private in-memory database.
    pub fn open_in_memory() -> Result<SqliteStore, StoreError> {
        SqliteStore::init(Connection::open_in_memory().map_err(backend)?)
    }

    fn init(mut conn: Connection) -> Result<SqliteStore, StoreError> {
        conn.busy_timeout(std::time::Duration::from_millis(SQLITE_BUSY_TIMEOUT_MS))
            .map_err(backend)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        tx.execute_batch(SCHEMA).map_err(backend)?;
        let version: Option<i64> = tx
            .query_row("SELECT MAX(version) FROM loom_schema_version", [], |r| {
                r.get(0)
            })
            .map_err(backend)?;
        match version {
            None => {
                tx.execute(
                    "INSERT INTO loom_schema_version (version) VALUES (?1)",
                    [SQLITE_SCHEMA_VERSION],
                )
                .map_err(backend)?;
            }
            Some(v) if v == SQLITE_SCHEMA_VERSION => {}
            Some(1) => {
                // Version 1 had no held-package count: take it from the rows.
                tx.execute_batch(&format!(
                    "INSERT OR REPLACE INTO loom_counters (name, value)
                         SELECT 'dispatch_held', COUNT(*) FROM loom_dispatch;
                     INSERT INTO loom_schema_version (version) VALUES ({SQLITE_SCHEMA_VERSION});"
                ))
                .map_err(backend)?;
            }
            Some(v) => {
                return Err(backend(format!(
                    "database schema version {v}, this build reads {SQLITE_SCHEMA_VERSION} (and migrates 1)"
                )))
            }
        }
        tx.commit().map_err(backend)?;
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            lease_ms: LEASE_DURATION_MS_DEFAULT,
        })
    }

    /// Empties every table but the schema version, in one transaction: the database as
    /// a fresh one, for every connection on it (the store protocol's `reset`, served by
    /// `loom store-adapter`).
    pub fn reset(&self) -> Result<(), StoreError> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let tables: Vec<String> = {
            let mut q = tx
                .prepare(r"SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'loom\_%' ESCAPE '\' AND name <> 'loom_schema_version'")
                .map_err(backend)?;
            let rows = q.query_map([], |r| r.get(0)).map_err(backend)?;
            rows.collect::<Result<_, _>>().map_err(backend)?
        };
        for t in &tables {
            tx.execute(&format!("DELETE FROM \"{t}\""), [])
                .map_err(backend)?;
        }
        // The counters' rows (at zero) are part of a fresh database.
        tx.execute_batch(SCHEMA).map_err(backend)?;
        tx.commit().map_err(backend)
    }

    /// The same database with dispatcher leases of `lease_ms`.
    pub fn with_lease_ms(mut self, lease_ms: i64) -> Result<SqliteStore, StoreError> {
        self.lease_ms = lease_duration_checked(lease_ms)?;
        Ok(self)
    }

    /// The EventStore over this database.
    pub fn events(&self) -> SqliteEventStore {
        SqliteEventStore { db: self.clone() }
    }

    /// The SnapshotStore over this database.
    pub fn snapshots(&self) -> SqliteSnapshotStore {
        SqliteSnapshotStore { db: self.clone() }
    }

    /// The ArchiveStore over this database.
    pub fn archive(&self) -> SqliteArchiveStore {
        SqliteArchiveStore { db: self.clone() }
    }

    /// The BranchRegistry over this database.
    pub fn branches(&self) -> SqliteBranchRegistry {
        SqliteBranchRegistry { db: self.clone() }
    }

    /// The ExecutionDispatcher over this database.
    pub fn dispatcher(&self) -> SqliteDispatcher {
        SqliteDispatcher { db: self.clone() }
    }

    /// The TimerStore over this database.
    pub fn timers(&self) -> SqliteTimerStore {
        SqliteTimerStore { db: self.clone() }
    }

    /// The ContentStore over this database (plugin tier).
    pub fn content(&self) -> crate::sqlite_plugin::SqliteContentStore {
        crate::sqlite_plugin::SqliteContentStore::new(self.clone())
    }

    /// The DurableStateStore over this database (plugin tier).
    pub fn durable_state(&self) -> crate::sqlite_plugin::SqliteDurableStateStore {
        crate::sqlite_plugin::SqliteDurableStateStore::new(self.clone())
    }

    /// The ReadModelStore over this database (plugin tier).
    pub fn read_models(&self) -> crate::sqlite_plugin::SqliteReadModelStore {
        crate::sqlite_plugin::SqliteReadModelStore::new(self.clone())
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a half-written transaction: an
        // unfinished rusqlite Transaction rolls back when dropped.
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction: committed on `Ok`, rolled back on `Err`.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let out = f(&tx)?;
        tx.commit().map_err(backend)?;
        Ok(out)
    }

    /// Runs `f` in one deferred (read) transaction, so multi-statement reads are consistent.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(backend)?;
        let out = f(&tx)?;
        tx.commit().map_err(backend)?;
        Ok(out)
    }
}

pub(crate) fn bump(tx: &Transaction<'_>, counter: &str) -> Result<u64, StoreError> {
    let value: i64 = tx
        .query_row(
            "UPDATE loom_counters SET value = value + 1 WHERE name = ?1 RETURNING value",
            [counter],
            |r| r.get(0),
        )
        .map_err(backend)?;
    unsigned(value, counter)
}

// ---------------------------------------------------------------------------------
// Envelope rows

const ENVELOPE_COLUMNS: &str =
    "event_id, workflow_id, execution_id, event_type, sequence, timestamp_ms, payload, metadata";

type RawEnvelope = (
    String,
    String,
    String,
    String,
    i64,
    i64,
    String,
    Option<String>,
);

fn raw_envelope(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawEnvelope> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
    ))
}

fn envelope_from_raw(raw: RawEnvelope) -> Result<EventEnvelope, StoreError> {
    let (id, workflow_id, execution_id, event_type, sequence, timestamp_ms, payload, metadata) =
        raw;
    // Stored as the normal text it was written from, so it is taken as it is (one scan).
    let payload = JsonText::parse(&payload).map_err(|e| backend(format!("stored payload: {e}")))?;
    let metadata = match metadata {
        None => None,
        Some(text) => Some(
            serde_json::from_str::<Map<String, Value>>(&text)
                .map_err(|e| backend(format!("stored metadata: {e}")))?,
        ),
    };
    Ok(EventEnvelope {
        id,
        workflow_id,
        execution_id,
        event_type,
        sequence: unsigned(sequence, "sequence")?,
        timestamp_ms,
        payload,
        metadata,
    })
}

fn select_envelopes(
    tx: &Transaction<'_>,
    table: &str,
    filter: &str,
    args: &[&dyn rusqlite::ToSql],
) -> Result<Vec<EventEnvelope>, StoreError> {
    let sql = format!("SELECT {ENVELOPE_COLUMNS} FROM {table} WHERE {filter} ORDER BY sequence");
    let mut stmt = tx.prepare_cached(&sql).map_err(backend)?;
    let raws = stmt
        .query_map(args, raw_envelope)
        .map_err(backend)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(backend)?;
    raws.into_iter().map(envelope_from_raw).collect()
}

fn insert_envelopes(
    tx: &Transaction<'_>,
    table: &str,
    events: &[EventEnvelope],
) -> Result<(), StoreError> {
    let sql =
        format!("INSERT INTO {table} ({ENVELOPE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    let mut stmt = tx.prepare_cached(&sql).map_err(backend)?;
    for e in events {
        let payload = e.payload.as_str();
        let metadata = e
            .metadata
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(backend)?;
        stmt.execute(params![
            e.id,
            e.workflow_id,
            e.execution_id,
            e.event_type,
            signed(e.sequence),
            e.timestamp_ms,
            payload,
            metadata
        ])
        .map_err(backend)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// EventStore

#[derive(Debug, Clone, Copy, Default)]
struct Head {
    live: bool,
    incarnation: u64,
    next_sequence: u64,
    fence: u64,
}

impl Head {
    fn anchor(&self) -> Anchor {
        Anchor {
            incarnation: self.incarnation,
            next_sequence: if self.live { self.next_sequence } else { 0 },
            fence: self.fence,
        }
    }
}

fn head(tx: &Transaction<'_>, execution_id: &str) -> Result<Head, StoreError> {
    let row: Option<(i64, i64, i64, i64)> = tx
        .query_row(
            "SELECT live, incarnation, next_sequence, fence FROM loom_streams WHERE execution_id = ?1",
            [execution_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()
        .map_err(backend)?;
    Ok(match row {
        None => Head::default(),
        Some((live, incarnation, next_sequence, fence)) => Head {
            live: live != 0,
            incarnation: unsigned(incarnation, "incarnation")?,
            next_sequence: unsigned(next_sequence, "next sequence")?,
            fence: unsigned(fence, "fence")?,
        },
    })
}

/// Writes a validated batch under the open transaction, creating the stream if needed.
fn write_events(
    tx: &Transaction<'_>,
    execution_id: &str,
    head: Head,
    events: &[EventEnvelope],
) -> Result<AppendAck, StoreError> {
    let first_sequence = if head.live { head.next_sequence } else { 0 };
    let next_sequence = first_sequence + events.len() as u64;
    let incarnation = if head.live {
        head.incarnation
    } else {
        bump(tx, "incarnation")?
    };
    insert_envelopes(tx, "loom_events", events)?;
    tx.execute(
        "INSERT INTO loom_streams (execution_id, live, incarnation, next_sequence, fence) VALUES (?1, 1, ?2, ?3, 0)
         ON CONFLICT (execution_id) DO UPDATE SET live = 1, incarnation = ?2, next_sequence = ?3",
        params![execution_id, signed(incarnation), signed(next_sequence)],
    )
    .map_err(backend)?;
    Ok(AppendAck {
        first_sequence,
        next_sequence,
    })
}

fn bump_fence(tx: &Transaction<'_>, execution_id: &str) -> Result<FenceToken, StoreError> {
    let fence: i64 = tx
        .query_row(
            "INSERT INTO loom_streams (execution_id, live, incarnation, next_sequence, fence) VALUES (?1, 0, 0, 0, 1)
             ON CONFLICT (execution_id) DO UPDATE SET fence = fence + 1 RETURNING fence",
            [execution_id],
            |r| r.get(0),
        )
        .map_err(backend)?;
    Ok(FenceToken(unsigned(fence, "fence")?))
}

/// The SQLite EventStore (all optional methods but `storeNow`).
#[derive(Clone)]
pub struct SqliteEventStore {
    db: SqliteStore,
}

impl EventStore for SqliteEventStore {
    fn capabilities(&self) -> EventStoreCapabilities {
        Capabilities::new(EVENT_STORE_SPI_VERSION, SQLITE_EVENT_STORE_METHODS)
    }

    async fn append(
        &self,
        execution_id: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        check::append_batch(execution_id, expected_next, &events)?;
        self.db.write(|tx| {
            let head = head(tx, execution_id)?;
            check::fence(head.fence, fence)?;
            let actual_next = head.anchor().next_sequence;
            if actual_next != expected_next {
                return Err(StoreError::conflict(expected_next, actual_next));
            }
            write_events(tx, execution_id, head, &events)
        })
    }

    async fn read(&self, execution_id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        self.db
            .read(|tx| select_envelopes(tx, "loom_events", "execution_id = ?1", &[&execution_id]))
    }

    async fn list_executions(&self) -> Result<Vec<String>, StoreError> {
        self.db.read(|tx| {
            let mut stmt = tx
                .prepare_cached(
                    "SELECT execution_id FROM loom_streams WHERE live = 1 ORDER BY execution_id",
                )
                .map_err(backend)?;
            let ids = stmt
                .query_map([], |r| r.get(0))
                .map_err(backend)?
                .collect::<rusqlite::Result<Vec<String>>>();
            ids.map_err(backend)
        })
    }

    async fn read_range(
        &self,
        execution_id: &str,
        from: u64,
        to: u64,
    ) -> Result<Vec<EventEnvelope>, StoreError> {
        if from > to {
            return Err(StoreError::invalid(format!(
                "readRange from {from} > to {to}"
            )));
        }
        check::sequence("readRange to", to)?;
        let (from, to) = (signed(from), signed(to));
        self.db.read(|tx| {
            select_envelopes(
                tx,
                "loom_events",
                "execution_id = ?1 AND sequence >= ?2 AND sequence <= ?3",
                &[&execution_id, &from, &to],
            )
        })
    }

    async fn acquire_fence(&self, execution_id: &str) -> Result<FenceToken, StoreError> {
        check::id("execution id", execution_id)?;
        self.db.write(|tx| bump_fence(tx, execution_id))
    }

    async fn acquire_fence_if(
        &self,
        execution_id: &str,
        expected_current: Option<FenceToken>,
    ) -> Result<FenceToken, StoreError> {
        check::id("execution id", execution_id)?;
        self.db.write(|tx| {
            let current = head(tx, execution_id)?.fence;
            let current = (current != 0).then_some(current);
            if current != expected_current.map(|t| t.0) {
                return Err(StoreError::fence_conflict(
                    expected_current.map(|t| t.0),
                    current,
                ));
            }
            bump_fence(tx, execution_id)
        })
    }

    async fn observe(&self, execution_id: &str) -> Result<Anchor, StoreError> {
        self.db.read(|tx| Ok(head(tx, execution_id)?.anchor()))
    }

    async fn append_if_unchanged(
        &self,
        execution_id: &str,
        anchor: Anchor,
        events: Vec<EventEnvelope>,
    ) -> Result<AppendAck, StoreError> {
        check::append_batch(execution_id, anchor.next_sequence, &events)?;
        self.db.write(|tx| {
            let head = head(tx, execution_id)?;
            let current = head.anchor();
            if current != anchor {
                return Err(StoreError::anchor_changed(format!(
                    "observed {anchor:?}, the stream is now {current:?}"
                )));
            }
            write_events(tx, execution_id, head, &events)
        })
    }

    async fn sealing_capability(&self) -> Result<Option<SealingCapability>, StoreError> {
        Ok(None)
    }

    async fn delete_through(&self, execution_id: &str, through: u64) -> Result<u64, StoreError> {
        check::sequence("through", through)?;
        self.db.write(|tx| {
            if !head(tx, execution_id)?.live {
                return Err(StoreError::not_found(format!(
                    "no execution {execution_id:?}"
                )));
            }
            let n = tx
                .execute(
                    "DELETE FROM loom_events WHERE execution_id = ?1 AND sequence <= ?2",
                    params![execution_id, signed(through)],
                )
                .map_err(backend)?;
            Ok(n as u64)
        })
    }

    async fn copy_prefix(
        &self,
        source: &str,
        target: &str,
        through: u64,
    ) -> Result<AppendAck, StoreError> {
        check::id("source execution id", source)?;
        check::id("target execution id", target)?;
        check::sequence("through", through)?;
        if source == target {
            return Err(StoreError::invalid(
                "copyPrefix source and target are the same execution",
            ));
        }
        self.db.write(|tx| {
            let src = head(tx, source)?;
            if !src.live {
                return Err(StoreError::not_found(format!("no execution {source:?}")));
            }
            let has_zero: bool = tx
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM loom_events WHERE execution_id = ?1 AND sequence = 0)",
                    [source],
                    |r| r.get(0),
                )
                .map_err(backend)?;
            if !has_zero {
                return Err(StoreError::invalid("the source no longer holds sequence 0 (compacted)"));
            }
            if through >= src.next_sequence {
                return Err(StoreError::invalid(format!(
                    "through {through} is past the source's head ({})",
                    src.next_sequence
                )));
            }
            let dst = head(tx, target)?;
            if dst.live {
                return Err(StoreError::conflict(0, dst.next_sequence));
            }
            // Copy the rows as stored: the bytes are not re-serialised.
            tx.execute(
                &format!(
                    "INSERT INTO loom_events ({ENVELOPE_COLUMNS})
                     SELECT event_id, workflow_id, ?2, event_type, sequence, timestamp_ms, payload, metadata
                     FROM loom_events WHERE execution_id = ?1 AND sequence <= ?3"
                ),
                params![source, target, signed(through)],
            )
            .map_err(backend)?;
            let incarnation = bump(tx, "incarnation")?;
            let next_sequence = through + 1;
            tx.execute(
                "INSERT INTO loom_streams (execution_id, live, incarnation, next_sequence, fence) VALUES (?1, 1, ?2, ?3, 0)
                 ON CONFLICT (execution_id) DO UPDATE SET live = 1, incarnation = ?2, next_sequence = ?3",
                params![target, signed(incarnation), signed(next_sequence)],
            )
            .map_err(backend)?;
            Ok(AppendAck { first_sequence: 0, next_sequence })
        })
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<bool, StoreError> {
        self.db.write(|tx| {
            if !head(tx, execution_id)?.live {
                return Ok(false);
            }
            tx.execute(
                "DELETE FROM loom_events WHERE execution_id = ?1",
                [execution_id],
            )
            .map_err(backend)?;
            tx.execute(
                "UPDATE loom_streams SET live = 0, next_sequence = 0 WHERE execution_id = ?1",
                [execution_id],
            )
            .map_err(backend)?;
            Ok(true)
        })
    }

    async fn list_executions_page(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<Page, StoreError> {
        check::page_limit(limit)?;
        let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        let mut ids: Vec<String> = self.db.read(|tx| {
            let mut stmt = tx
                .prepare_cached(
                    "SELECT execution_id FROM loom_streams WHERE live = 1 AND (?1 IS NULL OR execution_id > ?1)
                     ORDER BY execution_id LIMIT ?2",
                )
                .map_err(backend)?;
            let ids = stmt.query_map(params![cursor, fetch], |r| r.get(0)).map_err(backend)?;
            ids.collect::<rusqlite::Result<Vec<String>>>().map_err(backend)
        })?;
        let more = ids.len() > limit;
        ids.truncate(limit);
        let next_cursor = if more { ids.last().cloned() } else { None };
        Ok(Page { ids, next_cursor })
    }
}

// ---------------------------------------------------------------------------------
// SnapshotStore

/// The SQLite SnapshotStore (every optional method).
#[derive(Clone)]
pub struct SqliteSnapshotStore {
    db: SqliteStore,
}

fn snapshot_from_row(
    schema_version: String,
    sequence: i64,
    state: String,
) -> Result<SnapshotRecord, StoreError> {
    Ok(SnapshotRecord {
        schema_version,
        sequence: unsigned(sequence, "snapshot sequence")?,
        state: serde_json::from_str(&state)
            .map_err(|e| backend(format!("stored snapshot: {e}")))?,
    })
}

impl SnapshotStore for SqliteSnapshotStore {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        Capabilities::new(SNAPSHOT_STORE_SPI_VERSION, SnapshotStoreMethod::ALL)
    }

    async fn save(&self, execution_id: &str, record: SnapshotRecord) -> Result<(), StoreError> {
        check::id("execution id", execution_id)?;
        check::sequence("snapshot sequence", record.sequence)?;
        let state = serde_json::to_string(&record.state).map_err(backend)?;
        self.db.write(|tx| {
            tx.execute(
                "INSERT INTO loom_snapshots (execution_id, sequence, schema_version, state) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (execution_id, sequence) DO UPDATE SET schema_version = ?3, state = ?4",
                params![execution_id, signed(record.sequence), record.schema_version, state],
            )
            .map_err(backend)?;
            Ok(())
        })
    }

    async fn load_latest(&self, execution_id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        let row: Option<(String, i64, String)> = self.db.read(|tx| {
            tx.query_row(
                "SELECT schema_version, sequence, state FROM loom_snapshots WHERE execution_id = ?1
                 ORDER BY sequence DESC LIMIT 1",
                [execution_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(backend)
        })?;
        row.map(|(v, s, st)| snapshot_from_row(v, s, st))
            .transpose()
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<u64, StoreError> {
        self.db.write(|tx| {
            let n = tx
                .execute(
                    "DELETE FROM loom_snapshots WHERE execution_id = ?1",
                    [execution_id],
                )
                .map_err(backend)?;
            Ok(n as u64)
        })
    }

    async fn load_latest_sealed(
        &self,
        execution_id: &str,
    ) -> Result<Option<SnapshotRecord>, StoreError> {
        self.load_latest(execution_id).await
    }

    async fn prune_snapshots(
        &self,
        execution_id: &str,
        through_sequence: u64,
    ) -> Result<u64, StoreError> {
        check::sequence("through", through_sequence)?;
        self.db.write(|tx| {
            let n = tx
                .execute(
                    "DELETE FROM loom_snapshots WHERE execution_id = ?1 AND sequence <= ?2",
                    params![execution_id, signed(through_sequence)],
                )
                .map_err(backend)?;
            Ok(n as u64)
        })
    }

    async fn list_sequences(&self, execution_id: &str) -> Result<Vec<u64>, StoreError> {
        let raw: Vec<i64> = self.db.read(|tx| {
            let mut stmt = tx
                .prepare_cached(
                    "SELECT sequence FROM loom_snapshots WHERE execution_id = ?1 ORDER BY sequence",
                )
                .map_err(backend)?;
            let rows = stmt
                .query_map([execution_id], |r| r.get(0))
                .map_err(backend)?;
            rows.collect::<rusqlite::Result<Vec<i64>>>()
                .map_err(backend)
        })?;
        raw.into_iter()
            .map(|s| unsigned(s, "snapshot sequence"))
            .collect()
    }
}

// ---------------------------------------------------------------------------------
// ArchiveStore

/// The SQLite ArchiveStore (every optional method).
#[derive(Clone)]
pub struct SqliteArchiveStore {
    db: SqliteStore,
}

impl ArchiveStore for SqliteArchiveStore {
    fn capabilities(&self) -> ArchiveStoreCapabilities {
        Capabilities::new(ARCHIVE_STORE_SPI_VERSION, ArchiveStoreMethod::ALL)
    }

    async fn archive(
        &self,
        execution_id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> Result<u64, StoreError> {
        check::archive_batch(execution_id, &envelopes)?;
        self.db.write(|tx| {
            let mut new = Vec::new();
            for envelope in envelopes {
                let seq = signed(envelope.sequence);
                let old = select_envelopes(
                    tx,
                    "loom_archive",
                    "execution_id = ?1 AND sequence = ?2",
                    &[&execution_id, &seq],
                )?;
                match old.first() {
                    Some(old) if *old == envelope => {}
                    Some(_) => {
                        return Err(StoreError::already_exists(format!(
                            "a different envelope is archived at sequence {}",
                            envelope.sequence
                        )))
                    }
                    None => new.push(envelope),
                }
            }
            insert_envelopes(tx, "loom_archive", &new)?;
            Ok(new.len() as u64)
        })
    }

    async fn read_archived(&self, execution_id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        self.db
            .read(|tx| select_envelopes(tx, "loom_archive", "execution_id = ?1", &[&execution_id]))
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<u64, StoreError> {
        self.db.write(|tx| {
            let n = tx
                .execute(
                    "DELETE FROM loom_archive WHERE execution_id = ?1",
                    [execution_id],
                )
                .map_err(backend)?;
            Ok(n as u64)
        })
    }

    async fn replace_segments(
        &self,
        execution_id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> Result<(), StoreError> {
        check::archive_batch(execution_id, &envelopes)?;
        self.db.write(|tx| {
            tx.execute(
                "DELETE FROM loom_archive WHERE execution_id = ?1",
                [execution_id],
            )
            .map_err(backend)?;
            insert_envelopes(tx, "loom_archive", &envelopes)
        })
    }
}

// ---------------------------------------------------------------------------------
// BranchRegistry

/// The SQLite BranchRegistry.
#[derive(Clone)]
pub struct SqliteBranchRegistry {
    db: SqliteStore,
}

type RawBranch = (String, String, i64, String);

fn branch_from_raw(
    (execution_id, parent_execution_id, forked_at, chain): RawBranch,
) -> Result<BranchRecord, StoreError> {
    Ok(BranchRecord {
        execution_id,
        parent_execution_id,
        forked_at_sequence: unsigned(forked_at, "forked-at sequence")?,
        chain: serde_json::from_str(&chain).map_err(|e| backend(format!("stored chain: {e}")))?,
    })
}

impl BranchRegistry for SqliteBranchRegistry {
    fn spi_version(&self) -> String {
        BRANCH_REGISTRY_SPI_VERSION.to_string()
    }

    async fn register(&self, record: BranchRecord) -> Result<(), StoreError> {
        check::branch_record(&record)?;
        let chain = serde_json::to_string(&record.chain).map_err(backend)?;
        self.db.write(|tx| {
            let n = tx
                .execute(
                    "INSERT INTO loom_branches (execution_id, parent_execution_id, forked_at_sequence, chain)
                     VALUES (?1, ?2, ?3, ?4) ON CONFLICT (execution_id) DO NOTHING",
                    params![record.execution_id, record.parent_execution_id, signed(record.forked_at_sequence), chain],
                )
                .map_err(backend)?;
            if n == 0 {
                return Err(StoreError::already_exists(format!("{:?} is already registered", record.execution_id)));
            }
            Ok(())
        })
    }

    async fn get(&self, execution_id: &str) -> Result<Option<BranchRecord>, StoreError> {
        let raw: Option<RawBranch> = self.db.read(|tx| {
            tx.query_row(
                "SELECT execution_id, parent_execution_id, forked_at_sequence, chain FROM loom_branches
                 WHERE execution_id = ?1",
                [execution_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(backend)
        })?;
        raw.map(branch_from_raw).transpose()
    }

    async fn children(&self, parent_execution_id: &str) -> Result<Vec<BranchRecord>, StoreError> {
        let raws: Vec<RawBranch> = self.db.read(|tx| {
            let mut stmt = tx
                .prepare_cached(
                    "SELECT execution_id, parent_execution_id, forked_at_sequence, chain FROM loom_branches
                     WHERE parent_execution_id = ?1 ORDER BY execution_id",
                )
                .map_err(backend)?;
            let rows = stmt
                .query_map([parent_execution_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .map_err(backend)?;
            rows.collect::<rusqlite::Result<Vec<RawBranch>>>().map_err(backend)
        })?;
        raws.into_iter().map(branch_from_raw).collect()
    }
}

// ---------------------------------------------------------------------------------
// ExecutionDispatcher

/// The SQLite ExecutionDispatcher.
#[derive(Clone)]
pub struct SqliteDispatcher {
    db: SqliteStore,
}

fn requeue(tx: &Transaction<'_>, dispatch_id: i64) -> Result<(), StoreError> {
    let position = bump(tx, "queue_position")?;
    tx.execute(
        "UPDATE loom_dispatch SET queue_position = ?2, lease_id = NULL, target = NULL, worker_id = NULL,
         deadline_ms = NULL WHERE dispatch_id = ?1",
        params![dispatch_id, signed(position)],
    )
    .map_err(backend)?;
    Ok(())
}

fn expire(tx: &Transaction<'_>, now_ms: i64) -> Result<Vec<DispatchId>, StoreError> {
    let ids: Vec<i64> = {
        let mut stmt = tx
            .prepare_cached(
                "SELECT dispatch_id FROM loom_dispatch WHERE lease_id IS NOT NULL AND deadline_ms <= ?1
                 ORDER BY dispatch_id",
            )
            .map_err(backend)?;
        let rows = stmt.query_map([now_ms], |r| r.get(0)).map_err(backend)?;
        rows.collect::<rusqlite::Result<Vec<i64>>>()
            .map_err(backend)?
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        requeue(tx, id)?;
        out.push(DispatchId(unsigned(id, "dispatch id")?));
    }
    Ok(out)
}

fn target_registered(tx: &Transaction<'_>, name: &str) -> Result<bool, StoreError> {
    tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM loom_targets WHERE name = ?1)",
        [name],
        |r| r.get(0),
    )
    .map_err(backend)
}

/// `(lease_id, deadline_ms)` of the dispatch, if it is leased.
fn lease_of(tx: &Transaction<'_>, lease: &Lease) -> Result<Option<(i64, i64)>, StoreError> {
    let row: Option<(Option<i64>, Option<i64>)> = tx
        .query_row(
            "SELECT lease_id, deadline_ms FROM loom_dispatch WHERE dispatch_id = ?1",
            [signed(lease.dispatch_id.0)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(backend)?;
    Ok(match row {
        Some((Some(id), Some(deadline))) if id == signed(lease.lease_id) => Some((id, deadline)),
        _ => None,
    })
}

fn lost(lease: &Lease) -> StoreError {
    StoreError::lease_lost(format!("lease {} is no longer live", lease.lease_id))
}

impl ExecutionDispatcher for SqliteDispatcher {
    fn spi_version(&self) -> String {
        DISPATCHER_SPI_VERSION.to_string()
    }

    async fn register_target(&self, name: &str) -> Result<bool, StoreError> {
        check::id("target", name)?;
        self.db.write(|tx| {
            let n = tx
                .execute(
                    "INSERT OR IGNORE INTO loom_targets (name) VALUES (?1)",
                    [name],
                )
                .map_err(backend)?;
            Ok(n == 1)
        })
    }

    async fn targets(&self) -> Result<Vec<String>, StoreError> {
        self.db.read(|tx| {
            let mut stmt = tx
                .prepare_cached("SELECT name FROM loom_targets ORDER BY name")
                .map_err(backend)?;
            let rows = stmt.query_map([], |r| r.get(0)).map_err(backend)?;
            rows.collect::<rusqlite::Result<Vec<String>>>()
                .map_err(backend)
        })
    }

    async fn dispatch(&self, package: ExecutionPackage) -> Result<DispatchId, StoreError> {
        check::package(&package)?;
        self.db.write(|tx| {
            if let Some(target) = &package.compute_target {
                if !target_registered(tx, target)? {
                    return Err(StoreError::not_found(format!("compute target {target:?} is not registered")));
                }
            }
            let (exists, held): (bool, i64) = tx
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM loom_dispatch WHERE execution_id = ?1),
                            (SELECT value FROM loom_counters WHERE name = 'dispatch_held')",
                    [&package.execution_id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .map_err(backend)?;
            if exists {
                return Err(StoreError::already_exists(format!(
                    "execution {:?} is already queued or leased",
                    package.execution_id
                )));
            }
            if usize::try_from(held).unwrap_or(usize::MAX) >= DISPATCH_QUEUE_LEN_MAX {
                return Err(StoreError::invalid(format!(
                    "the dispatcher holds DISPATCH_QUEUE_LEN_MAX ({DISPATCH_QUEUE_LEN_MAX}) packages"
                )));
            }
            let dispatch_id = bump(tx, "dispatch")?;
            let position = bump(tx, "queue_position")?;
            tx.execute(
                "INSERT INTO loom_dispatch (dispatch_id, execution_id, flow_id, resume_hint, compute_target, queue_position)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    signed(dispatch_id),
                    package.execution_id,
                    package.flow_id,
                    package.resume_hint,
                    package.compute_target,
                    signed(position)
                ],
            )
            .map_err(backend)?;
            bump(tx, "dispatch_held")?;
            Ok(DispatchId(dispatch_id))
        })
    }

    async fn claim(
        &self,
        target: &str,
        worker_id: &str,
        now_ms: i64,
    ) -> Result<Option<Lease>, StoreError> {
        check::id("worker id", worker_id)?;
        let lease_ms = self.db.lease_ms;
        self.db.write(|tx| {
            if !target_registered(tx, target)? {
                return Err(StoreError::not_found(format!("target {target:?} is not registered")));
            }
            expire(tx, now_ms)?;
            type Row = (i64, String, String, Option<String>, Option<String>);
            let row: Option<Row> = tx
                .query_row(
                    "SELECT dispatch_id, execution_id, flow_id, resume_hint, compute_target FROM loom_dispatch
                     WHERE queue_position IS NOT NULL AND (compute_target IS NULL OR compute_target = ?1)
                     ORDER BY queue_position LIMIT 1",
                    [target],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional()
                .map_err(backend)?;
            let Some((dispatch_id, execution_id, flow_id, resume_hint, compute_target)) = row else {
                return Ok(None);
            };
            let lease_id = bump(tx, "lease")?;
            let deadline_ms = now_ms.saturating_add(lease_ms);
            tx.execute(
                "UPDATE loom_dispatch SET queue_position = NULL, lease_id = ?2, target = ?3, worker_id = ?4,
                 deadline_ms = ?5 WHERE dispatch_id = ?1",
                params![dispatch_id, signed(lease_id), target, worker_id, deadline_ms],
            )
            .map_err(backend)?;
            Ok(Some(Lease {
                lease_id,
                dispatch_id: DispatchId(unsigned(dispatch_id, "dispatch id")?),
                package: ExecutionPackage { execution_id, flow_id, resume_hint, compute_target },
                target: target.to_string(),
                worker_id: worker_id.to_string(),
                deadline_ms,
            }))
        })
    }

    async fn renew(&self, lease: &Lease, now_ms: i64) -> Result<Lease, StoreError> {
        let lease_ms = self.db.lease_ms;
        // The outer Result is the transaction's; the inner one is the answer. An expired
        // lease is re-queued AND reported lost, so that write must commit.
        let answer = self.db.write(|tx| {
            let Some((_, deadline)) = lease_of(tx, lease)? else {
                return Ok(Err(lost(lease)));
            };
            if deadline <= now_ms {
                requeue(tx, signed(lease.dispatch_id.0))?;
                return Ok(Err(StoreError::lease_lost(format!(
                    "lease {} expired",
                    lease.lease_id
                ))));
            }
            let deadline_ms = now_ms.saturating_add(lease_ms);
            tx.execute(
                "UPDATE loom_dispatch SET deadline_ms = ?2 WHERE dispatch_id = ?1",
                params![signed(lease.dispatch_id.0), deadline_ms],
            )
            .map_err(backend)?;
            Ok(Ok(Lease {
                deadline_ms,
                ..lease.clone()
            }))
        })?;
        answer
    }

    async fn complete(&self, lease: &Lease) -> Result<(), StoreError> {
        self.db.write(|tx| {
            if lease_of(tx, lease)?.is_none() {
                return Err(lost(lease));
            }
            let deleted = tx
                .execute(
                    "DELETE FROM loom_dispatch WHERE dispatch_id = ?1",
                    [signed(lease.dispatch_id.0)],
                )
                .map_err(backend)?;
            tx.execute(
                "UPDATE loom_counters SET value = value - ?1 WHERE name = 'dispatch_held'",
                [deleted as i64],
            )
            .map_err(backend)?;
            Ok(())
        })
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.db.write(|tx| {
            if lease_of(tx, lease)?.is_none() {
                return Err(lost(lease));
            }
            requeue(tx, signed(lease.dispatch_id.0))
        })
    }

    async fn expire_leases(&self, now_ms: i64) -> Result<Vec<DispatchId>, StoreError> {
        self.db.write(|tx| expire(tx, now_ms))
    }
}

// ---------------------------------------------------------------------------------
// TimerStore

/// The SQLite TimerStore.
#[derive(Clone)]
pub struct SqliteTimerStore {
    db: SqliteStore,
}

impl TimerStore for SqliteTimerStore {
    fn spi_version(&self) -> String {
        TIMER_STORE_SPI_VERSION.to_string()
    }

    async fn schedule(&self, timer: Timer) -> Result<Timer, StoreError> {
        check::timer(&timer)?;
        self.db.write(|tx| {
            let existing: Option<i64> = tx
                .query_row(
                    "SELECT wake_at_ms FROM loom_timers WHERE execution_id = ?1 AND key = ?2",
                    params![timer.execution_id, timer.key],
                    |r| r.get(0),
                )
                .optional()
                .map_err(backend)?;
            if let Some(wake_at_ms) = existing {
                return Ok(Timer {
                    wake_at_ms,
                    ..timer
                });
            }
            tx.execute(
                "INSERT INTO loom_timers (execution_id, key, wake_at_ms) VALUES (?1, ?2, ?3)",
                params![timer.execution_id, timer.key, timer.wake_at_ms],
            )
            .map_err(backend)?;
            Ok(timer)
        })
    }

    async fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<Timer>, StoreError> {
        check::due_limit(limit)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.db.read(|tx| {
            let mut stmt = tx
                .prepare_cached(
                    "SELECT execution_id, wake_at_ms, key FROM loom_timers WHERE wake_at_ms <= ?1
                     ORDER BY wake_at_ms, execution_id, key LIMIT ?2",
                )
                .map_err(backend)?;
            let rows = stmt
                .query_map(params![now_ms, limit], |r| {
                    Ok(Timer {
                        execution_id: r.get(0)?,
                        wake_at_ms: r.get(1)?,
                        key: r.get(2)?,
                    })
                })
                .map_err(backend)?;
            rows.collect::<rusqlite::Result<Vec<Timer>>>()
                .map_err(backend)
        })
    }

    async fn cancel(&self, execution_id: &str, key: &str) -> Result<bool, StoreError> {
        self.db.write(|tx| {
            let n = tx
                .execute(
                    "DELETE FROM loom_timers WHERE execution_id = ?1 AND key = ?2",
                    params![execution_id, key],
                )
                .map_err(backend)?;
            Ok(n == 1)
        })
    }
}
