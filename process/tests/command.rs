//! `run_to_completion`: a one-off command (a backend restart) succeeds, fails with its
//! exit status and stderr, or is killed with its whole group at its time limit.

use std::time::{Duration, Instant};

use loom_process::{live_groups, run_to_completion};

#[test]
fn outcomes_name_the_command_and_how_it_ended() {
    // (command, limit ms, Ok?, words the error must hold)
    let cases: [(&str, u64, bool, &[&str]); 4] = [
        ("true", 5_000, true, &[]),
        ("echo to stdout; exit 0", 5_000, true, &[]),
        (
            "echo 'backend refused' >&2; exit 3",
            5_000,
            false,
            &["exited with code 3", "backend refused"],
        ),
        ("kill -9 $$", 5_000, false, &["killed by signal 9"]),
    ];
    for (command, limit_ms, ok, words) in cases {
        let r = run_to_completion(command, Duration::from_millis(limit_ms));
        assert_eq!(r.is_ok(), ok, "{command}: {r:?}");
        if let Err(e) = r {
            assert!(e.contains(command), "{e}");
            for w in words {
                assert!(e.contains(w), "{command}: {e}");
            }
        }
    }
}

#[test]
fn a_command_past_its_limit_is_killed_with_its_whole_group() {
    let pid_file = std::env::temp_dir().join(format!("loom-command-{}.pid", std::process::id()));
    let started = Instant::now();
    let before = live_groups();
    // A background child that would outlive its shell; it writes its pid first.
    let command = format!(
        "sleep 30 & echo $! > {}; echo started >&2; sleep 30",
        pid_file.display()
    );
    let e =
        run_to_completion(&command, Duration::from_millis(300)).expect_err("a hang is an error");
    assert!(e.contains("did not finish within 300 ms"), "{e}");
    assert!(e.contains("started"), "{e}");
    // Well short of the sleeps: the group was killed, not waited for.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        before,
        live_groups(),
        "the command's group is no longer registered"
    );
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = std::fs::remove_file(&pid_file);
    // The orphaned child is gone (or a zombie about to be reaped by init).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .map(|(_, r)| r.trim_start().chars().next());
        if stat.is_empty() || matches!(state, Some(Some('Z' | 'X'))) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the background child {pid} still runs: {stat}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
