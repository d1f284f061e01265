//! The two small files a CI page shows: `summary.md`, a short GitHub job summary
//! (verdict, counts, the first failures), and `badge.json`, a shields.io endpoint badge.
//! Both are derived from the report and never read back.

use super::markdown::{cell, escape, inline_code};
use super::truncate_chars;
use crate::report::{Report, Verdict};
use serde_json::json;

/// The job summary lists at most this many failures; the rest are counted.
pub const SUMMARY_FAILURES_MAX: usize = 10;
/// Each failure's explanation is cut to this many characters.
pub const SUMMARY_MESSAGE_CHARS_MAX: usize = 200;

/// A short Markdown summary for `$GITHUB_STEP_SUMMARY`: the verdict, the counts, and
/// one table row per failure (case, rules, where it first differs, what happened).
pub fn render_summary(report: &Report) -> String {
    let s = &report.summary;
    let mut out = String::new();
    out.push_str(&format!(
        "### Loom conformance: {}\n\n",
        super::verdict_with_mark(report.verdict())
    ));
    let skipped = s.by_status.skip_not_claimed + s.by_status.skip_untestable;
    out.push_str(&format!(
        "**{} failing** of {} results ({} passed, {} known failures, {} skipped).\n\n",
        s.failures, s.total, s.by_status.pass, s.by_status.xfail, skipped,
    ));
    for line in report.figure_sentences() {
        out.push_str(&format!("- {}\n", escape(&line)));
    }
    if !report.summary.subjects.is_empty() {
        out.push('\n');
    }
    for reason in &s.verdict_reasons {
        out.push_str(&format!("- FAIL: {}\n", escape(reason)));
    }
    if !s.verdict_reasons.is_empty() {
        out.push('\n');
    }
    let partial = report.partial_sentences();
    for line in &partial {
        out.push_str(&format!("- {}\n", escape(line)));
    }
    if !partial.is_empty() {
        out.push('\n');
    }
    if s.unexpected_passes > 0 {
        out.push_str(&format!(
            "{} baseline entries now pass: remove them from the baseline.\n\n",
            s.unexpected_passes
        ));
    }
    let failures: Vec<_> = report.failures().collect();
    if !failures.is_empty() {
        out.push_str(
            "| status | case | rules | first difference | what happened |\n|---|---|---|---|---|\n",
        );
        for r in failures.iter().take(SUMMARY_FAILURES_MAX) {
            let f = r.failure.as_ref();
            let mut at = Vec::new();
            if let Some(i) = f.and_then(|f| f.event_index) {
                at.push(format!("event {i}"));
            }
            if let Some(p) = f.and_then(|f| f.path.as_deref()) {
                at.push(inline_code(if p.is_empty() { "(root)" } else { p }));
            }
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                r.status,
                inline_code(&format!("{}/{}/{}", r.area, r.suite, r.case_id)),
                cell(&r.rules.join(", ")),
                at.join(" "),
                cell(&truncate_chars(
                    r.message.as_deref().unwrap_or(""),
                    SUMMARY_MESSAGE_CHARS_MAX
                ))
            ));
        }
        if failures.len() > SUMMARY_FAILURES_MAX {
            out.push_str(&format!(
                "\n…and {} more; the report (report.html) lists them all.\n",
                failures.len() - SUMMARY_FAILURES_MAX
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "<sub>{} {} · report digest {}</sub>\n",
        escape(&report.environment.tool),
        escape(&report.environment.tool_version),
        inline_code(&report.digest)
    ));
    out
}

/// The badge of a partial pass: its own text and colour, never the green of a full pass.
pub const BADGE_PARTIAL: (&str, &str) = ("partial pass", "yellow");

/// A shields.io endpoint badge (`{"schemaVersion": 1, "label", "message", "color"}`):
/// green "pass" when nothing failed and nothing was left out, yellow "partial pass" when
/// what ran passed but the run left something out, red "N failing" otherwise.
pub fn render_badge(report: &Report) -> String {
    let s = &report.summary;
    let (message, color) = if report.verdict() == Verdict::PartialPass {
        (BADGE_PARTIAL.0.to_string(), BADGE_PARTIAL.1)
    } else if s.ok {
        ("pass".to_string(), "brightgreen")
    } else if s.failures > 0 {
        (format!("{} failing", s.failures), "red")
    } else {
        (
            format!("{} unexpected passes", s.unexpected_passes),
            "orange",
        )
    };
    let badge = json!({
        "schemaVersion": 1,
        "label": "loom conformance",
        "message": message,
        "color": color,
    });
    let mut text = serde_json::to_string_pretty(&badge).unwrap_or_default();
    text.push('\n');
    text
}
