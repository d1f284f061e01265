//! The differential campaign (`loom vectors fuzz`): no finding on the faithful kernel;
//! every fuzz-only wrong kernel found within a stated budget of cases, with the right
//! rule; a sample of the vector-caught ones found too; and the vector it writes fails
//! on the wrong kernel and passes on the reference (the replay loop of `--extra`).
//!
//! Budgets are case counts with fixed seeds, so the outcome is the same on every
//! machine; `docs/guides/kernel-implementers.md` states them.

use loom_report::Status;
use loom_vectors::fuzz::{run_campaign, Check, FuzzConfig, FuzzReport};
use loom_vectors::runner::{run_vector, Claims, InProcessKernel, KernelClient};
use loom_vectors::wrong::Bug;
use loom_vectors::{KernelProcess, KernelProcessConfig, ReferenceKernel};

/// Cases the campaign needs at most to find each fuzz-only bug (all checks together).
const FUZZ_ONLY_BUDGET_CASES: u64 = 3_000;
/// Cases the faithful kernel must get through with no finding.
const FAITHFUL_CASES: u64 = 600;

fn campaign(kernel: &mut dyn KernelClient, checks: &[Check], cases: u64, seed: u64) -> FuzzReport {
    let config = FuzzConfig {
        seed,
        cases: Some(cases),
        cases_per_check: None,
        time_ms: None,
        checks: checks.to_vec(),
        shrink_iters_max: 256,
        stop_after_findings: Some(1),
    };
    run_campaign(kernel, &config, &mut |_| {})
}

fn checks_for(bug: Bug) -> Vec<Check> {
    let mut out = Vec::new();
    for kind in bug.kinds() {
        match *kind {
            "fold" | "normalize" => {
                out.push(Check::Fold);
                out.push(Check::Restore);
            }
            "digest" => out.push(Check::Digest),
            "ingress" => out.push(Check::Ingress),
            "emit" => out.push(Check::Emit),
            _ => {}
        }
    }
    out.dedup();
    out
}

#[test]
fn conf_01_the_faithful_kernel_has_no_finding() {
    let mut kernel = InProcessKernel::default();
    let report = campaign(&mut kernel, &Check::ALL, FAITHFUL_CASES, 7);
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    assert!(report.aborted.is_none(), "{:?}", report.aborted);
    assert_eq!(report.cases, FAITHFUL_CASES);
    for check in Check::ALL {
        assert!(
            report.cases_by_check.get(&check).copied().unwrap_or(0) > 0,
            "{} ran no case",
            check.as_str()
        );
    }
}

/// Runs the campaign against `bug` and returns the rule it found, with the case count.
fn hunt(bug: Bug, budget: u64) -> Result<(String, u64), String> {
    let mut kernel = InProcessKernel {
        kernel: ReferenceKernel::with_bug(bug),
    };
    let report = campaign(&mut kernel, &checks_for(bug), budget, 1);
    let Some(f) = report.findings.first() else {
        return Err(format!(
            "{}: no finding in {} cases ({:?})",
            bug.as_str(),
            report.cases,
            report.cases_by_check
        ));
    };
    if !f
        .divergence
        .rules()
        .iter()
        .any(|r| bug.must_fail_rules().contains(r))
    {
        return Err(format!(
            "{}: found as {:?} (wanted one of {:?}) at {:?}: {}",
            bug.as_str(),
            f.divergence.rules(),
            bug.must_fail_rules(),
            f.divergence.path,
            f.divergence.message
        ));
    }
    // The written vector reproduces it and is right about the reference.
    let Some(v) = &f.vector else {
        return Err(format!("{}: the finding has no vector", bug.as_str()));
    };
    let mut wrong = InProcessKernel {
        kernel: ReferenceKernel::with_bug(bug),
    };
    let claims = Claims::from_hello(wrong.hello().map_err(|e| e.to_string())?);
    let replay = run_vector(&mut wrong, &claims, v);
    if replay.status != Status::Fail {
        return Err(format!(
            "{}: the written vector {} is {} on the wrong kernel",
            bug.as_str(),
            v.id,
            replay.status
        ));
    }
    let mut reference = InProcessKernel::default();
    let claims = Claims::from_hello(reference.hello().map_err(|e| e.to_string())?);
    let fixed = run_vector(&mut reference, &claims, v);
    if fixed.status != Status::Pass {
        return Err(format!(
            "{}: the written vector {} is {} on the reference",
            bug.as_str(),
            v.id,
            fixed.status
        ));
    }
    Ok((f.divergence.rule.to_owned(), f.found_at_case))
}

#[test]
fn every_fuzz_only_bug_is_found_within_budget() {
    let bugs: Vec<Bug> = Bug::ALL.iter().copied().filter(|b| b.fuzz_only()).collect();
    assert!(!bugs.is_empty());
    let mut problems = Vec::new();
    for bug in bugs {
        let t = std::time::Instant::now();
        match hunt(bug, FUZZ_ONLY_BUDGET_CASES) {
            Ok((rule, at)) => eprintln!(
                "{:<36} found as {rule} at case {at} in {:?}",
                bug.as_str(),
                t.elapsed()
            ),
            Err(e) => problems.push(e),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Bugs the vectors catch that the campaign finds too, one or more per check.
const ALSO_FOUND_BY_THE_CAMPAIGN: [Bug; 8] = [
    Bug::StepFailedFailsExecution,
    Bug::NoSeq,
    Bug::NullResumeAlwaysPassthrough,
    Bug::RestoreTailOffByOne,
    Bug::KeysByCodePoint,
    Bug::RefusedResumeAppends,
    Bug::GateBeforeIdentity,
    Bug::EmitAllowsKernelTypes,
];

#[test]
fn the_campaign_finds_vector_caught_bugs_too() {
    let mut problems = Vec::new();
    for bug in ALSO_FOUND_BY_THE_CAMPAIGN {
        let t = std::time::Instant::now();
        match hunt(bug, FUZZ_ONLY_BUDGET_CASES) {
            Ok((rule, at)) => eprintln!(
                "{:<36} found as {rule} at case {at} in {:?}",
                bug.as_str(),
                t.elapsed()
            ),
            Err(e) => problems.push(e),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn over_the_protocol_a_wrong_adapter_is_found_and_the_reference_adapter_is_not() {
    let start = |cmd: String| {
        KernelProcess::start(KernelProcessConfig::new(cmd)).expect("the adapter starts")
    };
    let mut good = start(env!("CARGO_BIN_EXE_reference-kernel-adapter").to_owned());
    let report = campaign(&mut good, &Check::ALL, 200, 3);
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    let mut bad = start(format!(
        "{} --bug {}",
        env!("CARGO_BIN_EXE_wrong-kernel"),
        Bug::KeysByCodePoint.as_str()
    ));
    let report = campaign(&mut bad, &[Check::Digest], FUZZ_ONLY_BUDGET_CASES, 3);
    let f = report
        .findings
        .first()
        .expect("the campaign finds the key-order bug");
    assert_eq!(f.divergence.rule, "EMIT-04", "{f:#?}");
}

/// The guide states the budgets this file checks.
#[test]
fn the_guide_states_these_budgets() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/guides/kernel-implementers.md"
    ))
    .expect("the guide")
    .split_whitespace()
    .collect::<Vec<_>>()
    .join(" ");
    let thousands = |n: u64| {
        let s = n.to_string();
        if s.len() > 3 {
            format!("{},{}", &s[..s.len() - 3], &s[s.len() - 3..])
        } else {
            s
        }
    };
    use loom_vectors::fuzz::cases::{
        LONG_LOG_CUSTOM_NAMES, LONG_LOG_EVENTS_MAX, LONG_LOG_MEDIUM_EVENTS_MAX, LONG_LOG_ONE_IN,
        LONG_LOG_THOUSANDS_ONE_IN, LONG_LOG_TOPICS, UNKNOWN_METADATA_ONE_IN,
    };
    use loom_vectors::fuzz::LONG_LOG_SHRINK_STEPS_MAX;
    let topics = ["", "one", "two", "three", "four"][LONG_LOG_TOPICS.len()];
    for phrase in [
        format!("within {} cases", thousands(FUZZ_ONLY_BUDGET_CASES)),
        format!("no finding in {} cases", thousands(FAITHFUL_CASES)),
        format!("restore log in {UNKNOWN_METADATA_ONE_IN} gives about half"),
        format!("restore case in {LONG_LOG_ONE_IN} is a long log"),
        format!(
            "up to {LONG_LOG_MEDIUM_EVENTS_MAX} events (one in {LONG_LOG_THOUSANDS_ONE_IN} up to {})",
            thousands(LONG_LOG_EVENTS_MAX as u64)
        ),
        format!("deliveries on {topics} topics"),
        format!("of {LONG_LOG_CUSTOM_NAMES} `custom` names"),
        format!(
            "the {}-entry quarantine cap",
            thousands(loom_kernel::limits::QUARANTINED_ENTRIES_MAX as u64)
        ),
        format!(
            "the {}-name `custom` cap",
            loom_kernel::limits::RESOURCE_CUSTOM_KEYS_MAX
        ),
        format!("folds at most {LONG_LOG_SHRINK_STEPS_MAX} long candidates"),
    ] {
        assert!(guide.contains(&phrase), "the guide should say `{phrase}`");
    }
}

/// `loom check`'s budget is per check: every check runs its cases whatever the others
/// need, and a check that sent no case is an error, never a pass that credits rules.
#[test]
fn conf_01_a_budget_per_check_sends_cases_in_every_check_and_none_is_an_error() {
    let per_check = 40;
    let config = FuzzConfig {
        seed: 3,
        cases: None,
        cases_per_check: Some(per_check),
        time_ms: None,
        checks: Check::ALL.to_vec(),
        shrink_iters_max: 256,
        stop_after_findings: None,
    };
    let mut kernel = InProcessKernel::default();
    let report = run_campaign(&mut kernel, &config, &mut |_| {});
    for check in Check::ALL {
        assert_eq!(
            report.cases_by_check.get(&check),
            Some(&per_check),
            "{check:?}"
        );
        assert!(
            report.sent_by_check.get(&check).copied().unwrap_or(0) > 0,
            "{check:?} sent nothing"
        );
    }
    let results = report.results(&config);
    assert_eq!(results.len(), Check::ALL.len());
    assert!(
        results.iter().all(|r| r.status == Status::Pass),
        "{results:#?}"
    );

    // No budget at all: every check sent nothing, and each says so as an error.
    let none = FuzzConfig {
        cases_per_check: Some(0),
        ..config
    };
    let report = run_campaign(&mut kernel, &none, &mut |_| {});
    let results = report.results(&none);
    assert_eq!(results.len(), Check::ALL.len());
    for r in &results {
        assert_eq!(r.status, Status::Error, "{r:?}");
        assert!(
            r.message.as_deref().unwrap_or("").contains("sent no case"),
            "{r:?}"
        );
    }
}

/// The fold-as-every-minor family is what catches a version gate one minor late: the
/// wrong kernel folds every generated log exactly as the reference does at the current
/// minor (what the campaign sent before the family), and differs on some log folded
/// "as" 1.25, the minor its gate is late for.
#[test]
fn abi_11_only_folds_as_an_older_minor_catch_a_gate_one_minor_late() {
    use loom_vectors::fuzz::cases::generate;
    let wrong = ReferenceKernel::with_bug(Bug::Gate125OneMinorLate);
    let reference = ReferenceKernel::default();
    let answer = |k: &ReferenceKernel, params: &serde_json::Value| {
        loom_kernel::canonical_string(&match k.handle("fold", params) {
            loom_vectors::Answer::Result(v) => v,
            _ => serde_json::Value::Null,
        })
    };
    let (mut current_same, mut as_125_differs) = (0, 0);
    for i in 0..400u32 {
        // Deterministic bytes: a counter through sha256.
        let hex = loom_kernel::digest::sha256_hex(format!("gate-late-{i}").as_bytes());
        let bytes: Vec<u8> = hex.bytes().cycle().take(900).collect();
        let Some(case) = generate(Check::Fold, &bytes) else {
            continue;
        };
        let mut params = case.params.clone();
        if let Some(m) = params.as_object_mut() {
            m.remove("schemaVersion");
        }
        assert_eq!(
            answer(&wrong, &params),
            answer(&reference, &params),
            "case {i}"
        );
        current_same += 1;
        params["schemaVersion"] = serde_json::json!("1.25.0");
        if answer(&wrong, &params) != answer(&reference, &params) {
            as_125_differs += 1;
        }
    }
    assert!(current_same > 100, "{current_same} cases");
    assert!(
        as_125_differs > 0,
        "no log folded as 1.25 shows the late gate"
    );
}

/// The hostile-names family is what catches a decision id taken for a plain object's
/// own member: on every generated log that names no decision so (all the generators
/// drew before the family), the wrong kernel folds as the reference does; on some
/// renamed log it does not.
#[test]
fn fold_38_only_hostile_names_catch_prototype_names_taken_for_recorded() {
    use loom_vectors::fuzz::cases::generate;
    use loom_vectors::wrong::fold::PROTOTYPE_NAMES;
    let wrong = ReferenceKernel::with_bug(Bug::PrototypeNamesPresent);
    let reference = ReferenceKernel::default();
    let answer = |k: &ReferenceKernel, params: &serde_json::Value| {
        loom_kernel::canonical_string(&match k.handle("fold", params) {
            loom_vectors::Answer::Result(v) => v,
            _ => serde_json::Value::Null,
        })
    };
    let (mut plain_same, mut hostile_differs) = (0, 0);
    for i in 0..600u32 {
        let hex = loom_kernel::digest::sha256_hex(format!("hostile-{i}").as_bytes());
        let bytes: Vec<u8> = hex.bytes().cycle().take(900).collect();
        let Some(case) = generate(Check::Fold, &bytes) else {
            continue;
        };
        let text = loom_kernel::canonical_string(&case.params);
        let named = PROTOTYPE_NAMES
            .iter()
            .any(|n| text.contains(&format!("\"id\":\"{n}\"")));
        let same = answer(&wrong, &case.params) == answer(&reference, &case.params);
        if named {
            hostile_differs += usize::from(!same);
        } else {
            assert!(same, "case {i} names no prototype member and still differs");
            plain_same += 1;
        }
    }
    assert!(plain_same > 100, "{plain_same}");
    assert!(hostile_differs > 0, "no renamed log shows the bug");
}

/// Whether a generated event is one a family changed.
type Touched = fn(&serde_json::Value) -> bool;

/// Folds `params` with `bug` and with the reference: whether the answers agree.
fn folds_alike(bug: Bug, params: &serde_json::Value) -> bool {
    let answer = |k: &ReferenceKernel| {
        loom_kernel::canonical_string(&match k.handle("fold", params) {
            loom_vectors::Answer::Result(v) => v,
            _ => serde_json::Value::Null,
        })
    };
    answer(&ReferenceKernel::with_bug(bug)) == answer(&ReferenceKernel::default())
}

/// The topics-and-waits and envelope-named-fields families are what catch their
/// planted bugs: on every generated log the family left alone (all the generators drew
/// before it), the wrong kernel folds as the reference does; on some log the family
/// changed, it does not. `every_fuzz_only_bug_is_found_within_budget` shows the
/// campaign finds both, attributed to their rules (FOLD-27, FOLD-22).
#[test]
fn fold_27_fold_22_only_their_families_catch_waits_by_topic_and_a_payload_seq() {
    use loom_vectors::fuzz::cases::generate;
    let families: [(Bug, &str, Touched); 2] = [
        (Bug::WaitsKeyedByTopic, "waits", |e| {
            e.pointer("/payload/waits").is_some()
        }),
        (Bug::LifecycleSeqFromPayload, "rehome-seq", |e| {
            e.get("eventType").and_then(serde_json::Value::as_str) == Some("EVENTS_REHOMED")
                && e.pointer("/payload/seq").is_some()
        }),
    ];
    for (bug, name, touched) in families {
        let (mut plain_same, mut family_differs) = (0, 0);
        for i in 0..600u32 {
            let hex = loom_kernel::digest::sha256_hex(format!("{name}-{i}").as_bytes());
            let bytes: Vec<u8> = hex.bytes().cycle().take(900).collect();
            let Some(case) = generate(Check::Fold, &bytes) else {
                continue;
            };
            let events = case.params["events"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let same = folds_alike(bug, &case.params);
            if events.iter().any(touched) {
                family_differs += usize::from(!same);
            } else {
                assert!(
                    same,
                    "{}: case {i} is untouched by the family and still differs",
                    bug.as_str()
                );
                plain_same += 1;
            }
        }
        assert!(plain_same > 100, "{}: {plain_same}", bug.as_str());
        assert!(
            family_differs > 0,
            "{}: no family log shows the bug",
            bug.as_str()
        );
    }
}

/// The generated fold cases of `prefix`-named seeds: 928 bytes of sha256 output each
/// (every byte value, where the hex text the tests above cycle holds 16 of them and so
/// never draws a family taken one in 16 or 32).
fn fold_cases(prefix: &str, n: u32) -> Vec<serde_json::Value> {
    use loom_vectors::fuzz::cases::generate;
    (0..n)
        .filter_map(|i| {
            let bytes: Vec<u8> = (0..29)
                .flat_map(|j| {
                    let hex =
                        loom_kernel::digest::sha256_hex(format!("{prefix}-{i}-{j}").as_bytes());
                    (0..hex.len() / 2)
                        .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap_or(0))
                        .collect::<Vec<u8>>()
                })
                .collect();
            generate(Check::Fold, &bytes).map(|c| c.params)
        })
        .collect()
}

/// The long-log family is what catches caps and counters that go wrong only after many
/// events: on every log of the grammar (at most 25 events, all the generators drew before
/// the family) the two wrong kernels fold as the reference does; on some long log each
/// differs. `every_fuzz_only_bug_is_found_within_budget` shows the campaign finds each,
/// attributed to its rule (FOLD-43, RES-01). The fixed vectors pass them
/// (`judging.rs`: a fuzz-only bug must pass every vector).
#[test]
fn fold_43_res_01_only_long_logs_catch_caps_and_counters_crossed_after_many_events() {
    use loom_vectors::fuzz::cases::LONG_LOG_EVENTS_MAX;
    let short_max = loom_props::limits::LOG_EVENTS_MAX + 1;
    let t = std::time::Instant::now();
    let cases = fold_cases("long", 1_200);
    let (long, short): (Vec<_>, Vec<_>) = cases
        .iter()
        .partition(|p| p["events"].as_array().map_or(0, Vec::len) > short_max);
    assert!(long.len() >= 12, "{} long logs", long.len());
    // Up to twenty long logs and 300 of the grammar's are evidence enough, in seconds.
    let long = &long[..long.len().min(20)];
    let short = &short[..300.min(short.len())];
    let lengths: Vec<usize> = long
        .iter()
        .map(|p| p["events"].as_array().map_or(0, Vec::len))
        .collect();
    // A segment may end one delivery (two events) past the bound.
    assert!(
        lengths.iter().all(|n| *n <= LONG_LOG_EVENTS_MAX + 2),
        "{lengths:?}"
    );
    assert!(lengths.iter().any(|n| *n > 1_500), "{lengths:?}");
    let answer = |k: &ReferenceKernel, params: &serde_json::Value| {
        loom_kernel::canonical_string(&match k.handle("fold", params) {
            loom_vectors::Answer::Result(v) => v,
            _ => serde_json::Value::Null,
        })
    };
    let reference = ReferenceKernel::default();
    let short_want: Vec<String> = short.iter().map(|p| answer(&reference, p)).collect();
    let long_want: Vec<String> = long.iter().map(|p| answer(&reference, p)).collect();
    for bug in [
        Bug::QuarantineCounterNeverDecrements,
        Bug::CustomCapPerEvent,
    ] {
        let wrong = ReferenceKernel::with_bug(bug);
        for (p, want) in short.iter().zip(&short_want) {
            assert_eq!(
                &answer(&wrong, p),
                want,
                "{}: a log of the grammar differs",
                bug.as_str()
            );
        }
        assert!(short.len() > 100, "{}", short.len());
        let differs = long
            .iter()
            .zip(&long_want)
            .filter(|(p, want)| &answer(&wrong, p) != *want)
            .count();
        assert!(differs > 0, "{}: no long log shows the bug", bug.as_str());
        eprintln!(
            "{:<36} {differs} of {} long logs differ",
            bug.as_str(),
            long.len()
        );
    }
    eprintln!("long logs {lengths:?} in {:?}", t.elapsed());
}

/// The unknown-metadata family is what catches a kernel that drops metadata holding a
/// key it does not know (and with it the stamp): on every log the family left alone the
/// wrong kernel folds as the reference does; on some log with a `traceId` (or another
/// unknown key) it does not.
#[test]
fn abi_14_only_unknown_metadata_keys_catch_metadata_dropped_for_a_trace_id() {
    use loom_vectors::fuzz::cases::UNKNOWN_METADATA_KEYS;
    let bug = Bug::UnknownMetadataDropsStamp;
    let touched = |p: &serde_json::Value| {
        p["events"].as_array().is_some_and(|evs| {
            evs.iter().any(|e| {
                e.get("metadata")
                    .and_then(serde_json::Value::as_object)
                    .is_some_and(|m| UNKNOWN_METADATA_KEYS.iter().any(|k| m.contains_key(*k)))
            })
        })
    };
    let (mut plain_same, mut family_differs) = (0, 0);
    for p in fold_cases("metadata", 600) {
        let same = folds_alike(bug, &p);
        if touched(&p) {
            family_differs += usize::from(!same);
        } else {
            assert!(same, "a log without an unknown metadata key differs");
            plain_same += 1;
        }
    }
    assert!(plain_same > 100, "{plain_same}");
    assert!(family_differs > 0, "no family log shows the bug");
}
