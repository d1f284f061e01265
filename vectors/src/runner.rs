//! Runs vectors against a kernel: the reference in-process ([`InProcessKernel`]) or a
//! foreign one over stdio ([`crate::client::KernelProcess`]), through the same
//! [`KernelClient`] interface, producing one [`CaseResult`] per vector.
//!
//! A result is `pass`; `fail` with the first differing JSON path (or event index) and
//! the two values there; `skip-not-claimed` for a kind the adapter does not claim in
//! `hello`; `error` when the adapter breaks, answers a typed error, or answers
//! `unsupported` for a kind it claimed; `timeout`. Expected failures of the reference
//! kernel ([`crate::expected_failures`]) become `xfail`, and an unexpected pass fails.

use crate::format::{
    decode, FoldExpected, FoldInput, Kind, NormalizeExpected, NormalizeInput, Vector,
};
use crate::limits::EVERY_K_EVENTS_MAX;
use crate::reference::{ReferenceKernel, REFERENCE_NAME};
use loom_kernel::{canonical_string, EVENT_SCHEMA_VERSION};
use loom_process::{Blame, ShutdownReport};
use loom_report::{first_difference, CaseResult, Failure, Status, UNEXPECTED_PASS_PREFIX};
use serde_json::{json, Value};
use std::time::Instant;

/// The report area every vector result carries.
pub const AREA: &str = "vectors";

/// Why a call produced no result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// The adapter answered `unsupported`.
    Unsupported(String),
    /// The adapter answered a typed error.
    Typed {
        /// Error kind.
        kind: String,
        /// Explanation.
        message: String,
    },
    /// The adapter broke: crashed, wrote non-JSON, answered the wrong id, …
    Broken(String),
    /// The call did not finish in time.
    Timeout(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Unsupported(m) => write!(f, "unsupported: {m}"),
            CallError::Typed { kind, message } => write!(f, "adapter error ({kind}): {message}"),
            CallError::Broken(m) => write!(f, "adapter broke: {m}"),
            CallError::Timeout(m) => write!(f, "timeout: {m}"),
        }
    }
}

/// A kernel the runner can call.
pub trait KernelClient {
    /// The adapter's `hello` result.
    fn hello(&mut self) -> Result<Value, CallError>;
    /// Calls one method and returns its `result`.
    fn call(&mut self, method: &str, params: &Value) -> Result<Value, CallError>;
    /// Calls one method with `params` given as exact wire text (a vector's `rawInput`).
    /// A client over a process sends these bytes unchanged; the default reads them as
    /// an adapter would (a JSON parser) and calls [`KernelClient::call`].
    fn call_raw(&mut self, method: &str, raw_params: &str) -> Result<Value, CallError> {
        let params: Value = serde_json::from_str(raw_params)
            .map_err(|e| CallError::Broken(format!("the raw params are not JSON: {e}")))?;
        self.call(method, &params)
    }
    /// Names the case (the vector id) the next calls belong to, for blame.
    fn begin_case(&mut self, _tag: &str) {}
    /// Faults blamed on earlier cases (a second answer to an earlier request, a line
    /// nobody asked for), each with the tag of the case at fault.
    fn take_blames(&mut self) -> Vec<Blame> {
        Vec::new()
    }
    /// Ends the kernel (a foreign one with its whole process group) and reports what
    /// the shutdown found.
    fn shutdown(&mut self) -> ShutdownReport {
        ShutdownReport::default()
    }
}

/// The reference kernel (or a wrong kernel) called in-process, without serialization.
#[derive(Debug, Clone, Copy, Default)]
pub struct InProcessKernel {
    /// The kernel.
    pub kernel: ReferenceKernel,
}

impl KernelClient for InProcessKernel {
    fn hello(&mut self) -> Result<Value, CallError> {
        Ok(self.kernel.hello())
    }

    fn call(&mut self, method: &str, params: &Value) -> Result<Value, CallError> {
        answer_to_result(self.kernel.handle(method, params))
    }
}

/// Converts a protocol answer to a call result.
pub fn answer_to_result(a: crate::protocol::Answer) -> Result<Value, CallError> {
    match a {
        crate::protocol::Answer::Result(v) => Ok(v),
        crate::protocol::Answer::Error { kind, message } => Err(CallError::Typed { kind, message }),
        crate::protocol::Answer::Unsupported(m) => Err(CallError::Unsupported(m)),
    }
}

/// What `hello` told the runner.
#[derive(Debug, Clone, PartialEq)]
pub struct Claims {
    /// The `hello` result as given.
    pub hello: Value,
    /// The vector kinds claimed.
    pub kinds: Vec<String>,
    /// Whether this is the reference kernel (expected failures apply).
    pub is_reference: bool,
}

impl Claims {
    /// Reads the claims from a `hello` result.
    pub fn from_hello(hello: Value) -> Claims {
        let kinds = hello
            .get("kinds")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let is_reference = hello.get("name").and_then(Value::as_str) == Some(REFERENCE_NAME);
        Claims {
            hello,
            kinds,
            is_reference,
        }
    }

    /// Whether `kind` is claimed.
    pub fn claims(&self, kind: Kind) -> bool {
        self.kinds.iter().any(|k| k == kind.as_str())
    }
}

enum Outcome {
    Fail(String, Box<Failure>),
    Call(CallError),
    Bad(String),
}

impl From<CallError> for Outcome {
    fn from(e: CallError) -> Self {
        Outcome::Call(e)
    }
}

/// Runs one vector.
pub fn run_vector(client: &mut dyn KernelClient, claims: &Claims, v: &Vector) -> CaseResult {
    let started = Instant::now();
    let suite = v.kind.as_str();
    let mut result = if !claims.claims(v.kind) {
        CaseResult::skip_not_claimed(
            AREA,
            suite,
            &v.id,
            v.rules.clone(),
            format!("the adapter does not claim `{}` vectors in hello", v.kind),
        )
    } else {
        match check(client, v) {
            Ok(()) => CaseResult::pass(AREA, suite, &v.id, v.rules.clone()),
            Err(Outcome::Fail(message, failure)) => {
                CaseResult::fail(AREA, suite, &v.id, v.rules.clone(), message, *failure)
            }
            Err(Outcome::Bad(message)) => {
                CaseResult::error(AREA, suite, &v.id, v.rules.clone(), message)
            }
            Err(Outcome::Call(CallError::Timeout(m))) => {
                CaseResult::timeout(AREA, suite, &v.id, v.rules.clone(), m)
            }
            Err(Outcome::Call(CallError::Unsupported(m))) => CaseResult::error(
                AREA,
                suite,
                &v.id,
                v.rules.clone(),
                format!(
                    "the adapter claims `{}` vectors but answered unsupported: {m}",
                    v.kind
                ),
            ),
            Err(Outcome::Call(e)) => {
                CaseResult::error(AREA, suite, &v.id, v.rules.clone(), e.to_string())
            }
        }
    };
    if claims.is_reference {
        apply_expected_failure(&mut result);
    }
    result.with_duration_ms(started.elapsed().as_millis() as u64)
}

/// Turns a listed expected failure into `xfail`, and its pass into a failure.
fn apply_expected_failure(result: &mut CaseResult) {
    let Some(reason) = crate::expected_failures::reason_for(&result.case_id) else {
        return;
    };
    match result.status {
        Status::Pass => {
            result.status = Status::Fail;
            result.message = Some(format!(
                "{UNEXPECTED_PASS_PREFIX} listed in vectors/src/expected_failures.rs ({reason}); remove the entry"
            ));
        }
        Status::Fail => {
            result.status = Status::Xfail;
            result.xfail_reason = Some(reason.to_owned());
        }
        _ => {}
    }
}

/// The suite of the results about the adapter process itself (its shutdown).
pub const ADAPTER_SUITE: &str = "adapter";

/// The case id of the handshake's ABI check.
pub const HELLO_ABI_CASE: &str = "adapter/hello-abi";

/// Judges the syscall ABI a kernel's `hello` advertises (ABI-05) against the manifest
/// ([`crate::client::check_hello_abi`]): `pass` when `kernelAbiVersion` and `syscalls`
/// are both there and agree with it; `error` naming ABI-05 when they disagree, or one
/// comes without the other; `fail` when both are absent from a kernel that claims
/// `runtime` vectors (it runs flows, so it has syscalls to advertise); and
/// `skip-not-claimed` when both are absent from a kernel that runs no flows.
pub fn hello_abi_result(claims: &Claims) -> CaseResult {
    use crate::client::{check_hello_abi, HelloAbi};
    let rules = ["ABI-05"];
    match check_hello_abi(&claims.hello) {
        HelloAbi::Consistent { version, syscalls } => {
            CaseResult::pass(AREA, ADAPTER_SUITE, HELLO_ABI_CASE, rules).with_message(format!(
                "kernelAbiVersion {version} with {} syscalls: {}",
                syscalls.len(),
                syscalls.join(", ")
            ))
        }
        HelloAbi::Mismatch(why) => CaseResult::error(
            AREA,
            ADAPTER_SUITE,
            HELLO_ABI_CASE,
            rules,
            format!("ABI-05: the hello's syscall ABI does not match the manifest: {why}"),
        ),
        HelloAbi::Absent if claims.claims(Kind::Runtime) => CaseResult::fail(
            AREA,
            ADAPTER_SUITE,
            HELLO_ABI_CASE,
            rules,
            "ABI-05: the adapter claims `runtime` vectors, but its hello advertises neither kernelAbiVersion nor the syscalls list next to it; add both to the hello result",
            Failure::values(
                json!({"kernelAbiVersion": "<version>", "syscalls": ["<name>", "…"]}),
                Value::Null,
            ),
        ),
        HelloAbi::Absent => CaseResult::skip_not_claimed(
            AREA,
            ADAPTER_SUITE,
            HELLO_ABI_CASE,
            rules,
            "the adapter claims no `runtime` vectors and advertises no syscall ABI",
        ),
    }
}

/// Runs every vector: `hello` first, then each vector in order, each as its own case
/// for blame; then ends the kernel. A fault blamed on an earlier vector (a second
/// answer, a stray line) turns that vector's result into an `error`; a shutdown problem
/// (end of input ignored, processes left behind) is an `error` result of its own. When
/// any vector ran, the hello's syscall ABI is judged after the vectors
/// ([`hello_abi_result`]), so the first results stay in vector order.
/// `on_result` sees each result as it is produced (for progress bars).
pub fn run_set(
    client: &mut dyn KernelClient,
    vectors: &[Vector],
    on_result: &mut dyn FnMut(&CaseResult),
) -> Result<(Claims, Vec<CaseResult>), String> {
    let hello = client
        .call(
            "hello",
            &json!({"protocolVersion": crate::protocol::PROTOCOL_VERSION}),
        )
        .map_err(|e| format!("hello failed: {e}"))?;
    let claims = Claims::from_hello(hello);
    let mut out: Vec<CaseResult> = Vec::with_capacity(vectors.len() + 1);
    for v in vectors {
        client.begin_case(&v.id);
        let r = run_vector(client, &claims, v);
        on_result(&r);
        out.push(r);
        let blames = client.take_blames();
        apply_blames(&mut out, blames);
    }
    if !vectors.is_empty() {
        let r = hello_abi_result(&claims);
        on_result(&r);
        out.push(r);
    }
    let report = client.shutdown();
    apply_blames(&mut out, report.blames);
    for problem in report.problems {
        let r = CaseResult::error(
            AREA,
            ADAPTER_SUITE,
            "adapter/shutdown",
            Vec::<String>::new(),
            problem.message,
        );
        on_result(&r);
        out.push(r);
    }
    Ok((claims, out))
}

/// The vector's first request: its `input` as `params`, or its `rawInput` bytes
/// unchanged when it has one.
fn call_input(client: &mut dyn KernelClient, v: &Vector) -> Result<Value, CallError> {
    let method = v.kind.method();
    match &v.raw_input {
        Some(raw) => client.call_raw(method, raw),
        None => client.call(method, &v.input),
    }
}

/// Turns the results of the cases blamed into `error` results naming the fault; a blame
/// for a case that has no result yet (none should) becomes a result of its own.
pub fn apply_blames(results: &mut Vec<CaseResult>, blames: Vec<Blame>) {
    for blame in blames {
        match results.iter_mut().rev().find(|r| r.case_id == blame.tag) {
            Some(r) => {
                let was = r.status;
                r.status = Status::Error;
                r.failure = None;
                r.xfail_reason = None;
                r.message = Some(format!(
                    "{} (the case had concluded {was} before this was seen)",
                    blame.fault.message
                ));
            }
            None => results.push(CaseResult::error(
                AREA,
                ADAPTER_SUITE,
                blame.tag,
                Vec::<String>::new(),
                blame.fault.message,
            )),
        }
    }
}

fn check(client: &mut dyn KernelClient, v: &Vector) -> Result<(), Outcome> {
    match v.kind {
        Kind::Fold => check_fold(client, v),
        Kind::Normalize => check_normalize(client, v),
        Kind::Digest => {
            let actual = call_input(client, v)?;
            compare(&v.expected, &actual, "digest answer differs")
        }
        Kind::Ingress => {
            let actual = strip_message(call_input(client, v)?);
            compare(&v.expected, &actual, "ingress answer differs")
        }
        Kind::Emit => {
            let actual = strip_message(call_input(client, v)?);
            compare(&v.expected, &actual, "emit validation answer differs")
        }
        Kind::Runtime => {
            let actual = call_input(client, v)?;
            let actual = crate::scrub::scrub_answer(&actual).map_err(Outcome::Bad)?;
            compare(&v.expected, &actual, "runtime scenario log differs")
        }
    }
}

/// Drops the human-readable `message` of a refusal: vectors pin names and reasons only.
pub fn strip_message(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        m.remove("message");
    }
    v
}

fn bad_vector(v: &Vector, e: impl std::fmt::Display) -> Outcome {
    Outcome::Bad(format!("vector {} is malformed: {e}", v.id))
}

fn state_of(answer: &Value) -> Result<&Value, Outcome> {
    answer.get("state").ok_or_else(|| {
        Outcome::Call(CallError::Broken(
            "the answer has no `state` field".to_owned(),
        ))
    })
}

fn check_fold(client: &mut dyn KernelClient, v: &Vector) -> Result<(), Outcome> {
    let input: FoldInput = decode(&v.input, &v.id, "input").map_err(|e| bad_vector(v, e))?;
    let expected: FoldExpected =
        decode(&v.expected, &v.id, "expected").map_err(|e| bad_vector(v, e))?;
    let answer = call_input(client, v)?;
    compare(
        &expected.state,
        state_of(&answer)?,
        "fold(events) differs from the expected state",
    )
    .map_err(|o| prefix_path(o, "/state"))?;
    if !expected.every_k || input.events.len() > EVERY_K_EVENTS_MAX {
        return Ok(());
    }
    for k in 0..input.events.len() {
        let prefix = client.call("fold", &json!({"events": &input.events[..=k]}))?;
        let sequence = input.events[k]
            .get("sequence")
            .cloned()
            .unwrap_or(Value::Null);
        let params = json!({
            "snapshot": {
                "schemaVersion": EVENT_SCHEMA_VERSION,
                "sequence": sequence,
                "state": state_of(&prefix)?,
            },
            "events": &input.events[k + 1..],
        });
        let restored = client.call("foldFrom", &params)?;
        if let Err(Outcome::Fail(_, failure)) = compare(&expected.state, state_of(&restored)?, "") {
            return Err(Outcome::Fail(
                format!("fold(snapshot at event {k}, tail) differs from fold(events) (SNAP-01)"),
                Box::new(failure.with_event_index(k as u64)),
            ));
        }
    }
    Ok(())
}

fn check_normalize(client: &mut dyn KernelClient, v: &Vector) -> Result<(), Outcome> {
    let input: NormalizeInput = decode(&v.input, &v.id, "input").map_err(|e| bad_vector(v, e))?;
    let expected: NormalizeExpected =
        decode(&v.expected, &v.id, "expected").map_err(|e| bad_vector(v, e))?;
    let snapshot = serde_json::to_value(&input.snapshot).unwrap_or(Value::Null);
    let normalized = client.call("normalizeSnapshot", &json!({ "snapshot": &snapshot }))?;
    compare(
        &expected.normalized,
        state_of(&normalized)?,
        "normalizeSnapshot(snapshot) differs",
    )
    .map_err(|o| prefix_path(o, "/normalized"))?;
    let restored = client.call(
        "foldFrom",
        &json!({"snapshot": &snapshot, "events": &input.tail}),
    )?;
    compare(
        &expected.restored,
        state_of(&restored)?,
        "foldFrom(snapshot, tail) differs",
    )
    .map_err(|o| prefix_path(o, "/restored"))
}

fn prefix_path(o: Outcome, prefix: &str) -> Outcome {
    match o {
        Outcome::Fail(m, mut f) => {
            f.path = Some(format!("{prefix}{}", f.path.unwrap_or_default()));
            Outcome::Fail(m, f)
        }
        other => other,
    }
}

/// Compares two JSON values as canonical bytes; on a difference, the failure names
/// the first differing JSON pointer and holds the two values found there (and the event
/// index when the pointer goes through `/events/N` or `/log/N`).
fn compare(expected: &Value, actual: &Value, message: &str) -> Result<(), Outcome> {
    match difference(expected, actual) {
        None => Ok(()),
        Some(failure) => Err(Outcome::Fail(message.to_owned(), Box::new(failure))),
    }
}

/// The [`Failure`] describing how `actual` differs from `expected`, if it does.
pub fn difference(expected: &Value, actual: &Value) -> Option<Failure> {
    if canonical_string(expected) == canonical_string(actual) {
        return None;
    }
    let path = first_difference(expected, actual).unwrap_or_default();
    let at = |v: &Value| v.pointer(&path).cloned().unwrap_or(Value::Null);
    let mut f = Failure::values(at(expected), at(actual)).with_path(path.clone());
    let mut parts = path.split('/').skip(1);
    if let (Some("events" | "log"), Some(n)) = (parts.next(), parts.next()) {
        if let Ok(i) = n.parse::<u64>() {
            f = f.with_event_index(i);
        }
    }
    Some(f)
}
