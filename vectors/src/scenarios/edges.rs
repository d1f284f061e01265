//! Edge shapes a careful kernel still gets wrong: optional fields left out (`attempt`
//! on STEP_STARTED, STEP_RETRYING, EFFECT_INDOUBT and an in-doubt park's condition;
//! `input` on STEP_STARTED), resource sums that are not exact in binary floating
//! point (GAP-06), and restore tails that overlap the snapshot's sequence (GAP-15).
//!
//! The fold cases join [`super::fold::cases`], so each also yields its versioned-fold
//! and snapshot-normalization vectors.

use super::fold::FoldCase;
use super::*;
use crate::format::Kind;
use crate::generate::Scenario;
use loom_kernel::fold::{fold, fold_as, ExecutionState, FoldVersion};
use loom_kernel::snapshot::SnapshotRecord;

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

fn metered(payload: Value) -> Ev {
    ev("RESOURCE_METERED", payload)
}

/// The fold cases for absent optional fields and inexact sums.
pub fn fold_cases() -> Vec<FoldCase> {
    let mut v = Vec::new();
    // ---- attempt absent -----------------------------------------------------------
    v.push(c("attempt-absent-counts-starts", &["FOLD-08", "ABI-09", "FOLD-48"], "1.15.0",
        "STEP_STARTED without attempt: the first start is attempt 1 and a second start of the same step is attempt 2 (the previous attempt + 1).",
        vec![started(), ev("STEP_STARTED", json!({"stepId": "a", "input": 1})), step_failed("a"),
            ev("STEP_STARTED", json!({"stepId": "a", "input": 2}))]).spec());
    v.push(c("attempt-absent-retrying-keeps", &["FOLD-08", "FOLD-48", "ABI-09"], "1.15.0",
        "STEP_RETRYING without attempt keeps the frame's attempt and input; an explicit attempt on the next start wins.",
        vec![started(), ev("STEP_STARTED", json!({"stepId": "a", "attempt": 3, "input": {"k": 1}})),
            ev("STEP_RETRYING", json!({"stepId": "a"})),
            ev("STEP_STARTED", json!({"stepId": "a", "attempt": 7, "input": {"k": 2}}))]).spec());
    v.push(c("attempt-absent-indoubt", &["FOLD-08", "INGRESS-34", "ABI-09"], "1.15.0",
        "EFFECT_INDOUBT without attempt marks the frame in doubt and keeps its attempt; on a step with no frame it starts at attempt 1.",
        vec![started(), ev("STEP_STARTED", json!({"stepId": "a", "attempt": 2, "input": 0})),
            ev("EFFECT_INDOUBT", json!({"stepId": "a"})), ev("EFFECT_INDOUBT", json!({"stepId": "b"}))]).spec());
    v.push(c("attempt-absent-settle-unknown-frame", &["FOLD-08", "FOLD-09", "FOLD-48"], "1.15.0",
        "A STEP_COMPLETED, STEP_FAILED or STEP_CANCELLED for a step that never started creates its frame at attempt 1.",
        vec![started(), step_completed("x", json!(1)), step_failed("y"), ev("STEP_CANCELLED", json!({"stepId": "z"}))]).spec());
    // ---- STEP_STARTED without input -----------------------------------------------
    v.push(c("step-started-without-input", &["FOLD-48", "FOLD-08", "ABI-09"], "1.15.0",
        "STEP_STARTED without input: the frame's input is what the reference records for an absent field; STEP_RETRYING keeps it and settling drops it.",
        vec![started(), ev("STEP_STARTED", json!({"stepId": "a", "toolId": "t"})),
            ev("STEP_RETRYING", json!({"stepId": "a", "attempt": 2})),
            ev("STEP_STARTED", json!({"stepId": "b"})), step_completed("b", json!("done"))]).accepts(&["GAP-01"]));
    v.push(c("step-started-null-input", &["FOLD-48", "FOLD-08"], "1.15.0",
        "STEP_STARTED with input null, then a settle: null is a value like any other and is dropped when the frame settles.",
        vec![started(), ev("STEP_STARTED", json!({"stepId": "a", "input": null})),
            ev("STEP_STARTED", json!({"stepId": "b", "input": null})), step_failed("b")]).spec());
    // ---- GAP-06: sums that are not exact in binary floating point ----------------
    v.push(c("gap06-sum-not-exact", &["RES-01", "GAP-06", "RES-04"], "1.15.0",
        "costUsd 0.1 + 0.2 sums as doubles to 0.30000000000000004 (not 0.3); tokens stay integers; an unmetered dimension stays absent.",
        vec![started(), metered(json!({"costUsd": 0.1, "tokens": 1})), metered(json!({"costUsd": 0.2, "tokens": 2}))]).spec());
    v.push(c("gap06-sum-to-whole", &["RES-01", "GAP-06", "RES-03"], "1.15.0",
        "0.5 + 0.25 + 0.25 sums to the whole number 1, written as an integer; 1.1 three times is 3.3000000000000003.",
        vec![started(), metered(json!({"ms": 0.5, "wallMs": 1.1})), metered(json!({"ms": 0.25, "wallMs": 1.1})),
            metered(json!({"ms": 0.25, "wallMs": 1.1}))]).spec());
    v.push(c("gap06-sum-order-matters", &["RES-01", "GAP-06", "FOLD-01", "RES-03"], "1.15.0",
        "Sums are taken in log order: 1e16 + 1 + 1 stays 1e16 (each 1 is lost to rounding), whereas 1 + 1 + 1e16 would not; a summation that reorders or compensates differs.",
        vec![started(), metered(json!({"netBytes": 1.0e16})), metered(json!({"netBytes": 1})), metered(json!({"netBytes": 1})),
            metered(json!({"memBytes": 1})), metered(json!({"memBytes": 1})), metered(json!({"memBytes": 1.0e16}))]).spec());
    v.push(
        c(
            "gap06-custom-sums",
            &["GAP-06", "FOLD-29", "RES-01"],
            "1.23.0",
            "custom dimensions sum the same way: 0.1 + 0.7 is 0.7999999999999999.",
            vec![
                started(),
                metered(json!({"custom": {"gpuSeconds": 0.1}})),
                metered(json!({"custom": {"gpuSeconds": 0.7}, "tokens": 3})),
            ],
        )
        .spec(),
    );
    v.extend(more_fold_cases());
    v
}

/// Further logs for rules that would otherwise rest on one or two scenarios.
fn more_fold_cases() -> Vec<FoldCase> {
    let kernel = |t: &str, p: Value| ev(t, p).kernel();
    let mut v = Vec::new();
    v.push(c("fold12-null-resume-then-next-gate", &["FOLD-12", "FOLD-15", "FOLD-11"], "1.21.0",
        "After a status-only null resume (a parked failure), the next park and its non-null answer add exactly one passthrough.",
        vec![started(), step_started("a"), suspended("A"), step_failed("a"), resumed(Value::Null), suspended("B"), resumed(json!("b"))]).rests_on(&["GAP-31"]));
    v.push(c("fold12-two-parked-failures-null-resume", &["FOLD-12", "FOLD-10"], "1.21.0",
        "Two sibling failures while parked keep the execution suspended; the null resume after them is status-only.",
        vec![started(), step_started("a"), step_started("b"), suspended("A"), step_failed("a"), step_failed("b"), resumed(Value::Null)]).rests_on(&["GAP-31"]));
    v.push(c("fold17-repeat-replaces-context", &["FOLD-17", "FOLD-38"], "1.24.0",
        "A repeated decision id rebuilds its entry from the later record (choice, context, policy) and keeps the first seq.",
        vec![started(), ev("DECISION_RECORDED", json!({"id": "route", "choice": "a", "context": {"load": 1}, "policy": {"name": "p1", "propensity": 0.5}})),
            ev("DECISION_RECORDED", json!({"id": "route", "choice": "b", "context": {"load": 2}}))]).rests_on(&["GAP-24"]));
    v.push(c(
        "fold22-two-rehomed-segments",
        &["FOLD-22"],
        "1.22.0",
        "Two EVENTS_REHOMED facts are both appended to _lifecycle, in order; nothing else changes.",
        vec![
            started(),
            ev(
                "EVENTS_REHOMED",
                json!({"segment": 1, "from": "blank", "to": "exec-1"}),
            ),
            ev(
                "EVENTS_REHOMED",
                json!({"segment": 2, "from": "blank", "to": "exec-1"}),
            ),
        ],
    ).rests_on(&["GAP-12"]));
    v.push(c(
        "fold22-rehomed-while-parked",
        &["FOLD-22", "FOLD-07"],
        "1.22.0",
        "An EVENTS_REHOMED while parked is audit only: the execution stays suspended on its gate.",
        vec![
            started(),
            suspended("A"),
            ev(
                "EVENTS_REHOMED",
                json!({"segment": 1, "from": "blank", "to": "exec-1"}),
            ),
        ],
    ).rests_on(&["GAP-12"]));
    v.push(c("fold25-two-scopes", &["FOLD-25", "FOLD-30"], "1.23.0",
        "Two kernel-stamped PARALLEL_COMPLETED facts fold into two _scopes entries; an unstamped one between them is a no-op.",
        vec![started(), kernel("PARALLEL_COMPLETED", json!({"scopeId": "p1", "results": [1]})),
            ev("PARALLEL_COMPLETED", json!({"scopeId": "p9", "results": [9]})),
            kernel("PARALLEL_COMPLETED", json!({"scopeId": "p2", "results": [2, 3]}))]).rests_on(&["GAP-12"]));
    v.push(
        c(
            "fold31-fork-metadata-forked-by-only",
            &["FOLD-31", "FOLD-26"],
            "1.23.0",
            "forkedBy alone populates _parent; with no forkChain there is no _chain.",
            vec![ev("EXECUTION_STARTED", json!({"input": 1})).meta("forkedBy", json!("parent-1"))],
        )
        .rests_on(&["GAP-19"]),
    );
    v.push(c("fold36-diverged-non-null-resume", &["FOLD-36", "FOLD-37", "FOLD-15", "ABI-15"], "1.23.0",
        "A non-null answer at the __loom_diverged__ park is an ordinary passthrough; only a null one is status-only.",
        vec![started(), suspended("__loom_diverged__"), resumed(json!({"operator": "retry"}))]).spec());
    v.push(c("fold36-diverged-after-gate", &["FOLD-36", "FOLD-37", "FOLD-20"], "1.23.0",
        "A gate answered, then a divergence park answered null: one passthrough, the null adds none.",
        vec![started(), suspended("A"), resumed(json!("a")), suspended("__loom_diverged__"), resumed(Value::Null)]).rests_on(&["GAP-31"]));
    v.push(c("fold45-carry-quarantined-two-topics", &["FOLD-45", "FOLD-41", "FOLD-26"], "1.25.0",
        "A carry of two topics' holds (one released) seeds _quarantined as carried.",
        vec![ev("EXECUTION_STARTED", json!({"input": {}, "continuedFrom": {"executionId": "exec-0", "carried": {"quarantined": {
            "a": [{"messageId": "m1", "seq": 3, "released": {"by": "operator", "deliver": true}}, {"messageId": "m2", "seq": 5}],
            "b": [{"messageId": "m9", "seq": 7}]}}}}))]).spec());
    v.push(c("ingress11-legacy-orphan-entry-replayed", &["INGRESS-11", "FOLD-15"], "1.16.0",
        "A legacy log with a non-null resume while running (an answer to no gate) replays as written: the entry is kept and the next gate's answer follows it.",
        vec![started(), resumed(json!("orphan")), suspended("A"), resumed(json!("a"))]).spec());
    v.push(c("ingress11-legacy-resume-after-complete", &["INGRESS-11", "FOLD-15", "FOLD-07"], "1.16.0",
        "A legacy log with a non-null resume after completion re-opens the execution and records the entry, as it was written.",
        vec![started(), ev("EXECUTION_COMPLETED", json!({"output": 1})), resumed(json!({"late": true}))]).spec());
    v.push(c("snap09-array-index-keys-order", &["SNAP-09", "FOLD-38"], "1.24.0",
        "Decisions recorded as b, 10, 2, a: seq keeps the order they were made in, whatever order a store gives the keys back in.",
        vec![started(), decision("b", json!(1)), decision("10", json!(2)), decision("2", json!(3)), decision("a", json!(4))]).spec());
    v.push(c("fold47-kernel-consumed-no-quarantine", &["FOLD-47", "FOLD-44", "FOLD-24"], "1.23.0",
        "Two kernel MESSAGE_CONSUMED facts with no quarantine state fold as in 1.23: no _quarantined key appears.",
        vec![started(), kernel("MESSAGE_CONSUMED", json!({"topic": "t", "messageId": "m1", "message": 1})),
            kernel("MESSAGE_CONSUMED", json!({"topic": "t", "messageId": "m2", "message": 2}))]).rests_on(&["GAP-12"]));
    // Boundaries a single vector would leave on one side.
    v.push(c("fold42-auto-without-deliver-then-consumed", &["FOLD-42", "FOLD-44"], "1.25.0",
        "An auto release without deliver is ignored, so the hold stays; a later MESSAGE_CONSUMED of the held message drops nothing.",
        vec![started(), kernel("INBOX_QUARANTINED", json!({"topic": "t", "messageId": "m1"})),
            kernel("INBOX_RELEASED", json!({"topic": "t", "auto": true})),
            kernel("MESSAGE_CONSUMED", json!({"topic": "t", "messageId": "m1"}))]).rests_on(&["GAP-12", "GAP-17"]));
    v.push(c("fold42-auto-false-with-deliver", &["FOLD-42"], "1.25.0",
        "auto: false with operator and deliver is an operator release for delivery (auto false is not auto).",
        vec![started(), kernel("INBOX_QUARANTINED", json!({"topic": "t", "messageId": "m1"})),
            kernel("INBOX_RELEASED", json!({"topic": "t", "operator": "ops", "auto": false, "deliver": true}))]).rests_on(&["GAP-12", "GAP-17"]));
    v.push(c("fold19-stamp-on-step-completed", &["FOLD-19", "FOLD-08"], "1.19.0",
        "A stamp counts on a kernel STEP_COMPLETED too (the fold counts stamps on any type, though the kernel never stamps one).",
        vec![started(), step_started("a"), step_completed("a", json!(1)).stamp("00000000000000cc")]).spec());
    v.push(c("fold19-stamp-on-resumed-and-decision", &["FOLD-19", "FOLD-15"], "1.19.0",
        "Stamps on an EXECUTION_RESUMED and a DECISION_RECORDED each count once under their digest.",
        vec![started(), suspended("A"), resumed(json!("a")).stamp("00000000000000dd"),
            decision("d", json!(1)).stamp("00000000000000dd")]).spec());
    let mut a = c("snap04a-failed-without-error-while-parked", &["SNAP-04", "SNAP-05", "FOLD-09"], "1.21.0",
        "An EXECUTION_FAILED without error after a park folds failed; a pre-1.21 snapshot of it cannot be told from a parked sibling failure (documented exception; deleting the snapshots makes the log authoritative).",
        vec![started(), step_started("a"), suspended("A"), ev("EXECUTION_FAILED", json!({}))]).spec();
    a.snap_exception = Some("a");
    v.push(a);
    let mut b = c("snap04b-resume-as-then-typed-failure", &["SNAP-04", "SNAP-05", "TYPED-17"], "1.21.0",
        "A failed execution re-opened by resumeAs (stale _error kept) then catching a typed step failure folds running; its pre-1.21 snapshot stays failed (documented exception).",
        vec![started(), ev("EXECUTION_FAILED", json!({"error": "x"})), ev("EXECUTION_MIGRATED", json!({"flowId": "f2"})), resumed(Value::Null),
            step_started("b"), step_failed_typed("b", "declined", json!({"code": 1}))]).rests_on(&["GAP-31"]);
    b.snap_exception = Some("b");
    v.push(b);
    v
}

/// Normalize and ingress scenarios: overlapping restore tails and an in-doubt park
/// whose condition has no attempt.
pub fn scenarios() -> Vec<Scenario> {
    let mut out = overlap();
    out.extend(indoubt_without_attempt());
    out.extend(renamed_gate());
    out.extend(choice_changes());
    out
}

/// INGRESS-31 from both sides: a change deep inside an object choice is a change; the
/// same choice with its keys in another order, or numbers spelled otherwise, is not.
fn choice_changes() -> Vec<Scenario> {
    let log_values = log(vec![
        started(),
        decision("d", json!({"a": 1, "b": [1, 2]})),
        decision("d", json!({"a": 1, "b": [1, 2]})),
    ]);
    let log_text = serde_json::to_string(&log_values).unwrap_or_default();
    let emit = |choice: &str| {
        format!(
            r#"{{"source":{{"kind":"flow"}},"payload":{{"choice":{choice},"id":"d"}},"eventType":"DECISION_RECORDED","log":{log_text}}}"#
        )
    };
    vec![
        Scenario::raw(Kind::Emit, "emit-ingress31-deep-change-refused", &["INGRESS-31"],
            "The recorded choice (recorded twice) is {a: 1, b: [1, 2]}; an emit with b: [1, 3] changes it: refused.",
            &emit(r#"{"b":[1,3],"a":1}"#)).since("1.21.0").rests_by(super::emit_points),
        Scenario::raw(Kind::Emit, "emit-ingress31-same-choice-reordered-accepted", &["INGRESS-31", "EMIT-04"],
            "The same choice with its keys in another order and 1.0 for 1 is the same value: accepted.",
            &emit(r#"{"b":[1.0,2E0],"a":1}"#)).since("1.21.0").rests_by(super::emit_points),
        Scenario::raw(Kind::Emit, "emit-ingress31-type-change-refused", &["INGRESS-31"],
            "The choice 1 (a number) replaced by \"1\" (a string) is a change: refused.",
            &format!(r#"{{"source":{{"kind":"flow"}},"payload":{{"choice":"1","id":"n"}},"eventType":"DECISION_RECORDED","log":{}}}"#,
                serde_json::to_string(&log(vec![started(), decision("n", json!(1))])).unwrap_or_default())).since("1.21.0").rests_by(super::emit_points),
    ]
}

/// INGRESS-26: the shape gate is keyed on the event type, and renaming the event does not
/// evade it, because the gate already requires the parked gate's name.
fn renamed_gate() -> Vec<Scenario> {
    let log = log(vec![started(), suspended("APPROVE")]);
    let schema = json!({"APPROVE": {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}});
    let mut out = Vec::new();
    for (id, ty, payload, what) in [
        ("renamed-valid-payload", "APPROVE2", json!({"ok": true}), "a valid payload under another name is refused by the gate (gate-mismatch), not admitted unchecked"),
        ("lowercase-gate-name", "approve", json!({"nope": 1}), "the gate name compares exactly: `approve` is not `APPROVE`"),
        ("trailing-space-gate-name", "APPROVE ", json!({}), "a trailing space makes another name"),
    ] {
        out.push(Scenario::new(Kind::Ingress, format!("ingress-ingress26-{id}"),
            &["INGRESS-26", "INGRESS-03", "INGRESS-15"],
            format!("Parked on APPROVE with a resumeSchemas entry for it: {what}."),
            json!({"log": log, "path": "resume", "flow": {"resumeSchemas": schema},
                "request": {"eventType": ty, "payload": payload}}))
            .since("1.21.0")
            .rests_by(super::ingress_points));
    }
    out
}

/// GAP-15: `foldFrom(snapshot, tail)` folds only the tail events whose sequence is
/// greater than the snapshot's; a tail that repeats events the snapshot already covers
/// (a reader that re-reads from an earlier cursor) must not fold them twice.
fn overlap() -> Vec<Scenario> {
    let mut out = Vec::new();
    // (name, what, events, what the restores rest on besides GAP-15's overlap rule: the
    // operator release with deliver (GAP-17)).
    #[allow(clippy::type_complexity)]
    let logs: Vec<(&str, &str, Vec<Ev>, &[&str])> = vec![
        (
            "metered-and-resumes",
            "a log with meters, two gates and a decision",
            vec![
                started(),
                metered(json!({"tokens": 5, "costUsd": 0.1})),
                suspended("A"),
                resumed(json!("a")),
                decision("d", json!(1)),
                metered(json!({"tokens": 7, "costUsd": 0.2})),
                suspended("B"),
                resumed(json!("b")),
            ],
            &[],
        ),
        (
            "decisions-and-holds",
            "a log with repeated decisions and quarantine facts",
            vec![
                started(),
                decision("d", json!(1)),
                ev(
                    "INBOX_QUARANTINED",
                    json!({"topic": "t", "messageId": "m1"}),
                )
                .kernel(),
                decision("d", json!(2)),
                suspended("A"),
                ev(
                    "INBOX_RELEASED",
                    json!({"topic": "t", "operator": "ops", "deliver": true}),
                )
                .kernel(),
                resumed(json!("a")),
                decision("e", json!(3)),
            ],
            &["GAP-17"],
        ),
        (
            "steps-and-emits",
            "a log with steps, stamped emits and a parked failure",
            vec![
                started(),
                step_started("a"),
                ev("PROGRESS", json!({"pct": 1})).stamp("00000000000000aa"),
                suspended("G"),
                step_failed("a"),
                ev("PROGRESS", json!({"pct": 2})).stamp("00000000000000aa"),
                resumed(json!({"ok": 1})),
                step_started("b"),
                step_completed("b", json!(2)),
            ],
            &[],
        ),
    ];
    for (name, what, events, also) in logs {
        let values = log(events);
        let envs = crate::reference::envelopes(&values).unwrap_or_default();
        let n = envs.len();
        // (k, first tail index, writer)
        let cuts: [(usize, usize, u32); 4] = [
            (n / 2, n / 2 - 2, 26),
            (n / 2, 0, 26),
            (n - 2, n - 2, 26),
            (n / 2 - 1, n / 2 - 2, 20),
        ];
        for (k, from, minor) in cuts {
            let writer = FoldVersion::from_minor(minor).unwrap_or(FoldVersion::CURRENT);
            // A fold older than a kind in the snapshot cannot have written it.
            let known = loom_kernel::fold::known_event_types_at(writer);
            if envs[..=k].iter().any(|e| {
                loom_kernel::fold::is_known_event_type(&e.event_type)
                    && !known.contains(&e.event_type.as_str())
            }) {
                continue;
            }
            let prefix = if writer == FoldVersion::CURRENT {
                fold(&envs[..=k])
            } else {
                fold_as(writer, &ExecutionState::new(), &envs[..=k])
            };
            let record = SnapshotRecord::capture_as(writer, &prefix, envs[k].sequence);
            let mut rules = vec!["GAP-15", "SNAP-01", "SNAP-12"];
            if minor < 21 {
                rules.push("SNAP-03");
            }
            let overlap = k + 1 - from;
            let mut s = Scenario::new(Kind::Normalize,
                format!("normalize-gap15-overlap-{name}-w1-{minor}-k{k}-from{from}"), &rules,
                format!("A {writer} snapshot at sequence {k} restored with a tail that starts at sequence {from}, repeating {overlap} event(s) the snapshot covers ({what}): only the events after the snapshot's sequence are folded."),
                json!({"snapshot": {"schemaVersion": record.schema_version, "sequence": record.sequence, "state": record.state},
                    "tail": values[from..].to_vec()}))
                .since("1.21.0")
                .rests_on(&["GAP-15"])
                .rests_on(also)
                .in_group(&format!("overlap:{name}"));
            s.full_log = Some(values.clone());
            out.push(s);
        }
    }
    out
}

fn indoubt_without_attempt() -> Vec<Scenario> {
    let log = log(vec![
        started(),
        step_started("a"),
        ev("EFFECT_INDOUBT", json!({"stepId": "a"})),
        ev(
            "EXECUTION_SUSPENDED",
            json!({"on": "__loom_indoubt__", "condition": {"stepId": "a"}}),
        ),
    ]);
    let mut out = Vec::new();
    for (id, attempt, what) in [
        (
            "attempt-1-accepted",
            1,
            "a verdict for attempt 1 (the attempt an absent one means) is accepted",
        ),
        (
            "attempt-2-refused",
            2,
            "a verdict for attempt 2 is refused with nothing appended",
        ),
    ] {
        out.push(Scenario::new(Kind::Ingress, format!("ingress-indoubt-condition-without-attempt-{id}"),
            &["INGRESS-10", "INGRESS-34", "INGRESS-09", "INGRESS-15"],
            format!("An in-doubt park whose condition has no attempt: {what}."),
            json!({"log": log, "path": "resume", "flow": {},
                "request": {"eventType": "__loom_indoubt__", "payload": {"verdict": {"stepId": "a", "attempt": attempt, "outcome": "completed", "output": 1}}}}))
            .since("1.21.0")
            .rests_by(super::ingress_points));
    }
    out
}
