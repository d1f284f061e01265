//! Static checks over a flow script, before it runs: suspension safety (REPLAY-12) and
//! placement compatibility (PLACE-07).
//!
//! Both are properties of the script plus what is wired, never of an execution, so they
//! live apart from the interpreter and read nothing but their arguments.

use super::script::{FlowScript, Stmt};

/// What the flow will run with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wiring {
    /// A TimerStore is wired (timed suspends are woken).
    pub timer_store: bool,
    /// The dispatcher's registered compute targets.
    pub dispatcher_targets: Vec<String>,
}

/// One problem a check found. `message` starts with the rule id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule (`REPLAY-12`, `PLACE-07`).
    pub rule: &'static str,
    /// JSON path of the statement or field.
    pub path: String,
    /// What is wrong, starting with the rule id.
    pub message: String,
}

/// Runs every static check; an empty result means the flow passes.
pub fn verify_flow(script: &FlowScript, wiring: &Wiring) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(target) = &script.compute_target {
        if !wiring.dispatcher_targets.iter().any(|t| t == target) {
            out.push(Finding {
                rule: "PLACE-07",
                path: "$.computeTarget".into(),
                message: format!(
                    "PLACE-07 placement-compat: computeTarget `{target}` is not a registered dispatcher target (registered: {})",
                    wiring.dispatcher_targets.join(", ")
                ),
            });
        }
    }
    if !wiring.timer_store {
        timed_suspends(&script.body, "$.body", &mut out);
    }
    out
}

/// REPLAY-12 suspension-safety: without a TimerStore a timed suspend is never woken.
fn timed_suspends(stmts: &[Stmt], path: &str, out: &mut Vec<Finding>) {
    for (i, s) in stmts.iter().enumerate() {
        let here = format!("{path}[{i}]");
        let timed = match s {
            Stmt::Suspend {
                timeout, wake_at, ..
            } => timeout.is_some() || wake_at.is_some(),
            Stmt::Sleep { .. } | Stmt::SleepUntil { .. } => true,
            _ => false,
        };
        if timed {
            out.push(Finding {
                rule: "REPLAY-12",
                path: here.clone(),
                message: "REPLAY-12 suspension-safety: a timed suspend with no TimerStore wired is never woken".into(),
            });
        }
        match s {
            Stmt::Step(step) => {
                for (channel, handler) in &step.catch {
                    timed_suspends(handler, &format!("{here}.catch.{channel}"), out);
                }
            }
            Stmt::Decide { catch: Some(h), .. } => timed_suspends(h, &format!("{here}.catch"), out),
            Stmt::Parallel(branches) => {
                for (b, branch) in branches.iter().enumerate() {
                    timed_suspends(branch, &format!("{here}.branches[{b}]"), out);
                }
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                timed_suspends(then, &format!("{here}.then"), out);
                timed_suspends(otherwise, &format!("{here}.else"), out);
            }
            _ => {}
        }
    }
}
