//! `loom-process`: the one runner for foreign adapters. Both stdio protocols (the store
//! protocol, `docs/protocols/store.md`, and the kernel protocol,
//! `docs/protocols/kernel.md`) run someone else's program and exchange one JSON object
//! per line with it. This crate owns everything about that program as a *process*;
//! the protocol clients above it own only what the answers mean.
//!
//! What it owns:
//!
//! - **Spawning in a process group of its own.** The command runs through `sh -c` (so
//!   quoting works as in a shell) as the leader of a new process group. Every signal the
//!   runner sends goes to the whole group, so a shell wrapper, the adapter behind it and
//!   any helper process it started end together. Killing only the shell left adapters
//!   running with parent pid 1.
//! - **The handshake** (`hello`), with its own, longer time limit, and the caller's check
//!   of the answer (protocol major, claims). A failed handshake is a [`Fault`] naming the
//!   cause and quoting what the adapter wrote on stderr.
//! - **Calls**: one request line out, one answer line in, matched by `id`, within the
//!   per-call time limit. A hang, a crash, a line that is not JSON, an answer to the wrong
//!   id, an incomplete last line or an oversized line is a [`Fault`] of that request;
//!   the process group is ended and a fresh process is started (and greeted) before the
//!   next call, up to a restart cap.
//! - **Blame.** Every request carries the caller's *tag* (the case it belongs to). A line
//!   that answers an earlier request a second time, or arrives when nothing was asked, is
//!   blamed on the request it belongs to, not on the innocent request being waited for:
//!   it is queued as a [`Blame`] naming that earlier tag, and the process is restarted.
//! - **Per-process stderr.** Each process's stderr is kept separately (the last lines),
//!   so a crash report quotes only the crashed process's own lines.
//! - **Shutdown**: end of input (the polite way), then `SIGTERM` to the group after a
//!   grace period, then `SIGKILL`, then waiting for the leader. Lines written after the
//!   last answer are blamed on the last request; an adapter that does not exit on end of
//!   input, or leaves processes of its group behind, is reported.
//! - **One-off commands** ([`run_to_completion`]): a backend restart between a kill and
//!   the adapter's next start, in a group of its own, within a time limit.
//! - **Interrupts.** [`install_interrupt_cleanup`] makes Ctrl-C (and `SIGTERM`,
//!   `SIGHUP`) end every live adapter group before the program exits, because adapters in
//!   their own group do not receive the terminal's `SIGINT`.
//!
//! - **A program using it leaves `SIGPIPE` ignored** (Rust's default). Every write to an
//!   adapter is a write to a pipe whose reader may already have exited; with the
//!   signal's default action that write kills the program, with no report. Ignored, it
//!   is an `EPIPE` error, which this crate reports as the request's fault.
//!
//! Plain threads, no async runtime: one reader thread per stream feeds a channel that the
//! caller reads with a deadline.

#![deny(missing_docs)]

mod adapter;
mod command;
mod exit;
mod group;

pub use adapter::{Adapter, AdapterConfig, Blame, Fault, FaultKind, RequestRef, ShutdownReport};
pub use command::{run_to_completion, COMMAND_STDERR_BYTES_MAX};
pub use exit::describe_exit;
pub use group::{end_all_groups, install_interrupt_cleanup, live_group_members, live_groups};

/// Default time one call may take before the adapter is declared hung, in milliseconds.
pub const CALL_TIMEOUT_MS_DEFAULT: u64 = 10_000;
/// Default time an adapter may take to start and answer `hello`, in milliseconds. Longer
/// than a call: interpreters and JIT runtimes start slowly on a loaded machine.
pub const HELLO_TIMEOUT_MS_DEFAULT: u64 = 30_000;
/// How long an adapter has to exit after its standard input is closed, in milliseconds.
pub const SHUTDOWN_GRACE_MS: u64 = 2_000;
/// How long an adapter group has to exit after `SIGTERM` before `SIGKILL`, in milliseconds.
pub const TERM_GRACE_MS: u64 = 1_000;
/// Most restarts of one adapter in one run; after that every call fails fast.
pub const RESTARTS_MAX_DEFAULT: u32 = 32;
/// The longest answer line accepted, in bytes; a longer one is a fault.
pub const LINE_BYTES_MAX_DEFAULT: usize = 64 * 1024 * 1024;
/// Lines of one process's stderr kept for messages.
pub const STDERR_LINES_KEPT: usize = 20;
/// Characters of one stderr line, or of an offending output line, quoted in a message.
pub const QUOTE_CHARS_MAX: usize = 200;
/// How many earlier requests are remembered for blaming a late duplicate answer.
pub const REQUESTS_REMEMBERED_MAX: usize = 4_096;
/// Longest wait for an ended process's stderr to be read to its end, in milliseconds
/// (a helper process that escaped the group could hold the pipe open).
pub const STDERR_DRAIN_MS_MAX: u64 = 1_000;
