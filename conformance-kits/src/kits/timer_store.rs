//! TimerStore cases (reference-defined seam; GAP-25 context).

use loom_kernel::spi::{Timer, TimerStore, TIMER_DUE_LIMIT_MAX};

use crate::case::{ensure, err_kind, ok, Ctx, Outcome, Verdict};

crate::__kit_cases! {
    kit: TimerStoreKit, name: "timer-store", bound: TimerStore, fresh: true,
    cases: [
        ref_timers_schedule_is_idempotent_per_key => ["GAP-25"], "1.0.0", [];
        ref_timers_due_ordered_by_wake_at_then_id => ["GAP-25"], "1.0.0", [];
        ref_timers_cancel_removes => ["GAP-25"], "1.0.0", [];
        ref_timers_due_limit_is_bounded => ["GAP-25"], "1.0.0", [];
    ]
}

fn timer(execution_id: &str, key: &str, wake_at_ms: i64) -> Timer {
    Timer {
        execution_id: execution_id.to_string(),
        key: key.to_string(),
        wake_at_ms,
    }
}

/// Scheduling the same `(execution, key)` again keeps the first deadline.
pub async fn ref_timers_schedule_is_idempotent_per_key<T: TimerStore>(
    store: &T,
    _cx: &Ctx,
) -> Verdict {
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
