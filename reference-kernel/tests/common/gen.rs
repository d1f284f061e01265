//! proptest strategies for realistic, sometimes hostile, event logs.
#![allow(dead_code)]

use super::{ev, Ev};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Small JSON values, `__proto__` keys and nulls included.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        (-1e6f64..1e6)
            .prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)),
        "[a-z_]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![Just("__proto__".to_string()), "[a-c]{1,2}"],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn step_id() -> impl Strategy<Value = String> {
    prop_oneof![Just("a"), Just("b"), Just("c"), Just("__proto__")].prop_map(str::to_string)
}

fn gate() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("approve"),
        Just("review"),
        Just("__loom_indoubt__"),
        Just("__loom_diverged__")
    ]
    .prop_map(str::to_string)
}

/// Which families of events a generated log may hold.
#[derive(Debug, Clone, Copy)]
pub struct Grammar {
    /// Wave 2 (1.23), quarantine (1.25) and EVENTS_REHOMED (1.22) kinds.
    pub newer_kinds: bool,
    /// `EXECUTION_FAILED` without `error` (the SNAP-04a shape).
    pub failed_without_error: bool,
    /// Unknown kinds and stamped application events.
    pub foreign: bool,
}

pub const FULL: Grammar = Grammar {
    newer_kinds: true,
    failed_without_error: true,
    foreign: true,
};

pub fn event(g: Grammar) -> BoxedStrategy<Ev> {
    let mut arms: Vec<BoxedStrategy<Ev>> = vec![
        json_value()
            .prop_map(|i| ev("EXECUTION_STARTED", json!({"input": i})))
            .boxed(),
        (step_id(), json_value())
            .prop_map(|(s, i)| ev("STEP_STARTED", json!({"stepId": s, "input": i})))
            .boxed(),
        (step_id(), json_value())
            .prop_map(|(s, o)| ev("STEP_COMPLETED", json!({"stepId": s, "output": o})))
            .boxed(),
        step_id()
            .prop_map(|s| ev("STEP_FAILED", json!({"stepId": s, "error": "boom"})))
            .boxed(),
        (step_id(), json_value())
            .prop_map(|(s, p)| {
                ev(
                    "STEP_FAILED",
                    json!({"stepId": s, "error": "typed", "channel": "c", "payload": p}),
                )
            })
            .boxed(),
        (step_id(), 1u64..4)
            .prop_map(|(s, a)| ev("STEP_RETRYING", json!({"stepId": s, "attempt": a})))
            .boxed(),
        step_id()
            .prop_map(|s| ev("STEP_CANCELLED", json!({"stepId": s})))
            .boxed(),
        (step_id(), 1u64..3)
            .prop_map(|(s, a)| ev("EFFECT_INDOUBT", json!({"stepId": s, "attempt": a})))
            .boxed(),
        (gate(), proptest::option::of(0i64..10_000))
            .prop_map(|(g, w)| {
                let mut p = json!({"on": g});
                if let Some(w) = w {
                    p["wakeAt"] = json!(w);
                }
                ev("EXECUTION_SUSPENDED", p)
            })
            .boxed(),
        prop_oneof![Just(Value::Null), json_value()]
            .prop_map(|p| ev("EXECUTION_RESUMED", p))
            .boxed(),
        (
            prop_oneof![Just("d1"), Just("d2"), Just("3"), Just("10")],
            json_value(),
            proptest::option::of(json_value()),
        )
            .prop_map(|(id, c, ctx)| {
                let mut p = json!({"id": id, "choice": c});
                if let Some(ctx) = ctx {
                    p["context"] = ctx;
                }
                ev("DECISION_RECORDED", p)
            })
            .boxed(),
        json_value()
            .prop_map(|e| ev("EXECUTION_FAILED", json!({"error": e})))
            .boxed(),
        json_value()
            .prop_map(|o| ev("EXECUTION_COMPLETED", json!({"output": o})))
            .boxed(),
        Just(ev("EXECUTION_CANCELLED", json!({}))).boxed(),
        json_value()
            .prop_map(|i| ev("EXECUTION_MIGRATED", json!({"migratedInput": i})))
            .boxed(),
        (0u32..50, 0u32..3)
            .prop_map(|(t, c)| {
                ev(
                    "RESOURCE_METERED",
                    json!({"tokens": t, "costUsd": f64::from(c) * 0.5}),
                )
            })
            .boxed(),
        Just(ev("TIMER_FIRED", json!({"firedAt": 5}))).boxed(),
    ];
    if g.failed_without_error {
        arms.push(Just(ev("EXECUTION_FAILED", json!({}))).boxed());
    }
    if g.foreign {
        arms.push(json_value().prop_map(|p| ev("app.progress", p)).boxed());
        arms.push(
            prop_oneof![Just("00000000000000aa"), Just("00000000000000bb")]
                .prop_map(|d| ev("app.progress", json!({})).stamp(d))
                .boxed(),
        );
        arms.push(
            json_value()
                .prop_map(|p| ev("NOT_A_KERNEL_KIND", p))
                .boxed(),
        );
    }
    if g.newer_kinds {
        let kernel = any::<bool>();
        arms.push(
            (kernel, prop_oneof![Just("q1"), Just("q2")])
                .prop_map(|(k, m)| {
                    maybe_kernel(
                        ev("INBOX_QUARANTINED", json!({"topic": "t", "messageId": m})),
                        k,
                    )
                })
                .boxed(),
        );
        arms.push(
            (kernel, any::<bool>(), any::<bool>())
                .prop_map(|(k, op, del)| {
                    let mut p = json!({"topic": "t"});
                    if op {
                        p["operator"] = json!("alice");
                    } else {
                        p["auto"] = json!(true);
                    }
                    if del {
                        p["deliver"] = json!(true);
                    }
                    maybe_kernel(ev("INBOX_RELEASED", p), k)
                })
                .boxed(),
        );
        arms.push(
            (kernel, prop_oneof![Just("q1"), Just("q2")])
                .prop_map(|(k, m)| {
                    maybe_kernel(
                        ev(
                            "MESSAGE_CONSUMED",
                            json!({"topic": "t", "messageId": m, "waitId": "w"}),
                        ),
                        k,
                    )
                })
                .boxed(),
        );
        arms.push(
            kernel
                .prop_map(|k| {
                    maybe_kernel(ev("EXECUTION_CONTINUED", json!({"continuedTo": "next"})), k)
                })
                .boxed(),
        );
        arms.push(
            kernel
                .prop_map(|k| {
                    maybe_kernel(ev("PARALLEL_COMPLETED", json!({"scopeId": "p", "n": 2})), k)
                })
                .boxed(),
        );
        arms.push(
            kernel
                .prop_map(|k| {
                    maybe_kernel(
                        ev("EXECUTION_RESUMED", json!({"waitId": "w", "answer": 1})),
                        k,
                    )
                })
                .boxed(),
        );
        arms.push(Just(ev("EVENTS_REHOMED", json!({"segment": 1}))).boxed());
    }
    proptest::strategy::Union::new(arms).boxed()
}

fn maybe_kernel(e: Ev, kernel: bool) -> Ev {
    if kernel {
        e.kernel()
    } else {
        e
    }
}

/// A log: usually starting with EXECUTION_STARTED, then up to `max` events.
pub fn events(g: Grammar, max: usize) -> impl Strategy<Value = Vec<Ev>> {
    (any::<bool>(), prop::collection::vec(event(g), 0..max)).prop_map(|(start, mut evs)| {
        if start {
            evs.insert(0, ev("EXECUTION_STARTED", json!({"input": 0})));
        }
        evs
    })
}
