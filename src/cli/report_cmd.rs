//! `loom report merge` and `loom report render`.

use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use clap::Subcommand;
use loom_report::{merge_files, render_html, render_junit, render_markdown, Report};
use std::path::PathBuf;

/// Report subcommands.
#[derive(Subcommand)]
pub enum ReportCommand {
    /// Merge shard reports into one (results concatenated, environments kept as shards).
    #[command(
        after_help = "Examples:\n  loom report merge shard-0/report.json shard-1/report.json --out merged/\n  loom report merge sim-*/report.json fold-*/report.json --out merged/\n\n\
A case that appears in two shards, a shard whose digest does not verify, or a different schema version is an error naming the file.\n\n\
Exit status: 0 merged and nothing failed, 1 merged and the merged report has a failure, 2 usage error or an input refused."
    )]
    Merge {
        /// Input report.json files.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Output directory: report.{json,xml,md,html} are written there.
        #[arg(long, short)]
        out: PathBuf,
    },
    /// Re-render a report.json into other formats.
    #[command(
        after_help = "Examples:\n  loom report render report.json --html report.html --junit report.xml --md report.md\n  loom report render merged/report.json --summary summary.md --badge badge.json\n\n\
A report whose digest does not match its content (edited after it was written) is refused, as `report merge` refuses it.\n\n\
Exit status: 0 written, 2 usage error, an unreadable or edited report, or a file that cannot be written."
    )]
    Render {
        /// The report.json to render.
        input: PathBuf,
        /// Write the self-contained HTML page here.
        #[arg(long)]
        html: Option<PathBuf>,
        /// Write JUnit XML here.
        #[arg(long)]
        junit: Option<PathBuf>,
        /// Write the Markdown summary here.
        #[arg(long)]
        md: Option<PathBuf>,
        /// Write the short GitHub job summary here.
        #[arg(long)]
        summary: Option<PathBuf>,
        /// Write the shields.io endpoint badge here.
        #[arg(long)]
        badge: Option<PathBuf>,
    },
}

/// Runs a report subcommand.
pub fn run(cmd: ReportCommand) -> u8 {
    match cmd {
        ReportCommand::Merge { inputs, out } => {
            match super::prepare_out(Some(&out), "report-merge")
                .map_err(|e| e.to_string())
                .and_then(|_| merge_files(&inputs).map_err(|e| e.to_string()))
            {
                Ok(report) => match loom_report::render_all(&report, &out) {
                    Ok(paths) => {
                        println!(
                            "merged {} reports ({} results)",
                            inputs.len(),
                            report.results.len()
                        );
                        super::print_report_paths(&paths, &report.digest);
                        println!("verdict: {}", report.verdict());
                        for reason in &report.summary.verdict_reasons {
                            println!("  - {reason}");
                        }
                        for line in report.partial_sentences() {
                            println!("  - {line}");
                        }
                        if report.summary.ok {
                            EXIT_OK
                        } else {
                            EXIT_FAILED
                        }
                    }
                    Err(e) => {
                        eprintln!("error: writing {}: {e}", out.display());
                        EXIT_USAGE
                    }
                },
                Err(e) => {
                    eprintln!("error: {e}");
                    EXIT_USAGE
                }
            }
        }
        ReportCommand::Render {
            input,
            html,
            junit,
            md,
            summary,
            badge,
        } => {
            let report = match Report::load(&input) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_USAGE;
                }
            };
            if !report.verify_digest() {
                eprintln!("error: {}: the digest does not match the content (edited or truncated after it was written); refusing to render it", input.display());
                return EXIT_USAGE;
            }
            if [&html, &junit, &md, &summary, &badge]
                .iter()
                .all(|p| p.is_none())
            {
                eprintln!(
                    "error: choose at least one of --html, --junit, --md, --summary, --badge"
                );
                return EXIT_USAGE;
            }
            let write = |path: &Option<PathBuf>,
                         text: Result<String, String>|
             -> Result<(), String> {
                if let Some(p) = path {
                    let t = text?;
                    std::fs::write(p, t).map_err(|e| format!("writing {}: {e}", p.display()))?;
                    println!("wrote {}", super::shown(p));
                }
                Ok(())
            };
            let result = write(&html, render_html(&report).map_err(|e| e.to_string()))
                .and_then(|_| write(&junit, render_junit(&report).map_err(|e| e.to_string())))
                .and_then(|_| write(&md, Ok(render_markdown(&report))))
                .and_then(|_| write(&summary, Ok(loom_report::render_summary(&report))))
                .and_then(|_| write(&badge, Ok(loom_report::render_badge(&report))));
            match result {
                Ok(()) => EXIT_OK,
                Err(e) => {
                    eprintln!("error: {e}");
                    EXIT_USAGE
                }
            }
        }
    }
}
