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
    kit: ContentStoreKit, name: "content-store", bound: ContentStore, fresh: false, claims: claims_of,
    cases: [
        spi_21_content_capabilities_are_consistent => ["SPI-21", "SPI-20"], "1.0.0", [];
        spi_20_content_claims_match_behaviour => ["SPI-20", "SPI-02"], "1.0.0", [];
        spi_20_put_is_content_addressed_and_idempotent => ["SPI-20"], "1.0.0", [];
        spi_20_put_refuses_bad_arguments => ["SPI-20"], "1.0.0", [];
        spi_20_put_stream_stores_the_whole_object => ["SPI-20"], "1.0.0", ["putStream"];
        spi_20_put_stream_chunk_error_stores_nothing => ["SPI-20"], "1.0.0", ["putStream"];
        spi_20_put_stream_over_the_limit_stores_nothing => ["SPI-20"], "1.0.0", ["putStream"];
        spi_20_owned_content_is_readable_only_by_its_owner => ["SPI-20"], "1.5.0", ["SPI 1.5.0", "contentAccess"];
        spi_20_seals_content_marker_keeps_bytes_readable => ["SPI-20"], "1.5.0", ["SPI 1.5.0", "sealsContent"];
        spi_20_content_limit_from_both_sides => ["SPI-20"], "1.0.0", [];
        spi_20_put_stream_abort_facts => ["SPI-20"], "1.0.0", ["putStream"];
        spi_20_digest_spelling_is_exact => ["SPI-20"], "1.0.0", [];
        spi_20_bytes_read_back_identical => ["SPI-20"], "1.0.0", [];
        spi_20_several_owners_of_the_same_bytes => ["SPI-20"], "1.5.0", ["SPI 1.5.0", "contentAccess"];
        gap_27_out_of_range_ids_follow_the_table => ["GAP-27", "SPI-20"], "1.5.0", ["SPI 1.5.0", "contentAccess"];
        spi_20_hostile_owners_are_distinct => ["SPI-20", "GAP-27"], "1.5.0", ["SPI 1.5.0", "contentAccess"];
    ]
}

/// What the store claims, for the case table's `needs`.
fn claims_of<S: ContentStore>(store: &S) -> crate::case::Claims {
    crate::case::Claims::of(&store.capabilities())
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

/// `len` bytes unique to this case and `tag`: the tag, then a repeating filler.
fn sized_blob(cx: &Ctx, tag: &str, len: usize) -> Vec<u8> {
    let mut bytes = blob(cx, tag);
    bytes.truncate(len);
    // One allocation of the final size, filled in one pass (byte-wise pushes into a
    // growing vector made these 8 MiB blobs a tenth of a kit run's CPU). The filler
    // repeats a..z, as it always has, so the digests the cases compute stay the same.
    let start = bytes.len();
    bytes.reserve_exact(len - start);
    bytes.extend((0..len - start).map(|i| b'a' + (i % 256 % 26) as u8));
    bytes
}

/// The content limit from both sides, by `put` and by `putStream`: exactly
/// `CONTENT_BYTES_MAX` bytes is stored and reads back identical, one byte fewer is
/// stored, one more is refused (`invalid-argument`, or a `too-large` abort naming the
/// limit) and not stored (SPI-20).
pub async fn spi_20_content_limit_from_both_sides<S: ContentStore>(store: &S, cx: &Ctx) -> Verdict {
    let at = sized_blob(cx, "at-limit", CONTENT_BYTES_MAX);
    let r = ok(
        store.put(at.clone(), None).await,
        "put of exactly CONTENT_BYTES_MAX",
    )?;
    ensure!(
        r.digest == content_digest(&at) && r.size == CONTENT_BYTES_MAX as u64,
        "put of {CONTENT_BYTES_MAX} bytes gave {r:?}"
    );
    let got = ok(store.get(&r.digest, None).await, "get")?;
    ensure!(
        got.as_deref() == Some(&at[..]),
        "the {CONTENT_BYTES_MAX}-byte object read back as {:?} bytes (or different bytes)",
        got.as_ref().map(Vec::len)
    );
    drop(got);
    let under = sized_blob(cx, "under-limit", CONTENT_BYTES_MAX - 1);
    let r = ok(
        store.put(under.clone(), None).await,
        "put of CONTENT_BYTES_MAX - 1",
    )?;
    ensure!(
        r.digest == content_digest(&under) && r.size == under.len() as u64,
        "put of {} bytes gave {r:?}",
        under.len()
    );
    if !store.capabilities().claims(M::PutStream) {
        return Ok(Outcome::Pass);
    }
    // The same limit streamed: the total, not a chunk, is what is bounded.
    let at = sized_blob(cx, "stream-at-limit", CONTENT_BYTES_MAX);
    let chunks: Vec<Chunk> = at
        .chunks(STREAM_CHUNK_BYTES - 3)
        .map(|c| Ok(c.to_vec()))
        .collect();
    let outcome = ok(
        store.put_stream(chunks, None).await,
        "putStream of the limit",
    )?;
    ensure!(
        outcome
            == PutStreamOutcome::Stored(loom_kernel::spi::ContentRef {
                digest: content_digest(&at),
                size: CONTENT_BYTES_MAX as u64
            }),
        "a stream of exactly {CONTENT_BYTES_MAX} bytes gave {outcome:?}"
    );
    let over = sized_blob(cx, "stream-over-limit", CONTENT_BYTES_MAX + 1);
    let chunks: Vec<Chunk> = over
        .chunks(STREAM_CHUNK_BYTES + 1)
        .map(|c| Ok(c.to_vec()))
        .collect();
    let outcome = ok(
        store.put_stream(chunks, None).await,
        "putStream of the limit + 1",
    )?;
    ensure!(
        outcome
            == PutStreamOutcome::Aborted(PutStreamAbort::TooLarge {
                limit_bytes: CONTENT_BYTES_MAX as u64
            }),
        "a stream of {} bytes gave {outcome:?}, expected a too-large abort naming {CONTENT_BYTES_MAX}",
        CONTENT_BYTES_MAX + 1
    );
    ensure!(
        ok(store.get(&content_digest(&over), None).await, "get")?.is_none(),
        "the refused stream is readable"
    );
    Ok(Outcome::Pass)
}

/// A chunk-error abort names exactly how many bytes were read before the failure
/// (`bytesRead`), counting empty chunks as nothing, with the failure first and later
/// (SPI-20, ADR 0059).
pub async fn spi_20_put_stream_abort_facts<S: ContentStore>(store: &S, cx: &Ctx) -> Verdict {
    require_claims!(store.capabilities(), M::PutStream);
    for (sizes, read) in [
        (vec![], 0u64),
        (vec![0usize], 0),
        (vec![3, 0, 5], 8),
        (vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 11),
        (vec![1000], 1000),
    ] {
        let mut chunks: Vec<Chunk> = sizes
            .iter()
            .enumerate()
            .map(|(i, n)| Ok(sized_blob(cx, &format!("abort-{i}"), *n)))
            .collect();
        chunks.push(Err("the source broke".to_string()));
        chunks.push(Ok(blob(cx, "after the error")));
        let outcome = ok(store.put_stream(chunks, None).await, "putStream")?;
        match outcome {
            PutStreamOutcome::Aborted(PutStreamAbort::ChunkError { bytes_read, .. })
                if bytes_read == read => {}
            other => {
                return Err(crate::Failure(format!(
                    "a stream of chunks {sizes:?} then an error gave {other:?}, expected a chunk-error abort with bytesRead {read}"
                )))
            }
        }
    }
    Ok(Outcome::Pass)
}

/// Digests are `sha256:` and 64 **lowercase** hex digits, both ways: `put` returns
/// lowercase, and `get` refuses the upper-case spelling of a stored digest, an
/// upper-case prefix, 63 and 65 digits and a non-hex digit (`invalid-argument`, never
/// the bytes) (SPI-20).
pub async fn spi_20_digest_spelling_is_exact<S: ContentStore>(store: &S, cx: &Ctx) -> Verdict {
    let bytes = blob(cx, "digest-case");
    let r = ok(store.put(bytes.clone(), None).await, "put")?;
    let hex = &r.digest["sha256:".len().min(r.digest.len())..];
    ensure!(
        r.digest == content_digest(&bytes) && !hex.bytes().any(|b| b.is_ascii_uppercase()),
        "put returned the digest {:?}, expected {:?}",
        r.digest,
        content_digest(&bytes)
    );
    let upper = format!("sha256:{}", hex.to_ascii_uppercase());
    let mixed: String = format!(
        "sha256:{}",
        hex.char_indices()
            .map(|(i, c)| if i % 2 == 0 {
                c.to_ascii_uppercase()
            } else {
                c
            })
            .collect::<String>()
    );
    let bad = [
        upper,
        mixed,
        format!("SHA256:{hex}"),
        format!("sha256:{}", &hex[..63.min(hex.len())]),
        format!("{}0", r.digest),
        format!("sha256:{}g", &hex[..63.min(hex.len())]),
        format!(" {}", r.digest),
    ];
    for digest in bad {
        if digest == r.digest {
            continue;
        }
        err_kind(
            store.get(&digest, None).await,
            "invalid-argument",
            &format!("get({digest:?})"),
        )?;
    }
    Ok(Outcome::Pass)
}

/// Stored bytes read back identical: every byte value, invalid UTF-8, NUL, CR LF, a
/// lone byte and the empty object (SPI-20).
pub async fn spi_20_bytes_read_back_identical<S: ContentStore>(store: &S, cx: &Ctx) -> Verdict {
    let mut every: Vec<u8> = blob(cx, "bytes");
    every.extend(0..=255u8);
    every.extend([
        0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0, 0, b'\r', b'\n', 0x80,
    ]);
    for bytes in [every, vec![0u8], vec![0xffu8], Vec::new()] {
        let r = ok(store.put(bytes.clone(), None).await, "put")?;
        ensure!(
            r.digest == content_digest(&bytes) && r.size == bytes.len() as u64,
            "put of {} bytes gave {r:?}",
            bytes.len()
        );
        let got = ok(store.get(&r.digest, None).await, "get")?;
        ensure!(
            got.as_deref() == Some(&bytes[..]),
            "{} bytes read back as {got:?}",
            bytes.len()
        );
    }
    Ok(Outcome::Pass)
}

/// Several owners of the same bytes each read them, a third owner and an unowned
/// reader do not, owner names are compared exactly (case and Unicode matter), and an
/// owner name is bounded in bytes (SPI-20, ADR 0143).
pub async fn spi_20_several_owners_of_the_same_bytes<S: ContentStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use loom_kernel::spi::ID_BYTES_MAX;
    let caps = store.capabilities();
    require_version!(caps, "1.5.0");
    require_claims!(&caps, M::ContentAccess);
    let bytes = blob(cx, "shared");
    let digest = content_digest(&bytes);
    for owner in ["alice", "bob", "\u{e9}ve"] {
        let r = ok(
            store.put(bytes.clone(), as_owner(cx, owner)).await,
            "put as an owner",
        )?;
        ensure!(r.digest == digest, "owned put gave {r:?}");
    }
    for owner in ["alice", "bob", "\u{e9}ve"] {
        let got = ok(
            store.get(&digest, as_owner(cx, owner)).await,
            "get as an owner",
        )?;
        ensure!(
            got.as_deref() == Some(&bytes[..]),
            "owner {owner} read {got:?}"
        );
    }
    for stranger in ["Alice", "alice ", "carol", "e\u{301}ve"] {
        ensure!(
            ok(
                store.get(&digest, as_owner(cx, stranger)).await,
                "get as a stranger"
            )?
            .is_none(),
            "{stranger:?}, not an owner, read the bytes"
        );
    }
    ensure!(
        ok(store.get(&digest, None).await, "unowned get")?.is_none(),
        "an unowned get read owned bytes"
    );
    let longest = crate::case::id_of_bytes(cx, "owner-", ID_BYTES_MAX, '\u{e9}');
    ok(
        store
            .put(
                blob(cx, "long-owner"),
                Some(ContentAccess::new(longest.clone())),
            )
            .await,
        "an owner of ID_BYTES_MAX bytes",
    )?;
    err_kind(
        store
            .put(
                blob(cx, "too-long-owner"),
                Some(ContentAccess::new(format!("{longest}x"))),
            )
            .await,
        "invalid-argument",
        "an owner of ID_BYTES_MAX + 1 bytes",
    )?;
    Ok(Outcome::Pass)
}

/// Every content-store method answers an empty or over-long id as the id-validation table says
/// (`loom_conformance::ids::ID_VALIDATION`, printed in docs/protocols/store.md): an empty or over-long owner is refused by `put` and `get` (when the store claims `contentAccess`)
/// (GAP-27).
pub async fn gap_27_out_of_range_ids_follow_the_table<S: ContentStore>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use crate::ids::{id_answer, judge_id_rule, out_of_range_ids, rules_of};
    require_version!(store.capabilities(), "1.5.0");
    require_claims!(store.capabilities(), M::ContentAccess);
    let _ = cx;
    for rule in rules_of("contentStore") {
        for bad in out_of_range_ids() {
            let b = &*bad;
            let answer = match (rule.method, rule.argument) {
                ("contentStore.put", _) => id_answer(
                    store
                        .put(b"owned".to_vec(), Some(ContentAccess::new(b)))
                        .await,
                    |_| false,
                ),
                ("contentStore.get", _) => id_answer(
                    store
                        .get(
                            &loom_kernel::spi::plugin::content_digest(b"owned"),
                            Some(ContentAccess::new(b)),
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

/// Hostile owner names are distinct owners: bytes put by one are not readable by its
/// twin (a percent-decoded, case-folded or normalised owner would leak them) (SPI-20,
/// GAP-27).
pub async fn spi_20_hostile_owners_are_distinct<S: ContentStore>(store: &S, cx: &Ctx) -> Verdict {
    require_version!(store.capabilities(), "1.5.0");
    require_claims!(store.capabilities(), M::ContentAccess);
    let owners = crate::ids::hostile_ids(&cx.id("h."));
    for (_, owner) in &owners {
        let bytes = format!("owned by {owner}").into_bytes();
        ok(
            store.put(bytes, Some(ContentAccess::new(owner))).await,
            "put",
        )?;
    }
    for (family, owner) in &owners {
        for (_, other) in owners.iter().filter(|(_, o)| o != owner) {
            let digest = content_digest(format!("owned by {other}").as_bytes());
            let got = ok(
                store.get(&digest, Some(ContentAccess::new(owner))).await,
                "get",
            )?;
            ensure!(
                got.is_none(),
                "{} owners: {owner:?} reads the bytes {other:?} put",
                family.name()
            );
        }
    }
    Ok(Outcome::Pass)
}
