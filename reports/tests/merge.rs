//! Merging shard reports.

mod common;

use common::*;
use loom_report::{merge, merge_files, CaseResult, MergeError, Report, RuleInfo, Status};

#[test]
fn merge_concatenates_and_summaries_add_up() {
    let a = green_report("vectors", 1, 3);
    let b = sample_report();
    let c = green_report("sim", 3, 2);
    let merged = merge(&[a.clone(), b.clone(), c.clone()]).expect("merge");
    assert!(merged.verify_digest());
    assert_eq!(merged.environment, a.environment);
    assert_eq!(
        merged.shards,
        vec![
            a.environment.clone(),
            b.environment.clone(),
            c.environment.clone()
        ]
    );
    assert_eq!(
        merged.results.len(),
        a.results.len() + b.results.len() + c.results.len()
    );
    let s = &merged.summary;
    assert_eq!(s.total, a.summary.total + b.summary.total + c.summary.total);
    for status in Status::ALL {
        assert_eq!(
            s.by_status.get(status),
            a.summary.by_status.get(status)
                + b.summary.by_status.get(status)
                + c.summary.by_status.get(status),
            "{status}"
        );
    }
    assert_eq!(s.by_area["vectors"].total(), 3 + 2);
    assert_eq!(s.by_area["sim"].total(), 2 + 2);
    assert!(!s.ok);
    assert_eq!(s.failures, b.summary.failures);
    assert_eq!(merged.rules.len(), rules().len());
}

#[test]
fn merge_is_order_independent_apart_from_the_primary_environment() {
    let a = green_report("vectors", 1, 3);
    let b = green_report("sim", 1, 2);
    let ab = merge(&[a.clone(), b.clone()]).unwrap();
    let ba = merge(&[b, a]).unwrap();
    assert_eq!(ab.results, ba.results);
    assert_eq!(ab.summary, ba.summary);
}

#[test]
fn merge_unions_rules_by_id() {
    let a = Report::new(env(1), vec![RuleInfo::new("A-1", "MUST", "A", "a")], vec![]);
    let b = Report::new(
        env(2),
        vec![
            RuleInfo::new("A-1", "MUST", "A", "a"),
            RuleInfo::new("B-1", "MAY", "B", "b"),
        ],
        vec![],
    );
    let merged = merge(&[a, b]).unwrap();
    let ids: Vec<&str> = merged.rules.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["A-1", "B-1"]);
    assert_eq!(merged.summary.rules_total, 2);
}

#[test]
fn merge_rejects_conflicting_rule_descriptions() {
    let a = Report::new(env(1), vec![RuleInfo::new("A-1", "MUST", "A", "a")], vec![]);
    let b = Report::new(
        env(2),
        vec![RuleInfo::new("A-1", "SHOULD", "A", "a")],
        vec![],
    );
    let err = merge(&[a, b]).unwrap_err();
    assert!(matches!(err, MergeError::ConflictingRule { .. }), "{err}");
    assert!(err.to_string().contains("A-1"));
}

#[test]
fn merge_unites_subjects_and_refuses_one_id_for_two_implementations() {
    use loom_report::{Subject, SubjectKind};
    let store = Subject::new("store", SubjectKind::Store, "acme-store").with_version("1.0");
    let a = Report::new(
        env(1),
        rules(),
        vec![CaseResult::pass("kits", "k", "a", ["A-1"])],
    )
    .with_subjects(vec![store.clone().with_endpoint("cmd:a")]);
    let b = Report::new(
        env(2),
        rules(),
        vec![CaseResult::pass("kits", "k", "b", ["A-1"])],
    )
    .with_subjects(vec![store.clone().with_endpoint("cmd:b")]);
    let merged = merge(&[a.clone(), b]).unwrap();
    assert_eq!(merged.subjects.len(), 1);
    assert!(merged
        .results
        .iter()
        .all(|r| r.subject.as_deref() == Some("store")));
    assert!(merged.verify_digest());
    let other = Report::new(
        env(3),
        rules(),
        vec![CaseResult::pass("kits", "k", "c", ["A-1"])],
    )
    .with_subjects(vec![Subject::new(
        "store",
        SubjectKind::Store,
        "other-store",
    )]);
    let err = merge(&[a, other]).unwrap_err();
    assert!(
        matches!(err, MergeError::ConflictingSubject { .. }),
        "{err}"
    );
}

#[test]
fn merge_rejects_duplicate_cases_naming_them() {
    let a = green_report("vectors", 1, 3);
    let b = Report::new(
        env(2),
        rules(),
        vec![CaseResult::pass("vectors", "suite", "case-1", ["FOLD-01"])],
    );
    let err = merge(&[a, b]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("vectors/suite/case-1"), "{text}");
    assert!(
        text.contains("input #1") && text.contains("input #2"),
        "{text}"
    );
}

#[test]
fn merge_rejects_a_bad_digest_naming_the_input() {
    let a = green_report("vectors", 1, 3);
    let mut b = green_report("sim", 2, 3);
    b.results[0].status = Status::Fail; // tampered without recomputing
    let err = merge(&[a, b]).unwrap_err();
    assert!(
        matches!(&err, MergeError::BadDigest { input } if input == "input #2"),
        "{err}"
    );
}

#[test]
fn merge_rejects_another_schema_version() {
    let a = green_report("vectors", 1, 3);
    let mut b = green_report("sim", 2, 3);
    b.schema_version = loom_report::SCHEMA_VERSION + 1;
    b.recompute();
    let err = merge(&[a, b]).unwrap_err();
    assert!(
        matches!(err, MergeError::SchemaVersion { found: 4, .. }),
        "{err}"
    );
}

#[test]
fn merge_of_nothing_is_an_error() {
    assert!(matches!(merge(&[]), Err(MergeError::NoInputs)));
}

#[test]
fn merging_merged_reports_flattens_shards() {
    let ab = merge(&[green_report("a", 1, 1), green_report("b", 2, 1)]).unwrap();
    let abc = merge(&[ab, green_report("c", 3, 1)]).unwrap();
    let seeds: Vec<Option<u64>> = abc.shards.iter().map(|e| e.seed).collect();
    assert_eq!(seeds, [Some(1), Some(2), Some(3)]);
}

#[test]
fn merge_files_names_the_file() {
    let dir = std::env::temp_dir().join(format!("loom-report-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("shard-1.json");
    std::fs::write(&good, green_report("a", 1, 2).to_json_pretty()).unwrap();
    let mut tampered = green_report("b", 2, 2);
    tampered.results[0].case_id = "other".into();
    let bad = dir.join("shard-2.json");
    std::fs::write(&bad, tampered.to_json_pretty()).unwrap();
    let broken = dir.join("shard-3.json");
    std::fs::write(
        &broken,
        "{\"schema\": \"loom-report\", \"schema_version\": 1",
    )
    .unwrap();

    let merged = merge_files(&[&good]).unwrap();
    assert_eq!(merged.results.len(), 2);
    let err = merge_files(&[&good, &bad]).unwrap_err().to_string();
    assert!(
        err.contains("shard-2.json") && err.contains("digest"),
        "{err}"
    );
    let err = merge_files(&[&good, &broken]).unwrap_err().to_string();
    assert!(err.contains("shard-3.json"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
