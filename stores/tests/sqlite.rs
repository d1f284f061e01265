//! The kits against the SQLite stores (in memory and on a WAL file), plus the checks
//! only SQLite can make: bytes stored as appended, schema versioning, persistence.
//! A `harness = false` target: the kit macros make libtest-mimic trials.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use loom_conformance::case::events;
use loom_kernel::spi::{EventStore, EventStoreMethod};
use loom_stores::sqlite::SqliteStore;

/// A fresh database file under the system temp dir, unique per process and call.
fn temp_db(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("loom-stores-test-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{}-{n}.db", name.replace("::", "-")));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

fn memory_db() -> Option<SqliteStore> {
    Some(SqliteStore::open_in_memory().expect("open in-memory sqlite"))
}

mod events {
    use super::*;
    loom_conformance::event_store_conformance!(|_case: &'static str| async {
        memory_db().map(|db| db.events())
    });
}

mod events_file {
    use super::*;
    loom_conformance::event_store_conformance!(|case: &'static str| async move {
        Some(
            SqliteStore::open(temp_db(case))
                .expect("open sqlite file")
                .events(),
        )
    });
}

mod snapshots {
    use super::*;
    loom_conformance::snapshot_store_conformance!(|_case: &'static str| async {
        memory_db().map(|db| db.snapshots())
    });
}

mod archive {
    use super::*;
    loom_conformance::archive_store_conformance!(|_case: &'static str| async {
        memory_db().map(|db| db.archive())
    });
}

mod branches {
    use super::*;
    loom_conformance::branch_registry_conformance!(|_case: &'static str| async {
        memory_db().map(|db| db.branches())
    });
}

mod dispatcher {
    use super::*;
    loom_conformance::dispatcher_conformance!(|_case: &'static str| async {
        memory_db().map(|db| db.dispatcher())
    });
}

mod timers {
    use super::*;
    loom_conformance::timer_store_conformance!(|_case: &'static str| async {
        memory_db().map(|db| db.timers())
    });
}

/// SQLite is single-process: it must not claim `storeNow`, and answers unsupported (SPI-08).
async fn spi_08_sqlite_does_not_claim_store_now() {
    let store = SqliteStore::open_in_memory().unwrap().events();
    assert!(!store.capabilities().claims(EventStoreMethod::StoreNow));
    assert!(store.store_now().await.unwrap_err().is_unsupported());
}

/// The payload and metadata columns hold exactly the bytes serde_json wrote at append
/// time, and a reopened file reads the same log (SPI-23, durability).
async fn spi_23_sqlite_stores_payload_bytes_and_survives_reopen() {
    let path = temp_db("bytes");
    let batch = events("bytes", 0, 3, "b");
    {
        let store = SqliteStore::open(&path).unwrap().events();
        store.append("bytes", 0, batch.clone(), None).await.unwrap();
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut stmt = conn
        .prepare("SELECT payload, metadata FROM loom_events ORDER BY sequence")
        .unwrap();
    let rows: Vec<(String, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (row, e) in rows.iter().zip(&batch) {
        assert_eq!(row.0, serde_json::to_string(&e.payload).unwrap());
        assert_eq!(
            row.1,
            e.metadata
                .as_ref()
                .map(|m| serde_json::to_string(m).unwrap())
        );
    }
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode.to_ascii_lowercase(), "wal");
    let reopened = SqliteStore::open(&path).unwrap().events();
    assert_eq!(reopened.read("bytes").await.unwrap(), batch);
}

/// A database written by a newer schema is refused rather than misread.
fn sqlite_refuses_a_newer_schema() {
    let path = temp_db("schema");
    drop(SqliteStore::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE loom_schema_version SET version = 99", [])
        .unwrap();
    drop(conn);
    let err = SqliteStore::open(&path)
        .err()
        .expect("a newer schema must be refused");
    assert_eq!(err.kind.name(), "backend");
}

/// Two handles on one file (two connections, as two processes would have) still give
/// one winner per sequence: the check and the write share a `BEGIN IMMEDIATE`.
async fn spi_23_sqlite_two_connections_one_winner() {
    let path = temp_db("two-conns");
    let a = SqliteStore::open(&path).unwrap().events();
    let b = SqliteStore::open(&path).unwrap().events();
    let first = a.append("x", 0, events("x", 0, 2, "a"), None).await;
    let second = b.append("x", 0, events("x", 0, 2, "b"), None).await;
    assert!(first.is_ok());
    assert_eq!(second.unwrap_err().kind.name(), "conflict");
    assert_eq!(b.read("x").await.unwrap(), events("x", 0, 2, "a"));
}

mod lifecycle {
    use super::*;
    loom_conformance::lifecycle_conformance!(|_case: &'static str| async {
        memory_db().map(|db| (db.events(), db.snapshots(), db.archive()))
    });
}

mod content {
    use super::*;
    loom_conformance::content_store_conformance!(|_case: &'static str| async {
        memory_db().map(|db| db.content())
    });
}

mod content_file {
    use super::*;
    loom_conformance::content_store_conformance!(|case: &'static str| async move {
        Some(
            SqliteStore::open(temp_db(case))
                .expect("open sqlite file")
                .content(),
        )
    });
}

mod durable_state {
    use super::*;
    loom_conformance::durable_state_store_conformance!(|_case: &'static str| async {
        memory_db().map(|db| db.durable_state())
    });
}

mod read_models {
    use super::*;
    loom_conformance::read_model_store_conformance!(|_case: &'static str| async {
        memory_db().map(|db| db.read_models())
    });
}

/// Cursors live in the database: a second handle on the same file accepts a cursor the
/// first one issued, and versions of a deleted key keep rising after a reopen (SPI-20).
async fn spi_20_sqlite_plugin_state_survives_reopen() {
    use loom_kernel::spi::{DurableStateStore, QueryOptions, ReadModelStore};
    let path = temp_db("plugin-reopen");
    let first = SqliteStore::open(&path).unwrap();
    let models = first.read_models();
    for id in ["a", "b", "c"] {
        models.upsert("c", id, serde_json::json!(id)).await.unwrap();
    }
    let page = models
        .query(
            "c",
            QueryOptions {
                limit: 1,
                cursor: None,
            },
        )
        .await
        .unwrap();
    let state = first.durable_state();
    let v1 = state.put("k", serde_json::json!(1), None).await.unwrap();
    state.delete("k", v1).await.unwrap();
    drop((models, state, first));
    let second = SqliteStore::open(&path).unwrap();
    let next = second
        .read_models()
        .query(
            "c",
            QueryOptions {
                limit: 5,
                cursor: page.next_cursor,
            },
        )
        .await
        .unwrap();
    let ids: Vec<&str> = next.docs.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["b", "c"]);
    let v2 = second
        .durable_state()
        .put("k", serde_json::json!(2), None)
        .await
        .unwrap();
    assert!(v2 > v1, "version {v2} after a delete of version {v1}");
}

/// PLACE-02: the dispatcher's queue limit reads a counter kept with every insert and
/// delete instead of counting the queue. The counter follows dispatch, claim, release,
/// expiry and complete; a database without it (written before it existed) starts it
/// from its rows; and a queue at `DISPATCH_QUEUE_LEN_MAX` refuses the next package
/// with `InvalidArgument` until one leaves.
async fn place_02_sqlite_queue_limit_counter_follows_the_queue() {
    use loom_kernel::spi::{ExecutionDispatcher, ExecutionPackage, DISPATCH_QUEUE_LEN_MAX};
    let path = temp_db("queue-limit");
    let store = SqliteStore::open(&path).unwrap();
    let d = store.dispatcher();
    d.register_target("t").await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let held = || -> (i64, i64) {
        conn.query_row(
            "SELECT (SELECT value FROM loom_counters WHERE name = 'dispatch_held'),
                    (SELECT COUNT(*) FROM loom_dispatch)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    let package = |i: usize| ExecutionPackage {
        execution_id: format!("x{i}"),
        flow_id: "f".into(),
        resume_hint: None,
        compute_target: None,
    };
    for i in 0..6 {
        d.dispatch(package(i)).await.unwrap();
    }
    assert_eq!(held(), (6, 6));
    let a = d.claim("t", "w", 0).await.unwrap().unwrap();
    let b = d.claim("t", "w", 0).await.unwrap().unwrap();
    let c = d.claim("t", "w", 0).await.unwrap().unwrap();
    d.complete(&a).await.unwrap();
    assert_eq!(held(), (5, 5));
    d.release(&b).await.unwrap();
    assert!(d.complete(&b).await.is_err(), "a released lease is lost");
    assert_eq!(held(), (5, 5), "a refused complete deletes nothing");
    d.expire_leases(c.deadline_ms).await.unwrap();
    assert_eq!(held(), (5, 5), "expiry re-queues, it does not remove");
    assert!(d.dispatch(package(1)).await.is_err(), "already queued");
    assert_eq!(held(), (5, 5));
    // A version 1 database (written before the counter existed, or by a build that did
    // not keep it): opening it migrates to version 2 and counts the rows once.
    conn.execute_batch(
        "UPDATE loom_counters SET value = 77 WHERE name = 'dispatch_held';
         DELETE FROM loom_schema_version; INSERT INTO loom_schema_version (version) VALUES (1);",
    )
    .unwrap();
    drop(SqliteStore::open(&path).unwrap());
    assert_eq!(held(), (5, 5));
    let version: i64 = conn
        .query_row("SELECT MAX(version) FROM loom_schema_version", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(version, loom_stores::sqlite::SQLITE_SCHEMA_VERSION);
    // A full queue: the limit holds at the counter, and frees with the next complete.
    let full = DISPATCH_QUEUE_LEN_MAX as i64;
    conn.execute(
        "UPDATE loom_counters SET value = ?1 WHERE name = 'dispatch_held'",
        [full - 1],
    )
    .unwrap();
    d.dispatch(package(10)).await.unwrap();
    let refused = d.dispatch(package(11)).await.unwrap_err();
    assert_eq!(refused.kind.name(), "invalid-argument", "{refused:?}");
    let e = d.claim("t", "w", 0).await.unwrap().unwrap();
    d.complete(&e).await.unwrap();
    d.dispatch(package(11)).await.unwrap();
    assert_eq!(held().0, full);
}

fn block_on(test: impl std::future::Future<Output = ()>) {
    loom_conformance::block_on(test).expect("a tokio runtime");
}

fn main() -> std::process::ExitCode {
    use loom_conformance::harness::{run, test};
    let mut trials = vec![
        test("spi_08_sqlite_does_not_claim_store_now", || {
            block_on(spi_08_sqlite_does_not_claim_store_now())
        }),
        test(
            "spi_23_sqlite_stores_payload_bytes_and_survives_reopen",
            || block_on(spi_23_sqlite_stores_payload_bytes_and_survives_reopen()),
        ),
        test(
            "sqlite_refuses_a_newer_schema",
            sqlite_refuses_a_newer_schema,
        ),
        test("spi_23_sqlite_two_connections_one_winner", || {
            block_on(spi_23_sqlite_two_connections_one_winner())
        }),
        test("spi_20_sqlite_plugin_state_survives_reopen", || {
            block_on(spi_20_sqlite_plugin_state_survives_reopen())
        }),
        test(
            "place_02_sqlite_queue_limit_counter_follows_the_queue",
            || block_on(place_02_sqlite_queue_limit_counter_follows_the_queue()),
        ),
    ];
    for kit in [
        events::kit_trials,
        events_file::kit_trials,
        snapshots::kit_trials,
        archive::kit_trials,
        branches::kit_trials,
        dispatcher::kit_trials,
        timers::kit_trials,
        lifecycle::kit_trials,
        content::kit_trials,
        content_file::kit_trials,
        durable_state::kit_trials,
        read_models::kit_trials,
    ] {
        trials.extend(kit());
    }
    run(trials)
}
