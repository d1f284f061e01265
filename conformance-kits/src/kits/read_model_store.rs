//! ReadModelStore cases (SPI-20; SPI-21 for the claim). The contract is
//! reference-defined (`loom_kernel::spi::plugin`): documents per collection, `query`
//! pages in id order, and validation of `limit` (`1..=READ_MODEL_LIMIT_MAX`) and
//! `cursor` (only a cursor the store issued for that collection).

use serde_json::json;

use loom_kernel::spi::{QueryOptions, ReadModelStore, READ_MODEL_LIMIT_MAX};
use loom_kernel::versions::READ_MODEL_STORE_SPI_VERSION;

use crate::case::{check_capabilities, ensure, err_kind, ok, Ctx, Failure, Outcome, Verdict};

crate::__kit_cases! {
    kit: ReadModelStoreKit, name: "read-model-store", bound: ReadModelStore, fresh: false,
    cases: [
        spi_21_read_model_capabilities_are_consistent => ["SPI-21", "SPI-20"], "1.0.0", [];
        spi_20_read_model_upsert_replaces_and_get_reads => ["SPI-20"], "1.0.0", [];
        spi_20_query_pages_each_doc_once_in_id_order => ["SPI-20"], "1.0.0", [];
        spi_20_query_limit_out_of_range_is_invalid => ["SPI-20"], "1.0.0", [];
        spi_20_query_forged_cursor_is_invalid => ["SPI-20"], "1.0.0", [];
        spi_20_query_collections_are_separate => ["SPI-20"], "1.0.0", [];
    ]
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
