//! [`Adapter`]: one foreign program behind a JSON-lines protocol, restarted as needed.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::exit::describe_exit;
use crate::group;
use crate::{
    CALL_TIMEOUT_MS_DEFAULT, HELLO_TIMEOUT_MS_DEFAULT, LINE_BYTES_MAX_DEFAULT, QUOTE_CHARS_MAX,
    REQUESTS_REMEMBERED_MAX, RESTARTS_MAX_DEFAULT, SHUTDOWN_GRACE_MS, STDERR_DRAIN_MS_MAX,
    STDERR_LINES_KEPT, TERM_GRACE_MS,
};

/// How to run an adapter.
#[derive(Debug, Clone, PartialEq)]
pub struct AdapterConfig {
    /// The command line, run by `sh -c` (quoting works as in a shell).
    pub command: String,
    /// What the program is, for messages: `"store adapter"`, `"kernel adapter"`.
    pub role: String,
    /// The `params` of the `hello` request that opens every process's session.
    pub hello_params: Value,
    /// Time limit of one call.
    pub call_timeout: Duration,
    /// Time limit for starting and answering `hello`.
    pub hello_timeout: Duration,
    /// Time the adapter has to exit after end of input.
    pub shutdown_grace: Duration,
    /// Time the group has to exit after `SIGTERM`, before `SIGKILL`.
    pub term_grace: Duration,
    /// Most restarts in one run.
    pub restarts_max: u32,
    /// Longest accepted answer line, in bytes.
    pub line_bytes_max: usize,
}

impl AdapterConfig {
    /// A config with the default limits.
    pub fn new(command: impl Into<String>, role: impl Into<String>, hello_params: Value) -> Self {
        AdapterConfig {
            command: command.into(),
            role: role.into(),
            hello_params,
            call_timeout: Duration::from_millis(CALL_TIMEOUT_MS_DEFAULT),
            hello_timeout: Duration::from_millis(HELLO_TIMEOUT_MS_DEFAULT),
            shutdown_grace: Duration::from_millis(SHUTDOWN_GRACE_MS),
            term_grace: Duration::from_millis(TERM_GRACE_MS),
            restarts_max: RESTARTS_MAX_DEFAULT,
            line_bytes_max: LINE_BYTES_MAX_DEFAULT,
        }
    }
}

/// What kind of misbehaviour a [`Fault`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// The command could not be started at all.
    Spawn,
    /// `hello` failed: no answer in time, an error answer, or an answer the protocol
    /// client rejected (wrong protocol major, malformed claims).
    Handshake,
    /// No answer within the call's time limit.
    Timeout,
    /// The process ended, or closed its output, while an answer was owed.
    Crashed,
    /// A line that is not JSON, not an object, or has no integer `id`.
    Malformed,
    /// An answer naming an id that was never asked.
    WrongId,
    /// A last line without its newline, followed by the end of output.
    IncompleteLine,
    /// A line longer than the limit.
    LineTooLong,
    /// A second answer to a request already answered, or a line nobody asked for.
    ExtraLine,
    /// The restart cap was reached; the adapter is not started again.
    RestartCap,
    /// At shutdown, the adapter did not exit on end of input.
    IgnoredEndOfInput,
    /// At shutdown, processes of the adapter's group were still running after it exited.
    LeftProcessesBehind,
}

impl FaultKind {
    /// True for a hang ([`FaultKind::Timeout`], or a handshake that timed out is reported
    /// as [`FaultKind::Handshake`]).
    pub fn is_timeout(self) -> bool {
        self == FaultKind::Timeout
    }
}

/// A request's params as the caller has them: JSON text to send exactly as written (a
/// vector's raw wire text), or a value written into the request line.
#[derive(Clone, Copy)]
enum Params<'a> {
    Text(&'a str),
    Json(&'a Value),
}

impl Params<'_> {
    /// Bytes to reserve for the request line: the text's length, or a guess.
    fn len_hint(self) -> usize {
        match self {
            Params::Text(text) => text.len(),
            Params::Json(_) => 256,
        }
    }
}

/// The request a fault belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRef {
    /// The request's `id`.
    pub id: u64,
    /// Its method.
    pub method: String,
    /// The caller's tag (usually the case id).
    pub tag: String,
}

/// What went wrong with the adapter itself (not an answer it chose to give).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The kind.
    pub kind: FaultKind,
    /// One self-contained explanation, ending with what the process wrote on stderr.
    pub message: String,
    /// The request it belongs to, when there is one.
    pub request: Option<RequestRef>,
    /// The last stderr lines of the process concerned (and only of that process).
    pub stderr: Vec<String>,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Fault {}

/// A fault blamed on an earlier request than the one being served: a duplicate answer,
/// a line nobody asked for, output after the last answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blame {
    /// The tag of the request at fault.
    pub tag: String,
    /// What happened.
    pub fault: Fault,
}

/// What [`Adapter::shutdown`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Lines written after the last answer, blamed on the request they follow.
    pub blames: Vec<Blame>,
    /// Problems of the shutdown itself: end of input ignored, processes left behind.
    pub problems: Vec<Fault>,
}

enum Line {
    Text(Vec<u8>),
    Incomplete(Vec<u8>),
    TooLong(usize),
    End(Option<String>),
}

struct Process {
    child: Child,
    pgid: i32,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Set by the stderr reader when the pipe ends (every writer of it is gone).
    stderr_done: Arc<std::sync::atomic::AtomicBool>,
    /// The start of a line written without its newline yet, for the timeout message.
    pending: Arc<Mutex<Vec<u8>>>,
    /// Requests sent to this process, oldest first (bounded).
    sent: VecDeque<RequestRef>,
    /// Set once an exit status was collected.
    status: Option<ExitStatus>,
}

/// How a process ended.
struct Ending {
    status: Option<ExitStatus>,
    /// `None`: it exited on its own; otherwise the signal that ended it.
    forced_by: Option<&'static str>,
    /// Live members of its group other than the leader after the leader was gone.
    left_behind: usize,
    /// Lines it wrote during a polite shutdown.
    late_lines: Vec<Vec<u8>>,
}

/// The protocol client's judgement of a `hello` result.
type HelloCheck = Box<dyn Fn(&Value) -> Result<(), String> + Send>;

/// A foreign adapter behind a JSON-lines protocol: started, greeted, called, restarted
/// after a fault, and ended with its whole process group.
pub struct Adapter {
    config: AdapterConfig,
    check_hello: HelloCheck,
    process: Option<Process>,
    hello: Option<Value>,
    next_id: u64,
    last: Option<RequestRef>,
    blames: Vec<Blame>,
    restarts: u32,
    restart_before_next_case: bool,
    shut_down: bool,
    /// Set by [`Adapter::kill`]: the next start is the harness's own doing, not a fault
    /// restart, and does not count against the restart cap.
    killed: bool,
}

fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    let mut s: String = text.chars().take(QUOTE_CHARS_MAX).collect();
    if text.chars().count() > QUOTE_CHARS_MAX {
        s.push('…');
    }
    s
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Adapter {
    /// Starts the adapter and exchanges `hello`; `check_hello` judges the `result` of the
    /// answer (protocol major, claims). On failure the process group is already ended
    /// and the [`Fault`] (kind [`FaultKind::Spawn`] or [`FaultKind::Handshake`]) says why,
    /// with the adapter's stderr.
    pub fn start(
        config: AdapterConfig,
        check_hello: impl Fn(&Value) -> Result<(), String> + Send + 'static,
    ) -> Result<Adapter, Fault> {
        let mut adapter = Adapter {
            config,
            check_hello: Box::new(check_hello),
            process: None,
            hello: None,
            next_id: 1,
            last: None,
            blames: Vec::new(),
            restarts: 0,
            restart_before_next_case: false,
            shut_down: false,
            killed: false,
        };
        adapter.spawn_and_greet("hello")?;
        Ok(adapter)
    }

    /// The `result` of the current (or last) process's `hello`.
    pub fn hello(&self) -> Option<&Value> {
        self.hello.as_ref()
    }

    /// The config it runs with.
    pub fn config(&self) -> &AdapterConfig {
        &self.config
    }

    /// Changes the per-call time limit from the next call on.
    pub fn set_call_timeout(&mut self, timeout: Duration) {
        self.config.call_timeout = timeout;
    }

    /// How many times the adapter was restarted after a fault.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// The process group of the running process, if one runs.
    pub fn process_group(&self) -> Option<i32> {
        self.process.as_ref().map(|p| p.pgid)
    }

    /// Takes the faults blamed on earlier requests since the last call.
    pub fn take_blames(&mut self) -> Vec<Blame> {
        std::mem::take(&mut self.blames)
    }

    /// Sends `{"id", "method", "params"}` and returns the whole answer object (with its
    /// `id`). A fault of this request is the `Err`; the process is then already ended
    /// and the next call starts a new one. `tag` names the case the request belongs to.
    pub fn call(&mut self, tag: &str, method: &str, params: &Value) -> Result<Value, Fault> {
        // Written straight into the request line: serde_json's compact form never holds
        // a raw line break, so the check `call_with_params_text` makes is not needed.
        self.send(tag, method, Params::Json(params))
    }

    /// Like [`Adapter::call`], with `params` given as JSON text that is sent exactly as
    /// written (for vectors whose input is raw wire text). It must be one JSON value
    /// without a line break.
    pub fn call_with_params_text(
        &mut self,
        tag: &str,
        method: &str,
        params_text: &str,
    ) -> Result<Value, Fault> {
        if params_text.contains(['\n', '\r']) {
            let request = RequestRef {
                id: self.next_id,
                method: method.to_string(),
                tag: tag.to_string(),
            };
            let id = request.id;
            return Err(self.fault(
                FaultKind::Malformed,
                format!("the request {method} (id {id}) holds a line break in its params; the harness cannot send it as one line"),
                Some(request),
            ));
        }
        self.send(tag, method, Params::Text(params_text))
    }

    /// Sends one request (restarting the adapter first where a fault asked for it) and
    /// waits for its answer.
    fn send(&mut self, tag: &str, method: &str, params: Params<'_>) -> Result<Value, Fault> {
        // The id is taken after any restart, so ids rise in the order lines are sent.
        let mut request = RequestRef {
            id: self.next_id,
            method: method.to_string(),
            tag: tag.to_string(),
        };
        self.collect_stray_lines(&request)?;
        let same_case = self.last.as_ref().is_some_and(|l| l.tag == tag);
        if self.process.is_some() && self.restart_before_next_case && !same_case {
            self.end_process(false);
        }
        if self.process.is_none() {
            self.restart(&request)?;
        }
        request.id = self.next_id;
        self.next_id += 1;
        let timeout = self.config.call_timeout;
        self.exchange(request, params, timeout)
    }

    /// Kills the running process's whole group with `SIGKILL`, at once: a crash the
    /// harness causes (the durability cases). Nothing it wrote after the last answer is
    /// read. The next call starts a new process (with `hello`), which does not count as
    /// a restart after a fault.
    pub fn kill(&mut self) {
        if self.process.is_some() {
            self.end_process(false);
            self.killed = true;
        }
    }

    /// Writes one request and, after `delay`, kills the process group before reading
    /// any answer: a crash between a write and its acknowledgement. The request may
    /// have taken effect, in whole or not at all; the process is gone either way. `Err`
    /// when the request could not be written (the process was not running and did not
    /// start, or its input was closed).
    pub fn send_then_kill(
        &mut self,
        tag: &str,
        method: &str,
        params: &Value,
        delay: Duration,
    ) -> Result<(), Fault> {
        let request = RequestRef {
            id: self.next_id,
            method: method.to_string(),
            tag: tag.to_string(),
        };
        if self.process.is_none() {
            self.restart(&request)?;
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut line = format!("{{\"id\":{id},\"method\":").into_bytes();
        line.extend_from_slice(Value::String(method.to_string()).to_string().as_bytes());
        line.extend_from_slice(b",\"params\":");
        let _ = serde_json::to_writer(&mut line, params);
        line.extend_from_slice(b"}\n");
        let written = match self.process.as_mut().and_then(|p| p.stdin.as_mut()) {
            Some(stdin) => stdin.write_all(&line).and_then(|_| stdin.flush()),
            None => Err(std::io::Error::other("standard input already closed")),
        };
        if let Err(e) = written {
            let role = self.config.role.clone();
            self.kill();
            return Err(self.fault(
                FaultKind::Crashed,
                format!("the {role} could not take {method} (id {id}) before it was to be killed: writing failed ({e})"),
                Some(RequestRef { id, ..request }),
            ));
        }
        std::thread::sleep(delay);
        self.kill();
        Ok(())
    }

    /// Ends the adapter politely: end of input, then `SIGTERM` after the shutdown grace,
    /// then `SIGKILL`; waits for it. Lines written after the last answer are blamed on
    /// the last request. Idempotent.
    pub fn shutdown(&mut self) -> ShutdownReport {
        let mut report = ShutdownReport {
            blames: self.take_blames(),
            problems: Vec::new(),
        };
        self.shut_down = true;
        let Some(process) = self.process.take() else {
            return report;
        };
        let (pipe, done) = (
            Arc::clone(&process.stderr),
            Arc::clone(&process.stderr_done),
        );
        let ending = end(process, true, &self.config);
        wait_stderr(&done);
        let stderr = lock(&pipe).iter().cloned().collect::<Vec<_>>();
        let role = self.config.role.clone();
        if let Some(last) = &self.last {
            for line in &ending.late_lines {
                let again = serde_json::from_slice::<Value>(line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(Value::as_u64))
                    == Some(last.id);
                let what = if again {
                    format!(
                        "the {role} answered {} (id {}) a second time",
                        last.method, last.id
                    )
                } else {
                    format!(
                        "after answering {} (id {}), the {role} wrote another line",
                        last.method, last.id
                    )
                };
                report.blames.push(Blame {
                    tag: last.tag.clone(),
                    fault: self.fault_quiet(
                        FaultKind::ExtraLine,
                        format!("{what}: `{}`", quote(line)),
                        Some(last.clone()),
                        stderr.clone(),
                    ),
                });
            }
        }
        if let Some(signal) = ending.forced_by {
            report.problems.push(self.fault_quiet(
                FaultKind::IgnoredEndOfInput,
                format!(
                    "the {role} did not exit within {} ms after its standard input was closed; it was ended with {signal}",
                    self.config.shutdown_grace.as_millis()
                ),
                None,
                stderr.clone(),
            ));
        }
        if ending.left_behind > 0 {
            report.problems.push(self.fault_quiet(
                FaultKind::LeftProcessesBehind,
                format!(
                    "the {role} exited but left {} process(es) of its group running; they were ended (an adapter must end what it starts)",
                    ending.left_behind
                ),
                None,
                stderr,
            ));
        }
        let _ = ending.status;
        report
    }

    // ---- internals ---------------------------------------------------------------

    fn restart(&mut self, request: &RequestRef) -> Result<(), Fault> {
        if self.shut_down {
            return Err(self.fault(
                FaultKind::RestartCap,
                format!(
                    "the {} was shut down; {} was not sent",
                    self.config.role, request.method
                ),
                Some(request.clone()),
            ));
        }
        if self.restarts >= self.config.restarts_max {
            return Err(self.fault(
                FaultKind::RestartCap,
                format!(
                    "the {} was restarted {} times in this run; it is not started again, so {} was not sent",
                    self.config.role, self.config.restarts_max, request.method
                ),
                Some(request.clone()),
            ));
        }
        if std::mem::take(&mut self.killed) {
            // Started again after a deliberate kill: not a fault, not counted.
            return self.spawn_and_greet(&request.tag).map_err(|mut f| {
                f.message = format!(
                    "starting the {} again after it was killed, before {}: {}",
                    self.config.role, request.method, f.message
                );
                f.request = Some(request.clone());
                f
            });
        }
        self.restarts += 1;
        self.spawn_and_greet(&request.tag).map_err(|mut f| {
            f.message = format!(
                "restarting the {} before {}: {}",
                self.config.role, request.method, f.message
            );
            f.request = Some(request.clone());
            f
        })
    }

    fn spawn_and_greet(&mut self, tag: &str) -> Result<(), Fault> {
        self.restart_before_next_case = false;
        let process = self.spawn()?;
        self.process = Some(process);
        let id = self.next_id;
        self.next_id += 1;
        let request = RequestRef {
            id,
            method: "hello".into(),
            tag: tag.to_string(),
        };
        let params = self.config.hello_params.clone();
        let timeout = self.config.hello_timeout;
        let answer = match self.exchange(request.clone(), Params::Json(&params), timeout) {
            Ok(a) => a,
            Err(mut f) => {
                f.kind = FaultKind::Handshake;
                f.message = format!("the handshake failed: {}", f.message);
                return Err(f);
            }
        };
        let result = match (answer.get("result"), answer.get("error")) {
            (Some(r), _) => r.clone(),
            (None, Some(e)) => {
                return Err(self.fault(
                    FaultKind::Handshake,
                    format!(
                        "the handshake failed: the {} answered hello with an error: {e}",
                        self.config.role
                    ),
                    Some(request),
                ))
            }
            (None, None) => {
                return Err(self.fault(
                    FaultKind::Handshake,
                    format!(
                        "the handshake failed: the answer to hello has no `result`: `{}`",
                        quote(answer.to_string().as_bytes())
                    ),
                    Some(request),
                ))
            }
        };
        if let Err(why) = (self.check_hello)(&result) {
            return Err(self.fault(
                FaultKind::Handshake,
                format!("the handshake failed: {why}"),
                Some(request),
            ));
        }
        self.hello = Some(result);
        Ok(())
    }

    fn spawn(&mut self) -> Result<Process, Fault> {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(&self.config.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let mut child = command.spawn().map_err(|e| Fault {
            kind: FaultKind::Spawn,
            message: format!(
                "cannot start the {} `{}`: {e}",
                self.config.role, self.config.command
            ),
            request: None,
            stderr: Vec::new(),
        })?;
        let pgid = child.id() as i32;
        group::register(pgid);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr_pipe = child.stderr.take();
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_done = Arc::new(std::sync::atomic::AtomicBool::new(stderr_pipe.is_none()));
        if let Some(pipe) = stderr_pipe {
            let sink = Arc::clone(&stderr);
            let done = Arc::clone(&stderr_done);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(pipe);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    // Bounded read: a stderr line is kept only in its quoted form.
                    match (&mut reader).take(64 * 1024).read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => {
                            done.store(true, std::sync::atomic::Ordering::Release);
                            break;
                        }
                        Ok(_) => {
                            let mut kept = lock(&sink);
                            kept.push_back(quote(&buf));
                            while kept.len() > STDERR_LINES_KEPT {
                                kept.pop_front();
                            }
                        }
                    }
                }
            });
        }
        let (tx, rx) = mpsc::channel();
        let pending = Arc::new(Mutex::new(Vec::new()));
        if let Some(pipe) = stdout {
            let pending = Arc::clone(&pending);
            let max = self.config.line_bytes_max;
            std::thread::spawn(move || read_lines(pipe, max, tx, pending));
        }
        Ok(Process {
            child,
            pgid,
            stdin,
            lines: rx,
            stderr,
            stderr_done,
            pending,
            sent: VecDeque::new(),
            status: None,
        })
    }

    /// Lines that arrived while nothing was asked belong to the previous request; the
    /// end of output between calls is a fault of the request about to be sent.
    fn collect_stray_lines(&mut self, next: &RequestRef) -> Result<(), Fault> {
        loop {
            let Some(process) = self.process.as_mut() else {
                return Ok(());
            };
            let line = match process.lines.try_recv() {
                Ok(line) => line,
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => Line::End(None),
            };
            match line {
                Line::Text(bytes) | Line::Incomplete(bytes) => self.blame_stray(&bytes),
                Line::TooLong(n) => {
                    let text = format!("a line of more than {n} bytes");
                    self.blame_stray(text.as_bytes());
                }
                Line::End(why) => {
                    let status = self.settle_status();
                    let role = self.config.role.clone();
                    let after = self
                        .last
                        .as_ref()
                        .map(|l| format!(" after answering {} (id {})", l.method, l.id))
                        .unwrap_or_default();
                    let detail = why.map(|w| format!(" ({w})")).unwrap_or_default();
                    return Err(self.fault(
                        FaultKind::Crashed,
                        format!(
                            "the {role} had already closed its output{detail} and {status}{after}; {} was not sent",
                            next.method
                        ),
                        Some(next.clone()),
                    ));
                }
            }
        }
    }

    fn blame_stray(&mut self, bytes: &[u8]) {
        let role = self.config.role.clone();
        let answered = serde_json::from_slice::<Value>(bytes)
            .ok()
            .and_then(|v| v.get("id").and_then(Value::as_u64));
        let earlier = answered.and_then(|id| {
            self.process
                .as_ref()
                .and_then(|p| p.sent.iter().find(|r| r.id == id).cloned())
        });
        let (request, message) = match (earlier, &self.last) {
            (Some(r), _) => (
                r.clone(),
                format!(
                    "the {role} answered {} (id {}) a second time: `{}`",
                    r.method,
                    r.id,
                    quote(bytes)
                ),
            ),
            (None, Some(last)) => (
                last.clone(),
                format!(
                    "after answering {} (id {}), the {role} wrote a line nobody asked for: `{}`",
                    last.method,
                    last.id,
                    quote(bytes)
                ),
            ),
            (None, None) => (
                RequestRef {
                    id: 0,
                    method: "hello".into(),
                    tag: "hello".into(),
                },
                format!(
                    "the {role} wrote a line before any request: `{}`",
                    quote(bytes)
                ),
            ),
        };
        let stderr = self.stderr_lines();
        let fault = self.fault_quiet(FaultKind::ExtraLine, message, Some(request.clone()), stderr);
        self.blames.push(Blame {
            tag: request.tag,
            fault,
        });
        self.restart_before_next_case = true;
    }

    fn exchange(
        &mut self,
        request: RequestRef,
        params: Params<'_>,
        timeout: Duration,
    ) -> Result<Value, Fault> {
        let role = self.config.role.clone();
        let method = request.method.clone();
        let id = request.id;
        let mut line = Vec::with_capacity(params.len_hint() + method.len() + 48);
        line.extend_from_slice(b"{\"id\":");
        line.extend_from_slice(id.to_string().as_bytes());
        line.extend_from_slice(b",\"method\":");
        line.extend_from_slice(Value::String(method.clone()).to_string().as_bytes());
        line.extend_from_slice(b",\"params\":");
        match params {
            Params::Text(text) => line.extend_from_slice(text.as_bytes()),
            // Writing a `Value` into a Vec cannot fail.
            Params::Json(value) => {
                let _ = serde_json::to_writer(&mut line, value);
            }
        }
        line.extend_from_slice(b"}\n");
        let Some(process) = self.process.as_mut() else {
            return Err(self.fault(
                FaultKind::Crashed,
                format!("the {role} is not running; {method} (id {id}) was not sent"),
                Some(request),
            ));
        };
        // One buffer, one write: ChildStdin is unbuffered, and a write per token could
        // wake the adapter on a partial line.
        let written = match process.stdin.as_mut() {
            Some(stdin) => stdin.write_all(&line).and_then(|_| stdin.flush()),
            None => Err(std::io::Error::other("standard input already closed")),
        };
        if let Err(e) = written {
            let status = self.settle_status();
            return Err(self.fault(
                FaultKind::Crashed,
                format!("the {role} could not take {method} (id {id}): writing failed ({e}); it {status}"),
                Some(request),
            ));
        }
        self.last = Some(request.clone());
        if let Some(p) = self.process.as_mut() {
            p.sent.push_back(request.clone());
            while p.sent.len() > REQUESTS_REMEMBERED_MAX {
                p.sent.pop_front();
            }
        }
        let deadline = Instant::now() + timeout;
        loop {
            let Some(process) = self.process.as_mut() else {
                return Err(self.fault(
                    FaultKind::Crashed,
                    format!("the {role} is not running"),
                    Some(request),
                ));
            };
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match process.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Disconnected) => Line::End(None),
                Err(RecvTimeoutError::Timeout) => {
                    let pending = lock(&process.pending).clone();
                    let ms = timeout.as_millis();
                    let message = if pending.is_empty() {
                        format!("the {role} did not answer {method} (id {id}) within {ms} ms; it was ended")
                    } else {
                        format!(
                            "the {role} wrote an incomplete line (no newline) and nothing more within {ms} ms while answering {method} (id {id}): `{}`; every line must end with a newline; it was ended",
                            quote(&pending)
                        )
                    };
                    return Err(self.fault(FaultKind::Timeout, message, Some(request)));
                }
            };
            match line {
                Line::Text(bytes) => {
                    let Ok(answer) = serde_json::from_slice::<Value>(&bytes) else {
                        return Err(self.fault(
                            FaultKind::Malformed,
                            format!(
                                "the {role} wrote a line that is not JSON while answering {method} (id {id}): `{}`",
                                quote(&bytes)
                            ),
                            Some(request),
                        ));
                    };
                    let answered = answer.get("id").and_then(Value::as_u64);
                    if answered == Some(id) && answer.is_object() {
                        return Ok(answer);
                    }
                    let earlier = answered.and_then(|a| {
                        self.process
                            .as_ref()
                            .and_then(|p| p.sent.iter().find(|r| r.id == a && a != id).cloned())
                    });
                    if earlier.is_some() {
                        // A second answer to an earlier request: blame it, keep waiting.
                        self.blame_stray(&bytes);
                        continue;
                    }
                    // Any JSON number counts as an id here (`-1`, `1.5`), so the message
                    // can name it; only a missing or non-numeric id is malformed.
                    let named = answer.get("id").filter(|v| v.is_number()).cloned();
                    let (kind, message) = match named {
                        Some(other) => (
                            FaultKind::WrongId,
                            format!(
                                "the {role} answered id {other}, which was never asked, while {method} (id {id}) was waiting: `{}`",
                                quote(&bytes)
                            ),
                        ),
                        None => (
                            FaultKind::Malformed,
                            format!(
                                "the {role} wrote a JSON line without an integer `id` while answering {method} (id {id}): `{}`",
                                quote(&bytes)
                            ),
                        ),
                    };
                    return Err(self.fault(kind, message, Some(request)));
                }
                Line::Incomplete(bytes) => {
                    let status = self.settle_status();
                    return Err(self.fault(
                        FaultKind::IncompleteLine,
                        format!(
                            "the {role} wrote an incomplete line (no newline) and closed its output while answering {method} (id {id}); it {status}: `{}`",
                            quote(&bytes)
                        ),
                        Some(request),
                    ));
                }
                Line::TooLong(n) => {
                    let max = self.config.line_bytes_max;
                    return Err(self.fault(
                        FaultKind::LineTooLong,
                        format!("the {role} wrote a line of more than {max} bytes (read {n}) while answering {method} (id {id})"),
                        Some(request),
                    ));
                }
                Line::End(why) => {
                    let status = self.settle_status();
                    let detail = why.map(|w| format!(" ({w})")).unwrap_or_default();
                    return Err(self.fault(
                        FaultKind::Crashed,
                        format!("the {role} closed its output{detail} during {method} (id {id}): it {status}"),
                        Some(request),
                    ));
                }
            }
        }
    }

    /// How the running process ended, in words, after giving it a moment to be reaped:
    /// "exited with code 3", or "is still running" when it only closed its output.
    fn settle_status(&mut self) -> String {
        let Some(process) = self.process.as_mut() else {
            return "is not running".into();
        };
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            if let Ok(Some(status)) = process.child.try_wait() {
                process.status = Some(status);
                return describe_exit(&status);
            }
            if Instant::now() >= deadline {
                return "is still running".into();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn stderr_lines(&self) -> Vec<String> {
        self.process
            .as_ref()
            .map(|p| lock(&p.stderr).iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Ends the running process and builds a fault of it, quoting its complete stderr
    /// (read after the group is gone, so nothing it wrote is missed).
    fn fault(&mut self, kind: FaultKind, message: String, request: Option<RequestRef>) -> Fault {
        let stderr = self.end_process(false);
        self.fault_quiet(kind, message, request, stderr)
    }

    fn fault_quiet(
        &self,
        kind: FaultKind,
        message: String,
        request: Option<RequestRef>,
        stderr: Vec<String>,
    ) -> Fault {
        let said = if stderr.is_empty() {
            format!("; the {} wrote nothing on stderr", self.config.role)
        } else {
            format!("; its stderr ended with: {}", stderr.join(" | "))
        };
        Fault {
            kind,
            message: format!("{message}{said}"),
            request,
            stderr,
        }
    }

    /// Ends the running process (if any) and returns its stderr lines.
    fn end_process(&mut self, polite: bool) -> Vec<String> {
        let Some(process) = self.process.take() else {
            return Vec::new();
        };
        let (stderr, done) = (
            Arc::clone(&process.stderr),
            Arc::clone(&process.stderr_done),
        );
        end(process, polite, &self.config);
        wait_stderr(&done);
        let lines = lock(&stderr).iter().cloned().collect();
        lines
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        if self.process.is_some() {
            self.shutdown();
        }
    }
}

/// Reads answer lines: each complete line, an incomplete last line, an oversized line,
/// or the end of output. Keeps the start of a line still waiting for its newline in
/// `pending`, so a timeout can say what arrived.
fn read_lines(
    pipe: impl Read,
    line_bytes_max: usize,
    tx: mpsc::Sender<Line>,
    pending: Arc<Mutex<Vec<u8>>>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, pipe);
    let mut line: Vec<u8> = Vec::new();
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Line::End(Some(format!("read error: {e}"))));
                return;
            }
        };
        if chunk.is_empty() {
            let last = if line.is_empty() {
                Line::End(None)
            } else {
                Line::Incomplete(std::mem::take(&mut line))
            };
            let _ = tx.send(last);
            let _ = tx.send(Line::End(None));
            return;
        }
        let (taken, complete) = match chunk.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (chunk.len(), false),
        };
        line.extend_from_slice(&chunk[..taken]);
        reader.consume(taken);
        if line.len() > line_bytes_max + 1 {
            let _ = tx.send(Line::TooLong(line.len()));
            return;
        }
        if complete {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            lock(&pending).clear();
            if line.iter().all(u8::is_ascii_whitespace) {
                line.clear();
                continue;
            }
            if tx.send(Line::Text(std::mem::take(&mut line))).is_err() {
                return;
            }
        } else {
            let mut p = lock(&pending);
            if p.len() < QUOTE_CHARS_MAX * 4 {
                let room = QUOTE_CHARS_MAX * 4 - p.len();
                let from = line.len().saturating_sub(taken);
                let take = (line.len() - from).min(room);
                p.extend_from_slice(&line[from..from + take]);
            }
        }
    }
}

/// Ends a process and its group. Polite: close its input, collect what it still writes
/// and wait up to the shutdown grace; then (or at once when not polite) `SIGTERM` the
/// group, wait up to the term grace, `SIGKILL`, and reap the leader.
fn end(mut process: Process, polite: bool, config: &AdapterConfig) -> Ending {
    let pgid = process.pgid;
    drop(process.stdin.take());
    let mut late_lines = Vec::new();
    let mut status = process.status;
    let leader = process.child.id() as i32;
    if polite {
        let deadline = Instant::now() + config.shutdown_grace;
        // Read until the output ends (or the grace passes), then wait for the exit.
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match process.lines.recv_timeout(left) {
                Ok(Line::Text(b)) | Ok(Line::Incomplete(b)) => late_lines.push(b),
                Ok(Line::TooLong(n)) => {
                    late_lines.push(format!("a line of more than {n} bytes").into_bytes())
                }
                Ok(Line::End(_)) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        // The whole group gets the grace: a wrapper (a shell, a proxy) may exit a moment
        // before the adapter behind it.
        loop {
            if status.is_none() {
                if let Ok(Some(s)) = process.child.try_wait() {
                    status = Some(s);
                }
            }
            let others = group::live_group_members(pgid)
                .into_iter()
                .filter(|p| *p != leader)
                .count();
            if (status.is_some() && others == 0) || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let mut forced_by = None;
    let mut left_behind = 0;
    let leader_gone = status.is_some() || matches!(process.child.try_wait(), Ok(Some(_)));
    let others = group::live_group_members(pgid)
        .into_iter()
        .filter(|p| *p != leader)
        .count();
    let observable = group::can_observe_groups();
    if !leader_gone || others > 0 || !observable {
        if leader_gone {
            left_behind = others;
        } else if polite {
            forced_by = Some("SIGTERM");
        }
        #[cfg(unix)]
        {
            group::signal_group(pgid, libc::SIGTERM);
            let deadline = Instant::now() + config.term_grace;
            loop {
                if status.is_none() {
                    if let Ok(Some(s)) = process.child.try_wait() {
                        status = Some(s);
                    }
                }
                let rest = group::live_group_members(pgid)
                    .into_iter()
                    .filter(|p| *p != leader)
                    .count();
                if status.is_some() && rest == 0 && observable {
                    break;
                }
                if Instant::now() >= deadline {
                    if polite && !leader_gone && status.is_none() {
                        forced_by = Some("SIGKILL");
                    }
                    group::signal_group(pgid, libc::SIGKILL);
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        #[cfg(not(unix))]
        {
            let _ = process.child.kill();
        }
    }
    if status.is_none() {
        status = process.child.wait().ok();
    }
    // Survivors of SIGTERM got SIGKILL above; wait for them to be gone.
    if !group::wait_group_empty(pgid, None, Duration::from_secs(2)) {
        #[cfg(unix)]
        group::signal_group(pgid, libc::SIGKILL);
        group::wait_group_empty(pgid, None, Duration::from_secs(2));
    }
    group::unregister(pgid);
    Ending {
        status,
        forced_by,
        left_behind,
        late_lines,
    }
}

/// Waits (bounded) until the stderr reader has read everything: once the group is
/// gone, the pipe ends as soon as the reader catches up.
fn wait_stderr(done: &std::sync::atomic::AtomicBool) {
    let deadline = Instant::now() + Duration::from_millis(STDERR_DRAIN_MS_MAX);
    while !done.load(std::sync::atomic::Ordering::Acquire) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
}
