//! The report digest: stable across identical runs, sensitive to content,
//! and checked by `verify_digest`.

mod common;

use common::*;
use loom_report::{canonical_json, Report, Status};

#[test]
fn digest_is_stable_across_identical_runs() {
    let a = sample_report();
    let b = sample_report();
    assert_eq!(a.digest, b.digest);
    assert!(a.digest.starts_with("sha256:"));
    assert_eq!(a.digest.len(), "sha256:".len() + 64);
}

#[test]
fn digest_ignores_durations_and_start_time() {
    let a = sample_report();
    let mut results = sample_results();
    for (i, r) in results.iter_mut().enumerate() {
        r.duration_ms = Some(1000 + i as u64);
    }
    let mut e = env(7);
    e.started_at = Some("2030-01-01T00:00:00Z".to_string());
    let b = Report::new(e, rules(), results);
    assert_eq!(a.digest, b.digest);
}

#[test]
fn digest_ignores_input_order() {
    let a = sample_report();
    let mut results = sample_results();
    results.reverse();
    let mut rules = rules();
    rules.reverse();
    let b = Report::new(env(7), rules, results);
    assert_eq!(a.digest, b.digest);
    assert_eq!(a, b);
}

#[test]
fn digest_changes_when_anything_that_matters_changes() {
    let base = sample_report().digest;
    type Edit = fn(&mut Report);
    let edits: &[(&str, Edit)] = &[
        ("status", |r| r.results[0].status = Status::Pass),
        ("message", |r| r.results[0].message = Some("other".into())),
        ("rule cited", |r| r.results[0].rules.push("FOLD-01".into())),
        ("case id", |r| r.results[0].case_id.push('x')),
        ("seed", |r| r.environment.seed = Some(8)),
        ("rule summary", |r| r.rules[0].summary.push('.')),
        ("extra env", |r| {
            r.environment.extra.insert("k".into(), serde_json::json!(1));
        }),
    ];
    for (what, edit) in edits {
        let mut r = sample_report();
        edit(&mut r);
        r.recompute();
        assert_ne!(r.digest, base, "changing the {what} must change the digest");
    }
}

#[test]
fn verify_digest_detects_tampering() {
    let mut r = sample_report();
    assert!(r.verify_digest());
    r.results[1].status = Status::Xfail;
    assert!(!r.verify_digest(), "edited result");
    let mut r = sample_report();
    r.summary.ok = true;
    assert!(!r.verify_digest(), "edited summary");
    let mut r = sample_report();
    r.digest = "sha256:00".into();
    assert!(!r.verify_digest(), "edited digest");
}

#[test]
fn digest_survives_a_json_round_trip() {
    let r = sample_report();
    let back = Report::from_json_str(&r.to_json_pretty()).expect("round trip");
    assert_eq!(back, r);
    assert!(back.verify_digest());
}

#[test]
fn digest_does_not_depend_on_key_order_in_the_file() {
    // Re-serialize through the canonical form (different key order from the
    // struct order) and parse again: same report, same digest.
    let r = sample_report();
    let value = serde_json::to_value(&r).unwrap();
    let back = Report::from_json_str(&canonical_json(&value)).unwrap();
    assert!(back.verify_digest());
}

#[test]
fn a_null_hello_survives_the_round_trip_through_the_file() {
    // An adapter that failed its handshake has no hello; a caller may hand in JSON null.
    let mut e = env(7);
    e.implementation_hello = Some(serde_json::Value::Null);
    let subject = loom_report::Subject::new("kernel", loom_report::SubjectKind::Kernel, "k")
        .with_hello(serde_json::Value::Null);
    let written = Report::new(e, rules(), sample_results()).with_subjects(vec![subject]);
    let read = Report::from_json_str(&written.to_json_pretty()).unwrap();
    assert!(read.verify_digest(), "the report read back verifies");
    assert_eq!(read.digest, written.digest);
}
