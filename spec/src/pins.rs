//! The pinned contracts (`spec/pins/`): the syscall ABI, the event schema and the audit
//! kinds as this version of the reference froze them. They live in this crate so that
//! every crate reading them (the gates of `loom check`) carries them when it is built
//! from a published package, not only from the source tree.

/// `spec/pins/abi.json`: the kernel ABI pin.
pub const ABI: &str = include_str!("../pins/abi.json");
/// `spec/pins/event-schema.json`: the event-schema pin.
pub const EVENT_SCHEMA: &str = include_str!("../pins/event-schema.json");
/// `spec/pins/audit-kinds.json`: the audit-kind pin.
pub const AUDIT_KINDS: &str = include_str!("../pins/audit-kinds.json");
