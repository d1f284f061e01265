//! Runs vectors against a kernel: the reference in-process ([`InProcessKernel`]) or a
//! foreign one over stdio ([`crate::client::KernelProcess`]), through the same
//! [`KernelClient`] interface, producing one [`CaseResult`] per vector.
//!
//! A result is `pass`; `fail` with the first differing JSON path (or event index) and
//! the two values there; `skip-not-claimed` for a kind the adapter does not claim in
//! `hello`; `error` when the adapter breaks, answers a typed error, or answers
//! `unsupported` for a kind it claimed; `timeout`. Expected failures of the reference
//! kernel ([`crate::expected_failures`]) become `xfail`, and an unexpected pass fails.
//!
//! Each vector is judged by its basis ([`judge`], docs/vectors.md "Basis", decision
//! 0009) against the resolutions the kernel claims in `hello`: a kernel that claims
//! every resolution a vector rests on is judged exactly; for one that does not, an
//! answer equal to an alternative of an unclaimed reading passes, a difference confined
//! to the pointers of unclaimed resolutions is a `resolution-difference` (neither a
//! failure nor a pass), and any other difference fails.

use crate::basis::{covers, judged_part, ResolutionClaims};
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
    /// Which of the reference's resolutions of open points it follows
    /// (`hello.resolutions`; absent: none).
    pub resolutions: ResolutionClaims,
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
        let resolutions = ResolutionClaims::from_hello(&hello);
        Claims {
            hello,
            kinds,
            is_reference,
            resolutions,
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
        match check(client, claims, v) {
            Ok(Judgement::Exact) => CaseResult::pass(AREA, suite, &v.id, v.rules.clone()),
            Ok(Judgement::Alternative(reading)) => {
                CaseResult::pass(AREA, suite, &v.id, v.rules.clone()).with_message(format!(
                    "answered as the other reading `{reading}` allows (a listed alternative; the kernel does not claim the reference's resolution of it)"
                ))
            }
            Ok(Judgement::Fail(message, failure)) => {
                CaseResult::fail(AREA, suite, &v.id, v.rules.clone(), message, *failure)
            }
            Ok(Judgement::ResolutionDifference(d)) => {
                let ResolutionDifference {
                    message,
                    failure,
                    gaps,
                } = *d;
                let mut r = CaseResult::resolution_difference(
                    AREA,
                    suite,
                    &v.id,
                    v.rules.clone(),
                    message,
                    failure,
                );
                r.resolutions = gaps;
                r
            }
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
    // What the expectation rests on; a resolution difference lists the points it
    // differs on first.
    let mut gaps: Vec<String> = std::mem::take(&mut result.resolutions);
    for g in v.basis.gaps() {
        if !gaps.iter().any(|x| x == g) {
            gaps.push(g.to_owned());
        }
    }
    result = result.with_basis(gaps);
    if claims.is_reference {
        apply_expected_failure(&mut result);
    }
    result.with_duration_ms(started.elapsed().as_millis() as u64)
}

/// How an answer measures up to a vector's expectation and basis.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// The answer is the expected one.
    Exact,
    /// The answer is a listed alternative of this reading, whose open points the kernel
    /// does not claim.
    Alternative(String),
    /// The answer differs only where the expectation rests on resolutions the kernel
    /// does not claim.
    ResolutionDifference(Box<ResolutionDifference>),
    /// The answer differs elsewhere: the message and the first such difference.
    Fail(String, Box<Failure>),
}

/// A difference confined to the pointers of unclaimed resolutions.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolutionDifference {
    /// "differs from the reference's resolution of GAP-12
    /// (docs/decisions/0001-fold-shapes.md) at /state/sequence", one clause per point.
    pub message: String,
    /// The values at the first differing pointer.
    pub failure: Failure,
    /// The GAP ids the answer differs on.
    pub gaps: Vec<String>,
}

/// At most this many differing pointers are named in one message.
pub const POINTERS_NAMED_MAX: usize = 8;

/// Judges `actual` (in the shape [`judged_part`] gives the vector's expected answer)
/// against the vector's expectation, its alternatives and its basis, for a kernel with
/// `claims`. `what` says what was compared, for a failure's message.
pub fn judge(v: &Vector, claims: &ResolutionClaims, actual: &Value, what: &str) -> Judgement {
    judge_answer(
        v.kind,
        &v.expected,
        &v.basis,
        &v.alternatives,
        claims,
        actual,
        what,
    )
}

/// [`judge`] over the parts of a vector: an expected answer with its basis and
/// alternatives (a committed vector's, or one measured now against the other readings,
/// [`crate::readings::measure`]).
pub fn judge_answer(
    kind: Kind,
    expected: &Value,
    basis: &crate::basis::Basis,
    alternatives: &[crate::basis::Alternative],
    claims: &ResolutionClaims,
    actual: &Value,
    what: &str,
) -> Judgement {
    let want = judged_part(kind, expected);
    if canonical_string(&want) == canonical_string(actual) {
        return Judgement::Exact;
    }
    let unclaimed = |gap: &str| !claims.claims(gap);
    // The answers this kernel may give instead: the expected one, then each
    // alternative of a reading whose points it does not claim (with what that answer
    // itself rests on).
    let mut candidates: Vec<(Option<&str>, Value, Vec<&crate::basis::Resolution>)> =
        vec![(None, want.clone(), basis.resolutions.iter().collect())];
    for a in alternatives {
        if a.gaps.iter().all(|g| unclaimed(g)) {
            let other = judged_part(kind, &a.expected);
            if canonical_string(&other) == canonical_string(actual) {
                return Judgement::Alternative(a.reading.clone());
            }
            candidates.push((
                Some(a.reading.as_str()),
                other,
                a.resolutions.iter().chain(&basis.resolutions).collect(),
            ));
        }
    }
    for (_, candidate, resolutions) in &candidates {
        let diffs = crate::readings::differing_pointers(candidate, actual, &[]);
        let open: Vec<&&crate::basis::Resolution> =
            resolutions.iter().filter(|r| unclaimed(&r.gap)).collect();
        let explained = |d: &String| {
            open.iter()
                .find(|r| r.paths.iter().any(|p| covers(p, d)))
                .copied()
        };
        if diffs.is_empty() || !diffs.iter().all(|d| explained(d).is_some()) {
            continue;
        }
        let mut per_gap: Vec<(&crate::basis::Resolution, Vec<&str>)> = Vec::new();
        for d in &diffs {
            let Some(r) = explained(d) else { continue };
            match per_gap.iter_mut().find(|(x, _)| x.gap == r.gap) {
                Some((_, list)) => list.push(d),
                None => per_gap.push((r, vec![d])),
            }
        }
        let clauses: Vec<String> = per_gap
            .iter()
            .map(|(r, list)| {
                format!(
                    "differs from the reference's resolution of {} ({}) at {}",
                    r.gap,
                    r.decision,
                    name_pointers(list)
                )
            })
            .collect();
        return Judgement::ResolutionDifference(Box::new(ResolutionDifference {
            message: format!(
                "{}; the kernel does not claim {} in hello (neither a failure nor a pass)",
                clauses.join("; "),
                per_gap
                    .iter()
                    .map(|(r, _)| r.gap.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            failure: failure_at(candidate, actual, &diffs[0]),
            gaps: per_gap.iter().map(|(r, _)| r.gap.clone()).collect(),
        }));
    }
    // A failure: name the first difference no unclaimed resolution explains (the real
    // cause), and every differing pointer up to a count.
    let diffs = crate::readings::differing_pointers(&want, actual, &[]);
    let open: Vec<&crate::basis::Resolution> = basis
        .resolutions
        .iter()
        .filter(|r| unclaimed(&r.gap))
        .collect();
    let unexplained: Vec<&str> = diffs
        .iter()
        .map(String::as_str)
        .filter(|d| !open.iter().any(|r| r.paths.iter().any(|p| covers(p, d))))
        .collect();
    let first = unexplained
        .first()
        .copied()
        .or(diffs.first().map(String::as_str))
        .unwrap_or("");
    let mut message = what.to_owned();
    if diffs.len() > 1 {
        let all: Vec<&str> = diffs.iter().map(String::as_str).collect();
        message.push_str(&format!(" (differs at {})", name_pointers(&all)));
    }
    if !open.is_empty() && unexplained.len() < diffs.len() {
        message.push_str(&format!(
            "; not every difference is where the vector rests on {} (unclaimed): the one at {} is not",
            open.iter().map(|r| r.gap.as_str()).collect::<Vec<_>>().join(", "),
            if first.is_empty() { "(root)" } else { first }
        ));
    }
    Judgement::Fail(message, Box::new(failure_at(&want, actual, first)))
}

fn name_pointers(list: &[&str]) -> String {
    let shown: Vec<&str> = list
        .iter()
        .take(POINTERS_NAMED_MAX)
        .map(|p| if p.is_empty() { "(root)" } else { p })
        .collect();
    let mut out = shown.join(", ");
    if list.len() > POINTERS_NAMED_MAX {
        out.push_str(&format!(" and {} more", list.len() - POINTERS_NAMED_MAX));
    }
    out
}

/// The failure at `path`: the two values there (a missing key reads as null) and the
/// event index when the pointer goes through `/events/N` or `/log/N` (below the
/// judged part's first level).
fn failure_at(expected: &Value, actual: &Value, path: &str) -> Failure {
    let at = |v: &Value| v.pointer(path).cloned().unwrap_or(Value::Null);
    let mut f = Failure::values(at(expected), at(actual)).with_path(path.to_owned());
    let parts: Vec<&str> = path.split('/').skip(1).collect();
    for w in parts.windows(2) {
        if let ("events" | "log", n) = (w[0], w[1]) {
            if let Ok(i) = n.parse::<u64>() {
                f = f.with_event_index(i);
                break;
            }
        }
    }
    f
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
    run_set_within(
        client,
        vectors,
        &loom_report::FailureBudget::unlimited(),
        on_result,
    )
}

/// [`run_set`] that stops sending vectors once `budget` is spent (`--fail-fast`,
/// `--max-fail N`): each vector not sent is a skip saying why, never left out.
pub fn run_set_within(
    client: &mut dyn KernelClient,
    vectors: &[Vector],
    budget: &loom_report::FailureBudget,
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
        if budget.exhausted() {
            let r = budget.not_run(AREA, v.kind.as_str(), &v.id, v.rules.iter().cloned());
            on_result(&r);
            out.push(r);
            continue;
        }
        client.begin_case(&v.id);
        let r = run_vector(client, &claims, v);
        budget.record(&r);
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

/// The kernel's answer to a vector's requests in the shape [`judged_part`] gives the
/// expected one, judged by the vector's basis; for a fold, the every-k restores are
/// then held against the kernel's own accepted answer (SNAP-01).
fn check(client: &mut dyn KernelClient, claims: &Claims, v: &Vector) -> Result<Judgement, Outcome> {
    let (actual, what) = match v.kind {
        Kind::Fold => {
            let _: FoldInput = decode(&v.input, &v.id, "input").map_err(|e| bad_vector(v, e))?;
            let _: FoldExpected =
                decode(&v.expected, &v.id, "expected").map_err(|e| bad_vector(v, e))?;
            let answer = call_input(client, v)?;
            (
                json!({"state": state_of(&answer)?}),
                "fold(events) differs from the expected state",
            )
        }
        Kind::Normalize => normalize_answer(client, v)?,
        Kind::Digest => (call_input(client, v)?, "digest answer differs"),
        Kind::Ingress => (
            strip_message(call_input(client, v)?),
            "ingress answer differs",
        ),
        Kind::Emit => (
            strip_message(call_input(client, v)?),
            "emit validation answer differs",
        ),
        Kind::Runtime => {
            let actual = call_input(client, v)?;
            (
                crate::scrub::scrub_answer(&actual).map_err(Outcome::Bad)?,
                "runtime scenario log differs",
            )
        }
    };
    let judgement = judge(v, &claims.resolutions, &actual, what);
    if v.kind == Kind::Fold && !matches!(judgement, Judgement::Fail(..)) {
        check_every_k(client, v, &actual["state"])?;
    }
    Ok(judgement)
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

/// fold(snapshot at every k, tail) against the kernel's own accepted `state` (the
/// expected one, an alternative or a resolution difference): SNAP-01.
fn check_every_k(client: &mut dyn KernelClient, v: &Vector, state: &Value) -> Result<(), Outcome> {
    let input: FoldInput = decode(&v.input, &v.id, "input").map_err(|e| bad_vector(v, e))?;
    let expected: FoldExpected =
        decode(&v.expected, &v.id, "expected").map_err(|e| bad_vector(v, e))?;
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
        if let Err(Outcome::Fail(_, failure)) = compare(state, state_of(&restored)?, "") {
            return Err(Outcome::Fail(
                format!("fold(snapshot at event {k}, tail) differs from fold(events) (SNAP-01)"),
                Box::new(failure.with_event_index(k as u64)),
            ));
        }
    }
    Ok(())
}

/// `normalizeSnapshot(snapshot)` and `foldFrom(snapshot, tail)`, as
/// `{normalized, restored}`.
fn normalize_answer(
    client: &mut dyn KernelClient,
    v: &Vector,
) -> Result<(Value, &'static str), Outcome> {
    let input: NormalizeInput = decode(&v.input, &v.id, "input").map_err(|e| bad_vector(v, e))?;
    let expected: NormalizeExpected =
        decode(&v.expected, &v.id, "expected").map_err(|e| bad_vector(v, e))?;
    let snapshot = serde_json::to_value(&input.snapshot).unwrap_or(Value::Null);
    let normalized = client.call("normalizeSnapshot", &json!({ "snapshot": &snapshot }))?;
    let normalized = state_of(&normalized)?.clone();
    let restored = client.call(
        "foldFrom",
        &json!({"snapshot": &snapshot, "events": &input.tail}),
    )?;
    let restored = state_of(&restored)?.clone();
    let what = if canonical_string(&expected.normalized) != canonical_string(&normalized) {
        "normalizeSnapshot(snapshot) differs"
    } else {
        "foldFrom(snapshot, tail) differs"
    };
    Ok((
        json!({"normalized": normalized, "restored": restored}),
        what,
    ))
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
