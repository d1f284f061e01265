//! `loom store-adapter`: the reference SQLite and PostgreSQL stores served over the
//! stdio store protocol (docs/protocols/store.md), so that they run as `cmd:` adapters:
//! several processes on one database (`--clients`), killed for real by the durability
//! kit and by `loom sim`, exactly as a store author's adapter is.
//!
//! Key design decision: the server is the inverse of the kits' client
//! (`loom_store_client::StdioStore`): the same wire names, the same value shapes
//! (the SPI types' serde forms, envelopes through `EventEnvelope::from_value`), and the
//! forms both sides spell from `loom_store_client::wire`: errors (`encode_error`),
//! base64, envelope batches, content references and `putStream` outcomes. A request it
//! cannot read is an `invalid-argument` answer naming the parameter, never a crash. Every write is committed by the store
//! before its answer is written, so the adapter claims `durable`; processes on one
//! database file or schema share it, so it claims `sharedBackend`.

use std::io::{BufRead, Write};

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use loom_kernel::spi::plugin::{
    Chunk, ContentAccess, ContentStore, DurableStateStore, QueryOptions, ReadModelStore,
};
use loom_kernel::spi::{
    Anchor, ArchiveStore, BranchRegistry, EventStore, ExecutionDispatcher, FenceToken, Lease,
    SnapshotStore, SpiMethod, StoreError, TimerStore,
};
use loom_kernel::EventEnvelope;
use loom_store_client::wire::{content_ref_json, envelopes_json, put_stream_outcome_json};
use loom_store_client::{self as stdio, base64_decode, base64_encode, encode_error};
use loom_stores::{PgStore, SqliteStore};

/// The adapter's name in `hello`.
pub const NAME: &str = "loom-reference-store";

/// The backends `loom store-adapter` serves.
enum Db {
    Sqlite(SqliteStore),
    Pg(PgStore),
}

/// Runs `$body` with `$s` bound to the store, whichever backend it is.
macro_rules! with_db {
    ($db:expr, |$s:ident| $body:expr) => {
        match $db {
            Db::Sqlite($s) => $body,
            Db::Pg($s) => $body,
        }
    };
}

fn bad(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::invalid(format!("bad params: {what}: {e}"))
}

fn field<T: DeserializeOwned>(p: &Value, name: &str) -> Result<T, StoreError> {
    serde_json::from_value(p.get(name).cloned().unwrap_or(Value::Null)).map_err(|e| bad(name, e))
}

fn envelopes_of(p: &Value, name: &str) -> Result<Vec<EventEnvelope>, StoreError> {
    let Some(Value::Array(items)) = p.get(name) else {
        return Err(bad(name, "not an array"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, e)| EventEnvelope::from_value(e, i).map_err(|e| bad(name, e)))
        .collect()
}

fn to_json<T: serde::Serialize>(v: T) -> Result<Value, StoreError> {
    serde_json::to_value(v).map_err(|e| StoreError::backend(format!("encoding the answer: {e}")))
}

fn owner_of(p: &Value) -> Result<Option<ContentAccess>, StoreError> {
    Ok(field::<Option<String>>(p, "owner")?.map(|owner| ContentAccess { owner }))
}

fn claims<M: SpiMethod>(version: &str, methods: impl IntoIterator<Item = M>) -> Value {
    let names: Vec<&str> = methods.into_iter().map(|m| m.name()).collect();
    json!({ "spiVersion": version, "methods": names })
}

fn hello(db: &Db) -> Value {
    let spis = with_db!(db, |s| {
        let events = s.events().capabilities();
        let snapshots = s.snapshots().capabilities();
        let archive = s.archive().capabilities();
        let content = s.content().capabilities();
        let state = s.durable_state().capabilities();
        let models = s.read_models().capabilities();
        json!({
            stdio::SPI_EVENT_STORE: claims(&events.spi_version, events.methods),
            stdio::SPI_SNAPSHOT_STORE: claims(&snapshots.spi_version, snapshots.methods),
            stdio::SPI_ARCHIVE_STORE: claims(&archive.spi_version, archive.methods),
            stdio::SPI_BRANCH_REGISTRY: { "spiVersion": s.branches().spi_version(), "methods": [] },
            stdio::SPI_DISPATCHER: { "spiVersion": s.dispatcher().spi_version(), "methods": [] },
            stdio::SPI_TIMER_STORE: { "spiVersion": s.timers().spi_version(), "methods": [] },
            stdio::SPI_CONTENT_STORE: claims(&content.spi_version, content.methods),
            stdio::SPI_DURABLE_STATE_STORE: claims(&state.spi_version, state.methods),
            stdio::SPI_READ_MODEL_STORE: claims(&models.spi_version, models.methods),
        })
    });
    json!({
        "name": NAME,
        "version": env!("CARGO_PKG_VERSION"),
        "protocolVersion": stdio::PROTOCOL_VERSION,
        "sharedBackend": true,
        "durable": true,
        "spis": spis,
    })
}

async fn handle(db: &Db, method: &str, p: &Value) -> Result<Value, StoreError> {
    let id = || field::<String>(p, "executionId");
    with_db!(db, |s| match method {
        "reset" => match db {
            Db::Sqlite(q) => q.reset().map(|()| Value::Null),
            Db::Pg(q) => q.reset().await.map(|()| Value::Null),
        },
        "eventStore.append" => {
            let fence = field::<Option<u64>>(p, "fence")?.map(FenceToken);
            to_json(
                s.events()
                    .append(
                        &id()?,
                        field(p, "expectedNext")?,
                        envelopes_of(p, "events")?,
                        fence,
                    )
                    .await?,
            )
        }
        "eventStore.read" => Ok(envelopes_json(&s.events().read(&id()?).await?)),
        "eventStore.listExecutions" => to_json(s.events().list_executions().await?),
        "eventStore.readRange" => Ok(envelopes_json(
            &s.events()
                .read_range(&id()?, field(p, "from")?, field(p, "to")?)
                .await?,
        )),
        "eventStore.acquireFence" => to_json(s.events().acquire_fence(&id()?).await?.0),
        "eventStore.acquireFenceIf" => {
            let expected = field::<Option<u64>>(p, "expectedCurrent")?.map(FenceToken);
            to_json(s.events().acquire_fence_if(&id()?, expected).await?.0)
        }
        "eventStore.observe" => to_json(s.events().observe(&id()?).await?),
        "eventStore.appendIfUnchanged" => {
            let anchor: Anchor = field(p, "anchor")?;
            to_json(
                s.events()
                    .append_if_unchanged(&id()?, anchor, envelopes_of(p, "events")?)
                    .await?,
            )
        }
        "eventStore.storeNow" => to_json(s.events().store_now().await?),
        "eventStore.sealingCapability" => to_json(s.events().sealing_capability().await?),
        "eventStore.deleteThrough" => {
            to_json(
                s.events()
                    .delete_through(&id()?, field(p, "through")?)
                    .await?,
            )
        }
        "eventStore.copyPrefix" => to_json(
            s.events()
                .copy_prefix(
                    &field::<String>(p, "source")?,
                    &field::<String>(p, "target")?,
                    field(p, "through")?,
                )
                .await?,
        ),
        "eventStore.deleteExecution" => to_json(s.events().delete_execution(&id()?).await?),
        "eventStore.listExecutionsPage" => to_json(
            s.events()
                .list_executions_page(field::<Option<String>>(p, "cursor")?, field(p, "limit")?,)
                .await?,
        ),
        "snapshotStore.save" => s
            .snapshots()
            .save(&id()?, field(p, "record")?)
            .await
            .map(|()| Value::Null),
        "snapshotStore.loadLatest" => to_json(s.snapshots().load_latest(&id()?).await?),
        "snapshotStore.deleteExecution" =>
            to_json(SnapshotStore::delete_execution(&s.snapshots(), &id()?).await?),
        "snapshotStore.loadLatestSealed" => {
            to_json(s.snapshots().load_latest_sealed(&id()?).await?)
        }
        "snapshotStore.pruneSnapshots" => to_json(
            s.snapshots()
                .prune_snapshots(&id()?, field(p, "throughSequence")?)
                .await?,
        ),
        "snapshotStore.listSequences" => to_json(s.snapshots().list_sequences(&id()?).await?),
        "archiveStore.archive" => to_json(
            s.archive()
                .archive(&id()?, envelopes_of(p, "envelopes")?)
                .await?,
        ),
        "archiveStore.readArchived" =>
            Ok(envelopes_json(&s.archive().read_archived(&id()?).await?)),
        "archiveStore.deleteExecution" =>
            to_json(ArchiveStore::delete_execution(&s.archive(), &id()?).await?),
        "archiveStore.replaceSegments" => s
            .archive()
            .replace_segments(&id()?, envelopes_of(p, "envelopes")?)
            .await
            .map(|()| Value::Null),
        "branchRegistry.register" => s
            .branches()
            .register(field(p, "record")?)
            .await
            .map(|()| Value::Null),
        "branchRegistry.get" => to_json(s.branches().get(&id()?).await?),
        "branchRegistry.children" => to_json(
            s.branches()
                .children(&field::<String>(p, "parentExecutionId")?)
                .await?,
        ),
        "dispatcher.registerTarget" => to_json(
            s.dispatcher()
                .register_target(&field::<String>(p, "name")?)
                .await?,
        ),
        "dispatcher.targets" => to_json(s.dispatcher().targets().await?),
        "dispatcher.dispatch" => to_json(s.dispatcher().dispatch(field(p, "package")?).await?),
        "dispatcher.claim" => to_json(
            s.dispatcher()
                .claim(
                    &field::<String>(p, "target")?,
                    &field::<String>(p, "workerId")?,
                    field(p, "nowMs")?,
                )
                .await?,
        ),
        "dispatcher.renew" => {
            let lease: Lease = field(p, "lease")?;
            to_json(s.dispatcher().renew(&lease, field(p, "nowMs")?).await?)
        }
        "dispatcher.complete" => {
            let lease: Lease = field(p, "lease")?;
            s.dispatcher().complete(&lease).await.map(|()| Value::Null)
        }
        "dispatcher.release" => {
            let lease: Lease = field(p, "lease")?;
            s.dispatcher().release(&lease).await.map(|()| Value::Null)
        }
        "dispatcher.expireLeases" => {
            to_json(s.dispatcher().expire_leases(field(p, "nowMs")?).await?)
        }
        "timerStore.schedule" => to_json(s.timers().schedule(field(p, "timer")?).await?),
        "timerStore.due" => to_json(
            s.timers()
                .due(field(p, "nowMs")?, field(p, "limit")?)
                .await?,
        ),
        "timerStore.cancel" => to_json(
            s.timers()
                .cancel(&id()?, &field::<String>(p, "key")?)
                .await?,
        ),
        "contentStore.put" => {
            let data = base64_decode(&field::<String>(p, "data")?).map_err(|e| bad("data", e))?;
            Ok(content_ref_json(
                &s.content().put(data, owner_of(p)?).await?,
            ))
        }
        "contentStore.get" => Ok(s
            .content()
            .get(&field::<String>(p, "digest")?, owner_of(p)?)
            .await?
            .map_or(Value::Null, |b| Value::String(base64_encode(&b)))),
        "contentStore.putStream" => {
            let Some(Value::Array(items)) = p.get("chunks") else {
                return Err(bad("chunks", "not an array"));
            };
            let mut chunks: Vec<Chunk> = Vec::with_capacity(items.len());
            for c in items {
                match (c.get("data"), c.get("error")) {
                    (Some(Value::String(d)), None) => {
                        chunks.push(Ok(base64_decode(d).map_err(|e| bad("chunks", e))?))
                    }
                    (None, Some(Value::String(e))) => chunks.push(Err(e.clone())),
                    _ => return Err(bad("chunks", "each is {\"data\"} or {\"error\"}")),
                }
            }
            Ok(put_stream_outcome_json(
                &s.content().put_stream(chunks, owner_of(p)?).await?,
            ))
        }
        "contentStore.sealsContent" => to_json(s.content().seals_content().await?),
        "durableStateStore.get" => Ok(s
            .durable_state()
            .get(&field::<String>(p, "key")?)
            .await?
            .map_or(
                Value::Null,
                |v| json!({ "value": v.value, "version": v.version })
            )),
        "durableStateStore.put" => to_json(
            s.durable_state()
                .put(
                    &field::<String>(p, "key")?,
                    p.get("value").cloned().unwrap_or(Value::Null),
                    field(p, "expectedVersion")?,
                )
                .await?,
        ),
        "durableStateStore.delete" => s
            .durable_state()
            .delete(&field::<String>(p, "key")?, field(p, "expectedVersion")?)
            .await
            .map(|()| Value::Null),
        "readModelStore.upsert" => s
            .read_models()
            .upsert(
                &field::<String>(p, "collection")?,
                &field::<String>(p, "id")?,
                p.get("doc").cloned().unwrap_or(Value::Null),
            )
            .await
            .map(|()| Value::Null),
        "readModelStore.get" => Ok(s
            .read_models()
            .get(
                &field::<String>(p, "collection")?,
                &field::<String>(p, "id")?
            )
            .await?
            .map_or(Value::Null, |doc| json!({ "doc": doc }))),
        "readModelStore.query" => {
            let page = s
                .read_models()
                .query(
                    &field::<String>(p, "collection")?,
                    QueryOptions {
                        limit: field(p, "limit")?,
                        cursor: field(p, "cursor")?,
                    },
                )
                .await?;
            Ok(json!({
                "docs": page.docs.into_iter().map(|d| json!({ "id": d.id, "doc": d.doc })).collect::<Vec<_>>(),
                "nextCursor": page.next_cursor,
            }))
        }
        other => Err(StoreError::unsupported(
            other.rsplit_once('.').map_or(other, |(_, m)| m)
        )),
    })
}

/// Opens the store `spec` names: `sqlite:PATH` (a file every process opens) or
/// `postgres://…?schema=NAME`-less URL with `--schema`.
fn open(spec: &str, schema: &str, runtime: &tokio::runtime::Runtime) -> Result<Db, String> {
    if let Some(path) = spec.strip_prefix("sqlite:") {
        if path.is_empty() || path == ":memory:" {
            return Err(format!(
                "--store {spec}: give a database file (sqlite:PATH): the processes of one backend share it, and it outlives a kill"
            ));
        }
        return SqliteStore::open(path)
            .map(Db::Sqlite)
            .map_err(|e| format!("opening {path}: {e}"));
    }
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        return runtime
            .block_on(PgStore::connect(spec, schema))
            .map(Db::Pg)
            .map_err(|e| format!("connecting to {spec} (schema {schema}): {e}"));
    }
    Err(format!(
        "--store {spec:?}: loom store-adapter serves sqlite:PATH or postgres://URL (the in-memory store lives in one process, so it cannot be shared or survive a kill)"
    ))
}

/// Serves the store protocol on stdin and stdout until stdin closes. `Err` when the
/// store cannot be opened or stdout is gone.
pub fn serve(spec: &str, schema: &str) -> Result<(), String> {
    // One runtime for the process, with a worker thread of its own: a PostgreSQL
    // connection's task lives on it, and must keep running between requests (a
    // transaction dropped on an error sends its rollback from there; on a current-thread
    // runtime it would wait for the next request, holding its row locks meanwhile).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a tokio runtime: {e}"))?;
    let db = open(spec, schema, &runtime)?;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| format!("reading stdin: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let request: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                // No id to answer: the framing is broken, so say so and stop.
                return Err(format!("a request line is not JSON: {e}"));
            }
        };
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(json!({}));
        let answer = if method == "hello" {
            Ok(hello(&db))
        } else {
            runtime.block_on(handle(&db, method, &params))
        };
        let response = match answer {
            Ok(result) => json!({ "id": id, "result": result }),
            Err(e) => json!({ "id": id, "error": encode_error(&e) }),
        };
        writeln!(out, "{response}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("writing stdout: {e}"))?;
    }
    Ok(())
}
