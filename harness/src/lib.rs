//! `loom-harness`: the parts of a conformance run as library code. Each part runs
//! against one subject (the reference, a foreign kernel, a store, or the harness itself)
//! and returns [`loom_report::CaseResult`]s tied to that subject; [`check`] puts the
//! parts of `loom check` together into one [`loom_report::Report`] with its
//! expectations, so the verdict cannot pass an empty or partial run.
//!
//! This crate owns the *running*; `loom-report` owns the result model and renderings,
//! and the `loom` binary only parses arguments, prints and picks exit codes. A store
//! author's own harness can call [`kits::run`] and get results without the binary.
//!
//! Parts: [`gates`] (pins and the compat gate), [`fold`] (generated logs against the
//! reference fold), [`vectors`], [`kits`], the simulator (`loom-sim`), [`tests_part`]
//! (the JUnit of a test run of this very source tree) and [`spec_part`]
//! (traceability over this run's results).
#![deny(missing_docs)]

pub mod check;
pub mod concurrency_replay;
pub mod expected;
pub mod fold;
pub mod gates;
pub mod gen;
pub mod junit;
pub mod kits;
pub mod rules;
pub mod shell;
pub mod spec_part;
pub mod store_server;
pub mod subjects;
pub mod tests_part;
pub mod vectors;

/// Time limits for a foreign adapter (a `cmd:` store or a kernel command).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdapterLimits {
    /// Per-call limit, in milliseconds.
    pub timeout_ms: u64,
    /// Limit for starting and answering `hello`, in milliseconds.
    pub hello_timeout_ms: u64,
}

impl Default for AdapterLimits {
    fn default() -> Self {
        AdapterLimits {
            timeout_ms: loom_process::CALL_TIMEOUT_MS_DEFAULT,
            hello_timeout_ms: loom_process::HELLO_TIMEOUT_MS_DEFAULT,
        }
    }
}

/// Draws a progress bar per part (the CLI), or nothing (a library caller).
pub trait PartProgress {
    /// A bar for `part`; the part sets its length and finishes it.
    fn start(&self, part: &str) -> indicatif::ProgressBar;
}

/// No progress output.
pub struct NoProgress;

impl PartProgress for NoProgress {
    fn start(&self, _part: &str) -> indicatif::ProgressBar {
        indicatif::ProgressBar::hidden()
    }
}

/// The digest of the source tree this crate was built from (see `harness/build.rs`).
pub const SOURCE_TREE_DIGEST: &str = env!("LOOM_SOURCE_TREE_DIGEST");

/// How many files that digest covers.
pub const SOURCE_TREE_FILES: &str = env!("LOOM_SOURCE_TREE_FILES");
