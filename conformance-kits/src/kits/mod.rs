//! The kits: one module per SPI, each a case table ([`CASES`](event_store::CASES)), the
//! case functions, and a [`Kit`](crate::Kit) implementation the runner drives. The
//! last three (content, durable state, read models) are the plugin tier (SPI-20), whose
//! contracts are reference-defined.

pub mod archive_store;
pub mod branch_registry;
pub mod concurrency;
pub mod concurrency_campaign;
pub mod content_store;
pub mod dispatcher;
pub mod durability;
pub mod durable_state_store;
pub mod event_store;
pub mod lifecycle;
pub mod read_model_store;
pub mod snapshot_store;
pub mod timer_store;

/// Every kit's name, in the order `loom conform` runs them.
pub const KIT_NAMES: &[&str] = &[
    "event-store",
    "snapshot-store",
    "archive-store",
    "lifecycle",
    "branch-registry",
    "dispatcher",
    "timer-store",
    "content-store",
    "durable-state-store",
    "read-model-store",
    "concurrency",
    "durability",
];
