//! The one error every property returns.

use std::fmt;

/// A property that did not hold: the rule it checks, where, and both values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyViolation {
    /// The rule id, e.g. `SNAP-01`.
    pub rule: &'static str,
    /// The event (or operation) index where the values first differ, when there is one.
    pub index: Option<usize>,
    /// What the rule requires (the oracle's value).
    pub expected: String,
    /// What the implementation produced.
    pub actual: String,
    /// What was being checked, with enough of the input to reproduce it by hand.
    pub context: String,
}

impl PropertyViolation {
    /// A violation of `rule` at `index`.
    pub fn new(
        rule: &'static str,
        index: Option<usize>,
        context: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> PropertyViolation {
        PropertyViolation {
            rule,
            index,
            expected: expected.into(),
            actual: actual.into(),
            context: context.into(),
        }
    }
}

impl fmt::Display for PropertyViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} violated", self.rule)?;
        if let Some(i) = self.index {
            write!(f, " at index {i}")?;
        }
        write!(
            f,
            ": {}\n  expected: {}\n  actual:   {}",
            self.context, self.expected, self.actual
        )
    }
}

impl std::error::Error for PropertyViolation {}

/// `Err(violation)` unless `expected == actual`.
pub(crate) fn check_eq(
    rule: &'static str,
    index: Option<usize>,
    context: impl FnOnce() -> String,
    expected: &str,
    actual: &str,
) -> Result<(), PropertyViolation> {
    if expected == actual {
        Ok(())
    } else {
        Err(PropertyViolation::new(
            rule,
            index,
            context(),
            expected,
            actual,
        ))
    }
}
