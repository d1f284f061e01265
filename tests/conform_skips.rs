//! `loom conform`'s own reports keep a kit case for an unclaimed capability as a skip:
//! `skip-not-claimed` in report.json and a `<skipped type="skip-not-claimed">` test case in
//! the JUnit file, never a pass. The SQLite store is single-process and does not claim
//! `storeNow` (SPI-08), so its two `storeNow` cases are the subject.

use std::process::Command;

#[test]
fn spi_02_unclaimed_kit_cases_are_skips_in_loom_conform_json_and_junit() {
    let out = std::env::temp_dir().join(format!("loom-conform-skips-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(["conform", "--store", "sqlite", "--kit", "event-store"])
        .args(["--case", "spi_08", "--quiet", "--out"])
        .arg(&out)
        .output()
        .expect("run loom conform");
    let console = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "skips are allowed: {console}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let results = json["results"].as_array().expect("results");
    assert_eq!(results.len(), 2, "the two storeNow cases: {results:#?}");
    for r in results {
        assert_eq!(r["status"], "skip-not-claimed", "{r}");
        assert!(r["case_id"].as_str().unwrap().starts_with("spi_08_"), "{r}");
    }

    let xml = std::fs::read_to_string(out.join("report.xml")).unwrap();
    let cases: Vec<&str> = xml.split("<testcase ").skip(1).collect();
    assert_eq!(cases.len(), 2, "{xml}");
    for case in cases {
        let body = &case[..case.find("</testcase>").expect("a test case with a body")];
        assert!(body.contains(r#"name="spi_08_"#), "{body}");
        assert!(
            body.contains(
                r#"<skipped message="the store does not claim storeNow" type="skip-not-claimed"/>"#
            ),
            "an unclaimed case is a <skipped/> test case: {body}"
        );
    }
    assert!(xml.contains(r#"skipped="2""#), "{xml}");
    let _ = std::fs::remove_dir_all(&out);
}
