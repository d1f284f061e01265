//! The kits against the PostgreSQL stores (feature `postgres`), plus what only a shared
//! database can show: database time, `jsonb` key normalisation, and real concurrency
//! between connections. Each kit case gets an emptied schema no other running case
//! holds; the cross-connection tests get their own. With `LOOM_PG_URL` unset every
//! test that needs the database is reported as skipped (`[skip-missing postgres]`), or
//! fails naming `LOOM_PG_URL` when `LOOM_REQUIRE_TOOLS=1`. A `harness = false` target:
//! the kit macros make libtest-mimic trials. Built only with the `postgres` feature.

use loom_conformance::case::{envelope, events, join_all};
use loom_conformance::harness::{locate_or_skip, located, needs, run, test, Tool, Trial};
use loom_kernel::spi::{EventStore, EventStoreMethod, StoreErrorKind};
use loom_stores::postgres::PgStore;
use loom_stores::SystemClock;

/// The database URL, for a test the harness runs only when PostgreSQL is there.
fn url() -> String {
    located(Tool::Postgres)
}

/// A schema name for a case: `lt_` + the sanitised name, cut to fit, + a 32-bit
/// FNV-1a hash of the full name so cut names stay distinct.
fn schema_for(case: &str) -> String {
    let mut hash: u32 = 0x811c9dc5;
    for b in case.bytes() {
        hash = (hash ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    let clean: String = case
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    format!("lt_{clean}_{hash:08x}")
}

/// The store for one kit case: an emptied schema of the `lt_pool` pool that no other
/// running case holds (`PgStore::connect_pooled`), instead of a schema created and
/// dropped per case, which cost most of the suite's time. The pool's schemas
/// (`lt_pool_0`, `lt_pool_1`, … one per case running at once) stay in the database.
async fn pg(case: &str) -> Option<PgStore> {
    let url = locate_or_skip(Tool::Postgres)?;
    Some(
        PgStore::connect_pooled(&url, "lt_pool")
            .await
            .unwrap_or_else(|e| panic!("connect to {url} for {case}: {e}")),
    )
}

mod events_kit {
    use super::*;
    loom_conformance::event_store_conformance!(|case: &'static str| async move {
        pg(case).await.map(|db| db.events())
    });
}

mod snapshots_kit {
    use super::*;
    loom_conformance::snapshot_store_conformance!(|case: &'static str| async move {
        pg(case).await.map(|db| db.snapshots())
    });
}

mod archive_kit {
    use super::*;
    loom_conformance::archive_store_conformance!(|case: &'static str| async move {
        pg(case).await.map(|db| db.archive())
    });
}

mod lifecycle_kit {
    use super::*;
    loom_conformance::lifecycle_conformance!(|case: &'static str| async move {
        pg(case)
            .await
            .map(|db| (db.events(), db.snapshots(), db.archive()))
    });
}

mod branches_kit {
    use super::*;
    loom_conformance::branch_registry_conformance!(|case: &'static str| async move {
        pg(case).await.map(|db| db.branches())
    });
}

mod dispatcher_kit {
    use super::*;
    loom_conformance::dispatcher_conformance!(|case: &'static str| async move {
        pg(case).await.map(|db| db.dispatcher())
    });
}

mod timers_kit {
    use super::*;
    loom_conformance::timer_store_conformance!(|case: &'static str| async move {
        pg(case).await.map(|db| db.timers())
    });
}

mod content_kit {
    use super::*;
    loom_conformance::content_store_conformance!(|case: &'static str| async move {
        pg(case).await.map(|db| db.content())
    });
}

mod durable_state_kit {
    use super::*;
    loom_conformance::durable_state_store_conformance!(|case: &'static str| async move {
        pg(case).await.map(|db| db.durable_state())
    });
}

mod read_models_kit {
    use super::*;
    loom_conformance::read_model_store_conformance!(|case: &'static str| async move {
        pg(case).await.map(|db| db.read_models())
    });
}

/// Postgres claims `storeNow` and reports database time: within a minute of this
/// machine's clock, since the database runs here (SPI-08).
async fn spi_08_pg_store_now_is_database_time() {
    let db = pg("spi_08_store_now").await.expect("PostgreSQL");
    let store = db.events();
    assert!(store.capabilities().claims(EventStoreMethod::StoreNow));
    let db_now = store.store_now().await.unwrap();
    let local = loom_kernel::spi::Clock::now_ms(&SystemClock);
    assert!(
        (db_now - local).abs() < 60_000,
        "database time {db_now} vs local {local}"
    );
}

/// `jsonb` reorders keys (shorter first) so the stored bytes differ from the appended
/// ones, yet every value survives: the kernel must not depend on key order.
async fn pg_jsonb_normalises_key_order_but_values_survive() {
    let url = url();
    let schema = schema_for("pg_jsonb_key_order");
    let db = PgStore::connect_fresh(&url, &schema).await.unwrap();
    let store = db.events();
    let payload = serde_json::json!({ "zeta": 1, "alpha": 2, "_decisions": { "10": "b", "9": "a" }, "b": [3, 1] });
    let e = envelope("jsonb", 0, "DECISION_RECORDED", payload.clone());
    store
        .append("jsonb", 0, vec![e.clone()], None)
        .await
        .unwrap();
    assert_eq!(store.read("jsonb").await.unwrap(), vec![e]);

    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let row = client
        .query_one(
            &format!("SELECT payload::text FROM {schema}.loom_events"),
            &[],
        )
        .await
        .unwrap();
    let stored: String = row.get(0);
    let keys: Vec<usize> = ["\"b\"", "\"zeta\"", "\"alpha\"", "\"_decisions\""]
        .iter()
        .map(|k| {
            stored
                .find(k)
                .unwrap_or_else(|| panic!("{k} missing from {stored}"))
        })
        .collect();
    assert!(
        keys.windows(2).all(|w| w[0] < w[1]),
        "jsonb key order (shorter first) not observed: {stored}"
    );
}

/// Several connections append to one execution at once, each retrying on conflict:
/// the log ends gapless, holding every batch whole and exactly once (SPI-23).
async fn spi_23_pg_concurrent_appenders_across_connections() {
    let url = url();
    let schema = schema_for("spi_23_pg_concurrent");
    let first = PgStore::connect_fresh(&url, &schema).await.unwrap();
    let mut stores = vec![first.events()];
    for _ in 0..3 {
        stores.push(PgStore::connect(&url, &schema).await.unwrap().events());
    }
    let id = "race";
    let writers = stores.iter().enumerate().map(|(w, store)| async move {
        let mut appended = 0;
        let mut attempts = 0;
        while appended < 5 && attempts < 1_000 {
            attempts += 1;
            let next = store.read(id).await.unwrap().len() as u64;
            let batch = events(id, next, 2, &format!("w{w}-{appended}"));
            match store.append(id, next, batch, None).await {
                Ok(_) => appended += 1,
                Err(e) if matches!(e.kind, StoreErrorKind::Conflict { .. }) => {}
                Err(e) => panic!("writer {w}: {e}"),
            }
        }
        appended
    });
    let counts = join_all(writers.collect()).await;
    assert_eq!(counts, vec![5; stores.len()]);
    let log = stores[0].read(id).await.unwrap();
    assert_eq!(log.len(), 2 * 5 * stores.len());
    for (i, e) in log.iter().enumerate() {
        assert_eq!(e.sequence, i as u64, "gap or reorder at {i}");
    }
    for pair in log.chunks(2) {
        let tag = |e: &loom_kernel::EventEnvelope| e.payload["output"]["tag"].clone();
        assert_eq!(tag(&pair[0]), tag(&pair[1]), "a batch was split");
    }
}

/// `deleteThrough` on one connection while another appends: no event `<= through`
/// remains and every append survives (SPI-09).
async fn spi_09_pg_delete_through_races_appenders_across_connections() {
    let url = url();
    let schema = schema_for("spi_09_pg_race");
    let a = PgStore::connect_fresh(&url, &schema)
        .await
        .unwrap()
        .events();
    let b = PgStore::connect(&url, &schema).await.unwrap().events();
    a.append("x", 0, events("x", 0, 50, "old"), None)
        .await
        .unwrap();
    let appender = async {
        for k in 0..20u64 {
            b.append("x", 50 + k, events("x", 50 + k, 1, "new"), None)
                .await
                .unwrap();
        }
    };
    let deleter = async { a.delete_through("x", 49).await.unwrap() };
    let ((), deleted) = tokio::join!(appender, deleter);
    assert_eq!(deleted, 50);
    let log = a.read("x").await.unwrap();
    assert_eq!(
        log.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        (50..70).collect::<Vec<_>>()
    );
}

/// A zombie on one connection is fenced out by a new holder on another (PLACE-05).
async fn place_05_pg_zombie_on_another_connection_is_fenced() {
    let url = url();
    let schema = schema_for("place_05_pg_zombie");
    let zombie = PgStore::connect_fresh(&url, &schema)
        .await
        .unwrap()
        .events();
    let fresh = PgStore::connect(&url, &schema).await.unwrap().events();
    let old = zombie.acquire_fence("e").await.unwrap();
    zombie
        .append("e", 0, events("e", 0, 1, "a"), Some(old))
        .await
        .unwrap();
    let new = fresh.acquire_fence("e").await.unwrap();
    let err = zombie
        .append("e", 1, events("e", 1, 1, "zombie"), Some(old))
        .await
        .unwrap_err();
    assert_eq!(
        err.kind,
        StoreErrorKind::Fenced {
            presented: Some(old.0),
            current: new.0
        }
    );
    assert_eq!(fresh.read("e").await.unwrap(), events("e", 0, 1, "a"));
}

/// A schema name that could inject SQL is refused before connecting.
async fn pg_schema_name_is_validated() {
    let err = PgStore::connect("postgres://invalid", "x; DROP TABLE y")
        .await
        .err()
        .expect("must refuse");
    assert_eq!(err.kind.name(), "invalid-argument");
}

/// A fleet: four workers on four connections claim from one queue at once. Every
/// package is leased exactly once, and no execution is ever held by two workers
/// (`FOR UPDATE SKIP LOCKED`; PLACE-02).
async fn place_02_pg_fleet_claims_each_package_once_across_connections() {
    use loom_kernel::spi::{ExecutionDispatcher, ExecutionPackage};
    let url = url();
    let schema = schema_for("place_02_pg_fleet");
    let first = PgStore::connect_fresh(&url, &schema).await.unwrap();
    let mut workers = vec![first.dispatcher()];
    for _ in 0..3 {
        workers.push(PgStore::connect(&url, &schema).await.unwrap().dispatcher());
    }
    workers[0].register_target("cpu").await.unwrap();
    let packages = 40;
    for i in 0..packages {
        workers[i % 4]
            .dispatch(ExecutionPackage {
                execution_id: format!("e{i:03}"),
                flow_id: "f".into(),
                resume_hint: None,
                compute_target: None,
            })
            .await
            .unwrap();
    }
    let runs = workers.iter().enumerate().map(|(w, d)| {
        tokio::spawn({
            let d = d.clone();
            async move {
                let mut done = Vec::new();
                while let Some(lease) = d.claim("cpu", &format!("w{w}"), 0).await.unwrap() {
                    d.complete(&lease).await.unwrap();
                    done.push(lease.package.execution_id);
                }
                done
            }
        })
    });
    let mut all = Vec::new();
    for run in runs.collect::<Vec<_>>() {
        all.extend(run.await.unwrap());
    }
    all.sort();
    let expected: Vec<String> = (0..packages).map(|i| format!("e{i:03}")).collect();
    assert_eq!(all, expected, "a package was lost or leased twice");
    assert!(workers[1].claim("cpu", "w", 0).await.unwrap().is_none());
}

/// PLACE-02: the dispatcher's queue limit sums a striped counter kept with every insert
/// and delete instead of counting the queue. After dispatches from four connections at
/// once, claims, a release, expiry and completes the counter equals the rows; a schema
/// without it (written before it existed) starts it from its rows; `reset` empties it;
/// and a queue at `DISPATCH_QUEUE_LEN_MAX` refuses the next package with
/// `InvalidArgument` until one leaves.
async fn place_02_pg_queue_limit_counter_follows_the_queue() {
    use loom_kernel::spi::{ExecutionDispatcher, ExecutionPackage, DISPATCH_QUEUE_LEN_MAX};
    let url = url();
    let schema = schema_for("place_02_pg_queue_limit");
    let first = PgStore::connect_fresh(&url, &schema).await.unwrap();
    let d = first.dispatcher();
    d.register_target("t").await.unwrap();
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let held = || async {
        let row = client
            .query_one(
                &format!(
                    "SELECT (SELECT SUM(held)::bigint FROM {schema}.loom_dispatch_held),
                            (SELECT COUNT(*) FROM {schema}.loom_dispatch)"
                ),
                &[],
            )
            .await
            .unwrap();
        (row.get::<_, i64>(0), row.get::<_, i64>(1))
    };
    let package = |i: usize| ExecutionPackage {
        execution_id: format!("x{i:02}"),
        flow_id: "f".into(),
        resume_hint: None,
        compute_target: None,
    };
    let mut handles = Vec::new();
    for c in 0..4 {
        let d = PgStore::connect(&url, &schema).await.unwrap().dispatcher();
        handles.push(tokio::spawn(async move {
            for i in (c..40).step_by(4) {
                d.dispatch(package(i)).await.unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    assert_eq!(held().await, (40, 40));
    let a = d.claim("t", "w", 0).await.unwrap().unwrap();
    let b = d.claim("t", "w", 0).await.unwrap().unwrap();
    let c = d.claim("t", "w", 0).await.unwrap().unwrap();
    d.complete(&a).await.unwrap();
    assert_eq!(held().await, (39, 39));
    d.release(&b).await.unwrap();
    assert!(d.complete(&b).await.is_err(), "a released lease is lost");
    assert_eq!(held().await, (39, 39), "a refused complete deletes nothing");
    d.expire_leases(c.deadline_ms).await.unwrap();
    assert!(d.dispatch(package(1)).await.is_err(), "already queued");
    assert_eq!(held().await, (39, 39));
    // A version 1 schema (written before the counter existed, or by a build that did
    // not keep it): connecting migrates it to version 2 and counts the rows once.
    client
        .batch_execute(&format!(
            "UPDATE {schema}.loom_dispatch_held SET held = 77;
             DELETE FROM {schema}.loom_schema_version;
             INSERT INTO {schema}.loom_schema_version (version) VALUES (1);"
        ))
        .await
        .unwrap();
    let d = PgStore::connect(&url, &schema).await.unwrap().dispatcher();
    assert_eq!(held().await, (39, 39));
    let version: i32 = client
        .query_one(
            &format!("SELECT MAX(version) FROM {schema}.loom_schema_version"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(version, loom_stores::postgres::PG_SCHEMA_VERSION);
    // A full queue: the limit holds at the counter, and frees with the next complete.
    let full = DISPATCH_QUEUE_LEN_MAX as i64;
    client
        .execute(
            &format!("UPDATE {schema}.loom_dispatch_held SET held = held + $1 WHERE stripe = 0"),
            &[&(full - 1 - 39)],
        )
        .await
        .unwrap();
    d.dispatch(package(50)).await.unwrap();
    let refused = d.dispatch(package(51)).await.unwrap_err();
    assert_eq!(refused.kind.name(), "invalid-argument", "{refused:?}");
    let e = d.claim("t", "w", 0).await.unwrap().unwrap();
    d.complete(&e).await.unwrap();
    d.dispatch(package(51)).await.unwrap();
    assert_eq!(held().await.0, full);
    first.reset().await.unwrap();
    assert_eq!(
        held().await,
        (0, 0),
        "reset empties the counter with the queue"
    );
    PgStore::drop_schema(&url, &schema).await.unwrap();
}

/// A lease taken on one connection is lost to a claim on another once it expires, and
/// the first worker's complete is then refused (PLACE-04).
async fn place_04_pg_expired_lease_moves_to_another_connection() {
    use loom_kernel::spi::{ExecutionDispatcher, ExecutionPackage};
    let url = url();
    let schema = schema_for("place_04_pg_expiry");
    let a = PgStore::connect_fresh(&url, &schema)
        .await
        .unwrap()
        .with_lease_ms(1_000)
        .unwrap()
        .dispatcher();
    let b = PgStore::connect(&url, &schema).await.unwrap().dispatcher();
    a.register_target("cpu").await.unwrap();
    a.dispatch(ExecutionPackage {
        execution_id: "x".into(),
        flow_id: "f".into(),
        resume_hint: None,
        compute_target: None,
    })
    .await
    .unwrap();
    let first = a.claim("cpu", "a", 0).await.unwrap().unwrap();
    assert_eq!(first.deadline_ms, 1_000);
    assert!(b.claim("cpu", "b", 999).await.unwrap().is_none());
    let second = b.claim("cpu", "b", 1_000).await.unwrap().unwrap();
    assert!(second.lease_id > first.lease_id);
    assert_eq!(second.dispatch_id, first.dispatch_id);
    let err = a.complete(&first).await.unwrap_err();
    assert_eq!(err.kind.name(), "lease-lost");
    b.complete(&second).await.unwrap();
}

/// Plugin-tier state is shared by every connection on the schema: a cursor issued on
/// one is accepted on another, and a stale compare-and-set from a second connection is
/// a conflict (SPI-20).
async fn spi_20_pg_plugin_state_is_shared_across_connections() {
    use loom_kernel::spi::{DurableStateStore, QueryOptions, ReadModelStore};
    let url = url();
    let schema = schema_for("spi_20_pg_plugin_shared");
    let one = PgStore::connect_fresh(&url, &schema).await.unwrap();
    let two = PgStore::connect(&url, &schema).await.unwrap();
    for i in 0..5 {
        one.read_models()
            .upsert("c", &format!("d{i}"), serde_json::json!({ "i": i }))
            .await
            .unwrap();
    }
    let first = one
        .read_models()
        .query(
            "c",
            QueryOptions {
                limit: 3,
                cursor: None,
            },
        )
        .await
        .unwrap();
    let rest = two
        .read_models()
        .query(
            "c",
            QueryOptions {
                limit: 3,
                cursor: first.next_cursor.clone(),
            },
        )
        .await
        .unwrap();
    let ids: Vec<String> = first
        .docs
        .iter()
        .chain(&rest.docs)
        .map(|d| d.id.clone())
        .collect();
    assert_eq!(ids, ["d0", "d1", "d2", "d3", "d4"]);
    assert!(rest.next_cursor.is_none());

    let v1 = one
        .durable_state()
        .put("k", serde_json::json!(1), None)
        .await
        .unwrap();
    two.durable_state()
        .put("k", serde_json::json!(2), Some(v1))
        .await
        .unwrap();
    let err = one
        .durable_state()
        .put("k", serde_json::json!(3), Some(v1))
        .await
        .unwrap_err();
    assert_eq!(
        err.kind,
        StoreErrorKind::Conflict {
            expected_next: v1,
            actual_next: v1 + 1
        }
    );
}

fn block_on(test: impl std::future::Future<Output = ()>) {
    loom_conformance::block_on(test).expect("a tokio runtime");
}

/// A test that needs the database.
fn pg_test<F: std::future::Future<Output = ()> + 'static>(name: &str, body: fn() -> F) -> Trial {
    needs(Tool::Postgres, name, move |_url| block_on(body()))
}

fn main() -> std::process::ExitCode {
    let mut trials = vec![
        pg_test(
            "spi_08_pg_store_now_is_database_time",
            spi_08_pg_store_now_is_database_time,
        ),
        pg_test(
            "pg_jsonb_normalises_key_order_but_values_survive",
            pg_jsonb_normalises_key_order_but_values_survive,
        ),
        pg_test(
            "spi_23_pg_concurrent_appenders_across_connections",
            spi_23_pg_concurrent_appenders_across_connections,
        ),
        pg_test(
            "spi_09_pg_delete_through_races_appenders_across_connections",
            spi_09_pg_delete_through_races_appenders_across_connections,
        ),
        pg_test(
            "place_05_pg_zombie_on_another_connection_is_fenced",
            place_05_pg_zombie_on_another_connection_is_fenced,
        ),
        // Refused before connecting: needs no database.
        test("pg_schema_name_is_validated", || {
            block_on(pg_schema_name_is_validated())
        }),
        pg_test(
            "place_02_pg_fleet_claims_each_package_once_across_connections",
            place_02_pg_fleet_claims_each_package_once_across_connections,
        ),
        pg_test(
            "place_02_pg_queue_limit_counter_follows_the_queue",
            place_02_pg_queue_limit_counter_follows_the_queue,
        ),
        pg_test(
            "place_04_pg_expired_lease_moves_to_another_connection",
            place_04_pg_expired_lease_moves_to_another_connection,
        ),
        pg_test(
            "spi_20_pg_plugin_state_is_shared_across_connections",
            spi_20_pg_plugin_state_is_shared_across_connections,
        ),
    ];
    for kit in [
        events_kit::kit_trials,
        snapshots_kit::kit_trials,
        archive_kit::kit_trials,
        lifecycle_kit::kit_trials,
        branches_kit::kit_trials,
        dispatcher_kit::kit_trials,
        timers_kit::kit_trials,
        content_kit::kit_trials,
        durable_state_kit::kit_trials,
        read_models_kit::kit_trials,
    ] {
        trials.extend(kit());
    }
    run(trials)
}
