//! Ingress scenarios: a log, the flow's declaration, scripted authenticator and
//! authorizer verdicts and a resume request; the reference gate's answer (a typed
//! refusal with nothing appended, or the exact events to append) is the expectation.

use super::*;
use crate::format::Kind;
use crate::generate::Scenario;
use loom_kernel::fold::known_event_types;

struct I {
    id: String,
    rules: Vec<&'static str>,
    description: String,
    log: Vec<Ev>,
    path: &'static str,
    event_type: String,
    payload: Value,
    metadata: Option<Value>,
    schemas: Option<Value>,
    authn: Option<Value>,
    authz: Option<Value>,
    rests: Vec<&'static str>,
}

fn i(
    id: &str,
    rules: &[&'static str],
    description: &str,
    log: Vec<Ev>,
    event_type: &str,
    payload: Value,
) -> I {
    I {
        id: id.into(),
        rules: rules.to_vec(),
        description: description.into(),
        log,
        path: "resume",
        event_type: event_type.into(),
        payload,
        metadata: None,
        schemas: None,
        authn: None,
        authz: None,
        rests: Vec::new(),
    }
}

impl I {
    fn path(mut self, p: &'static str) -> I {
        self.path = p;
        self
    }
    fn meta(mut self, m: Value) -> I {
        self.metadata = Some(m);
        self
    }
    fn schemas(mut self, s: Value) -> I {
        self.schemas = Some(s);
        self
    }
    fn accept(mut self) -> I {
        self.authn = Some(json!({"verdict": "accept", "approval": {"by": "alice"}}));
        self
    }
    fn reject(mut self) -> I {
        self.authn = Some(json!({"verdict": "reject", "reason": "bad signature"}));
        self
    }
    fn allow(mut self) -> I {
        self.authz = Some(json!({"verdict": "allow"}));
        self
    }
    /// States an open point the rules of [`super::ingress_points`] do not find.
    fn rests_on(mut self, gaps: &[&'static str]) -> I {
        self.rests.extend(gaps);
        self
    }
    fn deny(mut self) -> I {
        self.authz = Some(json!({"verdict": "deny", "reason": "not your execution"}));
        self
    }
    fn build(self) -> Scenario {
        let mut request = json!({"eventType": self.event_type, "payload": self.payload});
        if let Some(m) = self.metadata {
            request["metadata"] = m;
        }
        let mut flow = json!({});
        if let Some(s) = self.schemas {
            flow["resumeSchemas"] = s;
        }
        let mut input =
            json!({"log": log(self.log), "path": self.path, "request": request, "flow": flow});
        if let Some(a) = self.authn {
            input["authenticator"] = a;
        }
        if let Some(a) = self.authz {
            input["authorizer"] = a;
        }
        let mut rules = self.rules;
        if !rules.contains(&"INGRESS-15") {
            rules.push("INGRESS-15");
        }
        Scenario::new(
            Kind::Ingress,
            format!("ingress-{}", self.id),
            &rules,
            self.description,
            input,
        )
        .since("1.21.0")
        .rests_by(super::ingress_points)
        .rests_on(&self.rests)
    }
}

fn parked(gate: &str) -> Vec<Ev> {
    vec![started(), suspended(gate)]
}
fn timed() -> Vec<Ev> {
    vec![started(), suspended_timed("SLEEP", 5000)]
}
fn indoubt() -> Vec<Ev> {
    vec![
        started(),
        step_started("a"),
        ev("EFFECT_INDOUBT", json!({"stepId": "a", "attempt": 1})),
        ev(
            "EXECUTION_SUSPENDED",
            json!({"on": "__loom_indoubt__", "condition": {"stepId": "a", "attempt": 1}}),
        ),
    ]
}
fn failed_while_parked() -> Vec<Ev> {
    vec![
        started(),
        step_started("a"),
        suspended("APPROVE"),
        step_failed("a"),
    ]
}
fn legacy_orphan() -> Vec<Ev> {
    vec![
        started(),
        resumed(json!({"stray": true})),
        step_started("h"),
        ev(
            "EXECUTION_SUSPENDED",
            json!({"on": "APPROVE", "condition": {"stepId": "h"}}),
        ),
    ]
}
fn legacy_unattributed() -> Vec<Ev> {
    vec![
        started(),
        resumed(json!({"stray": true})),
        suspended("APPROVE"),
    ]
}

fn status_log(status: &str) -> Vec<Ev> {
    match status {
        "pending" => vec![],
        "running" => vec![started()],
        "suspended" => parked("APPROVE"),
        "completed" => vec![started(), ev("EXECUTION_COMPLETED", json!({"output": 1}))],
        "failed" => vec![started(), ev("EXECUTION_FAILED", json!({"error": "x"}))],
        "cancelled" => vec![started(), ev("EXECUTION_CANCELLED", json!({}))],
        _ => vec![
            started(),
            ev("EXECUTION_CONTINUED", json!({"continuedTo": "exec-2"})).kernel(),
        ],
    }
}

const STATUSES: [&str; 7] = [
    "pending",
    "running",
    "suspended",
    "completed",
    "failed",
    "cancelled",
    "continued",
];

/// Every ingress scenario.
pub fn scenarios() -> Vec<Scenario> {
    let mut v: Vec<I> = Vec::new();
    // INGRESS-02: every kernel kind as a resume at an ordinary and at a timed park.
    for kind in known_event_types() {
        v.push(i(&format!("ingress02-kernel-kind-{}", slug(kind)), &["INGRESS-02", "INGRESS-01"],
            &format!("{kind} delivered as a resume at a park on APPROVE: a kernel kind is refused (TIMER_FIRED and EXECUTION_RECOVERED have their own rules)."),
            parked("APPROVE"), kind, sample_payload(kind)));
        v.push(i(
            &format!("ingress02-kernel-kind-{}-timed", slug(kind)),
            &["INGRESS-02", "INGRESS-04"],
            &format!(
                "{kind} delivered as a resume at a timed park: refused unless it is TIMER_FIRED."
            ),
            timed(),
            kind,
            sample_payload(kind),
        ));
    }
    v.push(i("ingress03-gate-match", &["INGRESS-03", "INGRESS-08"], "The recorded gate's own event type is accepted: the event and EXECUTION_RESUMED carrying the answer.", parked("APPROVE"), "APPROVE", json!({"ok": true})));
    v.push(i("ingress03-gate-mismatch", &["INGRESS-03"], "Parked on APPROVE, a resume typed REJECT is refused (gate-mismatch) with nothing appended.", parked("APPROVE"), "REJECT", json!({"ok": true})));
    v.push(i(
        "ingress03-gate-case-sensitive",
        &["INGRESS-03"],
        "Gate names are compared exactly: approve is not APPROVE.",
        parked("APPROVE"),
        "approve",
        json!(1),
    ));
    v.push(i(
        "ingress04-timer-at-untimed-park",
        &["INGRESS-04"],
        "TIMER_FIRED cannot wake an untimed park (not-timed).",
        parked("APPROVE"),
        "TIMER_FIRED",
        json!({"firedAt": 1}),
    ));
    v.push(i("ingress04-timer-at-timed-park", &["INGRESS-04", "REPLAY-10"], "TIMER_FIRED wakes a timed park; the passthrough is {firedAt: wakeAt} from the log (GAP-25).", timed(), "TIMER_FIRED", json!({"firedAt": 999999})));
    v.push(i(
        "ingress04-gate-at-timed-park",
        &["INGRESS-04"],
        "A timed park is also woken by its gate name.",
        timed(),
        "SLEEP",
        json!({"early": true}),
    ));
    v.push(
        i(
            "ingress04-timer-path-timed",
            &["INGRESS-04", "REPLAY-11"],
            "The kernel's timer path wakes a timed park with {firedAt: wakeAt}.",
            timed(),
            "TIMER_FIRED",
            json!(null),
        )
        .path("timer"),
    );
    v.push(
        i(
            "ingress04-timer-path-untimed",
            &["INGRESS-04"],
            "The kernel's timer path cannot wake an untimed park.",
            parked("APPROVE"),
            "TIMER_FIRED",
            json!(null),
        )
        .path("timer"),
    );
    v.push(
        i(
            "ingress04-timer-path-not-parked",
            &["INGRESS-04", "INGRESS-13"],
            "The timer path refuses an execution that is no longer parked.",
            vec![started()],
            "TIMER_FIRED",
            json!(null),
        )
        .path("timer"),
    );
    for status in STATUSES {
        v.push(i(&format!("ingress05-recover-{status}"), &["INGRESS-05", "INGRESS-06"],
            &format!("EXECUTION_RECOVERED on a {status} execution: accepted (recording nothing) only for running and pending."),
            status_log(status), "EXECUTION_RECOVERED", json!({})).path("recover"));
        v.push(i(&format!("ingress05-recover-via-resume-{status}"), &["INGRESS-05"],
            &format!("EXECUTION_RECOVERED delivered through resume on a {status} execution follows the same rule."),
            status_log(status), "EXECUTION_RECOVERED", json!({})));
        v.push(i(
            &format!("ingress13-resume-{status}"),
            &["INGRESS-13", "INGRESS-03"],
            &format!("A gate resume on a {status} execution: only a parked execution accepts it."),
            status_log(status),
            "APPROVE",
            json!({"ok": true}),
        ));
        v.push(
            i(
                &format!("ingress17-resume-as-{status}"),
                &["INGRESS-17", "INGRESS-18", "INGRESS-06", "INGRESS-07"],
                &format!("resumeAs with an application event onto a {status} execution."),
                status_log(status),
                "OPERATOR_FIX",
                json!({"fix": 1}),
            )
            .path("resumeAs"),
        );
    }
    v.push(
        i(
            "ingress17-resume-as-kernel-kind",
            &["INGRESS-17"],
            "resumeAs onto a crashed execution still enforces the kernel-namespace rule.",
            vec![started()],
            "STEP_COMPLETED",
            json!({"stepId": "a", "output": 1}),
        )
        .path("resumeAs"),
    );
    v.push(
        i(
            "ingress18-resume-as-parked-wrong-gate",
            &["INGRESS-18", "INGRESS-03"],
            "resumeAs onto a parked execution enforces the recorded gate.",
            parked("APPROVE"),
            "OTHER",
            json!(1),
        )
        .path("resumeAs"),
    );
    v.push(
        i(
            "ingress18-resume-as-parked-null-after-failure",
            &["INGRESS-18", "INGRESS-14"],
            "resumeAs onto a parked failure refuses a null answer.",
            failed_while_parked(),
            "APPROVE",
            json!(null),
        )
        .path("resumeAs"),
    );
    v.push(
        i(
            "ingress18-resume-as-parked-indoubt",
            &["INGRESS-18", "INGRESS-10"],
            "resumeAs at an in-doubt park refuses a non-verdict.",
            indoubt(),
            "APPROVE",
            json!(1),
        )
        .path("resumeAs"),
    );
    v.push(
        i(
            "ingress18-resume-as-parked-rejected",
            &["INGRESS-18", "INGRESS-21"],
            "resumeAs onto a parked execution enforces the authenticator.",
            parked("APPROVE"),
            "APPROVE",
            json!(1),
        )
        .path("resumeAs")
        .reject(),
    );
    v.push(
        i(
            "ingress18-resume-as-parked-denied",
            &["INGRESS-18", "INGRESS-38"],
            "resumeAs onto a parked execution enforces the authorizer.",
            parked("APPROVE"),
            "APPROVE",
            json!(1),
        )
        .path("resumeAs")
        .deny(),
    );
    v.push(
        i(
            "ingress18-resume-as-parked-legacy",
            &["INGRESS-18", "INGRESS-36"],
            "resumeAs onto a parked legacy log refuses ambiguous answers.",
            legacy_unattributed(),
            "APPROVE",
            json!(1),
        )
        .path("resumeAs"),
    );
    v.push(i("ingress25-resume-as-target-schema", &["INGRESS-25", "INGRESS-18", "INGRESS-22"], "resumeAs validates against the TARGET flow's resumeSchemas (the declaration given is the target's).", parked("APPROVE"), "APPROVE", json!({"amount": "ten"})).path("resumeAs").schemas(json!({"APPROVE": {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}})));
    v.push(i("ingress25-resume-as-target-schema-ok", &["INGRESS-25", "INGRESS-22"], "resumeAs records the target schema's parsed value.", parked("APPROVE"), "APPROVE", json!({"amount": 10})).path("resumeAs").schemas(json!({"APPROVE": {"type": "object", "properties": {"amount": {"type": "number"}, "currency": {"type": "string", "default": "EUR"}}}})));
    // In-doubt verdicts.
    let verdict = |step: &str, attempt: u64, outcome: &str| json!({"verdict": {"stepId": step, "attempt": attempt, "outcome": outcome}});
    for outcome in ["completed", "failed", "retry"] {
        v.push(i(&format!("ingress09-verdict-{outcome}"), &["INGRESS-09", "INGRESS-10"], &format!("A verdict ({outcome}) for the parked step and attempt: the verdict event, a kernel __loom_ DECISION_RECORDED and a null EXECUTION_RESUMED."), indoubt(), "__loom_indoubt__", verdict("a", 1, outcome)));
    }
    v.push(
        i(
            "ingress09-verdict-with-authenticator",
            &["INGRESS-09", "INGRESS-21"],
            "With an authenticator wired, APPROVAL_GRANTED precedes the verdict batch (GAP-09).",
            indoubt(),
            "__loom_indoubt__",
            verdict("a", 1, "completed"),
        )
        .accept(),
    );
    v.push(i(
        "ingress10-verdict-wrong-step",
        &["INGRESS-10"],
        "A verdict for another step is refused (ResumePayloadValidationError).",
        indoubt(),
        "__loom_indoubt__",
        verdict("b", 1, "completed"),
    ));
    v.push(i(
        "ingress10-verdict-wrong-attempt",
        &["INGRESS-10"],
        "A verdict for another attempt is refused.",
        indoubt(),
        "__loom_indoubt__",
        verdict("a", 2, "completed"),
    ));
    v.push(i(
        "ingress10-verdict-bad-outcome",
        &["INGRESS-10"],
        "A verdict with an unknown outcome is refused.",
        indoubt(),
        "__loom_indoubt__",
        verdict("a", 1, "maybe"),
    ));
    v.push(i(
        "ingress10-plain-payload",
        &["INGRESS-10"],
        "A plain gate answer at an in-doubt park is refused.",
        indoubt(),
        "APPROVE",
        json!({"ok": true}),
    ));
    v.push(
        i(
            "ingress10-timer-at-indoubt",
            &["INGRESS-10", "INGRESS-04"],
            "The timer path at an in-doubt park is refused with ResumePayloadValidationError.",
            indoubt(),
            "TIMER_FIRED",
            json!(null),
        )
        .path("timer"),
    );
    v.push(i("ingress14-null-after-parked-failure", &["INGRESS-14"], "A null answer while _failedWhileParked is set is refused (null-answer-after-parked-failure).", failed_while_parked(), "APPROVE", json!(null)));
    v.push(i(
        "ingress14-non-null-after-parked-failure",
        &["INGRESS-14", "FOLD-21"],
        "A non-null answer while _failedWhileParked is set is accepted.",
        failed_while_parked(),
        "APPROVE",
        json!({"ok": true}),
    ));
    v.push(i(
        "gap31-null-answer-ordinary-gate",
        &["INGRESS-03"],
        "A null answer at an ordinary gate is accepted as the gate's answer (GAP-31).",
        parked("APPROVE"),
        "APPROVE",
        json!(null),
    ));
    // Authenticator and shape.
    v.push(i("ingress21-authenticator-accepts", &["INGRESS-21"], "An accepting authenticator's verdict is recorded as APPROVAL_GRANTED before the answer.", parked("APPROVE"), "APPROVE", json!({"ok": true})).accept());
    v.push(
        i(
            "ingress21-authenticator-rejects",
            &["INGRESS-21"],
            "A rejected resume never reaches the log.",
            parked("APPROVE"),
            "APPROVE",
            json!({"ok": true}),
        )
        .reject(),
    );
    let schema = json!({"APPROVE": {"type": "object", "properties": {"amount": {"type": "number", "minimum": 0}, "currency": {"type": "string", "default": "EUR"}}, "required": ["amount"], "additionalProperties": false}});
    v.push(
        i(
            "ingress22-schema-default-recorded",
            &["INGRESS-22"],
            "The parsed value, with the schema's default filled in, is what is recorded.",
            parked("APPROVE"),
            "APPROVE",
            json!({"amount": 5}),
        )
        .schemas(schema.clone()),
    );
    v.push(i("ingress22-schema-invalid-refused", &["INGRESS-22"], "A payload the schema refuses is refused with nothing appended (ResumePayloadValidationError).", parked("APPROVE"), "APPROVE", json!({"amount": -1})).schemas(schema.clone()));
    v.push(
        i(
            "ingress22-schema-missing-required",
            &["INGRESS-22"],
            "A payload missing a required property is refused.",
            parked("APPROVE"),
            "APPROVE",
            json!({}),
        )
        .schemas(schema.clone()),
    );
    v.push(
        i(
            "ingress22-schema-extra-property",
            &["INGRESS-22"],
            "additionalProperties: false refuses an extra property.",
            parked("APPROVE"),
            "APPROVE",
            json!({"amount": 1, "note": "x"}),
        )
        .schemas(schema.clone()),
    );
    v.push(
        i(
            "ingress22-accepted-then-shape-fails",
            &["INGRESS-22", "INGRESS-24"],
            "An authenticator that accepts, then a failed parse: refused and no APPROVAL_GRANTED.",
            parked("APPROVE"),
            "APPROVE",
            json!({"amount": "x"}),
        )
        .schemas(schema.clone())
        .accept(),
    );
    v.push(i("ingress22-accepted-and-parsed", &["INGRESS-22", "INGRESS-21"], "Authenticated and parsed: APPROVAL_GRANTED, the parsed event, EXECUTION_RESUMED with the parsed answer.", parked("APPROVE"), "APPROVE", json!({"amount": 3})).schemas(schema.clone()).accept());
    v.push(
        i(
            "ingress23-empty-schema-map",
            &["INGRESS-23"],
            "An empty resumeSchemas map changes nothing (G2).",
            parked("APPROVE"),
            "APPROVE",
            json!({"anything": [1]}),
        )
        .schemas(json!({})),
    );
    v.push(
        i(
            "ingress23-no-entry-for-gate",
            &["INGRESS-23"],
            "A map without an entry for the gate changes nothing.",
            parked("APPROVE"),
            "APPROVE",
            json!({"anything": [1]}),
        )
        .schemas(json!({"OTHER": {"type": "string"}})),
    );
    v.push(i(
        "ingress23-no-schema-map",
        &["INGRESS-23"],
        "No map at all: the payload is recorded as given.",
        parked("APPROVE"),
        "APPROVE",
        json!({"anything": [1]}),
    ));
    v.push(i("ingress24-unauthenticated-wrong-gate", &["INGRESS-24"], "An unauthenticated caller with a wrong gate gets the authentication error, never the gate name.", parked("APPROVE"), "WRONG", json!(1)).reject());
    v.push(
        i(
            "ingress24-authenticated-wrong-gate",
            &["INGRESS-24", "INGRESS-03"],
            "An authenticated caller with a wrong gate: gate-mismatch, and no APPROVAL_GRANTED.",
            parked("APPROVE"),
            "WRONG",
            json!(1),
        )
        .accept(),
    );
    v.push(
        i(
            "ingress24-denied-wrong-gate",
            &["INGRESS-24", "INGRESS-38"],
            "An authorizer denial comes before the gate check too.",
            parked("APPROVE"),
            "WRONG",
            json!(1),
        )
        .deny()
        // Which refusal wins when both the authorizer and the gate refuse (GAP-32).
        .rests_on(&["GAP-32"]),
    );
    v.push(i("ingress26-renamed-event-refused", &["INGRESS-26", "INGRESS-03"], "Parked on A with a schema for A, a resume typed A2 with an invalid payload is refused by the gate.", parked("A"), "A2", json!({"amount": "bad"})).schemas(json!({"A": {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}}}})));
    // Legacy answers.
    v.push(i("ingress36-unattributed-park", &["INGRESS-36", "INGRESS-11"], "A pre-0104 log with an answer that answered no gate, then an unattributed park: refused (ambiguous-legacy-answers).", legacy_unattributed(), "APPROVE", json!(1)));
    v.push(i(
        "ingress36-human-step-orphan",
        &["INGRESS-36"],
        "An unspent entry that answered no gate before a human step's first start: refused.",
        legacy_orphan(),
        "APPROVE",
        json!(1),
    ));
    let discard = json!({"discardLegacyAnswers": {"stepId": "h", "count": 1}});
    v.push(i("ingress37-override-verified", &["INGRESS-37"], "discardLegacyAnswers verified by the authenticator: accepted, with the __loom_ override decision.", legacy_orphan(), "APPROVE", json!(1)).meta(discard.clone()).accept());
    v.push(
        i(
            "ingress37-override-without-authenticator",
            &["INGRESS-37"],
            "The override without an authenticator is refused.",
            legacy_orphan(),
            "APPROVE",
            json!(1),
        )
        .meta(discard.clone()),
    );
    v.push(
        i(
            "ingress37-override-rejected",
            &["INGRESS-37", "INGRESS-21"],
            "The override with a rejecting authenticator is refused.",
            legacy_orphan(),
            "APPROVE",
            json!(1),
        )
        .meta(discard.clone())
        .reject(),
    );
    v.push(
        i(
            "ingress37-override-wrong-count",
            &["INGRESS-37"],
            "An override whose count does not match the orphan count is refused.",
            legacy_orphan(),
            "APPROVE",
            json!(1),
        )
        .meta(json!({"discardLegacyAnswers": {"stepId": "h", "count": 3}}))
        .accept(),
    );
    v.push(
        i(
            "ingress37-override-on-recover",
            &["INGRESS-37"],
            "The override is never accepted on EXECUTION_RECOVERED.",
            vec![started()],
            "EXECUTION_RECOVERED",
            json!({}),
        )
        .meta(discard.clone())
        .path("recover"),
    );
    v.push(
        i(
            "ingress37-override-on-timer",
            &["INGRESS-37"],
            "The override is never accepted on TIMER_FIRED.",
            timed(),
            "TIMER_FIRED",
            json!(null),
        )
        .meta(discard.clone())
        .path("timer"),
    );
    v.push(
        i(
            "ingress37-override-not-needed",
            &["INGRESS-37"],
            "discardLegacyAnswers on a log without ambiguous answers is refused.",
            parked("APPROVE"),
            "APPROVE",
            json!(1),
        )
        .meta(discard)
        .accept(),
    );
    // Authorizer.
    v.push(
        i(
            "ingress38-authorizer-denies",
            &["INGRESS-38"],
            "A denying authorizer refuses (unauthorized) without naming the gate.",
            parked("APPROVE"),
            "APPROVE",
            json!(1),
        )
        .deny(),
    );
    v.push(
        i(
            "ingress38-authorizer-allows",
            &["INGRESS-38"],
            "An allowing authorizer changes nothing.",
            parked("APPROVE"),
            "APPROVE",
            json!(1),
        )
        .allow(),
    );
    v.push(
        i(
            "ingress38-authenticator-before-authorizer",
            &["INGRESS-38", "INGRESS-24"],
            "Identity is checked before authorization.",
            parked("APPROVE"),
            "APPROVE",
            json!(1),
        )
        .reject()
        .deny(),
    );
    // Forged metadata.
    for (key, value) in [
        ("kernel", json!(true)),
        ("kernel-false", json!(false)),
        ("flowEmit", json!("00000000000000aa")),
        ("forkChain", json!(["x"])),
        ("forkedBy", json!("x")),
        ("seal", json!({"v": 1})),
    ] {
        let k = key.split('-').next().unwrap_or(key);
        let mut m = serde_json::Map::new();
        m.insert(k.into(), value);
        v.push(i(&format!("ingress39-resume-metadata-{}", key.to_ascii_lowercase()), &["INGRESS-39", "ABI-14"],
            &format!("A resume whose metadata carries `{k}` is refused (kernel-metadata), whatever the value."),
            parked("APPROVE"), "APPROVE", json!(1)).meta(Value::Object(m)));
    }
    v.push(
        i(
            "ingress39-resume-other-metadata",
            &["INGRESS-39", "ABI-14"],
            "Other caller metadata is kept on the recorded event.",
            parked("APPROVE"),
            "APPROVE",
            json!(1),
        )
        .meta(json!({"traceId": "t-1"})),
    );
    v.into_iter().map(I::build).collect()
}
