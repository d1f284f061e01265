//! Fold scenarios: one log each. Every case becomes a `fold` vector at the current
//! schema (with snapshot/tail equivalence at every k); a case marked `history` also
//! becomes a versioned-fold vector at every older minor where the fold's output changes
//! (`fold-as-1-NN-…`), and [`super::normalize`] derives snapshot vectors from the cases.

use super::*;
use crate::format::Kind;
use crate::generate::Scenario;
use crate::limits::EVERY_K_EVENTS_MAX;
use loom_kernel::fold::{fold_as, known_event_types, ExecutionState, FoldVersion};
use loom_kernel::{canonical_string, EventEnvelope};

/// One fold case.
#[derive(Debug, Clone)]
pub struct FoldCase {
    /// Id suffix (the vector id is `fold-<id>`).
    pub id: String,
    /// Rules.
    pub rules: Vec<&'static str>,
    /// Description.
    pub description: String,
    /// `since`.
    pub since: &'static str,
    /// The log.
    pub events: Vec<Ev>,
    /// Emit versioned-fold vectors where the schema history changes the output.
    pub history: bool,
    /// A documented snapshot exception this log exhibits (SNAP-04 shapes).
    pub snap_exception: Option<&'static str>,
    /// What the expected answers rest on, stated for every vector the case gives
    /// ([`crate::generate::Scenario::basis`]): `None` until stated.
    pub rests: Option<Vec<&'static str>>,
    /// The open points whose other readings the case's vectors accept.
    pub accepts: Vec<&'static str>,
}

impl FoldCase {
    /// The spec's text determines the case's answers.
    pub fn spec(mut self) -> FoldCase {
        self.rests.get_or_insert_with(Vec::new);
        self
    }

    /// The case's answers rest on this reference's resolution of `gaps`.
    pub fn rests_on(mut self, gaps: &[&'static str]) -> FoldCase {
        self.rests.get_or_insert_with(Vec::new).extend(gaps);
        self
    }

    /// The case's vectors accept the other readings of `gaps` (the spec allows both).
    pub fn accepts(mut self, gaps: &[&'static str]) -> FoldCase {
        self.rests.get_or_insert_with(Vec::new);
        self.accepts.extend(gaps);
        self
    }

    /// Applies the case's statement to one of the scenarios it gives.
    pub fn state_basis(&self, mut s: Scenario) -> Scenario {
        if let Some(rests) = &self.rests {
            s = s.spec().rests_on(rests);
        }
        s.accepts(&self.accepts)
            .in_group(&format!("fold-case:{}", self.id))
    }
}

fn c(
    id: &str,
    rules: &[&'static str],
    since: &'static str,
    description: &str,
    events: Vec<Ev>,
) -> FoldCase {
    FoldCase {
        id: id.into(),
        rules: rules.to_vec(),
        description: description.into(),
        since,
        events,
        history: true,
        snap_exception: None,
        rests: None,
        accepts: Vec::new(),
    }
}

const SEAL: fn() -> Value = || json!({"v": 1, "cipher": "aes-256-gcm", "covers": ["payload"]});

/// Every fold case.
pub fn cases() -> Vec<FoldCase> {
    let mut v = Vec::new();
    // ---- core contract ------------------------------------------------------------
    v.push(c("fold09-caught-step-failure-running", &["FOLD-09", "FOLD-07", "TYPED-17"], "1.21.0",
        "STARTED, STEP_STARTED, STEP_FAILED folds to running: a step failure never fails the execution.",
        vec![started(), step_started("a"), step_failed("a")]).spec());
    v.push(
        c(
            "fold09-execution-failed-fails",
            &["FOLD-09", "FOLD-07"],
            "1.21.0",
            "Only EXECUTION_FAILED fails the execution and records _error.",
            vec![
                started(),
                step_started("a"),
                step_failed("a"),
                ev("EXECUTION_FAILED", json!({"error": "gave up"})),
            ],
        )
        .spec(),
    );
    v.push(c("fold09-step-failure-then-completed", &["FOLD-09", "FOLD-07"], "1.21.0",
        "A caught step failure followed by a retry under a new id and EXECUTION_COMPLETED completes.",
        vec![started(), step_started("a"), step_failed("a"), step_started("a#retry:1"), step_completed("a#retry:1", json!(1)), ev("EXECUTION_COMPLETED", json!({"output": 1}))]).spec());
    v.push(c("typed17-typed-step-failure-running", &["TYPED-17", "FOLD-09", "FOLD-16"], "1.21.0",
        "A typed STEP_FAILED alone leaves the execution running; the frame carries errorChannel and errorPayload.",
        vec![started(), step_started("a"), step_failed_typed("a", "declined", json!({"code": 7}))]).spec());
    v.push(c("fold10-failed-while-parked", &["FOLD-10", "FOLD-08"], "1.21.0",
        "A sibling's STEP_FAILED after the park keeps the execution suspended and sets _failedWhileParked.",
        vec![started(), step_started("a"), suspended("APPROVE"), step_failed("a")]).spec());
    v.push(c("fold10-second-failure-while-parked", &["FOLD-10", "FOLD-09"], "1.21.0",
        "Two sibling STEP_FAILEDs after the park: the second keeps the execution suspended too, and the flag stays set once.",
        vec![started(), step_started("a"), step_started("b"), suspended("APPROVE"), step_failed("a"), step_failed("b")]).spec());
    v.push(c("fold10-failure-after-resume-not-parked", &["FOLD-10", "FOLD-09", "FOLD-11"], "1.21.0",
        "A failure while parked, the resume, then another failure: the running execution keeps running and no flag is set (the rule's other side).",
        vec![started(), step_started("a"), step_started("b"), suspended("APPROVE"), step_failed("a"), resumed(json!({"ok": true})), step_failed("b")]).spec());
    for (kind, payload, id) in [
        ("EXECUTION_SUSPENDED", json!({"on": "NEXT"}), "suspended"),
        ("EXECUTION_RESUMED", json!({"ok": true}), "resumed"),
        ("EXECUTION_COMPLETED", json!({"output": 1}), "completed"),
        ("EXECUTION_FAILED", json!({"error": "x"}), "failed"),
        ("EXECUTION_CANCELLED", json!({}), "cancelled"),
    ] {
        v.push(
            c(
                &format!("fold11-{id}-ends-park"),
                &["FOLD-11"],
                "1.21.0",
                &format!("{kind} ends the park and removes _failedWhileParked."),
                vec![
                    started(),
                    step_started("a"),
                    suspended("APPROVE"),
                    step_failed("a"),
                    ev(kind, payload),
                ],
            )
            .spec(),
        );
    }
    v.push(c("fold11-continued-ends-park", &["FOLD-11", "FOLD-23"], "1.23.0",
        "A kernel-stamped EXECUTION_CONTINUED also ends the park and removes _failedWhileParked (reference decision).",
        vec![started(), step_started("a"), suspended("APPROVE"), step_failed("a"), ev("EXECUTION_CONTINUED", json!({"continuedTo": "exec-2"})).kernel()]).rests_on(&["GAP-12"]));
    v.push(c("fold12-null-resume-status-only", &["FOLD-12", "FOLD-21", "FOLD-11"], "1.21.0",
        "A null EXECUTION_RESUMED while _failedWhileParked is set re-opens the execution and adds no _resumePayloads entry.",
        vec![started(), step_started("a"), suspended("APPROVE"), step_failed("a"), resumed(Value::Null)]).rests_on(&["GAP-31"]));
    v.push(c(
        "fold21-non-null-resume-after-parked-failure",
        &["FOLD-21", "FOLD-11"],
        "1.21.0",
        "A non-null resume after a parked failure is a passthrough, exactly as 1.20.0 folded it.",
        vec![
            started(),
            step_started("a"),
            suspended("APPROVE"),
            step_failed("a"),
            resumed(json!({"ok": true})),
        ],
    ).spec());
    // ---- FOLD-04 unknown kinds ------------------------------------------------------
    for (i, (ty, payload)) in [
        ("CUSTOM_EVENT", json!({"a": 1})),
        ("APPROVE", json!(null)),
        ("progress", json!([1, 2, 3])),
        ("ORDER_PLACED", json!("text")),
        ("execution_started", json!({"input": 5})),
        ("STEP_COMPLETED_V2", json!({"stepId": "a", "output": 1})),
    ]
    .into_iter()
    .enumerate()
    {
        v.push(
            c(
                &format!("fold04-unknown-kind-{}", i + 1),
                &["FOLD-04"],
                "1.15.0",
                &format!(
                    "An unknown kind `{ty}` is inert: state, sequence and updatedAt do not move."
                ),
                vec![
                    started(),
                    step_started("a"),
                    ev(ty, payload),
                    step_completed("a", json!(2)),
                ],
            )
            .spec(),
        );
    }
    v.push(
        c(
            "fold04-unknown-kind-first",
            &["FOLD-04"],
            "1.15.0",
            "An unknown kind before EXECUTION_STARTED leaves the state pending and untouched.",
            vec![ev("SOMETHING", json!({"x": 1})), started()],
        )
        .spec(),
    );
    // ---- FOLD-05 __proto__ ----------------------------------------------------------
    for (kind, base) in [
        ("EXECUTION_STARTED", json!({"input": {"n": 1}})),
        ("STEP_COMPLETED", json!({"stepId": "a", "output": {"v": 1}})),
        ("DECISION_RECORDED", json!({"id": "d", "choice": {"c": 1}})),
        ("EXECUTION_RESUMED", json!({"answer": {"v": 1}})),
    ] {
        for depth in [1, 2] {
            let mut payload = base.clone();
            let target = match kind {
                "EXECUTION_STARTED" => "input",
                "STEP_COMPLETED" => "output",
                "DECISION_RECORDED" => "choice",
                _ => "answer",
            };
            if depth == 1 {
                payload[target]["__proto__"] = json!({"polluted": true});
            } else {
                payload[target]["inner"] = json!({"__proto__": {"polluted": true}, "keep": 1});
            }
            let mut events = vec![];
            if kind != "EXECUTION_STARTED" {
                events.push(started());
            }
            match kind {
                "STEP_COMPLETED" => events.push(step_started("a")),
                "EXECUTION_RESUMED" => events.push(suspended("APPROVE")),
                _ => {}
            }
            events.push(ev(kind, payload));
            v.push(c(&format!("fold05-proto-{}-depth{depth}", slug(kind)), &["FOLD-05"], "1.15.0",
                &format!("A `__proto__` key at depth {depth} of a {kind} payload never reaches the folded state."),
                // "MUST be rejected": the key dropped (ours) or the event refused whole.
                events).accepts(&["GAP-11"]));
        }
    }
    // ---- schema history ---------------------------------------------------------------
    v.push(c(
        "fold14-migrated-input-replaces",
        &["FOLD-14", "SNAP-12"],
        "1.15.0",
        "EXECUTION_MIGRATED.migratedInput replaces _input; a later resume sees the migrated value.",
        vec![
            started(),
            suspended("APPROVE"),
            ev(
                "EXECUTION_MIGRATED",
                json!({"migratedInput": {"n": 2}, "flowId": "flow-v2"}),
            ),
            resumed(json!({"ok": 1})),
        ],
    ).spec());
    v.push(
        c(
            "fold14-migrated-without-input",
            &["FOLD-14"],
            "1.15.0",
            "EXECUTION_MIGRATED without migratedInput leaves _input unchanged (legacy).",
            vec![
                started(),
                ev("EXECUTION_MIGRATED", json!({"flowId": "flow-v2"})),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold35-migrated-to-code-hash",
            &["FOLD-35", "PLACE-06"],
            "1.23.0",
            "EXECUTION_MIGRATED.toCodeHash is accepted and recorded as the code pin.",
            vec![
                started(),
                ev("EXECUTION_MIGRATED", json!({"toCodeHash": "sha256:00ff"})),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold15-two-gates-in-order",
            &["FOLD-15", "REPLAY-06"],
            "1.16.0",
            "Two gates resumed with A then B fold _resumePayloads == [A, B].",
            vec![
                started(),
                suspended("G1"),
                resumed(json!("A")),
                suspended("G2"),
                resumed(json!("B")),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold15-three-gates-one-open",
            &["FOLD-15", "REPLAY-06"],
            "1.16.0",
            "Two answered gates and a third open park: two entries, status suspended on G3.",
            vec![
                started(),
                suspended("G1"),
                resumed(json!({"n": 1})),
                suspended("G2"),
                resumed(json!({"n": 2})),
                suspended("G3"),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold16-typed-failure-channel",
            &["FOLD-16", "TYPED-06"],
            "1.17.0",
            "A typed STEP_FAILED folds errorChannel and errorPayload onto the frame.",
            vec![
                started(),
                step_started("a"),
                step_failed_typed("a", "declined", json!({"reason": "card"})),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold16-untyped-failure-no-channel",
            &["FOLD-16"],
            "1.17.0",
            "The same failure without channel/payload gains neither key (the untyped golden).",
            vec![
                started(),
                step_started("a"),
                ev(
                    "STEP_FAILED",
                    json!({"stepId": "a", "error": "TypedFailure(declined)"}),
                ),
            ],
        )
        .spec(),
    );
    v.push(c("fold17-context-policy-copied", &["FOLD-17", "FOLD-38"], "1.18.0",
        "DECISION_RECORDED context and policy are copied unchanged into the _decisions entry.",
        vec![started(), ev("DECISION_RECORDED", json!({"id": "route", "choice": "fast", "context": {"load": [0.5, {"x": null}]}, "policy": {"name": "eps", "propensity": 0.25}}))]).spec());
    v.push(
        c(
            "fold19-stamped-app-events",
            &["FOLD-19"],
            "1.19.0",
            "Stamped application events count per digest; an unstamped one counts nothing.",
            vec![
                started(),
                ev("PROGRESS", json!({"p": 1})).stamp("00000000000000aa"),
                ev("PROGRESS", json!({"p": 1})).stamp("00000000000000aa"),
                ev("PROGRESS", json!({"p": 2})).stamp("00000000000000bb"),
                ev("PROGRESS", json!({"p": 3})),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    v.push(
        c(
            "fold19-stamped-allow-listed-kernel-kind",
            &["FOLD-19", "RES-01"],
            "1.19.0",
            "A stamped RESOURCE_METERED counts its stamp and still meters.",
            vec![
                started(),
                ev("RESOURCE_METERED", json!({"tokens": 3})).stamp("00000000000000cc"),
            ],
        )
        .spec(),
    );
    v.push(c("fold19-stamp-on-any-type", &["FOLD-19", "FOLD-04"], "1.19.0",
        "The count is type-independent: a stamp on an unknown kind counts, though the kind is otherwise inert.",
        vec![started(), ev("UNKNOWN_THING", json!({})).stamp("00000000000000dd")]).rests_on(&["GAP-12"]));
    v.push(
        c(
            "fold20-null-resume-after-failed",
            &["FOLD-20", "INGRESS-07"],
            "1.20.0",
            "A null resume after EXECUTION_FAILED re-opens the execution without a passthrough.",
            vec![
                started(),
                ev("EXECUTION_FAILED", json!({"error": "x"})),
                resumed(Value::Null),
            ],
        )
        .rests_on(&["GAP-31"]),
    );
    v.push(
        c(
            "fold20-null-resume-at-indoubt-park",
            &["FOLD-20"],
            "1.20.0",
            "A null resume at an in-doubt park is status-only.",
            vec![
                started(),
                step_started("a"),
                ev("EFFECT_INDOUBT", json!({"stepId": "a", "attempt": 1})),
                ev(
                    "EXECUTION_SUSPENDED",
                    json!({"on": "__loom_indoubt__", "condition": {"stepId": "a", "attempt": 1}}),
                ),
                resumed(Value::Null),
            ],
        )
        .rests_on(&["GAP-10", "GAP-31"]),
    );
    v.push(
        c(
            "fold20-null-resume-running",
            &["FOLD-20"],
            "1.20.0",
            "A null resume into a running (unparked) execution is status-only.",
            vec![started(), resumed(Value::Null)],
        )
        .rests_on(&["GAP-31"]),
    );
    v.push(
        c(
            "gap31-null-answer-at-ordinary-gate",
            &["FOLD-15", "FOLD-20"],
            "1.20.0",
            "A null answer at an ordinary gate is a passthrough whose entry is null (GAP-31).",
            vec![started(), suspended("APPROVE"), resumed(Value::Null)],
        )
        .rests_on(&["GAP-31"]),
    );
    v.push(c("gap34-non-null-resume-unparked", &["FOLD-15"], "1.16.0",
        "A non-null resume into an unparked execution still appends its payload (GAP-34, legacy logs).",
        vec![started(), resumed(json!({"late": true}))]).spec());
    v.push(
        c(
            "fold22-events-rehomed-audit",
            &["FOLD-22"],
            "1.22.0",
            "EVENTS_REHOMED only appends audit to _lifecycle.",
            vec![
                started(),
                ev("EVENTS_REHOMED", json!({"segment": 1, "from": "blank"})),
                ev("EVENTS_REHOMED", json!({"segment": 2, "from": "blank"})),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    v.push(c(
        "fold23-continued-stamped",
        &["FOLD-23", "FOLD-32"],
        "1.23.0",
        "A kernel-stamped EXECUTION_CONTINUED sets the terminal status continued and _continuedTo.",
        vec![
            started(),
            ev("EXECUTION_CONTINUED", json!({"continuedTo": "exec-2"})).kernel(),
        ],
    ).rests_on(&["GAP-12"]));
    v.push(
        c(
            "fold23-continued-unstamped-noop",
            &["FOLD-23", "FOLD-30"],
            "1.23.0",
            "The same EXECUTION_CONTINUED unstamped is a no-op.",
            vec![
                started(),
                ev("EXECUTION_CONTINUED", json!({"continuedTo": "exec-2"})),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    v.push(c("fold24-message-consumed-stamped", &["FOLD-24"], "1.23.0",
        "A kernel-stamped MESSAGE_CONSUMED advances _inbox and, when wait-addressed, _waitAnswers.",
        vec![started(), ev("MESSAGE_CONSUMED", json!({"topic": "orders", "messageId": "m1"})).kernel(), ev("MESSAGE_CONSUMED", json!({"topic": "orders", "messageId": "m2", "waitId": "w1", "message": {"qty": 2}})).kernel()]).rests_on(&["GAP-12"]));
    v.push(
        c(
            "fold24-message-consumed-unstamped-noop",
            &["FOLD-24", "FOLD-30"],
            "1.23.0",
            "An unstamped MESSAGE_CONSUMED leaves _inbox and _waitAnswers as they were.",
            vec![
                started(),
                ev(
                    "MESSAGE_CONSUMED",
                    json!({"topic": "orders", "messageId": "m1", "waitId": "w1", "message": 1}),
                ),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    v.push(
        c(
            "fold25-parallel-completed-stamped",
            &["FOLD-25"],
            "1.23.0",
            "A kernel-stamped PARALLEL_COMPLETED folds its payload into _scopes.",
            vec![
                started(),
                ev(
                    "PARALLEL_COMPLETED",
                    json!({"scopeId": "p1", "results": ["a", "b"]}),
                )
                .kernel(),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    v.push(
        c(
            "fold25-parallel-completed-unstamped-noop",
            &["FOLD-25", "FOLD-30"],
            "1.23.0",
            "An unstamped PARALLEL_COMPLETED with a payload is the no-op it always was.",
            vec![
                started(),
                ev(
                    "PARALLEL_COMPLETED",
                    json!({"scopeId": "p1", "results": ["a", "b"]}),
                ),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    for (field, value) in [
        ("principal", json!({"sub": "user-1"})),
        ("parent", json!({"executionId": "exec-0"})),
        ("chain", json!(["exec-0"])),
        ("codeHash", json!("sha256:abc123")),
        ("flowHash", json!("fnv1a:0123456789abcdef")),
        ("flowId", json!("flow")),
    ] {
        let mut payload = json!({"input": {"n": 1}});
        payload[field] = value;
        v.push(
            c(
                &format!("fold26-started-{}", field.to_ascii_lowercase()),
                &["FOLD-26", "FOLD-33", "FOLD-34"],
                "1.23.0",
                &format!("EXECUTION_STARTED.{field} alone folds into its reserved key."),
                vec![ev("EXECUTION_STARTED", payload)],
            )
            .spec(),
        );
    }
    v.push(c("fold34-started-sha256-flow-hash", &["FOLD-34"], "1.23.0",
        "A sha256: flowHash is recorded as given.",
        vec![ev("EXECUTION_STARTED", json!({"input": null, "flowHash": "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}))]).spec());
    v.push(c("fold26-started-all-fields", &["FOLD-26", "FOLD-33"], "1.23.0",
        "Every optional EXECUTION_STARTED field at once, with a valid carry seeding _resources and _inbox.",
        vec![ev("EXECUTION_STARTED", json!({"input": {"n": 1}, "principal": "u", "parent": {"executionId": "p"}, "chain": ["p"], "codeHash": "sha256:aa", "carry": {"resources": {"tokens": 10}, "inbox": {"orders": {"consumed": 3, "lastMessageId": "m3"}}}}))]).spec());
    v.push(
        c(
            "fold26-started-invalid-carry",
            &["FOLD-26"],
            "1.23.0",
            "A carry that fails validation seeds nothing (GAP-18).",
            vec![ev(
                "EXECUTION_STARTED",
                json!({"input": {"n": 1}, "carry": {"resources": {"tokens": "ten"}, "bogus": 1}}),
            )],
        )
        .spec(),
    );
    v.push(c("fold45-carry-quarantined", &["FOLD-45", "FOLD-41"], "1.25.0",
        "continuedFrom.carried.quarantined seeds _quarantined in the continuing execution.",
        vec![ev("EXECUTION_STARTED", json!({"input": {}, "continuedFrom": {"executionId": "exec-0", "carried": {"quarantined": {"orders": [{"messageId": "m1", "seq": 4}]}}}}))]).spec());
    v.push(c("fold27-waits", &["FOLD-27"], "1.23.0",
        "EXECUTION_SUSPENDED.waits folds into _waits, in order.",
        vec![started(), ev("EXECUTION_SUSPENDED", json!({"on": "WAIT", "waits": [{"waitId": "w1", "topic": "a"}, {"waitId": "w2", "topic": "b"}]}))]).spec());
    v.push(c("fold28-wait-addressed-resume-stamped", &["FOLD-28", "FOLD-30"], "1.23.0",
        "A kernel-stamped wait-addressed resume answers the wait in _waitAnswers and adds no _resumePayloads entry (GAP-23).",
        vec![started(), ev("EXECUTION_SUSPENDED", json!({"on": "WAIT", "waits": [{"waitId": "w1"}]})), ev("EXECUTION_RESUMED", json!({"waitId": "w1", "answer": {"ok": true}})).kernel()]).rests_on(&["GAP-14", "GAP-23"]));
    v.push(c("fold28-wait-addressed-resume-unstamped", &["FOLD-28", "FOLD-30"], "1.23.0",
        "The same resume unstamped folds as a plain resume: a _resumePayloads entry, no wait answer.",
        vec![started(), ev("EXECUTION_SUSPENDED", json!({"on": "WAIT", "waits": [{"waitId": "w1"}]})), resumed(json!({"waitId": "w1", "answer": {"ok": true}}))]).rests_on(&["GAP-14"]));
    v.push(
        c(
            "fold29-metered-custom",
            &["FOLD-29", "RES-01"],
            "1.23.0",
            "RESOURCE_METERED.custom accumulates beside the dimensions.",
            vec![
                started(),
                ev(
                    "RESOURCE_METERED",
                    json!({"tokens": 5, "custom": {"gpuSeconds": 1.5}}),
                ),
                ev(
                    "RESOURCE_METERED",
                    json!({"tokens": 2, "custom": {"gpuSeconds": 2}}),
                ),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold29-metered-without-custom",
            &["FOLD-29", "RES-01", "RES-04"],
            "1.23.0",
            "The same meters without custom: only measured dimensions appear (no false zeros).",
            vec![
                started(),
                ev("RESOURCE_METERED", json!({"tokens": 5})),
                ev("RESOURCE_METERED", json!({"tokens": 2, "ms": 30})),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold29-outcome-recorded-fields",
            &["FOLD-29"],
            "1.23.0",
            "OUTCOME_RECORDED with recordedBy and late is accepted.",
            vec![
                started(),
                ev(
                    "OUTCOME_RECORDED",
                    json!({"stepId": "s", "outcome": "good", "recordedBy": "judge", "late": true}),
                ),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    v.push(
        c(
            "fold29-outcome-recorded-plain",
            &["FOLD-29"],
            "1.23.0",
            "OUTCOME_RECORDED without the optional fields folds as before.",
            vec![
                started(),
                ev(
                    "OUTCOME_RECORDED",
                    json!({"stepId": "s", "outcome": "good"}),
                ),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    v.push(c("fold31-fork-metadata", &["FOLD-31"], "1.23.0",
        "forkChain and forkedBy metadata populate _chain and _parent when EXECUTION_STARTED lacks them (GAP-19).",
        vec![ev("EXECUTION_STARTED", json!({"input": 1})).meta("forkChain", json!(["root", "mid"])).meta("forkedBy", json!("mid"))]).rests_on(&["GAP-19"]));
    v.push(
        c(
            "fold31-fork-metadata-fields-win",
            &["FOLD-31", "FOLD-26"],
            "1.23.0",
            "Explicit chain and parent fields win over fork metadata.",
            vec![ev(
                "EXECUTION_STARTED",
                json!({"input": 1, "chain": ["a"], "parent": {"executionId": "a"}}),
            )
            .meta("forkChain", json!(["root"]))
            .meta("forkedBy", json!("root"))],
        )
        .spec(),
    );
    v.push(
        c(
            "fold35-inner-steps-stamped",
            &["FOLD-35"],
            "1.23.0",
            "innerSteps on a kernel-stamped DECISION_RECORDED is folded into _decisions.",
            vec![
                started(),
                ev(
                    "DECISION_RECORDED",
                    json!({"id": "d", "choice": 1, "innerSteps": ["s1", "s2"]}),
                )
                .kernel(),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold35-inner-steps-unstamped",
            &["FOLD-35", "FOLD-30"],
            "1.23.0",
            "innerSteps on an unstamped DECISION_RECORDED is not reflected.",
            vec![
                started(),
                ev(
                    "DECISION_RECORDED",
                    json!({"id": "d", "choice": 1, "innerSteps": ["s1", "s2"]}),
                ),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold36-diverged-null-resume",
            &["FOLD-36", "FOLD-37"],
            "1.23.0",
            "A null resume of __loom_diverged__ is status-only.",
            vec![
                started(),
                suspended("__loom_diverged__"),
                resumed(Value::Null),
            ],
        )
        .rests_on(&["GAP-31"]),
    );
    v.push(c(
        "fold38-seq-from-envelope",
        &["FOLD-38", "CONF-03"],
        "1.24.0",
        "seq is the envelope sequence of the first DECISION_RECORDED; a payload seq is ignored.",
        vec![
            started(),
            step_started("a"),
            ev(
                "DECISION_RECORDED",
                json!({"id": "d", "choice": "x", "seq": 99}),
            ),
        ],
    ).spec());
    v.push(c(
        "fold38-repeat-keeps-first-seq",
        &["FOLD-38", "CONF-03"],
        "1.24.0",
        "A repeated id rebuilds the entry (the later choice wins, GAP-24) but keeps its first seq.",
        vec![
            started(),
            decision("d", json!("x")),
            decision("e", json!(1)),
            ev(
                "DECISION_RECORDED",
                json!({"id": "d", "choice": "y", "context": {"c": 1}}),
            ),
        ],
    ).rests_on(&["GAP-24"]));
    v.push(c(
        "fold38-many-decisions-order",
        &["FOLD-38", "SNAP-09", "CONF-03"],
        "1.24.0",
        "Array-index-like ids sort first in the map; seq keeps the order decisions were made in.",
        vec![
            started(),
            decision("b", json!(1)),
            decision("10", json!(2)),
            decision("a", json!(3)),
            decision("2", json!(4)),
        ],
    ).spec());
    v.push(c("fold41-quarantine-hold-release", &["FOLD-41", "FOLD-43"], "1.25.0",
        "Stamped INBOX_QUARANTINED holds messages per topic; an operator release with deliver marks the head.",
        vec![started(), ev("INBOX_QUARANTINED", json!({"topic": "t", "messageId": "m1"})).kernel(), ev("INBOX_QUARANTINED", json!({"topic": "t", "messageId": "m2"})).kernel(), ev("INBOX_RELEASED", json!({"topic": "t", "operator": "ops", "deliver": true})).kernel()]).rests_on(&["GAP-12", "GAP-17"]));
    v.push(
        c(
            "fold41-quarantine-unstamped-noop",
            &["FOLD-41", "FOLD-30"],
            "1.25.0",
            "Unstamped quarantine facts are no-ops.",
            vec![
                started(),
                ev(
                    "INBOX_QUARANTINED",
                    json!({"topic": "t", "messageId": "m1"}),
                ),
                ev(
                    "INBOX_RELEASED",
                    json!({"topic": "t", "operator": "ops", "deliver": true}),
                ),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    v.push(
        c(
            "fold41-release-out-of-order-ignored",
            &["FOLD-41", "FOLD-43"],
            "1.25.0",
            "A release naming an entry that is not the head is ignored (order-preserving).",
            vec![
                started(),
                ev(
                    "INBOX_QUARANTINED",
                    json!({"topic": "t", "messageId": "m1"}),
                )
                .kernel(),
                ev(
                    "INBOX_QUARANTINED",
                    json!({"topic": "t", "messageId": "m2"}),
                )
                .kernel(),
                ev(
                    "INBOX_RELEASED",
                    json!({"topic": "t", "messageId": "m2", "operator": "ops", "deliver": true}),
                )
                .kernel(),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    v.push(
        c(
            "fold41-operator-release-without-deliver-drops",
            &["FOLD-41", "FOLD-42"],
            "1.25.0",
            "An operator release without deliver discards the held head.",
            vec![
                started(),
                ev(
                    "INBOX_QUARANTINED",
                    json!({"topic": "t", "messageId": "m1"}),
                )
                .kernel(),
                ev("INBOX_RELEASED", json!({"topic": "t", "operator": "ops"})).kernel(),
            ],
        )
        .rests_on(&["GAP-12"]),
    );
    for (operator, auto, deliver) in [
        (true, true, true),
        (true, true, false),
        (false, false, true),
        (false, false, false),
        (true, false, true),
        (true, false, false),
        (false, true, true),
        (false, true, false),
    ] {
        let mut p = json!({"topic": "t"});
        if operator {
            p["operator"] = json!("ops");
        }
        if auto {
            p["auto"] = json!(true);
        }
        if deliver {
            p["deliver"] = json!(true);
        }
        let name = format!(
            "fold42-release-op{}-auto{}-deliver{}",
            operator as u8, auto as u8, deliver as u8
        );
        v.push(c(&name, &["FOLD-42"], "1.25.0",
            &format!("INBOX_RELEASED with operator={operator}, auto={auto}, deliver={deliver}: both or neither is ignored; auto needs deliver (GAP-17)."),
            vec![started(), ev("INBOX_QUARANTINED", json!({"topic": "t", "messageId": "m1"})).kernel(), ev("INBOX_RELEASED", p).kernel()])
            // An ignored release leaves sequence and updatedAt (GAP-12); the two rows the
            // text does not decide (auto without deliver, operator with deliver) are GAP-17's.
            .rests_on(&["GAP-12"])
            .rests_on(if (auto && !operator && !deliver) || (operator && !auto && deliver) { &["GAP-17"] } else { &[] }));
    }
    v.push(
        c(
            "fold44-consumed-drops-released",
            &["FOLD-44", "FOLD-24"],
            "1.25.0",
            "With quarantine state, MESSAGE_CONSUMED of a delivered released entry drops it.",
            vec![
                started(),
                ev(
                    "INBOX_QUARANTINED",
                    json!({"topic": "t", "messageId": "m1"}),
                )
                .kernel(),
                ev(
                    "INBOX_RELEASED",
                    json!({"topic": "t", "operator": "ops", "deliver": true}),
                )
                .kernel(),
                ev("MESSAGE_CONSUMED", json!({"topic": "t", "messageId": "m1"})).kernel(),
            ],
        )
        .rests_on(&["GAP-12", "GAP-17"]),
    );
    v.push(c("fold47-consumed-without-quarantine", &["FOLD-44", "FOLD-47"], "1.23.0",
        "Without _quarantined, a stamped MESSAGE_CONSUMED folds as in 1.23.0 and adds no _quarantined key.",
        vec![started(), ev("MESSAGE_CONSUMED", json!({"topic": "t", "messageId": "m1"})).kernel()]).rests_on(&["GAP-12"]));
    v.push(
        c(
            "fold47-pre-125-log",
            &["FOLD-47", "FOLD-50"],
            "1.24.0",
            "A pre-1.25 log with steps, a gate and a decision holds no _quarantined key.",
            vec![
                started(),
                step_started("a"),
                step_completed("a", json!(1)),
                decision("d", json!("x")),
                suspended("G"),
                resumed(json!(1)),
                ev("EXECUTION_COMPLETED", json!({"output": 2})),
            ],
        )
        .spec(),
    );
    for (kind, payload) in [
        ("STEP_COMPLETED", json!({"stepId": "a", "output": 1})),
        ("STEP_FAILED", json!({"stepId": "a", "error": "boom"})),
        ("STEP_CANCELLED", json!({"stepId": "a"})),
    ] {
        v.push(
            c(
                &format!("fold48-{}-drops-input", slug(kind)),
                &["FOLD-48", "FOLD-49", "SNAP-10"],
                "1.26.0",
                &format!("{kind} settles the frame and drops its input."),
                vec![started(), step_started("a"), ev(kind, payload)],
            )
            .spec(),
        );
    }
    v.push(
        c(
            "fold48-retrying-keeps-input",
            &["FOLD-48"],
            "1.26.0",
            "STEP_RETRYING keeps the frame's input.",
            vec![
                started(),
                step_started("a"),
                ev("STEP_RETRYING", json!({"stepId": "a", "attempt": 2})),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold48-retry-then-complete",
            &["FOLD-48"],
            "1.26.0",
            "A retried step keeps its input until it completes, then drops it.",
            vec![
                started(),
                step_started("a"),
                ev("STEP_RETRYING", json!({"stepId": "a", "attempt": 2})),
                step_completed("a", json!("ok")),
            ],
        )
        .spec(),
    );
    // FOLD-50 feature-free corpus
    v.push(
        c(
            "fold50-feature-free-no-settled-step",
            &["FOLD-50"],
            "1.15.0",
            "A feature-free log with no settled step: identical bytes in every generation.",
            vec![started(), step_started("a"), suspended("G")],
        )
        .spec(),
    );
    v.push(
        c(
            "fold50-feature-free-completed",
            &["FOLD-50"],
            "1.15.0",
            "A feature-free log that completes.",
            vec![
                started(),
                step_started("a"),
                step_completed("a", json!({"r": 1})),
                step_started("b"),
                step_completed("b", json!([1])),
                ev("EXECUTION_COMPLETED", json!({"output": "done"})),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold50-feature-free-one-gate",
            &["FOLD-50"],
            "1.16.0",
            "A feature-free log with a single gate answered once.",
            vec![
                started(),
                suspended("G"),
                resumed(json!({"ok": true})),
                ev("EXECUTION_COMPLETED", json!({"output": null})),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fold50-feature-free-cancelled",
            &["FOLD-50", "FOLD-07"],
            "1.15.0",
            "A feature-free log cancelled mid-step.",
            vec![
                started(),
                step_started("a"),
                ev("STEP_CANCELLED", json!({"stepId": "a"})),
                ev("EXECUTION_CANCELLED", json!({})),
            ],
        )
        .spec(),
    );
    // RES
    v.push(
        c(
            "res01-accumulator-fixed-size",
            &["RES-01", "RES-03", "RES-04"],
            "1.15.0",
            "Six meters over all dimensions accumulate into one entry per dimension.",
            vec![
                started(),
                ev("RESOURCE_METERED", json!({"tokens": 1, "costUsd": 0.5})),
                ev("RESOURCE_METERED", json!({"ms": 10, "memBytes": 1024})),
                ev("RESOURCE_METERED", json!({"wallMs": 12, "netBytes": 2048})),
                ev("RESOURCE_METERED", json!({"tokens": 2, "costUsd": 0.25})),
                ev("RESOURCE_METERED", json!({"ms": 5})),
                ev("RESOURCE_METERED", json!({"tokens": 3})),
            ],
        )
        .spec(),
    );
    // ABI
    v.push(c("abi10-envelopes-without-metadata", &["ABI-10", "ABI-09"], "1.15.0",
        "Envelopes without metadata are valid; the state has exactly status, frames, variables, sequence, startedAt, updatedAt.",
        vec![started(), step_started("a"), step_completed("a", json!(null))]).spec());
    // FOLD-40 seal
    for kind in [
        "EXECUTION_STARTED",
        "STEP_STARTED",
        "STEP_COMPLETED",
        "DECISION_RECORDED",
        "EXECUTION_SUSPENDED",
        "EXECUTION_RESUMED",
        "RESOURCE_METERED",
        "CUSTOM_EVENT",
    ] {
        let mut events = vec![started(), step_started("s1")];
        let sealed = ev(
            kind,
            sample_payload(if kind == "STEP_STARTED" {
                "STEP_STARTED"
            } else {
                kind
            }),
        )
        .meta("seal", SEAL());
        if kind == "EXECUTION_STARTED" {
            events = vec![sealed, step_started("s1")];
        } else {
            events.push(sealed);
        }
        v.push(
            c(
                &format!("fold40-seal-ignored-{}", slug(kind)),
                &["FOLD-40", "ABI-14"],
                "1.25.0",
                &format!("metadata.seal on a {kind} is ignored by the fold."),
                events,
            )
            // The unknown kind is inert, sealed or not: whether it moves the bookkeeping is GAP-12.
            .rests_on(if kind == "CUSTOM_EVENT" {
                &["GAP-12"]
            } else {
                &[]
            }),
        );
    }
    // SNAP-04 shapes
    let mut a = c("snap04a-failed-without-error", &["SNAP-04", "FOLD-09"], "1.21.0",
        "An EXECUTION_FAILED without error (never kernel-written) folds failed; a pre-1.21 snapshot of it normalizes to running (documented exception).",
        vec![started(), step_started("a"), ev("EXECUTION_FAILED", json!({}))]).spec();
    a.snap_exception = Some("a");
    v.push(a);
    let mut b = c("snap04b-resume-as-then-caught-failure", &["SNAP-04", "FOLD-09", "FOLD-20"], "1.21.0",
        "A genuinely failed execution re-opened by resumeAs (stale _error kept) then catching a step failure folds running; its pre-1.21 snapshot stays failed (documented exception).",
        vec![started(), ev("EXECUTION_FAILED", json!({"error": "x"})), resumed(Value::Null), step_started("b"), step_failed("b")]).rests_on(&["GAP-31"]);
    b.snap_exception = Some("b");
    v.push(b);
    v.extend(every_kind_cases());
    v.extend(super::edges::fold_cases());
    v.extend(field_cases());
    v
}

/// State fields no other case writes (`vectors/tests/field_coverage.rs` walks the state
/// schema against the set): a timed park's `wakeAt`, a park's `condition`, a frame's
/// `kind`, the `null` an absent input, output or error folds to, and the `pending`
/// status of a log that has not started. Each is caught only by these vectors in
/// `loom_vectors::wrong` (wake-at-off-by-one, park-condition-dropped, step-kind-dropped,
/// absent-start-input-omitted, absent-output-omitted, absent-error-omitted,
/// initial-status-running).
fn field_cases() -> Vec<FoldCase> {
    let mut v = Vec::new();
    v.push(c("fields-timed-park-wake-at", &["REPLAY-10", "FOLD-07"], "1.21.0",
        "A timed park records its wakeAt in the park record; an untimed park after the resume has none.",
        vec![started(), step_started("a"), step_completed("a", json!(1)), suspended_timed("SLEEP", 5000)]).spec());
    v.push(c("fields-timed-park-then-untimed", &["REPLAY-10", "FOLD-07", "FOLD-11"], "1.21.0",
        "A timed park, its resume, then an untimed park: the second park record carries no wakeAt.",
        vec![started(), suspended_timed("SLEEP", 5000), resumed(json!({"firedAt": 5000})), suspended("APPROVE")]).spec());
    v.push(
        c(
            "fields-condition-park",
            &["FOLD-07"],
            "1.21.0",
            "A park with a condition records the condition object in the park record.",
            vec![
                started(),
                ev(
                    "EXECUTION_SUSPENDED",
                    json!({"on": "WAIT_FOR", "condition": {"topic": "orders", "count": 2}}),
                ),
            ],
        )
        .spec(),
    );
    v.push(
        c(
            "fields-step-kind",
            &["FOLD-08"],
            "1.15.0",
            "A STEP_STARTED with kind records it on the frame, next to toolId and input.",
            vec![
                started(),
                ev(
                    "STEP_STARTED",
                    json!({"stepId": "a", "toolId": "tool", "kind": "effect", "input": {"x": 1}}),
                ),
            ],
        )
        .spec(),
    );
    v.push(c("fields-started-without-input", &["FOLD-26", "FOLD-14"], "1.15.0",
        "An EXECUTION_STARTED without input: _input is what the reference records for an absent field.",
        vec![ev("EXECUTION_STARTED", json!({})), step_started("a")]).accepts(&["GAP-01"]));
    v.push(c("fields-step-completed-without-output", &["FOLD-08", "FOLD-48"], "1.15.0",
        "A STEP_COMPLETED without output: the frame's output is what the reference records for an absent field.",
        vec![started(), step_started("a"), ev("STEP_COMPLETED", json!({"stepId": "a"}))]).accepts(&["GAP-01"]));
    v.push(c("fields-step-failed-without-error", &["FOLD-08", "FOLD-09"], "1.21.0",
        "A STEP_FAILED without error: the frame's error is what the reference records for an absent field, and the execution keeps running.",
        vec![started(), step_started("a"), ev("STEP_FAILED", json!({"stepId": "a"}))]).accepts(&["GAP-01"]));
    v.push(c("fields-pending-before-start", &["FOLD-04"], "1.15.0",
        "A log whose only event is of a kind the fold does not know has not started: the status stays pending.",
        vec![ev("CUSTOM_AUDIT_NOTE", json!({"note": "before start"}))]).rests_on(&["GAP-12"]));
    // Found by one-line mutants of the Node example kernel (tests/node_kernel_mutants.rs).
    v.push(c("fields-typed-failure-without-payload", &["FOLD-16", "TYPED-17"], "1.21.0",
        "A typed STEP_FAILED without payload: the frame's errorPayload is null next to its errorChannel.",
        vec![started(), step_started("a"), ev("STEP_FAILED", json!({"stepId": "a", "error": "TypedFailure(declined)", "channel": "declined"}))]).spec());
    v.push(c("fields-resettled-frame-drops-old-output", &["FOLD-08", "FOLD-48"], "1.21.0",
        "A frame that completed and then fails again keeps no output: settling clears what the last settle wrote.",
        vec![started(), step_started("a"), step_completed("a", json!({"v": 1})), step_failed("a")]).spec());
    v.push(
        c(
            "fields-park-without-waits-clears-waits",
            &["FOLD-27"],
            "1.23.0",
            "A park with waits, then a park without waits: _waits goes with the first park's list.",
            vec![
                started(),
                ev(
                    "EXECUTION_SUSPENDED",
                    json!({"on": "WAIT", "waits": [{"waitId": "w1", "topic": "a"}]}),
                ),
                suspended("APPROVE"),
            ],
        )
        .spec(),
    );
    let custom: serde_json::Map<String, Value> = (0..loom_kernel::limits::RESOURCE_CUSTOM_KEYS_MAX)
        .map(|i| (format!("k{i:02}"), json!(1)))
        .collect();
    v.push(c("fields-custom-resource-cap", &["RES-01", "FOLD-29"], "1.23.0",
        "64 custom meters, then a meter naming a 65th and one already held: the 65th is not added, the held one sums.",
        vec![started(), ev("RESOURCE_METERED", json!({"custom": custom})), ev("RESOURCE_METERED", json!({"custom": {"k99": 5, "k00": 2}}))]).rests_on(&["GAP-06", "GAP-12"]));
    v.push(c("fields-quarantine-same-id-twice-and-on-two-topics", &["FOLD-41", "FOLD-43"], "1.25.0",
        "A message id held twice on one topic is held once; the same id on another topic is a second entry.",
        vec![started(),
            ev("INBOX_QUARANTINED", json!({"topic": "t", "messageId": "m1"})).kernel(),
            ev("INBOX_QUARANTINED", json!({"topic": "t", "messageId": "m1"})).kernel(),
            ev("INBOX_QUARANTINED", json!({"topic": "u", "messageId": "m1"})).kernel()]).rests_on(&["GAP-12"]));
    v
}

/// One case per known kind × (running, parked) × (plain, kernel-stamped).
fn every_kind_cases() -> Vec<FoldCase> {
    let mut v = Vec::new();
    for kind in known_event_types() {
        for parked in [false, true] {
            for stamped in [false, true] {
                let mut events = vec![started(), step_started("s1")];
                if parked {
                    events.push(suspended("APPROVE"));
                }
                let mut e = ev(kind, sample_payload(kind));
                if stamped {
                    e = e.kernel();
                }
                events.push(e);
                let mut rules = vec!["ABI-11"];
                if kind.starts_with("STEP_") {
                    rules.push("FOLD-08");
                } else if matches!(
                    *kind,
                    "EXECUTION_STARTED"
                        | "EXECUTION_SUSPENDED"
                        | "EXECUTION_RESUMED"
                        | "EXECUTION_COMPLETED"
                        | "EXECUTION_FAILED"
                        | "EXECUTION_CANCELLED"
                        | "EXECUTION_CONTINUED"
                ) {
                    rules.push("FOLD-07");
                }
                if matches!(
                    *kind,
                    "EXECUTION_CONTINUED"
                        | "MESSAGE_CONSUMED"
                        | "PARALLEL_COMPLETED"
                        | "INBOX_QUARANTINED"
                        | "INBOX_RELEASED"
                ) {
                    rules.push("FOLD-30");
                }
                let id = format!(
                    "kind-{}-{}-{}",
                    slug(kind),
                    if parked { "parked" } else { "running" },
                    if stamped { "kernel" } else { "plain" }
                );
                // A kind whose handler leaves the state as it was (an audit fact, an
                // unstamped gated kind, a payload it cannot use) rests on GAP-12: does an
                // inert envelope move sequence and updatedAt?
                let all = log(events.clone());
                let inert = canonical_string(&loom_kernel::fold(&to_envelopes(&all)).to_value())
                    == canonical_string(
                        &loom_kernel::fold(&to_envelopes(&all[..all.len() - 1])).to_value(),
                    );
                let mut case = c(
                    &id,
                    &rules,
                    "1.26.0",
                    &format!(
                        "{kind} ({}) folded into a {} execution.",
                        if stamped {
                            "metadata.kernel: true"
                        } else {
                            "no metadata"
                        },
                        if parked { "parked" } else { "running" }
                    ),
                    events,
                )
                .rests_on(if inert { &["GAP-12"] } else { &[] });
                case.history = false;
                v.push(case);
            }
        }
    }
    // FOLD-30: the stamp gate accepts only the boolean true.
    for (kind, payload) in [
        ("EXECUTION_CONTINUED", json!({"continuedTo": "exec-2"})),
        ("MESSAGE_CONSUMED", json!({"topic": "t", "messageId": "m1"})),
        (
            "PARALLEL_COMPLETED",
            json!({"scopeId": "p", "results": [1]}),
        ),
        (
            "INBOX_QUARANTINED",
            json!({"topic": "t", "messageId": "m1"}),
        ),
        ("EXECUTION_RESUMED", json!({"waitId": "w1", "answer": 1})),
        (
            "DECISION_RECORDED",
            json!({"id": "d", "choice": 1, "innerSteps": ["s"]}),
        ),
    ] {
        for (name, stamp) in [
            ("absent", None),
            ("false", Some(json!(false))),
            ("string-true", Some(json!("true"))),
            ("one", Some(json!(1))),
            ("true", Some(json!(true))),
        ] {
            let mut e = ev(kind, payload.clone());
            if let Some(s) = stamp {
                e = e.meta("kernel", s);
            }
            let mut events = vec![started()];
            if kind == "EXECUTION_RESUMED" {
                events.push(ev(
                    "EXECUTION_SUSPENDED",
                    json!({"on": "WAIT", "waits": [{"waitId": "w1"}]}),
                ));
            }
            events.push(e);
            let mut case = c(&format!("fold30-stamp-{}-{name}", slug(kind)), &["FOLD-30"], "1.23.0",
                &format!("{kind} with metadata.kernel {name}: only the boolean true passes the stamp gate."),
                events)
                // An unstamped gated kind is inert (GAP-12 for its bookkeeping); the
                // resume's park ends, and with it `_waits` or not (GAP-14); a stamped wait
                // answer is no passthrough (GAP-23).
                .rests_on(match (kind, name) {
                    ("EXECUTION_RESUMED", "true") => &["GAP-14", "GAP-23"],
                    ("EXECUTION_RESUMED", _) => &["GAP-14"],
                    ("DECISION_RECORDED", _) | (_, "true") => &[],
                    _ => &["GAP-12"],
                });
            case.history = false;
            v.push(case);
        }
    }
    v
}

/// The quarantine cap case: 1,024 held entries, then one more (ignored).
fn cap_case() -> (Vec<Ev>, &'static str) {
    let mut events = vec![started()];
    for i in 0..=loom_kernel::limits::QUARANTINED_ENTRIES_MAX {
        events.push(
            ev(
                "INBOX_QUARANTINED",
                json!({"topic": format!("t{}", i % 4), "messageId": format!("m{i}")}),
            )
            .kernel(),
        );
    }
    (events, "1,024 held entries across four topics, then one more: the 1,025th is ignored (GAP-17: the cap is on the variable as a whole).")
}

fn to_envelopes(values: &[Value]) -> Vec<EventEnvelope> {
    crate::reference::envelopes(values).unwrap_or_default()
}

/// Every fold scenario, plus versioned-fold variants.
pub fn scenarios() -> Vec<Scenario> {
    let mut out = Vec::new();
    for case in cases() {
        let events = log(case.events.clone());
        let mut s = Scenario::new(
            Kind::Fold,
            format!("fold-{}", case.id),
            &case.rules,
            case.description.clone(),
            json!({"events": events}),
        )
        .since(case.since);
        s.every_k = events.len() <= EVERY_K_EVENTS_MAX;
        out.push(case.state_basis(s));
        if case.history {
            out.extend(versioned(&case, &events));
        }
    }
    let (events, description) = cap_case();
    let events = log(events);
    let mut s = Scenario::new(
        Kind::Fold,
        "fold-fold43-quarantine-cap",
        &["FOLD-43", "FOLD-41"],
        description,
        json!({"events": events}),
    )
    .since("1.25.0")
    // The entry over the cap is ignored (GAP-12 for its bookkeeping) because the cap
    // counts every topic together (GAP-17).
    .rests_on(&["GAP-12", "GAP-17"]);
    s.every_k = false;
    out.push(s);
    out
}

/// A versioned-fold vector at each older minor whose output differs from the next
/// minor's: that is where the schema history changed this log's fold.
fn versioned(case: &FoldCase, events: &[Value]) -> Vec<Scenario> {
    let envs = to_envelopes(events);
    let mut out = Vec::new();
    let versions: Vec<FoldVersion> = FoldVersion::all().collect();
    for pair in versions.windows(2) {
        let (old, new) = (pair[0], pair[1]);
        let a = canonical_string(&fold_as(old, &ExecutionState::new(), &envs).to_value());
        let b = canonical_string(&fold_as(new, &ExecutionState::new(), &envs).to_value());
        if a != b {
            let mut s = Scenario::new(
                Kind::Fold,
                format!("fold-as-1-{}-{}", old.minor(), case.id),
                &case.rules,
                format!(
                    "Folded as EVENT_SCHEMA {old} (before {new} changed this log's fold): {}",
                    case.description
                ),
                json!({"events": events, "schemaVersion": old.to_string()}),
            );
            s.since = old.to_string();
            s.every_k = false;
            out.push(case.state_basis(s));
        }
    }
    out
}
