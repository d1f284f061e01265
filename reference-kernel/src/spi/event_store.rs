//! The EventStore SPI: the execution's append-only event log (§7, SPI-03..SPI-14, SPI-23).
//!
//! Required: [`EventStore::append`], [`EventStore::read`], [`EventStore::list_executions`]
//! and [`EventStore::capabilities`]. Everything else is optional: its default body
//! returns [`StoreErrorKind::Unsupported`](super::StoreErrorKind::Unsupported), and a
//! store declares what it implements in [`EventStoreCapabilities`]. A kit calls an
//! optional method only when it is claimed, and checks that an unclaimed one answers
//! `unsupported` (SPI-02).

use std::collections::BTreeSet;
use std::future::Future;

use serde::{Deserialize, Serialize};

use super::error::StoreError;
use super::{Capabilities, SpiMethod};
use crate::envelope::EventEnvelope;

/// A fence token (K9.4, PLACE-05). Tokens are per execution and strictly increasing:
/// the first [`EventStore::acquire_fence`] returns 1, each later one a larger value.
/// 0 is never handed out; a store uses it internally for "never fenced".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FenceToken(pub u64);

/// What a successful append reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppendAck {
    /// Sequence of the first appended event (the caller's `expected_next`).
    pub first_sequence: u64,
    /// The stream's next sequence after the append.
    pub next_sequence: u64,
}

/// The observation anchor of `observe`/`appendIfUnchanged` (SPI 2.2.0, ADR 0116; the
/// incarnation since SPI 2.3.0, ADR 0129; SPI-06, SPI-07).
///
/// Reference-defined shape (GAP-27): the anchor is the triple the store compares as a
/// whole. Two anchors are equal iff the stream is the same incarnation, has the same
/// next sequence, and has the same fence. The fence is part of it so that a zombie
/// holding an old anchor cannot slip an append past a new fence holder (PLACE-05):
/// acquiring a fence is a change. The incarnation lives in store metadata only and is
/// never written into an event (SPI-07).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Anchor {
    /// The stream's incarnation: a store-wide monotonic counter value assigned when the
    /// stream is created (first append to an absent or deleted id, or a `copyPrefix`
    /// target). 0 when the id never had a stream.
    pub incarnation: u64,
    /// The stream's next append sequence (0 for an absent or deleted stream).
    pub next_sequence: u64,
    /// The current fence token, 0 when never fenced.
    pub fence: u64,
}

/// What a store seals and therefore opens (SPI 2.5.0, ADR 0130 D7, SPI-11). Reserved:
/// declared and forwarded, no caller yet. The shape mirrors the reserved envelope key
/// `metadata.seal` (`{ v: 1, cipher, covers }`); reference-defined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SealingCapability {
    /// The cipher the store seals with.
    pub cipher: String,
    /// Which envelope parts it seals (e.g. `"payload"`).
    pub covers: Vec<String>,
}

/// One page of `listExecutionsPage` (SPI 1.2.0, SPI-13).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Page {
    /// Execution ids of this page, ascending.
    pub ids: Vec<String>,
    /// Pass this to get the next page; `None` on the last page. Opaque to callers
    /// (the reference stores use the last id of the page).
    pub next_cursor: Option<String>,
}

/// The optional EventStore methods (SPI-03, SPI-14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventStoreMethod {
    /// `readRange`.
    ReadRange,
    /// `acquireFence`.
    AcquireFence,
    /// `acquireFenceIf` (2.1.0).
    AcquireFenceIf,
    /// `observe` + `appendIfUnchanged` (2.2.0; incarnation-distinct anchor since 2.3.0).
    AppendIfUnchanged,
    /// `storeNow` (2.4.0).
    StoreNow,
    /// `deleteThrough` (2.6.0).
    DeleteThrough,
    /// `sealingCapability` (2.5.0).
    SealingCapability,
    /// `copyPrefix`.
    CopyPrefix,
    /// `deleteExecution`.
    DeleteExecution,
    /// `listExecutionsPage` (1.2.0).
    ListExecutionsPage,
}

impl EventStoreMethod {
    /// Every optional method, in the order the spec lists them (SPI-03).
    pub const ALL: [EventStoreMethod; 10] = [
        EventStoreMethod::ReadRange,
        EventStoreMethod::AcquireFence,
        EventStoreMethod::AcquireFenceIf,
        EventStoreMethod::AppendIfUnchanged,
        EventStoreMethod::StoreNow,
        EventStoreMethod::DeleteThrough,
        EventStoreMethod::SealingCapability,
        EventStoreMethod::CopyPrefix,
        EventStoreMethod::DeleteExecution,
        EventStoreMethod::ListExecutionsPage,
    ];
}

impl SpiMethod for EventStoreMethod {
    fn name(&self) -> &'static str {
        match self {
            EventStoreMethod::ReadRange => "readRange",
            EventStoreMethod::AcquireFence => "acquireFence",
            EventStoreMethod::AcquireFenceIf => "acquireFenceIf",
            EventStoreMethod::AppendIfUnchanged => "appendIfUnchanged",
            EventStoreMethod::StoreNow => "storeNow",
            EventStoreMethod::SealingCapability => "sealingCapability",
            EventStoreMethod::DeleteThrough => "deleteThrough",
            EventStoreMethod::CopyPrefix => "copyPrefix",
            EventStoreMethod::DeleteExecution => "deleteExecution",
            EventStoreMethod::ListExecutionsPage => "listExecutionsPage",
        }
    }

    /// The SPI minor that introduced the method. The spec names no version for
    /// `readRange`, `acquireFence`, `copyPrefix` and `deleteExecution`; they predate
    /// every numbered minor, so they read `"<=1.2.0"` (GAP-27).
    fn since(&self) -> &'static str {
        match self {
            EventStoreMethod::ReadRange
            | EventStoreMethod::AcquireFence
            | EventStoreMethod::CopyPrefix
            | EventStoreMethod::DeleteExecution => "<=1.2.0",
            EventStoreMethod::ListExecutionsPage => "1.2.0",
            EventStoreMethod::AcquireFenceIf => "2.1.0",
            EventStoreMethod::AppendIfUnchanged => "2.2.0",
            EventStoreMethod::StoreNow => "2.4.0",
            EventStoreMethod::SealingCapability => "2.5.0",
            EventStoreMethod::DeleteThrough => "2.6.0",
        }
    }

    fn all() -> &'static [Self] {
        &EventStoreMethod::ALL
    }
}

/// What an EventStore claims: its SPI version and its optional methods.
pub type EventStoreCapabilities = Capabilities<EventStoreMethod>;

/// Convenience: the capability set with every optional method claimed.
pub fn all_event_store_methods() -> BTreeSet<EventStoreMethod> {
    EventStoreMethod::ALL.into_iter().collect()
}

/// The event log of executions (§7). Every method is async and returns a `Send` future,
/// so a runtime can spawn work generic over the store; the trait is not object safe and
/// need not be.
///
/// Streams. An execution id names a stream. A stream is created by the first append
/// (at sequence 0) to an id that has none, and destroyed by `deleteExecution`. Every
/// creation gets a fresh incarnation from a store-wide monotonic counter (SPI-07). Fence
/// tokens survive deletion, so a fence token is monotonic per id for the life of the store.
///
/// Validation (reference-defined, GAP-27): a batch is refused with `InvalidArgument`,
/// before anything else is checked, when it is empty, longer than
/// [`APPEND_BATCH_EVENTS_MAX`](super::APPEND_BATCH_EVENTS_MAX), names another execution
/// in any envelope, or does not carry contiguous sequences starting at the expected
/// next sequence. The fence is checked before the sequence, so a zombie learns it is
/// fenced rather than retrying a conflict.
pub trait EventStore: Send + Sync {
    /// Declares the SPI version and the optional methods this store implements.
    /// Must agree with behaviour: an unclaimed method answers `unsupported`, a claimed
    /// one never does (SPI-02, checked by the kit).
    fn capabilities(&self) -> EventStoreCapabilities;

    /// Appends `events` atomically, all or nothing (required; SPI-23, PLACE-05, GAP-27).
    ///
    /// - Every envelope must carry `execution_id` and the batch's sequences must be
    ///   `expected_next, expected_next + 1, ...`; otherwise `InvalidArgument`.
    /// - If the execution is fenced (its current token is `c > 0`), `fence` must be
    ///   `Some(FenceToken(c))`; any other value is `Fenced`. If it was never fenced,
    ///   `fence` must be `None`: a presented token that the store never issued is
    ///   `Fenced { current: 0 }`.
    /// - If the stream's next sequence is not `expected_next`, `Conflict`.
    ///
    /// On any error nothing is written: the log has the same length and bytes.
    fn append(
        &self,
        execution_id: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> impl Future<Output = Result<AppendAck, StoreError>> + Send;

    /// The execution's events, ascending by sequence, without gaps (required; SPI-23).
    /// An unknown or deleted id reads as empty (reference-defined). After
    /// `deleteThrough(through)` the read returns the remaining suffix, whose first
    /// sequence is `through + 1` (or nothing, if the delete reached the head).
    fn read(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<Vec<EventEnvelope>, StoreError>> + Send;

    /// Every execution id with a live stream, ascending by byte order (required).
    /// A stream whose events were all removed by `deleteThrough` is still live.
    fn list_executions(&self) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Optional (`readRange`, version `<=1.2.0`, SPI-03): events with
    /// `from <= sequence <= to`, ascending (inclusive range, reference-defined per
    /// GAP-27). `from > to` is `InvalidArgument`.
    fn read_range(
        &self,
        execution_id: &str,
        from: u64,
        to: u64,
    ) -> impl Future<Output = Result<Vec<EventEnvelope>, StoreError>> + Send {
        let _ = (execution_id, from, to);
        async { Err(StoreError::unsupported("readRange")) }
    }

    /// Optional (`acquireFence`, `<=1.2.0`; SPI-04, PLACE-05): makes the caller the
    /// fence holder and returns a token strictly greater than every earlier token of this
    /// execution id. From then on appends must present it. Allowed on an id with no
    /// stream (the fence then guards its creation). A store that omits this method does
    /// no fencing and is single-node only.
    fn acquire_fence(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<FenceToken, StoreError>> + Send {
        let _ = execution_id;
        async { Err(StoreError::unsupported("acquireFence")) }
    }

    /// Optional (`acquireFenceIf`, SPI 2.1.0, ADR 0118; SPI-05): like `acquireFence`,
    /// but only if the current token equals `expected_current` (`None` = never fenced).
    /// Otherwise `FenceConflict` and nothing changes (reference-defined condition, GAP-27).
    fn acquire_fence_if(
        &self,
        execution_id: &str,
        expected_current: Option<FenceToken>,
    ) -> impl Future<Output = Result<FenceToken, StoreError>> + Send {
        let _ = (execution_id, expected_current);
        async { Err(StoreError::unsupported("acquireFenceIf")) }
    }

    /// Optional (part of `appendIfUnchanged`, SPI 2.2.0/2.3.0; SPI-06, SPI-07, GAP-20):
    /// the stream's current [`Anchor`]. The runtime's park fence is the anchor observed
    /// at park time.
    fn observe(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<Anchor, StoreError>> + Send {
        let _ = execution_id;
        async { Err(StoreError::unsupported("appendIfUnchanged")) }
    }

    /// Optional (`appendIfUnchanged`, SPI 2.2.0, ADR 0116; SPI-06, SPI-07): appends
    /// `events` (contiguous from `anchor.next_sequence`) only if the stream's anchor
    /// still equals `anchor`: same incarnation, same next sequence, same fence.
    /// Otherwise `AnchorChanged`, nothing written. No fence token is presented: the
    /// anchor already pins the fence.
    fn append_if_unchanged(
        &self,
        execution_id: &str,
        anchor: Anchor,
        events: Vec<EventEnvelope>,
    ) -> impl Future<Output = Result<AppendAck, StoreError>> + Send {
        let _ = (execution_id, anchor, events);
        async { Err(StoreError::unsupported("appendIfUnchanged")) }
    }

    /// Optional (`storeNow`, SPI 2.4.0, ADR 0110 D10a; SPI-08): the store's own clock in
    /// epoch milliseconds. A shared store reports database time; a single-process store
    /// omits the method and callers use their injected clock.
    fn store_now(&self) -> impl Future<Output = Result<i64, StoreError>> + Send {
        async { Err(StoreError::unsupported("storeNow")) }
    }

    /// Optional (`sealingCapability`, SPI 2.5.0, ADR 0130 D7; SPI-11): what the store
    /// seals and opens. `Ok(None)` means it seals nothing. Reserved: no caller yet.
    fn sealing_capability(
        &self,
    ) -> impl Future<Output = Result<Option<SealingCapability>, StoreError>> + Send {
        async { Err(StoreError::unsupported("sealingCapability")) }
    }

    /// Optional (`deleteThrough`, SPI 2.6.0, ADR 0139 D8; SPI-09, SPI-10): atomically
    /// deletes every event of the execution with `sequence <= through`, sequence 0
    /// included, and returns how many were deleted. Events after `through` (including
    /// ones appended concurrently) survive. The stream stays live: its next sequence,
    /// incarnation and fence are unchanged, so appends continue where they were
    /// (reference-defined). An unknown id is `NotFound`.
    fn delete_through(
        &self,
        execution_id: &str,
        through: u64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send {
        let _ = (execution_id, through);
        async { Err(StoreError::unsupported("deleteThrough")) }
    }

    /// Optional (`copyPrefix`, `<=1.2.0`; SPI-14; semantics reference-defined, GAP-27):
    /// copies the source's events with `sequence <= through` into `target`, rewriting
    /// `executionId` and keeping every other field. The target must have no live
    /// stream (`Conflict { expected_next: 0, .. }` otherwise); it gets a fresh
    /// incarnation. The source must exist (`NotFound`), must still hold sequence 0 and
    /// must have reached `through` (`InvalidArgument`). Atomic.
    fn copy_prefix(
        &self,
        source: &str,
        target: &str,
        through: u64,
    ) -> impl Future<Output = Result<AppendAck, StoreError>> + Send {
        let _ = (source, target, through);
        async { Err(StoreError::unsupported("copyPrefix")) }
    }

    /// Optional (`deleteExecution`, `<=1.2.0`; SPI-14; reference-defined): removes the
    /// stream and all its events. The id stops being listed; a later append at 0
    /// creates a new incarnation. The fence token is kept (tokens never go back).
    /// Deleting an unknown id is a no-op returning `false`.
    fn delete_execution(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        let _ = execution_id;
        async { Err(StoreError::unsupported("deleteExecution")) }
    }

    /// Optional (`listExecutionsPage`, SPI 1.2.0; SPI-13): at most `limit` live ids
    /// greater than `cursor`, ascending, with the cursor of the next page. Paging from
    /// `None` to the end returns each id that was live throughout exactly once; ids
    /// created or deleted meanwhile may or may not appear. `limit` must be in
    /// `1..=LIST_PAGE_LIMIT_MAX`, else `InvalidArgument`.
    fn list_executions_page(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> impl Future<Output = Result<Page, StoreError>> + Send {
        let _ = (cursor, limit);
        async { Err(StoreError::unsupported("listExecutionsPage")) }
    }
}
