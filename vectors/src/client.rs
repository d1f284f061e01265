//! The client side of the stdio kernel protocol: [`KernelProcess`] runs a foreign
//! kernel's adapter as one long-lived child process and calls it.
//!
//! Nothing is trusted: an answer that is not JSON, carries the wrong `id`, has neither
//! `result`, `error` nor `unsupported`, or does not arrive within the per-call timeout
//! is a [`CallError`] naming what went wrong (with the adapter's last stderr lines),
//! never a hang or a silent pass. After a crash, a timeout or a protocol violation the
//! child is killed and a fresh one is started (and greeted with `hello`) on the next
//! call, up to [`ADAPTER_RESTARTS_MAX`] times per client.
//!
//! Plain threads: one reader thread per stream feeds a channel read with
//! `recv_timeout`, so no async runtime is needed.

use crate::limits::{
    ADAPTER_RESTARTS_MAX, CALL_TIMEOUT_MS_DEFAULT, HELLO_TIMEOUT_MS, QUOTE_CHARS_MAX,
    RESPONSE_LINE_BYTES_MAX, STDERR_LINES_KEPT_MAX,
};
use crate::runner::{CallError, KernelClient};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How to run an adapter.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelProcessConfig {
    /// The command line, run through `sh -c` (so quoting works as in a shell).
    pub command: String,
    /// Per-call timeout in milliseconds.
    pub call_timeout_ms: u64,
}

impl KernelProcessConfig {
    /// A config with the default timeout.
    pub fn new(command: impl Into<String>) -> KernelProcessConfig {
        KernelProcessConfig {
            command: command.into(),
            call_timeout_ms: CALL_TIMEOUT_MS_DEFAULT,
        }
    }
}

enum Line {
    Text(String),
    TooLong(usize),
    Eof,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Line>,
}

/// A foreign kernel behind the stdio protocol.
pub struct KernelProcess {
    config: KernelProcessConfig,
    running: Option<Running>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    next_id: u64,
    restarts: u32,
    starts: u32,
    hello: Option<Value>,
}

fn quote(text: &str) -> String {
    let mut s: String = text.chars().take(QUOTE_CHARS_MAX).collect();
    if text.chars().count() > QUOTE_CHARS_MAX {
        s.push('…');
    }
    s
}

impl KernelProcess {
    /// Starts the adapter and exchanges `hello`.
    pub fn start(config: KernelProcessConfig) -> Result<KernelProcess, CallError> {
        let mut p = KernelProcess {
            config,
            running: None,
            stderr: Arc::new(Mutex::new(VecDeque::new())),
            next_id: 0,
            restarts: 0,
            starts: 0,
            hello: None,
        };
        p.ensure_started()?;
        Ok(p)
    }

    /// The `hello` result of the current (or last) adapter process.
    pub fn hello_result(&self) -> Option<&Value> {
        self.hello.as_ref()
    }

    /// How many times the adapter was restarted after a failure.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    fn stderr_tail(&self) -> String {
        let lines = self
            .stderr
            .lock()
            .map(|l| l.iter().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        if lines.is_empty() {
            String::new()
        } else {
            format!("; adapter stderr (last lines): {}", lines.join(" | "))
        }
    }

    fn spawn(&mut self) -> Result<(), CallError> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.config.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                CallError::Broken(format!("cannot start `{}`: {e}", self.config.command))
            })?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| CallError::Broken("no stdin pipe".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| CallError::Broken("no stdout pipe".into()))?;
        if let Some(stderr) = child.stderr.take() {
            let sink = Arc::clone(&self.stderr);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    if let Ok(mut l) = sink.lock() {
                        l.push_back(quote(&line));
                        while l.len() > STDERR_LINES_KEPT_MAX {
                            l.pop_front();
                        }
                    }
                }
            });
        }
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                let read = (&mut reader)
                    .take(RESPONSE_LINE_BYTES_MAX as u64 + 1)
                    .read_until(b'\n', &mut buf);
                let msg = match read {
                    Ok(0) | Err(_) => Line::Eof,
                    Ok(_) if buf.len() > RESPONSE_LINE_BYTES_MAX => Line::TooLong(buf.len()),
                    Ok(_) => Line::Text(String::from_utf8_lossy(&buf).into_owned()),
                };
                let stop = matches!(msg, Line::Eof | Line::TooLong(_));
                if tx.send(msg).is_err() || stop {
                    break;
                }
            }
        });
        self.running = Some(Running {
            child,
            stdin,
            lines: rx,
        });
        self.starts += 1;
        Ok(())
    }

    fn kill(&mut self) {
        if let Some(mut r) = self.running.take() {
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }

    fn ensure_started(&mut self) -> Result<(), CallError> {
        if self.running.is_some() {
            return Ok(());
        }
        if self.starts > 0 {
            if self.restarts >= ADAPTER_RESTARTS_MAX {
                return Err(CallError::Broken(format!(
                    "the adapter failed {ADAPTER_RESTARTS_MAX} times; not restarting it again"
                )));
            }
            self.restarts += 1;
        }
        self.spawn()?;
        let hello = self.exchange(
            "hello",
            &json!({"protocolVersion": crate::protocol::PROTOCOL_VERSION}),
            HELLO_TIMEOUT_MS,
        );
        match hello {
            Ok(v) => {
                self.hello = Some(v);
                Ok(())
            }
            Err(e) => {
                self.kill();
                Err(match e {
                    CallError::Timeout(m) => CallError::Timeout(format!("hello: {m}")),
                    CallError::Broken(m) => CallError::Broken(format!("hello: {m}")),
                    other => CallError::Broken(format!("hello must succeed: {other}")),
                })
            }
        }
    }

    /// One request/answer exchange with the running child. Any protocol violation kills
    /// the child (it is restarted on the next call).
    fn exchange(
        &mut self,
        method: &str,
        params: &Value,
        timeout_ms: u64,
    ) -> Result<Value, CallError> {
        let params_text = serde_json::to_string(params).unwrap_or_default();
        self.exchange_text(method, &params_text, timeout_ms)
    }

    /// [`KernelProcess::exchange`] with `params` as wire text, sent byte for byte.
    fn exchange_text(
        &mut self,
        method: &str,
        params_text: &str,
        timeout_ms: u64,
    ) -> Result<Value, CallError> {
        if params_text.contains(['\n', '\r']) {
            return Err(CallError::Broken(format!(
                "`{method}`: the params text spans lines; the protocol sends one request per line"
            )));
        }
        self.next_id += 1;
        let id = self.next_id;
        let method_text = serde_json::to_string(method).unwrap_or_default();
        let mut text = format!("{{\"id\":{id},\"method\":{method_text},\"params\":{params_text}}}");
        text.push('\n');
        let Some(running) = self.running.as_mut() else {
            return Err(CallError::Broken("the adapter is not running".into()));
        };
        if let Err(e) = running
            .stdin
            .write_all(text.as_bytes())
            .and_then(|_| running.stdin.flush())
        {
            let status = running.child.try_wait().ok().flatten();
            let msg = format!(
                "writing the `{method}` request failed ({e}); exit status {status:?}{}",
                self.stderr_tail()
            );
            self.kill();
            return Err(CallError::Broken(msg));
        }
        let outcome = loop {
            match running
                .lines
                .recv_timeout(Duration::from_millis(timeout_ms))
            {
                Ok(Line::Text(line)) if line.trim().is_empty() => continue,
                Ok(Line::Text(line)) => break Ok(line),
                Ok(Line::TooLong(n)) => {
                    break Err(CallError::Broken(format!(
                        "`{method}`: the answer line is over {RESPONSE_LINE_BYTES_MAX} bytes ({n})"
                    )))
                }
                Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(Duration::from_millis(20));
                    let status = running.child.try_wait().ok().flatten();
                    break Err(CallError::Broken(format!(
                        "the adapter exited during `{method}` (exit status {})",
                        status
                            .map(|s| s.to_string())
                            .unwrap_or_else(|| "unknown".into())
                    )));
                }
                Err(RecvTimeoutError::Timeout) => {
                    break Err(CallError::Timeout(format!(
                    "`{method}` got no answer within {timeout_ms} ms; the adapter was restarted"
                )))
                }
            }
        };
        let line = match outcome {
            Ok(line) => line,
            Err(e) => {
                let e = match e {
                    CallError::Broken(m) => CallError::Broken(format!("{m}{}", self.stderr_tail())),
                    other => other,
                };
                self.kill();
                return Err(e);
            }
        };
        let answer: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                let msg = format!(
                    "`{method}`: the adapter wrote a line that is not JSON ({e}): {}",
                    quote(line.trim_end())
                );
                self.kill();
                return Err(CallError::Broken(msg));
            }
        };
        if answer.get("id") != Some(&json!(id)) {
            let msg = format!(
                "`{method}`: answer for id {} but the request had id {id}: {}",
                answer
                    .get("id")
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "<none>".into()),
                quote(line.trim_end())
            );
            self.kill();
            return Err(CallError::Broken(msg));
        }
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
        let msg = format!(
            "`{method}`: the answer has none of result, error, unsupported: {}",
            quote(line.trim_end())
        );
        self.kill();
        Err(CallError::Broken(msg))
    }
}

impl KernelClient for KernelProcess {
    fn hello(&mut self) -> Result<Value, CallError> {
        self.ensure_started()?;
        self.hello
            .clone()
            .ok_or_else(|| CallError::Broken("no hello".into()))
    }

    fn call(&mut self, method: &str, params: &Value) -> Result<Value, CallError> {
        self.ensure_started()?;
        if method == "hello" {
            return self
                .hello
                .clone()
                .ok_or_else(|| CallError::Broken("no hello".into()));
        }
        let timeout = self.config.call_timeout_ms;
        self.exchange(method, params, timeout)
    }

    fn call_raw(&mut self, method: &str, raw_params: &str) -> Result<Value, CallError> {
        self.ensure_started()?;
        let timeout = self.config.call_timeout_ms;
        self.exchange_text(method, raw_params, timeout)
    }
}

impl Drop for KernelProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
