//! Writes the benchmarks' realistic agent-loop log (JSON lines) for `loom verify-log`
//! and `loom fold` runs at scale.
//!
//! `cargo run --release -p loom-kernel --example realistic_log -- EVENTS FILE`

#[path = "../benches/common/realistic.rs"]
mod realistic;

use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(n), Some(path)) = (
        args.next().and_then(|n| n.parse::<usize>().ok()),
        args.next(),
    ) else {
        eprintln!("usage: realistic_log EVENTS FILE");
        std::process::exit(2);
    };
    let text = realistic::to_jsonl(&realistic::realistic_log(n));
    let mut out = std::fs::File::create(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    out.write_all(text.as_bytes()).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
}
