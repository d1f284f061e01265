//! A host's client of the store host: an `EventStore`, `TimerStore` and `SnapshotStore`
//! (and the dispatcher's calls) whose every call is one simulated TCP request inside a
//! simulated-time timeout, so a crashed or partitioned peer costs one timed-out call.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use loom_kernel::envelope::decode_one;
use loom_kernel::spi::{
    Anchor, AppendAck, Capabilities, EventStore, EventStoreCapabilities, EventStoreMethod,
    ExecutionPackage, FenceToken, Lease, SnapshotStore, SnapshotStoreCapabilities,
    SnapshotStoreMethod, StoreError, Timer, TimerStore, TIMER_STORE_SPI_VERSION,
};
use loom_kernel::{
    EventEnvelope, SnapshotRecord, EVENT_STORE_SPI_VERSION, SNAPSHOT_STORE_SPI_VERSION,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::wire::{backend, err_from_json, LINE_BYTES_MAX};
use crate::wire::{STORE_HOST, STORE_PORT};

/// How long a client waits for one store call (connect, request, response) in
/// simulated time. A crashed or partitioned peer would otherwise hang the caller.
pub const CALL_TIMEOUT_MS: u64 = 800;

thread_local! {
    /// Store calls that timed out on this thread's current seed (a lost request or
    /// answer, a partition, a spike past the timeout). A seed runs on one thread from
    /// start to end, so the count is the seed's; [`take_calls_timed_out`] resets it.
    static CALLS_TIMED_OUT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The store calls that timed out on this thread since the last call, and resets the
/// count (coverage: evidence that lost messages reached the callers).
pub fn take_calls_timed_out() -> u64 {
    CALLS_TIMED_OUT.with(|c| c.replace(0))
}

/// A read's answer as the store host prints it: the envelopes kept as their own text.
#[derive(Deserialize)]
struct ReadReply<'a> {
    #[serde(borrow)]
    ok: Option<ReadLog<'a>>,
    err: Option<Value>,
}

#[derive(Deserialize)]
struct ReadLog<'a> {
    #[serde(borrow)]
    events: Vec<&'a RawValue>,
    len: Option<u64>,
}

/// A store client for one host and one run: every call is one simulated TCP request
/// wrapped in a simulated-time timeout.
pub struct StoreClient {
    host: String,
    /// The simulated host the calls leave from (the link they take): `host` unless the
    /// caller is a second identity on another host's machine.
    machine: String,
    /// A latency spike on every append that carries a park, in simulated ms: the
    /// window between scheduling a timer and its park landing, made wide.
    park_delay_ms: u64,
    /// Appends that succeeded through this client (INGRESS-15 evidence).
    pub appends: AtomicU64,
    read_len: Mutex<BTreeMap<String, u64>>,
    fences: Mutex<BTreeMap<String, u64>>,
}

impl StoreClient {
    /// A client calling from `host`.
    pub fn new(host: &str) -> StoreClient {
        StoreClient {
            host: host.to_owned(),
            machine: host.to_owned(),
            park_delay_ms: 0,
            appends: AtomicU64::new(0),
            read_len: Mutex::new(BTreeMap::new()),
            fences: Mutex::new(BTreeMap::new()),
        }
    }

    /// The same client calling from `machine`'s links (a second identity that runs on
    /// that host, so its partitions, losses and spikes are that host's).
    pub fn on_machine(mut self, machine: &str) -> StoreClient {
        self.machine = machine.to_owned();
        self
    }

    /// The simulated host this client's calls leave from.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// The store's head at this client's latest read of `exec`: what the current run
    /// started from, since every runtime entry point reads the log once.
    pub fn read_len(&self, exec: &str) -> Option<u64> {
        self.read_len
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(exec)
            .copied()
    }

    /// Forgets the previous run's reads, fences and append count (a worker reuses its
    /// client from run to run).
    pub fn begin_run(&self) {
        self.appends.store(0, Ordering::SeqCst);
        self.read_len
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// The same client with a latency spike of `ms` on appends that carry a park.
    pub fn with_park_delay(mut self, ms: u64) -> StoreClient {
        self.park_delay_ms = ms;
        self
    }

    /// Records that the current run started from a log of `len` events (the REPLAY-01
    /// oracle), for a call made outside a read.
    pub fn mark_read(&self, exec: &str, len: u64) {
        self.read_len
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(exec.to_owned(), len);
    }

    /// The fence token this client last acquired for `exec`.
    pub fn fence_of(&self, exec: &str) -> Option<u64> {
        self.fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(exec)
            .copied()
    }

    /// Sends one request and waits for its response's value.
    pub async fn call(&self, op: &str, req: Value) -> Result<Value, StoreError> {
        let answer = self.exchange(op, req).await?;
        let mut v: Value = serde_json::from_str(&answer).map_err(|e| backend(e.to_string()))?;
        // The answer's value is moved out, not copied: a read's log is most of it.
        if let Some(ok) = v.get_mut("ok") {
            return Ok(ok.take());
        }
        match v.get("err") {
            Some(err) => Err(err_from_json(err)),
            None => Err(backend("malformed response")),
        }
    }

    /// Sends one request and waits for its response line, as text.
    async fn exchange(&self, op: &str, mut req: Value) -> Result<String, StoreError> {
        req["op"] = json!(op);
        req["from"] = json!(self.host);
        let mut line = req.to_string();
        line.push('\n');
        let exchange = async {
            let stream = crate::net::Stream::connect(&self.machine, STORE_HOST, STORE_PORT).await?;
            stream.write_all(line.into_bytes())?;
            stream.read_line().await
        };
        let answer =
            match tokio::time::timeout(Duration::from_millis(CALL_TIMEOUT_MS), exchange).await {
                Err(_) => {
                    CALLS_TIMED_OUT.with(|c| c.set(c.get() + 1));
                    return Err(backend(format!("{op}: timed out")));
                }
                Ok(Err(e)) => return Err(backend(format!("{op}: {e}"))),
                Ok(Ok(a)) => a,
            };
        if answer.len() > LINE_BYTES_MAX {
            return Err(backend("response too long"));
        }
        Ok(answer)
    }

    /// Claims a package for `worker`.
    pub async fn claim(&self, worker: &str) -> Result<Option<Lease>, StoreError> {
        let v = self.call("claim", json!({ "worker": worker })).await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }

    /// Completes a lease.
    pub async fn complete(&self, lease: &Lease) -> Result<(), StoreError> {
        self.call("complete", json!({ "lease": lease }))
            .await
            .map(|_| ())
    }

    /// Queues a package.
    pub async fn dispatch(&self, package: &ExecutionPackage) -> Result<(), StoreError> {
        self.call("dispatch", json!({ "package": package }))
            .await
            .map(|_| ())
    }

    /// Sends a raw append (the zombie's write), bypassing the runtime.
    pub async fn raw_append(
        &self,
        exec: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<u64>,
    ) -> Result<AppendAck, StoreError> {
        if self.park_delay_ms > 0 && events.iter().any(|e| e.event_type == "EXECUTION_SUSPENDED") {
            tokio::time::sleep(Duration::from_millis(self.park_delay_ms)).await;
        }
        let events: Vec<Value> = events.iter().map(EventEnvelope::to_value).collect();
        let v = self
            .call(
                "append",
                json!({ "exec": exec, "expectedNext": expected_next, "events": events, "fence": fence }),
            )
            .await?;
        self.appends.fetch_add(1, Ordering::SeqCst);
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }
}

impl EventStore for StoreClient {
    fn capabilities(&self) -> EventStoreCapabilities {
        Capabilities::new(
            EVENT_STORE_SPI_VERSION,
            [
                EventStoreMethod::AcquireFence,
                EventStoreMethod::AppendIfUnchanged,
            ],
        )
    }

    async fn append(
        &self,
        execution_id: &str,
        expected_next: u64,
        events: Vec<EventEnvelope>,
        fence: Option<FenceToken>,
    ) -> Result<AppendAck, StoreError> {
        self.raw_append(execution_id, expected_next, events, fence.map(|f| f.0))
            .await
    }

    async fn read(&self, execution_id: &str) -> Result<Vec<EventEnvelope>, StoreError> {
        let answer = self
            .exchange("read", json!({ "exec": execution_id }))
            .await?;
        // Each envelope is decoded from its own text where it lies in the answer (its
        // payload, printed by the store host in normal form, taken as it is), instead
        // of from a tree of the whole answer.
        let reply: ReadReply<'_> =
            serde_json::from_str(&answer).map_err(|e| backend(format!("read: {e}")))?;
        let (raw, len) = match reply {
            ReadReply { ok: Some(ok), .. } => (ok.events, ok.len),
            ReadReply { err: Some(err), .. } => return Err(err_from_json(&err)),
            _ => return Err(backend("malformed response")),
        };
        let len = len.unwrap_or(raw.len() as u64);
        let mut log = Vec::with_capacity(raw.len());
        for (i, e) in raw.iter().enumerate() {
            log.push(decode_one(e.get(), i).map_err(|e| backend(e.to_string()))?);
        }
        self.read_len
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(execution_id.to_owned(), len);
        Ok(log)
    }

    async fn list_executions(&self) -> Result<Vec<String>, StoreError> {
        let v = self.call("list", json!({})).await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }

    async fn acquire_fence(&self, execution_id: &str) -> Result<FenceToken, StoreError> {
        let v = self.call("fence", json!({ "exec": execution_id })).await?;
        let token = v.as_u64().ok_or_else(|| backend("fence: not a number"))?;
        self.fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(execution_id.to_owned(), token);
        Ok(FenceToken(token))
    }

    async fn observe(&self, execution_id: &str) -> Result<Anchor, StoreError> {
        let v = self
            .call("observe", json!({ "exec": execution_id }))
            .await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }
}

impl TimerStore for StoreClient {
    fn spi_version(&self) -> String {
        TIMER_STORE_SPI_VERSION.to_owned()
    }

    async fn schedule(&self, timer: Timer) -> Result<Timer, StoreError> {
        let v = self.call("schedule", json!({ "timer": timer })).await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }

    async fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<Timer>, StoreError> {
        let v = self
            .call("due", json!({ "now": now_ms, "limit": limit }))
            .await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }

    async fn cancel(&self, execution_id: &str, key: &str) -> Result<bool, StoreError> {
        let v = self
            .call("cancel", json!({ "exec": execution_id, "key": key }))
            .await?;
        Ok(v.as_bool().unwrap_or(false))
    }
}

impl SnapshotStore for StoreClient {
    fn capabilities(&self) -> SnapshotStoreCapabilities {
        Capabilities::new(
            SNAPSHOT_STORE_SPI_VERSION,
            [SnapshotStoreMethod::DeleteExecution],
        )
    }

    async fn save(&self, execution_id: &str, record: SnapshotRecord) -> Result<(), StoreError> {
        self.call(
            "snapSave",
            json!({ "exec": execution_id, "record": record }),
        )
        .await
        .map(|_| ())
    }

    async fn load_latest(&self, execution_id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        let v = self
            .call("snapLoad", json!({ "exec": execution_id }))
            .await?;
        serde_json::from_value(v).map_err(|e| backend(e.to_string()))
    }

    async fn delete_execution(&self, execution_id: &str) -> Result<u64, StoreError> {
        let v = self
            .call("snapDelete", json!({ "exec": execution_id }))
            .await?;
        Ok(v.as_u64().unwrap_or(0))
    }
}
