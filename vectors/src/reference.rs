//! The reference kernel behind the protocol's method table.
//!
//! [`ReferenceKernel::handle`] answers every protocol method from `loom-kernel`: the
//! runner calls it in-process, `loom kernel-adapter` serves it over stdio, and the
//! generator computes every expected value through it. A [`ReferenceKernel`] built with
//! a [`Bug`] is one of the deliberately wrong kernels: the reference with one behaviour
//! changed.

use crate::format::{
    decode, DigestInput, EmitInput, FoldInput, IngressInput, SnapshotInput, Verdict,
};
use crate::protocol::{Answer, METHODS, PROTOCOL_VERSION};
use crate::readings::ReadingSet;
use crate::wrong::Bug;
use loom_kernel::digest::{
    emit_digest, emit_digest_input, fnv1a64_hex, fnv1a_flow_hash, sha256_flow_hash,
};
use loom_kernel::fold::{fold_as, fold_owned, ExecutionState, FoldVersion};
use loom_kernel::ingress::{
    admit, validate_user_emit, EmitSource, ExecutionAuthorizer, GateConfig, IngressError,
    ResumeAuthenticator, ResumePath, ResumeRequest,
};
use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::{canonical_string, EventEnvelope, EVENT_SCHEMA_VERSION};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The implementation name the reference kernel gives in `hello`.
pub const REFERENCE_NAME: &str = "loom-reference-kernel";

/// The name a kernel with other readings of the open points gives in `hello`.
pub const OTHER_READINGS_NAME: &str = "loom-other-readings-kernel";

/// The reference kernel, optionally with one deliberate bug and with other readings of
/// open points ([`crate::readings`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReferenceKernel {
    /// The deliberate bug, if any.
    pub bug: Option<Bug>,
    /// The open points it takes the other way (none: the reference's resolutions).
    pub readings: ReadingSet,
}

/// The vector kinds the reference kernel claims.
pub fn claimed_kinds() -> Vec<&'static str> {
    crate::format::Kind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect()
}

impl ReferenceKernel {
    /// The reference kernel with `bug`.
    pub fn with_bug(bug: Bug) -> ReferenceKernel {
        ReferenceKernel {
            bug: Some(bug),
            readings: ReadingSet::NONE,
        }
    }

    /// The reference kernel taking the open points in `readings` the other way.
    pub fn with_readings(readings: ReadingSet) -> ReferenceKernel {
        ReferenceKernel {
            bug: None,
            readings,
        }
    }

    fn has(&self, bug: Bug) -> bool {
        self.bug == Some(bug)
    }

    /// The `hello` result. The reference claims every resolution of its own
    /// (`"resolutions": ["reference"]`); a kernel with other readings claims the ones
    /// it still follows.
    pub fn hello(&self) -> Value {
        let name = match (self.bug, self.readings.is_empty()) {
            (None, true) => REFERENCE_NAME.to_owned(),
            (None, false) => OTHER_READINGS_NAME.to_owned(),
            (Some(b), true) => format!("loom-wrong-kernel:{}", b.as_str()),
            (Some(b), false) => format!("{OTHER_READINGS_NAME}:{}", b.as_str()),
        };
        let resolutions = if self.readings.is_empty() {
            json!([crate::basis::REFERENCE_PROFILE])
        } else {
            json!(self.readings.claimed_resolutions())
        };
        json!({
            "name": name,
            "version": env!("CARGO_PKG_VERSION"),
            "protocolVersion": PROTOCOL_VERSION,
            "eventSchemaVersion": EVENT_SCHEMA_VERSION,
            "kinds": claimed_kinds(),
            "methods": METHODS,
            // ABI-05: the syscall list next to the ABI version, as the wire handshake
            // advertises them with every feature flag off.
            "kernelAbiVersion": loom_kernel::versions::KERNEL_ABI_VERSION,
            "syscalls": loom_kernel::versions::effective_syscalls(&Default::default()),
            // Which of this reference's resolutions of open points it follows (docs/vectors.md, Basis).
            "resolutions": resolutions,
        })
    }

    /// Answers one protocol method. Never panics on any params.
    pub fn handle(&self, method: &str, params: &Value) -> Answer {
        if self.readings.is_empty() || method == "hello" {
            return self.handle_plain(method, params);
        }
        let p = crate::readings::before_request(self.readings, method, params);
        match self.handle_plain(method, &p) {
            Answer::Result(v) => Answer::Result(crate::readings::after_answer(
                self.readings,
                self,
                method,
                &p,
                v,
            )),
            other => other,
        }
    }

    fn handle_plain(&self, method: &str, params: &Value) -> Answer {
        let out = match method {
            "hello" => Ok(self.hello()),
            "fold" => self.fold(params),
            "foldFrom" => self.fold_from(params),
            "normalizeSnapshot" => self.normalize(params),
            "digest" => self.digest(params),
            "ingress" => self.ingress(params),
            "validateEmit" => self.validate_emit(params),
            "runScenario" => return self.run_scenario(params),
            other => return Answer::Unsupported(format!("unknown method `{other}`")),
        };
        match out {
            Ok(v) => Answer::Result(v),
            Err(message) => Answer::bad_request(message),
        }
    }

    fn fold(&self, params: &Value) -> Result<Value, String> {
        let input: FoldInput = decode(params, "params", "").map_err(|e| e.to_string())?;
        let events = envelopes(&input.events)?;
        let version = match &input.schema_version {
            Some(v) => FoldVersion::parse(v)?,
            None => self.current(),
        };
        let state = self.fold_events(version, ExecutionState::new(), events);
        Ok(json!({ "state": self.state_out(&state) }))
    }

    fn run_scenario(&self, params: &Value) -> Answer {
        let answer = crate::scrub::run_scenario_method(params);
        match (self.bug.or(self.readings.writer_bug()), answer) {
            (Some(bug), Answer::Result(v)) if crate::wrong::gate::is_runtime_bug(bug) => {
                Answer::Result(crate::wrong::gate::run_scenario(bug, params, v))
            }
            (_, a) => a,
        }
    }

    fn fold_from(&self, params: &Value) -> Result<Value, String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct P {
            snapshot: SnapshotInput,
            events: Vec<Value>,
        }
        let p: P = decode(params, "params", "").map_err(|e| e.to_string())?;
        let k = p.snapshot.sequence;
        let state = self.normalized(p.snapshot)?;
        let tail: Vec<EventEnvelope> = envelopes(&p.events)?
            .into_iter()
            .filter(|e| {
                self.readings.folds_whole_tail()
                    || crate::wrong::fold::folds_tail_event(self.bug, e.sequence, k)
            })
            .collect();
        let state = self.fold_events(self.current(), state, tail);
        Ok(json!({ "state": self.state_out(&state) }))
    }

    fn normalize(&self, params: &Value) -> Result<Value, String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct P {
            snapshot: SnapshotInput,
        }
        let p: P = decode(params, "params", "").map_err(|e| e.to_string())?;
        let state = self.normalized(p.snapshot)?;
        Ok(json!({ "state": self.state_out(&state) }))
    }

    fn normalized(&self, s: SnapshotInput) -> Result<ExecutionState, String> {
        let record = SnapshotRecord {
            schema_version: s.schema_version,
            sequence: s.sequence,
            state: s.state,
        };
        crate::wrong::fold::normalized(self.bug, &record)
    }

    fn current(&self) -> FoldVersion {
        if self.has(Bug::NoInputDrop) {
            FoldVersion::from_minor(25).unwrap_or(FoldVersion::CURRENT)
        } else {
            FoldVersion::CURRENT
        }
    }

    fn fold_events(
        &self,
        version: FoldVersion,
        state: ExecutionState,
        events: Vec<EventEnvelope>,
    ) -> ExecutionState {
        if self.readings.changes_fold() {
            return crate::readings::fold_events(self.readings, self.bug, version, state, events);
        }
        if let Some(bug) = self.bug.filter(|b| crate::wrong::fold::is_fold_bug(*b)) {
            return crate::wrong::fold::fold_events(bug, version, state, events);
        }
        if version == FoldVersion::CURRENT {
            fold_owned(state, events)
        } else {
            fold_as(version, &state, &events)
        }
    }

    fn state_out(&self, state: &ExecutionState) -> Value {
        let mut v = state.to_value();
        if self.has(Bug::NoSeq) {
            crate::wrong::fold::strip_seq(&mut v);
        }
        v
    }

    fn digest(&self, params: &Value) -> Result<Value, String> {
        let d: DigestInput = decode(params, "params", "").map_err(|e| e.to_string())?;
        let need = |name: &str| format!("digest op `{}` needs `{name}`", d.op);
        if let Some(bug) = self
            .bug
            .filter(|b| crate::wrong::canonical::is_digest_bug(*b))
            .or(self.readings.writer_bug())
        {
            return wrong_digest(bug, &d);
        }
        match d.op.as_str() {
            "canonical" => {
                let v = d.value.as_ref().ok_or_else(|| need("value"))?;
                Ok(json!({ "canonical": canonical_string(v) }))
            }
            "fnv1a64" => {
                let t = d.text.as_ref().ok_or_else(|| need("text"))?;
                Ok(json!({ "fnv1a64": fnv1a64_hex(t.as_bytes()) }))
            }
            "emit" => {
                let segment = d.segment.ok_or_else(|| need("segment"))?;
                let ty = d.event_type.as_ref().ok_or_else(|| need("eventType"))?;
                let payload = d.payload.as_ref().ok_or_else(|| need("payload"))?;
                Ok(json!({
                    "digest": emit_digest(segment, ty, payload),
                    "input": emit_digest_input(segment, ty, payload),
                }))
            }
            "flowHash" => {
                let v = d.value.as_ref().ok_or_else(|| need("value"))?;
                match d.algorithm.as_deref() {
                    Some("sha256") => Ok(json!({ "flowHash": sha256_flow_hash(v) })),
                    Some("fnv1a") => Ok(json!({ "flowHash": fnv1a_flow_hash(v) })),
                    _ => Err("flowHash needs `algorithm`: sha256 or fnv1a".into()),
                }
            }
            other => Err(format!(
                "unknown digest op `{other}` (canonical, fnv1a64, emit, flowHash)"
            )),
        }
    }

    fn ingress(&self, params: &Value) -> Result<Value, String> {
        let input: IngressInput = decode(params, "params", "").map_err(|e| e.to_string())?;
        match self.bug.filter(|b| crate::wrong::gate::is_ingress_bug(*b)) {
            None => ingress_answer(&input),
            Some(bug) => {
                let failure = std::cell::RefCell::new(None);
                let reference = |i: &IngressInput| {
                    ingress_answer(i).unwrap_or_else(|e| {
                        *failure.borrow_mut() = Some(e);
                        Value::Null
                    })
                };
                let answer = crate::wrong::gate::ingress(bug, &input, &reference);
                match failure.into_inner() {
                    Some(e) => Err(e),
                    None => Ok(answer),
                }
            }
        }
    }

    fn validate_emit(&self, params: &Value) -> Result<Value, String> {
        let input: EmitInput = decode(params, "params", "").map_err(|e| e.to_string())?;
        let answer = validate_emit_answer(&input)?;
        Ok(
            match self.bug.filter(|b| crate::wrong::gate::is_emit_bug(*b)) {
                Some(bug) => crate::wrong::gate::validate_emit(bug, &input, answer),
                None => answer,
            },
        )
    }
}

/// The reference gate's answer to an ingress request.
fn ingress_answer(input: &IngressInput) -> Result<Value, String> {
    {
        let log = envelopes(&input.log)?;
        let state = fold_owned(ExecutionState::new(), log.clone());
        let path = match input.path.as_str() {
            "resume" => ResumePath::Resume,
            "resumeAs" => ResumePath::ResumeAs,
            "recover" => ResumePath::Recover,
            "timer" => ResumePath::Timer,
            other => {
                return Err(format!(
                    "unknown path `{other}` (resume, resumeAs, recover, timer)"
                ))
            }
        };
        let request = ResumeRequest {
            event_type: input.request.event_type.clone(),
            payload: input.request.payload.clone(),
            metadata: input.request.metadata.clone(),
        };
        let schemas: Option<BTreeMap<String, Value>> = input
            .flow
            .resume_schemas
            .as_ref()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
        let authn = input
            .authenticator
            .as_ref()
            .map(Scripted::authenticator)
            .transpose()?;
        let authz = input
            .authorizer
            .as_ref()
            .map(Scripted::authorizer)
            .transpose()?;
        let gate = GateConfig {
            resume_schemas: schemas.as_ref(),
            authenticator: authn.as_ref().map(|a| a as &dyn ResumeAuthenticator),
            authorizer: authz.as_ref().map(|a| a as &dyn ExecutionAuthorizer),
        };
        let execution_id = log
            .first()
            .map(|e| e.execution_id.clone())
            .unwrap_or_else(|| "exec-1".into());
        match admit(&execution_id, &state, &log, path, &request, &gate) {
            Ok(events) => Ok(json!({
                "outcome": "appended",
                "events": events.into_iter().map(|e| new_event(&e.event_type, e.payload, e.metadata)).collect::<Vec<_>>(),
            })),
            Err(e) => Ok(refusal(&e)),
        }
    }
}

/// The reference's userspace-emit validation answer.
fn validate_emit_answer(input: &EmitInput) -> Result<Value, String> {
    {
        let state = fold_owned(ExecutionState::new(), envelopes(&input.log)?);
        let source = match input.source.kind.as_str() {
            "flow" => EmitSource::Flow,
            "relay" => EmitSource::Relay,
            "effect" => EmitSource::Effect {
                step_id: input
                    .source
                    .step_id
                    .clone()
                    .ok_or("an effect source needs `stepId`")?,
                attempt: input
                    .source
                    .attempt
                    .ok_or("an effect source needs `attempt`")?,
            },
            other => {
                return Err(format!(
                    "unknown emit source `{other}` (flow, effect, relay)"
                ))
            }
        };
        match validate_user_emit(
            &state,
            &source,
            &input.event_type,
            input.payload.clone(),
            input.metadata.as_ref(),
        ) {
            Ok((event_type, payload)) => Ok(json!({
                "outcome": "accepted",
                "eventType": event_type,
                "payload": payload,
            })),
            Err(e) => Ok(json!({
                "outcome": "refused",
                "error": "EmitRefusedError",
                "reason": e.reason.as_str(),
                "message": e.message,
            })),
        }
    }
}

/// A digest answer from a kernel whose canonical writer or digest function has `bug`.
fn wrong_digest(bug: Bug, d: &DigestInput) -> Result<Value, String> {
    use crate::wrong::canonical as w;
    let need = |name: &str| format!("digest op `{}` needs `{name}`", d.op);
    match d.op.as_str() {
        "canonical" => {
            let v = d.value.as_ref().ok_or_else(|| need("value"))?;
            Ok(json!({ "canonical": w::canonical(Some(bug), v) }))
        }
        "fnv1a64" => {
            let t = d.text.as_ref().ok_or_else(|| need("text"))?;
            Ok(json!({ "fnv1a64": w::fnv(Some(bug), t.as_bytes()) }))
        }
        "emit" => {
            let segment = d.segment.ok_or_else(|| need("segment"))?;
            let ty = d.event_type.as_ref().ok_or_else(|| need("eventType"))?;
            let payload = d.payload.as_ref().ok_or_else(|| need("payload"))?;
            let (input, digest) = w::emit_digest(Some(bug), segment, ty, payload);
            Ok(json!({ "digest": digest, "input": input }))
        }
        "flowHash" => {
            let v = d.value.as_ref().ok_or_else(|| need("value"))?;
            match d.algorithm.as_deref() {
                Some(alg @ ("sha256" | "fnv1a")) => {
                    Ok(json!({ "flowHash": w::flow_hash(Some(bug), v, alg == "sha256") }))
                }
                _ => Err("flowHash needs `algorithm`: sha256 or fnv1a".into()),
            }
        }
        other => Err(format!("unknown digest op `{other}`")),
    }
}

fn new_event(event_type: &str, payload: Value, metadata: Option<Map<String, Value>>) -> Value {
    let mut m = Map::new();
    m.insert("eventType".into(), Value::String(event_type.into()));
    m.insert("payload".into(), payload);
    if let Some(meta) = metadata {
        m.insert("metadata".into(), Value::Object(meta));
    }
    Value::Object(m)
}

fn refusal(e: &IngressError) -> Value {
    json!({
        "outcome": "refused",
        "error": e.name(),
        "reason": e.reason().map(|r| r.as_str()),
        "message": e.to_string(),
    })
}

/// Decodes envelopes, naming the index of a bad one.
pub fn envelopes(values: &[Value]) -> Result<Vec<EventEnvelope>, String> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| EventEnvelope::from_value(v, i).map_err(|e| format!("events[{i}]: {e}")))
        .collect()
}

struct Scripted(Result<Value, String>);

impl Scripted {
    fn authenticator(v: &Verdict) -> Result<Scripted, String> {
        match v.verdict.as_str() {
            "accept" => Ok(Scripted(Ok(v
                .approval
                .clone()
                .unwrap_or(Value::Bool(true))))),
            "reject" => Ok(Scripted(Err(v
                .reason
                .clone()
                .unwrap_or_else(|| "rejected".into())))),
            other => Err(format!("authenticator verdict `{other}` (accept, reject)")),
        }
    }
    fn authorizer(v: &Verdict) -> Result<Scripted, String> {
        match v.verdict.as_str() {
            "allow" => Ok(Scripted(Ok(Value::Null))),
            "deny" => Ok(Scripted(Err(v
                .reason
                .clone()
                .unwrap_or_else(|| "denied".into())))),
            other => Err(format!("authorizer verdict `{other}` (allow, deny)")),
        }
    }
}

impl ResumeAuthenticator for Scripted {
    fn verify(&self, _execution_id: &str, _request: &ResumeRequest) -> Result<Value, String> {
        self.0.clone()
    }
}

impl ExecutionAuthorizer for Scripted {
    fn authorize(&self, _execution_id: &str, _request: &ResumeRequest) -> Result<(), String> {
        self.0.clone().map(|_| ())
    }
}
