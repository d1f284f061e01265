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
        after_help = "Example:\n  loom report merge shard-0/report.json shard-1/report.json --out merged/\n\n\
A case that appears in two shards, a shard whose digest does not verify, or a different schema version is an error naming the file."
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
        after_help = "Example:\n  loom report render report.json --html report.html --junit report.xml --md report.md"
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
    },
}

/// Runs a report subcommand.
pub fn run(cmd: ReportCommand) -> u8 {
    match cmd {
        ReportCommand::Merge { inputs, out } => match merge_files(&inputs) {
            Ok(report) => match loom_report::render_all(&report, &out) {
                Ok(paths) => {
                    println!(
                        "merged {} reports ({} results) into {}",
                        inputs.len(),
                        report.results.len(),
                        paths.json.display()
                    );
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
        },
        ReportCommand::Render {
            input,
            html,
            junit,
            md,
        } => {
            let report = match Report::load(&input) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_USAGE;
                }
            };
            if !report.verify_digest() {
                eprintln!("warning: {}: the digest does not match the content; the report was edited after it was written", input.display());
            }
            if html.is_none() && junit.is_none() && md.is_none() {
                eprintln!("error: choose at least one of --html, --junit, --md");
                return EXIT_USAGE;
            }
            let write = |path: &Option<PathBuf>,
                         text: Result<String, String>|
             -> Result<(), String> {
                if let Some(p) = path {
                    let t = text?;
                    std::fs::write(p, t).map_err(|e| format!("writing {}: {e}", p.display()))?;
                    println!("wrote {}", p.display());
                }
                Ok(())
            };
            let result = write(&html, render_html(&report).map_err(|e| e.to_string()))
                .and_then(|_| write(&junit, render_junit(&report).map_err(|e| e.to_string())))
                .and_then(|_| write(&md, Ok(render_markdown(&report))));
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
