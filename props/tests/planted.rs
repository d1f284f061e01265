//! The targets find planted bugs: each property runs against a kernel with one bug
//! (`loom_props::kernel::planted`) on random inputs, and must report the rule within a
//! bounded number of cases (the fuzz targets find the same bugs in well under 60 s).

use loom_props::kernel::planted::{GateMismatchAppends, RepeatedDecisionOverwritesSeq};
use loom_props::kernel::Reference;
use loom_props::structured::{fold_snapshot_structured_with, SnapshotModel};
use loom_props::{
    decode, fold_snapshot_equivalence_with, ingress_refusal_with, FoldSnapshotInput, IngressInput,
    PropertyViolation,
};

/// A small deterministic byte source (xorshift), so the search is reproducible.
fn inputs(n: usize, len: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n).map(move |_| {
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    })
}

fn first_violation<'a, T: arbitrary::Arbitrary<'a>>(
    corpus: &'a [Vec<u8>],
    prop: impl Fn(&T) -> Result<(), PropertyViolation>,
) -> Option<(usize, PropertyViolation)> {
    corpus.iter().enumerate().find_map(|(i, b)| {
        let input = decode::<T>(b)?;
        prop(&input).err().map(|v| (i, v))
    })
}

#[test]
fn fold_38_planted_seq_overwrite_is_found() {
    let corpus: Vec<Vec<u8>> = inputs(5_000, 512).collect();
    let (i, v) = first_violation(&corpus, |x: &FoldSnapshotInput| {
        fold_snapshot_equivalence_with(&RepeatedDecisionOverwritesSeq, x)
    })
    .expect("the planted FOLD-38 bug is found");
    assert_eq!(v.rule, "FOLD-38", "{v}");
    eprintln!("planted FOLD-38 bug found after {} inputs: {v}", i + 1);
    // The same inputs pass against the reference kernel.
    for b in &corpus[..=i] {
        if let Some(x) = decode::<FoldSnapshotInput>(b) {
            fold_snapshot_equivalence_with(&Reference, &x).unwrap();
        }
    }
}

/// The structure-aware target finds the same planted bug in no more inputs than the
/// text-form target, on the same byte strings (each truncated to the structured
/// model's longest meaningful input, as its libFuzzer `max_len` truncates them).
#[test]
fn fold_38_planted_seq_overwrite_is_found_by_fold_snapshot_structured_no_later() {
    let corpus: Vec<Vec<u8>> = inputs(5_000, 512).collect();
    let (old, _) = first_violation(&corpus, |x: &FoldSnapshotInput| {
        fold_snapshot_equivalence_with(&RepeatedDecisionOverwritesSeq, x)
    })
    .expect("the text-form target finds the planted FOLD-38 bug");
    let short: Vec<Vec<u8>> = corpus
        .iter()
        .map(|b| b[..b.len().min(SnapshotModel::INPUT_BYTES_MAX)].to_vec())
        .collect();
    let (new, v) = first_violation(&short, |x: &SnapshotModel| {
        fold_snapshot_structured_with(&RepeatedDecisionOverwritesSeq, x)
    })
    .expect("the structured target finds the planted FOLD-38 bug");
    assert_eq!(v.rule, "FOLD-38", "{v}");
    eprintln!(
        "planted FOLD-38 bug: fold_snapshot_equivalence after {} inputs, fold_snapshot_structured after {}: {v}",
        old + 1,
        new + 1
    );
    assert!(
        new <= old,
        "structured found it after {} inputs, the text form after {}",
        new + 1,
        old + 1
    );
    for b in &short[..=new] {
        if let Some(x) = decode::<SnapshotModel>(b) {
            fold_snapshot_structured_with(&Reference, &x).unwrap();
        }
    }
}

#[test]
fn ingress_15_planted_refusal_that_appends_is_found() {
    let corpus: Vec<Vec<u8>> = inputs(5_000, 256).collect();
    let (i, v) = first_violation(&corpus, |x: &IngressInput| {
        ingress_refusal_with(&GateMismatchAppends, x)
    })
    .expect("the planted INGRESS-15 bug is found");
    assert_eq!(v.rule, "INGRESS-15", "{v}");
    eprintln!("planted INGRESS-15 bug found after {} inputs: {v}", i + 1);
    for b in &corpus[..=i] {
        if let Some(x) = decode::<IngressInput>(b) {
            ingress_refusal_with(&Reference, &x).unwrap();
        }
    }
}
