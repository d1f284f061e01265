//! Durability cases: the adapter's process is killed with `SIGKILL` and started again,
//! and what it acknowledged must still be there.
//!
//! The spec's store contract is about state that outlives a worker: a log the fold is
//! rebuilt from on any worker (PLACE-04), fence tokens that only rise (PLACE-05), an
//! incarnation that differs between two streams of one id (SPI-07), a dispatch queue
//! that holds its packages (PLACE-02), a durable-state version (SPI-20). A store whose
//! adapter keeps any of that in its own memory passes every other kit, which never
//! restarts it. These cases kill the adapter's whole process group at chosen points
//! (after an acknowledged write; after sending a write and before reading its answer)
//! and judge what the new process reads back: every acknowledged write is there, and a
//! write killed before its answer happened entirely or not at all.
//!
//! Only an adapter that answers `durable: true` in `hello` (store protocol 1.2) is
//! judged: one that keeps its data in memory loses it on a kill by design, and its cases
//! are `skip-not-claimed`, never passed.

use std::time::Duration;

use serde_json::json;

use loom_kernel::spi::{
    DurableStateStore, EventStore, ExecutionDispatcher, ExecutionPackage, FenceToken,
    StoreErrorKind,
};

use crate::case::{ensure, error_json, events, ok, Claims, Ctx, Failure, Outcome, Verdict};

/// How long after writing a request the harness waits before it kills the adapter, one
/// entry per round of the killed-write case: at once, after the adapter has likely read
/// it, after it has likely written it.
pub const KILL_DELAYS_MS: [u64; 4] = [0, 1, 5, 20];

/// A store whose process the harness can kill and start again.
pub trait Restartable: EventStore + ExecutionDispatcher + DurableStateStore {
    /// Kills the process group now; the next call starts a new process.
    fn kill(&self);
    /// Sends `method` with `params` and kills the process after `delay`, before reading
    /// the answer.
    fn send_then_kill(
        &self,
        method: &str,
        params: serde_json::Value,
        delay: Duration,
    ) -> Result<(), loom_kernel::spi::StoreError>;
    /// True when the store says its acknowledged writes survive a kill.
    fn durable(&self) -> bool;
    /// True when the store serves the SPI named as in `hello` (`eventStore`, …).
    fn serves(&self, spi: &str) -> bool;
}

impl Restartable for crate::stdio::StdioStore {
    fn kill(&self) {
        crate::stdio::StdioStore::kill(self)
    }
    fn send_then_kill(
        &self,
        method: &str,
        params: serde_json::Value,
        delay: Duration,
    ) -> Result<(), loom_kernel::spi::StoreError> {
        crate::stdio::StdioStore::send_then_kill(self, method, params, delay)
    }
    fn durable(&self) -> bool {
        crate::stdio::StdioStore::durable(self)
    }
    fn serves(&self, spi: &str) -> bool {
        self.implements(spi)
    }
}

crate::__kit_cases! {
    kit: DurabilityKit, name: "durability", bound: Restartable, fresh: true, claims: claims_of,
    cases: [
        spi_23_acknowledged_appends_survive_a_kill => ["SPI-23", "PLACE-04"], "1.0.0", [];
        spi_23_an_append_killed_before_its_answer_is_whole_or_absent => ["SPI-23", "GAP-27"], "1.0.0", [];
        place_05_fence_tokens_keep_rising_across_a_kill => ["PLACE-05", "SPI-04"], "1.0.0", ["acquireFence"];
        spi_07_incarnations_differ_across_a_kill => ["SPI-07"], "2.3.0", ["SPI 2.3.0", "appendIfUnchanged", "deleteExecution"];
        place_02_queued_and_leased_packages_survive_a_kill => ["PLACE-02"], "1.0.0", [];
        spi_20_durable_state_survives_a_kill => ["SPI-20"], "1.0.0", [];
    ]
}

fn claims_of<S: Restartable>(store: &S) -> Claims {
    Claims::of(&EventStore::capabilities(store))
}

/// The skip for a store that does not say it is durable, or lacks the SPI.
fn unjudged<S: Restartable>(store: &S, spi: &'static str) -> Option<Outcome> {
    if !store.durable() {
        return Some(Outcome::SkipNotClaimed(
            "durable: true in hello (store protocol 1.2)",
        ));
    }
    if !store.serves(spi) {
        return Some(Outcome::SkipNotClaimed(spi));
    }
    None
}

/// Appends three batches, each acknowledged, then kills the adapter: the new process
/// must read exactly the acknowledged events (SPI-23; a log any worker can rebuild
/// from, PLACE-04). A store that acknowledges before its write is durable (a
/// write-behind cache) loses them.
pub async fn spi_23_acknowledged_appends_survive_a_kill<S: Restartable>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    if let Some(skip) = unjudged(store, crate::stdio::SPI_EVENT_STORE) {
        return Ok(skip);
    }
    let id = cx.id("kept");
    let mut acked = Vec::new();
    for batch in 0..3u64 {
        let evs = events(&id, batch * 2, 2, "kept");
        ok(
            store.append(&id, batch * 2, evs.clone(), None).await,
            "append",
        )?;
        acked.extend(evs);
    }
    store.kill();
    let log = ok(store.read(&id).await, "read after the kill")?;
    ensure!(
        log == acked,
        "after the adapter was killed and started again, {id} reads sequences {:?}; the {} acknowledged events were sequences {:?}: an acknowledged write did not survive the kill",
        log.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        acked.len(),
        acked.iter().map(|e| e.sequence).collect::<Vec<_>>()
    );
    Ok(Outcome::Pass)
}

/// Sends an append of three events and kills the adapter before reading its answer, at
/// several delays: after the restart the log holds either none of the three or all of
/// them, unchanged, never a part (an append is all or nothing, SPI-23, GAP-27), and
/// the next append continues at the true next sequence.
pub async fn spi_23_an_append_killed_before_its_answer_is_whole_or_absent<S: Restartable>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    if let Some(skip) = unjudged(store, crate::stdio::SPI_EVENT_STORE) {
        return Ok(skip);
    }
    let id = cx.id("torn");
    let first = events(&id, 0, 2, "before");
    ok(store.append(&id, 0, first.clone(), None).await, "append")?;
    let mut log = first;
    for (round, delay) in KILL_DELAYS_MS.iter().enumerate() {
        let next = log.len() as u64;
        let batch = events(&id, next, 3, &format!("killed-{round}"));
        let params = json!({
            "executionId": id,
            "expectedNext": next,
            "events": batch.iter().map(loom_kernel::EventEnvelope::to_value).collect::<Vec<_>>(),
            "fence": null,
        });
        store
            .send_then_kill("eventStore.append", params, Duration::from_millis(*delay))
            .map_err(|e| Failure(format!("sending the append to kill: {}", error_json(&e))))?;
        let after = ok(store.read(&id).await, "read after the kill")?;
        let mut whole = log.clone();
        whole.extend(batch.iter().cloned());
        ensure!(
            after == log || after == whole,
            "an append of sequences {next}..{} was sent and the adapter killed {delay} ms later, before its answer; after the restart {id} reads sequences {:?}: neither the {} events before it nor all {} with the batch (a torn or altered write)",
            next + 2,
            after.iter().map(|e| e.sequence).collect::<Vec<_>>(),
            log.len(),
            whole.len()
        );
        log = after;
    }
    // The stream goes on where it really is.
    let next = log.len() as u64;
    ok(
        store
            .append(&id, next, events(&id, next, 1, "after"), None)
            .await,
        "append at the true next sequence after the kills",
    )?;
    Ok(Outcome::Pass)
}

/// Takes a fence, kills the adapter, and takes it again: the new token must be greater
/// (PLACE-05: tokens never go back, or a zombie from before the crash would get in),
/// and the old holder's append is refused with `fenced`.
pub async fn place_05_fence_tokens_keep_rising_across_a_kill<S: Restartable>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    if let Some(skip) = unjudged(store, crate::stdio::SPI_EVENT_STORE) {
        return Ok(skip);
    }
    let id = cx.id("fenced");
    let old = ok(store.acquire_fence(&id).await, "acquireFence")?;
    ok(
        store
            .append(&id, 0, events(&id, 0, 1, "old"), Some(old))
            .await,
        "append with the first token",
    )?;
    store.kill();
    let new = ok(
        store.acquire_fence(&id).await,
        "acquireFence after the kill",
    )?;
    ensure!(
        new.0 > old.0,
        "the fence token after the kill is {}, not greater than the {} issued before it: tokens went back, so a holder from before the crash is not shut out",
        new.0,
        old.0
    );
    let zombie = store
        .append(&id, 1, events(&id, 1, 1, "zombie"), Some(old))
        .await;
    ensure!(
        matches!(&zombie, Err(e) if matches!(e.kind, StoreErrorKind::Fenced { .. })),
        "after the kill, an append with the superseded token {} answered {}, expected fenced",
        old.0,
        crate::case::outcome_text(&zombie)
    );
    ok(
        store
            .append(&id, 1, events(&id, 1, 1, "new"), Some(FenceToken(new.0)))
            .await,
        "append with the new token",
    )?;
    Ok(Outcome::Pass)
}

/// Observes a stream's anchor, kills the adapter, and observes again: the same stream
/// has the same anchor. Then deletes the stream and creates it again: the new
/// incarnation must be greater than every one before the kill (SPI-07: a store that
/// claims 2.3.0 assigns a monotonic incarnation); a store that keeps its incarnation
/// counter in memory starts it again after a restart.
pub async fn spi_07_incarnations_differ_across_a_kill<S: Restartable>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    if let Some(skip) = unjudged(store, crate::stdio::SPI_EVENT_STORE) {
        return Ok(skip);
    }
    let mut seen = Vec::new();
    for name in ["inc-a", "inc-b"] {
        let id = cx.id(name);
        ok(
            store.append(&id, 0, events(&id, 0, 1, name), None).await,
            "append",
        )?;
        seen.push(ok(store.observe(&id).await, "observe")?.incarnation);
    }
    store.kill();
    let id = cx.id("inc-a");
    let again = ok(store.observe(&id).await, "observe after the kill")?;
    ensure!(
        again.incarnation == seen[0],
        "{id}'s incarnation was {} before the kill and is {} after it, with nothing written in between",
        seen[0],
        again.incarnation
    );
    ok(store.delete_execution(&id).await, "deleteExecution")?;
    ok(
        store
            .append(&id, 0, events(&id, 0, 1, "reborn"), None)
            .await,
        "append after delete",
    )?;
    let reborn = ok(store.observe(&id).await, "observe the new stream")?;
    ensure!(
        seen.iter().all(|i| reborn.incarnation > *i),
        "the stream {id} created again after the kill has incarnation {}, not greater than the incarnations before the kill ({seen:?}): the incarnation counter did not survive the kill (SPI-07: incarnations are monotonic)",
        reborn.incarnation
    );
    Ok(Outcome::Pass)
}

/// Queues two packages and claims one, kills the adapter, then queues a third: the
/// leased package stays leased (its lease still completes), the queued one is claimed
/// next, and dispatch ids keep rising (PLACE-02).
pub async fn place_02_queued_and_leased_packages_survive_a_kill<S: Restartable>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    if let Some(skip) = unjudged(store, crate::stdio::SPI_DISPATCHER) {
        return Ok(skip);
    }
    let target = "kill-target";
    ok(store.register_target(target).await, "registerTarget")?;
    let package = |n: &str| ExecutionPackage {
        execution_id: cx.id(n),
        flow_id: "kill-flow".into(),
        resume_hint: None,
        compute_target: None,
    };
    let d1 = ok(store.dispatch(package("p1")).await, "dispatch p1")?;
    let d2 = ok(store.dispatch(package("p2")).await, "dispatch p2")?;
    let lease = ok(store.claim(target, "w1", 1_000).await, "claim")?
        .ok_or_else(|| Failure("claim found nothing after two dispatches".into()))?;
    ensure!(
        lease.dispatch_id == d1,
        "the first claim leased {:?}, expected {d1:?}",
        lease.dispatch_id
    );
    store.kill();
    let d3 = ok(
        store.dispatch(package("p3")).await,
        "dispatch p3 after the kill",
    )?;
    ensure!(
        d3.0 > d2.0,
        "the dispatch id after the kill is {}, not greater than {} before it: the counter went back",
        d3.0,
        d2.0
    );
    let next = ok(
        store.claim(target, "w2", 1_000).await,
        "claim after the kill",
    )?;
    ensure!(
        next.as_ref().map(|l| l.dispatch_id) == Some(d2),
        "after the kill the next claim leased {:?}, expected the queued {d2:?} (the lease on {d1:?} is live until {})",
        next.map(|l| l.dispatch_id),
        lease.deadline_ms
    );
    ok(
        store.complete(&lease).await,
        "complete the lease taken before the kill",
    )?;
    Ok(Outcome::Pass)
}

/// Writes a durable-state key twice, kills the adapter: the new process reads the last
/// value and version, and a write expecting that version succeeds with the next one
/// (SPI-20).
pub async fn spi_20_durable_state_survives_a_kill<S: Restartable>(store: &S, cx: &Ctx) -> Verdict {
    if let Some(skip) = unjudged(store, crate::stdio::SPI_DURABLE_STATE_STORE) {
        return Ok(skip);
    }
    let key = cx.id("state");
    let v1 = ok(store.put(&key, json!({"n": 1}), None).await, "put")?;
    let v2 = ok(
        store.put(&key, json!({"n": 2}), Some(v1)).await,
        "put again",
    )?;
    store.kill();
    let got = ok(
        DurableStateStore::get(store, &key).await,
        "get after the kill",
    )?;
    ensure!(
        got.as_ref().map(|v| (v.version, v.value.clone())) == Some((v2, json!({"n": 2}))),
        "after the kill {key} reads {got:?}; version {v2} with {{\"n\":2}} was acknowledged"
    );
    let v3 = ok(
        store.put(&key, json!({"n": 3}), Some(v2)).await,
        "put after the kill",
    )?;
    ensure!(
        v3 == v2 + 1,
        "the write after the kill got version {v3}, expected {}",
        v2 + 1
    );
    Ok(Outcome::Pass)
}
