//! Deliberately wrong kernels: the reference kernel with exactly one behaviour changed.
//! They prove the vectors catch bugs (each must fail the vectors of the rules it
//! breaks, by rule id); `wrong-kernel --bug NAME` serves one over the protocol.

/// One deliberate bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bug {
    /// A fold where `STEP_FAILED` fails a running execution (the pre-1.21 behaviour).
    StepFailedFailsExecution,
    /// A fold that does not stamp `seq` on `_decisions` entries (a 1.23 fold).
    NoSeq,
    /// Emit digests hashed without the gate segment.
    EmitDigestWithoutSegment,
    /// An ingress gate that appends the caller's event when it should refuse.
    RefusedResumeAppends,
    /// A fold that keeps a settled frame's `input` (a 1.25 fold).
    NoInputDrop,
    /// Userspace emit validation that lets every kernel event type through.
    EmitAllowsKernelTypes,
}

impl Bug {
    /// Every bug.
    pub const ALL: [Bug; 6] = [
        Bug::StepFailedFailsExecution,
        Bug::NoSeq,
        Bug::EmitDigestWithoutSegment,
        Bug::RefusedResumeAppends,
        Bug::NoInputDrop,
        Bug::EmitAllowsKernelTypes,
    ];

    /// The `--bug` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Bug::StepFailedFailsExecution => "step-failed-fails-execution",
            Bug::NoSeq => "no-seq",
            Bug::EmitDigestWithoutSegment => "emit-digest-without-segment",
            Bug::RefusedResumeAppends => "refused-resume-appends",
            Bug::NoInputDrop => "no-input-drop",
            Bug::EmitAllowsKernelTypes => "emit-allows-kernel-types",
        }
    }

    /// Parses a `--bug` name.
    pub fn parse(text: &str) -> Option<Bug> {
        Bug::ALL.into_iter().find(|b| b.as_str() == text)
    }

    /// Rule ids whose vectors this bug must fail (each must appear among the failed
    /// vectors' rules).
    pub fn must_fail_rules(self) -> &'static [&'static str] {
        match self {
            Bug::StepFailedFailsExecution => &["FOLD-09", "TYPED-17", "FOLD-16"],
            Bug::NoSeq => &["FOLD-38", "CONF-03"],
            Bug::EmitDigestWithoutSegment => &["EMIT-02", "EMIT-03"],
            Bug::RefusedResumeAppends => &["INGRESS-02", "INGRESS-03", "INGRESS-14", "INGRESS-15"],
            Bug::NoInputDrop => &["FOLD-48"],
            Bug::EmitAllowsKernelTypes => &["INGRESS-27"],
        }
    }

    /// The vector kinds this bug can affect; a failure of another kind is a harness bug.
    pub fn kinds(self) -> &'static [&'static str] {
        match self {
            Bug::StepFailedFailsExecution | Bug::NoSeq | Bug::NoInputDrop => &["fold", "normalize"],
            Bug::EmitDigestWithoutSegment => &["digest"],
            Bug::RefusedResumeAppends => &["ingress"],
            Bug::EmitAllowsKernelTypes => &["emit"],
        }
    }
}
