//! `loom kernel-manifest` and `loom compat`.

use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use clap::Args;
use std::collections::BTreeMap;

/// Arguments of `loom kernel-manifest`.
#[derive(Args)]
#[command(
    after_help = "The manifest is built from the kernel's own constants, so it cannot drift from the code (COMPAT-03).\n\n\
Examples:\n  loom kernel-manifest\n  loom kernel-manifest --json > manifest.json\n\nExit status: 0 printed, 2 usage error."
)]
pub struct ManifestArgs {
    /// Machine-readable JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `loom kernel-manifest`.
pub fn manifest(args: ManifestArgs) -> u8 {
    let m = loom_spec::kernel_manifest();
    if args.json {
        println!("{}", m.to_json());
    } else {
        print!("{}", m.to_text());
    }
    EXIT_OK
}

/// Arguments of `loom compat`.
#[derive(Args)]
#[command(
    after_help = "Two versions are compatible iff they share a major version (COMPAT-04). \
Exit status: 0 all compatible, 1 some incompatible, 2 usage error (unknown name, malformed version, nothing declared).\n\n\
Examples:\n  loom compat --abi 1.3.0 --event-schema 1.20.0\n  loom compat --set EVENT_STORE_SPI_VERSION=2.1.0 --wire 1.0.0\n\n\
Names accepted by --set are the version constants `loom kernel-manifest` prints."
)]
pub struct CompatArgs {
    /// KERNEL_ABI_VERSION the deployment expects.
    #[arg(long, value_name = "V")]
    pub abi: Option<String>,
    /// EVENT_SCHEMA_VERSION the deployment expects.
    #[arg(long = "event-schema", value_name = "V")]
    pub event_schema: Option<String>,
    /// WIRE_ABI_VERSION the deployment expects.
    #[arg(long, value_name = "V")]
    pub wire: Option<String>,
    /// EVENT_STORE_SPI_VERSION of the deployment's event store.
    #[arg(long = "event-store", value_name = "V")]
    pub event_store: Option<String>,
    /// SNAPSHOT_STORE_SPI_VERSION of the deployment's snapshot store.
    #[arg(long = "snapshot-store", value_name = "V")]
    pub snapshot_store: Option<String>,
    /// Any constant by name: NAME=VERSION (repeatable).
    #[arg(long = "set", value_name = "NAME=V")]
    pub versions: Vec<String>,
    /// Print the verdicts as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `loom compat`.
pub fn compat(args: CompatArgs) -> u8 {
    let mut declared = BTreeMap::new();
    for (name, v) in [
        ("abi", &args.abi),
        ("eventSchema", &args.event_schema),
        ("wire", &args.wire),
        ("eventStore", &args.event_store),
        ("snapshotStore", &args.snapshot_store),
    ] {
        if let Some(v) = v {
            declared.insert(name.to_string(), v.clone());
        }
    }
    for pair in &args.versions {
        match pair.split_once('=') {
            Some((name, v)) => {
                declared.insert(name.trim().to_string(), v.trim().to_string());
            }
            None => {
                eprintln!("error: --set expects NAME=VERSION, got `{pair}`");
                return EXIT_USAGE;
            }
        }
    }
    let report = loom_spec::check_compatibility(&declared);
    if args.json {
        let rows: Vec<_> = report
            .entries
            .iter()
            .map(|e| serde_json::json!({"name": e.name, "declared": e.declared, "kernel": e.kernel, "verdict": format!("{:?}", e.verdict)}))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        );
    } else {
        print!("{report}");
    }
    match report.exit_code() {
        0 => EXIT_OK,
        1 => EXIT_FAILED,
        _ => EXIT_USAGE,
    }
}
