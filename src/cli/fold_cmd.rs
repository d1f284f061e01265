//! `loom fold` and `loom verify-log`.

use super::{read_input, EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use clap::Args;
use loom_kernel::envelope::{check_sequences, decode_log};
use loom_kernel::fold::{fold_with_diagnostics, ExecutionState, FoldVersion};
use loom_kernel::ingress::legacy_answer_warnings;
use loom_kernel::snapshot::{restore, SnapshotRecord};
use loom_kernel::EventEnvelope;

/// Arguments of `loom fold`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  loom fold events.json\n  loom fold --as 1.20.0 --pretty events.jsonl\n  cat events.jsonl | loom fold -\n\n\
The log is a JSON array of envelopes or JSON lines, one envelope per line:\n  \
{\"id\":\"e0\",\"workflowId\":\"f\",\"executionId\":\"x\",\"eventType\":\"EXECUTION_STARTED\",\"sequence\":0,\"timestamp\":1000,\"payload\":{\"input\":1}}"
)]
pub struct FoldArgs {
    /// The event log (JSON array or JSON lines); "-" reads standard input.
    pub file: String,
    /// Fold as an older EVENT_SCHEMA minor (1.15.0 through 1.26.0).
    #[arg(long = "as", value_name = "VERSION")]
    pub as_version: Option<String>,
    /// Pretty-print instead of canonical JSON (RFC 8785).
    #[arg(long)]
    pub pretty: bool,
    /// Also print what the fold set aside (ignored events, dropped `__proto__` keys) to stderr.
    #[arg(long)]
    pub diagnostics: bool,
}

fn load(file: &str) -> Result<Vec<EventEnvelope>, (u8, String)> {
    let text = read_input(file).map_err(|e| (EXIT_USAGE, e))?;
    decode_log(&text).map_err(|e| (EXIT_FAILED, format!("{file}: {e}\n  hint: {}", e.hint())))
}

fn version(v: &Option<String>) -> Result<FoldVersion, (u8, String)> {
    match v {
        Some(text) => FoldVersion::parse(text).map_err(|e| (EXIT_USAGE, e)),
        None => Ok(FoldVersion::CURRENT),
    }
}

/// `loom fold FILE`.
pub fn fold(args: FoldArgs) -> u8 {
    let run = || -> Result<(), (u8, String)> {
        let events = load(&args.file)?;
        let v = version(&args.as_version)?;
        let (state, diags) = fold_with_diagnostics(v, &ExecutionState::new(), &events);
        if args.diagnostics {
            for d in &diags {
                eprintln!("note: {d}");
            }
        }
        if args.pretty {
            println!(
                "{}",
                serde_json::to_string_pretty(&state.to_value()).unwrap_or_default()
            );
        } else {
            println!("{}", state.canonical());
        }
        Ok(())
    };
    finish(run())
}

fn finish(r: Result<(), (u8, String)>) -> u8 {
    match r {
        Ok(()) => EXIT_OK,
        Err((code, msg)) => {
            eprintln!("error: {msg}");
            code
        }
    }
}

/// Arguments of `loom verify-log`.
#[derive(Args)]
#[command(
    after_help = "Checks, in order: every envelope decodes (errors name the event index and field); \
sequences are gapless from 0 and belong to one execution; for every k, restoring a snapshot taken \
at k and folding the rest equals folding the whole log (SNAP-01), reporting the first k and the \
first differing JSON path. With --writer 1.20.0 the snapshots are written by that older fold and \
read through normalizeSnapshotState (SNAP-03); the documented exception shapes are then expected.\n\n\
Examples:\n  loom verify-log events.jsonl\n  loom verify-log --writer 1.23.0 events.json"
)]
pub struct VerifyLogArgs {
    /// The event log (JSON array or JSON lines); "-" reads standard input.
    pub file: String,
    /// Which fold version writes the snapshots (default: the current one).
    #[arg(long, value_name = "VERSION")]
    pub writer: Option<String>,
}

/// `loom verify-log FILE`.
pub fn verify_log(args: VerifyLogArgs) -> u8 {
    let run = || -> Result<bool, (u8, String)> {
        let events = load(&args.file)?;
        let writer = version(&args.writer)?;
        let mut ok = true;
        match check_sequences(&events) {
            Ok(()) => println!(
                "ok    {} envelopes decode; sequences 0..{} are gapless",
                events.len(),
                events.len()
            ),
            Err(e) => {
                ok = false;
                println!("FAIL  {e}\n      hint: {}", e.hint());
            }
        }
        let (full, diags) =
            fold_with_diagnostics(FoldVersion::CURRENT, &ExecutionState::new(), &events);
        for d in &diags {
            println!("note  {d}");
        }
        for w in legacy_answer_warnings(&events) {
            println!(
                "warn  event {}: resume entry {} answered no suspend point ({}) (INGRESS-12)",
                w.event_index,
                w.entry,
                if w.spent {
                    "already spent by a later gate"
                } else {
                    "not yet spent: it would answer the next gate"
                }
            );
        }
        let full_value = full.to_value();
        let mut state = ExecutionState::new();
        let mut diverged = None;
        for k in 0..events.len() {
            state = loom_kernel::fold::fold_as(writer, &state, &events[k..=k]);
            let record = SnapshotRecord::capture_as(writer, &state, events[k].sequence);
            let restored = match restore(&record, &events) {
                Ok(s) => s,
                Err(e) => {
                    return Err((
                        EXIT_FAILED,
                        format!("snapshot at k={k} could not be read: {e}"),
                    ))
                }
            };
            let got = restored.to_value();
            if loom_kernel::canonical_string(&got) != loom_kernel::canonical_string(&full_value) {
                let path = loom_report::first_difference(&full_value, &got).unwrap_or_default();
                diverged = Some((k, path));
                break;
            }
        }
        match diverged {
            None => println!("ok    fold(snapshot_k, tail) == fold(events) for all {} k (snapshots written by {writer}) (SNAP-01)", events.len()),
            Some((k, path)) => {
                ok = false;
                let at = if path.is_empty() { "/".to_string() } else { path };
                println!("FAIL  snapshot at k={k} (event {}, sequence {}) plus the tail differs from the full fold at {at} (SNAP-01)", k, events[k].sequence);
                if writer != FoldVersion::CURRENT {
                    println!("      a pre-1.21/1.24/1.26 snapshot may diverge in the documented shapes (SNAP-04, SNAP-06, SNAP-11); deleting the snapshots makes the log authoritative (SNAP-05)");
                }
            }
        }
        println!("state {}", full.canonical());
        Ok(ok)
    };
    match run() {
        Ok(true) => EXIT_OK,
        Ok(false) => EXIT_FAILED,
        Err((code, msg)) => {
            eprintln!("error: {msg}");
            code
        }
    }
}
