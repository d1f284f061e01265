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

/// The schema history as the spec's version table states it (RULES.md, "Version
/// constants": the "new kinds" column), one row per minor this fold reproduces: the
/// version and the kinds that arrived with it. Every kind not listed here predates 1.15.0.
const PINNED_SCHEMA_HISTORY: [(&str, &[&str]); 12] = [
    ("1.15.0", &[]),
    ("1.16.0", &[]),
    ("1.17.0", &[]),
    ("1.18.0", &[]),
    ("1.19.0", &[]),
    ("1.20.0", &[]),
    ("1.21.0", &[]),
    ("1.22.0", &["EVENTS_REHOMED"]),
    ("1.23.0", &["EXECUTION_CONTINUED", "MESSAGE_CONSUMED"]),
    ("1.24.0", &[]),
    ("1.25.0", &["INBOX_QUARANTINED", "INBOX_RELEASED"]),
    ("1.26.0", &[]),
];

#[test]
fn compat_02_every_schema_version_is_pinned_with_its_type_set() {
    // The 1.26.0 pin above is one snapshot: a kind moved to a later minor, or a kind added
    // under an old version, still matches it. Here every version the fold reproduces is
    // pinned with the set it knows, built from the spec's history: the set at a minor is
    // the set before it plus that minor's new kinds, so a type set changes only with a
    // version, and a version that added kinds has them.
    let later: Vec<&str> = PINNED_SCHEMA_HISTORY
        .iter()
        .flat_map(|(_, kinds)| kinds.iter().copied())
        .collect();
    let mut expected: Vec<&str> = PINNED_SCHEMA
        .1
        .iter()
        .copied()
        .filter(|k| !later.contains(k))
        .collect();
    let versions: Vec<FoldVersion> = FoldVersion::all().collect();
    assert_eq!(
        versions.iter().map(ToString::to_string).collect::<Vec<_>>(),
        PINNED_SCHEMA_HISTORY
            .iter()
            .map(|(v, _)| *v)
            .collect::<Vec<_>>(),
        "the fold reproduces exactly the pinned versions"
    );
    for (v, (pinned, added)) in versions.iter().zip(PINNED_SCHEMA_HISTORY) {
        expected.extend(added.iter().copied());
        expected.sort();
        let mut known = known_event_types_at(*v);
        known.sort();
        assert_eq!(
            (v.to_string(), known),
            (pinned.to_owned(), expected.clone())
        );
    }
    // The newest row is the current constant and the current set, from both sides.
    assert_eq!(FoldVersion::CURRENT.to_string(), EVENT_SCHEMA_VERSION);
    assert_eq!(expected, known_event_types());
    // Two neighbouring versions know different sets exactly when the later one added kinds.
    for pair in versions.windows(2) {
        let grew = known_event_types_at(pair[0]) != known_event_types_at(pair[1]);
        let row = PINNED_SCHEMA_HISTORY
            .iter()
            .find(|(v, _)| *v == pair[1].to_string())
            .unwrap();
        assert_eq!(grew, !row.1.is_empty(), "{} -> {}", pair[0], pair[1]);
    }
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

/// FOLD-04: exactly the table's kinds are kernel kinds; a near miss (another case, a
/// letter more or less, a custom kind) is not, so it folds as inert.
#[test]
fn fold_04_known_kinds_are_exactly_the_table() {
    for (kind, _) in EVENT_KINDS_SINCE {
        assert!(loom_kernel::fold::is_known_event_type(kind), "{kind}");
        let lower = kind.to_ascii_lowercase();
        let shorter = &kind[..kind.len() - 1];
        let longer = format!("{kind}S");
        let spaced = format!(" {kind}");
        for miss in [lower.as_str(), shorter, longer.as_str(), spaced.as_str()] {
            assert!(!loom_kernel::fold::is_known_event_type(miss), "{miss}");
        }
    }
    for miss in ["", "ui.progress", "STEP", "Step_started", "_STEP_STARTED"] {
        assert!(!loom_kernel::fold::is_known_event_type(miss), "{miss}");
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

// ---------------------------------------------------------------------------------
// COMPAT-10: the frozen shape pin (spec/pins/frozen-shapes.json).

const FROZEN_SHAPES: &str = include_str!("../../spec/pins/frozen-shapes.json");

/// Envelopes from the pin's compact form `[eventType, payload, metadata?]`.
fn pinned_log(entries: &[Value], extra_field: bool) -> Vec<EventEnvelope> {
    let evs = entries
        .iter()
        .map(|e| {
            let a = e.as_array().expect("[eventType, payload, metadata?]");
            let mut payload = a[1].clone();
            if extra_field {
                if let Value::Object(m) = &mut payload {
                    m.insert("zzAddedLater".into(), json!({"optional": true}));
                }
            }
            let mut ev = ev(a[0].as_str().expect("an event type"), payload);
            if let Some(Value::Object(meta)) = a.get(2) {
                for (k, v) in meta {
                    ev = ev.meta(k, v.clone());
                }
            }
            ev
        })
        .collect();
    log(evs)
}

/// What a folded shape gets wrong against its pin, if anything.
fn shape_problems(shape: &Value, extra_field: bool) -> Vec<String> {
    let id = shape["id"].as_str().unwrap_or("?");
    let state = fold(&pinned_log(shape["log"].as_array().unwrap(), extra_field)).to_value();
    let mut problems = Vec::new();
    for (pointer, want) in shape["expect"].as_object().unwrap() {
        if state.pointer(pointer) != Some(want) {
            problems.push(format!(
                "{id}: {pointer} is {:?}, the pin says {want}",
                state.pointer(pointer)
            ));
        }
    }
    for pointer in shape["absent"].as_array().into_iter().flatten() {
        let p = pointer.as_str().unwrap();
        if let Some(v) = state.pointer(p) {
            problems.push(format!("{id}: {p} is {v}, the pin says it is absent"));
        }
    }
    problems
}

#[test]
fn compat_10_the_frozen_shape_pin_holds_for_both_sets_and_tolerates_additions() {
    let pin: Value = serde_json::from_str(FROZEN_SHAPES).expect("the pin is JSON");
    assert_eq!(pin["rule"], "COMPAT-10");
    let sets = pin["sets"].as_array().unwrap();
    let ids = |name: &str| -> Vec<String> {
        sets.iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("the pin has no `{name}` set"))["shapes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect()
    };
    // The pin covers what COMPAT-10 names for each set (and Wave 2's kinds and fields).
    let covers = |set: &str, wanted: &[&str]| {
        let have = ids(set);
        for w in wanted {
            assert!(
                have.iter().any(|h| h.starts_with(w)),
                "the {set} set of the pin lacks {w}: {have:?}"
            );
        }
    };
    covers(
        "wave-2",
        &[
            "EXECUTION_STARTED.lineage",
            "EXECUTION_STARTED.carry",
            "metadata.forkChain",
            "EXECUTION_SUSPENDED.waits",
            "EXECUTION_RESUMED.waitId",
            "MESSAGE_CONSUMED",
            "PARALLEL_COMPLETED",
            "EXECUTION_CONTINUED",
        ],
    );
    covers(
        "1.25.0",
        &[
            "metadata.seal",
            "INBOX_QUARANTINED",
            "INBOX_RELEASED",
            "MESSAGE_CONSUMED.drop",
            "EXECUTION_STARTED.continuedFrom.carried.quarantined",
        ],
    );
    assert!(
        FROZEN_SHAPES.contains("\"/variables/_quarantined"),
        "the pin must hold the folded `_quarantined` shape"
    );
    let mut problems = Vec::new();
    for set in sets {
        for shape in set["shapes"].as_array().unwrap() {
            // As pinned, and with an optional payload field added later: an additive
            // change keeps every pinned reading.
            problems.extend(shape_problems(shape, false));
            problems.extend(
                shape_problems(shape, true)
                    .into_iter()
                    .map(|p| format!("with an added optional field: {p}")),
            );
            if let Some(key) = shape["kernelMetadataKey"].as_str() {
                // A kernel-only key: a userspace emit carrying it is refused.
                assert!(
                    loom_kernel::ingress::KERNEL_METADATA_KEYS.contains(&key),
                    "`{key}` is no longer a kernel-only metadata key"
                );
                let meta: serde_json::Map<String, Value> =
                    serde_json::from_value(json!({ key: {"v": 1} })).unwrap();
                let state = fold(&log(vec![started()]));
                let refused = validate_user_emit(
                    &state,
                    &EmitSource::Flow,
                    "app.sealed",
                    json!({}),
                    Some(&meta),
                );
                assert!(refused.is_err(), "an emit may set metadata.{key}");
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn compat_10_the_pin_fails_a_renamed_or_rehomed_field() {
    // Judging power: the same shapes with one pinned field renamed (what a
    // non-additive change to the fold looks like from the log's side) no longer match.
    let pin: Value = serde_json::from_str(FROZEN_SHAPES).unwrap();
    let text = FROZEN_SHAPES
        .replace("\"continuedTo\": \"next\"", "\"continuedAs\": \"next\"")
        .replace(
            "\"deliver\": true, \"messageId\": \"m2\"",
            "\"deliverNow\": true, \"messageId\": \"m2\"",
        );
    let renamed: Value = serde_json::from_str(&text).unwrap();
    let failing: Vec<String> = renamed["sets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["shapes"].as_array().unwrap().iter())
        .filter(|s| !shape_problems(s, false).is_empty())
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        failing,
        ["EXECUTION_CONTINUED", "INBOX_RELEASED.operator-deliver"],
        "{pin}"
    );
}

// ---------------------------------------------------------------------------------
// RES-03: the dimension enum pin (spec/pins/resource-dimensions.json).

#[test]
fn res_03_the_six_dimension_enum_is_pinned_and_custom_is_not_a_member() {
    use loom_kernel::fold::handlers_api::RESOURCE_DIMENSIONS;
    let pin: Value =
        serde_json::from_str(include_str!("../../spec/pins/resource-dimensions.json")).unwrap();
    assert_eq!(pin["rule"], "RES-03");
    let names = |k: &str| -> Vec<String> {
        pin["dimensions"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let (core, optional) = (names("core"), names("optional"));
    assert_eq!((core.len(), optional.len()), (3, 3));
    let pinned: Vec<String> = core.iter().chain(&optional).cloned().collect();
    assert_eq!(
        RESOURCE_DIMENSIONS.to_vec(),
        pinned,
        "the kernel's ResourceDimension enum drifted from spec/pins/resource-dimensions.json"
    );
    assert_eq!(pin["payloadFieldsNotDimensions"], json!(["custom"]));
    assert!(!pinned.iter().any(|d| d == "custom"));
    assert!(!RESOURCE_DIMENSIONS.contains(&"custom"));

    // The fold sums exactly the pinned dimensions; `custom` is folded as its own map and
    // a name outside the enum is no dimension at all.
    let mut metered: serde_json::Map<String, Value> =
        pinned.iter().map(|d| (d.clone(), json!(2))).collect();
    metered.insert("custom".into(), json!({"gpu": 3}));
    metered.insert("gpuMs".into(), json!(4));
    let state = fold(&log(vec![
        started(),
        ev("RESOURCE_METERED", Value::Object(metered)),
    ]));
    let r = state
        .variables
        .get("_resources")
        .unwrap()
        .as_object()
        .unwrap();
    let mut keys: Vec<&str> = r.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut want: Vec<&str> = pinned.iter().map(String::as_str).collect();
    want.push("custom");
    want.sort_unstable();
    assert_eq!(keys, want);
    assert_eq!(r["custom"], json!({"gpu": 3}));
    // `custom` alone reports no dimension (and no false zeros).
    let only_custom = fold(&log(vec![
        started(),
        ev("RESOURCE_METERED", json!({"custom": {"gpu": 1}})),
    ]));
    assert_eq!(
        only_custom.variables.get("_resources"),
        Some(&json!({"custom": {"gpu": 1}}))
    );

    // Emit validation bounds exactly the pinned dimensions.
    let s = fold(&log(vec![started()]));
    for d in &pinned {
        let refused = validate_user_emit(
            &s,
            &EmitSource::Flow,
            "RESOURCE_METERED",
            json!({ d.as_str(): -1 }),
            None,
        );
        assert!(refused.is_err(), "a negative `{d}` is accepted");
    }
    // A carried resource map seeds `_resources` only with pinned names (and `custom`).
    let carried = |resources: Value| {
        fold(&log(vec![ev(
            "EXECUTION_STARTED",
            json!({"input": 1, "carry": {"resources": resources}}),
        )]))
        .variables
        .get("_resources")
        .cloned()
    };
    assert_eq!(
        carried(json!({"wallMs": 1, "custom": {"gpu": 1}})),
        Some(json!({"wallMs": 1, "custom": {"gpu": 1}}))
    );
    assert_eq!(carried(json!({"wallMs": 1, "gpuMs": 1})), None);
}
