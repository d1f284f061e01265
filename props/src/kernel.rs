//! The kernel a property checks. [`Reference`] is `loom-kernel` itself; [`planted`] holds
//! deliberately broken kernels that tests use to show each target finds its bug class
//! without editing the kernel.

use loom_kernel::fold::{ExecutionState, FoldVersion};
use loom_kernel::ingress::{admit, GateConfig, IngressError, NewEvent, ResumePath, ResumeRequest};
use loom_kernel::EventEnvelope;

/// What a resume did: the gate's verdict and the events that reached the log.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeOutcome {
    /// `Ok` when admitted, the refusal otherwise.
    pub result: Result<(), IngressError>,
    /// Every event appended to the log by this resume (empty on a correct refusal).
    pub appended: Vec<NewEvent>,
}

/// The operations the properties need from a kernel.
pub trait KernelUnderTest {
    /// A short name for messages.
    fn name(&self) -> &'static str;

    /// `fold_as(version, state, tail)`: fold `tail` onto a copy of `state`.
    fn fold_as(
        &self,
        version: FoldVersion,
        state: &ExecutionState,
        tail: &[EventEnvelope],
    ) -> ExecutionState {
        loom_kernel::fold_as(version, state, tail)
    }

    /// `fold_as` on a state the caller gives away. The default copies nothing less than
    /// [`KernelUnderTest::fold_as`] (it calls it); the reference kernel folds the owned
    /// state in place, which saves a copy of the state per call on the hot paths.
    fn fold_owned(
        &self,
        version: FoldVersion,
        state: ExecutionState,
        tail: &[EventEnvelope],
    ) -> ExecutionState {
        self.fold_as(version, &state, tail)
    }

    /// `fold_from(state, tail)` at the current version.
    fn fold_from(&self, state: &ExecutionState, tail: &[EventEnvelope]) -> ExecutionState {
        self.fold_as(FoldVersion::CURRENT, state, tail)
    }

    /// Delivers a resume: the gate, then (when admitted) the append.
    fn resume(
        &self,
        execution_id: &str,
        state: &ExecutionState,
        log: &[EventEnvelope],
        path: ResumePath,
        request: &ResumeRequest,
        gate: &GateConfig<'_>,
    ) -> ResumeOutcome {
        match admit(execution_id, state, log, path, request, gate) {
            Ok(events) => ResumeOutcome {
                result: Ok(()),
                appended: events,
            },
            Err(e) => ResumeOutcome {
                result: Err(e),
                appended: Vec::new(),
            },
        }
    }
}

/// The reference kernel, unchanged.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reference;

impl KernelUnderTest for Reference {
    fn name(&self) -> &'static str {
        "reference"
    }

    fn fold_owned(
        &self,
        version: FoldVersion,
        state: ExecutionState,
        tail: &[EventEnvelope],
    ) -> ExecutionState {
        loom_kernel::fold::fold_versioned(
            state,
            tail,
            version,
            &mut loom_kernel::fold::NoDiagnostics,
        )
    }
}

pub mod planted {
    //! Kernels with one planted bug each, for the "the target finds it" tests.

    use super::*;
    use serde_json::Value;

    /// The environment variable the snapshot fuzz targets read once to run against a
    /// planted kernel instead of the reference (`fold-38`:
    /// [`RepeatedDecisionOverwritesSeq`]), so a campaign can count the executions it
    /// takes to find the bug (docs/guides/fuzzing.md).
    pub const PLANTED_ENV: &str = "LOOM_FUZZ_PLANTED";

    /// The kernel [`PLANTED_ENV`] names, else the reference kernel.
    pub fn from_env() -> &'static (dyn KernelUnderTest + Sync) {
        match std::env::var(PLANTED_ENV).as_deref() {
            Ok("fold-38") => &RepeatedDecisionOverwritesSeq,
            _ => &Reference,
        }
    }

    /// FOLD-38 broken: a repeated `DECISION_RECORDED` overwrites the entry's `seq` with
    /// its own envelope sequence instead of keeping the first one.
    #[derive(Debug, Clone, Copy, Default)]
    pub struct RepeatedDecisionOverwritesSeq;

    impl KernelUnderTest for RepeatedDecisionOverwritesSeq {
        fn name(&self) -> &'static str {
            "planted: repeated decision overwrites seq"
        }

        fn fold_as(
            &self,
            version: FoldVersion,
            state: &ExecutionState,
            tail: &[EventEnvelope],
        ) -> ExecutionState {
            let mut s = state.clone();
            for e in tail {
                let repeat = e.event_type == "DECISION_RECORDED"
                    && e.payload
                        .get("id")
                        .and_then(Value::as_str)
                        .and_then(|id| s.variables.decisions.as_ref()?.get(id))
                        .is_some_and(|entry| entry.get("seq").is_some());
                s = loom_kernel::fold_as(version, &s, std::slice::from_ref(e));
                if repeat {
                    let id = e.payload.get("id").and_then(Value::as_str).unwrap_or("");
                    if let Some(d) = s.variables.decisions.as_mut() {
                        if let Some(Value::Object(mut entry)) = d.get(id).map(|j| j.to_value()) {
                            entry.insert("seq".into(), Value::from(e.sequence));
                            d.insert(id.to_owned(), Value::Object(entry).into());
                        }
                    }
                }
            }
            s
        }
    }

    /// INGRESS-15 broken: a resume refused for the wrong gate still records the caller's
    /// event (the classic "append, then validate" ordering bug).
    #[derive(Debug, Clone, Copy, Default)]
    pub struct GateMismatchAppends;

    impl KernelUnderTest for GateMismatchAppends {
        fn name(&self) -> &'static str {
            "planted: gate-mismatch refusal appends"
        }

        fn resume(
            &self,
            execution_id: &str,
            state: &ExecutionState,
            log: &[EventEnvelope],
            path: ResumePath,
            request: &ResumeRequest,
            gate: &GateConfig<'_>,
        ) -> ResumeOutcome {
            let out = Reference.resume(execution_id, state, log, path, request, gate);
            match &out.result {
                Err(e) if e.reason() == Some(loom_kernel::ingress::RefusalReason::GateMismatch) => {
                    ResumeOutcome {
                        result: out.result.clone(),
                        appended: vec![NewEvent {
                            event_type: request.event_type.clone(),
                            payload: request.payload.clone(),
                            metadata: request.metadata.clone(),
                        }],
                    }
                }
                _ => out,
            }
        }
    }
}
