//! The vocabulary every kit case is written in: the [`Verdict`] a case returns, the
//! [`Ctx`] that hands it fresh execution ids, the [`CaseInfo`] row that names its rules,
//! the [`Kit`] trait a kit module implements, and the small assertion helpers.
//!
//! A case is a plain `async fn(&Store, &Ctx) -> Verdict`. It never panics: every
//! mismatch is a [`Failure`] in words, every store error it did not expect is turned into
//! one by [`ok`]. It needs no executor of its own: the only concurrency it uses is
//! [`join_all`], which polls several futures in the caller's task.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use serde_json::{json, Map, Value};

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::spi::{Capabilities, SpiMethod, StoreError, StoreErrorKind};
use loom_kernel::versions::SemVer;

/// How a case ended, when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The behaviour matched.
    Pass,
    /// The case needs an optional method the store does not claim (SPI-02).
    SkipNotClaimed(&'static str),
}

/// What differed, in words. The runner prefixes the case id, its rules and the
/// namespace, so the message itself names the execution id and the sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure(pub String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The result of one case.
pub type Verdict = Result<Outcome, Failure>;

/// One row of a kit's case table: what the case is called, which rules it is evidence
/// for, the SPI version it was written against and the optional methods it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaseInfo {
    /// Stable id: the case function's name. It carries the rule token
    /// (`spi_07_...`), so `cargo test` output names the rule.
    pub id: &'static str,
    /// Rule ids the case proves, e.g. `"SPI-07"`.
    pub rules: &'static [&'static str],
    /// The lowest SPI version whose contract the case checks.
    pub spi_version: &'static str,
    /// What the case needs the store to claim, in the words a skipped case reports:
    /// optional methods by spec name (`"readRange"`), and `"SPI x.y.z"` for a claimed
    /// version of at least x.y.z. Without one of them the case is `skip-not-claimed`.
    /// This list decides the skip before the case runs (the test macros must know it
    /// when they list their tests); the meta-tests check it against what each case
    /// concludes by itself.
    pub needs: &'static [&'static str],
}

/// What a store claims, as far as the case tables' [`needs`](CaseInfo::needs) ask: its
/// SPI version and the optional methods it implements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Claims {
    /// The claimed SPI version; `None` for a kit whose stores claim none.
    pub spi_version: Option<String>,
    /// The claimed optional methods, by spec name.
    pub methods: BTreeSet<&'static str>,
}

impl Claims {
    /// The claims of a capabilities answer.
    pub fn of<M: SpiMethod>(caps: &Capabilities<M>) -> Claims {
        Claims {
            spi_version: Some(caps.spi_version.clone()),
            methods: caps.method_names().into_iter().collect(),
        }
    }

    /// These claims and `other`'s methods (a kit over several stores); the version
    /// stays this one's.
    pub fn with(mut self, other: Claims) -> Claims {
        self.methods.extend(other.methods);
        self
    }

    /// True when the claims meet one need of a case table.
    pub fn meets(&self, need: &str) -> bool {
        match need.strip_prefix("SPI ") {
            Some(min) => self
                .spi_version
                .as_deref()
                .is_some_and(|claimed| claims_at_least(claimed, min)),
            None => self.methods.contains(need),
        }
    }

    /// The first need of `case` these claims do not meet: the case is then
    /// `skip-not-claimed` for want of it.
    pub fn unmet(&self, case: &CaseInfo) -> Option<&'static str> {
        case.needs.iter().copied().find(|need| !self.meets(need))
    }
}

/// The claims of a store whose SPI has no optional methods.
pub fn no_claims<S>(_store: &S) -> Claims {
    Claims::default()
}

/// What a case is given besides the store: a namespace that makes every execution id
/// it creates fresh, so cases sharing one store cannot see each other's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ctx {
    namespace: String,
}

impl Ctx {
    /// A context whose ids all start with `namespace`.
    pub fn new(namespace: impl Into<String>) -> Ctx {
        Ctx {
            namespace: namespace.into(),
        }
    }

    /// The fresh id for `name` in this case: `<namespace><name>`.
    pub fn id(&self, name: &str) -> String {
        format!("{}{name}", self.namespace)
    }

    /// The namespace prefix.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
}

/// A kit: a table of cases over one store type `S`.
pub trait Kit<S> {
    /// The kit's name as reports show it (the `suite`), e.g. `"event-store"`.
    const NAME: &'static str;
    /// True when the cases need a store holding no other case's data (the dispatcher's
    /// queue and the timer store's `due` list are global, so namespacing ids is not
    /// enough). The runner then asks the factory for a new store per case.
    const FRESH_STORE: bool;
    /// Every case, in run order.
    fn cases() -> &'static [CaseInfo];
    /// What `store` claims, for deciding which cases are `skip-not-claimed` before any
    /// runs ([`Claims::unmet`]).
    fn claims(store: &S) -> Claims;
    /// Runs the case `id`; `None` when the kit has no such case.
    fn run_case(id: &str, store: &S, cx: &Ctx) -> impl Future<Output = Option<Verdict>>;
}

/// Builds a kit module's case table and its [`Kit`] implementation from one list, so
/// the table, the dispatch and the rule ids cannot drift apart.
#[macro_export]
#[doc(hidden)]
macro_rules! __kit_cases {
    (
        kit: $kit:ident, name: $name:literal, bound: $($bound:ident)::+, fresh: $fresh:expr, claims: $claims:path,
        cases: [ $( $case:ident => [$($rule:literal),* $(,)?], $ver:literal, [$($need:literal),* $(,)?] );* $(;)? ]
    ) => {
        /// Every case of this kit, in run order, with the rules it proves.
        pub const CASES: &[$crate::CaseInfo] = &[
            $( $crate::CaseInfo { id: stringify!($case), rules: &[$($rule),*], spi_version: $ver, needs: &[$($need),*] } ),*
        ];

        /// This kit, for [`run_kit`]($crate::run_kit).
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $kit;

        impl<S: $($bound)::+> $crate::Kit<S> for $kit {
            const NAME: &'static str = $name;
            const FRESH_STORE: bool = $fresh;
            fn cases() -> &'static [$crate::CaseInfo] {
                CASES
            }
            fn claims(store: &S) -> $crate::case::Claims {
                $claims(store)
            }
            async fn run_case(id: &str, store: &S, cx: &$crate::Ctx) -> Option<$crate::Verdict> {
                match id {
                    $( stringify!($case) => Some($case(store, cx).await), )*
                    _ => None,
                }
            }
        }
    };
}

/// Fails the enclosing case with a formatted message unless the condition holds.
#[macro_export]
#[doc(hidden)]
macro_rules! __ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::Failure(format!($($fmt)+)));
        }
    };
}
pub(crate) use crate::__ensure as ensure;

/// Returns `SkipNotClaimed` from the enclosing case unless every method is claimed.
macro_rules! require_claims {
    ($caps:expr, $($method:expr),+ $(,)?) => {
        let caps = $caps;
        $(
            if !caps.claims($method) {
                return Ok($crate::Outcome::SkipNotClaimed($crate::case::method_name($method)));
            }
        )+
    };
}
pub(crate) use require_claims;

/// Returns `SkipNotClaimed` from the enclosing case unless the claimed SPI version is at
/// least `$version` (a rule that binds only from that version, e.g. SPI-07 from 2.3.0).
macro_rules! require_version {
    ($caps:expr, $version:literal) => {
        if !$crate::case::claims_at_least(&$caps.spi_version, $version) {
            return Ok($crate::Outcome::SkipNotClaimed(concat!("SPI ", $version)));
        }
    };
}
pub(crate) use require_version;

/// True when `claimed` parses and is at least `min`.
pub fn claims_at_least(claimed: &str, min: &str) -> bool {
    match (SemVer::parse(claimed), SemVer::parse(min)) {
        (Ok(c), Ok(m)) => c >= m,
        _ => false,
    }
}

#[doc(hidden)]
pub fn method_name<M: SpiMethod>(method: M) -> &'static str {
    method.name()
}

/// A store error as the store protocol writes it, e.g.
/// `{"actualNext":2,"expectedNext":0,"kind":"conflict","message":"…"}`. Messages quote
/// errors this way, so a store author reads the JSON an adapter writes
/// (docs/protocols/store.md), not Rust's `Debug` text.
pub fn error_json(e: &StoreError) -> String {
    crate::stdio::encode_error(e).to_string()
}

/// An error kind with its facts as the store protocol writes them, without a message:
/// `{"current":3,"kind":"fenced","presented":null}`.
pub fn kind_json(kind: &StoreErrorKind) -> String {
    let mut v = crate::stdio::encode_error(&StoreError::new(kind.clone(), ""));
    if let Some(map) = v.as_object_mut() {
        map.remove("message");
    }
    v.to_string()
}

/// A call's outcome for a message: `success <value>` or `error <protocol JSON>`.
pub fn outcome_text<T: std::fmt::Debug>(result: &Result<T, StoreError>) -> String {
    match result {
        Ok(v) => format!("success {v:?}"),
        Err(e) => format!("error {}", error_json(e)),
    }
}

/// Unwraps a store answer, or fails the case naming `what`.
pub fn ok<T>(result: Result<T, StoreError>, what: &str) -> Result<T, Failure> {
    result.map_err(|e| Failure(format!("{what}: expected success, got {}", error_json(&e))))
}

/// Expects an error of kind `kind` (its stable name), or fails the case naming `what`.
pub fn err_kind<T: std::fmt::Debug>(
    result: Result<T, StoreError>,
    kind: &str,
    what: &str,
) -> Result<StoreError, Failure> {
    match result {
        Err(e) if e.kind.name() == kind => Ok(e),
        Err(e) => Err(Failure(format!(
            "{what}: expected a {kind} error, got {}",
            error_json(&e)
        ))),
        Ok(v) => Err(Failure(format!(
            "{what}: expected a {kind} error, got success {v:?}"
        ))),
    }
}

/// Checks a claim: it is self-consistent (SPI-21: no method newer than the claimed
/// version) and has the kernel constant's major.
pub fn check_capabilities<M: SpiMethod>(caps: &Capabilities<M>, kernel_version: &str) -> Verdict {
    if let Err(problems) = caps.check_consistent() {
        return Err(Failure(format!(
            "inconsistent capabilities: {}",
            problems.join("; ")
        )));
    }
    let claimed = SemVer::parse(&caps.spi_version).map_err(Failure)?;
    let kernel = SemVer::parse(kernel_version).map_err(Failure)?;
    ensure!(
        claimed.major == kernel.major,
        "claimed SPI {claimed} does not share a major version with the kernel's {kernel}"
    );
    ensure!(
        claimed <= kernel,
        "claimed SPI {claimed} is newer than the kernel's {kernel}"
    );
    Ok(Outcome::Pass)
}

/// Checks the version a seam without optional methods declares (the dispatcher, the
/// timer store, the branch registry: a bare `spiVersion`): it parses as semver, shares
/// the major of the kernel's constant and is not newer (SPI-01, SPI-21).
pub fn check_declared_version(what: &str, declared: &str, kernel_version: &str) -> Verdict {
    let claimed = SemVer::parse(declared)
        .map_err(|e| Failure(format!("{what} declares SPI version {declared:?}: {e}")))?;
    let kernel = SemVer::parse(kernel_version).map_err(Failure)?;
    ensure!(
        claimed.major == kernel.major && claimed <= kernel,
        "{what} declares SPI {claimed}; the kernel's is {kernel} (same major, not newer)"
    );
    Ok(Outcome::Pass)
}

/// Checks that a probe of an optional method agrees with the claim, both ways: a
/// claimed method must not answer `unsupported`, an unclaimed one must (SPI-02).
pub fn check_probe<T, M: SpiMethod>(
    caps: &Capabilities<M>,
    method: M,
    result: &Result<T, StoreError>,
) -> Result<(), Failure> {
    let unsupported = matches!(result, Err(e) if e.is_unsupported());
    match (caps.claims(method), unsupported) {
        (true, true) => Err(Failure(format!(
            "{} is claimed but answers unsupported",
            method.name()
        ))),
        (false, false) => Err(Failure(format!(
            "{} is not claimed but does not answer unsupported (it answered {})",
            method.name(),
            match result {
                Ok(_) => "success".to_string(),
                Err(e) => e.to_string(),
            }
        ))),
        (false, true) => match result {
            // The refusal names the method it refuses, in the spec's spelling.
            Err(StoreError {
                kind: loom_kernel::spi::StoreErrorKind::Unsupported { method: named },
                ..
            }) if named != method.name() => Err(Failure(format!(
                "{} answers unsupported naming the method {named:?}",
                method.name()
            ))),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// A required method must never answer `unsupported`: a store that claims an SPI
/// version has its required methods (SPI-01, SPI-21).
pub fn check_required<T>(method: &str, result: &Result<T, StoreError>) -> Result<(), Failure> {
    match result {
        Err(e) if e.is_unsupported() => Err(Failure(format!(
            "required method {method} answers unsupported"
        ))),
        _ => Ok(()),
    }
}

/// A deterministic envelope for tests: id `<execution>/<sequence>`, timestamp
/// 1 700 000 000 000 + sequence.
pub fn envelope(
    execution_id: &str,
    sequence: u64,
    event_type: &str,
    payload: Value,
) -> EventEnvelope {
    EventEnvelope {
        id: format!("{execution_id}/{sequence}"),
        workflow_id: "kit-flow".to_string(),
        execution_id: execution_id.to_string(),
        event_type: event_type.to_string(),
        sequence,
        timestamp_ms: 1_700_000_000_000 + sequence as i64,
        payload: payload.into(),
        metadata: None,
    }
}

/// `n` envelopes of `execution_id` from sequence `from`, tagged with `tag` so two
/// batches at the same sequences differ. Payloads nest objects with keys out of order
/// and a long key, so key-normalising stores are exercised.
pub fn events(execution_id: &str, from: u64, n: u64, tag: &str) -> Vec<EventEnvelope> {
    (from..from + n)
        .map(|seq| {
            let mut e = envelope(
                execution_id,
                seq,
                "STEP_COMPLETED",
                json!({ "stepId": format!("s{seq}"), "output": { "zeta": seq, "alpha": [1, "two", null], "tag": tag, "a_much_longer_key": { "b": true, "a": false } } }),
            );
            if seq % 2 == 0 {
                let mut meta = Map::new();
                meta.insert("flowEmit".to_string(), json!(format!("{seq:016x}")));
                meta.insert("kernel".to_string(), json!(true));
                e.metadata = Some(meta);
            }
            e
        })
        .collect()
}

/// The sequences of a list of envelopes.
pub fn sequences(events: &[EventEnvelope]) -> Vec<u64> {
    events.iter().map(|e| e.sequence).collect()
}

/// Polls every future in one task until all are ready; results in input order. Enough
/// concurrency to interleave the awaits of several store calls without an executor.
pub async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pinned: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut results: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(move |cx| {
        let mut pending = false;
        for (future, slot) in pinned.iter_mut().zip(results.iter_mut()) {
            if slot.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(v) => *slot = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(results.iter_mut().filter_map(Option::take).collect())
        }
    })
    .await
}

/// Polls two futures of different types in one task until both are ready.
pub async fn join2<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (Box::pin(a), Box::pin(b));
    let (mut ra, mut rb) = (None, None);
    std::future::poll_fn(move |cx| {
        if ra.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                ra = x;
                rb = y;
                Poll::Pending
            }
        }
    })
    .await
}

/// Polls `future` at most `polls` times with a waker that does nothing, then drops it:
/// what a caller that crashes mid-call leaves behind. `Some` when it finished.
pub fn poll_then_drop<F: Future>(future: F, polls: usize) -> Option<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    let mut future = Box::pin(future);
    for _ in 0..polls {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return Some(v);
        }
    }
    None
}

/// Whether two JSON values are the same value as a store must keep it: strings, keys,
/// booleans and nulls exactly; arrays element by element; objects key by key, in any
/// order; numbers by their mathematical value, so an integer must come back exactly
/// (`2^53 + 1` is not `2^53`) and a float must come back as the same double. Two
/// spellings canonical JSON does not distinguish are accepted (decision 0006): `-0`
/// may read back as `0`, and an integral float (`1.0`) as the integer (`1`), which is
/// all a JavaScript or `jsonb` store can keep.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_json(v, w))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

fn same_number(x: &serde_json::Number, y: &serde_json::Number) -> bool {
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a == b;
    }
    match (x.is_f64(), y.is_f64()) {
        (true, true) => x.as_f64() == y.as_f64(),
        // Both integers, one only fits i64 (negative), the other only u64: different.
        (false, false) => false,
        _ => {
            let (float, int) = if x.is_f64() { (x, y) } else { (y, x) };
            let Some(f) = float.as_f64() else {
                return false;
            };
            let i: i128 = match (int.as_i64(), int.as_u64()) {
                (Some(i), _) => i128::from(i),
                (None, Some(u)) => i128::from(u),
                _ => return false,
            };
            // Exactly integral and within the range where `as` is exact.
            f.fract() == 0.0 && f.abs() < 1.8e19 && f as i128 == i
        }
    }
}

/// Two envelopes are the same when every field is equal and payload and metadata are
/// [`same_json`].
pub fn same_envelope(a: &EventEnvelope, b: &EventEnvelope) -> bool {
    a.id == b.id
        && a.workflow_id == b.workflow_id
        && a.execution_id == b.execution_id
        && a.event_type == b.event_type
        && a.sequence == b.sequence
        && a.timestamp_ms == b.timestamp_ms
        && same_json(&a.payload, &b.payload)
        && match (&a.metadata, &b.metadata) {
            (None, None) => true,
            (Some(x), Some(y)) => same_json(&Value::Object(x.clone()), &Value::Object(y.clone())),
            _ => false,
        }
}

/// The first index where two envelope lists differ under [`same_envelope`], with both
/// sides in words, or `None` when they are the same.
pub fn first_envelope_difference(got: &[EventEnvelope], want: &[EventEnvelope]) -> Option<String> {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if !same_envelope(g, w) {
            return Some(format!(
                "envelope {i} (sequence {}) reads back as {} but was written as {}",
                w.sequence,
                g.to_value(),
                w.to_value()
            ));
        }
    }
    if got.len() != want.len() {
        return Some(format!(
            "{} envelopes read back, {} were written (sequences {:?} vs {:?})",
            got.len(),
            want.len(),
            sequences(got),
            sequences(want)
        ));
    }
    None
}

/// A payload of every kind of JSON value a store must keep: integers at and beyond
/// 2^53 and at the i64/u64 ends, negative zero, floats that need all 17 digits, the
/// smallest subnormal, an integral float, non-ASCII and astral text, escapes, empty
/// containers and `null` members.
pub fn fidelity_payload(tag: &str) -> Value {
    json!({
        "tag": tag,
        "u64Max": u64::MAX,
        "i64Min": i64::MIN,
        "i64Max": i64::MAX,
        "beyond2p53": 9_007_199_254_740_993u64,
        "negBeyond2p53": -9_007_199_254_740_993i64,
        "negativeZero": -0.0,
        "floats": [0.1, 0.30000000000000004, 1e-7, 1.5e300, 5e-324, -2.5, 1.0, 123_456_789.123_456_78, 1e21],
        "text": "h\u{e9}llo w\u{f6}rld \u{2603} \u{65e5}\u{672c}\u{8a9e}",
        "astral": "\u{1f600} \u{1d11e} \u{10ffff}",
        "escapes": "quote\" backslash\\ slash/ nl\n tab\t bell\u{7} del\u{7f} ls\u{2028} \u{1f}",
        "empty": {},
        "emptyArray": [],
        "nothing": null,
        "bools": [true, false],
        "nested": { "z": { "a": [[], {}, [null]] }, "\u{e9}": 1, "A": 2, "a": 3 }
    })
}

/// An id of exactly `bytes` UTF-8 bytes: the case's namespace, `name`, then padding
/// with `pad` (a one- or two-byte char) and ASCII `x` to hit the length exactly.
pub fn id_of_bytes(cx: &Ctx, name: &str, bytes: usize, pad: char) -> String {
    let mut id = cx.id(name);
    while id.len() + pad.len_utf8() <= bytes {
        id.push(pad);
    }
    while id.len() < bytes {
        id.push('x');
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages quote store errors as the protocol's JSON, facts included, never as
    /// Rust's `Debug` text (`Err(StoreError { kind: Conflict { … } })`).
    #[test]
    fn messages_quote_store_errors_as_protocol_json() {
        let conflict = StoreErrorKind::Conflict {
            expected_next: 0,
            actual_next: 2,
        };
        let facts: Value = serde_json::from_str(&kind_json(&conflict)).unwrap();
        assert_eq!(
            facts,
            json!({"kind": "conflict", "expectedNext": 0, "actualNext": 2})
        );
        let e = StoreError::new(StoreErrorKind::Backend, "disk full");
        let said: Value = serde_json::from_str(&error_json(&e)).unwrap();
        assert_eq!(said, json!({"kind": "backend", "message": "disk full"}));
        let failures = [
            ok::<u64>(Err(e.clone()), "append").unwrap_err().0,
            err_kind::<u64>(Err(e.clone()), "conflict", "stale append")
                .unwrap_err()
                .0,
            outcome_text::<u64>(&Err(e)),
        ];
        for text in failures {
            assert!(text.contains(r#""kind":"backend""#), "{text}");
            assert!(
                !text.contains("StoreError") && !text.contains("Backend"),
                "{text}"
            );
        }
    }
}
