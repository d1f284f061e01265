//! One self-contained HTML page, rendered with minijinja from
//! `templates/report.html` (embedded at build time).
//!
//! The template's name ends in `.html`, so minijinja escapes every value it
//! prints; nothing is marked safe. All data is prepared here as plain
//! strings and flags, so the template holds no logic worth testing.

use super::markdown::environment_rows;
use super::{truncate_chars, RenderError};
use crate::diff::{pretty_lines, Line};
use crate::model::Status;
use crate::report::{Report, StatusCounts};
use serde::Serialize;

/// Each side of a failure's expected/actual view shows at most this many
/// lines.
pub const HTML_LINES_MAX: usize = 400;
/// The page lists at most this many results in its full table.
pub const HTML_RESULTS_MAX: usize = 5_000;
/// The page shows at most this many failures in detail.
pub const HTML_FAILURES_MAX: usize = 200;

const TEMPLATE: &str = include_str!("../../templates/report.html");

#[derive(Serialize)]
struct View {
    ok: bool,
    digest: String,
    schema: String,
    environment: Vec<(String, String)>,
    shards: Vec<Vec<(String, String)>>,
    statuses: Vec<&'static str>,
    totals: CountsRow,
    areas: Vec<CountsRow>,
    groups: Vec<CountsRow>,
    rules_total: u64,
    rules_with_passing_evidence: u64,
    rules_failing: u64,
    unexpected_passes: u64,
    unknown_rules: Vec<String>,
    matrix: Vec<MatrixRow>,
    failures: Vec<FailureView>,
    failures_total: usize,
    results: Vec<ResultRow>,
    results_total: usize,
}

#[derive(Serialize)]
struct CountsRow {
    name: String,
    counts: Vec<u64>,
    total: u64,
}

#[derive(Serialize)]
struct MatrixRow {
    id: String,
    level: String,
    group: String,
    summary: String,
    evidence: Vec<String>,
    status: &'static str,
    cases: Vec<String>,
}

#[derive(Serialize)]
struct FailureView {
    anchor: String,
    status: &'static str,
    name: String,
    rules: Vec<String>,
    message: Option<String>,
    path: Option<String>,
    event_index: Option<u64>,
    expected: Option<Vec<Line>>,
    actual: Option<Vec<Line>>,
    diff: Option<String>,
}

#[derive(Serialize)]
struct ResultRow {
    status: &'static str,
    area: String,
    suite: String,
    case_id: String,
    rules: String,
    note: String,
    anchor: Option<String>,
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

fn view(report: &Report) -> View {
    let s = &report.summary;
    let mut failure_anchor = std::collections::HashMap::new();
    let failing: Vec<_> = report.failures().collect();
    let failures = failing
        .iter()
        .take(HTML_FAILURES_MAX)
        .enumerate()
        .map(|(idx, r)| {
            let anchor = format!("failure-{}", idx + 1);
            failure_anchor.insert(r.key(), anchor.clone());
            let f = r.failure.as_ref();
            let path = f.and_then(|f| f.path.clone());
            FailureView {
                anchor,
                status: r.status.as_str(),
                name: format!("{}/{}/{}", r.area, r.suite, r.case_id),
                rules: r.rules.clone(),
                message: r.message.clone(),
                path: path.clone(),
                event_index: f.and_then(|f| f.event_index),
                expected: f
                    .and_then(|f| f.expected.as_ref())
                    .map(|v| capped_lines(v, path.as_deref())),
                actual: f
                    .and_then(|f| f.actual.as_ref())
                    .map(|v| capped_lines(v, path.as_deref())),
                diff: f
                    .and_then(|f| f.diff.as_deref())
                    .map(|d| truncate_chars(d, 20_000)),
            }
        })
        .collect();
    let results = report
        .results
        .iter()
        .take(HTML_RESULTS_MAX)
        .map(|r| ResultRow {
            status: r.status.as_str(),
            area: r.area.clone(),
            suite: r.suite.clone(),
            case_id: r.case_id.clone(),
            rules: r.rules.join(", "),
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
        digest: report.digest.clone(),
        schema: format!("{} v{}", report.schema, report.schema_version),
        environment: environment_rows(&report.environment)
            .into_iter()
            .map(|(k, v)| (k, truncate_chars(&v, 2_000)))
            .collect(),
        shards: report.shards.iter().map(environment_rows).collect(),
        statuses: Status::ALL.iter().map(|s| s.as_str()).collect(),
        totals: counts_row("all", &s.by_status),
        areas: s.by_area.iter().map(|(n, c)| counts_row(n, c)).collect(),
        groups: s.by_group.iter().map(|(n, c)| counts_row(n, c)).collect(),
        rules_total: s.rules_total,
        rules_with_passing_evidence: s.rules_with_passing_evidence,
        rules_failing: s.rules_failing,
        unexpected_passes: s.unexpected_passes,
        unknown_rules: s.unknown_rules.clone(),
        matrix: report
            .rule_matrix()
            .into_iter()
            .map(|row| MatrixRow {
                id: row.rule.id,
                level: row.rule.level,
                group: row.rule.group,
                summary: row.rule.summary,
                evidence: row.rule.evidence,
                status: row.status.as_str(),
                cases: row.cases,
            })
            .collect(),
        failures,
        failures_total: failing.len(),
        results,
        results_total: report.results.len(),
    }
}

/// Renders the report as one self-contained HTML page: verdict and digest,
/// environment, counts, the rule matrix, failures with expected and actual
/// side by side (the first differing path highlighted), and every result.
/// No external assets; a small inline script adds filtering, and the page is
/// complete without it.
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
