//! Exit statuses in words: "exited with code 3", "killed by signal 9 (SIGKILL)".

use std::process::ExitStatus;

/// Describes how a process ended, for a person.
pub fn describe_exit(status: &ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return match signal_name(signal) {
                Some(name) => format!("killed by signal {signal} ({name})"),
                None => format!("killed by signal {signal}"),
            };
        }
    }
    match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => "ended for an unknown reason".to_string(),
    }
}

#[cfg(unix)]
fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return None,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::describe_exit;
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    #[test]
    fn exit_codes_and_signals_read_as_words() {
        let cases = [
            (0, "exited with code 0"),
            (3 << 8, "exited with code 3"),
            (9, "killed by signal 9 (SIGKILL)"),
            (15, "killed by signal 15 (SIGTERM)"),
            (11, "killed by signal 11 (SIGSEGV)"),
            (40, "killed by signal 40"),
        ];
        for (raw, words) in cases {
            assert_eq!(
                describe_exit(&ExitStatus::from_raw(raw)),
                words,
                "raw {raw}"
            );
        }
    }
}
