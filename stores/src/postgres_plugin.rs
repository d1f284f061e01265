//! The plugin-tier SPIs (SPI-20, reference-defined contracts in
//! `loom_kernel::spi::plugin`) over the same PostgreSQL schema as the kernel-tier
//! stores: [`PgContentStore`], [`PgDurableStateStore`] and [`PgReadModelStore`]
//! (feature `postgres`).
//!
//! Design:
//!
//! - Content bytes are `bytea` under their digest, with a `public` flag and an owner
//!   table, as in the SQLite store: the same bytes put by an owner and without one are
//!   one object, readable by both routes; bytes put only by owners are invisible to
//!   anyone else.
//! - `putStream` gathers the chunks in memory and writes once, after the last chunk, in
//!   one transaction: an aborted stream never reaches the database (ADR 0059).
//! - Durable-state values and read-model documents are `jsonb`, so the database
//!   normalises key order; values survive, bytes do not (the same choice as event
//!   payloads). A compare-and-set first makes sure the key's row exists (a version-0
//!   tombstone if it did not) and locks it with `FOR UPDATE`, so writers on different
//!   connections are serialised per key. A deleted key keeps its row and last version,
//!   so a re-created key continues above it (no ABA).
//! - Read-model cursors are rows of `loom_read_model_cursors`, shared by every
//!   connection on the schema. The store accepts only a token it finds there, for the
//!   collection it was issued for. Tokens are `rm<serial>.<64 random bits>`, and at
//!   most [`PG_ISSUED_CURSORS_MAX`] are kept (the oldest are forgotten first).

use std::hash::{BuildHasher, Hasher};

use serde_json::Value;
use tokio_postgres::Transaction;

use loom_kernel::spi::plugin::{
    check_digest, check_document, check_limit, check_name, check_owner, collect_stream,
    content_ref, Chunk,
};
use loom_kernel::spi::{
    Capabilities, ContentAccess, ContentRef, ContentStore, ContentStoreCapabilities,
    ContentStoreMethod, Document, DurableStateStore, DurableStateStoreCapabilities,
    PutStreamOutcome, QueryOptions, ReadModelPage, ReadModelStore, ReadModelStoreCapabilities,
    StoreError, StoreErrorKind, Versioned,
};
use loom_kernel::versions::{
    CONTENT_STORE_SPI_VERSION, DURABLE_STATE_STORE_SPI_VERSION, READ_MODEL_STORE_SPI_VERSION,
};

use crate::postgres::{backend, corrupt, unsigned, PgStore, Q};

/// Most read-model cursors one schema remembers; older ones are forgotten and then
/// refused with `InvalidArgument` (the client starts over).
pub const PG_ISSUED_CURSORS_MAX: i64 = 10_000;

/// The ContentStore features the PostgreSQL store claims: all of them. `sealsContent`
/// answers `false`: the bytes sit in the database as they were put.
pub const PG_CONTENT_STORE_METHODS: [ContentStoreMethod; 3] = ContentStoreMethod::ALL;

/// The PostgreSQL ContentStore (bytes as `bytea`).
#[derive(Clone)]
pub struct PgContentStore {
    db: PgStore,
    caps: ContentStoreCapabilities,
}

impl PgContentStore {
    /// The store over `db`, claiming [`PG_CONTENT_STORE_METHODS`].
    pub fn new(db: PgStore) -> PgContentStore {
        PgContentStore {
            db,
            caps: Capabilities::new(CONTENT_STORE_SPI_VERSION, PG_CONTENT_STORE_METHODS),
        }
    }

    /// Writes the object if it is new and grants `owner` (or everyone) access, in one
    /// transaction.
    async fn publish(
        &self,
        reference: &ContentRef,
        bytes: &[u8],
        owner: Option<ContentAccess>,
    ) -> Result<(), StoreError> {
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        tx.execute(
            "INSERT INTO loom_content (digest, bytes, public) VALUES ($1, $2, $3)
             ON CONFLICT (digest) DO UPDATE SET public = loom_content.public OR EXCLUDED.public",
            &[&reference.digest, &bytes, &owner.is_none()],
        )
        .await
        .map_err(backend)?;
        if let Some(a) = owner {
            tx.execute(
                "INSERT INTO loom_content_owners (digest, owner) VALUES ($1, $2)
                 ON CONFLICT (digest, owner) DO NOTHING",
                &[&reference.digest, &a.owner],
            )
            .await
            .map_err(backend)?;
        }
        tx_.commit().await.map_err(backend)?;
        Ok(())
    }
}

impl ContentStore for PgContentStore {
    fn capabilities(&self) -> ContentStoreCapabilities {
        self.caps.clone()
    }

    async fn put(
        &self,
        bytes: Vec<u8>,
        owner: Option<ContentAccess>,
    ) -> Result<ContentRef, StoreError> {
        check_owner(&self.caps, &owner)?;
        let reference = content_ref(&bytes)?;
        self.publish(&reference, &bytes, owner).await?;
        Ok(reference)
    }

    async fn get(
        &self,
        digest: &str,
        owner: Option<ContentAccess>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        check_digest(digest)?;
        check_owner(&self.caps, &owner)?;
        let owner_name = owner.as_ref().map(|a| a.owner.as_str());
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        // Public bytes are readable by everyone; owned bytes only by a get naming one
        // of their owners.
        let row = client
            .query_opt(
                "SELECT bytes FROM loom_content c WHERE c.digest = $1 AND (c.public
                   OR ($2::text IS NOT NULL AND EXISTS (SELECT 1 FROM loom_content_owners o
                        WHERE o.digest = c.digest AND o.owner = $2::text)))",
                &[&digest, &owner_name],
            )
            .await
            .map_err(backend)?;
        row.map(|r| r.try_get::<_, Vec<u8>>(0).map_err(backend))
            .transpose()
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
        if !self.caps.claims(ContentStoreMethod::PutStream) {
            return Err(StoreError::unsupported("putStream"));
        }
        check_owner(&self.caps, &owner)?;
        // Nothing reaches the database until the stream has ended well.
        let (buffer, reference) = match collect_stream(chunks) {
            Ok(collected) => collected,
            Err(abort) => return Ok(PutStreamOutcome::Aborted(abort)),
        };
        self.publish(&reference, &buffer, owner).await?;
        Ok(PutStreamOutcome::Stored(reference))
    }

    async fn seals_content(&self) -> Result<bool, StoreError> {
        if self.caps.claims(ContentStoreMethod::SealsContent) {
            Ok(false)
        } else {
            Err(StoreError::unsupported("sealsContent"))
        }
    }
}

/// The PostgreSQL DurableStateStore (values as `jsonb`).
#[derive(Clone)]
pub struct PgDurableStateStore {
    db: PgStore,
}

impl PgDurableStateStore {
    /// The store over `db`.
    pub fn new(db: PgStore) -> PgDurableStateStore {
        PgDurableStateStore { db }
    }
}

/// The conflict for a stale expectation: `expected` vs `current` (0 = absent for both).
fn state_conflict(expected: Option<u64>, current: Option<u64>) -> StoreError {
    let (expected, current) = (expected.unwrap_or(0), current.unwrap_or(0));
    StoreError::new(
        StoreErrorKind::Conflict {
            expected_next: expected,
            actual_next: current,
        },
        format!("expected version {expected}, the key is at {current} (0 = absent)"),
    )
}

/// Makes sure `key` has a row (a version-0 tombstone when it had none), locks it for
/// the transaction and returns `(version, live)`.
async fn lock_state(tx: &Q<'_, Transaction<'_>>, key: &str) -> Result<(u64, bool), StoreError> {
    tx.execute(
        "INSERT INTO loom_state (key, value, version, live) VALUES ($1, NULL, 0, false)
         ON CONFLICT (key) DO NOTHING",
        &[&key],
    )
    .await
    .map_err(backend)?;
    let row = tx
        .query_one(
            "SELECT version, live FROM loom_state WHERE key = $1 FOR UPDATE",
            &[&key],
        )
        .await
        .map_err(backend)?;
    Ok((
        unsigned(row.try_get(0).map_err(backend)?, "state version")?,
        row.try_get(1).map_err(backend)?,
    ))
}

impl DurableStateStore for PgDurableStateStore {
    fn capabilities(&self) -> DurableStateStoreCapabilities {
        Capabilities::new(DURABLE_STATE_STORE_SPI_VERSION, [])
    }

    async fn get(&self, key: &str) -> Result<Option<Versioned>, StoreError> {
        check_name("key", key)?;
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let row = client
            .query_opt(
                "SELECT value, version FROM loom_state WHERE key = $1 AND live",
                &[&key],
            )
            .await
            .map_err(backend)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let value: Option<Value> = row.try_get(0).map_err(backend)?;
        let value = value.ok_or_else(|| corrupt(format!("live state {key:?} has no value")))?;
        Ok(Some(Versioned {
            value,
            version: unsigned(row.try_get(1).map_err(backend)?, "state version")?,
        }))
    }

    async fn put(
        &self,
        key: &str,
        value: Value,
        expected_version: Option<u64>,
    ) -> Result<u64, StoreError> {
        check_name("key", key)?;
        check_document(&value)?;
        // `expectedVersion: 0` is "absent", as the conflict facts spell absence (GAP-27,
        // decision 0006): no key is ever at version 0.
        let expected_version = expected_version.filter(|v| *v != 0);
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        let (floor, live) = lock_state(&tx, key).await?;
        let current = live.then_some(floor);
        if current != expected_version {
            return Err(state_conflict(expected_version, current));
        }
        // A tombstone's version is the floor too, so versions keep rising.
        let version = floor + 1;
        let stored = i64::try_from(version)
            .map_err(|_| corrupt(format!("state version of {key:?} overflows")))?;
        tx.execute(
            "UPDATE loom_state SET value = $2, version = $3, live = true WHERE key = $1",
            &[&key, &value, &stored],
        )
        .await
        .map_err(backend)?;
        tx_.commit().await.map_err(backend)?;
        Ok(version)
    }

    async fn delete(&self, key: &str, expected_version: u64) -> Result<(), StoreError> {
        check_name("key", key)?;
        let mut client = self.db.client.lock().await;
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        match lock_state(&tx, key).await? {
            (_, false) => Err(StoreError::not_found(format!("no state under {key:?}"))),
            (v, true) if v != expected_version => {
                Err(state_conflict(Some(expected_version), Some(v)))
            }
            _ => {
                tx.execute(
                    "UPDATE loom_state SET value = NULL, live = false WHERE key = $1",
                    &[&key],
                )
                .await
                .map_err(backend)?;
                tx_.commit().await.map_err(backend)?;
                Ok(())
            }
        }
    }
}

/// The PostgreSQL ReadModelStore (documents as `jsonb`; cursors in a table).
#[derive(Clone)]
pub struct PgReadModelStore {
    db: PgStore,
}

impl PgReadModelStore {
    /// The store over `db`.
    pub fn new(db: PgStore) -> PgReadModelStore {
        PgReadModelStore { db }
    }
}

/// 64 bits that are hard to guess for a cursor token. `RandomState` is seeded from the
/// OS; a token is only looked up, never verified, so it needs to be unguessable, not
/// secret under analysis.
fn token_nonce(serial: i64) -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_i64(serial);
    h.finish()
}

impl ReadModelStore for PgReadModelStore {
    fn capabilities(&self) -> ReadModelStoreCapabilities {
        Capabilities::new(READ_MODEL_STORE_SPI_VERSION, [])
    }

    async fn upsert(&self, collection: &str, id: &str, doc: Value) -> Result<(), StoreError> {
        check_name("collection", collection)?;
        check_name("document id", id)?;
        check_document(&doc)?;
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        client
            .execute(
                "INSERT INTO loom_read_models (collection, id, doc) VALUES ($1, $2, $3)
                 ON CONFLICT (collection, id) DO UPDATE SET doc = EXCLUDED.doc",
                &[&collection, &id, &doc],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn get(&self, collection: &str, id: &str) -> Result<Option<Value>, StoreError> {
        check_name("collection", collection)?;
        check_name("document id", id)?;
        let guard = self.db.client.lock().await;
        let client = self.db.q(&*guard);
        let row = client
            .query_opt(
                "SELECT doc FROM loom_read_models WHERE collection = $1 AND id = $2",
                &[&collection, &id],
            )
            .await
            .map_err(backend)?;
        row.map(|r| r.try_get::<_, Value>(0).map_err(backend))
            .transpose()
    }

    async fn query(
        &self,
        collection: &str,
        options: QueryOptions,
    ) -> Result<ReadModelPage, StoreError> {
        check_name("collection", collection)?;
        let limit = check_limit(options.limit)?;
        let mut client = self.db.client.lock().await;
        // One transaction: issuing the next cursor is a write that belongs to the page.
        let tx_ = client.transaction().await.map_err(backend)?;
        let tx = self.db.q(&tx_);
        let after: Option<String> = match &options.cursor {
            None => None,
            Some(token) => {
                let issued = tx
                    .query_opt(
                        "SELECT collection, last_id FROM loom_read_model_cursors WHERE token = $1",
                        &[token],
                    )
                    .await
                    .map_err(backend)?;
                let Some(issued) = issued else {
                    return Err(StoreError::invalid(
                        "the cursor was not issued by this store (or was forgotten)",
                    ));
                };
                let issued_for: String = issued.try_get(0).map_err(backend)?;
                if issued_for != collection {
                    return Err(StoreError::invalid(
                        "the cursor was issued for another collection",
                    ));
                }
                Some(issued.try_get(1).map_err(backend)?)
            }
        };
        // One row more than the page, to learn whether there is a next page.
        let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        let rows = tx
            .query(
                "SELECT id, doc FROM loom_read_models
                 WHERE collection = $1 AND ($2::text IS NULL OR id > $2::text)
                 ORDER BY id LIMIT $3",
                &[&collection, &after, &fetch],
            )
            .await
            .map_err(backend)?;
        let more = rows.len() > limit;
        let mut docs = Vec::with_capacity(limit.min(rows.len()));
        for row in rows.iter().take(limit) {
            docs.push(Document {
                id: row.try_get(0).map_err(backend)?,
                doc: row.try_get(1).map_err(backend)?,
            });
        }
        let next_cursor = match (more, docs.last()) {
            (true, Some(last)) => {
                let serial: i64 = tx
                    .query_one("SELECT nextval('loom_read_model_cursor')", &[])
                    .await
                    .map_err(backend)?
                    .try_get(0)
                    .map_err(backend)?;
                let token = format!("rm{serial}.{:016x}", token_nonce(serial));
                tx.execute(
                    "INSERT INTO loom_read_model_cursors (serial, token, collection, last_id)
                     VALUES ($1, $2, $3, $4)",
                    &[&serial, &token, &collection, &last.id],
                )
                .await
                .map_err(backend)?;
                tx.execute(
                    "DELETE FROM loom_read_model_cursors WHERE serial <= $1",
                    &[&serial.saturating_sub(PG_ISSUED_CURSORS_MAX)],
                )
                .await
                .map_err(backend)?;
                Some(token)
            }
            _ => None,
        };
        tx_.commit().await.map_err(backend)?;
        Ok(ReadModelPage { docs, next_cursor })
    }
}
