//! Deliberately wrong kernels: the reference kernel with exactly one behaviour changed,
//! each the kind of one-line bug a careful implementer still ships (a comparison the
//! wrong way round, a key sorted by code point, a field read from the payload instead of
//! the envelope, a check in the wrong order). They prove the vectors and the
//! differential campaign catch bugs: each must fail the vectors of the rules it breaks,
//! by rule id (`vectors/tests/judging.rs`); `wrong-kernel --bug NAME` serves one over
//! the stdio protocol.
//!
//! A bug changes the answer of one class of method in a way the real bug would: a
//! canonical-JSON bug changes every digest, flow hash and emit stamp the kernel writes;
//! a fold bug changes `fold`, `foldFrom` and `normalizeSnapshot`; a gate bug changes
//! `ingress` or `validateEmit`. [`Bug::fuzz_only`] marks the bugs no fixed vector
//! catches, which `loom vectors fuzz` must find instead.

pub mod canonical;
pub mod fold;
pub mod gate;
pub mod runtime;

/// Which kinds of vector a bug can make fail.
const FOLDS: &[&str] = &["fold", "normalize"];
const DIGESTS: &[&str] = &["digest", "runtime"];
const INGRESS: &[&str] = &["ingress"];
const EMITS: &[&str] = &["emit"];
const RUNTIME: &[&str] = &["runtime"];
const RESTORE: &[&str] = &["fold", "normalize"];

macro_rules! bugs {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $class:literal, $kinds:expr, [$($rule:literal),*], $fuzz:literal; )*) => {
        /// One deliberate bug.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Bug {
            $( $(#[$doc])* $variant, )*
        }

        impl Bug {
            /// Every bug, in catalogue order.
            pub const ALL: &'static [Bug] = &[ $( Bug::$variant, )* ];

            /// The `--bug` name.
            pub fn as_str(self) -> &'static str {
                match self { $( Bug::$variant => $name, )* }
            }

            /// The class of bug (for the catalogue in the docs).
            pub fn class(self) -> &'static str {
                match self { $( Bug::$variant => $class, )* }
            }

            /// Rule ids whose vectors (or campaign findings) this bug must fail: each
            /// must appear among the failed results' rules.
            pub fn must_fail_rules(self) -> &'static [&'static str] {
                match self { $( Bug::$variant => &[$($rule),*], )* }
            }

            /// The vector kinds this bug can affect; a failure of another kind is a
            /// harness bug.
            pub fn kinds(self) -> &'static [&'static str] {
                match self { $( Bug::$variant => $kinds, )* }
            }

            /// Whether only the differential campaign (not a fixed vector) catches it.
            pub fn fuzz_only(self) -> bool {
                match self { $( Bug::$variant => $fuzz, )* }
            }
        }
    };
}

bugs! {
    // ---- canonical JSON (every digest, flow hash and emit stamp) -------------------
    /// Object keys sorted by code point (UTF-8 byte order), not UTF-16 code units.
    KeysByCodePoint = "canonical-keys-by-code-point", "key sorting", DIGESTS, ["EMIT-04"], false;
    /// Numbers written with the host's float formatting (`1e21` in full, `1e-7` as a decimal).
    NumberHostFormat = "canonical-number-host-format", "number formatting", DIGESTS, ["GAP-03"], false;
    /// Negative zero written `-0`.
    NegativeZero = "canonical-negative-zero", "number formatting", DIGESTS, ["GAP-03"], false;
    /// Integers written exactly as parsed, not rounded to a double (2^53 + 1 stays odd).
    BigIntegersExact = "canonical-big-integers-exact", "number formatting", DIGESTS, ["GAP-03"], false;
    /// The exponent written without its sign (`1e21` for `1e+21`).
    ExponentWithoutPlus = "canonical-exponent-without-plus", "number formatting", DIGESTS, ["GAP-03"], false;
    /// Exponent form from 1e-5 down instead of below 1e-6 (`1e-6` for `0.000001`).
    ExponentThresholdOffByOne = "canonical-exponent-threshold", "number formatting", DIGESTS, ["GAP-03"], false;
    /// Control characters escaped with uppercase hex (`\u001F`).
    UppercaseHexEscape = "canonical-uppercase-hex-escape", "string escaping", DIGESTS, ["GAP-03"], false;
    /// `/` escaped as `\/`.
    EscapedSlash = "canonical-escaped-slash", "string escaping", DIGESTS, ["GAP-03"], false;
    /// Every non-ASCII character escaped as `\uXXXX`.
    EscapedNonAscii = "canonical-escaped-non-ascii", "string escaping", DIGESTS, ["GAP-03", "EMIT-04"], false;
    /// Backspace and form feed written as `\u0008` and `\u000c` instead of `\b`, `\f`.
    NoShortEscapes = "canonical-no-short-escapes", "string escaping", DIGESTS, ["GAP-03"], false;
    /// U+2028 and U+2029 escaped (the pre-ES2019 JSON-in-JS workaround).
    EscapedLineSeparators = "canonical-escaped-line-separators", "string escaping", DIGESTS, ["GAP-03"], false;
    // ---- digests -------------------------------------------------------------------
    /// FNV-1 instead of FNV-1a: multiply, then xor.
    Fnv1NotFnv1a = "fnv1-not-fnv1a", "digests", DIGESTS, ["EMIT-02"], false;
    /// Emit digests hashed without the gate segment.
    EmitDigestWithoutSegment = "emit-digest-without-segment", "digests", DIGESTS, ["EMIT-02", "EMIT-03"], false;
    /// Emit digests written in uppercase hex.
    EmitDigestUppercase = "emit-digest-uppercase", "digests", DIGESTS, ["EMIT-02"], false;
    /// Emit digests hashed over the payload only, without the event type.
    EmitDigestPayloadOnly = "emit-digest-payload-only", "digests", DIGESTS, ["EMIT-02"], false;
    /// The flow hash taken over the host serializer's output instead of canonical JSON.
    FlowHashNotCanonical = "flow-hash-not-canonical", "digests", DIGESTS, ["FOLD-34"], false;
    // ---- fold: status moves ----------------------------------------------------------
    /// `STEP_FAILED` fails a running execution (the pre-1.21 behaviour).
    StepFailedFailsExecution = "step-failed-fails-execution", "fold status moves", FOLDS, ["FOLD-09", "TYPED-17", "FOLD-16"], false;
    /// A kernel-stamped `EXECUTION_CONTINUED` records `_continuedTo` but leaves the status.
    ContinuedNotTerminal = "continued-not-terminal", "fold status moves", FOLDS, ["FOLD-23"], false;
    /// A second `STEP_FAILED` while parked (with `_failedWhileParked` already set) fails the execution.
    SecondParkedFailureFails = "second-parked-failure-fails", "fold status moves", FOLDS, ["FOLD-09", "FOLD-10"], false;
    /// A null resume re-opens a failed or completed execution but not a cancelled one.
    CancelledNotReopened = "cancelled-not-reopened", "fold status moves", FOLDS, ["FOLD-20", "FOLD-07"], true;
    // ---- fold: _resumePayloads -----------------------------------------------------
    /// `_resumePayloads` kept in a fixed buffer of three entries: later answers are lost.
    ResumePayloadsCapped = "resume-payloads-capped", "_resumePayloads", FOLDS, ["FOLD-15"], true;
    /// Every null `EXECUTION_RESUMED` adds a passthrough, even status-only ones.
    NullResumeAlwaysPassthrough = "null-resume-always-passthrough", "_resumePayloads", FOLDS, ["FOLD-12", "FOLD-20"], false;
    /// A null resume at `__loom_diverged__` adds a passthrough (only the in-doubt gate is special-cased).
    DivergedNullResumePassthrough = "diverged-null-resume-passthrough", "_resumePayloads", FOLDS, ["FOLD-36"], false;
    /// A non-null resume into an execution that is not parked is not recorded.
    UnparkedResumeDropped = "unparked-resume-dropped", "_resumePayloads", FOLDS, ["FOLD-15"], false;
    /// A kernel wait-addressed resume is also appended to `_resumePayloads`.
    WaitAnswerAlsoPassthrough = "wait-answer-also-passthrough", "_resumePayloads", FOLDS, ["FOLD-28"], false;
    // ---- fold: _failedWhileParked ----------------------------------------------------
    /// A `STEP_FAILED` while parked does not set `_failedWhileParked`.
    ParkedFailureNotRecorded = "parked-failure-not-recorded", "_failedWhileParked", FOLDS, ["FOLD-10"], false;
    /// `EXECUTION_RESUMED` does not remove `_failedWhileParked`.
    ParkedFailureKeptOnResume = "parked-failure-kept-on-resume", "_failedWhileParked", FOLDS, ["FOLD-11", "FOLD-12"], false;
    /// The terminal events do not remove `_failedWhileParked`.
    ParkedFailureKeptOnTerminal = "parked-failure-kept-on-terminal", "_failedWhileParked", FOLDS, ["FOLD-11"], false;
    // ---- fold: decisions and seq -----------------------------------------------------
    /// `_decisions` entries get no `seq` (a 1.23 fold).
    NoSeq = "no-seq", "seq stamping", FOLDS, ["FOLD-38", "CONF-03"], false;
    /// `seq` read from the payload when it has one, instead of the envelope.
    SeqFromPayload = "seq-from-payload", "seq stamping", FOLDS, ["FOLD-38"], false;
    /// A repeated decision id takes the later record's `seq`.
    SeqLastWins = "seq-last-wins", "seq stamping", FOLDS, ["FOLD-38"], false;
    /// `context` and `policy` are not copied into the decision entry.
    DecisionContextDropped = "decision-context-dropped", "fold payload fields", FOLDS, ["FOLD-17"], false;
    // ---- fold: frames and input ------------------------------------------------------
    /// A settled frame keeps its `input` (a 1.25 fold).
    NoInputDrop = "no-input-drop", "input drop", FOLDS, ["FOLD-48"], false;
    /// `STEP_RETRYING` drops the frame's `input` as settling does.
    RetryingDropsInput = "retrying-drops-input", "input drop", FOLDS, ["FOLD-48"], false;
    /// A `STEP_STARTED` without `input` leaves the key out instead of recording it.
    AbsentInputOmitted = "absent-input-omitted", "input drop", FOLDS, ["FOLD-48"], false;
    /// A `STEP_STARTED` without `attempt` is always attempt 1.
    AbsentAttemptIsOne = "absent-attempt-is-one", "fold payload fields", FOLDS, ["FOLD-08"], false;
    /// A typed `STEP_FAILED`'s channel and payload are not folded onto the frame.
    TypedChannelDropped = "typed-channel-dropped", "fold payload fields", FOLDS, ["FOLD-16"], false;
    /// `EXECUTION_MIGRATED.migratedInput` does not replace `_input`.
    MigratedInputIgnored = "migrated-input-ignored", "fold payload fields", FOLDS, ["FOLD-14"], false;
    // ---- fold: gates on kinds and metadata ---------------------------------------------
    /// Stamps counted only on application kinds, not on kernel kinds.
    FlowEmitsAppKindsOnly = "flow-emits-app-kinds-only", "emit stamps", FOLDS, ["FOLD-19"], false;
    /// `metadata.kernel` accepted when truthy (`"true"`, `1`), not only when `true`.
    KernelStampTruthy = "kernel-stamp-truthy", "stamp gate", FOLDS, ["FOLD-30"], false;
    /// Kernel-only kinds folded without the `metadata.kernel` stamp.
    KernelStampIgnored = "kernel-stamp-ignored", "stamp gate", FOLDS, ["FOLD-30"], false;
    /// An unknown kind still moves `sequence` and `updatedAt`.
    UnknownKindBookkeeping = "unknown-kind-bookkeeping", "unknown kinds", FOLDS, ["FOLD-04"], false;
    /// An envelope with `metadata.seal` is skipped.
    SealedEventSkipped = "sealed-event-skipped", "stamp gate", FOLDS, ["FOLD-40"], false;
    /// `EVENTS_REHOMED` is not recorded in `_lifecycle`.
    RehomedIgnored = "rehomed-ignored", "unknown kinds", FOLDS, ["FOLD-22"], false;
    // ---- fold: resources -------------------------------------------------------------
    /// Resource sums rounded to 9 decimals (a decimal-money habit).
    ResourceSumsRounded = "resource-sums-rounded", "resources", FOLDS, ["GAP-06"], false;
    /// Every dimension starts at 0 on the first meter (false zeros).
    UnmeteredDimensionsZero = "unmetered-dimensions-zero", "resources", FOLDS, ["RES-04"], false;
    // ---- fold: quarantine ------------------------------------------------------------
    /// The 1,024-entry quarantine cap is per topic, not in total.
    QuarantineCapPerTopic = "quarantine-cap-per-topic", "quarantine", FOLDS, ["FOLD-43"], false;
    /// An `INBOX_RELEASED` with `auto` but no `deliver` is treated as a delivery release.
    AutoReleaseWithoutDeliver = "auto-release-without-deliver", "quarantine", FOLDS, ["FOLD-42"], false;
    // ---- fold: versioned folds -------------------------------------------------------
    /// Folding as 1.25 folds as 1.24: the 1.25 behaviour (INBOX_QUARANTINED and
    /// INBOX_RELEASED, the quarantine) is gated one minor late (`>= 26` for `>= 25`).
    /// No fixed vector folds a quarantine as 1.25; the campaign's fold-as-every-minor
    /// family does.
    Gate125OneMinorLate = "gate-1-25-one-minor-late", "versioned fold", FOLDS, ["ABI-11"], true;
    // ---- fold: hostile names ---------------------------------------------------------
    /// A decision id named like an `Object.prototype` member (`constructor`, `toString`,
    /// …) is taken for one already recorded (`if (decisions[id])` on a plain object), so
    /// its first record gets no `seq`. No fixed vector names a decision so; the
    /// campaign's hostile-names family does.
    PrototypeNamesPresent = "prototype-names-present", "hostile names", FOLDS, ["FOLD-38"], true;
    // ---- fold: state fields only the field-coverage vectors hold ------------------------
    /// A timed park's `wakeAt` is recorded one millisecond late (`wakeAt + 1`).
    WakeAtOffByOne = "wake-at-off-by-one", "park record", FOLDS, ["REPLAY-10"], false;
    /// A park's `condition` is not kept in the park record.
    ParkConditionDropped = "park-condition-dropped", "park record", FOLDS, ["FOLD-07"], false;
    /// `STEP_STARTED.kind` is not copied onto the frame.
    StepKindDropped = "step-kind-dropped", "frame fields", FOLDS, ["FOLD-08"], false;
    /// An `EXECUTION_STARTED` without `input` leaves `_input` out instead of `null`.
    AbsentStartInputOmitted = "absent-start-input-omitted", "absent-field defaults", FOLDS, ["FOLD-26"], false;
    /// A `STEP_COMPLETED` without `output` leaves the frame's `output` out instead of `null`.
    AbsentOutputOmitted = "absent-output-omitted", "absent-field defaults", FOLDS, ["FOLD-08"], false;
    /// A `STEP_FAILED` without `error` leaves the frame's `error` out instead of `null`.
    AbsentErrorOmitted = "absent-error-omitted", "absent-field defaults", FOLDS, ["FOLD-09"], false;
    /// The initial state is `running`, not `pending` (every real log starts, so it shows
    /// only on a log with no `EXECUTION_STARTED`).
    InitialStatusRunning = "initial-status-running", "status", FOLDS, ["FOLD-04"], false;
    // ---- fold: the campaign's topic and envelope-field families -------------------------
    /// `_waits` kept by topic (a map from topic to wait): of several waits on one topic
    /// only the last stays. No fixed vector parks on two waits of one topic; the
    /// campaign's topics-and-waits family does.
    WaitsKeyedByTopic = "waits-keyed-by-topic", "topics and waits", FOLDS, ["FOLD-27"], true;
    /// An `EVENTS_REHOMED` whose payload carries its own `seq` keeps it in `_lifecycle`
    /// (`{seq, ...payload}` for `{...payload, seq}`). No fixed vector's rehome carries
    /// one; the campaign's envelope-named-fields family does.
    LifecycleSeqFromPayload = "lifecycle-seq-from-payload", "envelope-named payload fields", FOLDS, ["FOLD-22"], true;
    // ---- fold: the campaign's long-log and unknown-metadata families ----------------------
    /// The quarantine cap is kept as a counter of holds that releases and deliveries never
    /// decrement: after 1,024 holds in all, every further hold is ignored, however few are
    /// still held. No fixed vector holds more than a few dozen messages; the campaign's
    /// long-log family holds and releases thousands. The counter lives outside the
    /// state, so a restore starts it again from what is held: SNAP-01 breaks too.
    QuarantineCounterNeverDecrements = "quarantine-counter-never-decrements", "long logs", FOLDS, ["FOLD-43", "SNAP-01"], true;
    /// The 64-name `custom` cap is checked once per `RESOURCE_METERED`, not per name: an
    /// event that arrives with room for one name admits all of its new names. No fixed
    /// vector crosses the cap inside one event; the long-log family does.
    CustomCapPerEvent = "custom-cap-per-event", "long logs", FOLDS, ["RES-01"], true;
    /// Envelope metadata is checked against the keys the kernel knows (ABI-14's list) and
    /// dropped whole when it holds any other, so a stamped event with a `traceId` folds as
    /// unstamped. No fixed fold vector carries an unknown metadata key; the campaign's
    /// unknown-metadata family does.
    UnknownMetadataDropsStamp = "unknown-metadata-drops-stamp", "unknown metadata keys", FOLDS, ["ABI-14"], true;
    // ---- normalization and restore -----------------------------------------------------
    /// Older snapshots are restored as they are, without normalization.
    NormalizeSkipped = "normalize-skipped", "normalization", RESTORE, ["SNAP-03"], false;
    /// Normalization strips the 1.21 status but keeps settled frames' `input`.
    NormalizeKeepsSettledInput = "normalize-keeps-settled-input", "normalization", RESTORE, ["SNAP-10"], false;
    /// Normalization stamps legacy decisions with the snapshot's sequence.
    NormalizeInventsSeq = "normalize-invents-seq", "normalization", RESTORE, ["SNAP-06"], false;
    /// The pre-1.21 status fix stops one minor early: a 1.20 snapshot is not normalized.
    NormalizeStatusFixMisses120 = "normalize-status-fix-misses-1-20", "normalization", RESTORE, ["SNAP-03"], false;
    /// The pre-1.21 status fix reaches one minor too far: a 1.21 snapshot is normalized as older.
    NormalizeStatusFixIncludes121 = "normalize-status-fix-includes-1-21", "normalization", RESTORE, ["SNAP-01"], false;
    /// The pre-1.26 input strip stops one minor early: a 1.25 snapshot keeps settled inputs.
    NormalizeInputStripMisses125 = "normalize-input-strip-misses-1-25", "normalization", RESTORE, ["SNAP-10"], false;
    /// The restore folds tail events whose sequence equals the snapshot's (`>=` for `>`).
    RestoreTailOffByOne = "restore-tail-off-by-one", "restore", RESTORE, ["GAP-15"], false;
    // ---- ingress gate ------------------------------------------------------------------
    /// A refused resume still appends the caller's event.
    RefusedResumeAppends = "refused-resume-appends", "ingress refusal", INGRESS, ["INGRESS-02", "INGRESS-03", "INGRESS-14", "INGRESS-15"], false;
    /// A gate mismatch is reported as `not-suspended`.
    GateMismatchWrongReason = "gate-mismatch-wrong-reason", "ingress refusal reasons", INGRESS, ["INGRESS-03"], false;
    /// `TIMER_FIRED` is accepted at an untimed park.
    TimerAtUntimedGate = "timer-at-untimed-gate", "ingress refusal", INGRESS, ["INGRESS-04"], false;
    /// `EXECUTION_RECOVERED` is accepted on a parked execution.
    RecoverWhileParked = "recover-while-parked", "ingress refusal", INGRESS, ["INGRESS-05"], false;
    /// The gate is checked before the authenticator, so an unauthenticated caller learns the gate.
    GateBeforeIdentity = "gate-before-identity", "ingress refusal order", INGRESS, ["INGRESS-24"], false;
    /// The raw payload is recorded instead of the schema-parsed one.
    RawPayloadRecorded = "raw-payload-recorded", "ingress shape gate", INGRESS, ["INGRESS-22"], false;
    /// `APPROVAL_GRANTED` is not appended for an authenticated resume.
    ApprovalNotRecorded = "approval-not-recorded", "ingress append order", INGRESS, ["INGRESS-21"], false;
    /// A null answer while `_failedWhileParked` is set is accepted.
    NullAfterParkedFailureAccepted = "null-after-parked-failure-accepted", "ingress refusal", INGRESS, ["INGRESS-14"], false;
    /// At an in-doubt park a non-verdict is refused as a gate mismatch.
    IndoubtRefusedAsGateMismatch = "indoubt-refused-as-gate-mismatch", "ingress refusal reasons", INGRESS, ["INGRESS-10"], false;
    /// A resume carrying kernel-read metadata is accepted.
    ResumeKernelMetadataAccepted = "resume-kernel-metadata-accepted", "ingress refusal", INGRESS, ["INGRESS-39"], false;
    /// The execution authorizer is never consulted.
    AuthorizerIgnored = "authorizer-ignored", "ingress refusal", INGRESS, ["INGRESS-38"], false;
    /// `EXECUTION_RESUMED` is appended before the caller's event.
    ResumeBeforeCallerEvent = "resume-before-caller-event", "ingress append order", INGRESS, ["INGRESS-21"], false;
    // ---- userspace emit validation ---------------------------------------------------------
    /// Userspace emits may use every kernel event type.
    EmitAllowsKernelTypes = "emit-allows-kernel-types", "emit validation", EMITS, ["INGRESS-27"], false;
    /// A metered `-0` is refused as negative (the sign bit is tested).
    MeteredNegativeZeroRefused = "metered-negative-zero-refused", "emit validation", EMITS, ["INGRESS-28"], false;
    /// A metered value equal to the ceiling is refused (`>=` for `>`).
    MeteredCeilingExclusive = "metered-ceiling-exclusive", "emit validation", EMITS, ["INGRESS-28"], false;
    /// `QUOTA_EXCEEDED.reason` measured in characters, not UTF-16 units.
    QuotaReasonCountsChars = "quota-reason-counts-chars", "emit validation", EMITS, ["INGRESS-29"], false;
    /// An effect's `DECISION_RECORDED` id is not rewritten into its step's namespace.
    EffectDecisionNotNamespaced = "effect-decision-not-namespaced", "emit validation", EMITS, ["INGRESS-30"], false;
    /// A userspace `DECISION_RECORDED` may change a recorded choice.
    ChoiceChangeAccepted = "choice-change-accepted", "emit validation", EMITS, ["INGRESS-31"], false;
    /// A relay forwards allow-listed kernel kinds.
    RelayForwardsKernelKinds = "relay-forwards-kernel-kinds", "emit validation", EMITS, ["INGRESS-32"], false;
    /// A userspace emit may carry `metadata.flowEmit`.
    EmitFlowEmitMetadataAccepted = "emit-flow-emit-metadata-accepted", "emit validation", EMITS, ["INGRESS-39"], false;
    // ---- runtime -------------------------------------------------------------------
    /// Flow emits are never stamped.
    EmitsNeverStamped = "emits-never-stamped", "runtime stamping", RUNTIME, ["EMIT-05"], false;
    /// A timer wake records the clock at the fire as `firedAt`, not the recorded `wakeAt`.
    FiredAtIsClock = "fired-at-is-clock", "timers", RUNTIME, ["GAP-25"], false;
    /// Retries and re-runs all start as attempt 1: the attempt is never counted.
    RetryAttemptNotCounted = "retry-attempt-not-counted", "retry", RUNTIME, ["REPLAY-09"], false;
    /// A hanging effect's timeout is recorded on a `timeout` channel, as if typed.
    HangRecordedTyped = "hang-recorded-typed", "hang and timeout", RUNTIME, ["REPLAY-09"], false;
    /// An in-doubt verdict resumes the flow without its kernel `DECISION_RECORDED`.
    IndoubtVerdictNotRecorded = "indoubt-verdict-not-recorded", "in-doubt", RUNTIME, ["INGRESS-09"], false;
    /// A cancelled effect is written as `STEP_FAILED { error: "cancelled" }`.
    CancelledEffectAsFailure = "cancelled-effect-as-failure", "cancelled effects", RUNTIME, ["EMIT-08"], false;
    /// `negotiateBudget` negotiates again on the re-run after a resume instead of serving its decision.
    BudgetNegotiatedAgainOnReplay = "budget-negotiated-again-on-replay", "negotiateBudget", RUNTIME, ["RES-06"], false;
    /// `sleepUntil` a past time parks with `wakeAt` = now instead of the requested time.
    SleepUntilPastWakesNow = "sleep-until-past-wakes-now", "sleepUntil", RUNTIME, ["REPLAY-10"], false;
    /// `cancel` leaves a timed park's timer scheduled: it still fires into the cancelled execution.
    CancelKeepsTimer = "cancel-keeps-timer", "cancel", RUNTIME, ["REPLAY-10"], false;
    /// `MESSAGE_CONSUMED` is appended without `metadata.kernel`.
    MessageConsumedUnstamped = "message-consumed-unstamped", "receive and select", RUNTIME, ["FOLD-24"], false;
    /// A continuation's `EXECUTION_STARTED` has no `continuedFrom`.
    ContinuationWithoutOrigin = "continuation-without-origin", "continueAsNew", RUNTIME, ["FOLD-26"], false;
    /// `parallel` joins its branches' results in the order they finished.
    ParallelJoinInCompletionOrder = "parallel-join-in-completion-order", "parallel", RUNTIME, ["TYPED-15"], false;
    /// A declared-channel failure is recorded without `channel` and `payload`.
    TypedFailureRecordedUntyped = "typed-failure-recorded-untyped", "typed channels", RUNTIME, ["TYPED-06"], false;
    /// An operator release is applied but `INBOX_RELEASED` is not appended.
    ReleaseNotRecorded = "release-not-recorded", "quarantine", RUNTIME, ["FOLD-41"], false;
    /// `EXECUTION_MIGRATED` is written without `toCodeHash`.
    MigrationWithoutCodePin = "migration-without-code-pin", "resumeAs", RUNTIME, ["PLACE-06"], false;
}

impl Bug {
    /// Parses a `--bug` name.
    pub fn parse(text: &str) -> Option<Bug> {
        Bug::ALL.iter().copied().find(|b| b.as_str() == text)
    }

    /// The bugs fixed vectors must catch.
    pub fn vector_caught() -> impl Iterator<Item = Bug> {
        Bug::ALL.iter().copied().filter(|b| !b.fuzz_only())
    }
}
