//! The value forms of the stdio store protocol that both of its sides spell: a typed
//! error as the protocol's error object (`{"kind", "message", facts...}`), blobs as
//! padded standard base64, envelope batches, and the content store's answers (a content
//! reference, a `putStream` outcome), whose encoders sit next to the client's decoders. The client decodes what an adapter answers with them; an
//! adapter written in Rust (`loom store-adapter`) encodes its answers with them, so the
//! two cannot drift apart.
//!
//! The SPI values themselves (envelopes, leases, timers, snapshot records...) travel in
//! the serde forms of their `loom-kernel` types, which need nothing here.

use serde_json::{json, Value};

use loom_kernel::envelope::EventEnvelope;
use loom_kernel::spi::{
    ContentRef, PutStreamAbort, PutStreamOutcome, StoreError, StoreErrorKind,
    STORE_ERROR_KIND_NAMES,
};

fn opt_u64(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// Decodes `{"kind": "...", "message": "...", facts...}` into a [`StoreError`].
pub fn decode_error(error: &Value) -> Result<StoreError, String> {
    let kind = error.get("kind").and_then(Value::as_str).ok_or("no kind")?;
    if !STORE_ERROR_KIND_NAMES.contains(&kind) {
        return Err(format!("unknown error kind {kind:?}"));
    }
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let need = |key: &str| opt_u64(error, key).ok_or(format!("{kind} error lacks {key}"));
    let kind = match kind {
        "conflict" => StoreErrorKind::Conflict {
            expected_next: need("expectedNext")?,
            actual_next: need("actualNext")?,
        },
        "fenced" => StoreErrorKind::Fenced {
            presented: opt_u64(error, "presented"),
            current: need("current")?,
        },
        "fence-conflict" => StoreErrorKind::FenceConflict {
            expected: opt_u64(error, "expected"),
            current: opt_u64(error, "current"),
        },
        "anchor-changed" => StoreErrorKind::AnchorChanged,
        "not-found" => StoreErrorKind::NotFound,
        "already-exists" => StoreErrorKind::AlreadyExists,
        "lease-lost" => StoreErrorKind::LeaseLost,
        "unsupported" => StoreErrorKind::Unsupported {
            method: error
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        },
        "invalid-argument" => StoreErrorKind::InvalidArgument,
        _ => StoreErrorKind::Backend,
    };
    Ok(StoreError::new(kind, message))
}

/// Encodes a [`StoreError`] as the protocol's error object (for adapters written in Rust).
pub fn encode_error(error: &StoreError) -> Value {
    let mut v = json!({ "kind": error.kind.name(), "message": error.message });
    match &error.kind {
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
        StoreErrorKind::FenceConflict { expected, current } => {
            v["expected"] = json!(expected);
            v["current"] = json!(current);
        }
        StoreErrorKind::Unsupported { method } => v["method"] = json!(method),
        _ => {}
    }
    v
}

/// The standard base64 alphabet (RFC 4648 §4), which every language's standard library
/// speaks; blobs travel as base64 strings because JSON has no bytes.
const BASE64_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `bytes` as padded standard base64.
pub fn base64_encode(bytes: &[u8]) -> String {
    // Bytes first, one String at the end: pushing chars one by one was the largest
    // client-side cost of the 8 MiB content cases.
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= group.len() {
                out.push(BASE64_ALPHABET[((n >> shift) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    // Every byte pushed is ASCII from the alphabet or '=', so this cannot fail.
    String::from_utf8(out).unwrap_or_default()
}

/// Decodes padded standard base64; anything else is an error naming the problem.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "base64 of length {} (not a multiple of 4)",
            bytes.len()
        ));
    }
    let value = |c: u8| -> Result<u32, String> {
        match c {
            b'A'..=b'Z' => Ok(u32::from(c - b'A')),
            b'a'..=b'z' => Ok(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Ok(u32::from(c - b'0') + 52),
            b'+' => Ok(62),
            b'/' => Ok(63),
            other => Err(format!("{:?} is not a base64 digit", char::from(other))),
        }
    };
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let groups = bytes.len() / 4;
    for (g, quad) in bytes.chunks(4).enumerate() {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && g + 1 != groups) {
            return Err("base64 padding in the wrong place".into());
        }
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * pad as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Ok(out)
}

/// A batch of envelopes as the protocol carries it, each in its strict JSON form: what
/// the client sends to `append`, `archive` and `replaceSegments`, and what a server
/// answers to `read`, `readRange` and `readArchived`.
pub fn envelopes_json(events: &[EventEnvelope]) -> Value {
    Value::Array(events.iter().map(EventEnvelope::to_value).collect())
}

/// A content reference as a server answers it: `{"digest": ..., "size": ...}`.
pub fn content_ref_json(r: &ContentRef) -> Value {
    json!({ "digest": r.digest, "size": r.size })
}

/// A `putStream` outcome as a server answers it: `{"stored": ContentRef}`, or
/// `{"aborted": {"kind": "chunk-error", "message", "bytesRead"}}`, or
/// `{"aborted": {"kind": "too-large", "limitBytes"}}`.
pub fn put_stream_outcome_json(outcome: &PutStreamOutcome) -> Value {
    match outcome {
        PutStreamOutcome::Stored(r) => json!({ "stored": content_ref_json(r) }),
        PutStreamOutcome::Aborted(PutStreamAbort::ChunkError {
            message,
            bytes_read,
        }) => {
            json!({ "aborted": { "kind": "chunk-error", "message": message, "bytesRead": bytes_read } })
        }
        PutStreamOutcome::Aborted(PutStreamAbort::TooLarge { limit_bytes }) => {
            json!({ "aborted": { "kind": "too-large", "limitBytes": limit_bytes } })
        }
    }
}

/// Decodes a content reference an adapter answered (`contentStore.put`, and inside a
/// `putStream` outcome).
pub(crate) fn content_ref(v: &Value) -> Result<ContentRef, StoreError> {
    let digest = v.get("digest").and_then(Value::as_str);
    let size = v.get("size").and_then(Value::as_u64);
    match (digest, size) {
        (Some(d), Some(size)) => Ok(ContentRef {
            digest: d.to_string(),
            size,
        }),
        _ => Err(StoreError::backend(format!(
            "malformed content reference from the adapter: {v}"
        ))),
    }
}

/// Decodes a `putStream` result: `{"stored": ContentRef}` or `{"aborted": {...}}`.
pub(crate) fn put_stream_outcome(v: &Value) -> Result<PutStreamOutcome, StoreError> {
    if let Some(r) = v.get("stored") {
        return content_ref(r).map(PutStreamOutcome::Stored);
    }
    let malformed =
        || StoreError::backend(format!("malformed putStream outcome from the adapter: {v}"));
    let aborted = v.get("aborted").ok_or_else(malformed)?;
    match aborted.get("kind").and_then(Value::as_str) {
        Some("chunk-error") => Ok(PutStreamOutcome::Aborted(PutStreamAbort::ChunkError {
            message: aborted
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            bytes_read: aborted
                .get("bytesRead")
                .and_then(Value::as_u64)
                .ok_or_else(malformed)?,
        })),
        Some("too-large") => Ok(PutStreamOutcome::Aborted(PutStreamAbort::TooLarge {
            limit_bytes: aborted
                .get("limitBytes")
                .and_then(Value::as_u64)
                .ok_or_else(malformed)?,
        })),
        _ => Err(malformed()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_tail_length() {
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"foo"), "Zm9v");
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(base64_decode(&base64_encode(&bytes)).unwrap(), bytes);
        }
        assert!(base64_decode("Zg=").is_err());
        assert!(base64_decode("Z===").is_err());
        assert!(base64_decode("Zg==Zg==").is_err());
        assert!(base64_decode("Zm9*").is_err());
    }

    #[test]
    fn content_answers_decode_as_they_were_encoded() {
        let r = ContentRef {
            digest: "sha256:ab".into(),
            size: 3,
        };
        assert_eq!(
            content_ref_json(&r).to_string(),
            r#"{"digest":"sha256:ab","size":3}"#
        );
        assert_eq!(content_ref(&content_ref_json(&r)).unwrap(), r);
        let outcomes = [
            (
                PutStreamOutcome::Stored(r.clone()),
                r#"{"stored":{"digest":"sha256:ab","size":3}}"#,
            ),
            (
                PutStreamOutcome::Aborted(PutStreamAbort::ChunkError {
                    message: "disk".into(),
                    bytes_read: 7,
                }),
                r#"{"aborted":{"bytesRead":7,"kind":"chunk-error","message":"disk"}}"#,
            ),
            (
                PutStreamOutcome::Aborted(PutStreamAbort::TooLarge { limit_bytes: 9 }),
                r#"{"aborted":{"kind":"too-large","limitBytes":9}}"#,
            ),
        ];
        for (outcome, text) in outcomes {
            let v = put_stream_outcome_json(&outcome);
            assert_eq!(v.to_string(), text);
            assert_eq!(put_stream_outcome(&v).unwrap(), outcome);
        }
    }
}
