//! Every bound the kernel enforces, in one place, shared by tests, kits and fuzzers.
//! Units are in the names.

/// `_quarantined` holds at most this many entries in total, across all topics (GAP-17).
pub const QUARANTINED_ENTRIES_MAX: usize = 1024;
/// A typed-failure payload is recorded only if its canonical JSON is at most this many
/// UTF-8 bytes (TYPED-08, GAP-04).
pub const TYPED_FAILURE_PAYLOAD_BYTES_MAX: usize = 16 * 1024;
/// Sanity ceiling for every userspace `RESOURCE_METERED` field (INGRESS-28, GAP-05).
pub const RESOURCE_METERED_VALUE_MAX: f64 = 1e15;
/// `QUOTA_EXCEEDED.reason` bound, in UTF-16 code units (INGRESS-29, GAP-05).
pub const QUOTA_REASON_UTF16_UNITS_MAX: usize = 1024;
/// How many distinct `custom` keys `_resources.custom` accumulates (GAP-06).
pub const RESOURCE_CUSTOM_KEYS_MAX: usize = 64;
/// How deep a JSON value may nest before the decoder refuses it. Guards the recursive
/// canonicaliser and the `__proto__` scrub against stack exhaustion.
pub const JSON_DEPTH_MAX: usize = 128;
