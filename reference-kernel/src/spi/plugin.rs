//! # The plugin-tier SPIs (§7, SPI-20): ContentStore, DurableStateStore, ReadModelStore
//!
//! The spec names these three seams and says each ships a conformance kit, but it gives
//! no method list and no version constant in the kernel manifest. Everything below is
//! therefore **reference-defined**: the smallest contract that carries what SPI-20
//! names (the ADR 0059 `putStream` outcome contract, the SPI 1.5.0 owner argument
//! `ContentAccess` and the `sealsContent` marker from ADR 0143, and query `limit` /
//! `cursor` validation), written in the style of the kernel-tier traits: async methods
//! returning `impl Future + Send`, typed [`StoreError`]s, and a [`Capabilities`] claim
//! that the kits check against behaviour both ways.
//!
//! Key design decisions:
//!
//! - **Content is addressed by its bytes.** A [`ContentRef`]'s digest is
//!   `sha256:<64 lowercase hex>` of the bytes ([`content_digest`]), so `put` is
//!   idempotent by construction and a reader can check what it got.
//! - **`putStream` is all or nothing.** A stream either ends and is stored whole
//!   ([`PutStreamOutcome::Stored`]) or is refused with a reason
//!   ([`PutStreamOutcome::Aborted`]) and nothing of it is readable afterwards. A store
//!   never keeps a prefix: a half-written object under the digest of its prefix would
//!   look like valid content to anyone who computes that digest.
//! - **Owned content is private to its owner.** Content put with a [`ContentAccess`] is
//!   readable only by a `get` naming the same owner; an unowned `get` or another owner
//!   sees `None`, not an error, so a reader cannot learn that someone else holds the
//!   bytes. The same bytes put without an owner are public. This is reference-defined.
//! - **Durable state is compare-and-set.** Every write names the version it expects;
//!   a stale one is a `Conflict` with nothing written. Versions keep rising across a
//!   delete, so a writer holding a version from before the delete cannot overwrite the
//!   re-created key (no ABA).
//! - **Read-model cursors are the store's, not the caller's.** A cursor is opaque; a
//!   store accepts only cursors it issued for the same collection, so a forged, garbled
//!   or foreign cursor is `InvalidArgument`, never a silent restart from the top.

use std::future::Future;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::error::StoreError;
use super::{Capabilities, SpiMethod, ID_BYTES_MAX};

/// Largest object a ContentStore accepts, in bytes, by `put` or `putStream`
/// (reference-defined; large enough for real payload blobs, small enough that the kit
/// can stream past it in well under a second).
pub const CONTENT_BYTES_MAX: usize = 8 * 1024 * 1024;
/// Largest `limit` a ReadModelStore `query` accepts.
pub const READ_MODEL_LIMIT_MAX: i64 = 1_000;
/// Largest read-model document or durable-state value, in bytes of its JSON text.
pub const DOCUMENT_BYTES_MAX: usize = 1024 * 1024;
/// Length of a well-formed content digest: `sha256:` plus 64 hex digits.
pub const CONTENT_DIGEST_LEN: usize = 7 + 64;

/// `sha256:<64 lowercase hex>` of `bytes`: the address of content.
pub fn content_digest(bytes: &[u8]) -> String {
    let mut hasher = ContentHasher::new();
    hasher.update(bytes);
    hasher.finish().digest
}

/// Whether `digest` is `sha256:` followed by 64 lowercase hex digits.
pub fn is_content_digest(digest: &str) -> bool {
    digest.len() == CONTENT_DIGEST_LEN
        && digest.starts_with("sha256:")
        && digest[7..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Hashes content as it streams in, so a store can address a stream without holding a
/// second copy of it.
#[derive(Debug, Clone, Default)]
pub struct ContentHasher {
    sha: Sha256,
    size: u64,
}

impl ContentHasher {
    /// An empty hasher.
    pub fn new() -> ContentHasher {
        ContentHasher::default()
    }

    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        self.sha.update(bytes);
        self.size += bytes.len() as u64;
    }

    /// Bytes seen so far.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The reference of everything added.
    pub fn finish(self) -> ContentRef {
        let mut digest = String::with_capacity(CONTENT_DIGEST_LEN);
        digest.push_str("sha256:");
        for b in self.sha.finalize() {
            digest.push(char::from(HEX[usize::from(b >> 4)]));
            digest.push(char::from(HEX[usize::from(b & 0xf)]));
        }
        ContentRef {
            digest,
            size: self.size,
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Where stored content lives: its digest and its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentRef {
    /// `sha256:<64 lowercase hex>` of the bytes.
    pub digest: String,
    /// The number of bytes.
    pub size: u64,
}

/// The optional owner argument of `put`, `putStream` and `get` (SPI 1.5.0, ADR 0143).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentAccess {
    /// Who owns the content (a tenant, an execution, a principal); non-empty, at most
    /// [`ID_BYTES_MAX`] bytes.
    pub owner: String,
}

impl ContentAccess {
    /// Access as `owner`.
    pub fn new(owner: impl Into<String>) -> ContentAccess {
        ContentAccess {
            owner: owner.into(),
        }
    }
}

/// One chunk of a `putStream`: bytes, or the source's failure in words.
pub type Chunk = Result<Vec<u8>, String>;

/// Why a `putStream` stored nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutStreamAbort {
    /// The source failed after `bytes_read` bytes.
    ChunkError {
        /// The source's message.
        message: String,
        /// Bytes received before the failure (none of them stored).
        bytes_read: u64,
    },
    /// The stream grew past [`CONTENT_BYTES_MAX`].
    TooLarge {
        /// The limit it crossed, in bytes.
        limit_bytes: u64,
    },
}

/// The ADR 0059 outcome of a `putStream`: the whole stream stored, or nothing stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutStreamOutcome {
    /// Every chunk was stored as one object.
    Stored(ContentRef),
    /// Nothing was stored, for this reason.
    Aborted(PutStreamAbort),
}

/// The optional ContentStore features a store may claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ContentStoreMethod {
    /// `putStream` (ADR 0059; the spec gives no version, so `<=1.5.0`).
    PutStream,
    /// The `owner` argument, `ContentAccess` (1.5.0, ADR 0143).
    ContentAccess,
    /// The `sealsContent` marker (1.5.0, ADR 0143).
    SealsContent,
}

impl ContentStoreMethod {
    /// Every optional feature, in spec order.
    pub const ALL: [ContentStoreMethod; 3] = [
        ContentStoreMethod::PutStream,
        ContentStoreMethod::ContentAccess,
        ContentStoreMethod::SealsContent,
    ];
}

impl SpiMethod for ContentStoreMethod {
    fn name(&self) -> &'static str {
        match self {
            ContentStoreMethod::PutStream => "putStream",
            ContentStoreMethod::ContentAccess => "contentAccess",
            ContentStoreMethod::SealsContent => "sealsContent",
        }
    }

    fn since(&self) -> &'static str {
        match self {
            ContentStoreMethod::PutStream => "<=1.5.0",
            ContentStoreMethod::ContentAccess | ContentStoreMethod::SealsContent => "1.5.0",
        }
    }

    fn all() -> &'static [Self] {
        &ContentStoreMethod::ALL
    }
}

/// What a ContentStore claims.
pub type ContentStoreCapabilities = Capabilities<ContentStoreMethod>;

/// Content-addressed blobs (plugin tier, reference-defined).
pub trait ContentStore: Send + Sync {
    /// Declares the SPI version and the optional features implemented (SPI-02).
    fn capabilities(&self) -> ContentStoreCapabilities;

    /// Stores `bytes` and returns their reference (required). Idempotent: the same
    /// bytes give the same reference however often they are put. More than
    /// [`CONTENT_BYTES_MAX`] bytes is `InvalidArgument`. An `owner` on a store that does
    /// not claim `contentAccess` is `Unsupported { method: "contentAccess" }`, because
    /// silently storing owned content as public would leak it.
    fn put(
        &self,
        bytes: Vec<u8>,
        owner: Option<ContentAccess>,
    ) -> impl Future<Output = Result<ContentRef, StoreError>> + Send;

    /// The bytes stored under `digest`, or `None` when there are none this caller may
    /// read (required). A malformed digest is `InvalidArgument`.
    fn get(
        &self,
        digest: &str,
        owner: Option<ContentAccess>,
    ) -> impl Future<Output = Result<Option<Vec<u8>>, StoreError>> + Send;

    /// Optional (`putStream`, ADR 0059): stores the concatenated chunks as one object,
    /// or nothing. A chunk error or a total over [`CONTENT_BYTES_MAX`] ends the stream
    /// with [`PutStreamOutcome::Aborted`] and leaves no object, whole or partial.
    /// A `StoreError` is reserved for the store's own failures (nothing stored either).
    fn put_stream<I>(
        &self,
        chunks: I,
        owner: Option<ContentAccess>,
    ) -> impl Future<Output = Result<PutStreamOutcome, StoreError>> + Send
    where
        I: IntoIterator<Item = Chunk> + Send,
        I::IntoIter: Send,
    {
        let _ = (chunks, owner);
        async { Err(StoreError::unsupported("putStream")) }
    }

    /// Optional (`sealsContent`, 1.5.0): whether the store seals (encrypts) content at
    /// rest. A sealing store still returns the original bytes from `get`.
    fn seals_content(&self) -> impl Future<Output = Result<bool, StoreError>> + Send {
        async { Err(StoreError::unsupported("sealsContent")) }
    }
}

/// The DurableStateStore has no optional methods; this type has no values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DurableStateStoreMethod {}

impl SpiMethod for DurableStateStoreMethod {
    fn name(&self) -> &'static str {
        match *self {}
    }
    fn since(&self) -> &'static str {
        match *self {}
    }
    fn all() -> &'static [Self] {
        &[]
    }
}

/// What a DurableStateStore claims (a version; there are no optional methods).
pub type DurableStateStoreCapabilities = Capabilities<DurableStateStoreMethod>;

/// A durable-state value and the version it was written at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    /// The stored JSON value.
    pub value: Value,
    /// Its version: 1 or more, rising by one per write, never reused for a key.
    pub version: u64,
}

/// Keyed JSON state with compare-and-set writes (plugin tier, reference-defined).
///
/// A stale expectation is [`StoreErrorKind::Conflict`](super::StoreErrorKind::Conflict)
/// with `expected_next` = the version the caller expected (0 for "absent") and
/// `actual_next` = the current version (0 when the key is absent).
pub trait DurableStateStore: Send + Sync {
    /// Declares the SPI version.
    fn capabilities(&self) -> DurableStateStoreCapabilities;

    /// The current value and version of `key`, or `None`.
    fn get(&self, key: &str) -> impl Future<Output = Result<Option<Versioned>, StoreError>> + Send;

    /// Writes `value` if the key's current version is `expected_version` (`None`: the
    /// key must be absent) and returns the new version; otherwise `Conflict`, nothing
    /// written. Keys are non-empty and at most [`ID_BYTES_MAX`] bytes; values at most
    /// [`DOCUMENT_BYTES_MAX`] bytes of JSON.
    fn put(
        &self,
        key: &str,
        value: Value,
        expected_version: Option<u64>,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Deletes the key if its current version is `expected_version`; `NotFound` when
    /// it is absent, `Conflict` when the version is stale (nothing deleted).
    fn delete(
        &self,
        key: &str,
        expected_version: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// The ReadModelStore has no optional methods; this type has no values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadModelStoreMethod {}

impl SpiMethod for ReadModelStoreMethod {
    fn name(&self) -> &'static str {
        match *self {}
    }
    fn since(&self) -> &'static str {
        match *self {}
    }
    fn all() -> &'static [Self] {
        &[]
    }
}

/// What a ReadModelStore claims (a version; there are no optional methods).
pub type ReadModelStoreCapabilities = Capabilities<ReadModelStoreMethod>;

/// How to page through a collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryOptions {
    /// Most documents in the page: `1..=READ_MODEL_LIMIT_MAX`. Signed, because a
    /// caller in another language can send anything and the store must refuse it.
    pub limit: i64,
    /// Where to continue: a `next_cursor` this store returned for this collection.
    pub cursor: Option<String>,
}

/// One stored read-model document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Its id within the collection.
    pub id: String,
    /// The JSON document.
    pub doc: Value,
}

/// One page of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadModelPage {
    /// The documents, ascending by id.
    pub docs: Vec<Document>,
    /// Where the next page starts, or `None` when this is the last page.
    pub next_cursor: Option<String>,
}

/// Projections queried by collection (plugin tier, reference-defined).
pub trait ReadModelStore: Send + Sync {
    /// Declares the SPI version.
    fn capabilities(&self) -> ReadModelStoreCapabilities;

    /// Inserts or replaces document `id` of `collection`. Collection names and ids are
    /// non-empty and at most [`ID_BYTES_MAX`] bytes; documents at most
    /// [`DOCUMENT_BYTES_MAX`] bytes of JSON.
    fn upsert(
        &self,
        collection: &str,
        id: &str,
        doc: Value,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Document `id` of `collection`, or `None`.
    fn get(
        &self,
        collection: &str,
        id: &str,
    ) -> impl Future<Output = Result<Option<Value>, StoreError>> + Send;

    /// One page of `collection` in ascending id order. A limit outside
    /// `1..=READ_MODEL_LIMIT_MAX`, or a cursor this store did not issue for this
    /// collection, is `InvalidArgument`. Paging from no cursor until `next_cursor` is
    /// `None` returns every document present throughout exactly once.
    fn query(
        &self,
        collection: &str,
        options: QueryOptions,
    ) -> impl Future<Output = Result<ReadModelPage, StoreError>> + Send;
}

/// Checks a plugin-tier name (a state key, a collection, a document id, an owner).
pub fn check_name(what: &str, name: &str) -> Result<(), StoreError> {
    if name.is_empty() {
        return Err(StoreError::invalid(format!("{what} is empty")));
    }
    if name.len() > ID_BYTES_MAX {
        return Err(StoreError::invalid(format!(
            "{what} is {} bytes, the limit is {ID_BYTES_MAX}",
            name.len()
        )));
    }
    Ok(())
}

/// Checks a JSON value against [`DOCUMENT_BYTES_MAX`] and returns its text.
pub fn check_document(value: &Value) -> Result<String, StoreError> {
    let text = serde_json::to_string(value)
        .map_err(|e| StoreError::invalid(format!("document does not serialise: {e}")))?;
    if text.len() > DOCUMENT_BYTES_MAX {
        return Err(StoreError::invalid(format!(
            "document is {} bytes, the limit is {DOCUMENT_BYTES_MAX}",
            text.len()
        )));
    }
    Ok(text)
}

/// Checks a query limit and returns it as a count.
pub fn check_limit(limit: i64) -> Result<usize, StoreError> {
    if (1..=READ_MODEL_LIMIT_MAX).contains(&limit) {
        Ok(limit as usize)
    } else {
        Err(StoreError::invalid(format!(
            "query limit {limit} is outside 1..={READ_MODEL_LIMIT_MAX}"
        )))
    }
}

/// Checks a content digest argument.
pub fn check_digest(digest: &str) -> Result<(), StoreError> {
    if is_content_digest(digest) {
        Ok(())
    } else {
        Err(StoreError::invalid(format!(
            "{digest:?} is not sha256:<64 lowercase hex>"
        )))
    }
}

/// The owner check every ContentStore makes: no owner is fine; an owner given to a store
/// that does not claim `contentAccess` is `Unsupported`; otherwise the owner name must be
/// a valid id.
pub fn check_owner(
    caps: &ContentStoreCapabilities,
    owner: &Option<ContentAccess>,
) -> Result<(), StoreError> {
    match owner {
        None => Ok(()),
        Some(_) if !caps.claims(ContentStoreMethod::ContentAccess) => {
            Err(StoreError::unsupported("contentAccess"))
        }
        Some(a) => check_name("owner", &a.owner),
    }
}

/// The reference of `bytes` for `put`, refusing content over [`CONTENT_BYTES_MAX`].
pub fn content_ref(bytes: &[u8]) -> Result<ContentRef, StoreError> {
    if bytes.len() > CONTENT_BYTES_MAX {
        return Err(StoreError::invalid(format!(
            "content is {} bytes, the limit is {CONTENT_BYTES_MAX}",
            bytes.len()
        )));
    }
    let mut hasher = ContentHasher::new();
    hasher.update(bytes);
    Ok(hasher.finish())
}

/// Collects a `putStream` into a private buffer with its reference, or the reason it
/// aborted: a chunk error, or a stream over [`CONTENT_BYTES_MAX`]. A store publishes the
/// buffer only on `Ok`, so an abort leaves nothing behind (the outcome contract).
pub fn collect_stream(
    chunks: impl IntoIterator<Item = Chunk>,
) -> Result<(Vec<u8>, ContentRef), PutStreamAbort> {
    let mut buffer = Vec::new();
    let mut hasher = ContentHasher::new();
    for chunk in chunks {
        let bytes = chunk.map_err(|message| PutStreamAbort::ChunkError {
            message,
            bytes_read: hasher.size(),
        })?;
        if buffer.len() + bytes.len() > CONTENT_BYTES_MAX {
            return Err(PutStreamAbort::TooLarge {
                limit_bytes: CONTENT_BYTES_MAX as u64,
            });
        }
        hasher.update(&bytes);
        buffer.extend_from_slice(&bytes);
    }
    Ok((buffer, hasher.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_of_empty_input_is_the_sha256_constant() {
        assert_eq!(
            content_digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(is_content_digest(&content_digest(b"x")));
        assert!(!is_content_digest("sha256:E3B0"));
    }

    #[test]
    fn limits_are_checked_both_ends() {
        assert!(check_limit(0).is_err());
        assert!(check_limit(-1).is_err());
        assert!(check_limit(READ_MODEL_LIMIT_MAX + 1).is_err());
        assert_eq!(check_limit(1).ok(), Some(1));
    }
}
