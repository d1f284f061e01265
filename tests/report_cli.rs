//! Errors a person can act on: an output directory that cannot be written is refused
//! before any work starts, and `report render` refuses an edited report as `report merge`
//! does. Exit status 2 in both cases: the command could not run as asked.

use loom_report::{CaseResult, Environment, Report, RuleInfo};
use std::time::Instant;

mod common;
use common::{loom, scratch};

#[test]
fn an_unwritable_out_is_refused_before_the_run_starts() {
    let dir = scratch("out");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let bad = file.join("report");
    for args in [
        vec!["check", "--quiet", "--out"],
        vec!["conform", "--store", "memory", "--quiet", "--out"],
        vec!["vectors", "run", "--quiet", "--out"],
        vec!["sim", "--seeds", "1", "--quiet", "--out"],
    ] {
        let mut args = args.clone();
        args.push(bad.to_str().unwrap());
        let started = Instant::now();
        let o = loom(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("cannot write the report into"),
            "{args:?}: {err}"
        );
        assert!(
            o.stdout.is_empty(),
            "{args:?} printed results before failing"
        );
        assert!(
            started.elapsed().as_secs() < 20,
            "{args:?} ran before refusing"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn report_render_refuses_an_edited_report_and_renders_a_sound_one() {
    let dir = scratch("render");
    let report = Report::new(
        Environment::new("loom", "0.1.0"),
        vec![RuleInfo::new(
            "FOLD-09",
            "MUST NOT",
            "FOLD",
            "a step failure never fails the execution",
        )],
        vec![CaseResult::pass("vectors", "fold", "fold-1", ["FOLD-09"])],
    );
    let sound = dir.join("sound.json");
    std::fs::write(&sound, report.to_json_pretty()).unwrap();
    let o = loom(&[
        "report",
        "render",
        sound.to_str().unwrap(),
        "--html",
        dir.join("r.html").to_str().unwrap(),
        "--summary",
        dir.join("summary.md").to_str().unwrap(),
        "--badge",
        dir.join("badge.json").to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(std::fs::read_to_string(dir.join("summary.md"))
        .unwrap()
        .contains("PASS"));

    // The same report with a failure turned into a pass by hand.
    let edited = dir.join("edited.json");
    std::fs::write(
        &edited,
        report
            .to_json_pretty()
            .replace("\"total\": 1", "\"total\": 2"),
    )
    .unwrap();
    let o = loom(&[
        "report",
        "render",
        edited.to_str().unwrap(),
        "--html",
        dir.join("e.html").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("digest does not match"), "{err}");
    assert!(
        !dir.join("e.html").exists(),
        "nothing is rendered from an edited report"
    );
    let o = loom(&[
        "report",
        "merge",
        edited.to_str().unwrap(),
        "--out",
        dir.join("m").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "merge refuses it too");
    std::fs::remove_dir_all(&dir).unwrap();
}
