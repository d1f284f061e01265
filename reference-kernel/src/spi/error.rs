//! The typed error every SPI method returns.
//!
//! Each kind has a stable kebab-case name ([`StoreErrorKind::name`]) because the stdio
//! store-adapter protocol carries errors by that name: a foreign store written in any
//! language answers `{"error": {"kind": "fenced", ...}}` and the kits compare kinds, never
//! message text.

use std::fmt;

/// What went wrong, with the facts a caller needs to decide what to do next.
///
/// The variants are closed on purpose: a kit asserts on the kind, so a new kind is an SPI
/// change (a MINOR bump when only new optional methods return it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// Optimistic concurrency failed: the caller expected the stream's next sequence to be
    /// `expected_next`, the store's is `actual_next`. Nothing was written (GAP-27).
    Conflict {
        /// The next sequence the caller expected.
        expected_next: u64,
        /// The stream's next sequence as the store sees it.
        actual_next: u64,
    },
    /// The execution is fenced and the append did not present the current token
    /// (PLACE-05). Nothing was written. `presented` is what the caller gave; `current`
    /// is the live token (0 when the execution was never fenced and a token was presented).
    Fenced {
        /// The token the caller presented, if any.
        presented: Option<u64>,
        /// The execution's current fence token.
        current: u64,
    },
    /// `acquireFenceIf` found a different current token than the caller expected
    /// (SPI-05). Nothing changed. `None` means "never fenced".
    FenceConflict {
        /// The token the caller expected to be current.
        expected: Option<u64>,
        /// The token that is actually current.
        current: Option<u64>,
    },
    /// `appendIfUnchanged`: the stream changed since the anchor was observed (SPI-06,
    /// SPI-07). Nothing was written.
    AnchorChanged,
    /// The named execution, record, target or lease does not exist.
    NotFound,
    /// The record already exists and the method refuses duplicates (reference-defined).
    AlreadyExists,
    /// The lease is no longer the live lease of its dispatch: it expired and was
    /// re-queued or re-claimed, or it was already completed or released
    /// (reference-defined, dispatcher).
    LeaseLost,
    /// The store does not implement this optional method (SPI-02). A caller that needs
    /// the method refuses the operation; it never falls back (SPI-10).
    Unsupported {
        /// The spec's camelCase method name, e.g. `"deleteThrough"`.
        method: String,
    },
    /// The arguments break the method's contract (wrong execution id in an envelope, a
    /// sequence gap, a limit out of range, ...). Nothing was written.
    InvalidArgument,
    /// The backend failed: I/O, driver, corrupt row. Whether anything was written is
    /// unknown only if the backend itself cannot say; every reference store writes
    /// inside one transaction, so a `Backend` error from it means nothing was written.
    Backend,
}

impl StoreErrorKind {
    /// The stable wire name of the kind, as the stdio store protocol carries it.
    pub fn name(&self) -> &'static str {
        match self {
            StoreErrorKind::Conflict { .. } => "conflict",
            StoreErrorKind::Fenced { .. } => "fenced",
            StoreErrorKind::FenceConflict { .. } => "fence-conflict",
            StoreErrorKind::AnchorChanged => "anchor-changed",
            StoreErrorKind::NotFound => "not-found",
            StoreErrorKind::AlreadyExists => "already-exists",
            StoreErrorKind::LeaseLost => "lease-lost",
            StoreErrorKind::Unsupported { .. } => "unsupported",
            StoreErrorKind::InvalidArgument => "invalid-argument",
            StoreErrorKind::Backend => "backend",
        }
    }
}

/// Every stable kind name, in declaration order. The stdio protocol decoder accepts
/// exactly these.
pub const STORE_ERROR_KIND_NAMES: [&str; 10] = [
    "conflict",
    "fenced",
    "fence-conflict",
    "anchor-changed",
    "not-found",
    "already-exists",
    "lease-lost",
    "unsupported",
    "invalid-argument",
    "backend",
];

/// An SPI error: a typed kind plus a human-readable message (never compared by kits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    /// What went wrong, typed.
    pub kind: StoreErrorKind,
    /// Details for people; not part of the contract.
    pub message: String,
}

impl StoreError {
    /// An error of `kind` with `message`.
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> StoreError {
        StoreError {
            kind,
            message: message.into(),
        }
    }

    /// The optimistic-concurrency failure.
    pub fn conflict(expected_next: u64, actual_next: u64) -> StoreError {
        StoreError::new(
            StoreErrorKind::Conflict {
                expected_next,
                actual_next,
            },
            format!("expected next sequence {expected_next}, the stream is at {actual_next}"),
        )
    }

    /// An append that did not present the current fence token.
    pub fn fenced(presented: Option<u64>, current: u64) -> StoreError {
        StoreError::new(
            StoreErrorKind::Fenced { presented, current },
            format!("append presented fence {presented:?}, the current fence is {current}"),
        )
    }

    /// `acquireFenceIf` whose expectation was stale.
    pub fn fence_conflict(expected: Option<u64>, current: Option<u64>) -> StoreError {
        StoreError::new(
            StoreErrorKind::FenceConflict { expected, current },
            format!("expected current fence {expected:?}, it is {current:?}"),
        )
    }

    /// `appendIfUnchanged` whose anchor is stale.
    pub fn anchor_changed(message: impl Into<String>) -> StoreError {
        StoreError::new(StoreErrorKind::AnchorChanged, message)
    }

    /// Something named does not exist.
    pub fn not_found(message: impl Into<String>) -> StoreError {
        StoreError::new(StoreErrorKind::NotFound, message)
    }

    /// A duplicate the method refuses.
    pub fn already_exists(message: impl Into<String>) -> StoreError {
        StoreError::new(StoreErrorKind::AlreadyExists, message)
    }

    /// A lease that is no longer live.
    pub fn lease_lost(message: impl Into<String>) -> StoreError {
        StoreError::new(StoreErrorKind::LeaseLost, message)
    }

    /// The optional method `method` (camelCase spec name) is not implemented.
    pub fn unsupported(method: &str) -> StoreError {
        StoreError::new(
            StoreErrorKind::Unsupported {
                method: method.to_string(),
            },
            format!("optional method {method} is not implemented by this store"),
        )
    }

    /// Arguments that break the contract.
    pub fn invalid(message: impl Into<String>) -> StoreError {
        StoreError::new(StoreErrorKind::InvalidArgument, message)
    }

    /// A backend (I/O, driver) failure.
    pub fn backend(message: impl Into<String>) -> StoreError {
        StoreError::new(StoreErrorKind::Backend, message)
    }

    /// True when the error says the optional method is not implemented.
    pub fn is_unsupported(&self) -> bool {
        matches!(self.kind, StoreErrorKind::Unsupported { .. })
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for StoreError {}
