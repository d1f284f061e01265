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

/// What a kernel's `hello` says about its syscall ABI (ABI-05), judged against this
/// harness's manifest (the kernel's `KERNEL_ABI_VERSION` and `SYSCALL_CATALOGUE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelloAbi {
    /// Both fields are there and agree with the manifest.
    Consistent {
        /// The advertised `kernelAbiVersion`.
        version: String,
        /// The advertised syscalls, in the hello's order.
        syscalls: Vec<String>,
    },
    /// Neither `kernelAbiVersion` nor `syscalls` is there.
    Absent,
    /// One is missing, malformed, or disagrees with the manifest; the text says which.
    Mismatch(String),
}

/// Checks the `kernelAbiVersion` and `syscalls` fields of a kernel's `hello` (ABI-05):
/// both or neither; the version is `MAJOR.MINOR.PATCH` with the manifest's major; the
/// list holds distinct names; a syscall the manifest knows is not advertised below the
/// version that introduced it; every syscall without a feature flag that the advertised
/// version has is there (a flag-gated one may be off, ABI-06); a name the manifest does
/// not know is accepted only from a kernel of a newer minor (additive, ABI-07).
pub fn check_hello_abi(hello: &Value) -> HelloAbi {
    use loom_kernel::versions::{SemVer, KERNEL_ABI_VERSION, SYSCALL_CATALOGUE};
    let (version, syscalls) = (hello.get("kernelAbiVersion"), hello.get("syscalls"));
    let (version, syscalls) = match (version, syscalls) {
        (None, None) => return HelloAbi::Absent,
        (Some(_), None) => {
            return HelloAbi::Mismatch(
                "the hello advertises kernelAbiVersion but no syscalls list next to it".into(),
            )
        }
        (None, Some(_)) => {
            return HelloAbi::Mismatch(
                "the hello advertises a syscalls list but no kernelAbiVersion next to it".into(),
            )
        }
        (Some(v), Some(s)) => (v, s),
    };
    let Some(text) = version.as_str() else {
        return HelloAbi::Mismatch(format!("kernelAbiVersion is {version}, not a string"));
    };
    let theirs = match SemVer::parse(text) {
        Ok(v) => v,
        Err(e) => return HelloAbi::Mismatch(format!("kernelAbiVersion: {e}")),
    };
    let ours = match SemVer::parse(KERNEL_ABI_VERSION) {
        Ok(v) => v,
        Err(e) => return HelloAbi::Mismatch(format!("the manifest's KERNEL_ABI_VERSION: {e}")),
    };
    if theirs.major != ours.major {
        return HelloAbi::Mismatch(format!(
            "kernelAbiVersion {text} has another major than this harness's manifest (KERNEL_ABI_VERSION {KERNEL_ABI_VERSION}); a different major is another ABI"
        ));
    }
    let Some(list) = syscalls.as_array() else {
        return HelloAbi::Mismatch(format!(
            "syscalls is {}, not an array",
            quote(&syscalls.to_string())
        ));
    };
    let mut names: Vec<String> = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let Some(name) = item.as_str() else {
            return HelloAbi::Mismatch(format!("syscalls[{i}] is {item}, not a string"));
        };
        if names.iter().any(|n| n == name) {
            return HelloAbi::Mismatch(format!("syscalls lists `{name}` twice"));
        }
        names.push(name.to_owned());
    }
    for name in &names {
        match SYSCALL_CATALOGUE.iter().find(|s| s.name == name) {
            Some(spec) => {
                let since = SemVer::parse(spec.since).unwrap_or(ours);
                if since > theirs {
                    return HelloAbi::Mismatch(format!(
                        "`{name}` came with KERNEL_ABI {} but the hello advertises kernelAbiVersion {text}",
                        spec.since
                    ));
                }
            }
            None if theirs <= ours => {
                return HelloAbi::Mismatch(format!(
                    "`{name}` is not a syscall of KERNEL_ABI {text} (the manifest, KERNEL_ABI_VERSION {KERNEL_ABI_VERSION}, lists {})",
                    SYSCALL_CATALOGUE.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                ));
            }
            None => {}
        }
    }
    let missing: Vec<&str> = SYSCALL_CATALOGUE
        .iter()
        .filter(|s| s.feature.is_none())
        .filter(|s| SemVer::parse(s.since).is_ok_and(|since| since <= theirs))
        .filter(|s| !names.iter().any(|n| n == s.name))
        .map(|s| s.name)
        .collect();
    if !missing.is_empty() {
        return HelloAbi::Mismatch(format!(
            "kernelAbiVersion {text} always has {} (no feature flag gates them), but the syscalls list lacks them",
            missing.join(", ")
        ));
    }
    HelloAbi::Consistent {
        version: text.to_owned(),
        syscalls: names,
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
