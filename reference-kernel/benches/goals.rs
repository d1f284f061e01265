//! The fold and verify-log performance goals, measured in one run and printed next to
//! their goals: `cargo bench -p loom-kernel --bench goals` (and `scripts/bench`).
//!
//! - parse (strict `decode_log`) and parse + fold (`fold_owned`) of the realistic
//!   agent-loop log of 1,000,000 events, interleaved rounds, medians: throughput goal
//!   1,000,000 events/s, and parse + fold within 1.2x of parse alone;
//! - the linear snapshot check (`loom verify-log`'s default, `loom_kernel::verify`) at
//!   10^3 to 10^6 events: goal under 60 s at 10^6, and each decade within 2x of linear
//!   (at most 20x the time of the decade before).
//!
//! Each line reads `measured / goal`, a ratio at most 1.00 when the goal is met. Nothing
//! asserts a time; the run fails only when a part cannot run.

#[path = "common/realistic.rs"]
mod realistic;

use loom_kernel::envelope::decode_log;
use loom_kernel::fold::{fold_owned, ExecutionState, FoldVersion};
use loom_kernel::verify::{verify_snapshots, Mode};
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
/// Goal for the linear check of a 10^6-event log, seconds.
const VERIFY_1M_S_MAX: f64 = 60.0;
/// Goal for the time of one decade over the one before (linear would be 10).
const VERIFY_DECADE_RATIO_MAX: f64 = 20.0;

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

fn main() {
    // `cargo bench` passes `--bench`; a filter argument selects one part.
    let only: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |part: &str| only.as_deref().is_none_or(|o| part.contains(o));
    println!(
        "{:<44} {:>18}   {:<21} {:>6}",
        "figure", "measured", "goal", "ratio"
    );
    if wants("parse-fold") {
        let text = realistic::to_jsonl(&realistic::realistic_log(EVENTS));
        let (mut parse, mut both) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let t = Instant::now();
            let events = decode_log(black_box(&text)).expect("the log decodes");
            black_box(events.len());
            drop(events);
            parse.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let events = decode_log(black_box(&text)).expect("the log decodes");
            black_box(fold_owned(ExecutionState::new(), events).sequence);
            both.push(t.elapsed().as_secs_f64());
        }
        let (p, b) = (median(parse), median(both));
        let rate = EVENTS as f64 / b;
        line(
            "parse (decode_log), 10^6 events",
            format!("{:.0} k events/s", EVENTS as f64 / p / 1e3),
            "-".into(),
            None,
        );
        line(
            "parse + fold, 10^6 events",
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
    }
    if wants("verify") {
        let mut previous: Option<f64> = None;
        for exp in 3..=6u32 {
            let n = 10usize.pow(exp);
            let events = realistic::realistic_log(n);
            let rounds = if n >= 1_000_000 { 1 } else { 3 };
            let mut times = Vec::new();
            for _ in 0..rounds {
                let t = Instant::now();
                let v =
                    verify_snapshots(FoldVersion::CURRENT, &events, Mode::Linear, &mut |_, _| {})
                        .expect("snapshots read back");
                assert!(
                    v.divergence.is_none(),
                    "the realistic log satisfies SNAP-01"
                );
                times.push(t.elapsed().as_secs_f64());
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
