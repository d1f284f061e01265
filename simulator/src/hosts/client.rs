//! The client host: starts every execution, answers parked gates, in-doubt parks and
//! message waits, and sends hostile resumes and resume faults (INGRESS-03, INGRESS-13,
//! INGRESS-15).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use loom_kernel::fold::INDOUBT_GATE;
use loom_kernel::ingress::ResumeRequest;
use loom_kernel::runtime::{RunOutcome, RuntimeError};
use loom_kernel::spi::{Clock, EventStore, ExecutionPackage};
use loom_kernel::{fold, EventEnvelope};
use serde_json::{json, Value};

use super::runtime::runtime;
use super::CLIENT_POLL_MS;
use crate::clock::{SimClock, EPOCH_MS, STORE_TIME};
use crate::config::PlantedBug;
use crate::rng::Rng;
use crate::store_client::StoreClient;
use crate::workload::{answer, gates_of, message, resume_for, topics_of, wait_topic, Scenario};
use crate::world::{Violation, World};

/// The client host: starts every execution, answers parked gates and in-doubt parks
/// (sometimes first with hostile resumes), and ends once every execution is terminal
/// after the safety phase, or at `deadline_ms`; it starts the executions up to
/// `start_gap_ms_max` apart. In the safety phase it also sends resume
/// faults at `resume_fault_per_mille` each: early resumes (to the flow's next gate while
/// the execution runs, before the park lands), reordered ones (a later gate's answer
/// first), a duplicate right after an admitted answer, two concurrent resumes of one gate
/// from two clients, and resumes to executions that have ended.
pub async fn client(
    world: Arc<World>,
    scenarios: Arc<Vec<Scenario>>,
    faults_on: Arc<AtomicBool>,
    mut rng: Rng,
    hostile_per_mille: u64,
    resume_fault_per_mille: u64,
    (deadline_ms, start_gap_ms_max): (u64, u64),
) -> super::HostResult {
    let name = "client";
    for s in scenarios.iter().filter(|s| s.continues.is_none()) {
        let package = ExecutionPackage {
            execution_id: s.execution_id.clone(),
            flow_id: s.flow["flowId"].as_str().unwrap_or("").to_owned(),
            resume_hint: None,
            compute_target: None,
        };
        // Retry until the store takes it: a start that is never dispatched would
        // make the liveness check meaningless.
        while StoreClient::new(name).dispatch(&package).await.is_err() {
            tokio::time::sleep(Duration::from_millis(CLIENT_POLL_MS)).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.range(0, start_gap_ms_max))).await;
    }
    let mut last_answer: Vec<Option<String>> = vec![None; scenarios.len()];
    loop {
        tokio::time::sleep(Duration::from_millis(CLIENT_POLL_MS)).await;
        // The deadline is the harness's, on store time, not the client's clock.
        let elapsed = (STORE_TIME.now_ms() - EPOCH_MS) as u64;
        if elapsed >= deadline_ms {
            return Ok(());
        }
        let faults = faults_on.load(Ordering::SeqCst);
        let resume_fault = |rng: &mut Rng| faults && rng.chance(resume_fault_per_mille);
        let mut all_terminal = true;
        for (i, s) in scenarios.iter().enumerate() {
            let exec = s.execution_id.as_str();
            let Ok(log) = StoreClient::new(name).read(exec).await else {
                all_terminal = false;
                continue;
            };
            if log.is_empty() && s.continues.is_some() {
                // A successor not started yet: its predecessor's run starts it.
                all_terminal = false;
                continue;
            }
            let state = fold(&log);
            let gates = gates_of(&s.flow);
            if state.status.is_terminal() {
                // A resume to an execution that has ended (its last gate's answer
                // again, or its first gate's): refused, nothing appended.
                if resume_fault(&mut rng) && !gates.is_empty() {
                    let g = last_answer[i].clone().unwrap_or_else(|| gates[0].clone());
                    world.book().resume_faults.finished += 1;
                    let request = ResumeRequest::new(g.clone(), answer(exec, &g));
                    must_refuse(&world, &scenarios, exec, request, "to an ended execution").await;
                }
                continue;
            }
            all_terminal = false;
            let Some(park) = state.suspended_on().cloned() else {
                // Running: an early resume to the next gate the flow will park on
                // (the first one not answered in the log). Refused while the park has
                // not landed (INGRESS-13); admitted if it landed in between.
                if resume_fault(&mut rng) {
                    let answered = |g: &String| log.iter().any(|e| &e.event_type == g);
                    if let Some(g) = gates.iter().find(|g| !answered(g)).cloned() {
                        early(&world, &scenarios, exec, &g, &mut last_answer[i]).await;
                    }
                }
                // An early message: the next topic the flow waits on gets its message
                // before the wait parks (buffered; the receive is served from the log).
                if resume_fault(&mut rng) {
                    let consumed = |t: &String| {
                        let id = message(exec, t).0;
                        log.iter().any(|e| {
                            e.event_type == "MESSAGE_CONSUMED"
                                && e.payload["messageId"] == id.as_str()
                        })
                    };
                    if let Some(t) = topics_of(&s.flow).iter().find(|t| !consumed(t)) {
                        world.book().resume_faults.early_messages += 1;
                        deliver(&world, &scenarios, exec, t).await;
                    }
                }
                continue;
            };
            if let Some(topic) = wait_topic(&state) {
                // A `receive` / `select` park: the client delivers the message (not a
                // resume), sometimes twice (a redelivery is a duplicate: nothing
                // appended).
                world.book().resume_faults.messages += 1;
                deliver(&world, &scenarios, exec, &topic).await;
                if resume_fault(&mut rng) {
                    // Consumed twice, it would answer a later wait on the topic or stay
                    // buffered for one: the bound values, hence PLACE-04, would differ.
                    world.book().resume_faults.duplicate_messages += 1;
                    deliver(&world, &scenarios, exec, &topic).await;
                }
                continue;
            }
            if park.get("wakeAt").is_some() {
                continue; // a timer answers this one
            }
            let Some(gate) = park.get("on").and_then(Value::as_str).map(str::to_owned) else {
                continue;
            };
            if faults && rng.chance(hostile_per_mille) {
                let request = match rng.range(0, 3) {
                    0 => ResumeRequest::new("no-such-gate", json!({})),
                    1 => ResumeRequest::new("STEP_COMPLETED", json!({ "stepId": "s0" })),
                    2 => ResumeRequest::new(
                        INDOUBT_GATE,
                        json!({ "verdict": { "stepId": "nope", "attempt": 9, "outcome": "completed" } }),
                    ),
                    _ => match &last_answer[i] {
                        Some(g) => ResumeRequest::new(g.clone(), answer(exec, g)),
                        None => ResumeRequest::new("no-such-gate", json!(null)),
                    },
                };
                hostile(&world, &scenarios, name, exec, request).await;
            }
            if resume_fault(&mut rng) {
                // Reordered: a later gate's answer arrives before this one's.
                let later = gates.iter().skip_while(|g| **g != gate).nth(1).cloned();
                if let Some(g) = later {
                    world.book().resume_faults.reordered += 1;
                    let request = ResumeRequest::new(g.clone(), answer(exec, &g));
                    must_refuse(&world, &scenarios, exec, request, "reordered").await;
                }
            }
            let request = resume_for(exec, &park, &log);
            let admitted = if resume_fault(&mut rng) {
                concurrent(&world, &scenarios, exec, request.clone()).await
            } else {
                let c = Arc::new(StoreClient::new(name));
                let rt = runtime(&world, &scenarios, c, SimClock::skewed(world.skew_of(name)));
                rt.resume(exec, request.clone()).await.is_ok()
            };
            if admitted {
                world.book().answers_sent += 1;
                last_answer[i] = Some(gate);
                if resume_fault(&mut rng) {
                    // The same answer again, right after it was admitted.
                    world.book().resume_faults.duplicate += 1;
                    must_refuse(&world, &scenarios, exec, request, "duplicate").await;
                }
            }
        }
        if all_terminal && !faults {
            return Ok(());
        }
    }
}

/// Delivers `message(exec, topic)` through a fresh client and runtime.
async fn deliver(world: &Arc<World>, scenarios: &[Scenario], exec: &str, topic: &str) {
    let c = Arc::new(StoreClient::new("client"));
    let rt = runtime(world, scenarios, c, client_clock(world));
    let (id, body) = message(exec, topic);
    let _ = rt.deliver(exec, topic, &id, body).await;
}

/// An early resume of gate `g`, which the execution has not parked on yet. Ingress
/// must refuse it while the execution runs (INGRESS-13) and append nothing
/// (INGRESS-15); if the park landed between the client's read and the resume's, it is
/// a proper answer.
async fn early(
    world: &Arc<World>,
    scenarios: &[Scenario],
    exec: &str,
    g: &str,
    last_answer: &mut Option<String>,
) {
    world.book().resume_faults.early += 1;
    let c = Arc::new(StoreClient::new("client"));
    let rt = runtime(world, scenarios, c.clone(), client_clock(world));
    match rt
        .resume(exec, ResumeRequest::new(g, answer(exec, g)))
        .await
    {
        Ok(_) => {
            let mut book = world.book();
            book.resume_faults.early_admitted += 1;
            book.answers_sent += 1;
            *last_answer = Some(g.to_owned());
        }
        Err(RuntimeError::Ingress(e)) => {
            world.book().resume_faults.early_refused += 1;
            refused_appends_nothing(world, &c, exec, g, &e.to_string());
        }
        Err(_) => {}
    }
}

/// Two clients resume the same gate at once. At most one may be admitted (the other is
/// refused by ingress, having read the log after the first landed, or by the store's
/// optimistic check), and the one refused appends nothing. Returns whether one was
/// admitted.
async fn concurrent(
    world: &Arc<World>,
    scenarios: &[Scenario],
    exec: &str,
    request: ResumeRequest,
) -> bool {
    world.book().resume_faults.concurrent += 1;
    let (ca, cb) = (
        Arc::new(StoreClient::new("client")),
        Arc::new(StoreClient::new("client-b").on_machine("client")),
    );
    let (ra, rb) = (
        runtime(world, scenarios, ca.clone(), client_clock(world)),
        runtime(world, scenarios, cb.clone(), client_clock(world)),
    );
    let (a, b) = tokio::join!(
        ra.resume(exec, request.clone()),
        rb.resume(exec, request.clone())
    );
    // A client's first append is its resume batch: an append through it means the
    // resume was admitted and landed.
    let landed = |c: &StoreClient| c.appends.load(Ordering::SeqCst) > 0;
    if landed(&ca) && landed(&cb) {
        world.violate(Violation {
            rule: "INGRESS-03".into(),
            message: format!(
                "two concurrent resumes of `{}` were both admitted and appended",
                request.event_type
            ),
            execution_id: Some(exec.to_owned()),
            event_index: None,
        });
    }
    for (r, c) in [(&a, &ca), (&b, &cb)] {
        if let Err(RuntimeError::Ingress(e)) = r {
            world.book().resume_faults.refused += 1;
            refused_appends_nothing(world, c, exec, &request.event_type, &e.to_string());
        }
    }
    a.is_ok() || b.is_ok() || landed(&ca) || landed(&cb)
}

/// Sends a resume fault that ingress must refuse (a duplicate, a reordered answer, a
/// resume to an ended execution): admitting it is an INGRESS-03 violation (a gate
/// resume needs the execution parked on that gate), and the refusal must append
/// nothing (INGRESS-15).
async fn must_refuse(
    world: &Arc<World>,
    scenarios: &[Scenario],
    exec: &str,
    request: ResumeRequest,
    what: &str,
) {
    let c = Arc::new(StoreClient::new("client"));
    let rt = runtime(world, scenarios, c.clone(), client_clock(world));
    let kind = request.event_type.clone();
    let sent = request.clone();
    let admitted = if world.bug == Some(PlantedBug::IngressAdmitsEveryResume) {
        admit_blindly(&c, exec, &request).await
    } else {
        rt.resume(exec, request).await
    };
    match admitted {
        Ok(_) => {
            // Judged against the log this client read: the vector's input.
            let read = c.read_len(exec).unwrap_or(0);
            world
                .book()
                .ingress_admitted
                .push((exec.to_owned(), read, sent));
            world.violate(Violation {
                rule: "INGRESS-03".into(),
                message: format!("a {what} resume of `{kind}` was admitted"),
                execution_id: Some(exec.to_owned()),
                event_index: None,
            });
        }
        Err(RuntimeError::Ingress(e)) => {
            world.book().resume_faults.refused += 1;
            refused_appends_nothing(world, &c, exec, &kind, &e.to_string());
        }
        // A store error (a partition, a timeout) refused nothing.
        Err(_) => {}
    }
}

/// The planted [`PlantedBug::IngressAdmitsEveryResume`]: a gate that admits any resume
/// and appends it as it came (under a fence of its own).
async fn admit_blindly(
    c: &StoreClient,
    exec: &str,
    request: &ResumeRequest,
) -> Result<RunOutcome, RuntimeError> {
    let log = c.read(exec).await.map_err(RuntimeError::Store)?;
    let fence = c.acquire_fence(exec).await.map_err(RuntimeError::Store)?;
    let seq = log.last().map_or(0, |e| e.sequence + 1);
    let envelope = EventEnvelope {
        id: format!("{exec}:{seq}"),
        workflow_id: log
            .first()
            .map(|e| e.workflow_id.clone())
            .unwrap_or_default(),
        execution_id: exec.to_owned(),
        event_type: request.event_type.clone(),
        sequence: seq,
        timestamp_ms: STORE_TIME.now_ms(),
        payload: request.payload.clone().into(),
        metadata: request.metadata.clone(),
    };
    c.raw_append(exec, seq, vec![envelope], Some(fence.0))
        .await
        .map_err(RuntimeError::Store)?;
    Ok(RunOutcome::Parked {
        gate: request.event_type.clone(),
    })
}

/// The client host's clock (store time plus its offset).
fn client_clock(world: &World) -> SimClock {
    SimClock::skewed(world.skew_of("client"))
}

/// INGRESS-15: a refused resume appended nothing through its client.
fn refused_appends_nothing(world: &World, c: &StoreClient, exec: &str, kind: &str, why: &str) {
    let appended = c.appends.load(Ordering::SeqCst);
    if appended != 0 {
        world.violate(Violation {
            rule: "INGRESS-15".into(),
            message: format!("a refused `{kind}` resume ({why}) appended {appended} batch(es)"),
            execution_id: Some(exec.to_owned()),
            event_index: None,
        });
    }
}

/// Sends a resume that ingress must refuse, and checks the refusal appended nothing
/// (INGRESS-15).
async fn hostile(
    world: &Arc<World>,
    scenarios: &[Scenario],
    name: &str,
    exec: &str,
    request: ResumeRequest,
) {
    let c = Arc::new(StoreClient::new(name));
    let rt = runtime(
        world,
        scenarios,
        c.clone(),
        SimClock::skewed(world.skew_of(name)),
    );
    let kind = request.event_type.clone();
    if let Err(RuntimeError::Ingress(e)) = rt.resume(exec, request).await {
        world.book().hostile_refused += 1;
        let appended = c.appends.load(Ordering::SeqCst);
        if appended != 0 {
            world.violate(Violation {
                rule: "INGRESS-15".into(),
                message: format!("a refused `{kind}` resume ({e}) appended {appended} batch(es)"),
                execution_id: Some(exec.to_owned()),
                event_index: None,
            });
        }
    }
}
