//! Every bound the vectors crate enforces, in one place. Units are in the names.

/// How long one protocol call may take before the client reports a timeout and
/// restarts the adapter (`--timeout-ms` changes it).
pub const CALL_TIMEOUT_MS_DEFAULT: u64 = loom_process::CALL_TIMEOUT_MS_DEFAULT;
/// How long the adapter may take to answer `hello` after it starts (`--hello-timeout-ms`).
pub const HELLO_TIMEOUT_MS: u64 = loom_process::HELLO_TIMEOUT_MS_DEFAULT;
/// The longest response line the client accepts from an adapter.
pub const RESPONSE_LINE_BYTES_MAX: usize = 16 * 1024 * 1024;
/// The longest request line the server accepts.
pub const REQUEST_LINE_BYTES_MAX: usize = 16 * 1024 * 1024;
/// How many times one run restarts a crashed, hung or lying adapter before every
/// remaining vector is reported as an error.
pub const ADAPTER_RESTARTS_MAX: u32 = 20;
/// The largest vector file the loader reads.
pub const VECTOR_FILE_BYTES_MAX: u64 = 4 * 1024 * 1024;
/// The most vector files one set may hold.
pub const VECTOR_FILES_MAX: usize = 10_000;
/// The most events a fold vector checks snapshot/tail equivalence at every k for;
/// longer logs (the quarantine-cap vectors) check the full fold only.
pub const EVERY_K_EVENTS_MAX: usize = 64;
/// How many characters of an offending line or value an error message quotes.
pub const QUOTE_CHARS_MAX: usize = 200;
/// The most entries the golden-log corpus may hold.
pub const GOLDEN_ENTRIES_MAX: usize = 1_000;
/// The largest golden-corpus file (a flow, driver, log or outcomes file) the loader reads.
pub const GOLDEN_FILE_BYTES_MAX: u64 = 4 * 1024 * 1024;
