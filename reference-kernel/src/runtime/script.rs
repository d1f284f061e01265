//! Flow scripts: a flow written as data (DESIGN.md §4).
//!
//! A flow script is a JSON program over the syscalls that the reference runtime
//! interprets. It exists so the runtime's rules (served-from-log replay, emit stamping,
//! typed failures, gates, decisions, timers, parallel, in-doubt effects) can be tested
//! language-neutrally: vectors, the simulator and the fuzzers all write flow scripts.
//! The format is documented in `docs/flow-scripts.md` and pinned by
//! `docs/schemas/flow-script.schema.json`.
//!
//! Parsing is strict: every object is decoded with `deny_unknown_fields`, every
//! statement list is walked by hand so that an error names its JSON path
//! (`$.body[2].catch.declined[0].stepId`), and a Wave 2 syscall is refused unless its
//! `kernel.features` flag is on (ABI-03, ABI-04). Parsing never panics.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::limits::{
    SCRIPT_BRANCHES_MAX, SCRIPT_DEPTH_MAX, SCRIPT_OUTCOMES_MAX, SCRIPT_STATEMENTS_MAX,
};
use crate::versions::KernelFeatures;

/// A malformed flow script: where (a JSON path from `$`) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// JSON path of the offending value, e.g. `$.body[3].stepId`.
    pub path: String,
    /// What is wrong, in words.
    pub message: String,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for ScriptError {}

fn err(path: &str, message: impl Into<String>) -> ScriptError {
    ScriptError {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// A parsed flow script.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowScript {
    /// The flow's id (`workflowId` of its executions).
    pub flow_id: String,
    /// The code pin recorded as `EXECUTION_STARTED.codeHash` when present (FOLD-33).
    pub code_fingerprint: Option<String>,
    /// A pinned compute target; must be a registered dispatcher target (PLACE-07).
    pub compute_target: Option<String>,
    /// `resumeSchemas`: gate → schema (ADR 0077, INGRESS-22).
    pub resume_schemas: Option<BTreeMap<String, Value>>,
    /// Scripted effects by tool id.
    pub effects: BTreeMap<String, ScriptedEffectSpec>,
    /// The flow body.
    pub body: Vec<Stmt>,
    /// The script exactly as given; `flowHash` is computed over its canonical JSON.
    pub source: Value,
}

/// A scripted effect: its declared error channels and its outcome per attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedEffectSpec {
    /// The effect's declared `errors` map (the registry fallback, TYPED-04).
    pub errors: Option<BTreeMap<String, Value>>,
    /// Outcome of attempt 1, 2, …; the last one repeats. Empty = echo the input.
    pub outcomes: Vec<Outcome>,
}

/// One scripted effect outcome.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Outcome {
    /// Success with this value.
    #[serde(default, deserialize_with = "present")]
    pub value: Option<Value>,
    /// Success echoing the step input.
    #[serde(default)]
    pub echo: bool,
    /// A `TypedFailure` on a channel.
    #[serde(default)]
    pub typed: Option<TypedOutcome>,
    /// An untyped failure with this message.
    #[serde(default)]
    pub error: Option<String>,
    /// The effect never settles: the runtime records a timeout.
    #[serde(default)]
    pub hang: bool,
    /// The outcome is unknown: `EFFECT_INDOUBT` and an in-doubt park.
    #[serde(default)]
    pub indoubt: bool,
    /// The step is cancelled (`STEP_CANCELLED`).
    #[serde(default)]
    pub cancelled: bool,
    /// A worker crash at this point of the call.
    #[serde(default)]
    pub crash: Option<CrashPoint>,
    /// How many scheduler ticks the effect stays in flight before it settles.
    #[serde(default)]
    pub ticks: u32,
    /// `EffectContext.emit` calls made during the effect.
    #[serde(default)]
    pub emit: Vec<EmitSpec>,
    /// Resources the effect measured (`RESOURCE_METERED`).
    #[serde(default)]
    pub meter: Option<Map<String, Value>>,
}

/// A typed failure outcome.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypedOutcome {
    /// The channel.
    pub channel: String,
    /// The payload as thrown (validated and parsed before it is recorded).
    #[serde(default)]
    pub payload: Value,
}

/// Where a worker crashes during an effect call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrashPoint {
    /// After `STEP_STARTED`, before the effect is invoked.
    BeforeEffect,
    /// After the effect returned, before its outcome is appended.
    AfterEffectBeforeAppend,
    /// After the outcome is appended.
    AfterAppend,
}

impl CrashPoint {
    /// The point's name as scripts write it.
    pub fn as_str(self) -> &'static str {
        match self {
            CrashPoint::BeforeEffect => "before-effect",
            CrashPoint::AfterEffectBeforeAppend => "after-effect-before-append",
            CrashPoint::AfterAppend => "after-append",
        }
    }
}

/// An emit made by an effect or a flow.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EmitSpec {
    /// The event type.
    pub event_type: String,
    /// The payload (may hold references when emitted by the flow).
    #[serde(default)]
    pub payload: Value,
    /// Caller metadata (kernel-read keys are refused, INGRESS-39).
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// A retry policy (the retry middleware, TYPED-13/14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RetryPolicy {
    /// Total attempts, the first included (at least 1).
    pub max_attempts: u32,
    /// An explicit `isRetryable` that also retries typed failures. The default
    /// excludes them (TYPED-13).
    #[serde(default)]
    pub retry_typed: bool,
}

/// Which syscall a step statement was written with (REPLAY-03: same semantics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepSyscall {
    /// `ctx.run`.
    Run,
    /// `ctx.execute`.
    Execute,
}

/// A step (`run` / `execute`).
#[derive(Debug, Clone, PartialEq)]
pub struct StepStmt {
    /// Which syscall.
    pub syscall: StepSyscall,
    /// The step id (the frame key).
    pub step_id: String,
    /// The effect's tool id (defaults to the step id).
    pub tool_id: String,
    /// Task kind (`step`, `llm`, `tool`, `human`, …).
    pub kind: Option<String>,
    /// The gate a `human` step parks on (defaults to the step id).
    pub gate: Option<String>,
    /// The step input (may hold references).
    pub input: Value,
    /// The step's `errors` map; when present it replaces the effect's wholesale (GAP-22).
    pub errors: Option<BTreeMap<String, Value>>,
    /// Handlers by channel; `*` catches every failure without its own handler.
    pub catch: BTreeMap<String, Vec<Stmt>>,
    /// The retry policy.
    pub retry: Option<RetryPolicy>,
}

/// How a decision is made when it is not in the log.
#[derive(Debug, Clone, PartialEq)]
pub enum DeciderSpec {
    /// The scripted decider returns this choice.
    Choice(Value),
    /// The scripted decider throws.
    Throw(String),
    /// A decider registered with the runtime under this name.
    Named(String),
}

/// A reference to an earlier result, as `if` and `{"$ref": …}` read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ref {
    /// The root: `input`, `steps.<id>.<field>`, `decisions.<id>`, `vars.<name>`, `resume.<n>`.
    pub root: RefRoot,
    /// A JSON pointer into the value ("" for the whole value).
    pub pointer: String,
}

/// What a [`Ref`] starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefRoot {
    /// The execution input (`_input`).
    Input,
    /// A field of a step frame: `output`, `error`, `errorChannel`, `errorPayload`, `status`.
    Step(String, String),
    /// A recorded decision's choice.
    Decision(String),
    /// A value bound by `bind` in this run.
    Var(String),
    /// An entry of `_resumePayloads`.
    Resume(usize),
}

/// One statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `run` / `execute`.
    Step(Box<StepStmt>),
    /// `decide`.
    Decide {
        /// Decision id.
        id: String,
        /// The decider.
        decider: DeciderSpec,
        /// Scheduler ticks the decider stays in flight.
        ticks: u32,
        /// Handler for a throwing decider.
        catch: Option<Vec<Stmt>>,
    },
    /// `negotiateBudget` (a helper over `decide`, RES-06).
    NegotiateBudget {
        /// Decision id the grant is recorded under.
        id: String,
        /// The dimension.
        dimension: String,
        /// The requested amount.
        request: f64,
    },
    /// `parallel` with a fail-fast join.
    Parallel(Vec<Vec<Stmt>>),
    /// `suspend`.
    Suspend {
        /// The gate.
        on: String,
        /// Timeout in ms; with a TimerStore wired, `wakeAt = now + timeout` (REPLAY-12).
        timeout: Option<i64>,
        /// An explicit wake time.
        wake_at: Option<i64>,
        /// Optional metadata for external dispatchers (REPLAY-13).
        correlation_key: Option<String>,
        /// Caller condition; a `stepId` in it is stripped (INGRESS-35).
        condition: Option<Map<String, Value>>,
        /// Bind the answer to `vars.<name>`.
        bind: Option<String>,
    },
    /// `sleep` (a timed suspend).
    Sleep {
        /// Gate name.
        on: String,
        /// Duration in ms.
        ms: i64,
        /// Bind the wake to `vars.<name>`.
        bind: Option<String>,
    },
    /// `sleepUntil`.
    SleepUntil {
        /// Gate name.
        on: String,
        /// Wake time, epoch ms.
        at: i64,
        /// Bind.
        bind: Option<String>,
    },
    /// `emit`, `stream` or `ui`.
    Emit {
        /// Which syscall (`emit`, `stream`, `ui`).
        syscall: &'static str,
        /// The event.
        spec: EmitSpec,
        /// The payload has no JSON form (EMIT-13).
        opaque: bool,
    },
    /// `if`: equality on a reference.
    If {
        /// What to read.
        cond: Ref,
        /// The value to compare with.
        equals: Value,
        /// Taken when equal.
        then: Vec<Stmt>,
        /// Taken otherwise.
        otherwise: Vec<Stmt>,
    },
    /// `set`: bind a value (references resolved) to `vars.<name>`.
    Set {
        /// Variable name.
        name: String,
        /// Value.
        value: Value,
    },
    /// `complete`.
    Complete(Value),
    /// `fail`.
    Fail(String),
    /// `continueAsNew` (feature `continueAsNew`).
    ContinueAsNew(Value),
    /// `receive` (feature `receive`).
    Receive {
        /// Topic.
        topic: String,
        /// Wait id.
        wait_id: String,
        /// Bind.
        bind: Option<String>,
    },
    /// `select` (feature `select`).
    Select {
        /// `(waitId, topic)` pairs.
        waits: Vec<(String, String)>,
        /// Bind.
        bind: Option<String>,
    },
}

/// The statement kinds and the syscall each one uses (`None` for control flow).
pub const STATEMENT_OPS: [(&str, Option<&str>); 20] = [
    ("run", Some("run")),
    ("execute", Some("execute")),
    ("decide", Some("decide")),
    ("negotiateBudget", Some("decide")),
    ("parallel", Some("parallel")),
    ("suspend", Some("suspend")),
    ("sleep", Some("sleep")),
    ("sleepUntil", Some("sleepUntil")),
    ("emit", Some("emit")),
    ("stream", Some("stream")),
    ("ui", Some("ui")),
    ("continueAsNew", Some("continueAsNew")),
    ("receive", Some("receive")),
    ("select", Some("select")),
    ("if", None),
    ("set", None),
    ("complete", None),
    ("fail", None),
    ("block", None),
    ("noop", None),
];

impl FlowScript {
    /// Parses a script from JSON text.
    pub fn parse_str(text: &str, features: &KernelFeatures) -> Result<FlowScript, ScriptError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| err("$", format!("not JSON: {e}")))?;
        FlowScript::parse(&value, features)
    }

    /// Parses a script from a JSON value. Wave 2 statements are refused unless their
    /// feature flag is on.
    pub fn parse(value: &Value, features: &KernelFeatures) -> Result<FlowScript, ScriptError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        struct Top {
            flow_id: String,
            #[serde(default)]
            code_fingerprint: Option<String>,
            #[serde(default)]
            compute_target: Option<String>,
            #[serde(default)]
            resume_schemas: Option<BTreeMap<String, Value>>,
            #[serde(default)]
            effects: BTreeMap<String, Value>,
            body: Vec<Value>,
            #[serde(default, rename = "$schema")]
            _schema: Option<String>,
            #[serde(default)]
            description: Option<String>,
        }
        let top: Top = decode(value, "$")?;
        let _ = top.description;
        if top.flow_id.is_empty() {
            return Err(err("$.flowId", "must be a non-empty string"));
        }
        if let Some(schemas) = &top.resume_schemas {
            for (gate, schema) in schemas {
                crate::schema::check_schema(schema)
                    .map_err(|e| err(&format!("$.resumeSchemas.{gate}"), e.to_string()))?;
            }
        }
        let mut effects = BTreeMap::new();
        for (tool, spec) in &top.effects {
            let path = format!("$.effects.{tool}");
            effects.insert(tool.clone(), parse_effect(spec, &path)?);
        }
        let mut count = 0usize;
        let mut cx = ParseCx {
            features,
            count: &mut count,
        };
        let body = parse_block(&top.body, "$.body", 0, &mut cx)?;
        Ok(FlowScript {
            flow_id: top.flow_id,
            code_fingerprint: top.code_fingerprint,
            compute_target: top.compute_target,
            resume_schemas: top.resume_schemas,
            effects,
            body,
            source: value.clone(),
        })
    }
}

struct ParseCx<'a> {
    features: &'a KernelFeatures,
    count: &'a mut usize,
}

/// Decodes `value` into `T`, naming `path` in the error.
fn decode<T: DeserializeOwned>(value: &Value, path: &str) -> Result<T, ScriptError> {
    T::deserialize(value).map_err(|e| err(path, e.to_string()))
}

fn parse_effect(spec: &Value, path: &str) -> Result<ScriptedEffectSpec, ScriptError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw {
        #[serde(default)]
        errors: Option<BTreeMap<String, Value>>,
        #[serde(default)]
        outcomes: Vec<Value>,
    }
    let raw: Raw = decode(spec, path)?;
    if raw.outcomes.len() > SCRIPT_OUTCOMES_MAX {
        return Err(err(
            &format!("{path}.outcomes"),
            format!("at most {SCRIPT_OUTCOMES_MAX} outcomes"),
        ));
    }
    check_errors_map(raw.errors.as_ref(), &format!("{path}.errors"))?;
    let mut outcomes = Vec::new();
    for (i, o) in raw.outcomes.iter().enumerate() {
        outcomes.push(parse_outcome(o, &format!("{path}.outcomes[{i}]"))?);
    }
    Ok(ScriptedEffectSpec {
        errors: raw.errors,
        outcomes,
    })
}

fn check_errors_map(
    errors: Option<&BTreeMap<String, Value>>,
    path: &str,
) -> Result<(), ScriptError> {
    for (channel, schema) in errors.into_iter().flatten() {
        crate::schema::check_schema(schema)
            .map_err(|e| err(&format!("{path}.{channel}"), e.to_string()))?;
    }
    Ok(())
}

/// Parses one effect outcome, checking that exactly one result is given.
pub fn parse_outcome(value: &Value, path: &str) -> Result<Outcome, ScriptError> {
    let o: Outcome = decode(value, path)?;
    let results = usize::from(o.value.is_some())
        + usize::from(o.echo)
        + usize::from(o.typed.is_some())
        + usize::from(o.error.is_some())
        + usize::from(o.hang)
        + usize::from(o.indoubt)
        + usize::from(o.cancelled);
    let crash_first = o.crash == Some(CrashPoint::BeforeEffect);
    if results > 1 || (results == 0 && !crash_first && o.crash.is_some()) {
        return Err(err(
            path,
            "give exactly one of value, echo, typed, error, hang, indoubt, cancelled (a crash \"before-effect\" needs none)",
        ));
    }
    Ok(o)
}

fn parse_block(
    items: &[Value],
    path: &str,
    depth: usize,
    cx: &mut ParseCx<'_>,
) -> Result<Vec<Stmt>, ScriptError> {
    if depth > SCRIPT_DEPTH_MAX {
        return Err(err(
            path,
            format!("statements nest deeper than {SCRIPT_DEPTH_MAX}"),
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        *cx.count += 1;
        if *cx.count > SCRIPT_STATEMENTS_MAX {
            return Err(err(
                path,
                format!("a script holds at most {SCRIPT_STATEMENTS_MAX} statements"),
            ));
        }
        out.push(parse_stmt(item, &format!("{path}[{i}]"), depth, cx)?);
    }
    Ok(out)
}

fn parse_list(
    value: &Value,
    path: &str,
    depth: usize,
    cx: &mut ParseCx<'_>,
) -> Result<Vec<Stmt>, ScriptError> {
    match value {
        Value::Array(items) => parse_block(items, path, depth + 1, cx),
        _ => Err(err(path, "expected an array of statements")),
    }
}

fn parse_stmt(
    value: &Value,
    path: &str,
    depth: usize,
    cx: &mut ParseCx<'_>,
) -> Result<Stmt, ScriptError> {
    let Value::Object(obj) = value else {
        return Err(err(path, "a statement must be an object with an `op`"));
    };
    let op = match obj.get("op") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(err(&format!("{path}.op"), "must be a string")),
        None => return Err(err(path, "missing `op`")),
    };
    let mut rest = obj.clone();
    rest.remove("op");
    let rest = Value::Object(rest);
    let Some((_, syscall)) = STATEMENT_OPS.iter().find(|(name, _)| *name == op) else {
        let known: Vec<&str> = STATEMENT_OPS.iter().map(|(n, _)| *n).collect();
        return Err(err(
            &format!("{path}.op"),
            format!("unknown op `{op}` (known: {})", known.join(", ")),
        ));
    };
    if let Some(sys) = syscall {
        let available = crate::versions::effective_syscalls(cx.features);
        if !available.contains(sys) {
            return Err(err(
                &format!("{path}.op"),
                format!("syscall `{sys}` is not available: enable kernel.features.{sys} (ABI-03, ABI-04)"),
            ));
        }
    }
    match op.as_str() {
        "run" | "execute" => parse_step(
            &rest,
            path,
            depth,
            cx,
            if op == "run" {
                StepSyscall::Run
            } else {
                StepSyscall::Execute
            },
        ),
        "decide" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                id: String,
                #[serde(default, deserialize_with = "present")]
                choice: Option<Value>,
                #[serde(default)]
                throw: Option<String>,
                #[serde(default)]
                decider: Option<String>,
                #[serde(default)]
                ticks: u32,
                #[serde(default)]
                catch: Option<Value>,
            }
            let raw: Raw = decode(&rest, path)?;
            nonempty(&raw.id, &format!("{path}.id"))?;
            let decider = match (raw.choice, raw.throw, raw.decider) {
                (Some(c), None, None) => DeciderSpec::Choice(c),
                (None, Some(t), None) => DeciderSpec::Throw(t),
                (None, None, Some(d)) => DeciderSpec::Named(d),
                _ => {
                    return Err(err(
                        path,
                        "give exactly one of `choice`, `throw`, `decider`",
                    ))
                }
            };
            let catch = match &raw.catch {
                Some(v) => Some(parse_list(v, &format!("{path}.catch"), depth, cx)?),
                None => None,
            };
            Ok(Stmt::Decide {
                id: raw.id,
                decider,
                ticks: raw.ticks,
                catch,
            })
        }
        "negotiateBudget" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                id: String,
                dimension: String,
                request: f64,
            }
            let raw: Raw = decode(&rest, path)?;
            nonempty(&raw.id, &format!("{path}.id"))?;
            if !(raw.request.is_finite() && raw.request >= 0.0) {
                return Err(err(
                    &format!("{path}.request"),
                    "must be a finite, non-negative number",
                ));
            }
            Ok(Stmt::NegotiateBudget {
                id: raw.id,
                dimension: raw.dimension,
                request: raw.request,
            })
        }
        "parallel" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                branches: Vec<Value>,
            }
            let raw: Raw = decode(&rest, path)?;
            if raw.branches.is_empty() || raw.branches.len() > SCRIPT_BRANCHES_MAX {
                return Err(err(
                    &format!("{path}.branches"),
                    format!("give 1 to {SCRIPT_BRANCHES_MAX} branches"),
                ));
            }
            let mut branches = Vec::new();
            for (i, b) in raw.branches.iter().enumerate() {
                branches.push(parse_list(b, &format!("{path}.branches[{i}]"), depth, cx)?);
            }
            Ok(Stmt::Parallel(branches))
        }
        "suspend" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields, rename_all = "camelCase")]
            struct Raw {
                on: String,
                #[serde(default)]
                timeout: Option<i64>,
                #[serde(default)]
                wake_at: Option<i64>,
                #[serde(default)]
                correlation_key: Option<String>,
                #[serde(default)]
                condition: Option<Map<String, Value>>,
                #[serde(default)]
                bind: Option<String>,
            }
            let raw: Raw = decode(&rest, path)?;
            nonempty(&raw.on, &format!("{path}.on"))?;
            if raw.timeout.is_some_and(|t| t < 0) {
                return Err(err(
                    &format!("{path}.timeout"),
                    "must be non-negative milliseconds",
                ));
            }
            Ok(Stmt::Suspend {
                on: raw.on,
                timeout: raw.timeout,
                wake_at: raw.wake_at,
                correlation_key: raw.correlation_key,
                condition: raw.condition,
                bind: raw.bind,
            })
        }
        "sleep" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                ms: i64,
                #[serde(default)]
                on: Option<String>,
                #[serde(default)]
                bind: Option<String>,
            }
            let raw: Raw = decode(&rest, path)?;
            if raw.ms < 0 {
                return Err(err(&format!("{path}.ms"), "must be non-negative"));
            }
            Ok(Stmt::Sleep {
                on: raw.on.unwrap_or_else(|| "sleep".into()),
                ms: raw.ms,
                bind: raw.bind,
            })
        }
        "sleepUntil" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                at: i64,
                #[serde(default)]
                on: Option<String>,
                #[serde(default)]
                bind: Option<String>,
            }
            let raw: Raw = decode(&rest, path)?;
            Ok(Stmt::SleepUntil {
                on: raw.on.unwrap_or_else(|| "sleep".into()),
                at: raw.at,
                bind: raw.bind,
            })
        }
        "emit" | "stream" | "ui" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields, rename_all = "camelCase")]
            struct Raw {
                event_type: String,
                #[serde(default)]
                payload: Value,
                #[serde(default)]
                metadata: Option<Map<String, Value>>,
                #[serde(default)]
                opaque: bool,
            }
            let raw: Raw = decode(&rest, path)?;
            nonempty(&raw.event_type, &format!("{path}.eventType"))?;
            check_refs(&raw.payload, &format!("{path}.payload"))?;
            let syscall = match op.as_str() {
                "emit" => "emit",
                "stream" => "stream",
                _ => "ui",
            };
            Ok(Stmt::Emit {
                syscall,
                spec: EmitSpec {
                    event_type: raw.event_type,
                    payload: raw.payload,
                    metadata: raw.metadata,
                },
                opaque: raw.opaque,
            })
        }
        "if" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                #[serde(rename = "ref", default)]
                reference: Option<String>,
                #[serde(rename = "$resume", default)]
                resume: Option<usize>,
                #[serde(default)]
                equals: Value,
                #[serde(default)]
                then: Option<Value>,
                #[serde(rename = "else", default)]
                otherwise: Option<Value>,
            }
            let raw: Raw = decode(&rest, path)?;
            let cond = match (raw.reference, raw.resume) {
                (Some(r), None) => parse_ref(&r).map_err(|m| err(&format!("{path}.ref"), m))?,
                (None, Some(n)) => Ref {
                    root: RefRoot::Resume(n),
                    pointer: String::new(),
                },
                _ => return Err(err(path, "give exactly one of `ref` and `$resume`")),
            };
            let then = match &raw.then {
                Some(v) => parse_list(v, &format!("{path}.then"), depth, cx)?,
                None => Vec::new(),
            };
            let otherwise = match &raw.otherwise {
                Some(v) => parse_list(v, &format!("{path}.else"), depth, cx)?,
                None => Vec::new(),
            };
            Ok(Stmt::If {
                cond,
                equals: raw.equals,
                then,
                otherwise,
            })
        }
        "set" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                name: String,
                #[serde(default)]
                value: Value,
            }
            let raw: Raw = decode(&rest, path)?;
            check_refs(&raw.value, &format!("{path}.value"))?;
            Ok(Stmt::Set {
                name: raw.name,
                value: raw.value,
            })
        }
        "complete" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                #[serde(default)]
                output: Value,
            }
            let raw: Raw = decode(&rest, path)?;
            check_refs(&raw.output, &format!("{path}.output"))?;
            Ok(Stmt::Complete(raw.output))
        }
        "fail" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                error: String,
            }
            let raw: Raw = decode(&rest, path)?;
            Ok(Stmt::Fail(raw.error))
        }
        "block" | "noop" => {
            // `block` groups statements; `noop` does nothing. Both exist so generators
            // can nest without inventing syscalls.
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                #[serde(default)]
                body: Option<Value>,
            }
            let raw: Raw = decode(&rest, path)?;
            let body = match &raw.body {
                Some(v) => parse_list(v, &format!("{path}.body"), depth, cx)?,
                None => Vec::new(),
            };
            // A block is an `if` that is always true; this keeps the interpreter small.
            Ok(Stmt::If {
                cond: Ref {
                    root: RefRoot::Var("\u{0}block".into()),
                    pointer: String::new(),
                },
                equals: Value::Null,
                then: body,
                otherwise: Vec::new(),
            })
        }
        "continueAsNew" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                #[serde(default)]
                input: Value,
            }
            let raw: Raw = decode(&rest, path)?;
            check_refs(&raw.input, &format!("{path}.input"))?;
            Ok(Stmt::ContinueAsNew(raw.input))
        }
        "receive" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields, rename_all = "camelCase")]
            struct Raw {
                topic: String,
                wait_id: String,
                #[serde(default)]
                bind: Option<String>,
            }
            let raw: Raw = decode(&rest, path)?;
            nonempty(&raw.wait_id, &format!("{path}.waitId"))?;
            Ok(Stmt::Receive {
                topic: raw.topic,
                wait_id: raw.wait_id,
                bind: raw.bind,
            })
        }
        "select" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields, rename_all = "camelCase")]
            struct Wait {
                wait_id: String,
                topic: String,
            }
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Raw {
                waits: Vec<Wait>,
                #[serde(default)]
                bind: Option<String>,
            }
            let raw: Raw = decode(&rest, path)?;
            if raw.waits.is_empty() {
                return Err(err(&format!("{path}.waits"), "give at least one wait"));
            }
            Ok(Stmt::Select {
                waits: raw
                    .waits
                    .into_iter()
                    .map(|w| (w.wait_id, w.topic))
                    .collect(),
                bind: raw.bind,
            })
        }
        other => Err(err(&format!("{path}.op"), format!("unknown op `{other}`"))),
    }
}

fn parse_step(
    rest: &Value,
    path: &str,
    depth: usize,
    cx: &mut ParseCx<'_>,
    syscall: StepSyscall,
) -> Result<Stmt, ScriptError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Raw {
        step_id: String,
        #[serde(default)]
        tool_id: Option<String>,
        #[serde(default)]
        kind: Option<String>,
        #[serde(default)]
        gate: Option<String>,
        #[serde(default)]
        input: Value,
        #[serde(default)]
        errors: Option<BTreeMap<String, Value>>,
        #[serde(default)]
        catch: BTreeMap<String, Value>,
        #[serde(default)]
        retry: Option<RetryPolicy>,
    }
    let raw: Raw = decode(rest, path)?;
    nonempty(&raw.step_id, &format!("{path}.stepId"))?;
    check_refs(&raw.input, &format!("{path}.input"))?;
    check_errors_map(raw.errors.as_ref(), &format!("{path}.errors"))?;
    if let Some(r) = raw.retry {
        if r.max_attempts == 0 || r.max_attempts > super::limits::RETRY_ATTEMPTS_MAX {
            return Err(err(
                &format!("{path}.retry.maxAttempts"),
                format!("must be 1..={}", super::limits::RETRY_ATTEMPTS_MAX),
            ));
        }
    }
    if raw.gate.is_some() && raw.kind.as_deref() != Some("human") {
        return Err(err(
            &format!("{path}.gate"),
            "only a `kind: \"human\"` step parks on a gate",
        ));
    }
    let mut catch = BTreeMap::new();
    for (channel, handler) in &raw.catch {
        catch.insert(
            channel.clone(),
            parse_list(handler, &format!("{path}.catch.{channel}"), depth, cx)?,
        );
    }
    Ok(Stmt::Step(Box::new(StepStmt {
        syscall,
        tool_id: raw.tool_id.unwrap_or_else(|| raw.step_id.clone()),
        step_id: raw.step_id,
        kind: raw.kind,
        gate: raw.gate,
        input: raw.input,
        errors: raw.errors,
        catch,
        retry: raw.retry,
    })))
}

fn nonempty(s: &str, path: &str) -> Result<(), ScriptError> {
    if s.is_empty() {
        Err(err(path, "must be a non-empty string"))
    } else {
        Ok(())
    }
}

/// A present field is `Some`, even when its value is `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Parses a reference string: `input`, `steps.<id>.<field>`, `decisions.<id>`,
/// `vars.<name>` or `resume.<n>`, each optionally followed by a JSON pointer
/// (`steps.a.output/x/0`).
pub fn parse_ref(text: &str) -> Result<Ref, String> {
    let (head, pointer) = match text.find('/') {
        Some(i) => (&text[..i], text[i..].to_owned()),
        None => (text, String::new()),
    };
    let root = if head == "input" {
        RefRoot::Input
    } else if let Some(rest) = head.strip_prefix("steps.") {
        let Some(dot) = rest.rfind('.') else {
            return Err(format!(
                "`{text}`: write steps.<stepId>.<output|error|errorChannel|errorPayload|status>"
            ));
        };
        let (id, field) = (&rest[..dot], &rest[dot + 1..]);
        if id.is_empty()
            || !matches!(
                field,
                "output" | "error" | "errorChannel" | "errorPayload" | "status"
            )
        {
            return Err(format!(
                "`{text}`: write steps.<stepId>.<output|error|errorChannel|errorPayload|status>"
            ));
        }
        RefRoot::Step(id.to_owned(), field.to_owned())
    } else if let Some(id) = head.strip_prefix("decisions.") {
        RefRoot::Decision(id.to_owned())
    } else if let Some(name) = head.strip_prefix("vars.") {
        RefRoot::Var(name.to_owned())
    } else if let Some(n) = head.strip_prefix("resume.") {
        RefRoot::Resume(
            n.parse()
                .map_err(|_| format!("`{text}`: resume.<n> needs an index"))?,
        )
    } else {
        return Err(format!(
            "`{text}`: a reference starts with input, steps., decisions., vars. or resume."
        ));
    };
    Ok(Ref { root, pointer })
}

/// Checks every `{"$ref": …}` / `{"$resume": n}` inside a value.
fn check_refs(value: &Value, path: &str) -> Result<(), ScriptError> {
    match value {
        Value::Object(m) => {
            if let Some(r) = as_ref_object(m) {
                return r.map(|_| ()).map_err(|msg| err(path, msg));
            }
            for (k, v) in m {
                check_refs(v, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                check_refs(v, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `Some` when the object is a reference (`{"$ref": s}` or `{"$resume": n}`, alone).
pub(crate) fn as_ref_object(m: &Map<String, Value>) -> Option<Result<Ref, String>> {
    if m.len() != 1 {
        return None;
    }
    if let Some(v) = m.get("$ref") {
        return Some(match v {
            Value::String(s) => parse_ref(s),
            _ => Err("`$ref` must be a string".into()),
        });
    }
    if let Some(v) = m.get("$resume") {
        return Some(match v.as_u64() {
            Some(n) => Ok(Ref {
                root: RefRoot::Resume(n as usize),
                pointer: String::new(),
            }),
            None => Err("`$resume` must be a non-negative integer".into()),
        });
    }
    None
}
