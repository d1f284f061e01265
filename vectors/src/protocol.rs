//! The stdio kernel protocol (DESIGN.md §5; `docs/protocols/kernel.md`).
//!
//! JSON lines over the adapter's stdin/stdout: one request per line
//! `{"id": <integer>, "method": <name>, "params": <object>}`, one answer per request,
//! carrying the same `id` and exactly one of
//!
//! - `"result": <object>`: the method's answer (an ingress or emit refusal is a result:
//!   it is the kernel's answer, not a protocol failure);
//! - `"error": {"kind", "message"}`: a typed error (`bad-request`, `internal`);
//! - `"unsupported": {"message"}`: the adapter does not implement the method.
//!
//! `hello` comes first; its result names the implementation and the vector kinds it
//! claims. This module holds the server loop; [`crate::client`] is the client.

use crate::limits::REQUEST_LINE_BYTES_MAX;
use crate::reference::ReferenceKernel;
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};

/// The protocol version `hello` exchanges.
pub const PROTOCOL_VERSION: u32 = 1;

/// Every method of the protocol, in documentation order.
pub const METHODS: [&str; 8] = [
    "hello",
    "fold",
    "foldFrom",
    "normalizeSnapshot",
    "digest",
    "ingress",
    "validateEmit",
    "runScenario",
];

/// One answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The method's result.
    Result(Value),
    /// A typed error: `kind` is `bad-request` or `internal`.
    Error {
        /// Error kind.
        kind: String,
        /// Explanation.
        message: String,
    },
    /// The method is not implemented.
    Unsupported(String),
}

impl Answer {
    /// A `bad-request` error.
    pub fn bad_request(message: impl Into<String>) -> Answer {
        Answer::Error {
            kind: "bad-request".into(),
            message: message.into(),
        }
    }

    /// The answer line's JSON for request `id`.
    pub fn to_line(&self, id: &Value) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), id.clone());
        match self {
            Answer::Result(v) => {
                m.insert("result".into(), v.clone());
            }
            Answer::Error { kind, message } => {
                m.insert("error".into(), json!({"kind": kind, "message": message}));
            }
            Answer::Unsupported(message) => {
                m.insert("unsupported".into(), json!({ "message": message }));
            }
        }
        Value::Object(m)
    }
}

/// Anything that answers protocol methods.
pub trait Handler {
    /// Answers one method call.
    fn handle(&self, method: &str, params: &Value) -> Answer;
}

impl Handler for ReferenceKernel {
    fn handle(&self, method: &str, params: &Value) -> Answer {
        ReferenceKernel::handle(self, method, params)
    }
}

/// Serves `handler` over JSON lines until `input` ends. A line that is not a request
/// gets an `error` answer (with `id: null` when no id could be read); the loop never
/// panics on input.
pub fn serve(
    handler: &dyn Handler,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut input = input;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = std::io::Read::take(&mut input, REQUEST_LINE_BYTES_MAX as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        if line.len() > REQUEST_LINE_BYTES_MAX {
            let a =
                Answer::bad_request(format!("request line over {REQUEST_LINE_BYTES_MAX} bytes"));
            write_line(&mut output, &a.to_line(&Value::Null))?;
            // Skip the rest of the oversized line without holding it.
            if line.last() != Some(&b'\n') {
                loop {
                    let buf = input.fill_buf()?;
                    if buf.is_empty() {
                        break;
                    }
                    match buf.iter().position(|b| *b == b'\n') {
                        Some(i) => {
                            input.consume(i + 1);
                            break;
                        }
                        None => {
                            let n = buf.len();
                            input.consume(n);
                        }
                    }
                }
            }
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let answer_line = match serde_json::from_str::<Value>(&text) {
            Err(e) => Answer::bad_request(format!("not JSON: {e}")).to_line(&Value::Null),
            Ok(request) => {
                let id = request.get("id").cloned().unwrap_or(Value::Null);
                let answer = match (request.get("method").and_then(Value::as_str), &id) {
                    (_, Value::Null) => Answer::bad_request("a request needs an `id`"),
                    (None, _) => Answer::bad_request("a request needs a string `method`"),
                    (Some(method), _) => {
                        let empty = Value::Object(Map::new());
                        let params = request.get("params").unwrap_or(&empty);
                        handler.handle(method, params)
                    }
                };
                answer.to_line(&id)
            }
        };
        write_line(&mut output, &answer_line)?;
    }
}

fn write_line(output: &mut impl Write, value: &Value) -> std::io::Result<()> {
    let mut text = serde_json::to_string(value).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    output.write_all(text.as_bytes())?;
    output.flush()
}

/// Serves the reference kernel over the given streams (`loom kernel-adapter`).
pub fn serve_reference_kernel(input: impl BufRead, output: impl Write) -> std::io::Result<()> {
    serve(&ReferenceKernel::default(), input, output)
}
