//! Every bound the properties put on their inputs, in one place. The kernel's own
//! bounds live in `loom_kernel::limits`.

/// Longest generated event log (before the optional leading `EXECUTION_STARTED`).
/// `fold_snapshot_equivalence_every_k` is quadratic in it (a restore per k); the fuzz
/// target restores at one to three chosen k, so it is linear.
pub const LOG_EVENTS_MAX: usize = 24;
/// Longest log prefix under a parked execution in `ingress_refusal`.
pub const INGRESS_LOG_EVENTS_MAX: usize = 12;
/// How deep a generated JSON payload nests.
pub const PAYLOAD_DEPTH_MAX: usize = 3;
/// Widest generated JSON array or object in a payload.
pub const PAYLOAD_WIDTH_MAX: usize = 4;
/// How deep a generated value nests in `canonical_json`.
pub const CANONICAL_DEPTH_MAX: usize = 6;
/// Longest generated string in `canonical_json`, in chars.
pub const CANONICAL_STRING_CHARS_MAX: usize = 24;
/// Most syscalls in a generated flow script (`emit_identity`).
pub const FLOW_OPS_MAX: usize = 10;
/// Most injected crashes per `emit_identity` run.
pub const CRASHES_MAX: usize = 4;
/// Largest injected crash point (appends into a run).
pub const CRASH_AFTER_APPENDS_MAX: u64 = 40;
/// Most resumes/recoveries one `emit_identity` drive performs before giving up.
pub const DRIVE_STEPS_MAX: usize = 100;
/// Most SPI operations in one `store_differential` run.
pub const STORE_OPS_MAX: usize = 32;
/// Most events in one generated append batch.
pub const STORE_BATCH_EVENTS_MAX: usize = 4;
/// How many distinct execution ids the store differential uses.
pub const STORE_EXECUTIONS_MAX: usize = 3;
/// Bytes of raw text the decoder mode of `fold_total` reads at most.
pub const RAW_LOG_BYTES_MAX: usize = 64 * 1024;
