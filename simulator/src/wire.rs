//! The store host's request and response shapes: `{"op": …, "from": …, …}` answered by
//! `{"ok": …}` or `{"err": {"kind": …}}`, error kinds by their SPI wire names.

use loom_kernel::spi::{StoreError, StoreErrorKind};
use serde_json::{json, Value};

/// The store server's TCP port. The names of the store host live here, with the
/// protocol, so that the hosts' client and the server both depend on the protocol and
/// neither on the other.
pub const STORE_PORT: u16 = 7000;
/// The store server's host name.
pub const STORE_HOST: &str = "store";
/// The dispatcher target every worker claims for.
pub const TARGET: &str = "sim";

/// Longest request or response line, in bytes; a longer one is refused.
pub const LINE_BYTES_MAX: usize = 4 << 20;

pub(crate) fn err_to_json(e: &StoreError) -> Value {
    let mut v = json!({ "kind": e.kind.name(), "message": e.message });
    match e.kind {
        StoreErrorKind::Conflict {
            expected_next,
            actual_next,
        } => {
            v["expectedNext"] = json!(expected_next);
            v["actualNext"] = json!(actual_next);
        }
        StoreErrorKind::Fenced { presented, current } => {
            v["presented"] = json!(presented);
            v["current"] = json!(current);
        }
        _ => {}
    }
    v
}

pub(crate) fn err_from_json(v: &Value) -> StoreError {
    let message = v["message"].as_str().unwrap_or("").to_owned();
    let kind = match v["kind"].as_str().unwrap_or("backend") {
        "conflict" => StoreErrorKind::Conflict {
            expected_next: v["expectedNext"].as_u64().unwrap_or(0),
            actual_next: v["actualNext"].as_u64().unwrap_or(0),
        },
        "fenced" => StoreErrorKind::Fenced {
            presented: v["presented"].as_u64(),
            current: v["current"].as_u64().unwrap_or(0),
        },
        "anchor-changed" => StoreErrorKind::AnchorChanged,
        "not-found" => StoreErrorKind::NotFound,
        "already-exists" => StoreErrorKind::AlreadyExists,
        "lease-lost" => StoreErrorKind::LeaseLost,
        "invalid-argument" => StoreErrorKind::InvalidArgument,
        _ => StoreErrorKind::Backend,
    };
    StoreError::new(kind, message)
}

pub(crate) fn backend(message: impl Into<String>) -> StoreError {
    StoreError::new(StoreErrorKind::Backend, message)
}

pub(crate) fn field<T: serde::de::DeserializeOwned>(
    req: &Value,
    name: &str,
) -> Result<T, StoreError> {
    serde_json::from_value(req.get(name).cloned().unwrap_or(Value::Null))
        .map_err(|e| StoreError::new(StoreErrorKind::InvalidArgument, format!("{name}: {e}")))
}

pub(crate) fn str_field(req: &Value, name: &str) -> Result<String, StoreError> {
    field::<String>(req, name)
}
