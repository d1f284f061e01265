//! Many seeds: a range or a shard of it, on several threads, and the part `loom check`
//! runs (every seed twice, with a CONF-05 result).

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use loom_report::CaseResult;

use crate::config::SimConfig;
use crate::outcome::{determinism_result, trace_digest, SimOutcome};
use crate::run::run_seed;

/// Most threads a sweep runs seeds on.
pub const JOBS_MAX: usize = 64;

/// Runs every seed in `seeds`, or only those with `seed % n == i` for `shard =
/// Some((i, n))` (so a CI matrix can split a sweep; an `n` of 0 runs nothing).
pub fn sweep(seeds: Range<u64>, shard: Option<(u32, u32)>, config: &SimConfig) -> Vec<SimOutcome> {
    seeds
        .filter(|s| match shard {
            None => true,
            Some((_, 0)) => false,
            Some((i, n)) => s % u64::from(n) == u64::from(i),
        })
        .map(|s| run_seed(s, config))
        .collect()
}

/// Runs `seeds` on `jobs` threads (at least one), each seed exactly as [`run_seed`]
/// would (a seed runs on one thread from start to end, and nothing a seed reads is
/// shared between threads); the outcomes come back in seed order, with the digests one
/// thread gives (`conf_05_digests_of_one_job_and_two_jobs_are_the_same`).
pub fn run_seeds(seeds: &[u64], config: &SimConfig, jobs: usize) -> Vec<SimOutcome> {
    run_seeds_with(seeds, config, jobs, |_| {})
}

/// [`run_seeds`], calling `done` after each seed (for a progress bar).
pub fn run_seeds_with(
    seeds: &[u64],
    config: &SimConfig,
    jobs: usize,
    done: impl Fn(&SimOutcome) + Sync,
) -> Vec<SimOutcome> {
    run_seeds_until(seeds, config, jobs, done, || false)
}

/// [`run_seeds_with`] that starts no further seed once `stop` says so (`--fail-fast`,
/// `--max-fail`): the seeds already started finish; the outcomes of the seeds that ran
/// come back in seed order, and the others are left out.
pub fn run_seeds_until(
    seeds: &[u64],
    config: &SimConfig,
    jobs: usize,
    done: impl Fn(&SimOutcome) + Sync,
    stop: impl Fn() -> bool + Sync,
) -> Vec<SimOutcome> {
    let jobs = jobs.clamp(1, JOBS_MAX).min(seeds.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<SimOutcome>>> = seeds.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                if stop() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&seed) = seeds.get(i) else {
                    break;
                };
                let outcome = run_seed(seed, config);
                done(&outcome);
                *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(outcome);
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

/// The results of seeds `0..seeds` with the default configuration, for `loom check`:
/// each seed runs twice, and besides its invariants a CONF-05 result says whether the
/// two runs gave the same trace digest.
pub fn sim_results(seeds: u64, show_progress: bool) -> Vec<CaseResult> {
    let config = SimConfig::default();
    let mut results = Vec::new();
    for seed in 0..seeds {
        let outcome = run_seed(seed, &config);
        let again = run_seed(seed, &config);
        if show_progress {
            eprintln!(
                "sim: seed {seed}/{seeds}: {} violation(s), {} trace lines, digest {}",
                outcome.violations.len(),
                outcome.trace.len(),
                trace_digest(&outcome)
            );
        }
        results.push(determinism_result(&outcome, &again));
        results.extend(outcome.results);
    }
    results
}
