//! The runtime every simulated host runs: the reference runtime over a store client,
//! with every scenario's flow, the counting effect and the ledger's tap, which writes
//! each real effect invocation to the ledger and checks REPLAY-01 and TYPED-09 at the
//! call.

use std::sync::{Arc, Mutex};

use loom_kernel::runtime::{
    block_on, CrashPoint, Effect, EffectCall, EffectMiddleware, EffectOutcome, EffectResult,
    Runtime, RuntimeConfig, SnapshotPolicy,
};
use loom_kernel::spi::Clock;
use loom_kernel::FoldVersion;
use serde_json::{json, Value};

use crate::clock::{SimClock, EPOCH_MS, STORE_TIME};
use crate::store_client::StoreClient;
use crate::workload::{sim_features, CountingEffect, Scenario, SNAPSHOT_EVERY_EVENTS, TOOL};
use crate::world::{LedgerEntry, Violation, World};

/// The effect-call crash point a worker arms for its next effect call (consumed by it).
pub type CrashArm = Arc<Mutex<Option<CrashPoint>>>;

/// The effect ledger's tap: a middleware around every real effect attempt (the `work`
/// tool and every scripted one) that writes the invocation to the ledger and checks, at
/// the moment of the call, that the log the run started from did not already settle
/// the step: a `STEP_COMPLETED` (REPLAY-01) or a typed `STEP_FAILED`, which must be
/// substituted with zero calls (TYPED-09). Untyped failures and unsettled attempts are
/// re-invoked legitimately (REPLAY-09), so they are not checked here.
pub struct LedgerTap {
    world: Arc<World>,
    client: Arc<StoreClient>,
    crash: CrashArm,
}

impl LedgerTap {
    /// A tap for a runtime over `client` (whose reads say what each run started from).
    pub fn new(world: Arc<World>, client: Arc<StoreClient>) -> LedgerTap {
        LedgerTap::armed(world, client, CrashArm::default())
    }

    /// A tap that also crashes the run at the effect-call point armed in `crash`
    /// (consumed by the next call of any tool).
    pub fn armed(world: Arc<World>, client: Arc<StoreClient>, crash: CrashArm) -> LedgerTap {
        LedgerTap {
            world,
            client,
            crash,
        }
    }

    /// Runs one attempt through `effect` and records it.
    pub fn invoke(&self, effect: &dyn Effect, call: &EffectCall<'_>) -> EffectResult {
        self.around(call, &mut |c| effect.call(c))
    }
}

fn outcome_kind(o: &EffectOutcome) -> (&'static str, Value) {
    match o {
        EffectOutcome::Value(v) => ("value", v.clone()),
        EffectOutcome::Typed { channel, payload } => {
            ("typed", json!({ "channel": channel, "payload": payload }))
        }
        EffectOutcome::Error(e) => ("error", json!(e)),
        EffectOutcome::Timeout => ("timeout", Value::Null),
        EffectOutcome::InDoubt => ("indoubt", Value::Null),
        EffectOutcome::Cancelled => ("cancelled", Value::Null),
    }
}

impl EffectMiddleware for LedgerTap {
    fn around(
        &self,
        call: &EffectCall<'_>,
        next: &mut dyn FnMut(&EffectCall<'_>) -> EffectResult,
    ) -> EffectResult {
        let crash = self.crash.lock().unwrap_or_else(|p| p.into_inner()).take();
        if crash == Some(CrashPoint::BeforeEffect) {
            // The worker dies before the effect runs: nothing was invoked, nothing is
            // written to the ledger.
            return EffectResult {
                crash,
                ..EffectResult::of(EffectOutcome::Value(Value::Null))
            };
        }
        let mut result = next(call);
        if crash.is_some() {
            // The two points after the invocation: the run stops there.
            result.crash = crash;
        }
        let (outcome, output) = outcome_kind(&result.outcome);
        self.world.book().ledger.push(LedgerEntry {
            execution_id: call.execution_id.to_owned(),
            step_id: call.step_id.to_owned(),
            tool_id: call.tool_id.to_owned(),
            attempt: call.attempt,
            input: call.input.clone(),
            outcome,
            output,
            t_ms: STORE_TIME.now_ms() - EPOCH_MS,
        });
        // The authoritative store is read directly; it never waits, so block_on
        // returns at once.
        let started_from = self.client.read_len(call.execution_id).unwrap_or(0);
        let log = block_on(self.world.events().read(call.execution_id)).unwrap_or_default();
        let settled = log.iter().find(|e| {
            e.sequence < started_from
                && e.payload.get("stepId").and_then(Value::as_str) == Some(call.step_id)
                && (e.event_type == "STEP_COMPLETED"
                    || (e.event_type == "STEP_FAILED" && e.payload.get("channel").is_some()))
        });
        if let Some(done) = settled {
            let (rule, what) = if done.event_type == "STEP_COMPLETED" {
                ("REPLAY-01", "STEP_COMPLETED")
            } else {
                ("TYPED-09", "a typed STEP_FAILED")
            };
            self.world.violate(Violation {
                rule: rule.into(),
                message: format!(
                    "step `{}` ran again (attempt {}) although {what} was at sequence {} of the log the run started from",
                    call.step_id, call.attempt, done.sequence
                ),
                execution_id: Some(call.execution_id.to_owned()),
                event_index: Some(done.sequence),
            });
        }
        result
    }
}

/// A runtime over a fresh client, with every scenario's flow, the `work` effect and the
/// ledger tap, reading the host clock `clock` (store time plus the host's offset).
pub fn runtime(
    world: &Arc<World>,
    scenarios: &[Scenario],
    client: Arc<StoreClient>,
    clock: SimClock,
) -> Runtime<StoreClient, SimClock, StoreClient> {
    runtime_armed(
        world,
        scenarios,
        client,
        clock,
        CrashArm::default(),
        FoldVersion::CURRENT,
    )
}

/// [`runtime`] whose counting effect crashes at the point armed in `crash`, folding as
/// a node of schema `fold` (a mixed fleet).
pub fn runtime_armed(
    world: &Arc<World>,
    scenarios: &[Scenario],
    client: Arc<StoreClient>,
    clock: SimClock,
    crash: CrashArm,
    fold: FoldVersion,
) -> Runtime<StoreClient, SimClock, StoreClient> {
    let config = RuntimeConfig {
        fencing: true,
        features: sim_features(),
        ..RuntimeConfig::default()
    };
    let mut rt = Runtime::new(client.clone(), clock, config)
        .with_timers(client.clone())
        .with_snapshots(client.clone(), SnapshotPolicy::every(SNAPSHOT_EVERY_EVENTS))
        .folding_at(fold);
    for s in scenarios {
        // A flow that does not parse shows as UnknownFlow when it runs.
        if let Some(script) = &s.script {
            rt.register_flow_shared(script.clone());
        }
    }
    rt.register_effect(TOOL, CountingEffect);
    rt.add_middleware(LedgerTap::armed(world.clone(), client, crash));
    rt
}
