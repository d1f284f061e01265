//! Helpers for the runtime tests: an in-memory runtime, a blocking driver and log
//! inspection. Included with `#[path = "common/runtime.rs"] mod rt;`.
#![allow(dead_code)]

use std::sync::Arc;

use loom_kernel::fold::{fold, ExecutionState};
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{block_on, RunOutcome, Runtime, RuntimeConfig, RuntimeError};
use loom_kernel::spi::{EventStore, ManualClock};
use loom_kernel::EventEnvelope;
use loom_stores::{MemoryEventStore, MemoryTimerStore};
use serde_json::{json, Value};

pub type Rt = Runtime<MemoryEventStore, Arc<ManualClock>>;
pub type TimedRt = Runtime<MemoryEventStore, Arc<ManualClock>, MemoryTimerStore>;

pub const T0: i64 = 1_000_000;

/// A runtime over a fresh in-memory store with the given flows registered.
pub fn rt_with(config: RuntimeConfig, flows: &[Value]) -> Rt {
    let mut rt = Runtime::new(
        Arc::new(MemoryEventStore::new()),
        Arc::new(ManualClock::new(T0)),
        config,
    );
    for f in flows {
        rt.register_flow_json(f)
            .unwrap_or_else(|e| panic!("flow does not parse: {e}"));
    }
    rt
}

pub fn rt(flows: &[Value]) -> Rt {
    rt_with(RuntimeConfig::default(), flows)
}

/// A runtime with a TimerStore wired, sharing `clock`.
pub fn timed_rt(clock: Arc<ManualClock>, flows: &[Value]) -> TimedRt {
    let mut rt = Runtime::new(
        Arc::new(MemoryEventStore::new()),
        clock,
        RuntimeConfig::default(),
    )
    .with_timers(Arc::new(MemoryTimerStore::new()));
    for f in flows {
        rt.register_flow_json(f).unwrap();
    }
    rt
}

/// A flow `{flowId, body}`.
pub fn flow(id: &str, body: Value) -> Value {
    json!({"flowId": id, "body": body})
}

pub fn start<S: EventStore, C: loom_kernel::spi::Clock, T: loom_kernel::spi::TimerStore>(
    rt: &Runtime<S, C, T>,
    id: &str,
    flow: &str,
) -> RunOutcome {
    block_on(rt.start(id, flow, json!({"n": 1}))).expect("start")
}

pub fn resume<S: EventStore, C: loom_kernel::spi::Clock, T: loom_kernel::spi::TimerStore>(
    rt: &Runtime<S, C, T>,
    id: &str,
    gate: &str,
    payload: Value,
) -> Result<RunOutcome, RuntimeError> {
    block_on(rt.resume(id, ResumeRequest::new(gate, payload)))
}

pub fn recover<S: EventStore, C: loom_kernel::spi::Clock, T: loom_kernel::spi::TimerStore>(
    rt: &Runtime<S, C, T>,
    id: &str,
) -> Result<RunOutcome, RuntimeError> {
    block_on(rt.recover(id))
}

pub fn log<S: EventStore, C: loom_kernel::spi::Clock, T: loom_kernel::spi::TimerStore>(
    rt: &Runtime<S, C, T>,
    id: &str,
) -> Vec<EventEnvelope> {
    block_on(rt.store().read(id)).expect("read")
}

pub fn log_bytes<S: EventStore, C: loom_kernel::spi::Clock, T: loom_kernel::spi::TimerStore>(
    rt: &Runtime<S, C, T>,
    id: &str,
) -> String {
    serde_json::to_string(&log(rt, id)).unwrap()
}

pub fn state<S: EventStore, C: loom_kernel::spi::Clock, T: loom_kernel::spi::TimerStore>(
    rt: &Runtime<S, C, T>,
    id: &str,
) -> ExecutionState {
    fold(&log(rt, id))
}

pub fn types(log: &[EventEnvelope]) -> Vec<String> {
    log.iter().map(|e| e.event_type.clone()).collect()
}

pub fn count(log: &[EventEnvelope], event_type: &str) -> usize {
    log.iter().filter(|e| e.event_type == event_type).count()
}

/// Envelopes of an application event type.
pub fn of_type<'a>(log: &'a [EventEnvelope], event_type: &str) -> Vec<&'a EventEnvelope> {
    log.iter().filter(|e| e.event_type == event_type).collect()
}

pub fn stamped(e: &EventEnvelope) -> bool {
    e.flow_emit().is_some()
}

pub fn parked(gate: &str) -> RunOutcome {
    RunOutcome::Parked { gate: gate.into() }
}

pub fn completed(output: Value) -> RunOutcome {
    RunOutcome::Completed { output }
}

pub fn run_step(id: &str) -> Value {
    json!({"op": "run", "stepId": id})
}

pub fn suspend(on: &str) -> Value {
    json!({"op": "suspend", "on": on})
}

pub fn emit(t: &str, payload: Value) -> Value {
    json!({"op": "emit", "eventType": t, "payload": payload})
}

/// Writes a hand-made log (a legacy or crafted fixture) for execution `id`.
pub fn seed<S: EventStore, C: loom_kernel::spi::Clock, T: loom_kernel::spi::TimerStore>(
    rt: &Runtime<S, C, T>,
    id: &str,
    flow: &str,
    events: Vec<(&str, Value, Option<Value>)>,
) {
    let envs: Vec<EventEnvelope> = events
        .into_iter()
        .enumerate()
        .map(|(i, (t, p, m))| EventEnvelope {
            id: format!("{id}:{i}"),
            workflow_id: flow.into(),
            execution_id: id.into(),
            event_type: t.into(),
            sequence: i as u64,
            timestamp_ms: 0,
            payload: p.into(),
            metadata: m.map(|m| serde_json::from_value(m).unwrap()),
        })
        .collect();
    block_on(rt.store().append(id, 0, envs, None)).unwrap();
}

/// Emits of `event_type` and whether each is stamped.
pub fn emits(log: &[EventEnvelope], event_type: &str) -> Vec<bool> {
    of_type(log, event_type).into_iter().map(stamped).collect()
}
