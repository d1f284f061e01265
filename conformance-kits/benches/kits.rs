//! The whole kit run per store: in-memory, SQLite in-process, and SQLite through the
//! stdio protocol (the Python example adapter). The figures go to docs/performance.md.
//!
//! `whole-kit-run` covers the kernel-tier kits (protocol 1.0), unchanged so its figures
//! stay comparable; `protocol-1.1-kits` covers the kits protocol 1.1 added (dispatcher,
//! timer store, the plugin tier), in-process on SQLite and through the adapter.

use criterion::{criterion_group, criterion_main, Criterion};
use loom_conformance::kits::archive_store::ArchiveStoreKit;
use loom_conformance::kits::branch_registry::BranchRegistryKit;
use loom_conformance::kits::content_store::ContentStoreKit;
use loom_conformance::kits::dispatcher::DispatcherKit;
use loom_conformance::kits::durable_state_store::DurableStateStoreKit;
use loom_conformance::kits::event_store::EventStoreKit;
use loom_conformance::kits::lifecycle::LifecycleKit;
use loom_conformance::kits::read_model_store::ReadModelStoreKit;
use loom_conformance::kits::snapshot_store::SnapshotStoreKit;
use loom_conformance::kits::timer_store::TimerStoreKit;
use loom_conformance::stdio::{StdioHooks, StdioStore};
use loom_conformance::{run_kit, CaseHooks, Kit, NoHooks, RunOptions};
use loom_stores::memory::*;
use loom_stores::SqliteStore;

fn kit<S, K: Kit<S>>(make: &dyn Fn() -> S, hooks: &dyn CaseHooks) -> usize {
    loom_conformance::block_on(run_kit::<S, K, _, _>(
        |_, _| std::future::ready(Ok(make())),
        &RunOptions::default(),
        hooks,
        &mut |_| {},
    ))
    .expect("runtime")
    .iter()
    .filter(|r| r.status.is_failure())
    .count()
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("whole-kit-run");
    g.sample_size(10);
    g.bench_function("memory", |b| {
        b.iter(|| {
            let mut failed = kit::<_, EventStoreKit>(&MemoryEventStore::new, &NoHooks);
            failed += kit::<_, SnapshotStoreKit>(&MemorySnapshotStore::new, &NoHooks);
            failed += kit::<_, ArchiveStoreKit>(&MemoryArchiveStore::new, &NoHooks);
            failed += kit::<_, LifecycleKit>(
                &|| {
                    (
                        MemoryEventStore::new(),
                        MemorySnapshotStore::new(),
                        MemoryArchiveStore::new(),
                    )
                },
                &NoHooks,
            );
            failed += kit::<_, BranchRegistryKit>(&MemoryBranchRegistry::new, &NoHooks);
            assert_eq!(failed, 0);
        })
    });
    g.bench_function("sqlite-in-process", |b| {
        b.iter(|| {
            let db = || SqliteStore::open_in_memory().expect("sqlite");
            let mut failed = kit::<_, EventStoreKit>(&|| db().events(), &NoHooks);
            failed += kit::<_, SnapshotStoreKit>(&|| db().snapshots(), &NoHooks);
            failed += kit::<_, ArchiveStoreKit>(&|| db().archive(), &NoHooks);
            failed += kit::<_, LifecycleKit>(
                &|| {
                    let d = db();
                    (d.events(), d.snapshots(), d.archive())
                },
                &NoHooks,
            );
            failed += kit::<_, BranchRegistryKit>(&|| db().branches(), &NoHooks);
            assert_eq!(failed, 0);
        })
    });
    let adapter = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/python-sqlite-store/adapter.py"
    );
    // A missing python3 is a failed run, not a silently shorter one.
    let spawn = || {
        StdioStore::spawn(&format!("python3 {adapter}")).unwrap_or_else(|e| {
            panic!("the Python adapter cannot run (is python3 installed?): {e}")
        })
    };
    {
        let store = spawn();
        g.bench_function("sqlite-python-stdio", |b| {
            b.iter(|| {
                let hooks = StdioHooks(&store);
                let mut failed = kit::<_, EventStoreKit>(&|| store.clone(), &hooks);
                failed += kit::<_, SnapshotStoreKit>(&|| store.clone(), &hooks);
                failed += kit::<_, ArchiveStoreKit>(&|| store.clone(), &hooks);
                failed += kit::<_, LifecycleKit>(
                    &|| (store.clone(), store.clone(), store.clone()),
                    &hooks,
                );
                failed += kit::<_, BranchRegistryKit>(&|| store.clone(), &hooks);
                assert_eq!(failed, 0);
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("protocol-1.1-kits");
    g.sample_size(10);
    g.bench_function("sqlite-in-process", |b| {
        b.iter(|| {
            let db = || SqliteStore::open_in_memory().expect("sqlite");
            let mut failed = kit::<_, DispatcherKit>(&|| db().dispatcher(), &NoHooks);
            failed += kit::<_, TimerStoreKit>(&|| db().timers(), &NoHooks);
            failed += kit::<_, ContentStoreKit>(&|| db().content(), &NoHooks);
            failed += kit::<_, DurableStateStoreKit>(&|| db().durable_state(), &NoHooks);
            failed += kit::<_, ReadModelStoreKit>(&|| db().read_models(), &NoHooks);
            assert_eq!(failed, 0);
        })
    });
    {
        let store = spawn();
        g.bench_function("sqlite-python-stdio", |b| {
            b.iter(|| {
                let hooks = StdioHooks(&store);
                let mut failed = kit::<_, DispatcherKit>(&|| store.clone(), &hooks);
                failed += kit::<_, TimerStoreKit>(&|| store.clone(), &hooks);
                failed += kit::<_, ContentStoreKit>(&|| store.clone(), &hooks);
                failed += kit::<_, DurableStateStoreKit>(&|| store.clone(), &hooks);
                failed += kit::<_, ReadModelStoreKit>(&|| store.clone(), &hooks);
                assert_eq!(failed, 0);
            })
        });
    }
    g.finish();
}

criterion_group!(kits, benches);
criterion_main!(kits);
