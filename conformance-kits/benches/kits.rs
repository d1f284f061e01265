//! The whole kit run per store: in-memory, SQLite in-process, and SQLite through the
//! stdio protocol (the Python example adapter). The figures go to docs/performance.md.
//!
//! `whole-kit-run` covers the kernel-tier kits (protocol 1.0), unchanged so its figures
//! stay comparable; `protocol-1.1-kits` covers the kits protocol 1.1 added (dispatcher,
//! timer store, the plugin tier), in-process on SQLite and through the adapter.
//!
//! After criterion's wall-clock figures the bench prints the CPU time of one run of each
//! SQLite variant, this process and the adapter process together (`cpu …` lines). On a
//! machine other work loads, a round trip through a pipe waits for the other process to
//! be scheduled, so wall time overstates the protocol's cost; CPU time does not count
//! those waits.

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

/// The kernel-tier kits (event, snapshot, archive, lifecycle, branch registry) against
/// SQLite in-process, a fresh in-memory database per case; every case must pass.
fn sqlite_kernel_tier() {
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
}

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

/// CPU seconds (user + system) of process `pid`, from `/proc/PID/stat`.
fn cpu_of(pid: &str) -> f64 {
    // USER_HZ, the unit of utime and stime, is 100 on every Linux architecture.
    const TICKS_PER_S: f64 = 100.0;
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // The fields after the command name, which may hold spaces, start at the state (3):
    // utime is field 14 and stime field 15.
    let rest: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, r)| r)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        rest.get(i)
            .and_then(|t| t.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / TICKS_PER_S
}

/// This process and every live descendant (the adapter behind its shell), by
/// `/proc/PID/task/*/children`.
fn process_tree(pid: String, out: &mut Vec<String>) {
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace() {
                process_tree(child.to_string(), out);
            }
        }
    }
    out.push(pid);
}

/// CPU seconds of (this process, its descendants).
fn cpu_now() -> (f64, f64) {
    let mut tree = Vec::new();
    process_tree(std::process::id().to_string(), &mut tree);
    let own = tree.pop().map_or(0.0, |p| cpu_of(&p));
    (own, tree.iter().map(|p| cpu_of(p)).sum())
}

/// CPU seconds (this process, its descendants) of one call of `f`, the least of three.
fn cpu_of_run(f: &dyn Fn()) -> (f64, f64) {
    (0..3)
        .map(|_| {
            let (a, b) = cpu_now();
            f();
            let (c, d) = cpu_now();
            (c - a, d - b)
        })
        .min_by(|x, y| (x.0 + x.1).total_cmp(&(y.0 + y.1)))
        .unwrap_or_default()
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
    g.bench_function("sqlite-in-process", |b| b.iter(sqlite_kernel_tier));
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

    let sqlite_1_0 = sqlite_kernel_tier;
    let sqlite_1_1 = || {
        let db = || SqliteStore::open_in_memory().expect("sqlite");
        let mut failed = kit::<_, DispatcherKit>(&|| db().dispatcher(), &NoHooks);
        failed += kit::<_, TimerStoreKit>(&|| db().timers(), &NoHooks);
        failed += kit::<_, ContentStoreKit>(&|| db().content(), &NoHooks);
        failed += kit::<_, DurableStateStoreKit>(&|| db().durable_state(), &NoHooks);
        failed += kit::<_, ReadModelStoreKit>(&|| db().read_models(), &NoHooks);
        assert_eq!(failed, 0);
    };
    let store = spawn();
    let stdio_1_0 = || {
        let hooks = StdioHooks(&store);
        let mut failed = kit::<_, EventStoreKit>(&|| store.clone(), &hooks);
        failed += kit::<_, SnapshotStoreKit>(&|| store.clone(), &hooks);
        failed += kit::<_, ArchiveStoreKit>(&|| store.clone(), &hooks);
        failed += kit::<_, LifecycleKit>(&|| (store.clone(), store.clone(), store.clone()), &hooks);
        failed += kit::<_, BranchRegistryKit>(&|| store.clone(), &hooks);
        assert_eq!(failed, 0);
    };
    let stdio_1_1 = || {
        let hooks = StdioHooks(&store);
        let mut failed = kit::<_, DispatcherKit>(&|| store.clone(), &hooks);
        failed += kit::<_, TimerStoreKit>(&|| store.clone(), &hooks);
        failed += kit::<_, ContentStoreKit>(&|| store.clone(), &hooks);
        failed += kit::<_, DurableStateStoreKit>(&|| store.clone(), &hooks);
        failed += kit::<_, ReadModelStoreKit>(&|| store.clone(), &hooks);
        assert_eq!(failed, 0);
    };
    let mut totals = (0.0, 0.0);
    for (group, in_process, stdio) in [
        (
            "whole-kit-run",
            &sqlite_1_0 as &dyn Fn(),
            &stdio_1_0 as &dyn Fn(),
        ),
        ("protocol-1.1-kits", &sqlite_1_1, &stdio_1_1),
    ] {
        let (a, _) = cpu_of_run(in_process);
        let (own, adapter) = cpu_of_run(stdio);
        assert!(
            adapter > 0.0,
            "no CPU time found for the adapter process (is /proc/PID/task/*/children there?)"
        );
        totals = (totals.0 + a, totals.1 + own + adapter);
        println!(
            "cpu {group}: in-process {a:.2} s; stdio {:.2} s (loom side {own:.2} s + adapter {adapter:.2} s); stdio / in-process {:.2}",
            own + adapter,
            (own + adapter) / a
        );
    }
    println!(
        "cpu whole suite: in-process {:.2} s; stdio {:.2} s; stdio / in-process {:.2}",
        totals.0,
        totals.1,
        totals.1 / totals.0
    );
}

criterion_group!(kits, benches);
criterion_main!(kits);
