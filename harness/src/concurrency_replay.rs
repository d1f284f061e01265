//! Replay files of failed concurrent cases: the case, the store and its client count,
//! and the interleaving of the run that failed (`loom_store_client::schedule`), so that
//! `loom conform --replay FILE` runs the same case through the same processes with the
//! same requests in flight together, and fails again while the bug is there.

use std::path::{Path, PathBuf};

use loom_store_client::schedule::Step;
use serde::{Deserialize, Serialize};

/// The `kind` of a concurrency replay file.
pub const KIND: &str = "loom-concurrency-replay";

/// The format version this build writes and reads.
pub const VERSION: u64 = 1;

/// A failed concurrent case and the interleaving it failed under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayFile {
    /// Always [`KIND`].
    pub kind: String,
    /// Always [`VERSION`].
    pub version: u64,
    /// The store, as `--store` named it (`cmd:…`).
    pub store: String,
    /// Clients on the backend.
    pub clients: usize,
    /// The concurrency kit's case.
    pub case: String,
    /// The rules the case cites.
    pub rules: Vec<String>,
    /// What the case said when it failed.
    pub message: String,
    /// Every client's sends and answers, in the order they happened.
    pub steps: Vec<Step>,
}

impl ReplayFile {
    /// Reads a concurrency replay file; `Ok(None)` when the file is JSON of another kind
    /// (an exploration replay), `Err` when it cannot be read or is a malformed one.
    pub fn read(path: &Path) -> Result<Option<ReplayFile>, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        if value.get("kind").and_then(|k| k.as_str()) != Some(KIND) {
            return Ok(None);
        }
        let file: ReplayFile = serde_json::from_value(value)
            .map_err(|e| format!("{} is not a valid {KIND} file: {e}", path.display()))?;
        if file.version != VERSION {
            return Err(format!(
                "{} is version {} of {KIND}; this loom reads version {VERSION}",
                path.display(),
                file.version
            ));
        }
        Ok(Some(file))
    }

    /// Writes the file as `concurrency-replay-<case>.json` under `dir`.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, String> {
        let path = dir.join(format!("concurrency-replay-{}.json", self.case));
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(&path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }
}
