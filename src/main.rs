//! The `loom` command line: the one binary that wires the reference kernel, the rule
//! catalogue, the conformance kits and the reports together.
//!
//! Every subcommand is a thin shell over a library crate; the CLI owns argument
//! parsing, progress output, exit codes and where files go, nothing else.

mod cli;

/// Decoding and folding a log allocate and free millions of small values; mimalloc does
/// that in a fraction of glibc malloc's time (docs/performance.md, "Fold and parse").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Loom Conformance: prove an implementation of the Loom durable-execution kernel
/// conforms to the specification, rule by rule.
#[derive(Parser)]
#[command(name = "loom", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Start with `loom check`: it runs every part against the embedded default \
(the reference kernel and the SQLite store) and writes a report under ./loom-reports/ \
(or --out DIR).\n\n\
Exit status, in every command: 0 ok, 1 a failure found (a failing case, an incompatibility, a \
divergence), 2 usage error or unreadable input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every conformance part and write a report (the main job).
    Check(cli::check::CheckArgs),
    /// Run the SPI conformance kits against a store (yours or a reference one).
    Conform(cli::conform::ConformArgs),
    /// List, run and regenerate the language-neutral kernel vectors.
    #[command(subcommand)]
    Vectors(cli::vectors::VectorsCommand),
    /// Serve the reference kernel over the stdio kernel protocol (JSON lines on stdin/stdout).
    KernelAdapter(cli::vectors::KernelAdapterArgs),
    /// Re-run a flow script against a recorded log and report whether it replays unchanged.
    Replay(cli::vectors::ReplayArgs),
    /// Sweep the deploy simulator over seeds (workers, dispatcher and store on a simulated network, with faults).
    Sim(cli::sim::SimArgs),
    /// Fold an event log and print the canonical state.
    Fold(cli::fold_cmd::FoldArgs),
    /// Check an event log: envelopes, sequences, and fold(snapshot_k, tail) == fold(all) at every k.
    VerifyLog(cli::fold_cmd::VerifyLogArgs),
    /// Print the kernel manifest: every contract version, the syscalls, limits and event kinds.
    KernelManifest(cli::manifest::ManifestArgs),
    /// Check a deployment's declared versions against this kernel (a deployment gate).
    Compat(cli::manifest::CompatArgs),
    /// Merge and re-render conformance reports.
    #[command(subcommand)]
    Report(cli::report_cmd::ReportCommand),
    /// Show the rule catalogue: every rule, one rule or gap by id, or the Markdown page.
    Rules(cli::rules::RulesArgs),
    /// Commands the repository's scripts call.
    #[command(subcommand, hide = true)]
    Internal(cli::internal::InternalCommand),
}

fn main() -> ExitCode {
    restore_default_sigpipe();
    // Adapters run in process groups of their own, out of reach of the terminal's
    // Ctrl-C: end them before exiting on an interrupt.
    loom_process::install_interrupt_cleanup();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => cli::check::run(args),
        Command::Conform(args) => cli::conform::run(args),
        Command::Vectors(cmd) => cli::vectors::run(cmd),
        Command::KernelAdapter(args) => cli::vectors::kernel_adapter(args),
        Command::Replay(args) => cli::vectors::replay(args),
        Command::Sim(args) => cli::sim::run(args),
        Command::Fold(args) => cli::fold_cmd::fold(args),
        Command::VerifyLog(args) => cli::fold_cmd::verify_log(args),
        Command::KernelManifest(args) => cli::manifest::manifest(args),
        Command::Compat(args) => cli::manifest::compat(args),
        Command::Report(cmd) => cli::report_cmd::run(cmd),
        Command::Rules(args) => cli::rules::run(args),
        Command::Internal(cmd) => cli::internal::run(cmd),
    };
    ExitCode::from(code)
}

/// Rust ignores SIGPIPE, so `loom vectors list | head` would panic on a closed pipe.
/// A command-line tool should end quietly instead, as every Unix filter does.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up, before any thread exists; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        // clap checks flag clashes only when a subcommand is parsed; check them all now.
        Cli::command().debug_assert();
    }
}
