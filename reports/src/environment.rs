//! [`Environment`]: what a run ran on and against.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

/// The run's environment: the tool, versions and digests of what was tested,
/// the implementation's `hello`, the toolchain and the seed. A merged report
/// keeps one per shard in [`crate::Report::shards`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// The program that produced the report, e.g. `"loom"`.
    pub tool: String,
    /// Its version.
    pub tool_version: String,
    /// The git revision of the tool's source tree, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_revision: Option<String>,
    /// The digest of the vector set that was run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_set_digest: Option<String>,
    /// The conformance kit version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kit_version: Option<String>,
    /// The implementation's answer to `hello`, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation_hello: Option<Value>,
    /// The toolchain, e.g. the output of `rustc --version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain: Option<String>,
    /// `<os>-<arch>`, e.g. `"linux-x86_64"`.
    pub os: String,
    /// The seed, for seeded runs (simulator, fuzz replays, property tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// When the run started, RFC 3339 UTC. Not part of the digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// The command line that produced the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Anything else worth recording, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Value>,
}

impl Environment {
    /// An environment with only the tool, its version and the OS filled in.
    /// Runs no process and reads no clock, so it is deterministic.
    pub fn new(tool: impl Into<String>, tool_version: impl Into<String>) -> Self {
        Environment {
            tool: tool.into(),
            tool_version: tool_version.into(),
            os: current_os(),
            ..Environment::default()
        }
    }

    /// Like [`Environment::new`], plus what can be detected: the toolchain
    /// (`rustc --version`) and `started_at` (now). Whatever cannot be detected
    /// stays `None`; this never panics. The git revision is left to the caller:
    /// the directory a tool runs in is usually the user's repository, not the
    /// tool's source tree.
    pub fn detect(tool: impl Into<String>, tool_version: impl Into<String>) -> Self {
        let mut env = Self::new(tool, tool_version);
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
        env.toolchain = command_output(&rustc, &["--version"]);
        env.started_at = now_rfc3339();
        env
    }
}

fn current_os() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

/// The trimmed stdout of a successful command with non-empty output.
fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn now_rfc3339() -> Option<String> {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(rfc3339_from_epoch_secs(secs))
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub(crate) fn rfc3339_from_epoch_secs(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339_from_epoch_secs(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_from_epoch_secs(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(
            rfc3339_from_epoch_secs(1_700_000_000),
            "2023-11-14T22:13:20Z"
        );
    }

    #[test]
    fn detect_never_panics_and_fills_os() {
        let env = Environment::detect("t", "1");
        assert!(!env.os.is_empty());
        assert!(env.started_at.is_some());
    }

    #[test]
    fn missing_program_gives_none() {
        assert_eq!(command_output("/nonexistent/loom-no-such-tool", &[]), None);
    }
}
