//! Simulated time as the hosts read it: store time since the run's start, from a fixed
//! epoch, plus each host's clock offset.

use loom_kernel::spi::Clock;

/// Epoch the simulated clock starts at (2026-01-01T00:00:00Z), so timestamps look real.
pub const EPOCH_MS: i64 = 1_767_225_600_000;

/// The runtime's injected clock: the simulated network's elapsed time since the start,
/// plus the reading host's clock offset. The store host (and the harness) read it with
/// offset 0: that is "store time", what the invariants judge by.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimClock {
    /// How far this host's clock is ahead of store time (negative: behind), ms.
    pub offset_ms: i64,
}

/// Store time: the clock the store host, the dispatcher's leases and the harness read.
pub const STORE_TIME: SimClock = SimClock { offset_ms: 0 };

impl SimClock {
    /// A host clock `offset_ms` ahead of store time (behind when negative).
    pub fn skewed(offset_ms: i64) -> SimClock {
        SimClock { offset_ms }
    }
}

impl Clock for SimClock {
    fn now_ms(&self) -> i64 {
        // Outside a simulation (never in practice) the clock reads the epoch.
        let ms = crate::net::elapsed().map_or(0, |d| d.as_millis());
        EPOCH_MS
            .saturating_add(i64::try_from(ms).unwrap_or(i64::MAX - EPOCH_MS))
            .saturating_add(self.offset_ms)
    }
}
