//! The gates part: fitness functions over the reference's own data (the ABI and
//! event-schema pins, the manifest, the compat deployment gate, the FOLD-13 audit-kind
//! pin). Each is a result against the reference.

use loom_kernel::canonical_string;
use loom_report::{CaseResult, Failure};
use serde_json::Value;

/// The area gate results are written under.
pub const AREA: &str = "gates";

const PINNED_ABI: &str = loom_spec::pins::ABI;
const PINNED_EVENT_SCHEMA: &str = loom_spec::pins::EVENT_SCHEMA;

fn pin_result(
    case: &str,
    rules: &[&str],
    pinned_text: &str,
    actual: Value,
    fix: &str,
) -> CaseResult {
    let pinned: Value = match serde_json::from_str(pinned_text) {
        Ok(v) => v,
        Err(e) => {
            return CaseResult::error(
                "gates",
                "pins",
                case,
                rules.iter().copied(),
                format!("pin file is not JSON: {e}"),
            )
        }
    };
    if canonical_string(&pinned) == canonical_string(&actual) {
        CaseResult::pass("gates", "pins", case, rules.iter().copied())
    } else {
        CaseResult::fail(
            "gates",
            "pins",
            case,
            rules.iter().copied(),
            format!("undocumented drift: {fix}"),
            Failure::values(pinned, actual),
        )
    }
}

/// The fitness gates: pins, the manifest, the compat gate and the audit-kind pin.
pub fn run() -> Vec<CaseResult> {
    use loom_kernel::versions::*;
    let syscalls: Vec<Value> = SYSCALL_CATALOGUE
        .iter()
        .map(|s| serde_json::json!({"name": s.name, "since": s.since, "feature": s.feature}))
        .collect();
    let mut out = vec![
        pin_result(
            "abi-pin",
            &["CONF-02", "ABI-01", "ABI-07"],
            PINNED_ABI,
            serde_json::json!({"kernelAbiVersion": KERNEL_ABI_VERSION, "syscalls": syscalls}),
            "the syscall catalogue or KERNEL_ABI_VERSION changed; bump the version and update spec/pins/abi.json together",
        ),
        pin_result(
            "event-schema-pin",
            &["CONF-02", "COMPAT-02", "ABI-11"],
            PINNED_EVENT_SCHEMA,
            serde_json::json!({"eventSchemaVersion": EVENT_SCHEMA_VERSION, "knownEventTypes": loom_kernel::known_event_types()}),
            "knownEventTypes() or EVENT_SCHEMA_VERSION changed; change both together and update spec/pins/event-schema.json",
        ),
    ];
    // The manifest is built from the constants (COMPAT-03).
    let m = loom_spec::kernel_manifest();
    let mv = serde_json::to_value(&m).unwrap_or(Value::Null);
    let ok = mv["eventSchemaVersion"] == EVENT_SCHEMA_VERSION
        && mv["kernelAbiVersion"] == KERNEL_ABI_VERSION
        && mv["wireAbiVersion"] == WIRE_ABI_VERSION;
    out.push(if ok {
        CaseResult::pass(
            "gates",
            "manifest",
            "manifest-from-constants",
            ["COMPAT-03"],
        )
    } else {
        CaseResult::fail(
            "gates",
            "manifest",
            "manifest-from-constants",
            ["COMPAT-03"],
            "the manifest disagrees with the kernel constants",
            Failure::values(
                serde_json::json!(EVENT_SCHEMA_VERSION),
                mv["eventSchemaVersion"].clone(),
            ),
        )
    });
    // The deployment gate: the kernel's own versions pass; a next major fails; garbage is a usage error.
    let own: std::collections::BTreeMap<String, String> = [
        ("abi", KERNEL_ABI_VERSION),
        ("eventSchema", EVENT_SCHEMA_VERSION),
        ("wire", WIRE_ABI_VERSION),
        ("eventStore", EVENT_STORE_SPI_VERSION),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let next_major: std::collections::BTreeMap<String, String> =
        [("abi".to_string(), "2.0.0".to_string())].into();
    let garbage: std::collections::BTreeMap<String, String> =
        [("abi".to_string(), "one.two".to_string())].into();
    let codes = (
        loom_spec::check_compatibility(&own).exit_code(),
        loom_spec::check_compatibility(&next_major).exit_code(),
        loom_spec::check_compatibility(&garbage).exit_code(),
    );
    out.push(if codes == (0, 1, 2) {
        CaseResult::pass(
            "gates",
            "compat",
            "compat-gate-exit-codes",
            ["COMPAT-04", "COMPAT-05"],
        )
    } else {
        CaseResult::fail(
            "gates",
            "compat",
            "compat-gate-exit-codes",
            ["COMPAT-04", "COMPAT-05"],
            "exit codes for (own, next major, malformed) must be (0, 1, 2)",
            Failure::values(
                serde_json::json!([0, 1, 2]),
                serde_json::json!([codes.0, codes.1, codes.2]),
            ),
        )
    });
    out.push(audit_kinds());
    out
}

const PINNED_AUDIT_KINDS: &str = loom_spec::pins::AUDIT_KINDS;

/// The id of the FOLD-13 gate (an expected failure while GAP-01 is open; see
/// [`crate::expected`]).
pub const AUDIT_KINDS_CASE: &str = "fold-13-audit-kinds";

/// FOLD-13: every audit-fact kind of 1.13.0/1.14.0 is a known type of the current fold.
/// The pin lists them; while the spec leaves them unnamed the lists are empty and the
/// gate fails, because nothing shows the rule holds.
pub fn audit_kinds() -> CaseResult {
    let pinned: Value = match serde_json::from_str(PINNED_AUDIT_KINDS) {
        Ok(v) => v,
        Err(e) => {
            return CaseResult::error(
                "gates",
                "pins",
                AUDIT_KINDS_CASE,
                ["FOLD-13"],
                format!("spec/pins/audit-kinds.json is not JSON: {e}"),
            )
        }
    };
    let names: Vec<&str> = ["1.13.0", "1.14.0"]
        .iter()
        .flat_map(|v| pinned[*v].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    let unknown: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !loom_kernel::fold::is_known_event_type(n))
        .collect();
    if names.is_empty() {
        CaseResult::fail(
            "gates",
            "pins",
            AUDIT_KINDS_CASE,
            ["FOLD-13"],
            "spec/pins/audit-kinds.json names no audit-fact kind: the spec leaves the 1.13.0/1.14.0 kinds unnamed (GAP-01), so nothing shows the fold still knows them",
            Failure::values(serde_json::json!(["<the 1.13.0/1.14.0 audit-fact kinds>"]), serde_json::json!([])),
        )
    } else if unknown.is_empty() {
        CaseResult::pass("gates", "pins", AUDIT_KINDS_CASE, ["FOLD-13"])
    } else {
        CaseResult::fail(
            "gates",
            "pins",
            AUDIT_KINDS_CASE,
            ["FOLD-13"],
            format!(
                "the fold does not know these pinned audit-fact kinds: {}",
                unknown.join(", ")
            ),
            Failure::values(serde_json::json!(names), serde_json::json!(unknown)),
        )
    }
}
