//! Concurrent cases: several clients on one backend at once, judged by linearizability.
//!
//! Every other kit drives a store through one client, one request at a time, so a store
//! whose append reads, checks and writes without a transaction passes them all. Here
//! each case gives every client ([`Fleet`]: one handle per client, e.g. one adapter
//! process each, or one database connection each) its own OS thread, releases them
//! together, and records every operation's invocation and answer
//! ([`crate::history::Recorder`]). The history must be linearizable against a small
//! sequential model of the SPI (the models below), and the state left behind is read
//! back and checked as well. A failure shows the smallest sub-history that is still not
//! linearizable, each line naming its client.
//!
//! Key design decision: the models state only what the spec's rules and the SPI
//! documentation state (SPI-23 gapless sequences and the conditional append, PLACE-05
//! fencing, SPI-06 the anchor, SPI-09 `deleteThrough` against concurrent appends,
//! PLACE-02 one live lease, SPI-20 the durable-state compare-and-set). Where two errors
//! apply at once (a stale fence and a stale sequence), either is accepted: the order of
//! the checks is the sequential kits' business, not this kit's.

use std::future::Future;
use std::sync::{Arc, Barrier};

use serde_json::json;

use loom_kernel::spi::plugin::ReadModelStore;
use loom_kernel::spi::{DurableStateStore, EventStore, Timer, TimerStore};
use loom_kernel::spi::{
    ExecutionDispatcher, ExecutionPackage, FenceToken, StoreError, StoreErrorKind,
};

use crate::case::{envelope, error_json, Claims, Ctx, Failure, Outcome, Verdict};
use crate::history::{is_linearizable, render, shrink, Entry, Op, Recorder, Specification};

/// The kit's name in reports.
pub const NAME: &str = "concurrency";

/// Clients started on one backend by default (`loom conform --clients`).
pub const CLIENTS_DEFAULT: usize = 4;

/// Most clients a run may start.
pub const CLIENTS_MAX: usize = 16;

/// Rounds of racing appends each client makes in the append case.
pub const APPEND_ROUNDS: u64 = 12;

/// Fence acquisitions per client in the fence case.
pub const FENCE_ROUNDS: u64 = 6;

/// Packages queued for the racing-claims case, per client.
pub const PACKAGES_PER_CLIENT: u64 = 4;

/// Compare-and-set rounds per client in the durable-state case.
pub const CAS_ROUNDS: u64 = 8;

/// Timers raced over (one schedule and one cancel per client each) in the timer case.
pub const TIMER_ROUNDS: u64 = 6;

/// Upserts of the shared document (and of one own document) per client in the
/// read-model case.
pub const UPSERT_ROUNDS: u64 = 8;

/// Documents the read-model case reads back before it calls the listing endless.
pub const QUERY_DOCS_MAX: usize = 10_000;

/// One handle per client on one backend. Each method gives the handles for one SPI, or
/// `None` when the backend does not serve it (its cases are then `skip-not-claimed`).
/// Every handle must reach the same backend: what one client writes, the others read.
pub trait Fleet: Send + Sync {
    /// The event-store handle type.
    type Events: EventStore + Clone + Send + Sync + 'static;
    /// The dispatcher handle type.
    type Dispatch: ExecutionDispatcher + Clone + Send + Sync + 'static;
    /// The durable-state handle type.
    type State: DurableStateStore + Clone + Send + Sync + 'static;
    /// The timer-store handle type.
    type Timers: TimerStore + Clone + Send + Sync + 'static;
    /// The read-model handle type.
    type Models: ReadModelStore + Clone + Send + Sync + 'static;
    /// One event store per client.
    fn events(&self) -> Option<Vec<Self::Events>>;
    /// One dispatcher per client.
    fn dispatchers(&self) -> Option<Vec<Self::Dispatch>>;
    /// One durable-state store per client.
    fn durable_state(&self) -> Option<Vec<Self::State>>;
    /// One timer store per client.
    fn timers(&self) -> Option<Vec<Self::Timers>>;
    /// One read-model store per client.
    fn read_models(&self) -> Option<Vec<Self::Models>>;
}

crate::__kit_cases! {
    kit: ConcurrencyKit, name: "concurrency", bound: Fleet, fresh: true, claims: claims_of,
    cases: [
        spi_23_racing_appends_exactly_one_wins_each_sequence => ["SPI-23", "GAP-27"], "1.0.0", [];
        place_05_racing_fence_acquisitions_give_rising_tokens => ["PLACE-05", "SPI-04"], "1.0.0", ["acquireFence"];
        place_05_zombie_append_races_the_new_holder => ["PLACE-05"], "1.0.0", ["acquireFence"];
        spi_06_append_if_unchanged_races_appends => ["SPI-06"], "2.2.0", ["appendIfUnchanged"];
        spi_09_delete_through_races_appends => ["SPI-09"], "2.6.0", ["deleteThrough"];
        place_02_racing_claims_never_share_a_lease => ["PLACE-02"], "1.0.0", [];
        spi_20_racing_compare_and_set_one_winner_per_version => ["SPI-20"], "1.0.0", [];
        place_02_renew_races_lease_expiry => ["PLACE-02", "PLACE-04"], "1.0.0", [];
        replay_10_racing_timer_schedule_and_cancel => ["REPLAY-10", "GAP-25"], "1.0.0", [];
        spi_20_racing_upserts_keep_one_document_per_id => ["SPI-20"], "1.0.0", [];
    ]
}

fn claims_of<F: Fleet>(fleet: &F) -> Claims {
    match fleet.events().and_then(|e| e.into_iter().next()) {
        Some(store) => Claims::of(&store.capabilities()),
        None => Claims::default(),
    }
}

/// Runs `script(client, handle)` for every handle at once, each on its own thread,
/// released together by a barrier. The scripts run on the caller's runtime (through
/// its handle), so a store whose connection is driven by that runtime keeps working.
/// `Err` names the first client whose script failed.
pub(crate) async fn race<H, S, Fut>(handles: &[H], script: S) -> Result<(), Failure>
where
    H: Clone + Send + 'static,
    S: Fn(usize, H) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<(), String>>,
{
    let runtime = tokio::runtime::Handle::current();
    let barrier = Arc::new(Barrier::new(handles.len()));
    let mut joins = Vec::with_capacity(handles.len());
    for (i, h) in handles.iter().cloned().enumerate() {
        let (runtime, barrier, script) = (runtime.clone(), Arc::clone(&barrier), script.clone());
        joins.push(tokio::task::spawn_blocking(move || {
            barrier.wait();
            runtime.block_on(script(i, h))
        }));
    }
    let mut first = None;
    for (i, j) in joins.into_iter().enumerate() {
        let outcome = match j.await {
            Ok(r) => r,
            Err(e) => Err(format!("its thread ended abnormally: {e}")),
        };
        if let (Err(e), None) = (outcome, &first) {
            first = Some(Failure(format!("client {i}: {e}")));
        }
    }
    first.map_or(Ok(()), Err)
}

/// Fails with the smallest non-linearizable sub-history when `entries` is not
/// linearizable under `S`.
pub(crate) fn judge<S>(entries: &[Entry<S::Operation>], what: &str) -> Result<(), Failure>
where
    S: Specification,
    S::Operation: Op,
{
    if is_linearizable::<S>(entries) {
        return Ok(());
    }
    let small = shrink::<S>(entries);
    Err(Failure(format!(
        "{what}: the {} operations of the clients are not linearizable: no order of them, consistent with when each was invoked and answered, gives these answers. A failing sub-history ({} operations: every write, and the reads and refusals that still make it fail):\n{}",
        entries.len() / 2,
        small.len() / 2,
        render(&small)
    )))
}

// -- the event stream model ------------------------------------------------------------

/// An answer to an append, as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendAnswer {
    /// Appended.
    Ok,
    /// `conflict` with its `actualNext`.
    Conflict(u64),
    /// `fenced` with its `current` token.
    Fenced(u64),
    /// `anchor-changed`.
    AnchorChanged,
    /// Any other error, as the protocol's JSON.
    Other(String),
}

impl AppendAnswer {
    fn of<T>(r: &Result<T, StoreError>) -> AppendAnswer {
        match r {
            Ok(_) => AppendAnswer::Ok,
            Err(e) => match &e.kind {
                StoreErrorKind::Conflict { actual_next, .. } => {
                    AppendAnswer::Conflict(*actual_next)
                }
                StoreErrorKind::Fenced { current, .. } => AppendAnswer::Fenced(*current),
                StoreErrorKind::AnchorChanged => AppendAnswer::AnchorChanged,
                _ => AppendAnswer::Other(error_json(e)),
            },
        }
    }
}

/// One operation on one execution's stream (request, and the answer once known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamOp {
    /// `append(expectedNext, one event, fence)`.
    Append {
        /// The sequence the client expected next.
        expected_next: u64,
        /// The fence token it presented.
        fence: Option<u64>,
        /// The answer.
        answer: Option<AppendAnswer>,
    },
    /// `acquireFence`, answering the token.
    AcquireFence {
        /// The token, or the error's JSON.
        answer: Option<Result<u64, String>>,
    },
    /// `appendIfUnchanged` with the anchor's next sequence and fence.
    AppendIfUnchanged {
        /// The anchor's next sequence.
        next: u64,
        /// The anchor's fence.
        fence: u64,
        /// The answer.
        answer: Option<AppendAnswer>,
    },
    /// `deleteThrough(through)`, answering how many were deleted.
    DeleteThrough {
        /// The last sequence to delete.
        through: u64,
        /// The count, or the error's JSON.
        answer: Option<Result<u64, String>>,
    },
    /// `read`, answering the sequences it returned (first and count).
    Read {
        /// `(first sequence, count)`, or the error's JSON.
        answer: Option<Result<(u64, u64), String>>,
    },
}

impl Op for StreamOp {
    fn read_only(&self) -> bool {
        match self {
            StreamOp::Read { .. } => true,
            StreamOp::Append { answer, .. } | StreamOp::AppendIfUnchanged { answer, .. } => {
                !matches!(answer, Some(AppendAnswer::Ok))
            }
            StreamOp::AcquireFence { answer } => !matches!(answer, Some(Ok(_))),
            StreamOp::DeleteThrough { answer, .. } => !matches!(answer, Some(Ok(_))),
        }
    }
}

/// The model's state of one stream: its next sequence, its fence token (0 = never
/// fenced) and the first sequence still held (after `deleteThrough`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct StreamState {
    next: u64,
    token: u64,
    low: u64,
}

/// The sequential model of one event stream.
pub struct StreamModel;

impl Specification for StreamModel {
    type State = StreamState;
    type Operation = StreamOp;

    fn init() -> StreamState {
        StreamState::default()
    }

    fn apply(op: &StreamOp, st: &StreamState) -> (bool, StreamState) {
        let same = st.clone();
        match op {
            StreamOp::Append {
                expected_next,
                fence,
                answer: Some(a),
            } => {
                let fence_ok = match fence {
                    None => st.token == 0,
                    Some(t) => *t == st.token && st.token > 0,
                };
                let seq_ok = *expected_next == st.next;
                match a {
                    AppendAnswer::Ok if fence_ok && seq_ok => (
                        true,
                        StreamState {
                            next: st.next + 1,
                            ..same
                        },
                    ),
                    AppendAnswer::Conflict(actual) => (!seq_ok && *actual == st.next, same),
                    AppendAnswer::Fenced(current) => (!fence_ok && *current == st.token, same),
                    _ => (false, same),
                }
            }
            StreamOp::AcquireFence {
                answer: Some(Ok(t)),
            } => (*t > st.token, StreamState { token: *t, ..same }),
            StreamOp::AppendIfUnchanged {
                next,
                fence,
                answer: Some(a),
            } => {
                let unchanged = *next == st.next && *fence == st.token;
                match a {
                    AppendAnswer::Ok if unchanged => (
                        true,
                        StreamState {
                            next: st.next + 1,
                            ..same
                        },
                    ),
                    AppendAnswer::AnchorChanged => (!unchanged, same),
                    _ => (false, same),
                }
            }
            StreamOp::DeleteThrough {
                through,
                answer: Some(Ok(n)),
            } => {
                let upto = (through + 1).min(st.next);
                let deleted = upto.saturating_sub(st.low);
                (
                    *n == deleted,
                    StreamState {
                        low: st.low.max(upto),
                        ..same
                    },
                )
            }
            StreamOp::Read {
                answer: Some(Ok((first, count))),
            } => {
                let held = st.next - st.low;
                (*count == held && (held == 0 || *first == st.low), same)
            }
            _ => (false, same),
        }
    }
}

fn append_op(expected_next: u64, fence: Option<u64>, answer: Option<AppendAnswer>) -> StreamOp {
    StreamOp::Append {
        expected_next,
        fence,
        answer,
    }
}

/// An event that says which client appended it, in which round.
pub(crate) fn tagged(
    exec: &str,
    sequence: u64,
    client: usize,
    round: u64,
) -> loom_kernel::EventEnvelope {
    let mut e = envelope(
        exec,
        sequence,
        "STEP_COMPLETED",
        json!({ "stepId": format!("c{client}-r{round}"), "output": { "client": client, "round": round } }),
    );
    // Two clients may append at the same sequence: their envelope ids must differ.
    e.id = format!("{exec}/{sequence}/c{client}");
    e
}

/// Reads `exec` and records it; `Err` is the read's error for the script.
pub(crate) async fn recorded_read<S: EventStore>(
    store: &S,
    exec: &str,
    client: usize,
    rec: &Recorder<StreamOp>,
) -> Result<Vec<loom_kernel::EventEnvelope>, String> {
    rec.invoke(client, StreamOp::Read { answer: None });
    let r = store.read(exec).await;
    let answer = match &r {
        Ok(log) => Ok((log.first().map_or(0, |e| e.sequence), log.len() as u64)),
        Err(e) => Err(error_json(e)),
    };
    rec.answer(
        client,
        StreamOp::Read {
            answer: Some(answer),
        },
    );
    r.map_err(|e| format!("read {exec}: {}", error_json(&e)))
}

/// A compare-and-set `put` of `value` at `expected`, recorded as invoked and answered:
/// the new version, or `Err(actual_next)` for a conflict. Any other answer is the
/// script's error, naming the key.
pub(crate) async fn recorded_put<S: DurableStateStore>(
    store: &S,
    key: &str,
    value: serde_json::Value,
    expected: Option<u64>,
    client: usize,
    rec: &Recorder<StateOp>,
) -> Result<Result<u64, u64>, String> {
    rec.invoke(
        client,
        StateOp::Put {
            expected,
            answer: None,
        },
    );
    let answer = match store.put(key, value, expected).await {
        Ok(v) => Ok(v),
        Err(e) => match e.kind {
            StoreErrorKind::Conflict { actual_next, .. } => Err(actual_next),
            _ => {
                return Err(format!(
                    "put {key} answered {}, expected a version or conflict",
                    error_json(&e)
                ))
            }
        },
    };
    rec.answer(
        client,
        StateOp::Put {
            expected,
            answer: Some(answer),
        },
    );
    Ok(answer)
}

/// Acknowledged appends as the scripts collect them: `(client, round, sequence)`.
pub(crate) type Wins = Arc<std::sync::Mutex<Vec<(usize, u64, u64)>>>;

/// Which client appends, in which round, at which sequence.
#[derive(Clone, Copy)]
pub(crate) struct Step {
    pub(crate) client: usize,
    pub(crate) round: u64,
    pub(crate) next: u64,
}

/// Appends the step's tagged event at `step.next` (with `fence`, if any), records the
/// invocation and the answer, and counts an acknowledged append in `wins`.
pub(crate) async fn recorded_append<S: EventStore>(
    store: &S,
    exec: &str,
    step: Step,
    fence: Option<u64>,
    rec: &Recorder<StreamOp>,
    wins: &Wins,
) -> AppendAnswer {
    let Step {
        client,
        round,
        next,
    } = step;
    rec.invoke(client, append_op(next, fence, None));
    let r = store
        .append(
            exec,
            next,
            vec![tagged(exec, next, client, round)],
            fence.map(FenceToken),
        )
        .await;
    let answer = AppendAnswer::of(&r);
    rec.answer(client, append_op(next, fence, Some(answer.clone())));
    if answer == AppendAnswer::Ok {
        wins.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((client, round, next));
    }
    answer
}

/// The log left behind must be gapless from its first sequence, and each event must be
/// the one whose append was acknowledged at that sequence (no lost or duplicated write).
pub(crate) async fn check_final_log<S: EventStore>(
    store: &S,
    exec: &str,
    acked: &[(u64, usize, u64)],
    low: u64,
) -> Result<(), Failure> {
    let log = store.read(exec).await.map_err(|e| {
        Failure(format!(
            "the final read of {exec} failed: {}",
            error_json(&e)
        ))
    })?;
    for (i, e) in log.iter().enumerate() {
        let want = low + i as u64;
        if e.sequence != want {
            return Err(Failure(format!(
                "the final log of {exec} is not gapless (SPI-23): position {i} holds sequence {}, expected {want}",
                e.sequence
            )));
        }
        if let Some((_, client, round)) = acked.iter().find(|(s, _, _)| *s == e.sequence) {
            let step = e
                .payload
                .get("stepId")
                .and_then(|v| v.as_str())
                .unwrap_or("");
            let want_step = format!("c{client}-r{round}");
            if step != want_step {
                return Err(Failure(format!(
                    "the final log of {exec} holds at sequence {} the event of {step:?}, but the append acknowledged at that sequence was client {client}'s round {round} ({want_step:?}): an acknowledged write was overwritten",
                    e.sequence
                )));
            }
        }
    }
    let acked_here = acked.iter().filter(|(s, _, _)| *s >= low).count();
    if acked_here != log.len() {
        return Err(Failure(format!(
            "the final log of {exec} holds {} events at or after sequence {low}, but {acked_here} appends there were acknowledged",
            log.len()
        )));
    }
    Ok(())
}

/// `(sequence, client, round)` of every acknowledged append, from the
/// `(client, round, sequence)` the scripts collected.
pub(crate) fn acknowledged(wins: &[(usize, u64, u64)]) -> Vec<(u64, usize, u64)> {
    wins.iter().map(|&(c, r, s)| (s, c, r)).collect()
}

/// Every client, in rounds, reads the stream and appends one event at the next sequence
/// it saw; the clients race for each sequence. Exactly one append may win each
/// sequence (the others get `conflict` with the stream's true next sequence), the
/// history must be linearizable against the stream model, and the log left behind must
/// hold exactly the acknowledged events, gapless (SPI-23).
pub async fn spi_23_racing_appends_exactly_one_wins_each_sequence<F: Fleet>(
    fleet: &F,
    cx: &Ctx,
) -> Verdict {
    let Some(stores) = fleet.events() else {
        return Ok(Outcome::SkipNotClaimed("eventStore"));
    };
    let exec = cx.id("race");
    let rec = Recorder::new();
    let wins: Wins = Arc::default();
    let (e2, r2, w2) = (exec.clone(), rec.clone(), Arc::clone(&wins));
    race(&stores, move |client, store| {
        let (exec, rec, wins) = (e2.clone(), r2.clone(), Arc::clone(&w2));
        async move {
            for round in 0..APPEND_ROUNDS {
                let log = recorded_read(&store, &exec, client, &rec).await?;
                let next = log.last().map_or(0, |e| e.sequence + 1);
                let step = Step {
                    client,
                    round,
                    next,
                };
                match recorded_append(&store, &exec, step, None, &rec, &wins).await {
                    AppendAnswer::Ok | AppendAnswer::Conflict(_) => {}
                    other => {
                        return Err(format!(
                            "append at {next} answered {other:?}, expected success or conflict"
                        ))
                    }
                }
            }
            Ok(())
        }
    })
    .await?;
    // The log left behind first: a lost or overwritten write is the plainest message.
    let wins = wins.lock().unwrap_or_else(|p| p.into_inner()).clone();
    check_final_log(&stores[0], &exec, &acknowledged(&wins), 0).await?;
    judge::<StreamModel>(&rec.entries(), &format!("racing appends on {exec}"))?;
    Ok(Outcome::Pass)
}

/// Every client acquires the fence of one execution several times at once. Each token
/// must be greater than every token acquired before it (PLACE-05: a new holder shuts
/// out every earlier one), so no two acquisitions return the same token and the history
/// is linearizable against the stream model.
pub async fn place_05_racing_fence_acquisitions_give_rising_tokens<F: Fleet>(
    fleet: &F,
    cx: &Ctx,
) -> Verdict {
    let Some(stores) = fleet.events() else {
        return Ok(Outcome::SkipNotClaimed("eventStore"));
    };
    let exec = cx.id("fence");
    let rec = Recorder::new();
    let (e2, r2) = (exec.clone(), rec.clone());
    race(&stores, move |client, store| {
        let (exec, rec) = (e2.clone(), r2.clone());
        async move {
            for _ in 0..FENCE_ROUNDS {
                rec.invoke(client, StreamOp::AcquireFence { answer: None });
                let r = store.acquire_fence(&exec).await;
                let answer = r.as_ref().map(|t| t.0).map_err(error_json);
                rec.answer(
                    client,
                    StreamOp::AcquireFence {
                        answer: Some(answer),
                    },
                );
                r.map_err(|e| format!("acquireFence answered {}", error_json(&e)))?;
            }
            Ok(())
        }
    })
    .await?;
    judge::<StreamModel>(
        &rec.entries(),
        &format!("racing fence acquisitions on {exec}"),
    )?;
    Ok(Outcome::Pass)
}

/// Each client takes the fence and then appends with its token, all at once: a client
/// whose token was superseded before its append took effect is a zombie and must be
/// refused with `fenced` naming the current token (PLACE-05), while the current holder's
/// append at the true next sequence succeeds. Judged by the stream model, and the log
/// must hold exactly the acknowledged events.
pub async fn place_05_zombie_append_races_the_new_holder<F: Fleet>(fleet: &F, cx: &Ctx) -> Verdict {
    let Some(stores) = fleet.events() else {
        return Ok(Outcome::SkipNotClaimed("eventStore"));
    };
    let exec = cx.id("zombie");
    let rec = Recorder::new();
    let wins: Wins = Arc::default();
    let (e2, r2, w2) = (exec.clone(), rec.clone(), Arc::clone(&wins));
    race(&stores, move |client, store| {
        let (exec, rec, wins) = (e2.clone(), r2.clone(), Arc::clone(&w2));
        async move {
            for round in 0..FENCE_ROUNDS {
                rec.invoke(client, StreamOp::AcquireFence { answer: None });
                let r = store.acquire_fence(&exec).await;
                rec.answer(
                    client,
                    StreamOp::AcquireFence {
                        answer: Some(r.as_ref().map(|t| t.0).map_err(error_json)),
                    },
                );
                let token = r.map_err(|e| format!("acquireFence answered {}", error_json(&e)))?;
                let log = recorded_read(&store, &exec, client, &rec).await?;
                let next = log.last().map_or(0, |e| e.sequence + 1);
                let step = Step { client, round, next };
                match recorded_append(&store, &exec, step, Some(token.0), &rec, &wins).await {
                    AppendAnswer::Ok | AppendAnswer::Fenced(_) | AppendAnswer::Conflict(_) => {}
                    other => {
                        return Err(format!(
                            "append at {next} with token {} answered {other:?}, expected success, fenced or conflict",
                            token.0
                        ))
                    }
                }
            }
            Ok(())
        }
    })
    .await?;
    let wins = wins.lock().unwrap_or_else(|p| p.into_inner()).clone();
    check_final_log(&stores[0], &exec, &acknowledged(&wins), 0).await?;
    judge::<StreamModel>(
        &rec.entries(),
        &format!("fenced appends racing new fence holders on {exec}"),
    )?;
    Ok(Outcome::Pass)
}

/// Each client observes the anchor and appends with `appendIfUnchanged`, while the
/// others do the same: an append whose anchor another append has moved must be refused
/// with `anchor-changed` (SPI-06), and at most one append succeeds per anchor.
pub async fn spi_06_append_if_unchanged_races_appends<F: Fleet>(fleet: &F, cx: &Ctx) -> Verdict {
    let Some(stores) = fleet.events() else {
        return Ok(Outcome::SkipNotClaimed("eventStore"));
    };
    let exec = cx.id("anchor");
    let rec = Recorder::new();
    let wins: Wins = Arc::default();
    let (e2, r2, w2) = (exec.clone(), rec.clone(), Arc::clone(&wins));
    race(&stores, move |client, store| {
        let (exec, rec, wins) = (e2.clone(), r2.clone(), Arc::clone(&w2));
        async move {
            for round in 0..APPEND_ROUNDS {
                let anchor = store
                    .observe(&exec)
                    .await
                    .map_err(|e| format!("observe answered {}", error_json(&e)))?;
                let next = anchor.next_sequence;
                let op = |answer| StreamOp::AppendIfUnchanged {
                    next,
                    fence: anchor.fence,
                    answer,
                };
                rec.invoke(client, op(None));
                let r = store
                    .append_if_unchanged(&exec, anchor, vec![tagged(&exec, next, client, round)])
                    .await;
                let answer = AppendAnswer::of(&r);
                rec.answer(client, op(Some(answer.clone())));
                match answer {
                    AppendAnswer::Ok => wins
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((client, round, next)),
                    AppendAnswer::AnchorChanged => {}
                    other => return Err(format!("appendIfUnchanged at {next} answered {other:?}, expected success or anchor-changed")),
                }
            }
            Ok(())
        }
    })
    .await?;
    let wins = wins.lock().unwrap_or_else(|p| p.into_inner()).clone();
    check_final_log(&stores[0], &exec, &acknowledged(&wins), 0).await?;
    judge::<StreamModel>(
        &rec.entries(),
        &format!("appendIfUnchanged racing on {exec}"),
    )?;
    Ok(Outcome::Pass)
}

/// Client 0 deletes through a rising sequence while the other clients append: the
/// delete removes exactly the events at or before `through` that existed, and every
/// event appended after them survives (SPI-09).
pub async fn spi_09_delete_through_races_appends<F: Fleet>(fleet: &F, cx: &Ctx) -> Verdict {
    let Some(stores) = fleet.events() else {
        return Ok(Outcome::SkipNotClaimed("eventStore"));
    };
    let exec = cx.id("compact");
    // The stream must exist before the delete (an unknown id is not-found).
    stores[0]
        .append(&exec, 0, vec![tagged(&exec, 0, 0, u64::MAX)], None)
        .await
        .map_err(|e| {
            Failure(format!(
                "the first append to {exec} failed: {}",
                error_json(&e)
            ))
        })?;
    let rec = Recorder::new();
    rec.invoke(0, append_op(0, None, None));
    rec.answer(0, append_op(0, None, Some(AppendAnswer::Ok)));
    let wins = Arc::new(std::sync::Mutex::new(vec![(0usize, u64::MAX, 0u64)]));
    let (e2, r2, w2) = (exec.clone(), rec.clone(), Arc::clone(&wins));
    race(&stores, move |client, store| {
        let (exec, rec, wins) = (e2.clone(), r2.clone(), Arc::clone(&w2));
        async move {
            for round in 0..APPEND_ROUNDS {
                if client == 0 {
                    let through = round;
                    rec.invoke(
                        0,
                        StreamOp::DeleteThrough {
                            through,
                            answer: None,
                        },
                    );
                    let r = store.delete_through(&exec, through).await;
                    let answer = r.as_ref().copied().map_err(error_json);
                    rec.answer(
                        0,
                        StreamOp::DeleteThrough {
                            through,
                            answer: Some(answer),
                        },
                    );
                    r.map_err(|e| format!("deleteThrough({through}) answered {}", error_json(&e)))?;
                    continue;
                }
                let log = recorded_read(&store, &exec, client, &rec).await?;
                let Some(last) = log.last() else {
                    // Everything was deleted: the next sequence is unknown to a reader;
                    // observe gives it, but a plain store may not claim observe.
                    continue;
                };
                let next = last.sequence + 1;
                let step = Step {
                    client,
                    round,
                    next,
                };
                match recorded_append(&store, &exec, step, None, &rec, &wins).await {
                    AppendAnswer::Ok | AppendAnswer::Conflict(_) => {}
                    other => {
                        return Err(format!(
                            "append at {next} answered {other:?}, expected success or conflict"
                        ))
                    }
                }
            }
            Ok(())
        }
    })
    .await?;
    // The final log's first sequence is whatever the deletes left; from there it must be
    // gapless and hold the acknowledged events.
    let log = stores[0].read(&exec).await.map_err(|e| {
        Failure(format!(
            "the final read of {exec} failed: {}",
            error_json(&e)
        ))
    })?;
    let low = log.first().map_or(0, |e| e.sequence);
    let wins = wins.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if !log.is_empty() {
        check_final_log(&stores[0], &exec, &acknowledged(&wins), low).await?;
    }
    judge::<StreamModel>(
        &rec.entries(),
        &format!("deleteThrough racing appends on {exec}"),
    )?;
    Ok(Outcome::Pass)
}

// -- the dispatcher model --------------------------------------------------------------

/// One dispatcher operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DispatchOp {
    /// `dispatch` of an unpinned package, answering its dispatch id.
    Dispatch {
        /// The answer.
        answer: Option<u64>,
    },
    /// `claim`, answering the dispatch id leased (`None`: nothing runnable).
    Claim {
        /// The answer.
        answer: Option<Result<Option<u64>, String>>,
    },
    /// `complete` of the lease on a dispatch.
    Complete {
        /// The dispatch the lease is on.
        dispatch: u64,
        /// The answer (`Ok` or the error's JSON).
        answer: Option<Result<(), String>>,
    },
}

impl Op for DispatchOp {
    fn read_only(&self) -> bool {
        match self {
            DispatchOp::Dispatch { .. } => false,
            DispatchOp::Claim { answer } => !matches!(answer, Some(Ok(Some(_)))),
            DispatchOp::Complete { answer, .. } => !matches!(answer, Some(Ok(()))),
        }
    }
}

/// The queue (dispatch ids, oldest first) and the leased dispatches.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DispatchState {
    queue: Vec<u64>,
    leased: Vec<u64>,
}

/// The sequential model of the dispatcher: a FIFO queue of unpinned packages, and the
/// dispatches leased from it.
pub struct DispatchModel;

impl Specification for DispatchModel {
    type State = DispatchState;
    type Operation = DispatchOp;

    fn init() -> DispatchState {
        DispatchState::default()
    }

    fn apply(op: &DispatchOp, st: &DispatchState) -> (bool, DispatchState) {
        let same = st.clone();
        match op {
            DispatchOp::Dispatch { answer: Some(d) } => {
                // Dispatch ids are unique; a new package joins the back of the queue.
                if st.queue.contains(d) || st.leased.contains(d) {
                    return (false, same);
                }
                let mut next = same;
                next.queue.push(*d);
                (true, next)
            }
            DispatchOp::Claim {
                answer: Some(Ok(None)),
            } => (st.queue.is_empty(), same),
            DispatchOp::Claim {
                answer: Some(Ok(Some(d))),
            } => {
                // The oldest queued package (PLACE-02; all are unpinned here).
                if st.queue.first() != Some(d) {
                    return (false, same);
                }
                let mut next = same;
                next.queue.remove(0);
                next.leased.push(*d);
                (true, next)
            }
            DispatchOp::Complete {
                dispatch,
                answer: Some(Ok(())),
            } => {
                let Some(i) = st.leased.iter().position(|d| d == dispatch) else {
                    return (false, same);
                };
                let mut next = same;
                next.leased.remove(i);
                (true, next)
            }
            _ => (false, same),
        }
    }
}

/// Packages are queued, then every client claims and completes until nothing is
/// runnable, all at once. No dispatch may be leased to two clients (PLACE-02: one live
/// lease per execution), claims take the oldest package first, every package is
/// claimed exactly once, and the history is linearizable against the queue model.
pub async fn place_02_racing_claims_never_share_a_lease<F: Fleet>(fleet: &F, cx: &Ctx) -> Verdict {
    let Some(dispatchers) = fleet.dispatchers() else {
        return Ok(Outcome::SkipNotClaimed("dispatcher"));
    };
    let target = "race-target";
    dispatchers[0]
        .register_target(target)
        .await
        .map_err(|e| Failure(format!("registerTarget answered {}", error_json(&e))))?;
    let rec: Recorder<DispatchOp> = Recorder::new();
    let mut queued = Vec::new();
    for i in 0..PACKAGES_PER_CLIENT * dispatchers.len() as u64 {
        let p = ExecutionPackage {
            execution_id: cx.id(&format!("claim-{i}")),
            flow_id: "race-flow".into(),
            resume_hint: None,
            compute_target: None,
        };
        rec.invoke(0, DispatchOp::Dispatch { answer: None });
        let id = dispatchers[0]
            .dispatch(p)
            .await
            .map_err(|e| Failure(format!("dispatch {i} answered {}", error_json(&e))))?;
        rec.answer(0, DispatchOp::Dispatch { answer: Some(id.0) });
        queued.push(id.0);
    }
    let claimed = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (r2, c2) = (rec.clone(), Arc::clone(&claimed));
    race(&dispatchers, move |client, d| {
        let (rec, claimed) = (r2.clone(), Arc::clone(&c2));
        async move {
            let worker = format!("worker-{client}");
            loop {
                rec.invoke(client, DispatchOp::Claim { answer: None });
                // One clock for every client, far before any deadline: no lease expires.
                let r = d.claim(target, &worker, 1_000).await;
                let answer = r
                    .as_ref()
                    .map(|l| l.as_ref().map(|l| l.dispatch_id.0))
                    .map_err(error_json);
                rec.answer(
                    client,
                    DispatchOp::Claim {
                        answer: Some(answer),
                    },
                );
                let lease = match r {
                    Ok(Some(lease)) => lease,
                    Ok(None) => return Ok(()),
                    Err(e) => return Err(format!("claim answered {}", error_json(&e))),
                };
                claimed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((lease.dispatch_id.0, client));
                let dispatch = lease.dispatch_id.0;
                rec.invoke(
                    client,
                    DispatchOp::Complete {
                        dispatch,
                        answer: None,
                    },
                );
                let r = d.complete(&lease).await;
                rec.answer(
                    client,
                    DispatchOp::Complete {
                        dispatch,
                        answer: Some(r.as_ref().map(|_| ()).map_err(error_json)),
                    },
                );
                // A refused complete is judged with the rest (two leases on one dispatch
                // show as one of them being refused): the client goes on claiming.
                let _ = r;
            }
        }
    })
    .await?;
    let claimed = claimed.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for (d, client) in &claimed {
        let holders: Vec<usize> = claimed
            .iter()
            .filter(|(x, _)| x == d)
            .map(|(_, c)| *c)
            .collect();
        if holders.len() > 1 {
            return Err(Failure(format!(
                "dispatch {d} was leased {} times, to clients {holders:?} (first to client {client}): two live leases on one execution (PLACE-02)",
                holders.len()
            )));
        }
    }
    for d in &queued {
        if !claimed.iter().any(|(x, _)| x == d) {
            return Err(Failure(format!(
                "dispatch {d} was queued but no client ever claimed it: a package was lost"
            )));
        }
    }
    judge::<DispatchModel>(&rec.entries(), "racing claims")?;
    Ok(Outcome::Pass)
}

// -- the durable-state model -----------------------------------------------------------

/// One compare-and-set write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateOp {
    /// `put(key, value, expectedVersion)`.
    Put {
        /// The version the client expected (`None`: absent).
        expected: Option<u64>,
        /// The new version, `Err(actual)` for a conflict naming the current version, or
        /// `Err(u64::MAX)` for any other error.
        answer: Option<Result<u64, u64>>,
    },
}

impl Op for StateOp {
    fn read_only(&self) -> bool {
        let StateOp::Put { answer, .. } = self;
        !matches!(answer, Some(Ok(_)))
    }
}

/// The sequential model of one key: its version (0 = absent).
pub struct StateModel;

impl Specification for StateModel {
    type State = u64;
    type Operation = StateOp;

    fn init() -> u64 {
        0
    }

    fn apply(op: &StateOp, version: &u64) -> (bool, u64) {
        let StateOp::Put {
            expected,
            answer: Some(a),
        } = op
        else {
            return (false, *version);
        };
        let matches = expected.unwrap_or(0) == *version;
        match a {
            Ok(v) => (matches && *v == version + 1, *v),
            Err(actual) => (!matches && actual == version, *version),
        }
    }
}

/// Every client reads the key's version and writes with it as the expectation, all at
/// once: exactly one write wins each version, the others get `conflict` naming the
/// current version, and versions rise by one per write (SPI-20).
pub async fn spi_20_racing_compare_and_set_one_winner_per_version<F: Fleet>(
    fleet: &F,
    cx: &Ctx,
) -> Verdict {
    let Some(stores) = fleet.durable_state() else {
        return Ok(Outcome::SkipNotClaimed("durableStateStore"));
    };
    let key = cx.id("cas");
    let rec: Recorder<StateOp> = Recorder::new();
    let (k2, r2) = (key.clone(), rec.clone());
    race(&stores, move |client, store| {
        let (key, rec) = (k2.clone(), r2.clone());
        async move {
            for round in 0..CAS_ROUNDS {
                let current = store
                    .get(&key)
                    .await
                    .map_err(|e| format!("get {key} answered {}", error_json(&e)))?;
                let expected = current.map(|v| v.version);
                let value = json!({ "client": client, "round": round });
                // Each round reads the version afresh; the answers are judged from the
                // history once the race is over.
                let _answer = recorded_put(&store, &key, value, expected, client, &rec).await?;
            }
            Ok(())
        }
    })
    .await?;
    judge::<StateModel>(&rec.entries(), &format!("compare-and-set writes of {key}"))?;
    Ok(Outcome::Pass)
}

// -- renew against expiry --------------------------------------------------------------

/// One dispatcher operation of the renew-against-expiry case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseOp {
    /// A lease claimed on `dispatch` before the race (the history's starting point).
    Claimed {
        /// The dispatch leased.
        dispatch: u64,
    },
    /// `renew` of the first lease on `dispatch` at `now_ms`: `Ok(deadline)` or
    /// `Err(None)` for `lease-lost`, `Err(Some(json))` for any other error.
    Renew {
        /// The dispatch the lease is on.
        dispatch: u64,
        /// The answer.
        answer: Option<Result<i64, Option<String>>>,
    },
    /// `expireLeases` at the original deadline, answering the dispatch ids re-queued.
    Expire {
        /// The answer.
        answer: Option<Result<Vec<u64>, String>>,
    },
}

impl Op for LeaseOp {
    fn read_only(&self) -> bool {
        match self {
            LeaseOp::Claimed { .. } => false,
            LeaseOp::Renew { answer, .. } => !matches!(answer, Some(Ok(_))),
            LeaseOp::Expire { answer } => !matches!(answer, Some(Ok(ids)) if !ids.is_empty()),
        }
    }
}

/// Per dispatch (ascending ids): `true` while its first lease is live (renewed or not
/// yet expired), `false` once expiry re-queued it. Renewals push the deadline past the
/// expiry time, so a renewed lease never expires within the case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LeaseState {
    live: Vec<(u64, bool, bool)>,
}

/// The sequential model of renew against expiry: a renew succeeds exactly when the lease
/// is still live, with the deadline `renew_now + duration` (checked by the case); an
/// expiry at the original deadline re-queues exactly the live leases not renewed.
pub struct LeaseModel;

impl Specification for LeaseModel {
    type State = LeaseState;
    type Operation = LeaseOp;

    fn init() -> LeaseState {
        LeaseState::default()
    }

    fn apply(op: &LeaseOp, st: &LeaseState) -> (bool, LeaseState) {
        let same = st.clone();
        match op {
            LeaseOp::Claimed { dispatch } => {
                if st.live.iter().any(|(d, _, _)| d == dispatch) {
                    return (false, same);
                }
                let mut next = same;
                next.live.push((*dispatch, true, false));
                next.live.sort_unstable();
                (true, next)
            }
            LeaseOp::Renew {
                dispatch,
                answer: Some(a),
            } => {
                let Some(i) = st.live.iter().position(|(d, _, _)| d == dispatch) else {
                    return (false, same);
                };
                let (_, live, _) = st.live[i];
                match a {
                    Ok(_) if live => {
                        let mut next = same;
                        next.live[i].2 = true;
                        (true, next)
                    }
                    Err(None) => (!live, same),
                    _ => (false, same),
                }
            }
            LeaseOp::Expire {
                answer: Some(Ok(ids)),
            } => {
                let due: Vec<u64> = st
                    .live
                    .iter()
                    .filter(|(_, live, renewed)| *live && !renewed)
                    .map(|(d, _, _)| *d)
                    .collect();
                if *ids != due {
                    return (false, same);
                }
                let mut next = same;
                for entry in next.live.iter_mut() {
                    if due.contains(&entry.0) {
                        entry.1 = false;
                    }
                }
                (true, next)
            }
            _ => (false, same),
        }
    }
}

/// Every client holds one lease, claimed at the same time, and renews it one
/// millisecond before its deadline while the other clients expire leases at that
/// deadline, all at once. In every order a renew either wins (the lease stays, with its
/// new deadline, and no expiry lists it) or loses (`lease-lost`, the package re-queued):
/// never both, which would leave a renewed lease on a package another worker can claim
/// (PLACE-02: one live lease per execution). Afterwards a new worker can claim exactly
/// the re-queued packages.
pub async fn place_02_renew_races_lease_expiry<F: Fleet>(fleet: &F, cx: &Ctx) -> Verdict {
    let Some(dispatchers) = fleet.dispatchers() else {
        return Ok(Outcome::SkipNotClaimed("dispatcher"));
    };
    let target = "renew-target";
    let d0 = &dispatchers[0];
    d0.register_target(target)
        .await
        .map_err(|e| Failure(format!("registerTarget answered {}", error_json(&e))))?;
    let claimed_at_ms = 1_000;
    let mut leases = Vec::new();
    for i in 0..dispatchers.len() {
        let p = ExecutionPackage {
            execution_id: cx.id(&format!("renew-{i}")),
            flow_id: "renew-flow".into(),
            resume_hint: None,
            compute_target: None,
        };
        d0.dispatch(p)
            .await
            .map_err(|e| Failure(format!("dispatch {i} answered {}", error_json(&e))))?;
        let lease = d0
            .claim(target, &format!("holder-{i}"), claimed_at_ms)
            .await
            .map_err(|e| Failure(format!("claim {i} answered {}", error_json(&e))))?
            .ok_or_else(|| Failure(format!("claim {i} found nothing runnable after a dispatch")))?;
        leases.push(lease);
    }
    let rec: Recorder<LeaseOp> = Recorder::new();
    for l in &leases {
        let op = LeaseOp::Claimed {
            dispatch: l.dispatch_id.0,
        };
        rec.invoke(0, op.clone());
        rec.answer(0, op);
    }
    let deadline_ms = leases[0].deadline_ms;
    let duration_ms = deadline_ms - claimed_at_ms;
    if duration_ms < 2 || leases.iter().any(|l| l.deadline_ms != deadline_ms) {
        return Err(Failure(format!(
            "leases claimed at {claimed_at_ms} got the deadlines {:?}: one lease duration (of at least 2 ms) was expected for all",
            leases.iter().map(|l| l.deadline_ms).collect::<Vec<_>>()
        )));
    }
    let mut ids: Vec<u64> = leases.iter().map(|l| l.dispatch_id.0).collect();
    ids.sort_unstable();
    let leases = Arc::new(leases);
    let (r2, l2) = (rec.clone(), Arc::clone(&leases));
    race(&dispatchers, move |client, d| {
        let (rec, leases) = (r2.clone(), Arc::clone(&l2));
        async move {
            let lease = &leases[client];
            let dispatch = lease.dispatch_id.0;
            rec.invoke(client, LeaseOp::Renew { dispatch, answer: None });
            let renew_at_ms = deadline_ms - 1;
            let r = d.renew(lease, renew_at_ms).await;
            let answer = match &r {
                Ok(l) if l.deadline_ms == renew_at_ms + duration_ms => Ok(l.deadline_ms),
                Ok(l) => {
                    return Err(format!(
                        "renew of dispatch {dispatch} at {renew_at_ms} answered the deadline {}, expected {}",
                        l.deadline_ms,
                        renew_at_ms + duration_ms
                    ))
                }
                Err(e) if e.kind == StoreErrorKind::LeaseLost => Err(None),
                Err(e) => Err(Some(error_json(e))),
            };
            rec.answer(client, LeaseOp::Renew { dispatch, answer: Some(answer) });
            rec.invoke(client, LeaseOp::Expire { answer: None });
            let r = d.expire_leases(deadline_ms).await;
            let answer = r
                .map(|ids| {
                    let mut ids: Vec<u64> = ids.into_iter().map(|d| d.0).collect();
                    ids.sort_unstable();
                    ids
                })
                .map_err(|e| error_json(&e));
            rec.answer(client, LeaseOp::Expire { answer: Some(answer) });
            Ok(())
        }
    })
    .await?;
    judge::<LeaseModel>(&rec.entries(), "renew racing lease expiry")?;
    // Which renewals won, by their answers: a new worker at the old deadline may claim
    // exactly the others.
    let renewed: Vec<u64> = rec
        .entries()
        .iter()
        .filter_map(|e| match &e.op {
            LeaseOp::Renew {
                dispatch,
                answer: Some(Ok(_)),
            } => Some(*dispatch),
            _ => None,
        })
        .collect();
    let mut taken = Vec::new();
    while let Some(l) = d0
        .claim(target, "latecomer", deadline_ms)
        .await
        .map_err(|e| Failure(format!("the latecomer's claim answered {}", error_json(&e))))?
    {
        if taken.len() > ids.len() {
            return Err(Failure(format!(
                "the latecomer claimed more packages ({}) than were ever dispatched ({})",
                taken.len(),
                ids.len()
            )));
        }
        taken.push(l.dispatch_id.0);
    }
    taken.sort_unstable();
    let expected: Vec<u64> = ids
        .iter()
        .copied()
        .filter(|d| !renewed.contains(d))
        .collect();
    if taken != expected {
        return Err(Failure(format!(
            "after the race, renewed dispatches {renewed:?} still hold their leases, so a new worker may claim exactly {expected:?}; it claimed {taken:?} (PLACE-02: a claimed renewed package has two live leases; a missing one was lost)"
        )));
    }
    Ok(Outcome::Pass)
}

// -- timers ----------------------------------------------------------------------------

/// One timer operation on one `(executionId, key)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimerOp {
    /// `schedule` with this wake time, answering the stored timer's wake time.
    Schedule {
        /// The wake time the client asked for.
        wake_at_ms: i64,
        /// The stored timer's wake time, or the error's JSON.
        answer: Option<Result<i64, String>>,
    },
    /// `cancel`, answering whether the timer existed.
    Cancel {
        /// The answer.
        answer: Option<Result<bool, String>>,
    },
}

impl Op for TimerOp {
    fn read_only(&self) -> bool {
        match self {
            TimerOp::Schedule { .. } => false,
            TimerOp::Cancel { answer } => !matches!(answer, Some(Ok(true))),
        }
    }
}

/// The sequential model of one timer: absent, or scheduled at a wake time.
pub struct TimerModel;

impl Specification for TimerModel {
    type State = Option<i64>;
    type Operation = TimerOp;

    fn init() -> Option<i64> {
        None
    }

    fn apply(op: &TimerOp, st: &Option<i64>) -> (bool, Option<i64>) {
        match op {
            TimerOp::Schedule {
                wake_at_ms,
                answer: Some(Ok(stored)),
            } => match st {
                // Idempotent: the stored timer is the answer and nothing moves.
                Some(w) => (stored == w, *st),
                None => (stored == wake_at_ms, Some(*wake_at_ms)),
            },
            TimerOp::Cancel {
                answer: Some(Ok(existed)),
            } => (*existed == st.is_some(), None),
            _ => (false, *st),
        }
    }
}

/// Every client schedules the same timer with its own wake time, all at once; then every
/// client reads what is due and cancels it, as a sweeper fires a timer, all at once. The
/// first schedule's wake
/// time stands (a replayed schedule cannot move a deadline), every schedule answers the
/// stored timer, and exactly one cancel answers that the timer existed, so a sweeper
/// that fires on that answer fires it once (REPLAY-10; the TimerStore is
/// reference-defined, GAP-25).
pub async fn replay_10_racing_timer_schedule_and_cancel<F: Fleet>(fleet: &F, cx: &Ctx) -> Verdict {
    let Some(timers) = fleet.timers() else {
        return Ok(Outcome::SkipNotClaimed("timerStore"));
    };
    for round in 0..TIMER_ROUNDS {
        let exec = cx.id(&format!("timer-{round}"));
        let key = "wake";
        let rec: Recorder<TimerOp> = Recorder::new();
        let (e2, r2) = (exec.clone(), rec.clone());
        race(&timers, move |client, t| {
            let (exec, rec) = (e2.clone(), r2.clone());
            async move {
                let wake_at_ms = 10_000 + client as i64;
                rec.invoke(
                    client,
                    TimerOp::Schedule {
                        wake_at_ms,
                        answer: None,
                    },
                );
                let r = t
                    .schedule(Timer {
                        execution_id: exec.clone(),
                        wake_at_ms,
                        key: key.into(),
                    })
                    .await;
                let answer = match &r {
                    Ok(stored) if stored.execution_id == exec && stored.key == key => {
                        Ok(stored.wake_at_ms)
                    }
                    Ok(stored) => {
                        return Err(format!(
                            "schedule of ({exec}, {key}) answered a timer of ({}, {})",
                            stored.execution_id, stored.key
                        ))
                    }
                    Err(e) => Err(error_json(e)),
                };
                rec.answer(
                    client,
                    TimerOp::Schedule {
                        wake_at_ms,
                        answer: Some(answer),
                    },
                );
                Ok(())
            }
        })
        .await?;
        // Every schedule has answered: now every client fires what is due, at once.
        let (e2, r2) = (exec.clone(), rec.clone());
        race(&timers, move |client, t| {
            let (exec, rec) = (e2.clone(), r2.clone());
            async move {
                let due = t
                    .due(20_000, loom_kernel::spi::TIMER_DUE_LIMIT_MAX)
                    .await
                    .map_err(|e| format!("due answered {}", error_json(&e)))?;
                if !due.iter().any(|d| d.execution_id == exec) {
                    // Another client cancelled it already: nothing to fire.
                    return Ok(());
                }
                rec.invoke(client, TimerOp::Cancel { answer: None });
                let r = t.cancel(&exec, key).await.map_err(|e| error_json(&e));
                rec.answer(client, TimerOp::Cancel { answer: Some(r) });
                Ok(())
            }
        })
        .await?;
        let entries = rec.entries();
        let fired = entries
            .iter()
            .filter(|e| {
                matches!(
                    e.op,
                    TimerOp::Cancel {
                        answer: Some(Ok(true))
                    }
                )
            })
            .count();
        if fired != 1 {
            return Err(Failure(format!(
                "round {round}: {fired} cancels of the timer ({exec}, {key}) answered that it existed; exactly one was expected, so a sweeper firing on that answer fires it {fired} times. History:\n{}",
                render(&entries)
            )));
        }
        judge::<TimerModel>(&entries, &format!("schedule and cancel of ({exec}, {key})"))?;
    }
    Ok(Outcome::Pass)
}

// -- read models -----------------------------------------------------------------------

/// One read-model operation on one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocOp {
    /// `upsert` of `{"client", "round"}`.
    Upsert {
        /// The document written (client, round).
        doc: (usize, u64),
        /// The answer (`Ok` or the error's JSON).
        answer: Option<Result<(), String>>,
    },
    /// `get`, answering the document read (`None`: absent).
    Get {
        /// The answer.
        answer: Option<Result<Option<(usize, u64)>, String>>,
    },
}

impl Op for DocOp {
    fn read_only(&self) -> bool {
        !matches!(
            self,
            DocOp::Upsert {
                answer: Some(Ok(())),
                ..
            }
        )
    }
}

/// The sequential model of one document: a register, last write wins.
pub struct DocModel;

impl Specification for DocModel {
    type State = Option<(usize, u64)>;
    type Operation = DocOp;

    fn init() -> Option<(usize, u64)> {
        None
    }

    fn apply(op: &DocOp, st: &Option<(usize, u64)>) -> (bool, Option<(usize, u64)>) {
        match op {
            DocOp::Upsert {
                doc,
                answer: Some(Ok(())),
            } => (true, Some(*doc)),
            DocOp::Get {
                answer: Some(Ok(read)),
            } => (read == st, *st),
            _ => (false, *st),
        }
    }
}

fn doc_of(v: &serde_json::Value) -> Option<(usize, u64)> {
    Some((
        usize::try_from(v.get("client")?.as_u64()?).ok()?,
        v.get("round")?.as_u64()?,
    ))
}

/// Every client upserts the same document and reads it back, round after round, and
/// also inserts documents of its own, all at once. Each document is a register (last
/// write wins, every read sees a write that a linearization puts last), and a query of
/// the collection afterwards lists every document id exactly once, with the value a get
/// reads (SPI-20: an upsert inserts or replaces, never adds a second row).
pub async fn spi_20_racing_upserts_keep_one_document_per_id<F: Fleet>(
    fleet: &F,
    cx: &Ctx,
) -> Verdict {
    let Some(models) = fleet.read_models() else {
        return Ok(Outcome::SkipNotClaimed("readModelStore"));
    };
    let collection = cx.id("orders");
    let shared = "shared";
    let rec: Recorder<DocOp> = Recorder::new();
    let (c2, r2) = (collection.clone(), rec.clone());
    race(&models, move |client, m| {
        let (collection, rec) = (c2.clone(), r2.clone());
        async move {
            for round in 0..UPSERT_ROUNDS {
                let doc = (client, round);
                rec.invoke(client, DocOp::Upsert { doc, answer: None });
                let r = m
                    .upsert(
                        &collection,
                        shared,
                        json!({ "client": client, "round": round }),
                    )
                    .await
                    .map_err(|e| error_json(&e));
                rec.answer(
                    client,
                    DocOp::Upsert {
                        doc,
                        answer: Some(r),
                    },
                );
                // A document of this client's own, racing the others' inserts.
                m.upsert(
                    &collection,
                    &format!("own-{client}-{round}"),
                    json!({ "client": client, "round": round }),
                )
                .await
                .map_err(|e| {
                    format!("upsert of own-{client}-{round} answered {}", error_json(&e))
                })?;
                rec.invoke(client, DocOp::Get { answer: None });
                let r = m.get(&collection, shared).await;
                let answer = match r {
                    Ok(None) => Ok(None),
                    Ok(Some(v)) => match doc_of(&v) {
                        Some(d) => Ok(Some(d)),
                        None => {
                            return Err(format!("get of {shared} read {v}, which no client wrote"))
                        }
                    },
                    Err(e) => Err(error_json(&e)),
                };
                rec.answer(
                    client,
                    DocOp::Get {
                        answer: Some(answer),
                    },
                );
            }
            Ok(())
        }
    })
    .await?;
    judge::<DocModel>(
        &rec.entries(),
        &format!("upserts and gets of {shared} in {collection}"),
    )?;
    // Every id once, in byte order, each read back as a get reads it.
    let mut listed: Vec<(String, serde_json::Value)> = Vec::new();
    let mut cursor = None;
    loop {
        let page = models[0]
            .query(
                &collection,
                loom_kernel::spi::plugin::QueryOptions {
                    limit: 1000,
                    cursor: cursor.take(),
                },
            )
            .await
            .map_err(|e| Failure(format!("query of {collection} answered {}", error_json(&e))))?;
        listed.extend(page.docs.into_iter().map(|d| (d.id, d.doc)));
        match page.next_cursor {
            Some(c) if listed.len() <= QUERY_DOCS_MAX => cursor = Some(c),
            Some(_) => {
                return Err(Failure(format!(
                "query of {collection} went on past {QUERY_DOCS_MAX} documents; {} were written",
                1 + models.len() as u64 * UPSERT_ROUNDS
            )))
            }
            None => break,
        }
    }
    let mut expected: Vec<String> = vec![shared.to_string()];
    for client in 0..models.len() {
        for round in 0..UPSERT_ROUNDS {
            expected.push(format!("own-{client}-{round}"));
        }
    }
    expected.sort();
    let ids: Vec<String> = listed.iter().map(|(id, _)| id.clone()).collect();
    if ids != expected {
        let twice: Vec<&String> = ids
            .iter()
            .enumerate()
            .filter(|(i, id)| ids[..*i].contains(id))
            .map(|(_, id)| id)
            .collect();
        return Err(Failure(format!(
            "after racing upserts, a query of {collection} listed {} ids{}; expected each of the {} written ids once, in byte order (SPI-20: an upsert replaces, never adds a row)",
            ids.len(),
            if twice.is_empty() {
                String::new()
            } else {
                format!(", some more than once: {twice:?}")
            },
            expected.len()
        )));
    }
    for (id, doc) in &listed {
        let got = models[0]
            .get(&collection, id)
            .await
            .map_err(|e| Failure(format!("get of {id} answered {}", error_json(&e))))?;
        if got.as_ref() != Some(doc) {
            return Err(Failure(format!(
                "the query listed {id} as {doc}, but a get reads {got:?}"
            )));
        }
    }
    Ok(Outcome::Pass)
}

/// A [`Fleet`] of ready handles: one per client for each SPI the backend serves.
#[derive(Clone)]
pub struct Handles<E, D, S, T, R> {
    /// Event stores, one per client (`None`: not served).
    pub events: Option<Vec<E>>,
    /// Dispatchers, one per client.
    pub dispatchers: Option<Vec<D>>,
    /// Durable-state stores, one per client.
    pub durable_state: Option<Vec<S>>,
    /// Timer stores, one per client.
    pub timers: Option<Vec<T>>,
    /// Read-model stores, one per client.
    pub read_models: Option<Vec<R>>,
}

impl<E, D, S, T, R> Fleet for Handles<E, D, S, T, R>
where
    E: EventStore + Clone + Send + Sync + 'static,
    D: ExecutionDispatcher + Clone + Send + Sync + 'static,
    S: DurableStateStore + Clone + Send + Sync + 'static,
    T: TimerStore + Clone + Send + Sync + 'static,
    R: ReadModelStore + Clone + Send + Sync + 'static,
{
    type Events = E;
    type Dispatch = D;
    type State = S;
    type Timers = T;
    type Models = R;
    fn events(&self) -> Option<Vec<E>> {
        self.events.clone()
    }
    fn dispatchers(&self) -> Option<Vec<D>> {
        self.dispatchers.clone()
    }
    fn durable_state(&self) -> Option<Vec<S>> {
        self.durable_state.clone()
    }
    fn timers(&self) -> Option<Vec<T>> {
        self.timers.clone()
    }
    fn read_models(&self) -> Option<Vec<R>> {
        self.read_models.clone()
    }
}
