//! The judging power of the store kits and the exploration campaign, measured on stores
//! that are wrong on purpose (`loom_buggy_stores::CATALOGUE`): every broken store must
//! fail with the rule its entry names, the faithful stores must pass, and each bug that
//! only the campaign can find must pass every kit and be found by the campaign within
//! the budget stated here (`EXPLORE_BUDGET_CASES` cases from `EXPLORE_SEED`).

use loom_buggy_stores::wrappers::*;
use loom_buggy_stores::{Bug, Catcher, Class, Lang, CATALOGUE};
use loom_conformance::kits::archive_store::ArchiveStoreKit;
use loom_conformance::kits::branch_registry::BranchRegistryKit;
use loom_conformance::kits::content_store::ContentStoreKit;
use loom_conformance::kits::dispatcher::DispatcherKit;
use loom_conformance::kits::durable_state_store::DurableStateStoreKit;
use loom_conformance::kits::event_store::EventStoreKit;
use loom_conformance::kits::read_model_store::ReadModelStoreKit;
use loom_conformance::kits::snapshot_store::SnapshotStoreKit;
use loom_conformance::kits::timer_store::TimerStoreKit;
use loom_conformance::{run_kit, CaseHooks, Kit, NoHooks, RunOptions, StdioHooks};
use loom_props::explore::stores::StdioStores;
use loom_props::explore::{explore, ExploreOptions, ExploreOutcome, FnFactory, Stores};
use loom_report::{CaseResult, Status};
use loom_store_client::StdioStore;
use loom_stores::memory::*;
use loom_stores::plugin_memory::*;
use loom_test_support::{located, needs, test, Tool};

/// Cases the campaign gets to find each campaign-only bug.
const EXPLORE_BUDGET_CASES: u64 = 400;
/// The campaign seed of this test (any seed finds them; this one is pinned so the
/// test is deterministic).
const EXPLORE_SEED: u64 = 12;

fn run<S, K: Kit<S>>(make: impl Fn() -> S, hooks: &dyn CaseHooks) -> Vec<CaseResult> {
    loom_conformance::block_on(async {
        run_kit::<S, K, _, _>(
            |_cx, _fresh| {
                let s = make();
                async move { Ok(s) }
            },
            &RunOptions::default(),
            hooks,
            &mut |_| {},
        )
        .await
    })
    .expect("a tokio runtime")
}

/// The results of `kit` against the Rust store with `bug` (`"faithful"` for none).
fn rust_kit(kit: &str, bug: &'static str) -> Vec<CaseResult> {
    let h = &NoHooks;
    match kit {
        "event-store" => run::<_, EventStoreKit>(|| BuggyEvents::new(bug), h),
        "snapshot-store" => run::<_, SnapshotStoreKit>(|| BuggySnapshots::new(bug), h),
        "archive-store" => run::<_, ArchiveStoreKit>(|| BuggyArchive::new(bug), h),
        "content-store" => run::<_, ContentStoreKit>(|| BuggyContent::new(bug), h),
        "durable-state-store" => run::<_, DurableStateStoreKit>(|| BuggyState::new(bug), h),
        "read-model-store" => run::<_, ReadModelStoreKit>(|| BuggyModels::new(bug), h),
        "dispatcher" => run::<_, DispatcherKit>(|| BuggyDispatcher::new(bug), h),
        "timer-store" => run::<_, TimerStoreKit>(|| BuggyTimers::new(bug), h),
        "branch-registry" => run::<_, BranchRegistryKit>(|| BuggyBranches::new(bug), h),
        other => panic!("no kit {other}"),
    }
}

/// The results of `kit` against the Python variant `bug` (`"faithful"` for none).
fn python_kit(kit: &str, bug: &str) -> Vec<CaseResult> {
    let py = located(Tool::Python3);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/buggy_adapter.py");
    let store = StdioStore::spawn(&format!("{py} {script} {bug}"))
        .unwrap_or_else(|e| panic!("{bug}: the variant does not start: {e}"));
    let hooks = StdioHooks(&store);
    let s = || store.clone();
    match kit {
        "event-store" => run::<_, EventStoreKit>(s, &hooks),
        "snapshot-store" => run::<_, SnapshotStoreKit>(s, &hooks),
        "archive-store" => run::<_, ArchiveStoreKit>(s, &hooks),
        "content-store" => run::<_, ContentStoreKit>(s, &hooks),
        "durable-state-store" => run::<_, DurableStateStoreKit>(s, &hooks),
        "read-model-store" => run::<_, ReadModelStoreKit>(s, &hooks),
        "dispatcher" => run::<_, DispatcherKit>(s, &hooks),
        "timer-store" => run::<_, TimerStoreKit>(s, &hooks),
        "branch-registry" => run::<_, BranchRegistryKit>(s, &hooks),
        other => panic!("no kit {other}"),
    }
}

fn failing(results: &[CaseResult]) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.status.is_failure())
        .map(|r| {
            format!(
                "{} [{}] {}: {}",
                r.case_id,
                r.rules.join(","),
                r.status,
                r.message.as_deref().unwrap_or("")
            )
        })
        .collect()
}

/// Runs every kit-caught bug of `class` written in `lang` and checks each is failed
/// (not errored) by a case citing its rule.
fn check_class(class: Class, lang: Lang) {
    let mut missed = Vec::new();
    let mut checked = 0;
    for bug in CATALOGUE
        .iter()
        .filter(|b| b.class == class && b.lang == lang)
    {
        let Catcher::Kit(kit) = bug.catcher else {
            continue;
        };
        checked += 1;
        let results = match bug.lang {
            Lang::Rust => rust_kit(kit, bug.name),
            Lang::Python => python_kit(kit, bug.name),
        };
        let caught: Vec<&CaseResult> = results
            .iter()
            .filter(|r| r.status == Status::Fail && r.rules.iter().any(|x| x == bug.rule))
            .collect();
        println!(
            "{:?} {} ({:?}): caught by {:?}",
            bug.lang,
            bug.name,
            bug.class,
            caught
                .iter()
                .map(|r| r.case_id.as_str())
                .collect::<Vec<_>>()
        );
        if caught.is_empty() {
            missed.push(format!(
                "{:?} {} ({}): no failing {kit} case cites {}; failures: {:#?}",
                bug.lang,
                bug.name,
                bug.what,
                bug.rule,
                failing(&results)
            ));
        }
    }
    assert!(
        checked > 0,
        "the catalogue has no kit-caught {lang:?} bug of {class:?}"
    );
    assert!(missed.is_empty(), "bugs the kits let through: {missed:#?}");
}

fn judging_catalogue_covers_every_class_with_at_least_forty_kit_caught_stores() {
    let kit_caught = CATALOGUE
        .iter()
        .filter(|b| matches!(b.catcher, Catcher::Kit(_)))
        .count();
    assert!(kit_caught >= 40, "{kit_caught} kit-caught buggy stores");
    for class in [
        Class::Boundary,
        Class::Ordering,
        Class::CheckOrder,
        Class::Fidelity,
        Class::ErrorFacts,
        Class::Timestamps,
    ] {
        for lang in [Lang::Rust, Lang::Python] {
            assert!(
                CATALOGUE.iter().any(|b| b.class == class
                    && b.lang == lang
                    && matches!(b.catcher, Catcher::Kit(_))),
                "no {lang:?} bug of class {class:?}"
            );
        }
    }
    let rules = loom_spec_rules();
    for bug in CATALOGUE {
        assert!(
            rules.contains(&bug.rule),
            "{}: unknown rule {}",
            bug.name,
            bug.rule
        );
    }
}

fn store_authors_guide_states_the_catalogue_counts() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/guides/store-authors.md"
    ))
    .expect("docs/guides/store-authors.md");
    let kit_caught = CATALOGUE
        .iter()
        .filter(|b| matches!(b.catcher, Catcher::Kit(_)))
        .count();
    let campaign = CATALOGUE.len() - kit_caught;
    let text = guide.split_whitespace().collect::<Vec<_>>().join(" ");
    let want = format!(
        "{kit_caught} deliberately broken stores that the kits fail by the right rule, and {campaign} that pass every kit and that the campaign finds within {EXPLORE_BUDGET_CASES} cases"
    );
    assert!(
        text.contains(&want),
        "the store-authors guide should say: {want}"
    );
}

fn loom_spec_rules() -> Vec<&'static str> {
    // The rules the store kits cite; every catalogue entry must name one of them.
    let mut all = Vec::new();
    for cases in [
        loom_conformance::kits::event_store::CASES,
        loom_conformance::kits::snapshot_store::CASES,
        loom_conformance::kits::archive_store::CASES,
        loom_conformance::kits::content_store::CASES,
        loom_conformance::kits::durable_state_store::CASES,
        loom_conformance::kits::read_model_store::CASES,
        loom_conformance::kits::dispatcher::CASES,
        loom_conformance::kits::timer_store::CASES,
        loom_conformance::kits::branch_registry::CASES,
    ] {
        for case in cases {
            all.extend(case.rules.iter().copied());
        }
    }
    all
}

fn boundary_bugs_fail_their_rule() {
    check_class(Class::Boundary, Lang::Rust);
}

fn boundary_bugs_fail_their_rule_in_python() {
    check_class(Class::Boundary, Lang::Python);
}

fn ordering_bugs_fail_their_rule() {
    check_class(Class::Ordering, Lang::Rust);
}

fn ordering_bugs_fail_their_rule_in_python() {
    check_class(Class::Ordering, Lang::Python);
}

fn check_order_bugs_fail_their_rule() {
    check_class(Class::CheckOrder, Lang::Rust);
}

fn check_order_bugs_fail_their_rule_in_python() {
    check_class(Class::CheckOrder, Lang::Python);
}

fn fidelity_bugs_fail_their_rule() {
    check_class(Class::Fidelity, Lang::Rust);
}

fn fidelity_bugs_fail_their_rule_in_python() {
    check_class(Class::Fidelity, Lang::Python);
}

fn error_fact_bugs_fail_their_rule() {
    check_class(Class::ErrorFacts, Lang::Rust);
}

fn error_fact_bugs_fail_their_rule_in_python() {
    check_class(Class::ErrorFacts, Lang::Python);
}

fn timestamp_bugs_fail_their_rule() {
    check_class(Class::Timestamps, Lang::Rust);
}

fn timestamp_bugs_fail_their_rule_in_python() {
    check_class(Class::Timestamps, Lang::Python);
}

fn faithful_wrappers_pass_every_kit() {
    for kit in [
        "event-store",
        "snapshot-store",
        "archive-store",
        "content-store",
        "durable-state-store",
        "read-model-store",
        "dispatcher",
        "timer-store",
        "branch-registry",
    ] {
        let results = rust_kit(kit, "faithful");
        assert!(
            failing(&results).is_empty(),
            "{kit}: {:#?}",
            failing(&results)
        );
        assert!(
            results.iter().all(|r| r.status == Status::Pass),
            "{kit}: a case did not run"
        );
    }
}

fn faithful_python_variant_passes_the_event_store_kit() {
    let results = python_kit("event-store", "faithful");
    assert!(failing(&results).is_empty(), "{:#?}", failing(&results));
}

type Bugged = Stores<
    BuggyEvents,
    BuggySnapshots,
    BuggyArchive,
    MemoryContentStore,
    BuggyState,
    MemoryReadModelStore,
    MemoryDispatcher,
    BuggyTimers,
    MemoryBranchRegistry,
>;

/// Only the SPI the bug is in, so the campaign spends its budget there.
fn subject_for(bug: &'static str) -> Bugged {
    let mut s = Bugged::default();
    match bug {
        "sealed-snapshot-cache" => s.snapshots = Some(BuggySnapshots::new(bug)),
        "archive-index-survives-replace" => s.archive = Some(BuggyArchive::new(bug)),
        "due-limit-counts-cancelled" => s.timers = Some(BuggyTimers::new(bug)),
        "state-delete-at-version-zero" => s.state = Some(BuggyState::new(bug)),
        _ => s.events = Some(BuggyEvents::new(bug)),
    }
    s
}

fn kit_of(bug: &str) -> &'static str {
    match bug {
        "sealed-snapshot-cache" => "snapshot-store",
        "archive-index-survives-replace" => "archive-store",
        "due-limit-counts-cancelled" => "timer-store",
        "state-delete-at-version-zero" => "durable-state-store",
        _ => "event-store",
    }
}

/// The campaign-only bugs written in `lang`.
fn campaign_only(lang: Lang) -> Vec<&'static Bug> {
    CATALOGUE
        .iter()
        .filter(|b| b.catcher == Catcher::Explore && b.lang == lang)
        .collect()
}

fn campaign_only_bugs_pass_every_kit(lang: Lang) {
    let bugs = campaign_only(lang);
    assert!(!bugs.is_empty(), "no campaign-only {lang:?} bug to check");
    for bug in bugs {
        let results = match lang {
            Lang::Rust => rust_kit(kit_of(bug.name), bug.name),
            Lang::Python => python_kit(kit_of(bug.name), bug.name),
        };
        assert!(
            failing(&results).is_empty(),
            "{}: a kit case catches it, so it belongs with the kit-caught bugs: {:#?}",
            bug.name,
            failing(&results)
        );
    }
}

/// The campaign against the Python variant `bug` through the store protocol, on the
/// one SPI the bug is in (the process starts once; each case `reset`s its namespace,
/// as `loom conform --store cmd:… --explore` does).
fn python_campaign(bug: &'static str, opts: &ExploreOptions) -> ExploreOutcome {
    let py = located(Tool::Python3);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/buggy_adapter.py");
    let adapter = StdioStore::spawn(&format!("{py} {script} {bug}"))
        .unwrap_or_else(|e| panic!("{bug}: the variant does not start: {e}"));
    let factory = FnFactory(|| {
        let adapter = adapter.clone();
        async move {
            adapter.reset(&format!(
                "judging.{}.",
                loom_conformance::runner::fresh_run_id()
            ))?;
            let mut s = StdioStores::default();
            match kit_of(bug) {
                "durable-state-store" => s.state = Some(adapter.clone()),
                _ => s.events = Some(adapter.clone()),
            }
            Ok(s)
        }
    });
    explore(&factory, bug, opts)
}

fn campaign_finds_each_campaign_only_bug_within_the_budget(lang: Lang) {
    let opts = ExploreOptions {
        cases: Some(EXPLORE_BUDGET_CASES),
        time: None,
        seed: EXPLORE_SEED,
    };
    let mut missed = Vec::new();
    let bugs = campaign_only(lang);
    assert!(!bugs.is_empty(), "no campaign-only {lang:?} bug to check");
    for bug in bugs {
        let name = bug.name;
        let outcome = match lang {
            Lang::Rust => {
                let factory = FnFactory(move || async move { Ok::<_, String>(subject_for(name)) });
                explore(&factory, name, &opts)
            }
            Lang::Python => python_campaign(name, &opts),
        };
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
    assert!(missed.is_empty(), "{missed:#?}");
}

fn campaign_passes_the_faithful_stores_within_the_budget() {
    let opts = ExploreOptions {
        cases: Some(EXPLORE_BUDGET_CASES),
        time: None,
        seed: EXPLORE_SEED,
    };
    let factory = FnFactory(|| async { Ok::<_, String>(loom_props::explore::memory_stores()) });
    let outcome = explore(&factory, "memory", &opts);
    assert!(
        outcome.divergence.is_none() && outcome.error.is_none(),
        "{outcome:?}"
    );
    assert_eq!(outcome.cases, EXPLORE_BUDGET_CASES);
}

fn main() -> std::process::ExitCode {
    loom_test_support::run(vec![
        test(
            "store_authors_guide_states_the_catalogue_counts",
            store_authors_guide_states_the_catalogue_counts,
        ),
        test(
            "judging_catalogue_covers_every_class_with_at_least_forty_kit_caught_stores",
            judging_catalogue_covers_every_class_with_at_least_forty_kit_caught_stores,
        ),
        test(
            "boundary_bugs_fail_their_rule",
            boundary_bugs_fail_their_rule,
        ),
        needs(
            Tool::Python3,
            "boundary_bugs_fail_their_rule_in_python",
            |_| boundary_bugs_fail_their_rule_in_python(),
        ),
        test(
            "ordering_bugs_fail_their_rule",
            ordering_bugs_fail_their_rule,
        ),
        needs(
            Tool::Python3,
            "ordering_bugs_fail_their_rule_in_python",
            |_| ordering_bugs_fail_their_rule_in_python(),
        ),
        test(
            "check_order_bugs_fail_their_rule",
            check_order_bugs_fail_their_rule,
        ),
        needs(
            Tool::Python3,
            "check_order_bugs_fail_their_rule_in_python",
            |_| check_order_bugs_fail_their_rule_in_python(),
        ),
        test(
            "fidelity_bugs_fail_their_rule",
            fidelity_bugs_fail_their_rule,
        ),
        needs(
            Tool::Python3,
            "fidelity_bugs_fail_their_rule_in_python",
            |_| fidelity_bugs_fail_their_rule_in_python(),
        ),
        test(
            "error_fact_bugs_fail_their_rule",
            error_fact_bugs_fail_their_rule,
        ),
        needs(
            Tool::Python3,
            "error_fact_bugs_fail_their_rule_in_python",
            |_| error_fact_bugs_fail_their_rule_in_python(),
        ),
        test(
            "timestamp_bugs_fail_their_rule",
            timestamp_bugs_fail_their_rule,
        ),
        needs(
            Tool::Python3,
            "timestamp_bugs_fail_their_rule_in_python",
            |_| timestamp_bugs_fail_their_rule_in_python(),
        ),
        test(
            "faithful_wrappers_pass_every_kit",
            faithful_wrappers_pass_every_kit,
        ),
        needs(
            Tool::Python3,
            "faithful_python_variant_passes_the_event_store_kit",
            |_| faithful_python_variant_passes_the_event_store_kit(),
        ),
        test("campaign_only_bugs_pass_every_kit", || {
            campaign_only_bugs_pass_every_kit(Lang::Rust)
        }),
        needs(
            Tool::Python3,
            "campaign_only_bugs_pass_every_kit_in_python",
            |_| campaign_only_bugs_pass_every_kit(Lang::Python),
        ),
        test(
            "campaign_finds_each_campaign_only_bug_within_the_budget",
            || campaign_finds_each_campaign_only_bug_within_the_budget(Lang::Rust),
        ),
        needs(
            Tool::Python3,
            "campaign_finds_each_campaign_only_bug_within_the_budget_in_python",
            |_| campaign_finds_each_campaign_only_bug_within_the_budget(Lang::Python),
        ),
        test(
            "campaign_passes_the_faithful_stores_within_the_budget",
            campaign_passes_the_faithful_stores_within_the_budget,
        ),
    ])
}
