//! Folds a JSON-lines log file as it decodes (`for_each_envelope`, one envelope held at a
//! time), on mimalloc as the `loom` binary is, for profiles and memory figures of the
//! fold alone: `/usr/bin/time -v` gives the peak memory, `perf record` the profile.
//!
//! `cargo run --release -p loom-kernel --example stream_fold -- FILE [parse|fold|text|output|whole|verify] [PASSES]`
//!
//! `parse` decodes only; `fold` (the default) folds every envelope into one state per
//! pass; `text` folds through the text path (`fold_text`: envelopes read in place, the
//! hot kinds folded from their raw payloads); `output` also prints the time of the state's
//! canonical JSON, which `loom fold` writes; `whole` decodes the whole log (`decode_log`)
//! and then folds it, as every crate but `loom fold` does; `verify` decodes the whole log and runs the
//! linear snapshot check, as `loom verify-log` does. Prints events per second of wall time; the log text is read once, before the
//! clock starts.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use loom_kernel::envelope::for_each_envelope;
use loom_kernel::fold::{fold_owned, fold_text, ExecutionState, FoldVersion, NoDiagnostics};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: stream_fold FILE [parse|fold|text|output|whole|verify|raw] [PASSES]");
        std::process::exit(2);
    };
    let mode = args.next().unwrap_or_else(|| "fold".to_owned());
    let fold = mode != "parse";
    let passes: usize = args.next().and_then(|p| p.parse().ok()).unwrap_or(3);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let start = std::time::Instant::now();
    let mut events = 0u64;
    for _ in 0..passes {
        if mode == "raw" {
            for line in text.lines() {
                events +=
                    u64::from(std::hint::black_box(loom_kernel::RawEnvelope::read(line)).is_some());
            }
            continue;
        }
        if mode == "text" || mode == "output" {
            match fold_text(
                ExecutionState::new(),
                &text,
                FoldVersion::CURRENT,
                &mut NoDiagnostics,
            ) {
                Ok((state, n)) => {
                    events += n as u64;
                    if mode == "output" {
                        // What `loom fold` prints: the state's canonical JSON.
                        let t = std::time::Instant::now();
                        let value = state.to_value();
                        let tree_s = t.elapsed().as_secs_f64();
                        let out = loom_kernel::canonical::canonical_string(&value);
                        let write_s = t.elapsed().as_secs_f64() - tree_s;
                        drop(value);
                        let dropped_s = t.elapsed().as_secs_f64() - tree_s - write_s;
                        let t = std::time::Instant::now();
                        let direct = state.canonical();
                        let direct_s = t.elapsed().as_secs_f64();
                        assert_eq!(direct, out, "the canonical writer and the tree differ");
                        eprintln!(
                            "  canonical output: {} bytes in {direct_s:.3} s (ExecutionState::canonical); through the whole state as a tree {:.3} s (built {tree_s:.3} s, written {write_s:.3} s, dropped {dropped_s:.3} s)",
                            out.len(),
                            tree_s + write_s + dropped_s,
                        );
                    }
                    std::hint::black_box(state);
                }
                Err(e) => {
                    eprintln!("{path}: {e}");
                    std::process::exit(1);
                }
            }
            continue;
        }
        if mode == "whole" || mode == "verify" {
            // The whole log decoded (`decode_log`), then, for `whole`, folded: what every
            // crate but `loom fold` runs, and the goals bench's headline parse + fold;
            // for `verify`, the linear snapshot check at every k, as `loom verify-log`.
            let log = match loom_kernel::decode_log(&text) {
                Ok(log) => log,
                Err(e) => {
                    eprintln!("{path}: {e}");
                    std::process::exit(1);
                }
            };
            events += log.len() as u64;
            if mode == "whole" {
                std::hint::black_box(fold_owned(ExecutionState::new(), log));
            } else {
                let verdict = loom_kernel::verify::verify_snapshots(
                    FoldVersion::CURRENT,
                    &log,
                    loom_kernel::verify::Mode::Linear,
                    &mut |_, _| {},
                );
                std::hint::black_box(verdict.is_ok());
            }
            continue;
        }
        let mut state = Some(ExecutionState::new());
        let decoded = for_each_envelope(&text, &mut |e| {
            events += 1;
            if fold {
                state = Some(fold_owned(state.take().unwrap_or_default(), [e]));
            } else {
                std::hint::black_box(e);
            }
            Ok(())
        });
        if let Err(e) = decoded {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
        std::hint::black_box(state);
    }
    let s = start.elapsed().as_secs_f64();
    println!(
        "{events} events ({passes} passes, {}) in {s:.3} s: {:.0} k events/s",
        match mode.as_str() {
            "parse" => "parse",
            "text" => "parse + fold, text path",
            "output" => "parse + fold, text path, and the canonical output",
            "raw" => "raw envelope read only",
            "verify" => "decode_log, then the linear snapshot check",
            "whole" => "decode_log, then fold_owned",
            _ => "parse + fold",
        },
        events as f64 / s / 1e3
    );
}
