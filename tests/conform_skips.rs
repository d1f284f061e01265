//! `loom conform`'s own reports keep a kit case for an unclaimed capability as a skip:
//! `skip-not-claimed` in report.json and a `<skipped type="skip-not-claimed">` test case in
//! the JUnit file, never a pass. The SQLite store is single-process and does not claim
//! `storeNow` (SPI-08), so its two `storeNow` cases are the subject; the rest of the
//! EventStore kit runs too (a run of nothing but skips fails by design).

use std::process::Command;

#[test]
fn spi_02_unclaimed_kit_cases_are_skips_in_loom_conform_json_and_junit() {
    let out = std::env::temp_dir().join(format!("loom-conform-skips-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(["conform", "--store", "sqlite", "--kit", "event-store"])
        .args(["--quiet", "--out"])
        .arg(&out)
        .output()
        .expect("run loom conform");
    let console = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "skips are allowed: {console}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let results = json["results"].as_array().expect("results");
    let mut skipped: Vec<&str> = results
        .iter()
        .filter(|r| r["status"] != "pass")
        .map(|r| r["case_id"].as_str().unwrap_or_default())
        .collect();
    skipped.sort();
    assert_eq!(
        skipped,
        [
            "spi_08_store_now_is_epoch_ms_near_the_callers_clock",
            "spi_08_store_now_is_non_negative"
        ],
        "exactly the storeNow cases do not pass"
    );
    for r in results.iter().filter(|r| r["status"] != "pass") {
        assert_eq!(r["status"], "skip-not-claimed", "{r}");
    }

    let xml = std::fs::read_to_string(out.join("report.xml")).unwrap();
    let store_now: Vec<&str> = xml
        .split("<testcase ")
        .skip(1)
        .filter(|c| c.starts_with(r#"name="spi_08_"#))
        .collect();
    assert_eq!(store_now.len(), 2, "{xml}");
    for case in store_now {
        let body = &case[..case.find("</testcase>").expect("a test case with a body")];
        let skip =
            r#"<skipped message="the store does not claim storeNow" type="skip-not-claimed"/>"#;
        assert!(
            body.contains(skip),
            "an unclaimed case is a <skipped/> test case: {body}"
        );
    }
    assert_eq!(xml.matches("<skipped ").count(), 2, "{xml}");
    let _ = std::fs::remove_dir_all(&out);
}
