//! Timing of the whole vector set: in-process against the reference kernel (target
//! under 1 s) and through the stdio kernel protocol against the reference adapter
//! (target under 5 s), which is started once before the timed runs.
//! `cargo bench -p loom-vectors`.

use criterion::{criterion_group, criterion_main, Criterion};
use loom_vectors::runner::{run_set, InProcessKernel};
use loom_vectors::set::{default_cases_dir, load_set};
use loom_vectors::{KernelProcess, KernelProcessConfig};

fn whole_set(c: &mut Criterion) {
    let vectors = load_set(&default_cases_dir()).expect("set loads").vectors;
    let mut group = c.benchmark_group("vector-set");
    group.sample_size(10);
    group.bench_function("in-process", |b| {
        b.iter(|| {
            let mut k = InProcessKernel::default();
            run_set(&mut k, &vectors, &mut |_| {}).expect("runs")
        })
    });
    // The adapter is the server `loom kernel-adapter` runs (`serve_reference_kernel`),
    // built as this crate's `reference-kernel-adapter` binary. It starts once, outside
    // the timed loop: the figure is the protocol's cost, not a process start.
    let mut adapter = KernelProcess::start(KernelProcessConfig::new(env!(
        "CARGO_BIN_EXE_reference-kernel-adapter"
    )))
    .expect("adapter starts");
    group.bench_function("stdio-protocol", |b| {
        b.iter(|| run_set(&mut adapter, &vectors, &mut |_| {}).expect("runs"))
    });
    group.bench_function("load-and-parse", |b| {
        b.iter(|| load_set(&default_cases_dir()).expect("set loads"))
    });
    group.finish();
}

criterion_group!(benches, whole_set);
criterion_main!(benches);
