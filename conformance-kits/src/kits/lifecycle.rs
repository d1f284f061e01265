//! LogLifecycle cases (SPI-09, SPI-10, SPI-16, SPI-17, SPI-19): the kernel-side
//! [`LogLifecycle`] run over a store triple. These prove the caller's rules (archive
//! before truncate, refuse instead of falling back, keep the snapshot the tail needs)
//! on the stores under test.

use loom_kernel::spi::{
    ArchiveStore, EventStore, EventStoreMethod as EM, SnapshotStore, SnapshotStoreMethod as SM,
};

use crate::case::{
    ensure, events, join2, ok, require_claims, sequences, Ctx, Failure, Outcome, Verdict,
};
use crate::fault::Restrict;
use crate::kits::snapshot_store::record;
use crate::lifecycle::{LifecycleError, LogLifecycle};

/// The three stores a lifecycle works over.
pub trait LifecycleStores {
    /// The log.
    type Events: EventStore;
    /// The snapshots.
    type Snapshots: SnapshotStore;
    /// The compaction archive.
    type Archive: ArchiveStore;
    /// The EventStore.
    fn events(&self) -> &Self::Events;
    /// The SnapshotStore.
    fn snapshots(&self) -> &Self::Snapshots;
    /// The ArchiveStore.
    fn archive(&self) -> &Self::Archive;
}

impl<E: EventStore, S: SnapshotStore, A: ArchiveStore> LifecycleStores for (E, S, A) {
    type Events = E;
    type Snapshots = S;
    type Archive = A;
    fn events(&self) -> &E {
        &self.0
    }
    fn snapshots(&self) -> &S {
        &self.1
    }
    fn archive(&self) -> &A {
        &self.2
    }
}

crate::__kit_cases! {
    kit: LifecycleKit, name: "lifecycle", bound: LifecycleStores, fresh: false, claims: claims_of,
    cases: [
        spi_19_compact_archives_exactly_the_removed_envelopes => ["SPI-19", "SPI-09"], "2.6.0", ["deleteThrough"];
        spi_19_compact_without_archive_refuses => ["SPI-19"], "1.0.0", [];
        spi_10_compact_without_delete_through_refuses => ["SPI-10"], "1.0.0", [];
        spi_19_crash_between_archive_and_truncate_loses_nothing => ["SPI-19"], "2.6.0", ["deleteThrough"];
        spi_09_reads_during_compaction_see_whole_states => ["SPI-09", "SPI-19"], "2.6.0", ["deleteThrough"];
        spi_16_prune_never_removes_the_latest_snapshot => ["SPI-16", "SPI-17"], "1.3.0", ["listSequences", "pruneSnapshots"];
        spi_17_dry_run_reports_and_deletes_nothing => ["SPI-17"], "1.3.0", ["listSequences", "pruneSnapshots"];
    ]
}

/// What the three stores claim together, for the case table's `needs`.
fn claims_of<L: LifecycleStores>(stores: &L) -> crate::case::Claims {
    use crate::case::Claims;
    Claims::of(&stores.events().capabilities())
        .with(Claims::of(&stores.snapshots().capabilities()))
        .with(Claims::of(&stores.archive().capabilities()))
}

fn lifecycle_err<T>(r: Result<T, LifecycleError>, what: &str) -> Result<T, Failure> {
    r.map_err(|e| Failure(format!("{what}: {e}")))
}

/// `compact(k)` leaves exactly the events after `k` in the log and exactly the removed
/// envelopes, byte for byte, in the archive (SPI-19).
pub async fn spi_19_compact_archives_exactly_the_removed_envelopes<T: LifecycleStores>(
    stores: &T,
    cx: &Ctx,
) -> Verdict {
    require_claims!(stores.events().capabilities(), EM::DeleteThrough);
    let id = &*cx.id("spi_19-compact");
    let all = events(id, 0, 8, "c");
    ok(
        stores.events().append(id, 0, all.clone(), None).await,
        "append",
    )?;
    let lifecycle = LogLifecycle::new(stores.events()).with_archive(stores.archive());
    let report = lifecycle_err(lifecycle.compact(id, 4).await, "compact(4)")?;
    ensure!(
        report.removed == 5,
        "compact(4) on {id} removed {}, expected 5",
        report.removed
    );
    let log = ok(stores.events().read(id).await, "read")?;
    ensure!(
        log == all[5..],
        "log of {id} after compact(4) has sequences {:?}, expected 5..8",
        sequences(&log)
    );
    let archived = lifecycle_err(lifecycle.read_archived(id).await, "readArchived")?;
    ensure!(
        archived == all[..5],
        "archive of {id} has sequences {:?} (or different bytes), expected exactly 0..=4",
        sequences(&archived)
    );
    Ok(Outcome::Pass)
}

/// Without an ArchiveStore compaction refuses and the log is untouched (SPI-19).
pub async fn spi_19_compact_without_archive_refuses<T: LifecycleStores>(
    stores: &T,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_19-no-archive");
    let all = events(id, 0, 3, "n");
    ok(
        stores.events().append(id, 0, all.clone(), None).await,
        "append",
    )?;
    let result = LogLifecycle::new(stores.events()).compact(id, 1).await;
    ensure!(
        matches!(result, Err(LifecycleError::Refused(_))),
        "compaction of {id} without an archive gave {result:?}, expected a refusal"
    );
    ensure!(
        ok(stores.events().read(id).await, "read")? == all,
        "the refused compaction changed the log of {id}"
    );
    Ok(Outcome::Pass)
}

/// A store without `deleteThrough` makes compaction refuse; it never falls back to
/// `deleteExecution`, and the log is untouched (SPI-10).
pub async fn spi_10_compact_without_delete_through_refuses<T: LifecycleStores>(
    stores: &T,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_10-no-delete-through");
    let all = events(id, 0, 3, "n");
    ok(
        stores.events().append(id, 0, all.clone(), None).await,
        "append",
    )?;
    let restricted = Restrict::new(stores.events(), [EM::DeleteThrough]);
    let lifecycle = LogLifecycle::new(&restricted).with_archive(stores.archive());
    let result = lifecycle.compact(id, 1).await;
    ensure!(
        matches!(result, Err(LifecycleError::Refused(_))),
        "compaction of {id} on a store without deleteThrough gave {result:?}, expected a refusal"
    );
    ensure!(
        restricted.delete_execution_calls() == 0,
        "compaction fell back to deleteExecution"
    );
    ensure!(
        ok(stores.events().read(id).await, "read")? == all,
        "the refused compaction changed the log of {id}"
    );
    Ok(Outcome::Pass)
}

/// A crash after the archive write and before the truncation loses nothing: the log is
/// whole, the archive holds the envelopes, and a rerun finishes the job (SPI-19).
pub async fn spi_19_crash_between_archive_and_truncate_loses_nothing<T: LifecycleStores>(
    stores: &T,
    cx: &Ctx,
) -> Verdict {
    require_claims!(stores.events().capabilities(), EM::DeleteThrough);
    let id = &*cx.id("spi_19-crash");
    let all = events(id, 0, 6, "k");
    ok(
        stores.events().append(id, 0, all.clone(), None).await,
        "append",
    )?;
    let crashing = LogLifecycle::new(stores.events())
        .with_archive(stores.archive())
        .fail_after_archive(true);
    let result = crashing.compact(id, 2).await;
    ensure!(
        matches!(result, Err(LifecycleError::Interrupted)),
        "the failpoint did not fire: {result:?}"
    );
    ensure!(
        ok(stores.events().read(id).await, "read")? == all,
        "the log of {id} changed before the truncation"
    );
    let archived = ok(stores.archive().read_archived(id).await, "readArchived")?;
    ensure!(
        archived == all[..3],
        "after the crash the archive of {id} holds {:?}, expected 0..=2",
        sequences(&archived)
    );
    let rerun = LogLifecycle::new(stores.events()).with_archive(stores.archive());
    let report = lifecycle_err(rerun.compact(id, 2).await, "rerun")?;
    ensure!(
        report.newly_archived == 0 && report.removed == 3,
        "rerun report {report:?}, expected 3 removed, 0 new"
    );
    ensure!(
        ok(stores.events().read(id).await, "read")? == all[3..],
        "the rerun left the wrong log for {id}"
    );
    Ok(Outcome::Pass)
}

/// A reader racing a compaction sees the whole log or the whole suffix, never a partial
/// delete (SPI-09).
pub async fn spi_09_reads_during_compaction_see_whole_states<T: LifecycleStores>(
    stores: &T,
    cx: &Ctx,
) -> Verdict {
    require_claims!(stores.events().capabilities(), EM::DeleteThrough);
    let id = &*cx.id("spi_09-read-during-compact");
    let all = events(id, 0, 10, "r");
    ok(
        stores.events().append(id, 0, all.clone(), None).await,
        "append",
    )?;
    let lifecycle = LogLifecycle::new(stores.events()).with_archive(stores.archive());
    let (read, compacted) = join2(stores.events().read(id), lifecycle.compact(id, 6)).await;
    lifecycle_err(compacted, "compact")?;
    let read = ok(read, "concurrent read")?;
    ensure!(
        read == all || read == all[7..],
        "a read during compaction of {id} saw sequences {:?}: a partial delete",
        sequences(&read)
    );
    Ok(Outcome::Pass)
}

/// Pruning through the newest snapshot still keeps it (SPI-16), and the store deletes
/// exactly what `listSequences` predicted (SPI-17).
pub async fn spi_16_prune_never_removes_the_latest_snapshot<T: LifecycleStores>(
    stores: &T,
    cx: &Ctx,
) -> Verdict {
    require_claims!(
        stores.snapshots().capabilities(),
        SM::ListSequences,
        SM::PruneSnapshots
    );
    let id = &*cx.id("spi_16-lifecycle-prune");
    for seq in [4, 8, 12] {
        ok(stores.snapshots().save(id, record(seq, "p")).await, "save")?;
    }
    let lifecycle = LogLifecycle::new(stores.events()).with_snapshots(stores.snapshots());
    let report = lifecycle_err(lifecycle.prune_snapshots(id, 100, false).await, "prune")?;
    ensure!(
        report.sequences == vec![4, 8],
        "pruned {:?} of {id}, expected [4, 8]",
        report.sequences
    );
    let left = ok(stores.snapshots().list_sequences(id).await, "listSequences")?;
    ensure!(
        left == vec![12],
        "snapshots left for {id}: {left:?}, expected the latest [12]"
    );
    Ok(Outcome::Pass)
}

/// A dry run reports the same set a real prune deletes and deletes nothing (SPI-17).
pub async fn spi_17_dry_run_reports_and_deletes_nothing<T: LifecycleStores>(
    stores: &T,
    cx: &Ctx,
) -> Verdict {
    require_claims!(
        stores.snapshots().capabilities(),
        SM::ListSequences,
        SM::PruneSnapshots
    );
    let id = &*cx.id("spi_17-dry-run");
    for seq in [9, 3, 6, 12] {
        ok(stores.snapshots().save(id, record(seq, "d")).await, "save")?;
    }
    let lifecycle = LogLifecycle::new(stores.events()).with_snapshots(stores.snapshots());
    let dry = lifecycle_err(lifecycle.prune_snapshots(id, 6, true).await, "dry run")?;
    ensure!(
        dry.sequences == vec![3, 6],
        "dry run for {id} reported {:?}, expected [3, 6]",
        dry.sequences
    );
    let all = ok(stores.snapshots().list_sequences(id).await, "listSequences")?;
    ensure!(
        all == vec![3, 6, 9, 12],
        "the dry run deleted snapshots of {id}: left {all:?}"
    );
    let real = lifecycle_err(lifecycle.prune_snapshots(id, 6, false).await, "prune")?;
    ensure!(
        real.sequences == dry.sequences,
        "prune deleted {:?}, the dry run said {:?}",
        real.sequences,
        dry.sequences
    );
    Ok(Outcome::Pass)
}
