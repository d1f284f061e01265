//! Runs a kit's cases and turns each [`Verdict`](crate::case::Verdict) into a `loom_report::CaseResult`.
//!
//! Each case gets a fresh namespace (`<run id>.<case index>.`), so its execution ids
//! are new even on a store that outlives the run, a per-case time limit, and a store
//! from the factory. A failure, an error or a timeout in one case is recorded and the
//! next case starts from scratch: nothing a case leaves behind is visible to the next
//! through its ids, and kits whose state is global (dispatcher, timers) get a new store.

use std::future::Future;
use std::time::{Duration, Instant};

use loom_report::{CaseResult, Failure as ReportFailure, Status};

use crate::case::{CaseInfo, Ctx, Kit, Outcome};

/// The `area` every kit result carries.
pub const KITS_AREA: &str = "kits";

/// How long one case may run before it is a `timeout` (in-process stores). The stdio
/// client has its own, shorter per-call limit ([`crate::stdio::CALL_TIMEOUT`]).
pub const CASE_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest namespace prefix a run gives a case, in bytes; execution ids stay far below
/// `ID_BYTES_MAX`.
pub const NAMESPACE_BYTES_MAX: usize = 64;

/// What to run and how.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Run only cases whose id (or `<kit>/<id>`) contains this text.
    pub case_filter: Option<String>,
    /// The per-case time limit.
    pub case_timeout: Duration,
    /// Prefix of every case namespace; distinct per run so ids never repeat across runs
    /// on a persistent store.
    pub run_id: String,
    /// Failures allowed before the run stops (`--fail-fast`, `--max-fail N`), shared by
    /// every kit of the run; a case not run for it is a skip saying so.
    pub budget: loom_report::FailureBudget,
    /// Run at most this many selected cases of each kit (`--smoke`: a quick check that
    /// an adapter speaks the protocol); `None` runs them all.
    pub cases_per_kit: Option<usize>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            case_filter: None,
            case_timeout: CASE_TIMEOUT,
            run_id: fresh_run_id(),
            budget: loom_report::FailureBudget::unlimited(),
            cases_per_kit: None,
        }
    }
}

/// A run id unique enough for namespacing: the wall clock in microseconds, base 36.
/// The harness is not kernel code, so reading the clock here is fine.
pub fn fresh_run_id() -> String {
    let mut n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    let mut s = String::new();
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    while n > 0 {
        s.insert(0, DIGITS[(n % 36) as usize] as char);
        n /= 36;
    }
    format!("r{s}")
}

/// Hooks around each case, for harnesses that talk to something outside the process
/// (the stdio client resets the adapter before a case and reports a crash, hang or
/// garbled answer after it).
pub trait CaseHooks {
    /// Called before case `case` of kit `kit` runs; an error makes the case an `error`.
    fn before_case(&self, _kit: &str, _case: &str, _cx: &Ctx) -> Result<(), String> {
        Ok(())
    }
    /// Called after the case; `Some` overrides its status (e.g. `error` when the adapter
    /// crashed during the case, `timeout` when it hung), whatever the case concluded.
    fn after_case(&self) -> Option<(Status, String)> {
        None
    }
}

/// No hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl CaseHooks for NoHooks {}

/// True when `case` of kit `kit` passes the filter.
pub fn case_selected(filter: Option<&str>, kit: &str, case: &str) -> bool {
    match filter {
        None => true,
        Some(f) => case.contains(f) || format!("{kit}/{case}").contains(f),
    }
}

/// Runs every selected case of kit `K`. `factory(cx, fresh)` gives the store for a
/// case; `fresh` is true when the kit needs a store holding no other case's data
/// ([`Kit::FRESH_STORE`]). `on_result` sees each result as it is made (progress).
pub async fn run_kit<S, K, F, Fut>(
    mut factory: F,
    opts: &RunOptions,
    hooks: &dyn CaseHooks,
    on_result: &mut dyn FnMut(&CaseResult),
) -> Vec<CaseResult>
where
    K: Kit<S>,
    F: FnMut(&Ctx, bool) -> Fut,
    Fut: Future<Output = Result<S, String>>,
{
    let mut results = Vec::new();
    let mut selected = 0usize;
    for (idx, info) in K::cases().iter().enumerate() {
        if !case_selected(opts.case_filter.as_deref(), K::NAME, info.id) {
            continue;
        }
        selected += 1;
        if opts.cases_per_kit.is_some_and(|n| selected > n) {
            break;
        }
        if opts.budget.exhausted() {
            let r = opts
                .budget
                .not_run(KITS_AREA, K::NAME, info.id, info.rules.iter().copied());
            on_result(&r);
            results.push(r);
            continue;
        }
        let mut namespace = format!("{}.{idx}.", opts.run_id);
        namespace.truncate(NAMESPACE_BYTES_MAX);
        let cx = Ctx::new(namespace);
        let started = Instant::now();
        let mut result = run_one::<S, K, F, Fut>(&mut factory, info, &cx, opts, hooks).await;
        if let Some((status, message)) = hooks.after_case() {
            if status != result.status || status.is_failure() {
                result = CaseResult::new(
                    KITS_AREA,
                    K::NAME,
                    info.id,
                    info.rules.iter().copied(),
                    status,
                )
                .with_message(message);
            }
        }
        result = result.with_duration_ms(started.elapsed().as_millis() as u64);
        opts.budget.record(&result);
        on_result(&result);
        results.push(result);
    }
    results
}

async fn run_one<S, K, F, Fut>(
    factory: &mut F,
    info: &CaseInfo,
    cx: &Ctx,
    opts: &RunOptions,
    hooks: &dyn CaseHooks,
) -> CaseResult
where
    K: Kit<S>,
    F: FnMut(&Ctx, bool) -> Fut,
    Fut: Future<Output = Result<S, String>>,
{
    let rules = info.rules.iter().copied();
    let error =
        |message: String| CaseResult::error(KITS_AREA, K::NAME, info.id, rules.clone(), message);
    if let Err(e) = hooks.before_case(K::NAME, info.id, cx) {
        return error(format!("{}: setting up the case failed: {e}", info.id));
    }
    let store = match factory(cx, K::FRESH_STORE).await {
        Ok(store) => store,
        Err(e) => return error(format!("{}: the store factory failed: {e}", info.id)),
    };
    let run = K::run_case(info.id, &store, cx);
    let verdict = match tokio::time::timeout(opts.case_timeout, run).await {
        Ok(Some(v)) => v,
        Ok(None) => return error(format!("{} is not a case of kit {}", info.id, K::NAME)),
        Err(_) => {
            return CaseResult::timeout(
                KITS_AREA,
                K::NAME,
                info.id,
                rules,
                format!("{} did not finish within {:?}", info.id, opts.case_timeout),
            )
        }
    };
    to_case_result(K::NAME, info, cx, verdict)
}

/// The report row for a case's verdict. A failure's message names the case, the rules
/// it breaks and the namespace of its execution ids; the verdict's own text names the
/// execution and the sequence.
pub fn to_case_result(kit: &str, info: &CaseInfo, cx: &Ctx, verdict: crate::Verdict) -> CaseResult {
    let rules = info.rules.iter().copied();
    match verdict {
        Ok(Outcome::Pass) => CaseResult::pass(KITS_AREA, kit, info.id, rules),
        Ok(Outcome::SkipNotClaimed(what)) => CaseResult::skip_not_claimed(
            KITS_AREA,
            kit,
            info.id,
            rules,
            format!("the store does not claim {what}"),
        ),
        Err(failure) => CaseResult::fail(
            KITS_AREA,
            kit,
            info.id,
            rules,
            format!(
                "{} [{}] (ids under {:?}): {}",
                info.id,
                info.rules.join(", "),
                cx.namespace(),
                failure
            ),
            ReportFailure::default(),
        ),
    }
}
