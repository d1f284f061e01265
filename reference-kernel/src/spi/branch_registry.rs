//! The BranchRegistry SPI: fork lineage (§7; SPI-01; GAP-19).
//!
//! The spec names the seam and its version constant but no methods. Until it is
//! specified this is create/get/list for fork lineage (GAP-19); every method here is
//! reference-defined.

use std::future::Future;

use serde::{Deserialize, Serialize};

use super::error::StoreError;

/// One fork: `execution_id` was forked from `parent_execution_id` at
/// `forked_at_sequence` (the last parent event the fork shares). Reference-defined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BranchRecord {
    /// The forked (child) execution.
    pub execution_id: String,
    /// The execution it was forked from.
    pub parent_execution_id: String,
    /// The last sequence of the parent that the child's log copies.
    pub forked_at_sequence: u64,
    /// The ancestry, root first, ending with the parent (the envelope's `forkChain`).
    /// May be empty when the caller does not track it.
    pub chain: Vec<String>,
}

/// Fork lineage (reference-defined, GAP-19).
pub trait BranchRegistry: Send + Sync {
    /// The SPI version this registry implements (`BRANCH_REGISTRY_SPI_VERSION`).
    fn spi_version(&self) -> String;

    /// Records a fork. Refused with `AlreadyExists` when the child is already
    /// registered (a child has exactly one parent), and with `InvalidArgument` when an
    /// id is empty or too long, the child is its own parent or appears in `chain`, the
    /// chain is longer than [`BRANCH_CHAIN_LEN_MAX`](super::BRANCH_CHAIN_LEN_MAX), or a
    /// non-empty chain does not end with the parent.
    fn register(&self, record: BranchRecord)
        -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The record of a forked execution, or `None` for a root or unknown id.
    fn get(
        &self,
        execution_id: &str,
    ) -> impl Future<Output = Result<Option<BranchRecord>, StoreError>> + Send;

    /// The direct children of `parent_execution_id`, ascending by execution id.
    fn children(
        &self,
        parent_execution_id: &str,
    ) -> impl Future<Output = Result<Vec<BranchRecord>, StoreError>> + Send;
}
