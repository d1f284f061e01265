//! ArchiveStore cases (SPI-18, SPI-19, SPI-21; GAP-27 reference choices).

use loom_kernel::spi::{ArchiveStore, ArchiveStoreMethod as M};
use loom_kernel::versions::ARCHIVE_STORE_SPI_VERSION;

use crate::case::{
    check_capabilities, check_probe, ensure, err_kind, events, ok, require_claims, sequences, Ctx,
};
use crate::case::{Outcome, Verdict};

crate::__kit_cases! {
    kit: ArchiveStoreKit, name: "archive-store", bound: ArchiveStore, fresh: false,
    cases: [
        spi_21_archive_capabilities_are_consistent => ["SPI-21", "SPI-01"], "1.0.0", [];
        spi_18_claims_match_behaviour => ["SPI-18", "SPI-02"], "1.0.0", [];
        spi_19_archive_keeps_exact_envelopes => ["SPI-19"], "1.0.0", [];
        spi_19_archive_is_idempotent_per_sequence => ["SPI-19"], "1.0.0", [];
        spi_19_archive_refuses_invalid_batches => ["SPI-19"], "1.0.0", [];
        spi_18_replace_segments_replaces_atomically => ["SPI-18", "GAP-27"], "1.1.0", ["replaceSegments"];
        spi_18_delete_execution_removes_the_archive => ["SPI-18", "GAP-27"], "1.0.0", ["deleteExecution"];
    ]
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
