//! Timing of the whole vector set: in-process against the reference kernel (target
//! under 1 s) and through the stdio kernel protocol against the reference adapter
//! (target under 5 s), which is started once before the timed runs; and the
//! differential campaign (`loom vectors fuzz`): a fixed number of cases, every check,
//! seed 0, against the faithful reference in-process and through the protocol.
//! `cargo bench -p loom-vectors`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
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

/// Cases per campaign iteration: cases per second is this divided by the median time.
const FUZZ_CASES: u64 = 1_000;

fn fuzz_campaign(c: &mut Criterion) {
    use loom_vectors::fuzz::{run_campaign, Check, FuzzConfig};
    let config = FuzzConfig {
        seed: 0,
        cases: Some(FUZZ_CASES),
        time_ms: None,
        checks: Check::ALL.to_vec(),
        ..FuzzConfig::default()
    };
    let mut group = c.benchmark_group("fuzz-1000-cases");
    group.sample_size(10);
    // criterion's throughput line is then cases per second.
    group.throughput(Throughput::Elements(FUZZ_CASES));
    group.bench_function("in-process", |b| {
        b.iter(|| {
            let mut k = InProcessKernel::default();
            let r = run_campaign(&mut k, &config, &mut |_| {});
            assert!(r.findings.is_empty());
            r.cases
        })
    });
    group.bench_function("stdio-protocol", |b| {
        b.iter(|| {
            let mut p = KernelProcess::start(KernelProcessConfig::new(env!(
                "CARGO_BIN_EXE_reference-kernel-adapter"
            )))
            .expect("adapter starts");
            let r = run_campaign(&mut p, &config, &mut |_| {});
            assert!(r.findings.is_empty());
            r.cases
        })
    });
    group.finish();
}

criterion_group!(benches, whole_set, fuzz_campaign);
criterion_main!(benches);
