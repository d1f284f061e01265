//! REPLAY rules, end to end through the reference runtime.
#[path = "common/runtime.rs"]
mod rt;

use loom_kernel::fold::{keys, FrameStatus, Status};
use loom_kernel::runtime::{block_on, verify_flow, FlowScript, RunOutcome, Wiring};
use loom_kernel::versions::KernelFeatures;
use rt::*;
use serde_json::{json, Value};

#[test]
fn replay_01_resume_reruns_from_start_serving_completed_work() {
    let rt = rt(&[flow(
        "f",
        json!([run_step("a"), suspend("g"), run_step("b"), {"op": "complete", "output": {"$ref": "steps.b.output"}}]),
    )]);
    assert_eq!(start(&rt, "e", "f"), parked("g"));
    assert_eq!(
        resume(&rt, "e", "g", json!(1)).unwrap(),
        completed(Value::Null)
    );
    assert_eq!(rt.step_calls("a"), 1);
    assert_eq!(rt.step_calls("b"), 1);
    assert_eq!(count(&log(&rt, "e"), "STEP_STARTED"), 2);
}

#[test]
fn replay_02_completed_step_effect_never_reruns() {
    let f = json!({"flowId": "f", "effects": {"a": {"outcomes": [{"value": {"x": 7}}]}},
        "body": [run_step("a"), suspend("g1"), suspend("g2"), {"op": "complete", "output": {"$ref": "steps.a.output/x"}}]});
    let rt = rt(&[f]);
    start(&rt, "e", "f");
    resume(&rt, "e", "g1", json!(null)).unwrap();
    let out = resume(&rt, "e", "g2", json!(null)).unwrap();
    assert_eq!(
        rt.step_calls("a"),
        1,
        "served twice from the log, invoked once"
    );
    assert_eq!(
        out,
        completed(json!(7)),
        "the served value is the recorded output"
    );
}

#[test]
fn replay_03_run_and_execute_write_identical_logs() {
    let body = |op: &str| json!([{"op": op, "stepId": "a", "input": {"k": 1}}, {"op": "complete"}]);
    let r1 = rt(&[flow("f", body("run"))]);
    let r2 = rt(&[flow("f", body("execute"))]);
    start(&r1, "e", "f");
    start(&r2, "e", "f");
    let strip = |rt: &Rt| {
        log(rt, "e")
            .into_iter()
            .skip(1)
            .map(|e| (e.event_type, e.payload))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&r1), strip(&r2));
}

#[test]
fn replay_04_decision_served_decider_not_called() {
    let mut rt = rt(&[flow(
        "f",
        json!([{"op": "decide", "id": "d", "decider": "rand"}, suspend("g"), {"op": "complete", "output": {"$ref": "decisions.d"}}]),
    )]);
    let counter = std::sync::atomic::AtomicU64::new(0);
    rt.register_decider("rand", move |_: &str| {
        Ok(json!(
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 100
        ))
    });
    start(&rt, "e", "f");
    let out = resume(&rt, "e", "g", json!(null)).unwrap();
    assert_eq!(out, completed(json!(100)));
    assert_eq!(rt.decider_calls("d"), 1);
}

#[test]
fn replay_05_every_task_kind_writes_step_events() {
    for kind in ["step", "llm", "agent", "tool", "ui"] {
        let rt = rt(&[flow(
            "f",
            json!([{"op": "execute", "stepId": "t", "kind": kind}]),
        )]);
        start(&rt, "e", "f");
        let t = types(&log(&rt, "e"));
        assert_eq!(
            t,
            [
                "EXECUTION_STARTED",
                "STEP_STARTED",
                "STEP_COMPLETED",
                "EXECUTION_COMPLETED"
            ],
            "{kind}"
        );
    }
}

#[test]
fn replay_06_gates_pass_in_order_and_park_past_the_last() {
    let body = json!([{"op": "suspend", "on": "g1", "bind": "a"}, {"op": "suspend", "on": "g2", "bind": "b"}, {"op": "suspend", "on": "g3"},
        {"op": "complete", "output": [{"$ref": "vars.a"}, {"$ref": "vars.b"}, {"$resume": 2}]}]);
    let rt = rt(&[flow("f", body)]);
    start(&rt, "e", "f");
    assert_eq!(resume(&rt, "e", "g1", json!("A")).unwrap(), parked("g2"));
    assert_eq!(
        resume(&rt, "e", "g2", json!("B")).unwrap(),
        parked("g3"),
        "two resumes: gates 1-2 pass, gate 3 parks"
    );
    assert_eq!(state(&rt, "e").parked_gate(), Some("g3"));
    assert_eq!(
        resume(&rt, "e", "g3", json!("C")).unwrap(),
        completed(json!(["A", "B", "C"]))
    );
}

#[test]
fn replay_07_orphan_legacy_entry_shifts_to_next_gate() {
    // A pre-0104 log: an EXECUTION_RESUMED that answered nothing, then a park at g1.
    let rt = rt(&[flow(
        "f",
        json!([{"op": "suspend", "on": "g1", "bind": "a"}, {"op": "complete", "output": {"$ref": "vars.a"}}]),
    )]);
    let legacy = vec![
        ("EXECUTION_STARTED", json!({"input": null, "flowId": "f"})),
        ("EXECUTION_RESUMED", json!("orphan")),
    ];
    let envs: Vec<_> = legacy
        .into_iter()
        .enumerate()
        .map(|(i, (t, p))| loom_kernel::EventEnvelope {
            id: format!("e:{i}"),
            workflow_id: "f".into(),
            execution_id: "e".into(),
            event_type: t.into(),
            sequence: i as u64,
            timestamp_ms: 0,
            payload: p.into(),
            metadata: None,
        })
        .collect();
    block_on(loom_kernel::spi::EventStore::append(
        rt.store().as_ref(),
        "e",
        0,
        envs,
        None,
    ))
    .unwrap();
    // The re-drive serves the orphan entry to g1 as its approval: the documented shift.
    assert_eq!(recover(&rt, "e").unwrap(), completed(json!("orphan")));
}

#[test]
fn replay_08_human_step_consumes_its_entry_in_order() {
    let body = json!([{"op": "suspend", "on": "A", "bind": "a"}, {"op": "run", "stepId": "H", "kind": "human"}, {"op": "suspend", "on": "B", "bind": "b"},
        {"op": "complete", "output": [{"$ref": "vars.a"}, {"$ref": "steps.H.output"}, {"$ref": "vars.b"}]}]);
    let rt = rt(&[flow("f", body)]);
    start(&rt, "e", "f");
    assert_eq!(resume(&rt, "e", "A", json!(1)).unwrap(), parked("H"));
    assert_eq!(resume(&rt, "e", "H", json!(2)).unwrap(), parked("B"));
    assert_eq!(
        resume(&rt, "e", "B", json!(3)).unwrap(),
        completed(json!([1, 2, 3]))
    );
    // Live and on replay past the completed step (the last run served H from its frame).
    assert_eq!(state(&rt, "e").frames["H"].status, FrameStatus::Completed);
    let park = of_type(&log(&rt, "e"), "EXECUTION_SUSPENDED")[1]
        .payload
        .clone();
    assert_eq!(
        park["condition"]["stepId"],
        json!("H"),
        "INGRESS-35: a human park records condition.stepId"
    );
}

#[test]
fn replay_09_untyped_failure_reexecutes_on_replay() {
    let f = json!({"flowId": "f", "effects": {"a": {"outcomes": [{"error": "boom"}, {"value": 1}]}},
        "body": [{"op": "run", "stepId": "a", "catch": {"*": [suspend("g")]}}, {"op": "complete"}]});
    let rt = rt(&[f]);
    assert_eq!(start(&rt, "e", "f"), parked("g"));
    assert_eq!(rt.step_calls("a"), 1);
    resume(&rt, "e", "g", json!(null)).unwrap();
    assert_eq!(
        rt.step_calls("a"),
        2,
        "the untyped failure is executed again"
    );
}

#[test]
fn replay_10_timer_fires_after_restart() {
    let clock = std::sync::Arc::new(loom_kernel::spi::ManualClock::new(T0));
    let body = json!([{"op": "sleep", "ms": 500, "bind": "w"}, {"op": "complete", "output": {"$ref": "vars.w"}}]);
    let rt = timed_rt(clock.clone(), &[flow("f", body.clone())]);
    assert_eq!(start(&rt, "e", "f"), parked("sleep"));
    let park = of_type(&log(&rt, "e"), "EXECUTION_SUSPENDED")[0]
        .payload
        .clone();
    assert_eq!(park["wakeAt"], json!(T0 + 500));
    // Nothing is due yet.
    assert!(block_on(rt.fire_timers(T0 + 499)).unwrap().is_empty());
    clock.set(T0 + 10_000);
    let fired = block_on(rt.fire_timers(T0 + 10_000)).unwrap();
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].1, Ok(completed(json!({"firedAt": T0 + 500}))));
    let l = log(&rt, "e");
    assert_eq!(count(&l, "TIMER_FIRED"), 1);
    assert_eq!(
        state(&rt, "e").resume_payloads(),
        &[json!({"firedAt": T0 + 500})],
        "GAP-25 passthrough from the log"
    );
}

/// An event store whose first append of a park first runs a hook: another worker acting
/// in the window between the timer being scheduled and the park landing (REPLAY-17
/// order).
struct ParkRace {
    inner: std::sync::Arc<loom_stores::MemoryEventStore>,
    hook: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
    /// Refuse the next park append (a worker that dies between the timer and the park).
    lose_park: std::sync::atomic::AtomicBool,
}

impl loom_kernel::spi::EventStore for ParkRace {
    fn capabilities(&self) -> loom_kernel::spi::EventStoreCapabilities {
        self.inner.capabilities()
    }

    async fn append(
        &self,
        execution_id: &str,
        expected_next: u64,
        events: Vec<loom_kernel::EventEnvelope>,
        fence: Option<loom_kernel::spi::FenceToken>,
    ) -> Result<loom_kernel::spi::AppendAck, loom_kernel::spi::StoreError> {
        if events.iter().any(|e| e.event_type == "EXECUTION_SUSPENDED") {
            let hook = self.hook.lock().unwrap().take();
            if let Some(hook) = hook {
                hook();
            }
            if self
                .lose_park
                .swap(false, std::sync::atomic::Ordering::SeqCst)
            {
                return Err(loom_kernel::spi::StoreError::new(
                    loom_kernel::spi::StoreErrorKind::Backend,
                    "the worker died before the park was written",
                ));
            }
        }
        self.inner
            .append(execution_id, expected_next, events, fence)
            .await
    }

    async fn read(
        &self,
        execution_id: &str,
    ) -> Result<Vec<loom_kernel::EventEnvelope>, loom_kernel::spi::StoreError> {
        self.inner.read(execution_id).await
    }

    async fn list_executions(&self) -> Result<Vec<String>, loom_kernel::spi::StoreError> {
        self.inner.list_executions().await
    }

    async fn acquire_fence(
        &self,
        execution_id: &str,
    ) -> Result<loom_kernel::spi::FenceToken, loom_kernel::spi::StoreError> {
        self.inner.acquire_fence(execution_id).await
    }
}

/// Regression for a runtime bug the deploy simulator's 0 ms sleeps reach: worker A
/// schedules the timer and, before its park lands, worker B finds the timer due and
/// reads a log without the park. B must keep the timer (the park has not appeared
/// yet); cancelling it left the park asleep forever, since nothing else wakes a timed
/// park. Fails without the fix in `Runtime::fire_timers`.
#[test]
fn replay_10_zero_ms_sleep_due_before_its_park_lands_still_wakes() {
    use std::sync::{Arc, Mutex};
    let clock = Arc::new(loom_kernel::spi::ManualClock::new(T0));
    let shared = Arc::new(loom_stores::MemoryEventStore::new());
    let timers = Arc::new(loom_stores::MemoryTimerStore::new());
    let body = json!([{"op": "sleep", "ms": 0, "bind": "w"}, {"op": "complete", "output": {"$ref": "vars.w"}}]);
    let build = |store: Arc<ParkRace>| {
        let mut rt = loom_kernel::runtime::Runtime::new(
            store,
            clock.clone(),
            loom_kernel::runtime::RuntimeConfig::default(),
        )
        .with_timers(timers.clone());
        rt.register_flow_json(&flow("f", body.clone())).unwrap();
        rt
    };
    let worker_b = Arc::new(build(Arc::new(ParkRace {
        inner: shared.clone(),
        hook: Mutex::new(None),
        lose_park: false.into(),
    })));
    let raced = Arc::new(Mutex::new(None));
    let race = ParkRace {
        inner: shared.clone(),
        hook: Mutex::new(Some(Box::new({
            let (b, raced) = (worker_b.clone(), raced.clone());
            move || {
                let fired = block_on(b.fire_timers(T0)).map(|f| f.len());
                *raced.lock().unwrap() = Some(fired);
            }
        }))),
        lose_park: false.into(),
    };
    let worker_a = build(Arc::new(race));
    assert_eq!(start(&worker_a, "e", "f"), parked("sleep"));
    assert_eq!(
        *raced.lock().unwrap(),
        Some(Ok(0)),
        "worker B ran in the window and had nothing to fire: the park was not there yet"
    );
    let fired = block_on(worker_b.fire_timers(T0)).unwrap();
    assert_eq!(
        fired.len(),
        1,
        "the timer survived the early look and wakes the park once it has landed"
    );
    assert_eq!(fired[0].1, Ok(completed(json!({"firedAt": T0}))));
    assert!(block_on(worker_b.fire_timers(T0)).unwrap().is_empty());
}

/// A timer whose park never lands (the worker died between scheduling and parking) is
/// dropped once the recovered run parks under a new key, so orphans do not pile up.
#[test]
fn replay_10_orphan_timer_of_a_lost_park_is_dropped_after_recovery() {
    use std::sync::{Arc, Mutex};
    let clock = Arc::new(loom_kernel::spi::ManualClock::new(T0));
    let body = json!([{"op": "sleep", "ms": 100}, {"op": "complete"}]);
    let mut rt = loom_kernel::runtime::Runtime::new(
        Arc::new(ParkRace {
            inner: Arc::new(loom_stores::MemoryEventStore::new()),
            hook: Mutex::new(None),
            lose_park: true.into(),
        }),
        clock.clone(),
        loom_kernel::runtime::RuntimeConfig::default(),
    )
    .with_timers(Arc::new(loom_stores::MemoryTimerStore::new()));
    rt.register_flow_json(&flow("f", body)).unwrap();
    assert!(block_on(rt.start("e", "f", json!(null))).is_err());
    assert!(state(&rt, "e").suspended_on().is_none());
    assert!(
        block_on(rt.fire_timers(T0 + 100)).unwrap().is_empty(),
        "the park may still land: nothing fires, the timer stays"
    );
    clock.set(T0 + 50);
    assert_eq!(recover(&rt, "e").unwrap(), parked("sleep"));
    // The orphan (wakeAt T0+100) is dropped; the new park (T0+150) fires once due.
    assert!(block_on(rt.fire_timers(T0 + 100)).unwrap().is_empty());
    let fired = block_on(rt.fire_timers(T0 + 150)).unwrap();
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].1, Ok(completed(Value::Null)));
}

#[test]
fn replay_11_wake_at_comes_from_the_log_not_the_clock() {
    let clock = std::sync::Arc::new(loom_kernel::spi::ManualClock::new(T0));
    let rt = timed_rt(
        clock.clone(),
        &[flow("f", json!([{"op": "sleep", "ms": 50}]))],
    );
    start(&rt, "e", "f");
    let before = state(&rt, "e").canonical();
    clock.set(T0 + 999_999); // a skewed host clock changes nothing folded
    assert_eq!(state(&rt, "e").canonical(), before);
    assert_eq!(
        state(&rt, "e").suspended_on().unwrap()["wakeAt"],
        json!(T0 + 50)
    );
}

#[test]
fn replay_12_timer_store_derives_wake_at_else_lint_flags() {
    let clock = std::sync::Arc::new(loom_kernel::spi::ManualClock::new(T0));
    let body = json!([{"op": "suspend", "on": "g", "timeout": 300}]);
    let timed = timed_rt(clock, &[flow("f", body.clone())]);
    start(&timed, "e", "f");
    assert_eq!(
        state(&timed, "e").suspended_on().unwrap()["wakeAt"],
        json!(T0 + 300)
    );
    let plain = rt(&[flow("f", body.clone())]);
    start(&plain, "e", "f");
    assert!(
        state(&plain, "e")
            .suspended_on()
            .unwrap()
            .get("wakeAt")
            .is_none(),
        "no TimerStore: no wakeAt"
    );
    let script = FlowScript::parse(&flow("f", body), &KernelFeatures::default()).unwrap();
    let findings = verify_flow(&script, &Wiring::default());
    assert_eq!(findings.len(), 1);
    assert!(findings[0].message.contains("REPLAY-12"));
    assert!(verify_flow(
        &script,
        &Wiring {
            timer_store: true,
            ..Wiring::default()
        }
    )
    .is_empty());
}

#[test]
fn replay_13_resume_routed_by_id_not_correlation_key() {
    let rt = rt(&[flow(
        "f",
        json!([{"op": "suspend", "on": "g"}, {"op": "complete"}]),
    )]);
    start(&rt, "e", "f");
    let mut req = loom_kernel::ingress::ResumeRequest::new("g", json!(1));
    req.metadata = Some(serde_json::from_value(json!({"correlationKey": "other"})).unwrap());
    assert_eq!(
        block_on(rt.resume("e", req)).unwrap(),
        completed(Value::Null)
    );
}

#[test]
fn replay_14_replay_never_needs_the_archive() {
    // The runtime has no ArchiveStore parameter at all: replay and resume read only the
    // EventStore. This run covers served steps, gates and a resume.
    let rt = rt(&[flow(
        "f",
        json!([run_step("a"), suspend("g"), run_step("b")]),
    )]);
    start(&rt, "e", "f");
    assert_eq!(
        resume(&rt, "e", "g", json!(0)).unwrap(),
        completed(Value::Null)
    );
}

#[test]
fn two_runtimes_rerun_the_same_log_the_same_way() {
    let f = flow("f", json!([run_step("a"), suspend("g"), run_step("b")]));
    let (r1, r2) = (rt(std::slice::from_ref(&f)), rt(&[f]));
    for r in [&r1, &r2] {
        start(r, "e", "f");
        resume(r, "e", "g", json!(1)).unwrap();
    }
    assert_eq!(log_bytes(&r1, "e"), log_bytes(&r2, "e"));
}

#[test]
fn runs_with_parallel_branches_are_byte_deterministic() {
    let f = json!({"flowId": "f", "effects": {"a": {"outcomes": [{"value": 1, "ticks": 2}]}},
        "body": [{"op": "parallel", "branches": [[run_step("a"), emit("X", json!(1))], [run_step("b"), emit("Y", json!(2))]]}, suspend("g"), {"op": "decide", "id": "d", "choice": 3}]});
    let (r1, r2) = (rt(std::slice::from_ref(&f)), rt(&[f]));
    for r in [&r1, &r2] {
        start(r, "e", "f");
        resume(r, "e", "g", json!({"b": 1, "a": 2})).unwrap();
    }
    assert_eq!(log_bytes(&r1, "e"), log_bytes(&r2, "e"));
}

#[test]
fn replay_17_park_is_durable_before_control_returns() {
    let rt = rt(&[flow(
        "f",
        json!([run_step("a"), suspend("g"), {"op": "complete", "output": 1}]),
    )]);
    // Crash right after the third append (EXECUTION_SUSPENDED): the park survives.
    rt.inject_fault(loom_kernel::runtime::FaultPlan {
        crash_after_appends: 4,
    });
    let out = start(&rt, "e", "f");
    assert!(matches!(out, RunOutcome::Crashed { .. }), "{out:?}");
    let s = state(&rt, "e");
    assert_eq!(s.status, Status::Suspended);
    assert_eq!(s.parked_gate(), Some("g"));
    assert_eq!(
        resume(&rt, "e", "g", json!(null)).unwrap(),
        completed(json!(1))
    );
    assert!(s.variables.get(keys::INPUT).is_some());
}

/// A store whose appends take time, and whose later requests overtake earlier ones (a
/// network): an append of sequence `s` stays pending for `OVERTAKE_POLLS - s` polls,
/// so of two appends in flight at once the one with the higher sequence reaches the
/// store first.
struct Overtaking {
    inner: std::sync::Arc<loom_stores::MemoryEventStore>,
}

/// Polls the first append waits in [`Overtaking`]; later sequences wait less.
const OVERTAKE_POLLS: u64 = 16;

struct Polls(u64);

impl std::future::Future for Polls {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 == 0 {
            return std::task::Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

impl loom_kernel::spi::EventStore for Overtaking {
    fn capabilities(&self) -> loom_kernel::spi::EventStoreCapabilities {
        self.inner.capabilities()
    }

    async fn append(
        &self,
        execution_id: &str,
        expected_next: u64,
        events: Vec<loom_kernel::EventEnvelope>,
        fence: Option<loom_kernel::spi::FenceToken>,
    ) -> Result<loom_kernel::spi::AppendAck, loom_kernel::spi::StoreError> {
        Polls(OVERTAKE_POLLS.saturating_sub(expected_next)).await;
        self.inner
            .append(execution_id, expected_next, events, fence)
            .await
    }

    async fn read(
        &self,
        execution_id: &str,
    ) -> Result<Vec<loom_kernel::EventEnvelope>, loom_kernel::spi::StoreError> {
        self.inner.read(execution_id).await
    }

    async fn list_executions(&self) -> Result<Vec<String>, loom_kernel::spi::StoreError> {
        self.inner.list_executions().await
    }
}

/// Regression for a runtime bug the deploy simulator found with `parallel` flows: the
/// branches are polled in turn, and each branch's append was sent as soon as it was
/// reached, so with a store whose append waits on I/O two branches had appends in
/// flight at once (sequences n and n+1). When n+1 reached the store first it was
/// refused as a conflict and the run failed; every recovery failed the same way, so the
/// execution never finished (PLACE-04). A run now has one append in flight at a time.
/// Fails without the append turn in `Interp::append`.
#[test]
fn place_04_parallel_branches_append_one_at_a_time_on_a_store_that_waits() {
    use std::sync::Arc;
    let body = json!([
        run_step("a"),
        {"op": "parallel", "branches": [
            [run_step("b0"), emit("app.note", json!({"b": 0})), run_step("c0")],
            [run_step("b1"), emit("app.note", json!({"b": 1}))],
            [run_step("b2")]
        ]},
        {"op": "complete", "output": {"b1": {"$ref": "steps.b1.output"}}}
    ]);
    let store = Arc::new(loom_stores::MemoryEventStore::new());
    let mut rt = loom_kernel::runtime::Runtime::new(
        Arc::new(Overtaking {
            inner: store.clone(),
        }),
        loom_kernel::spi::ManualClock::new(T0),
        loom_kernel::runtime::RuntimeConfig::default(),
    );
    rt.register_flow_json(&flow("f", body)).unwrap();
    let outcome = block_on(rt.start("e", "f", json!({"n": 1})));
    assert!(
        matches!(outcome, Ok(RunOutcome::Completed { .. })),
        "{outcome:?}"
    );
    let log = block_on(loom_kernel::spi::EventStore::read(store.as_ref(), "e")).unwrap();
    for (i, e) in log.iter().enumerate() {
        assert_eq!(e.sequence, i as u64, "gapless (SPI-23)");
    }
    assert_eq!(count(&log, "STEP_COMPLETED"), 5);
    assert_eq!(count(&log, "app.note"), 2);
}

fn fold_49_started_input(events: &[loom_kernel::EventEnvelope], step: &str) -> Option<Value> {
    events
        .iter()
        .find(|e| e.event_type == "STEP_STARTED" && e.payload["stepId"] == json!(step))
        .and_then(|e| e.payload.get("input").cloned())
}

#[test]
fn fold_49_a_settled_input_leaves_the_state_view_and_stays_in_the_log_and_archive() {
    // The fold vectors (fold48-*-drops-input) pin the state side only; a runtime that,
    // since 1.26 drops the input from the state, stopped writing it on STEP_STARTED would
    // pass them. Here both sides: the state the runtime serves (the wire view) shows no
    // input on a settled frame and still shows it on a running one, while the log and
    // the compaction archive give the settled step's input back.
    use loom_kernel::spi::ArchiveStore;
    let input = json!({"k": 1, "nested": [1, 2]});
    let f = json!({"flowId": "f",
        "effects": {"b": {"outcomes": [{"crash": "before-effect"}, {"value": 2}]}},
        "body": [{"op": "run", "stepId": "a", "input": input},
            {"op": "run", "stepId": "b", "input": {"other": true}},
            {"op": "complete"}]});
    let rt = rt(&[f]);
    assert!(matches!(start(&rt, "e", "f"), RunOutcome::Crashed { .. }));
    let view = state(&rt, "e").to_value();
    assert_eq!(view["frames"]["a"]["status"], json!("completed"));
    assert!(
        view["frames"]["a"].get("input").is_none(),
        "settled frame still shows its input: {}",
        view["frames"]["a"]
    );
    assert_eq!(
        view["frames"]["b"]["input"],
        json!({"other": true}),
        "a running frame keeps its input in the view"
    );
    let events = log(&rt, "e");
    assert_eq!(fold_49_started_input(&events, "a"), Some(input.clone()));
    let archive = loom_stores::MemoryArchiveStore::new();
    block_on(archive.archive("e", events)).expect("archive");
    let archived = block_on(archive.read_archived("e")).expect("readArchived");
    assert_eq!(fold_49_started_input(&archived, "a"), Some(input));
}
