//! Process groups: the registry of live adapter groups, signalling a whole group, finding
//! its live members, and the interrupt handler that ends them all.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Every adapter process group this program has started and not yet ended.
fn registry() -> MutexGuard<'static, BTreeSet<i32>> {
    static GROUPS: OnceLock<Mutex<BTreeSet<i32>>> = OnceLock::new();
    GROUPS
        .get_or_init(|| Mutex::new(BTreeSet::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn register(pgid: i32) {
    registry().insert(pgid);
}

pub(crate) fn unregister(pgid: i32) {
    registry().remove(&pgid);
}

/// The adapter process groups started by this program that are still registered (not
/// yet ended by a shutdown).
pub fn live_groups() -> Vec<i32> {
    registry().iter().copied().collect()
}

/// Sends `signal` to every process of group `pgid`. A group that no longer exists is not
/// an error.
#[cfg(unix)]
pub(crate) fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals a process group; it has no memory
        // effects on this process. pgid > 1 rules out "every process" (-1) and our own group (0).
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

#[cfg(not(unix))]
pub(crate) fn signal_group(_pgid: i32, _signal: i32) {}

/// The pids of the live (not zombie) processes whose process group is `pgid`, read from
/// `/proc`. On a system without `/proc` this is empty and callers fall back to
/// unconditional signals.
pub fn live_group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The command name is in parentheses and may hold spaces; fields after the
        // last ')' are: state, ppid, pgrp, ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("");
        let _ppid = fields.next();
        let pgrp = fields.next().and_then(|s| s.parse::<i32>().ok());
        if pgrp == Some(pgid) && state != "Z" && state != "X" {
            out.push(pid);
        }
    }
    out
}

/// True when `/proc` can be read, so group membership can be observed.
pub(crate) fn can_observe_groups() -> bool {
    std::path::Path::new("/proc/self/stat").exists()
}

/// Waits until group `pgid` has no live member other than `except` (the leader, which the
/// caller reaps itself), or `limit` passes. True when the group emptied.
pub(crate) fn wait_group_empty(pgid: i32, except: Option<i32>, limit: Duration) -> bool {
    if !can_observe_groups() {
        return false;
    }
    let deadline = Instant::now() + limit;
    loop {
        let live = live_group_members(pgid)
            .into_iter()
            .filter(|p| Some(*p) != except)
            .count();
        if live == 0 {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Ends every registered adapter group: `SIGTERM`, a short wait, then `SIGKILL`. For a
/// program that must exit at once (an interrupt, its own output closed under it) and
/// cannot shut its adapters down one by one.
#[cfg(unix)]
pub fn end_all_groups() {
    let groups = live_groups();
    for pgid in &groups {
        signal_group(*pgid, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_millis(crate::TERM_GRACE_MS);
    for pgid in &groups {
        let left = deadline.saturating_duration_since(Instant::now());
        if !wait_group_empty(*pgid, None, left) {
            signal_group(*pgid, libc::SIGKILL);
        }
    }
}

/// Ends every registered adapter group (nothing to do where there are no process groups).
#[cfg(not(unix))]
pub fn end_all_groups() {}

/// Installs a handler for `SIGINT` (Ctrl-C), `SIGTERM` and `SIGHUP` that ends every live
/// adapter group, then exits with 128 + the signal number, as a shell reports it.
///
/// Adapters run in process groups of their own, so the terminal's `SIGINT` never reaches
/// them; without this handler an interrupted run would leave them running. Call it once,
/// early in `main`. A second call does nothing.
pub fn install_interrupt_cleanup() {
    #[cfg(unix)]
    {
        static INSTALLED: OnceLock<()> = OnceLock::new();
        if INSTALLED.set(()).is_err() {
            return;
        }
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                end_all_groups();
                eprintln!("\ninterrupted: every adapter process was ended");
                std::process::exit(128 + signal);
            }
        });
    }
}
