//! `loom store-adapter`: the reference SQLite and PostgreSQL stores behind the stdio store
//! protocol, run as a `cmd:` adapter. Every kit passes through it, including the
//! concurrency kit (4 processes on one database) and the durability kit (the processes
//! killed with SIGKILL and started again): the reference stores pass with real kills. A
//! store it cannot share or keep is a usage error; a broken request is an answer naming
//! it, and a line that is not JSON ends the adapter with exit 1 and a message.

use std::io::Write;
use std::process::{Command, Stdio};

mod common;
use common::{loom, scratch, show};

/// The adapter command for `store`, with the loom binary under test.
fn adapter(store: &str, extra: &str) -> String {
    format!(
        "cmd:'{}' store-adapter --store '{store}' {extra}",
        env!("CARGO_BIN_EXE_loom")
    )
}

/// Every kit against `store` through the adapter: all pass, none is skipped but the
/// methods the store does not claim (SQLite's storeNow).
fn every_kit_passes(store: &str, extra: &str, skips_allowed: usize) {
    let dir = scratch("store-adapter");
    let out = dir.join("r");
    let o = loom(&[
        "conform",
        "--store",
        &adapter(store, extra),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let results = report["results"].as_array().unwrap();
    let skipped: Vec<&serde_json::Value> =
        results.iter().filter(|r| r["status"] != "pass").collect();
    assert!(skipped.len() <= skips_allowed, "{skipped:#?}");
    for kit in ["concurrency", "durability"] {
        let ran = results
            .iter()
            .filter(|r| r["suite"] == kit && r["status"] == "pass")
            .count();
        assert!(
            ran > 0,
            "no {kit} case passed: the adapter must share and survive kills"
        );
    }
}

fn spi_23_place_05_the_sqlite_store_as_an_adapter_passes_every_kit_with_kills_and_clients() {
    let dir = scratch("store-adapter-sqlite");
    let db = dir.join("shared.db");
    // SQLite claims no storeNow (one process's clock, SPI-08): its two cases skip.
    every_kit_passes(&format!("sqlite:{}", db.display()), "", 2);
}

fn spi_23_place_05_the_postgres_store_as_an_adapter_passes_every_kit_with_kills_and_clients(
    url: &str,
) {
    let schema = "loom_store_adapter_test";
    every_kit_passes(url, &format!("--schema {schema}"), 0);
}

fn store_adapter_refuses_what_it_cannot_share_and_answers_broken_requests() {
    for store in ["memory", "sqlite", "sqlite::memory:", "bogus"] {
        let o = loom(&["store-adapter", "--store", store]);
        assert_eq!(o.status.code(), Some(2), "{store}: {}", show(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("--store"),
            "{}",
            show(&o)
        );
    }
    let dir = scratch("store-adapter-broken");
    let db = format!("sqlite:{}", dir.join("x.db").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(["store-adapter", "--store", &db])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = concat!(
        r#"{"id":1,"method":"hello","params":{"protocolVersion":"1.2"}}"#,
        "\n",
        r#"{"id":2,"method":"eventStore.append","params":{"executionId":"e","expectedNext":"zero","events":[]}}"#,
        "\n",
        r#"{"id":3,"method":"eventStore.nonesuch","params":{}}"#,
        "\n",
        "this is not json\n"
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(requests.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:#?}");
    let hello = &lines[0]["result"];
    assert_eq!(hello["sharedBackend"], true);
    assert_eq!(hello["durable"], true);
    assert_eq!(
        hello["protocolVersion"],
        loom_store_client::PROTOCOL_VERSION
    );
    assert_eq!(
        lines[1]["error"]["kind"], "invalid-argument",
        "{:#}",
        lines[1]
    );
    assert!(lines[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("expectedNext"));
    assert_eq!(lines[2]["error"]["kind"], "unsupported", "{:#}", lines[2]);
    assert_eq!(lines[2]["error"]["method"], "nonesuch", "{:#}", lines[2]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not JSON"),
        "{}",
        show(&o)
    );
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, test, Tool};
    run(vec![
        test(
            "spi_23_place_05_the_sqlite_store_as_an_adapter_passes_every_kit_with_kills_and_clients",
            spi_23_place_05_the_sqlite_store_as_an_adapter_passes_every_kit_with_kills_and_clients,
        ),
        needs(
            Tool::Postgres,
            "spi_23_place_05_the_postgres_store_as_an_adapter_passes_every_kit_with_kills_and_clients",
            spi_23_place_05_the_postgres_store_as_an_adapter_passes_every_kit_with_kills_and_clients,
        ),
        test(
            "store_adapter_refuses_what_it_cannot_share_and_answers_broken_requests",
            store_adapter_refuses_what_it_cannot_share_and_answers_broken_requests,
        ),
    ])
}
