//! `loom vectors fuzz`: a differential campaign against a kernel under test.
//!
//! The property library's generators (`loom-props`: event logs of every grammar family
//! with their targeted corruption, hostile resumes and emits, wide JSON values) build
//! cases from bytes; each case goes to the kernel under test over the kernel protocol
//! (most requests respelled as raw text, [`respell`]) and to the reference kernel
//! in-process, through the same method table the vectors use. Five checks take turns:
//!
//! - `fold`: the kernel's `fold(events)` against the reference fold;
//! - `restore`: on the kernel itself, `foldFrom(fold(events[..=k]), events[k+1..])`
//!   against its own `fold(events)` at one to three k (SNAP-01);
//! - `digest`: canonical JSON, fnv1a64, emit digests and flow hashes;
//! - `ingress`: the gate's decision and the events it appends;
//! - `emit`: userspace emit validation.
//!
//! proptest drives each batch (its strategies over the case bytes, its shrinking): a
//! divergence is shrunk to the smallest bytes that still diverge, and the case they
//! build becomes a vector file in the vector format, its expected answer computed by
//! the reference kernel, which `loom vectors run --extra DIR` runs next time (it fails
//! again until the kernel is fixed). Each finding names the rule
//! ([`attribute`]), the event index (the first prefix whose fold differs, or the
//! snapshot point), the JSON path and both answers, as a
//! [`loom_report::CaseResult`].
//!
//! A check the kernel does not claim in `hello` is skipped. A kernel that stops
//! answering (its process restarts exhausted) ends the campaign with an error result.

pub mod attribute;
pub mod cases;
pub mod respell;

pub use cases::{Case, Check};

use crate::format::{Kind, Vector};
use crate::generate::Scenario;
use crate::protocol::Answer;
use crate::reference::ReferenceKernel;
use crate::runner::{difference, strip_message, CallError, Claims, KernelClient};
use loom_kernel::digest::sha256_hex;
use loom_kernel::{canonical_string, EVENT_SCHEMA_VERSION};
use loom_report::{CaseResult, Failure};
use proptest::prelude::any;
use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The report area campaign results carry.
pub const AREA: &str = "fuzz";
/// The most bytes one case is built from.
pub const CASE_BYTES_MAX: usize = 1024;
/// Cases per proptest batch: the campaign checks its budget between batches.
pub const BATCH_CASES: u32 = 32;
/// Logs up to this many events are located prefix by prefix; longer ones (the long-log
/// family) are bisected first.
pub const LOCATE_LINEAR_EVENTS_MAX: usize = 64;
/// The most shrink steps of one divergence that fold a long log: each folds thousands of
/// events on both kernels, and without this bound one long finding cost a minute.
pub const LONG_LOG_SHRINK_STEPS_MAX: u32 = 8;
/// The most shrink steps spent on one divergence, by default.
pub const SHRINK_ITERS_MAX: u32 = 1024;

/// How long and how hard to fuzz.
#[derive(Debug, Clone, PartialEq)]
pub struct FuzzConfig {
    /// Seeds every batch: the same seed, checks and budget in cases replay the same
    /// campaign against the same kernel.
    pub seed: u64,
    /// Stop after this many cases (all checks together).
    pub cases: Option<u64>,
    /// Each check runs this many cases and then leaves the rotation (`loom check`'s
    /// budget: every check sends cases, whatever the others need).
    pub cases_per_check: Option<u64>,
    /// Stop after this many milliseconds (checked between batches).
    pub time_ms: Option<u64>,
    /// The checks to run, taking turns batch by batch.
    pub checks: Vec<Check>,
    /// The most shrink steps spent on one divergence.
    pub shrink_iters_max: u32,
    /// Stop the whole campaign after this many findings (each check stops at its first
    /// anyway); `None` runs the other checks on to the budget.
    pub stop_after_findings: Option<usize>,
}

impl Default for FuzzConfig {
    fn default() -> Self {
        FuzzConfig {
            seed: 0,
            cases: None,
            cases_per_check: None,
            time_ms: Some(60_000),
            checks: Check::ALL.to_vec(),
            shrink_iters_max: SHRINK_ITERS_MAX,
            stop_after_findings: None,
        }
    }
}

/// Where a kernel's answer differs from what it should be.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// The rule broken (the most specific one).
    pub rule: &'static str,
    /// Other rules the same answer breaks (e.g. INGRESS-15 when a refusal appends).
    pub also: Vec<&'static str>,
    /// The event index (first differing prefix, or the snapshot point).
    pub index: Option<u64>,
    /// The first differing JSON pointer in the answer.
    pub path: Option<String>,
    /// The answer the kernel should have given there.
    pub expected: Value,
    /// The answer it gave.
    pub actual: Value,
    /// What was compared.
    pub message: String,
}

/// A shrunk divergence and the vector that reproduces it.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The check that found it.
    pub check: Check,
    /// Where and how it diverges (for the shrunk case).
    pub divergence: Divergence,
    /// The vector for `loom vectors run --extra` (`None` only when the reference kernel
    /// cannot answer the shrunk case, which the campaign then reports without a file).
    pub vector: Option<Vector>,
    /// The case number (within its check) that first diverged.
    pub found_at_case: u64,
}

/// What a campaign did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FuzzReport {
    /// Cases run, all checks together (shrink steps not counted).
    pub cases: u64,
    /// Cases run per check.
    pub cases_by_check: BTreeMap<Check, u64>,
    /// Cases actually sent to the kernel per check (a generated input the reference
    /// cannot build a request from is not sent).
    pub sent_by_check: BTreeMap<Check, u64>,
    /// Shrink steps spent.
    pub shrink_steps: u64,
    /// Wall time.
    pub elapsed_ms: u64,
    /// One finding per check at most: the campaign stops a check at its first.
    pub findings: Vec<Finding>,
    /// Checks not run, with the reason (not claimed by the kernel).
    pub skipped: Vec<(Check, String)>,
    /// Why the campaign stopped early, if it did (the kernel stopped answering).
    pub aborted: Option<String>,
    /// The campaign stopped at [`FuzzConfig::stop_after_findings`] (`--fail-fast`,
    /// `--max-fail`): the checks without a finding did not run to their budget.
    pub stopped_at_limit: bool,
    /// Per check, the cases whose answer differed from the reference's only where it
    /// rests on resolutions of open points the kernel does not claim (measured against
    /// the other readings, [`crate::readings::measure`]), and those points. Not
    /// divergences: the campaign goes on.
    pub resolution_cases: BTreeMap<Check, (u64, BTreeSet<String>)>,
}

impl FuzzReport {
    /// Cases per second over the whole campaign.
    pub fn cases_per_second(&self) -> f64 {
        if self.elapsed_ms == 0 {
            return 0.0;
        }
        self.cases as f64 * 1000.0 / self.elapsed_ms as f64
    }

    /// The campaign as results of the shared report model: a failure per finding
    /// (rule, event index, path, both answers), a pass per check that found nothing,
    /// a skip per unclaimed check, an error when the campaign was cut short.
    pub fn results(&self, config: &FuzzConfig) -> Vec<CaseResult> {
        let mut out = Vec::new();
        for check in &config.checks {
            let n = self.cases_by_check.get(check).copied().unwrap_or(0);
            if let Some((_, why)) = self.skipped.iter().find(|(c, _)| c == check) {
                out.push(CaseResult::skip_not_claimed(
                    AREA,
                    check.as_str(),
                    format!("fuzz-{}", check.as_str()),
                    check
                        .rules()
                        .iter()
                        .map(|r| (*r).to_owned())
                        .collect::<Vec<_>>(),
                    why.clone(),
                ));
                continue;
            }
            let found = self.findings.iter().find(|f| f.check == *check);
            let finished = config.cases_per_check.is_some_and(|per| n >= per);
            if self.stopped_at_limit && found.is_none() && !finished {
                // Cut short by the failure limit: not run to its budget, so neither a
                // pass nor the error of a check that sent nothing.
                let budget =
                    loom_report::FailureBudget::new(config.stop_after_findings.map(|m| m as u64));
                let mut r = budget.not_run(
                    AREA,
                    check.as_str(),
                    &format!("fuzz-{}", check.as_str()),
                    check.rules().iter().map(|r| (*r).to_owned()),
                );
                r.message = Some(format!(
                    "{} after {n} cases (seed {})",
                    r.message.unwrap_or_default(),
                    config.seed
                ));
                out.push(r);
                continue;
            }
            match found {
                Some(f) => {
                    let d = &f.divergence;
                    let mut failure = Failure::values(d.expected.clone(), d.actual.clone());
                    if let Some(p) = &d.path {
                        failure = failure.with_path(p.clone());
                    }
                    if let Some(i) = d.index {
                        failure = failure.with_event_index(i);
                    }
                    out.push(CaseResult::fail(
                        AREA,
                        check.as_str(),
                        f.case_id(),
                        d.rules()
                            .iter()
                            .map(|r| (*r).to_owned())
                            .collect::<Vec<_>>(),
                        format!(
                            "{} (case {} of seed {}, shrunk; replay with --extra)",
                            d.message, f.found_at_case, config.seed
                        ),
                        failure,
                    ));
                }
                None if self.aborted.is_none()
                    && self.sent_by_check.get(check).copied().unwrap_or(0) == 0 =>
                {
                    out.push(CaseResult::error(
                        AREA,
                        check.as_str(),
                        format!("fuzz-{}", check.as_str()),
                        check
                            .rules()
                            .iter()
                            .map(|r| (*r).to_owned())
                            .collect::<Vec<_>>(),
                        format!(
                            "the {} check sent no case to the kernel ({n} generated, seed {}): a check that sent nothing is no evidence; give it a budget (--fuzz-cases, --cases-per-check, --time)",
                            check.as_str(),
                            config.seed
                        ),
                    ))
                }
                None if self.aborted.is_some() => out.push(CaseResult::error(
                    AREA,
                    check.as_str(),
                    format!("fuzz-{}", check.as_str()),
                    check
                        .rules()
                        .iter()
                        .map(|r| (*r).to_owned())
                        .collect::<Vec<_>>(),
                    self.aborted.clone().unwrap_or_default(),
                )),
                None => {
                    let rules: Vec<String> =
                        check.rules().iter().map(|r| (*r).to_owned()).collect();
                    let id = format!("fuzz-{}", check.as_str());
                    match self.resolution_cases.get(check) {
                        // Every case differed only at unclaimed resolutions: nothing
                        // was judged on the spec alone, so this is not a pass.
                        Some((m, gaps)) if *m >= n => out.push(
                            CaseResult::resolution_difference(
                                AREA,
                                check.as_str(),
                                id,
                                rules,
                                format!(
                                    "{n} cases, seed {}: every one differs from the reference's resolution of {} (open points the kernel does not claim), none elsewhere",
                                    config.seed,
                                    gaps.iter().cloned().collect::<Vec<_>>().join(", ")
                                ),
                                Failure::default(),
                            )
                            .with_basis(gaps.iter().cloned()),
                        ),
                        Some((m, gaps)) => out.push(
                            CaseResult::pass(AREA, check.as_str(), id, rules).with_message(
                                format!(
                                    "{n} cases, seed {}, no divergence; {m} of them differ only from the reference's resolution of {} (open points the kernel does not claim)",
                                    config.seed,
                                    gaps.iter().cloned().collect::<Vec<_>>().join(", ")
                                ),
                            ),
                        ),
                        None => out.push(
                            CaseResult::pass(AREA, check.as_str(), id, rules).with_message(
                                format!("{n} cases, seed {}, no divergence", config.seed),
                            ),
                        ),
                    }
                }
            }
        }
        out
    }
}

impl Divergence {
    /// Every rule broken, the most specific first.
    pub fn rules(&self) -> Vec<&'static str> {
        let mut out = vec![self.rule];
        out.extend(self.also.iter().copied().filter(|r| *r != self.rule));
        out
    }
}

impl Finding {
    /// The vector's id, or a name for the finding when it has none.
    pub fn case_id(&self) -> String {
        self.vector.as_ref().map_or_else(
            || {
                format!(
                    "fuzz-{}-{}",
                    self.check.as_str(),
                    self.divergence.rule.to_ascii_lowercase()
                )
            },
            |v| v.id.clone(),
        )
    }
}

/// Progress, reported after every batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Cases so far.
    pub cases: u64,
    /// Findings so far.
    pub findings: usize,
    /// Milliseconds so far.
    pub elapsed_ms: u64,
}

fn claimed(claims: &Claims, check: Check) -> bool {
    match check {
        Check::Fold | Check::Restore => claims.claims(Kind::Fold),
        Check::Digest => claims.claims(Kind::Digest),
        Check::Ingress => claims.claims(Kind::Ingress),
        Check::Emit => claims.claims(Kind::Emit),
    }
}

fn batch_rng(seed: u64, batch: u64) -> TestRng {
    let digest = sha256_hex(format!("loom-vectors-fuzz:{seed}:{batch}").as_bytes());
    let mut bytes = [0u8; 32];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(&digest[2 * i..2 * i + 2], 16).unwrap_or(0);
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// Runs a campaign against `client` (its `hello` decides which checks run).
pub fn run_campaign(
    client: &mut dyn KernelClient,
    config: &FuzzConfig,
    on_progress: &mut dyn FnMut(&Progress),
) -> FuzzReport {
    let started = Instant::now();
    let mut report = FuzzReport::default();
    let claims = match client.call(
        "hello",
        &json!({"protocolVersion": crate::protocol::PROTOCOL_VERSION}),
    ) {
        Ok(h) => Claims::from_hello(h),
        Err(e) => {
            report.aborted = Some(format!("hello failed: {e}"));
            return report;
        }
    };
    let mut active: Vec<Check> = Vec::new();
    for check in &config.checks {
        if claimed(&claims, *check) {
            active.push(*check);
        } else {
            report.skipped.push((
                *check,
                format!(
                    "the kernel does not claim the vectors `{}` needs",
                    check.as_str()
                ),
            ));
        }
    }
    let client = RefCell::new(client);
    let mut batch = 0u64;
    while !active.is_empty() {
        let elapsed = started.elapsed().as_millis() as u64;
        if config.time_ms.is_some_and(|t| elapsed >= t)
            || config.cases.is_some_and(|n| report.cases >= n)
        {
            break;
        }
        if let Some(per) = config.cases_per_check {
            active.retain(|c| report.cases_by_check.get(c).copied().unwrap_or(0) < per);
            if active.is_empty() {
                break;
            }
        }
        let check = active[(batch as usize) % active.len()];
        let left = |budget: Option<u64>, used: u64| {
            budget.map_or(u32::MAX, |n| {
                u32::try_from(n.saturating_sub(used)).unwrap_or(u32::MAX)
            })
        };
        let cases = BATCH_CASES.min(left(config.cases, report.cases)).min(left(
            config.cases_per_check,
            report.cases_by_check.get(&check).copied().unwrap_or(0),
        ));
        let outcome = run_batch(&client, check, config, batch, cases, &claims.resolutions);
        batch += 1;
        report.cases += outcome.cases;
        *report.cases_by_check.entry(check).or_default() += outcome.cases;
        *report.sent_by_check.entry(check).or_default() += outcome.sent;
        report.shrink_steps += outcome.shrink_steps;
        if outcome.resolution_cases > 0 {
            let slot = report.resolution_cases.entry(check).or_default();
            slot.0 += outcome.resolution_cases;
            slot.1.extend(outcome.resolution_gaps);
        }
        if let Some(why) = outcome.aborted {
            report.aborted = Some(why);
            break;
        }
        if let Some((bytes, divergence)) = outcome.divergence {
            let before = report.cases_by_check.get(&check).copied().unwrap_or(0);
            let found_at = before - outcome.cases + outcome.first_failure_case;
            report
                .findings
                .push(finding(check, &bytes, divergence, config.seed, found_at));
            active.retain(|c| *c != check);
            if config
                .stop_after_findings
                .is_some_and(|n| report.findings.len() >= n)
            {
                report.stopped_at_limit = true;
                break;
            }
        }
        on_progress(&Progress {
            cases: report.cases,
            findings: report.findings.len(),
            elapsed_ms: started.elapsed().as_millis() as u64,
        });
    }
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    report
}

struct BatchOutcome {
    cases: u64,
    sent: u64,
    resolution_cases: u64,
    resolution_gaps: BTreeSet<String>,
    shrink_steps: u64,
    first_failure_case: u64,
    divergence: Option<(Vec<u8>, Divergence)>,
    aborted: Option<String>,
}

fn run_batch(
    client: &RefCell<&mut dyn KernelClient>,
    check: Check,
    fuzz: &FuzzConfig,
    batch: u64,
    cases: u32,
    claims: &crate::basis::ResolutionClaims,
) -> BatchOutcome {
    let seed = fuzz.seed;
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: fuzz.shrink_iters_max,
        fork: false,
        timeout: 0,
        verbose: 0,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(config, batch_rng(seed, batch));
    let strategy = proptest::collection::vec(any::<u8>(), 0..=CASE_BYTES_MAX).boxed();
    let calls = RefCell::new((0u64, 0u64, None::<u64>));
    let last: RefCell<Option<(Vec<u8>, Divergence)>> = RefCell::new(None);
    let broken: RefCell<Option<String>> = RefCell::new(None);
    let crashed: RefCell<Option<(Vec<u8>, Divergence)>> = RefCell::new(None);
    let explained: RefCell<(u64, BTreeSet<String>)> = RefCell::new((0, BTreeSet::new()));
    let sent = RefCell::new(0u64);
    let long_shrinks = RefCell::new(0u32);
    let result = runner.run(&strategy, |bytes: Vec<u8>| {
        {
            let mut c = calls.borrow_mut();
            if c.2.is_none() {
                c.0 += 1;
            } else {
                c.1 += 1;
            }
        }
        if broken.borrow().is_some() || crashed.borrow().is_some() {
            return Ok(());
        }
        let Some(case) = cases::generate(check, &bytes) else {
            return Ok(());
        };
        if calls.borrow().2.is_none() {
            *sent.borrow_mut() += 1;
        } else if events(&case).len() > LOCATE_LINEAR_EVENTS_MAX {
            // A long log costs a hundred short cases to fold: past its own budget of
            // shrink steps a long candidate is passed over unsent, and the smallest
            // failing input found so far is the finding.
            let mut n = long_shrinks.borrow_mut();
            *n += 1;
            if *n > LONG_LOG_SHRINK_STEPS_MAX {
                return Ok(());
            }
        }
        let mut kernel = client.borrow_mut();
        match check_case(&mut **kernel, &case, false) {
            Ok(()) => Ok(()),
            Err(Stop::Broken(why)) => {
                *broken.borrow_mut() = Some(why);
                Ok(())
            }
            Err(Stop::Crashed(d)) => {
                // The input that broke it, as sent: the batch stops here, unshrunk, so
                // the adapter's restarts are left for the other checks.
                let mut c = calls.borrow_mut();
                if c.2.is_none() {
                    c.2 = Some(c.0);
                }
                *crashed.borrow_mut() = Some((bytes, *d));
                Ok(())
            }
            Err(Stop::Diverged(d)) if !claims.all => {
                match resolution_gaps(&case, &d, claims) {
                    Some(gaps) => {
                        // Counted once per generated case, not per shrink step.
                        if calls.borrow().2.is_none() {
                            let mut e = explained.borrow_mut();
                            e.0 += 1;
                            e.1.extend(gaps);
                        }
                        Ok(())
                    }
                    None => {
                        let d = *d;
                        let mut c = calls.borrow_mut();
                        if c.2.is_none() {
                            c.2 = Some(c.0);
                        }
                        let rule = d.rule;
                        *last.borrow_mut() = Some((bytes, d));
                        Err(TestCaseError::fail(rule))
                    }
                }
            }
            Err(Stop::Diverged(d)) => {
                let d = *d;
                let mut c = calls.borrow_mut();
                if c.2.is_none() {
                    c.2 = Some(c.0);
                }
                let rule = d.rule;
                *last.borrow_mut() = Some((bytes, d));
                Err(TestCaseError::fail(rule))
            }
        }
    });
    let (generated, shrink_steps, first) = *calls.borrow();
    let divergence = match (crashed.into_inner(), result) {
        (Some(c), _) => Some(c),
        (None, result) => match result {
            Err(TestError::Fail(_, minimal)) => {
                // The last failing input is the shrinker's minimal one; only now is the
                // divergence located in full (for a fold, the first differing prefix),
                // which shrinking does not need.
                let quick = last
                    .borrow()
                    .clone()
                    .filter(|(b, _)| *b == minimal)
                    .map(|(_, d)| d);
                let detailed = cases::generate(check, &minimal).and_then(|case| {
                    let mut kernel = client.borrow_mut();
                    match check_case(&mut **kernel, &case, true) {
                        Err(Stop::Diverged(d)) => Some(*d),
                        _ => None,
                    }
                });
                detailed.or(quick).map(|d| (minimal, d))
            }
            _ => None,
        },
    };
    let (resolution_cases, resolution_gaps) = explained.into_inner();
    BatchOutcome {
        cases: generated,
        sent: sent.into_inner(),
        resolution_cases,
        resolution_gaps,
        shrink_steps,
        first_failure_case: first.unwrap_or(0),
        divergence,
        aborted: broken.into_inner(),
    }
}

/// Why a case stopped.
enum Stop {
    /// The kernel's answer diverges.
    Diverged(Box<Divergence>),
    /// The kernel stopped answering altogether (restarts exhausted).
    Broken(String),
    /// The adapter crashed, hung or wrote garbage on this input: a finding kept as sent,
    /// not shrunk (every try would restart the adapter and use up its restarts).
    Crashed(Box<Divergence>),
}

/// The open points a divergence rests on, when every difference is where the answer
/// rests on a resolution `claims` does not claim (measured against the other readings
/// of those points, or, for a restore from an overlapping tail, GAP-15 itself); `None`
/// when some difference is the spec's (or the kernel gave no answer).
fn resolution_gaps(
    case: &Case,
    d: &Divergence,
    claims: &crate::basis::ResolutionClaims,
) -> Option<Vec<String>> {
    use crate::runner::Judgement;
    let (kind, actual) = match case.check {
        Check::Restore => {
            return (d.rule == "GAP-15" && !claims.claims("GAP-15"))
                .then(|| vec!["GAP-15".to_owned()]);
        }
        Check::Fold => (Kind::Fold, json!({"state": d.actual})),
        Check::Digest => (Kind::Digest, d.actual.clone()),
        Check::Ingress => (Kind::Ingress, d.actual.clone()),
        Check::Emit => (Kind::Emit, d.actual.clone()),
    };
    let judged = |v: Value| {
        Some(match kind {
            Kind::Fold => json!({"state": state(&v)}),
            _ => strip_message(v),
        })
    };
    let (reference, basis, alternatives) =
        crate::readings::measure(kind, case.method, &case.params, claims, &judged)?;
    match crate::runner::judge_answer(kind, &reference, &basis, &alternatives, claims, &actual, "")
    {
        Judgement::Exact | Judgement::Alternative(_) => Some(Vec::new()),
        Judgement::ResolutionDifference(r) => Some(r.gaps),
        Judgement::Fail(..) => None,
    }
}

fn reference_answer(method: &str, params: &Value) -> Option<Value> {
    match ReferenceKernel::default().handle(method, params) {
        Answer::Result(v) => Some(v),
        _ => None,
    }
}

fn call_case(client: &mut dyn KernelClient, case: &Case) -> Result<Value, CallError> {
    match &case.raw {
        Some(raw) => client.call_raw(case.method, raw),
        None => client.call(case.method, &case.params),
    }
}

/// The rule a failed call breaks, per check (the kernel must answer every request the
/// reference answers).
fn call_rule(check: Check) -> &'static str {
    match check {
        Check::Fold => "FOLD-01",
        Check::Restore => "SNAP-01",
        Check::Digest => "EMIT-02",
        Check::Ingress => "INGRESS-15",
        Check::Emit => "INGRESS-27",
    }
}

fn call_failed(check: Check, e: CallError, expected: &Value) -> Stop {
    if let CallError::Broken(m) = &e {
        if m.contains("not restarting") {
            return Stop::Broken(m.clone());
        }
    }
    let crashed = matches!(e, CallError::Broken(_) | CallError::Timeout(_));
    let d = Box::new(Divergence {
        rule: call_rule(check),
        also: Vec::new(),
        index: None,
        path: None,
        expected: expected.clone(),
        actual: Value::String(e.to_string()),
        message: if crashed {
            format!("the kernel adapter broke on this input (kept as sent, not shrunk): {e}")
        } else {
            format!("the kernel gave no answer where the reference answers: {e}")
        },
    });
    if crashed {
        Stop::Crashed(d)
    } else {
        Stop::Diverged(d)
    }
}

fn state(v: &Value) -> Value {
    v.get("state").cloned().unwrap_or(Value::Null)
}

/// Checks one case against `client`.
fn check_case(client: &mut dyn KernelClient, case: &Case, locate: bool) -> Result<(), Stop> {
    match case.check {
        Check::Fold => check_fold(client, case, locate),
        Check::Restore => check_restore(client, case),
        Check::Digest | Check::Ingress | Check::Emit => {
            let Some(expected) = reference_answer(case.method, &case.params) else {
                return Ok(());
            };
            let expected = strip_message(expected);
            let actual = match call_case(client, case) {
                Ok(a) => strip_message(a),
                Err(e) => return Err(call_failed(case.check, e, &expected)),
            };
            let Some(f) = difference(&expected, &actual) else {
                return Ok(());
            };
            let rules = match case.check {
                Check::Digest => vec![attribute::digest_rule(&case.params, &expected, &actual)],
                Check::Ingress => {
                    let events = crate::reference::envelopes(
                        case.params["log"].as_array().map_or(&[][..], Vec::as_slice),
                    )
                    .unwrap_or_default();
                    let parked = loom_kernel::fold(&events);
                    attribute::ingress_rules(
                        &expected,
                        &actual,
                        parked.parked_gate() == Some(loom_kernel::fold::INDOUBT_GATE),
                    )
                }
                _ => attribute::emit_rules(&case.params, &expected, &actual),
            };
            Err(Stop::Diverged(Box::new(Divergence {
                rule: rules[0],
                also: rules[1..].to_vec(),
                index: None,
                path: f.path.clone(),
                expected,
                actual,
                message: format!("`{}` answers differ from the reference", case.method),
            })))
        }
    }
}

fn events(case: &Case) -> Vec<Value> {
    case.params["events"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn check_fold(client: &mut dyn KernelClient, case: &Case, locate: bool) -> Result<(), Stop> {
    let Some(expected) = reference_answer("fold", &case.params) else {
        return Ok(());
    };
    let expected = state(&expected);
    let actual = match call_case(client, case) {
        Ok(a) => state(&a),
        Err(e) => return Err(call_failed(Check::Fold, e, &expected)),
    };
    if difference(&expected, &actual).is_none() {
        return Ok(());
    }
    if !locate {
        return Err(Stop::Diverged(Box::new(Divergence {
            rule: "FOLD-01",
            also: Vec::new(),
            index: None,
            path: None,
            expected,
            actual,
            message: "fold(events) differs from the reference".into(),
        })));
    }
    // The first prefix that folds differently names the event, and its state the path.
    let evs = events(case);
    let fold_prefix = |client: &mut dyn KernelClient, i: usize| {
        let mut params = json!({"events": &evs[..=i]});
        if let Some(v) = case.params.get("schemaVersion") {
            params["schemaVersion"] = v.clone();
        }
        let want = reference_answer("fold", &params)
            .map(|a| state(&a))
            .unwrap_or(Value::Null);
        let got = match client.call("fold", &params) {
            Ok(a) => state(&a),
            Err(e) => return Err(call_failed(Check::Fold, e, &want)),
        };
        Ok((want, got))
    };
    // A long log is bisected (each prefix of thousands costs a fold of thousands): the
    // prefix found differs and the one before it does not, which is the first that
    // differs whenever a divergence, once there, stays (a cap or counter gone wrong).
    let mut from = 0;
    if evs.len() > LOCATE_LINEAR_EVENTS_MAX {
        let (mut lo, mut hi) = (0usize, evs.len() - 1);
        let (want, got) = fold_prefix(client, hi)?;
        if difference(&want, &got).is_some() {
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let (want, got) = fold_prefix(client, mid)?;
                if difference(&want, &got).is_some() {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            from = lo;
        }
    }
    for i in from..evs.len() {
        let (want, got) = fold_prefix(client, i)?;
        if let Some(f) = difference(&want, &got) {
            let path = f.path.clone().unwrap_or_default();
            let at = |v: &Value| v.pointer(&path).cloned().unwrap_or(Value::Null);
            let mut rule = attribute::fold_rule(&evs[i], &path, &at(&want), &at(&got));
            // A hold that folds differently after the log has made more holds than the
            // cap allows is the cap's (FOLD-43, its scope and overflow GAP-17).
            if evs[i]["eventType"] == "INBOX_QUARANTINED"
                && (path.starts_with("/variables/_quarantined")
                    || path == "/sequence"
                    || path == "/updatedAt")
                && evs[..=i]
                    .iter()
                    .filter(|e| e["eventType"] == "INBOX_QUARANTINED")
                    .count()
                    > loom_kernel::limits::QUARANTINED_ENTRIES_MAX
            {
                rule = "FOLD-43";
            }
            // Folding "as" an older minor must reproduce that minor (the log is the
            // on-disk ABI, its known kinds pinned to the schema version): ABI-11 too.
            let mut also = if case.params.get("schemaVersion").is_some() {
                vec!["ABI-11"]
            } else {
                Vec::new()
            };
            // An envelope with a metadata key the fold does not read must fold as it
            // would without it (ABI-14).
            if attribute::has_unknown_metadata_key(&evs[i]) && rule != "ABI-14" {
                also.push("ABI-14");
            }
            return Err(Stop::Diverged(Box::new(Divergence {
                rule,
                also,
                index: Some(i as u64),
                path: Some(format!("/state{path}")),
                expected: at(&want),
                actual: at(&got),
                message: format!(
                    "fold(events[..={i}]){} differs from the reference after a {} event",
                    case.params
                        .get("schemaVersion")
                        .and_then(Value::as_str)
                        .map(|v| format!(" as {v}"))
                        .unwrap_or_default(),
                    evs[i]["eventType"].as_str().unwrap_or("?")
                ),
            })));
        }
    }
    // Only the whole (raw) request differs: the kernel reads the spelling.
    let f = difference(&expected, &actual);
    Err(Stop::Diverged(Box::new(Divergence {
        rule: "FOLD-01",
        also: Vec::new(),
        index: None,
        path: f.and_then(|f| f.path).map(|p| format!("/state{p}")),
        expected,
        actual,
        message: "the fold of the log as sent (respelled) differs from the fold of the same log as the reference reads it".into(),
    })))
}

fn check_restore(client: &mut dyn KernelClient, case: &Case) -> Result<(), Stop> {
    let evs = events(case);
    let full = match call_case(client, case) {
        Ok(a) => state(&a),
        Err(e) => return Err(call_failed(Check::Restore, e, &Value::Null)),
    };
    for (&k, &from) in case.ks.iter().zip(case.tail_from.iter()) {
        let prefix = match client.call("fold", &json!({"events": &evs[..=k]})) {
            Ok(a) => state(&a),
            Err(e) => return Err(call_failed(Check::Restore, e, &Value::Null)),
        };
        // Some tails start at or before the snapshot's own sequence (a reader re-reading
        // from an earlier cursor): the kernel must fold only what comes after it (GAP-15).
        let params = json!({
            "snapshot": {"schemaVersion": EVENT_SCHEMA_VERSION, "sequence": evs[k]["sequence"], "state": prefix},
            "events": &evs[from..],
        });
        let restored = match client.call("foldFrom", &params) {
            Ok(a) => state(&a),
            Err(e) => return Err(call_failed(Check::Restore, e, &full)),
        };
        if let Some(f) = difference(&full, &restored) {
            let path = f.path.clone().unwrap_or_default();
            let at = |v: &Value| v.pointer(&path).cloned().unwrap_or(Value::Null);
            let overlap = from <= k;
            return Err(Stop::Diverged(Box::new(Divergence {
                rule: if overlap { "GAP-15" } else { "SNAP-01" },
                also: if overlap { vec!["SNAP-01"] } else { Vec::new() },
                index: Some(k as u64),
                path: Some(format!("/state{path}")),
                expected: at(&full),
                actual: at(&restored),
                message: format!(
                    "on the kernel itself, foldFrom(its fold of events[..={k}], events[{from}..]) differs from its fold of every event"
                ),
            })));
        }
    }
    Ok(())
}

/// Rebuilds the case from the shrunk bytes and writes it as a vector whose expected
/// answer is the reference kernel's.
fn finding(check: Check, bytes: &[u8], d: Divergence, seed: u64, found_at: u64) -> Finding {
    let vector = cases::generate(check, bytes).and_then(|case| {
        // The raw text the kernel got, else (if the reference cannot read that) the value.
        vector_for(check, &case, &d, seed, found_at).or_else(|| {
            let plain = Case {
                raw: None,
                ..case.clone()
            };
            vector_for(check, &plain, &d, seed, found_at)
        })
    });
    Finding {
        check,
        divergence: d,
        vector,
        found_at_case: found_at,
    }
}

fn vector_for(
    check: Check,
    case: &Case,
    d: &Divergence,
    seed: u64,
    found_at: u64,
) -> Option<Vector> {
    // A restore that goes wrong only on an overlapping tail is a normalize vector with
    // that tail; any other restore divergence is a fold vector checked at every k.
    let overlap = (check == Check::Restore)
        .then(|| {
            let k = d.index? as usize;
            let i = case.ks.iter().position(|x| *x == k)?;
            let from = *case.tail_from.get(i)?;
            (from <= k).then_some((k, from))
        })
        .flatten();
    let kind = match check {
        Check::Restore if overlap.is_some() => Kind::Normalize,
        Check::Fold | Check::Restore => Kind::Fold,
        Check::Digest => Kind::Digest,
        Check::Ingress => Kind::Ingress,
        Check::Emit => Kind::Emit,
    };
    let text = case
        .raw
        .clone()
        .unwrap_or_else(|| canonical_string(&case.params));
    let hash = &sha256_hex(text.as_bytes())[..12];
    let rule_slug: String = d
        .rule
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    let id = format!(
        "{}-fuzz-{}-{rule_slug}-{hash}",
        kind.as_str(),
        check.as_str()
    );
    let mut rules = d.rules();
    if check == Check::Restore && !rules.contains(&"SNAP-01") {
        rules.push("SNAP-01");
    }
    let description = format!(
        "Found by `loom vectors fuzz` (seed {seed}, {} case {found_at}, shrunk): {}. The expected answer is the reference kernel's.",
        check.as_str(),
        d.message
    );
    let mut s = match overlap {
        Some((k, from)) => {
            let evs = events(case);
            let prefix = reference_answer("fold", &json!({"events": &evs[..=k]}))?;
            let input = json!({
                "snapshot": {"schemaVersion": EVENT_SCHEMA_VERSION, "sequence": evs[k]["sequence"], "state": state(&prefix)},
                "tail": &evs[from..],
            });
            let mut s = Scenario::new(kind, id.clone(), &rules, description, input);
            s.full_log = Some(evs);
            s
        }
        None => {
            let mut s = Scenario::new(kind, id.clone(), &rules, description, case.params.clone());
            s.raw_input = case.raw.clone();
            s
        }
    };
    s.since = EVENT_SCHEMA_VERSION.to_owned();
    // A fold "as" an older minor is checked as that minor only; the every-k restores
    // go through snapshots of the current minor.
    if s.input.get("schemaVersion").is_some() {
        s.every_k = false;
    }
    let (expected, exception) = crate::generate::expected_for(&s).ok()?;
    s.exception = exception;
    // The basis is measured against the other readings, as the simulator's found
    // vectors' is: a found vector may rest on a resolution.
    let vector = crate::generate::found_vector(s, expected).ok()?;
    vector.check("fuzz").ok()?;
    Some(vector)
}

/// Writes each finding's vector under `dir` (`<kind>/<id>.json`, the layout
/// `loom vectors run --extra DIR` reads). Returns the files written.
pub fn write_findings(dir: &Path, findings: &[Finding]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for v in findings.iter().filter_map(|f| f.vector.as_ref()) {
        let path = dir.join(v.kind.as_str()).join(format!("{}.json", v.id));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, v.to_file_text()).map_err(|e| format!("{}: {e}", path.display()))?;
        out.push(path);
    }
    Ok(out)
}
