//! The kits through the stdio store protocol, against the Python example adapter
//! (examples/python-sqlite-store/adapter.py), plus adapters that crash, hang, write
//! garbage, answer the wrong id or lie about a capability: each must be reported
//! against the case it happened in, and the run must go on. Every test needs `python3`
//! (the adapters are Python scripts); without it the tests are reported as skipped.

use std::time::Duration;

use loom_conformance::kits::archive_store::ArchiveStoreKit;
use loom_conformance::kits::branch_registry::BranchRegistryKit;
use loom_conformance::kits::content_store::ContentStoreKit;
use loom_conformance::kits::dispatcher::DispatcherKit;
use loom_conformance::kits::durable_state_store::DurableStateStoreKit;
use loom_conformance::kits::event_store::EventStoreKit;
use loom_conformance::kits::lifecycle::LifecycleKit;
use loom_conformance::kits::read_model_store::ReadModelStoreKit;
use loom_conformance::kits::snapshot_store::SnapshotStoreKit;
use loom_conformance::kits::timer_store::TimerStoreKit;
use loom_conformance::stdio::{self, StdioHooks, StdioStore};
use loom_conformance::{run_kit, Kit, RunOptions};
use loom_report::{CaseResult, Status};
use loom_test_support::{located, Tool};

fn adapter_cmd(extra: &str) -> String {
    let py = located(Tool::Python3);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/python-sqlite-store/adapter.py"
    );
    format!("{py} {path} {extra}")
}

fn run<S, K: Kit<S>>(store: &StdioStore, make: impl Fn(&StdioStore) -> S) -> Vec<CaseResult> {
    loom_conformance::block_on(async {
        run_kit::<S, K, _, _>(
            |_cx, _fresh| {
                let s = make(store);
                async move { Ok(s) }
            },
            &RunOptions::default(),
            &StdioHooks(store),
            &mut |_| {},
        )
        .await
    })
    .expect("runtime")
}

fn failures(results: &[CaseResult]) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.status.is_failure())
        .map(|r| format!("{}: {}", r.case_id, r.message.clone().unwrap_or_default()))
        .collect()
}

fn spi_22_python_adapter_passes_every_kit_through_the_protocol() {
    let cmd = adapter_cmd("");
    let store = StdioStore::spawn(&cmd).expect("spawn the adapter");
    let mut all = Vec::new();
    all.extend(run::<_, EventStoreKit>(&store, StdioStore::clone));
    all.extend(run::<_, SnapshotStoreKit>(&store, StdioStore::clone));
    all.extend(run::<_, ArchiveStoreKit>(&store, StdioStore::clone));
    all.extend(run::<_, LifecycleKit>(&store, |s| {
        (s.clone(), s.clone(), s.clone())
    }));
    all.extend(run::<_, BranchRegistryKit>(&store, StdioStore::clone));
    let failed = failures(&all);
    assert!(failed.is_empty(), "the Python adapter failed: {failed:#?}");
    let skipped: Vec<_> = all
        .iter()
        .filter(|r| r.status == Status::SkipNotClaimed)
        .map(|r| r.case_id.clone())
        .collect();
    assert_eq!(
        skipped,
        vec![
            "spi_08_store_now_is_non_negative".to_string(),
            "spi_08_store_now_is_epoch_ms_near_the_callers_clock".to_string()
        ],
        "only storeNow is unclaimed"
    );
}

/// Protocol 1.1: the dispatcher, the timer store and the three plugin-tier SPIs go
/// through the protocol too, and the example adapter passes every case of their kits
/// (it claims every optional ContentStore feature, so nothing is skipped).
fn spi_22_python_adapter_passes_the_protocol_1_1_kits() {
    let cmd = adapter_cmd("");
    let store = StdioStore::spawn(&cmd).expect("spawn the adapter");
    for spi in [
        stdio::SPI_DISPATCHER,
        stdio::SPI_TIMER_STORE,
        stdio::SPI_CONTENT_STORE,
        stdio::SPI_DURABLE_STATE_STORE,
        stdio::SPI_READ_MODEL_STORE,
    ] {
        assert!(store.implements(spi), "hello does not list {spi}");
    }
    let mut all = Vec::new();
    all.extend(run::<_, DispatcherKit>(&store, StdioStore::clone));
    all.extend(run::<_, TimerStoreKit>(&store, StdioStore::clone));
    all.extend(run::<_, ContentStoreKit>(&store, StdioStore::clone));
    all.extend(run::<_, DurableStateStoreKit>(&store, StdioStore::clone));
    all.extend(run::<_, ReadModelStoreKit>(&store, StdioStore::clone));
    let failed = failures(&all);
    assert!(failed.is_empty(), "the Python adapter failed: {failed:#?}");
    let expected = <DispatcherKit as Kit<StdioStore>>::cases().len()
        + <TimerStoreKit as Kit<StdioStore>>::cases().len()
        + <ContentStoreKit as Kit<StdioStore>>::cases().len()
        + <DurableStateStoreKit as Kit<StdioStore>>::cases().len()
        + <ReadModelStoreKit as Kit<StdioStore>>::cases().len();
    let passed = all.iter().filter(|r| r.status == Status::Pass).count();
    assert_eq!(passed, expected, "every case passes, none is skipped");
}

/// An adapter that keeps what an aborted `putStream` received breaks ADR 0059; both
/// abort cases catch it, and no other ContentStore case fails.
fn spi_20_partial_put_stream_adapter_is_caught_through_the_protocol() {
    let cmd = adapter_cmd("--lie-partial-stream");
    let store = StdioStore::spawn(&cmd).expect("spawn the adapter");
    let results = run::<_, ContentStoreKit>(&store, StdioStore::clone);
    let mut failed: Vec<&str> = results
        .iter()
        .filter(|r| r.status.is_failure())
        .map(|r| r.case_id.as_str())
        .collect();
    failed.sort_unstable();
    assert_eq!(
        failed,
        [
            "spi_20_put_stream_chunk_error_stores_nothing",
            "spi_20_put_stream_over_the_limit_stores_nothing"
        ],
        "{results:#?}"
    );
    for r in results.iter().filter(|r| r.status.is_failure()) {
        assert_eq!(r.status, Status::Fail, "{r:?}");
        assert!(
            r.message
                .as_deref()
                .unwrap_or("")
                .contains("partial object"),
            "{r:?}"
        );
    }
}

fn spi_02_lying_python_adapter_is_caught_through_the_protocol() {
    let cmd = adapter_cmd("--lie");
    let store = StdioStore::spawn(&cmd).expect("spawn the adapter");
    let results = run::<_, EventStoreKit>(&store, StdioStore::clone);
    let probe = results
        .iter()
        .find(|r| r.case_id == "spi_02_claims_match_behaviour")
        .expect("case");
    assert_eq!(probe.status, Status::Fail, "{probe:?}");
    assert!(
        probe.message.as_deref().unwrap_or("").contains("storeNow"),
        "{probe:?}"
    );
    let store_now = results
        .iter()
        .find(|r| r.case_id == "spi_08_store_now_is_non_negative")
        .expect("case");
    assert_eq!(store_now.status, Status::Fail, "{store_now:?}");
}

/// A Python adapter wrapping the example, misbehaving on the first `eventStore.read`
/// after a marker execution id appears: `mode` is crash, hang, garbage or wrong-id.
fn faulty_cmd(mode: &str) -> String {
    let py = located(Tool::Python3);
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/python-sqlite-store"
    );
    let script = format!(
        r#"
import sys, json, time
sys.path.insert(0, {dir:?})
import adapter
store = adapter.Store(":memory:", False)
table = adapter.handlers(store)
for line in sys.stdin:
    req = json.loads(line)
    params = req.get("params") or {{}}
    if req["method"] == "eventStore.read" and "spi_23-round-trip" in params.get("executionId", ""):
        mode = {mode:?}
        if mode == "crash": sys.exit(3)
        if mode == "hang": time.sleep(60)
        if mode == "garbage": print("this is not json", flush=True); continue
        if mode == "wrong-id": print(json.dumps({{"id": req["id"] + 100, "result": []}}), flush=True); continue
    try:
        res = {{"id": req["id"], "result": table[req["method"]](params)}}
    except adapter.StoreError as e:
        res = {{"id": req["id"], "error": e.to_json()}}
    except KeyError as e:
        res = {{"id": req["id"], "error": {{"kind": "unsupported", "message": str(e), "method": ""}}}}
    print(json.dumps(res), flush=True)
"#
    );
    let path = std::env::temp_dir().join(format!("loom-faulty-{mode}-{}.py", std::process::id()));
    std::fs::write(&path, script).expect("write the faulty adapter");
    format!("{py} {}", path.display())
}

fn assert_fault_reported(mode: &str, want: Status, needle: &str) {
    let cmd = faulty_cmd(mode);
    let store = StdioStore::spawn(&cmd)
        .expect("spawn")
        .with_call_timeout(Duration::from_millis(800));
    let results = run::<_, EventStoreKit>(&store, StdioStore::clone);
    let hit = results
        .iter()
        .find(|r| r.case_id == "spi_23_append_then_read_round_trips")
        .expect("case");
    assert_eq!(hit.status, want, "{mode}: {hit:?}");
    assert!(
        hit.message.as_deref().unwrap_or("").contains(needle),
        "{mode}: {hit:?}"
    );
    // The adapter was restarted: the next cases ran and passed.
    let next = results
        .iter()
        .find(|r| r.case_id == "spi_23_reads_are_ascending_and_gapless")
        .expect("case");
    assert_eq!(
        next.status,
        Status::Pass,
        "{mode}: the run did not recover: {next:?}"
    );
}

fn stdio_crashing_adapter_is_an_error_of_that_case() {
    assert_fault_reported("crash", Status::Error, "exited with code 3");
}

fn stdio_hanging_adapter_is_a_timeout_of_that_case() {
    assert_fault_reported("hang", Status::Timeout, "did not answer");
}

fn stdio_non_json_output_is_an_error_of_that_case() {
    assert_fault_reported("garbage", Status::Error, "not JSON");
}

fn stdio_wrong_response_id_is_an_error_of_that_case() {
    assert_fault_reported("wrong-id", Status::Error, "which was never asked");
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, Tool};
    run(vec![
        needs(
            Tool::Python3,
            "spi_22_python_adapter_passes_every_kit_through_the_protocol",
            |_| spi_22_python_adapter_passes_every_kit_through_the_protocol(),
        ),
        needs(
            Tool::Python3,
            "spi_22_python_adapter_passes_the_protocol_1_1_kits",
            |_| spi_22_python_adapter_passes_the_protocol_1_1_kits(),
        ),
        needs(
            Tool::Python3,
            "spi_20_partial_put_stream_adapter_is_caught_through_the_protocol",
            |_| spi_20_partial_put_stream_adapter_is_caught_through_the_protocol(),
        ),
        needs(
            Tool::Python3,
            "spi_02_lying_python_adapter_is_caught_through_the_protocol",
            |_| spi_02_lying_python_adapter_is_caught_through_the_protocol(),
        ),
        needs(
            Tool::Python3,
            "stdio_crashing_adapter_is_an_error_of_that_case",
            |_| stdio_crashing_adapter_is_an_error_of_that_case(),
        ),
        needs(
            Tool::Python3,
            "stdio_hanging_adapter_is_a_timeout_of_that_case",
            |_| stdio_hanging_adapter_is_a_timeout_of_that_case(),
        ),
        needs(
            Tool::Python3,
            "stdio_non_json_output_is_an_error_of_that_case",
            |_| stdio_non_json_output_is_an_error_of_that_case(),
        ),
        needs(
            Tool::Python3,
            "stdio_wrong_response_id_is_an_error_of_that_case",
            |_| stdio_wrong_response_id_is_an_error_of_that_case(),
        ),
    ])
}
