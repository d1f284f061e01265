//! PostgreSQL BranchRegistry, ExecutionDispatcher and TimerStore (feature `postgres`),
//! over the same connection and schema as [`crate::postgres`].
//!
//! Design:
//!
//! - The dispatcher is the store a fleet of workers shares, so several [`PgStore`]s on
//!   one schema (one per worker process) may call it at once. A claim takes the oldest
//!   runnable row with `SELECT … FOR UPDATE SKIP LOCKED`: two workers never wait on or
//!   take the same package, and a worker skips a row another one is busy with instead
//!   of blocking behind it.
//! - A lease is the row's `lease_id` and `deadline_ms`. Every lease operation locks the
//!   dispatch row (`FOR UPDATE`) and compares the presented `lease_id` with the stored
//!   one, so a stale lease (expired and re-claimed, or already ended) is `lease-lost`.
//!   `execution_id` is `UNIQUE`, which is the one-live-lease-per-execution invariant in
//!   the database itself.
//! - Queue order is `(queue_position, dispatch_id)`. A dispatch or a release takes a
//!   fresh position from the sequence `loom_queue_position`; the leases re-queued by
//!   one expiry pass share one fresh position, so they go to the back together and in
//!   dispatch order among themselves.
//! - Dispatch ids, lease ids and positions come from sequences, so they strictly
//!   increase across every connection (gaps are allowed).
//! - Ids and keys are `text COLLATE "C"`, so every ordering is byte order, as in the
//!   other stores.

use tokio_postgres::{Row, Transaction};

use loom_kernel::spi::{
    check, BranchRecord, BranchRegistry, DispatchId, ExecutionDispatcher, ExecutionPackage, Lease,
    StoreError, Timer, TimerStore, DISPATCH_QUEUE_LEN_MAX, TIMER_STORE_SPI_VERSION,
};
use loom_kernel::versions::{BRANCH_REGISTRY_SPI_VERSION, DISPATCHER_SPI_VERSION};

use crate::postgres::{backend, signed, unsigned, PgStore, Q};

/// The tables of the BranchRegistry, the dispatcher, the timers and the plugin tier.
/// Every statement is idempotent; `PgStore::connect` runs them after the kernel tables.
/// They only add tables, so a schema written by an older build gains them in place.
pub(crate) const SCHEMA_MORE: &str = r#"
CREATE TABLE IF NOT EXISTS loom_branches (
    execution_id text COLLATE "C" PRIMARY KEY,
    parent_execution_id text COLLATE "C" NOT NULL,
    forked_at_sequence bigint NOT NULL,
    chain text[] NOT NULL
);
CREATE INDEX IF NOT EXISTS loom_branches_parent ON loom_branches (parent_execution_id, execution_id);
CREATE TABLE IF NOT EXISTS loom_targets (name text COLLATE "C" PRIMARY KEY);
CREATE SEQUENCE IF NOT EXISTS loom_dispatch_id;
CREATE SEQUENCE IF NOT EXISTS loom_queue_position;
CREATE SEQUENCE IF NOT EXISTS loom_lease_id;
CREATE TABLE IF NOT EXISTS loom_dispatch (
    dispatch_id bigint PRIMARY KEY,
    execution_id text COLLATE "C" NOT NULL UNIQUE,
    flow_id text NOT NULL,
    resume_hint text,
    compute_target text COLLATE "C",
    queue_position bigint,
    lease_id bigint,
    target text COLLATE "C",
    worker_id text,
    deadline_ms bigint
);
CREATE INDEX IF NOT EXISTS loom_dispatch_queue ON loom_dispatch (queue_position, dispatch_id)
    WHERE queue_position IS NOT NULL;
CREATE INDEX IF NOT EXISTS loom_dispatch_deadline ON loom_dispatch (deadline_ms)
    WHERE lease_id IS NOT NULL;
-- How many packages loom_dispatch holds, in 16 stripes (a package counts in stripe
-- dispatch_id % 16), kept with every insert and delete: the queue limit sums 16 rows
-- instead of counting up to DISPATCH_QUEUE_LEN_MAX, and concurrent dispatches rarely
-- wait on the same counter row. A schema written before the counter existed starts it
-- from its rows.
CREATE TABLE IF NOT EXISTS loom_dispatch_held (stripe int PRIMARY KEY, held bigint NOT NULL);
INSERT INTO loom_dispatch_held (stripe, held)
    SELECT s, (SELECT COUNT(*) FROM loom_dispatch WHERE dispatch_id % 16 = s)
    FROM generate_series(0, 15) AS s
    ON CONFLICT (stripe) DO NOTHING;
CREATE TABLE IF NOT EXISTS loom_timers (
    execution_id text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    wake_at_ms bigint NOT NULL,
    PRIMARY KEY (execution_id, key)
);
CREATE INDEX IF NOT EXISTS loom_timers_due ON loom_timers (wake_at_ms, execution_id, key);
CREATE TABLE IF NOT EXISTS loom_content (
    digest text PRIMARY KEY,
    bytes bytea NOT NULL,
    public boolean NOT NULL
);
CREATE TABLE IF NOT EXISTS loom_content_owners (
    digest text NOT NULL,
    owner text COLLATE "C" NOT NULL,
    PRIMARY KEY (digest, owner)
);
CREATE TABLE IF NOT EXISTS loom_state (
    key text COLLATE "C" PRIMARY KEY,
    value jsonb,
    version bigint NOT NULL,
    live boolean NOT NULL
);
CREATE TABLE IF NOT EXISTS loom_read_models (
    collection text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    doc jsonb NOT NULL,
    PRIMARY KEY (collection, id)
);
CREATE SEQUENCE IF NOT EXISTS loom_read_model_cursor;
CREATE TABLE IF NOT EXISTS loom_read_model_cursors (
    serial bigint PRIMARY KEY,
    token text NOT NULL UNIQUE,
    collection text COLLATE "C" NOT NULL,
    last_id text COLLATE "C" NOT NULL
);
"#;

// ---------------------------------------------------------------------------------
// BranchRegistry

/// The PostgreSQL BranchRegistry (chains as `text[]`).
#[derive(Clone)]
pub struct PgBranchRegistry {
    db: PgStore,
}

impl PgBranchRegistry {
    /// The registry over `db`.
    pub fn new(db: PgStore) -> PgBranchRegistry {
        PgBranchRegistry { db }
    }
}

const BRANCH_COLUMNS: &str = "execution_id, parent_execution_id, forked_at_sequence, chain";

fn branch_from_row(row: &Row) -> Result<BranchRecord, StoreError> {
    Ok(BranchRecord {
        execution_id: row.try_get(0).map_err(backend)?,
        parent_execution_id: row.try_get(1).map_err(backend)?,
        forked_at_sequence: unsigned(row.try_get(2).map_err(backend)?, "forked-at sequence")?,
        chain: row.try_get(3).map_err(backend)?,
    })
}

impl BranchRegistry for PgBranchRegistry {
    fn spi_version(&self) -> String {
        BRANCH_REGISTRY_SPI_VERSION.to_string()
    }

    async fn register(&self, record: BranchRecord) -> Result<(), StoreError> {
        check::branch_record(&record)?;
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let n = client
            .execute(
                "INSERT INTO loom_branches (execution_id, parent_execution_id, forked_at_sequence, chain)
                 VALUES ($1, $2, $3, $4) ON CONFLICT (execution_id) DO NOTHING",
                &[
                    &record.execution_id,
                    &record.parent_execution_id,
                    &signed(record.forked_at_sequence),
                    &record.chain,
                ],
            )
            .await
            .map_err(backend)?;
        if n == 0 {
            return Err(StoreError::already_exists(format!(
                "{:?} is already registered",
                record.execution_id
            )));
        }
        Ok(())
    }

    async fn get(&self, execution_id: &str) -> Result<Option<BranchRecord>, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let row = client
            .query_opt(
                &format!("SELECT {BRANCH_COLUMNS} FROM loom_branches WHERE execution_id = $1"),
                &[&execution_id],
            )
            .await
            .map_err(backend)?;
        row.as_ref().map(branch_from_row).transpose()
    }

    async fn children(&self, parent_execution_id: &str) -> Result<Vec<BranchRecord>, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let rows = client
            .query(
                &format!(
                    "SELECT {BRANCH_COLUMNS} FROM loom_branches WHERE parent_execution_id = $1
                     ORDER BY execution_id"
                ),
                &[&parent_execution_id],
            )
            .await
            .map_err(backend)?;
        rows.iter().map(branch_from_row).collect()
    }
}

// ---------------------------------------------------------------------------------
// ExecutionDispatcher

/// The PostgreSQL ExecutionDispatcher: a FIFO queue with leases, shared by every
/// [`PgStore`] on the schema.
#[derive(Clone)]
pub struct PgDispatcher {
    db: PgStore,
}

impl PgDispatcher {
    /// The dispatcher over `db`, with `db`'s lease duration.
    pub fn new(db: PgStore) -> PgDispatcher {
        PgDispatcher { db }
    }
}

/// Puts one dispatch back at the back of the queue, ending its lease.
async fn requeue(tx: &Q<'_, Transaction<'_>>, dispatch_id: i64) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE loom_dispatch SET queue_position = nextval('loom_queue_position'), lease_id = NULL,
         target = NULL, worker_id = NULL, deadline_ms = NULL WHERE dispatch_id = $1",
        &[&dispatch_id],
    )
    .await
    .map_err(backend)?;
    Ok(())
}

/// Re-queues every lease with `deadline_ms <= now_ms` that no other transaction is
/// working on, all at one new position (ties go by dispatch id). Returns their ids,
/// ascending.
async fn expire(tx: &Q<'_, Transaction<'_>>, now_ms: i64) -> Result<Vec<DispatchId>, StoreError> {
    let rows = tx
        .query(
            "WITH expired AS (
                 SELECT dispatch_id FROM loom_dispatch
                 WHERE lease_id IS NOT NULL AND deadline_ms <= $1
                 FOR UPDATE SKIP LOCKED
             ), position AS (SELECT nextval('loom_queue_position') AS p)
             UPDATE loom_dispatch d SET queue_position = position.p, lease_id = NULL, target = NULL,
                 worker_id = NULL, deadline_ms = NULL
             FROM expired, position WHERE d.dispatch_id = expired.dispatch_id
             RETURNING d.dispatch_id",
            &[&now_ms],
        )
        .await
        .map_err(backend)?;
    let mut ids = rows
        .iter()
        .map(|r| {
            Ok(DispatchId(unsigned(
                r.try_get(0).map_err(backend)?,
                "dispatch id",
            )?))
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    ids.sort();
    Ok(ids)
}

async fn target_registered(tx: &Q<'_, Transaction<'_>>, name: &str) -> Result<bool, StoreError> {
    tx.query_one(
        "SELECT EXISTS (SELECT 1 FROM loom_targets WHERE name = $1)",
        &[&name],
    )
    .await
    .map_err(backend)?
    .try_get(0)
    .map_err(backend)
}

/// Locks the dispatch row of `lease` and returns its deadline if `lease` is still the
/// dispatch's lease.
async fn lock_lease(tx: &Q<'_, Transaction<'_>>, lease: &Lease) -> Result<Option<i64>, StoreError> {
    let row = tx
        .query_opt(
            "SELECT lease_id, deadline_ms FROM loom_dispatch WHERE dispatch_id = $1 FOR UPDATE",
            &[&signed(lease.dispatch_id.0)],
        )
        .await
        .map_err(backend)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let lease_id: Option<i64> = row.try_get(0).map_err(backend)?;
    let deadline: Option<i64> = row.try_get(1).map_err(backend)?;
    Ok(match (lease_id, deadline) {
        (Some(id), Some(deadline)) if id == signed(lease.lease_id) => Some(deadline),
        _ => None,
    })
}

fn lost(lease: &Lease) -> StoreError {
    StoreError::lease_lost(format!("lease {} is no longer live", lease.lease_id))
}

impl ExecutionDispatcher for PgDispatcher {
    fn spi_version(&self) -> String {
        DISPATCHER_SPI_VERSION.to_string()
    }

    async fn register_target(&self, name: &str) -> Result<bool, StoreError> {
        check::id("target", name)?;
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let n = client
            .execute(
                "INSERT INTO loom_targets (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                &[&name],
            )
            .await
            .map_err(backend)?;
        Ok(n == 1)
    }

    async fn targets(&self) -> Result<Vec<String>, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let rows = client
            .query("SELECT name FROM loom_targets ORDER BY name", &[])
            .await
            .map_err(backend)?;
        rows.iter().map(|r| r.try_get(0).map_err(backend)).collect()
    }

    async fn dispatch(&self, package: ExecutionPackage) -> Result<DispatchId, StoreError> {
        check::package(&package)?;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        if let Some(target) = &package.compute_target {
            if !target_registered(&tx, target).await? {
                return Err(StoreError::not_found(format!(
                    "compute target {target:?} is not registered"
                )));
            }
        }
        let row = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM loom_dispatch WHERE execution_id = $1),
                        (SELECT COALESCE(SUM(held), 0)::bigint FROM loom_dispatch_held)",
                &[&package.execution_id],
            )
            .await
            .map_err(backend)?;
        let exists: bool = row.try_get(0).map_err(backend)?;
        let held: i64 = row.try_get(1).map_err(backend)?;
        let already = || {
            StoreError::already_exists(format!(
                "execution {:?} is already queued or leased",
                package.execution_id
            ))
        };
        if exists {
            return Err(already());
        }
        if usize::try_from(held).unwrap_or(usize::MAX) >= DISPATCH_QUEUE_LEN_MAX {
            return Err(StoreError::invalid(format!(
                "the dispatcher holds DISPATCH_QUEUE_LEN_MAX ({DISPATCH_QUEUE_LEN_MAX}) packages"
            )));
        }
        // ON CONFLICT covers a concurrent dispatch of the same execution from another
        // connection that committed after the check above.
        let row = tx
            .query_opt(
                "INSERT INTO loom_dispatch (dispatch_id, execution_id, flow_id, resume_hint, compute_target,
                     queue_position)
                 VALUES (nextval('loom_dispatch_id'), $1, $2, $3, $4, nextval('loom_queue_position'))
                 ON CONFLICT (execution_id) DO NOTHING RETURNING dispatch_id",
                &[
                    &package.execution_id,
                    &package.flow_id,
                    &package.resume_hint,
                    &package.compute_target,
                ],
            )
            .await
            .map_err(backend)?;
        let Some(row) = row else {
            return Err(already());
        };
        let raw_id: i64 = row.try_get(0).map_err(backend)?;
        tx.execute(
            "UPDATE loom_dispatch_held SET held = held + 1 WHERE stripe = ($1::bigint % 16)",
            &[&raw_id],
        )
        .await
        .map_err(backend)?;
        let id = unsigned(raw_id, "dispatch id")?;
        tx_.commit().await.map_err(backend)?;
        Ok(DispatchId(id))
    }

    async fn claim(
        &self,
        target: &str,
        worker_id: &str,
        now_ms: i64,
    ) -> Result<Option<Lease>, StoreError> {
        check::id("worker id", worker_id)?;
        let lease_ms = self.db.lease_ms;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        if !target_registered(&tx, target).await? {
            return Err(StoreError::not_found(format!(
                "target {target:?} is not registered"
            )));
        }
        expire(&tx, now_ms).await?;
        let row = tx
            .query_opt(
                "SELECT dispatch_id, execution_id, flow_id, resume_hint, compute_target FROM loom_dispatch
                 WHERE queue_position IS NOT NULL AND (compute_target IS NULL OR compute_target = $1)
                 ORDER BY queue_position, dispatch_id LIMIT 1
                 FOR UPDATE SKIP LOCKED",
                &[&target],
            )
            .await
            .map_err(backend)?;
        let Some(row) = row else {
            tx_.commit().await.map_err(backend)?;
            return Ok(None);
        };
        let dispatch_id: i64 = row.try_get(0).map_err(backend)?;
        let package = ExecutionPackage {
            execution_id: row.try_get(1).map_err(backend)?,
            flow_id: row.try_get(2).map_err(backend)?,
            resume_hint: row.try_get(3).map_err(backend)?,
            compute_target: row.try_get(4).map_err(backend)?,
        };
        let deadline_ms = now_ms.saturating_add(lease_ms);
        let leased = tx
            .query_one(
                "UPDATE loom_dispatch SET queue_position = NULL, lease_id = nextval('loom_lease_id'),
                     target = $2, worker_id = $3, deadline_ms = $4
                 WHERE dispatch_id = $1 RETURNING lease_id",
                &[&dispatch_id, &target, &worker_id, &deadline_ms],
            )
            .await
            .map_err(backend)?;
        let lease_id = unsigned(leased.try_get(0).map_err(backend)?, "lease id")?;
        tx_.commit().await.map_err(backend)?;
        Ok(Some(Lease {
            lease_id,
            dispatch_id: DispatchId(unsigned(dispatch_id, "dispatch id")?),
            package,
            target: target.to_string(),
            worker_id: worker_id.to_string(),
            deadline_ms,
        }))
    }

    async fn renew(&self, lease: &Lease, now_ms: i64) -> Result<Lease, StoreError> {
        let lease_ms = self.db.lease_ms;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        let Some(deadline) = lock_lease(&tx, lease).await? else {
            return Err(lost(lease));
        };
        if deadline <= now_ms {
            // The lapsed lease is re-queued and reported lost: that write must commit.
            requeue(&tx, signed(lease.dispatch_id.0)).await?;
            tx_.commit().await.map_err(backend)?;
            return Err(StoreError::lease_lost(format!(
                "lease {} expired",
                lease.lease_id
            )));
        }
        let deadline_ms = now_ms.saturating_add(lease_ms);
        tx.execute(
            "UPDATE loom_dispatch SET deadline_ms = $2 WHERE dispatch_id = $1",
            &[&signed(lease.dispatch_id.0), &deadline_ms],
        )
        .await
        .map_err(backend)?;
        tx_.commit().await.map_err(backend)?;
        Ok(Lease {
            deadline_ms,
            ..lease.clone()
        })
    }

    async fn complete(&self, lease: &Lease) -> Result<(), StoreError> {
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        if lock_lease(&tx, lease).await?.is_none() {
            return Err(lost(lease));
        }
        let id = signed(lease.dispatch_id.0);
        let deleted = tx
            .execute("DELETE FROM loom_dispatch WHERE dispatch_id = $1", &[&id])
            .await
            .map_err(backend)?;
        tx.execute(
            "UPDATE loom_dispatch_held SET held = held - $2::bigint WHERE stripe = ($1::bigint % 16)",
            &[&id, &(deleted as i64)],
        )
        .await
        .map_err(backend)?;
        tx_.commit().await.map_err(backend)?;
        Ok(())
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        if lock_lease(&tx, lease).await?.is_none() {
            return Err(lost(lease));
        }
        requeue(&tx, signed(lease.dispatch_id.0)).await?;
        tx_.commit().await.map_err(backend)?;
        Ok(())
    }

    async fn expire_leases(&self, now_ms: i64) -> Result<Vec<DispatchId>, StoreError> {
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        let ids = expire(&tx, now_ms).await?;
        tx_.commit().await.map_err(backend)?;
        Ok(ids)
    }
}

// ---------------------------------------------------------------------------------
// TimerStore

/// The PostgreSQL TimerStore.
#[derive(Clone)]
pub struct PgTimerStore {
    db: PgStore,
}

impl PgTimerStore {
    /// The timer store over `db`.
    pub fn new(db: PgStore) -> PgTimerStore {
        PgTimerStore { db }
    }
}

impl TimerStore for PgTimerStore {
    fn spi_version(&self) -> String {
        TIMER_STORE_SPI_VERSION.to_string()
    }

    async fn schedule(&self, timer: Timer) -> Result<Timer, StoreError> {
        check::timer(&timer)?;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        let inserted = tx
            .execute(
                "INSERT INTO loom_timers (execution_id, key, wake_at_ms) VALUES ($1, $2, $3)
                 ON CONFLICT (execution_id, key) DO NOTHING",
                &[&timer.execution_id, &timer.key, &timer.wake_at_ms],
            )
            .await
            .map_err(backend)?;
        if inserted == 1 {
            tx_.commit().await.map_err(backend)?;
            return Ok(timer);
        }
        // A separate statement: in READ COMMITTED it sees a row that a concurrent
        // schedule committed while the insert above waited on it.
        let row = tx
            .query_one(
                "SELECT wake_at_ms FROM loom_timers WHERE execution_id = $1 AND key = $2",
                &[&timer.execution_id, &timer.key],
            )
            .await
            .map_err(backend)?;
        let wake_at_ms: i64 = row.try_get(0).map_err(backend)?;
        tx_.commit().await.map_err(backend)?;
        Ok(Timer {
            wake_at_ms,
            ..timer
        })
    }

    async fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<Timer>, StoreError> {
        check::due_limit(limit)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let rows = client
            .query(
                "SELECT execution_id, wake_at_ms, key FROM loom_timers WHERE wake_at_ms <= $1
                 ORDER BY wake_at_ms, execution_id, key LIMIT $2",
                &[&now_ms, &limit],
            )
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|r| {
                Ok(Timer {
                    execution_id: r.try_get(0).map_err(backend)?,
                    wake_at_ms: r.try_get(1).map_err(backend)?,
                    key: r.try_get(2).map_err(backend)?,
                })
            })
            .collect()
    }

    async fn cancel(&self, execution_id: &str, key: &str) -> Result<bool, StoreError> {
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let n = client
            .execute(
                "DELETE FROM loom_timers WHERE execution_id = $1 AND key = $2",
                &[&execution_id, &key],
            )
            .await
            .map_err(backend)?;
        Ok(n == 1)
    }
}
