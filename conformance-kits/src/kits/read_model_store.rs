//! ReadModelStore cases (SPI-20; SPI-21 for the claim). The contract is
//! reference-defined (`loom_kernel::spi::plugin`): documents per collection, `query`
//! pages in id order, and validation of `limit` (`1..=READ_MODEL_LIMIT_MAX`) and
//! `cursor` (only a cursor the store issued for that collection).

use serde_json::json;

use loom_kernel::spi::{QueryOptions, ReadModelStore, READ_MODEL_LIMIT_MAX};
use loom_kernel::versions::READ_MODEL_STORE_SPI_VERSION;

use crate::case::{check_capabilities, ensure, err_kind, ok, Ctx, Failure, Outcome, Verdict};

crate::__kit_cases! {
    kit: ReadModelStoreKit, name: "read-model-store", bound: ReadModelStore, fresh: false, claims: claims_of,
    cases: [
        spi_21_read_model_capabilities_are_consistent => ["SPI-21", "SPI-20"], "1.0.0", [];
        spi_20_read_model_upsert_replaces_and_get_reads => ["SPI-20"], "1.0.0", [];
        spi_20_query_pages_each_doc_once_in_id_order => ["SPI-20"], "1.0.0", [];
        spi_20_query_limit_out_of_range_is_invalid => ["SPI-20"], "1.0.0", [];
        spi_20_query_forged_cursor_is_invalid => ["SPI-20"], "1.0.0", [];
        spi_20_query_collections_are_separate => ["SPI-20"], "1.0.0", [];
        spi_20_exactly_full_last_page_has_no_cursor => ["SPI-20"], "1.0.0", [];
        spi_20_document_limit_from_both_sides => ["SPI-20"], "1.0.0", [];
        spi_20_documents_read_back_identical => ["SPI-20"], "1.0.0", [];
        spi_20_query_is_in_byte_order_of_ids => ["SPI-20"], "1.0.0", [];
        gap_27_out_of_range_ids_follow_the_table => ["GAP-27", "SPI-20"], "1.0.0", [];
        spi_20_hostile_ids_are_distinct_documents_in_byte_order => ["SPI-20", "GAP-27"], "1.0.0", [];
    ]
}

/// What the store claims, for the case table's `needs`.
fn claims_of<S: ReadModelStore>(store: &S) -> crate::case::Claims {
    crate::case::Claims::of(&store.capabilities())
}

/// Most pages a paging loop in this kit follows before it calls the store broken: far
/// more than any case needs, so a store that never ends a scan fails instead of hanging.
pub const PAGES_MAX: usize = 1_000;

fn query(limit: i64, cursor: Option<String>) -> QueryOptions {
    QueryOptions { limit, cursor }
}

/// Every document id of `collection`, paging `limit` at a time.
async fn page_through<S: ReadModelStore>(
    store: &S,
    collection: &str,
    limit: i64,
) -> Result<(Vec<String>, usize), Failure> {
    let mut ids = Vec::new();
    let mut cursor = None;
    for page_idx in 0..PAGES_MAX {
        let page = ok(store.query(collection, query(limit, cursor)).await, "query")?;
        ensure!(
            page.docs.len() as i64 <= limit,
            "page {page_idx} holds {} documents, the limit is {limit}",
            page.docs.len()
        );
        ids.extend(page.docs.into_iter().map(|d| d.id));
        match page.next_cursor {
            None => return Ok((ids, page_idx + 1)),
            Some(c) => cursor = Some(c),
        }
    }
    Err(Failure(format!(
        "paging {collection:?} did not end within {PAGES_MAX} pages"
    )))
}

/// The claim is consistent and shares the kernel's major version (SPI-21).
pub async fn spi_21_read_model_capabilities_are_consistent<S: ReadModelStore>(
    store: &S,
    _cx: &Ctx,
) -> Verdict {
    check_capabilities(&store.capabilities(), READ_MODEL_STORE_SPI_VERSION)
}

/// `upsert` inserts, then replaces; `get` reads the latest, `None` for unknown ids.
pub async fn spi_20_read_model_upsert_replaces_and_get_reads<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let c = &*cx.id("orders");
    ensure!(
        ok(store.get(c, "o1").await, "get of nothing")?.is_none(),
        "an unknown document reads"
    );
    ok(
        store.upsert(c, "o1", json!({ "total": 1, "a": [1] })).await,
        "upsert",
    )?;
    ok(
        store.upsert(c, "o1", json!({ "total": 2 })).await,
        "upsert again",
    )?;
    let got = ok(store.get(c, "o1").await, "get")?;
    ensure!(got == Some(json!({ "total": 2 })), "get returned {got:?}");
    err_kind(
        store.upsert(c, "", json!(1)).await,
        "invalid-argument",
        "empty id",
    )?;
    err_kind(
        store.upsert("", "x", json!(1)).await,
        "invalid-argument",
        "empty collection",
    )?;
    Ok(Outcome::Pass)
}

/// Paging from no cursor to the end returns every document exactly once, ascending by
/// id, for several page sizes including 1 and one larger than the collection.
pub async fn spi_20_query_pages_each_doc_once_in_id_order<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let c = &*cx.id("paged");
    // Inserted out of order so a store returning insertion order is caught.
    let mut want: Vec<String> = (0..23)
        .map(|i| format!("doc-{:02}", (i * 7) % 23))
        .collect();
    for id in &want {
        ok(store.upsert(c, id, json!({ "id": id })).await, "upsert")?;
    }
    want.sort();
    for limit in [1, 4, 23, 50] {
        let (ids, pages) = page_through(store, c, limit).await?;
        ensure!(
            ids == want,
            "paging by {limit} returned {ids:?}, expected each of {} ids once, ascending",
            want.len()
        );
        let expected_pages = want.len().div_ceil(limit as usize).max(1);
        ensure!(
            pages <= expected_pages + 1,
            "paging by {limit} took {pages} pages for {} documents",
            want.len()
        );
    }
    let empty = ok(store.query(&cx.id("empty"), query(10, None)).await, "query")?;
    ensure!(
        empty.docs.is_empty() && empty.next_cursor.is_none(),
        "an empty collection gave {empty:?}"
    );
    Ok(Outcome::Pass)
}

/// A limit of 0, a negative limit and one above `READ_MODEL_LIMIT_MAX` are
/// `InvalidArgument`; the bounds themselves are accepted.
pub async fn spi_20_query_limit_out_of_range_is_invalid<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let c = &*cx.id("limits");
    ok(store.upsert(c, "a", json!(1)).await, "upsert")?;
    for bad in [0, -1, i64::MIN, READ_MODEL_LIMIT_MAX + 1, i64::MAX] {
        err_kind(
            store.query(c, query(bad, None)).await,
            "invalid-argument",
            &format!("query with limit {bad}"),
        )?;
    }
    for good in [1, READ_MODEL_LIMIT_MAX] {
        ok(
            store.query(c, query(good, None)).await,
            &format!("query with limit {good}"),
        )?;
    }
    Ok(Outcome::Pass)
}

/// Only cursors the store issued for the collection are accepted: made-up, garbled,
/// and another collection's cursors are `InvalidArgument`, never a fresh start.
pub async fn spi_20_query_forged_cursor_is_invalid<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let (c, other) = (&*cx.id("cursor"), &*cx.id("cursor-other"));
    for id in ["a", "b", "c"] {
        ok(store.upsert(c, id, json!(id)).await, "upsert")?;
        ok(store.upsert(other, id, json!(id)).await, "upsert")?;
    }
    let first = ok(store.query(c, query(1, None)).await, "first page")?;
    let issued = first
        .next_cursor
        .ok_or_else(|| Failure("a first page of 1 of 3 documents has no next cursor".into()))?;
    let mut garbled = issued.clone();
    garbled.push('~');
    let truncated: String = issued
        .chars()
        .take(issued.chars().count().saturating_sub(1))
        .collect();
    let forged = [
        "".to_string(),
        "a".to_string(),
        "not-a-cursor".to_string(),
        garbled,
        truncated,
        format!("{issued}{issued}"),
    ];
    for bad in forged {
        if bad == issued {
            continue;
        }
        err_kind(
            store.query(c, query(1, Some(bad.clone()))).await,
            "invalid-argument",
            &format!("query with forged cursor {bad:?}"),
        )?;
    }
    err_kind(
        store.query(other, query(1, Some(issued.clone()))).await,
        "invalid-argument",
        "query of another collection with this collection's cursor",
    )?;
    let second = ok(store.query(c, query(1, Some(issued))).await, "second page")?;
    let ids: Vec<&str> = second.docs.iter().map(|d| d.id.as_str()).collect();
    ensure!(
        ids == ["b"],
        "the issued cursor continued at {ids:?}, expected [\"b\"]"
    );
    Ok(Outcome::Pass)
}

/// Documents of one collection never show up in another.
pub async fn spi_20_query_collections_are_separate<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let (a, b) = (&*cx.id("left"), &*cx.id("right"));
    ok(store.upsert(a, "x", json!("in a")).await, "upsert")?;
    ok(store.upsert(b, "y", json!("in b")).await, "upsert")?;
    let (ids, _) = page_through(store, a, 10).await?;
    ensure!(ids == ["x"], "collection a lists {ids:?}");
    ensure!(
        ok(store.get(b, "x").await, "get")?.is_none(),
        "a document of one collection reads from another"
    );
    Ok(Outcome::Pass)
}

/// Pages an exactly divisible collection: every page but the last is full, and the
/// last, exactly full, has a null cursor, so the number of pages is exactly
/// `ceil(n / limit)` (never one more, empty page); limit 1, a divisor, the whole
/// collection and one past it (SPI-20).
pub async fn spi_20_exactly_full_last_page_has_no_cursor<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let c = &*cx.id("full");
    let n = 12usize;
    for i in (0..n).rev() {
        ok(
            store.upsert(c, &format!("d{i:02}"), json!(i)).await,
            "upsert",
        )?;
    }
    for limit in [1i64, 3, 4, 6, 12, 13] {
        let (ids, pages) = page_through(store, c, limit).await?;
        ensure!(
            ids.len() == n,
            "paging by {limit} returned {} documents",
            ids.len()
        );
        let want = n.div_ceil(limit as usize);
        ensure!(
            pages == want,
            "{n} documents paged by {limit} took {pages} pages, expected {want}: an exactly full last page must have a null cursor"
        );
    }
    Ok(Outcome::Pass)
}

/// The document limit from both sides, in bytes of compact JSON text: exactly
/// `DOCUMENT_BYTES_MAX` (a string and a structured object, each in ASCII and two-byte
/// characters) is stored and reads back identical, one byte more is `invalid-argument`
/// and leaves the old document (SPI-20; decision 0006).
pub async fn spi_20_document_limit_from_both_sides<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use crate::kits::durable_state_store::LIMIT_SHAPES;
    use loom_kernel::spi::plugin::DOCUMENT_BYTES_MAX;
    let c = &*cx.id("limit");
    for (shape, value_of, pad) in LIMIT_SHAPES {
        let id = &*format!("doc-{shape}");
        let at = value_of(DOCUMENT_BYTES_MAX, pad);
        ok(
            store.upsert(c, id, at.clone()).await,
            &format!("upsert of exactly DOCUMENT_BYTES_MAX ({shape})"),
        )?;
        err_kind(
            store
                .upsert(c, id, value_of(DOCUMENT_BYTES_MAX + 1, pad))
                .await,
            "invalid-argument",
            &format!("upsert of DOCUMENT_BYTES_MAX + 1 bytes ({shape})"),
        )?;
        let got = ok(store.get(c, id).await, "get")?;
        ensure!(
            got.as_ref() == Some(&at),
            "{c}/{id}: after a refused oversize upsert the document is not the {DOCUMENT_BYTES_MAX}-byte one"
        );
    }
    Ok(Outcome::Pass)
}

/// Documents read back identical by `get` and by `query`: decision 0006 values, `{}`,
/// and a `null` document, which is a stored document (`Some(null)`), not an absent one;
/// ids with non-ASCII and astral characters (SPI-20).
pub async fn spi_20_documents_read_back_identical<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let c = &*cx.id("fidelity-\u{e9}");
    let docs = [
        ("a-payload", crate::case::fidelity_payload("document")),
        ("b-null", serde_json::Value::Null),
        ("c-empty", json!({})),
        (
            "d-\u{1f600}",
            json!([9_007_199_254_740_993u64, -0.0, "\u{10ffff}"]),
        ),
    ];
    for (id, doc) in &docs {
        ok(store.upsert(c, id, doc.clone()).await, "upsert")?;
    }
    for (id, doc) in &docs {
        match ok(store.get(c, id).await, "get")? {
            Some(got) if crate::case::same_json(&got, doc) => {}
            other => {
                return Err(Failure(format!(
                    "{c}/{id}: upserted {doc}, get read back {other:?}"
                )))
            }
        }
    }
    let page = ok(store.query(c, query(10, None)).await, "query")?;
    ensure!(
        page.docs.len() == docs.len() && page.next_cursor.is_none(),
        "query of {c} gave {} documents (cursor {:?}), expected {}",
        page.docs.len(),
        page.next_cursor,
        docs.len()
    );
    for (got, (id, doc)) in page.docs.iter().zip(&docs) {
        ensure!(
            got.id == *id && crate::case::same_json(&got.doc, doc),
            "query of {c}: {}={} where {id}={doc} was upserted",
            got.id,
            got.doc
        );
    }
    Ok(Outcome::Pass)
}

/// Query order is the byte order of ids over more than one page (`d-10` before `d-9`,
/// upper case before lower case, non-ASCII last), each id once (SPI-20).
pub async fn spi_20_query_is_in_byte_order_of_ids<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let c = &*cx.id("order");
    let ids = [
        "d-9",
        "d-10",
        "d-1",
        "d-B",
        "d-a",
        "d-\u{e9}",
        "d-Z",
        "d-100",
        "d-\u{1f600}",
        "d-0",
        "d-\u{ff}",
        "d-b",
    ];
    for id in ids {
        ok(store.upsert(c, id, json!(id)).await, "upsert")?;
    }
    let mut want: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    want.sort();
    for limit in [5, 100] {
        let (got, _) = page_through(store, c, limit).await?;
        ensure!(
            got == want,
            "paging {c} by {limit} gave {got:?}, expected byte order {want:?}"
        );
    }
    Ok(Outcome::Pass)
}

/// Every read-model method answers an empty or over-long id as the id-validation table says
/// (`loom_conformance::ids::ID_VALIDATION`, printed in docs/protocols/store.md): every method refuses an empty or over-long collection or document id
/// (GAP-27).
pub async fn gap_27_out_of_range_ids_follow_the_table<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use crate::ids::{id_answer, judge_id_rule, out_of_range_ids, rules_of};
    let _ = cx;
    let c = &*cx.id("gap_27-c");
    for rule in rules_of("readModelStore") {
        for bad in out_of_range_ids() {
            let b = &*bad;
            let answer = match (rule.method, rule.argument) {
                ("readModelStore.upsert", "collection") => {
                    id_answer(store.upsert(b, "d", json!(1)).await, |_| false)
                }
                ("readModelStore.upsert", _) => {
                    id_answer(store.upsert(c, b, json!(1)).await, |_| false)
                }
                ("readModelStore.get", "collection") => {
                    id_answer(store.get(b, "d").await, |_| false)
                }
                ("readModelStore.get", _) => id_answer(store.get(c, b).await, |_| false),
                ("readModelStore.query", _) => id_answer(
                    store
                        .query(
                            b,
                            loom_kernel::spi::QueryOptions {
                                limit: 10,
                                cursor: None,
                            },
                        )
                        .await,
                    |_| false,
                ),
                _ => continue,
            };
            judge_id_rule(rule, b, answer)?;
        }
    }
    Ok(Outcome::Pass)
}

/// Hostile document ids (unprefixed, so `9` and `10` are themselves) are distinct
/// documents of one collection, paged in byte order; hostile collection names are
/// distinct collections (SPI-20, GAP-27).
pub async fn spi_20_hostile_ids_are_distinct_documents_in_byte_order<S: ReadModelStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let c = &*cx.id("h");
    let ids = crate::ids::hostile_ids("");
    for (family, id) in &ids {
        let r = store.upsert(c, id, json!({ "id": id })).await;
        ok(r, &format!("upsert {id:?} ({})", family.name()))?;
    }
    for (family, id) in &ids {
        let got = ok(store.get(c, id).await, "get")?;
        ensure!(
            got == Some(json!({ "id": id })),
            "{} ids: document {id:?} holds {got:?}",
            family.name()
        );
    }
    let mut listed = Vec::new();
    let mut cursor = None;
    loop {
        let page = ok(
            store.query(c, QueryOptions { limit: 7, cursor }).await,
            "query",
        )?;
        listed.extend(page.docs.into_iter().map(|d| d.id));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
        ensure!(listed.len() <= 2 * ids.len(), "query keeps paging");
    }
    let mut want: Vec<String> = ids.iter().map(|(_, id)| id.clone()).collect();
    want.sort();
    if listed != want {
        let family = crate::ids::Family::ALL
            .iter()
            .find(|f| {
                let fam = f.ids("");
                let mine: Vec<&String> = listed.iter().filter(|id| fam.contains(id)).collect();
                let mut sorted = mine.clone();
                sorted.sort();
                mine != sorted || mine.len() != fam.len()
            })
            .map_or("hostile", |f| f.name());
        return Err(Failure(format!(
            "{family} ids: query pages gave {listed:?}, expected each id once in byte order"
        )));
    }
    for (family, name) in crate::ids::hostile_ids(&cx.id("hc.")) {
        ok(
            store.upsert(&name, "d", json!({ "c": name })).await,
            "upsert",
        )?;
        let got = ok(store.get(&name, "d").await, "get")?;
        ensure!(
            got == Some(json!({ "c": name })),
            "{} collections: {name:?} holds {got:?}",
            family.name()
        );
    }
    Ok(Outcome::Pass)
}
