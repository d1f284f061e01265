//! A release-mode micro-benchmark of the fold properties: times each property over the
//! seed corpus and a fixed set of pseudo-random inputs (the same bytes every run), so a
//! change to a property's cost shows up without a fuzzing campaign.
//!
//! `cargo run --release -p loom-props --example bench_fold [ROUNDS] [TARGET] [CORPUS_DIR]`
//!
//! With CORPUS_DIR (say a campaign's `fuzz/target/corpus-work/TARGET`), the inputs are
//! that directory's files alone, the input lengths a campaign actually runs.

use loom_props::{run_target, Target};
use std::path::Path;
use std::time::Instant;

fn xorshift(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let only = std::env::args().nth(2);
    let corpus_dir = std::env::args().nth(3);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for target in [
        Target::FoldSnapshotEquivalence,
        Target::FoldTotal,
        Target::VersionedFold,
        Target::FoldRoundtrip,
        Target::FoldTotalStructured,
        Target::FoldSnapshotStructured,
        Target::VersionedFoldStructured,
        Target::FoldRoundtripStructured,
    ]
    .into_iter()
    .filter(|t| only.as_deref().is_none_or(|o| o == t.name()))
    {
        let mut inputs: Vec<Vec<u8>> = match corpus_dir {
            Some(_) => Vec::new(),
            None => (0..2_000u64)
                .map(|i| xorshift(0xbe4c_0000 + i * 7919, 32 + (i as usize * 37) % 2048))
                .collect(),
        };
        let dir = corpus_dir
            .as_ref()
            .map_or_else(|| root.join(target.name()), std::path::PathBuf::from);
        if let Ok(dir) = std::fs::read_dir(dir) {
            for entry in dir.flatten() {
                if let Ok(b) = std::fs::read(entry.path()) {
                    inputs.push(b);
                }
            }
        }
        let mut failures = 0usize;
        let start = Instant::now();
        for _ in 0..rounds {
            for b in &inputs {
                if run_target(target, b).is_err() {
                    failures += 1;
                }
            }
        }
        let secs = start.elapsed().as_secs_f64();
        let runs = (rounds * inputs.len()) as f64;
        println!(
            "{:<26} {:>9.1} us/input {:>9.0} inputs/s  ({} inputs x {rounds}, {failures} violations)",
            target.name(),
            secs * 1e6 / runs,
            runs / secs,
            inputs.len(),
        );
    }
}
