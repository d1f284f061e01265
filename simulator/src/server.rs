//! The store host: the stores under test behind the request protocol of [`crate::wire`]
//! over simulated TCP, one request per connection (a crashed or partitioned peer costs
//! exactly one timed-out call). Every store operation passes through it, so it writes
//! the trace and checks the invariants that must hold at every append (SPI-23,
//! PLACE-05, REPLAY-10) and every claim (PLACE-02); the planted store bugs live here.

use std::sync::Arc;
use std::time::Duration;

use loom_kernel::spi::{
    Clock, ExecutionPackage, FenceToken, Lease, StoreError, StoreErrorKind, Timer, TimerStore,
};
use loom_kernel::{EventEnvelope, SnapshotRecord};
use serde_json::{json, Value};

use crate::clock::{EPOCH_MS, STORE_TIME};
use crate::config::PlantedBug;
use crate::net::{PortListener, Stream};
use crate::store::{Answer, Op, SimStore};
use crate::wire::{backend, err_to_json, field, str_field, LINE_BYTES_MAX};
use crate::workload::GATE_PREFIX;
use crate::world::{Violation, World};

use crate::wire::{STORE_HOST, STORE_PORT};
/// Most due timers the coverage scan of a read looks at.
const DUE_SCAN_MAX: usize = 64;
/// How far ahead a planted early timer store looks: timers fire up to 5 s early.
pub const EARLY_TIMER_MS: i64 = 5_000;
/// The gap between the fence check and the write in a planted non-atomic store.
pub const FENCE_CHECK_GAP_MS: u64 = 30;
/// Lease ids a planted double-leasing dispatcher invents start here.
pub const LEASE_ID_OFFSET: u64 = 1 << 32;

/// Runs the store server until the host is crashed.
pub async fn serve(world: Arc<World>) -> crate::hosts::HostResult {
    let listener = PortListener::bind(STORE_HOST, STORE_PORT)?;
    loop {
        let stream = listener.accept().await?;
        let world = world.clone();
        tokio::spawn(async move {
            // A broken connection is the client's problem: it times out and retries.
            let _ = handle(world, stream).await;
        });
    }
}

async fn handle(world: Arc<World>, stream: Stream) -> std::io::Result<()> {
    let line = stream.read_line().await?;
    let reply = if line.len() > LINE_BYTES_MAX {
        Err(StoreError::new(
            StoreErrorKind::InvalidArgument,
            "request too long",
        ))
    } else {
        match serde_json::from_str::<Value>(&line) {
            Ok(req) => dispatch(&world, &req).await,
            Err(e) => Err(StoreError::new(
                StoreErrorKind::InvalidArgument,
                e.to_string(),
            )),
        }
    };
    let mut out = match reply {
        Ok(Reply::Json(v)) => json!({ "ok": v }).to_string(),
        Ok(Reply::Log(log, len)) => log_text(&log, len),
        Err(e) => json!({ "err": err_to_json(&e) }).to_string(),
    };
    out.push('\n');
    stream.write_all(out.into_bytes())
}

/// What the store host answers: a JSON value, or a read's log, which is printed
/// envelope by envelope instead of being built as one tree first (a read's answer is
/// most of the bytes the simulated network carries, and building, printing and
/// dropping its tree was a tenth of a seed's CPU).
enum Reply {
    Json(Value),
    Log(Vec<EventEnvelope>, usize),
}

/// A read's answer, `{"ok":{"events":[…],"len":N}}`: the same members a tree of it would
/// print, each envelope in its wire order.
fn log_text(log: &[EventEnvelope], len: usize) -> String {
    let mut out = Vec::with_capacity(64 + 256 * log.len());
    out.extend_from_slice(b"{\"ok\":{\"events\":[");
    for (i, e) in log.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Printing an envelope into memory cannot fail: its payload and metadata are
        // JSON values, whose keys are strings.
        let _ = serde_json::to_writer(&mut out, e);
    }
    out.extend_from_slice(format!("],\"len\":{len}}}}}").as_bytes());
    // serde_json prints UTF-8 only.
    String::from_utf8(out).unwrap_or_default()
}

async fn dispatch(world: &World, req: &Value) -> Result<Reply, StoreError> {
    let op = req["op"].as_str().unwrap_or("");
    let from = req["from"].as_str().unwrap_or("?");
    let now = STORE_TIME.now_ms();
    let result = if op == "read" {
        read(world, req, from, now)
            .await
            .map(|(log, len)| Reply::Log(log, len))
    } else {
        execute(world, op, req, now).await.map(Reply::Json)
    };
    // The trace names the operation, its caller and its result; payloads are left out
    // (they are in the final logs) to keep the trace small.
    let mut line = json!({ "t": now - EPOCH_MS, "from": from, "op": op });
    if let Some(x) = req.get("exec") {
        line["exec"] = x.clone();
    }
    match &result {
        Ok(Reply::Log(_, len)) => line["ok"] = json!(len),
        Ok(Reply::Json(v)) => {
            line["ok"] = match op {
                "claim" => json!(v.get("executionId").or(v.get("package")).cloned()),
                _ => v.clone(),
            }
        }
        Err(e) => line["err"] = json!(e.kind.name()),
    }
    world.trace(line);
    result
}

/// The store answered another shape than the operation's (a real store's decoding
/// already refused a wrong one, so this is an internal mismatch).
fn shape(op: &str) -> StoreError {
    backend(format!("{op}: unexpected answer shape"))
}

/// The timers due at `now`, for the coverage scan: the world's in memory, the
/// harness's connection to a real store.
async fn scan_due(world: &World, now: i64) -> Result<Vec<Timer>, StoreError> {
    match &*world.events() {
        SimStore::Memory(_) => world.timers.due(now, DUE_SCAN_MAX).await,
        real => real.due(now, DUE_SCAN_MAX),
    }
}

/// A read: the log as the store serves it (a planted bug may damage or shorten it) and
/// the store's true head.
async fn read(
    world: &World,
    req: &Value,
    from: &str,
    now: i64,
) -> Result<(Vec<EventEnvelope>, usize), StoreError> {
    let op = "read";
    let exec = str_field(req, "exec")?;
    let floor = world.book().history.read_floor(&exec);
    let Answer::Log(mut log) = world.call(from, Op::Read(exec.clone())).await? else {
        return Err(shape(op));
    };
    world.held(|h| h.on_read(&exec, log.len() as u64, floor));
    // Coverage: a read while one of the execution's timers is due and its park
    // has not landed (the window of the 0 ms sleep bug), so a sweep shows it
    // reached the window.
    let due = scan_due(world, now).await?;
    if due.iter().any(|t| {
        t.execution_id == exec
            && !log.iter().any(|e| {
                e.event_type == "EXECUTION_SUSPENDED"
                    && e.payload.get("wakeAt").and_then(Value::as_i64) == Some(t.wake_at_ms)
            })
    }) {
        world.book().due_before_park += 1;
    }
    // `len` is the store's true head: the client keeps it as the REPLAY-01
    // oracle, so a read that hides events cannot hide them from the check.
    let len = log.len();
    if world.bug == Some(PlantedBug::CorruptStepOutputOnRead) {
        // A store that serves a damaged copy of a recorded step output (a bad
        // cache, a decoding bug): the stored log stays right.
        if let Some(e) = log.iter_mut().find(|e| e.event_type == "STEP_COMPLETED") {
            e.payload.edit(|p| {
                if let Some(v) = p.pointer_mut("/output/v") {
                    *v = json!(v.as_u64().map_or(0, |x| x + 1));
                }
            });
        }
    }
    if world.bug == Some(PlantedBug::StaleReadsBlindAppends)
        && log.last().is_some_and(|e| e.event_type == "STEP_COMPLETED")
    {
        log.pop();
    }
    Ok((log, len))
}

async fn execute(world: &World, op: &str, req: &Value, now: i64) -> Result<Value, StoreError> {
    let from = req["from"].as_str().unwrap_or("?").to_owned();
    match op {
        "append" => append(world, req).await,
        "list" => match world.call(&from, Op::List).await? {
            Answer::Ids(ids) => Ok(json!(ids)),
            _ => Err(shape(op)),
        },
        "fence" => {
            let exec = str_field(req, "exec")?;
            let floor = world.book().history.fence_floor(&exec);
            let Answer::Number(token) = world.call(&from, Op::Fence(exec.clone())).await? else {
                return Err(shape(op));
            };
            world.held(|h| h.on_fence(&exec, token, &from, floor));
            // The current token is the highest handed out (two fences of one step may
            // come back in either order).
            let mut book = world.book();
            let current = book.fences.entry(exec).or_default();
            *current = (*current).max(token);
            Ok(json!(token))
        }
        "observe" => {
            let exec = str_field(req, "exec")?;
            let Answer::Anchor(a) = world.call(&from, Op::Observe(exec)).await? else {
                return Err(shape(op));
            };
            serde_json::to_value(a).map_err(|e| backend(e.to_string()))
        }
        "schedule" => {
            let t: Timer = field(req, "timer")?;
            world.book().history.on_schedule(&t.execution_id, &t.key);
            let Answer::Timer(t) = world.call(&from, Op::Schedule(t)).await? else {
                return Err(shape(op));
            };
            serde_json::to_value(t).map_err(|e| backend(e.to_string()))
        }
        "due" => {
            let limit: usize = field(req, "limit")?;
            let mut asked: i64 = field(req, "now")?;
            if world.bug == Some(PlantedBug::TimerFiresEarly) {
                asked = asked.saturating_add(EARLY_TIMER_MS);
            }
            let sent = world.book().history.now();
            let Answer::Timers(due) = world
                .call(
                    &from,
                    Op::Due {
                        now_ms: asked,
                        limit,
                    },
                )
                .await?
            else {
                return Err(shape(op));
            };
            world.held(|h| h.on_due(&due, sent));
            serde_json::to_value(due).map_err(|e| backend(e.to_string()))
        }
        "cancel" => {
            let exec = str_field(req, "exec")?;
            let key = str_field(req, "key")?;
            let Answer::Flag(gone) = world
                .call(
                    &from,
                    Op::Cancel {
                        exec: exec.clone(),
                        key: key.clone(),
                    },
                )
                .await?
            else {
                return Err(shape(op));
            };
            if gone {
                world.book().history.on_cancel(&exec, &key);
            }
            Ok(json!(gone))
        }
        "snapSave" => {
            let exec = str_field(req, "exec")?;
            let mut record: SnapshotRecord = field(req, "record")?;
            if world.bug == Some(PlantedBug::SnapshotLabelledCurrent) {
                // A store that keeps the state and drops its writer's schema version.
                record.schema_version = loom_kernel::EVENT_SCHEMA_VERSION.to_owned();
            }
            world
                .call(
                    &from,
                    Op::SnapSave {
                        exec: exec.clone(),
                        record: record.clone(),
                    },
                )
                .await?;
            world.book().snapshots_saved.push((exec, record, from));
            Ok(Value::Null)
        }
        "snapLoad" => {
            let exec = str_field(req, "exec")?;
            let Answer::Snapshot(r) = world.call(&from, Op::SnapLoad(exec)).await? else {
                return Err(shape(op));
            };
            serde_json::to_value(r).map_err(|e| backend(e.to_string()))
        }
        "snapDelete" => {
            let exec = str_field(req, "exec")?;
            let Answer::Number(n) = world.call(&from, Op::SnapDelete(exec)).await? else {
                return Err(shape(op));
            };
            Ok(json!(n))
        }
        "dispatch" => {
            let p: ExecutionPackage = field(req, "package")?;
            let Answer::Number(id) = world.call(&from, Op::Dispatch(p)).await? else {
                return Err(shape(op));
            };
            Ok(json!(id))
        }
        "claim" => {
            let worker = str_field(req, "worker")?;
            let Answer::Lease(mut lease) = world
                .call(
                    &from,
                    Op::Claim {
                        worker: worker.clone(),
                        now_ms: now,
                    },
                )
                .await?
            else {
                return Err(shape(op));
            };
            if lease.is_none() && world.bug == Some(PlantedBug::SecondLiveLease) {
                // A dispatcher that hands a package out again while its lease is live.
                lease = world
                    .book()
                    .leases
                    .values()
                    .find(|l| l.worker_id != worker && l.deadline_ms > now)
                    .map(|l| Lease {
                        worker_id: worker.clone(),
                        lease_id: l.lease_id + LEASE_ID_OFFSET,
                        ..l.clone()
                    });
            }
            if let Some(l) = &lease {
                check_one_live_lease(world, l, now);
            }
            serde_json::to_value(lease).map_err(|e| backend(e.to_string()))
        }
        "complete" => {
            let lease: Lease = field(req, "lease")?;
            let done = world.call(&from, Op::Complete(lease.clone())).await;
            let mut book = world.book();
            if book
                .leases
                .get(&lease.package.execution_id)
                .is_some_and(|l| l.lease_id == lease.lease_id)
            {
                book.leases.remove(&lease.package.execution_id);
            }
            drop(book);
            done?;
            Ok(Value::Null)
        }
        _ => Err(StoreError::new(
            StoreErrorKind::InvalidArgument,
            format!("unknown op `{op}`"),
        )),
    }
}

/// PLACE-02: at most one live lease per execution at any instant. The lease `fresh`
/// was just handed out at `now`; the previous one must have expired or completed.
fn check_one_live_lease(world: &World, fresh: &Lease, now: i64) {
    let exec = fresh.package.execution_id.clone();
    let mut book = world.book();
    let taken_over = book
        .leases
        .get(&exec)
        .is_some_and(|l| l.deadline_ms <= now && l.worker_id != fresh.worker_id);
    if taken_over {
        // Coverage: an expired, uncompleted lease taken over by another worker (the
        // first holder may still be running: two recoverers race).
        book.lease_takeovers += 1;
    }
    if let Some(live) = book.leases.get(&exec) {
        if live.deadline_ms > now && live.lease_id != fresh.lease_id {
            let message = format!(
                "{} was handed a lease on the execution while {}'s lease {} was live until {} ms (now {} ms)",
                fresh.worker_id,
                live.worker_id,
                live.lease_id,
                live.deadline_ms - EPOCH_MS,
                now - EPOCH_MS
            );
            book.violations.push(Violation {
                rule: "PLACE-02".into(),
                message,
                execution_id: Some(exec.clone()),
                event_index: None,
            });
        }
    }
    book.leases.insert(exec, fresh.clone());
}

async fn append(world: &World, req: &Value) -> Result<Value, StoreError> {
    let exec = str_field(req, "exec")?;
    let expected_next: u64 = field(req, "expectedNext")?;
    let presented: Option<u64> = field(req, "fence")?;
    // Read where they lie in the request, not from a copy of its array.
    let raw = req
        .get("events")
        .and_then(Value::as_array)
        .ok_or_else(|| StoreError::new(StoreErrorKind::InvalidArgument, "events: not an array"))?;
    let mut events: Vec<EventEnvelope> = Vec::with_capacity(raw.len());
    for (i, v) in raw.iter().enumerate() {
        events.push(
            EventEnvelope::from_value(v, i)
                .map_err(|e| StoreError::new(StoreErrorKind::InvalidArgument, e.to_string()))?,
        );
    }
    if world.bug == Some(PlantedBug::StaleReadsBlindAppends) {
        // The planted bug's append half: a writer's stale `expected_next` is not
        // refused; its events are renumbered onto the real head.
        let head = world
            .events()
            .read(&exec)
            .await?
            .last()
            .map_or(0, |e| e.sequence + 1);
        if expected_next < head {
            for (i, e) in events.iter_mut().enumerate() {
                e.sequence = head + i as u64;
                e.id = format!("{exec}:{}", e.sequence);
            }
            return blind_append(world, &exec, head, events, presented).await;
        }
    }
    if world.bug == Some(PlantedBug::NonAtomicFenceCheck) {
        // The planted bug's shape: check the fence, do other work (a round trip to a
        // replica, a slow index update), then write without checking it again. A
        // fence taken in between lets the old holder's write land.
        let checked = world.book().fences.get(&exec).copied().unwrap_or(0);
        if checked > 0 && presented != Some(checked) {
            return Err(StoreError::new(
                StoreErrorKind::Fenced {
                    presented,
                    current: checked,
                },
                "fenced",
            ));
        }
        tokio::time::sleep(Duration::from_millis(FENCE_CHECK_GAP_MS)).await;
    }
    if world.bug == Some(PlantedBug::WrongGateAnswerStored) {
        // A store that mangles what it stores for a resume (a column mix-up): the
        // client's answer `k` is stored as `k + 1`.
        for e in &mut events {
            if e.event_type.starts_with(GATE_PREFIX) {
                e.payload.edit(|p| {
                    if let Some(k) = p.get_mut("k") {
                        *k = json!(k.as_u64().map_or(0, |x| x + 1));
                    }
                });
            }
        }
    }
    let current = world.book().fences.get(&exec).copied().unwrap_or(0);
    // Planted bugs that do not check fences at the write forward the current token
    // whatever the caller presented.
    let forwarded = match world.bug {
        Some(PlantedBug::StoreIgnoresFence | PlantedBug::NonAtomicFenceCheck) if current > 0 => {
            Some(current)
        }
        _ => presented,
    };
    let now = STORE_TIME.now_ms();
    // The firing host's clock at the moment the store takes the append: a timer is due
    // on the clock of the host that fires it (REPLAY-11: the wake time is in the log,
    // the host's clock decides when it is reached).
    let firer_now = now.saturating_add(world.skew_of(req["from"].as_str().unwrap_or("")));
    let park_wake = if events.iter().any(|e| e.event_type == "TIMER_FIRED") {
        let log = world.events().read(&exec).await.unwrap_or_default();
        loom_kernel::fold(&log)
            .suspended_on()
            .and_then(|p| p.get("wakeAt").and_then(Value::as_i64))
    } else {
        None
    };
    let stored: Vec<(u64, String, Value)> = events
        .iter()
        .map(|e| (e.sequence, e.event_type.clone(), e.to_value()))
        .collect();
    let from = req["from"].as_str().unwrap_or("?").to_owned();
    let Answer::Ack(ack) = world
        .call(
            &from,
            Op::Append {
                exec: exec.clone(),
                expected_next,
                events,
                fence: forwarded,
            },
        )
        .await?
    else {
        return Err(shape("append"));
    };
    world.book().history.on_append(&exec, ack.next_sequence);
    if current > 0 && presented != Some(current) {
        world.violate(Violation {
            rule: "PLACE-05".into(),
            message: format!(
                "an append presenting fence {} landed while fence {current} was current",
                json!(presented)
            ),
            execution_id: Some(exec.clone()),
            event_index: Some(ack.first_sequence),
        });
    }
    {
        let mut book = world.book();
        for (seq, kind, envelope) in stored {
            if kind == "TIMER_FIRED" {
                book.timer_fires += 1;
                // REPLAY-10: a timer fires at its wakeAt, never before, on the clock of
                // the host that fires it. With no skew that is store time; a host ahead
                // of the store fires up to its offset early in store time, never more.
                if park_wake.is_some_and(|w| now < w && firer_now >= w) {
                    book.skew_early_fires += 1;
                }
                if let Some(wake) = park_wake.filter(|w| firer_now < *w) {
                    book.violations.push(Violation {
                        rule: "REPLAY-10".into(),
                        message: format!(
                            "TIMER_FIRED landed at {} ms store time ({} ms on the firing host's clock), {} ms before the park's wakeAt ({} ms)",
                            now - EPOCH_MS,
                            firer_now - EPOCH_MS,
                            wake - firer_now,
                            wake - EPOCH_MS
                        ),
                        execution_id: Some(exec.clone()),
                        event_index: Some(seq),
                    });
                }
            }
            // SPI-23: a store acknowledges each sequence once; a second acknowledgement
            // at a sequence means the first event there was lost (and the later map
            // entry would otherwise hide the loss from the final check).
            if let Some(first) = book.acked.insert((exec.clone(), seq), envelope) {
                let kind = first["eventType"].as_str().unwrap_or("?").to_owned();
                book.violations.push(Violation {
                    rule: "SPI-23".into(),
                    message: format!(
                        "the store acknowledged sequence {seq} a second time; the `{kind}` it acknowledged there first was lost"
                    ),
                    execution_id: Some(exec.clone()),
                    event_index: Some(seq),
                });
            }
        }
        book.unsynced.insert(exec.clone(), ack.first_sequence);
    }
    // SPI-23, checked at every append: the stored log is 0..n without gaps. (A read
    // the harness could not make is no evidence either way: the append stands.)
    let log = world.events().read(&exec).await.unwrap_or_default();
    if let Some((i, e)) = log
        .iter()
        .enumerate()
        .find(|(i, e)| e.sequence != *i as u64)
    {
        world.violate(Violation {
            rule: "SPI-23".into(),
            message: format!("event {i} has sequence {}", e.sequence),
            execution_id: Some(exec.clone()),
            event_index: Some(i as u64),
        });
    }
    serde_json::to_value(ack).map_err(|e| backend(e.to_string()))
}

async fn blind_append(
    world: &World,
    exec: &str,
    head: u64,
    events: Vec<EventEnvelope>,
    presented: Option<u64>,
) -> Result<Value, StoreError> {
    let ack = world
        .events()
        .append(exec, head, events, presented.map(FenceToken))
        .await?;
    serde_json::to_value(ack).map_err(|e| backend(e.to_string()))
}
