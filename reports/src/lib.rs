//! `loom-report`: the result model shared by the conformance kits, the vector
//! runner, the simulator and fuzz replays, and its renderings (JSON, JUnit XML,
//! Markdown, one self-contained HTML page).
//!
//! This crate owns what a run *produced*: one [`CaseResult`] per case, the
//! run's [`Environment`], baselines of known failures ([`Baseline`]) and the
//! merge of sharded runs ([`merge`]). It knows nothing of kernel internals:
//! rule metadata arrives as plain [`RuleInfo`] data from the caller, and no
//! other loom crate is a dependency.
//!
//! Key design decision: the JSON document is the source of truth and it is
//! content-addressed. [`Report::digest`] is a sha256 over a canonical form
//! that this crate writes itself (object keys sorted recursively by UTF-16
//! code units, no whitespace) and that leaves out what legitimately differs
//! between two identical runs (`duration_ms`, `started_at`). So the digest
//! does not depend on serde_json's map ordering (the `preserve_order` feature
//! unifies workspace-wide), two identical runs yield the same digest, and a
//! merge can refuse an input that was edited by hand. Every other rendering
//! is derived from the JSON model and never read back.
//!
//! The format is specified in `docs/report-format.md`, with a JSON Schema in
//! `reports/schema/report.schema.json`.
//!
//! ```
//! use loom_report::{Baseline, CaseResult, Environment, Failure, Report, RuleInfo, Subject, SubjectKind};
//! use serde_json::json;
//!
//! let rules = vec![RuleInfo::new("FOLD-09", "MUST", "FOLD", "STEP_FAILED does not fail the execution")];
//! let mut results = vec![
//!     CaseResult::pass("vectors", "fold", "fold-001", ["FOLD-09"]),
//!     CaseResult::fail(
//!         "vectors", "fold", "fold-002", ["FOLD-09"], "state differs",
//!         Failure::values(json!({"status": "running"}), json!({"status": "failed"})),
//!     ),
//! ];
//! let baseline = Baseline::from_toml_str(
//!     "[[entries]]\ncase_id = \"fold-002\"\nreason = \"issue 12\"\n",
//! ).unwrap();
//! baseline.apply(&mut results);
//! let kernel = Subject::new("kernel", SubjectKind::Kernel, "my-kernel");
//! let report = Report::new(Environment::new("loom", "0.1.0"), rules, results)
//!     .with_subjects(vec![kernel]);
//! assert!(report.summary.ok);
//! assert!(report.verify_digest());
//! assert_eq!(report.results[0].subject.as_deref(), Some("kernel"));
//! // A rule with a known failure is not evidenced, however many cases pass.
//! assert_eq!(report.summary.rules_with_passing_evidence, 0);
//! ```
#![deny(missing_docs)]

mod baseline;
mod budget;
mod canonical;
mod diff;
mod environment;
mod merge;
mod model;
mod render;
mod report;
mod subject;

pub use baseline::{
    Baseline, BaselineEntry, BaselineError, BaselineOutcome, STALE_AREA, STALE_SUITE,
};
pub use budget::FailureBudget;
pub use canonical::{canonical_json, sha256_digest};
pub use diff::first_difference;
pub use environment::Environment;
pub use merge::{merge, merge_files, MergeError};
pub use model::{CaseResult, EvidenceBasis, Failure, RuleInfo, Status, BINDING_LEVELS, GAP_LEVEL};
pub use render::{
    render_all, render_badge, render_html, render_junit, render_markdown, render_summary, Paths,
    RenderError, BADGE_PARTIAL, SUMMARY_FAILURES_MAX,
};
pub use report::{
    Report, ReportError, RuleRow, RuleStatus, StatusCounts, SubjectFigure, Summary, Verdict,
    SCHEMA_NAME, SCHEMA_VERSION, UNEXPECTED_PASS_PREFIX,
};
pub use subject::{
    ClaimScope, Expectations, ExpectedPart, Omission, Subject, SubjectKind, HARNESS_SUBJECT_ID,
};
