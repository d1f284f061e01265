//! The JavaScript examples, through the real protocols and the real `loom` binary: the
//! in-memory Node store passes every kit (and a lying variant is caught), and the
//! minimal Node kernel passes every vector of the kinds it claims and nothing else is
//! run against it (and a planted bug is caught, rule and path named).
//!
//! They need `node` (20 or newer); without it each test is reported as skipped (and
//! fails under `LOOM_REQUIRE_TOOLS=1`, which CI sets). CI installs Node when the machine
//! lacks it (.ci/run).

use loom_report::{Report, Status};
use std::path::Path;
use std::process::Output;

mod common;
use common::{loom, scratch};

fn example(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(path)
        .display()
        .to_string()
}

fn run(args: &[&str], out: &Path) -> (Output, Report) {
    let mut all = args.to_vec();
    all.extend(["--quiet", "--out", out.to_str().unwrap()]);
    let o = loom(&all);
    let report = Report::load(out.join("report.json")).unwrap_or_else(|e| {
        panic!(
            "{e}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o, report)
}

fn failures(r: &Report) -> Vec<String> {
    r.failures()
        .map(|f| {
            format!(
                "{}/{}: {}",
                f.suite,
                f.case_id,
                f.message.as_deref().unwrap_or("")
            )
        })
        .collect()
}

fn spi_22_the_node_store_passes_every_kit_through_the_protocol() {
    let out = scratch("store");
    let store = format!("cmd:node {}", example("node-store/adapter.mjs"));
    let (o, r) = run(&["conform", "--store", &store], &out);
    assert_eq!(o.status.code(), Some(0), "{:#?}", failures(&r));
    // The Node store keeps its data in the process, so its hello claims neither a
    // shared backend nor durability: the concurrent and the kill cases are skipped,
    // visibly, each saying why.
    let concurrent = loom_conformance::kits::concurrency::NAME;
    let durability = "durability";
    for kit in loom_conformance::kits::KIT_NAMES {
        let mine: Vec<_> = r.results.iter().filter(|x| x.suite == *kit).collect();
        assert!(!mine.is_empty(), "kit {kit} did not run");
        let passed = mine.iter().filter(|x| x.status == Status::Pass).count();
        if *kit == concurrent || *kit == durability {
            let claim = if *kit == concurrent {
                "sharedBackend"
            } else {
                "durable"
            };
            assert!(
                mine.iter().all(|x| x.status == Status::SkipNotClaimed
                    && x.message.as_deref().unwrap_or("").contains(claim)),
                "{mine:#?}"
            );
        } else {
            assert!(passed > 0, "kit {kit}: nothing passed");
        }
    }
    // The only other cases not run are the two that need storeNow, which a
    // single-process store does not claim (SPI-08): everything the adapter claims is
    // exercised.
    let skipped: Vec<_> = r
        .results
        .iter()
        .filter(|x| x.status.is_skip() && x.suite != concurrent && x.suite != durability)
        .collect();
    assert!(
        skipped
            .iter()
            .all(|x| x.message.as_deref().unwrap_or("").contains("storeNow")),
        "unexpected skips: {:#?}",
        skipped
            .iter()
            .map(|x| (&x.case_id, &x.message))
            .collect::<Vec<_>>()
    );
    assert!(skipped.len() <= 2, "{} skips", skipped.len());
    let hello = r
        .environment
        .implementation_hello
        .as_ref()
        .expect("hello recorded");
    assert_eq!(hello["name"], "node-memory-store");
    std::fs::remove_dir_all(&out).unwrap();
}

fn spi_02_a_node_store_that_claims_what_it_lacks_is_caught() {
    let out = scratch("lie");
    let store = format!("cmd:node {} --lie", example("node-store/adapter.mjs"));
    let (o, r) = run(
        &["conform", "--store", &store, "--kit", "event-store"],
        &out,
    );
    assert_eq!(o.status.code(), Some(1));
    let failed = failures(&r);
    assert!(
        failed
            .iter()
            .any(|f| f.contains("spi_02_claims_match_behaviour")),
        "{failed:#?}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

const CLAIMED: [&str; 3] = ["fold", "normalize", "digest"];

fn conf_03_the_node_minimal_kernel_passes_every_vector_it_claims() {
    let out = scratch("kernel");
    let kernel = format!("node {}", example("node-kernel/minimal-kernel.mjs"));
    let (o, r) = run(&["vectors", "run", "--kernel-cmd", &kernel], &out);
    assert_eq!(o.status.code(), Some(0), "{:#?}", failures(&r));
    let set = loom_vectors::set::embedded_set().unwrap_or_else(|e| panic!("{}", e[0]));
    // One result per vector, and the hello's syscall ABI (ABI-05): a kernel that runs no
    // flows advertises none, which is a skip.
    assert_eq!(r.results.len(), set.vectors.len() + 1);
    for result in &r.results {
        if CLAIMED.contains(&result.suite.as_str()) {
            assert_eq!(result.status, Status::Pass, "{result:?}");
        } else {
            assert_eq!(result.status, Status::SkipNotClaimed, "{result:?}");
        }
    }
    for kind in CLAIMED {
        assert!(
            r.results.iter().any(|x| x.suite == kind),
            "no {kind} vector ran"
        );
    }
    let hello = r
        .environment
        .implementation_hello
        .as_ref()
        .expect("hello recorded");
    assert_eq!(hello["kinds"], serde_json::json!(CLAIMED));
    std::fs::remove_dir_all(&out).unwrap();
}

/// `loom check --kernel-cmd` judges the unmodified Node kernel on what it claims: the
/// vectors of its kinds and the campaign's checks of them pass, the golden replay (it
/// claims no `runtime`) is shown as not claimed and does not fail the verdict, and the
/// verdict and figure name what was judged (exit 0).
fn conf_03_check_judges_the_node_kernel_on_what_it_claims() {
    let out = scratch("check");
    let kernel = format!("node {}", example("node-kernel/minimal-kernel.mjs"));
    let mut all = vec!["check", "--kernel-cmd", kernel.as_str()];
    all.extend(["--out", out.to_str().unwrap()]);
    let o = loom(&all);
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let r = Report::load(out.join("report.json")).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{:#?}", failures(&r));
    assert!(
        stdout.contains(
            "verdict: PASS (judged: fold, normalize, digest; not claimed: ingress, emit, runtime)"
        ),
        "{stdout}"
    );
    let kernel = r.subject("kernel").expect("the kernel subject");
    let claims = kernel.claims.as_ref().expect("its claims");
    assert_eq!(claims.judged, CLAIMED);
    assert_eq!(claims.not_claimed, ["ingress", "emit", "runtime"]);
    // The golden replay ran nothing it claims: every entry is shown as not claimed, and
    // the part is not expected.
    let golden: Vec<_> = r.results.iter().filter(|x| x.area == "golden").collect();
    assert!(!golden.is_empty());
    assert!(golden.iter().all(|x| x.status == Status::SkipNotClaimed));
    assert!(!r.expectations.parts.iter().any(|p| p.area == "golden"));
    // Every claimed kind passed, both figures are given.
    for kind in CLAIMED {
        assert!(r
            .results
            .iter()
            .any(|x| x.area == "vectors" && x.suite == kind && x.status == Status::Pass));
    }
    let f = &r.summary.subjects[0];
    assert!(
        f.rules_claimed > 0 && f.rules_claimed_passing == f.rules_claimed,
        "{f:?}"
    );
    assert!(f.rules_applicable > f.rules_claimed, "{f:?}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("not claimed: ingress, emit, runtime"));
    assert!(
        html.contains("class=\"verdict pass\">PASS<"),
        "the page says PASS"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

fn fold_38_a_node_kernel_that_drops_decision_seq_fails_with_rule_and_path() {
    let out = scratch("bug");
    let kernel = format!(
        "node {} --bug no-seq",
        example("node-kernel/minimal-kernel.mjs")
    );
    let (o, r) = run(
        &[
            "vectors",
            "run",
            "--kernel-cmd",
            &kernel,
            "--filter",
            "fold-fold38",
        ],
        &out,
    );
    assert_eq!(o.status.code(), Some(1));
    let failing: Vec<_> = r.failures().collect();
    assert!(!failing.is_empty(), "the planted bug went unnoticed");
    for f in &failing {
        assert_eq!(f.status, Status::Fail, "{f:?}");
        assert!(f.rules.iter().any(|x| x == "FOLD-38"), "{f:?}");
        let path = f
            .failure
            .as_ref()
            .and_then(|x| x.path.as_deref())
            .unwrap_or("");
        assert!(
            path.contains("/variables/_decisions/") && path.ends_with("/seq"),
            "{}: path {path}",
            f.case_id
        );
    }
    std::fs::remove_dir_all(&out).unwrap();
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, Tool};
    run(vec![
        needs(
            Tool::Node,
            "spi_22_the_node_store_passes_every_kit_through_the_protocol",
            |_| spi_22_the_node_store_passes_every_kit_through_the_protocol(),
        ),
        needs(
            Tool::Node,
            "spi_02_a_node_store_that_claims_what_it_lacks_is_caught",
            |_| spi_02_a_node_store_that_claims_what_it_lacks_is_caught(),
        ),
        needs(
            Tool::Node,
            "conf_03_the_node_minimal_kernel_passes_every_vector_it_claims",
            |_| conf_03_the_node_minimal_kernel_passes_every_vector_it_claims(),
        ),
        needs(
            Tool::Node,
            "conf_03_check_judges_the_node_kernel_on_what_it_claims",
            |_| conf_03_check_judges_the_node_kernel_on_what_it_claims(),
        ),
        needs(
            Tool::Node,
            "fold_38_a_node_kernel_that_drops_decision_seq_fails_with_rule_and_path",
            |_| fold_38_a_node_kernel_that_drops_decision_seq_fails_with_rule_and_path(),
        ),
    ])
}
