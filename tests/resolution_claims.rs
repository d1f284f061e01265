//! A kernel that follows the spec but not this reference's resolutions of its open
//! points, as a kernel team would run it: `loom kernel-adapter --readings all` takes one
//! other reading of every modelled open point and its hello claims only the resolutions
//! it still follows. `loom vectors run` passes it (exit 0) with each difference listed as
//! a resolution difference, in the console and in report.json, JUnit, Markdown and HTML.

mod common;
use common::{loom, scratch, show};

fn readings_kernel() -> String {
    format!(
        "{} kernel-adapter --readings all",
        env!("CARGO_BIN_EXE_loom")
    )
}

#[test]
fn vectors_run_passes_a_kernel_of_other_readings_and_lists_each_resolution_difference() {
    let dir = scratch("vectors-run");
    let out = dir.join("out");
    let kernel = readings_kernel();
    let o = loom(&[
        "vectors",
        "run",
        "--kernel-cmd",
        &kernel,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("resolution differences ("), "{}", show(&o));
    assert!(
        stdout.contains("differs from the reference's resolution of GAP-"),
        "{}",
        show(&o)
    );
    assert!(
        stdout.contains("on spec-based evidence alone"),
        "{}",
        show(&o)
    );

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let results = report["results"].as_array().unwrap();
    let differing: Vec<&serde_json::Value> = results
        .iter()
        .filter(|r| r["status"] == "resolution-difference")
        .collect();
    assert!(differing.len() > 50, "{} differences", differing.len());
    assert!(results
        .iter()
        .all(|r| !["fail", "error", "timeout"].contains(&r["status"].as_str().unwrap())));
    for r in &differing {
        let m = r["message"].as_str().unwrap();
        assert!(
            m.contains("differs from the reference's resolution of GAP-")
                && m.contains("docs/decisions/"),
            "{m}"
        );
        assert_eq!(r["basis"], "resolution");
    }
    let summary = &report["summary"];
    assert_eq!(summary["ok"], true);
    assert_eq!(
        summary["by_status"]["resolution-difference"].as_u64(),
        Some(differing.len() as u64)
    );
    assert!(summary["rules_spec_based"].as_u64().unwrap() > 0);

    let junit = std::fs::read_to_string(out.join("report.xml")).unwrap();
    assert!(junit.contains("type=\"resolution-difference\""));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains(&format!("### Resolution differences ({})", differing.len())));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("id=\"resolution-differences\""));
    assert!(html.contains(&format!("Resolution differences ({})", differing.len())));
}

#[test]
fn an_unknown_reading_is_a_usage_error() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(["kernel-adapter", "--readings", "gap99-nothing"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown reading"));
}

/// `loom check --kernel-cmd` runs the vectors, the golden replay and the differential
/// campaign: each judges the same kernel by the same claims, so it passes (exit 0), with
/// the golden logs' differences (an fnv1a64 flow hash in decimal, GAP-02) measured
/// against the readings and listed as resolution differences.
#[test]
fn check_passes_a_kernel_of_other_readings() {
    let dir = scratch("check");
    let out = dir.join("out");
    let kernel = readings_kernel();
    let o = loom(&[
        "check",
        "--kernel-cmd",
        &kernel,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let results = report["results"].as_array().unwrap();
    for area in ["vectors", "golden", "fuzz"] {
        assert!(
            results.iter().any(|r| r["area"] == area),
            "no {area} result"
        );
    }
    assert!(results.iter().any(|r| r["area"] == "golden"
        && r["status"] == "resolution-difference"
        && r["message"]
            .as_str()
            .unwrap()
            .contains("differs from the reference's resolution of GAP-02")));
    assert!(results
        .iter()
        .all(|r| !["fail", "error", "timeout"].contains(&r["status"].as_str().unwrap())));
}
