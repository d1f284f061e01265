//! TimerStore cases (reference-defined seam; GAP-25 context).

use loom_kernel::spi::{Timer, TimerStore, TIMER_DUE_LIMIT_MAX};

use crate::case::{ensure, err_kind, ok, Ctx, Outcome, Verdict};

crate::__kit_cases! {
    kit: TimerStoreKit, name: "timer-store", bound: TimerStore, fresh: true, claims: crate::case::no_claims,
    cases: [
        ref_timers_schedule_is_idempotent_per_key => ["GAP-25", "SPI-01"], "1.0.0", [];
        ref_timers_due_ordered_by_wake_at_then_id => ["GAP-25"], "1.0.0", [];
        ref_timers_cancel_removes => ["GAP-25"], "1.0.0", [];
        ref_timers_due_limit_is_bounded => ["GAP-25"], "1.0.0", [];
        ref_timers_due_boundaries_and_numeric_order => ["GAP-25"], "1.0.0", [];
        ref_timers_reschedule_after_cancel_and_byte_order => ["GAP-25"], "1.0.0", [];
        gap_27_out_of_range_ids_follow_the_table => ["GAP-27", "GAP-25"], "1.0.0", [];
        ref_timers_hostile_keys_are_distinct_timers_in_byte_order => ["GAP-25", "GAP-27"], "1.0.0", [];
    ]
}

fn timer(execution_id: &str, key: &str, wake_at_ms: i64) -> Timer {
    Timer {
        execution_id: execution_id.to_string(),
        key: key.to_string(),
        wake_at_ms,
    }
}

/// The store declares a well-formed version of its seam (SPI-01); scheduling the same
/// `(execution, key)` again keeps the first deadline.
pub async fn ref_timers_schedule_is_idempotent_per_key<T: TimerStore>(
    store: &T,
    _cx: &Ctx,
) -> Verdict {
    crate::case::check_declared_version(
        "the timer store",
        &store.spi_version(),
        loom_kernel::spi::TIMER_STORE_SPI_VERSION,
    )?;
    let first = ok(
        store.schedule(timer("t-idem", "wait", 100)).await,
        "schedule",
    )?;
    let again = ok(
        store.schedule(timer("t-idem", "wait", 500)).await,
        "schedule again",
    )?;
    ensure!(
        again == first,
        "re-scheduling returned {again:?}, expected the stored {first:?}"
    );
    let due = ok(store.due(100, 10).await, "due")?;
    ensure!(due == vec![first], "due at 100 gave {due:?}");
    Ok(Outcome::Pass)
}

/// `due` returns only timers at or before now, ordered by wake time, execution, key.
pub async fn ref_timers_due_ordered_by_wake_at_then_id<T: TimerStore>(
    store: &T,
    _cx: &Ctx,
) -> Verdict {
    let all = [
        timer("t-b", "k", 20),
        timer("t-a", "k2", 20),
        timer("t-a", "k1", 20),
        timer("t-c", "k", 10),
        timer("t-d", "k", 30),
    ];
    for t in &all {
        ok(store.schedule(t.clone()).await, "schedule")?;
    }
    let due = ok(store.due(20, 10).await, "due")?;
    let want = vec![
        timer("t-c", "k", 10),
        timer("t-a", "k1", 20),
        timer("t-a", "k2", 20),
        timer("t-b", "k", 20),
    ];
    ensure!(due == want, "due at 20 gave {due:?}, expected {want:?}");
    let two = ok(store.due(20, 2).await, "due with limit")?;
    ensure!(
        two == want[..2].to_vec(),
        "the limit did not keep the first two: {two:?}"
    );
    Ok(Outcome::Pass)
}

/// `cancel` removes a timer and reports whether one existed.
pub async fn ref_timers_cancel_removes<T: TimerStore>(store: &T, _cx: &Ctx) -> Verdict {
    ok(store.schedule(timer("t-cancel", "k", 5)).await, "schedule")?;
    ensure!(
        ok(store.cancel("t-cancel", "k").await, "cancel")?,
        "cancel reported no timer"
    );
    ensure!(
        !ok(store.cancel("t-cancel", "k").await, "cancel again")?,
        "a second cancel reported a timer"
    );
    ensure!(
        ok(store.due(i64::MAX, 10).await, "due")?.is_empty(),
        "a cancelled timer is due"
    );
    Ok(Outcome::Pass)
}

/// A `due` limit of 0 or above the max, and empty ids, are `InvalidArgument`.
pub async fn ref_timers_due_limit_is_bounded<T: TimerStore>(store: &T, _cx: &Ctx) -> Verdict {
    err_kind(store.due(0, 0).await, "invalid-argument", "limit 0")?;
    err_kind(
        store.due(0, TIMER_DUE_LIMIT_MAX + 1).await,
        "invalid-argument",
        "limit above the max",
    )?;
    err_kind(
        store.schedule(timer("", "k", 0)).await,
        "invalid-argument",
        "empty execution id",
    )?;
    err_kind(
        store.schedule(timer("t", "", 0)).await,
        "invalid-argument",
        "empty key",
    )?;
    Ok(Outcome::Pass)
}

/// `due` around a wake time from both sides (`now = wake - 1` excludes it, `now = wake`
/// includes it), at the ends of `i64` and below zero, and in numeric order over 150
/// timers scheduled scrambled across digit boundaries, so a store comparing wake times
/// as text or as 32-bit numbers is seen (GAP-25).
pub async fn ref_timers_due_boundaries_and_numeric_order<T: TimerStore>(
    store: &T,
    _cx: &Ctx,
) -> Verdict {
    let n = 150i64;
    // A permutation of 0..n: 7 is coprime with 150.
    for i in 0..n {
        let w = (i * 7) % n;
        ok(
            store
                .schedule(timer(&format!("t-n{w:03}"), "k", w * 10 - 500))
                .await,
            "schedule",
        )?;
    }
    ok(
        store.schedule(timer("t-min", "k", i64::MIN)).await,
        "schedule at i64::MIN",
    )?;
    ok(
        store.schedule(timer("t-max", "k", i64::MAX)).await,
        "schedule at i64::MAX",
    )?;
    let all = ok(
        store.due(i64::MAX, TIMER_DUE_LIMIT_MAX).await,
        "due at i64::MAX",
    )?;
    ensure!(
        all.len() as i64 == n + 2,
        "due at i64::MAX gave {} timers, {} were scheduled",
        all.len(),
        n + 2
    );
    ensure!(
        all.windows(2).all(|w| w[0].wake_at_ms <= w[1].wake_at_ms),
        "due is not in wake-time order: {:?}",
        all.iter()
            .map(|t| t.wake_at_ms)
            .take(20)
            .collect::<Vec<_>>()
    );
    ensure!(
        all.first().map(|t| t.execution_id.as_str()) == Some("t-min")
            && all.last().map(|t| t.execution_id.as_str()) == Some("t-max"),
        "the i64 ends are not first and last"
    );
    for (now, want) in [
        (-501i64, 1usize),
        (-500, 2),
        (-491, 2),
        (-490, 3),
        (990, n as usize + 1),
    ] {
        let got = ok(store.due(now, TIMER_DUE_LIMIT_MAX).await, "due")?;
        ensure!(
            got.len() == want,
            "due({now}) gave {} timers, expected {want} (a wake time equal to now is due, one after it is not)",
            got.len()
        );
    }
    let exact = ok(
        store.due(-490, 3).await,
        "due with a limit equal to the count",
    )?;
    ensure!(
        exact.len() == 3,
        "a limit equal to the due count gave {}",
        exact.len()
    );
    let fewer = ok(store.due(-490, 2).await, "due with a limit below the count")?;
    ensure!(
        fewer == exact[..2],
        "a limit of 2 gave {fewer:?}, not the first two of {exact:?}"
    );
    Ok(Outcome::Pass)
}

/// After `cancel`, scheduling the same key again takes the new deadline (idempotence
/// is per live timer, not forever); a key is cancelled only for its own execution, and
/// ids and keys order by their bytes (GAP-25).
pub async fn ref_timers_reschedule_after_cancel_and_byte_order<T: TimerStore>(
    store: &T,
    _cx: &Ctx,
) -> Verdict {
    ok(store.schedule(timer("t-re", "k", 100)).await, "schedule")?;
    ok(store.schedule(timer("t-other", "k", 100)).await, "schedule")?;
    ensure!(
        ok(store.cancel("t-re", "k").await, "cancel")?,
        "cancel found nothing"
    );
    let again = ok(
        store.schedule(timer("t-re", "k", 500)).await,
        "schedule again",
    )?;
    ensure!(
        again.wake_at_ms == 500,
        "scheduling after cancel returned {again:?}, expected the new deadline 500"
    );
    let due = ok(store.due(499, 10).await, "due")?;
    ensure!(
        due == vec![timer("t-other", "k", 100)],
        "due(499) gave {due:?}: the cancel touched another execution or the old deadline came back"
    );
    let ids = [
        "t-\u{e9}",
        "t-Z",
        "t-a",
        "t-B",
        "t-10",
        "t-9",
        "t-\u{1f600}",
    ];
    for id in ids {
        ok(
            store.schedule(timer(id, "k\u{e9}", 1_000)).await,
            "schedule",
        )?;
    }
    let got: Vec<String> = ok(store.due(1_000, 100).await, "due")?
        .into_iter()
        .filter(|t| t.wake_at_ms == 1_000)
        .map(|t| t.execution_id)
        .collect();
    let mut want: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    want.sort();
    ensure!(
        got == want,
        "timers due at the same time came in the order {got:?}, expected byte order {want:?}"
    );
    Ok(Outcome::Pass)
}

/// Every timer-store method answers an empty or over-long id as the id-validation table says
/// (`loom_conformance::ids::ID_VALIDATION`, printed in docs/protocols/store.md): `schedule` refuses it as execution or key, `cancel` answers `false` as for an unknown timer
/// (GAP-27).
pub async fn gap_27_out_of_range_ids_follow_the_table<S: TimerStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use crate::ids::{id_answer, judge_id_rule, out_of_range_ids, rules_of};
    let _ = cx;
    for rule in rules_of("timerStore") {
        for bad in out_of_range_ids() {
            let b = &*bad;
            let answer = match (rule.method, rule.argument) {
                ("timerStore.schedule", "timer.executionId") => id_answer(
                    store
                        .schedule(loom_kernel::spi::Timer {
                            execution_id: bad.clone(),
                            wake_at_ms: 1,
                            key: "k".into(),
                        })
                        .await,
                    |_| false,
                ),
                ("timerStore.schedule", _) => id_answer(
                    store
                        .schedule(loom_kernel::spi::Timer {
                            execution_id: cx.id("gap_27-timer"),
                            wake_at_ms: 1,
                            key: bad.clone(),
                        })
                        .await,
                    |_| false,
                ),
                ("timerStore.cancel", "executionId") => {
                    id_answer(store.cancel(b, "k").await, |r| matches!(r, Ok(false)))
                }
                ("timerStore.cancel", _) => {
                    id_answer(store.cancel(&cx.id("gap_27-timer"), b).await, |r| {
                        matches!(r, Ok(false))
                    })
                }
                _ => continue,
            };
            judge_id_rule(rule, b, answer)?;
        }
    }
    Ok(Outcome::Pass)
}

/// Hostile timer keys and executions are distinct timers, due in (wake, execution, key)
/// byte order, and two-part keys that join to the same text (`("j:k", "m")` and
/// `("j", "k:m")`) are two timers (GAP-25, GAP-27).
pub async fn ref_timers_hostile_keys_are_distinct_timers_in_byte_order<S: TimerStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let exec = cx.id("h");
    let mut want = Vec::new();
    for (_, key) in crate::ids::hostile_ids("") {
        want.push(Timer {
            execution_id: exec.clone(),
            wake_at_ms: 10,
            key,
        });
    }
    for pair in crate::ids::composite_twins() {
        for (e, k) in pair {
            want.push(Timer {
                execution_id: format!("{}{e}", cx.namespace()),
                wake_at_ms: 10,
                key: k,
            });
        }
    }
    for t in &want {
        let got = ok(store.schedule(t.clone()).await, "schedule")?;
        ensure!(
            got == *t,
            "separators ids: schedule {:?}/{:?} answered the stored timer {:?}/{:?}: the store confuses the two",
            t.execution_id,
            t.key,
            got.execution_id,
            got.key
        );
    }
    want.sort_by(|a, b| {
        (a.wake_at_ms, &a.execution_id, &a.key).cmp(&(b.wake_at_ms, &b.execution_id, &b.key))
    });
    let due = ok(store.due(10, TIMER_DUE_LIMIT_MAX).await, "due")?;
    ensure!(
        due == want,
        "due gave {} timers {:?}, expected {} in (wake, execution, key) byte order",
        due.len(),
        due.iter()
            .map(|t| format!("{}/{}", t.execution_id, t.key))
            .collect::<Vec<_>>(),
        want.len()
    );
    Ok(Outcome::Pass)
}
