//! SnapshotStore cases (SPI-15, SPI-16, SPI-17, SPI-21).

use serde_json::json;

use loom_kernel::snapshot::SnapshotRecord;
use loom_kernel::spi::{SnapshotStore, SnapshotStoreMethod as M};
use loom_kernel::versions::{EVENT_SCHEMA_VERSION, SNAPSHOT_STORE_SPI_VERSION};

use crate::case::{
    check_capabilities, check_probe, ensure, err_kind, ok, require_claims, Ctx, Failure, Outcome,
    Verdict,
};

crate::__kit_cases! {
    kit: SnapshotStoreKit, name: "snapshot-store", bound: SnapshotStore, fresh: false, claims: claims_of,
    cases: [
        spi_21_snapshot_capabilities_are_consistent => ["SPI-21", "SPI-01"], "1.0.0", [];
        spi_15_claims_match_behaviour => ["SPI-15", "SPI-02"], "1.0.0", [];
        spi_15_load_latest_returns_highest_sequence => ["SPI-15"], "1.0.0", [];
        spi_15_save_at_same_sequence_replaces => ["SPI-15"], "1.0.0", [];
        snap_09_decision_order_survives_key_reordering => ["SNAP-09", "SPI-15"], "1.0.0", [];
        spi_15_load_latest_sealed_matches_load_latest => ["SPI-15", "GAP-27"], "1.1.0", ["loadLatestSealed"];
        spi_15_delete_execution_removes_every_snapshot => ["SPI-15", "GAP-27"], "1.0.0", ["deleteExecution"];
        spi_16_prune_snapshots_deletes_exactly_through => ["SPI-16"], "1.2.0", ["pruneSnapshots"];
        spi_17_list_sequences_ascending => ["SPI-17"], "1.3.0", ["listSequences"];
        spi_15_latest_of_many_snapshots => ["SPI-15", "SPI-17"], "1.0.0", [];
        spi_16_prune_at_zero_at_a_snapshot_and_past_the_latest => ["SPI-16"], "1.2.0", ["pruneSnapshots"];
        spi_15_values_read_back_identical => ["SPI-15"], "1.0.0", [];
        gap_27_out_of_range_ids_follow_the_table => ["GAP-27", "SPI-15"], "1.0.0", [];
        spi_15_hostile_ids_keep_their_own_snapshots => ["SPI-15", "GAP-27"], "1.0.0", [];
    ]
}

/// What the store claims, for the case table's `needs`.
fn claims_of<S: SnapshotStore>(store: &S) -> crate::case::Claims {
    crate::case::Claims::of(&store.capabilities())
}

/// A deterministic snapshot at `sequence`, with a state whose keys are out of order.
pub fn record(sequence: u64, tag: &str) -> SnapshotRecord {
    SnapshotRecord {
        schema_version: EVENT_SCHEMA_VERSION.to_string(),
        sequence,
        state: json!({
            "status": "running",
            "variables": { "_decisions": { "10": { "choice": tag, "seq": 3 }, "2": { "choice": "b", "seq": 1 } } },
            "frames": {},
            "sequence": sequence,
            "startedAt": 1, "updatedAt": 2
        }),
    }
}

/// The claim is consistent and shares the kernel's major version (SPI-21).
pub async fn spi_21_snapshot_capabilities_are_consistent<S: SnapshotStore>(
    store: &S,
    _cx: &Ctx,
) -> Verdict {
    check_capabilities(&store.capabilities(), SNAPSHOT_STORE_SPI_VERSION)
}

/// Each optional method answers `unsupported` iff it is not claimed (SPI-02, SPI-15).
pub async fn spi_15_claims_match_behaviour<S: SnapshotStore>(store: &S, cx: &Ctx) -> Verdict {
    let caps = store.capabilities();
    let p = &*cx.id("spi_15-probe");
    check_probe(&caps, M::DeleteExecution, &store.delete_execution(p).await)?;
    check_probe(
        &caps,
        M::LoadLatestSealed,
        &store.load_latest_sealed(p).await,
    )?;
    check_probe(&caps, M::PruneSnapshots, &store.prune_snapshots(p, 0).await)?;
    check_probe(&caps, M::ListSequences, &store.list_sequences(p).await)?;
    Ok(Outcome::Pass)
}

/// `loadLatest` returns the highest sequence whatever the save order (SPI-15).
pub async fn spi_15_load_latest_returns_highest_sequence<S: SnapshotStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_15-latest");
    ensure!(
        ok(store.load_latest(id).await, "load of nothing")?.is_none(),
        "an unknown id has a snapshot"
    );
    for seq in [5, 2, 9, 7] {
        ok(
            store.save(id, record(seq, &format!("at{seq}"))).await,
            "save",
        )?;
    }
    let latest = ok(store.load_latest(id).await, "loadLatest")?;
    ensure!(
        latest == Some(record(9, "at9")),
        "loadLatest gave {latest:?}, expected the record at 9"
    );
    Ok(Outcome::Pass)
}

/// A second save at the same sequence replaces the first (reference-defined).
pub async fn spi_15_save_at_same_sequence_replaces<S: SnapshotStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("spi_15-replace");
    ok(store.save(id, record(4, "old")).await, "save")?;
    ok(store.save(id, record(4, "new")).await, "save again")?;
    let latest = ok(store.load_latest(id).await, "loadLatest")?;
    ensure!(
        latest == Some(record(4, "new")),
        "loadLatest gave {latest:?}, expected the newer record"
    );
    Ok(Outcome::Pass)
}

/// With no sealing layer, `loadLatestSealed` equals `loadLatest` (GAP-27).
pub async fn spi_15_load_latest_sealed_matches_load_latest<S: SnapshotStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::LoadLatestSealed);
    let id = &*cx.id("spi_15-sealed");
    ok(store.save(id, record(3, "x")).await, "save")?;
    let sealed = ok(store.load_latest_sealed(id).await, "loadLatestSealed")?;
    let plain = ok(store.load_latest(id).await, "loadLatest")?;
    ensure!(
        sealed == plain,
        "loadLatestSealed {sealed:?} differs from loadLatest {plain:?}"
    );
    Ok(Outcome::Pass)
}

/// `deleteExecution` removes every snapshot of the execution and no other's.
pub async fn spi_15_delete_execution_removes_every_snapshot<S: SnapshotStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::DeleteExecution);
    let (id, other) = (&*cx.id("spi_15-delete"), &*cx.id("spi_15-delete-other"));
    for seq in [1, 2, 3] {
        ok(store.save(id, record(seq, "x")).await, "save")?;
    }
    ok(store.save(other, record(1, "y")).await, "save other")?;
    let n = ok(store.delete_execution(id).await, "deleteExecution")?;
    ensure!(n == 3, "deleteExecution reported {n}, expected 3");
    ensure!(
        ok(store.load_latest(id).await, "load")?.is_none(),
        "a snapshot survived deleteExecution"
    );
    ensure!(
        ok(store.load_latest(other).await, "load other")?.is_some(),
        "another execution's snapshot was deleted"
    );
    Ok(Outcome::Pass)
}

/// `pruneSnapshots(k)` deletes exactly the snapshots `<= k` (SPI-16).
pub async fn spi_16_prune_snapshots_deletes_exactly_through<S: SnapshotStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::PruneSnapshots);
    let id = &*cx.id("spi_16-prune");
    for seq in [10, 20, 30, 40, 50, 60] {
        ok(store.save(id, record(seq, "x")).await, "save")?;
    }
    ensure!(
        ok(store.prune_snapshots(id, 5).await, "prune below all")? == 0,
        "pruning below every snapshot deleted some"
    );
    let n = ok(store.prune_snapshots(id, 35).await, "pruneSnapshots(35)")?;
    ensure!(n == 3, "pruneSnapshots(35) reported {n}, expected 3");
    ensure!(
        ok(store.prune_snapshots(id, 40).await, "pruneSnapshots(40)")? == 1,
        "the boundary sequence 40 was not pruned"
    );
    if store.capabilities().claims(M::ListSequences) {
        let left = ok(store.list_sequences(id).await, "listSequences")?;
        ensure!(left == vec![50, 60], "left {left:?}, expected [50, 60]");
    }
    let latest = ok(store.load_latest(id).await, "loadLatest")?;
    ensure!(
        latest.map(|r| r.sequence) == Some(60),
        "the latest snapshot was disturbed"
    );
    Ok(Outcome::Pass)
}

/// `listSequences` is ascending with one entry per snapshot, whatever the save order;
/// its prefix `<= k` is exactly what `pruneSnapshots(k)` then deletes (SPI-17).
pub async fn spi_17_list_sequences_ascending<S: SnapshotStore>(store: &S, cx: &Ctx) -> Verdict {
    require_claims!(store.capabilities(), M::ListSequences);
    let id = &*cx.id("spi_17-list");
    ensure!(
        ok(store.list_sequences(id).await, "list of nothing")?.is_empty(),
        "an unknown id lists sequences"
    );
    for seq in [7, 3, 11, 1, 5, 3] {
        ok(store.save(id, record(seq, "x")).await, "save")?;
    }
    let listed = ok(store.list_sequences(id).await, "listSequences")?;
    ensure!(
        listed == vec![1, 3, 5, 7, 11],
        "listSequences gave {listed:?}, expected [1, 3, 5, 7, 11]"
    );
    if store.capabilities().claims(M::PruneSnapshots) {
        let dry_run: Vec<u64> = listed.iter().copied().filter(|s| *s <= 5).collect();
        let n = ok(store.prune_snapshots(id, 5).await, "prune")?;
        ensure!(
            n == dry_run.len() as u64,
            "the dry run predicted {} deletions, prune made {n}",
            dry_run.len()
        );
    }
    Ok(Outcome::Pass)
}

/// Decision order survives a store that reorders object keys (Postgres `jsonb` sorts
/// them, shorter first): the order is carried by each decision's `seq`, so sorting the
/// loaded `_decisions` by `seq` gives back the order they were made in, and every `seq`
/// is intact (SNAP-09, FOLD 1.24.0).
pub async fn snap_09_decision_order_survives_key_reordering<S: SnapshotStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let id = &*cx.id("snap_09-order");
    // Made in this order; every key order a store might normalise to differs from it.
    let made = ["zeta", "b", "10", "2", "alpha", "a_much_longer_decision_id"];
    let mut decisions = serde_json::Map::new();
    for (seq, key) in made.iter().enumerate() {
        decisions.insert(
            key.to_string(),
            json!({ "choice": format!("c{seq}"), "seq": seq }),
        );
    }
    let saved = SnapshotRecord {
        schema_version: EVENT_SCHEMA_VERSION.to_string(),
        sequence: 7,
        state: json!({ "status": "running", "frames": {}, "variables": { "_decisions": decisions }, "sequence": 7, "startedAt": 1, "updatedAt": 2 }),
    };
    ok(store.save(id, saved).await, "save")?;
    let loaded = ok(store.load_latest(id).await, "loadLatest")?
        .ok_or_else(|| Failure(format!("no snapshot of {id} after save")))?;
    let Some(loaded_decisions) = loaded
        .state
        .pointer("/variables/_decisions")
        .and_then(|v| v.as_object())
    else {
        return Err(Failure(format!(
            "the snapshot of {id} at sequence 7 lost /variables/_decisions"
        )));
    };
    let mut by_seq: Vec<(u64, &str)> = Vec::new();
    for (key, value) in loaded_decisions {
        let Some(seq) = value.get("seq").and_then(|s| s.as_u64()) else {
            return Err(Failure(format!(
                "decision {key:?} of {id} (snapshot sequence 7) lost its seq: decision order cannot be recovered"
            )));
        };
        by_seq.push((seq, key));
    }
    by_seq.sort();
    let order: Vec<&str> = by_seq.iter().map(|(_, k)| *k).collect();
    ensure!(
        order == made,
        "decisions of {id} sorted by seq come out {order:?}, they were made {made:?}"
    );
    Ok(Outcome::Pass)
}

/// Sequences saved out of order, across digit boundaries (9/10, 99/100) and beyond
/// 2^32 and 2^53, so a store that sorts them as text or truncates them is seen.
pub const MANY_SNAPSHOT_SEQUENCES: [u64; 11] = [
    9,
    10,
    2,
    100,
    99,
    1_000_000,
    3,
    (1 << 40) + 7,
    4_294_967_296,
    9_007_199_254_740_993,
    0,
];

/// With many snapshots, `loadLatest` is always the highest sequence (compared as a
/// number): after each save in a scrambled order, after a save below the latest, after
/// replacing the latest, and after pruning or deleting down to the next one; and
/// `listSequences` is numeric order (SPI-15, SPI-17).
pub async fn spi_15_latest_of_many_snapshots<S: SnapshotStore>(store: &S, cx: &Ctx) -> Verdict {
    let id = &*cx.id("spi_15-many");
    let mut saved: Vec<u64> = Vec::new();
    for seq in MANY_SNAPSHOT_SEQUENCES {
        ok(
            store.save(id, record(seq, &format!("at{seq}"))).await,
            "save",
        )?;
        saved.push(seq);
        let want = *saved.iter().max().unwrap_or(&seq);
        let latest = ok(store.load_latest(id).await, "loadLatest")?;
        ensure!(
            latest == Some(record(want, &format!("at{want}"))),
            "after saving {saved:?} to {id}, loadLatest gave the record at {:?}, expected {want}",
            latest.map(|r| r.sequence)
        );
    }
    let max = *saved.iter().max().unwrap_or(&0);
    ok(
        store.save(id, record(max, "replaced")).await,
        "replace the latest",
    )?;
    let latest = ok(store.load_latest(id).await, "loadLatest")?;
    ensure!(
        latest == Some(record(max, "replaced")),
        "after replacing the latest snapshot of {id}, loadLatest gave {latest:?}"
    );
    let caps = store.capabilities();
    let mut sorted = saved.clone();
    sorted.sort_unstable();
    if caps.claims(M::ListSequences) {
        let listed = ok(store.list_sequences(id).await, "listSequences")?;
        ensure!(
            listed == sorted,
            "listSequences of {id} gave {listed:?}, expected {sorted:?}"
        );
    }
    if caps.claims(M::PruneSnapshots) {
        // Pruning through the second highest leaves exactly the highest.
        let second = sorted[sorted.len() - 2];
        let n = ok(store.prune_snapshots(id, second).await, "pruneSnapshots")?;
        ensure!(
            n == sorted.len() as u64 - 1,
            "pruneSnapshots({second}) of {id} reported {n}, expected {}",
            sorted.len() - 1
        );
        let latest = ok(store.load_latest(id).await, "loadLatest")?;
        ensure!(
            latest.map(|r| r.sequence) == Some(max),
            "pruning below the latest disturbed it"
        );
    }
    Ok(Outcome::Pass)
}

/// `pruneSnapshots` at every end: at 0 (sequence 0 included), at a stored sequence `k`
/// (deleted) and at `k - 1` (kept), past the latest (everything), at `SEQUENCE_MAX`
/// (allowed) and past it (`invalid-argument`, nothing deleted); on an unknown id it
/// deletes nothing (SPI-16).
pub async fn spi_16_prune_at_zero_at_a_snapshot_and_past_the_latest<S: SnapshotStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use loom_kernel::spi::SEQUENCE_MAX;
    require_claims!(store.capabilities(), M::PruneSnapshots);
    let id = &*cx.id("spi_16-ends");
    for seq in [0, 5, 10, 11, 100] {
        ok(store.save(id, record(seq, "x")).await, "save")?;
    }
    err_kind(
        store.prune_snapshots(id, SEQUENCE_MAX + 1).await,
        "invalid-argument",
        "pruneSnapshots(SEQUENCE_MAX + 1)",
    )?;
    for (through, want, latest) in [
        (0u64, 1u64, Some(100u64)),
        (0, 0, Some(100)),
        (4, 0, Some(100)),
        (5, 1, Some(100)),
        (10, 1, Some(100)),
        (99, 1, Some(100)),
        (100, 1, None),
    ] {
        let n = ok(
            store.prune_snapshots(id, through).await,
            &format!("pruneSnapshots({through})"),
        )?;
        ensure!(
            n == want,
            "pruneSnapshots({through}) of {id} reported {n}, expected {want}"
        );
        let got = ok(store.load_latest(id).await, "loadLatest")?.map(|r| r.sequence);
        ensure!(
            got == latest,
            "after pruneSnapshots({through}) of {id}, the latest is {got:?}, expected {latest:?}"
        );
    }
    ok(
        store.save(id, record(7, "again")).await,
        "save after pruning everything",
    )?;
    ensure!(
        ok(
            store.prune_snapshots(id, SEQUENCE_MAX).await,
            "pruneSnapshots(SEQUENCE_MAX)"
        )? == 1,
        "pruneSnapshots(SEQUENCE_MAX) did not delete the one snapshot"
    );
    ensure!(
        ok(
            store.prune_snapshots(&cx.id("spi_16-nobody"), 10).await,
            "prune of an unknown id"
        )? == 0,
        "pruning an unknown id deleted something"
    );
    Ok(Outcome::Pass)
}

/// A snapshot's state reads back as saved: integers beyond 2^53, floats, negative zero,
/// non-ASCII and astral text, `{}`, `[]` and `null` members, and the schema version
/// string (SPI-15; decision 0006). A sequence past `SEQUENCE_MAX` or an empty id is
/// `invalid-argument`, nothing saved.
pub async fn spi_15_values_read_back_identical<S: SnapshotStore>(store: &S, cx: &Ctx) -> Verdict {
    use loom_kernel::spi::SEQUENCE_MAX;
    let id = &*format!("{}\u{e9}\u{1f600}", cx.id("spi_15-fidelity-"));
    let saved = SnapshotRecord {
        schema_version: EVENT_SCHEMA_VERSION.to_string(),
        sequence: 9_007_199_254_740_993,
        state: json!({
            "status": "running",
            "variables": crate::case::fidelity_payload("snapshot"),
            "frames": {},
            "sequence": 9_007_199_254_740_993u64,
            "nothing": null,
            "startedAt": 1, "updatedAt": 2
        }),
    };
    ok(store.save(id, saved.clone()).await, "save")?;
    let loaded = ok(store.load_latest(id).await, "loadLatest")?
        .ok_or_else(|| Failure(format!("no snapshot of {id} after save")))?;
    ensure!(
        loaded.sequence == saved.sequence && loaded.schema_version == saved.schema_version,
        "the snapshot of {id} read back at sequence {} version {:?}, saved at {} version {:?}",
        loaded.sequence,
        loaded.schema_version,
        saved.sequence,
        saved.schema_version
    );
    ensure!(
        crate::case::same_json(&loaded.state, &saved.state),
        "the state of {id} read back as {} but was saved as {}",
        loaded.state,
        saved.state
    );
    let other = &*cx.id("spi_15-fidelity-bad");
    err_kind(
        store.save(other, record(SEQUENCE_MAX + 1, "x")).await,
        "invalid-argument",
        "save at SEQUENCE_MAX + 1",
    )?;
    err_kind(
        store.save("", record(1, "x")).await,
        "invalid-argument",
        "save under the empty id",
    )?;
    ensure!(
        ok(store.load_latest(other).await, "loadLatest")?.is_none(),
        "a refused save was stored"
    );
    Ok(Outcome::Pass)
}

/// Every snapshot-store method answers an empty or over-long id as the id-validation table says
/// (`loom_conformance::ids::ID_VALIDATION`, printed in docs/protocols/store.md): `save` refuses it, the reads and deletes answer as for an unknown id
/// (GAP-27).
pub async fn gap_27_out_of_range_ids_follow_the_table<S: SnapshotStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use crate::ids::{id_answer, judge_id_rule, out_of_range_ids, rules_of};
    let _ = cx;
    let caps = store.capabilities();
    for rule in rules_of("snapshotStore") {
        for bad in out_of_range_ids() {
            let b = &*bad;
            let answer = match (rule.method, rule.argument) {
                ("snapshotStore.save", _) => id_answer(
                    store
                        .save(
                            b,
                            loom_kernel::snapshot::SnapshotRecord {
                                schema_version: EVENT_SCHEMA_VERSION.to_string(),
                                sequence: 0,
                                state: json!({}),
                            },
                        )
                        .await,
                    |_| false,
                ),
                ("snapshotStore.loadLatest", _) => {
                    id_answer(store.load_latest(b).await, |r| matches!(r, Ok(None)))
                }
                ("snapshotStore.loadLatestSealed", _) if caps.claims(M::LoadLatestSealed) => {
                    id_answer(store.load_latest_sealed(b).await, |r| matches!(r, Ok(None)))
                }
                ("snapshotStore.pruneSnapshots", _) if caps.claims(M::PruneSnapshots) => {
                    id_answer(store.prune_snapshots(b, 0).await, |r| matches!(r, Ok(0)))
                }
                ("snapshotStore.listSequences", _) if caps.claims(M::ListSequences) => id_answer(
                    store.list_sequences(b).await,
                    |r| matches!(r, Ok(v) if v.is_empty()),
                ),
                ("snapshotStore.deleteExecution", _) if caps.claims(M::DeleteExecution) => {
                    id_answer(store.delete_execution(b).await, |r| matches!(r, Ok(0)))
                }
                _ => continue,
            };
            judge_id_rule(rule, b, answer)?;
        }
    }
    Ok(Outcome::Pass)
}

/// Hostile execution ids keep their own snapshots: each loads back the record saved
/// under it, not a twin's (SPI-15, GAP-27).
pub async fn spi_15_hostile_ids_keep_their_own_snapshots<S: SnapshotStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let ids = crate::ids::hostile_ids(&cx.id("h."));
    for (i, (_, id)) in ids.iter().enumerate() {
        let record = SnapshotRecord {
            schema_version: EVENT_SCHEMA_VERSION.to_string(),
            sequence: i as u64,
            state: json!({ "id": id }),
        };
        ok(store.save(id, record).await, "save")?;
    }
    for (i, (family, id)) in ids.iter().enumerate() {
        let got = ok(store.load_latest(id).await, "loadLatest")?;
        let ok_ = got
            .as_ref()
            .is_some_and(|r| r.sequence == i as u64 && r.state == json!({ "id": id }));
        ensure!(
            ok_,
            "{} ids: loadLatest({id:?}) gave {:?}, expected its own record at sequence {i}",
            family.name(),
            got.map(|r| (r.sequence, r.state))
        );
    }
    Ok(Outcome::Pass)
}
