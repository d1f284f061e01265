//! COMPAT-04/05/06 and GAP-28: the compatibility check, its exit codes and the matrix.

use loom_kernel::versions::{self, SemVer};
use loom_spec::compat::{EXIT_COMPATIBLE, EXIT_INCOMPATIBLE, EXIT_USAGE};
use loom_spec::{check_compatibility, resolve_name, Verdict, SUPPORTED_MATRIX, VERSION_CONSTANTS};
use std::collections::BTreeMap;

fn declare(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Judges `declared` against a constant whose kernel value is `kernel`, by picking the
/// constant from the table whose major matches `kernel`'s.
fn verdict_against(kernel: &str, declared: &str) -> Verdict {
    let major = SemVer::parse(kernel).expect("table kernel version").major;
    let constant = VERSION_CONSTANTS
        .iter()
        .find(|c| SemVer::parse(c.value).is_ok_and(|v| v.major == major))
        .expect("a constant with that major");
    let report = check_compatibility(&declare(&[(constant.name, declared)]));
    report.entries[0].verdict.clone()
}

#[test]
fn compat_04_same_major_is_compatible() {
    // (kernel-side version, declared version, compatible?) ; None = error.
    let table: [(&str, &str, Option<bool>); 9] = [
        ("1.26.0", "1.0.0", Some(true)),
        ("1.0.0", "1.26.0", Some(true)),
        ("1.3.0", "2.0.0", Some(false)),
        ("2.6.0", "1.3.0", Some(false)),
        ("2.6.0", "2.0.0-rc.1", Some(true)),
        ("1.3.0", "0.9.0", Some(false)),
        ("1.3.0", "1.3", None),
        ("1.3.0", "v1.3.0", None),
        ("1.3.0", "", None),
    ];
    for (kernel, declared, expected) in table {
        let verdict = verdict_against(kernel, declared);
        match expected {
            Some(true) => assert_eq!(verdict, Verdict::Compatible, "{declared} ~ {kernel}"),
            Some(false) => assert_eq!(verdict, Verdict::Incompatible, "{declared} ~ {kernel}"),
            None => assert!(
                matches!(verdict, Verdict::Error(_)),
                "{declared} ~ {kernel}: {verdict:?}"
            ),
        }
    }
}

#[test]
fn compat_05_exit_code_is_nonzero_on_mismatch() {
    let abi_major = SemVer::parse(versions::KERNEL_ABI_VERSION)
        .expect("kernel ABI")
        .major;
    let same = format!("{abi_major}.0.0");
    let other = format!("{}.0.0", abi_major + 1);
    let ok = check_compatibility(&declare(&[
        ("abi", &same),
        ("eventSchema", versions::EVENT_SCHEMA_VERSION),
    ]));
    assert!(ok.is_compatible() && !ok.has_errors());
    assert_eq!(ok.exit_code(), EXIT_COMPATIBLE);

    let bad = check_compatibility(&declare(&[
        ("abi", &other),
        ("eventSchema", versions::EVENT_SCHEMA_VERSION),
    ]));
    assert!(!bad.is_compatible() && !bad.has_errors());
    assert_eq!(bad.exit_code(), EXIT_INCOMPATIBLE);
    assert!(bad.to_string().contains("INCOMPATIBLE"));

    let unknown = check_compatibility(&declare(&[("abi", &other), ("flux-capacitor", "1.0.0")]));
    assert!(unknown.has_errors());
    assert_eq!(
        unknown.exit_code(),
        EXIT_USAGE,
        "a usage error wins over a mismatch"
    );

    let malformed = check_compatibility(&declare(&[("wire", "one.two.three")]));
    assert_eq!(malformed.exit_code(), EXIT_USAGE);

    let empty = check_compatibility(&BTreeMap::new());
    assert!(!empty.is_compatible() && empty.has_errors());
    assert_eq!(empty.exit_code(), EXIT_USAGE);
}

#[test]
fn compat_06_single_supported_row() {
    assert_eq!(
        SUPPORTED_MATRIX.len(),
        1,
        "Loom moves in lockstep: one supported row"
    );
    let row = SUPPORTED_MATRIX[0];
    assert_eq!(
        row.majors.len(),
        VERSION_CONSTANTS.len(),
        "the row covers every constant once"
    );
    for constant in VERSION_CONSTANTS {
        let kernel_major = SemVer::parse(constant.value)
            .expect("kernel constant is semver")
            .major;
        assert_eq!(
            row.major_of(constant.name),
            Some(kernel_major),
            "{} is {} but the supported row pins another major; update SUPPORTED_MATRIX and docs/compatibility.md together",
            constant.name,
            constant.value
        );
    }
    assert_eq!(
        row.major_of("EVENT_STORE_SPI_VERSION"),
        Some(2),
        "the EventStore SPI is 2.x"
    );
}

#[test]
fn gap_28_names_and_short_names_resolve() {
    let cases = [
        ("EVENT_SCHEMA_VERSION", "EVENT_SCHEMA_VERSION"),
        ("eventSchema", "EVENT_SCHEMA_VERSION"),
        ("event-schema", "EVENT_SCHEMA_VERSION"),
        ("abi", "KERNEL_ABI_VERSION"),
        ("KERNEL_ABI_VERSION", "KERNEL_ABI_VERSION"),
        ("wire", "WIRE_ABI_VERSION"),
        ("eventStore", "EVENT_STORE_SPI_VERSION"),
        ("event-store-spi", "EVENT_STORE_SPI_VERSION"),
        ("snapshotStore", "SNAPSHOT_STORE_SPI_VERSION"),
        ("archiveStore", "ARCHIVE_STORE_SPI_VERSION"),
        ("branchRegistry", "BRANCH_REGISTRY_SPI_VERSION"),
        ("dispatcher", "DISPATCHER_SPI_VERSION"),
        ("contentStore", "CONTENT_STORE_SPI_VERSION"),
        ("durable-state-store", "DURABLE_STATE_STORE_SPI_VERSION"),
        ("readModelStore", "READ_MODEL_STORE_SPI_VERSION"),
    ];
    for (name, constant) in cases {
        assert_eq!(resolve_name(name).map(|c| c.name), Some(constant), "{name}");
    }
    for unknown in ["", "-", "abiz", "EVENT_SCHEMA_VER", "spi"] {
        assert!(
            resolve_name(unknown).is_none(),
            "{unknown:?} must not resolve"
        );
    }
    // Every short name is unambiguous: it resolves to its own constant.
    for constant in VERSION_CONSTANTS {
        for alias in constant.aliases {
            assert_eq!(
                resolve_name(alias).map(|c| c.name),
                Some(constant.name),
                "{alias}"
            );
        }
    }
    // The report names the kernel constant it compared with.
    let report = check_compatibility(&declare(&[("eventStore", "2.1.0")]));
    assert_eq!(
        report.entries[0].kernel,
        format!(
            "EVENT_STORE_SPI_VERSION={}",
            versions::EVENT_STORE_SPI_VERSION
        )
    );
}
