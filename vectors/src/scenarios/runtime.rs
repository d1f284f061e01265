//! Runtime scenarios: flow scripts plus driver steps (filled in with the runtime kind).

use crate::generate::Scenario;

/// Every runtime scenario.
pub fn scenarios() -> Vec<Scenario> {
    Vec::new()
}
