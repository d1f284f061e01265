//! The fold and verify-log performance goals, measured in one run and printed next to
//! their goals: `cargo bench -p loom-kernel --bench goals` (and `scripts/bench`).
//!
//! - parse (strict `decode_log`) and parse + fold (`fold_owned`) of the realistic
//!   agent-loop log of 1,000,000 events, interleaved rounds, medians: throughput goal
//!   1,000,000 events/s, parse + fold within 1.2x of parse alone, and within 3x of
//!   serde_json's tokenizer alone on the same text in the same run; and the same goals
//!   for the text path (`fold_text`, what `loom fold` runs), which reads each line in
//!   place and folds the hot kinds from their raw payloads;
//! - the linear snapshot check (`loom verify-log`'s default, `loom_kernel::verify`) at
//!   10^3 to 10^6 events: goal under 60 s at 10^6, and each decade within 2x of linear
//!   (at most 20x the time of the decade before).
//!
//! Two more lines put the parse figure in proportion (no goal of their own): the same text
//! through serde_json's tokenizer alone (every line read as `IgnoredAny`: the syntax
//! floor of any strict JSON decoder built on it), and into the envelope's own strings
//! with the payload and metadata skipped, not built as `serde_json::Value` trees. The gap
//! between that line and `parse` is what the payload trees cost. Three more fold the log
//! as it decodes (`for_each_envelope`, one envelope held at a time, so the allocator
//! reuses warm memory instead of the 10^6 envelopes `decode_log` keeps): parse alone,
//! parse + fold of the realistic log, and parse + fold of the bounded-state log (ten
//! step and decision ids reused), whose state stops growing.
//!
//! Each line reads `measured / goal`, a ratio at most 1.00 when the goal is met. Nothing
//! asserts a time; the run fails only when a part cannot run.
//!
//! `goals` runs on the system allocator, `goals_mimalloc` (the same code) on mimalloc, the
//! allocator the `loom` binary uses.
//!
//! Times are the thread's time on a CPU (`/proc/thread-self/schedstat`), not wall time:
//! on a machine other work loads, wall time counts the waits for a core, CPU time does
//! not (it still pays for shared caches). Wall time is printed next to it.

#[path = "common/realistic.rs"]
mod realistic;

use loom_kernel::envelope::{decode_log, for_each_envelope};
use loom_kernel::fold::{fold_owned, fold_text, ExecutionState, FoldVersion, NoDiagnostics};
use loom_kernel::verify::{verify_snapshots, Mode};
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::hint::black_box;
use std::time::Instant;

/// Events in the throughput log.
const EVENTS: usize = 1_000_000;
/// Interleaved rounds of parse and parse + fold.
const ROUNDS: usize = 5;
/// Throughput goal, events per second (parse + fold, one core).
const THROUGHPUT_GOAL_EVENTS_PER_S: f64 = 1_000_000.0;
/// Goal for (parse + fold) / parse.
const FOLD_OVER_PARSE_RATIO_MAX: f64 = 1.2;
/// Goal for (parse + fold) / serde_json's tokenizer alone on the same text: how close
/// the decoder and the fold come to the syntax floor.
const FOLD_OVER_TOKENIZER_RATIO_MAX: f64 = 3.0;
/// Goal for the linear check of a 10^6-event log, seconds.
const VERIFY_1M_S_MAX: f64 = 60.0;
/// Goal for the time of one decade over the one before (linear would be 10).
const VERIFY_DECADE_RATIO_MAX: f64 = 20.0;

/// Seconds this thread has run on a CPU; wall-clock seconds where the kernel does not
/// say (then the figures carry the machine's load).
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map(|ns| ns / 1e9)
        .unwrap_or_else(|| {
            static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
            START.get_or_init(Instant::now).elapsed().as_secs_f64()
        })
}

/// CPU and wall seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, f64, T) {
    let (c, w) = (cpu_s(), Instant::now());
    let out = f();
    (cpu_s() - c, w.elapsed().as_secs_f64(), out)
}

/// An envelope's scalar fields with the payload and metadata read but not kept.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)] // read to be built, never used
struct BareEnvelope {
    id: String,
    workflow_id: String,
    execution_id: String,
    event_type: String,
    sequence: u64,
    timestamp: i64,
    payload: IgnoredAny,
    metadata: Option<IgnoredAny>,
}

/// Folds a log as it decodes, holding one envelope at a time; the final sequence.
fn streamed_fold(text: &str) -> Option<u64> {
    let mut state = Some(ExecutionState::new());
    for_each_envelope(text, &mut |e| {
        state = Some(fold_owned(state.take().unwrap_or_default(), [e]));
        Ok(())
    })
    .expect("the log decodes");
    state.and_then(|s| s.sequence)
}

/// Lines of a JSON-lines log through `decode` (each must succeed); how many.
fn each_line<T: for<'de> Deserialize<'de>>(text: &str) -> usize {
    let mut n = 0;
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        black_box(serde_json::from_str::<T>(l).expect("the line decodes"));
        n += 1;
    }
    n
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// One figure; `ratio` is measured over goal (at most 1.00 when met), `None` for a
/// figure without a goal of its own.
fn line(figure: &str, measured: String, goal: String, ratio: Option<f64>) {
    match ratio {
        Some(r) => println!(
            "{figure:<44} {measured:>18}   goal {goal:<16} {r:>6.2}  {}",
            if r <= 1.0 { "met" } else { "NOT MET" }
        ),
        None => println!("{figure:<44} {measured:>18}"),
    }
}

pub fn main() {
    // `cargo bench` passes `--bench`; a word selects one part, a number sets the events
    // of the parse and fold log (for `valgrind --tool=callgrind`, where 10^6 is slow).
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let only = words.iter().find(|w| w.parse::<usize>().is_err()).cloned();
    let events = words
        .iter()
        .find_map(|w| w.parse::<usize>().ok())
        .unwrap_or(EVENTS);
    let rounds = if events < EVENTS { 1 } else { ROUNDS };
    let wants = |part: &str| only.as_deref().is_none_or(|o| part.contains(o));
    println!(
        "{:<44} {:>18}   {:<21} {:>6}",
        "figure", "measured", "goal", "ratio"
    );
    if wants("parse-fold") {
        let text = realistic::to_jsonl(&realistic::realistic_log(events));
        let (mut parse, mut both, mut wall) = (Vec::new(), Vec::new(), Vec::new());
        let (mut syntax, mut bare) = (Vec::new(), Vec::new());
        let (mut sparse, mut sboth, mut sbounded) = (Vec::new(), Vec::new(), Vec::new());
        let mut text_path = Vec::new();
        let bounded_text = realistic::to_jsonl(&realistic::bounded_state_log(events));
        for _ in 0..rounds {
            let (c, _, n) = timed(|| each_line::<IgnoredAny>(black_box(&text)));
            assert_eq!(n, events);
            syntax.push(c);
            let (c, _, n) = timed(|| each_line::<BareEnvelope>(black_box(&text)));
            assert_eq!(n, events);
            bare.push(c);
            let (c, _, n) = timed(|| {
                for_each_envelope(black_box(&text), &mut |e| {
                    black_box(e);
                    Ok(())
                })
                .expect("the log decodes")
            });
            assert_eq!(n, events);
            sparse.push(c);
            sboth.push(timed(|| streamed_fold(black_box(&text))).0);
            sbounded.push(timed(|| streamed_fold(black_box(&bounded_text))).0);
            let (c, _, n) = timed(|| {
                let (state, n) = fold_text(
                    ExecutionState::new(),
                    black_box(&text),
                    FoldVersion::CURRENT,
                    &mut NoDiagnostics,
                )
                .expect("the log decodes");
                black_box(state.sequence);
                n
            });
            assert_eq!(n, events);
            text_path.push(c);
            // Both sides free what they built, as a caller eventually does: parse alone
            // drops its envelopes, parse + fold its state (the fold drops the rest).
            let (c, w, n) = timed(|| decode_log(black_box(&text)).expect("the log decodes").len());
            black_box(n);
            parse.push(c);
            wall.push(w);
            let (c, _, seq) = timed(|| {
                let events = decode_log(black_box(&text)).expect("the log decodes");
                fold_owned(ExecutionState::new(), events).sequence
            });
            black_box(seq);
            both.push(c);
        }
        println!(
            "  ({rounds} interleaved rounds; parse wall time median {:.2} s)",
            median(wall)
        );
        let (p, b) = (median(parse), median(both));
        let rate = events as f64 / b;
        line(
            &format!("parse (decode_log), {events} events"),
            format!("{:.0} k events/s", events as f64 / p / 1e3),
            "-".into(),
            None,
        );
        line(
            "  floor: JSON syntax alone (IgnoredAny)",
            format!(
                "{:.0} k events/s",
                events as f64 / median(syntax.clone()) / 1e3
            ),
            "-".into(),
            None,
        );
        line(
            "  envelope strings, no payload trees",
            format!("{:.0} k events/s", events as f64 / median(bare) / 1e3),
            "-".into(),
            None,
        );
        let per_s =
            |xs: &Vec<f64>| format!("{:.0} k events/s", events as f64 / median(xs.clone()) / 1e3);
        line(
            "  streamed parse (for_each_envelope)",
            per_s(&sparse),
            "-".into(),
            None,
        );
        line("  streamed parse + fold", per_s(&sboth), "-".into(), None);
        line(
            "  streamed (parse + fold) / parse",
            format!("{:.2}", median(sboth.clone()) / median(sparse.clone())),
            "-".into(),
            None,
        );
        line(
            "  streamed parse + fold, bounded state",
            per_s(&sbounded),
            "-".into(),
            None,
        );
        line(
            &format!("parse + fold, {events} events"),
            format!("{:.0} k events/s", rate / 1e3),
            format!(">= {:.0} k/s", THROUGHPUT_GOAL_EVENTS_PER_S / 1e3),
            Some(THROUGHPUT_GOAL_EVENTS_PER_S / rate),
        );
        line(
            "(parse + fold) / parse",
            format!("{:.2}", b / p),
            format!("<= {FOLD_OVER_PARSE_RATIO_MAX}"),
            Some((b / p) / FOLD_OVER_PARSE_RATIO_MAX),
        );
        // The same text, the same run: the tokenizer line is the floor any strict
        // decoder on serde_json pays, so this ratio does not move with the machine.
        let floor = median(syntax.clone());
        line(
            "(parse + fold) / JSON syntax alone",
            format!("{:.2}", b / floor),
            format!("<= {FOLD_OVER_TOKENIZER_RATIO_MAX}"),
            Some((b / floor) / FOLD_OVER_TOKENIZER_RATIO_MAX),
        );
        // The text path (`fold_text`, what `loom fold` runs): envelopes read in place,
        // the hot kinds folded from raw payloads, kept values as compact text.
        let t = median(text_path);
        let text_rate = events as f64 / t;
        line(
            "parse + fold, text path (fold_text)",
            format!("{:.0} k events/s", text_rate / 1e3),
            format!(">= {:.0} k/s", THROUGHPUT_GOAL_EVENTS_PER_S / 1e3),
            Some(THROUGHPUT_GOAL_EVENTS_PER_S / text_rate),
        );
        line(
            "(text path) / JSON syntax alone",
            format!("{:.2}", t / floor),
            format!("<= {FOLD_OVER_TOKENIZER_RATIO_MAX}"),
            Some((t / floor) / FOLD_OVER_TOKENIZER_RATIO_MAX),
        );
    }
    if wants("verify") {
        let mut previous: Option<f64> = None;
        for exp in 3..=6u32 {
            let n = 10usize.pow(exp);
            let events = realistic::realistic_log(n);
            let rounds = if n >= 1_000_000 { 1 } else { 3 };
            let mut times = Vec::new();
            for _ in 0..rounds {
                let (c, _, v) = timed(|| {
                    verify_snapshots(FoldVersion::CURRENT, &events, Mode::Linear, &mut |_, _| {})
                        .expect("snapshots read back")
                });
                assert!(
                    v.divergence.is_none(),
                    "the realistic log satisfies SNAP-01"
                );
                times.push(c);
            }
            let s = median(times);
            let figure = format!("verify-log linear, 10^{exp} events");
            match previous {
                Some(prev) => line(
                    &figure,
                    format!("{s:.3} s ({:.1}x)", s / prev),
                    format!("<= {VERIFY_DECADE_RATIO_MAX}x per decade"),
                    Some((s / prev) / VERIFY_DECADE_RATIO_MAX),
                ),
                None => line(&figure, format!("{s:.3} s"), "-".into(), None),
            }
            if exp == 6 {
                line(
                    "verify-log linear, 10^6 events, total",
                    format!("{s:.1} s"),
                    format!("< {VERIFY_1M_S_MAX} s"),
                    Some(s / VERIFY_1M_S_MAX),
                );
            }
            previous = Some(s);
        }
    }
}
