//! [`FailureBudget`]: how many failing results a run may see before it stops
//! (`--fail-fast` is a budget of 1, `--max-fail N` one of N).
//!
//! A hanging adapter costs a whole call time limit per case; stopping early turns
//! minutes into seconds. The cases a stopped run did not run are not left out silently:
//! each is a `skip-untestable` result saying why ([`FailureBudget::not_run`]), and the
//! report counts them.

use crate::model::CaseResult;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A count of failing results shared by every part of one run, with an optional limit.
/// Clones share the count.
#[derive(Clone, Debug, Default)]
pub struct FailureBudget {
    max: Option<u64>,
    seen: Arc<AtomicU64>,
}

impl FailureBudget {
    /// No limit: the run goes on whatever fails.
    pub fn unlimited() -> Self {
        Self::default()
    }

    /// Stops after `max` failing results (`None`: no limit; `Some(0)` is taken as 1).
    pub fn new(max: Option<u64>) -> Self {
        FailureBudget {
            max: max.map(|m| m.max(1)),
            seen: Arc::default(),
        }
    }

    /// The limit, if any.
    pub fn max(&self) -> Option<u64> {
        self.max
    }

    /// Counts `result` if it is a failure (fail, error, timeout).
    pub fn record(&self, result: &CaseResult) {
        if result.status.is_failure() {
            self.seen.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Failing results counted so far.
    pub fn failures(&self) -> u64 {
        self.seen.load(Ordering::Relaxed)
    }

    /// True once the limit is reached: nothing more should run.
    pub fn exhausted(&self) -> bool {
        self.max.is_some_and(|m| self.failures() >= m)
    }

    /// Why the run stopped, as a clause: "the run stopped after 1 failure (--fail-fast / --max-fail 1)".
    pub fn reason(&self) -> String {
        let max = self.max.unwrap_or(0);
        format!(
            "the run stopped after {max} failure{} (--fail-fast / --max-fail {max})",
            if max == 1 { "" } else { "s" }
        )
    }

    /// The result of a case the stopped run did not run: a skip saying so, never a pass.
    pub fn not_run<I>(&self, area: &str, suite: &str, case_id: &str, rules: I) -> CaseResult
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        CaseResult::skip_untestable(
            area,
            suite,
            case_id,
            rules,
            format!("not run: {}", self.reason()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_spent_by_failures_only_and_shared_by_clones() {
        let budget = FailureBudget::new(Some(2));
        let other = budget.clone();
        let pass = CaseResult::pass("a", "s", "c", ["R-1"]);
        let fail = CaseResult::error("a", "s", "c", ["R-1"], "boom");
        budget.record(&pass);
        assert!(!budget.exhausted());
        budget.record(&fail);
        assert!(!other.exhausted());
        other.record(&fail);
        assert!(budget.exhausted(), "clones share the count");
        assert!(!FailureBudget::unlimited().exhausted());
        let r = budget.not_run("kits", "event-store", "c", ["SPI-03"]);
        assert!(r.status.is_skip());
        assert_eq!(
            r.message.as_deref(),
            Some("not run: the run stopped after 2 failures (--fail-fast / --max-fail 2)")
        );
        assert_eq!(FailureBudget::new(Some(0)).max(), Some(1));
    }
}
