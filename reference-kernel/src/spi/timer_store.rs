//! The TimerStore SPI: durable wake-ups for timed suspends (reference-defined).
//!
//! The spec has no timer seam; the runtime needs one to raise `TIMER_FIRED` across
//! restarts (§5, GAP-25). Timers are data keyed by `(execution_id, key)`; the store never
//! reads a clock: callers pass `now_ms` from their injected [`Clock`](super::Clock).

use std::future::Future;

use serde::{Deserialize, Serialize};

use super::error::StoreError;

/// A scheduled wake-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Timer {
    /// The execution to wake.
    pub execution_id: String,
    /// When it becomes due, epoch milliseconds (the recorded `wakeAt`).
    pub wake_at_ms: i64,
    /// Identifies the timer within the execution (e.g. the suspend point).
    pub key: String,
}

/// Durable timers (reference-defined).
///
/// Delivery is at least once: `due` only reads; the caller fires the timer (appending
/// `TIMER_FIRED`, whose ingress check makes a duplicate harmless) and then cancels it.
pub trait TimerStore: Send + Sync {
    /// The reference-defined version of this seam ([`TIMER_STORE_SPI_VERSION`](super::TIMER_STORE_SPI_VERSION)).
    fn spi_version(&self) -> String;

    /// Schedules `timer`, idempotently per `(execution_id, key)`: when a timer with
    /// that pair exists, nothing changes and the stored timer is returned (so a replay
    /// that schedules again cannot move a deadline). Ids and keys must be non-empty and
    /// bounded, else `InvalidArgument`.
    fn schedule(&self, timer: Timer) -> impl Future<Output = Result<Timer, StoreError>> + Send;

    /// Up to `limit` timers with `wake_at_ms <= now_ms`, ordered by `wake_at_ms`, then
    /// `execution_id`, then `key` (a total order, so every store answers the same).
    /// `limit` must be in `1..=TIMER_DUE_LIMIT_MAX`, else `InvalidArgument`.
    fn due(
        &self,
        now_ms: i64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<Timer>, StoreError>> + Send;

    /// Removes the timer; returns whether one existed.
    fn cancel(
        &self,
        execution_id: &str,
        key: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
