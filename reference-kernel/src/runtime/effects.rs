//! The effect boundary: effects resolved by tool id, their middleware, deciders and the
//! budget negotiator.
//!
//! Effects are synchronous on purpose: the outcome of a call is known when it returns,
//! and how long it stays in flight is a separate, scripted number of scheduler ticks.
//! That keeps every interleaving deterministic (EMIT-11) while still letting a flow emit
//! while an effect is executing (EMIT-08 (b)).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::script::{CrashPoint, EmitSpec, Outcome, ScriptedEffectSpec};

/// What an effect is called with.
#[derive(Debug, Clone, Copy)]
pub struct EffectCall<'a> {
    /// The execution.
    pub execution_id: &'a str,
    /// The step whose effect this is.
    pub step_id: &'a str,
    /// The tool id the step resolved through.
    pub tool_id: &'a str,
    /// The attempt, from 1.
    pub attempt: u64,
    /// The step input.
    pub input: &'a Value,
    /// `EffectContext.resources`: the folded `_resources` accumulator (RES-02), `{}`
    /// when nothing was metered.
    pub resources: &'a Value,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum EffectOutcome {
    /// Success.
    Value(Value),
    /// `fail(channel, payload)`: a `TypedFailure` (TYPED-02).
    Typed {
        /// Channel.
        channel: String,
        /// Payload as thrown.
        payload: Value,
    },
    /// An untyped failure.
    Error(String),
    /// The effect did not settle in time.
    Timeout,
    /// The outcome is unknown (K9.3).
    InDoubt,
    /// The step was cancelled.
    Cancelled,
}

/// What an effect call returns: the outcome plus what it did through its context.
#[derive(Debug, Clone, PartialEq)]
pub struct EffectResult {
    /// The outcome.
    pub outcome: EffectOutcome,
    /// `EffectContext.emit` calls, in order (never stamped, EMIT-14).
    pub emits: Vec<EmitSpec>,
    /// Measured resources (`RESOURCE_METERED`); only measured dimensions (RES-04).
    pub meter: Option<Map<String, Value>>,
    /// Scheduler ticks the call stays in flight before it settles.
    pub ticks: u32,
    /// A scripted worker crash.
    pub crash: Option<CrashPoint>,
}

impl EffectResult {
    /// A plain outcome with nothing else.
    pub fn of(outcome: EffectOutcome) -> EffectResult {
        EffectResult {
            outcome,
            emits: Vec::new(),
            meter: None,
            ticks: 0,
            crash: None,
        }
    }
}

/// An effect resolved by tool id.
pub trait Effect: Send + Sync {
    /// The effect's declared `errors` map: the fallback when the step declares none
    /// (TYPED-03, TYPED-04).
    fn declared_errors(&self) -> Option<BTreeMap<String, Value>> {
        None
    }
    /// Runs the effect once.
    fn call(&self, call: &EffectCall<'_>) -> EffectResult;
}

/// Middleware around every effect attempt. `next` runs the rest of the chain.
pub trait EffectMiddleware: Send + Sync {
    /// Wraps one attempt.
    fn around(
        &self,
        call: &EffectCall<'_>,
        next: &mut dyn FnMut(&EffectCall<'_>) -> EffectResult,
    ) -> EffectResult;
}

/// A registered decider (P9: its choice is recorded and served from the log).
pub trait Decider: Send + Sync {
    /// Makes the choice; `Err` is a throwing decider.
    fn decide(&self, id: &str) -> Result<Value, String>;
}

/// Resolves `negotiateBudget(dimension, request)` to a grant (RES-06). Advisory only.
pub trait Negotiator: Send + Sync {
    /// The granted amount.
    fn negotiate(&self, dimension: &str, request: f64) -> f64;
}

impl<F: Fn(&EffectCall<'_>) -> EffectResult + Send + Sync> Effect for F {
    fn call(&self, call: &EffectCall<'_>) -> EffectResult {
        self(call)
    }
}

impl<F: Fn(&str) -> Result<Value, String> + Send + Sync> Decider for F {
    fn decide(&self, id: &str) -> Result<Value, String> {
        self(id)
    }
}

/// An effect with a declared `errors` map around another effect.
pub struct WithErrors<E> {
    /// The declared map.
    pub errors: BTreeMap<String, Value>,
    /// The effect.
    pub effect: E,
}

impl<E: Effect> Effect for WithErrors<E> {
    fn declared_errors(&self) -> Option<BTreeMap<String, Value>> {
        Some(self.errors.clone())
    }
    fn call(&self, call: &EffectCall<'_>) -> EffectResult {
        self.effect.call(call)
    }
}

/// An effect played from a script's `effects` entry: the outcome of attempt `n` is
/// `outcomes[n - 1]`, the last one repeating; no outcomes echoes the input.
#[derive(Debug, Clone)]
pub struct ScriptedEffect {
    spec: ScriptedEffectSpec,
}

impl ScriptedEffect {
    /// Wraps a parsed spec.
    pub fn new(spec: ScriptedEffectSpec) -> ScriptedEffect {
        ScriptedEffect { spec }
    }
}

/// Turns a scripted outcome into the effect's result for `input`.
pub fn play_outcome(o: &Outcome, input: &Value) -> EffectResult {
    let outcome = if let Some(v) = &o.value {
        EffectOutcome::Value(v.clone())
    } else if let Some(t) = &o.typed {
        EffectOutcome::Typed {
            channel: t.channel.clone(),
            payload: t.payload.clone(),
        }
    } else if let Some(e) = &o.error {
        EffectOutcome::Error(e.clone())
    } else if o.hang {
        EffectOutcome::Timeout
    } else if o.indoubt {
        EffectOutcome::InDoubt
    } else if o.cancelled {
        EffectOutcome::Cancelled
    } else {
        EffectOutcome::Value(input.clone())
    };
    EffectResult {
        outcome,
        emits: o.emit.clone(),
        meter: o.meter.clone(),
        ticks: o.ticks,
        crash: o.crash,
    }
}

impl Effect for ScriptedEffect {
    fn declared_errors(&self) -> Option<BTreeMap<String, Value>> {
        self.spec.errors.clone()
    }
    fn call(&self, call: &EffectCall<'_>) -> EffectResult {
        let n = self.spec.outcomes.len();
        if n == 0 {
            return EffectResult::of(EffectOutcome::Value(call.input.clone()));
        }
        let index = usize::try_from(call.attempt.saturating_sub(1))
            .unwrap_or(usize::MAX)
            .min(n - 1);
        play_outcome(&self.spec.outcomes[index], call.input)
    }
}

/// The effect of a tool id nothing declares: it echoes its input.
pub struct EchoEffect;

impl Effect for EchoEffect {
    fn call(&self, call: &EffectCall<'_>) -> EffectResult {
        EffectResult::of(EffectOutcome::Value(call.input.clone()))
    }
}

/// The default negotiator: grants what was asked.
pub struct GrantAll;

impl Negotiator for GrantAll {
    fn negotiate(&self, _dimension: &str, request: f64) -> f64 {
        request
    }
}
