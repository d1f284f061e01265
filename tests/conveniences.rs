//! The conveniences of the commands that run cases: listing before running, a smoke
//! check of an adapter, stopping at a failure limit, and report command lines that
//! paste back into a shell.

mod common;
use common::{code, scratch};
use loom_report::{Report, Verdict};
use std::path::Path;
use std::process::{Command, Output};

fn loom_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("loom runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn conform_list_names_every_case_with_its_rules_and_runs_nothing() {
    let dir = scratch("list");
    let o = loom_in(&dir, &["conform", "--list"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    for (kit, cases) in loom_harness::kits::KIT_CASES {
        let heading = format!("{kit} ({} cases)\n", cases.len());
        let (_, section) = text.split_once(&heading).unwrap_or_else(|| panic!("{kit}"));
        // The kit's own lines, up to the next heading (one case id may be in two kits).
        let section: String = section
            .lines()
            .take_while(|l| l.starts_with("  "))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(section.lines().count(), cases.len(), "{kit}");
        for c in cases {
            let line = section
                .lines()
                .find(|l| l.split_whitespace().next() == Some(c.id))
                .unwrap_or_else(|| panic!("{} is not listed", c.id));
            for rule in c.rules {
                assert!(line.contains(rule), "{line}: {rule}");
            }
        }
    }
    let total: usize = loom_harness::kits::KIT_CASES
        .iter()
        .map(|(_, c)| c.len())
        .sum();
    assert!(
        text.contains(&format!(
            "{total} cases in {} kits",
            loom_harness::kits::KIT_CASES.len()
        )),
        "{text}"
    );
    // Nothing ran: no report folder.
    assert!(!dir.join("loom-reports").exists());
    // The filters of a run apply.
    let o = loom_in(
        &dir,
        &[
            "conform",
            "--list",
            "--kit",
            "event-store",
            "--case",
            "spi_07",
        ],
    );
    let text = stdout(&o);
    assert!(text.starts_with("event-store ("), "{text}");
    assert!(
        text.lines()
            .skip(1)
            .all(|l| l.contains("spi_07") || l.contains(" cases in ")),
        "{text}"
    );
    assert_eq!(
        code(&loom_in(&dir, &["conform", "--list", "--kit", "nope"])),
        2
    );
    assert_eq!(
        code(&loom_in(&dir, &["conform", "--list", "--case", "zzz-none"])),
        2
    );
}

#[test]
fn vectors_list_filters_by_id_kind_and_rule() {
    let dir = scratch("vlist");
    let o = loom_in(
        &dir,
        &["vectors", "list", "--filter", "fnv1a64", "--kind", "digest"],
    );
    assert_eq!(code(&o), 0);
    let text = stdout(&o);
    assert!(!text.is_empty());
    assert!(
        text.lines()
            .all(|l| l.starts_with("digest ") && l.contains("fnv1a64")),
        "{text}"
    );
    let o = loom_in(
        &dir,
        &["vectors", "list", "--filter", "fnv1a64", "--kind", "fold"],
    );
    assert_eq!(
        code(&o),
        2,
        "filters that match nothing are refused, not an empty success"
    );
}

#[test]
fn smoke_runs_the_handshake_and_a_few_cases_and_says_the_run_is_partial() {
    let dir = scratch("smoke");
    let o = loom_in(
        &dir,
        &[
            "conform", "--store", "memory", "--smoke", "--quiet", "--out", "c",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let r = Report::load(dir.join("c/report.json")).unwrap();
    assert_eq!(r.verdict(), Verdict::PartialPass);
    assert!(stdout(&o).contains("(--smoke)"), "{}", stdout(&o));
    for (kit, cases) in loom_harness::kits::KIT_CASES {
        let ran = r.results.iter().filter(|x| x.suite == kit).count();
        assert_eq!(ran, cases.len().min(2), "{kit}");
    }
    let o = loom_in(
        &dir,
        &["vectors", "run", "--smoke", "--quiet", "--out", "v"],
    );
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let r = Report::load(dir.join("v/report.json")).unwrap();
    assert_eq!(r.verdict(), Verdict::PartialPass);
    let mut per_kind = std::collections::BTreeMap::<&str, usize>::new();
    for x in r.results.iter().filter(|x| x.suite != "adapter") {
        *per_kind.entry(x.suite.as_str()).or_default() += 1;
    }
    assert!(per_kind.len() >= 5, "every kind: {per_kind:?}");
    assert!(per_kind.values().all(|n| *n <= 3), "{per_kind:?}");
}

#[test]
fn check_stops_its_parts_at_the_failure_limit() {
    let dir = scratch("fail-fast");
    // A kernel that exits at once: the vectors part's handshake fails, and with
    // --fail-fast the replay and fuzz parts do not start.
    let o = loom_in(
        &dir,
        &[
            "check",
            "--kernel-cmd",
            "true",
            "--fail-fast",
            "--quiet",
            "--out",
            "r",
        ],
    );
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let r = Report::load(dir.join("r/report.json")).unwrap();
    assert!(
        r.results.iter().all(|x| x.area == "vectors"),
        "{:?}",
        r.results
    );
    let partial = r.partial_sentences().join("\n");
    assert!(partial.contains("the replay and fuzz parts"), "{partial}");
    assert!(partial.contains("stopped after 1 failure"), "{partial}");
    // Without it, every part runs (and fails) on its own.
    let o = loom_in(
        &dir,
        &["check", "--kernel-cmd", "true", "--quiet", "--out", "s"],
    );
    assert_eq!(code(&o), 1);
    let r = Report::load(dir.join("s/report.json")).unwrap();
    assert!(r.results.iter().any(|x| x.area != "vectors"));
}

#[test]
fn the_reports_command_line_pastes_back_into_a_shell() {
    let dir = scratch("quoted");
    let o = loom_in(
        &dir,
        &[
            "conform",
            "--store",
            "memory",
            "--case",
            "spi_07 x's",
            "--out",
            "q",
        ],
    );
    // No case matches that filter: the run is refused; use a filter that matches.
    assert_eq!(code(&o), 2);
    let o = loom_in(
        &dir,
        &[
            "conform",
            "--store",
            "memory",
            "--kit",
            "event-store",
            "--case",
            "spi_0",
            "--quiet",
            "--out",
            "out dir",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let r = Report::load(dir.join("out dir/report.json")).unwrap();
    let command = r.environment.command.unwrap();
    assert!(command.ends_with("--out 'out dir'"), "{command}");
    // The shell splits it back into the same arguments.
    let echoed = Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\n' {command}"))
        .output()
        .unwrap();
    let words: Vec<String> = String::from_utf8_lossy(&echoed.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(
        &words[1..],
        [
            "conform",
            "--store",
            "memory",
            "--kit",
            "event-store",
            "--case",
            "spi_0",
            "--quiet",
            "--out",
            "out dir"
        ]
    );
}

#[test]
fn a_merge_of_partial_runs_says_partial_and_what_each_left_out() {
    let dir = scratch("merge-partial");
    for (kit, out) in [("event-store", "a"), ("snapshot-store", "b")] {
        let o = loom_in(
            &dir,
            &[
                "conform", "--store", "memory", "--kit", kit, "--quiet", "--out", out,
            ],
        );
        assert_eq!(code(&o), 0, "{}", stdout(&o));
    }
    let o = loom_in(
        &dir,
        &[
            "report",
            "merge",
            "a/report.json",
            "b/report.json",
            "--out",
            "m",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let text = stdout(&o);
    assert!(text.contains("verdict: PARTIAL PASS"), "{text}");
    assert!(
        text.contains("every kit but event-store") && text.contains("every kit but snapshot-store"),
        "{text}"
    );
}
