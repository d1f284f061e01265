//! The lifecycle section of both protocol documents states the runner's limits; this
//! keeps every figure there equal to the constant it describes.

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn grouped(n: u64) -> String {
    // 30000 -> "30 000", as the documents write milliseconds.
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[test]
fn both_protocol_documents_state_the_runner_s_limits() {
    let figures = [
        format!(
            "`--hello-timeout-ms` ({} ms)",
            grouped(loom_process::HELLO_TIMEOUT_MS_DEFAULT)
        ),
        format!(
            "`--timeout-ms` ({} ms)",
            grouped(loom_process::CALL_TIMEOUT_MS_DEFAULT)
        ),
        format!(
            "waits {} ms for the",
            grouped(loom_process::SHUTDOWN_GRACE_MS)
        ),
        format!(
            "waits {} ms, and sends",
            grouped(loom_process::TERM_GRACE_MS)
        ),
        format!(
            "still there {} ms later",
            grouped(loom_process::TERM_GRACE_MS)
        ),
        format!("the last {} stderr lines", loom_process::STDERR_LINES_KEPT),
        format!("After {} restarts", loom_conformance::stdio::RESTARTS_MAX),
        format!("or {} (kernel)", loom_vectors::limits::ADAPTER_RESTARTS_MAX),
        format!(
            "(store {} MiB",
            loom_conformance::stdio::LINE_BYTES_MAX / (1024 * 1024)
        ),
        format!(
            "kernel {} MiB)",
            loom_vectors::limits::RESPONSE_LINE_BYTES_MAX / (1024 * 1024)
        ),
    ];
    for doc in ["docs/protocols/store.md", "docs/protocols/kernel.md"] {
        let text = std::fs::read_to_string(format!("{ROOT}/{doc}")).expect("the document");
        let text = text.replace('\n', " ").replace("  ", " ");
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for f in &figures {
            assert!(text.contains(f.as_str()), "{doc} must say {f:?}");
        }
    }
}
