//! `loom conform` and the kits part of `loom check` (being built: the conformance kits).

use loom_report::CaseResult;

/// Runs the SPI kits against a store named by `store` ("memory", "sqlite[:PATH]",
/// "postgres://…" or "cmd:COMMAND") and returns one result per kit case.
pub fn kit_results(
    _store: &str,
    _kits: &[String],
    _show_progress: bool,
) -> Result<Vec<CaseResult>, String> {
    Ok(Vec::new())
}
