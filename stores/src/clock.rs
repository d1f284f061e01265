//! The system clock, for production wiring outside the kernel. The kernel and the
//! simulator never use it: they are given a `ManualClock` or a simulated one.

use loom_kernel::spi::Clock;

/// Reads `SystemTime::now()` as epoch milliseconds (0 if the system clock is before 1970).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}
