//! One-off commands the harness runs to completion: a backend restart
//! (`--restart-backend`), for example. Like an adapter, the command runs through `sh -c`
//! as the leader of a process group of its own, registered so that Ctrl-C ends it; it
//! must finish within its time limit or its whole group is killed.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The stderr bytes of a failed command kept for its message.
pub const COMMAND_STDERR_BYTES_MAX: usize = 4_096;

/// How often a running command is polled for its exit, in milliseconds.
const POLL_MS: u64 = 10;

#[cfg(unix)]
const SIGKILL: i32 = libc::SIGKILL;
#[cfg(not(unix))]
const SIGKILL: i32 = 9;

/// Runs `command` with `sh -c` in a process group of its own and waits up to `limit`.
/// `Ok` when it exited with status 0; `Err` names the command, how it ended (its exit
/// status, or the time limit, after which its group is killed) and the end of its
/// stderr. Its stdout is discarded: a protocol process's stdout must stay clean.
pub fn run_to_completion(command: &str, limit: Duration) -> Result<(), String> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("`{command}` could not be started: {e}"))?;
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    crate::group::register(pgid);
    // Read stderr on a thread so a chatty command never blocks on a full pipe.
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_end(&mut bytes);
        }
        bytes
    });
    let deadline = Instant::now() + limit;
    let outcome = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() >= deadline => break Err(()),
            Ok(None) => std::thread::sleep(Duration::from_millis(POLL_MS)),
            Err(e) => {
                crate::group::signal_group(pgid, SIGKILL);
                crate::group::unregister(pgid);
                let _ = child.wait();
                return Err(format!("`{command}`: waiting for it failed: {e}"));
            }
        }
    };
    // Whatever the leader did, nothing of its group outlives the command.
    crate::group::signal_group(pgid, SIGKILL);
    crate::group::unregister(pgid);
    if outcome.is_err() {
        let _ = child.wait();
    }
    let bytes = reader.join().unwrap_or_default();
    let tail =
        String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(COMMAND_STDERR_BYTES_MAX)..])
            .trim()
            .to_string();
    let said = if tail.is_empty() {
        "it wrote nothing on stderr".to_string()
    } else {
        format!("its stderr ends: {tail}")
    };
    match outcome {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!(
            "`{command}` {}; {said}",
            crate::exit::describe_exit(&status)
        )),
        Err(()) => Err(format!(
            "`{command}` did not finish within {} ms and was killed with its process group; {said}",
            limit.as_millis()
        )),
    }
}
