//! Contract version constants and the syscall catalogue.
//!
//! These are the values the kernel manifest is built from (`loom-spec` imports them,
//! it never copies them). A change here without a matching change to the pinned
//! catalogue in `tests/pins.rs` fails the ABI and event-schema pin tests (CONF-02).

/// The event-schema version this fold implements (K5).
pub const EVENT_SCHEMA_VERSION: &str = "1.26.0";

/// The syscall ABI version (K1).
pub const KERNEL_ABI_VERSION: &str = "1.3.0";

/// The wire-protocol version (ADR 0026). Adding fold vectors is not a protocol change.
pub const WIRE_ABI_VERSION: &str = "1.0.0";

/// EventStore SPI version: 2.6.0 is the newest minor the spec names (`deleteThrough`).
pub const EVENT_STORE_SPI_VERSION: &str = "2.6.0";
/// SnapshotStore SPI version: 1.3.0 added `listSequences`.
pub const SNAPSHOT_STORE_SPI_VERSION: &str = "1.3.0";
/// ArchiveStore SPI version: 1.1.0 added `replaceSegments` (and `deleteExecution`).
pub const ARCHIVE_STORE_SPI_VERSION: &str = "1.1.0";
/// BranchRegistry SPI version. The spec states none; reference-defined (GAP-27).
pub const BRANCH_REGISTRY_SPI_VERSION: &str = "1.0.0";
/// ExecutionDispatcher SPI version. The spec states none; reference-defined.
pub const DISPATCHER_SPI_VERSION: &str = "1.0.0";
/// ContentStore plugin-tier SPI version: 1.5.0 added `ContentAccess` and `sealsContent`.
pub const CONTENT_STORE_SPI_VERSION: &str = "1.5.0";
/// DurableStateStore plugin-tier SPI version (not stated by the spec; reference-defined).
pub const DURABLE_STATE_STORE_SPI_VERSION: &str = "1.0.0";
/// ReadModelStore plugin-tier SPI version (not stated by the spec; reference-defined).
pub const READ_MODEL_STORE_SPI_VERSION: &str = "1.0.0";

/// One entry of the syscall catalogue: the name, the ABI minor that introduced it and
/// the `kernel.features` flag that gates it (none for the base ten).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyscallSpec {
    /// Syscall name as flow code calls it.
    pub name: &'static str,
    /// KERNEL_ABI version that introduced it. Per-syscall values are not given by the
    /// spec: 1.0.0 for the base ten and 1.3.0 for Wave 2 are provisional (GAP-21).
    pub since: &'static str,
    /// The `kernel.features` flag that must be on for the syscall to be available.
    pub feature: Option<&'static str>,
}

/// The pinned catalogue of all thirteen syscalls (ABI-01, ABI-02, ABI-03, ABI-07).
/// The effective `KERNEL_SYSCALLS` list is this catalogue filtered by the enabled
/// feature flags (see [`effective_syscalls`]).
pub const SYSCALL_CATALOGUE: [SyscallSpec; 13] = [
    SyscallSpec {
        name: "execute",
        since: "1.0.0",
        feature: None,
    },
    SyscallSpec {
        name: "run",
        since: "1.0.0",
        feature: None,
    },
    SyscallSpec {
        name: "decide",
        since: "1.0.0",
        feature: None,
    },
    SyscallSpec {
        name: "parallel",
        since: "1.0.0",
        feature: None,
    },
    SyscallSpec {
        name: "suspend",
        since: "1.0.0",
        feature: None,
    },
    SyscallSpec {
        name: "sleep",
        since: "1.0.0",
        feature: None,
    },
    SyscallSpec {
        name: "sleepUntil",
        since: "1.0.0",
        feature: None,
    },
    SyscallSpec {
        name: "emit",
        since: "1.0.0",
        feature: None,
    },
    SyscallSpec {
        name: "stream",
        since: "1.0.0",
        feature: None,
    },
    SyscallSpec {
        name: "ui",
        since: "1.0.0",
        feature: None,
    },
    SyscallSpec {
        name: "continueAsNew",
        since: "1.3.0",
        feature: Some("continueAsNew"),
    },
    SyscallSpec {
        name: "receive",
        since: "1.3.0",
        feature: Some("receive"),
    },
    SyscallSpec {
        name: "select",
        since: "1.3.0",
        feature: Some("select"),
    },
];

/// `kernel.features` flags. All default to off (G2: an additive capability is opt-in).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct KernelFeatures {
    /// Enables the `continueAsNew` syscall.
    pub continue_as_new: bool,
    /// Enables the `receive` syscall.
    pub receive: bool,
    /// Enables the `select` syscall.
    pub select: bool,
    /// New starts record `flowHash` as `sha256:<hex>` instead of `fnv1a:<hex>` (FOLD-34).
    pub sha256_flow_hash: bool,
}

impl KernelFeatures {
    /// Whether the named flag is on. Unknown names are off.
    pub fn is_enabled(&self, flag: &str) -> bool {
        match flag {
            "continueAsNew" => self.continue_as_new,
            "receive" => self.receive,
            "select" => self.select,
            "sha256FlowHash" => self.sha256_flow_hash,
            _ => false,
        }
    }
}

/// The effective `KERNEL_SYSCALLS` for a feature set: exactly what the wire handshake
/// advertises (ABI-04, ABI-05, GAP-21).
pub fn effective_syscalls(features: &KernelFeatures) -> Vec<&'static str> {
    SYSCALL_CATALOGUE
        .iter()
        .filter(|s| s.feature.is_none_or(|f| features.is_enabled(f)))
        .map(|s| s.name)
        .collect()
}

/// A parsed `MAJOR.MINOR.PATCH` version. Pre-release and build tags are accepted and
/// ignored for comparison (GAP-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SemVer {
    /// Major version.
    pub major: u64,
    /// Minor version.
    pub minor: u64,
    /// Patch version.
    pub patch: u64,
}

impl SemVer {
    /// Parses `MAJOR.MINOR.PATCH[-pre][+build]`; anything else is an error naming the input.
    pub fn parse(text: &str) -> Result<SemVer, String> {
        let core = text.split(['-', '+']).next().unwrap_or("");
        let parts: Vec<&str> = core.split('.').collect();
        if parts.len() != 3 {
            return Err(format!("`{text}` is not a MAJOR.MINOR.PATCH version"));
        }
        let mut nums = [0u64; 3];
        for (slot, part) in nums.iter_mut().zip(&parts) {
            if part.is_empty()
                || !part.bytes().all(|b| b.is_ascii_digit())
                || (part.len() > 1 && part.starts_with('0'))
            {
                return Err(format!(
                    "`{text}` is not a MAJOR.MINOR.PATCH version (bad component `{part}`)"
                ));
            }
            *slot = part
                .parse()
                .map_err(|_| format!("`{text}`: component `{part}` is too large"))?;
        }
        Ok(SemVer {
            major: nums[0],
            minor: nums[1],
            patch: nums[2],
        })
    }
}

impl std::fmt::Display for SemVer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Historical (EVENT_SCHEMA_VERSION, KERNEL_ABI_VERSION) pairs the spec states. Typed
/// failures (EVENT_SCHEMA 1.17.0) shipped with KERNEL_ABI 1.1.0 unchanged (ABI-08);
/// the current pair is last.
pub const ABI_HISTORY: [(&str, &str); 2] = [
    ("1.17.0", "1.1.0"),
    (EVENT_SCHEMA_VERSION, KERNEL_ABI_VERSION),
];
