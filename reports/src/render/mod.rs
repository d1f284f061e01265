//! Renderings of a [`Report`]: JUnit XML, Markdown, HTML, and [`render_all`]
//! which writes them (and the JSON) into a directory atomically.

mod ci;
mod html;
mod junit;
mod markdown;

pub use ci::{render_badge, render_summary, BADGE_PARTIAL, SUMMARY_FAILURES_MAX};
pub use html::render_html;
pub use junit::render_junit;
pub use markdown::render_markdown;

use crate::report::Report;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A rendering failed (a template or serializer error; not expected with
/// well-formed reports, but reported rather than panicking).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderError {
    /// Which rendering.
    pub format: &'static str,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot render {}: {}", self.format, self.message)
    }
}

impl std::error::Error for RenderError {}

impl From<RenderError> for io::Error {
    fn from(e: RenderError) -> io::Error {
        io::Error::other(e)
    }
}

/// Where [`render_all`] wrote each rendering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// `report.json`.
    pub json: PathBuf,
    /// `report.xml` (JUnit).
    pub junit: PathBuf,
    /// `report.md`.
    pub markdown: PathBuf,
    /// `report.html`.
    pub html: PathBuf,
    /// `summary.md`, the short job summary.
    pub summary: PathBuf,
    /// `badge.json`, the shields.io endpoint badge.
    pub badge: PathBuf,
}

/// Writes `report.json`, `report.xml`, `report.md`, `report.html`, `summary.md`
/// and `badge.json` into `dir` (created if missing). Every rendering is produced before anything is
/// written, and each file is written to a temporary file in `dir` and renamed
/// into place, so a crash never leaves a half-written report.
pub fn render_all(report: &Report, dir: impl AsRef<Path>) -> io::Result<Paths> {
    let dir = dir.as_ref();
    let json = report.to_json_pretty();
    let junit = render_junit(report)?;
    let markdown = render_markdown(report);
    let html = render_html(report)?;
    let summary = render_summary(report);
    let badge = render_badge(report);
    fs::create_dir_all(dir)?;
    let paths = Paths {
        json: dir.join("report.json"),
        junit: dir.join("report.xml"),
        markdown: dir.join("report.md"),
        html: dir.join("report.html"),
        summary: dir.join("summary.md"),
        badge: dir.join("badge.json"),
    };
    write_atomic(&paths.json, json.as_bytes())?;
    write_atomic(&paths.junit, junit.as_bytes())?;
    write_atomic(&paths.markdown, markdown.as_bytes())?;
    write_atomic(&paths.html, html.as_bytes())?;
    write_atomic(&paths.summary, summary.as_bytes())?;
    write_atomic(&paths.badge, badge.as_bytes())?;
    Ok(paths)
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to a temporary sibling of `path`, syncs it and renames it
/// over `path`. The temporary file is removed if anything fails.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".to_string());
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The verdict with the mark the Markdown renderings put before it.
pub(crate) fn verdict_with_mark(verdict: crate::report::Verdict) -> String {
    let mark = match verdict {
        crate::report::Verdict::Pass => "✅",
        crate::report::Verdict::PartialPass => "⚠️",
        crate::report::Verdict::Fail => "❌",
    };
    format!("{mark} {}", verdict.label())
}

/// Cuts `text` to at most `max_chars` characters, saying how much was cut.
pub(crate) fn truncate_chars(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let kept: String = text.chars().take(max_chars).collect();
    format!(
        "{kept}\n… ({} more characters truncated)",
        total - max_chars
    )
}

/// Pretty JSON of a value for people to read (keys sorted).
pub(crate) fn pretty(value: &serde_json::Value) -> String {
    crate::diff::pretty_lines(value, None)
        .into_iter()
        .map(|l| l.text)
        .collect::<Vec<_>>()
        .join("\n")
}
