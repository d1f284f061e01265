//! PostgreSQL stores (feature `postgres`): EventStore, SnapshotStore and ArchiveStore over
//! tokio-postgres (NoTls). The BranchRegistry, the dispatcher and the TimerStore are in
//! [`crate::postgres_more`], the plugin tier in [`crate::postgres_plugin`]; all of them
//! hang off one [`PgStore`] and share its schema.
//!
//! Design:
//!
//! - One [`PgStore`] is one connection (behind a `tokio::sync::Mutex`) and one schema;
//!   the per-SPI handles share it. Give each store instance its own schema to isolate
//!   tests; several instances on one schema share the data, as a fleet of workers does.
//! - Concurrency: every write is one transaction that first takes the row lock of the
//!   execution's head row in `loom_streams` (`SELECT ... FOR UPDATE`), then checks fence,
//!   sequence or anchor, then writes. Appends, `deleteThrough` and `copyPrefix` on one
//!   execution are therefore serialised; different executions do not contend.
//!   `copyPrefix` locks its two heads in id order, so two copies cannot deadlock.
//! - Payloads, metadata and snapshot states are `jsonb`. The database normalises key
//!   order (shorter keys first) and number spelling; that is deliberate: the kernel
//!   must not depend on key order (decision order survives through `seq`, EVENT_SCHEMA
//!   1.24.0), and the kits prove it. Values compare equal after the round trip; bytes
//!   do not. `jsonb` also refuses the character U+0000 in strings (a `backend` error).
//! - `storeNow` reports database time (`clock_timestamp()`), so a fleet ages inbox
//!   messages on one clock (SPI-08).
//! - Incarnations come from the sequence `loom_incarnation` (store metadata, SPI-07).
//! - Every query goes through `PgStore::q`: a SQL text is prepared once per connection
//!   and reused, so a call is one round trip, not a `Parse` and then a `Bind`/`Execute`.
//! - Execution ids are `text COLLATE "C"`, so listing and paging order is byte order,
//!   the same as the other stores.
//!
//! The connection's driver task is spawned with `tokio::spawn`, so every method must run
//! inside a tokio runtime.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::Mutex;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, GenericClient, NoTls, Row, Statement, Transaction};

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::spi::{
    check, Anchor, AppendAck, ArchiveStore, ArchiveStoreCapabilities, ArchiveStoreMethod,
    Capabilities, EventStore, EventStoreCapabilities, EventStoreMethod, FenceToken, Page,
    SealingCapability, SnapshotStore, SnapshotStoreCapabilities, SnapshotStoreMethod, StoreError,
    LEASE_DURATION_MS_DEFAULT,
};
use loom_kernel::versions::{
    ARCHIVE_STORE_SPI_VERSION, EVENT_STORE_SPI_VERSION, SNAPSHOT_STORE_SPI_VERSION,
};
use loom_kernel::JsonText;

/// The schema version this code writes and reads. Version 2 keeps the dispatcher's
/// held-package count in `loom_dispatch_held`; a version 1 schema is migrated when a
/// store connects (the count taken from its rows), and a build that reads only version
/// 1 refuses a version 2 schema, so no writer can skip the count.
pub const PG_SCHEMA_VERSION: i32 = 2;
/// Longest schema name accepted (PostgreSQL truncates identifiers at 63 bytes).
pub const PG_SCHEMA_NAME_BYTES_MAX: usize = 63;

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS loom_schema_version (version integer NOT NULL);
CREATE SEQUENCE IF NOT EXISTS loom_incarnation;
CREATE TABLE IF NOT EXISTS loom_streams (
    execution_id text COLLATE "C" PRIMARY KEY,
    live boolean NOT NULL,
    incarnation bigint NOT NULL,
    next_sequence bigint NOT NULL,
    fence bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS loom_streams_live ON loom_streams (execution_id) WHERE live;
CREATE TABLE IF NOT EXISTS loom_events (
    execution_id text COLLATE "C" NOT NULL,
    sequence bigint NOT NULL,
    event_id text NOT NULL,
    workflow_id text NOT NULL,
    event_type text NOT NULL,
    timestamp_ms bigint NOT NULL,
    payload jsonb NOT NULL,
    metadata jsonb,
    PRIMARY KEY (execution_id, sequence)
);
CREATE TABLE IF NOT EXISTS loom_snapshots (
    execution_id text COLLATE "C" NOT NULL,
    sequence bigint NOT NULL,
    schema_version text NOT NULL,
    state jsonb NOT NULL,
    PRIMARY KEY (execution_id, sequence)
);
CREATE TABLE IF NOT EXISTS loom_archive (
    execution_id text COLLATE "C" NOT NULL,
    sequence bigint NOT NULL,
    event_id text NOT NULL,
    workflow_id text NOT NULL,
    event_type text NOT NULL,
    timestamp_ms bigint NOT NULL,
    payload jsonb NOT NULL,
    metadata jsonb,
    PRIMARY KEY (execution_id, sequence)
);
"#;

pub(crate) fn backend(e: tokio_postgres::Error) -> StoreError {
    match e.as_db_error() {
        Some(db) => StoreError::backend(format!("postgres {}: {}", db.code().code(), db.message())),
        None => StoreError::backend(format!("postgres: {e}")),
    }
}

pub(crate) fn corrupt(message: impl std::fmt::Display) -> StoreError {
    StoreError::backend(format!("postgres: {message}"))
}

pub(crate) fn unsigned(value: i64, what: &str) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| corrupt(format!("{what} {value} is negative")))
}

/// A checked (<= SEQUENCE_MAX) u64 as bigint.
pub(crate) fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn valid_schema_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z' | b'_'))
        && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_'))
        && name.len() <= PG_SCHEMA_NAME_BYTES_MAX
}

/// Most schemas a pool of [`PgStore::connect_pooled`] grows to.
pub const PG_POOL_SLOTS_MAX: usize = 256;

/// Every data table of the schema (not `loom_schema_version`), children first.
const PG_TABLES: [&str; 13] = [
    "loom_events",
    "loom_streams",
    "loom_snapshots",
    "loom_archive",
    "loom_branches",
    "loom_dispatch",
    "loom_targets",
    "loom_timers",
    "loom_content_owners",
    "loom_content",
    "loom_state",
    "loom_read_model_cursors",
    "loom_read_models",
];

/// Every sequence of the schema.
const PG_SEQUENCES: [&str; 5] = [
    "loom_incarnation",
    "loom_dispatch_id",
    "loom_queue_position",
    "loom_lease_id",
    "loom_read_model_cursor",
];

/// Opens a connection whose driver runs on the current tokio runtime.
async fn open(url: &str) -> Result<Client, StoreError> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.map_err(backend)?;
    tokio::spawn(async move {
        // The driver task ends when the client is dropped or the connection fails;
        // a failure surfaces as an error on the next call.
        let _ = connection.await;
    });
    Ok(client)
}

/// Points `client` at `schema` (validated by the caller), creating the schema and its
/// tables if needed and checking its version.
async fn prepare(client: &mut Client, schema: &str) -> Result<(), StoreError> {
    // The schema name was validated by the caller, so it is safe to splice.
    client
        .batch_execute(&format!("SET search_path TO {schema}"))
        .await
        .map_err(backend)?;
    let tx = client.transaction().await.map_err(backend)?;
    // Serialise concurrent initialisation of the same schema.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('loom-schema:' || $1::text))",
        &[&schema],
    )
    .await
    .map_err(backend)?;
    tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
        .await
        .map_err(backend)?;
    tx.batch_execute(SCHEMA).await.map_err(backend)?;
    tx.batch_execute(crate::postgres_more::SCHEMA_MORE)
        .await
        .map_err(backend)?;
    let version: Option<i32> = tx
        .query_one("SELECT MAX(version) FROM loom_schema_version", &[])
        .await
        .map_err(backend)?
        .get(0);
    match version {
        None => {
            tx.execute(
                "INSERT INTO loom_schema_version (version) VALUES ($1)",
                &[&PG_SCHEMA_VERSION],
            )
            .await
            .map_err(backend)?;
        }
        Some(v) if v == PG_SCHEMA_VERSION => {}
        Some(1) => {
            // Version 1 had no held-package count: take it from the rows.
            tx.batch_execute(&format!(
                "INSERT INTO loom_dispatch_held (stripe, held)
                     SELECT s, (SELECT COUNT(*) FROM loom_dispatch WHERE dispatch_id % 16 = s)
                     FROM generate_series(0, 15) AS s
                     ON CONFLICT (stripe) DO UPDATE SET held = EXCLUDED.held;
                 INSERT INTO loom_schema_version (version) VALUES ({PG_SCHEMA_VERSION});"
            ))
            .await
            .map_err(backend)?;
        }
        Some(v) => {
            return Err(corrupt(format!(
                "schema {schema} has version {v}, this build reads {PG_SCHEMA_VERSION} (and migrates 1)"
            )))
        }
    }
    tx.commit().await.map_err(backend)
}

/// The statements one connection has prepared, by SQL text. The server parses and plans
/// each text once per connection; without this every call was a `Parse` round trip before
/// its `Bind`/`Execute` (a PostgreSQL kit run made 2,138 of them, and the server's parse
/// and per-call planning were a sixth of its time). The set of texts is fixed by this
/// crate's code, so the map stays small. Protocol-level prepared statements outlive a
/// rolled-back transaction, so one prepared inside a transaction stays valid. The server
/// re-plans a statement whose tables changed; only a table recreated with other columns
/// under a live connection would fail it ("cached plan must not change result type"),
/// and this crate recreates a schema only through a new connection
/// ([`PgStore::connect_fresh`]).
#[derive(Clone, Default)]
pub(crate) struct Statements(Arc<std::sync::Mutex<BTreeMap<String, Statement>>>);

impl Statements {
    fn get(&self, sql: &str) -> Option<Statement> {
        self.0.lock().ok()?.get(sql).cloned()
    }

    fn keep(&self, sql: &str, statement: &Statement) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(sql.to_owned(), statement.clone());
        }
    }
}

/// A connection or its open transaction, with the connection's prepared [`Statements`]:
/// `execute`, `query`, `query_one` and `query_opt` as on tokio-postgres's clients, each
/// through a statement prepared once per connection.
pub(crate) struct Q<'a, C> {
    c: &'a C,
    statements: &'a Statements,
}

impl<C: GenericClient + Sync> Q<'_, C> {
    async fn statement(&self, sql: &str) -> Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s);
        }
        let s = self.c.prepare(sql).await?;
        self.statements.keep(sql, &s);
        Ok(s)
    }

    pub(crate) async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, tokio_postgres::Error> {
        let s = self.statement(sql).await?;
        self.c.execute(&s, params).await
    }

    pub(crate) async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        let s = self.statement(sql).await?;
        self.c.query(&s, params).await
    }

    pub(crate) async fn query_one(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, tokio_postgres::Error> {
        let s = self.statement(sql).await?;
        self.c.query_one(&s, params).await
    }

    pub(crate) async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, tokio_postgres::Error> {
        let s = self.statement(sql).await?;
        self.c.query_opt(&s, params).await
    }
}

/// One PostgreSQL connection bound to one schema.
#[derive(Clone)]
pub struct PgStore {
    pub(crate) client: Arc<Mutex<Client>>,
    statements: Statements,
    schema: String,
    pub(crate) lease_ms: i64,
}

impl PgStore {
    /// Connects to `url` and uses (creating if needed) `schema`, which must match
    /// `[a-z_][a-z0-9_]*` and be at most [`PG_SCHEMA_NAME_BYTES_MAX`] bytes. Must be
    /// called inside a tokio runtime.
    pub async fn connect(url: &str, schema: &str) -> Result<PgStore, StoreError> {
        if !valid_schema_name(schema) {
            return Err(StoreError::invalid(format!(
                "schema name {schema:?} must match [a-z_][a-z0-9_]{{0,62}}"
            )));
        }
        let mut client = open(url).await?;
        prepare(&mut client, schema).await?;
        Ok(PgStore {
            client: Arc::new(Mutex::new(client)),
            statements: Statements::default(),
            schema: schema.to_string(),
            lease_ms: LEASE_DURATION_MS_DEFAULT,
        })
    }

    /// Connects to a schema of the pool `prefix` (`{prefix}_0`, `{prefix}_1`, …) that no
    /// other connection holds, and empties it ([`PgStore::reset`]). The connection holds
    /// its slot (a session advisory lock) until it closes, so stores that live at the
    /// same time never share a schema, while later ones reuse the pool's schemas instead
    /// of creating and dropping their own: a test suite's isolation at the cost of a
    /// few `DELETE`s per case. The pool's schemas stay in the database for the next run.
    /// Its commits do not wait for the disk ([`PgStore::connect_fresh`] says why).
    /// Destroys the slot's data: for tests only.
    pub async fn connect_pooled(url: &str, prefix: &str) -> Result<PgStore, StoreError> {
        let mut client = open(url).await?;
        for slot in 0..PG_POOL_SLOTS_MAX {
            let schema = format!("{prefix}_{slot}");
            if !valid_schema_name(&schema) {
                return Err(StoreError::invalid(format!(
                    "pool schema {schema:?} must match [a-z_][a-z0-9_]{{0,62}}"
                )));
            }
            let held: bool = client
                .query_one(
                    "SELECT pg_try_advisory_lock(hashtext('loom-pool:' || $1::text))",
                    &[&schema],
                )
                .await
                .map_err(backend)?
                .get(0);
            if !held {
                continue;
            }
            prepare(&mut client, &schema).await?;
            let store = PgStore {
                client: Arc::new(Mutex::new(client)),
                statements: Statements::default(),
                schema,
                lease_ms: LEASE_DURATION_MS_DEFAULT,
            };
            store.throwaway_commits().await?;
            store.reset().await?;
            return Ok(store);
        }
        Err(StoreError::backend(format!(
            "postgres: all {PG_POOL_SLOTS_MAX} schemas of pool {prefix:?} are held"
        )))
    }

    /// Empties every table of this store's schema and restarts its sequences, in one
    /// transaction: a fresh store without dropping and recreating the schema. Every
    /// connection on the schema sees the empty store. Destroys data: for tests only.
    pub async fn reset(&self) -> Result<(), StoreError> {
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(backend)?;
        // The tables hold a case's few rows: DELETE is cheaper than TRUNCATE here (no
        // new relation files), and it waits for no lock a reader holds.
        let mut sql = String::new();
        for table in PG_TABLES {
            sql.push_str(&format!("DELETE FROM {table};\n"));
        }
        for sequence in PG_SEQUENCES {
            sql.push_str(&format!("ALTER SEQUENCE {sequence} RESTART;\n"));
        }
        // The dispatcher's held-package counter keeps its stripe rows, emptied.
        sql.push_str("UPDATE loom_dispatch_held SET held = 0;\n");
        tx.batch_execute(&sql).await.map_err(backend)?;
        tx.commit().await.map_err(backend)
    }

    /// Drops `schema` with everything in it, then connects as [`PgStore::connect`], with
    /// commits that do not wait for the disk (below). Destroys data: for tests and
    /// throwaway environments only.
    pub async fn connect_fresh(url: &str, schema: &str) -> Result<PgStore, StoreError> {
        PgStore::drop_schema(url, schema).await?;
        let store = PgStore::connect(url, schema).await?;
        store.throwaway_commits().await?;
        Ok(store)
    }

    /// Lets this connection's commits return before their WAL reaches the disk
    /// (`synchronous_commit = off`), for the throwaway schemas of tests and kit runs.
    /// What other sessions see, and when, is unchanged (a commit is visible at once and
    /// in order); only a crash of the server could lose the last commits, and these
    /// schemas are emptied or dropped anyway. A kit run commits some 1,600 times, and a
    /// WAL flush cost about 5.7 ms each on the project's disk (`pg_test_fsync`): most of
    /// the suite's time (docs/performance-history.md, "PostgreSQL kits").
    async fn throwaway_commits(&self) -> Result<(), StoreError> {
        self.client
            .lock()
            .await
            .batch_execute("SET synchronous_commit TO OFF")
            .await
            .map_err(backend)
    }

    /// Drops `schema` with everything in it, if it exists, over a connection of its
    /// own. Destroys data: for tests and throwaway environments only (`loom conform`
    /// removes the schemas it made for single cases with it).
    pub async fn drop_schema(url: &str, schema: &str) -> Result<(), StoreError> {
        if !valid_schema_name(schema) {
            return Err(StoreError::invalid(format!(
                "schema name {schema:?} must match [a-z_][a-z0-9_]{{0,62}}"
            )));
        }
        let (client, connection) = tokio_postgres::connect(url, NoTls).await.map_err(backend)?;
        let driver = tokio::spawn(async move {
            let _ = connection.await;
        });
        // The schema name was validated above, so it is safe to splice.
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            .await
            .map_err(backend)?;
        drop(client);
        let _ = driver.await;
        Ok(())
    }

    /// `c` (this store's connection or its open transaction) with the connection's
    /// prepared statements.
    pub(crate) fn q<'a, C>(&'a self, c: &'a C) -> Q<'a, C> {
        Q {
            c,
            statements: &self.statements,
        }
    }

    /// The schema this store uses.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The EventStore over this connection.
    pub fn events(&self) -> PgEventStore {
        PgEventStore { db: self.clone() }
    }

    /// The SnapshotStore over this connection.
    pub fn snapshots(&self) -> PgSnapshotStore {
        PgSnapshotStore { db: self.clone() }
    }

    /// The ArchiveStore over this connection.
    pub fn archive(&self) -> PgArchiveStore {
        PgArchiveStore { db: self.clone() }
    }

    /// The same connection with dispatcher leases of `lease_ms` (in
    /// `1..=LEASE_DURATION_MS_MAX`; the default is `LEASE_DURATION_MS_DEFAULT`).
    pub fn with_lease_ms(mut self, lease_ms: i64) -> Result<PgStore, StoreError> {
        self.lease_ms = crate::lease_duration_checked(lease_ms)?;
        Ok(self)
    }

    /// The BranchRegistry over this connection.
    pub fn branches(&self) -> crate::postgres_more::PgBranchRegistry {
        crate::postgres_more::PgBranchRegistry::new(self.clone())
    }

    /// The ExecutionDispatcher over this connection. Every `PgStore` on the same schema
    /// shares one queue, so a fleet of workers can claim from it.
    pub fn dispatcher(&self) -> crate::postgres_more::PgDispatcher {
        crate::postgres_more::PgDispatcher::new(self.clone())
    }

    /// The TimerStore over this connection.
    pub fn timers(&self) -> crate::postgres_more::PgTimerStore {
        crate::postgres_more::PgTimerStore::new(self.clone())
    }

    /// The ContentStore over this connection (plugin tier; bytes as `bytea`).
    pub fn content(&self) -> crate::postgres_plugin::PgContentStore {
        crate::postgres_plugin::PgContentStore::new(self.clone())
    }

    /// The DurableStateStore over this connection (plugin tier; values as `jsonb`).
    pub fn durable_state(&self) -> crate::postgres_plugin::PgDurableStateStore {
        crate::postgres_plugin::PgDurableStateStore::new(self.clone())
    }

    /// The ReadModelStore over this connection (plugin tier; documents as `jsonb`).
    pub fn read_models(&self) -> crate::postgres_plugin::PgReadModelStore {
        crate::postgres_plugin::PgReadModelStore::new(self.clone())
    }
}

// ---------------------------------------------------------------------------------
// Envelope rows

const ENVELOPE_COLUMNS: &str =
    "event_id, workflow_id, execution_id, event_type, sequence, timestamp_ms, payload, metadata";

fn envelope_from_row(row: &Row) -> Result<EventEnvelope, StoreError> {
    let metadata: Option<Value> = row.try_get(7).map_err(backend)?;
    let metadata = match metadata {
        None => None,
        Some(Value::Object(map)) => Some(map),
        Some(other) => {
            return Err(corrupt(format!(
                "stored metadata is not an object: {other}"
            )))
        }
    };
    Ok(EventEnvelope {
        id: row.try_get(0).map_err(backend)?,
        workflow_id: row.try_get(1).map_err(backend)?,
        execution_id: row.try_get(2).map_err(backend)?,
        event_type: row.try_get(3).map_err(backend)?,
        sequence: unsigned(row.try_get(4).map_err(backend)?, "sequence")?,
        timestamp_ms: row.try_get(5).map_err(backend)?,
        // jsonb comes back in PostgreSQL's own spelling (spaces, keys by length): read
        // as a tree and written in normal form, the text the envelope was written from.
        payload: JsonText::from_value(&row.try_get::<_, Value>(6).map_err(backend)?),
        metadata,
    })
}

async fn insert_envelopes(
    tx: &Q<'_, Transaction<'_>>,
    table: &str,
    events: &[EventEnvelope],
) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let mut ids = Vec::with_capacity(events.len());
    let mut workflows = Vec::with_capacity(events.len());
    let mut executions = Vec::with_capacity(events.len());
    let mut types = Vec::with_capacity(events.len());
    let mut sequences = Vec::with_capacity(events.len());
    let mut timestamps = Vec::with_capacity(events.len());
    let mut payloads = Vec::with_capacity(events.len());
    let mut metadata = Vec::with_capacity(events.len());
    for e in events {
        ids.push(e.id.as_str());
        workflows.push(e.workflow_id.as_str());
        executions.push(e.execution_id.as_str());
        types.push(e.event_type.as_str());
        sequences.push(signed(e.sequence));
        timestamps.push(e.timestamp_ms);
        // The payload's text as it is (`Json` writes it through serde_json, which copies
        // a raw value verbatim): no tree is built to be printed again.
        payloads.push(tokio_postgres::types::Json(&e.payload));
        metadata.push(e.metadata.clone().map(Value::Object));
    }
    let sql = format!(
        "INSERT INTO {table} ({ENVELOPE_COLUMNS})
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],
                              $7::jsonb[], $8::jsonb[])"
    );
    tx.execute(
        &sql,
        &[
            &ids,
            &workflows,
            &executions,
            &types,
            &sequences,
            &timestamps,
            &payloads,
            &metadata,
        ],
    )
    .await
    .map_err(backend)?;
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

    fn from_row(row: Option<Row>) -> Result<Head, StoreError> {
        let Some(row) = row else {
            return Ok(Head::default());
        };
        Ok(Head {
            live: row.try_get(0).map_err(backend)?,
            incarnation: unsigned(row.try_get(1).map_err(backend)?, "incarnation")?,
            next_sequence: unsigned(row.try_get(2).map_err(backend)?, "next sequence")?,
            fence: unsigned(row.try_get(3).map_err(backend)?, "fence")?,
        })
    }
}

/// Reads the head without locking it.
async fn peek_head(client: &Q<'_, Client>, execution_id: &str) -> Result<Head, StoreError> {
    let row = client
        .query_opt(
            "SELECT live, incarnation, next_sequence, fence FROM loom_streams WHERE execution_id = $1",
            &[&execution_id],
        )
        .await
        .map_err(backend)?;
    Head::from_row(row)
}

/// Creates the head row if absent (a tombstone: not live) and locks it for the
/// transaction.
async fn lock_head(tx: &Q<'_, Transaction<'_>>, execution_id: &str) -> Result<Head, StoreError> {
    tx.execute(
        "INSERT INTO loom_streams (execution_id, live, incarnation, next_sequence, fence)
         VALUES ($1, false, 0, 0, 0) ON CONFLICT (execution_id) DO NOTHING",
        &[&execution_id],
    )
    .await
    .map_err(backend)?;
    let row = tx
        .query_opt(
            "SELECT live, incarnation, next_sequence, fence FROM loom_streams WHERE execution_id = $1 FOR UPDATE",
            &[&execution_id],
        )
        .await
        .map_err(backend)?;
    Head::from_row(row)
}

/// Writes a validated batch under the locked head, creating the stream if needed.
async fn write_events(
    tx: &Q<'_, Transaction<'_>>,
    execution_id: &str,
    head: Head,
    events: &[EventEnvelope],
) -> Result<AppendAck, StoreError> {
    let first_sequence = if head.live { head.next_sequence } else { 0 };
    let next_sequence = first_sequence + events.len() as u64;
    insert_envelopes(tx, "loom_events", events).await?;
    if head.live {
        tx.execute(
            "UPDATE loom_streams SET next_sequence = $2 WHERE execution_id = $1",
            &[&execution_id, &signed(next_sequence)],
        )
        .await
        .map_err(backend)?;
    } else {
        tx.execute(
            "UPDATE loom_streams SET live = true, incarnation = nextval('loom_incarnation'), next_sequence = $2
             WHERE execution_id = $1",
            &[&execution_id, &signed(next_sequence)],
        )
        .await
        .map_err(backend)?;
    }
    Ok(AppendAck {
        first_sequence,
        next_sequence,
    })
}

async fn bump_fence(
    tx: &Q<'_, Transaction<'_>>,
    execution_id: &str,
) -> Result<FenceToken, StoreError> {
    let row = tx
        .query_one(
            "UPDATE loom_streams SET fence = fence + 1 WHERE execution_id = $1 RETURNING fence",
            &[&execution_id],
        )
        .await
        .map_err(backend)?;
    Ok(FenceToken(unsigned(
        row.try_get(0).map_err(backend)?,
        "fence",
    )?))
}

/// The PostgreSQL EventStore: every optional method, `storeNow` included.
#[derive(Clone)]
pub struct PgEventStore {
    db: PgStore,
}

impl EventStore for PgEventStore {
    fn capabilities(&self) -> EventStoreCapabilities {
        Capabilities::new(EVENT_STORE_SPI_VERSION, EventStoreMethod::ALL)
    }

    async fn append(
        &self,
        execution_id: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        check::append_batch(execution_id, expected_next, &events)?;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        let head = lock_head(&tx, execution_id).await?;
        check::fence(head.fence, fence)?;
        let actual_next = head.anchor().next_sequence;
        if actual_next != expected_next {
            return Err(StoreError::conflict(expected_next, actual_next));
        }
        let ack = write_events(&tx, execution_id, head, &events).await?;
        tx_.commit().await.map_err(backend)?;
        Ok(ack)
    }

    async fn read(&self, execution_id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let sql = format!(
            "SELECT {ENVELOPE_COLUMNS} FROM loom_events WHERE execution_id = $1 ORDER BY sequence"
        );
        let rows = client
            .query(&sql, &[&execution_id])
            .await
            .map_err(backend)?;
        rows.iter().map(envelope_from_row).collect()
    }

    async fn list_executions(&self) -> Result<Vec<String>, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let rows = client
            .query(
                "SELECT execution_id FROM loom_streams WHERE live ORDER BY execution_id",
                &[],
            )
            .await
            .map_err(backend)?;
        rows.iter().map(|r| r.try_get(0).map_err(backend)).collect()
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
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let sql = format!(
            "SELECT {ENVELOPE_COLUMNS} FROM loom_events WHERE execution_id = $1 AND sequence BETWEEN $2 AND $3
             ORDER BY sequence"
        );
        let rows = client
            .query(&sql, &[&execution_id, &from, &to])
            .await
            .map_err(backend)?;
        rows.iter().map(envelope_from_row).collect()
    }

    async fn acquire_fence(&self, execution_id: &str) -> Result<FenceToken, StoreError> {
        check::id("execution id", execution_id)?;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        lock_head(&tx, execution_id).await?;
        let token = bump_fence(&tx, execution_id).await?;
        tx_.commit().await.map_err(backend)?;
        Ok(token)
    }

    async fn acquire_fence_if(
        &self,
        execution_id: &str,
        expected_current: Option<FenceToken>,
    ) -> Result<FenceToken, StoreError> {
        check::id("execution id", execution_id)?;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        let current = lock_head(&tx, execution_id).await?.fence;
        let current = (current != 0).then_some(current);
        if current != expected_current.map(|t| t.0) {
            return Err(StoreError::fence_conflict(
                expected_current.map(|t| t.0),
                current,
            ));
        }
        let token = bump_fence(&tx, execution_id).await?;
        tx_.commit().await.map_err(backend)?;
        Ok(token)
    }

    async fn observe(&self, execution_id: &str) -> Result<Anchor, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        Ok(peek_head(&client, execution_id).await?.anchor())
    }

    async fn append_if_unchanged(
        &self,
        execution_id: &str,
        anchor: Anchor,
        events: Vec<EventEnvelope>,
    ) -> Result<AppendAck, StoreError> {
        check::append_batch(execution_id, anchor.next_sequence, &events)?;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        let head = lock_head(&tx, execution_id).await?;
        let current = head.anchor();
        if current != anchor {
            return Err(StoreError::anchor_changed(format!(
                "observed {anchor:?}, the stream is now {current:?}"
            )));
        }
        let ack = write_events(&tx, execution_id, head, &events).await?;
        tx_.commit().await.map_err(backend)?;
        Ok(ack)
    }

    async fn store_now(&self) -> Result<i64, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let row = client
            .query_one(
                "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint",
                &[],
            )
            .await
            .map_err(backend)?;
        row.try_get(0).map_err(backend)
    }

    async fn sealing_capability(&self) -> Result<Option<SealingCapability>, StoreError> {
        Ok(None)
    }

    async fn delete_through(&self, execution_id: &str, through: u64) -> Result<u64, StoreError> {
        check::sequence("through", through)?;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        let row = tx
            .query_opt(
                "SELECT live FROM loom_streams WHERE execution_id = $1 FOR UPDATE",
                &[&execution_id],
            )
            .await
            .map_err(backend)?;
        let live: bool = match row {
            Some(r) => r.try_get(0).map_err(backend)?,
            None => false,
        };
        if !live {
            return Err(StoreError::not_found(format!(
                "no execution {execution_id:?}"
            )));
        }
        let n = tx
            .execute(
                "DELETE FROM loom_events WHERE execution_id = $1 AND sequence <= $2",
                &[&execution_id, &signed(through)],
            )
            .await
            .map_err(backend)?;
        tx_.commit().await.map_err(backend)?;
        Ok(n)
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
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        // Lock both heads in id order so two opposite copies cannot deadlock.
        let (src, dst) = if source < target {
            let s = lock_head(&tx, source).await?;
            (s, lock_head(&tx, target).await?)
        } else {
            let d = lock_head(&tx, target).await?;
            (lock_head(&tx, source).await?, d)
        };
        if !src.live {
            return Err(StoreError::not_found(format!("no execution {source:?}")));
        }
        let has_zero: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM loom_events WHERE execution_id = $1 AND sequence = 0)",
                &[&source],
            )
            .await
            .map_err(backend)?
            .try_get(0)
            .map_err(backend)?;
        if !has_zero {
            return Err(StoreError::invalid(
                "the source no longer holds sequence 0 (compacted)",
            ));
        }
        if through >= src.next_sequence {
            return Err(StoreError::invalid(format!(
                "through {through} is past the source's head ({})",
                src.next_sequence
            )));
        }
        if dst.live {
            return Err(StoreError::conflict(0, dst.next_sequence));
        }
        tx.execute(
            &format!(
                "INSERT INTO loom_events ({ENVELOPE_COLUMNS})
                 SELECT event_id, workflow_id, $2, event_type, sequence, timestamp_ms, payload, metadata
                 FROM loom_events WHERE execution_id = $1 AND sequence <= $3"
            ),
            &[&source, &target, &signed(through)],
        )
        .await
        .map_err(backend)?;
        let next_sequence = through + 1;
        tx.execute(
            "UPDATE loom_streams SET live = true, incarnation = nextval('loom_incarnation'), next_sequence = $2
             WHERE execution_id = $1",
            &[&target, &signed(next_sequence)],
        )
        .await
        .map_err(backend)?;
        tx_.commit().await.map_err(backend)?;
        Ok(AppendAck {
            first_sequence: 0,
            next_sequence,
        })
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<bool, StoreError> {
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        let row = tx
            .query_opt(
                "SELECT live FROM loom_streams WHERE execution_id = $1 FOR UPDATE",
                &[&execution_id],
            )
            .await
            .map_err(backend)?;
        let live: bool = match row {
            Some(r) => r.try_get(0).map_err(backend)?,
            None => false,
        };
        if !live {
            return Ok(false);
        }
        tx.execute(
            "DELETE FROM loom_events WHERE execution_id = $1",
            &[&execution_id],
        )
        .await
        .map_err(backend)?;
        tx.execute(
            "UPDATE loom_streams SET live = false, next_sequence = 0 WHERE execution_id = $1",
            &[&execution_id],
        )
        .await
        .map_err(backend)?;
        tx_.commit().await.map_err(backend)?;
        Ok(true)
    }

    async fn list_executions_page(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<Page, StoreError> {
        check::page_limit(limit)?;
        let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let rows = client
            .query(
                "SELECT execution_id FROM loom_streams WHERE live AND ($1::text IS NULL OR execution_id > $1)
                 ORDER BY execution_id LIMIT $2",
                &[&cursor, &fetch],
            )
            .await
            .map_err(backend)?;
        let mut ids = rows
            .iter()
            .map(|r| r.try_get(0).map_err(backend))
            .collect::<Result<Vec<String>, _>>()?;
        let more = ids.len() > limit;
        ids.truncate(limit);
        let next_cursor = if more { ids.last().cloned() } else { None };
        Ok(Page { ids, next_cursor })
    }
}

// ---------------------------------------------------------------------------------
// SnapshotStore

/// The PostgreSQL SnapshotStore (every optional method; states as `jsonb`).
#[derive(Clone)]
pub struct PgSnapshotStore {
    db: PgStore,
}

fn snapshot_from_row(row: &Row) -> Result<SnapshotRecord, StoreError> {
    Ok(SnapshotRecord {
        schema_version: row.try_get(0).map_err(backend)?,
        sequence: unsigned(row.try_get(1).map_err(backend)?, "snapshot sequence")?,
        state: row.try_get(2).map_err(backend)?,
    })
}

impl SnapshotStore for PgSnapshotStore {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        Capabilities::new(SNAPSHOT_STORE_SPI_VERSION, SnapshotStoreMethod::ALL)
    }

    async fn save(&self, execution_id: &str, record: SnapshotRecord) -> Result<(), StoreError> {
        check::id("execution id", execution_id)?;
        check::sequence("snapshot sequence", record.sequence)?;
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        client
            .execute(
                "INSERT INTO loom_snapshots (execution_id, sequence, schema_version, state) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (execution_id, sequence) DO UPDATE
                 SET schema_version = EXCLUDED.schema_version, state = EXCLUDED.state",
                &[&execution_id, &signed(record.sequence), &record.schema_version, &record.state],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn load_latest(&self, execution_id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let row = client
            .query_opt(
                "SELECT schema_version, sequence, state FROM loom_snapshots WHERE execution_id = $1
                 ORDER BY sequence DESC LIMIT 1",
                &[&execution_id],
            )
            .await
            .map_err(backend)?;
        row.as_ref().map(snapshot_from_row).transpose()
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<u64, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        client
            .execute(
                "DELETE FROM loom_snapshots WHERE execution_id = $1",
                &[&execution_id],
            )
            .await
            .map_err(backend)
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
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        client
            .execute(
                "DELETE FROM loom_snapshots WHERE execution_id = $1 AND sequence <= $2",
                &[&execution_id, &signed(through_sequence)],
            )
            .await
            .map_err(backend)
    }

    async fn list_sequences(&self, execution_id: &str) -> Result<Vec<u64>, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let rows = client
            .query(
                "SELECT sequence FROM loom_snapshots WHERE execution_id = $1 ORDER BY sequence",
                &[&execution_id],
            )
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|r| unsigned(r.try_get(0).map_err(backend)?, "snapshot sequence"))
            .collect()
    }
}

// ---------------------------------------------------------------------------------
// ArchiveStore

/// The PostgreSQL ArchiveStore (every optional method; envelopes as `jsonb`).
#[derive(Clone)]
pub struct PgArchiveStore {
    db: PgStore,
}

/// Serialises archive writers of one execution (across connections) for the transaction.
async fn lock_archive(
    tx: &Q<'_, Transaction<'_>>,
    schema: &str,
    execution_id: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('loom-archive:' || $1::text || ':' || $2::text))",
        &[&schema, &execution_id],
    )
    .await
    .map_err(backend)?;
    Ok(())
}

impl ArchiveStore for PgArchiveStore {
    fn capabilities(&self) -> ArchiveStoreCapabilities {
        Capabilities::new(ARCHIVE_STORE_SPI_VERSION, ArchiveStoreMethod::ALL)
    }

    async fn archive(
        &self,
        execution_id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> Result<u64, StoreError> {
        check::archive_batch(execution_id, &envelopes)?;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        lock_archive(&tx, &self.db.schema, execution_id).await?;
        let wanted: Vec<i64> = envelopes.iter().map(|e| signed(e.sequence)).collect();
        let sql = format!(
            "SELECT {ENVELOPE_COLUMNS} FROM loom_archive WHERE execution_id = $1 AND sequence = ANY($2::bigint[])"
        );
        let rows = tx
            .query(&sql, &[&execution_id, &wanted])
            .await
            .map_err(backend)?;
        let mut existing = BTreeMap::new();
        for row in &rows {
            let e = envelope_from_row(row)?;
            existing.insert(e.sequence, e);
        }
        let mut new = Vec::new();
        for envelope in envelopes {
            match existing.get(&envelope.sequence) {
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
        insert_envelopes(&tx, "loom_archive", &new).await?;
        tx_.commit().await.map_err(backend)?;
        Ok(new.len() as u64)
    }

    async fn read_archived(&self, execution_id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let sql = format!(
            "SELECT {ENVELOPE_COLUMNS} FROM loom_archive WHERE execution_id = $1 ORDER BY sequence"
        );
        let rows = client
            .query(&sql, &[&execution_id])
            .await
            .map_err(backend)?;
        rows.iter().map(envelope_from_row).collect()
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<u64, StoreError> {
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        lock_archive(&tx, &self.db.schema, execution_id).await?;
        let n = tx
            .execute(
                "DELETE FROM loom_archive WHERE execution_id = $1",
                &[&execution_id],
            )
            .await
            .map_err(backend)?;
        tx_.commit().await.map_err(backend)?;
        Ok(n)
    }

    async fn replace_segments(
        &self,
        execution_id: &str,
        envelopes: Vec<EventEnvelope>,
    ) -> Result<(), StoreError> {
        check::archive_batch(execution_id, &envelopes)?;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        lock_archive(&tx, &self.db.schema, execution_id).await?;
        tx.execute(
            "DELETE FROM loom_archive WHERE execution_id = $1",
            &[&execution_id],
        )
        .await
        .map_err(backend)?;
        insert_envelopes(&tx, "loom_archive", &envelopes).await?;
        tx_.commit().await.map_err(backend)?;
        Ok(())
    }
}
