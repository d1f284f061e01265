//! Fold and parse throughput on a realistic log, and snapshot-restore cost by log length.
//!
//! `cargo bench -p loom-kernel --bench fold`. Figures are recorded in docs/performance.md;
//! nothing here asserts a time.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use loom_kernel::envelope::decode_log;
use loom_kernel::fold::{fold_owned, ExecutionState};
use loom_kernel::snapshot::{restore, SnapshotRecord};
use loom_kernel::EventEnvelope;
use std::hint::black_box;

#[path = "common/realistic.rs"]
mod realistic;
use realistic::{bounded_state_log, realistic_log, to_jsonl};

fn bench_parse_and_fold(c: &mut Criterion) {
    let n = 1_000_000;
    let text = to_jsonl(&realistic_log(n));
    let mut g = c.benchmark_group("log-1m");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("parse", |b| {
        b.iter(|| black_box(decode_log(black_box(&text)).unwrap().len()))
    });
    g.bench_function("parse+fold", |b| {
        b.iter(|| {
            let events = decode_log(black_box(&text)).unwrap();
            black_box(fold_owned(ExecutionState::new(), events).sequence)
        })
    });
    g.finish();
}

fn bench_restore(c: &mut Criterion) {
    let mut g = c.benchmark_group("restore");
    g.sample_size(10);
    for (shape, make) in [
        ("growing", realistic_log as fn(usize) -> Vec<EventEnvelope>),
        ("bounded", bounded_state_log),
    ] {
        for n in [1_000usize, 1_000_000] {
            let events = make(n);
            let k = n - 100;
            let state = fold_owned(ExecutionState::new(), events[..k].to_vec());
            let record = SnapshotRecord::capture(&state, events[k - 1].sequence);
            let tail = events[k..].to_vec();
            g.bench_function(format!("{shape}-state/snapshot+100-tail/{n}"), |b| {
                b.iter_batched(
                    || record.clone(),
                    |r| black_box(restore(&r, &tail).unwrap().sequence),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_parse_and_fold, bench_restore);
criterion_main!(benches);
