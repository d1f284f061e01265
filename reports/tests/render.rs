//! HTML, Markdown and JSON renderings, and `render_all`.

mod common;

use common::*;
use loom_report::{
    render_all, render_html, render_markdown, CaseResult, Failure, Report, ReportError,
};
use serde_json::json;

const HOSTILE: &str = "<script>alert('x')</script>";

fn hostile_report() -> Report {
    let mut results = sample_results();
    results.push(CaseResult::fail(
        "vectors",
        "fold<b>",
        format!("{HOSTILE}&\"quoted\""),
        ["FOLD-09"],
        format!("message {HOSTILE} ``` | # ](javascript:x)"),
        Failure::values(
            json!({"k": HOSTILE}),
            json!({"k": "</pre><img src=x onerror=alert(1)>"}),
        )
        .with_diff(format!("- {HOSTILE}\n+ ok")),
    ));
    let mut e = env(7);
    e.command = Some(format!("loom conform --store-cmd '{HOSTILE}'"));
    e.extra.insert("note".into(), json!(HOSTILE));
    let mut rules = rules();
    rules[0].summary = format!("summary {HOSTILE}");
    Report::new(e, rules, results)
}

#[test]
fn html_escapes_hostile_case_ids_and_messages() {
    let html = render_html(&hostile_report()).expect("html");
    // The only script element is our own filter script.
    assert_eq!(html.matches("<script").count(), 1, "raw <script> leaked");
    assert!(!html.contains("<img"), "raw <img> leaked");
    assert!(!html.contains("<b>"), "raw <b> leaked");
    assert!(
        html.contains("&lt;script&gt;alert("),
        "escaped form missing"
    );
    assert!(html.contains("&amp;&quot;quoted&quot;") || html.contains("&amp;&#34;quoted&#34;"));
}

#[test]
fn html_contains_the_matrix_failures_and_environment() {
    let report = sample_report();
    let html = render_html(&report).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains(&report.digest));
    assert!(html.contains("Rule matrix"));
    // Every rule has a row with an anchor, and a link to it.
    for row in report.rule_matrix() {
        let anchor = format!("rule-{}", row.rule.id.to_lowercase());
        assert!(
            html.contains(&format!("<tr id=\"{anchor}\"")),
            "{}",
            row.rule.id
        );
        assert!(
            html.contains(&format!("<a href=\"#{anchor}\">{}</a>", row.rule.id)),
            "{}",
            row.rule.id
        );
    }
    assert!(html.contains(r#"<span class="st st-no-result">no-result</span>"#));
    assert!(html.contains(r#"<span class="st st-skipped">skipped</span>"#));
    // The failure shows the first differing path, highlighted on both sides.
    // minijinja escapes `/` too.
    assert!(html.contains("<dt>first difference</dt><dd><code class=\"path\">&#x2f;status</code>"));
    assert_eq!(
        html.matches(r#"<span class="hl">  &quot;status&quot;"#)
            .count(),
        2,
        "the differing line is highlighted in expected and actual"
    );
    assert!(html.contains("<dt>event index</dt><dd><strong>4</strong>"));
    // The failing case's rule links to the rule's row, which carries its text.
    assert!(html.contains("<a href=\"#rule-fold-09\" title=\"MUST · STEP_FAILED does not fail the execution\">FOLD-09</a>"), "{html}");
    assert!(html.contains("linux-x86_64"));
    // Self-contained: no external assets.
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    assert!(!html.contains("<link"));
}

#[test]
fn markdown_has_verdict_counts_coverage_and_failures() {
    let report = sample_report();
    let md = render_markdown(&report);
    assert!(md.starts_with("## Loom conformance report: ❌ FAIL"));
    assert!(md.contains("Rules with passing results: **1 / 5**"), "{md}");
    assert!(
        md.contains("| vectors | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 2 |"),
        "{md}"
    );
    assert!(md.contains("| FOLD |"));
    assert!(md.contains("#### FAIL `vectors/fold/fold-009`"));
    assert!(md.contains("- first differing path: `/status`"));
    assert!(md.contains("- event index: 4"));
    assert!(md.contains("```text\nexpected:\n{"));
    assert!(md.contains("#### ERROR `sim/deploy/seed-7`"));
    assert!(md.contains("#### TIMEOUT `sim/deploy/seed-8`"));
    assert!(md.contains("### Environment"));
    assert!(md.contains("| seed | 7 |"));

    let green = render_markdown(&green_report("vectors", 1, 2));
    assert!(green.starts_with("## Loom conformance report: ✅ PASS"));
    assert!(!green.contains("### Failures"));
}

#[test]
fn markdown_escapes_hostile_text() {
    let md = render_markdown(&hostile_report());
    assert!(md.contains("\\<script\\>"));
    // Raw HTML may appear only inside fenced code blocks, where it is shown
    // as text. Every fence we open is closed by an identical line.
    let mut open_fence: Option<&str> = None;
    for line in md.lines() {
        match open_fence {
            Some(fence) if line == fence => open_fence = None,
            Some(_) => {}
            None if line.starts_with("```") => {
                open_fence = Some(line.trim_end_matches("text"));
            }
            None => {
                // Every `<` in prose is backslash-escaped.
                let prose = without_code_spans(line);
                assert!(
                    !prose.replace("\\<", "").contains('<'),
                    "raw HTML outside code: {line}"
                );
            }
        }
    }
    assert_eq!(open_fence, None, "unclosed fence");
}

#[test]
fn markdown_truncates_huge_values_and_long_failure_lists() {
    let big = json!({"blob": "x".repeat(100_000)});
    let results: Vec<CaseResult> = (0..100)
        .map(|i| {
            CaseResult::fail(
                "fuzz",
                "t",
                format!("f{i:03}"),
                ["FOLD-01"],
                "m",
                Failure::values(big.clone(), json!(null)),
            )
        })
        .collect();
    let md = render_markdown(&Report::new(env(1), rules(), results));
    assert!(md.len() < 65_536, "fits a PR comment: {}", md.len());
    assert!(md.contains("more characters truncated"));
    assert!(md.contains("…and 70 more failures"));
}

#[test]
fn render_all_writes_every_file_atomically() {
    let dir = std::env::temp_dir().join(format!("loom-report-render-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let report = sample_report();
    let paths = render_all(&report, dir.join("nested")).expect("render_all");
    for p in [
        &paths.json,
        &paths.junit,
        &paths.markdown,
        &paths.html,
        &paths.summary,
        &paths.badge,
    ] {
        assert!(p.is_file(), "{}", p.display());
    }
    let back = Report::load(&paths.json).unwrap();
    assert_eq!(back, report);
    // Rendering again replaces the files and leaves no temporary files.
    render_all(&report, dir.join("nested")).unwrap();
    let names: Vec<String> = std::fs::read_dir(dir.join("nested"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 6, "{names:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn malformed_reports_are_errors_that_name_the_problem() {
    let good = serde_json::to_value(sample_report()).unwrap();
    let with = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        edit(&mut v);
        v.to_string()
    };
    let cases: Vec<(String, &str)> = vec![
        ("not json".to_string(), "expected"),
        ("[]".to_string(), "missing string field `schema`"),
        (
            with(&|v| v["schema"] = json!("junit")),
            "schema is \"junit\"",
        ),
        (
            with(&|v| v["schema_version"] = json!(4)),
            "schema_version 4 is not supported",
        ),
        (
            with(&|v| v["surprise"] = json!(1)),
            "unknown field `surprise`",
        ),
        (
            with(&|v| v["results"][0]["colour"] = json!(1)),
            "unknown field `colour`",
        ),
        (
            with(&|v| v["environment"]["host"] = json!(1)),
            "unknown field `host`",
        ),
        (
            with(&|v| v["results"][0]["status"] = json!("passed")),
            "unknown variant `passed`",
        ),
        (
            with(&|v| v["results"][0]["status"] = json!(null)),
            "line 1 column",
        ),
        (
            with(&|v| {
                v.as_object_mut()
                    .unwrap()
                    .remove("summary")
                    .map(|_| ())
                    .unwrap()
            }),
            "missing field `summary`",
        ),
    ];
    for (text, needle) in cases {
        let err = Report::from_json_str(&text).expect_err(&text);
        let msg = err.to_string();
        assert!(msg.contains(needle), "expected {needle:?} in {msg:?}");
    }
    let missing = Report::load("/nonexistent/report.json").unwrap_err();
    assert!(matches!(missing, ReportError::Io { .. }));
    assert!(missing.to_string().contains("/nonexistent/report.json"));
}

/// The line with its CommonMark code spans (a run of N backticks up to the
/// next run of exactly N) removed; what remains is rendered as Markdown.
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let mut closed = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    closed = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => i = end,
            None => {
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}
