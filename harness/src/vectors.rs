//! The vectors part: the language-neutral vectors against the reference kernel
//! in-process or a foreign kernel over the stdio kernel protocol
//! (docs/protocols/kernel.md). A failed handshake is one `error` result, not an empty run.

use indicatif::{ProgressBar, ProgressStyle};
use loom_report::CaseResult;
use loom_vectors::runner::{run_set_within, Claims, InProcessKernel, KernelClient};
use loom_vectors::set::{embedded_set, load_set};
use loom_vectors::{KernelProcess, KernelProcessConfig, Vector};
use serde_json::Value;
use std::path::Path;

/// The area vector results are written under.
pub const AREA: &str = loom_vectors::runner::AREA;

/// The set built into the binary, or the one under `dir` (its `cases/` folder).
pub fn load(dir: Option<&Path>) -> Result<Vec<Vector>, String> {
    match dir {
        None => embedded_set(),
        Some(d) => {
            let cases = d.join("cases");
            if !cases.is_dir() {
                return Err(format!(
                    "{} holds no cases/ folder (write one with `loom vectors export {}`)",
                    d.display(),
                    d.display()
                ));
            }
            load_set(&cases)
        }
    }
    .map(|s| s.vectors)
    .map_err(|errors| {
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// Runs every vector against `kernel_cmd` (a foreign adapter) or, when `None`, the
/// reference kernel in-process. Returns one result per vector and the set's digest.
/// `loom check` calls this.
pub fn results(
    kernel_cmd: Option<&str>,
    adapter: crate::AdapterLimits,
    show_progress: bool,
) -> Result<(Vec<CaseResult>, String), String> {
    let vectors = load(None)?;
    let digest = loom_vectors::set::set_digest(&vectors);
    let budget = loom_report::FailureBudget::unlimited();
    let (_, results) = run_with(kernel_cmd, adapter, &vectors, &budget, show_progress)?;
    Ok((results, digest))
}

/// Runs `vectors` against `kernel_cmd` (or the reference in-process): the kernel's
/// claims and one result per vector, plus adapter results (handshake, blames, shutdown).
/// A kernel that does not start or answer `hello` is an `adapter/handshake` error
/// result; `Err` only for a run that cannot be set up (an empty command). Once `budget`
/// is spent, the vectors left are skips saying the run stopped.
pub fn run_with(
    kernel_cmd: Option<&str>,
    limits: crate::AdapterLimits,
    vectors: &[Vector],
    budget: &loom_report::FailureBudget,
    show_progress: bool,
) -> Result<(Claims, Vec<CaseResult>), String> {
    let bar = if show_progress {
        ProgressBar::new(vectors.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("vectors [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let mut failures = 0u64;
    let mut on_result = |r: &CaseResult| {
        if r.status.is_failure() {
            failures += 1;
            bar.set_message(format!("{failures} failing"));
        }
        bar.inc(1);
    };
    let mut client: Box<dyn KernelClient> = match kernel_cmd {
        None => Box::new(InProcessKernel::default()),
        Some(cmd) if cmd.trim().is_empty() => {
            bar.finish_and_clear();
            return Err(EMPTY_KERNEL_CMD.into());
        }
        Some(cmd) => {
            let mut config = KernelProcessConfig::new(cmd);
            config.call_timeout_ms = limits.timeout_ms;
            config.hello_timeout_ms = limits.hello_timeout_ms;
            match KernelProcess::start(config) {
                Ok(p) => Box::new(p),
                Err(fault) => {
                    // A failed handshake is a result of the run, not a usage error.
                    bar.finish_and_clear();
                    let result = CaseResult::error(
                        loom_vectors::runner::AREA,
                        loom_vectors::runner::ADAPTER_SUITE,
                        "adapter/handshake",
                        Vec::<String>::new(),
                        fault.message,
                    );
                    budget.record(&result);
                    return Ok((Claims::from_hello(Value::Null), vec![result]));
                }
            }
        }
    };
    let out = run_set_within(client.as_mut(), vectors, budget, &mut on_result);
    bar.finish_and_clear();
    // The set's own hello failing is the kernel under test failing, like a failed start.
    Ok(out.unwrap_or_else(|message| {
        let result = CaseResult::error(
            loom_vectors::runner::AREA,
            loom_vectors::runner::ADAPTER_SUITE,
            "adapter/handshake",
            Vec::<String>::new(),
            format!("the handshake failed: {message}"),
        );
        budget.record(&result);
        (Claims::from_hello(Value::Null), vec![result])
    }))
}

/// The message for a `--kernel-cmd` that names no command (a run that cannot be set up).
pub const EMPTY_KERNEL_CMD: &str =
    "--kernel-cmd names no command: give the kernel adapter's command line, e.g. --kernel-cmd 'python3 my_kernel.py'";
