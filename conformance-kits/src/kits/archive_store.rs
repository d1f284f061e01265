//! ArchiveStore cases (SPI-18, SPI-19, SPI-21; GAP-27 reference choices).

use loom_kernel::spi::{ArchiveStore, ArchiveStoreMethod as M};
use loom_kernel::versions::ARCHIVE_STORE_SPI_VERSION;

use crate::case::{
    check_capabilities, check_probe, ensure, err_kind, events, ok, require_claims, sequences, Ctx,
};
use crate::case::{Outcome, Verdict};

crate::__kit_cases! {
    kit: ArchiveStoreKit, name: "archive-store", bound: ArchiveStore, fresh: false, claims: claims_of,
    cases: [
        spi_21_archive_capabilities_are_consistent => ["SPI-21", "SPI-01"], "1.0.0", [];
        spi_18_claims_match_behaviour => ["SPI-18", "SPI-02"], "1.0.0", [];
        spi_19_archive_keeps_exact_envelopes => ["SPI-19"], "1.0.0", [];
        spi_19_archive_is_idempotent_per_sequence => ["SPI-19"], "1.0.0", [];
        spi_19_archive_refuses_invalid_batches => ["SPI-19"], "1.0.0", [];
        spi_18_replace_segments_replaces_atomically => ["SPI-18", "GAP-27"], "1.1.0", ["replaceSegments"];
        spi_18_delete_execution_removes_the_archive => ["SPI-18", "GAP-27"], "1.0.0", ["deleteExecution"];
        spi_19_out_of_order_writes_read_back_ascending => ["SPI-19"], "1.0.0", [];
        spi_19_clash_at_first_middle_or_last_refuses_the_batch => ["SPI-19", "GAP-27"], "1.0.0", [];
        spi_19_sequences_must_strictly_ascend => ["SPI-19"], "1.0.0", [];
        spi_19_batch_limit_from_both_sides => ["SPI-19", "SPI-18"], "1.0.0", [];
        spi_19_values_read_back_identical => ["SPI-19"], "1.0.0", [];
        gap_27_out_of_range_ids_follow_the_table => ["GAP-27", "SPI-19"], "1.0.0", [];
        spi_19_hostile_ids_keep_their_own_archives => ["SPI-19", "GAP-27"], "1.0.0", [];
    ]
}

/// What the store claims, for the case table's `needs`.
fn claims_of<S: ArchiveStore>(store: &S) -> crate::case::Claims {
    crate::case::Claims::of(&store.capabilities())
}

/// The claim is consistent and shares the kernel's major version (SPI-21).
pub async fn spi_21_archive_capabilities_are_consistent<S: ArchiveStore>(
    store: &S,
    _cx: &Ctx,
) -> Verdict {
    check_capabilities(&store.capabilities(), ARCHIVE_STORE_SPI_VERSION)
}

/// Each optional method answers `unsupported` iff it is not claimed (SPI-02, SPI-18).
pub async fn spi_18_claims_match_behaviour<S: ArchiveStore>(store: &S, cx: &Ctx) -> Verdict {
    let caps = store.capabilities();
    let p = &*cx.id("spi_18-probe");
    check_probe(&caps, M::DeleteExecution, &store.delete_execution(p).await)?;
    check_probe(
        &caps,
        M::ReplaceSegments,
        &store.replace_segments(p, Vec::new()).await,
    )?;
    Ok(Outcome::Pass)
}

/// The archive returns exactly the envelopes archived, ascending (SPI-19).
pub async fn spi_19_archive_keeps_exact_envelopes<S: ArchiveStore>(store: &S, cx: &Ctx) -> Verdict {
    let id = &*cx.id("spi_19-exact");
    let all = events(id, 0, 8, "x");
    ensure!(
        ok(store.archive(id, all[..5].to_vec()).await, "archive 0..5")? == 5,
        "archive miscounted"
    );
    ensure!(
        ok(store.archive(id, all[5..].to_vec()).await, "archive 5..8")? == 3,
        "archive miscounted"
    );
    let got = ok(store.read_archived(id).await, "readArchived")?;
    ensure!(
        got == all,
        "readArchived gave sequences {:?} (or different envelopes)",
        sequences(&got)
    );
    ensure!(
        ok(
            store.read_archived(&cx.id("spi_19-none")).await,
            "read nothing"
        )?
        .is_empty(),
        "an unknown id has an archive"
    );
    Ok(Outcome::Pass)
}

/// Re-archiving identical envelopes is a no-op (a compaction retried after a crash);
/// a different envelope at an archived sequence refuses the whole batch
/// (reference-defined, SPI-19).
pub async fn spi_19_archive_is_idempotent_per_sequence<S: ArchiveStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_19-idempotent");
    let all = events(id, 0, 7, "x");
    ok(store.archive(id, all[..5].to_vec()).await, "archive")?;
    ensure!(
        ok(store.archive(id, all[..5].to_vec()).await, "archive again")? == 0,
        "a repeat archived something new"
    );
    ensure!(
        ok(
            store.archive(id, all[3..].to_vec()).await,
            "overlapping archive"
        )? == 2,
        "an overlap miscounted"
    );
    let mut clash = events(id, 2, 1, "different");
    clash.extend(events(id, 9, 1, "new"));
    err_kind(
        store.archive(id, clash).await,
        "already-exists",
        "a different envelope at sequence 2",
    )?;
    let got = ok(store.read_archived(id).await, "readArchived")?;
    ensure!(
        got == all,
        "the refused batch changed the archive (sequences {:?})",
        sequences(&got)
    );
    Ok(Outcome::Pass)
}

/// Envelopes of another execution or out of order are refused, nothing written.
pub async fn spi_19_archive_refuses_invalid_batches<S: ArchiveStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_19-invalid");
    let mut foreign = events(id, 0, 2, "x");
    foreign[1].execution_id = cx.id("someone-else");
    err_kind(
        store.archive(id, foreign).await,
        "invalid-argument",
        "foreign envelope",
    )?;
    let mut reversed = events(id, 0, 3, "x");
    reversed.reverse();
    err_kind(
        store.archive(id, reversed).await,
        "invalid-argument",
        "descending sequences",
    )?;
    ensure!(
        ok(store.read_archived(id).await, "read")?.is_empty(),
        "a refused batch was written"
    );
    Ok(Outcome::Pass)
}

/// `replaceSegments` swaps the whole archive; an invalid replacement changes nothing
/// (SPI-18; reference-defined, GAP-27).
pub async fn spi_18_replace_segments_replaces_atomically<S: ArchiveStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::ReplaceSegments);
    let id = &*cx.id("spi_18-replace");
    ok(store.archive(id, events(id, 0, 10, "old")).await, "archive")?;
    let replacement = events(id, 0, 3, "new");
    ok(
        store.replace_segments(id, replacement.clone()).await,
        "replaceSegments",
    )?;
    ensure!(
        ok(store.read_archived(id).await, "read")? == replacement,
        "the archive is not the replacement"
    );
    let mut bad = events(id, 0, 2, "bad");
    bad[0].execution_id = cx.id("someone-else");
    err_kind(
        store.replace_segments(id, bad).await,
        "invalid-argument",
        "invalid replacement",
    )?;
    ensure!(
        ok(store.read_archived(id).await, "read")? == replacement,
        "an invalid replacement changed the archive"
    );
    ok(
        store.replace_segments(id, Vec::new()).await,
        "replace with nothing",
    )?;
    ensure!(
        ok(store.read_archived(id).await, "read")?.is_empty(),
        "an empty replacement left envelopes"
    );
    Ok(Outcome::Pass)
}

/// `deleteExecution` removes the archive of that execution only.
pub async fn spi_18_delete_execution_removes_the_archive<S: ArchiveStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::DeleteExecution);
    let (id, other) = (&*cx.id("spi_18-delete"), &*cx.id("spi_18-delete-other"));
    ok(store.archive(id, events(id, 0, 4, "x")).await, "archive")?;
    ok(
        store.archive(other, events(other, 0, 1, "y")).await,
        "archive other",
    )?;
    ensure!(
        ok(store.delete_execution(id).await, "deleteExecution")? == 4,
        "deleteExecution miscounted"
    );
    ensure!(
        ok(store.read_archived(id).await, "read")?.is_empty(),
        "envelopes survived deleteExecution"
    );
    ensure!(
        ok(store.read_archived(other).await, "read other")?.len() == 1,
        "another archive was touched"
    );
    Ok(Outcome::Pass)
}

/// Archive writes that arrive out of ascending order (a later batch holding earlier
/// sequences, gaps filled afterwards) read back in ascending order, each counted once
/// (SPI-19).
pub async fn spi_19_out_of_order_writes_read_back_ascending<S: ArchiveStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_19-order");
    let all = events(id, 0, 120, "o");
    let pick = |seqs: &[u64]| -> Vec<_> { seqs.iter().map(|s| all[*s as usize].clone()).collect() };
    for (batch, new) in [
        (vec![100u64, 101, 119], 3u64),
        (vec![5, 6, 7], 3),
        (vec![0, 1, 9, 10], 4),
        (vec![2, 3, 4, 5, 99], 4),
        (vec![8, 11, 100], 2),
    ] {
        let n = ok(store.archive(id, pick(&batch)).await, "archive")?;
        ensure!(
            n == new,
            "archiving {batch:?} into {id} reported {n} new, expected {new}"
        );
    }
    let mut want_seqs = vec![0u64, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 99, 100, 101, 119];
    want_seqs.sort_unstable();
    let got = ok(store.read_archived(id).await, "readArchived")?;
    ensure!(
        got == pick(&want_seqs),
        "readArchived of {id} gave sequences {:?}, expected {want_seqs:?}",
        sequences(&got)
    );
    Ok(Outcome::Pass)
}

/// A different envelope at an archived sequence refuses the whole batch wherever it
/// sits, first, middle or last, and the new envelopes around it are not written; an
/// identical envelope at any position is skipped and not counted (SPI-19).
pub async fn spi_19_clash_at_first_middle_or_last_refuses_the_batch<S: ArchiveStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_19-clash");
    let all = events(id, 0, 30, "a");
    ok(
        store.archive(id, all[10..13].to_vec()).await,
        "archive 10..13",
    )?;
    let batches: [(&str, Vec<u64>); 3] = [
        ("first", vec![10, 20, 21]),
        ("middle", vec![5, 11, 22]),
        ("last", vec![6, 7, 12]),
    ];
    for (position, seqs) in batches {
        let mut seqs = seqs.clone();
        seqs.sort_unstable();
        let batch: Vec<_> = seqs
            .iter()
            .map(|s| {
                if (10..13).contains(s) {
                    events(id, *s, 1, "different").remove(0)
                } else {
                    all[*s as usize].clone()
                }
            })
            .collect();
        err_kind(
            store.archive(id, batch).await,
            "already-exists",
            &format!("a clash at the {position} position"),
        )?;
        let got = ok(store.read_archived(id).await, "readArchived")?;
        ensure!(
            got == all[10..13],
            "after a batch clashing at its {position} envelope, {id} holds sequences {:?}",
            sequences(&got)
        );
    }
    for (position, seqs) in [
        ("first", [10u64, 14, 15]),
        ("middle", [9, 11, 16]),
        ("last", [7, 8, 12]),
    ] {
        let batch: Vec<_> = seqs.iter().map(|s| all[*s as usize].clone()).collect();
        let n = ok(
            store.archive(id, batch).await,
            &format!("an identical envelope at the {position} position"),
        )?;
        ensure!(
            n == 2,
            "a batch with one already archived envelope (at its {position} position) reported {n} new, expected 2"
        );
    }
    Ok(Outcome::Pass)
}

/// Sequences in a batch must be strictly ascending: a repeated sequence (equal, not
/// greater) is refused as a descending one is, at any position; gaps are allowed
/// (SPI-19).
pub async fn spi_19_sequences_must_strictly_ascend<S: ArchiveStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_19-ascend");
    let all = events(id, 0, 10, "s");
    for seqs in [[3u64, 3, 4], [3, 4, 4], [5, 4, 6], [1, 2, 0]] {
        let batch: Vec<_> = seqs.iter().map(|s| all[*s as usize].clone()).collect();
        err_kind(
            store.archive(id, batch).await,
            "invalid-argument",
            &format!("archive of sequences {seqs:?}"),
        )?;
    }
    ensure!(
        ok(store.read_archived(id).await, "readArchived")?.is_empty(),
        "a refused batch was written"
    );
    let gaps: Vec<_> = [0u64, 2, 9]
        .iter()
        .map(|s| all[*s as usize].clone())
        .collect();
    ensure!(
        ok(store.archive(id, gaps).await, "archive with gaps")? == 3,
        "a batch with gaps miscounted"
    );
    Ok(Outcome::Pass)
}

/// The batch limit from both sides: `archive` of exactly `APPEND_BATCH_EVENTS_MAX`
/// envelopes is accepted, one more is `invalid-argument` and writes nothing; the same
/// for `replaceSegments`, whose refusal leaves the archive as it was (SPI-18, SPI-19).
pub async fn spi_19_batch_limit_from_both_sides<S: ArchiveStore>(store: &S, cx: &Ctx) -> Verdict {
    use loom_kernel::spi::APPEND_BATCH_EVENTS_MAX as MAX;
    let small = |id: &str, n: usize| -> Vec<_> {
        (0..n as u64)
            .map(|s| crate::case::envelope(id, s, "E", serde_json::json!(s)))
            .collect()
    };
    let at = &*cx.id("spi_19-limit-at");
    ensure!(
        ok(
            store.archive(at, small(at, MAX)).await,
            "archive of exactly the limit"
        )? == MAX as u64,
        "archive of {MAX} envelopes miscounted"
    );
    let over = &*cx.id("spi_19-limit-over");
    err_kind(
        store.archive(over, small(over, MAX + 1)).await,
        "invalid-argument",
        "archive of the limit + 1",
    )?;
    ensure!(
        ok(store.read_archived(over).await, "readArchived")?.is_empty(),
        "a refused oversize batch was written"
    );
    if store.capabilities().claims(M::ReplaceSegments) {
        err_kind(
            store.replace_segments(at, small(at, MAX + 1)).await,
            "invalid-argument",
            "replaceSegments with the limit + 1",
        )?;
        ensure!(
            ok(store.read_archived(at).await, "readArchived")?.len() == MAX,
            "a refused oversize replacement changed the archive"
        );
        ok(
            store.replace_segments(at, small(at, MAX)).await,
            "replaceSegments with exactly the limit",
        )?;
    }
    Ok(Outcome::Pass)
}

/// Archived envelopes read back as written (decision 0006 values, `{}` and absent
/// metadata), and archiving the same envelopes again is recognised as identical, not a
/// clash: a store that compares stored bytes it normalised would refuse its own copy
/// (SPI-19).
pub async fn spi_19_values_read_back_identical<S: ArchiveStore>(store: &S, cx: &Ctx) -> Verdict {
    let id = &*format!("{}\u{e9}\u{1f600}", cx.id("spi_19-fidelity-"));
    let batch: Vec<_> = (0..3u64)
        .map(|seq| {
            let mut e = crate::case::envelope(
                id,
                seq,
                "\u{e9}v\u{e9}nement",
                crate::case::fidelity_payload(&format!("archived {seq}")),
            );
            e.timestamp_ms = 9_007_199_254_740_993 + seq as i64;
            e.metadata = match seq {
                0 => Some(serde_json::Map::new()),
                1 => None,
                _ => serde_json::json!({ "nothing": null, "kernel": true })
                    .as_object()
                    .cloned(),
            };
            e
        })
        .collect();
    ok(store.archive(id, batch.clone()).await, "archive")?;
    let got = ok(store.read_archived(id).await, "readArchived")?;
    if let Some(diff) = crate::case::first_envelope_difference(&got, &batch) {
        return Err(crate::Failure(format!("{id}: {diff}")));
    }
    let again = ok(
        store.archive(id, batch.clone()).await,
        "archiving the identical envelopes again",
    )?;
    ensure!(
        again == 0,
        "re-archiving identical envelopes reported {again} new"
    );
    Ok(Outcome::Pass)
}

/// Every archive-store method answers an empty or over-long id as the id-validation table says
/// (`loom_conformance::ids::ID_VALIDATION`, printed in docs/protocols/store.md): the writes refuse it, the reads and deletes answer as for an unknown id
/// (GAP-27).
pub async fn gap_27_out_of_range_ids_follow_the_table<S: ArchiveStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use crate::ids::{id_answer, judge_id_rule, out_of_range_ids, rules_of};
    let _ = cx;
    let caps = store.capabilities();
    for rule in rules_of("archiveStore") {
        for bad in out_of_range_ids() {
            let b = &*bad;
            let answer = match (rule.method, rule.argument) {
                ("archiveStore.archive", _) => id_answer(
                    store.archive(b, crate::case::events(b, 0, 1, "a")).await,
                    |_| false,
                ),
                ("archiveStore.readArchived", _) => id_answer(
                    store.read_archived(b).await,
                    |r| matches!(r, Ok(v) if v.is_empty()),
                ),
                ("archiveStore.replaceSegments", _)
                    if caps.claims(loom_kernel::spi::ArchiveStoreMethod::ReplaceSegments) =>
                {
                    id_answer(
                        store
                            .replace_segments(b, crate::case::events(b, 0, 1, "a"))
                            .await,
                        |_| false,
                    )
                }
                ("archiveStore.deleteExecution", _)
                    if caps.claims(loom_kernel::spi::ArchiveStoreMethod::DeleteExecution) =>
                {
                    id_answer(store.delete_execution(b).await, |r| matches!(r, Ok(0)))
                }
                _ => continue,
            };
            judge_id_rule(rule, b, answer)?;
        }
    }
    Ok(Outcome::Pass)
}

/// Hostile execution ids keep their own archives (SPI-19, GAP-27).
pub async fn spi_19_hostile_ids_keep_their_own_archives<S: ArchiveStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let ids = crate::ids::hostile_ids(&cx.id("h."));
    for (family, id) in &ids {
        let r = store.archive(id, crate::case::events(id, 0, 1, "h")).await;
        ok(r, &format!("archive {id:?} ({})", family.name()))?;
    }
    for (family, id) in &ids {
        let got = ok(store.read_archived(id).await, "readArchived")?;
        ensure!(
            got.len() == 1 && got[0].execution_id == *id,
            "{} ids: readArchived({id:?}) gave {} envelopes (execution ids {:?}), expected its own one",
            family.name(),
            got.len(),
            got.iter().map(|e| e.execution_id.clone()).collect::<Vec<_>>()
        );
    }
    Ok(Outcome::Pass)
}
