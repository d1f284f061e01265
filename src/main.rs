//! The `loom` command line: the one binary that wires the reference kernel, the rule
//! catalogue, the conformance kits and the reports together.
//!
//! Every subcommand is a thin shell over a library crate; the CLI owns argument
//! parsing, progress output, exit codes and where files go, nothing else.

mod cli;

/// Decoding and folding a log allocate and free millions of small values; mimalloc does
/// that in a fraction of glibc malloc's time (docs/performance-history.md, "Fold and parse").
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
Exit status, in every command: 0 ok (passed), 1 the implementation under test failed (a failing \
case, an adapter that did not start or answer, an incompatibility, a divergence; the report says \
which), 2 the run could not be set up (usage error, unreadable input, a store or database that \
cannot be opened, an --out that cannot be written; no report is written)."
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
    #[command(
        subcommand,
        after_help = "Examples:\n  loom vectors list --kind fold\n  loom vectors run\n  \
loom vectors run --kernel-cmd 'python3 my_kernel.py' --max-fail 5\n  loom vectors run --smoke --kernel-cmd 'python3 my_kernel.py'\n  \
loom vectors export my-vectors\n  loom vectors fuzz --kernel-cmd 'python3 my_kernel.py' --cases 200\n\n\
Exit status: 0 passed (or listed, written), 1 a vector failed, errored or timed out, or a kernel adapter did not \
start or answer hello, 2 usage error or a run that could not be set up. `loom vectors <command> --help` says more."
    )]
    Vectors(cli::vectors::VectorsCommand),
    /// Serve the reference kernel over the stdio kernel protocol (JSON lines on stdin/stdout).
    KernelAdapter(cli::vectors::KernelAdapterArgs),
    /// Serve the reference SQLite or PostgreSQL store over the stdio store protocol (a cmd: adapter of several processes, killable).
    StoreAdapter(cli::store_adapter::StoreAdapterArgs),
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
    #[command(
        subcommand,
        after_help = "Examples:\n  loom report merge shard-0/report.json shard-1/report.json --out merged/\n  \
loom report render report.json --html report.html --summary summary.md\n\n\
Exit status: 0 merged (nothing failed) or rendered, 1 the merged report has a failure, 2 usage error, an \
unreadable or edited report, or a file that cannot be written. `loom report <command> --help` says more."
    )]
    Report(cli::report_cmd::ReportCommand),
    /// Show the rule catalogue: every rule, one rule or gap by id, or the Markdown page.
    Rules(cli::rules::RulesArgs),
    /// Print the protocol documents and schemas this binary was built with (or write them to a directory).
    Docs(cli::docs_cmd::DocsArgs),
    /// Commands the repository's scripts call.
    #[command(subcommand, hide = true)]
    Internal(cli::internal::InternalCommand),
}

fn main() -> ExitCode {
    quiet_when_output_closes();
    // Adapters run in process groups of their own, out of reach of the terminal's
    // Ctrl-C: end them before exiting on an interrupt.
    loom_process::install_interrupt_cleanup();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => cli::check::run(args),
        Command::Conform(args) => cli::conform::run(args),
        Command::Vectors(cmd) => cli::vectors::run(cmd),
        Command::KernelAdapter(args) => cli::vectors::kernel_adapter(args),
        Command::StoreAdapter(args) => cli::store_adapter::run(args),
        Command::Replay(args) => cli::vectors::replay(args),
        Command::Sim(args) => cli::sim::run(args),
        Command::Fold(args) => cli::fold_cmd::fold(args),
        Command::VerifyLog(args) => cli::fold_cmd::verify_log(args),
        Command::KernelManifest(args) => cli::manifest::manifest(args),
        Command::Compat(args) => cli::manifest::compat(args),
        Command::Report(cmd) => cli::report_cmd::run(cmd),
        Command::Rules(args) => cli::rules::run(args),
        Command::Docs(args) => cli::docs_cmd::run(args),
        Command::Internal(cmd) => cli::internal::run(cmd),
    };
    ExitCode::from(code)
}

/// What happens when a pipe closes under loom.
///
/// SIGPIPE stays ignored, as Rust sets it up: loom writes requests into adapters' standard
/// input, and an adapter may exit at any moment (`cmd:true`, a wrong path, a crash). With
/// the signal's default action, that write would kill loom silently (status 141, no
/// report); ignored, it is an `EPIPE` error the runner turns into a handshake or call
/// fault with the adapter's exit status and stderr.
///
/// Loom's own standard output or error closing early (`loom vectors list | head`) is the
/// other case: `println!` then panics with a broken-pipe error. That panic is caught here
/// and loom ends as a Unix filter does when its reader goes away, quietly and by SIGPIPE,
/// after ending every adapter process group it started. Any other panic is reported as usual.
fn quiet_when_output_closes() {
    let report_panic = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if is_closed_output(message) {
            loom_process::end_all_groups();
            end_by_sigpipe();
        }
        report_panic(info)
    }));
}

/// True for the panic `print!`/`eprint!` raise when standard output or error is a pipe
/// whose reader has gone.
fn is_closed_output(panic_message: &str) -> bool {
    let printing = panic_message.starts_with("failed printing to stdout")
        || panic_message.starts_with("failed printing to stderr");
    printing && panic_message.contains(&broken_pipe_text())
}

/// How std's I/O error for EPIPE ends its text: "(os error 32)".
fn broken_pipe_text() -> String {
    let code = {
        #[cfg(unix)]
        {
            libc::EPIPE
        }
        #[cfg(not(unix))]
        {
            232 // ERROR_NO_DATA: the pipe is being closed
        }
    };
    format!("(os error {code})")
}

/// Exits the way a process killed by SIGPIPE does (status 141 in a shell).
fn end_by_sigpipe() -> ! {
    #[cfg(unix)]
    // SAFETY: restoring the default disposition and raising the signal have no memory
    // effects; the process ends here.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(141)
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[cfg(unix)]
    #[test]
    fn only_a_closed_standard_stream_ends_loom_quietly() {
        let epipe = std::io::Error::from_raw_os_error(libc::EPIPE);
        for (message, quiet) in [
            (format!("failed printing to stdout: {epipe}"), true),
            (format!("failed printing to stderr: {epipe}"), true),
            // Other write errors and other panics are reported as panics.
            (
                format!(
                    "failed printing to stdout: {}",
                    std::io::Error::from_raw_os_error(libc::ENOSPC)
                ),
                false,
            ),
            (format!("index out of bounds {epipe}"), false),
        ] {
            assert_eq!(super::is_closed_output(&message), quiet, "{message}");
        }
    }

    #[test]
    fn the_command_line_definition_is_consistent() {
        // clap checks flag clashes only when a subcommand is parsed; check them all now.
        Cli::command().debug_assert();
    }

    /// Every command a person runs, with the words that name it (`["vectors", "run"]`).
    fn leaves(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, clap::Command)>) {
        let subs: Vec<&clap::Command> = cmd
            .get_subcommands()
            .filter(|c| !c.is_hide_set() && c.get_name() != "help")
            .collect();
        // A command runs by itself when it has no subcommands or they are optional
        // (`loom sim` sweeps, `loom sim replay` replays).
        if !path.is_empty() && (subs.is_empty() || !cmd.is_subcommand_required_set()) {
            out.push((path.clone(), cmd.clone()));
        }
        for sub in subs {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            leaves(sub, p, out);
        }
    }

    fn all_leaves() -> Vec<(Vec<String>, clap::Command)> {
        let mut out = Vec::new();
        leaves(&Cli::command(), Vec::new(), &mut out);
        assert!(out.len() >= 15, "found {} commands", out.len());
        out
    }

    #[test]
    fn every_command_help_has_examples_and_the_one_exit_status_scheme() {
        for (path, cmd) in all_leaves() {
            let name = path.join(" ");
            let help = cmd
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            let examples = help.split("Examples:\n").nth(1).unwrap_or_default();
            assert!(
                examples.starts_with("  ") && examples.lines().any(|l| l.contains("loom ")),
                "`loom {name} --help` has no examples:\n{help}"
            );
            let status = help
                .split("Exit status: ")
                .nth(1)
                .unwrap_or_else(|| panic!("`loom {name} --help` states no exit status:\n{help}"));
            // 0: it did what was asked and found nothing wrong; 2: the run could not do
            // what was asked (usage, input it cannot read); 1, where a command has it:
            // it found a failure. The wording may add detail, not change the meaning.
            assert!(status.starts_with("0 "), "`loom {name}`: {status}");
            assert!(
                status.contains(", 2 usage error"),
                "`loom {name}`: 2 is a usage error or unreadable input: {status}"
            );
            assert!(
                !status.contains("Exit codes"),
                "`loom {name}`: one wording: {status}"
            );
        }
    }

    #[test]
    fn every_group_command_help_has_examples_and_exit_status() {
        let mut groups = 0;
        for cmd in Cli::command().get_subcommands() {
            let subs = cmd
                .get_subcommands()
                .filter(|c| c.get_name() != "help")
                .count();
            if cmd.is_hide_set() || subs == 0 || !cmd.is_subcommand_required_set() {
                continue;
            }
            groups += 1;
            let name = cmd.get_name();
            let help = cmd
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            let examples = help.split("Examples:\n").nth(1).unwrap_or_default();
            assert!(
                examples
                    .lines()
                    .any(|l| l.starts_with(&format!("  loom {name} "))),
                "`loom {name} --help` has no examples:\n{help}"
            );
            let status = help.split("Exit status: ").nth(1).unwrap_or_default();
            assert!(
                status.starts_with("0 ") && status.contains(", 2 usage error"),
                "`loom {name} --help`: {help}"
            );
        }
        assert!(groups >= 2, "{groups} group commands");
    }

    #[test]
    fn every_default_run_folder_is_named_by_its_command() {
        let mut with_out = 0;
        for (path, cmd) in all_leaves() {
            let Some(out) = cmd.get_arguments().find(|a| a.get_id() == "out") else {
                continue;
            };
            let help = out.get_help().map(|h| h.to_string()).unwrap_or_default();
            if out.is_required_set() {
                continue;
            }
            with_out += 1;
            let folder = format!("./loom-reports/{}-<UTC time>/", path.join("-"));
            assert!(
                help.contains(&folder),
                "`loom {}` --out: the default folder is {folder}: {help}",
                path.join(" ")
            );
        }
        assert!(with_out >= 5, "{with_out} commands write run folders");
    }
}
