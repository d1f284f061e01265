//! Exploration throughput (`loom conform --explore`): operations per second of the
//! campaign against SQLite in-process (a fresh in-memory database per case) and
//! against the Python example adapter through the stdio store protocol (one process,
//! started outside the timed loop, `reset` per case, as `loom conform --store cmd:…`
//! does). Every run is the same `EXPLORE_CASES` cases from `EXPLORE_SEED`, so the
//! operation count is fixed and criterion's throughput line is operations per second.
//! The faithful stores must show no divergence. Figures: docs/performance.md.
//!
//! `cargo bench -p loom-props --features explore --bench explore`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use loom_props::explore::stores::{sqlite_stores, stdio_stores};
use loom_props::explore::{explore, ExploreOptions, ExploreOutcome, FnFactory};
use loom_store_client::StdioStore;
use loom_stores::SqliteStore;

/// Cases per timed run.
const EXPLORE_CASES: u64 = 100;
/// The campaign seed of every run.
const EXPLORE_SEED: u64 = 1;

fn options() -> ExploreOptions {
    ExploreOptions {
        cases: Some(EXPLORE_CASES),
        time: None,
        seed: EXPLORE_SEED,
    }
}

fn sqlite_run() -> ExploreOutcome {
    let factory = FnFactory(|| async {
        SqliteStore::open_in_memory()
            .map(|db| sqlite_stores(&db))
            .map_err(|e| e.to_string())
    });
    explore(&factory, "sqlite", &options())
}

fn stdio_run(adapter: &StdioStore) -> ExploreOutcome {
    let factory = FnFactory(|| {
        let adapter = adapter.clone();
        async move {
            adapter.reset(&format!(
                "bench.{}.",
                loom_conformance::runner::fresh_run_id()
            ))?;
            Ok(stdio_stores(&adapter))
        }
    });
    explore(&factory, "cmd:python-sqlite-store", &options())
}

fn faithful(o: &ExploreOutcome, what: &str) -> u64 {
    assert!(
        o.divergence.is_none() && o.error.is_none(),
        "{what}: the faithful store diverged: {:?} {:?}",
        o.divergence,
        o.error
    );
    assert_eq!(o.cases, EXPLORE_CASES, "{what}");
    o.ops
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("explore-100-cases");
    g.sample_size(10);
    let ops = faithful(&sqlite_run(), "sqlite");
    g.throughput(Throughput::Elements(ops));
    g.bench_function("sqlite-in-process", |b| {
        b.iter(|| faithful(&sqlite_run(), "sqlite"))
    });
    // What the SQLite figure is made of: the campaign opens a fresh in-memory database
    // (schema included) for every case, as `loom conform --store sqlite --explore` does.
    g.throughput(Throughput::Elements(EXPLORE_CASES));
    g.bench_function("sqlite-open-a-database-per-case", |b| {
        b.iter(|| {
            for _ in 0..EXPLORE_CASES {
                let db = SqliteStore::open_in_memory().expect("opens");
                std::hint::black_box(sqlite_stores(&db));
            }
        })
    });
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/python-sqlite-store/adapter.py"
    );
    let adapter = StdioStore::spawn(&format!("python3 {script}"))
        .expect("python3 and the example adapter start");
    let ops = faithful(&stdio_run(&adapter), "python");
    g.throughput(Throughput::Elements(ops));
    g.bench_function("python-adapter", |b| {
        b.iter(|| faithful(&stdio_run(&adapter), "python"))
    });
    g.finish();
}

criterion_group!(explore_benches, benches);
criterion_main!(explore_benches);
