//! Replaying a 10,000-step execution fully served from its log vs running it live with
//! no-op effects. `cargo bench -p loom-kernel --bench runtime`; figures in
//! docs/performance.md.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{block_on, Runtime, RuntimeConfig};
use loom_kernel::spi::ManualClock;
use loom_stores::MemoryEventStore;
use serde_json::{json, Value};
use std::sync::Arc;

const STEPS: usize = 10_000;

fn flow() -> Value {
    let mut body: Vec<Value> = (0..STEPS)
        .map(|i| json!({"op": "run", "stepId": format!("s{i}"), "toolId": "noop"}))
        .collect();
    body.push(json!({"op": "suspend", "on": "go"}));
    json!({"flowId": "f", "body": body})
}

type Rt = Runtime<MemoryEventStore, Arc<ManualClock>>;

fn runtime() -> Rt {
    let mut rt = Runtime::new(
        Arc::new(MemoryEventStore::new()),
        Arc::new(ManualClock::new(1)),
        RuntimeConfig::default(),
    );
    rt.register_flow_json(&flow()).unwrap();
    rt
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("runtime-10k-steps");
    g.sample_size(10);
    g.bench_function("live", |b| {
        b.iter_batched(
            runtime,
            |rt| block_on(rt.start("e", "f", json!({}))).unwrap(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("replay-served", |b| {
        b.iter_batched(
            || {
                let rt = runtime();
                block_on(rt.start("e", "f", json!({}))).unwrap();
                rt
            },
            |rt| block_on(rt.resume("e", ResumeRequest::new("go", json!(null)))).unwrap(),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
