//! DurableStateStore cases (SPI-20; SPI-21 for the claim). The contract is
//! reference-defined (`loom_kernel::spi::plugin`): keyed JSON with compare-and-set
//! writes, versions that rise by one per write and never repeat for a key, and
//! conditional deletes.

use serde_json::json;

use loom_kernel::spi::{DurableStateStore, Versioned, ID_BYTES_MAX};
use loom_kernel::versions::DURABLE_STATE_STORE_SPI_VERSION;

use crate::case::{
    check_capabilities, ensure, err_kind, error_json, join_all, kind_json, ok, Ctx, Outcome,
    Verdict,
};

crate::__kit_cases! {
    kit: DurableStateStoreKit, name: "durable-state-store", bound: DurableStateStore, fresh: false, claims: claims_of,
    cases: [
        spi_21_durable_state_capabilities_are_consistent => ["SPI-21", "SPI-20"], "1.0.0", [];
        spi_20_state_create_then_get_round_trips => ["SPI-20"], "1.0.0", [];
        spi_20_state_stale_version_is_conflict_and_writes_nothing => ["SPI-20"], "1.0.0", [];
        spi_20_state_create_of_existing_key_is_conflict => ["SPI-20"], "1.0.0", [];
        spi_20_state_concurrent_writers_exactly_one_wins => ["SPI-20"], "1.0.0", [];
        spi_20_state_delete_is_conditional => ["SPI-20"], "1.0.0", [];
        spi_20_state_versions_never_repeat_after_delete => ["SPI-20"], "1.0.0", [];
        spi_20_state_invalid_keys_refused => ["SPI-20"], "1.0.0", [];
        spi_20_state_value_limit_from_both_sides => ["SPI-20"], "1.0.0", [];
        spi_20_state_values_read_back_identical => ["SPI-20"], "1.0.0", [];
        spi_20_state_conflict_facts_from_both_sides => ["SPI-20"], "1.0.0", [];
        gap_27_out_of_range_ids_follow_the_table => ["GAP-27", "SPI-20"], "1.0.0", [];
        spi_20_hostile_keys_are_distinct => ["SPI-20", "GAP-27"], "1.0.0", [];
    ]
}

/// What the store claims, for the case table's `needs`.
fn claims_of<S: DurableStateStore>(store: &S) -> crate::case::Claims {
    crate::case::Claims::of(&store.capabilities())
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
    let e = err_kind(
        store.put(key, json!(3), Some(0)).await,
        "conflict",
        "a create spelled expectedVersion 0",
    )?;
    ensure!(
        e.kind
            == loom_kernel::spi::StoreErrorKind::Conflict {
                expected_next: 0,
                actual_next: 1
            },
        "a create spelled 0 on {key} (at 1): facts {}",
        kind_json(&e.kind)
    );
    let got = ok(store.get(key).await, "get")?;
    ensure!(
        got == Some(Versioned {
            value: json!(1),
            version: 1
        }),
        "the refused create changed the key: {got:?}"
    );
    // `expectedVersion: 0` means "absent", as the facts spell it (GAP-27, decision 0006).
    let zero = &*cx.id("spi_20-create-zero");
    ensure!(
        ok(
            store.put(zero, json!(1), Some(0)).await,
            "create expecting 0"
        )? == 1,
        "a create expecting version 0 did not make version 1"
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
            ensure!(
                e.kind.name() == "conflict",
                "a losing writer got {}",
                error_json(e)
            );
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

/// A JSON string value whose compact JSON text is exactly `bytes` bytes, made of
/// `pad` (one- or two-byte UTF-8) and ASCII filler.
pub fn value_of_json_bytes(bytes: usize, pad: char) -> serde_json::Value {
    let mut s = String::new();
    // Two bytes for the quotes.
    while s.len() + pad.len_utf8() + 2 <= bytes {
        s.push(pad);
    }
    while s.len() + 2 < bytes {
        s.push('x');
    }
    serde_json::Value::String(s)
}

/// A JSON object whose compact JSON text (as serde_json writes it: no whitespace,
/// non-ASCII unescaped) is exactly `bytes` bytes: nested objects and arrays, integers,
/// booleans and `null`, and a string member of `pad` and ASCII filler that makes up the
/// length. A store that measures the text with whitespace (pretty-printed, or with
/// `", "` and `": "` separators) or with `\uXXXX` escapes refuses it at the limit; one
/// that measures only the string members accepts it one byte over.
pub fn structured_value_of_json_bytes(bytes: usize, pad: char) -> serde_json::Value {
    let mut v = serde_json::json!({
        "items": (0..64).collect::<Vec<u32>>(),
        "nested": { "k": null, "t": true, "f": false, "list": [[], {}, [1, [2, [3]]]] },
        "name": "r\u{e9}sum\u{e9}",
        "pad": "",
    });
    let base = serde_json::to_string(&v).map_or(0, |t| t.len());
    let mut s = String::new();
    while base + s.len() + pad.len_utf8() <= bytes {
        s.push(pad);
    }
    while base + s.len() < bytes {
        s.push('x');
    }
    v["pad"] = serde_json::Value::String(s);
    v
}

/// The shapes the limit cases probe: a bare string and a structured object, each in
/// ASCII and in two-byte characters (label, builder, pad).
pub type LimitShape = (&'static str, fn(usize, char) -> serde_json::Value, char);

/// Every shape the limit cases probe.
pub const LIMIT_SHAPES: [LimitShape; 4] = [
    ("string-1", value_of_json_bytes, 'x'),
    ("string-2", value_of_json_bytes, '\u{e9}'),
    ("object-1", structured_value_of_json_bytes, 'x'),
    ("object-2", structured_value_of_json_bytes, '\u{e9}'),
];

/// The value limit from both sides, in bytes of compact JSON text: exactly
/// `DOCUMENT_BYTES_MAX` (a string and a structured object, each in ASCII and in
/// two-byte characters) is stored and reads back identical, one byte more is
/// `invalid-argument` and writes nothing (SPI-20; decision 0006).
pub async fn spi_20_state_value_limit_from_both_sides<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use loom_kernel::spi::plugin::DOCUMENT_BYTES_MAX;
    for (shape, value_of, pad) in LIMIT_SHAPES {
        let key = &*cx.id(&format!("spi_20-state-limit-{shape}"));
        let at = value_of(DOCUMENT_BYTES_MAX, pad);
        ok(
            store.put(key, at.clone(), None).await,
            &format!("put of exactly DOCUMENT_BYTES_MAX ({shape})"),
        )?;
        let got = ok(store.get(key).await, "get")?;
        ensure!(
            got.as_ref().map(|v| &v.value) == Some(&at),
            "the {DOCUMENT_BYTES_MAX}-byte value of {key} did not read back identical"
        );
        let over = value_of(DOCUMENT_BYTES_MAX + 1, pad);
        err_kind(
            store.put(key, over, Some(1)).await,
            "invalid-argument",
            &format!("put of DOCUMENT_BYTES_MAX + 1 bytes ({shape})"),
        )?;
        ensure!(
            ok(store.get(key).await, "get")?.map(|v| v.version) == Some(1),
            "a refused oversize put changed {key}"
        );
    }
    Ok(Outcome::Pass)
}

/// Values read back identical: integers beyond 2^53, floats, negative zero, non-ASCII
/// and astral text, `{}`, and a `null` value, which is a stored value (`Some(null)`),
/// not an absent key (SPI-20; decision 0006).
pub async fn spi_20_state_values_read_back_identical<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let values = [
        crate::case::fidelity_payload("state"),
        serde_json::Value::Null,
        json!({}),
        json!([]),
        json!(9_007_199_254_740_993u64),
        json!("\u{1f600}"),
    ];
    for (i, value) in values.into_iter().enumerate() {
        let key = &*format!("{}\u{e9}{i}", cx.id("spi_20-state-fidelity-"));
        ok(store.put(key, value.clone(), None).await, "put")?;
        let got = ok(store.get(key).await, "get")?;
        match got {
            Some(v) if v.version == 1 && crate::case::same_json(&v.value, &value) => {}
            other => {
                return Err(crate::Failure(format!(
                    "{key}: put {value} at version 1, read back {other:?}"
                )))
            }
        }
    }
    Ok(Outcome::Pass)
}

/// Every refusal carries its facts, and versions are compared for equality from both
/// sides: one below and one above the current version are each `conflict` with
/// `expectedNext` = the version presented and `actualNext` = the current one (0 when
/// absent), for `put` and for `delete` (SPI-20).
pub async fn spi_20_state_conflict_facts_from_both_sides<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use loom_kernel::spi::StoreErrorKind;
    let key = &*cx.id("spi_20-state-facts");
    let facts = |e: loom_kernel::spi::StoreError| e.kind;
    let e = err_kind(
        store.put(key, json!(1), Some(3)).await,
        "conflict",
        "put at 3 on an absent key",
    )?;
    ensure!(
        facts(e.clone())
            == StoreErrorKind::Conflict {
                expected_next: 3,
                actual_next: 0
            },
        "put at 3 on absent {key}: facts {}",
        kind_json(&e.kind)
    );
    for v in 1..=3u64 {
        ok(
            store
                .put(key, json!(v), if v == 1 { None } else { Some(v - 1) })
                .await,
            "put",
        )?;
    }
    for presented in [Some(2u64), Some(4), Some(1), None] {
        let e = err_kind(
            store.put(key, json!("x"), presented).await,
            "conflict",
            &format!("put expecting {presented:?} at version 3"),
        )?;
        ensure!(
            e.kind
                == StoreErrorKind::Conflict {
                    expected_next: presented.unwrap_or(0),
                    actual_next: 3
                },
            "put expecting {presented:?} on {key} (at 3): facts {}",
            kind_json(&e.kind)
        );
    }
    for presented in [2u64, 4] {
        let e = err_kind(
            store.delete(key, presented).await,
            "conflict",
            &format!("delete expecting {presented} at version 3"),
        )?;
        ensure!(
            e.kind
                == StoreErrorKind::Conflict {
                    expected_next: presented,
                    actual_next: 3
                },
            "delete expecting {presented} on {key} (at 3): facts {}",
            kind_json(&e.kind)
        );
    }
    ensure!(
        ok(store.get(key).await, "get")?
            == Some(Versioned {
                value: json!(3),
                version: 3
            }),
        "the refusals changed {key}"
    );
    // Validation comes first: a bad key or value with a stale version is invalid.
    err_kind(
        store.put("", json!(1), Some(99)).await,
        "invalid-argument",
        "an empty key with a stale version",
    )?;
    err_kind(
        store
            .put(
                key,
                value_of_json_bytes(loom_kernel::spi::plugin::DOCUMENT_BYTES_MAX + 1, 'x'),
                Some(1),
            )
            .await,
        "invalid-argument",
        "an oversize value with a stale version",
    )?;
    ok(store.delete(key, 3).await, "delete at the current version")?;
    let e = err_kind(
        store.put(key, json!(1), Some(3)).await,
        "conflict",
        "put at 3 after delete",
    )?;
    ensure!(
        e.kind
            == StoreErrorKind::Conflict {
                expected_next: 3,
                actual_next: 0
            },
        "put at the deleted version on {key}: facts {}",
        kind_json(&e.kind)
    );
    Ok(Outcome::Pass)
}

/// Every durable-state method answers an empty or over-long id as the id-validation table says
/// (`loom_conformance::ids::ID_VALIDATION`, printed in docs/protocols/store.md): every method refuses an empty or over-long key
/// (GAP-27).
pub async fn gap_27_out_of_range_ids_follow_the_table<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use crate::ids::{id_answer, judge_id_rule, out_of_range_ids, rules_of};
    let _ = cx;
    for rule in rules_of("durableStateStore") {
        for bad in out_of_range_ids() {
            let b = &*bad;
            let answer = match (rule.method, rule.argument) {
                ("durableStateStore.get", _) => id_answer(store.get(b).await, |_| false),
                ("durableStateStore.put", _) => {
                    id_answer(store.put(b, json!(1), None).await, |_| false)
                }
                ("durableStateStore.delete", _) => id_answer(store.delete(b, 1).await, |_| false),
                _ => continue,
            };
            judge_id_rule(rule, b, answer)?;
        }
    }
    Ok(Outcome::Pass)
}

/// Hostile keys are distinct keys: each is created at version 1 and reads back its own
/// value (SPI-20, GAP-27).
pub async fn spi_20_hostile_keys_are_distinct<S: DurableStateStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let keys = crate::ids::hostile_ids(&cx.id("h."));
    for (family, key) in &keys {
        let r = store.put(key, json!({ "key": key }), None).await;
        let v = ok(r, &format!("create {key:?} ({})", family.name()))?;
        ensure!(
            v == 1,
            "{} keys: creating {key:?} made version {v}",
            family.name()
        );
    }
    for (family, key) in &keys {
        let got = ok(store.get(key).await, "get")?;
        ensure!(
            got == Some(Versioned {
                value: json!({ "key": key }),
                version: 1
            }),
            "{} keys: {key:?} holds {got:?}, expected its own value at version 1",
            family.name()
        );
    }
    Ok(Outcome::Pass)
}
