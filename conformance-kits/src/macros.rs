//! The test generators: one macro per kit turns every case into its own test in the
//! caller's crate, named after the case under the module the macro is invoked in (so
//! `cargo test` and nextest show the rule token, e.g.
//! `events::spi_07_incarnation_distinct_anchor`).
//!
//! The tests are libtest-mimic trials: the test target is `harness = false` and ends with
//! `loom_conformance::kit_main!(events, snapshots, …)` naming the modules that invoke a
//! macro (or has a `main` of its own that collects each module's `kit_trials()` and calls
//! [`harness::run`](crate::harness::run)). The reason is honesty: a case for a method the
//! store does not claim cannot run, and only a test marked ignored when the test list is
//! built is reported as skipped, by nextest, by `cargo test` and in JUnit. A `#[test]`
//! that returns early is a pass.
//!
//! The factory is `|case: &'static str| async move { Some(store) }`. It is called once
//! when the tests are listed, to learn what the store claims: a case whose needs
//! ([`CaseInfo::needs`](crate::CaseInfo::needs)) are not all claimed is an ignored test
//! named `<case> [skip-not-claimed <need>]`. It is called again for each case that runs.
//! Returning `None` skips every case (`[skip-no-store]`, e.g. no database configured;
//! [`harness::locate_or_skip`](crate::harness::locate_or_skip) names the missing tool
//! instead: `[skip-missing postgres]`); a factory that panics while the tests are listed
//! makes every case fail with its message (how a required database that is missing fails
//! under `LOOM_REQUIRE_TOOLS=1`). The
//! cases run on a current-thread tokio runtime built here, so the caller needs no tokio
//! of its own.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use loom_test_support::{failing, may_select, skipped, take_no_store_note, Trial};

use crate::case::{Claims, Ctx, Kit, Outcome};
use crate::runner::{fresh_run_id, CASE_TIMEOUT};

/// The case name the factory is given when it is called to learn the store's claims.
pub const LISTING_CASE: &str = "kit_claims";

/// The skip tag of every case when the factory gives no store.
pub const NO_STORE_TAG: &str = "skip-no-store";

/// The skip tag of a case whose need `need` the store does not claim.
pub fn not_claimed_tag(need: &str) -> String {
    format!("skip-not-claimed {need}")
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a tokio runtime: {e}"))
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic without a message)".to_string())
}

/// What the factory gave when the tests were listed.
enum Listing {
    /// A store claiming this.
    Claims(Claims),
    /// No store: the skip tag and reason.
    NoStore(String, String),
    /// A panic, with its message.
    Panicked(String),
}

/// Asks the factory for a store and returns what it claims.
fn listing<S, K, F, Fut>(factory: &F) -> Listing
where
    K: Kit<S>,
    F: Fn(&'static str) -> Fut,
    Fut: Future<Output = Option<S>>,
{
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return Listing::Panicked(e),
    };
    take_no_store_note();
    match catch_unwind(AssertUnwindSafe(|| {
        rt.block_on(async { factory(LISTING_CASE).await.map(|store| K::claims(&store)) })
    })) {
        Ok(Some(claims)) => Listing::Claims(claims),
        Ok(None) => {
            let (tag, reason) = take_no_store_note().unwrap_or_else(|| {
                (
                    NO_STORE_TAG.to_string(),
                    "the store factory gave no store (e.g. no database is configured)".to_string(),
                )
            });
            Listing::NoStore(tag, reason)
        }
        Err(payload) => Listing::Panicked(panic_text(payload)),
    }
}

/// Runs one case that the listing found runnable: a store from the factory, a fresh
/// namespace, the per-case time limit. `Err` says why the test fails.
fn run_case<S, K, F, Fut>(
    case: &'static str,
    display: &'static str,
    factory: &F,
) -> Result<(), String>
where
    K: Kit<S>,
    F: Fn(&'static str) -> Fut,
    Fut: Future<Output = Option<S>>,
{
    runtime()?.block_on(async {
        let Some(store) = factory(display).await else {
            return Err(format!(
                "{display}: the store factory gave no store, though it gave one when the tests were listed"
            ));
        };
        let cx = Ctx::new(format!("{}.", fresh_run_id()));
        match tokio::time::timeout(CASE_TIMEOUT, K::run_case(case, &store, &cx)).await {
            Err(_) => Err(format!("{display}: timed out after {CASE_TIMEOUT:?}")),
            Ok(None) => Err(format!("{display}: no such case in kit {}", K::NAME)),
            Ok(Some(Ok(Outcome::Pass))) => Ok(()),
            Ok(Some(Ok(Outcome::SkipNotClaimed(what)))) => Err(format!(
                "{display}: the case stopped for want of {what}, but the store's claims meet \
                 every need the kit's table lists for it: the table is out of date (a bug in \
                 the kit; add {what:?} to the case's needs)"
            )),
            Ok(Some(Err(failure))) => {
                let rules = K::cases()
                    .iter()
                    .find(|c| c.id == case)
                    .map(|c| c.rules.join(", "))
                    .unwrap_or_default();
                Err(format!("{display} [{rules}]: {failure}"))
            }
        }
    })
}

/// The trials of one kit-macro invocation: `listed` pairs each case id with the name the
/// factory is given; `module_path` is the invoking module's path, whose part after the
/// crate name prefixes every test name.
#[doc(hidden)]
pub fn kit_trials<S, K, F, Fut>(
    module_path: &'static str,
    listed: &'static [(&'static str, &'static str)],
    factory: F,
) -> Vec<Trial>
where
    S: 'static,
    K: Kit<S> + 'static,
    F: Fn(&'static str) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Option<S>>,
{
    let prefix = module_path.split_once("::").map_or("", |(_, rest)| rest);
    // nextest runs each test in a process of its own; only the module it names needs
    // its factory called.
    if !may_select(prefix) {
        return Vec::new();
    }
    let name = |id: &str| {
        if prefix.is_empty() {
            id.to_string()
        } else {
            format!("{prefix}::{id}")
        }
    };
    let mut trials = vec![loom_test_support::test(
        name("kit_lists_every_case"),
        || {
            let ids: Vec<&str> = listed.iter().map(|(id, _)| *id).collect();
            let table: Vec<&str> = K::cases().iter().map(|c| c.id).collect();
            assert_eq!(ids, table, "the kit macro and the kit's case table differ");
        },
    )];
    let listing = listing::<S, K, F, Fut>(&factory);
    let factory = Arc::new(factory);
    for &(case, display) in listed {
        let test_name = name(case);
        let info = K::cases().iter().find(|c| c.id == case);
        trials.push(match (&listing, info) {
            (_, None) => failing(
                test_name,
                format!("{display}: no such case in kit {}", K::NAME),
            ),
            (Listing::Panicked(message), _) => failing(
                test_name,
                format!(
                    "{display}: the store factory panicked while the tests were listed: {message}"
                ),
            ),
            (Listing::NoStore(tag, reason), _) => skipped(&test_name, tag, reason.as_str()),
            (Listing::Claims(claims), Some(info)) => match claims.unmet(info) {
                Some(need) => skipped(
                    &test_name,
                    &not_claimed_tag(need),
                    format!("the store does not claim {need}"),
                ),
                None => {
                    let factory = Arc::clone(&factory);
                    Trial::test(test_name, move || {
                        run_case::<S, K, F, Fut>(case, display, &*factory).map_err(Into::into)
                    })
                }
            },
        });
    }
    trials
}

/// The `main` of a kit test target (`harness = false`): runs the trials of every listed
/// module (each invokes one kit macro).
#[macro_export]
macro_rules! kit_main {
    ($($module:ident),+ $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            let mut trials = ::std::vec::Vec::new();
            $( trials.extend($module::kit_trials()); )+
            $crate::harness::run(trials)
        }
    };
}

/// Generates `kit_trials()`, one trial per listed case of kit module `$module` plus a
/// check that the list names every case of the kit's table, and a `#[test]` that fails
/// when the file is built with the default test harness (which would never call it).
#[macro_export]
#[doc(hidden)]
macro_rules! __kit_tests {
    ($module:ident, $kit:ident, $factory:expr, [$($case:ident),* $(,)?]) => {
        /// Every case of this kit as a test trial, for the test target's `main`.
        pub fn kit_trials() -> ::std::vec::Vec<$crate::harness::Trial> {
            $crate::macros::kit_trials::<_, $crate::kits::$module::$kit, _, _>(
                module_path!(),
                &[$((stringify!($case), concat!(stringify!($module), "::", stringify!($case)))),*],
                $factory,
            )
        }

        #[test]
        fn kit_tests_need_a_harness_false_target() {
            panic!(
                "the loom_conformance kit macros make libtest-mimic trials, which the default \
                 test harness never runs: declare this test target with `harness = false` \
                 ([[test]] name = \"...\" harness = false in Cargo.toml) and end the file with \
                 `loom_conformance::kit_main!(<each module that invokes a kit macro>);` \
                 (docs/guides/store-authors.md)"
            );
        }
    };
}

/// One test per EventStore case: `loom_conformance::event_store_conformance!(|case: &'static str| async { Some(MyStore::new()) });`
#[macro_export]
macro_rules! event_store_conformance {
    ($factory:expr) => {
        $crate::__kit_tests!(
            event_store,
            EventStoreKit,
            $factory,
            [
                spi_21_capabilities_are_consistent,
                spi_21_required_methods_answer,
                spi_02_claims_match_behaviour,
                spi_23_append_then_read_round_trips,
                spi_23_reads_are_ascending_and_gapless,
                spi_23_stale_expected_next_is_conflict_and_writes_nothing,
                spi_23_invalid_batch_writes_nothing,
                spi_23_concurrent_appends_exactly_one_wins,
                spi_23_concurrent_appenders_one_winner_per_sequence,
                spi_23_crash_between_append_and_ack_is_all_or_nothing,
                spi_23_list_executions_sorted,
                spi_12_store_is_prefix_agnostic,
                spi_03_read_range_is_inclusive,
                spi_04_fence_tokens_strictly_increase,
                place_05_zombie_append_after_new_fence_is_refused,
                place_05_fenced_execution_refuses_unfenced_append,
                place_05_fence_survives_delete_execution,
                spi_05_acquire_fence_if_takes_when_expectation_holds,
                spi_05_acquire_fence_if_refuses_stale_expectation,
                spi_06_append_if_unchanged_appends_when_unchanged,
                spi_06_append_if_unchanged_rejects_after_concurrent_append,
                place_05_new_fence_invalidates_old_anchor,
                spi_07_incarnation_distinct_anchor,
                spi_07_deleted_stream_anchor_differs_from_never_created,
                spi_08_store_now_is_non_negative,
                spi_09_delete_through_keeps_later_events,
                spi_09_delete_through_includes_sequence_zero,
                spi_09_delete_through_with_concurrent_append,
                spi_09_delete_through_unknown_execution_is_not_found,
                spi_11_sealing_capability_is_well_formed,
                spi_13_list_executions_page_each_id_once,
                spi_13_page_limit_is_bounded,
                spi_14_copy_prefix_rewrites_execution_id,
                spi_14_copy_prefix_refusals,
                spi_14_delete_execution_removes_the_stream,
                spi_03_read_range_boundaries_on_a_long_stream,
                spi_23_append_batch_limit_from_both_sides,
                spi_23_bad_envelope_at_any_position_writes_nothing,
                spi_23_conflict_facts_from_both_sides,
                spi_23_values_read_back_identical,
                spi_23_id_length_limit_in_bytes,
                place_05_fence_is_checked_before_sequence,
                place_05_fence_token_compared_from_both_sides,
                spi_05_acquire_fence_if_compared_from_both_sides,
                spi_05_acquire_fence_if_sees_the_fence_a_deleted_stream_keeps,
                spi_06_batch_is_checked_before_the_anchor,
                spi_08_store_now_is_epoch_ms_near_the_callers_clock,
                spi_09_delete_through_at_zero_head_and_past_head,
                spi_13_exactly_full_last_page_has_no_cursor,
                spi_14_copy_prefix_checks_in_order,
                gap_27_out_of_range_ids_follow_the_table,
                spi_23_hostile_ids_are_distinct_streams_in_byte_order,
            ]
        );
    };
}

/// One test per SnapshotStore case.
#[macro_export]
macro_rules! snapshot_store_conformance {
    ($factory:expr) => {
        $crate::__kit_tests!(
            snapshot_store,
            SnapshotStoreKit,
            $factory,
            [
                spi_21_snapshot_capabilities_are_consistent,
                spi_15_claims_match_behaviour,
                spi_15_load_latest_returns_highest_sequence,
                spi_15_save_at_same_sequence_replaces,
                snap_09_decision_order_survives_key_reordering,
                spi_15_load_latest_sealed_matches_load_latest,
                spi_15_delete_execution_removes_every_snapshot,
                spi_16_prune_snapshots_deletes_exactly_through,
                spi_17_list_sequences_ascending,
                spi_15_latest_of_many_snapshots,
                spi_16_prune_at_zero_at_a_snapshot_and_past_the_latest,
                spi_15_values_read_back_identical,
                gap_27_out_of_range_ids_follow_the_table,
                spi_15_hostile_ids_keep_their_own_snapshots,
            ]
        );
    };
}

/// One test per ArchiveStore case.
#[macro_export]
macro_rules! archive_store_conformance {
    ($factory:expr) => {
        $crate::__kit_tests!(
            archive_store,
            ArchiveStoreKit,
            $factory,
            [
                spi_21_archive_capabilities_are_consistent,
                spi_18_claims_match_behaviour,
                spi_19_archive_keeps_exact_envelopes,
                spi_19_archive_is_idempotent_per_sequence,
                spi_19_archive_refuses_invalid_batches,
                spi_18_replace_segments_replaces_atomically,
                spi_18_delete_execution_removes_the_archive,
                spi_19_out_of_order_writes_read_back_ascending,
                spi_19_clash_at_first_middle_or_last_refuses_the_batch,
                spi_19_sequences_must_strictly_ascend,
                spi_19_batch_limit_from_both_sides,
                spi_19_values_read_back_identical,
                gap_27_out_of_range_ids_follow_the_table,
                spi_19_hostile_ids_keep_their_own_archives,
            ]
        );
    };
}

/// One test per LogLifecycle case; the factory gives an `(events, snapshots, archive)` triple.
#[macro_export]
macro_rules! lifecycle_conformance {
    ($factory:expr) => {
        $crate::__kit_tests!(
            lifecycle,
            LifecycleKit,
            $factory,
            [
                spi_19_compact_archives_exactly_the_removed_envelopes,
                spi_19_compact_without_archive_refuses,
                spi_10_compact_without_delete_through_refuses,
                spi_19_crash_between_archive_and_truncate_loses_nothing,
                spi_09_reads_during_compaction_see_whole_states,
                spi_16_prune_never_removes_the_latest_snapshot,
                spi_17_dry_run_reports_and_deletes_nothing,
            ]
        );
    };
}

/// One test per BranchRegistry case.
#[macro_export]
macro_rules! branch_registry_conformance {
    ($factory:expr) => {
        $crate::__kit_tests!(
            branch_registry,
            BranchRegistryKit,
            $factory,
            [
                gap_19_register_get_children,
                gap_19_duplicate_registration_refused,
                gap_19_invalid_records_refused,
                gap_19_chain_limit_from_both_sides,
                gap_19_children_in_byte_order_and_checks_in_order,
                gap_27_out_of_range_ids_follow_the_table,
            ]
        );
    };
}

/// One test per ExecutionDispatcher case; the factory must give a new, empty dispatcher each call.
#[macro_export]
macro_rules! dispatcher_conformance {
    ($factory:expr) => {
        $crate::__kit_tests!(
            dispatcher,
            DispatcherKit,
            $factory,
            [
                place_02_dispatch_claim_complete_is_fifo,
                place_03_package_carries_coordinates_only,
                place_07_unregistered_compute_target_refused,
                place_02_one_live_lease_per_execution,
                place_04_expired_lease_is_requeued,
                place_02_release_requeues_at_the_back,
                place_02_renew_extends_a_live_lease,
                place_02_blocked_head_does_not_block_the_queue,
                place_04_expired_leases_requeue_in_order_behind_newer_packages,
                place_02_execution_id_reused_after_completion,
                place_07_dispatch_checks_in_order,
                place_03_package_reads_back_identical,
                gap_27_out_of_range_ids_follow_the_table,
            ]
        );
    };
}

/// One test per TimerStore case; the factory must give a new, empty store each call.
#[macro_export]
macro_rules! timer_store_conformance {
    ($factory:expr) => {
        $crate::__kit_tests!(
            timer_store,
            TimerStoreKit,
            $factory,
            [
                ref_timers_schedule_is_idempotent_per_key,
                ref_timers_due_ordered_by_wake_at_then_id,
                ref_timers_cancel_removes,
                ref_timers_due_limit_is_bounded,
                ref_timers_due_boundaries_and_numeric_order,
                ref_timers_reschedule_after_cancel_and_byte_order,
                gap_27_out_of_range_ids_follow_the_table,
                ref_timers_hostile_keys_are_distinct_timers_in_byte_order,
            ]
        );
    };
}

/// One test per ContentStore case (plugin tier, SPI-20).
#[macro_export]
macro_rules! content_store_conformance {
    ($factory:expr) => {
        $crate::__kit_tests!(
            content_store,
            ContentStoreKit,
            $factory,
            [
                spi_21_content_capabilities_are_consistent,
                spi_20_content_claims_match_behaviour,
                spi_20_put_is_content_addressed_and_idempotent,
                spi_20_put_refuses_bad_arguments,
                spi_20_put_stream_stores_the_whole_object,
                spi_20_put_stream_chunk_error_stores_nothing,
                spi_20_put_stream_over_the_limit_stores_nothing,
                spi_20_owned_content_is_readable_only_by_its_owner,
                spi_20_seals_content_marker_keeps_bytes_readable,
                spi_20_content_limit_from_both_sides,
                spi_20_put_stream_abort_facts,
                spi_20_digest_spelling_is_exact,
                spi_20_bytes_read_back_identical,
                spi_20_several_owners_of_the_same_bytes,
                gap_27_out_of_range_ids_follow_the_table,
                spi_20_hostile_owners_are_distinct,
            ]
        );
    };
}

/// One test per DurableStateStore case (plugin tier, SPI-20).
#[macro_export]
macro_rules! durable_state_store_conformance {
    ($factory:expr) => {
        $crate::__kit_tests!(
            durable_state_store,
            DurableStateStoreKit,
            $factory,
            [
                spi_21_durable_state_capabilities_are_consistent,
                spi_20_state_create_then_get_round_trips,
                spi_20_state_stale_version_is_conflict_and_writes_nothing,
                spi_20_state_create_of_existing_key_is_conflict,
                spi_20_state_concurrent_writers_exactly_one_wins,
                spi_20_state_delete_is_conditional,
                spi_20_state_versions_never_repeat_after_delete,
                spi_20_state_invalid_keys_refused,
                spi_20_state_value_limit_from_both_sides,
                spi_20_state_values_read_back_identical,
                spi_20_state_conflict_facts_from_both_sides,
                gap_27_out_of_range_ids_follow_the_table,
                spi_20_hostile_keys_are_distinct,
            ]
        );
    };
}

/// One test per ReadModelStore case (plugin tier, SPI-20).
#[macro_export]
macro_rules! read_model_store_conformance {
    ($factory:expr) => {
        $crate::__kit_tests!(
            read_model_store,
            ReadModelStoreKit,
            $factory,
            [
                spi_21_read_model_capabilities_are_consistent,
                spi_20_read_model_upsert_replaces_and_get_reads,
                spi_20_query_pages_each_doc_once_in_id_order,
                spi_20_query_limit_out_of_range_is_invalid,
                spi_20_query_forged_cursor_is_invalid,
                spi_20_query_collections_are_separate,
                spi_20_exactly_full_last_page_has_no_cursor,
                spi_20_document_limit_from_both_sides,
                spi_20_documents_read_back_identical,
                spi_20_query_is_in_byte_order_of_ids,
                gap_27_out_of_range_ids_follow_the_table,
                spi_20_hostile_ids_are_distinct_documents_in_byte_order,
            ]
        );
    };
}

/// The older names of the kit macros (`loom_stores::testkit` days), kept so docs/spi.md
/// and existing callers stay valid.
#[macro_export]
macro_rules! event_store_kit {
    ($factory:expr) => {
        $crate::event_store_conformance!($factory);
    };
}
/// See [`event_store_kit!`].
#[macro_export]
macro_rules! snapshot_store_kit {
    ($factory:expr) => {
        $crate::snapshot_store_conformance!($factory);
    };
}
/// See [`event_store_kit!`].
#[macro_export]
macro_rules! archive_store_kit {
    ($factory:expr) => {
        $crate::archive_store_conformance!($factory);
    };
}
/// See [`event_store_kit!`].
#[macro_export]
macro_rules! branch_registry_kit {
    ($factory:expr) => {
        $crate::branch_registry_conformance!($factory);
    };
}
/// See [`event_store_kit!`].
#[macro_export]
macro_rules! dispatcher_kit {
    ($factory:expr) => {
        $crate::dispatcher_conformance!($factory);
    };
}
/// See [`event_store_kit!`].
#[macro_export]
macro_rules! timer_store_kit {
    ($factory:expr) => {
        $crate::timer_store_conformance!($factory);
    };
}
