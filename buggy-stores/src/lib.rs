//! # loom-buggy-stores: stores that are wrong on purpose
//!
//! This crate owns the evidence that the store kits and the exploration campaign have
//! judging power: a catalogue ([`CATALOGUE`]) of deliberately broken stores, each with
//! one bug of the kind a careful author still ships, the class of bug it belongs to,
//! the rule a correct harness must name, and what must catch it (a kit, or only the
//! campaign). The Rust bugs are thin wrappers over the in-memory reference stores
//! ([`wrappers`]); the Python ones are variants of the example adapter
//! (`python/buggy_adapter.py BUG`), driven through the stdio store protocol.
//!
//! `tests/judging_power.rs` runs every entry: each must fail with its rule, the
//! faithful stores must pass, and each campaign-only bug must pass every kit and be
//! found by the campaign within the stated budget.
//!
//! Architecture invariant: nothing outside this crate's tests depends on it; the kits
//! and the campaign never know these stores exist.
#![deny(missing_docs)]

pub mod keyed;
pub mod wrappers;

/// The class of a bug, as the judging-power issue lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A boundary tested on one side only or at a small size.
    Boundary,
    /// An ordering that needs several items to show.
    Ordering,
    /// Two checks in the wrong order, or a comparison wrong on one side.
    CheckOrder,
    /// A value that does not read back identical.
    Fidelity,
    /// A refusal whose typed facts are wrong.
    ErrorFacts,
    /// `storeNow` wrong.
    Timestamps,
    /// Ids a real backend merges or misorders ([`keyed`]; `loom_conformance::ids`).
    HostileKey,
    /// State that goes wrong only after a long enough history: caches, write-behind
    /// buffers, compacting queues, offset cursors, SPIs sharing a backend ([`keyed`]).
    Stateful,
}

/// Where a bug lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// A Rust wrapper over the in-memory stores ([`wrappers`]).
    Rust,
    /// A variant of the Python example adapter (`python/buggy_adapter.py`).
    Python,
}

/// What must catch the bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Catcher {
    /// The named kit (by its report name, e.g. `"event-store"`).
    Kit(&'static str),
    /// Only the exploration campaign: every kit passes this store.
    Explore,
}

/// One broken store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bug {
    /// Its name: the wrapper's bug name or the Python variant's argument.
    pub name: &'static str,
    /// Its class.
    pub class: Class,
    /// The rule a failing case (or the campaign's divergence) must cite.
    pub rule: &'static str,
    /// What must catch it.
    pub catcher: Catcher,
    /// Where it lives.
    pub lang: Lang,
    /// The bug, in words.
    pub what: &'static str,
}

const fn rust(
    name: &'static str,
    class: Class,
    rule: &'static str,
    kit: &'static str,
    what: &'static str,
) -> Bug {
    Bug {
        name,
        class,
        rule,
        catcher: Catcher::Kit(kit),
        lang: Lang::Rust,
        what,
    }
}

const fn python(
    name: &'static str,
    class: Class,
    rule: &'static str,
    kit: &'static str,
    what: &'static str,
) -> Bug {
    Bug {
        name,
        class,
        rule,
        catcher: Catcher::Kit(kit),
        lang: Lang::Python,
        what,
    }
}

const fn explore(name: &'static str, class: Class, rule: &'static str, what: &'static str) -> Bug {
    Bug {
        name,
        class,
        rule,
        catcher: Catcher::Explore,
        lang: Lang::Rust,
        what,
    }
}

const fn explore_py(
    name: &'static str,
    class: Class,
    rule: &'static str,
    what: &'static str,
) -> Bug {
    Bug {
        name,
        class,
        rule,
        catcher: Catcher::Explore,
        lang: Lang::Python,
        what,
    }
}

use Class::*;

/// Every broken store.
pub const CATALOGUE: &[Bug] = &[
    // Boundaries.
    rust(
        "range-text-order",
        Boundary,
        "SPI-03",
        "event-store",
        "readRange compares sequences as text, so ranges past 9 or 99 go wrong",
    ),
    rust(
        "batch-limit-unchecked",
        Boundary,
        "SPI-23",
        "event-store",
        "an append of more than APPEND_BATCH_EVENTS_MAX events is accepted",
    ),
    rust(
        "delete-through-count-arith",
        Boundary,
        "SPI-09",
        "event-store",
        "deleteThrough reports through + 1 - first instead of counting, wrong at and past the head",
    ),
    rust(
        "delete-through-past-max",
        Boundary,
        "SPI-09",
        "event-store",
        "deleteThrough past SEQUENCE_MAX is clamped instead of refused",
    ),
    rust(
        "page-counts-tombstones",
        Boundary,
        "SPI-13",
        "event-store",
        "listExecutionsPage counts deleted streams when deciding whether there is more",
    ),
    rust(
        "prune-past-max",
        Boundary,
        "SPI-16",
        "snapshot-store",
        "pruneSnapshots past SEQUENCE_MAX is clamped instead of refused",
    ),
    rust(
        "archive-equal-sequences",
        Boundary,
        "SPI-19",
        "archive-store",
        "archive accepts a repeated sequence (>= where > is required) and keeps the first",
    ),
    rust(
        "stream-limit-exclusive",
        Boundary,
        "SPI-20",
        "content-store",
        "putStream aborts a stream of exactly CONTENT_BYTES_MAX",
    ),
    rust(
        "lease-live-at-deadline",
        Boundary,
        "PLACE-04",
        "dispatcher",
        "a lease is still live at its deadline",
    ),
    rust(
        "chain-limit-off-by-one",
        Boundary,
        "GAP-19",
        "branch-registry",
        "a chain of exactly BRANCH_CHAIN_LEN_MAX is refused",
    ),
    rust(
        "prune-exclusive-through",
        Boundary,
        "SPI-16",
        "snapshot-store",
        "pruneSnapshots deletes below through, keeping the snapshot at through",
    ),
    rust(
        "archive-batch-limit-unchecked",
        Boundary,
        "SPI-19",
        "archive-store",
        "an archive batch over APPEND_BATCH_EVENTS_MAX is written in two parts instead of refused",
    ),
    rust(
        "model-document-limit-pretty",
        Boundary,
        "SPI-20",
        "read-model-store",
        "the document limit is measured on pretty-printed JSON, so a document at the limit is refused",
    ),
    rust(
        "branch-version-ahead",
        Boundary,
        "SPI-01",
        "branch-registry",
        "the branch registry declares SPI 1.1.0, newer than the kernel's 1.0.0",
    ),
    python(
        "batch-limit-inclusive",
        Boundary,
        "SPI-23",
        "event-store",
        "an append of exactly APPEND_BATCH_EVENTS_MAX events is refused",
    ),
    python(
        "content-limit-inclusive",
        Boundary,
        "SPI-20",
        "content-store",
        "content of exactly CONTENT_BYTES_MAX is refused",
    ),
    python(
        "document-limit-in-characters",
        Boundary,
        "SPI-20",
        "durable-state-store",
        "the value limit counts characters, not UTF-8 bytes",
    ),
    python(
        "document-limit-default-separators",
        Boundary,
        "SPI-20",
        "read-model-store",
        "the document limit is measured on json.dumps' default output (\", \" and \": \" separators)",
    ),
    python(
        "id-limit-in-characters",
        Boundary,
        "SPI-23",
        "event-store",
        "the id limit counts characters, not UTF-8 bytes",
    ),
    python(
        "page-cursor-when-full",
        Boundary,
        "SPI-13",
        "event-store",
        "an exactly full last page of listExecutionsPage has a cursor",
    ),
    python(
        "query-cursor-when-full",
        Boundary,
        "SPI-20",
        "read-model-store",
        "an exactly full last query page has a cursor",
    ),
    // Orderings.
    rust(
        "latest-by-text",
        Ordering,
        "SPI-15",
        "snapshot-store",
        "loadLatest picks the highest sequence compared as text",
    ),
    rust(
        "archive-insertion-order",
        Ordering,
        "SPI-19",
        "archive-store",
        "readArchived returns envelopes in the order they were archived",
    ),
    rust(
        "archive-clash-first-only",
        Ordering,
        "SPI-19",
        "archive-store",
        "only the first envelope of a batch is checked for a clash",
    ),
    rust(
        "lease-by-execution",
        Ordering,
        "PLACE-02",
        "dispatcher",
        "a lost lease is matched by execution id, so it completes the re-dispatched package",
    ),
    rust(
        "timer-text-order",
        Ordering,
        "GAP-25",
        "timer-store",
        "due orders wake times as text",
    ),
    rust(
        "completed-execution-refused",
        Ordering,
        "PLACE-02",
        "dispatcher",
        "an execution id is refused as a duplicate after its package completed",
    ),
    rust(
        "state-version-restarts",
        Ordering,
        "SPI-20",
        "durable-state-store",
        "a durable-state key re-created after delete starts again at version 1",
    ),
    rust(
        "expire-answers-nothing",
        Ordering,
        "PLACE-04",
        "dispatcher",
        "expireLeases re-queues the expired leases but answers an empty list",
    ),
    python(
        "expire-answers-latest-first",
        Ordering,
        "PLACE-04",
        "dispatcher",
        "expireLeases answers the re-queued dispatch ids newest first, not ascending",
    ),
    python(
        "list-sequences-text-order",
        Ordering,
        "SPI-17",
        "snapshot-store",
        "listSequences is in text order",
    ),
    python(
        "archive-clash-keeps-new",
        Ordering,
        "SPI-19",
        "archive-store",
        "a batch refused for a clash keeps the new envelopes before it",
    ),
    python(
        "blocked-head",
        Ordering,
        "PLACE-02",
        "dispatcher",
        "a package pinned to another target at the head blocks the queue",
    ),
    python(
        "requeue-at-front",
        Ordering,
        "PLACE-04",
        "dispatcher",
        "expired leases re-queue at the front, ahead of newer packages",
    ),
    python(
        "query-case-insensitive-order",
        Ordering,
        "SPI-20",
        "read-model-store",
        "query pages are sorted case-insensitively, not by bytes",
    ),
    // Order of checks and comparisons from both sides.
    rust(
        "sequence-before-fence",
        CheckOrder,
        "PLACE-05",
        "event-store",
        "append checks the sequence before the fence: a zombie is told conflict",
    ),
    rust(
        "fence-token-above-accepted",
        CheckOrder,
        "PLACE-05",
        "event-store",
        "append accepts a token above the current one (>= where == is required)",
    ),
    rust(
        "copy-target-before-source",
        CheckOrder,
        "SPI-14",
        "event-store",
        "copyPrefix refuses a live target before it checks the source",
    ),
    rust(
        "state-conflict-before-validation",
        CheckOrder,
        "SPI-20",
        "durable-state-store",
        "an empty key with a stale version is a conflict, not invalid",
    ),
    rust(
        "lease-expired-before-deadline",
        CheckOrder,
        "PLACE-04",
        "dispatcher",
        "a lease is already lost one ms before its deadline (>= where > is required)",
    ),
    rust(
        "due-excludes-now",
        CheckOrder,
        "GAP-25",
        "timer-store",
        "due leaves out a timer whose wake time is exactly now (< where <= is required)",
    ),
    rust(
        "state-delete-absent-is-conflict",
        CheckOrder,
        "SPI-20",
        "durable-state-store",
        "delete of an absent key compares the version first and answers conflict, not not-found",
    ),
    python(
        "fence-if-at-least",
        CheckOrder,
        "SPI-05",
        "event-store",
        "acquireFenceIf takes the fence when the expectation is at least the current token",
    ),
    python(
        "anchor-before-batch",
        CheckOrder,
        "SPI-06",
        "event-store",
        "appendIfUnchanged compares the anchor before it validates the batch",
    ),
    python(
        "dispatch-duplicate-before-target",
        CheckOrder,
        "PLACE-07",
        "dispatcher",
        "dispatch reports a duplicate before an unregistered target",
    ),
    // Value fidelity.
    rust(
        "empty-metadata-dropped",
        Fidelity,
        "SPI-23",
        "event-store",
        "{} metadata is stored as absent",
    ),
    rust(
        "u64-saturates",
        Fidelity,
        "SPI-23",
        "event-store",
        "payload integers above i64::MAX are stored as i64::MAX",
    ),
    rust(
        "snapshot-u64-saturates",
        Fidelity,
        "SPI-15",
        "snapshot-store",
        "snapshot state integers above i64::MAX are stored as i64::MAX",
    ),
    rust(
        "content-utf8-lossy",
        Fidelity,
        "SPI-20",
        "content-store",
        "content is stored as lossy UTF-8 text",
    ),
    rust(
        "state-null-absent",
        Fidelity,
        "SPI-20",
        "durable-state-store",
        "a null value reads back as an absent key",
    ),
    rust(
        "model-null-absent",
        Fidelity,
        "SPI-20",
        "read-model-store",
        "a null document reads back as absent",
    ),
    python(
        "floats-15-digits",
        Fidelity,
        "SPI-23",
        "event-store",
        "floats are stored with 15 significant digits",
    ),
    python(
        "big-ints-as-floats",
        Fidelity,
        "SPI-23",
        "event-store",
        "integers beyond 2^53 are stored as doubles",
    ),
    python(
        "astral-replaced",
        Fidelity,
        "SPI-23",
        "event-store",
        "characters above U+FFFF are stored as U+FFFD",
    ),
    python(
        "uppercase-digest-accepted",
        Fidelity,
        "SPI-20",
        "content-store",
        "an upper-case digest is accepted",
    ),
    // Facts inside errors.
    rust(
        "conflict-facts-swapped",
        ErrorFacts,
        "SPI-23",
        "event-store",
        "conflict names expectedNext and actualNext the wrong way round",
    ),
    rust(
        "fence-conflict-current-none",
        ErrorFacts,
        "SPI-05",
        "event-store",
        "fence-conflict always says the current token is none",
    ),
    rust(
        "unsupported-names-another-method",
        ErrorFacts,
        "SPI-02",
        "event-store",
        "an unclaimed method answers unsupported naming another method",
    ),
    rust(
        "too-large-fact",
        ErrorFacts,
        "SPI-20",
        "content-store",
        "a too-large abort names the bytes seen instead of the limit",
    ),
    rust(
        "owner-unsupported-names-put",
        ErrorFacts,
        "SPI-20",
        "content-store",
        "an owner on a store without contentAccess is unsupported naming put or get, not contentAccess",
    ),
    python(
        "fenced-current-wrong",
        ErrorFacts,
        "PLACE-05",
        "event-store",
        "fenced names the presented token as the current one",
    ),
    python(
        "bytes-read-counts-chunks",
        ErrorFacts,
        "SPI-20",
        "content-store",
        "a chunk-error abort counts chunks, not bytes",
    ),
    python(
        "state-conflict-facts",
        ErrorFacts,
        "SPI-20",
        "durable-state-store",
        "a durable-state conflict echoes the expected version as the current one",
    ),
    // Timestamps.
    rust(
        "store-now-seconds",
        Timestamps,
        "SPI-08",
        "event-store",
        "storeNow answers epoch seconds",
    ),
    rust(
        "store-now-micros",
        Timestamps,
        "SPI-08",
        "event-store",
        "storeNow answers epoch microseconds",
    ),
    rust(
        "store-now-frozen",
        Timestamps,
        "SPI-08",
        "event-store",
        "storeNow answers the time the store was opened",
    ),
    rust(
        "store-now-two-clocks",
        Timestamps,
        "SPI-08",
        "event-store",
        "storeNow alternates between two clocks 5 s apart, so it goes back",
    ),
    python(
        "store-now-seconds",
        Timestamps,
        "SPI-08",
        "event-store",
        "storeNow answers epoch seconds",
    ),
    // Only the campaign finds these: every kit passes them.
    explore(
        "range-reads-old-incarnation",
        Ordering,
        "SPI-03",
        "readRange of a re-created stream returns the deleted incarnation's later events",
    ),
    explore(
        "sealed-snapshot-cache",
        Ordering,
        "SPI-15",
        "loadLatestSealed keeps answering the first snapshot it loaded",
    ),
    explore(
        "archive-index-survives-replace",
        Ordering,
        "SPI-19",
        "after replaceSegments, archive still counts the replaced sequences as present",
    ),
    explore(
        "due-limit-counts-cancelled",
        Boundary,
        "GAP-25",
        "due applies its limit before dropping cancelled timers",
    ),
    rust(
        "fence-if-forgets-deleted-stream",
        Ordering,
        "SPI-05",
        "event-store",
        "acquireFenceIf on a deleted stream sees no fence",
    ),
    explore(
        "state-delete-at-version-zero",
        Boundary,
        "SPI-20",
        "delete expecting version 0 deletes whatever version the key is at",
    ),
    explore_py(
        "state-delete-at-version-zero",
        Boundary,
        "SPI-20",
        "delete expecting version 0 deletes whatever version the key is at",
    ),
    python(
        "fence-if-forgets-deleted-stream",
        Ordering,
        "SPI-05",
        "event-store",
        "acquireFenceIf on a deleted stream sees no fence",
    ),
];

/// One hostile-key or stateful bug ([`keyed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyBug {
    /// The wrapper's bug name.
    pub name: &'static str,
    /// [`Class::HostileKey`] or [`Class::Stateful`].
    pub class: Class,
    /// The rule a failing case (or the campaign's divergence) must cite.
    pub rule: &'static str,
    /// What must catch it.
    pub catcher: Catcher,
    /// For a hostile-key bug: the id family (`loom_conformance::ids::Family::name`) whose
    /// kit case must be the only one to fail.
    pub family: Option<&'static str>,
    /// The bug, in words.
    pub what: &'static str,
}

const fn key(
    name: &'static str,
    rule: &'static str,
    kit: &'static str,
    family: &'static str,
    what: &'static str,
) -> KeyBug {
    KeyBug {
        name,
        class: Class::HostileKey,
        rule,
        catcher: Catcher::Kit(kit),
        family: Some(family),
        what,
    }
}

const fn stateful(
    name: &'static str,
    rule: &'static str,
    catcher: Catcher,
    what: &'static str,
) -> KeyBug {
    KeyBug {
        name,
        class: Class::Stateful,
        rule,
        catcher,
        family: None,
        what,
    }
}

/// Every hostile-key and stateful bug. `tests/keys_and_state.rs` runs each: a kit-caught
/// one fails its kit by the named rule (a hostile-key one fails only the hostile-id case,
/// naming its family), a campaign-caught one passes every kit and the campaign finds it
/// within the budget stated there.
pub const KEYS_AND_STATE: &[KeyBug] = &[
    key(
        "ids-case-insensitive",
        "SPI-15",
        "snapshot-store",
        "case twins",
        "snapshot execution ids compared case-insensitively (a case-insensitive collation)",
    ),
    key(
        "ids-nfc-normalised",
        "SPI-20",
        "durable-state-store",
        "NFC/NFD twins",
        "durable-state keys NFC-normalised before they are stored",
    ),
    key(
        "ids-percent-decoded",
        "SPI-20",
        "content-store",
        "percent-encoded twins",
        "content owners percent-decoded (a URL layer), so p%2Fq reads what p/q put",
    ),
    key(
        "ids-prefix-255",
        "SPI-19",
        "archive-store",
        "shared 255-byte prefix",
        "archives keyed by the first 255 bytes of the execution id (a prefix index)",
    ),
    key(
        "ids-trailing-space-padded",
        "SPI-23",
        "event-store",
        "trailing spaces",
        "execution ids compared as SQL CHAR, ignoring trailing spaces",
    ),
    key(
        "ids-numeric-affinity",
        "SPI-20",
        "read-model-store",
        "numeric-looking",
        "read-model document ids with numeric affinity: 10, 010, 1e1 and 10.0 are one document",
    ),
    key(
        "list-in-utf16-order",
        "SPI-23",
        "event-store",
        "UTF-16 order",
        "listExecutions sorted by UTF-16 code units (a JavaScript sort), not by bytes",
    ),
    key(
        "timer-keys-joined-with-colon",
        "GAP-25",
        "timer-store",
        "separators",
        "timers keyed by executionId:key, so (j:k, m) and (j, k:m) are one timer",
    ),
    stateful(
        "read-cache-misses-delete-through",
        "SPI-09",
        Catcher::Kit("event-store"),
        "read answers come from a cache that every write path invalidates except deleteThrough",
    ),
    stateful(
        "lru-drops-dirty",
        "SPI-23",
        Catcher::Kit("event-store"),
        "a write-behind cache of 8 executions drops the unflushed events of the one it evicts",
    ),
    stateful(
        "offset-cursor",
        "SPI-13",
        Catcher::Explore,
        "listExecutionsPage cursors are offsets, so a write between two pages repeats or skips an id",
    ),
    stateful(
        "queue-compaction-loses-a-package",
        "PLACE-02",
        Catcher::Explore,
        "every 32nd claim compacts the queue and loses the next package",
    ),
    stateful(
        "reclaim-keeps-first-worker",
        "PLACE-02",
        Catcher::Explore,
        "a re-claimed dispatch's lease names the worker that claimed it first",
    ),
    stateful(
        "complete-cancels-timers",
        "GAP-25",
        Catcher::Explore,
        "completing a lease cancels every timer of its execution (dispatcher and timers share tables)",
    ),
];
