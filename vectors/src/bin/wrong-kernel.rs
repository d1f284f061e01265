//! `wrong-kernel --bug NAME`: the reference kernel behind the stdio kernel protocol
//! with one deliberate bug, to prove the vectors (and the harness) catch it.
//!
//! Semantic bugs (see `loom_vectors::wrong::Bug`): step-failed-fails-execution, no-seq,
//! emit-digest-without-segment, refused-resume-appends, no-input-drop,
//! emit-allows-kernel-types. Harness bugs: crash-on-ingress (exits mid-request),
//! hang-on-digest (never answers), garbage-on-emit (writes non-JSON), wrong-id-on-
//! normalize (answers another id), hello-without-syscalls (advertises kernelAbiVersion
//! without the syscall list, ABI-05). `--bug none` serves the plain reference kernel.
//!
//! `wrong-kernel --readings all` (or a comma-separated list of reading names or GAP
//! ids, `loom_vectors::readings`) serves the reference taking those open points the
//! other way, as a kernel written from the spec that chose differently would: its
//! `hello` claims only the resolutions it still follows. With `--bug` as well, it has
//! that bug too (a spec-breaking bug the resolution judging must still fail).

use loom_vectors::protocol::Handler;
use loom_vectors::readings::ReadingSet;
use loom_vectors::wrong::Bug;
use loom_vectors::ReferenceKernel;
use serde_json::{json, Value};
use std::io::{BufRead, Write};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let readings = match value("--readings").map(|r| ReadingSet::parse(&r)) {
        None => ReadingSet::NONE,
        Some(Ok(set)) => set,
        Some(Err(e)) => {
            eprintln!("wrong-kernel: {e}");
            std::process::exit(2);
        }
    };
    let name = match value("--bug") {
        Some(n) => n,
        None if !readings.is_empty() => "none".to_owned(),
        None => {
            eprintln!("usage: wrong-kernel --bug NAME [--readings all|NAME,...]");
            std::process::exit(2);
        }
    };
    let harness = [
        "crash-on-ingress",
        "hang-on-digest",
        "garbage-on-emit",
        "wrong-id-on-normalize",
        "hello-without-syscalls",
    ];
    let mut kernel = match (name.as_str(), Bug::parse(&name)) {
        ("none", _) => ReferenceKernel::default(),
        (_, Some(bug)) => ReferenceKernel::with_bug(bug),
        (n, None) if harness.contains(&n) => ReferenceKernel::default(),
        (n, None) => {
            eprintln!("unknown bug `{n}`");
            std::process::exit(2);
        }
    };
    kernel.readings = readings;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(json!({}));
        match (name.as_str(), method) {
            ("crash-on-ingress", "ingress") => {
                eprintln!("wrong-kernel: crashing on purpose");
                std::process::exit(3);
            }
            ("hang-on-digest", "digest") => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            ("garbage-on-emit", "validateEmit") => {
                let _ = writeln!(out, "this is not JSON");
                let _ = out.flush();
                continue;
            }
            ("hello-without-syscalls", "hello") => {
                let mut answer = Handler::handle(&kernel, method, &params);
                if let loom_vectors::Answer::Result(Value::Object(m)) = &mut answer {
                    m.remove("syscalls");
                }
                let _ = writeln!(out, "{}", answer.to_line(&id));
                let _ = out.flush();
                continue;
            }
            ("wrong-id-on-normalize", "normalizeSnapshot") => {
                let answer = Handler::handle(&kernel, method, &params).to_line(&json!(-1));
                let _ = writeln!(out, "{answer}");
                let _ = out.flush();
                continue;
            }
            _ => {}
        }
        let answer = Handler::handle(&kernel, method, &params).to_line(&id);
        let _ = writeln!(out, "{answer}");
        let _ = out.flush();
    }
}
