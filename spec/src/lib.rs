//! # loom-spec: the Loom rule catalogue as data, and the checks that keep it honest
//!
//! This crate owns:
//!
//! * [`Catalogue`]: every rule of `shared/spec/RULES.md` (FOLD-01 … CONF-09) and every
//!   gap (GAP-01 … GAP-36) as typed data, embedded from `spec/rules.toml`;
//! * [`kernel_manifest`]: the machine-readable projection of the kernel's contract
//!   (`loom kernel-manifest`), built by importing `loom_kernel`'s constants;
//! * [`check_compatibility`] and [`SUPPORTED_MATRIX`]: the deployment gate behind
//!   `loom compat` (see `docs/compatibility.md`);
//! * [`scan_evidence`] and [`check_evidence`]: the traceability check (CONF-01);
//! * [`Applicability`]: which rules apply to a kernel and to a store (`spec/applicability.toml`),
//!   the denominators of every report figure;
//! * the capability registry and its self-check ([`check_capabilities`], CONF-07);
//! * the catalogue as a page for people ([`page::rules_markdown`], `docs/rules.md`).
//!
//! Key design decision: evidence is *discovered*, never declared. A rule counts as
//! evidenced only when a test function's name carries its token (`fold_09_…`) or a kit
//! case, vector or invariant cites its id as an exact string literal. The check fails both
//! ways: a binding rule with no evidence and no exemption fails it, and so does a citation
//! of an id that does not exist or an exemption that is no longer needed. Comments and
//! prose never count, so the scan cannot be satisfied by writing about a rule.
//!
//! Architecture invariant: the manifest never restates a kernel value; it only names
//! constants, so it cannot drift from the code (COMPAT-03).
#![deny(missing_docs)]

pub mod applicability;
pub mod capabilities;
pub mod catalogue;
pub mod compat;
pub mod evidence;
mod lexer;
pub mod manifest;
pub mod page;
pub mod pins;

pub use applicability::{Applicability, APPLICABILITY_KINDS};
pub use capabilities::{
    check_capabilities, check_capability_list, load_capabilities, parse_capabilities, Capability,
    CapabilityProblem, Maturity,
};
pub use catalogue::{is_id_shaped, Catalogue, Gap, Level, PlannedEvidence, Rule, RULE_GROUPS};
pub use compat::{
    check_compatibility, resolve_name, CompatEntry, CompatReport, MatrixRow, Verdict,
    SUPPORTED_MATRIX,
};
pub use evidence::{
    check_evidence, ids_in_test_name, load_exemptions, parse_exemptions, scan_evidence,
    EvidenceCheck, EvidenceIndex, EvidenceSite, Exemption, SiteKind,
};
pub use manifest::{kernel_manifest, KernelManifest, VersionConstant, VERSION_CONSTANTS};
