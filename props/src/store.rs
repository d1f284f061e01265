//! The store differential: random EventStore operation sequences give identical
//! observable results (values and error kinds) on every reference store (SPI-23, and
//! SPI-04..SPI-14 for the optional methods).
//!
//! The in-memory store is the oracle; SQLite (in memory) always runs; PostgreSQL runs
//! when the crate is built with the `postgres` feature and `LOOM_PG_URL` is set.

use crate::limits::{STORE_BATCH_EVENTS_MAX, STORE_EXECUTIONS_MAX, STORE_OPS_MAX};
use crate::violation::PropertyViolation;
use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use loom_kernel::runtime::block_on;
use loom_kernel::spi::{Anchor, EventStore, FenceToken, StoreError};
use loom_kernel::EventEnvelope;
use loom_stores::{MemoryEventStore, SqliteStore};
use serde_json::json;

/// Which fence an append presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
pub enum FenceChoice {
    /// None.
    None,
    /// The latest token this store handed out for the execution.
    Current,
    /// One less than the latest (a zombie's token).
    Stale,
    /// A token never issued.
    Forged,
}

/// Which anchor `appendIfUnchanged` presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
pub enum AnchorChoice {
    /// The one the last `observe` of this execution returned (or the zero anchor).
    LastObserved,
    /// A fresh observation, taken just before.
    Fresh,
    /// A made-up anchor.
    Forged,
}

/// One EventStore call. Execution ids are `e0..e{STORE_EXECUTIONS_MAX}`, plus the
/// reserved control-stream prefix and the empty id for `exec = 255`.
#[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
pub enum StoreOp {
    /// `append` at the stream's next sequence plus `skew` (wrapping), `n` events.
    Append {
        /// Execution selector.
        exec: u8,
        /// Offset from the true next sequence (0 most useful).
        skew: i8,
        /// Batch size selector.
        n: u8,
        /// The fence presented.
        fence: FenceChoice,
    },
    /// `read`.
    Read {
        /// Execution selector.
        exec: u8,
    },
    /// `readRange(from, to)`.
    ReadRange {
        /// Execution selector.
        exec: u8,
        /// From.
        from: u8,
        /// To.
        to: u8,
    },
    /// `acquireFence`.
    AcquireFence {
        /// Execution selector.
        exec: u8,
    },
    /// `acquireFenceIf`.
    AcquireFenceIf {
        /// Execution selector.
        exec: u8,
        /// The expected current token.
        expected: FenceChoice,
    },
    /// `deleteThrough`.
    DeleteThrough {
        /// Execution selector.
        exec: u8,
        /// Through.
        through: u8,
    },
    /// `observe`.
    Observe {
        /// Execution selector.
        exec: u8,
    },
    /// `appendIfUnchanged`.
    AppendIfUnchanged {
        /// Execution selector.
        exec: u8,
        /// The anchor presented.
        anchor: AnchorChoice,
        /// Batch size selector.
        n: u8,
    },
    /// `deleteExecution`.
    DeleteExecution {
        /// Execution selector.
        exec: u8,
    },
    /// `copyPrefix`.
    CopyPrefix {
        /// Source selector.
        source: u8,
        /// Target selector.
        target: u8,
        /// Through.
        through: u8,
    },
    /// `listExecutions`.
    List,
    /// Pages through `listExecutionsPage` with this limit (0 is invalid on purpose).
    ListPages {
        /// The page size.
        limit: u8,
    },
}

/// A sequence of operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreInput {
    /// The operations, at most [`STORE_OPS_MAX`].
    pub ops: Vec<StoreOp>,
}

impl<'a> Arbitrary<'a> for StoreInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let n = u.int_in_range(0..=STORE_OPS_MAX)?;
        let mut ops = Vec::with_capacity(n);
        for _ in 0..n {
            ops.push(u.arbitrary()?);
        }
        Ok(StoreInput { ops })
    }
}

fn exec_id(sel: u8) -> String {
    match sel {
        255 => String::new(),
        254 => "__loom_quarantine__:c".into(),
        s => format!("e{}", usize::from(s) % STORE_EXECUTIONS_MAX),
    }
}

/// What each store remembers between calls, so choices like "current fence" are
/// resolved per store from its own answers.
#[derive(Default)]
struct Memo {
    fences: std::collections::BTreeMap<String, u64>,
    anchors: std::collections::BTreeMap<String, Anchor>,
}

fn err(e: StoreError) -> String {
    format!("error {}", e.kind.name())
}

fn batch(exec: &str, first: u64, n: u8, tag: usize) -> Vec<EventEnvelope> {
    let n = 1 + usize::from(n) % STORE_BATCH_EVENTS_MAX;
    (0..n as u64)
        .map(|i| EventEnvelope {
            id: format!("{exec}-{tag}-{i}"),
            workflow_id: "flow".into(),
            execution_id: exec.to_owned(),
            event_type: "app.event".into(),
            sequence: first.wrapping_add(i),
            timestamp_ms: 1000 + i as i64,
            payload: json!({"op": tag, "i": i, "nested": {"b": 1, "a": [1.5, "x"]}}).into(),
            metadata: None,
        })
        .collect()
}

fn show_events(r: Result<Vec<EventEnvelope>, StoreError>) -> String {
    match r {
        Ok(evs) => serde_json::to_string(&evs).unwrap_or_default(),
        Err(e) => err(e),
    }
}

fn fence_of(choice: FenceChoice, memo: &Memo, exec: &str) -> Option<FenceToken> {
    let cur = memo.fences.get(exec).copied().unwrap_or(0);
    match choice {
        FenceChoice::None => None,
        FenceChoice::Current => (cur > 0).then_some(FenceToken(cur)),
        FenceChoice::Stale => Some(FenceToken(cur.saturating_sub(1))),
        FenceChoice::Forged => Some(FenceToken(cur + 7)),
    }
}

/// Runs `ops` on `store`, returning one observation per operation. `wait` drives a
/// store's futures (the kernel's `block_on` for stores that never wait on I/O).
fn run<S: EventStore>(
    store: &S,
    ops: &[StoreOp],
    wait: &dyn Fn(&mut dyn FnMut() -> String) -> String,
) -> Vec<String> {
    let mut memo = Memo::default();
    let mut out = Vec::with_capacity(ops.len());
    for (tag, op) in ops.iter().enumerate() {
        let mut call = || -> String { block_on(one(store, op, tag, &mut memo)) };
        out.push(wait(&mut call));
    }
    out
}

async fn next_sequence<S: EventStore>(store: &S, exec: &str) -> u64 {
    match store.read(exec).await {
        Ok(evs) => evs.last().map_or(0, |e| e.sequence + 1),
        Err(_) => 0,
    }
}

async fn one<S: EventStore>(store: &S, op: &StoreOp, tag: usize, memo: &mut Memo) -> String {
    {
        match op {
            StoreOp::Append {
                exec,
                skew,
                n,
                fence,
            } => {
                let id = exec_id(*exec);
                // The true next sequence survives deleteThrough via observe when claimed.
                let next = match store.observe(&id).await {
                    Ok(a) => a.next_sequence,
                    Err(_) => next_sequence(store, &id).await,
                };
                let expected = next.wrapping_add_signed(i64::from(*skew % 3));
                let f = fence_of(*fence, memo, &id);
                match store
                    .append(&id, expected, batch(&id, expected, *n, tag), f)
                    .await
                {
                    Ok(ack) => format!("ok {ack:?}"),
                    Err(e) => err(e),
                }
            }
            StoreOp::Read { exec } => show_events(store.read(&exec_id(*exec)).await),
            StoreOp::ReadRange { exec, from, to } => show_events(
                store
                    .read_range(&exec_id(*exec), u64::from(*from % 8), u64::from(*to % 8))
                    .await,
            ),
            StoreOp::AcquireFence { exec } => {
                let id = exec_id(*exec);
                match store.acquire_fence(&id).await {
                    Ok(t) => {
                        memo.fences.insert(id, t.0);
                        format!("ok {}", t.0)
                    }
                    Err(e) => err(e),
                }
            }
            StoreOp::AcquireFenceIf { exec, expected } => {
                let id = exec_id(*exec);
                let want = fence_of(*expected, memo, &id);
                match store.acquire_fence_if(&id, want).await {
                    Ok(t) => {
                        memo.fences.insert(id, t.0);
                        format!("ok {}", t.0)
                    }
                    Err(e) => err(e),
                }
            }
            StoreOp::DeleteThrough { exec, through } => {
                match store
                    .delete_through(&exec_id(*exec), u64::from(*through % 8))
                    .await
                {
                    Ok(n) => format!("ok {n}"),
                    Err(e) => err(e),
                }
            }
            StoreOp::Observe { exec } => {
                let id = exec_id(*exec);
                match store.observe(&id).await {
                    Ok(a) => {
                        memo.anchors.insert(id, a);
                        format!("ok next {} fence {}", a.next_sequence, a.fence)
                    }
                    Err(e) => err(e),
                }
            }
            StoreOp::AppendIfUnchanged { exec, anchor, n } => {
                let id = exec_id(*exec);
                let a = match anchor {
                    AnchorChoice::LastObserved => {
                        memo.anchors.get(&id).copied().unwrap_or(Anchor {
                            incarnation: 0,
                            next_sequence: 0,
                            fence: 0,
                        })
                    }
                    AnchorChoice::Fresh => match store.observe(&id).await {
                        Ok(a) => a,
                        Err(e) => return err(e),
                    },
                    AnchorChoice::Forged => Anchor {
                        incarnation: 99,
                        next_sequence: 1,
                        fence: 0,
                    },
                };
                match store
                    .append_if_unchanged(&id, a, batch(&id, a.next_sequence, *n, tag))
                    .await
                {
                    Ok(ack) => format!("ok {ack:?}"),
                    Err(e) => err(e),
                }
            }
            StoreOp::DeleteExecution { exec } => {
                match store.delete_execution(&exec_id(*exec)).await {
                    Ok(b) => format!("ok {b}"),
                    Err(e) => err(e),
                }
            }
            StoreOp::CopyPrefix {
                source,
                target,
                through,
            } => match store
                .copy_prefix(
                    &exec_id(*source),
                    &exec_id(*target),
                    u64::from(*through % 8),
                )
                .await
            {
                Ok(ack) => format!("ok {ack:?}"),
                Err(e) => err(e),
            },
            StoreOp::List => match store.list_executions().await {
                Ok(ids) => format!("ok {ids:?}"),
                Err(e) => err(e),
            },
            StoreOp::ListPages { limit } => {
                let mut cursor = None;
                let mut pages = Vec::new();
                for _ in 0..=STORE_EXECUTIONS_MAX + 2 {
                    match store
                        .list_executions_page(cursor.clone(), usize::from(*limit % 4))
                        .await
                    {
                        Ok(p) => {
                            pages.push(format!("{:?}", p.ids));
                            cursor = p.next_cursor;
                            if cursor.is_none() {
                                break;
                            }
                        }
                        Err(e) => {
                            pages.push(err(e));
                            break;
                        }
                    }
                }
                format!("pages {}", pages.join(" "))
            }
        }
    }
}

/// SPI-23 and the optional methods: the same operations give the same observations on
/// the in-memory store (the oracle), SQLite, and PostgreSQL when configured.
/// Incarnation numbers are compared only through their effects (an anchor's equality),
/// because each store counts them from its own start.
pub fn store_differential(input: &StoreInput) -> Result<(), PropertyViolation> {
    let direct: &dyn Fn(&mut dyn FnMut() -> String) -> String = &|f| f();
    let oracle = run(&MemoryEventStore::new(), &input.ops, direct);
    let sqlite = SqliteStore::open_in_memory().map_err(|e| {
        PropertyViolation::new(
            "SPI-23",
            None,
            "SQLite store does not open",
            "a store",
            e.to_string(),
        )
    })?;
    let got = run(&sqlite.events(), &input.ops, direct);
    compare("sqlite", &input.ops, &oracle, &got)?;
    #[cfg(feature = "postgres")]
    if let Some(got) = postgres::run_pg(&input.ops)? {
        compare("postgres", &input.ops, &oracle, &got)?;
    }
    Ok(())
}

fn compare(
    name: &str,
    ops: &[StoreOp],
    oracle: &[String],
    got: &[String],
) -> Result<(), PropertyViolation> {
    for (i, (a, b)) in oracle.iter().zip(got).enumerate() {
        if a != b {
            return Err(PropertyViolation::new(
                "SPI-23",
                Some(i),
                format!(
                    "{name} differs from the in-memory store at {:?}; ops so far: {:?}",
                    ops[i],
                    &ops[..=i]
                ),
                a.clone(),
                b.clone(),
            ));
        }
    }
    Ok(())
}

#[cfg(feature = "postgres")]
mod postgres {
    //! The PostgreSQL leg: a fresh schema per run on `LOOM_PG_URL`.
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    static RUN: AtomicU64 = AtomicU64::new(0);

    pub(super) fn run_pg(ops: &[StoreOp]) -> Result<Option<Vec<String>>, PropertyViolation> {
        let Ok(url) = std::env::var("LOOM_PG_URL") else {
            return Ok(None);
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                PropertyViolation::new("SPI-23", None, "tokio runtime", "a runtime", e.to_string())
            })?;
        let schema = format!(
            "loom_props_{}_{}",
            std::process::id(),
            RUN.fetch_add(1, Ordering::Relaxed)
        );
        let store = rt
            .block_on(loom_stores::PgStore::connect_fresh(&url, &schema))
            .map_err(|e| {
                PropertyViolation::new(
                    "SPI-23",
                    None,
                    "PostgreSQL store does not open",
                    "a store",
                    e.to_string(),
                )
            })?;
        let events = store.events();
        let mut memo = Memo::default();
        let out = ops
            .iter()
            .enumerate()
            .map(|(tag, op)| rt.block_on(one(&events, op, tag, &mut memo)))
            .collect();
        Ok(Some(out))
    }
}
