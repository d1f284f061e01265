//! Digests: the flow-emit identity (fnv1a64) and flow hashes (`sha256:` and the
//! legacy `fnv1a:` form).

use crate::canonical::{write_string, write_value};
use serde_json::Value;
use sha2::{Digest, Sha256};

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a over bytes.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash = FNV_OFFSET_BASIS;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// 64-bit FNV-1a as 16 lowercase, zero-padded hex digits.
pub fn fnv1a64_hex(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a64(bytes))
}

/// The exact text an emit digest hashes: `<segment>|<canonical JSON of [eventType, payload]>`
/// (EMIT-02, GAP-02).
pub fn emit_digest_input(segment: u64, event_type: &str, payload: &Value) -> String {
    let mut s = segment.to_string();
    s.push('|');
    s.push('[');
    write_string(&mut s, event_type);
    s.push(',');
    write_value(&mut s, payload);
    s.push(']');
    s
}

/// The flow-emit identity `d = fnv1a64(segment | canonicalJSON([eventType, payload]))`,
/// written as 16 lowercase hex digits (EMIT-02, GAP-02).
pub fn emit_digest(segment: u64, event_type: &str, payload: &Value) -> String {
    fnv1a64_hex(emit_digest_input(segment, event_type, payload).as_bytes())
}

/// `sha256:<64 lowercase hex>` over the canonical JSON of a flow definition.
pub fn sha256_flow_hash(flow: &Value) -> String {
    let bytes = crate::canonical::canonical_json(flow);
    format!("sha256:{}", sha256_hex(&bytes))
}

/// The legacy `fnv1a:<16 hex>` flow hash over the canonical JSON of a flow definition.
pub fn fnv1a_flow_hash(flow: &Value) -> String {
    format!(
        "fnv1a:{}",
        fnv1a64_hex(&crate::canonical::canonical_json(flow))
    )
}

/// Lowercase hex sha256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Whether a recorded flow hash is well-formed: `sha256:` + 64 hex or `fnv1a:` + 16 hex
/// (FOLD-34: a recorded `fnv1a:` value stays valid forever).
pub fn is_valid_flow_hash(text: &str) -> bool {
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    };
    if let Some(rest) = text.strip_prefix("sha256:") {
        hex(rest, 64)
    } else if let Some(rest) = text.strip_prefix("fnv1a:") {
        hex(rest, 16)
    } else {
        false
    }
}
