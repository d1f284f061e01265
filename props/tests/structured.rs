//! The structure-aware log model (`loom_props::structured`): what its bytes mean, and
//! that the libFuzzer options of its targets match the model's longest input.

use loom_props::limits::LOG_EVENTS_MAX;
use loom_props::structured::{
    fold_snapshot_structured, Ev, LogModel, SnapshotModel, TotalModel, UnknownModel,
    VersionedModel, CORRUPTION_KIND_MIN, EVENT_RECORD_BYTES,
};
use loom_props::{decode, Target};
use std::path::Path;

fn snapshot(bytes: &[u8]) -> SnapshotModel {
    decode::<SnapshotModel>(bytes).expect("every byte string decodes")
}

#[test]
fn snap_01_header_then_records_make_the_log() {
    // Header 160: the current writer, a leading start, three points; two decisions.
    let m = snapshot(&[160, 1, 2, 3, 12, 0, 6, 2, 13, 0, 0, 1]);
    assert_eq!(m.writer, loom_kernel::fold::FoldVersion::CURRENT);
    assert_eq!(m.ks, vec![1, 2, 3]);
    assert!(m.log.started);
    assert_eq!(m.log.events.len(), 2);
    assert!(matches!(m.log.events[0], Ev::Decision { id: 0, .. }));
    let envelopes = m.log.envelopes();
    let kinds: Vec<&str> = envelopes.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "EXECUTION_STARTED",
            "DECISION_RECORDED",
            "DECISION_RECORDED"
        ]
    );
    assert_eq!(
        envelopes.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(envelopes[1].payload["id"], "d1");
    fold_snapshot_structured(&m).unwrap();
}

#[test]
fn fold_05_a_corruption_record_corrupts_the_event_before_it() {
    // STEP_STARTED, then corruption 3 (a `__proto__` key) of it, in the full grammar.
    let m = snapshot(&[160, 0, 0, 0, 1, 0, 6, 7, CORRUPTION_KIND_MIN, 3, 1, 0]);
    assert_eq!(m.log.events.len(), 1);
    assert_eq!(m.log.corruptions.len(), 1);
    assert_eq!(
        m.log.corruptions[0].0, 1,
        "index 1: after the leading start"
    );
    let envelopes = m.log.envelopes();
    assert!(
        envelopes[1].payload.get("__proto__").is_some()
            || envelopes[1].payload.get("nested").is_some(),
        "{}",
        envelopes[1].payload
    );
    // An older writer reads the same kind byte as an event (legacy grammar, no corruption).
    let legacy = snapshot(&[165, 0, 0, 0, 1, 0, 6, 7, CORRUPTION_KIND_MIN, 3, 1, 0]);
    assert_eq!(legacy.log.corruptions.len(), 0);
    assert_eq!(legacy.log.events.len(), 2);
}

#[test]
fn snap_01_records_past_the_cap_are_ignored() {
    let mut b = vec![160, 0, 0, 0];
    b.extend(std::iter::repeat_n([1u8, 0, 0, 0], LOG_EVENTS_MAX + 5).flatten());
    let m = snapshot(&b);
    assert_eq!(m.log.events.len(), LOG_EVENTS_MAX);
    assert_eq!(
        SnapshotModel::INPUT_BYTES_MAX,
        SnapshotModel::HEADER_BYTES + LOG_EVENTS_MAX * EVENT_RECORD_BYTES
    );
    // A byte past INPUT_BYTES_MAX changes nothing.
    let mut longer = b[..SnapshotModel::INPUT_BYTES_MAX].to_vec();
    let before = snapshot(&longer);
    longer.push(12);
    assert_eq!(snapshot(&longer), before);
}

#[test]
fn fold_01_every_kind_byte_makes_a_known_or_deliberately_foreign_kind() {
    let foreign = ["app.progress", "NOT_A_KERNEL_KIND"];
    for kind in 0..CORRUPTION_KIND_MIN {
        let e = Ev::from_record([kind, 0x85, 7, 9], false).spec();
        assert!(
            loom_kernel::fold::is_known_event_type(&e.event_type)
                || foreign.contains(&e.event_type.as_str()),
            "kind byte {kind}: {}",
            e.event_type
        );
    }
    // The legacy grammar never writes a 1.22+ kind.
    for kind in 0..=255u8 {
        let e = Ev::from_record([kind, 0x85, 7, 9], true).spec();
        assert!(
            !e.event_type.starts_with("INBOX_")
                && ![
                    "MESSAGE_CONSUMED",
                    "EXECUTION_CONTINUED",
                    "EVENTS_REHOMED",
                    "PARALLEL_COMPLETED"
                ]
                .contains(&e.event_type.as_str()),
            "legacy kind byte {kind}: {}",
            e.event_type
        );
    }
}

#[test]
fn fold_04_an_empty_input_is_an_empty_or_started_log() {
    let t = decode::<TotalModel>(&[]).unwrap();
    assert!(t.log.events.is_empty());
    let v = decode::<VersionedModel>(&[0, 7, 0]).unwrap();
    assert!(!v.log.started, "flags 7: no leading start");
    let u = decode::<UnknownModel>(&[0, 0x80, 0, 0, 0, 0]).unwrap();
    assert!(
        !loom_kernel::fold::is_known_event_type(&u.kind),
        "{}",
        u.kind
    );
    let _: LogModel = t.log;
}

/// `fuzz/options/<target>.options` gives each structured target the model's longest
/// meaningful input as libFuzzer's `max_len` (scripts/fuzz passes it).
#[test]
fn fuzz_options_max_len_is_the_models_longest_input() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/options");
    for (target, max) in [
        (
            Target::FoldSnapshotStructured,
            SnapshotModel::INPUT_BYTES_MAX,
        ),
        (Target::FoldTotalStructured, TotalModel::INPUT_BYTES_MAX),
        (
            Target::VersionedFoldStructured,
            VersionedModel::INPUT_BYTES_MAX,
        ),
        (
            Target::FoldRoundtripStructured,
            UnknownModel::INPUT_BYTES_MAX,
        ),
    ] {
        let path = root.join(format!("{}.options", target.name()));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let max_len: usize = text
            .lines()
            .find_map(|l| l.strip_prefix("max_len = "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{path:?} has no max_len"));
        assert_eq!(max_len, max, "{}", target.name());
        assert!(text.contains("[libfuzzer]"), "{path:?}");
    }
}
