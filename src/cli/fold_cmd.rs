//! `loom fold` and `loom verify-log`.

use super::{read_input, EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use clap::Args;
use loom_kernel::envelope::{check_sequences, for_each_envelope};
use loom_kernel::fold::{fold_text_observed, fold_with_diagnostics, ExecutionState, FoldVersion};
use loom_kernel::ingress::legacy_answer_warnings;
use loom_kernel::verify::{verify_snapshots, Mode};
use loom_kernel::EventEnvelope;
use std::time::Instant;

/// Logs at least this long get progress lines on standard error.
const PROGRESS_EVENTS_MIN: usize = 100_000;
/// Seconds between two progress lines.
const PROGRESS_INTERVAL_S: f64 = 2.0;

/// Arguments of `loom fold`.
#[derive(Args)]
#[command(
    after_help = "The log is a JSON array of envelopes (pretty-printed or not) or JSON lines, one \
whole envelope per line; a UTF-8 byte order mark at the start is skipped. A malformed envelope is \
reported with its index, its line in the file, the field and a hint. A log whose sequences are not \
0, 1, 2, … or that mixes executions still folds, with a warning on standard error. An empty log \
(no envelope at all) folds to the initial state, with a warning that nothing was folded.\n\n\
Examples:\n  loom fold events.json\n  loom fold --as 1.20.0 --pretty events.jsonl\n  cat events.jsonl | loom fold -\n\n\
One envelope per line looks like:\n  \
{\"id\":\"e0\",\"workflowId\":\"f\",\"executionId\":\"x\",\"eventType\":\"EXECUTION_STARTED\",\"sequence\":0,\"timestamp\":1000,\"payload\":{\"input\":1}}\n\n\
Exit status: 0 folded (warnings included, an empty log too), 2 usage error or unreadable input (a missing file, an \
envelope that does not decode). `loom fold` checks nothing, so it never exits 1; `loom verify-log` \
judges a log."
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

/// Prints progress lines for a long log, at most one per interval.
struct Progress {
    on: bool,
    /// On whatever the log's length.
    forced: bool,
    start: Instant,
    last_s: f64,
}

impl Progress {
    fn new(on: bool, forced: bool) -> Progress {
        Progress {
            on: on || forced,
            forced,
            start: Instant::now(),
            last_s: 0.0,
        }
    }

    fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// A line now, whatever the interval.
    fn say(&mut self, what: &str) {
        if self.on {
            eprintln!("verify-log: {what} ({:.1} s)", self.elapsed_s());
            self.last_s = self.elapsed_s();
        }
    }

    /// A line if the interval has passed.
    fn tick(&mut self, what: impl FnOnce() -> String) {
        if self.on && self.elapsed_s() - self.last_s >= PROGRESS_INTERVAL_S {
            let line = what();
            self.say(&line);
        }
    }
}

/// Reads and decodes the log. `undecodable` is the exit status for a log that does not
/// decode: for `fold` the log is input it cannot read (2), for `verify-log` decoding is
/// the first of the checks it runs on the log (1).
fn load(
    file: &str,
    progress: &mut Progress,
    undecodable: u8,
) -> Result<Vec<EventEnvelope>, (u8, String)> {
    let text = read_input(file).map_err(|e| (EXIT_USAGE, e))?;
    // Progress needs the length first; a log of this many bytes is long.
    progress.on = progress.forced || (progress.on && text.len() >= PROGRESS_EVENTS_MIN * 64);
    let mut events = Vec::new();
    for_each_envelope(&text, &mut |e| {
        events.push(e);
        if events.len() % 4096 == 0 {
            progress.tick(|| format!("decoded {} envelopes", events.len()));
        }
        Ok(())
    })
    .map_err(|e| (undecodable, format!("{file}: {e}\n  hint: {}", e.hint())))?;
    drop(text);
    progress.on = progress.forced || (progress.on && events.len() >= PROGRESS_EVENTS_MIN);
    progress.say(&format!("decoded {} envelopes", events.len()));
    Ok(events)
}

fn version(v: &Option<String>) -> Result<FoldVersion, (u8, String)> {
    match v {
        Some(text) => FoldVersion::parse(text).map_err(|e| (EXIT_USAGE, e)),
        None => Ok(FoldVersion::CURRENT),
    }
}

/// What a fold of the whole log should warn about: sequences that are not 0, 1, 2, …
/// (a gap, a repeat, a log that does not start at 0) and envelopes of a second
/// execution or a second `EXECUTION_STARTED`. The fold still runs: folding part of a log
/// is legitimate, but the state of a mixed log is rarely what was meant. The facts are
/// gathered one envelope at a time, so a log is judged while it is decoded and folded,
/// without keeping its envelopes.
#[derive(Default)]
struct LogScan {
    /// Envelopes seen.
    seen: usize,
    /// The first envelope's sequence and execution.
    first: Option<(u64, String)>,
    /// The sequence of the envelope before the current one.
    previous_sequence: u64,
    /// The first break of 0, 1, 2, … from the first sequence: its index and words.
    break_in_order: Option<(usize, String)>,
    /// The first envelope of another execution (index, its execution) and how many.
    other_execution: Option<(usize, String)>,
    other_executions: usize,
    /// Whether envelope 0 is an `EXECUTION_STARTED`.
    starts_with_start: bool,
    /// The first later `EXECUTION_STARTED` (index, sequence), once met.
    later_start: Option<(usize, u64)>,
}

impl LogScan {
    fn see(&mut self, execution_id: &str, event_type: &str, sequence: u64) {
        let i = self.seen;
        self.seen += 1;
        let Some((first_sequence, first_execution)) = &self.first else {
            self.first = Some((sequence, execution_id.to_owned()));
            self.previous_sequence = sequence;
            self.starts_with_start = event_type == "EXECUTION_STARTED";
            return;
        };
        if self.break_in_order.is_none() && sequence != first_sequence + i as u64 {
            let before = self.previous_sequence;
            let what = if sequence > before + 1 {
                format!(
                    "a gap: sequence {} follows {before} (missing {}..{})",
                    sequence,
                    before + 1,
                    sequence - 1
                )
            } else {
                format!(
                    "sequence {} follows {before}: repeated or out of order",
                    sequence
                )
            };
            self.break_in_order = Some((i, what));
        }
        if execution_id != *first_execution {
            self.other_executions += 1;
            if self.other_execution.is_none() {
                self.other_execution = Some((i, execution_id.to_owned()));
            }
        }
        if self.later_start.is_none() && event_type == "EXECUTION_STARTED" {
            self.later_start = Some((i, sequence));
        }
        self.previous_sequence = sequence;
    }

    fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let Some((first_sequence, first_execution)) = &self.first else {
            return out;
        };
        if let Some((i, what)) = &self.break_in_order {
            out.push(format!("event {i}: {what}; a log is gapless (ABI-10)"));
        }
        if *first_sequence != 0 {
            out.push(format!(
                "event 0: the log starts at sequence {first_sequence}, not 0: folding a tail without its snapshot gives a partial state"
            ));
        }
        if let Some((i, execution)) = &self.other_execution {
            out.push(format!(
                "event {i}: execution `{execution}` differs from the log's first execution `{first_execution}` ({} envelope(s) of other executions): the fold merges them into one state",
                self.other_executions
            ));
        }
        if let (true, Some((i, sequence))) = (self.starts_with_start, self.later_start) {
            out.push(format!(
                "event {i}: a second EXECUTION_STARTED (sequence {sequence}): two executions in one log? it re-opens the state"
            ));
        }
        out
    }
}

/// `loom fold FILE`. The log is folded as it is decoded, one envelope at a time, so a
/// long log never sits in memory as envelopes (only its text and the state do).
pub fn fold(args: FoldArgs) -> u8 {
    let run = || -> Result<(), (u8, String)> {
        let v = version(&args.as_version)?;
        let text = read_input(&args.file).map_err(|e| (EXIT_USAGE, e))?;
        let mut diags = Vec::new();
        let mut scan = LogScan::default();
        // The text path: envelopes read where they lie, the hot kinds folded from their
        // raw payloads (the same state, diagnostics and errors as decoding first).
        let (state, _) =
            fold_text_observed(ExecutionState::new(), &text, v, &mut diags, &mut |e| {
                scan.see(e.execution_id, e.event_type, e.sequence)
            })
            .map_err(|e| {
                (
                    EXIT_USAGE,
                    format!("{}: {e}\n  hint: {}", args.file, e.hint()),
                )
            })?;
        drop(text);
        if scan.first.is_none() {
            eprintln!(
                "warning: {} holds no envelope: nothing was folded, and the state below is the initial state (exit status 0; `loom verify-log` fails an empty log)",
                args.file
            );
        }
        for w in scan.warnings() {
            eprintln!("warning: {w}");
        }
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
    after_help = "Checks, in order: every envelope decodes (errors name the event index, line and field); \
sequences are gapless from 0 and belong to one execution; for every k, restoring a snapshot taken \
at k and folding the rest equals folding the whole log (SNAP-01), reporting the first k and the \
first differing JSON path. With --writer 1.20.0 the snapshots are written by that older fold and \
read through normalizeSnapshotState (SNAP-03); the documented exception shapes are then expected.\n\n\
The default check is linear in the log: it folds once and, at each k, checks that the snapshot \
reads back as exactly the state at k and that restore's tail is the rest of the log, which with a \
pure fold implies the property; a k where that does not hold is restored and re-folded literally, \
so the first failing k is the one --exhaustive reports. --exhaustive restores every k literally \
(quadratic); --sample N restores N evenly spaced k literally. Logs of 100,000 envelopes or more \
print progress on standard error (--progress: any log).\n\n\
Examples:\n  loom verify-log events.jsonl\n  loom verify-log --writer 1.23.0 events.json\n  loom verify-log --exhaustive small.jsonl\n  loom verify-log --sample 1000 huge.jsonl\n\n\
Exit status: 0 every check passed, 1 a check failed (an envelope that does not decode is the \
first failed check: the log is what verify-log judges), 2 usage error or a file that cannot be \
read."
)]
pub struct VerifyLogArgs {
    /// The event log (JSON array or JSON lines); "-" reads standard input.
    pub file: String,
    /// Which fold version writes the snapshots (default: the current one).
    #[arg(long, value_name = "VERSION")]
    pub writer: Option<String>,
    /// Restore and re-fold at every k literally (quadratic in the log's length).
    #[arg(long, conflicts_with = "sample")]
    pub exhaustive: bool,
    /// Restore and re-fold literally at N evenly spaced k (the last event included).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub sample: Option<u64>,
    /// Print progress lines on standard error whatever the log's length.
    #[arg(long)]
    pub progress: bool,
}

/// What verify-log says of `n` (at least one) envelopes that decode with gapless
/// sequences: "2 envelopes decode; sequences 0 and 1 are gapless".
fn sequences_line(n: usize) -> String {
    match n {
        1 => "1 envelope decodes; its sequence is 0".to_string(),
        2 => "2 envelopes decode; sequences 0 and 1 are gapless".to_string(),
        n => format!("{n} envelopes decode; sequences 0 to {} are gapless", n - 1),
    }
}

/// `loom verify-log FILE`.
pub fn verify_log(args: VerifyLogArgs) -> u8 {
    let run = || -> Result<bool, (u8, String)> {
        let writer = version(&args.writer)?;
        let mut progress = Progress::new(true, args.progress);
        let events = load(&args.file, &mut progress, EXIT_FAILED)?;
        if events.is_empty() {
            // Verifying nothing proves nothing: an empty log never passes.
            println!(
                "FAIL  {} holds no envelope, so nothing was verified\n      hint: point verify-log at a log with at least one event (one JSON envelope per line, or a JSON array)",
                args.file
            );
            return Ok(false);
        }
        let mut ok = true;
        match check_sequences(&events) {
            Ok(()) => println!("ok    {}", sequences_line(events.len())),
            Err(e) => {
                ok = false;
                println!("FAIL  {e}\n      hint: {}", e.hint());
            }
        }
        let (_, diags) =
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
        let mode = match (args.exhaustive, args.sample) {
            (true, _) => Mode::Exhaustive,
            (false, Some(n)) => Mode::Sample(usize::try_from(n).unwrap_or(usize::MAX)),
            (false, None) => Mode::Linear,
        };
        progress.say(&format!(
            "checking snapshot points ({})",
            match mode {
                Mode::Linear => "linear",
                Mode::Exhaustive => "exhaustive",
                Mode::Sample(_) => "sampled",
            }
        ));
        let verdict = verify_snapshots(writer, &events, mode, &mut |done, total| {
            progress.tick(|| {
                format!(
                    "{done}/{total} snapshot points ({:.0}%)",
                    100.0 * done as f64 / total.max(1) as f64
                )
            })
        })
        .map_err(|(k, e)| {
            (
                EXIT_FAILED,
                format!("snapshot at k={k} could not be read: {e}"),
            )
        })?;
        progress.say(&format!(
            "checked {} snapshot points, {} restored literally",
            verdict.checked, verdict.literal
        ));
        let how = match mode {
            Mode::Linear => format!("linear check, {} k restored literally", verdict.literal),
            Mode::Exhaustive => "every k restored literally".to_owned(),
            Mode::Sample(_) => format!("{} sampled k restored literally", verdict.checked),
        };
        match &verdict.divergence {
            None => println!(
                "ok    fold(snapshot_k, tail) == fold(events) for {} {} k (snapshots written by {writer}; {how}) (SNAP-01)",
                if matches!(mode, Mode::Sample(_)) { "the" } else { "all" },
                verdict.checked
            ),
            Some(d) => {
                ok = false;
                let path = loom_report::first_difference(&verdict.full.to_value(), &d.restored.to_value())
                    .unwrap_or_default();
                let at = if path.is_empty() { "/".to_string() } else { path };
                println!(
                    "FAIL  snapshot at k={} (event {}, sequence {}) plus the tail differs from the full fold at {at} (SNAP-01)",
                    d.k, d.k, events[d.k].sequence
                );
                if writer != FoldVersion::CURRENT {
                    println!("      a pre-1.21/1.24/1.26 snapshot may diverge in the documented shapes (SNAP-04, SNAP-06, SNAP-11); deleting the snapshots makes the log authoritative (SNAP-05)");
                }
            }
        }
        println!("state {}", verdict.full.canonical());
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

#[cfg(test)]
mod tests {
    #[test]
    fn verify_log_names_the_last_sequence_it_checked() {
        for (n, line) in [
            (1, "1 envelope decodes; its sequence is 0"),
            (2, "2 envelopes decode; sequences 0 and 1 are gapless"),
            (3, "3 envelopes decode; sequences 0 to 2 are gapless"),
        ] {
            assert_eq!(super::sequences_line(n), line);
        }
    }
}
