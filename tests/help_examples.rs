//! Every example in every `--help` works for someone who installed the binary: each one
//! is run with the built `loom` from an empty temporary directory, so an example that
//! needs a file only loom's source tree has (`simulator/scenarios/…`, `docs/…`,
//! `examples/…`) fails here. And no help text points at such a path.
//!
//! An example may name a file the user brings (their adapter, their log, a report from an
//! earlier run): `USER_FILES` lists those names. Such an example may exit 2 only when
//! that file is what is missing (its name is in the error). Every other example must not
//! exit 2 (the run could not be set up): 0 and 1 are both a run that started. An example
//! still running after `EXAMPLE_RUN_LIMIT` (a full `loom check`, a long sweep) has got
//! past its set-up, which comes first; it is ended with SIGTERM, which loom answers by
//! ending its adapters.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LOOM: &str = env!("CARGO_BIN_EXE_loom");

/// How long one example may run before it counts as started and is ended.
const EXAMPLE_RUN_LIMIT: Duration = Duration::from_secs(3);

/// Files and folders examples name that the user supplies.
const USER_FILES: &[&str] = &[
    "known-failures.toml",
    "my_kernel.py",
    "adapter.py",
    "events.json",
    "events.jsonl",
    "small.jsonl",
    "huge.jsonl",
    "run.jsonl",
    "flow.json",
    "report.json",
    "my-scenario.toml",
    "shrunk.json",
    "explore-replay.json",
    "vendor/loom-vectors",
    "fuzz-found/",
    "./kernel",
    "./my-kernel",
    "my-kernel.mjs",
    "kernel.mjs",
];

/// Commands that work only in loom's source tree, and say so in their help.
const CHECKOUT_ONLY: &[&str] = &["loom vectors regen"];

/// Paths only a checkout of loom's source has.
const CHECKOUT_PATHS: &[&str] = &[
    "docs/",
    "examples/",
    "simulator/",
    "spec/",
    "scripts/",
    "vectors/golden",
];

fn help(path: &[String]) -> String {
    let o = Command::new(LOOM)
        .args(path)
        .arg("--help")
        .output()
        .unwrap();
    assert!(o.status.success(), "loom {} --help", path.join(" "));
    String::from_utf8(o.stdout).unwrap()
}

/// Every command path (`[]`, `["vectors"]`, `["vectors", "run"]`, …) and its help.
fn all_helps() -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let text = help(&path);
        if let Some(commands) = text.split("Commands:\n").nth(1) {
            for line in commands.lines().take_while(|l| l.starts_with("  ")) {
                let name = line.split_whitespace().next().unwrap();
                if name != "help" {
                    let mut p = path.clone();
                    p.push(name.to_string());
                    todo.push(p);
                }
            }
        }
        out.push((path, text));
    }
    assert!(out.len() >= 20, "{} commands", out.len());
    out
}

fn examples(help: &str) -> Vec<String> {
    let Some(block) = help.split("Examples:\n").nth(1) else {
        return Vec::new();
    };
    block
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  loom"))
        // `loom rules FOLD-09         one rule: …`: the words after a wide gap explain it.
        .map(|l| l.trim().split("   ").next().unwrap().trim().to_string())
        .collect()
}

#[test]
fn no_help_text_points_at_a_path_only_the_source_tree_has() {
    for (path, text) in all_helps() {
        for line in text.lines() {
            let about_the_tree = line.contains("source tree") || line.contains("source checkout");
            for p in CHECKOUT_PATHS {
                assert!(
                    !line.contains(p) || about_the_tree,
                    "`loom {} --help` points at {p}, which an installed loom does not have:\n{line}",
                    path.join(" ")
                );
            }
        }
    }
}

#[cfg(unix)]
#[test]
fn every_help_example_runs_from_an_empty_directory() {
    let bin_dir = Path::new(LOOM).parent().unwrap();
    let path_var = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let mut seen = std::collections::BTreeSet::new();
    for (_, text) in all_helps() {
        for example in examples(&text) {
            if !seen.insert(example.clone()) || CHECKOUT_ONLY.iter().any(|c| example.starts_with(c))
            {
                continue;
            }
            let dir = std::env::temp_dir()
                .join(format!("loom-help-example-{}-{ran}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let mut child = {
                use std::os::unix::process::CommandExt;
                Command::new("sh")
                    .arg("-c")
                    .arg(&example)
                    .current_dir(&dir)
                    .env("PATH", &path_var)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .process_group(0)
                    .spawn()
                    .unwrap()
            };
            let started = Instant::now();
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break Some(s);
                }
                if started.elapsed() > EXAMPLE_RUN_LIMIT {
                    // SAFETY: signalling the example's own process group.
                    unsafe { libc::kill(-(child.id() as i32), libc::SIGTERM) };
                    let _ = child.wait();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let mut stderr = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut stderr);
            }
            if let Some(status) = status {
                if status.code() == Some(2) {
                    let user_file = USER_FILES.iter().find(|f| {
                        example.contains(*f)
                            && stderr.contains(f.trim_start_matches("./").trim_end_matches('/'))
                    });
                    assert!(
                        user_file.is_some() || example.contains('<'),
                        "`{example}` could not be set up from an empty directory (exit 2) and names no file of the user's:\n{stderr}"
                    );
                }
            }
            let _ = std::fs::remove_dir_all(&dir);
            ran += 1;
        }
    }
    assert!(ran >= 50, "{ran} examples");
}
