//! A Markdown summary for pull-request comments.
//!
//! Everything from a result is untrusted: inline text is backslash-escaped
//! (CommonMark allows escaping any ASCII punctuation, which also stops raw
//! HTML), table cells lose their newlines, and code blocks use a fence longer
//! than any run of backticks inside them.

use super::{pretty, truncate_chars};
use crate::environment::Environment;
use crate::model::{CaseResult, Status};
use crate::report::{Report, StatusCounts};
use crate::subject::SubjectKind;

/// At most this many failures are listed; the rest are counted.
pub const MD_FAILURES_MAX: usize = 30;
/// Each expected/actual block is cut to this many characters.
pub const MD_BLOCK_CHARS_MAX: usize = 1_500;
/// Each message is cut to this many characters.
pub const MD_MESSAGE_CHARS_MAX: usize = 500;

/// Renders the report as Markdown: verdict, counts per area and rule group,
/// rule coverage, failures with expected/actual, and the environment.
pub fn render_markdown(report: &Report) -> String {
    let s = &report.summary;
    let mut out = String::new();
    let verdict = super::verdict_with_mark(report.verdict());
    out.push_str(&format!("## Loom conformance report: {verdict}\n\n"));
    out.push_str(&format!(
        "{} results: {} passed, {} failed, {} errors, {} timeouts, {} known failures, {} skipped, {} resolution differences",
        s.total,
        s.by_status.pass,
        s.by_status.fail,
        s.by_status.error,
        s.by_status.timeout,
        s.by_status.xfail,
        s.by_status.skip_not_claimed + s.by_status.skip_untestable,
        s.by_status.resolution_difference,
    ));
    if s.unexpected_passes > 0 {
        out.push_str(&format!(
            " ({} unexpected passes: remove their baseline entries)",
            s.unexpected_passes
        ));
    }
    out.push_str(".\n\n");
    if report.subjects.is_empty() {
        out.push_str(&format!(
            "Rules with passing results: **{} / {}** (no subject named)",
            s.rules_with_passing_evidence, s.rules_total
        ));
        if s.rules_failing > 0 {
            out.push_str(&format!("; rules failing: **{}**", s.rules_failing));
        }
        out.push_str(".\n\n");
    } else {
        out.push_str(
            "## Subjects\n\n| subject | kind | name | endpoint | figure |\n|---|---|---|---|---|\n",
        );
        for f in &s.subjects {
            let Some(subject) = report.subject(&f.subject) else {
                continue;
            };
            let figure = if subject.kind == SubjectKind::Store {
                format!(
                    "{} / {} applicable rules passing; {} failing",
                    f.rules_passing, f.rules_applicable, f.rules_failing
                )
            } else if subject.is_judged() {
                format!(
                    "{} / {} applicable rules passing ({} on spec-based evidence alone); {} failing",
                    f.rules_passing, f.rules_applicable, f.rules_spec_based, f.rules_failing
                )
            } else {
                format!(
                    "self-check: {} passed, {} failed (counted toward no implementation)",
                    f.by_status.pass,
                    f.by_status.failures()
                )
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                inline_code(&subject.id),
                subject.kind,
                cell(&subject.name),
                cell(subject.endpoint.as_deref().unwrap_or("")),
                cell(&figure)
            ));
        }
        out.push('\n');
        for line in report.figure_sentences() {
            out.push_str(&format!("- {}\n", escape(&line)));
        }
        out.push('\n');
    }
    if !s.verdict_reasons.is_empty() {
        out.push_str("Why the verdict is FAIL:\n\n");
        for reason in &s.verdict_reasons {
            out.push_str(&format!("- {}\n", escape(reason)));
        }
        out.push('\n');
    }
    let partial = report.partial_sentences();
    if !partial.is_empty() {
        out.push_str("What this run did not cover (the pass is partial):\n\n");
        for line in &partial {
            out.push_str(&format!("- {}\n", escape(line)));
        }
        out.push('\n');
    }
    if !s.unknown_rules.is_empty() {
        out.push_str(&format!(
            "Rule IDs cited but not in the catalogue: {}.\n\n",
            s.unknown_rules
                .iter()
                .map(|r| inline_code(r))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.push_str(&format!("Digest: {}\n\n", inline_code(&report.digest)));

    counts_table(&mut out, "Area", s.by_area.iter());
    if !s.by_group.is_empty() {
        counts_table(&mut out, "Rule group", s.by_group.iter());
    }

    rule_table(&mut out, report);

    let failures: Vec<&CaseResult> = report.failures().collect();
    if !failures.is_empty() {
        out.push_str(&format!("### Failures ({})\n\n", failures.len()));
        for result in failures.iter().take(MD_FAILURES_MAX) {
            failure_section(&mut out, result);
        }
        if failures.len() > MD_FAILURES_MAX {
            out.push_str(&format!(
                "…and {} more failures; see report.html or report.json.\n\n",
                failures.len() - MD_FAILURES_MAX
            ));
        }
    }

    let differences: Vec<&CaseResult> = report
        .results
        .iter()
        .filter(|r| r.status == Status::ResolutionDifference)
        .collect();
    if !differences.is_empty() {
        out.push_str(&format!(
            "### Resolution differences ({}): not failures, not passes\n\n",
            differences.len()
        ));
        for result in differences.iter().take(MD_FAILURES_MAX) {
            out.push_str(&format!(
                "- {}: {}\n",
                inline_code(&format!(
                    "{}/{}/{}",
                    result.area, result.suite, result.case_id
                )),
                escape(&truncate_chars(
                    result.message.as_deref().unwrap_or(""),
                    MD_MESSAGE_CHARS_MAX
                ))
            ));
        }
        if differences.len() > MD_FAILURES_MAX {
            out.push_str(&format!(
                "- …and {} more; see report.html or report.json.\n",
                differences.len() - MD_FAILURES_MAX
            ));
        }
        out.push('\n');
    }

    out.push_str("### Environment\n\n| | |\n|---|---|\n");
    for (key, value) in environment_rows(&report.environment) {
        out.push_str(&format!("| {} | {} |\n", escape(&key), cell(&value)));
    }
    out.push_str(&format!(
        "| schema | {} |\n",
        cell(&format!("{} v{}", report.schema, report.schema_version))
    ));
    if !report.shards.is_empty() {
        out.push_str(&format!("\nMerged from {} shards.\n", report.shards.len()));
    }
    out
}

fn counts_table<'a>(
    out: &mut String,
    heading: &str,
    rows: impl Iterator<Item = (&'a String, &'a StatusCounts)>,
) {
    out.push_str(&format!("| {heading} |"));
    for status in Status::ALL {
        out.push_str(&format!(" {status} |"));
    }
    out.push_str(" total |\n|---|");
    for _ in Status::ALL {
        out.push_str("---:|");
    }
    out.push_str("---:|\n");
    for (name, counts) in rows {
        out.push_str(&format!("| {} |", cell(name)));
        for status in Status::ALL {
            out.push_str(&format!(" {} |", counts.get(status)));
        }
        out.push_str(&format!(" {} |\n", counts.total()));
    }
    out.push('\n');
}

/// The rule matrix: one row per rule that applies to the primary subject (or that a
/// result against it cites); the rules folded away are counted, not listed.
fn rule_table(out: &mut String, report: &Report) {
    let (rows, folded) = report.rule_matrix_folded();
    if rows.is_empty() {
        return;
    }
    let kind = report.primary_subject().map(|p| p.kind);
    let heading = match kind {
        Some(kind) if !folded.is_empty() => {
            let applicable = rows.iter().filter(|r| r.rule.applies(kind)).count();
            let cited = rows.len() - applicable;
            let more = if cited > 0 {
                format!(", {cited} more that its results cite")
            } else {
                String::new()
            };
            format!("{applicable} that apply to a {kind}{more}")
        }
        _ => rows.len().to_string(),
    };
    out.push_str(&format!("### Rules ({heading})\n\n"));
    out.push_str("| rule | level | status | cases |\n|---|---|---|---:|\n");
    for row in &rows {
        let cases = row.cases.len();
        out.push_str(&format!(
            "| {} | {} | {} | {cases} |\n",
            inline_code(&row.rule.id),
            cell(&row.rule.level),
            row.status
        ));
    }
    out.push('\n');
    if let (Some(kind), false) = (kind, folded.is_empty()) {
        out.push_str(&format!(
            "{} catalogue entries do not apply to a {kind} and no result cites them (rules of other kinds, open gaps); they are not listed (report.html folds them away).\n\n",
            folded.len()
        ));
    }
}

fn failure_section(out: &mut String, r: &CaseResult) {
    out.push_str(&format!(
        "#### {} {}\n\n",
        r.status.as_str().to_uppercase(),
        inline_code(&format!("{}/{}/{}", r.area, r.suite, r.case_id))
    ));
    if !r.rules.is_empty() {
        out.push_str(&format!(
            "- rules: {}\n",
            r.rules
                .iter()
                .map(|id| inline_code(id))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(message) = &r.message {
        out.push_str(&format!(
            "- message: {}\n",
            escape(&truncate_chars(message, MD_MESSAGE_CHARS_MAX).replace('\n', " "))
        ));
    }
    if let Some(f) = &r.failure {
        if let Some(path) = &f.path {
            out.push_str(&format!("- first differing path: {}\n", inline_code(path)));
        }
        if let Some(idx) = f.event_index {
            out.push_str(&format!("- event index: {idx}\n"));
        }
        out.push('\n');
        let mut block = String::new();
        if let Some(expected) = &f.expected {
            block.push_str(&format!(
                "expected:\n{}\n",
                truncate_chars(&pretty(expected), MD_BLOCK_CHARS_MAX)
            ));
        }
        if let Some(actual) = &f.actual {
            block.push_str(&format!(
                "actual:\n{}\n",
                truncate_chars(&pretty(actual), MD_BLOCK_CHARS_MAX)
            ));
        }
        if let Some(diff) = &f.diff {
            block.push_str(&format!(
                "diff:\n{}\n",
                truncate_chars(diff, MD_BLOCK_CHARS_MAX)
            ));
        }
        if !block.is_empty() {
            out.push_str(&fenced(&block));
        }
    }
    out.push('\n');
}

/// `(name, value)` rows describing the environment, in a fixed order.
pub(crate) fn environment_rows(e: &Environment) -> Vec<(String, String)> {
    let mut rows = vec![
        ("tool".to_string(), format!("{} {}", e.tool, e.tool_version)),
        ("os".to_string(), e.os.clone()),
    ];
    let optional = [
        ("git revision", e.git_revision.clone()),
        ("toolchain", e.toolchain.clone()),
        ("kit version", e.kit_version.clone()),
        ("vector set digest", e.vector_set_digest.clone()),
        ("seed", e.seed.map(|s| s.to_string())),
        ("started at", e.started_at.clone()),
        ("command", e.command.clone()),
        (
            "implementation hello",
            e.implementation_hello
                .as_ref()
                .map(crate::canonical::canonical_json),
        ),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            rows.push((name.to_string(), value));
        }
    }
    for (key, value) in &e.extra {
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            other => crate::canonical::canonical_json(other),
        };
        rows.push((key.clone(), text));
    }
    rows
}

/// Backslash-escapes the Markdown punctuation that could start markup and
/// turns newlines into spaces.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            // Emphasis, code, links and images, raw HTML and entities,
            // table cells, headings, strikethrough and GitHub's `$` math.
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '~' | '&' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// A table cell: escaped, single line, cut to a sane length.
pub(super) fn cell(text: &str) -> String {
    escape(&truncate_chars(text, 200).replace('\n', " "))
}

/// Inline code that the content cannot break out of.
pub(super) fn inline_code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ");
    let fence = "`".repeat(longest_backtick_run(&text) + 1);
    // Pad when the content touches a backtick, as CommonMark requires.
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A fenced code block that the content cannot close.
fn fenced(text: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(text) + 1).max(3));
    let text = text.strip_suffix('\n').unwrap_or(text);
    format!("{fence}text\n{text}\n{fence}\n")
}

fn longest_backtick_run(text: &str) -> usize {
    let mut best = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_code_survives_backticks() {
        assert_eq!(inline_code("a`b"), "``a`b``");
        assert_eq!(inline_code("`x"), "`` `x ``");
    }

    #[test]
    fn fenced_block_survives_fences() {
        let block = fenced("```\nhi\n");
        assert!(block.starts_with("````text\n"));
        assert!(block.ends_with("\n````\n"));
    }

    #[test]
    fn escape_neutralises_html_and_tables() {
        assert_eq!(escape("<script>|x"), "\\<script\\>\\|x");
    }
}
