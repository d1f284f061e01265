//! ContentStore cases (SPI-20, with SPI-21/SPI-02 for the claim). The contract is
//! reference-defined (`loom_kernel::spi::plugin`): content addressing, the ADR 0059
//! `putStream` outcome (whole object or nothing), and the SPI 1.5.0 owner argument and
//! `sealsContent` marker (ADR 0143).
//!
//! Content is global to a store (the same bytes have the same address for everyone),
//! so every case mixes its namespace into the bytes it writes: two cases never address
//! the same object.

use loom_kernel::spi::plugin::{content_digest, Chunk};
use loom_kernel::spi::{
    ContentAccess, ContentStore, ContentStoreMethod as M, PutStreamAbort, PutStreamOutcome,
    CONTENT_BYTES_MAX,
};
use loom_kernel::versions::CONTENT_STORE_SPI_VERSION;

use crate::case::{
    check_capabilities, check_probe, check_required, ensure, err_kind, ok, require_claims,
    require_version, Ctx, Outcome, Verdict,
};

crate::__kit_cases! {
    kit: ContentStoreKit, name: "content-store", bound: ContentStore, fresh: false,
    cases: [
        spi_21_content_capabilities_are_consistent => ["SPI-21", "SPI-20"], "1.0.0", [];
        spi_20_content_claims_match_behaviour => ["SPI-20", "SPI-02"], "1.0.0", [];
        spi_20_put_is_content_addressed_and_idempotent => ["SPI-20"], "1.0.0", [];
        spi_20_put_refuses_bad_arguments => ["SPI-20"], "1.0.0", [];
        spi_20_put_stream_stores_the_whole_object => ["SPI-20"], "1.0.0", ["putStream"];
        spi_20_put_stream_chunk_error_stores_nothing => ["SPI-20"], "1.0.0", ["putStream"];
        spi_20_put_stream_over_the_limit_stores_nothing => ["SPI-20"], "1.0.0", ["putStream"];
        spi_20_owned_content_is_readable_only_by_its_owner => ["SPI-20"], "1.5.0", ["contentAccess"];
        spi_20_seals_content_marker_keeps_bytes_readable => ["SPI-20"], "1.5.0", ["sealsContent"];
    ]
}

/// Bytes of a stream chunk in the size cases: large enough that crossing
/// `CONTENT_BYTES_MAX` takes few chunks.
pub const STREAM_CHUNK_BYTES: usize = 1024 * 1024;

/// Bytes unique to this case and `tag`.
fn blob(cx: &Ctx, tag: &str) -> Vec<u8> {
    format!("loom-kit:{}:{tag}", cx.namespace()).into_bytes()
}

fn as_owner(cx: &Ctx, name: &str) -> Option<ContentAccess> {
    Some(ContentAccess::new(cx.id(name)))
}

/// The claim is consistent and shares the kernel's major version (SPI-21).
pub async fn spi_21_content_capabilities_are_consistent<S: ContentStore>(
    store: &S,
    _cx: &Ctx,
) -> Verdict {
    check_capabilities(&store.capabilities(), CONTENT_STORE_SPI_VERSION)
}

/// Each optional feature answers `unsupported` iff it is not claimed, and the required
/// methods answer (SPI-02, SPI-20).
pub async fn spi_20_content_claims_match_behaviour<S: ContentStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let caps = store.capabilities();
    let put = store.put(blob(cx, "probe"), None).await;
    check_required("put", &put)?;
    let digest = content_digest(&blob(cx, "probe"));
    check_required("get", &store.get(&digest, None).await)?;
    let chunks: Vec<Chunk> = vec![Ok(blob(cx, "probe-stream"))];
    check_probe(&caps, M::PutStream, &store.put_stream(chunks, None).await)?;
    check_probe(
        &caps,
        M::ContentAccess,
        &store.put(blob(cx, "probe-owned"), as_owner(cx, "o")).await,
    )?;
    check_probe(&caps, M::SealsContent, &store.seals_content().await)?;
    Ok(Outcome::Pass)
}

/// The digest is `sha256:` of the bytes, the size their length; putting the same bytes
/// again gives the same reference; `get` returns the bytes, and `None` for an address
/// nothing was stored under.
pub async fn spi_20_put_is_content_addressed_and_idempotent<S: ContentStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let bytes = blob(cx, "addressed");
    let first = ok(store.put(bytes.clone(), None).await, "put")?;
    ensure!(
        first.digest == content_digest(&bytes) && first.size == bytes.len() as u64,
        "put returned {first:?}, expected sha256 of the {} bytes",
        bytes.len()
    );
    let again = ok(store.put(bytes.clone(), None).await, "put again")?;
    ensure!(
        again == first,
        "a second put gave {again:?}, the first {first:?}"
    );
    let got = ok(store.get(&first.digest, None).await, "get")?;
    ensure!(got.as_deref() == Some(&bytes[..]), "get returned {got:?}");
    let empty = ok(store.put(Vec::new(), None).await, "put of no bytes")?;
    ensure!(
        empty.digest == content_digest(b"") && empty.size == 0,
        "the empty object is {empty:?}"
    );
    let absent = content_digest(&blob(cx, "never-stored"));
    ensure!(
        ok(store.get(&absent, None).await, "get of an absent digest")?.is_none(),
        "bytes came back for a digest nothing was stored under"
    );
    Ok(Outcome::Pass)
}

/// A malformed digest and an object over `CONTENT_BYTES_MAX` are `InvalidArgument`,
/// and the oversize object is not stored.
pub async fn spi_20_put_refuses_bad_arguments<S: ContentStore>(store: &S, cx: &Ctx) -> Verdict {
    for bad in ["", "sha256:", "md5:00", "sha256:XYZ", &"sha256:A".repeat(9)] {
        err_kind(
            store.get(bad, None).await,
            "invalid-argument",
            &format!("get({bad:?})"),
        )?;
    }
    let mut big = blob(cx, "too-big");
    big.resize(CONTENT_BYTES_MAX + 1, b'.');
    let digest = content_digest(&big);
    err_kind(
        store.put(big, None).await.map(|r| r.digest),
        "invalid-argument",
        "put over CONTENT_BYTES_MAX",
    )?;
    ensure!(
        ok(store.get(&digest, None).await, "get")?.is_none(),
        "the refused oversize object is readable"
    );
    Ok(Outcome::Pass)
}

/// A stream that ends is stored as one object, under the digest of the concatenation,
/// and is the same object a `put` of those bytes addresses.
pub async fn spi_20_put_stream_stores_the_whole_object<S: ContentStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::PutStream);
    let parts = [blob(cx, "s1"), Vec::new(), blob(cx, "s2"), blob(cx, "s3")];
    let whole: Vec<u8> = parts.concat();
    let outcome = ok(
        store
            .put_stream(parts.iter().cloned().map(Ok).collect::<Vec<_>>(), None)
            .await,
        "putStream",
    )?;
    let stored = match outcome {
        PutStreamOutcome::Stored(r) => r,
        other => {
            return Err(crate::Failure(format!(
                "putStream of a clean stream gave {other:?}"
            )))
        }
    };
    ensure!(
        stored.digest == content_digest(&whole) && stored.size == whole.len() as u64,
        "putStream returned {stored:?}, expected the digest of the concatenated chunks"
    );
    let got = ok(store.get(&stored.digest, None).await, "get")?;
    ensure!(
        got.as_deref() == Some(&whole[..]),
        "get after putStream returned {got:?}"
    );
    let via_put = ok(store.put(whole, None).await, "put of the same bytes")?;
    ensure!(
        via_put == stored,
        "put and putStream address the same bytes differently"
    );
    Ok(Outcome::Pass)
}

/// A chunk error aborts the stream with a `chunk error` outcome and stores nothing: not
/// the whole, not the prefix received before the error (ADR 0059).
pub async fn spi_20_put_stream_chunk_error_stores_nothing<S: ContentStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::PutStream);
    let (a, b) = (blob(cx, "e1"), blob(cx, "e2"));
    let chunks: Vec<Chunk> = vec![Ok(a.clone()), Ok(b.clone()), Err("source broke".into())];
    let outcome = ok(store.put_stream(chunks, None).await, "putStream")?;
    match &outcome {
        PutStreamOutcome::Aborted(PutStreamAbort::ChunkError { .. }) => {}
        other => {
            return Err(crate::Failure(format!(
                "a stream whose third chunk failed gave {other:?}, expected a chunk-error abort"
            )))
        }
    }
    for (what, bytes) in [
        ("the first chunk", a.clone()),
        ("the prefix", [a, b].concat()),
    ] {
        ensure!(
            ok(store.get(&content_digest(&bytes), None).await, "get")?.is_none(),
            "after an aborted putStream, {what} is readable: a partial object was kept"
        );
    }
    Ok(Outcome::Pass)
}

/// A stream growing past `CONTENT_BYTES_MAX` aborts with `too large` and stores nothing.
pub async fn spi_20_put_stream_over_the_limit_stores_nothing<S: ContentStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    require_claims!(store.capabilities(), M::PutStream);
    let mut first = blob(cx, "big");
    first.resize(STREAM_CHUNK_BYTES, b'a');
    let filler = vec![b'b'; STREAM_CHUNK_BYTES];
    let n_chunks = CONTENT_BYTES_MAX / STREAM_CHUNK_BYTES + 1;
    let chunks = std::iter::once(first.clone())
        .chain(std::iter::repeat_n(filler.clone(), n_chunks - 1))
        .map(Ok);
    let outcome = ok(store.put_stream(chunks, None).await, "putStream")?;
    match &outcome {
        PutStreamOutcome::Aborted(PutStreamAbort::TooLarge { .. }) => {}
        other => {
            return Err(crate::Failure(format!(
                "a stream of {} bytes gave {other:?}, expected a too-large abort",
                n_chunks * STREAM_CHUNK_BYTES
            )))
        }
    }
    let mut prefix = first.clone();
    for _ in 1..n_chunks - 1 {
        prefix.extend_from_slice(&filler);
    }
    for (what, bytes) in [
        ("the first chunk", first),
        ("the prefix under the limit", prefix),
    ] {
        ensure!(
            ok(store.get(&content_digest(&bytes), None).await, "get")?.is_none(),
            "after a too-large putStream, {what} is readable: a partial object was kept"
        );
    }
    Ok(Outcome::Pass)
}

/// Content put with an owner is readable by that owner only: another owner and an
/// unowned `get` see `None`. The same bytes put without an owner become public
/// (reference-defined ContentAccess semantics, ADR 0143).
pub async fn spi_20_owned_content_is_readable_only_by_its_owner<S: ContentStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let caps = store.capabilities();
    require_version!(caps, "1.5.0");
    require_claims!(&caps, M::ContentAccess);
    let bytes = blob(cx, "owned");
    let r = ok(
        store.put(bytes.clone(), as_owner(cx, "alice")).await,
        "put as alice",
    )?;
    ensure!(r.digest == content_digest(&bytes), "owned put gave {r:?}");
    let got = ok(
        store.get(&r.digest, as_owner(cx, "alice")).await,
        "get as alice",
    )?;
    ensure!(got.as_deref() == Some(&bytes[..]), "the owner read {got:?}");
    ensure!(
        ok(
            store.get(&r.digest, as_owner(cx, "bob")).await,
            "get as bob"
        )?
        .is_none(),
        "another owner read alice's content"
    );
    ensure!(
        ok(store.get(&r.digest, None).await, "get without owner")?.is_none(),
        "an unowned get read alice's content"
    );
    if caps.claims(M::PutStream) {
        let streamed = blob(cx, "owned-stream");
        let outcome = ok(
            store
                .put_stream(vec![Ok(streamed.clone())], as_owner(cx, "alice"))
                .await,
            "putStream as alice",
        )?;
        ensure!(
            matches!(outcome, PutStreamOutcome::Stored(_)),
            "owned putStream gave {outcome:?}"
        );
        ensure!(
            ok(
                store
                    .get(&content_digest(&streamed), as_owner(cx, "bob"))
                    .await,
                "get"
            )?
            .is_none(),
            "another owner read streamed owned content"
        );
    }
    ok(store.put(bytes.clone(), None).await, "public put")?;
    let public = ok(store.get(&r.digest, None).await, "get after public put")?;
    ensure!(
        public.as_deref() == Some(&bytes[..]),
        "public bytes read {public:?}"
    );
    err_kind(
        store.put(blob(cx, "x"), Some(ContentAccess::new(""))).await,
        "invalid-argument",
        "empty owner",
    )?;
    Ok(Outcome::Pass)
}

/// `sealsContent` answers a boolean, and sealed or not, `get` returns the bytes that
/// were put (sealing is at rest, ADR 0143).
pub async fn spi_20_seals_content_marker_keeps_bytes_readable<S: ContentStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    let caps = store.capabilities();
    require_version!(caps, "1.5.0");
    require_claims!(&caps, M::SealsContent);
    ok(store.seals_content().await, "sealsContent")?;
    let bytes = blob(cx, "sealed");
    let r = ok(store.put(bytes.clone(), None).await, "put")?;
    let got = ok(store.get(&r.digest, None).await, "get")?;
    ensure!(
        got.as_deref() == Some(&bytes[..]),
        "get returned {got:?} instead of the original bytes"
    );
    Ok(Outcome::Pass)
}
