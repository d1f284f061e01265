//! `loom internal …`: hidden commands the repository's scripts call.

use super::{EXIT_OK, EXIT_USAGE};
use clap::Subcommand;
use std::path::PathBuf;

/// `loom internal …` (not for users; the scripts call these).
#[derive(Subcommand)]
pub enum InternalCommand {
    /// Record that JUNIT is the JUnit of a test run of this binary's source tree
    /// (writes JUNIT.record.json; ./scripts/test calls it after nextest).
    RecordTestRun {
        /// The JUnit file nextest wrote.
        junit: PathBuf,
    },
    /// Print the digest of the source tree this binary was built from.
    SourceTreeDigest,
}

/// Runs `loom internal …`.
pub fn run(cmd: InternalCommand) -> u8 {
    match cmd {
        InternalCommand::RecordTestRun { junit } => {
            match loom_harness::tests_part::record(&junit) {
                Ok(path) => {
                    println!(
                        "recorded the test run {} for source tree {} ({})",
                        super::shown(&junit),
                        loom_harness::SOURCE_TREE_DIGEST,
                        super::shown(&path)
                    );
                    EXIT_OK
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    EXIT_USAGE
                }
            }
        }
        InternalCommand::SourceTreeDigest => {
            println!("{}", loom_harness::SOURCE_TREE_DIGEST);
            EXIT_OK
        }
    }
}
