//! Wave 2 end to end through the reference runtime: message delivery for `receive` /
//! `select`, the inbox quarantine, `continueAsNew` starting its successor, and the
//! flags that gate all of it.
#[path = "common/runtime.rs"]
mod rt;

use loom_kernel::fold::{keys, Status};
use loom_kernel::ingress::{park_fence_holds, PARK_FENCE_IGNORABLE};
use loom_kernel::runtime::{
    block_on, continuation_id, handshake, Delivery, FaultPlan, Release, RunOutcome, RuntimeConfig,
};
use loom_kernel::spi::EventStore;
use loom_kernel::versions::KernelFeatures;
use loom_kernel::EventEnvelope;
use rt::*;
use serde_json::{json, Value};

fn all_flags() -> RuntimeConfig {
    RuntimeConfig {
        features: KernelFeatures {
            continue_as_new: true,
            receive: true,
            select: true,
            sha256_flow_hash: false,
        },
        ..RuntimeConfig::default()
    }
}

fn wave2_rt(flows: &[Value]) -> Rt {
    rt_with(all_flags(), flows)
}

fn receive(topic: &str, wait: &str, bind: &str) -> Value {
    json!({"op": "receive", "topic": topic, "waitId": wait, "bind": bind})
}

fn var(name: &str) -> Value {
    json!({"$ref": format!("vars.{name}")})
}

fn deliver(rt: &Rt, id: &str, topic: &str, msg_id: &str, message: Value) -> Delivery {
    block_on(rt.deliver(id, topic, msg_id, message)).expect("deliver")
}

fn kernel_stamped(e: &EventEnvelope) -> bool {
    e.metadata.as_ref().and_then(|m| m.get("kernel")) == Some(&json!(true))
}

fn var_of(rt: &Rt, id: &str, key: &str) -> Value {
    state(rt, id)
        .variables
        .get(key)
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn fold_24_fold_28_deliver_answers_the_parked_receive_without_passthrough() {
    let rt = wave2_rt(&[flow(
        "f",
        json!([receive("orders", "w1", "m"), {"op": "complete", "output": var("m")}]),
    )]);
    assert_eq!(start(&rt, "e", "f"), parked("receive:orders"));
    assert_eq!(var_of(&rt, "e", keys::WAITS)[0]["waitId"], json!("w1"));

    let d = deliver(&rt, "e", "orders", "m-1", json!({"qty": 3}));
    assert_eq!(
        d,
        Delivery::Resumed {
            wait_id: "w1".into(),
            outcome: completed(json!({"qty": 3})),
        }
    );
    let events = log(&rt, "e");
    let consumed = of_type(&events, "MESSAGE_CONSUMED");
    assert_eq!(consumed.len(), 1);
    assert!(kernel_stamped(consumed[0]));
    assert_eq!(
        consumed[0].payload,
        json!({"topic": "orders", "messageId": "m-1", "message": {"qty": 3}, "waitId": "w1"})
    );
    let resumed = of_type(&events, "EXECUTION_RESUMED");
    assert_eq!(resumed.len(), 1);
    assert!(kernel_stamped(resumed[0]));
    assert_eq!(
        resumed[0].payload,
        json!({"waitId": "w1", "answer": {"qty": 3}})
    );
    // The batch is MESSAGE_CONSUMED then the resume, adjacent.
    assert_eq!(consumed[0].sequence + 1, resumed[0].sequence);

    let s = state(&rt, "e");
    assert_eq!(s.status, Status::Completed);
    assert_eq!(
        s.variables.get(keys::INBOX),
        Some(&json!({"orders": {"consumed": 1, "lastMessageId": "m-1"}}))
    );
    assert_eq!(
        s.variables.get(keys::WAIT_ANSWERS),
        Some(&json!({"w1": {"qty": 3}}))
    );
    // GAP-23: a wait-addressed answer is not a gate passthrough.
    assert!(s.resume_payloads().is_empty());
}

#[test]
fn fold_24_message_for_no_open_wait_is_consumed_into_inbox_and_served_later() {
    let rt = wave2_rt(&[flow(
        "f",
        json!([suspend("g"), receive("t", "w1", "a"), receive("t", "w2", "b"),
            {"op": "complete", "output": [var("a"), var("b")]}]),
    )]);
    assert_eq!(start(&rt, "e", "f"), parked("g"));
    // Parked on a gate: nothing listens on `t` yet.
    assert_eq!(deliver(&rt, "e", "t", "m1", json!(1)), Delivery::Buffered);
    assert_eq!(state(&rt, "e").status, Status::Suspended);
    let consumed = of_type(&log(&rt, "e"), "MESSAGE_CONSUMED")[0].clone();
    assert!(consumed.payload.get("waitId").is_none());
    assert_eq!(
        var_of(&rt, "e", keys::INBOX),
        json!({"t": {"consumed": 1, "lastMessageId": "m1"}})
    );
    // The first receive takes the buffered message; the second parks.
    assert_eq!(
        resume(&rt, "e", "g", json!("go")).unwrap(),
        parked("receive:t")
    );
    assert_eq!(var_of(&rt, "e", keys::WAITS)[0]["waitId"], json!("w2"));
    let d = deliver(&rt, "e", "t", "m2", json!(2));
    assert_eq!(
        d,
        Delivery::Resumed {
            wait_id: "w2".into(),
            outcome: completed(json!([1, 2])),
        }
    );
    assert_eq!(count(&log(&rt, "e"), "MESSAGE_CONSUMED"), 2);
    // A redelivery of a consumed id is not consumed twice.
    let before = log_bytes(&rt, "e");
    assert!(matches!(
        block_on(rt.deliver("e", "t", "m2", json!(2))),
        Err(loom_kernel::runtime::RuntimeError::Terminal(_))
    ));
    assert_eq!(log_bytes(&rt, "e"), before);
}

#[test]
fn fold_24_redelivery_of_a_consumed_message_is_a_duplicate() {
    let rt = wave2_rt(&[flow("f", json!([suspend("g"), suspend("h")]))]);
    start(&rt, "e", "f");
    assert_eq!(deliver(&rt, "e", "t", "m1", json!(1)), Delivery::Buffered);
    let before = log_bytes(&rt, "e");
    assert_eq!(deliver(&rt, "e", "t", "m1", json!(1)), Delivery::Duplicate);
    assert_eq!(log_bytes(&rt, "e"), before);
}

#[test]
fn fold_28_select_resolves_to_the_first_delivered_wait_by_log_order() {
    let sel = json!({"op": "select", "waits": [
        {"waitId": "wa", "topic": "a"}, {"waitId": "wb", "topic": "b"}], "bind": "s"});
    let rt = wave2_rt(&[flow(
        "f",
        json!([suspend("g"), sel, {"op": "complete", "output": var("s")}]),
    )]);
    start(&rt, "e", "f");
    // Both topics buffer while the flow is parked on `g`: `b` first, then `a`.
    assert_eq!(deliver(&rt, "e", "b", "mb", json!("B")), Delivery::Buffered);
    assert_eq!(deliver(&rt, "e", "a", "ma", json!("A")), Delivery::Buffered);
    // `wa` is listed first, but `b` was delivered first: log order wins.
    assert_eq!(
        resume(&rt, "e", "g", Value::Null).unwrap(),
        completed(json!({"waitId": "wb", "value": "B"}))
    );

    // Parked on the select itself, the delivered wait answers it.
    let sel = json!({"op": "select", "waits": [
        {"waitId": "wa", "topic": "a"}, {"waitId": "wb", "topic": "b"}], "bind": "s"});
    let rt = wave2_rt(&[flow(
        "f",
        json!([sel, {"op": "complete", "output": var("s")}]),
    )]);
    assert_eq!(start(&rt, "e", "f"), parked("__loom_select__"));
    assert_eq!(
        deliver(&rt, "e", "b", "mb", json!("B")),
        Delivery::Resumed {
            wait_id: "wb".into(),
            outcome: completed(json!({"waitId": "wb", "value": "B"})),
        }
    );
    assert_eq!(var_of(&rt, "e", keys::WAIT_ANSWERS), json!({"wb": "B"}));
}

#[test]
fn replay_01_fold_24_delivered_message_is_served_from_the_log_after_a_crash() {
    let rt = wave2_rt(&[flow(
        "f",
        json!([receive("t", "w", "m"),
            {"op": "run", "stepId": "use", "input": var("m")},
            {"op": "complete", "output": {"$ref": "steps.use.output"}}]),
    )]);
    assert_eq!(start(&rt, "e", "f"), parked("receive:t"));
    // The re-run after delivery crashes right after its first append.
    rt.inject_fault(FaultPlan {
        crash_after_appends: 1,
    });
    let d = deliver(&rt, "e", "t", "m1", json!({"v": 9}));
    assert!(
        matches!(
            &d,
            Delivery::Resumed {
                outcome: RunOutcome::Crashed { .. },
                ..
            }
        ),
        "{d:?}"
    );
    let consumed_before = count(&log(&rt, "e"), "MESSAGE_CONSUMED");
    assert_eq!(consumed_before, 1);
    // Recovery re-runs from the start: the receive is served from the log.
    assert_eq!(recover(&rt, "e").unwrap(), completed(json!({"v": 9})));
    let events = log(&rt, "e");
    assert_eq!(count(&events, "MESSAGE_CONSUMED"), 1);
    assert_eq!(
        of_type(&events, "EXECUTION_RESUMED")
            .iter()
            .filter(|e| e.payload.get("waitId").is_some())
            .count(),
        1
    );
    // Buffered messages are served from the log too, also after a crash.
    let rt = wave2_rt(&[flow(
        "f",
        json!([suspend("g"), receive("t", "w", "m"),
            {"op": "run", "stepId": "use", "input": var("m")},
            {"op": "complete", "output": {"$ref": "steps.use.output"}}]),
    )]);
    start(&rt, "e", "f");
    assert_eq!(deliver(&rt, "e", "t", "m1", json!(5)), Delivery::Buffered);
    rt.inject_fault(FaultPlan {
        crash_after_appends: 2,
    });
    assert!(matches!(
        resume(&rt, "e", "g", Value::Null).unwrap(),
        RunOutcome::Crashed { .. }
    ));
    assert_eq!(recover(&rt, "e").unwrap(), completed(json!(5)));
    assert_eq!(count(&log(&rt, "e"), "MESSAGE_CONSUMED"), 1);
}

#[test]
fn fold_41_fold_44_quarantine_holds_delivery_until_release() {
    let rt = wave2_rt(&[flow(
        "f",
        json!([receive("t", "w", "m"), {"op": "complete", "output": var("m")}]),
    )]);
    assert_eq!(start(&rt, "e", "f"), parked("receive:t"));
    assert!(block_on(rt.quarantine("e", "t", "m1")).unwrap());
    // Holding twice appends nothing.
    assert!(!block_on(rt.quarantine("e", "t", "m1")).unwrap());
    let q = of_type(&log(&rt, "e"), "INBOX_QUARANTINED")[0].clone();
    assert!(kernel_stamped(&q));
    assert_eq!(q.payload, json!({"topic": "t", "messageId": "m1"}));
    assert_eq!(
        var_of(&rt, "e", keys::QUARANTINED),
        json!({"t": [{"messageId": "m1", "seq": q.sequence}]})
    );

    let before = log_bytes(&rt, "e");
    assert_eq!(deliver(&rt, "e", "t", "m1", json!("x")), Delivery::Held);
    assert_eq!(log_bytes(&rt, "e"), before);
    assert_eq!(state(&rt, "e").status, Status::Suspended);

    // Only the head can be released.
    assert!(!block_on(rt.release(
        "e",
        "t",
        "other",
        Release::Deliver {
            operator: "ops".into()
        }
    ))
    .unwrap());
    assert!(block_on(rt.release(
        "e",
        "t",
        "m1",
        Release::Deliver {
            operator: "ops".into()
        }
    ))
    .unwrap());
    let r = of_type(&log(&rt, "e"), "INBOX_RELEASED")[0].clone();
    assert!(kernel_stamped(&r));
    assert_eq!(
        r.payload,
        json!({"topic": "t", "messageId": "m1", "operator": "ops", "deliver": true})
    );
    assert_eq!(
        var_of(&rt, "e", keys::QUARANTINED)["t"][0]["released"],
        json!({"by": "operator", "deliver": true})
    );

    // Released for delivery: the message is delivered, and consuming it drops the entry.
    assert_eq!(
        deliver(&rt, "e", "t", "m1", json!("x")),
        Delivery::Resumed {
            wait_id: "w".into(),
            outcome: completed(json!("x")),
        }
    );
    assert_eq!(var_of(&rt, "e", keys::QUARANTINED), json!({}));
}

#[test]
fn fold_41_release_without_delivery_discards_and_auto_release_delivers() {
    let rt = wave2_rt(&[flow("f", json!([suspend("g")]))]);
    start(&rt, "e", "f");
    assert!(block_on(rt.quarantine("e", "t", "m1")).unwrap());
    assert!(block_on(rt.quarantine("e", "t", "m2")).unwrap());
    // m2 is not the head: it stays held even when the head is released.
    assert!(block_on(rt.release(
        "e",
        "t",
        "m1",
        Release::Discard {
            operator: "ops".into()
        }
    ))
    .unwrap());
    assert_eq!(
        var_of(&rt, "e", keys::QUARANTINED)["t"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(deliver(&rt, "e", "t", "m2", json!(2)), Delivery::Held);
    assert!(block_on(rt.release("e", "t", "m2", Release::Auto)).unwrap());
    let r = of_type(&log(&rt, "e"), "INBOX_RELEASED")[1].clone();
    assert_eq!(
        r.payload,
        json!({"topic": "t", "messageId": "m2", "auto": true, "deliver": true})
    );
    assert_eq!(deliver(&rt, "e", "t", "m2", json!(2)), Delivery::Buffered);
    assert_eq!(var_of(&rt, "e", keys::QUARANTINED), json!({}));
}

#[test]
fn fold_46_quarantine_facts_after_a_park_keep_the_park_fence() {
    assert_eq!(
        PARK_FENCE_IGNORABLE,
        ["INBOX_QUARANTINED", "INBOX_RELEASED"]
    );
    let rt = wave2_rt(&[flow(
        "f",
        json!([receive("t", "w", "m"), {"op": "complete", "output": var("m")}]),
    )]);
    start(&rt, "e", "f");
    let at_park = block_on(rt.store().observe("e")).unwrap();
    assert_eq!(block_on(rt.park_anchor("e")).unwrap(), Some(at_park));

    assert!(block_on(rt.quarantine("e", "t", "m1")).unwrap());
    assert!(block_on(rt.release("e", "t", "m1", Release::Auto)).unwrap());
    let log_now = log(&rt, "e");
    let park = log_now
        .iter()
        .rposition(|e| e.event_type == "EXECUTION_SUSPENDED")
        .unwrap();
    assert!(park_fence_holds(&log_now[park + 1..]));

    // The park fence holds: re-observed, the anchor is the park's incarnation and
    // fence, and appendIfUnchanged on it answers the park.
    let anchor = block_on(rt.park_anchor("e")).unwrap().expect("fence holds");
    assert_eq!(anchor.incarnation, at_park.incarnation);
    assert_eq!(anchor.fence, at_park.fence);
    assert_eq!(anchor.next_sequence, at_park.next_sequence + 2);
    let next = anchor.next_sequence;
    let resume = EventEnvelope {
        id: format!("e:{next}"),
        workflow_id: "f".into(),
        execution_id: "e".into(),
        event_type: "EXECUTION_RESUMED".into(),
        sequence: next,
        timestamp_ms: T0,
        payload: json!({"waitId": "w", "answer": "x"}).into(),
        metadata: Some(serde_json::from_value(json!({"kernel": true})).unwrap()),
    };
    block_on(rt.store().append_if_unchanged("e", anchor, vec![resume])).expect("fence holds");
    assert_eq!(var_of(&rt, "e", keys::WAIT_ANSWERS), json!({"w": "x"}));
    // Once something else is appended after a park, the fence no longer holds.
    let rt = wave2_rt(&[flow("f", json!([suspend("g")]))]);
    start(&rt, "e", "f");
    assert_eq!(deliver(&rt, "e", "t", "m1", json!(1)), Delivery::Buffered);
    assert_eq!(block_on(rt.park_anchor("e")).unwrap(), None);
}

#[test]
fn fold_23_fold_26_fold_45_continue_as_new_starts_the_next_execution_with_carry() {
    let f = json!({"flowId": "f",
    "effects": {"meter": {"outcomes": [{"value": 1, "meter": {"tokens": 5}}]}},
    "body": [
        {"op": "if", "ref": "input/next", "equals": true, "then": [
            {"op": "complete", "output": {"$ref": "input"}}
        ], "else": [
            {"op": "run", "stepId": "s", "toolId": "meter"},
            suspend("g"),
            {"op": "continueAsNew", "input": {"next": true}}
        ]}
    ]});
    let rt = wave2_rt(&[f]);
    assert_eq!(start(&rt, "e", "f"), parked("g"));
    assert_eq!(deliver(&rt, "e", "t", "m1", json!(1)), Delivery::Buffered);
    assert!(block_on(rt.quarantine("e", "t", "m2")).unwrap());
    let prev = state(&rt, "e");
    let resources = prev.variables.get(keys::RESOURCES).cloned();

    let out = resume(&rt, "e", "g", Value::Null).unwrap();
    assert_eq!(out, RunOutcome::Continued { to: "e~1".into() });
    assert_eq!(continuation_id("e"), "e~1");
    assert_eq!(continuation_id("e~1"), "e~2");

    // FOLD-23: the old execution is continued, stamped, naming its successor.
    let old = log(&rt, "e");
    let cont = of_type(&old, "EXECUTION_CONTINUED")[0].clone();
    assert!(kernel_stamped(&cont));
    assert_eq!(cont.payload["continuedTo"], json!("e~1"));
    let s = state(&rt, "e");
    assert_eq!(s.status, Status::Continued);
    assert_eq!(s.variables.get(keys::CONTINUED_TO), Some(&json!("e~1")));

    // The successor started from the previous state and ran to its end.
    let next = log(&rt, "e~1");
    let started = &next[0];
    assert_eq!(started.event_type, "EXECUTION_STARTED");
    assert_eq!(started.payload["input"], json!({"next": true}));
    assert_eq!(started.payload["continuedFrom"]["executionId"], json!("e"));
    assert_eq!(
        started.payload["continuedFrom"]["carried"]["quarantined"],
        s.variables.get(keys::QUARANTINED).cloned().unwrap()
    );
    assert_eq!(
        started.payload["carry"]["inbox"],
        json!({"t": {"consumed": 1, "lastMessageId": "m1"}})
    );
    let n = state(&rt, "e~1");
    assert_eq!(n.status, Status::Completed);
    // FOLD-26: the carry seeds `_resources` and `_inbox`; FOLD-45: `_quarantined`.
    assert_eq!(n.variables.get(keys::RESOURCES).cloned(), resources);
    assert!(resources.is_some());
    assert_eq!(
        n.variables.get(keys::INBOX),
        Some(&json!({"t": {"consumed": 1, "lastMessageId": "m1"}}))
    );
    assert_eq!(
        n.variables.get(keys::QUARANTINED),
        s.variables.get(keys::QUARANTINED)
    );
    assert_eq!(
        n.variables.get(keys::QUARANTINED).unwrap()["t"][0]["messageId"],
        json!("m2")
    );
}

#[test]
fn fold_23_a_crash_before_the_successor_starts_is_recovered() {
    let rt = wave2_rt(&[flow(
        "f",
        json!([{"op": "if", "ref": "input/next", "equals": true,
            "then": [{"op": "complete", "output": 1}],
            "else": [{"op": "continueAsNew", "input": {"next": true}}]}]),
    )]);
    // Crash right after EXECUTION_CONTINUED (the second append).
    rt.inject_fault(FaultPlan {
        crash_after_appends: 2,
    });
    assert!(matches!(start(&rt, "e", "f"), RunOutcome::Crashed { .. }));
    assert_eq!(state(&rt, "e").status, Status::Continued);
    assert!(log(&rt, "e~1").is_empty());
    assert_eq!(
        recover(&rt, "e").unwrap(),
        RunOutcome::Continued { to: "e~1".into() }
    );
    assert_eq!(state(&rt, "e~1").status, Status::Completed);
    // Recovering again starts nothing new.
    let before = log_bytes(&rt, "e~1");
    assert_eq!(
        recover(&rt, "e").unwrap(),
        RunOutcome::Continued { to: "e~1".into() }
    );
    assert_eq!(log_bytes(&rt, "e~1"), before);
}

#[test]
fn fold_23_a_flow_that_always_continues_stops_at_the_hop_limit() {
    let rt = wave2_rt(&[flow("f", json!([{"op": "continueAsNew"}]))]);
    let RunOutcome::Continued { to } = start(&rt, "e", "f") else {
        panic!("not continued");
    };
    let limit = loom_kernel::runtime::limits::CONTINUATIONS_PER_CALL_MAX;
    assert_eq!(to, format!("e~{limit}"));
    assert_eq!(state(&rt, &to).status, Status::Continued);
    let next = continuation_id(&to);
    assert!(log(&rt, &next).is_empty());
    // Recovering the last one goes on.
    assert!(matches!(
        recover(&rt, &to).unwrap(),
        RunOutcome::Continued { .. }
    ));
    assert_eq!(log(&rt, &next)[0].event_type, "EXECUTION_STARTED");
}

#[test]
fn abi_04_all_wave2_flags_on_every_syscall_is_callable_and_advertised() {
    let config = all_flags();
    let hs = handshake(&config.features);
    let listed: Vec<String> = serde_json::from_value(hs["syscalls"].clone()).unwrap();
    for op in ["continueAsNew", "receive", "select"] {
        assert!(listed.contains(&op.to_owned()), "{op} advertised");
    }
    assert_eq!(listed.len(), 13);
    let rt = wave2_rt(&[flow(
        "f",
        json!([
            {"op": "if", "ref": "input/next", "equals": true,
             "then": [{"op": "complete", "output": {"$ref": "input"}}],
             "else": [
                receive("a", "w1", "x"),
                {"op": "select", "waits": [{"waitId": "w2", "topic": "b"}], "bind": "y"},
                {"op": "continueAsNew", "input": {"next": true, "x": var("x"), "y": var("y")}}
             ]}
        ]),
    )]);
    assert_eq!(start(&rt, "e", "f"), parked("receive:a"));
    assert!(matches!(
        deliver(&rt, "e", "a", "1", json!("X")),
        Delivery::Resumed {
            outcome: RunOutcome::Parked { .. },
            ..
        }
    ));
    assert_eq!(
        deliver(&rt, "e", "b", "2", json!("Y")),
        Delivery::Resumed {
            wait_id: "w2".into(),
            outcome: RunOutcome::Continued { to: "e~1".into() },
        }
    );
    assert_eq!(
        var_of(&rt, "e~1", keys::OUTPUT),
        json!({"next": true, "x": "X", "y": {"waitId": "w2", "value": "Y"}})
    );
}

const WAVE2_KINDS: [&str; 4] = [
    "EXECUTION_CONTINUED",
    "MESSAGE_CONSUMED",
    "INBOX_QUARANTINED",
    "INBOX_RELEASED",
];

fn wave2_writes(log: &[EventEnvelope]) -> Vec<String> {
    let mut out: Vec<String> = log
        .iter()
        .filter(|e| WAVE2_KINDS.contains(&e.event_type.as_str()))
        .map(|e| e.event_type.clone())
        .collect();
    for e in log {
        if e.event_type == "EXECUTION_SUSPENDED" && e.payload.get("waits").is_some() {
            out.push("waits".into());
        }
        if e.event_type == "EXECUTION_RESUMED" && e.payload.get("waitId").is_some() {
            out.push("wait-addressed resume".into());
        }
        if e.event_type == "EXECUTION_STARTED"
            && (e.payload.get("carry").is_some() || e.payload.get("continuedFrom").is_some())
        {
            out.push("carry".into());
        }
    }
    out
}

#[test]
fn compat_11_with_the_flags_on_the_kernel_writes_the_wave2_kinds() {
    let rt = wave2_rt(&[flow(
        "f",
        json!([{"op": "if", "ref": "input/next", "equals": true,
            "then": [{"op": "complete", "output": 1}],
            "else": [receive("t", "w", "m"), {"op": "continueAsNew", "input": {"next": true}}]}]),
    )]);
    start(&rt, "e", "f");
    assert!(block_on(rt.quarantine("e", "t", "h")).unwrap());
    assert!(block_on(rt.release("e", "t", "h", Release::Auto)).unwrap());
    deliver(&rt, "e", "t", "m1", json!(1));
    let mut writes = wave2_writes(&log(&rt, "e"));
    writes.extend(wave2_writes(&log(&rt, "e~1")));
    for kind in WAVE2_KINDS
        .iter()
        .copied()
        .chain(["waits", "wait-addressed resume", "carry"])
    {
        assert!(
            writes.iter().any(|w| w == kind),
            "{kind} written: {writes:?}"
        );
    }
}

#[test]
fn compat_11_with_the_flags_off_the_kernel_never_writes_them() {
    // A flow over every Wave-1 syscall, and the message APIs called anyway.
    let rt = rt::rt(&[flow(
        "f",
        json!([run_step("a"), suspend("g"), emit("E", json!({})), {"op": "complete", "output": 1}]),
    )]);
    assert_eq!(start(&rt, "e", "f"), parked("g"));
    assert_eq!(
        block_on(rt.deliver("e", "t", "m", json!(1))).unwrap(),
        Delivery::Disabled
    );
    assert!(!block_on(rt.quarantine("e", "t", "m")).unwrap());
    assert!(!block_on(rt.release("e", "t", "m", Release::Auto)).unwrap());
    resume(&rt, "e", "g", json!(1)).unwrap();
    let events = log(&rt, "e");
    assert_eq!(wave2_writes(&events), Vec::<String>::new());
    assert!(!events
        .iter()
        .any(|e| e.metadata.as_ref().is_some_and(|m| m.contains_key("seal"))));
    // With only continueAsNew on, no message kind is written either.
    let config = RuntimeConfig {
        features: KernelFeatures {
            continue_as_new: true,
            ..KernelFeatures::default()
        },
        ..RuntimeConfig::default()
    };
    let rt = rt_with(config, &[flow("f", json!([suspend("g")]))]);
    start(&rt, "e", "f");
    assert_eq!(
        block_on(rt.deliver("e", "t", "m", json!(1))).unwrap(),
        Delivery::Disabled
    );
    assert!(!block_on(rt.quarantine("e", "t", "m")).unwrap());
    assert_eq!(wave2_writes(&log_of(&rt, "e")), Vec::<String>::new());
}

fn log_of(rt: &Rt, id: &str) -> Vec<EventEnvelope> {
    block_on(rt.store().read(id)).unwrap()
}

/// A store that lets another writer win the first `MESSAGE_CONSUMED` append: right
/// before it, the racer's event is appended at the same position.
struct RacingStore {
    inner: loom_stores::MemoryEventStore,
    racer: std::sync::Mutex<Option<(&'static str, Value)>>,
}

impl EventStore for RacingStore {
    fn capabilities(&self) -> loom_kernel::spi::EventStoreCapabilities {
        self.inner.capabilities()
    }
    async fn append(
        &self,
        execution_id: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<loom_kernel::spi::FenceToken>,
    ) -> Result<loom_kernel::spi::AppendAck, loom_kernel::spi::StoreError> {
        let race = events
            .first()
            .is_some_and(|e| e.event_type == "MESSAGE_CONSUMED");
        let racer = if race {
            self.racer.lock().unwrap().take()
        } else {
            None
        };
        if let Some((kind, payload)) = racer {
            let env = EventEnvelope {
                id: format!("{execution_id}:{expected_next}"),
                workflow_id: "f".into(),
                execution_id: execution_id.into(),
                event_type: kind.into(),
                sequence: expected_next,
                timestamp_ms: T0,
                payload: payload.into(),
                metadata: Some(serde_json::from_value(json!({"kernel": true})).unwrap()),
            };
            self.inner
                .append(execution_id, expected_next, vec![env], fence)
                .await?;
        }
        self.inner
            .append(execution_id, expected_next, events, fence)
            .await
    }
    async fn read(
        &self,
        execution_id: &str,
    ) -> Result<Vec<EventEnvelope>, loom_kernel::spi::StoreError> {
        self.inner.read(execution_id).await
    }
    async fn list_executions(&self) -> Result<Vec<String>, loom_kernel::spi::StoreError> {
        self.inner.list_executions().await
    }
}

fn racing_rt(
    racer: (&'static str, Value),
) -> loom_kernel::runtime::Runtime<RacingStore, std::sync::Arc<loom_kernel::spi::ManualClock>> {
    let store = RacingStore {
        inner: loom_stores::MemoryEventStore::new(),
        racer: std::sync::Mutex::new(Some(racer)),
    };
    let mut rt = loom_kernel::runtime::Runtime::new(
        std::sync::Arc::new(store),
        std::sync::Arc::new(loom_kernel::spi::ManualClock::new(T0)),
        all_flags(),
    );
    rt.register_flow_json(&flow(
        "f",
        json!([receive("t", "w", "m"), {"op": "complete", "output": var("m")}]),
    ))
    .unwrap();
    rt
}

#[test]
fn fold_46_delivery_that_loses_a_race_to_a_quarantine_fact_is_decided_again() {
    // The racer holds another message: the park fence holds, the delivery goes through.
    let rt = racing_rt((
        "INBOX_QUARANTINED",
        json!({"topic": "t", "messageId": "other"}),
    ));
    assert_eq!(start(&rt, "e", "f"), parked("receive:t"));
    let d = block_on(rt.deliver("e", "t", "m1", json!("x"))).unwrap();
    assert_eq!(
        d,
        Delivery::Resumed {
            wait_id: "w".into(),
            outcome: completed(json!("x")),
        }
    );
    let kinds = types(&log(&rt, "e"));
    let q = kinds.iter().position(|k| k == "INBOX_QUARANTINED").unwrap();
    assert_eq!(kinds[q + 1], "MESSAGE_CONSUMED");

    // The racer holds this very message: decided again, it is held.
    let rt = racing_rt((
        "INBOX_QUARANTINED",
        json!({"topic": "t", "messageId": "m1"}),
    ));
    start(&rt, "e", "f");
    assert_eq!(
        block_on(rt.deliver("e", "t", "m1", json!("x"))).unwrap(),
        Delivery::Held
    );
    assert_eq!(count(&log(&rt, "e"), "MESSAGE_CONSUMED"), 0);

    // Any other racing fact is a conflict, and the delivery appended nothing.
    let rt = racing_rt(("MESSAGE_CONSUMED", json!({"topic": "u", "messageId": "z"})));
    start(&rt, "e", "f");
    assert!(matches!(
        block_on(rt.deliver("e", "t", "m1", json!("x"))),
        Err(loom_kernel::runtime::RuntimeError::Conflict(_))
    ));
    let events = log(&rt, "e");
    assert_eq!(count(&events, "MESSAGE_CONSUMED"), 1);
    assert_eq!(state(&rt, "e").status, Status::Suspended);
}

#[test]
fn fold_24_proto_keys_are_dropped_from_delivered_messages_on_both_paths() {
    let rt = wave2_rt(&[flow(
        "f",
        json!([suspend("g"), receive("t", "w1", "a"), receive("t", "w2", "b"),
            {"op": "complete", "output": [var("a"), var("b")]}]),
    )]);
    start(&rt, "e", "f");
    let hostile: Value =
        serde_json::from_str(r#"{"__proto__": {"x": 1}, "ok": {"__proto__": 2, "y": 3}}"#).unwrap();
    assert_eq!(
        deliver(&rt, "e", "t", "m1", hostile.clone()),
        Delivery::Buffered
    );
    assert_eq!(
        resume(&rt, "e", "g", Value::Null).unwrap(),
        parked("receive:t")
    );
    let out = deliver(&rt, "e", "t", "m2", hostile);
    let clean = json!({"ok": {"y": 3}});
    assert_eq!(
        out,
        Delivery::Resumed {
            wait_id: "w2".into(),
            outcome: completed(json!([clean.clone(), clean])),
        }
    );
    assert!(!log_bytes(&rt, "e").contains("__proto__"));
}

/// One flow per Wave 2 syscall, each ending `complete` once the syscall has done its work,
/// with the gate its park records (None: it does not park, it continues).
fn abi_04_flow_using(op: &str) -> (Value, Option<&'static str>) {
    let body = match op {
        "continueAsNew" => json!([{"op": "if", "ref": "input/next", "equals": true,
            "then": [{"op": "complete", "output": "next"}],
            "else": [{"op": "continueAsNew", "input": {"next": true}}]}]),
        "receive" => json!([receive("t", "w", "m"), {"op": "complete", "output": var("m")}]),
        _ => json!([{"op": "select", "waits": [{"waitId": "w", "topic": "t"}], "bind": "m"},
            {"op": "complete", "output": {"$ref": "vars.m/value"}}]),
    };
    let gate = match op {
        "continueAsNew" => None,
        "receive" => Some("receive:t"),
        _ => Some("__loom_select__"),
    };
    (flow("f", body), gate)
}

#[test]
fn abi_04_every_flag_combination_listed_wave2_syscalls_run_and_unlisted_are_refused() {
    // The other ABI-04 tests call the Wave 2 syscalls with every flag on, where a runtime
    // that wires one syscall to another's flag (delivery only when both `receive` and
    // `select` are on, say) still passes. Here each of the 8 combinations runs each
    // listed syscall to its end, and each unlisted one is refused when the flow is loaded.
    // "The list" is the effective list the handshake advertises (GAP-21, docs/decisions/0008-runtime-choices.md).
    for bits in 0..8u8 {
        let features = KernelFeatures {
            continue_as_new: bits & 1 != 0,
            receive: bits & 2 != 0,
            select: bits & 4 != 0,
            sha256_flow_hash: false,
        };
        let listed = loom_kernel::versions::effective_syscalls(&features);
        let config = RuntimeConfig {
            features,
            ..RuntimeConfig::default()
        };
        for op in ["continueAsNew", "receive", "select"] {
            let (script, gate) = abi_04_flow_using(op);
            let parsed = loom_kernel::runtime::FlowScript::parse(&script, &features);
            if !listed.contains(&op) {
                let err = parsed.expect_err(&format!("{op} unlisted at flags {bits:03b}"));
                assert!(
                    err.path.ends_with(".op") && err.message.contains(&format!("`{op}`")),
                    "{op} at flags {bits:03b}: {err}"
                );
                continue;
            }
            parsed.unwrap_or_else(|e| panic!("{op} listed at flags {bits:03b}: {e}"));
            let rt = rt_with(config.clone(), &[script]);
            match gate {
                None => {
                    assert_eq!(
                        start(&rt, "e", "f"),
                        RunOutcome::Continued { to: "e~1".into() },
                        "{op} at flags {bits:03b}"
                    );
                    assert_eq!(state(&rt, "e~1").status, Status::Completed);
                }
                Some(gate) => {
                    assert_eq!(start(&rt, "e", "f"), parked(gate), "{op} at {bits:03b}");
                    assert_eq!(
                        deliver(&rt, "e", "t", "m1", json!("M")),
                        Delivery::Resumed {
                            wait_id: "w".into(),
                            outcome: completed(json!("M")),
                        },
                        "{op} at flags {bits:03b}: a parked {op} is answered by a delivery"
                    );
                }
            }
        }
    }
}
