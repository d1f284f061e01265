//! Runtime scenarios: driving the reference runtime from a flow script and driver
//! steps, and the scrub rule that makes a log comparable across kernels.
//! (Filled in once the runtime vector kind lands.)

use crate::protocol::Answer;
use serde_json::Value;

/// `runScenario` on the reference kernel.
pub fn run_scenario_method(_params: &Value) -> Answer {
    Answer::Unsupported("runScenario is not implemented yet".into())
}

/// Scrubs a `runScenario` answer.
pub fn scrub_answer(answer: &Value) -> Result<Value, String> {
    Ok(answer.clone())
}
