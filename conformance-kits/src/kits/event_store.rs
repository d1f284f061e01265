//! EventStore cases (SPI-02..SPI-14, SPI-21, SPI-23, PLACE-05; GAP-27 reference choices).

use loom_kernel::spi::{
    Anchor, AppendAck, EventStore, EventStoreMethod as M, FenceToken, StoreErrorKind,
    LIST_PAGE_LIMIT_MAX,
};
use loom_kernel::versions::EVENT_STORE_SPI_VERSION;

use crate::case::{
    check_capabilities, check_probe, check_required, ensure, err_kind, events, join_all, ok,
    poll_then_drop, require_claims, require_version, sequences, Ctx,
};
use crate::case::{Failure, Outcome, Verdict};
use crate::fault::FaultInjector;

crate::__kit_cases! {
    kit: EventStoreKit, name: "event-store", bound: EventStore, fresh: false,
    cases: [
        spi_21_capabilities_are_consistent => ["SPI-21", "SPI-01"], "1.0.0", [];
        spi_21_required_methods_answer => ["SPI-01", "SPI-21", "GAP-27"], "1.0.0", [];
        spi_02_claims_match_behaviour => ["SPI-02", "SPI-03", "SPI-14"], "1.0.0", [];
        spi_23_append_then_read_round_trips => ["SPI-23", "GAP-27"], "1.0.0", [];
        spi_23_reads_are_ascending_and_gapless => ["SPI-23"], "1.0.0", [];
        spi_23_stale_expected_next_is_conflict_and_writes_nothing => ["SPI-23", "GAP-27"], "1.0.0", [];
        spi_23_invalid_batch_writes_nothing => ["SPI-23", "GAP-27"], "1.0.0", [];
        spi_23_concurrent_appends_exactly_one_wins => ["SPI-23"], "1.0.0", [];
        spi_23_concurrent_appenders_one_winner_per_sequence => ["SPI-23"], "1.0.0", [];
        spi_23_crash_between_append_and_ack_is_all_or_nothing => ["SPI-23", "GAP-27"], "1.0.0", [];
        spi_23_list_executions_sorted => ["SPI-23", "GAP-27"], "1.0.0", [];
        spi_12_store_is_prefix_agnostic => ["SPI-12", "GAP-27"], "1.0.0", [];
        spi_03_read_range_is_inclusive => ["SPI-03", "GAP-27"], "1.0.0", ["readRange"];
        spi_04_fence_tokens_strictly_increase => ["SPI-04", "PLACE-05"], "1.0.0", ["acquireFence"];
        place_05_zombie_append_after_new_fence_is_refused => ["PLACE-05", "SPI-04"], "1.0.0", ["acquireFence"];
        place_05_fenced_execution_refuses_unfenced_append => ["PLACE-05"], "1.0.0", ["acquireFence"];
        place_05_fence_survives_delete_execution => ["PLACE-05", "SPI-14"], "1.0.0", ["acquireFence", "deleteExecution"];
        spi_05_acquire_fence_if_takes_when_expectation_holds => ["SPI-05", "GAP-27"], "2.1.0", ["acquireFenceIf"];
        spi_05_acquire_fence_if_refuses_stale_expectation => ["SPI-05", "GAP-27"], "2.1.0", ["acquireFenceIf"];
        spi_06_append_if_unchanged_appends_when_unchanged => ["SPI-06"], "2.2.0", ["appendIfUnchanged"];
        spi_06_append_if_unchanged_rejects_after_concurrent_append => ["SPI-06"], "2.2.0", ["appendIfUnchanged"];
        place_05_new_fence_invalidates_old_anchor => ["PLACE-05", "SPI-06"], "2.2.0", ["appendIfUnchanged", "acquireFence"];
        spi_07_incarnation_distinct_anchor => ["SPI-07"], "2.3.0", ["appendIfUnchanged", "deleteExecution"];
        spi_07_deleted_stream_anchor_differs_from_never_created => ["SPI-07"], "2.3.0", ["appendIfUnchanged", "deleteExecution"];
        spi_08_store_now_is_non_negative => ["SPI-08"], "2.4.0", ["storeNow"];
        spi_09_delete_through_keeps_later_events => ["SPI-09"], "2.6.0", ["deleteThrough"];
        spi_09_delete_through_includes_sequence_zero => ["SPI-09"], "2.6.0", ["deleteThrough"];
        spi_09_delete_through_with_concurrent_append => ["SPI-09"], "2.6.0", ["deleteThrough"];
        spi_09_delete_through_unknown_execution_is_not_found => ["SPI-09", "GAP-27"], "2.6.0", ["deleteThrough"];
        spi_11_sealing_capability_is_well_formed => ["SPI-11"], "2.5.0", ["sealingCapability"];
        spi_13_list_executions_page_each_id_once => ["SPI-13"], "1.2.0", ["listExecutionsPage"];
        spi_13_page_limit_is_bounded => ["SPI-13"], "1.2.0", ["listExecutionsPage"];
        spi_14_copy_prefix_rewrites_execution_id => ["SPI-14", "GAP-27"], "1.0.0", ["copyPrefix"];
        spi_14_copy_prefix_refusals => ["SPI-14", "GAP-27"], "1.0.0", ["copyPrefix"];
        spi_14_delete_execution_removes_the_stream => ["SPI-14", "GAP-27"], "1.0.0", ["deleteExecution"];
    ]
}

/// The log of `id` must equal `expected` exactly (same envelopes, same order).
async fn expect_log<S: EventStore>(
    store: &S,
    id: &str,
    expected: &[loom_kernel::EventEnvelope],
    what: &str,
) -> Result<(), Failure> {
    let log = ok(store.read(id).await, what)?;
    ensure!(
        log == expected,
        "{what}: log of {id} has sequences {:?}, expected {:?} (or the envelopes differ)",
        sequences(&log),
        sequences(expected)
    );
    Ok(())
}

/// The claim is consistent and shares the kernel's major version (SPI-21, SPI-01).
pub async fn spi_21_capabilities_are_consistent<S: EventStore>(store: &S, _cx: &Ctx) -> Verdict {
    check_capabilities(&store.capabilities(), EVENT_STORE_SPI_VERSION)
}

/// Each optional method answers `unsupported` iff it is not claimed (SPI-02, SPI-03).
pub async fn spi_02_claims_match_behaviour<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    let caps = store.capabilities();
    let p = &*cx.id("spi_02-probe");
    check_probe(&caps, M::ReadRange, &store.read_range(p, 0, 0).await)?;
    check_probe(
        &caps,
        M::AcquireFence,
        &store.acquire_fence(&format!("{p}-fence")).await,
    )?;
    check_probe(
        &caps,
        M::AcquireFenceIf,
        &store.acquire_fence_if(&format!("{p}-fence-if"), None).await,
    )?;
    check_probe(&caps, M::AppendIfUnchanged, &store.observe(p).await)?;
    check_probe(&caps, M::StoreNow, &store.store_now().await)?;
    check_probe(
        &caps,
        M::SealingCapability,
        &store.sealing_capability().await,
    )?;
    check_probe(&caps, M::DeleteThrough, &store.delete_through(p, 0).await)?;
    check_probe(
        &caps,
        M::CopyPrefix,
        &store.copy_prefix(p, &format!("{p}-copy"), 0).await,
    )?;
    check_probe(&caps, M::DeleteExecution, &store.delete_execution(p).await)?;
    check_probe(
        &caps,
        M::ListExecutionsPage,
        &store.list_executions_page(None, 1).await,
    )?;
    Ok(Outcome::Pass)
}

/// Appended envelopes read back equal, metadata and nested payloads included (SPI-23).
pub async fn spi_23_append_then_read_round_trips<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    let id = &*cx.id("spi_23-round-trip");
    let batch = events(id, 0, 3, "a");
    let ack = ok(store.append(id, 0, batch.clone(), None).await, "append")?;
    ensure!(
        ack == AppendAck {
            first_sequence: 0,
            next_sequence: 3
        },
        "append ack {ack:?}, expected 0..3"
    );
    expect_log(store, id, &batch, "read after append").await?;
    Ok(Outcome::Pass)
}

/// Several appends read back ascending and gapless (SPI-23).
pub async fn spi_23_reads_are_ascending_and_gapless<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    let id = &*cx.id("spi_23-gapless");
    let mut all = Vec::new();
    let mut next = 0;
    for n in [1, 4, 2] {
        let batch = events(id, next, n, "g");
        ok(store.append(id, next, batch.clone(), None).await, "append")?;
        all.extend(batch);
        next += n;
    }
    let log = ok(store.read(id).await, "read")?;
    ensure!(
        sequences(&log) == (0..7).collect::<Vec<_>>(),
        "sequences {:?}, expected 0..7",
        sequences(&log)
    );
    ensure!(log == all, "the envelopes read differ from those appended");
    Ok(Outcome::Pass)
}

/// A stale `expected_next` is a `Conflict` naming both sequences; nothing is written
/// (SPI-23, GAP-27).
pub async fn spi_23_stale_expected_next_is_conflict_and_writes_nothing<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_23-conflict");
    let first = events(id, 0, 2, "first");
    ok(store.append(id, 0, first.clone(), None).await, "append")?;
    for expected in [0u64, 1, 5] {
        let e = err_kind(
            store
                .append(id, expected, events(id, expected, 1, "late"), None)
                .await,
            "conflict",
            "stale append",
        )?;
        ensure!(
            e.kind
                == StoreErrorKind::Conflict {
                    expected_next: expected,
                    actual_next: 2
                },
            "conflict facts {:?}, expected expected_next={expected} actual_next=2",
            e.kind
        );
    }
    expect_log(store, id, &first, "after refused appends").await?;
    Ok(Outcome::Pass)
}

/// Batches that break the contract are `InvalidArgument` and write nothing (GAP-27).
pub async fn spi_23_invalid_batch_writes_nothing<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    let id = &*cx.id("spi_23-invalid");
    let mut gap = events(id, 0, 3, "gap");
    gap[2].sequence = 3;
    err_kind(
        store.append(id, 0, gap, None).await,
        "invalid-argument",
        "batch with a gap",
    )?;
    let mut foreign = events(id, 0, 2, "foreign");
    foreign[1].execution_id = cx.id("someone-else");
    err_kind(
        store.append(id, 0, foreign, None).await,
        "invalid-argument",
        "batch naming another execution",
    )?;
    err_kind(
        store.append(id, 0, Vec::new(), None).await,
        "invalid-argument",
        "empty batch",
    )?;
    err_kind(
        store.append(id, 0, events(id, 1, 2, "offset"), None).await,
        "invalid-argument",
        "batch not starting at expected_next",
    )?;
    expect_log(store, id, &[], "after invalid batches").await?;
    let listed = ok(store.list_executions().await, "list")?;
    ensure!(
        !listed.iter().any(|x| x == id),
        "a refused append created the stream"
    );
    Ok(Outcome::Pass)
}

/// Two appends racing for the same sequence: exactly one wins, the log is the winner's
/// batch exactly (SPI-23, optimistic concurrency).
pub async fn spi_23_concurrent_appends_exactly_one_wins<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_23-race");
    let a = events(id, 0, 3, "a");
    let b = events(id, 0, 2, "b");
    let results = join_all(vec![
        store.append(id, 0, a.clone(), None),
        store.append(id, 0, b.clone(), None),
    ])
    .await;
    let wins: Vec<bool> = results.iter().map(Result::is_ok).collect();
    ensure!(
        wins.iter().filter(|w| **w).count() == 1,
        "expected exactly one winner, got {results:?}"
    );
    for r in &results {
        if let Err(e) = r {
            ensure!(
                matches!(
                    e.kind,
                    StoreErrorKind::Conflict {
                        expected_next: 0,
                        ..
                    }
                ),
                "loser failed with {e}, expected conflict"
            );
        }
    }
    let winner = if wins[0] { a } else { b };
    expect_log(store, id, &winner, "after the race").await?;
    Ok(Outcome::Pass)
}

/// `listExecutions` is sorted and lists every live stream (GAP-27).
pub async fn spi_23_list_executions_sorted<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    let ids = [
        &*cx.id("spi_23-list-b"),
        &*cx.id("spi_23-list-a"),
        &*cx.id("spi_23-list-c"),
        &*cx.id("spi_23-list-A"),
    ];
    for id in ids {
        ok(
            store.append(id, 0, events(id, 0, 1, "l"), None).await,
            "append",
        )?;
    }
    let listed = ok(store.list_executions().await, "list")?;
    ensure!(
        listed.windows(2).all(|w| w[0] < w[1]),
        "list is not strictly ascending: {listed:?}"
    );
    for id in ids {
        ensure!(
            listed.iter().filter(|x| *x == id).count() == 1,
            "{id} is not listed exactly once"
        );
    }
    Ok(Outcome::Pass)
}

/// `readRange(from, to)` is inclusive at both ends; `from > to` is invalid (GAP-27).
pub async fn spi_03_read_range_is_inclusive<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    require_claims!(store.capabilities(), M::ReadRange);
    let id = &*cx.id("spi_03-range");
    ok(
        store.append(id, 0, events(id, 0, 10, "r"), None).await,
        "append",
    )?;
    for (from, to, want) in [
        (2u64, 5u64, (2..=5).collect::<Vec<u64>>()),
        (7, 100, (7..=9).collect()),
        (3, 3, vec![3]),
        (20, 30, vec![]),
    ] {
        let got = sequences(&ok(store.read_range(id, from, to).await, "readRange")?);
        ensure!(
            got == want,
            "readRange({from}, {to}) gave {got:?}, expected {want:?}"
        );
    }
    err_kind(
        store.read_range(id, 5, 2).await,
        "invalid-argument",
        "readRange(5, 2)",
    )?;
    let none = ok(
        store.read_range(&cx.id("spi_03-unknown"), 0, 10).await,
        "readRange of an unknown id",
    )?;
    ensure!(
        none.is_empty(),
        "an unknown id read as {} events",
        none.len()
    );
    Ok(Outcome::Pass)
}

/// Fence tokens are positive and strictly increasing per execution (SPI-04, PLACE-05).
pub async fn spi_04_fence_tokens_strictly_increase<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    require_claims!(store.capabilities(), M::AcquireFence);
    let id = &*cx.id("spi_04-fence");
    let mut last = 0;
    for _ in 0..4 {
        let FenceToken(t) = ok(store.acquire_fence(id).await, "acquireFence")?;
        ensure!(t > last, "token {t} does not exceed the previous {last}");
        last = t;
    }
    Ok(Outcome::Pass)
}

/// Once B holds the fence, A's appends fail and write nothing (PLACE-05).
pub async fn place_05_zombie_append_after_new_fence_is_refused<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AcquireFence);
    let id = &*cx.id("place_05-zombie");
    let a = ok(store.acquire_fence(id).await, "A acquires")?;
    let first = events(id, 0, 2, "A");
    ok(
        store.append(id, 0, first.clone(), Some(a)).await,
        "A appends while holding the fence",
    )?;
    let b = ok(store.acquire_fence(id).await, "B acquires")?;
    let e = err_kind(
        store
            .append(id, 2, events(id, 2, 1, "zombie"), Some(a))
            .await,
        "fenced",
        "zombie A appends",
    )?;
    ensure!(
        e.kind
            == StoreErrorKind::Fenced {
                presented: Some(a.0),
                current: b.0
            },
        "fenced facts {:?}, expected presented={} current={}",
        e.kind,
        a.0,
        b.0
    );
    expect_log(store, id, &first, "after the zombie's append").await?;
    ok(
        store.append(id, 2, events(id, 2, 1, "B"), Some(b)).await,
        "B appends",
    )?;
    Ok(Outcome::Pass)
}

/// A fenced execution refuses an append without a token, and a token the store never
/// issued is refused on an unfenced one (PLACE-05, GAP-27).
pub async fn place_05_fenced_execution_refuses_unfenced_append<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AcquireFence);
    let id = &*cx.id("place_05-unfenced");
    let t = ok(store.acquire_fence(id).await, "acquire")?;
    let e = err_kind(
        store.append(id, 0, events(id, 0, 1, "x"), None).await,
        "fenced",
        "append without token",
    )?;
    ensure!(
        e.kind
            == StoreErrorKind::Fenced {
                presented: None,
                current: t.0
            },
        "fenced facts {:?}",
        e.kind
    );
    expect_log(store, id, &[], "after the refused append").await?;
    let other = &*cx.id("place_05-never-fenced");
    err_kind(
        store
            .append(other, 0, events(other, 0, 1, "x"), Some(FenceToken(7)))
            .await,
        "fenced",
        "unissued token",
    )?;
    Ok(Outcome::Pass)
}

/// Deleting an execution keeps its fence: a recreated stream still needs the token, and
/// the next token is larger (reference-defined: tokens never go back).
pub async fn place_05_fence_survives_delete_execution<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AcquireFence, M::DeleteExecution);
    let id = &*cx.id("place_05-fence-delete");
    let t1 = ok(store.acquire_fence(id).await, "acquire")?;
    ok(
        store.append(id, 0, events(id, 0, 2, "x"), Some(t1)).await,
        "append",
    )?;
    ok(store.delete_execution(id).await, "deleteExecution")?;
    err_kind(
        store.append(id, 0, events(id, 0, 1, "y"), None).await,
        "fenced",
        "append without token after delete",
    )?;
    ok(
        store.append(id, 0, events(id, 0, 1, "y"), Some(t1)).await,
        "append with token after delete",
    )?;
    let t2 = ok(store.acquire_fence(id).await, "acquire again")?;
    ensure!(t2 > t1, "token {t2:?} after delete does not exceed {t1:?}");
    Ok(Outcome::Pass)
}

/// `acquireFenceIf` takes the fence when the expectation is current (SPI-05).
pub async fn spi_05_acquire_fence_if_takes_when_expectation_holds<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AcquireFenceIf);
    let id = &*cx.id("spi_05-if");
    let t1 = ok(
        store.acquire_fence_if(id, None).await,
        "acquireFenceIf(None) on a never-fenced id",
    )?;
    let t2 = ok(
        store.acquire_fence_if(id, Some(t1)).await,
        "acquireFenceIf(current)",
    )?;
    ensure!(t2 > t1, "token {t2:?} does not exceed {t1:?}");
    ok(
        store.append(id, 0, events(id, 0, 1, "x"), Some(t2)).await,
        "append with the new token",
    )?;
    Ok(Outcome::Pass)
}

/// A stale expectation is `FenceConflict` naming both tokens, and nothing changes (SPI-05).
pub async fn spi_05_acquire_fence_if_refuses_stale_expectation<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AcquireFenceIf);
    let id = &*cx.id("spi_05-stale");
    let t1 = ok(store.acquire_fence_if(id, None).await, "first")?;
    let t2 = ok(store.acquire_fence_if(id, Some(t1)).await, "second")?;
    let e = err_kind(
        store.acquire_fence_if(id, Some(t1)).await,
        "fence-conflict",
        "stale expectation",
    )?;
    ensure!(
        e.kind
            == StoreErrorKind::FenceConflict {
                expected: Some(t1.0),
                current: Some(t2.0)
            },
        "facts {:?}",
        e.kind
    );
    err_kind(
        store.acquire_fence_if(id, None).await,
        "fence-conflict",
        "expecting never-fenced",
    )?;
    ok(
        store.append(id, 0, events(id, 0, 1, "x"), Some(t2)).await,
        "the current token still works",
    )?;
    Ok(Outcome::Pass)
}

/// With no change since the observation, `appendIfUnchanged` appends (SPI-06).
pub async fn spi_06_append_if_unchanged_appends_when_unchanged<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AppendIfUnchanged);
    let id = &*cx.id("spi_06-unchanged");
    let mut log = events(id, 0, 2, "x");
    ok(store.append(id, 0, log.clone(), None).await, "append")?;
    let anchor = ok(store.observe(id).await, "observe")?;
    ensure!(
        anchor.next_sequence == 2,
        "anchor {anchor:?} does not point at sequence 2"
    );
    let late = events(id, 2, 1, "late");
    let ack = ok(
        store.append_if_unchanged(id, anchor, late.clone()).await,
        "appendIfUnchanged",
    )?;
    ensure!(ack.next_sequence == 3, "ack {ack:?}");
    log.extend(late);
    expect_log(store, id, &log, "after the conditional append").await?;
    Ok(Outcome::Pass)
}

/// A concurrent append between observe and `appendIfUnchanged` makes it fail with
/// nothing written (SPI-06).
pub async fn spi_06_append_if_unchanged_rejects_after_concurrent_append<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AppendIfUnchanged);
    let id = &*cx.id("spi_06-changed");
    let mut log = events(id, 0, 1, "x");
    ok(store.append(id, 0, log.clone(), None).await, "append")?;
    let anchor = ok(store.observe(id).await, "observe")?;
    let concurrent = events(id, 1, 1, "concurrent");
    ok(
        store.append(id, 1, concurrent.clone(), None).await,
        "concurrent append",
    )?;
    log.extend(concurrent);
    err_kind(
        store
            .append_if_unchanged(id, anchor, events(id, 1, 1, "late"))
            .await,
        "anchor-changed",
        "stale anchor",
    )?;
    expect_log(store, id, &log, "after the refused conditional append").await?;
    Ok(Outcome::Pass)
}

/// Acquiring a fence changes the anchor, so a zombie's observation cannot slip an append
/// past the new holder (PLACE-05; reference-defined anchor, GAP-27).
pub async fn place_05_new_fence_invalidates_old_anchor<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AppendIfUnchanged, M::AcquireFence);
    let id = &*cx.id("place_05-anchor");
    let t = ok(store.acquire_fence(id).await, "acquire")?;
    ok(
        store.append(id, 0, events(id, 0, 1, "x"), Some(t)).await,
        "append",
    )?;
    let anchor = ok(store.observe(id).await, "observe")?;
    ok(store.acquire_fence(id).await, "new holder acquires")?;
    err_kind(
        store
            .append_if_unchanged(id, anchor, events(id, 1, 1, "zombie"))
            .await,
        "anchor-changed",
        "zombie's conditional append",
    )?;
    Ok(Outcome::Pass)
}

/// Delete + recreate with byte-identical sequence-0 envelopes gives a different anchor,
/// and the incarnation appears in no event (SPI-07).
pub async fn spi_07_incarnation_distinct_anchor<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    require_version!(store.capabilities(), "2.3.0");
    require_claims!(
        store.capabilities(),
        M::AppendIfUnchanged,
        M::DeleteExecution
    );
    let id = &*cx.id("spi_07-reborn");
    let e0 = events(id, 0, 1, "same");
    ok(
        store.append(id, 0, e0.clone(), None).await,
        "first incarnation",
    )?;
    let old = ok(store.observe(id).await, "observe")?;
    ensure!(
        ok(store.delete_execution(id).await, "delete")?,
        "deleteExecution reported nothing deleted"
    );
    ok(
        store.append(id, 0, e0.clone(), None).await,
        "second incarnation",
    )?;
    let new = ok(store.observe(id).await, "observe again")?;
    ensure!(
        old != new,
        "the anchor {old:?} did not change across incarnations"
    );
    err_kind(
        store
            .append_if_unchanged(id, old, events(id, 1, 1, "late"))
            .await,
        "anchor-changed",
        "old incarnation's anchor",
    )?;
    expect_log(store, id, &e0, "the recreated log").await?;
    let text = serde_json::to_string(&ok(store.read(id).await, "read")?)
        .map_err(|e| Failure(e.to_string()))?;
    ensure!(
        !text.to_ascii_lowercase().contains("incarnation"),
        "an event carries the incarnation: {text}"
    );
    Ok(Outcome::Pass)
}

/// The anchor of a deleted stream differs from that of a never-created one, so
/// create-then-delete between observe and `appendIfUnchanged` is detected (SPI-07).
pub async fn spi_07_deleted_stream_anchor_differs_from_never_created<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_version!(store.capabilities(), "2.3.0");
    require_claims!(
        store.capabilities(),
        M::AppendIfUnchanged,
        M::DeleteExecution
    );
    let id = &*cx.id("spi_07-aba");
    let never = ok(store.observe(id).await, "observe a fresh id")?;
    ensure!(
        never.next_sequence == 0,
        "a fresh id's anchor {never:?} is not at sequence 0"
    );
    ok(
        store.append(id, 0, events(id, 0, 1, "x"), None).await,
        "create",
    )?;
    ok(store.delete_execution(id).await, "delete")?;
    let deleted: Anchor = ok(store.observe(id).await, "observe after delete")?;
    ensure!(
        deleted != never,
        "create+delete left the anchor unchanged ({never:?})"
    );
    err_kind(
        store
            .append_if_unchanged(id, never, events(id, 0, 1, "y"))
            .await,
        "anchor-changed",
        "anchor from before the create",
    )?;
    Ok(Outcome::Pass)
}

/// `storeNow` is a non-negative integer of epoch ms (SPI-08). Not required to be
/// non-decreasing: database time can step back.
pub async fn spi_08_store_now_is_non_negative<S: EventStore>(store: &S, _cx: &Ctx) -> Verdict {
    require_claims!(store.capabilities(), M::StoreNow);
    let now = ok(store.store_now().await, "storeNow")?;
    ensure!(now >= 0, "storeNow returned {now}");
    Ok(Outcome::Pass)
}

/// `deleteThrough(k)` removes exactly the events `<= k`; later events and the next
/// append sequence are unchanged (SPI-09).
pub async fn spi_09_delete_through_keeps_later_events<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::DeleteThrough);
    let id = &*cx.id("spi_09-keep");
    let all = events(id, 0, 10, "x");
    ok(store.append(id, 0, all.clone(), None).await, "append")?;
    let n = ok(store.delete_through(id, 4).await, "deleteThrough(4)")?;
    ensure!(n == 5, "deleteThrough(4) deleted {n}, expected 5");
    expect_log(store, id, &all[5..], "after deleteThrough").await?;
    let e = err_kind(
        store.append(id, 5, events(id, 5, 1, "y"), None).await,
        "conflict",
        "append at a deleted sequence",
    )?;
    ensure!(
        matches!(
            e.kind,
            StoreErrorKind::Conflict {
                actual_next: 10,
                ..
            }
        ),
        "next sequence moved: {:?}",
        e.kind
    );
    ok(
        store.append(id, 10, events(id, 10, 1, "y"), None).await,
        "append at the old head",
    )?;
    Ok(Outcome::Pass)
}

/// Sequence 0 is included; deleting through the head leaves a live, empty stream (SPI-09).
pub async fn spi_09_delete_through_includes_sequence_zero<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::DeleteThrough);
    let id = &*cx.id("spi_09-zero");
    let all = events(id, 0, 3, "x");
    ok(store.append(id, 0, all.clone(), None).await, "append")?;
    ensure!(
        ok(store.delete_through(id, 0).await, "deleteThrough(0)")? == 1,
        "deleteThrough(0) did not delete sequence 0"
    );
    expect_log(store, id, &all[1..], "after deleteThrough(0)").await?;
    ensure!(
        ok(store.delete_through(id, 2).await, "deleteThrough(2)")? == 2,
        "deleteThrough(2) miscounted"
    );
    expect_log(store, id, &[], "after deleting through the head").await?;
    let listed = ok(store.list_executions().await, "list")?;
    ensure!(
        listed.iter().any(|x| x == id),
        "an emptied stream is no longer listed"
    );
    ok(
        store.append(id, 3, events(id, 3, 1, "y"), None).await,
        "append after emptying",
    )?;
    Ok(Outcome::Pass)
}

/// `deleteThrough` racing an append: whatever the interleaving, no event `<= through`
/// remains and every appended event survives (SPI-09).
pub async fn spi_09_delete_through_with_concurrent_append<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::DeleteThrough);
    for order in 0..2 {
        let id = cx.id(&format!("spi_09-race-{order}"));
        ok(
            store.append(&id, 0, events(&id, 0, 5, "x"), None).await,
            "append",
        )?;
        let appended = events(&id, 5, 3, "concurrent");
        let (deleted, added) = if order == 0 {
            let (d, a) = crate::case::join2(
                store.delete_through(&id, 4),
                store.append(&id, 5, appended.clone(), None),
            )
            .await;
            (d, a)
        } else {
            let (a, d) = crate::case::join2(
                store.append(&id, 5, appended.clone(), None),
                store.delete_through(&id, 4),
            )
            .await;
            (d, a)
        };
        ok(deleted, "deleteThrough")?;
        ok(added, "concurrent append")?;
        expect_log(store, &id, &appended, "after the race").await?;
    }
    Ok(Outcome::Pass)
}

/// `deleteThrough` on an unknown execution is `NotFound` (reference-defined).
pub async fn spi_09_delete_through_unknown_execution_is_not_found<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::DeleteThrough);
    err_kind(
        store.delete_through(&cx.id("spi_09-unknown"), 3).await,
        "not-found",
        "deleteThrough of an unknown id",
    )?;
    Ok(Outcome::Pass)
}

/// A claimed `sealingCapability` answers; a capability names a cipher and what it
/// covers (SPI-11).
pub async fn spi_11_sealing_capability_is_well_formed<S: EventStore>(
    store: &S,
    _cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::SealingCapability);
    if let Some(cap) = ok(store.sealing_capability().await, "sealingCapability")? {
        ensure!(
            !cap.cipher.is_empty() && !cap.covers.is_empty(),
            "malformed sealing capability {cap:?}"
        );
    }
    Ok(Outcome::Pass)
}

/// Paging returns each id exactly once, pages are bounded, and the last page has no
/// cursor (SPI-13).
pub async fn spi_13_list_executions_page_each_id_once<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::ListExecutionsPage);
    let ours: Vec<String> = (0..23)
        .map(|i| cx.id(&format!("spi_13-page-{i:03}")))
        .collect();
    for id in &ours {
        ok(
            store.append(id, 0, events(id, 0, 1, "p"), None).await,
            "append",
        )?;
    }
    let limit = 5;
    let mut seen: Vec<String> = Vec::new();
    let mut cursor = None;
    for _ in 0..1000 {
        let page = ok(
            store.list_executions_page(cursor.clone(), limit).await,
            "listExecutionsPage",
        )?;
        ensure!(
            page.ids.len() <= limit,
            "a page of {} ids exceeds the limit {limit}",
            page.ids.len()
        );
        seen.extend(page.ids);
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    ensure!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "paged ids are not strictly ascending (an id repeated?)"
    );
    for id in &ours {
        ensure!(
            seen.iter().filter(|x| *x == id).count() == 1,
            "{id} was not paged exactly once"
        );
    }
    Ok(Outcome::Pass)
}

/// A page limit of 0 or above `LIST_PAGE_LIMIT_MAX` is invalid (SPI-13).
pub async fn spi_13_page_limit_is_bounded<S: EventStore>(store: &S, _cx: &Ctx) -> Verdict {
    require_claims!(store.capabilities(), M::ListExecutionsPage);
    err_kind(
        store.list_executions_page(None, 0).await,
        "invalid-argument",
        "limit 0",
    )?;
    err_kind(
        store
            .list_executions_page(None, LIST_PAGE_LIMIT_MAX + 1)
            .await,
        "invalid-argument",
        "limit above the max",
    )?;
    ok(
        store.list_executions_page(None, LIST_PAGE_LIMIT_MAX).await,
        "limit at the max",
    )?;
    Ok(Outcome::Pass)
}

/// `copyPrefix` copies events `<= through` into an empty target with its own id
/// (SPI-14; reference-defined, GAP-27).
pub async fn spi_14_copy_prefix_rewrites_execution_id<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::CopyPrefix);
    let (src, dst) = (&*cx.id("spi_14-src"), &*cx.id("spi_14-dst"));
    let all = events(src, 0, 6, "x");
    ok(store.append(src, 0, all.clone(), None).await, "append")?;
    let ack = ok(store.copy_prefix(src, dst, 3).await, "copyPrefix")?;
    ensure!(
        ack == AppendAck {
            first_sequence: 0,
            next_sequence: 4
        },
        "ack {ack:?}"
    );
    let want: Vec<_> = all[..4]
        .iter()
        .map(|e| loom_kernel::EventEnvelope {
            execution_id: dst.to_string(),
            ..e.clone()
        })
        .collect();
    expect_log(store, dst, &want, "the copy").await?;
    expect_log(store, src, &all, "the source").await?;
    ok(
        store.append(dst, 4, events(dst, 4, 1, "y"), None).await,
        "append to the copy",
    )?;
    Ok(Outcome::Pass)
}

/// `copyPrefix` refuses a live target, a `through` past the head and an unknown source
/// (reference-defined, GAP-27).
pub async fn spi_14_copy_prefix_refusals<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    require_claims!(store.capabilities(), M::CopyPrefix);
    let (src, dst) = (&*cx.id("spi_14-refuse-src"), &*cx.id("spi_14-refuse-dst"));
    ok(
        store.append(src, 0, events(src, 0, 3, "x"), None).await,
        "append source",
    )?;
    let taken = events(dst, 0, 1, "taken");
    ok(
        store.append(dst, 0, taken.clone(), None).await,
        "append target",
    )?;
    err_kind(
        store.copy_prefix(src, dst, 1).await,
        "conflict",
        "copy into a live target",
    )?;
    expect_log(store, dst, &taken, "the target after the refusal").await?;
    err_kind(
        store.copy_prefix(src, &cx.id("spi_14-refuse-new"), 3).await,
        "invalid-argument",
        "through past the head",
    )?;
    err_kind(
        store
            .copy_prefix(&cx.id("spi_14-nobody"), &cx.id("spi_14-refuse-new"), 0)
            .await,
        "not-found",
        "unknown source",
    )?;
    Ok(Outcome::Pass)
}

/// `deleteExecution` removes the stream: empty read, not listed, appends restart at 0
/// (SPI-14; reference-defined).
pub async fn spi_14_delete_execution_removes_the_stream<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::DeleteExecution);
    let id = &*cx.id("spi_14-delete");
    ok(
        store.append(id, 0, events(id, 0, 3, "x"), None).await,
        "append",
    )?;
    ensure!(
        ok(store.delete_execution(id).await, "delete")?,
        "delete reported nothing deleted"
    );
    expect_log(store, id, &[], "after delete").await?;
    ensure!(
        !ok(store.list_executions().await, "list")?
            .iter()
            .any(|x| x == id),
        "a deleted id is still listed"
    );
    ensure!(
        !ok(store.delete_execution(id).await, "delete again")?,
        "a second delete reported a deletion"
    );
    let e = err_kind(
        store.append(id, 3, events(id, 3, 1, "y"), None).await,
        "conflict",
        "append at the old head",
    )?;
    ensure!(
        matches!(e.kind, StoreErrorKind::Conflict { actual_next: 0, .. }),
        "facts {:?}",
        e.kind
    );
    ok(
        store.append(id, 0, events(id, 0, 1, "y"), None).await,
        "append at 0 after delete",
    )?;
    Ok(Outcome::Pass)
}

/// The required methods answer on a fresh id: `append`, `read` and `listExecutions`
/// never say `unsupported`, whatever version is claimed (SPI-01, SPI-21).
pub async fn spi_21_required_methods_answer<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    let id = &*cx.id("spi_21-required");
    check_required(
        "append",
        &store.append(id, 0, events(id, 0, 1, "r"), None).await,
    )?;
    check_required("read", &store.read(id).await)?;
    check_required("listExecutions", &store.list_executions().await)?;
    Ok(Outcome::Pass)
}

/// Rounds of racing appenders: in each round `RACERS` appends compete for the same
/// next sequence, exactly one wins, the others are `conflict`, and the final log is the
/// winners' batches in order (SPI-23).
pub async fn spi_23_concurrent_appenders_one_winner_per_sequence<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    const RACERS: usize = 4;
    const ROUNDS: u64 = 3;
    let id = &*cx.id("spi_23-rounds");
    let mut log = Vec::new();
    for round in 0..ROUNDS {
        let next = log.len() as u64;
        let batches: Vec<_> = (0..RACERS)
            .map(|r| {
                events(
                    id,
                    next,
                    1 + r as u64 % 2,
                    &format!("round{round}-racer{r}"),
                )
            })
            .collect();
        let results = join_all(
            batches
                .iter()
                .map(|b| store.append(id, next, b.clone(), None))
                .collect(),
        )
        .await;
        let winners: Vec<usize> = (0..RACERS).filter(|i| results[*i].is_ok()).collect();
        ensure!(
            winners.len() == 1,
            "round {round} on {id} at sequence {next}: {} appenders won, expected exactly one",
            winners.len()
        );
        for r in results.iter().filter_map(|r| r.as_ref().err()) {
            ensure!(
                matches!(r.kind, StoreErrorKind::Conflict { .. }),
                "round {round} on {id}: a loser failed with {r}, expected conflict"
            );
        }
        log.extend(batches[winners[0]].clone());
    }
    expect_log(store, id, &log, "after the rounds").await?;
    Ok(Outcome::Pass)
}

/// Most polls the crash case gives an append before it drops it.
const CRASH_POLLS_MAX: usize = 4;

/// A crash between the append and its acknowledgement leaves all of the batch or none
/// of it: (1) the caller drops the append future after 1..=CRASH_POLLS_MAX polls;
/// (2) the acknowledgement of a completed append is lost (a fault-injecting wrapper),
/// and a retry of the same batch is a `conflict`, never a duplicate (SPI-23, GAP-27).
pub async fn spi_23_crash_between_append_and_ack_is_all_or_nothing<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    for polls in 1..=CRASH_POLLS_MAX {
        let id = &*cx.id(&format!("spi_23-crash-{polls}"));
        let first = events(id, 0, 2, "first");
        ok(store.append(id, 0, first.clone(), None).await, "append")?;
        let batch = events(id, 2, 5, "crashing");
        let _ = poll_then_drop(store.append(id, 2, batch.clone(), None), polls);
        let log = ok(store.read(id).await, "read after the crash")?;
        let mut whole = first.clone();
        whole.extend(batch);
        ensure!(
            log == first || log == whole,
            "after an append to {id} was dropped at poll {polls}, the log has sequences {:?}: neither none nor all of the batch 2..=6",
            sequences(&log)
        );
    }
    let id = &*cx.id("spi_23-lost-ack");
    let faulty = FaultInjector::new(store);
    let batch = events(id, 0, 3, "lost-ack");
    faulty.drop_next_ack();
    err_kind(
        faulty.append(id, 0, batch.clone(), None).await,
        "backend",
        "append with a lost ack",
    )?;
    expect_log(store, id, &batch, "after the lost acknowledgement").await?;
    let retry = store.append(id, 0, batch.clone(), None).await;
    ensure!(
        matches!(retry, Err(ref e) if matches!(e.kind, StoreErrorKind::Conflict { expected_next: 0, actual_next: 3 })),
        "retrying the acknowledged-but-lost batch on {id} gave {retry:?}, expected conflict 0 vs 3"
    );
    expect_log(store, id, &batch, "after the retry").await?;
    Ok(Outcome::Pass)
}

/// Stores stay prefix-agnostic: a stream whose id has the reserved
/// `__loom_quarantine__:` prefix is an ordinary stream to the store; the runtime, not
/// the store, protects the prefix (SPI-12, GAP-27).
pub async fn spi_12_store_is_prefix_agnostic<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    let id = &*format!("__loom_quarantine__:{}", cx.id("chain"));
    let batch = events(id, 0, 2, "q");
    ok(
        store.append(id, 0, batch.clone(), None).await,
        "append to a control stream",
    )?;
    expect_log(store, id, &batch, "the control stream").await?;
    Ok(Outcome::Pass)
}
