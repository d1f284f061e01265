//! The kernel manifest (COMPAT-03): every contract version, the syscall catalogue and the
//! kernel's limits, gathered by importing the real constants from `loom-kernel`.
//!
//! Nothing here restates a value. Each field is initialised from the constant itself, so a
//! change in the kernel shows up in `loom kernel-manifest --json` without an edit here.

use loom_kernel::limits;
use loom_kernel::versions::{self, SyscallSpec};
use serde::Serialize;
use std::fmt::Write as _;

/// One contract version constant: its name as the kernel exports it, the short names the
/// `loom compat` CLI accepts for it, and its value (imported, never copied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionConstant {
    /// The constant's name in `loom_kernel::versions`, e.g. `EVENT_STORE_SPI_VERSION`.
    pub name: &'static str,
    /// Short names accepted by [`crate::check_compatibility`], compared after
    /// [`crate::compat::normalize_name`] (case, `-` and `_` are ignored).
    pub aliases: &'static [&'static str],
    /// The value the kernel exports.
    pub value: &'static str,
}

/// Every versioned contract constant the kernel exports, in manifest order.
pub const VERSION_CONSTANTS: [VersionConstant; 11] = [
    VersionConstant {
        name: "EVENT_SCHEMA_VERSION",
        aliases: &["eventSchema", "event-schema", "schema"],
        value: versions::EVENT_SCHEMA_VERSION,
    },
    VersionConstant {
        name: "KERNEL_ABI_VERSION",
        aliases: &["abi", "kernelAbi", "kernel-abi"],
        value: versions::KERNEL_ABI_VERSION,
    },
    VersionConstant {
        name: "WIRE_ABI_VERSION",
        aliases: &["wire", "wireAbi", "wire-abi"],
        value: versions::WIRE_ABI_VERSION,
    },
    VersionConstant {
        name: "EVENT_STORE_SPI_VERSION",
        aliases: &["eventStore", "event-store", "event-store-spi"],
        value: versions::EVENT_STORE_SPI_VERSION,
    },
    VersionConstant {
        name: "SNAPSHOT_STORE_SPI_VERSION",
        aliases: &["snapshotStore", "snapshot-store", "snapshot-store-spi"],
        value: versions::SNAPSHOT_STORE_SPI_VERSION,
    },
    VersionConstant {
        name: "ARCHIVE_STORE_SPI_VERSION",
        aliases: &["archiveStore", "archive-store", "archive-store-spi"],
        value: versions::ARCHIVE_STORE_SPI_VERSION,
    },
    VersionConstant {
        name: "BRANCH_REGISTRY_SPI_VERSION",
        aliases: &["branchRegistry", "branch-registry", "branch-registry-spi"],
        value: versions::BRANCH_REGISTRY_SPI_VERSION,
    },
    VersionConstant {
        name: "DISPATCHER_SPI_VERSION",
        aliases: &["dispatcher", "dispatcher-spi", "executionDispatcher"],
        value: versions::DISPATCHER_SPI_VERSION,
    },
    VersionConstant {
        name: "CONTENT_STORE_SPI_VERSION",
        aliases: &["contentStore", "content-store", "content-store-spi"],
        value: versions::CONTENT_STORE_SPI_VERSION,
    },
    VersionConstant {
        name: "DURABLE_STATE_STORE_SPI_VERSION",
        aliases: &[
            "durableStateStore",
            "durable-state-store",
            "durable-state-store-spi",
        ],
        value: versions::DURABLE_STATE_STORE_SPI_VERSION,
    },
    VersionConstant {
        name: "READ_MODEL_STORE_SPI_VERSION",
        aliases: &["readModelStore", "read-model-store", "read-model-store-spi"],
        value: versions::READ_MODEL_STORE_SPI_VERSION,
    },
];

/// The SPI versions, kernel tier then plugin tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpiVersions {
    /// `EVENT_STORE_SPI_VERSION`.
    pub event_store: &'static str,
    /// `SNAPSHOT_STORE_SPI_VERSION`.
    pub snapshot_store: &'static str,
    /// `ARCHIVE_STORE_SPI_VERSION`.
    pub archive_store: &'static str,
    /// `BRANCH_REGISTRY_SPI_VERSION`.
    pub branch_registry: &'static str,
    /// `DISPATCHER_SPI_VERSION`.
    pub dispatcher: &'static str,
    /// `CONTENT_STORE_SPI_VERSION` (plugin tier).
    pub content_store: &'static str,
    /// `DURABLE_STATE_STORE_SPI_VERSION` (plugin tier).
    pub durable_state_store: &'static str,
    /// `READ_MODEL_STORE_SPI_VERSION` (plugin tier).
    pub read_model_store: &'static str,
}

/// One syscall of the pinned catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyscallEntry {
    /// Name as flow code calls it.
    pub name: &'static str,
    /// KERNEL_ABI version that introduced it.
    pub since: &'static str,
    /// The `kernel.features` flag that gates it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feature: Option<&'static str>,
}

impl From<&SyscallSpec> for SyscallEntry {
    fn from(spec: &SyscallSpec) -> Self {
        SyscallEntry {
            name: spec.name,
            since: spec.since,
            feature: spec.feature,
        }
    }
}

/// The kernel's published bounds (`loom_kernel::limits`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// `QUARANTINED_ENTRIES_MAX`.
    pub quarantined_entries_max: usize,
    /// `TYPED_FAILURE_PAYLOAD_BYTES_MAX`.
    pub typed_failure_payload_bytes_max: usize,
    /// `RESOURCE_METERED_VALUE_MAX`.
    pub resource_metered_value_max: f64,
    /// `QUOTA_REASON_UTF16_UNITS_MAX`.
    pub quota_reason_utf16_units_max: usize,
    /// `RESOURCE_CUSTOM_KEYS_MAX`.
    pub resource_custom_keys_max: usize,
    /// `JSON_DEPTH_MAX`.
    pub json_depth_max: usize,
}

/// The machine-readable projection of the kernel's contract (`loom kernel-manifest`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KernelManifest {
    /// `EVENT_SCHEMA_VERSION`.
    pub event_schema_version: &'static str,
    /// `KERNEL_ABI_VERSION`.
    pub kernel_abi_version: &'static str,
    /// `WIRE_ABI_VERSION`.
    pub wire_abi_version: &'static str,
    /// The SPI versions.
    pub spi: SpiVersions,
    /// The pinned catalogue of all syscalls (`SYSCALL_CATALOGUE`), flag-gated ones included.
    pub syscalls: Vec<SyscallEntry>,
    /// The kernel's limits.
    pub limits: Limits,
    /// The event types the fold understands at `EVENT_SCHEMA_VERSION` (ABI-11).
    pub known_event_types: Vec<&'static str>,
}

/// Builds the manifest from the kernel's constants.
pub fn kernel_manifest() -> KernelManifest {
    KernelManifest {
        event_schema_version: versions::EVENT_SCHEMA_VERSION,
        kernel_abi_version: versions::KERNEL_ABI_VERSION,
        wire_abi_version: versions::WIRE_ABI_VERSION,
        spi: SpiVersions {
            event_store: versions::EVENT_STORE_SPI_VERSION,
            snapshot_store: versions::SNAPSHOT_STORE_SPI_VERSION,
            archive_store: versions::ARCHIVE_STORE_SPI_VERSION,
            branch_registry: versions::BRANCH_REGISTRY_SPI_VERSION,
            dispatcher: versions::DISPATCHER_SPI_VERSION,
            content_store: versions::CONTENT_STORE_SPI_VERSION,
            durable_state_store: versions::DURABLE_STATE_STORE_SPI_VERSION,
            read_model_store: versions::READ_MODEL_STORE_SPI_VERSION,
        },
        syscalls: versions::SYSCALL_CATALOGUE
            .iter()
            .map(SyscallEntry::from)
            .collect(),
        limits: Limits {
            quarantined_entries_max: limits::QUARANTINED_ENTRIES_MAX,
            typed_failure_payload_bytes_max: limits::TYPED_FAILURE_PAYLOAD_BYTES_MAX,
            resource_metered_value_max: limits::RESOURCE_METERED_VALUE_MAX,
            quota_reason_utf16_units_max: limits::QUOTA_REASON_UTF16_UNITS_MAX,
            resource_custom_keys_max: limits::RESOURCE_CUSTOM_KEYS_MAX,
            json_depth_max: limits::JSON_DEPTH_MAX,
        },
        known_event_types: known_event_types(),
    }
}

/// The fold's pinned type set (ABI-11), imported from the kernel.
fn known_event_types() -> Vec<&'static str> {
    loom_kernel::fold::known_event_types().to_vec()
}

impl KernelManifest {
    /// The manifest as pretty JSON with camelCase keys (`loom kernel-manifest --json`).
    pub fn to_json(&self) -> String {
        // Serialising plain strings, integers and a finite float cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// A human-readable rendering (`loom kernel-manifest`).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "Loom kernel manifest");
        let _ = writeln!(out);
        let _ = writeln!(out, "contract versions:");
        for constant in VERSION_CONSTANTS {
            let _ = writeln!(out, "  {:<33} {}", constant.name, constant.value);
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "syscalls ({}):", self.syscalls.len());
        for s in &self.syscalls {
            match s.feature {
                Some(flag) => {
                    let _ = writeln!(
                        out,
                        "  {:<14} since {}  (kernel.features.{flag})",
                        s.name, s.since
                    );
                }
                None => {
                    let _ = writeln!(out, "  {:<14} since {}", s.name, s.since);
                }
            }
        }
        let _ = writeln!(out);
        let l = &self.limits;
        let _ = writeln!(out, "limits:");
        let _ = writeln!(
            out,
            "  {:<33} {}",
            "QUARANTINED_ENTRIES_MAX", l.quarantined_entries_max
        );
        let _ = writeln!(
            out,
            "  {:<33} {}",
            "TYPED_FAILURE_PAYLOAD_BYTES_MAX", l.typed_failure_payload_bytes_max
        );
        let _ = writeln!(
            out,
            "  {:<33} {}",
            "RESOURCE_METERED_VALUE_MAX", l.resource_metered_value_max
        );
        let _ = writeln!(
            out,
            "  {:<33} {}",
            "QUOTA_REASON_UTF16_UNITS_MAX", l.quota_reason_utf16_units_max
        );
        let _ = writeln!(
            out,
            "  {:<33} {}",
            "RESOURCE_CUSTOM_KEYS_MAX", l.resource_custom_keys_max
        );
        let _ = writeln!(out, "  {:<33} {}", "JSON_DEPTH_MAX", l.json_depth_max);
        let _ = writeln!(out);
        let _ = writeln!(out, "known event types ({}):", self.known_event_types.len());
        for t in &self.known_event_types {
            let _ = writeln!(out, "  {t}");
        }
        out
    }
}
