//! DurableStateStore cases (SPI-20; SPI-21 for the claim). The contract is
//! reference-defined (`loom_kernel::spi::plugin`): keyed JSON with compare-and-set
//! writes, versions that rise by one per write and never repeat for a key, and
//! conditional deletes.

use serde_json::json;

use loom_kernel::spi::{DurableStateStore, Versioned, ID_BYTES_MAX};
use loom_kernel::versions::DURABLE_STATE_STORE_SPI_VERSION;

use crate::case::{check_capabilities, ensure, err_kind, join_all, ok, Ctx, Outcome, Verdict};

crate::__kit_cases! {
    kit: DurableStateStoreKit, name: "durable-state-store", bound: DurableStateStore, fresh: false,
    cases: [
        spi_21_durable_state_capabilities_are_consistent => ["SPI-21", "SPI-20"], "1.0.0", [];
        spi_20_state_create_then_get_round_trips => ["SPI-20"], "1.0.0", [];
        spi_20_state_stale_version_is_conflict_and_writes_nothing => ["SPI-20"], "1.0.0", [];
        spi_20_state_create_of_existing_key_is_conflict => ["SPI-20"], "1.0.0", [];
        spi_20_state_concurrent_writers_exactly_one_wins => ["SPI-20"], "1.0.0", [];
        spi_20_state_delete_is_conditional => ["SPI-20"], "1.0.0", [];
        spi_20_state_versions_never_repeat_after_delete => ["SPI-20"], "1.0.0", [];
        spi_20_state_invalid_keys_refused => ["SPI-20"], "1.0.0", [];
    ]
}

/// The claim is consistent and shares the kernel's major version (SPI-21).
pub async fn spi_21_durable_state_capabilities_are_consistent<S: DurableStateStore>(
    store: &S,
    _cx: &Ctx,
) -> Verdict {
    check_capabilities(&store.capabilities(), DURABLE_STATE_STORE_SPI_VERSION)
}

/// A created key reads back at version 1; each update raises the version by one.
pub async fn spi_20_state_create_then_get_round_trips<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let key = &*cx.id("spi_20-state");
    ensure!(
        ok(store.get(key).await, "get of nothing")?.is_none(),
        "an unknown key has state"
    );
    let doc = json!({ "zeta": 1, "alpha": [true, null], "nested": { "b": 2, "a": 1 } });
    let v1 = ok(store.put(key, doc.clone(), None).await, "create")?;
    ensure!(v1 == 1, "a created key is at version {v1}, expected 1");
    let got = ok(store.get(key).await, "get")?;
    ensure!(
        got == Some(Versioned {
            value: doc,
            version: 1
        }),
        "get returned {got:?}"
    );
    let v2 = ok(store.put(key, json!("second"), Some(1)).await, "update")?;
    ensure!(v2 == 2, "an update from 1 gave version {v2}");
    let got = ok(store.get(key).await, "get")?;
    ensure!(
        got == Some(Versioned {
            value: json!("second"),
            version: 2
        }),
        "get after the update returned {got:?}"
    );
    Ok(Outcome::Pass)
}

/// A write naming a stale version is `Conflict` and changes nothing.
pub async fn spi_20_state_stale_version_is_conflict_and_writes_nothing<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let key = &*cx.id("spi_20-cas");
    ok(store.put(key, json!("v1"), None).await, "create")?;
    ok(store.put(key, json!("v2"), Some(1)).await, "update")?;
    err_kind(
        store.put(key, json!("stale"), Some(1)).await,
        "conflict",
        "write at stale version 1",
    )?;
    err_kind(
        store.put(key, json!("future"), Some(7)).await,
        "conflict",
        "write at a version never reached",
    )?;
    let got = ok(store.get(key).await, "get")?;
    ensure!(
        got == Some(Versioned {
            value: json!("v2"),
            version: 2
        }),
        "after refused writes the key holds {got:?}, expected v2 at version 2"
    );
    Ok(Outcome::Pass)
}

/// Creating (expected version `None`) a key that exists is `Conflict`; nothing written.
pub async fn spi_20_state_create_of_existing_key_is_conflict<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let key = &*cx.id("spi_20-create");
    ok(store.put(key, json!(1), None).await, "create")?;
    err_kind(
        store.put(key, json!(2), None).await,
        "conflict",
        "second create",
    )?;
    let got = ok(store.get(key).await, "get")?;
    ensure!(
        got == Some(Versioned {
            value: json!(1),
            version: 1
        }),
        "the refused create changed the key: {got:?}"
    );
    Ok(Outcome::Pass)
}

/// Writers racing from the same version: exactly one wins, the rest are `Conflict`.
pub async fn spi_20_state_concurrent_writers_exactly_one_wins<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let key = &*cx.id("spi_20-race");
    ok(store.put(key, json!("base"), None).await, "create")?;
    let writers = (0..4)
        .map(|i| store.put(key, json!(i), Some(1)))
        .collect::<Vec<_>>();
    let results = join_all(writers).await;
    let winners: Vec<usize> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_ok())
        .map(|(i, _)| i)
        .collect();
    ensure!(
        winners.len() == 1,
        "{} writers won from version 1",
        winners.len()
    );
    for r in &results {
        if let Err(e) = r {
            ensure!(e.kind.name() == "conflict", "a losing writer got {e}");
        }
    }
    let got = ok(store.get(key).await, "get")?;
    ensure!(
        got == Some(Versioned {
            value: json!(winners[0]),
            version: 2
        }),
        "the key holds {got:?}, expected writer {}'s value at version 2",
        winners[0]
    );
    Ok(Outcome::Pass)
}

/// `delete` needs the current version: stale is `Conflict` (kept), absent `NotFound`.
pub async fn spi_20_state_delete_is_conditional<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let key = &*cx.id("spi_20-del");
    err_kind(
        store.delete(key, 1).await,
        "not-found",
        "delete of an absent key",
    )?;
    ok(store.put(key, json!(1), None).await, "create")?;
    ok(store.put(key, json!(2), Some(1)).await, "update")?;
    err_kind(
        store.delete(key, 1).await,
        "conflict",
        "delete at stale version",
    )?;
    ensure!(
        ok(store.get(key).await, "get")?.map(|v| v.version) == Some(2),
        "a refused delete removed the key"
    );
    ok(store.delete(key, 2).await, "delete")?;
    ensure!(
        ok(store.get(key).await, "get after delete")?.is_none(),
        "a deleted key still reads"
    );
    err_kind(store.delete(key, 2).await, "not-found", "second delete")?;
    Ok(Outcome::Pass)
}

/// A key re-created after a delete continues above its last version, so a writer
/// holding a version from before the delete cannot overwrite it (no ABA).
pub async fn spi_20_state_versions_never_repeat_after_delete<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let key = &*cx.id("spi_20-aba");
    ok(store.put(key, json!("old"), None).await, "create")?;
    ok(store.delete(key, 1).await, "delete")?;
    let v = ok(store.put(key, json!("new"), None).await, "re-create")?;
    ensure!(v > 1, "the re-created key reuses version {v}");
    err_kind(
        store.put(key, json!("zombie"), Some(1)).await,
        "conflict",
        "write at the pre-delete version",
    )?;
    let got = ok(store.get(key).await, "get")?;
    ensure!(
        got == Some(Versioned {
            value: json!("new"),
            version: v
        }),
        "the key holds {got:?}"
    );
    Ok(Outcome::Pass)
}

/// Empty and oversize keys are `InvalidArgument`, and nothing is written.
pub async fn spi_20_state_invalid_keys_refused<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    err_kind(
        store.put("", json!(1), None).await,
        "invalid-argument",
        "empty key",
    )?;
    err_kind(
        store.get("").await,
        "invalid-argument",
        "get of the empty key",
    )?;
    let long = format!("{}{}", cx.namespace(), "k".repeat(ID_BYTES_MAX));
    err_kind(
        store.put(&long, json!(1), None).await,
        "invalid-argument",
        "oversize key",
    )?;
    Ok(Outcome::Pass)
}
