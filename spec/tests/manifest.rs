//! COMPAT-03: the manifest is the kernel's constants, referenced by name, never copied.

use loom_kernel::{limits, versions};
use loom_spec::{kernel_manifest, VERSION_CONSTANTS};

#[test]
fn compat_03_manifest_fields_are_the_kernel_constants() {
    let m = kernel_manifest();
    assert_eq!(m.event_schema_version, versions::EVENT_SCHEMA_VERSION);
    assert_eq!(m.kernel_abi_version, versions::KERNEL_ABI_VERSION);
    assert_eq!(m.wire_abi_version, versions::WIRE_ABI_VERSION);
    assert_eq!(m.spi.event_store, versions::EVENT_STORE_SPI_VERSION);
    assert_eq!(m.spi.snapshot_store, versions::SNAPSHOT_STORE_SPI_VERSION);
    assert_eq!(m.spi.archive_store, versions::ARCHIVE_STORE_SPI_VERSION);
    assert_eq!(m.spi.branch_registry, versions::BRANCH_REGISTRY_SPI_VERSION);
    assert_eq!(m.spi.dispatcher, versions::DISPATCHER_SPI_VERSION);
    assert_eq!(m.spi.content_store, versions::CONTENT_STORE_SPI_VERSION);
    assert_eq!(
        m.spi.durable_state_store,
        versions::DURABLE_STATE_STORE_SPI_VERSION
    );
    assert_eq!(
        m.spi.read_model_store,
        versions::READ_MODEL_STORE_SPI_VERSION
    );
    assert_eq!(m.syscalls.len(), versions::SYSCALL_CATALOGUE.len());
    for (entry, spec) in m.syscalls.iter().zip(versions::SYSCALL_CATALOGUE.iter()) {
        assert_eq!(
            (entry.name, entry.since, entry.feature),
            (spec.name, spec.since, spec.feature)
        );
    }
    assert_eq!(
        m.limits.quarantined_entries_max,
        limits::QUARANTINED_ENTRIES_MAX
    );
    assert_eq!(
        m.limits.typed_failure_payload_bytes_max,
        limits::TYPED_FAILURE_PAYLOAD_BYTES_MAX
    );
    assert_eq!(
        m.limits.resource_metered_value_max,
        limits::RESOURCE_METERED_VALUE_MAX
    );
    assert_eq!(
        m.limits.quota_reason_utf16_units_max,
        limits::QUOTA_REASON_UTF16_UNITS_MAX
    );
    assert_eq!(
        m.limits.resource_custom_keys_max,
        limits::RESOURCE_CUSTOM_KEYS_MAX
    );
    assert_eq!(m.limits.json_depth_max, limits::JSON_DEPTH_MAX);
    assert_eq!(m.known_event_types, loom_kernel::fold::known_event_types());
}

#[test]
fn version_constant_table_matches_the_kernel() {
    let expected = [
        ("EVENT_SCHEMA_VERSION", versions::EVENT_SCHEMA_VERSION),
        ("KERNEL_ABI_VERSION", versions::KERNEL_ABI_VERSION),
        ("WIRE_ABI_VERSION", versions::WIRE_ABI_VERSION),
        ("EVENT_STORE_SPI_VERSION", versions::EVENT_STORE_SPI_VERSION),
        (
            "SNAPSHOT_STORE_SPI_VERSION",
            versions::SNAPSHOT_STORE_SPI_VERSION,
        ),
        (
            "ARCHIVE_STORE_SPI_VERSION",
            versions::ARCHIVE_STORE_SPI_VERSION,
        ),
        (
            "BRANCH_REGISTRY_SPI_VERSION",
            versions::BRANCH_REGISTRY_SPI_VERSION,
        ),
        ("DISPATCHER_SPI_VERSION", versions::DISPATCHER_SPI_VERSION),
        (
            "CONTENT_STORE_SPI_VERSION",
            versions::CONTENT_STORE_SPI_VERSION,
        ),
        (
            "DURABLE_STATE_STORE_SPI_VERSION",
            versions::DURABLE_STATE_STORE_SPI_VERSION,
        ),
        (
            "READ_MODEL_STORE_SPI_VERSION",
            versions::READ_MODEL_STORE_SPI_VERSION,
        ),
    ];
    let ours: Vec<(&str, &str)> = VERSION_CONSTANTS
        .iter()
        .map(|c| (c.name, c.value))
        .collect();
    assert_eq!(ours, expected);
}

#[test]
fn json_uses_camel_case_keys() {
    let json: serde_json::Value =
        serde_json::from_str(&kernel_manifest().to_json()).expect("valid JSON");
    for key in [
        "eventSchemaVersion",
        "kernelAbiVersion",
        "wireAbiVersion",
        "spi",
        "syscalls",
        "limits",
        "knownEventTypes",
    ] {
        assert!(json.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(json["spi"]["eventStore"], versions::EVENT_STORE_SPI_VERSION);
    assert_eq!(
        json["spi"]["readModelStore"],
        versions::READ_MODEL_STORE_SPI_VERSION
    );
    assert_eq!(
        json["limits"]["typedFailurePayloadBytesMax"],
        limits::TYPED_FAILURE_PAYLOAD_BYTES_MAX
    );
    assert_eq!(json["syscalls"][10]["feature"], "continueAsNew");
    assert!(
        json["syscalls"][0].get("feature").is_none(),
        "base syscalls carry no flag"
    );
}

#[test]
fn text_rendering_names_every_constant() {
    let text = kernel_manifest().to_text();
    for c in VERSION_CONSTANTS {
        assert!(
            text.contains(c.name) && text.contains(c.value),
            "{}",
            c.name
        );
    }
    for s in versions::SYSCALL_CATALOGUE {
        assert!(text.contains(s.name));
    }
    assert!(text.contains("QUARANTINED_ENTRIES_MAX"));
}
