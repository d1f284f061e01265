//! Every expectation states its basis, and the statement is checked against kernels
//! that take the open points the other way (`loom_vectors::readings`).
//!
//! For every committed vector and every modelled other reading, the reading's kernel
//! answers the vector's requests; where its answer differs from the expected one, the
//! vector must either list that answer as an alternative of that reading, or cite the
//! reading's GAP with JSON pointers that cover every difference. A vector whose answer
//! depends on a resolution and does not say so fails here, whatever the generator did.

use loom_vectors::basis::{answer_of, covers, judged_part, Basis, BasisKind, DECISIONS};
use loom_vectors::format::Kind;
use loom_vectors::generate::{basis_for, Scenario};
use loom_vectors::readings::{differing_pointers, Reading, ReadingSet};
use loom_vectors::runner::InProcessKernel;
use loom_vectors::set::{default_cases_dir, load_set, vectors_dir};
use loom_vectors::ReferenceKernel;
use serde_json::json;

fn set() -> Vec<loom_vectors::Vector> {
    load_set(&default_cases_dir())
        .unwrap_or_else(|e| panic!("{}", e[0]))
        .vectors
}

#[test]
fn every_other_reading_changes_only_what_the_vector_says_rests_on_it() {
    let vectors = set();
    let mut problems = Vec::new();
    let mut changed = 0usize;
    for r in Reading::ALL {
        let mut client = InProcessKernel {
            kernel: ReferenceKernel::with_readings(ReadingSet::one(*r)),
        };
        for v in vectors.iter().filter(|v| r.kinds().contains(&v.kind)) {
            let want = judged_part(v.kind, &v.expected);
            let got = match answer_of(&mut client, v) {
                Ok(a) => a,
                Err(e) => {
                    problems.push(format!("{} under {}: no answer: {e}", v.id, r.as_str()));
                    continue;
                }
            };
            let diffs = differing_pointers(&want, &got, &[]);
            if diffs.is_empty() {
                continue;
            }
            changed += 1;
            if v.alternatives.iter().any(|a| {
                a.reading == r.as_str()
                    && loom_kernel::canonical_string(&judged_part(v.kind, &a.expected))
                        == loom_kernel::canonical_string(&got)
            }) {
                continue;
            }
            let paths: Vec<&str> = v
                .basis
                .resolutions
                .iter()
                .filter(|x| x.gap == r.gap())
                .flat_map(|x| x.paths.iter().map(String::as_str))
                .collect();
            let uncovered: Vec<&String> = diffs
                .iter()
                .filter(|d| !paths.iter().any(|p| covers(p, d)))
                .collect();
            if !uncovered.is_empty() {
                problems.push(format!(
                    "{} rests on {} ({}) but its basis does not say so at {:?}",
                    v.id,
                    r.gap(),
                    r.as_str(),
                    uncovered
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(changed > 100, "the readings change only {changed} answers");
}

#[test]
fn every_cited_resolution_is_one_a_reading_moves_or_is_stated_by_review() {
    // A cited GAP that a reading models for the vector's kind must be moved by one of
    // them somewhere in the set: otherwise the citation is stale and makes a spec
    // difference look like a resolution difference.
    let vectors = set();
    let mut moved: std::collections::BTreeSet<(&str, Kind)> = Default::default();
    for r in Reading::ALL {
        let mut client = InProcessKernel {
            kernel: ReferenceKernel::with_readings(ReadingSet::one(*r)),
        };
        for v in vectors.iter().filter(|v| r.kinds().contains(&v.kind)) {
            if v.basis.gaps().contains(&r.gap()) {
                let got = answer_of(&mut client, v).unwrap();
                if !differing_pointers(&judged_part(v.kind, &v.expected), &got, &[]).is_empty() {
                    moved.insert((r.gap(), v.kind));
                }
            }
        }
    }
    for v in &vectors {
        for g in v.basis.gaps() {
            if Reading::modelled_for(g, v.kind) {
                assert!(
                    moved.contains(&(g, v.kind)),
                    "{} cites {g}, which a reading models for {} vectors, yet no reading of {g} moves any {} vector that cites it",
                    v.id,
                    v.kind,
                    v.kind
                );
            } else {
                let r = v.basis.resolutions.iter().find(|x| x.gap == g).unwrap();
                assert_eq!(
                    r.paths,
                    vec![String::new()],
                    "{}: {g} is stated by review alone, so it decides the whole answer",
                    v.id
                );
            }
        }
    }
}

#[test]
fn alternatives_are_the_answers_of_their_readings() {
    for v in set() {
        for a in &v.alternatives {
            let r = Reading::parse(&a.reading)
                .unwrap_or_else(|| panic!("{}: unknown reading {}", v.id, a.reading));
            assert!(
                r.accepted(),
                "{}: {} is not a reading vectors accept",
                v.id,
                a.reading
            );
            assert_eq!(a.gaps, vec![r.gap().to_owned()], "{}", v.id);
            let mut client = InProcessKernel {
                kernel: ReferenceKernel::with_readings(ReadingSet::one(r)),
            };
            let got = answer_of(&mut client, &v).unwrap();
            assert_eq!(
                loom_kernel::canonical_string(&judged_part(v.kind, &a.expected)),
                loom_kernel::canonical_string(&got),
                "{}: the alternative of {} is not that reading's answer",
                v.id,
                a.reading
            );
        }
    }
}

#[test]
fn every_decision_record_of_the_table_names_its_gap() {
    let root = vectors_dir().join("..");
    let readme = std::fs::read_to_string(root.join("docs/decisions/README.md")).unwrap();
    for (gap, record) in DECISIONS {
        let file = record.rsplit('/').next().unwrap();
        let row = readme
            .lines()
            .find(|l| l.contains(&format!("({file})")))
            .unwrap_or_else(|| panic!("docs/decisions/README.md has no row for {file}"));
        assert!(
            row.contains(gap),
            "docs/decisions/README.md: the row of {file} does not list {gap}"
        );
        let text = std::fs::read_to_string(root.join(record)).unwrap();
        assert!(text.contains(gap), "{record} does not mention {gap}");
    }
}

fn tiny(kind: Kind, id: &str, input: serde_json::Value) -> Scenario {
    Scenario::new(kind, id, &["FOLD-04"], "a test scenario", input)
}

fn audit_fact_log() -> serde_json::Value {
    json!({"events": [
        {"id": "e0", "workflowId": "f", "executionId": "x", "eventType": "EXECUTION_STARTED", "sequence": 0, "timestamp": 1, "payload": {"input": 1}},
        {"id": "e1", "workflowId": "f", "executionId": "x", "eventType": "QUOTA_EXCEEDED", "sequence": 1, "timestamp": 2, "payload": {"reason": "r"}}
    ]})
}

#[test]
fn a_scenario_that_states_no_basis_is_refused() {
    let s = tiny(Kind::Fold, "fold-unstated", audit_fact_log());
    let (expected, _) = loom_vectors::generate::expected_for(&s).unwrap();
    let err = basis_for(&s, &expected).unwrap_err();
    assert!(err.contains("states no basis"), "{err}");
}

#[test]
fn a_resolution_the_answer_rests_on_must_be_stated() {
    // An audit fact left inert: GAP-12 decides whether sequence and updatedAt move.
    let s = tiny(Kind::Fold, "fold-audit", audit_fact_log()).spec();
    let (expected, _) = loom_vectors::generate::expected_for(&s).unwrap();
    let err = basis_for(&s, &expected).unwrap_err();
    assert!(err.contains("GAP-12"), "{err}");
    let stated = tiny(Kind::Fold, "fold-audit", audit_fact_log()).rests_on(&["GAP-12"]);
    let (basis, alternatives, changed) = basis_for(&stated, &expected).unwrap();
    assert_eq!(basis.kind, BasisKind::Resolution);
    assert_eq!(basis.gaps(), vec!["GAP-12"]);
    assert_eq!(
        basis.resolutions[0].paths,
        vec!["/state/sequence".to_owned(), "/state/updatedAt".to_owned()]
    );
    assert!(alternatives.is_empty());
    assert!(changed.contains("GAP-12"));
}

#[test]
fn a_spec_basis_carries_nothing_and_a_resolution_basis_names_its_record() {
    assert!(Basis::spec().check().is_ok());
    let mut b = Basis::from_resolutions(vec![loom_vectors::basis::Resolution::new(
        "GAP-12",
        vec!["/state/sequence".into()],
    )]);
    assert!(b.check().is_ok());
    assert_eq!(
        b.resolutions[0].decision,
        "docs/decisions/0001-fold-shapes.md"
    );
    b.resolutions[0].decision = "docs/decisions/0004-ingress.md".into();
    assert!(b.check().is_err(), "a wrong decision record is refused");
    b.kind = BasisKind::Spec;
    assert!(b.check().is_err(), "a spec basis lists no resolution");
}

#[test]
fn a_vector_file_without_a_basis_is_refused() {
    let v = set().into_iter().next().unwrap();
    let mut value = v.to_value();
    value.as_object_mut().unwrap().remove("basis");
    let err = loom_vectors::Vector::from_value(&value, "test").unwrap_err();
    assert!(err.to_string().contains("basis"), "{err}");
}

#[test]
fn decision_0009_counts_the_readings() {
    let text =
        std::fs::read_to_string(vectors_dir().join("../docs/decisions/0009-expectation-basis.md"))
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
    let gaps: std::collections::BTreeSet<&str> = Reading::ALL.iter().map(|r| r.gap()).collect();
    let sentence = format!(
        "{} readings of {} open points",
        Reading::ALL.len(),
        gaps.len()
    );
    assert!(
        text.contains(&sentence),
        "decision 0009 should say `{sentence}`"
    );
}
