//! The kit runner's side of a stdio store adapter: the hooks that name each case to the
//! client, send `reset` before it and turn the adapter's faults into the case's result
//! ([`StdioHooks`], and [`FleetHooks`] for several clients on one backend), and the
//! results a blamed stray line or a dirty shutdown adds to a run (the `adapter` suite).
//!
//! Key design decision: the client (`loom-store-client`) only collects faults and
//! blame, as a message and whether it was a hang; what they mean for a case (`error`,
//! or `timeout` for a hang, whatever the case concluded) is decided here, where the
//! runner and the report's statuses are.

use loom_store_client::{Fault, StdioStore};

use loom_process::{Blame, FaultKind, ShutdownReport};
use loom_report::Status;

use crate::case::Ctx;
use crate::runner::CaseHooks;

/// The report status of a process fault: a hang is `timeout`, everything else `error`.
pub fn status_of(kind: FaultKind) -> Status {
    if kind.is_timeout() {
        Status::Timeout
    } else {
        Status::Error
    }
}

/// The report status of a client's [`Fault`]: a hang is `timeout`, everything else
/// `error`.
pub fn fault_status(fault: &Fault) -> Status {
    if fault.timeout {
        Status::Timeout
    } else {
        Status::Error
    }
}

/// The suite of the results about the adapter process itself (handshake, shutdown).
pub const ADAPTER_SUITE: &str = "adapter";

/// Turns the results of kit cases blamed for a stray line into `error` results naming
/// the fault (the case had concluded before the line was seen); a blame whose case has
/// no result becomes a result of its own.
pub fn apply_blames(results: &mut Vec<loom_report::CaseResult>, blames: Vec<Blame>) {
    for blame in blames {
        let found = results
            .iter_mut()
            .rev()
            .find(|r| case_tag(&r.suite, &r.case_id) == blame.tag);
        match found {
            Some(r) => {
                let was = r.status;
                r.status = Status::Error;
                r.failure = None;
                r.xfail_reason = None;
                r.message = Some(format!(
                    "{} (the case had concluded {was} before this was seen)",
                    blame.fault.message
                ));
            }
            None => results.push(loom_report::CaseResult::error(
                crate::runner::KITS_AREA,
                ADAPTER_SUITE,
                blame.tag,
                Vec::<String>::new(),
                blame.fault.message,
            )),
        }
    }
}

/// The results an adapter's shutdown adds: a blamed stray line amends its case; end of
/// input ignored or processes left behind is an `error` of its own.
pub fn apply_shutdown(results: &mut Vec<loom_report::CaseResult>, report: ShutdownReport) {
    apply_blames(results, report.blames);
    for problem in report.problems {
        results.push(loom_report::CaseResult::error(
            crate::runner::KITS_AREA,
            ADAPTER_SUITE,
            "adapter/shutdown",
            Vec::<String>::new(),
            problem.message,
        ));
    }
}

/// The blame tag of a kit case: `kit/case`.
pub fn case_tag(kit: &str, case: &str) -> String {
    format!("{kit}/{case}")
}

/// Runner hooks for a [`StdioStore`]: `reset` before each case, the recorded fault after.
pub struct StdioHooks<'a>(pub &'a StdioStore);

impl CaseHooks for StdioHooks<'_> {
    fn before_case(&self, kit: &str, case: &str, cx: &Ctx) -> Result<(), String> {
        self.0.begin_case(&case_tag(kit, case));
        self.0.reset(cx.namespace())
    }
    fn after_case(&self) -> Option<(Status, String)> {
        self.0.take_fault().map(|f| (fault_status(&f), f.message))
    }
}

/// Runner hooks for several clients on one backend (protocol 1.2): every client learns
/// the case (for blame), client 0 alone sends `reset` (the backend is shared, so one
/// reset empties it for all), and the first fault of any client decides the case.
pub struct FleetHooks<'a>(pub &'a [StdioStore]);

impl CaseHooks for FleetHooks<'_> {
    fn before_case(&self, kit: &str, case: &str, cx: &Ctx) -> Result<(), String> {
        let tag = case_tag(kit, case);
        for c in self.0 {
            c.begin_case(&tag);
        }
        match self.0.first() {
            Some(first) => first.reset(cx.namespace()),
            None => Err("no client was started".into()),
        }
    }
    fn after_case(&self) -> Option<(Status, String)> {
        let mut first = None;
        for (i, c) in self.0.iter().enumerate() {
            if let Some(f) = c.take_fault() {
                first.get_or_insert((fault_status(&f), format!("client {i}: {}", f.message)));
            }
        }
        first
    }
}
