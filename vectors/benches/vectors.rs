//! Timing of the whole vector set: in-process against the reference kernel (target
//! under 1 s) and through the stdio kernel protocol against the reference adapter
//! (target under 5 s), which is started once before the timed runs; and the
//! differential campaign (`loom vectors fuzz`): a fixed number of cases, every check,
//! seed 0, against the faithful reference in-process and through the protocol.
//! `cargo bench -p loom-vectors`.
//!
//! Every timed run must pass every vector: a run that errors (an adapter that stopped,
//! a call that faults) ends fast and would otherwise time as a very quick pass.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use loom_process::{Blame, ShutdownReport};
use loom_report::{CaseResult, Status};
use loom_vectors::runner::{run_set, CallError, InProcessKernel, KernelClient};
use loom_vectors::set::{default_cases_dir, load_set};
use loom_vectors::{KernelProcess, KernelProcessConfig, Vector};
use serde_json::Value;

/// A started adapter lent to one timed run: `run_set` ends its client when the set is
/// done, which must not end the adapter the next run uses (every call of a stopped
/// adapter faults at once, and the bench would time nothing).
struct Borrowed<'a>(&'a mut KernelProcess);

impl KernelClient for Borrowed<'_> {
    fn hello(&mut self) -> Result<Value, CallError> {
        self.0.hello()
    }
    fn call(&mut self, method: &str, params: &Value) -> Result<Value, CallError> {
        self.0.call(method, params)
    }
    fn call_raw(&mut self, method: &str, raw_params: &str) -> Result<Value, CallError> {
        self.0.call_raw(method, raw_params)
    }
    fn begin_case(&mut self, tag: &str) {
        self.0.begin_case(tag)
    }
    fn take_blames(&mut self) -> Vec<Blame> {
        self.0.take_blames()
    }
    fn shutdown(&mut self) -> ShutdownReport {
        ShutdownReport {
            blames: self.0.take_blames(),
            problems: Vec::new(),
        }
    }
}

/// Runs the whole set and fails loudly unless every vector passed.
fn run_all(client: &mut dyn KernelClient, vectors: &[Vector], what: &str) -> usize {
    let (_, results) = run_set(client, vectors, &mut |_| {}).expect("the set runs");
    let bad: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.status != Status::Pass)
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: {} of {} results did not pass, the first: {} {:?}: {:?}",
        bad.len(),
        results.len(),
        bad[0].case_id,
        bad[0].status,
        bad[0].message
    );
    // Every vector, plus the adapter's hello check.
    assert_eq!(results.len(), vectors.len() + 1, "{what}");
    results.len()
}

fn whole_set(c: &mut Criterion) {
    let vectors = load_set(&default_cases_dir()).expect("set loads").vectors;
    let mut group = c.benchmark_group("vector-set");
    group.sample_size(10);
    group.bench_function("in-process", |b| {
        b.iter(|| run_all(&mut InProcessKernel::default(), &vectors, "in-process"))
    });
    // The adapter is the server `loom kernel-adapter` runs (`serve_reference_kernel`),
    // built as this crate's `reference-kernel-adapter` binary. It starts once, outside
    // the timed loop: the figure is the protocol's cost, not a process start.
    let mut adapter = KernelProcess::start(KernelProcessConfig::new(env!(
        "CARGO_BIN_EXE_reference-kernel-adapter"
    )))
    .expect("adapter starts");
    group.bench_function("stdio-protocol", |b| {
        b.iter(|| run_all(&mut Borrowed(&mut adapter), &vectors, "stdio-protocol"))
    });
    let ended = adapter.shutdown();
    assert!(ended.problems.is_empty(), "{:?}", ended.problems);
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
        cases_per_check: None,
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
