//! # The exploration campaign: model-based differential testing of any store
//!
//! `loom conform --store S --explore` lands here. Random sequences of SPI calls
//! ([`ops`]) are applied to the store under test and to the in-memory reference stores
//! (the model), and every answer, error kind and error fact is compared. Some steps
//! are concurrent clients ([`Op::Together`]): their calls run at once on the store under
//! test, and the answers must be those of *some* order of them on the model (a
//! linearizability check over the few permutations). The first difference is a
//! divergence; proptest shrinks the sequence to a minimal one, which is written as a
//! [`ReplayFile`] that `loom conform --replay FILE` runs again and that a store author
//! can commit as a regression.
//!
//! Key design decisions:
//! - **proptest does the generating and the shrinking.** A case is a `Vec<Op>` from
//!   [`ops::case`]; the test closure runs it on a fresh subject and fails on a
//!   divergence, and proptest's own shrinker minimises it. Nothing here shrinks by hand.
//! - **The model mirrors the claims.** The in-memory stores are built claiming exactly
//!   the optional methods the store under test claims, so an unclaimed method is
//!   `unsupported` on both sides and a claimed one must behave.
//! - **Store-chosen numbers are compared by rank.** Fence tokens, incarnations,
//!   dispatch and lease ids may be numbered a store's own way; the harness renders them
//!   as their rank after checking they increase (see [`harness`]). Values are compared
//!   with `loom_conformance::case::same_json` (decision 0006).
//! - **Budgets are explicit.** A campaign stops after `cases` cases or `time`, whichever
//!   comes first; the figures it reports (cases, operations, seconds) are what the
//!   performance page quotes.

pub mod harness;
pub mod ops;
pub mod stores;
pub mod subject;

use std::cell::RefCell;
use std::path::Path;
use std::time::{Duration, Instant};

use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use loom_kernel::spi::{ArchiveStore, ContentStore, EventStore, SnapshotStore};
use loom_report::{CaseResult, Failure, Status};
use loom_stores::memory::{
    MemoryArchiveStore, MemoryBranchRegistry, MemoryDispatcher, MemoryEventStore,
    MemorySnapshotStore, MemoryTimerStore,
};
use loom_stores::plugin_memory::{
    MemoryContentStore, MemoryDurableStateStore, MemoryReadModelStore,
};

pub use harness::Side;
pub use ops::{Op, Spis};
pub use subject::{memory_stores, FnFactory, MemoryStores, Stores, Subject, SubjectFactory};

/// The `area` of every campaign result.
pub const EXPLORE_AREA: &str = "explore";
/// The replay file's `format` value.
pub const REPLAY_FORMAT: &str = "loom-explore-replay";
/// The replay file format version.
pub const REPLAY_VERSION: u32 = 1;
/// Cases proptest runs per chunk of a timed campaign (each chunk has its own seed,
/// derived from the campaign seed and the chunk number).
pub const CHUNK_CASES: u32 = 16;
/// Most shrinking steps proptest takes on a divergence.
pub const SHRINK_ITERS_MAX: u32 = 4_096;

/// How long and from where a campaign runs.
#[derive(Debug, Clone)]
pub struct ExploreOptions {
    /// Stop after this many cases (`None`: only the time limit).
    pub cases: Option<u64>,
    /// Stop after this long (`None`: only the case limit).
    pub time: Option<Duration>,
    /// The campaign seed; the same seed and store give the same cases.
    pub seed: u64,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            cases: Some(256),
            time: None,
            seed: 0,
        }
    }
}

/// The first difference between the store under test and the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Divergence {
    /// The rule the differing operation is evidence for.
    pub rule: String,
    /// The index of the operation in the case.
    pub step: usize,
    /// The operation.
    pub op: Op,
    /// What the model (the reference) answered.
    pub expected: Value,
    /// What the store under test answered.
    pub actual: Value,
    /// `timeout` or `crash` when the store under test's answer was its adapter hanging
    /// or failing rather than an answer (then the case is not shrunk: each re-run would
    /// cost a time limit or a restart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// True when the divergence did not happen again on the shrunk case (nor on the case
    /// as found): the store answers differently from run to run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unrepeatable: bool,
}

impl Divergence {
    /// True when the store's answer is a `backend` error: a crash or a fault rather
    /// than a wrong answer.
    pub fn is_backend_error(&self) -> bool {
        self.actual.get("error").and_then(Value::as_str) == Some("backend")
    }
}

/// A replayable case: the minimal operations that diverged, and what was seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayFile {
    /// Always [`REPLAY_FORMAT`].
    pub format: String,
    /// Always [`REPLAY_VERSION`] for this reader.
    pub version: u32,
    /// The store the divergence was found on (informational).
    pub store: String,
    /// The campaign seed that found it.
    pub seed: u64,
    /// The divergence as found (informational; a replay recomputes it).
    pub found: Option<Divergence>,
    /// The operations, run in order against a fresh store.
    pub ops: Vec<Op>,
}

impl ReplayFile {
    /// Reads and checks a replay file.
    pub fn read(path: &Path) -> Result<ReplayFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let file: ReplayFile = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a replay file: {e}", path.display()))?;
        if file.format != REPLAY_FORMAT || file.version != REPLAY_VERSION {
            return Err(format!(
                "{}: format {:?} version {}, this reader takes {REPLAY_FORMAT:?} version {REPLAY_VERSION}",
                path.display(),
                file.format,
                file.version
            ));
        }
        Ok(file)
    }

    /// Writes the file as pretty JSON.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// What a campaign (or a replay) found.
#[derive(Debug, Clone)]
pub struct ExploreOutcome {
    /// Cases run (shrinking steps not counted).
    pub cases: u64,
    /// Operations applied to the store under test, shrinking included.
    pub ops: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// The minimal divergence, if one was found.
    pub divergence: Option<Divergence>,
    /// The shrunk case, ready to write, if a divergence was found.
    pub replay: Option<ReplayFile>,
    /// A harness error (the store could not be set up), if any.
    pub error: Option<String>,
}

impl ExploreOutcome {
    /// Operations per second of wall time.
    pub fn ops_per_second(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The campaign as one report row: `pass` with the budget spent, `fail` naming the
    /// rule, the step and both answers, or `error`.
    pub fn to_case_result(&self, case_id: &str, explored: &[&str]) -> CaseResult {
        let budget = format!(
            "{} cases, {} operations in {:.1} s",
            self.cases,
            self.ops,
            self.elapsed.as_secs_f64()
        );
        let result = if let Some(e) = &self.error {
            CaseResult::error(
                EXPLORE_AREA,
                "store",
                case_id,
                explored.iter().copied(),
                e.clone(),
            )
        } else if let Some(d) = &self.divergence {
            let op = serde_json::to_string(&d.op).unwrap_or_default();
            let replayed = self.replay.as_ref().map_or(0, |r| r.ops.len());
            let adapter_words = || {
                d.actual
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| d.actual.to_string())
            };
            let message = match (d.fault.as_deref(), d.unrepeatable) {
                (Some("timeout"), _) => format!(
                    "timeout at step {} ({op}): {} (after {budget}; not shrunk, the replay file holds the {replayed} operations up to it)",
                    d.step,
                    adapter_words()
                ),
                (Some(_), _) => format!(
                    "the adapter failed at step {} ({op}): {} (after {budget}; not shrunk, the replay file holds the {replayed} operations up to it)",
                    d.step,
                    adapter_words()
                ),
                (None, true) => format!(
                    "step {} ({op}) diverged from {}: the reference answered {}, the store {}; but it did not happen again on its shrunk case nor on the case as found, so the store answers differently from run to run (after {budget}; the replay file holds the case as found, {replayed} operations)",
                    d.step, d.rule, d.expected, d.actual
                ),
                (None, false) => format!(
                    "step {} ({op}) breaks {}: the reference answered {}, the store {} (after {budget}; {replayed} operations after shrinking)",
                    d.step, d.rule, d.expected, d.actual
                ),
            };
            let status = if d.fault.as_deref() == Some("timeout") {
                Status::Timeout
            } else if d.is_backend_error() || d.unrepeatable {
                Status::Error
            } else {
                Status::Fail
            };
            let mut failure = Failure::values(d.expected.clone(), d.actual.clone());
            failure.event_index = Some(d.step as u64);
            failure.diff = self
                .replay
                .as_ref()
                .and_then(|r| serde_json::to_string(&r.ops).ok());
            CaseResult::new(EXPLORE_AREA, "store", case_id, [d.rule.clone()], status)
                .with_message(message)
                .with_failure(failure)
        } else {
            CaseResult::pass(EXPLORE_AREA, "store", case_id, explored.iter().copied())
                .with_message(format!("no divergence: {budget}"))
        };
        result.with_duration_ms(self.elapsed.as_millis() as u64)
    }
}

/// The SPIs `sub` implements.
pub fn spis_of<S: Subject>(sub: &S) -> Spis {
    Spis {
        events: sub.events().is_some(),
        snapshots: sub.snapshots().is_some(),
        archive: sub.archive().is_some(),
        content: sub.content().is_some(),
        state: sub.state().is_some(),
        models: sub.models().is_some(),
        dispatcher: sub.dispatcher().is_some(),
        timers: sub.timers().is_some(),
        branches: sub.branches().is_some(),
    }
}

/// The rule ids a campaign over `spis` is evidence for.
pub fn explored_rules(spis: Spis) -> Vec<&'static str> {
    let mut rules = Vec::new();
    if spis.events {
        rules.extend([
            "SPI-23", "SPI-03", "SPI-04", "SPI-05", "SPI-06", "SPI-07", "SPI-08", "SPI-09",
            "SPI-13", "SPI-14", "PLACE-05",
        ]);
    }
    if spis.snapshots {
        rules.extend(["SPI-15", "SPI-16", "SPI-17"]);
    }
    if spis.archive {
        rules.extend(["SPI-18", "SPI-19"]);
    }
    if spis.content || spis.state || spis.models {
        rules.push("SPI-20");
    }
    if spis.dispatcher {
        rules.extend(["PLACE-02", "PLACE-04", "PLACE-07"]);
    }
    if spis.timers {
        rules.push("GAP-25");
    }
    if spis.branches {
        rules.push("GAP-19");
    }
    rules
}

/// The model for `sub`: the in-memory stores claiming exactly what `sub` claims, with
/// the same lease duration.
fn model_for<S: Subject>(sub: &S, lease_ms: i64) -> Result<MemoryStores, String> {
    let dispatcher = match sub.dispatcher() {
        Some(_) if lease_ms > 0 => Some(
            MemoryDispatcher::with_lease_ms(lease_ms)
                .map_err(|e| format!("the store's lease duration {lease_ms} ms: {e}"))?,
        ),
        Some(_) => Some(MemoryDispatcher::new()),
        None => None,
    };
    Ok(Stores {
        events: sub.events().map(|e| {
            MemoryEventStore::with_clock(std::sync::Arc::new(loom_stores::SystemClock))
                .with_methods(EventStore::capabilities(e).methods)
        }),
        snapshots: sub.snapshots().map(|s| {
            MemorySnapshotStore::new().with_methods(SnapshotStore::capabilities(s).methods)
        }),
        archive: sub
            .archive()
            .map(|a| MemoryArchiveStore::new().with_methods(ArchiveStore::capabilities(a).methods)),
        content: sub
            .content()
            .map(|c| MemoryContentStore::new().with_methods(ContentStore::capabilities(c).methods)),
        state: sub.state().map(|_| MemoryDurableStateStore::new()),
        models: sub.models().map(|_| MemoryReadModelStore::new()),
        dispatcher,
        timers: sub.timers().map(|_| MemoryTimerStore::new()),
        branches: sub.branches().map(|_| MemoryBranchRegistry::new()),
    })
}

/// One step of the model's history: a single operation, or a concurrent group in the
/// order that matched the store under test.
#[derive(Debug, Clone)]
enum Step {
    Single(usize, Op),
    Group(usize, Vec<Op>, Vec<usize>),
}

/// A fresh model brought to the state after `history`.
async fn replay_model(
    template: &MemoryStores,
    lease_ms: i64,
    history: &[Step],
) -> Result<(MemoryStores, Side), String> {
    let model = model_for(template, lease_ms)?;
    let mut side = Side::new();
    harness::probe_lease(&model, &mut side).await?;
    for step in history {
        match step {
            Step::Single(tag, op) => {
                harness::apply(&model, &mut side, op, *tag).await;
            }
            Step::Group(tag, ops, order) => {
                let mut calls = Vec::new();
                for op in ops {
                    calls.push(harness::prepare_racing(&model, &side, op, *tag).await);
                }
                for i in order {
                    let a = harness::run_racing(&model, &side, &calls[*i]).await;
                    harness::record_racing(&mut side, &calls[*i], &a);
                }
            }
        }
    }
    Ok((model, side))
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut all = vec![vec![]];
    for _ in 0..n {
        let mut next = Vec::new();
        for p in &all {
            for i in 0..n {
                if !p.contains(&i) {
                    let mut q = p.clone();
                    q.push(i);
                    next.push(q);
                }
            }
        }
        all = next;
    }
    all
}

/// Runs `ops` on a fresh subject from `factory` and on the model, step by step.
/// `Ok(n)` is the number of operations run without a divergence.
pub async fn check_case<F: SubjectFactory>(
    factory: &F,
    ops: &[Op],
) -> Result<Result<u64, Divergence>, String> {
    let sub = factory.fresh().await?;
    let mut side = Side::new();
    harness::probe_lease(&sub, &mut side).await?;
    let template = model_for(&sub, side.lease_ms)?;
    let mut model = model_for(&sub, side.lease_ms)?;
    let mut model_side = Side::new();
    harness::probe_lease(&model, &mut model_side).await?;
    let mut history: Vec<Step> = Vec::new();
    let mut run = 0u64;
    for (step, op) in ops.iter().enumerate() {
        run += 1;
        if let Op::Together { ops: group } = op {
            let mut calls = Vec::new();
            for g in group {
                calls.push(harness::prepare_racing(&sub, &side, g, step).await);
            }
            let futures: Vec<_> = calls
                .iter()
                .map(|c| Box::pin(harness::run_racing(&sub, &side, c)))
                .collect();
            let actual = loom_conformance::case::join_all(futures).await;
            for (c, a) in calls.iter().zip(&actual) {
                harness::record_racing(&mut side, c, a);
            }
            let mut matched = None;
            let mut first_expected = None;
            for order in permutations(group.len()) {
                let mut candidate = history.clone();
                candidate.push(Step::Group(step, group.clone(), order.clone()));
                let (m, s) = replay_model(&template, side.lease_ms, &history).await?;
                let mut s = s;
                let mut expected = vec![Value::Null; group.len()];
                let mut mcalls = Vec::new();
                for g in group {
                    mcalls.push(harness::prepare_racing(&m, &s, g, step).await);
                }
                for i in &order {
                    let a = harness::run_racing(&m, &s, &mcalls[*i]).await;
                    harness::record_racing(&mut s, &mcalls[*i], &a);
                    expected[*i] = a;
                }
                let same = expected
                    .iter()
                    .zip(&actual)
                    .all(|(e, a)| loom_conformance::case::same_json(e, a));
                if first_expected.is_none() {
                    first_expected = Some(Value::Array(expected));
                }
                if same {
                    matched = Some((candidate, m, s));
                    break;
                }
            }
            match matched {
                Some((h, m, s)) => {
                    history = h;
                    model = m;
                    model_side = s;
                }
                None => {
                    let actual = Value::Array(actual);
                    return Ok(Err(Divergence {
                        rule: op.rule().to_string(),
                        step,
                        op: op.clone(),
                        expected: json_or_null(first_expected),
                        fault: harness::fault_in(&actual),
                        actual,
                        unrepeatable: false,
                    }));
                }
            }
            continue;
        }
        let actual = harness::apply(&sub, &mut side, op, step).await;
        let expected = harness::apply(&model, &mut model_side, op, step).await;
        history.push(Step::Single(step, op.clone()));
        if !loom_conformance::case::same_json(&expected, &actual) {
            return Ok(Err(Divergence {
                rule: op.rule().to_string(),
                step,
                op: op.clone(),
                expected,
                fault: harness::fault_in(&actual),
                actual,
                unrepeatable: false,
            }));
        }
    }
    Ok(Ok(run))
}

fn json_or_null(v: Option<Value>) -> Value {
    v.unwrap_or(Value::Null)
}

fn chunk_rng(seed: u64, chunk: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&chunk.to_le_bytes());
    bytes[16..24].copy_from_slice(b"loomxplr");
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// Runs a campaign against the subjects `factory` makes, on the current thread (it
/// builds its own tokio runtime). `store` names the store in the replay file.
pub fn explore<F: SubjectFactory>(
    factory: &F,
    store: &str,
    opts: &ExploreOptions,
) -> ExploreOutcome {
    let started = Instant::now();
    let mut outcome = ExploreOutcome {
        cases: 0,
        ops: 0,
        elapsed: Duration::ZERO,
        divergence: None,
        replay: None,
        error: None,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            outcome.error = Some(format!("cannot build a tokio runtime: {e}"));
            return outcome;
        }
    };
    let spis = match runtime.block_on(factory.fresh()) {
        Ok(sub) => spis_of(&sub),
        Err(e) => {
            outcome.error = Some(format!("cannot set up the store: {e}"));
            return outcome;
        }
    };
    let strategy = ops::case(spis);
    let ops_run = RefCell::new(0u64);
    let cases_run = RefCell::new(0u64);
    let harness_error: RefCell<Option<String>> = RefCell::new(None);
    // The first divergence and the case it happened in, before any shrinking.
    let first_found: RefCell<Option<(Divergence, Vec<Op>)>> = RefCell::new(None);
    let deadline = opts.time.map(|t| started + t);
    let mut chunk = 0u64;
    loop {
        let done = *cases_run.borrow();
        if opts.cases.is_some_and(|n| done >= n) || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let this_chunk = opts.cases.map_or(CHUNK_CASES, |n| {
            (n - done).min(u64::from(CHUNK_CASES)) as u32
        });
        let config = Config {
            cases: this_chunk,
            failure_persistence: None,
            max_shrink_iters: SHRINK_ITERS_MAX,
            max_global_rejects: 0,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, chunk_rng(opts.seed, chunk));
        let shrinking = RefCell::new(false);
        let result = runner.run(&strategy, |ops| {
            if !*shrinking.borrow() {
                *cases_run.borrow_mut() += 1;
            }
            if first_found
                .borrow()
                .as_ref()
                .is_some_and(|(d, _)| d.fault.is_some())
            {
                // An adapter fault is not shrunk: every re-run would cost a time limit
                // or a restart. Fail at once so proptest's shrinking ends quickly.
                return Err(TestCaseError::fail("an adapter fault"));
            }
            match runtime.block_on(check_case(factory, &ops)) {
                Ok(Ok(n)) => {
                    *ops_run.borrow_mut() += n;
                    Ok(())
                }
                Ok(Err(d)) => {
                    *ops_run.borrow_mut() += d.step as u64 + 1;
                    *shrinking.borrow_mut() = true;
                    if first_found.borrow().is_none() {
                        *first_found.borrow_mut() = Some((d.clone(), ops.clone()));
                    }
                    Err(TestCaseError::fail(format!(
                        "{} at step {}",
                        d.rule, d.step
                    )))
                }
                Err(e) => {
                    *harness_error.borrow_mut() = Some(e.clone());
                    *shrinking.borrow_mut() = true;
                    Err(TestCaseError::fail(e))
                }
            }
        });
        chunk += 1;
        match result {
            Ok(()) => {}
            Err(TestError::Fail(_, minimal)) => {
                if let Some(e) = harness_error.borrow().clone() {
                    outcome.error = Some(e);
                    break;
                }
                let replay_of = |d: &Divergence, ops: &[Op]| ReplayFile {
                    format: REPLAY_FORMAT.to_string(),
                    version: REPLAY_VERSION,
                    store: store.to_string(),
                    seed: opts.seed,
                    found: Some(d.clone()),
                    ops: ops[..=d.step.min(ops.len().saturating_sub(1))].to_vec(),
                };
                let first = first_found.borrow().clone();
                if let Some((d, ops)) = first.as_ref().filter(|(d, _)| d.fault.is_some()) {
                    outcome.replay = Some(replay_of(d, ops));
                    outcome.divergence = Some(d.clone());
                    break;
                }
                match runtime.block_on(check_case(factory, &minimal)) {
                    Ok(Err(d)) => {
                        outcome.replay = Some(replay_of(&d, &minimal));
                        outcome.divergence = Some(d);
                    }
                    Ok(Ok(_)) => match first {
                        Some((mut d, ops)) => {
                            // Once more on the case as found: a divergence that comes
                            // back there is still reported (and replayable) as found.
                            let again = runtime.block_on(check_case(factory, &ops));
                            if let Ok(Err(d2)) = again {
                                outcome.replay = Some(replay_of(&d2, &ops));
                                outcome.divergence = Some(d2);
                            } else {
                                d.unrepeatable = true;
                                outcome.replay = Some(replay_of(&d, &ops));
                                outcome.divergence = Some(d);
                            }
                        }
                        None => {
                            outcome.error = Some(
                                "a divergence did not happen again on its shrunk case, and the case as found was not kept: the store answers differently from run to run".into(),
                            );
                        }
                    },
                    Err(e) => outcome.error = Some(e),
                }
                break;
            }
            Err(TestError::Abort(why)) => {
                outcome.error = Some(format!("the campaign stopped: {why}"));
                break;
            }
        }
    }
    outcome.cases = *cases_run.borrow();
    outcome.ops = *ops_run.borrow();
    outcome.elapsed = started.elapsed();
    outcome
}

/// Runs a replay file's operations once against a fresh subject from `factory`.
pub fn replay<F: SubjectFactory>(factory: &F, file: &ReplayFile) -> ExploreOutcome {
    let started = Instant::now();
    let mut outcome = ExploreOutcome {
        cases: 1,
        ops: 0,
        elapsed: Duration::ZERO,
        divergence: None,
        replay: None,
        error: None,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            outcome.error = Some(format!("cannot build a tokio runtime: {e}"));
            return outcome;
        }
    };
    match runtime.block_on(check_case(factory, &file.ops)) {
        Ok(Ok(n)) => outcome.ops = n,
        Ok(Err(d)) => {
            outcome.ops = d.step as u64 + 1;
            outcome.replay = Some(file.clone());
            outcome.divergence = Some(d);
        }
        Err(e) => outcome.error = Some(e),
    }
    outcome.elapsed = started.elapsed();
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A store whose first instance holds a stream left over from "an earlier run":
    /// the first case that touches `e0` diverges, and no later run does. The campaign
    /// must say so, naming the step and both answers, and keep the case as found.
    #[test]
    fn a_divergence_that_does_not_repeat_names_its_step_and_both_answers() {
        let made = AtomicU32::new(0);
        let factory = FnFactory(|| {
            // Instance 0 only tells the campaign which SPIs there are.
            let first = made.fetch_add(1, Ordering::SeqCst) == 1;
            async move {
                let stores = memory_stores();
                if first {
                    let e = stores.events.as_ref().expect("events");
                    let ev = loom_conformance::case::events("e0", 0, 1, "stale");
                    e.append("e0", 0, ev, None)
                        .await
                        .map_err(|e| e.to_string())?;
                }
                Ok::<_, String>(stores)
            }
        });
        let outcome = explore(
            &factory,
            "flaky",
            &ExploreOptions {
                cases: Some(64),
                time: None,
                seed: 3,
            },
        );
        let d = outcome
            .divergence
            .clone()
            .expect("the leftover stream diverges");
        assert!(d.unrepeatable, "{d:?}");
        assert!(outcome.replay.is_some());
        let row = outcome.to_case_result("explore", &[]);
        assert_eq!(row.status, Status::Error);
        let message = row.message.unwrap_or_default();
        assert!(message.contains(&format!("step {}", d.step)), "{message}");
        assert!(message.contains("differently from run to run"), "{message}");
        assert!(message.contains(&d.expected.to_string()), "{message}");
        assert!(message.contains(&d.actual.to_string()), "{message}");
    }
}
