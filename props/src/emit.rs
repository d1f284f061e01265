//! The emit-identity property: a random flow script re-run after random crash points
//! (EMIT-01, EMIT-05, EMIT-06, EMIT-08, EMIT-12).

use crate::limits::{CRASHES_MAX, CRASH_AFTER_APPENDS_MAX, DRIVE_STEPS_MAX, FLOW_OPS_MAX};
use crate::violation::PropertyViolation;
use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use loom_kernel::digest::emit_digest;
use loom_kernel::fold::ExecutionState;
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{block_on, FaultPlan, RunOutcome, Runtime, RuntimeConfig};
use loom_kernel::spi::{EventStore, ManualClock};
use loom_kernel::{canonical_string, EventEnvelope};
use loom_stores::MemoryEventStore;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One statement of a generated flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
pub enum FlowOp {
    /// A step whose effect echoes its input.
    Run,
    /// A step that fails on a declared channel, caught (a served outcome).
    Typed,
    /// A step that fails untyped, caught by `*` (blocks stamping, EMIT-08 (c)).
    Untyped,
    /// `emit`, `stream` or `ui` (kind % 3) of payload `payload % 3`: repeats are likely.
    Emit {
        /// Which syscall.
        kind: u8,
        /// Which payload.
        payload: u8,
    },
    /// A decision.
    Decide,
    /// A gate.
    Suspend,
}

/// A flow and the crash points injected into successive runs.
#[derive(Debug, Clone, PartialEq)]
pub struct EmitInput {
    /// The flow body.
    pub ops: Vec<FlowOp>,
    /// Crash after this many appends, one per run, in order.
    pub crashes: Vec<u64>,
}

impl<'a> Arbitrary<'a> for EmitInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let n = u.int_in_range(1..=FLOW_OPS_MAX)?;
        let mut ops = Vec::with_capacity(n);
        for _ in 0..n {
            ops.push(u.arbitrary()?);
        }
        let c = u.int_in_range(1..=CRASHES_MAX)?;
        let mut crashes = Vec::with_capacity(c);
        for _ in 0..c {
            crashes.push(u.int_in_range(1..=CRASH_AFTER_APPENDS_MAX)?);
        }
        Ok(EmitInput { ops, crashes })
    }
}

/// The flow script for `ops`.
pub fn script(ops: &[FlowOp]) -> Value {
    let body: Vec<Value> = ops
        .iter()
        .enumerate()
        .map(|(i, o)| match o {
            FlowOp::Run => json!({"op": "run", "stepId": format!("s{i}"), "input": i}),
            FlowOp::Typed => json!({"op": "run", "stepId": format!("t{i}"), "toolId": "typed", "catch": {"c": []}}),
            FlowOp::Untyped => json!({"op": "run", "stepId": format!("u{i}"), "toolId": "bad", "catch": {"*": []}}),
            FlowOp::Emit { kind, payload } => {
                let op = ["emit", "stream", "ui"][usize::from(*kind % 3)];
                json!({"op": op, "eventType": "X", "payload": {"p": payload % 3}})
            }
            FlowOp::Decide => json!({"op": "decide", "id": format!("d{i}"), "choice": i}),
            FlowOp::Suspend => json!({"op": "suspend", "on": format!("g{i}")}),
        })
        .collect();
    json!({
        "flowId": "f",
        "effects": {
            "typed": {"errors": {"c": {}}, "outcomes": [{"typed": {"channel": "c", "payload": 1}}]},
            "bad": {"outcomes": [{"error": "nope"}]}
        },
        "body": body
    })
}

type Rt = Runtime<MemoryEventStore, Arc<ManualClock>>;

fn runtime(flow: &Value) -> Result<Rt, PropertyViolation> {
    let mut rt = Runtime::new(
        Arc::new(MemoryEventStore::new()),
        Arc::new(ManualClock::new(1_000_000)),
        RuntimeConfig::default(),
    );
    rt.register_flow_json(flow).map_err(|e| {
        PropertyViolation::new(
            "EMIT-01",
            None,
            "generated flow does not parse",
            "a flow",
            e.to_string(),
        )
    })?;
    Ok(rt)
}

/// Drives an execution to its end: resumes every park with the gate's name, recovers
/// every crash, injecting the next planned crash before each re-run.
fn drive(rt: &Rt, crashes: &[u64]) -> Result<Vec<EventEnvelope>, String> {
    let mut plan = crashes.iter();
    if let Some(c) = plan.next() {
        rt.inject_fault(FaultPlan {
            crash_after_appends: *c,
        });
    }
    let mut out = block_on(rt.start("e", "f", json!({"n": 1}))).map_err(|e| e.to_string())?;
    for _ in 0..DRIVE_STEPS_MAX {
        let next = match &out {
            RunOutcome::Crashed { .. } | RunOutcome::Parked { .. } => {
                if let Some(c) = plan.next() {
                    rt.inject_fault(FaultPlan {
                        crash_after_appends: *c,
                    });
                }
                let log = block_on(rt.store().read("e")).map_err(|e| e.to_string())?;
                let s = loom_kernel::fold(&log);
                match s.parked_gate() {
                    Some(g) => block_on(rt.resume("e", ResumeRequest::new(g, json!(g)))),
                    None if s.status.is_terminal() => break,
                    None => block_on(rt.recover("e")),
                }
                .map_err(|e| e.to_string())?
            }
            _ => break,
        };
        out = next;
    }
    block_on(rt.store().read("e")).map_err(|e| e.to_string())
}

fn key(e: &EventEnvelope) -> String {
    format!("{} {}", e.event_type, canonical_string(&e.payload))
}

fn is_emit(e: &EventEnvelope) -> bool {
    e.event_type == "X"
}

/// Re-running a random flow after random crash points never loses an emit of the
/// uninterrupted run (EMIT-01, EMIT-12), never appends more stamped copies of a digest
/// than the uninterrupted run stamps (EMIT-06, EMIT-08), stamps every copy with the
/// digest of its segment, type and payload (EMIT-05), and ends in the same state.
pub fn emit_identity(input: &EmitInput) -> Result<(), PropertyViolation> {
    let flow = script(&input.ops);
    let ctx = || {
        format!(
            "flow {} crashes {:?}",
            canonical_string(&flow["body"]),
            input.crashes
        )
    };
    let clean_rt = runtime(&flow)?;
    let clean = drive(&clean_rt, &[])
        .map_err(|e| PropertyViolation::new("EMIT-01", None, ctx(), "the clean run ends", e))?;
    let rt = runtime(&flow)?;
    let crashed = drive(&rt, &input.crashes)
        .map_err(|e| PropertyViolation::new("EMIT-01", None, ctx(), "the crashed run ends", e))?;

    let count = |log: &[EventEnvelope]| {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for e in log.iter().filter(|e| is_emit(e)) {
            *m.entry(key(e)).or_default() += 1;
        }
        m
    };
    let (clean_n, crashed_n) = (count(&clean), count(&crashed));
    for (k, n) in &clean_n {
        let got = crashed_n.get(k).copied().unwrap_or(0);
        if got < *n {
            return Err(PropertyViolation::new(
                "EMIT-01",
                None,
                format!("emit {k} lost after crashes: {}", ctx()),
                format!("at least {n} copies"),
                format!("{got} copies"),
            ));
        }
    }
    let stamps = |log: &[EventEnvelope]| {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for e in log {
            if let Some(d) = e.flow_emit() {
                *m.entry(d.to_owned()).or_default() += 1;
            }
        }
        m
    };
    let (clean_s, crashed_s) = (stamps(&clean), stamps(&crashed));
    for (d, n) in &crashed_s {
        let allowed = clean_s.get(d).copied().unwrap_or(0);
        if *n > allowed {
            let at = crashed
                .iter()
                .rposition(|e| e.flow_emit() == Some(d.as_str()));
            return Err(PropertyViolation::new(
                "EMIT-06",
                at,
                format!("stamped emit {d} duplicated by a re-run: {}", ctx()),
                format!("at most {allowed} stamped copies"),
                format!("{n} stamped copies"),
            ));
        }
    }
    // EMIT-05: the stamp is the digest of (segment, type, payload).
    let mut state = ExecutionState::new();
    for (i, e) in crashed.iter().enumerate() {
        if let Some(d) = e.flow_emit() {
            let segment = state.resume_payloads().len() as u64;
            let want = emit_digest(segment, &e.event_type, &e.payload);
            if want != d {
                return Err(PropertyViolation::new(
                    "EMIT-05",
                    Some(i),
                    format!("stamp of {} in segment {segment}: {}", key(e), ctx()),
                    want,
                    d.to_owned(),
                ));
            }
        }
        state = loom_kernel::fold_owned(state, [e.clone()]);
    }
    let end = |log: &[EventEnvelope]| {
        let s = loom_kernel::fold(log);
        let outputs: BTreeMap<String, String> = s
            .frames
            .iter()
            .map(|(k, f)| (k.clone(), format!("{:?} {:?}", f.status, f.output)))
            .collect();
        format!(
            "{} {:?} {:?}",
            s.status.as_str(),
            outputs,
            s.resume_payloads()
        )
    };
    crate::violation::check_eq(
        "REPLAY-01",
        None,
        || format!("end state after crashes: {}", ctx()),
        &end(&clean),
        &end(&crashed),
    )
}
