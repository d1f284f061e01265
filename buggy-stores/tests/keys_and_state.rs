//! The judging power of the hostile-id families and the long campaign histories, on the
//! stores of `loom_buggy_stores::KEYS_AND_STATE`: each hostile-key bug fails exactly the
//! hostile-id case of its kit, and that case names the family the bug merges or
//! misorders (so the family, and only it, catches it); each stateful bug fails its kit
//! by its rule, or passes every kit and the campaign finds it within
//! `EXPLORE_BUDGET_CASES` cases from `EXPLORE_SEED`; the faithful wrappers pass.

use loom_buggy_stores::keyed::*;
use loom_buggy_stores::{Catcher, Class, KeyBug, KEYS_AND_STATE};
use loom_conformance::kits::archive_store::ArchiveStoreKit;
use loom_conformance::kits::content_store::ContentStoreKit;
use loom_conformance::kits::dispatcher::DispatcherKit;
use loom_conformance::kits::durable_state_store::DurableStateStoreKit;
use loom_conformance::kits::event_store::EventStoreKit;
use loom_conformance::kits::read_model_store::ReadModelStoreKit;
use loom_conformance::kits::snapshot_store::SnapshotStoreKit;
use loom_conformance::kits::timer_store::TimerStoreKit;
use loom_conformance::{run_kit, Kit, NoHooks, RunOptions};
use loom_props::explore::{explore, ExploreOptions, FnFactory, Stores};
use loom_report::{CaseResult, Status};
use loom_stores::memory::MemoryBranchRegistry;
use loom_test_support::test;

/// Cases the campaign gets to find each campaign-caught stateful bug.
const EXPLORE_BUDGET_CASES: u64 = 400;
/// The campaign seed of this test.
const EXPLORE_SEED: u64 = 12;

const KITS: [&str; 8] = [
    "event-store",
    "snapshot-store",
    "archive-store",
    "content-store",
    "durable-state-store",
    "read-model-store",
    "dispatcher",
    "timer-store",
];

fn run<S, K: Kit<S>>(make: impl Fn() -> S) -> Vec<CaseResult> {
    loom_conformance::block_on(async {
        run_kit::<S, K, _, _>(
            |_cx, _fresh| {
                let s = make();
                async move { Ok(s) }
            },
            &RunOptions::default(),
            &NoHooks,
            &mut |_| {},
        )
        .await
    })
    .expect("a tokio runtime")
}

fn kit(kit: &str, bug: &'static str) -> Vec<CaseResult> {
    match kit {
        "event-store" => run::<_, EventStoreKit>(|| KeyedEvents::new(bug)),
        "snapshot-store" => run::<_, SnapshotStoreKit>(|| KeyedSnapshots::new(bug)),
        "archive-store" => run::<_, ArchiveStoreKit>(|| KeyedArchive::new(bug)),
        "content-store" => run::<_, ContentStoreKit>(|| KeyedContent::new(bug)),
        "durable-state-store" => run::<_, DurableStateStoreKit>(|| KeyedState::new(bug)),
        "read-model-store" => run::<_, ReadModelStoreKit>(|| KeyedModels::new(bug)),
        "dispatcher" => run::<_, DispatcherKit>(|| KeyedDispatcher::new(bug, None)),
        "timer-store" => run::<_, TimerStoreKit>(|| KeyedTimers::new(bug)),
        other => panic!("no kit {other}"),
    }
}

fn failing(results: &[CaseResult]) -> Vec<&CaseResult> {
    results.iter().filter(|r| r.status.is_failure()).collect()
}

fn hostile_key_bugs_fail_only_the_hostile_id_case_naming_their_family() {
    let mut missed = Vec::new();
    let bugs: Vec<&KeyBug> = KEYS_AND_STATE
        .iter()
        .filter(|b| b.class == Class::HostileKey)
        .collect();
    assert!(bugs.len() >= 8, "{} hostile-key bugs", bugs.len());
    for bug in bugs {
        let Catcher::Kit(k) = bug.catcher else {
            panic!("{}: a hostile-key bug is caught by a kit", bug.name)
        };
        let family = bug.family.expect("a hostile-key bug names its family");
        let results = kit(k, bug.name);
        let failed = failing(&results);
        let names: Vec<String> = failed
            .iter()
            .map(|r| {
                format!(
                    "{} [{}]: {}",
                    r.case_id,
                    r.rules.join(","),
                    r.message.as_deref().unwrap_or("")
                )
            })
            .collect();
        println!("{} ({k}): {names:?}", bug.name);
        let only_hostile = failed.len() == 1
            && failed[0].case_id.contains("hostile")
            && failed[0].status == Status::Fail
            && failed[0].rules.iter().any(|r| r == bug.rule)
            && failed[0]
                .message
                .as_deref()
                .is_some_and(|m| m.contains(family));
        if !only_hostile {
            missed.push(format!(
                "{} ({}): expected only the hostile-id case to fail citing {} and naming {family:?}; failures: {names:#?}",
                bug.name, bug.what, bug.rule
            ));
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

fn faithful_keyed_wrappers_pass_every_kit() {
    for k in KITS {
        let results = kit(k, "faithful");
        let failed = failing(&results);
        assert!(failed.is_empty(), "{k}: {failed:#?}");
        assert!(
            results.iter().all(|r| r.status == Status::Pass),
            "{k}: a case did not run"
        );
    }
}

type Keyed = Stores<
    KeyedEvents,
    KeyedSnapshots,
    KeyedArchive,
    KeyedContent,
    KeyedState,
    KeyedModels,
    KeyedDispatcher,
    KeyedTimers,
    MemoryBranchRegistry,
>;

/// The SPIs a stateful bug lives in, so the campaign spends its budget there.
fn subject_for(bug: &'static str) -> Keyed {
    let mut s = Keyed::default();
    match bug {
        "queue-compaction-loses-a-package" | "reclaim-keeps-first-worker" => {
            s.dispatcher = Some(KeyedDispatcher::new(bug, None));
        }
        "complete-cancels-timers" => {
            let timers = KeyedTimers::new(bug);
            s.dispatcher = Some(KeyedDispatcher::new(bug, Some(timers.clone())));
            s.timers = Some(timers);
        }
        _ => s.events = Some(KeyedEvents::new(bug)),
    }
    s
}

fn kit_of(bug: &str) -> &'static [&'static str] {
    match bug {
        "queue-compaction-loses-a-package" | "reclaim-keeps-first-worker" => &["dispatcher"],
        "complete-cancels-timers" => &["dispatcher", "timer-store"],
        _ => &["event-store"],
    }
}

fn stateful_bugs_are_caught_by_their_rule() {
    let opts = ExploreOptions {
        cases: Some(EXPLORE_BUDGET_CASES),
        time: None,
        seed: EXPLORE_SEED,
    };
    let mut missed = Vec::new();
    let bugs: Vec<&KeyBug> = KEYS_AND_STATE
        .iter()
        .filter(|b| b.class == Class::Stateful)
        .collect();
    assert!(bugs.len() >= 6, "{} stateful bugs", bugs.len());
    for bug in bugs {
        let name = bug.name;
        match bug.catcher {
            Catcher::Kit(k) => {
                let results = kit(k, name);
                let caught: Vec<&str> = results
                    .iter()
                    .filter(|r| r.status == Status::Fail && r.rules.iter().any(|x| x == bug.rule))
                    .map(|r| r.case_id.as_str())
                    .collect();
                println!("{name}: caught by {caught:?}");
                if caught.is_empty() {
                    missed.push(format!("{name}: no {k} case fails citing {}", bug.rule));
                }
            }
            Catcher::Explore => {
                for k in kit_of(name) {
                    let failed: Vec<String> = failing(&kit(k, name))
                        .iter()
                        .map(|r| r.case_id.clone())
                        .collect();
                    if !failed.is_empty() {
                        missed.push(format!("{name}: the {k} kit catches it ({failed:?}): it belongs with the kit-caught bugs"));
                    }
                }
                let factory = FnFactory(move || async move { Ok::<_, String>(subject_for(name)) });
                let outcome = explore(&factory, name, &opts);
                match &outcome.divergence {
                    Some(d) if d.rule == bug.rule => println!(
                        "{name}: found after {} cases ({} operations) at step {} of a {}-operation case: {}",
                        outcome.cases,
                        outcome.ops,
                        d.step,
                        outcome.replay.as_ref().map_or(0, |r| r.ops.len()),
                        serde_json::to_string(&d.op).unwrap_or_default()
                    ),
                    other => missed.push(format!(
                        "{name}: expected a divergence citing {}, got {other:?} (error {:?}) after {} cases",
                        bug.rule, outcome.error, outcome.cases
                    )),
                }
            }
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

fn store_authors_guide_states_the_counts() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/guides/store-authors.md"
    ))
    .expect("docs/guides/store-authors.md");
    let text = guide.split_whitespace().collect::<Vec<_>>().join(" ");
    let count = |c: Class| KEYS_AND_STATE.iter().filter(|b| b.class == c).count();
    let want = format!(
        "does the same for {} hostile-key stores (each fails only its kit's hostile-id case, which names the family) and {} stateful ones",
        count(Class::HostileKey),
        count(Class::Stateful)
    );
    assert!(
        text.contains(&want),
        "the store-authors guide should say: {want}"
    );
}

fn main() -> std::process::ExitCode {
    loom_test_support::run(vec![
        test(
            "store_authors_guide_states_the_counts",
            store_authors_guide_states_the_counts,
        ),
        test(
            "hostile_key_bugs_fail_only_the_hostile_id_case_naming_their_family",
            hostile_key_bugs_fail_only_the_hostile_id_case_naming_their_family,
        ),
        test(
            "faithful_keyed_wrappers_pass_every_kit",
            faithful_keyed_wrappers_pass_every_kit,
        ),
        test(
            "stateful_bugs_are_caught_by_their_rule",
            stateful_bugs_are_caught_by_their_rule,
        ),
    ])
}
