//! The deploy simulator's own tests; each name carries the rule ids it is evidence for.

use loom_sim::{run_seed, sweep, PlantedBug, SimConfig, RULES};

/// A configuration with every fault rate at its cap, so a few seeds exercise crashes,
/// zombies and hostile resumes.
fn stormy() -> SimConfig {
    SimConfig {
        crash_per_mille_max: 1000,
        zombie_per_mille_max: 1000,
        hostile_per_mille_max: 1000,
        ..SimConfig::default()
    }
}

#[test]
fn place_04_place_05_replay_01_emit_01_snap_01_ingress_15_seeds_pass() {
    let mut total = loom_sim::SimStats::default();
    for config in [SimConfig::default(), stormy()] {
        for out in sweep(0..6, None, &config) {
            assert!(
                out.violations.is_empty(),
                "seed {} broke invariants: {:#?}",
                out.seed,
                out.violations
            );
            assert_eq!(out.results.len(), RULES.len());
            assert!(out.results.iter().all(|r| r.area == "sim"));
            total.zombie_refused += out.stats.zombie_refused;
            total.hostile_refused += out.stats.hostile_refused;
            total.injected_crashes += out.stats.injected_crashes;
            total.completed += out.stats.completed;
        }
    }
    // The seeds must have exercised the faults, or passing proves nothing.
    assert!(total.injected_crashes > 0, "{total:?}");
    assert!(total.zombie_refused > 0, "{total:?}");
    assert!(total.hostile_refused > 0, "{total:?}");
    assert!(total.completed > 0, "{total:?}");
}

#[test]
fn conf_05_same_seed_same_trace() {
    for seed in [3, 17, 40] {
        let a = run_seed(seed, &stormy());
        let b = run_seed(seed, &stormy());
        assert!(!a.trace.is_empty());
        assert_eq!(a.trace, b.trace, "seed {seed}: traces differ");
        assert_eq!(a.logs, b.logs, "seed {seed}: final logs differ");
    }
}

#[test]
fn place_05_planted_store_that_ignores_fences_is_caught() {
    let config = SimConfig {
        bug: Some(PlantedBug::StoreIgnoresFence),
        ..stormy()
    };
    let caught = sweep(0..8, None, &config)
        .into_iter()
        .find(|o| o.violations.iter().any(|v| v.rule == "PLACE-05"));
    let Some(out) = caught else {
        panic!("no seed in 0..8 caught the planted fencing bug");
    };
    let failed = out
        .results
        .iter()
        .find(|r| r.rules == ["PLACE-05"])
        .expect("a PLACE-05 result");
    assert_eq!(failed.status, loom_report::Status::Fail);
}

#[test]
fn sweep_shards_split_the_seed_range() {
    let config = SimConfig {
        safety_ms: 1_000,
        liveness_ms: 6_000,
        ..SimConfig::default()
    };
    let a: Vec<u64> = sweep(0..4, Some((0, 2)), &config)
        .iter()
        .map(|o| o.seed)
        .collect();
    let b: Vec<u64> = sweep(0..4, Some((1, 2)), &config)
        .iter()
        .map(|o| o.seed)
        .collect();
    assert_eq!(a, [0, 2]);
    assert_eq!(b, [1, 3]);
    assert!(sweep(0..4, Some((0, 0)), &config).is_empty());
}

#[test]
fn replay_01_planted_stale_read_that_hides_step_completed_is_caught() {
    let config = SimConfig {
        bug: Some(PlantedBug::StaleReadsBlindAppends),
        ..stormy()
    };
    let caught = sweep(0..8, None, &config)
        .into_iter()
        .any(|o| o.violations.iter().any(|v| v.rule == "REPLAY-01"));
    assert!(caught, "no seed in 0..8 caught the planted stale read");
}

/// Regression seeds of a runtime bug this simulator found: two workers fire the same
/// timer; the one holding the newer fence is bounced before it appends; the first is
/// fenced out, and `Runtime::fire_timers` used to cancel the timer anyway, so the timed
/// park was never woken (REPLAY-10). The runtime now keeps a timer whose fire failed.
#[test]
fn replay_10_failed_timer_fire_keeps_the_timer_regression_seeds() {
    for (seed, config) in [
        (53, stormy()),
        (375, stormy()),
        (646, stormy()),
        (802, stormy()),
        (282, SimConfig::default()),
    ] {
        let out = run_seed(seed, &config);
        assert!(
            out.violations.is_empty(),
            "seed {seed}: {:#?}",
            out.violations
        );
    }
}

/// Regression seeds of the 0 ms sleep bug: a worker's `fire_timers` saw a due timer
/// (a 0 ms sleep, a sleepUntil in the past) before the parking run's append had
/// landed, found no park and cancelled the timer; the park then slept forever
/// (REPLAY-10). Each of these seeds failed that way before the runtime fix (13 of
/// seeds 0..200 at default rates).
#[test]
fn replay_10_timer_due_before_its_park_lands_regression_seeds() {
    for seed in [11, 17, 41, 123] {
        let out = run_seed(seed, &SimConfig::default());
        assert!(
            out.violations.is_empty(),
            "seed {seed}: {:#?}",
            out.violations
        );
    }
}
