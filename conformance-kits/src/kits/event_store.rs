//! EventStore cases (SPI-02..SPI-14, SPI-21, SPI-23, PLACE-05; GAP-27 reference choices).

use loom_kernel::spi::{
    Anchor, AppendAck, EventStore, EventStoreMethod as M, FenceToken, StoreErrorKind,
    LIST_PAGE_LIMIT_MAX,
};
use loom_kernel::versions::EVENT_STORE_SPI_VERSION;

use crate::case::{
    check_capabilities, check_probe, check_required, ensure, err_kind, error_json, events,
    join_all, kind_json, ok, outcome_text, poll_then_drop, require_claims, require_version,
    sequences, Ctx,
};
use crate::case::{Failure, Outcome, Verdict};
use crate::fault::FaultInjector;

crate::__kit_cases! {
    kit: EventStoreKit, name: "event-store", bound: EventStore, fresh: false, claims: claims_of,
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
        spi_07_incarnation_distinct_anchor => ["SPI-07"], "2.3.0", ["SPI 2.3.0", "appendIfUnchanged", "deleteExecution"];
        spi_07_deleted_stream_anchor_differs_from_never_created => ["SPI-07"], "2.3.0", ["SPI 2.3.0", "appendIfUnchanged", "deleteExecution"];
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
        spi_03_read_range_boundaries_on_a_long_stream => ["SPI-03", "SPI-23", "GAP-27"], "1.0.0", ["readRange"];
        spi_23_append_batch_limit_from_both_sides => ["SPI-23", "GAP-27"], "1.0.0", [];
        spi_23_bad_envelope_at_any_position_writes_nothing => ["SPI-23", "GAP-27"], "1.0.0", [];
        spi_23_conflict_facts_from_both_sides => ["SPI-23", "GAP-27"], "1.0.0", [];
        spi_23_values_read_back_identical => ["SPI-23"], "1.0.0", [];
        spi_23_id_length_limit_in_bytes => ["SPI-23", "GAP-27"], "1.0.0", [];
        place_05_fence_is_checked_before_sequence => ["PLACE-05", "GAP-27"], "1.0.0", ["acquireFence"];
        place_05_fence_token_compared_from_both_sides => ["PLACE-05", "SPI-04"], "1.0.0", ["acquireFence"];
        spi_05_acquire_fence_if_compared_from_both_sides => ["SPI-05", "GAP-27"], "2.1.0", ["acquireFenceIf"];
        spi_05_acquire_fence_if_sees_the_fence_a_deleted_stream_keeps => ["SPI-05", "PLACE-05"], "2.1.0", ["acquireFenceIf", "deleteExecution"];
        spi_06_batch_is_checked_before_the_anchor => ["SPI-06", "GAP-27"], "2.2.0", ["appendIfUnchanged"];
        spi_08_store_now_is_epoch_ms_near_the_callers_clock => ["SPI-08"], "2.4.0", ["storeNow"];
        spi_09_delete_through_at_zero_head_and_past_head => ["SPI-09", "GAP-27"], "2.6.0", ["deleteThrough"];
        spi_13_exactly_full_last_page_has_no_cursor => ["SPI-13"], "1.2.0", ["listExecutionsPage"];
        spi_14_copy_prefix_checks_in_order => ["SPI-14", "GAP-27"], "1.0.0", ["copyPrefix"];
        gap_27_out_of_range_ids_follow_the_table => ["GAP-27", "SPI-23"], "1.0.0", [];
        spi_23_hostile_ids_are_distinct_streams_in_byte_order => ["SPI-23", "GAP-27"], "1.0.0", [];
    ]
}

/// What the store claims, for the case table's `needs`.
fn claims_of<S: EventStore>(store: &S) -> crate::case::Claims {
    crate::case::Claims::of(&store.capabilities())
}

/// The log of `id` must equal `expected` exactly (same envelopes, same order).
async fn expect_log<S: EventStore>(
    store: &S,
    id: &str,
    expected: &[loom_kernel::EventEnvelope],
    what: &str,
) -> Result<(), Failure> {
    let log = ok(store.read(id).await, what)?;
    if log == expected {
        return Ok(());
    }
    let (got, want) = (sequences(&log), sequences(expected));
    ensure!(
        got == want,
        "{what}: log of {id} has sequences {got:?}, expected {want:?}"
    );
    Err(Failure(envelope_difference(what, id, &log, expected)))
}

/// Where two logs of the same sequences first differ: the envelope, the JSON pointer
/// of the field, and both values there (`absent` for a field one side lacks), so a
/// store that drops or rewrites one field reads as that.
fn envelope_difference(
    what: &str,
    id: &str,
    got: &[loom_kernel::EventEnvelope],
    want: &[loom_kernel::EventEnvelope],
) -> String {
    let Some((i, (g, w))) = got.iter().zip(want).enumerate().find(|(_, (g, w))| g != w) else {
        return format!("{what}: log of {id} differs from the one written");
    };
    let (g, w) = (g.to_value(), w.to_value());
    let at = loom_report::first_difference(&w, &g).unwrap_or_default();
    let show = |v: &serde_json::Value| {
        v.pointer(&at)
            .map_or("absent".to_owned(), |x| x.to_string())
    };
    format!(
        "{what}: log of {id} has the sequences written, but envelope {i} (sequence {}) differs at `{at}`: written {}, read back {}",
        want[i].sequence,
        show(&w),
        show(&g)
    )
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
            "conflict facts {}, expected expected_next={expected} actual_next=2",
            kind_json(&e.kind)
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
        "expected exactly one winner, got {}",
        results
            .iter()
            .map(outcome_text)
            .collect::<Vec<_>>()
            .join(" and ")
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
                "loser failed with {}, expected a conflict at expectedNext 0",
                error_json(e)
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
        "fenced facts {}, expected presented={} current={}",
        kind_json(&e.kind),
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
        "fenced facts {}",
        kind_json(&e.kind)
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

/// A deleted stream keeps its fence token (`deleteExecution`), so `acquireFenceIf`
/// compares against it: expecting "never fenced" is `fence-conflict` naming the kept
/// token, expecting the kept token takes a larger one (SPI-05; a store that looks the
/// fence up among live streams only lets a zombie start afresh, PLACE-05).
pub async fn spi_05_acquire_fence_if_sees_the_fence_a_deleted_stream_keeps<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AcquireFenceIf, M::DeleteExecution);
    let id = &*cx.id("spi_05-fence-if-deleted");
    let t1 = ok(
        store.acquire_fence_if(id, None).await,
        "acquireFenceIf(None)",
    )?;
    ok(
        store.append(id, 0, events(id, 0, 2, "x"), Some(t1)).await,
        "append with the token",
    )?;
    ok(store.delete_execution(id).await, "deleteExecution")?;
    let e = err_kind(
        store.acquire_fence_if(id, None).await,
        "fence-conflict",
        "acquireFenceIf(None) after deleteExecution of a fenced stream",
    )?;
    ensure!(
        e.kind
            == StoreErrorKind::FenceConflict {
                expected: None,
                current: Some(t1.0)
            },
        "facts {} after deleteExecution: the stream's fence {} is kept, so it is the current one",
        kind_json(&e.kind),
        t1.0
    );
    let t2 = ok(
        store.acquire_fence_if(id, Some(t1)).await,
        "acquireFenceIf(the kept token) after deleteExecution",
    )?;
    ensure!(
        t2 > t1,
        "token {t2:?} after delete does not exceed the kept {t1:?}"
    );
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
        "facts {}",
        kind_json(&e.kind)
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
        "next sequence moved: {}",
        kind_json(&e.kind)
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
        "facts {}",
        kind_json(&e.kind)
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

// ---------------------------------------------------------------------------------
// Boundaries, orders of checks, value fidelity and error facts (judging power).

/// Events in the long-stream cases: more than any page or batch the other cases use,
/// so an off-by-one that only shows past 100 (a fixed buffer, a text-sorted sequence)
/// is seen.
pub const LONG_STREAM_EVENTS: u64 = 150;

/// Small envelopes for the size cases, so a 10 000-event batch stays a few hundred KiB.
fn small_events(id: &str, from: u64, n: u64) -> Vec<loom_kernel::EventEnvelope> {
    (from..from + n)
        .map(|seq| crate::case::envelope(id, seq, "E", serde_json::json!(seq)))
        .collect()
}

/// `readRange` on a stream of 150 events, every end probed from both sides: `from = k`
/// includes `k` and `from = k + 1` excludes it, `to = k` includes `k` and `to = k - 1`
/// excludes it, at 0, around 9/10 and 99/100 (text-sorted sequences), at the head and
/// past it, up to `SEQUENCE_MAX`; `from = to` is one event, and `from = to + 1` or a
/// bound past `SEQUENCE_MAX` is invalid (SPI-03, GAP-27; decision 0006).
pub async fn spi_03_read_range_boundaries_on_a_long_stream<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::ReadRange);
    let id = &*cx.id("spi_03-long");
    let all = events(id, 0, LONG_STREAM_EVENTS, "long");
    ok(
        store.append(id, 0, all[..70].to_vec(), None).await,
        "append 0..70",
    )?;
    ok(
        store.append(id, 70, all[70..].to_vec(), None).await,
        "append 70..150",
    )?;
    let head = LONG_STREAM_EVENTS - 1;
    let probes: &[(u64, u64)] = &[
        (0, 0),
        (0, 1),
        (1, 1),
        (0, head),
        (1, head - 1),
        (9, 10),
        (10, 10),
        (10, 99),
        (99, 100),
        (100, 100),
        (100, head),
        (101, head),
        (head, head),
        (head - 1, head),
        (head, head + 1),
        (head + 1, head + 1),
        (head + 1, 1_000),
        (0, 1_000_000),
        (140, loom_kernel::spi::SEQUENCE_MAX),
    ];
    for &(from, to) in probes {
        let got = ok(store.read_range(id, from, to).await, "readRange")?;
        let lo = from.min(LONG_STREAM_EVENTS) as usize;
        let hi = to.saturating_add(1).min(LONG_STREAM_EVENTS) as usize;
        let want = &all[lo..hi.max(lo)];
        ensure!(
            got == want,
            "readRange({from}, {to}) of {id} gave sequences {:?}, expected {:?}",
            sequences(&got),
            sequences(want)
        );
    }
    for (from, to) in [
        (1u64, 0u64),
        (head + 1, head),
        (100, 99),
        (150, 10),
        (0, loom_kernel::spi::SEQUENCE_MAX + 1),
        (loom_kernel::spi::SEQUENCE_MAX + 1, u64::MAX),
    ] {
        err_kind(
            store.read_range(id, from, to).await,
            "invalid-argument",
            &format!("readRange({from}, {to}) of {id}"),
        )?;
    }
    Ok(Outcome::Pass)
}

/// The append batch limit from both sides: exactly `APPEND_BATCH_EVENTS_MAX` events and
/// one fewer are accepted whole, one more is `invalid-argument` with nothing written
/// (SPI-23, GAP-27).
pub async fn spi_23_append_batch_limit_from_both_sides<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use loom_kernel::spi::APPEND_BATCH_EVENTS_MAX as MAX;
    let max = MAX as u64;
    let at = &*cx.id("spi_23-batch-at-limit");
    let ack = ok(
        store.append(at, 0, small_events(at, 0, max), None).await,
        "append of exactly APPEND_BATCH_EVENTS_MAX events",
    )?;
    ensure!(
        ack == AppendAck {
            first_sequence: 0,
            next_sequence: max
        },
        "append of {max} events to {at} acknowledged {ack:?}"
    );
    let log = ok(store.read(at).await, "read")?;
    ensure!(
        log.len() as u64 == max && log.last().map(|e| e.sequence) == Some(max - 1),
        "after a batch of {max}, {at} reads {} events ending at {:?}",
        log.len(),
        log.last().map(|e| e.sequence)
    );
    let under = &*cx.id("spi_23-batch-under-limit");
    ok(
        store
            .append(under, 0, small_events(under, 0, max - 1), None)
            .await,
        "append of APPEND_BATCH_EVENTS_MAX - 1 events",
    )?;
    let ack = ok(
        store
            .append(under, max - 1, small_events(under, max - 1, 1), None)
            .await,
        "append of one more",
    )?;
    ensure!(
        ack.next_sequence == max,
        "{under}: the append after {} events acknowledged {ack:?}",
        max - 1
    );
    let over = &*cx.id("spi_23-batch-over-limit");
    err_kind(
        store
            .append(over, 0, small_events(over, 0, max + 1), None)
            .await,
        "invalid-argument",
        "append of APPEND_BATCH_EVENTS_MAX + 1 events",
    )?;
    expect_log(store, over, &[], "after the oversize batch").await?;
    err_kind(
        store
            .append(at, max, small_events(at, max, max + 1), None)
            .await,
        "invalid-argument",
        "oversize batch onto a live stream",
    )?;
    let e = err_kind(
        store.append(at, 0, small_events(at, 0, 1), None).await,
        "conflict",
        "stale append after the oversize batch",
    )?;
    ensure!(
        e.kind
            == StoreErrorKind::Conflict {
                expected_next: 0,
                actual_next: max
            },
        "{at}: the oversize batch moved the head: {}",
        kind_json(&e.kind)
    );
    Ok(Outcome::Pass)
}

/// A batch with one bad envelope (another execution's id, a repeated or skipped
/// sequence) is refused whole wherever the bad envelope sits: first, middle or last
/// (SPI-23, GAP-27).
pub async fn spi_23_bad_envelope_at_any_position_writes_nothing<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_23-position");
    let base = events(id, 0, 3, "base");
    ok(store.append(id, 0, base.clone(), None).await, "append")?;
    for position in [0usize, 2, 4] {
        for fault in ["foreign", "repeat", "skip"] {
            let mut batch = events(id, 3, 5, &format!("{fault}{position}"));
            match fault {
                "foreign" => batch[position].execution_id = cx.id("spi_23-someone-else"),
                "repeat" if position == 0 => batch[0].sequence = 2,
                "repeat" => batch[position].sequence = batch[position - 1].sequence,
                _ => batch[position].sequence += 1,
            }
            err_kind(
                store.append(id, 3, batch, None).await,
                "invalid-argument",
                &format!("a batch whose envelope {position} is bad ({fault})"),
            )?;
        }
    }
    expect_log(store, id, &base, "after the refused batches").await?;
    let ack = ok(
        store.append(id, 3, events(id, 3, 1, "next"), None).await,
        "append after the refusals",
    )?;
    ensure!(ack.first_sequence == 3, "ack {ack:?}");
    Ok(Outcome::Pass)
}

/// `conflict` carries both sequences exactly, probed below, at and above the head of a
/// long stream, after `deleteThrough` (the head does not move) and after
/// `deleteExecution` (it is 0) (SPI-23, GAP-27).
pub async fn spi_23_conflict_facts_from_both_sides<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    let id = &*cx.id("spi_23-facts");
    ok(
        store
            .append(id, 0, small_events(id, 0, LONG_STREAM_EVENTS), None)
            .await,
        "append",
    )?;
    let head = LONG_STREAM_EVENTS;
    for expected in [0, 1, head - 1, head + 1, head + 100, 1 << 40] {
        let e = err_kind(
            store
                .append(id, expected, small_events(id, expected, 1), None)
                .await,
            "conflict",
            &format!("append at {expected} to a stream at {head}"),
        )?;
        ensure!(
            e.kind
                == StoreErrorKind::Conflict {
                    expected_next: expected,
                    actual_next: head
                },
            "append at {expected} to {id} (at {head}) gave facts {}",
            kind_json(&e.kind)
        );
    }
    let caps = store.capabilities();
    if caps.claims(M::DeleteThrough) {
        ok(store.delete_through(id, head - 1).await, "deleteThrough")?;
        let e = err_kind(
            store.append(id, 0, small_events(id, 0, 1), None).await,
            "conflict",
            "append at 0 after deleteThrough",
        )?;
        ensure!(
            e.kind
                == StoreErrorKind::Conflict {
                    expected_next: 0,
                    actual_next: head
                },
            "after deleteThrough({}) of {id}, facts {}",
            head - 1,
            kind_json(&e.kind)
        );
    }
    if caps.claims(M::DeleteExecution) {
        ok(store.delete_execution(id).await, "deleteExecution")?;
        let e = err_kind(
            store
                .append(id, head, small_events(id, head, 1), None)
                .await,
            "conflict",
            "append at the old head after deleteExecution",
        )?;
        ensure!(
            e.kind
                == StoreErrorKind::Conflict {
                    expected_next: head,
                    actual_next: 0
                },
            "after deleteExecution of {id}, facts {}",
            kind_json(&e.kind)
        );
    }
    Ok(Outcome::Pass)
}

/// Envelopes read back as they were written: `{}` metadata stays `{}` (not absent),
/// absent metadata stays absent, integers beyond 2^53 and at the 64-bit ends stay
/// exact, floats keep every digit, text keeps every code point (non-ASCII, astral,
/// escapes), and ids and timestamps beyond 2^53 survive (SPI-23; decision 0006).
pub async fn spi_23_values_read_back_identical<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    let id = &*format!("{}\u{e9}\u{1f600}", cx.id("spi_23-fidelity-"));
    let mut batch = Vec::new();
    for seq in 0..4u64 {
        let mut e = crate::case::envelope(
            id,
            seq,
            [
                "STEP_COMPLETED",
                "\u{e9}v\u{e9}nement",
                "E\u{1f600}",
                "x.y/z",
            ][seq as usize],
            crate::case::fidelity_payload(&format!("event {seq}")),
        );
        e.id = format!("{id}/\u{1d11e}{seq}");
        e.workflow_id = "flow-\u{65e5}\u{672c}".to_string();
        e.timestamp_ms = [0, 9_007_199_254_740_993, i64::MAX, 1_700_000_000_000][seq as usize];
        e.metadata = match seq {
            0 => Some(serde_json::Map::new()),
            1 => None,
            2 => serde_json::json!({ "flowEmit": "00ff00ff00ff00ff", "kernel": true, "custom": crate::case::fidelity_payload("meta") })
                .as_object()
                .cloned(),
            _ => serde_json::json!({ "nothing": null, "empty": {} }).as_object().cloned(),
        };
        if seq == 3 {
            e.payload = serde_json::Value::Null.into();
        }
        batch.push(e);
    }
    ok(store.append(id, 0, batch.clone(), None).await, "append")?;
    let log = ok(store.read(id).await, "read")?;
    if let Some(diff) = crate::case::first_envelope_difference(&log, &batch) {
        return Err(Failure(format!("{id}: {diff}")));
    }
    let listed = ok(store.list_executions().await, "listExecutions")?;
    ensure!(
        listed.iter().any(|x| x == id),
        "the non-ASCII id {id:?} is not listed exactly as written"
    );
    if store.capabilities().claims(M::ReadRange) {
        let range = ok(store.read_range(id, 1, 2).await, "readRange")?;
        if let Some(diff) = crate::case::first_envelope_difference(&range, &batch[1..3]) {
            return Err(Failure(format!("{id} readRange(1, 2): {diff}")));
        }
    }
    Ok(Outcome::Pass)
}

/// Execution ids are bounded in UTF-8 bytes, not characters: exactly `ID_BYTES_MAX`
/// bytes (ASCII or two-byte characters) is accepted, one byte more refused, and the
/// empty id refused, each with nothing written (SPI-23, GAP-27).
pub async fn spi_23_id_length_limit_in_bytes<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    use crate::case::id_of_bytes;
    use loom_kernel::spi::ID_BYTES_MAX;
    for pad in ['x', '\u{e9}'] {
        let at = id_of_bytes(
            cx,
            &format!("spi_23-idmax-{}", pad.len_utf8()),
            ID_BYTES_MAX,
            pad,
        );
        ok(
            store.append(&at, 0, events(&at, 0, 1, "at"), None).await,
            &format!("append to an id of exactly {ID_BYTES_MAX} bytes"),
        )?;
        expect_log(store, &at, &events(&at, 0, 1, "at"), "the longest id").await?;
        let over = id_of_bytes(
            cx,
            &format!("spi_23-idover-{}", pad.len_utf8()),
            ID_BYTES_MAX + 1,
            pad,
        );
        err_kind(
            store
                .append(&over, 0, events(&over, 0, 1, "over"), None)
                .await,
            "invalid-argument",
            &format!(
                "append to an id of {} bytes ({} characters)",
                over.len(),
                over.chars().count()
            ),
        )?;
        ensure!(
            !ok(store.list_executions().await, "list")?.contains(&over),
            "the refused oversize id is listed"
        );
    }
    err_kind(
        store.append("", 0, events("", 0, 1, "empty"), None).await,
        "invalid-argument",
        "append to the empty id",
    )?;
    Ok(Outcome::Pass)
}

/// The documented order of the append checks: an append wrong in two ways fails with
/// the kind checked first. Validation before the fence (an empty batch with a stale
/// token is `invalid-argument`), the fence before the sequence (a stale token with a
/// stale `expected_next` is `fenced`, not `conflict`), and only a current token reaches
/// the sequence check (PLACE-05, GAP-27).
pub async fn place_05_fence_is_checked_before_sequence<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AcquireFence);
    let id = &*cx.id("place_05-order");
    let t1 = ok(store.acquire_fence(id).await, "acquire")?;
    ok(
        store.append(id, 0, events(id, 0, 3, "x"), Some(t1)).await,
        "append",
    )?;
    let t2 = ok(store.acquire_fence(id).await, "acquire again")?;
    err_kind(
        store.append(id, 3, Vec::new(), Some(t1)).await,
        "invalid-argument",
        "an empty batch with a stale token",
    )?;
    err_kind(
        store.append(id, 3, events(id, 4, 1, "gap"), Some(t1)).await,
        "invalid-argument",
        "a batch not starting at expected_next with a stale token",
    )?;
    for (expected, token, what) in [
        (0u64, Some(t1), "a stale token and a stale expected_next"),
        (7, Some(t1), "a stale token and a future expected_next"),
        (0, None, "no token and a stale expected_next"),
        (
            0,
            Some(FenceToken(t2.0 + 1)),
            "a token above the current one and a stale expected_next",
        ),
    ] {
        let e = err_kind(
            store
                .append(id, expected, events(id, expected, 1, "z"), token)
                .await,
            "fenced",
            what,
        )?;
        ensure!(
            e.kind
                == StoreErrorKind::Fenced {
                    presented: token.map(|t| t.0),
                    current: t2.0
                },
            "{what} on {id}: facts {}, expected presented={:?} current={}",
            kind_json(&e.kind),
            token.map(|t| t.0),
            t2.0
        );
    }
    let e = err_kind(
        store.append(id, 1, events(id, 1, 1, "z"), Some(t2)).await,
        "conflict",
        "the current token with a stale expected_next",
    )?;
    ensure!(
        e.kind
            == StoreErrorKind::Conflict {
                expected_next: 1,
                actual_next: 3
            },
        "facts {}",
        kind_json(&e.kind)
    );
    let never = &*cx.id("place_05-order-never");
    let e = err_kind(
        store
            .append(never, 5, events(never, 5, 1, "z"), Some(FenceToken(1)))
            .await,
        "fenced",
        "a token on a never-fenced id with a stale expected_next",
    )?;
    ensure!(
        e.kind
            == StoreErrorKind::Fenced {
                presented: Some(1),
                current: 0
            },
        "facts {}",
        kind_json(&e.kind)
    );
    Ok(Outcome::Pass)
}

/// The fence token is compared for equality, probed from both sides: one below and one
/// above the current token are `fenced` with both facts, the current one is accepted;
/// several acquisitions (not just two) each retire every earlier token (PLACE-05, SPI-04).
pub async fn place_05_fence_token_compared_from_both_sides<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AcquireFence);
    let id = &*cx.id("place_05-sides");
    let mut tokens = Vec::new();
    for _ in 0..4 {
        tokens.push(ok(store.acquire_fence(id).await, "acquire")?);
    }
    let current = tokens[3].0;
    let mut next = 0;
    for presented in [tokens[0].0, tokens[2].0, current + 1, current + 2, 0] {
        let e = err_kind(
            store
                .append(
                    id,
                    next,
                    events(id, next, 1, "x"),
                    Some(FenceToken(presented)),
                )
                .await,
            "fenced",
            &format!("append with token {presented} while {current} is current"),
        )?;
        ensure!(
            e.kind
                == StoreErrorKind::Fenced {
                    presented: Some(presented),
                    current
                },
            "token {presented} on {id}: facts {}",
            kind_json(&e.kind)
        );
    }
    for _ in 0..2 {
        ok(
            store
                .append(id, next, events(id, next, 1, "x"), Some(tokens[3]))
                .await,
            "append with the current token",
        )?;
        next += 1;
    }
    expect_log(
        store,
        id,
        &[events(id, 0, 1, "x"), events(id, 1, 1, "x")].concat(),
        "after the fence probes",
    )
    .await?;
    Ok(Outcome::Pass)
}

/// `acquireFenceIf` compares the expectation for equality, from both sides: one below,
/// one above, `None` on a fenced id and `Some` on a never-fenced one are each
/// `fence-conflict` with both facts, and change nothing (SPI-05, GAP-27).
pub async fn spi_05_acquire_fence_if_compared_from_both_sides<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AcquireFenceIf);
    let never = &*cx.id("spi_05-sides-never");
    for expected in [1u64, 2] {
        let e = err_kind(
            store
                .acquire_fence_if(never, Some(FenceToken(expected)))
                .await,
            "fence-conflict",
            &format!("expecting {expected} on a never-fenced id"),
        )?;
        ensure!(
            e.kind
                == StoreErrorKind::FenceConflict {
                    expected: Some(expected),
                    current: None
                },
            "facts {}",
            kind_json(&e.kind)
        );
    }
    let id = &*cx.id("spi_05-sides");
    let mut current = ok(store.acquire_fence_if(id, None).await, "first")?;
    for _ in 0..2 {
        current = ok(
            store.acquire_fence_if(id, Some(current)).await,
            "acquire from the current token",
        )?;
    }
    let c = current.0;
    for expected in [None, Some(c - 1), Some(c + 1), Some(c + 5)] {
        let e = err_kind(
            store.acquire_fence_if(id, expected.map(FenceToken)).await,
            "fence-conflict",
            &format!("expecting {expected:?} while {c} is current"),
        )?;
        ensure!(
            e.kind
                == StoreErrorKind::FenceConflict {
                    expected,
                    current: Some(c)
                },
            "expecting {expected:?} on {id}: facts {}",
            kind_json(&e.kind)
        );
    }
    let next = ok(
        store.acquire_fence_if(id, Some(current)).await,
        "the refusals changed the current token",
    )?;
    ensure!(next.0 > c, "token {next:?} does not exceed {c}");
    Ok(Outcome::Pass)
}

/// `appendIfUnchanged` validates the batch before it compares the anchor: a batch not
/// starting at the anchor's sequence is `invalid-argument` even when the anchor is
/// stale; each kind of change (an append, a fence, `deleteThrough` leaves it alone)
/// moves the anchor as documented (SPI-06, GAP-27).
pub async fn spi_06_batch_is_checked_before_the_anchor<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::AppendIfUnchanged);
    let id = &*cx.id("spi_06-order");
    ok(
        store.append(id, 0, events(id, 0, 2, "x"), None).await,
        "append",
    )?;
    let stale = ok(store.observe(id).await, "observe")?;
    ok(
        store.append(id, 2, events(id, 2, 1, "x"), None).await,
        "append",
    )?;
    err_kind(
        store
            .append_if_unchanged(id, stale, events(id, 5, 1, "y"))
            .await,
        "invalid-argument",
        "a batch not at the stale anchor's sequence",
    )?;
    err_kind(
        store.append_if_unchanged(id, stale, Vec::new()).await,
        "invalid-argument",
        "an empty batch with a stale anchor",
    )?;
    err_kind(
        store
            .append_if_unchanged(id, stale, events(id, 2, 1, "y"))
            .await,
        "anchor-changed",
        "a valid batch with a stale anchor",
    )?;
    let fresh = ok(store.observe(id).await, "observe")?;
    ensure!(
        fresh.next_sequence == 3 && fresh.incarnation == stale.incarnation,
        "after one more append the anchor is {fresh:?} (was {stale:?})"
    );
    if store.capabilities().claims(M::DeleteThrough) {
        ok(store.delete_through(id, 1).await, "deleteThrough")?;
        let after = ok(store.observe(id).await, "observe after deleteThrough")?;
        ensure!(
            after == fresh,
            "deleteThrough moved the anchor from {fresh:?} to {after:?}"
        );
    }
    ok(
        store
            .append_if_unchanged(id, fresh, events(id, 3, 1, "z"))
            .await,
        "appendIfUnchanged on the fresh anchor",
    )?;
    Ok(Outcome::Pass)
}

/// Largest distance, in ms, between `storeNow` and the caller's own clock that the kit
/// accepts: a store on another host may drift a little, a store answering in seconds,
/// microseconds or local time is off by far more.
pub const STORE_NOW_SKEW_MS_MAX: i64 = 60_000;
/// Largest step back between two consecutive `storeNow` calls the kit accepts: database
/// time can be stepped back by NTP (SPI-08), but not by more than this between calls a
/// few milliseconds apart.
pub const STORE_NOW_STEP_BACK_MS_MAX: i64 = 1_000;
/// How long the kit sleeps between two `storeNow` calls to see the clock move.
pub const STORE_NOW_SLEEP_MS: u64 = 30;

/// `storeNow` is the store's clock in epoch **milliseconds**: within
/// `STORE_NOW_SKEW_MS_MAX` of the caller's clock, never more than
/// `STORE_NOW_STEP_BACK_MS_MAX` behind the previous answer, and moving: after a sleep of
/// `STORE_NOW_SLEEP_MS` it has advanced by at least half of it (SPI-08).
pub async fn spi_08_store_now_is_epoch_ms_near_the_callers_clock<S: EventStore>(
    store: &S,
    _cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::StoreNow);
    let wall = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    };
    let mut previous: Option<i64> = None;
    for _ in 0..5 {
        let before = wall();
        let now = ok(store.store_now().await, "storeNow")?;
        let after = wall();
        ensure!(
            now >= before - STORE_NOW_SKEW_MS_MAX && now <= after + STORE_NOW_SKEW_MS_MAX,
            "storeNow answered {now}, the caller's clock read {before}..{after} ms since the epoch (more than {STORE_NOW_SKEW_MS_MAX} ms apart: not epoch milliseconds?)"
        );
        if let Some(p) = previous {
            ensure!(
                now >= p - STORE_NOW_STEP_BACK_MS_MAX,
                "storeNow went back from {p} to {now}"
            );
        }
        previous = Some(now);
    }
    let first = ok(store.store_now().await, "storeNow")?;
    tokio::time::sleep(std::time::Duration::from_millis(STORE_NOW_SLEEP_MS)).await;
    let second = ok(store.store_now().await, "storeNow")?;
    ensure!(
        second - first >= STORE_NOW_SLEEP_MS as i64 / 2,
        "storeNow moved from {first} to {second} across a {STORE_NOW_SLEEP_MS} ms sleep (a frozen or coarse clock?)"
    );
    Ok(Outcome::Pass)
}

/// `deleteThrough` at every end: at 0 (one event), at 0 again (none), below the head,
/// at the last event (all), at the head and past it (none, stream live, head kept), at
/// `SEQUENCE_MAX` (allowed) and past it (`invalid-argument`); a deleted stream and an
/// id that only holds a fence are `not-found` (SPI-09, GAP-27).
pub async fn spi_09_delete_through_at_zero_head_and_past_head<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use loom_kernel::spi::SEQUENCE_MAX;
    require_claims!(store.capabilities(), M::DeleteThrough);
    let id = &*cx.id("spi_09-ends");
    let n = 120u64;
    let all = small_events(id, 0, n);
    ok(store.append(id, 0, all.clone(), None).await, "append")?;
    for (through, deleted, left_from) in [
        (0u64, 1u64, 1usize),
        (0, 0, 1),
        (9, 9, 10),
        (10, 1, 11),
        (99, 89, 100),
        (n - 2, n - 2 - 99, (n - 1) as usize),
        (n - 1, 1, n as usize),
        (n, 0, n as usize),
        (n + 50, 0, n as usize),
        (SEQUENCE_MAX, 0, n as usize),
    ] {
        let got = ok(
            store.delete_through(id, through).await,
            &format!("deleteThrough({through})"),
        )?;
        ensure!(
            got == deleted,
            "deleteThrough({through}) of {id} reported {got} deleted, expected {deleted}"
        );
        expect_log(
            store,
            id,
            &all[left_from..],
            &format!("after deleteThrough({through})"),
        )
        .await?;
    }
    err_kind(
        store.delete_through(id, SEQUENCE_MAX + 1).await,
        "invalid-argument",
        "deleteThrough(SEQUENCE_MAX + 1)",
    )?;
    ensure!(
        ok(store.list_executions().await, "list")?
            .iter()
            .any(|x| x == id),
        "{id}, emptied by deleteThrough past its head, is no longer listed"
    );
    ok(
        store.append(id, n, small_events(id, n, 1), None).await,
        "append at the old head after emptying",
    )?;
    let caps = store.capabilities();
    if caps.claims(M::DeleteExecution) {
        let gone = &*cx.id("spi_09-deleted");
        ok(
            store.append(gone, 0, small_events(gone, 0, 2), None).await,
            "append",
        )?;
        ok(store.delete_execution(gone).await, "deleteExecution")?;
        err_kind(
            store.delete_through(gone, 0).await,
            "not-found",
            "deleteThrough of a deleted stream",
        )?;
    }
    if caps.claims(M::AcquireFence) {
        let fenced = &*cx.id("spi_09-fence-only");
        ok(store.acquire_fence(fenced).await, "acquireFence")?;
        err_kind(
            store.delete_through(fenced, 0).await,
            "not-found",
            "deleteThrough of an id that holds only a fence",
        )?;
    }
    Ok(Outcome::Pass)
}

/// A last page that is exactly full has no cursor, counted over the live ids only: with
/// `limit` = the number of live ids the first page is the last (`next_cursor` null);
/// with one less, a second page holds one id and no cursor; with one more, one page.
/// A deleted stream and a fence-only id must not count toward "more" (SPI-13).
pub async fn spi_13_exactly_full_last_page_has_no_cursor<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::ListExecutionsPage);
    let caps = store.capabilities();
    for i in 0..3 {
        let id = cx.id(&format!("spi_13-full-{i}"));
        ok(
            store.append(&id, 0, events(&id, 0, 1, "p"), None).await,
            "append",
        )?;
    }
    // Ids that sort last in this namespace and are not live streams.
    if caps.claims(M::DeleteExecution) {
        let gone = cx.id("spi_13-full-~deleted");
        ok(
            store.append(&gone, 0, events(&gone, 0, 1, "p"), None).await,
            "append",
        )?;
        ok(store.delete_execution(&gone).await, "deleteExecution")?;
    }
    if caps.claims(M::AcquireFence) {
        ok(
            store.acquire_fence(&cx.id("spi_13-full-~fence")).await,
            "acquireFence",
        )?;
    }
    let live = ok(store.list_executions().await, "listExecutions")?;
    let total = live.len();
    if total > LIST_PAGE_LIMIT_MAX - 1 {
        return Ok(Outcome::Pass);
    }
    for limit in [total, total - 1, total + 1] {
        let mut seen = Vec::new();
        let mut cursor = None;
        let mut pages = 0;
        loop {
            let page = ok(
                store.list_executions_page(cursor.clone(), limit).await,
                "listExecutionsPage",
            )?;
            pages += 1;
            ensure!(
                page.ids.len() <= limit,
                "a page of {} ids for limit {limit}",
                page.ids.len()
            );
            ensure!(
                page.next_cursor.is_none() || page.ids.len() == limit,
                "a page of {} ids (limit {limit}) has a next cursor",
                page.ids.len()
            );
            seen.extend(page.ids);
            match page.next_cursor {
                Some(c) if pages < 4 => cursor = Some(c),
                Some(_) => break,
                None => break,
            }
        }
        let want_pages = total.div_ceil(limit);
        ensure!(
            pages == want_pages,
            "{total} live ids paged by {limit} took {pages} pages, expected {want_pages} (an exactly full last page must have a null cursor)"
        );
        ensure!(
            seen == live,
            "paging by {limit} returned {} ids, listExecutions {total}",
            seen.len()
        );
    }
    Ok(Outcome::Pass)
}

/// `copyPrefix` checks in order, so a request wrong in two ways fails with the first:
/// the same source and target is `invalid-argument`, an unknown source is `not-found`
/// even when the target is live, a compacted source or a `through` past the head is
/// `invalid-argument` even when the target is live, and only then a live target is
/// `conflict` naming its head; `through` at the last event copies everything, at the
/// head it is refused (SPI-14, GAP-27).
pub async fn spi_14_copy_prefix_checks_in_order<S: EventStore>(store: &S, cx: &Ctx) -> Verdict {
    require_claims!(store.capabilities(), M::CopyPrefix);
    let (src, live) = (&*cx.id("spi_14-order-src"), &*cx.id("spi_14-order-live"));
    ok(
        store.append(src, 0, events(src, 0, 4, "s"), None).await,
        "append source",
    )?;
    ok(
        store.append(live, 0, events(live, 0, 2, "t"), None).await,
        "append target",
    )?;
    err_kind(
        store.copy_prefix(src, src, 0).await,
        "invalid-argument",
        "copyPrefix onto itself",
    )?;
    err_kind(
        store
            .copy_prefix(&cx.id("spi_14-order-nobody"), live, 0)
            .await,
        "not-found",
        "an unknown source and a live target",
    )?;
    err_kind(
        store.copy_prefix(src, live, 4).await,
        "invalid-argument",
        "through at the source's head and a live target",
    )?;
    let e = err_kind(
        store.copy_prefix(src, live, 3).await,
        "conflict",
        "a live target",
    )?;
    ensure!(
        e.kind
            == StoreErrorKind::Conflict {
                expected_next: 0,
                actual_next: 2
            },
        "copyPrefix into {live} (at 2): facts {}",
        kind_json(&e.kind)
    );
    let whole = &*cx.id("spi_14-order-whole");
    let ack = ok(
        store.copy_prefix(src, whole, 3).await,
        "copy through the last event",
    )?;
    ensure!(
        ack == AppendAck {
            first_sequence: 0,
            next_sequence: 4
        },
        "ack {ack:?}"
    );
    let one = &*cx.id("spi_14-order-one");
    let ack = ok(store.copy_prefix(src, one, 0).await, "copy through 0")?;
    ensure!(
        ack.next_sequence == 1,
        "copy through 0 acknowledged {ack:?}"
    );
    if store.capabilities().claims(M::DeleteThrough) {
        ok(store.delete_through(src, 0).await, "deleteThrough(0)")?;
        err_kind(
            store.copy_prefix(src, live, 2).await,
            "invalid-argument",
            "a compacted source and a live target",
        )?;
    }
    Ok(Outcome::Pass)
}

/// Every event-store method answers an empty or over-long id as the id-validation table
/// says (`loom_conformance::ids::ID_VALIDATION`, printed in docs/protocols/store.md):
/// writes refuse it with `invalid-argument`, reads and deletes answer as for an unknown
/// id (GAP-27). Unclaimed methods are skipped.
pub async fn gap_27_out_of_range_ids_follow_the_table<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use crate::ids::{id_answer, judge_id_rule, out_of_range_ids, rules_of};
    let caps = store.capabilities();
    let live = &*cx.id("gap_27-ids-live");
    ok(
        store.append(live, 0, events(live, 0, 1, "s"), None).await,
        "append a live stream",
    )?;
    let zero = Anchor {
        incarnation: 0,
        next_sequence: 0,
        fence: 0,
    };
    for rule in rules_of("eventStore") {
        for bad in out_of_range_ids() {
            let b = &*bad;
            let claimed = |m: M| caps.claims(m);
            let answer = match (rule.method, rule.argument) {
                ("eventStore.append", _) => {
                    id_answer(store.append(b, 0, events(b, 0, 1, "s"), None).await, |_| {
                        false
                    })
                }
                ("eventStore.read", _) => {
                    id_answer(store.read(b).await, |r| matches!(r, Ok(v) if v.is_empty()))
                }
                ("eventStore.readRange", _) if claimed(M::ReadRange) => id_answer(
                    store.read_range(b, 0, 0).await,
                    |r| matches!(r, Ok(v) if v.is_empty()),
                ),
                ("eventStore.acquireFence", _) if claimed(M::AcquireFence) => {
                    id_answer(store.acquire_fence(b).await, |_| false)
                }
                ("eventStore.acquireFenceIf", _) if claimed(M::AcquireFenceIf) => {
                    id_answer(store.acquire_fence_if(b, None).await, |_| false)
                }
                ("eventStore.observe", _) if claimed(M::AppendIfUnchanged) => {
                    id_answer(store.observe(b).await, |r| matches!(r, Ok(a) if *a == zero))
                }
                ("eventStore.appendIfUnchanged", _) if claimed(M::AppendIfUnchanged) => id_answer(
                    store
                        .append_if_unchanged(b, zero, events(b, 0, 1, "s"))
                        .await,
                    |_| false,
                ),
                ("eventStore.deleteThrough", _) if claimed(M::DeleteThrough) => id_answer(
                    store.delete_through(b, 0).await,
                    |r| matches!(r, Err(e) if e.kind.name() == "not-found"),
                ),
                ("eventStore.copyPrefix", "source") if claimed(M::CopyPrefix) => id_answer(
                    store.copy_prefix(b, &cx.id("gap_27-ids-copy"), 0).await,
                    |_| false,
                ),
                ("eventStore.copyPrefix", "target") if claimed(M::CopyPrefix) => {
                    id_answer(store.copy_prefix(live, b, 0).await, |_| false)
                }
                ("eventStore.deleteExecution", _) if claimed(M::DeleteExecution) => {
                    id_answer(store.delete_execution(b).await, |r| matches!(r, Ok(false)))
                }
                _ => continue,
            };
            judge_id_rule(rule, b, answer)?;
        }
    }
    ensure!(
        ok(store.list_executions().await, "listExecutions")? == vec![live.to_string()],
        "the out-of-range probes left streams behind"
    );
    Ok(Outcome::Pass)
}

/// Hostile ids (`loom_conformance::ids::Family`: case, NFC/NFD and percent-encoded twins,
/// separators, trailing spaces, UTF-16 order, a shared 255-byte prefix, ids at the
/// length limit, numeric-looking ids) are distinct streams: each reads back its own
/// event, and `listExecutions` (and `listExecutionsPage`) lists them in byte order
/// (SPI-23, GAP-27).
pub async fn spi_23_hostile_ids_are_distinct_streams_in_byte_order<S: EventStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let ids = crate::ids::hostile_ids(&cx.id("h."));
    for (family, id) in &ids {
        let r = store.append(id, 0, events(id, 0, 1, "h"), None).await;
        ok(r, &format!("append to {id:?} ({})", family.name()))?;
    }
    for (family, id) in &ids {
        let log = ok(store.read(id).await, "read")?;
        ensure!(
            log.len() == 1 && log[0].execution_id == *id,
            "{} ids: {id:?} reads back {} events (execution ids {:?}): the store confuses it with another id of the family",
            family.name(),
            log.len(),
            log.iter().map(|e| e.execution_id.clone()).collect::<Vec<_>>()
        );
    }
    let mut want: Vec<String> = ids.iter().map(|(_, id)| id.clone()).collect();
    want.sort();
    let prefix = cx.id("h.");
    let listed: Vec<String> = ok(store.list_executions().await, "listExecutions")?
        .into_iter()
        .filter(|id| id.starts_with(&prefix))
        .collect();
    if let Some((f, _)) = ids.iter().find(|(_, id)| !listed.contains(id)) {
        return Err(Failure(format!(
            "{} ids: listExecutions lacks some of them: {listed:?}",
            f.name()
        )));
    }
    if listed != want {
        let family = crate::ids::Family::ALL
            .iter()
            .find(|f| {
                let mine: Vec<&String> = listed
                    .iter()
                    .filter(|id| f.ids(&prefix).contains(id))
                    .collect();
                let mut sorted = mine.clone();
                sorted.sort();
                mine != sorted
            })
            .map_or("hostile", |f| f.name());
        return Err(Failure(format!(
            "{family} ids: listExecutions is not in byte order: {listed:?}"
        )));
    }
    Ok(Outcome::Pass)
}

#[cfg(test)]
mod tests {
    use super::envelope_difference;
    use loom_kernel::EventEnvelope;
    use serde_json::json;

    fn envelope(sequence: u64, metadata: Option<serde_json::Value>) -> EventEnvelope {
        EventEnvelope {
            id: format!("e{sequence}"),
            workflow_id: "w".into(),
            execution_id: "x".into(),
            event_type: "STEP_STARTED".into(),
            sequence,
            timestamp_ms: 1,
            payload: json!({"stepId": "s", "n": sequence}).into(),
            metadata: metadata.and_then(|m| m.as_object().cloned()),
        }
    }

    /// SPI-23: a read-back that keeps every sequence but drops or rewrites a field is
    /// named by envelope, field and both values, not as a sequence mismatch.
    #[test]
    fn spi_23_a_field_lost_on_read_is_named_by_envelope_and_pointer() {
        let written = [envelope(0, None), envelope(1, Some(json!({})))];
        let dropped = [envelope(0, None), envelope(1, None)];
        assert_eq!(
            envelope_difference("read after append", "x", &dropped, &written),
            "read after append: log of x has the sequences written, but envelope 1 (sequence 1) differs at `/metadata`: written {}, read back absent"
        );
        let mut rewritten = written.clone();
        rewritten[0].payload = json!({"stepId": "s", "n": 7}).into();
        assert_eq!(
            envelope_difference("read after append", "x", &rewritten, &written),
            "read after append: log of x has the sequences written, but envelope 0 (sequence 0) differs at `/payload/n`: written 0, read back 7"
        );
    }
}
