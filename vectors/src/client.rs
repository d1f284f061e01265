//! The client side of the stdio kernel protocol: [`KernelProcess`] runs a foreign
//! kernel's adapter and calls it.
//!
//! The process itself (its own process group, the handshake and call time limits,
//! restarts up to a cap, per-process stderr, blame for stray lines, the shutdown) is
//! `loom-process`'s [`Adapter`], shared with the store protocol's client. This module
//! owns what the answers mean: `result`, a typed `error` or `unsupported`, and the
//! protocol major of `hello`. Nothing is trusted: a fault is a [`CallError`] naming what
//! went wrong with the adapter's own stderr lines, never a hang or a silent pass.

use crate::limits::{
    ADAPTER_RESTARTS_MAX, CALL_TIMEOUT_MS_DEFAULT, HELLO_TIMEOUT_MS, QUOTE_CHARS_MAX,
    RESPONSE_LINE_BYTES_MAX,
};
use crate::runner::{CallError, KernelClient};
use loom_process::{Adapter, AdapterConfig, Blame, FaultKind, ShutdownReport};
use serde_json::{json, Value};
use std::time::Duration;

/// What the runner calls the program in messages.
pub const ROLE: &str = "kernel adapter";

/// How to run an adapter.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelProcessConfig {
    /// The command line, run through `sh -c` (so quoting works as in a shell).
    pub command: String,
    /// Per-call timeout in milliseconds.
    pub call_timeout_ms: u64,
    /// Time limit for starting and answering `hello`, in milliseconds.
    pub hello_timeout_ms: u64,
}

impl KernelProcessConfig {
    /// A config with the default time limits.
    pub fn new(command: impl Into<String>) -> KernelProcessConfig {
        KernelProcessConfig {
            command: command.into(),
            call_timeout_ms: CALL_TIMEOUT_MS_DEFAULT,
            hello_timeout_ms: HELLO_TIMEOUT_MS,
        }
    }

    fn adapter_config(&self) -> AdapterConfig {
        let mut c = AdapterConfig::new(
            self.command.trim(),
            ROLE,
            json!({"protocolVersion": crate::protocol::PROTOCOL_VERSION}),
        );
        c.call_timeout = Duration::from_millis(self.call_timeout_ms);
        c.hello_timeout = Duration::from_millis(self.hello_timeout_ms);
        c.restarts_max = ADAPTER_RESTARTS_MAX;
        c.line_bytes_max = RESPONSE_LINE_BYTES_MAX;
        c
    }
}

/// Checks a kernel adapter's `hello`: an object whose `protocolVersion` has this
/// client's major (an integer, or a string such as `"1.2"`).
pub fn check_hello(hello: &Value) -> Result<(), String> {
    let ours = crate::protocol::PROTOCOL_VERSION;
    if !hello.is_object() {
        return Err(format!(
            "the kernel adapter's hello result is not an object: {hello}"
        ));
    }
    let theirs = hello.get("protocolVersion");
    let major = match theirs {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.split('.').next().and_then(|m| m.parse::<u64>().ok()),
        _ => None,
    };
    match major {
        Some(m) if m == u64::from(ours) => Ok(()),
        _ => Err(format!(
            "the kernel adapter speaks protocol {}, this harness {ours} (the major must match)",
            theirs
                .map(Value::to_string)
                .unwrap_or_else(|| "<none>".into())
        )),
    }
}

/// A foreign kernel behind the stdio protocol.
pub struct KernelProcess {
    adapter: Adapter,
    tag: String,
}

fn quote(text: &str) -> String {
    let mut s: String = text.chars().take(QUOTE_CHARS_MAX).collect();
    if text.chars().count() > QUOTE_CHARS_MAX {
        s.push('…');
    }
    s
}

/// A process fault as a call error: a hang is a timeout, everything else a breakage.
fn call_error(fault: loom_process::Fault) -> CallError {
    if fault.kind == FaultKind::Timeout {
        CallError::Timeout(fault.message)
    } else {
        CallError::Broken(fault.message)
    }
}

impl KernelProcess {
    /// Starts the adapter and exchanges `hello`. A failed start or handshake is the
    /// runner's fault (kind `spawn` or `handshake`), naming the cause and the adapter's
    /// stderr; its process group is already ended.
    pub fn start(config: KernelProcessConfig) -> Result<KernelProcess, loom_process::Fault> {
        let adapter = Adapter::start(config.adapter_config(), check_hello)?;
        Ok(KernelProcess {
            adapter,
            tag: String::new(),
        })
    }

    /// The `hello` result of the current (or last) adapter process.
    pub fn hello_result(&self) -> Option<&Value> {
        self.adapter.hello()
    }

    /// How many times the adapter was restarted after a failure.
    pub fn restarts(&self) -> u32 {
        self.adapter.restarts()
    }

    /// The process group of the running adapter process, if one runs.
    pub fn process_group(&self) -> Option<i32> {
        self.adapter.process_group()
    }

    fn interpret(&mut self, method: &str, answer: Value) -> Result<Value, CallError> {
        if let Some(r) = answer.get("result") {
            return Ok(r.clone());
        }
        if let Some(u) = answer.get("unsupported") {
            let m = u
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            return Err(CallError::Unsupported(m));
        }
        if let Some(e) = answer.get("error") {
            let kind = e
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let message = e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if kind == "unsupported" {
                return Err(CallError::Unsupported(message));
            }
            return Err(CallError::Typed { kind, message });
        }
        Err(CallError::Broken(format!(
            "`{method}`: the answer has none of result, error, unsupported: {}",
            quote(&answer.to_string())
        )))
    }
}

impl KernelClient for KernelProcess {
    fn hello(&mut self) -> Result<Value, CallError> {
        self.adapter
            .hello()
            .cloned()
            .ok_or_else(|| CallError::Broken("no hello".into()))
    }

    fn call(&mut self, method: &str, params: &Value) -> Result<Value, CallError> {
        if method == "hello" {
            return self.hello();
        }
        let tag = self.tag.clone();
        let answer = self
            .adapter
            .call(&tag, method, params)
            .map_err(call_error)?;
        self.interpret(method, answer)
    }

    fn call_raw(&mut self, method: &str, params_text: &str) -> Result<Value, CallError> {
        let tag = self.tag.clone();
        let answer = self
            .adapter
            .call_with_params_text(&tag, method, params_text)
            .map_err(call_error)?;
        self.interpret(method, answer)
    }

    fn begin_case(&mut self, tag: &str) {
        self.tag = tag.to_string();
    }

    fn take_blames(&mut self) -> Vec<Blame> {
        self.adapter.take_blames()
    }

    fn shutdown(&mut self) -> ShutdownReport {
        self.adapter.shutdown()
    }
}
