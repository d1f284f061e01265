//! The plugin-tier SPIs (SPI-20, reference-defined contracts in
//! `loom_kernel::spi::plugin`) over the same SQLite database as the kernel-tier stores:
//! [`SqliteContentStore`], [`SqliteDurableStateStore`] and [`SqliteReadModelStore`].
//!
//! Design:
//!
//! - Every call is one transaction (`BEGIN IMMEDIATE` for writes), as in
//!   [`crate::sqlite`], so a compare-and-set and its write cannot be split by another
//!   connection on the same file.
//! - `putStream` gathers the chunks in memory first and writes the object in one
//!   transaction after the last chunk: an aborted stream never reaches the database, so
//!   no prefix can be read back (ADR 0059).
//! - Content rows carry a `public` flag and an owner table. The same bytes put by an
//!   owner and without one are one object, readable by both routes; bytes put only by
//!   owners are invisible to anyone else.
//! - A deleted durable-state key keeps its row with `live = 0` and its last version, so
//!   a re-created key continues above it (no ABA).
//! - Read-model cursors are rows of `loom_read_model_cursors`: the store accepts only a
//!   token it finds there, for the collection it was issued for. Tokens carry a random
//!   part as well as a serial, so a caller cannot guess another caller's cursor, and at
//!   most [`SQLITE_ISSUED_CURSORS_MAX`] are kept (the oldest are forgotten first).

use std::hash::{BuildHasher, Hasher};

use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::Value;

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

use crate::sqlite::{backend, bump, unsigned, SqliteStore};

/// Most read-model cursors one database remembers; older ones are forgotten and then
/// refused with `InvalidArgument` (the client starts over), which keeps the table small.
pub const SQLITE_ISSUED_CURSORS_MAX: i64 = 10_000;

/// The ContentStore features the SQLite store claims. It claims `sealsContent` and
/// answers `false`: the bytes sit in the file as they were put.
pub const SQLITE_CONTENT_STORE_METHODS: [ContentStoreMethod; 3] = ContentStoreMethod::ALL;

/// The SQLite ContentStore.
#[derive(Clone)]
pub struct SqliteContentStore {
    db: SqliteStore,
    caps: ContentStoreCapabilities,
}

impl SqliteContentStore {
    /// The store over `db`, claiming [`SQLITE_CONTENT_STORE_METHODS`].
    pub fn new(db: SqliteStore) -> SqliteContentStore {
        SqliteContentStore {
            db,
            caps: Capabilities::new(CONTENT_STORE_SPI_VERSION, SQLITE_CONTENT_STORE_METHODS),
        }
    }

    /// Writes the object (if new) and grants `owner` (or the public) access, in one
    /// transaction.
    fn publish(
        &self,
        reference: &ContentRef,
        bytes: &[u8],
        owner: Option<ContentAccess>,
    ) -> Result<(), StoreError> {
        self.db.write(|tx| {
            let public = i64::from(owner.is_none());
            tx.execute(
                "INSERT INTO loom_content (digest, bytes, public) VALUES (?1, ?2, ?3)
                 ON CONFLICT (digest) DO UPDATE SET public = MAX(public, excluded.public)",
                params![reference.digest, bytes, public],
            )
            .map_err(backend)?;
            if let Some(a) = owner {
                tx.execute(
                    "INSERT OR IGNORE INTO loom_content_owners (digest, owner) VALUES (?1, ?2)",
                    params![reference.digest, a.owner],
                )
                .map_err(backend)?;
            }
            Ok(())
        })
    }
}

impl ContentStore for SqliteContentStore {
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
        self.publish(&reference, &bytes, owner)?;
        Ok(reference)
    }

    async fn get(
        &self,
        digest: &str,
        owner: Option<ContentAccess>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        check_digest(digest)?;
        check_owner(&self.caps, &owner)?;
        self.db.read(|tx| {
            let owner_name = owner.as_ref().map(|a| a.owner.as_str());
            // Public bytes are readable by everyone; owned bytes only by a get naming
            // one of their owners.
            tx.query_row(
                "SELECT bytes FROM loom_content c WHERE c.digest = ?1 AND (c.public = 1
                   OR (?2 IS NOT NULL AND EXISTS (SELECT 1 FROM loom_content_owners o
                        WHERE o.digest = c.digest AND o.owner = ?2)))",
                params![digest, owner_name],
                |r| r.get::<_, Vec<u8>>(0),
            )
            .optional()
            .map_err(backend)
        })
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
        // Nothing touches the database until the stream has ended well: an abort
        // returns before the one write, so there is no prefix to clean up.
        let (buffer, reference) = match collect_stream(chunks) {
            Ok(collected) => collected,
            Err(abort) => return Ok(PutStreamOutcome::Aborted(abort)),
        };
        self.publish(&reference, &buffer, owner)?;
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

/// The SQLite DurableStateStore.
#[derive(Clone)]
pub struct SqliteDurableStateStore {
    db: SqliteStore,
}

impl SqliteDurableStateStore {
    /// The store over `db`.
    pub fn new(db: SqliteStore) -> SqliteDurableStateStore {
        SqliteDurableStateStore { db }
    }
}

/// The conflict for a stale expectation: `expected` (0 = absent) vs `current` (0 = absent).
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

/// `(version, live)` of `key`'s row, live or tombstone.
fn state_row(tx: &Transaction<'_>, key: &str) -> Result<Option<(u64, bool)>, StoreError> {
    let row: Option<(i64, i64)> = tx
        .query_row(
            "SELECT version, live FROM loom_state WHERE key = ?1",
            [key],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(backend)?;
    row.map(|(v, live)| Ok((unsigned(v, "state version")?, live == 1)))
        .transpose()
}

impl DurableStateStore for SqliteDurableStateStore {
    fn capabilities(&self) -> DurableStateStoreCapabilities {
        Capabilities::new(DURABLE_STATE_STORE_SPI_VERSION, [])
    }

    async fn get(&self, key: &str) -> Result<Option<Versioned>, StoreError> {
        check_name("key", key)?;
        let row: Option<(String, i64)> = self.db.read(|tx| {
            tx.query_row(
                "SELECT value, version FROM loom_state WHERE key = ?1 AND live = 1",
                [key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(backend)
        })?;
        row.map(|(text, version)| {
            Ok(Versioned {
                value: serde_json::from_str(&text)
                    .map_err(|e| backend(format!("stored state: {e}")))?,
                version: unsigned(version, "state version")?,
            })
        })
        .transpose()
    }

    async fn put(
        &self,
        key: &str,
        value: Value,
        expected_version: Option<u64>,
    ) -> Result<u64, StoreError> {
        check_name("key", key)?;
        let text = check_document(&value)?;
        // `expectedVersion: 0` is "absent", as the conflict facts spell absence (GAP-27,
        // decision 0006): no key is ever at version 0.
        let expected_version = expected_version.filter(|v| *v != 0);
        self.db.write(|tx| {
            let row = state_row(tx, key)?;
            let current = row.and_then(|(v, live)| live.then_some(v));
            if current != expected_version {
                return Err(state_conflict(expected_version, current));
            }
            // A tombstone's version is the floor too, so versions keep rising.
            let version = row.map_or(0, |(v, _)| v) + 1;
            tx.execute(
                "INSERT INTO loom_state (key, value, version, live) VALUES (?1, ?2, ?3, 1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value,
                     version = excluded.version, live = 1",
                params![key, text, i64::try_from(version).map_err(backend)?],
            )
            .map_err(backend)?;
            Ok(version)
        })
    }

    async fn delete(&self, key: &str, expected_version: u64) -> Result<(), StoreError> {
        check_name("key", key)?;
        self.db.write(|tx| match state_row(tx, key)? {
            None | Some((_, false)) => {
                Err(StoreError::not_found(format!("no state under {key:?}")))
            }
            Some((v, true)) if v != expected_version => {
                Err(state_conflict(Some(expected_version), Some(v)))
            }
            Some(_) => {
                tx.execute(
                    "UPDATE loom_state SET value = NULL, live = 0 WHERE key = ?1",
                    [key],
                )
                .map_err(backend)?;
                Ok(())
            }
        })
    }
}

/// The SQLite ReadModelStore.
#[derive(Clone)]
pub struct SqliteReadModelStore {
    db: SqliteStore,
}

impl SqliteReadModelStore {
    /// The store over `db`.
    pub fn new(db: SqliteStore) -> SqliteReadModelStore {
        SqliteReadModelStore { db }
    }
}

/// 64 unpredictable bits for a cursor token. `RandomState` is seeded from the OS per
/// instance, which is all a token needs: it is looked up, not verified, so it only has
/// to be hard to guess, not secret under analysis.
fn token_nonce(serial: u64) -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(serial);
    h.finish()
}

impl ReadModelStore for SqliteReadModelStore {
    fn capabilities(&self) -> ReadModelStoreCapabilities {
        Capabilities::new(READ_MODEL_STORE_SPI_VERSION, [])
    }

    async fn upsert(&self, collection: &str, id: &str, doc: Value) -> Result<(), StoreError> {
        check_name("collection", collection)?;
        check_name("document id", id)?;
        let text = check_document(&doc)?;
        self.db.write(|tx| {
            tx.execute(
                "INSERT INTO loom_read_models (collection, id, doc) VALUES (?1, ?2, ?3)
                 ON CONFLICT (collection, id) DO UPDATE SET doc = excluded.doc",
                params![collection, id, text],
            )
            .map_err(backend)?;
            Ok(())
        })
    }

    async fn get(&self, collection: &str, id: &str) -> Result<Option<Value>, StoreError> {
        check_name("collection", collection)?;
        check_name("document id", id)?;
        let text: Option<String> = self.db.read(|tx| {
            tx.query_row(
                "SELECT doc FROM loom_read_models WHERE collection = ?1 AND id = ?2",
                params![collection, id],
                |r| r.get(0),
            )
            .optional()
            .map_err(backend)
        })?;
        text.map(|t| serde_json::from_str(&t).map_err(|e| backend(format!("stored document: {e}"))))
            .transpose()
    }

    async fn query(
        &self,
        collection: &str,
        options: QueryOptions,
    ) -> Result<ReadModelPage, StoreError> {
        check_name("collection", collection)?;
        let limit = check_limit(options.limit)?;
        // A write transaction even for a read: issuing the next cursor is a write, and
        // the page and its cursor must come from one snapshot.
        self.db.write(|tx| {
            let after: Option<String> = match &options.cursor {
                None => None,
                Some(token) => {
                    let issued: Option<(String, String)> = tx
                        .query_row(
                            "SELECT collection, last_id FROM loom_read_model_cursors
                             WHERE token = ?1",
                            [token],
                            |r| Ok((r.get(0)?, r.get(1)?)),
                        )
                        .optional()
                        .map_err(backend)?;
                    match issued {
                        Some((c, last)) if c == collection => Some(last),
                        Some(_) => {
                            return Err(StoreError::invalid(
                                "the cursor was issued for another collection",
                            ))
                        }
                        None => {
                            return Err(StoreError::invalid(
                                "the cursor was not issued by this store (or was forgotten)",
                            ))
                        }
                    }
                }
            };
            // One row more than the page, to learn whether there is a next page.
            let fetch = i64::try_from(limit + 1).map_err(backend)?;
            let mut stmt = tx
                .prepare_cached(
                    "SELECT id, doc FROM loom_read_models
                     WHERE collection = ?1 AND (?2 IS NULL OR id > ?2)
                     ORDER BY id LIMIT ?3",
                )
                .map_err(backend)?;
            let rows = stmt
                .query_map(params![collection, after, fetch], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(backend)?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(backend)?;
            let more = rows.len() > limit;
            let mut docs = Vec::with_capacity(limit);
            for (id, text) in rows.into_iter().take(limit) {
                let doc = serde_json::from_str(&text)
                    .map_err(|e| backend(format!("stored document: {e}")))?;
                docs.push(Document { id, doc });
            }
            let next_cursor = match (more, docs.last()) {
                (true, Some(last)) => {
                    let serial = bump(tx, "read_model_cursor")?;
                    let token = format!("rm{serial}.{:016x}", token_nonce(serial));
                    tx.execute(
                        "INSERT INTO loom_read_model_cursors (serial, token, collection, last_id)
                         VALUES (?1, ?2, ?3, ?4)",
                        params![
                            i64::try_from(serial).map_err(backend)?,
                            token,
                            collection,
                            last.id
                        ],
                    )
                    .map_err(backend)?;
                    tx.execute(
                        "DELETE FROM loom_read_model_cursors WHERE serial <= ?1",
                        [i64::try_from(serial).map_err(backend)? - SQLITE_ISSUED_CURSORS_MAX],
                    )
                    .map_err(backend)?;
                    Some(token)
                }
                _ => None,
            };
            Ok(ReadModelPage { docs, next_cursor })
        })
    }
}
