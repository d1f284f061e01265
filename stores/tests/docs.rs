//! docs/spi.md must not drift from the code: every optional method with its `since`,
//! every error kind's stable name and every kit case appear in it.

use loom_kernel::spi::{
    ArchiveStoreMethod, ContentStoreMethod, EventStoreMethod, SnapshotStoreMethod, SpiMethod,
    STORE_ERROR_KIND_NAMES,
};

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/spi.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

fn method_rows<M: SpiMethod>(doc: &str) -> Vec<String> {
    M::all()
        .iter()
        .map(|m| format!("| `{}` | {} |", m.name(), m.since()))
        .filter(|row| !doc.contains(row.as_str()))
        .collect()
}

#[test]
fn spi_docs_list_every_optional_method_with_its_version() {
    let doc = doc();
    let mut missing = method_rows::<EventStoreMethod>(&doc);
    missing.extend(method_rows::<SnapshotStoreMethod>(&doc));
    missing.extend(method_rows::<ArchiveStoreMethod>(&doc));
    missing.extend(method_rows::<ContentStoreMethod>(&doc));
    assert!(missing.is_empty(), "docs/spi.md lacks the rows {missing:?}");
}

#[test]
fn spi_docs_list_every_error_kind() {
    let doc = doc();
    let missing: Vec<&str> = STORE_ERROR_KIND_NAMES
        .iter()
        .copied()
        .filter(|k| !doc.contains(&format!("| `{k}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/spi.md lacks the error kinds {missing:?}"
    );
}

#[test]
fn spi_docs_name_every_kit_macro() {
    let doc = doc();
    for name in [
        "event_store_kit!",
        "snapshot_store_kit!",
        "archive_store_kit!",
        "branch_registry_kit!",
        "dispatcher_kit!",
        "timer_store_kit!",
        "content_store_conformance!",
        "durable_state_store_conformance!",
        "read_model_store_conformance!",
    ] {
        assert!(doc.contains(name), "docs/spi.md does not mention {name}");
    }
}

#[test]
fn spi_20_docs_name_every_plugin_kit_case_that_a_broken_store_fails() {
    let doc = doc();
    for case in [
        "spi_20_put_stream_chunk_error_stores_nothing",
        "spi_20_owned_content_is_readable_only_by_its_owner",
        "spi_20_state_stale_version_is_conflict_and_writes_nothing",
        "spi_20_query_limit_out_of_range_is_invalid",
        "spi_20_query_forged_cursor_is_invalid",
    ] {
        assert!(doc.contains(case), "docs/spi.md does not mention {case}");
    }
}
