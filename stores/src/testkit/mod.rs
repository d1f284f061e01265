//! The behaviour cases every SPI implementation must pass: the seeds of the conformance
//! kits.
//!
//! Each case is a public `async fn` taking `&impl EventStore` (or another SPI trait) and
//! returning a [`CaseResult`]: `Ok(Outcome::Pass)`, `Ok(Outcome::SkipNotClaimed(method))`
//! when the store does not claim an optional method the case needs (SPI-02), or
//! `Err(Failure)` saying what differed. Cases never panic, create their own uniquely
//! named executions (so several cases can share one store), and need no executor: the
//! only concurrency they use is [`join_all`], which polls futures in one task.
//!
//! Names carry the rule id they prove (`spi_09_...`, `place_05_...`); reference-defined
//! behaviour without a rule carries the GAP id (`gap_19_...`) or `ref_`.
//!
//! To run a kit as `#[test]`s, use the macros ([`event_store_kit!`](crate::event_store_kit)
//! and friends) with a factory `|case: &'static str| async { Some(store) }`; returning
//! `None` skips every case (e.g. no database configured). The generated tests use
//! `#[tokio::test]`, so the calling crate needs `tokio` with `rt` and `macros`.

pub mod archive_store;
pub mod branch_registry;
pub mod dispatcher;
pub mod event_store;
pub mod snapshot_store;
pub mod timer_store;

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use serde_json::{json, Map, Value};

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::spi::{Capabilities, SpiMethod, StoreError};
use loom_kernel::versions::SemVer;

/// How a case ended, when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The behaviour matched.
    Pass,
    /// The case needs an optional method the store does not claim (SPI-02).
    SkipNotClaimed(&'static str),
}

/// What differed, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure(pub String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The result of one case.
pub type CaseResult = Result<Outcome, Failure>;

/// Fails the enclosing case with a formatted message unless the condition holds.
#[macro_export]
#[doc(hidden)]
macro_rules! __ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::testkit::Failure(format!($($fmt)+)));
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
                return Ok($crate::testkit::Outcome::SkipNotClaimed($crate::testkit::method_name($method)));
            }
        )+
    };
}
pub(crate) use require_claims;

#[doc(hidden)]
pub fn method_name<M: SpiMethod>(method: M) -> &'static str {
    method.name()
}

/// Unwraps a store answer, or fails the case naming `what`.
pub fn ok<T>(result: Result<T, StoreError>, what: &str) -> Result<T, Failure> {
    result.map_err(|e| Failure(format!("{what}: expected success, got {e}")))
}

/// Expects an error of kind `kind` (its stable name), or fails the case naming `what`.
pub fn err_kind<T: std::fmt::Debug>(
    result: Result<T, StoreError>,
    kind: &str,
    what: &str,
) -> Result<StoreError, Failure> {
    match result {
        Err(e) if e.kind.name() == kind => Ok(e),
        Err(e) => Err(Failure(format!("{what}: expected a {kind} error, got {e}"))),
        Ok(v) => Err(Failure(format!(
            "{what}: expected a {kind} error, got success {v:?}"
        ))),
    }
}

/// Checks a claim: it is self-consistent (SPI-21) and has the kernel constant's major.
pub fn check_capabilities<M: SpiMethod>(
    caps: &Capabilities<M>,
    kernel_version: &str,
) -> CaseResult {
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
    Ok(Outcome::Pass)
}

/// Checks that a probe of an optional method agrees with the claim: a claimed method
/// must not answer `unsupported`, an unclaimed one must (SPI-02).
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
            "{} is not claimed but does not answer unsupported",
            method.name()
        ))),
        _ => Ok(()),
    }
}

/// A deterministic envelope for tests: id `<execution>/<sequence>`, timestamp
/// 1 700 000 000 000 + sequence, and a payload with nested objects, keys out of
/// order and a long key (so key-normalising stores are exercised).
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
        payload,
        metadata: None,
    }
}

/// `n` envelopes of `execution_id` from sequence `from`, tagged with `tag` so two
/// batches at the same sequences differ.
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

/// Turns a case result into a test verdict: panics with the failure, prints a skip.
pub fn assert_case(name: &str, result: CaseResult) {
    match result {
        Ok(Outcome::Pass) => {}
        Ok(Outcome::SkipNotClaimed(method)) => println!("skip-not-claimed: {name} needs {method}"),
        Err(failure) => panic!("{name}: {failure}"),
    }
}

/// Generates one `#[tokio::test]` per listed case of kit module `$module`, plus a test
/// that the list names every case of the module.
#[macro_export]
#[doc(hidden)]
macro_rules! __kit_tests {
    ($module:ident, $factory:expr, [$($case:ident),* $(,)?]) => {
        $(
            #[tokio::test]
            async fn $case() {
                let name = concat!(stringify!($module), "::", stringify!($case));
                let Some(store) = ($factory)(name).await else { return };
                $crate::testkit::assert_case(name, $crate::testkit::$module::$case(&store).await);
            }
        )*

        #[test]
        fn kit_lists_every_case() {
            let listed: &[&str] = &[$(stringify!($case)),*];
            assert_eq!(listed, $crate::testkit::$module::CASES, "the kit macro and the module's CASES differ");
        }
    };
}
