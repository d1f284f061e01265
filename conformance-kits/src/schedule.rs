//! The interleaving of a fleet's requests, recorded and replayed. It orders the calls
//! of several stdio store clients, so it lives with the client in `loom-store-client`
//! (`loom_store_client::schedule`); this module re-exports it under its old name.

pub use loom_store_client::schedule::*;
