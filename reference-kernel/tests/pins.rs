//! ABI and event-schema pins (ABI, COMPAT, CONF-02). Each pin stores a version TOGETHER
//! with what it versions, so changing one without the other fails: that is how an
//! undocumented drift is caught. To change a pin on purpose, bump the version constant
//! in `src/versions.rs`, update the pinned table here, and record it in CHANGELOG.md.

mod common;
use common::*;
use loom_kernel::fold::{
    fold_as, known_event_types, known_event_types_at, ExecutionState, FoldVersion,
    EVENT_KINDS_SINCE,
};
use loom_kernel::ingress::{validate_user_emit, EmitSource};
use loom_kernel::versions::*;
use loom_kernel::{digest::sha256_hex, fold, EventEnvelope};
use proptest::prelude::*;
use serde_json::{json, Value};

/// (KERNEL_ABI_VERSION, [(name, since, feature flag)]).
/// One pinned syscall: (name, since, feature flag).
type PinnedSyscall = (&'static str, &'static str, Option<&'static str>);

const PINNED_ABI: (&str, [PinnedSyscall; 13]) = (
    "1.3.0",
    [
        ("execute", "1.0.0", None),
        ("run", "1.0.0", None),
        ("decide", "1.0.0", None),
        ("parallel", "1.0.0", None),
        ("suspend", "1.0.0", None),
        ("sleep", "1.0.0", None),
        ("sleepUntil", "1.0.0", None),
        ("emit", "1.0.0", None),
        ("stream", "1.0.0", None),
        ("ui", "1.0.0", None),
        ("continueAsNew", "1.3.0", Some("continueAsNew")),
        ("receive", "1.3.0", Some("receive")),
        ("select", "1.3.0", Some("select")),
    ],
);

/// (EVENT_SCHEMA_VERSION, sorted knownEventTypes()).
const PINNED_SCHEMA: (&str, [&str; 29]) = (
    "1.26.0",
    [
        "APPROVAL_GRANTED",
        "DECISION_RECORDED",
        "EFFECT_DENIED",
        "EFFECT_INDOUBT",
        "EGRESS_DENIED",
        "EVENTS_REHOMED",
        "EXECUTION_CANCELLED",
        "EXECUTION_COMPLETED",
        "EXECUTION_CONTINUED",
        "EXECUTION_FAILED",
        "EXECUTION_MIGRATED",
        "EXECUTION_RECOVERED",
        "EXECUTION_RESUMED",
        "EXECUTION_STARTED",
        "EXECUTION_SUSPENDED",
        "INBOX_QUARANTINED",
        "INBOX_RELEASED",
        "MESSAGE_CONSUMED",
        "OUTCOME_RECORDED",
        "PARALLEL_COMPLETED",
        "QUOTA_EXCEEDED",
        "RESOURCE_METERED",
        "SAFETY_BLOCKED",
        "STEP_CANCELLED",
        "STEP_COMPLETED",
        "STEP_FAILED",
        "STEP_RETRYING",
        "STEP_STARTED",
        "TIMER_FIRED",
    ],
);

fn catalogue() -> Vec<(&'static str, &'static str, Option<&'static str>)> {
    SYSCALL_CATALOGUE
        .iter()
        .map(|s| (s.name, s.since, s.feature))
        .collect()
}

#[test]
fn abi_01_and_abi_07_syscall_catalogue_pinned_with_its_version() {
    assert_eq!(
        (KERNEL_ABI_VERSION, catalogue()),
        (PINNED_ABI.0, PINNED_ABI.1.to_vec())
    );
    // Every `since` is a version no newer than the ABI itself; a new syscall is a MINOR bump.
    let abi = SemVer::parse(KERNEL_ABI_VERSION).unwrap();
    for s in SYSCALL_CATALOGUE {
        let since = SemVer::parse(s.since).unwrap();
        assert!(since <= abi && since.major == abi.major, "{}", s.name);
    }
}

#[test]
fn abi_02_base_syscalls() {
    let base: Vec<_> = SYSCALL_CATALOGUE
        .iter()
        .filter(|s| s.feature.is_none())
        .map(|s| s.name)
        .collect();
    assert_eq!(
        base,
        [
            "execute",
            "run",
            "decide",
            "parallel",
            "suspend",
            "sleep",
            "sleepUntil",
            "emit",
            "stream",
            "ui"
        ]
    );
}

#[test]
fn abi_03_kernel_abi_1_3_0_reserves_wave_2_behind_flags() {
    assert_eq!(KERNEL_ABI_VERSION, "1.3.0");
    let wave2: Vec<_> = SYSCALL_CATALOGUE
        .iter()
        .filter_map(|s| s.feature.map(|f| (s.name, f)))
        .collect();
    assert_eq!(
        wave2,
        [
            ("continueAsNew", "continueAsNew"),
            ("receive", "receive"),
            ("select", "select")
        ]
    );
}

#[test]
fn abi_04_effective_syscalls_follow_the_flags() {
    for bits in 0..8u8 {
        let f = KernelFeatures {
            continue_as_new: bits & 1 != 0,
            receive: bits & 2 != 0,
            select: bits & 4 != 0,
            sha256_flow_hash: false,
        };
        let list = effective_syscalls(&f);
        assert_eq!(list.contains(&"continueAsNew"), f.continue_as_new);
        assert_eq!(list.contains(&"receive"), f.receive);
        assert_eq!(list.contains(&"select"), f.select);
        assert_eq!(list.len(), 10 + bits.count_ones() as usize);
        assert!(
            !list.contains(&"negotiateBudget"),
            "a helper over decide, not a syscall"
        );
    }
}

#[test]
fn abi_08_typed_failures_left_the_abi_at_1_1_0() {
    assert_eq!(ABI_HISTORY[0], ("1.17.0", "1.1.0"));
    assert_eq!(
        *ABI_HISTORY.last().unwrap(),
        (EVENT_SCHEMA_VERSION, KERNEL_ABI_VERSION)
    );
    assert!(
        !SYSCALL_CATALOGUE
            .iter()
            .any(|s| s.name == "fail" || s.name == "compensate"),
        "TYPED-01: no fail syscall"
    );
}

#[test]
fn abi_09_state_has_exactly_six_fields() {
    let v = fold(&log(vec![started(), step_started("a")])).to_value();
    let mut keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "frames",
            "sequence",
            "startedAt",
            "status",
            "updatedAt",
            "variables"
        ]
    );
    assert!(
        v["frames"]["a"].get("status").is_some(),
        "a task's lifecycle lives in its frame"
    );
}

#[test]
fn abi_11_and_compat_02_event_schema_pinned_with_its_version() {
    assert_eq!(
        (EVENT_SCHEMA_VERSION, known_event_types().to_vec()),
        (PINNED_SCHEMA.0, PINNED_SCHEMA.1.to_vec())
    );
    let mut sorted = known_event_types().to_vec();
    sorted.sort();
    assert_eq!(sorted, known_event_types(), "the pinned set is kept sorted");
}

#[test]
fn compat_01_new_kinds_only_arrive_with_minor_bumps() {
    // Each kind's `since` minor is at most the current one, and every older fold treats a
    // newer kind as unknown (absence is legacy).
    let current = FoldVersion::CURRENT.minor();
    for (kind, since) in EVENT_KINDS_SINCE {
        assert!(since <= current, "{kind}");
        for v in FoldVersion::all() {
            assert_eq!(
                known_event_types_at(v).contains(&kind),
                v.has(since),
                "{kind} at {v}"
            );
        }
    }
}

#[test]
fn abi_13_wire_abi_version() {
    assert_eq!(WIRE_ABI_VERSION, "1.0.0");
}

fn chain(events: &[EventEnvelope]) -> String {
    let mut acc = String::new();
    for e in events {
        acc =
            sha256_hex(format!("{acc}{}", loom_kernel::canonical_string(&e.to_value())).as_bytes());
    }
    acc
}

#[test]
fn compat_09_folding_under_1_23_or_1_24_leaves_event_bytes_and_chains_unchanged() {
    let events = log(vec![
        started(),
        decision("a", json!(1)),
        decision("b", json!(2)),
        step_started("s"),
    ]);
    let before = chain(&events);
    let _ = fold_as(
        FoldVersion::from_minor(23).unwrap(),
        &ExecutionState::new(),
        &events,
    );
    let _ = fold_as(
        FoldVersion::from_minor(24).unwrap(),
        &ExecutionState::new(),
        &events,
    );
    assert_eq!(chain(&events), before);
    assert_eq!(WIRE_ABI_VERSION, "1.0.0");
}

#[test]
fn compat_10_frozen_wave_2_and_1_25_shapes() {
    // The field names each frozen shape folds (docs/decisions/0001-fold-shapes.md). A
    // change to any of them must be additive: this pin fails on a rename or removal.
    let events = log(vec![
        ev(
            "EXECUTION_STARTED",
            json!({"input": 1, "principal": "p", "parent": "q", "chain": ["q"], "codeHash": "sha256:0",
            "carry": {"resources": {"tokens": 1}, "inbox": {"t": {"consumed": 1}}},
            "continuedFrom": {"executionId": "q", "carried": {"quarantined": {"t": [{"messageId": "m0", "seq": 0}]}}}}),
        ),
        ev(
            "EXECUTION_SUSPENDED",
            json!({"on": "g", "waits": [{"id": "w"}]}),
        ),
        ev("EXECUTION_RESUMED", json!({"waitId": "w", "answer": 1})).kernel(),
        ev(
            "MESSAGE_CONSUMED",
            json!({"topic": "t", "messageId": "m1", "waitId": "w2", "message": 2}),
        )
        .kernel(),
        ev("PARALLEL_COMPLETED", json!({"scopeId": "s", "members": []})).kernel(),
        ev(
            "INBOX_QUARANTINED",
            json!({"topic": "u", "messageId": "m2"}),
        )
        .kernel(),
        ev(
            "INBOX_RELEASED",
            json!({"topic": "u", "auto": true, "deliver": true}),
        )
        .kernel(),
        ev("EXECUTION_CONTINUED", json!({"continuedTo": "next"})).kernel(),
    ]);
    let v = fold(&events).to_value();
    let vars = v["variables"].as_object().unwrap();
    let mut keys: Vec<&str> = vars.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "_chain",
            "_codeHash",
            "_continuedTo",
            "_inbox",
            "_input",
            "_parent",
            "_principal",
            "_quarantined",
            "_resources",
            "_scopes",
            "_waitAnswers",
            "_waits"
        ]
    );
    assert_eq!(
        vars["_quarantined"]["u"][0]["released"],
        json!({"by": "auto", "deliver": true})
    );
    assert_eq!(
        vars["_inbox"]["t"],
        json!({"consumed": 2, "lastMessageId": "m1"})
    );
    assert_eq!(v["status"], json!("continued"));
}

#[test]
fn abi_15_conventional_ids_are_not_reserved() {
    let state = fold(&log(vec![started()]));
    for id in ["effect:s#1:k", "step#retry:2", "plain"] {
        assert!(
            validate_user_emit(
                &state,
                &EmitSource::Flow,
                "DECISION_RECORDED",
                json!({"id": id, "choice": 1}),
                None
            )
            .is_ok(),
            "{id}"
        );
    }
    assert!(validate_user_emit(
        &state,
        &EmitSource::Flow,
        "DECISION_RECORDED",
        json!({"id": "__loom_x", "choice": 1}),
        None
    )
    .is_err());
    assert_eq!(loom_kernel::fold::DIVERGED_GATE, "__loom_diverged__");
}

proptest! {
    #[test]
    fn abi_14_non_kernel_metadata_keys_have_no_fold_effect(
        key in "[a-zA-Z]{1,8}".prop_filter("not a kernel key", |k| !["kernel", "flowEmit", "forkChain", "forkedBy", "seal"].contains(&k.as_str())),
        value in prop_oneof![Just(json!(true)), Just(json!("x")), Just(json!({"a": 1}))],
    ) {
        let plain = log(vec![started(), step_started("a"), decision("d", json!(1)), suspended("g"), resumed(json!(2))]);
        let tagged: Vec<EventEnvelope> = plain.iter().cloned().map(|mut e| {
            e.metadata.get_or_insert_with(Default::default).insert(key.clone(), value.clone());
            e
        }).collect();
        prop_assert_eq!(canon(&fold(&plain)), canon(&fold(&tagged)));
    }
}

#[test]
fn kernel_metadata_keys_the_fold_reads() {
    // ABI-14's positive side: flowEmit counts, kernel gates, fork keys fill lineage, seal is ignored.
    let base = log(vec![ev("EXECUTION_STARTED", json!({"input": 1}))]);
    let with = |k: &str, v: Value| {
        let mut e = base.clone();
        e[0].metadata = Some([(k.to_string(), v)].into_iter().collect());
        canon(&fold(&e))
    };
    let plain = canon(&fold(&base));
    assert_ne!(with("flowEmit", json!("abc")), plain);
    assert_ne!(with("forkedBy", json!("p")), plain);
    assert_eq!(with("seal", json!({"v": 1})), plain);
}
