//! One self-contained HTML page, rendered with minijinja from
//! `templates/report.html` (embedded at build time).
//!
//! The page leads to the failure: the verdict and the failures come first (each with
//! its rules, case, event index, first differing path, expected and actual side by
//! side, and the command that reproduces it), then the rule matrix with one row per
//! rule (counts per status, its cases in a collapsed list), then counts, the
//! environment and, collapsed, every result. Every failure and every rule has an
//! anchor; a rule id anywhere on the page links to its row, which holds the rule's
//! level, spec section and text. The layout fits a 1280 px window.
//!
//! The template's name ends in `.html`, so minijinja escapes every value it
//! prints; nothing is marked safe. All data is prepared here as plain
//! strings and flags, so the template holds no logic worth testing.

use super::markdown::environment_rows;
use super::{truncate_chars, RenderError};
use crate::diff::{pretty_lines, Line};
use crate::model::{CaseResult, Status};
use crate::report::{Report, StatusCounts};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Each side of a failure's expected/actual view shows at most this many
/// lines.
pub const HTML_LINES_MAX: usize = 400;
/// The page lists at most this many results in its full table.
pub const HTML_RESULTS_MAX: usize = 5_000;
/// The page shows at most this many failures in detail.
pub const HTML_FAILURES_MAX: usize = 200;
/// A rule's collapsed case list shows at most this many cases (failing ones first).
pub const HTML_RULE_CASES_MAX: usize = 100;

const TEMPLATE: &str = include_str!("../../templates/report.html");

#[derive(Serialize)]
struct View {
    ok: bool,
    verdict: &'static str,
    verdict_slug: &'static str,
    partial: Vec<String>,
    digest: String,
    schema: String,
    tool: String,
    started_at: Option<String>,
    subject: Option<String>,
    environment: Vec<(String, String)>,
    shards: Vec<Vec<(String, String)>>,
    statuses: Vec<&'static str>,
    totals: CountsRow,
    areas: Vec<CountsRow>,
    groups: Vec<CountsRow>,
    failing: u64,
    results_total_count: u64,
    rules_total: u64,
    rules_with_passing_evidence: u64,
    rules_failing: u64,
    figures: Vec<String>,
    reasons: Vec<String>,
    unexpected_passes: u64,
    unknown_rules: Vec<RuleLink>,
    matrix: Vec<MatrixRow>,
    /// Rows folded away: rules that do not apply to `matrix_kind` and no result cites.
    matrix_other: Vec<MatrixRow>,
    /// The primary subject's kind, when the matrix is folded for one.
    matrix_kind: Option<String>,
    /// Of `matrix`, the rows that apply to `matrix_kind` (the others are cited by a result).
    matrix_applicable: usize,
    failures: Vec<FailureView>,
    failures_total: usize,
    differences: Vec<DifferenceView>,
    differences_total: usize,
    rules_spec_based: u64,
    results: Vec<ResultRow>,
    results_total: usize,
}

#[derive(Serialize)]
struct CountsRow {
    name: String,
    counts: Vec<u64>,
    total: u64,
}

/// A rule id as a link to its row in the matrix, with its text as a tooltip.
#[derive(Serialize, Clone)]
struct RuleLink {
    id: String,
    anchor: String,
    title: String,
}

#[derive(Serialize)]
struct MatrixRow {
    id: String,
    anchor: String,
    level: String,
    group: String,
    section: Option<String>,
    summary: String,
    status: &'static str,
    pass: u64,
    fail: u64,
    skip: u64,
    xfail: u64,
    cases_total: usize,
    cases: Vec<CaseLink>,
}

#[derive(Serialize)]
struct CaseLink {
    name: String,
    status: &'static str,
    anchor: Option<String>,
}

#[derive(Serialize)]
struct FailureView {
    anchor: String,
    number: usize,
    status: &'static str,
    name: String,
    rules: Vec<RuleLink>,
    message: Option<String>,
    path: Option<String>,
    event_index: Option<u64>,
    expected: Option<Vec<Line>>,
    actual: Option<Vec<Line>>,
    expected_near: Option<Vec<Line>>,
    actual_near: Option<Vec<Line>>,
    diff: Option<String>,
    reproduce: Option<String>,
}

/// A resolution difference: where the answer differs from the reference's resolution
/// of an open point the subject does not claim.
#[derive(Serialize)]
struct DifferenceView {
    name: String,
    rules: Vec<RuleLink>,
    message: Option<String>,
    path: Option<String>,
    expected: Option<String>,
    actual: Option<String>,
}

#[derive(Serialize)]
struct ResultRow {
    status: &'static str,
    area: String,
    suite: String,
    case_id: String,
    rules: Vec<RuleLink>,
    note: String,
    anchor: Option<String>,
}

/// The anchor of a rule's matrix row: `rule-` and the id in lower case.
pub fn rule_anchor(id: &str) -> String {
    let slug: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("rule-{slug}")
}

fn counts_row(name: &str, counts: &StatusCounts) -> CountsRow {
    CountsRow {
        name: name.to_string(),
        counts: Status::ALL.iter().map(|s| counts.get(*s)).collect(),
        total: counts.total(),
    }
}

fn capped_lines(value: &serde_json::Value, path: Option<&str>) -> Vec<Line> {
    let mut lines = pretty_lines(value, path);
    if lines.len() > HTML_LINES_MAX {
        let more = lines.len() - HTML_LINES_MAX;
        // Keep the highlighted part in view when it lies past the cut.
        let first_hl = lines.iter().position(|l| l.hl).unwrap_or(0);
        let start = first_hl.saturating_sub(HTML_LINES_MAX / 4).min(more);
        lines = lines.split_off(start);
        lines.truncate(HTML_LINES_MAX);
        if start > 0 {
            lines.insert(
                0,
                Line {
                    text: format!("… {start} lines above not shown"),
                    hl: false,
                },
            );
        }
        lines.push(Line {
            text: format!("… {} lines below not shown", more - start),
            hl: false,
        });
    }
    lines
}

/// A value longer than this many lines is shown around its differing lines only (the
/// whole value is one click away).
pub const HTML_CONTEXT_FROM_LINES: usize = 24;
/// Lines kept on each side of a differing line in that view.
pub const HTML_CONTEXT_LINES: usize = 6;

/// The lines near a highlighted (differing) line, with markers for what is left out;
/// `None` when the value is short or nothing is highlighted.
fn around_difference(lines: &[Line]) -> Option<Vec<Line>> {
    if lines.len() <= HTML_CONTEXT_FROM_LINES || !lines.iter().any(|l| l.hl) {
        return None;
    }
    let keep: Vec<bool> = (0..lines.len())
        .map(|i| {
            let lo = i.saturating_sub(HTML_CONTEXT_LINES);
            let hi = (i + HTML_CONTEXT_LINES + 1).min(lines.len());
            lines[lo..hi].iter().any(|l| l.hl)
        })
        .collect();
    let mut out = Vec::new();
    let mut skipped = 0;
    for (line, keep) in lines.iter().zip(keep) {
        if keep {
            if skipped > 0 {
                out.push(skipped_marker(skipped));
                skipped = 0;
            }
            out.push(line.clone());
        } else {
            skipped += 1;
        }
    }
    if skipped > 0 {
        out.push(skipped_marker(skipped));
    }
    Some(out)
}

fn skipped_marker(n: usize) -> Line {
    Line {
        text: format!("  … {n} line{}", if n == 1 { "" } else { "s" }),
        hl: false,
    }
}

fn case_name(r: &CaseResult) -> String {
    format!("{}/{}/{}", r.area, r.suite, r.case_id)
}

/// One line naming what was tested, from the environment: the implementation's
/// `hello` (name and version) and the store or kernel command that was run.
fn subject(report: &Report) -> Option<String> {
    let subject = report.primary_subject()?;
    let mut parts = vec![format!("{}: {}", subject.kind, subject.name)];
    if let Some(v) = &subject.version {
        parts.push(format!("version {v}"));
    }
    if let Some(e) = &subject.endpoint {
        parts.push(e.clone());
    }
    Some(truncate_chars(&parts.join(" · "), 300))
}

fn view(report: &Report) -> View {
    let s = &report.summary;
    let (matrix_rows, folded_rows) = report.rule_matrix_folded();
    let matrix_applicable = match report.primary_subject() {
        Some(p) => matrix_rows
            .iter()
            .filter(|r| r.rule.applies(p.kind))
            .count(),
        None => matrix_rows.len(),
    };
    let links: HashMap<String, RuleLink> = matrix_rows
        .iter()
        .chain(&folded_rows)
        .map(|row| {
            let title = match &row.rule.section {
                Some(section) => format!("{} · {section} · {}", row.rule.level, row.rule.summary),
                None => format!("{} · {}", row.rule.level, row.rule.summary),
            };
            (
                row.rule.id.clone(),
                RuleLink {
                    id: row.rule.id.clone(),
                    anchor: rule_anchor(&row.rule.id),
                    title: truncate_chars(&title, 400),
                },
            )
        })
        .collect();
    let link = |id: &String| {
        links.get(id.as_str()).cloned().unwrap_or_else(|| RuleLink {
            id: id.clone(),
            anchor: rule_anchor(id),
            title: id.clone(),
        })
    };

    let mut failure_anchor: HashMap<(&str, &str, &str), String> = HashMap::new();
    let failing: Vec<&CaseResult> = report.failures().collect();
    let failures = failing
        .iter()
        .take(HTML_FAILURES_MAX)
        .enumerate()
        .map(|(idx, r)| {
            let anchor = format!("failure-{}", idx + 1);
            failure_anchor.insert(r.key(), anchor.clone());
            let f = r.failure.as_ref();
            let path = f.and_then(|f| f.path.clone());
            let expected = f
                .and_then(|f| f.expected.as_ref())
                .map(|v| capped_lines(v, path.as_deref()));
            let actual = f
                .and_then(|f| f.actual.as_ref())
                .map(|v| capped_lines(v, path.as_deref()));
            FailureView {
                anchor,
                number: idx + 1,
                status: r.status.as_str(),
                name: case_name(r),
                rules: r.rules.iter().map(link).collect(),
                message: r.message.as_deref().map(|m| truncate_chars(m, 4_000)),
                path: path.clone(),
                event_index: f.and_then(|f| f.event_index),
                expected_near: expected.as_deref().and_then(around_difference),
                actual_near: actual.as_deref().and_then(around_difference),
                expected,
                actual,
                diff: f
                    .and_then(|f| f.diff.as_deref())
                    .map(|d| truncate_chars(d, 20_000)),
                reproduce: r.reproduce.as_deref().map(|c| truncate_chars(c, 2_000)),
            }
        })
        .collect();

    let differing: Vec<&CaseResult> = report
        .results
        .iter()
        .filter(|r| r.status == Status::ResolutionDifference)
        .collect();
    let differences = differing
        .iter()
        .take(HTML_FAILURES_MAX)
        .map(|r| {
            let f = r.failure.as_ref();
            let short = |v: Option<&serde_json::Value>| {
                v.map(|v| truncate_chars(&serde_json::to_string(v).unwrap_or_default(), 400))
            };
            DifferenceView {
                name: case_name(r),
                rules: r.rules.iter().map(link).collect(),
                message: r.message.as_deref().map(|m| truncate_chars(m, 4_000)),
                path: f.and_then(|f| f.path.clone()),
                expected: short(f.and_then(|f| f.expected.as_ref())),
                actual: short(f.and_then(|f| f.actual.as_ref())),
            }
        })
        .collect();

    // Per rule: counts by status and the citing cases, failing ones first.
    let mut per_rule: BTreeMap<&str, (StatusCounts, Vec<&CaseResult>)> = BTreeMap::new();
    let primary = report.primary_subject().map(|p| p.id.as_str());
    for r in report
        .results
        .iter()
        .filter(|r| primary.is_none() || r.subject.as_deref() == primary)
    {
        let mut ids: Vec<&str> = r.rules.iter().map(String::as_str).collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let entry = per_rule.entry(id).or_default();
            entry.0.add(r.status);
            entry.1.push(r);
        }
    }
    let mut matrix_row = |row: crate::report::RuleRow| {
        let (counts, mut cases) = per_rule.remove(row.rule.id.as_str()).unwrap_or_default();
        cases.sort_by_key(|r| !r.status.is_failure());
        let cases_total = cases.len();
        MatrixRow {
            anchor: rule_anchor(&row.rule.id),
            id: row.rule.id,
            level: row.rule.level,
            group: row.rule.group,
            section: row.rule.section,
            summary: row.rule.summary,
            status: row.status.as_str(),
            pass: counts.pass,
            fail: counts.failures(),
            skip: counts.skip_not_claimed + counts.skip_untestable,
            xfail: counts.xfail,
            cases_total,
            cases: cases
                .into_iter()
                .take(HTML_RULE_CASES_MAX)
                .map(|r| CaseLink {
                    name: case_name(r),
                    status: r.status.as_str(),
                    anchor: failure_anchor.get(&r.key()).cloned(),
                })
                .collect(),
        }
    };
    let matrix: Vec<MatrixRow> = matrix_rows.into_iter().map(&mut matrix_row).collect();
    let matrix_other: Vec<MatrixRow> = folded_rows.into_iter().map(&mut matrix_row).collect();

    let results = report
        .results
        .iter()
        .take(HTML_RESULTS_MAX)
        .map(|r| ResultRow {
            status: r.status.as_str(),
            area: r.area.clone(),
            suite: r.suite.clone(),
            case_id: r.case_id.clone(),
            rules: r.rules.iter().map(link).collect(),
            note: r
                .xfail_reason
                .as_deref()
                .or(r.message.as_deref())
                .map(|m| truncate_chars(m, 300))
                .unwrap_or_default(),
            anchor: failure_anchor.get(&r.key()).cloned(),
        })
        .collect();
    View {
        ok: s.ok,
        verdict: report.verdict().label(),
        verdict_slug: report.verdict().slug(),
        partial: report.partial_sentences(),
        digest: report.digest.clone(),
        schema: format!("{} v{}", report.schema, report.schema_version),
        tool: format!(
            "{} {}",
            report.environment.tool, report.environment.tool_version
        ),
        started_at: report.environment.started_at.clone(),
        subject: subject(report),
        environment: environment_rows(&report.environment)
            .into_iter()
            .map(|(k, v)| (k, truncate_chars(&v, 2_000)))
            .collect(),
        shards: report.shards.iter().map(environment_rows).collect(),
        statuses: Status::ALL.iter().map(|s| s.as_str()).collect(),
        totals: counts_row("all", &s.by_status),
        areas: s.by_area.iter().map(|(n, c)| counts_row(n, c)).collect(),
        groups: s.by_group.iter().map(|(n, c)| counts_row(n, c)).collect(),
        failing: s.failures,
        results_total_count: s.total,
        rules_total: s.rules_total,
        rules_with_passing_evidence: s.rules_with_passing_evidence,
        rules_failing: s.rules_failing,
        figures: report.figure_sentences(),
        reasons: s.verdict_reasons.clone(),
        unexpected_passes: s.unexpected_passes,
        unknown_rules: s.unknown_rules.iter().map(link).collect(),
        matrix,
        matrix_kind: report
            .primary_subject()
            .filter(|_| !matrix_other.is_empty())
            .map(|p| p.kind.as_str().to_string()),
        matrix_other,
        matrix_applicable,
        failures,
        failures_total: failing.len(),
        differences,
        differences_total: differing.len(),
        rules_spec_based: s.rules_spec_based,
        results,
        results_total: report.results.len(),
    }
}

/// Renders the report as one self-contained HTML page: the verdict and the failures
/// first, then the rule matrix, counts, the environment and every result. No
/// external assets; a small inline script adds filtering, and the page is complete
/// without it.
pub fn render_html(report: &Report) -> Result<String, RenderError> {
    let err = |e: minijinja::Error| RenderError {
        format: "HTML",
        message: e.to_string(),
    };
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.add_template("report.html", TEMPLATE).map_err(err)?;
    let template = env.get_template("report.html").map_err(err)?;
    let ctx = minijinja::Value::from(minijinja::value::Serde(view(report)));
    template.render(ctx).map_err(err)
}
