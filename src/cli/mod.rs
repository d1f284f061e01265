//! Subcommand implementations.

pub mod check;
pub mod conform;
pub mod fold_cmd;
pub mod gen;
pub mod junit;
pub mod manifest;
pub mod report_cmd;
pub mod sim;
pub mod vectors;

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: the check ran and found a failure (or an incompatibility).
pub const EXIT_FAILED: u8 = 1;
/// Exit code: bad usage or unreadable input.
pub const EXIT_USAGE: u8 = 2;

/// The cargo target directory run directories go under: `$CARGO_TARGET_DIR`, else
/// `./target` of the directory `loom` runs in (the repository root under `cargo run`).
/// Reports never land in the source tree itself.
pub fn target_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("target"))
}

/// Reads a file, or standard input for "-".
pub fn read_input(path: &str) -> Result<String, String> {
    if path == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| format!("reading standard input: {e}"))?;
        Ok(s)
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))
    }
}
