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
        format!("After {} restarts", loom_store_client::RESTARTS_MAX),
        format!("or {} (kernel)", loom_vectors::limits::ADAPTER_RESTARTS_MAX),
        format!(
            "(store {} MiB",
            loom_store_client::LINE_BYTES_MAX / (1024 * 1024)
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

/// store.md's "Out-of-range ids" table is the kits' table
/// (`loom_conformance::ids::ID_VALIDATION`), row for row: the same methods, the same id
/// arguments, the same answer (`invalid-argument`, or the unknown-id answer it names).
#[test]
fn gap_27_store_md_id_validation_table_is_the_kits_table() {
    use loom_conformance::ids::{OutOfRange, ID_VALIDATION};
    let text = std::fs::read_to_string(format!("{ROOT}/docs/protocols/store.md")).unwrap();
    let section = text
        .split("### Out-of-range ids")
        .nth(1)
        .expect("store.md has an \"Out-of-range ids\" section");
    let section = section.split("\n### ").next().unwrap_or("");
    let cell = |c: &str| c.trim().trim_matches('`').to_string();
    let documented: Vec<(String, String, String)> = section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').collect();
            assert_eq!(cells.len(), 3, "a row of three cells: {l}");
            (cell(cells[0]), cell(cells[1]), cells[2].trim().to_string())
        })
        .collect();
    let kits: Vec<(String, String, String)> = ID_VALIDATION
        .iter()
        .map(|r| {
            let answer = match r.out_of_range {
                OutOfRange::Refused => "`invalid-argument`".to_string(),
                OutOfRange::AsUnknown => format!("as for an unknown id: {}", r.unknown_answer),
            };
            (r.method.to_string(), r.argument.to_string(), answer)
        })
        .collect();
    assert_eq!(
        documented, kits,
        "store.md's out-of-range id table differs from the kits'"
    );
}

/// docs/performance.md states the campaign budget `loom check` runs by default.
#[test]
fn performance_md_states_the_default_campaign_budget_of_loom_check() {
    let text = std::fs::read_to_string(format!("{ROOT}/docs/performance.md")).unwrap();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let want = format!(
        "default budget of {} cases or {} s",
        loom_harness::check::EXPLORE_CASES_DEFAULT,
        loom_harness::check::EXPLORE_SECONDS_DEFAULT
    );
    assert!(
        text.contains(&want),
        "docs/performance.md must say {want:?}"
    );
}
