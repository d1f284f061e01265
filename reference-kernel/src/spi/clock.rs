//! Injected time. The kernel never reads the system clock: whoever needs "now" is given
//! a [`Clock`], and tests and the simulator give a [`ManualClock`].

use std::sync::atomic::{AtomicI64, Ordering};

/// A source of epoch milliseconds.
pub trait Clock: Send + Sync {
    /// The current time in epoch milliseconds.
    fn now_ms(&self) -> i64;
}

/// A clock that moves only when told to. Thread-safe.
#[derive(Debug, Default)]
pub struct ManualClock {
    now_ms: AtomicI64,
}

impl ManualClock {
    /// A clock reading `start_ms`.
    pub fn new(start_ms: i64) -> ManualClock {
        ManualClock {
            now_ms: AtomicI64::new(start_ms),
        }
    }

    /// Sets the time.
    pub fn set(&self, now_ms: i64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the time by `delta_ms` (saturating) and returns the new time.
    pub fn advance(&self, delta_ms: i64) -> i64 {
        let mut current = self.now_ms.load(Ordering::SeqCst);
        loop {
            let next = current.saturating_add(delta_ms);
            match self
                .now_ms
                .compare_exchange(current, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return next,
                Err(seen) => current = seen,
            }
        }
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }
}
