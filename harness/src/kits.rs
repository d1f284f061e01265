//! The kits part: the SPI conformance kits (`loom-conformance`) against a store named
//! by a string: `memory`, `sqlite[:PATH]`, `postgres://…` or `cmd:COMMAND` (any program
//! speaking the stdio store protocol, docs/protocols/store.md).
//!
//! Every selected case yields a result: a kit whose SPI the store does not implement is
//! reported case by case as `skip-not-claimed`, never left out. A store that cannot be
//! opened is a setup error (no run, no report); a `cmd:` adapter that fails its
//! handshake is one `error` result, never an empty run.

use indicatif::{ProgressBar, ProgressStyle};
use loom_conformance::adapter::{apply_shutdown, FleetHooks, StdioHooks, ADAPTER_SUITE};
use loom_conformance::kits::archive_store::ArchiveStoreKit;
use loom_conformance::kits::branch_registry::BranchRegistryKit;
use loom_conformance::kits::concurrency::{ConcurrencyKit, Handles};
use loom_conformance::kits::content_store::ContentStoreKit;
use loom_conformance::kits::dispatcher::DispatcherKit;
use loom_conformance::kits::durability::DurabilityKit;
use loom_conformance::kits::durable_state_store::DurableStateStoreKit;
use loom_conformance::kits::event_store::EventStoreKit;
use loom_conformance::kits::lifecycle::LifecycleKit;
use loom_conformance::kits::read_model_store::ReadModelStoreKit;
use loom_conformance::kits::snapshot_store::SnapshotStoreKit;
use loom_conformance::kits::timer_store::TimerStoreKit;
use loom_conformance::kits::{self, KIT_NAMES};
use loom_conformance::runner::case_selected;
use loom_conformance::{run_kit, CaseHooks, CaseInfo, Ctx, Kit, NoHooks, RunOptions, KITS_AREA};
use loom_report::CaseResult;
use loom_store_client::{self as stdio, StdioStore};
use loom_stores::memory::{
    MemoryArchiveStore, MemoryBranchRegistry, MemoryDispatcher, MemoryEventStore,
    MemorySnapshotStore, MemoryTimerStore,
};
use loom_stores::plugin_memory::{
    MemoryContentStore, MemoryDurableStateStore, MemoryReadModelStore,
};
use loom_stores::{PgStore, SqliteStore};
use serde_json::Value;
use std::future::Future;

/// The area kit results are written under.
pub const AREA: &str = KITS_AREA;

/// What to run: which store, which kits, which cases.
#[derive(Clone, Debug)]
pub struct KitOptions {
    /// `memory`, `sqlite[:PATH]`, `postgres://…` or `cmd:COMMAND`.
    pub store: String,
    /// Kits to run; empty means every kit.
    pub kits: Vec<String>,
    /// Only cases whose id (or KIT/ID) contains this text.
    pub case_filter: Option<String>,
    /// Time limits for a `cmd:` adapter.
    pub limits: crate::AdapterLimits,
    /// Draw a progress bar on stderr.
    pub show_progress: bool,
    /// Failures allowed before the run stops (shared with the other parts of a check).
    pub budget: loom_report::FailureBudget,
    /// Run at most this many selected cases of each kit (`--smoke`).
    pub cases_per_kit: Option<usize>,
    /// Clients started on one backend for the concurrency kit (a `cmd:` adapter is
    /// started this many times; an in-process store gets one connection per client).
    pub clients: usize,
    /// A command that restarts a `cmd:` adapter's backend after each deliberate kill of
    /// the durability kit (`--restart-backend`); `None` restarts only the adapter.
    pub restart_backend: Option<String>,
    /// Where a failed concurrent case against a `cmd:` store writes its replay file
    /// (`None`: nowhere).
    pub replay_dir: Option<std::path::PathBuf>,
    /// Replay this failed concurrent case's interleaving instead of recording one.
    pub concurrency_replay: Option<crate::concurrency_replay::ReplayFile>,
}

impl KitOptions {
    /// Every kit against `store`, default limits, no progress bar.
    pub fn new(store: impl Into<String>) -> Self {
        KitOptions {
            store: store.into(),
            kits: Vec::new(),
            case_filter: None,
            limits: crate::AdapterLimits::default(),
            show_progress: false,
            budget: loom_report::FailureBudget::unlimited(),
            cases_per_kit: None,
            clients: loom_conformance::kits::concurrency::CLIENTS_DEFAULT,
            restart_backend: None,
            replay_dir: None,
            concurrency_replay: None,
        }
    }
}

/// The store kinds a store string can name, for messages.
pub const STORE_SYNTAX: &str = "memory, sqlite[:PATH], postgres://URL or cmd:\"COMMAND\"";

/// Checks a store string before anything runs: its syntax, a command after `cmd:`, and
/// that a `sqlite:PATH` file can be opened. `Err` says what is wrong; the run could not
/// be set up (the CLI's exit status 2). Whether a `cmd:` adapter starts and answers is
/// not checked here: that is a result of the run.
pub fn preflight(store: &str) -> Result<(), String> {
    if store == "memory" || store == "sqlite" || store == "sqlite::memory:" {
        return Ok(());
    }
    if let Some(path) = store.strip_prefix("sqlite:") {
        if path.is_empty() {
            return Ok(());
        }
        return SqliteStore::open(path)
            .map(drop)
            .map_err(|e| format!("the store {store} cannot be opened: opening {path}: {e}"));
    }
    if store.starts_with("postgres://") || store.starts_with("postgresql://") {
        return Ok(());
    }
    if let Some(command) = store.strip_prefix("cmd:") {
        if command.trim().is_empty() {
            return Err(
                "the store cmd: names no command: give the adapter's command line, e.g. --store 'cmd:python3 adapter.py'"
                    .into(),
            );
        }
        return Ok(());
    }
    Err(format!("unknown store {store:?}: use {STORE_SYNTAX}"))
}

/// Runs the selected kits. `Err` means the run could not be set up: an unknown kit, a
/// store string that names no store, a database that cannot be opened or connected to
/// (the CLI exits 2 and writes no report). A `cmd:` adapter that does not start or fails
/// its handshake is a result of the run (`adapter/handshake`, an `error`), since that is
/// the store under test failing. Returns the results and a `cmd:` store's `hello`.
pub fn run(options: &KitOptions) -> Result<(Vec<CaseResult>, Option<Value>), String> {
    preflight(&options.store)?;
    if options.clients == 0 || options.clients > loom_conformance::kits::concurrency::CLIENTS_MAX {
        return Err(format!(
            "--clients {} is out of range: give 1 to {} (1 runs no concurrent case)",
            options.clients,
            loom_conformance::kits::concurrency::CLIENTS_MAX
        ));
    }
    if let Some(cmd) = &options.restart_backend {
        if cmd.trim().is_empty() {
            return Err("--restart-backend needs a command (run by sh -c), e.g. --restart-backend 'redis-cli -p 6390 shutdown nosave; redis-server --port 6390 --daemonize yes'".into());
        }
        if !options.store.starts_with("cmd:") {
            return Err(format!(
                "--restart-backend restarts a cmd: adapter's backend between the durability kit's kills, but --store {} is an in-process store, which the durability kit does not kill; give --store 'cmd:COMMAND'",
                options.store
            ));
        }
    }
    run_selected(options)
}

/// One run: options, progress and the results so far.
struct Run {
    opts: RunOptions,
    bar: Option<ProgressBar>,
    results: Vec<CaseResult>,
    kits: Vec<String>,
    clients: usize,
    restart_backend: Option<String>,
    store: String,
    replay_dir: Option<std::path::PathBuf>,
    concurrency_replay: Option<crate::concurrency_replay::ReplayFile>,
}

impl Run {
    fn wants(&self, kit: &str) -> bool {
        self.kits.iter().any(|k| k == kit)
    }

    fn selected(&self, kit: &str, cases: &[CaseInfo]) -> usize {
        cases
            .iter()
            .filter(|c| case_selected(self.opts.case_filter.as_deref(), kit, c.id))
            .count()
    }

    async fn kit<S, K, F, Fut>(&mut self, factory: F, hooks: &dyn CaseHooks)
    where
        K: Kit<S>,
        F: FnMut(&Ctx, bool) -> Fut,
        Fut: Future<Output = Result<S, String>>,
    {
        if !self.wants(K::NAME) {
            return;
        }
        let bar = self.bar.clone();
        let mut on_result = |r: &CaseResult| {
            if let Some(b) = &bar {
                b.set_message(format!("{}/{}", r.suite, r.case_id));
                b.inc(1);
            }
        };
        let results = run_kit::<S, K, F, Fut>(factory, &self.opts, hooks, &mut on_result).await;
        self.results.extend(results);
    }

    /// The concurrency kit's cases as `skip-not-claimed` with `why`, or `false` when
    /// they can run (at least two clients).
    fn concurrency_skipped(&mut self) -> bool {
        if self.clients >= 2 {
            return false;
        }
        self.skip::<MemoryFleet, ConcurrencyKit>(&format!(
            "--clients {}: the concurrent cases need at least two clients on one backend",
            self.clients
        ));
        true
    }

    /// The durability kit's cases as `skip-not-claimed` for a store inside loom's own
    /// process (killing it would end loom).
    fn durability_in_process(&mut self) {
        self.skip::<StdioStore, DurabilityKit>(
            "the store runs inside loom's process, which a kill would end: the durability cases kill a cmd: adapter's process",
        );
    }

    /// Every selected case of kit `K` as `skip-not-claimed`, with `why`.
    fn skip<S, K: Kit<S>>(&mut self, why: &str) {
        if !self.wants(K::NAME) {
            return;
        }
        let per_kit = self.opts.cases_per_kit.unwrap_or(usize::MAX);
        let selected = K::cases()
            .iter()
            .filter(|c| case_selected(self.opts.case_filter.as_deref(), K::NAME, c.id));
        for c in selected.take(per_kit) {
            {
                let r = CaseResult::skip_not_claimed(
                    KITS_AREA,
                    K::NAME,
                    c.id,
                    c.rules.iter().copied(),
                    why,
                );
                if let Some(b) = &self.bar {
                    b.inc(1);
                }
                self.results.push(r);
            }
        }
    }
}

/// The memory stores' fleet: every client is a clone of one store (one backend, many
/// threads).
type MemoryFleet = Handles<
    MemoryEventStore,
    MemoryDispatcher,
    MemoryDurableStateStore,
    MemoryTimerStore,
    MemoryReadModelStore,
>;

/// `n` handles on each of the shared memory stores.
fn memory_fleet(n: usize) -> MemoryFleet {
    Handles {
        events: Some(vec![MemoryEventStore::new(); n]),
        dispatchers: Some(vec![MemoryDispatcher::new(); n]),
        durable_state: Some(vec![MemoryDurableStateStore::new(); n]),
        timers: Some(vec![MemoryTimerStore::new(); n]),
        read_models: Some(vec![MemoryReadModelStore::new(); n]),
    }
}

/// One handle per connection on each SPI of the SQLite stores `conns` (one file).
fn sqlite_fleet(
    conns: &[SqliteStore],
) -> Handles<
    loom_stores::sqlite::SqliteEventStore,
    loom_stores::sqlite::SqliteDispatcher,
    loom_stores::sqlite_plugin::SqliteDurableStateStore,
    loom_stores::sqlite::SqliteTimerStore,
    loom_stores::sqlite_plugin::SqliteReadModelStore,
> {
    Handles {
        events: Some(conns.iter().map(SqliteStore::events).collect()),
        dispatchers: Some(conns.iter().map(SqliteStore::dispatcher).collect()),
        durable_state: Some(conns.iter().map(SqliteStore::durable_state).collect()),
        timers: Some(conns.iter().map(SqliteStore::timers).collect()),
        read_models: Some(conns.iter().map(SqliteStore::read_models).collect()),
    }
}

/// One handle per connection on each SPI of the PostgreSQL stores `conns` (one schema).
fn pg_fleet(
    conns: &[PgStore],
) -> Handles<
    loom_stores::postgres::PgEventStore,
    loom_stores::postgres_more::PgDispatcher,
    loom_stores::postgres_plugin::PgDurableStateStore,
    loom_stores::postgres_more::PgTimerStore,
    loom_stores::postgres_plugin::PgReadModelStore,
> {
    Handles {
        events: Some(conns.iter().map(PgStore::events).collect()),
        dispatchers: Some(conns.iter().map(PgStore::dispatcher).collect()),
        durable_state: Some(conns.iter().map(PgStore::durable_state).collect()),
        timers: Some(conns.iter().map(PgStore::timers).collect()),
        read_models: Some(conns.iter().map(PgStore::read_models).collect()),
    }
}

/// Removes a SQLite database file and its WAL files; a file that is already gone is
/// fine.
fn remove_sqlite_files(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(std::path::PathBuf::from(p));
    }
}

fn ok<S>(s: S) -> std::future::Ready<Result<S, String>> {
    std::future::ready(Ok(s))
}

/// A PostgreSQL store for one case: the run's shared schema, or a fresh one.
type PgFactory = std::pin::Pin<Box<dyn Future<Output = Result<PgStore, String>>>>;

/// The handle `handle` gives on the store `db` resolves to.
async fn pick<S>(db: PgFactory, handle: impl FnOnce(&PgStore) -> S) -> Result<S, String> {
    db.await.map(|d| handle(&d))
}

/// Every kit with its cases, in the order a run takes them.
pub const KIT_CASES: [(&str, &[CaseInfo]); 12] = [
    ("event-store", kits::event_store::CASES),
    ("snapshot-store", kits::snapshot_store::CASES),
    ("archive-store", kits::archive_store::CASES),
    ("lifecycle", kits::lifecycle::CASES),
    ("branch-registry", kits::branch_registry::CASES),
    ("dispatcher", kits::dispatcher::CASES),
    ("timer-store", kits::timer_store::CASES),
    ("content-store", kits::content_store::CASES),
    ("durable-state-store", kits::durable_state_store::CASES),
    ("read-model-store", kits::read_model_store::CASES),
    ("concurrency", kits::concurrency::CASES),
    ("durability", kits::durability::CASES),
];

/// The cases a run with these `kits` (empty: all) and `case_filter` would run, per kit,
/// without running anything (`loom conform --list`). `Err` names an unknown kit.
pub fn list(
    kits: &[String],
    case_filter: Option<&str>,
) -> Result<Vec<(&'static str, Vec<&'static CaseInfo>)>, String> {
    for k in kits {
        if !KIT_NAMES.contains(&k.as_str()) {
            return Err(format!("unknown kit {k:?}; kits: {}", KIT_NAMES.join(", ")));
        }
    }
    Ok(KIT_CASES
        .iter()
        .filter(|(k, _)| kits.is_empty() || kits.iter().any(|w| w == k))
        .map(|(k, cases)| {
            let mine = cases
                .iter()
                .filter(|c| case_selected(case_filter, k, c.id))
                .collect();
            (*k, mine)
        })
        .collect())
}

/// The concurrency kit against a `cmd:` adapter: N processes of the same command, client
/// 0 being `first` (already running). Skipped, visibly, when the adapter does not say
/// its processes share one backend; a client that does not start is an error result.
async fn run_stdio_concurrency(run: &mut Run, first: &StdioStore, config: &stdio::StdioConfig) {
    let n = run.clients;
    if !first.shared_backend() {
        run.skip::<MemoryFleet, ConcurrencyKit>(
            "the adapter's hello does not answer sharedBackend: true (store protocol 1.2), so its processes may not share one backend and no concurrent case can run",
        );
        return;
    }
    let mut fleet = vec![first.clone()];
    for i in 1..n {
        match StdioStore::start(&config.as_client(i, n)) {
            Ok(c) => fleet.push(c),
            Err(fault) => {
                run.results.push(CaseResult::error(
                    KITS_AREA,
                    ADAPTER_SUITE,
                    "adapter/handshake",
                    Vec::<String>::new(),
                    format!("client {i} of {n}: {}", fault.message),
                ));
                run.skip::<MemoryFleet, ConcurrencyKit>(&format!(
                    "client {i} of {n} did not start (see adapter/handshake)"
                ));
                for c in &fleet[1..] {
                    apply_shutdown(&mut run.results, c.shutdown());
                }
                return;
            }
        }
    }
    let serves = |spi: &str| first.implements(spi).then(|| fleet.clone());
    let handles = Handles {
        events: serves(stdio::SPI_EVENT_STORE),
        dispatchers: serves(stdio::SPI_DISPATCHER),
        durable_state: serves(stdio::SPI_DURABLE_STATE_STORE),
        timers: serves(stdio::SPI_TIMER_STORE),
        read_models: serves(stdio::SPI_READ_MODEL_STORE),
    };
    let schedule = loom_store_client::schedule::Schedule::default();
    for c in &fleet {
        c.set_schedule(Some(schedule.clone()));
    }
    let hooks = ScheduleHooks {
        inner: FleetHooks(&fleet),
        schedule: schedule.clone(),
        replay: run.concurrency_replay.as_ref().map(|f| f.steps.clone()),
        current: std::cell::RefCell::new(String::new()),
        recorded: std::cell::RefCell::new(std::collections::BTreeMap::new()),
    };
    let before = run.results.len();
    // A replay enforces the order of the protocol's sends and answers, not the timing
    // inside the store's processes, so it runs the case again, up to a bound, until the
    // race goes the same way; a fixed store passes every attempt.
    let attempts = if run.concurrency_replay.is_some() {
        REPLAY_ATTEMPTS_MAX
    } else {
        1
    };
    let mut attempt = 0;
    loop {
        attempt += 1;
        run.results.truncate(before);
        run.kit::<_, ConcurrencyKit, _, _>(|_, _| ok(handles.clone()), &hooks)
            .await;
        let failed = run.results[before..].iter().any(|r| r.status.is_failure());
        if failed || attempt >= attempts {
            break;
        }
    }
    for c in &fleet {
        c.set_schedule(None);
    }
    let recorded = hooks.recorded.into_inner();
    for r in &mut run.results[before..] {
        let Some((steps, divergence)) = recorded.get(&r.case_id) else {
            continue;
        };
        if run.concurrency_replay.is_some() {
            // The replay says how faithfully it re-ran the interleaving, and how often.
            let how = match divergence {
                None => format!(
                    "followed the recorded interleaving of {} steps to the end",
                    steps.len()
                ),
                Some(d) => format!(
                    "followed the recorded interleaving until it diverged ({d}), then ran freely"
                ),
            };
            let note = if r.status.is_failure() {
                format!("the replay failed again on attempt {attempt} of at most {attempts}; the last attempt {how}")
            } else {
                format!("the replay passed all {attempts} attempts; the last attempt {how}")
            };
            r.message = Some(match r.message.take() {
                Some(m) => format!("{m}\n{note}"),
                None => note,
            });
            continue;
        }
        if r.status != loom_report::Status::Fail {
            continue;
        }
        let Some(dir) = &run.replay_dir else {
            continue;
        };
        let file = crate::concurrency_replay::ReplayFile {
            kind: crate::concurrency_replay::KIND.into(),
            version: crate::concurrency_replay::VERSION,
            store: run.store.clone(),
            clients: n,
            case: r.case_id.clone(),
            rules: r.rules.clone(),
            message: r.message.clone().unwrap_or_default(),
            steps: steps.clone(),
        };
        match file.write(dir) {
            Ok(path) => {
                r.reproduce = Some(format!(
                    "loom conform --store {} --replay {}",
                    crate::shell::word(&run.store),
                    crate::shell::word(&path.display().to_string())
                ));
            }
            Err(e) => eprintln!("warning: {e}"),
        }
    }
    for c in &fleet[1..] {
        apply_shutdown(&mut run.results, c.shutdown());
    }
}

/// How many times a concurrency replay runs its case under the recorded interleaving
/// before it says the failure did not come back.
pub const REPLAY_ATTEMPTS_MAX: usize = 10;

/// A case's recorded steps and, in a replay, where it diverged from them.
type CaseSchedule = (Vec<loom_store_client::schedule::Step>, Option<String>);

/// The fleet's hooks, plus the schedule: recorded afresh (or set to replay) before each
/// case, kept per case after it.
struct ScheduleHooks<'a> {
    inner: FleetHooks<'a>,
    schedule: loom_store_client::schedule::Schedule,
    replay: Option<Vec<loom_store_client::schedule::Step>>,
    current: std::cell::RefCell<String>,
    /// Per case id: its steps and, in a replay, where it diverged.
    recorded: std::cell::RefCell<std::collections::BTreeMap<String, CaseSchedule>>,
}

impl CaseHooks for ScheduleHooks<'_> {
    fn before_case(&self, kit: &str, case: &str, cx: &Ctx) -> Result<(), String> {
        match &self.replay {
            Some(steps) => self.schedule.replay(steps.clone()),
            None => self.schedule.record(),
        }
        *self.current.borrow_mut() = case.to_string();
        self.inner.before_case(kit, case, cx)
    }
    fn after_case(&self) -> Option<(loom_report::Status, String)> {
        let case = self.current.borrow().clone();
        self.recorded
            .borrow_mut()
            .insert(case, (self.schedule.steps(), self.schedule.divergence()));
        self.inner.after_case()
    }
}

pub(crate) fn run_selected(
    options: &KitOptions,
) -> Result<(Vec<CaseResult>, Option<Value>), String> {
    let (store, kits, adapter, show_progress, cases_per_kit) = (
        options.store.as_str(),
        &options.kits,
        options.limits,
        options.show_progress,
        options.cases_per_kit,
    );
    let kits: Vec<String> = if kits.is_empty() {
        KIT_NAMES.iter().map(|k| k.to_string()).collect()
    } else {
        for k in kits {
            if !KIT_NAMES.contains(&k.as_str()) {
                return Err(format!("unknown kit {k:?}; kits: {}", KIT_NAMES.join(", ")));
            }
        }
        kits.to_vec()
    };
    let mut run = Run {
        opts: RunOptions {
            case_filter: options.case_filter.clone(),
            budget: options.budget.clone(),
            cases_per_kit,
            ..RunOptions::default()
        },
        bar: None,
        results: Vec::new(),
        kits,
        clients: options.clients,
        restart_backend: options.restart_backend.clone(),
        store: options.store.clone(),
        replay_dir: options.replay_dir.clone(),
        concurrency_replay: options.concurrency_replay.clone(),
    };
    let total: usize = KIT_CASES
        .iter()
        .filter(|(k, _)| run.wants(k))
        .map(|(k, c)| run.selected(k, c).min(cases_per_kit.unwrap_or(usize::MAX)))
        .sum();
    if show_progress {
        let bar = ProgressBar::new(total as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}") {
            bar.set_style(style);
        }
        run.bar = Some(bar);
    }
    let hello = loom_conformance::block_on(run_backend(&mut run, store, adapter))??;
    if let Some(bar) = &run.bar {
        bar.finish_and_clear();
    }
    Ok((run.results, hello))
}

async fn run_backend(
    run: &mut Run,
    store: &str,
    limits: crate::AdapterLimits,
) -> Result<Option<Value>, String> {
    if store == "memory" {
        run.kit::<_, EventStoreKit, _, _>(|_, _| ok(MemoryEventStore::new()), &NoHooks)
            .await;
        run.kit::<_, SnapshotStoreKit, _, _>(|_, _| ok(MemorySnapshotStore::new()), &NoHooks)
            .await;
        run.kit::<_, ArchiveStoreKit, _, _>(|_, _| ok(MemoryArchiveStore::new()), &NoHooks)
            .await;
        run.kit::<_, LifecycleKit, _, _>(
            |_, _| {
                ok((
                    MemoryEventStore::new(),
                    MemorySnapshotStore::new(),
                    MemoryArchiveStore::new(),
                ))
            },
            &NoHooks,
        )
        .await;
        run.kit::<_, BranchRegistryKit, _, _>(|_, _| ok(MemoryBranchRegistry::new()), &NoHooks)
            .await;
        run.kit::<_, DispatcherKit, _, _>(|_, _| ok(MemoryDispatcher::new()), &NoHooks)
            .await;
        run.kit::<_, TimerStoreKit, _, _>(|_, _| ok(MemoryTimerStore::new()), &NoHooks)
            .await;
        run.kit::<_, ContentStoreKit, _, _>(|_, _| ok(MemoryContentStore::new()), &NoHooks)
            .await;
        run.kit::<_, DurableStateStoreKit, _, _>(
            |_, _| ok(MemoryDurableStateStore::new()),
            &NoHooks,
        )
        .await;
        run.kit::<_, ReadModelStoreKit, _, _>(|_, _| ok(MemoryReadModelStore::new()), &NoHooks)
            .await;
        if !run.concurrency_skipped() {
            let n = run.clients;
            run.kit::<_, ConcurrencyKit, _, _>(|_, _| ok(memory_fleet(n)), &NoHooks)
                .await;
        }
        run.durability_in_process();
        return Ok(None);
    }
    if store == "sqlite" || store == "sqlite::memory:" || store.starts_with("sqlite:") {
        let path = store
            .strip_prefix("sqlite:")
            .filter(|p| !p.is_empty() && *p != ":memory:");
        // A shared file when a path is given (cases stay apart by their ids); otherwise,
        // and for the dispatcher and timer kits whose state is global, a fresh in-memory
        // database of the same implementation per case.
        let shared = match path {
            Some(p) => Some(SqliteStore::open(p).map_err(|e| format!("opening {p}: {e}"))?),
            None => None,
        };
        let db = |fresh: bool| -> Result<SqliteStore, String> {
            match (&shared, fresh) {
                (Some(s), false) => Ok(s.clone()),
                _ => SqliteStore::open_in_memory().map_err(|e| e.to_string()),
            }
        };
        run.kit::<_, EventStoreKit, _, _>(
            |_, f| std::future::ready(db(f).map(|d| d.events())),
            &NoHooks,
        )
        .await;
        run.kit::<_, SnapshotStoreKit, _, _>(
            |_, f| std::future::ready(db(f).map(|d| d.snapshots())),
            &NoHooks,
        )
        .await;
        run.kit::<_, ArchiveStoreKit, _, _>(
            |_, f| std::future::ready(db(f).map(|d| d.archive())),
            &NoHooks,
        )
        .await;
        run.kit::<_, LifecycleKit, _, _>(
            |_, f| std::future::ready(db(f).map(|d| (d.events(), d.snapshots(), d.archive()))),
            &NoHooks,
        )
        .await;
        run.kit::<_, BranchRegistryKit, _, _>(
            |_, f| std::future::ready(db(f).map(|d| d.branches())),
            &NoHooks,
        )
        .await;
        run.kit::<_, DispatcherKit, _, _>(
            |_, f| std::future::ready(db(f).map(|d| d.dispatcher())),
            &NoHooks,
        )
        .await;
        run.kit::<_, TimerStoreKit, _, _>(
            |_, f| std::future::ready(db(f).map(|d| d.timers())),
            &NoHooks,
        )
        .await;
        run.kit::<_, ContentStoreKit, _, _>(
            |_, f| std::future::ready(db(f).map(|d| d.content())),
            &NoHooks,
        )
        .await;
        run.kit::<_, DurableStateStoreKit, _, _>(
            |_, f| std::future::ready(db(f).map(|d| d.durable_state())),
            &NoHooks,
        )
        .await;
        run.kit::<_, ReadModelStoreKit, _, _>(
            |_, f| std::future::ready(db(f).map(|d| d.read_models())),
            &NoHooks,
        )
        .await;
        if !run.concurrency_skipped() {
            // One connection per client on one database file, fresh per case (the
            // dispatcher's queue is global); the files are removed afterwards.
            let n = run.clients;
            let mut files = Vec::new();
            run.kit::<_, ConcurrencyKit, _, _>(
                |cx, _| {
                    let path = std::env::temp_dir().join(format!(
                        "loom-concurrency-{}-{}db",
                        std::process::id(),
                        cx.namespace()
                    ));
                    remove_sqlite_files(&path);
                    files.push(path.clone());
                    let conns: Result<Vec<SqliteStore>, String> = (0..n)
                        .map(|_| {
                            SqliteStore::open(&path)
                                .map_err(|e| format!("opening {}: {e}", path.display()))
                        })
                        .collect();
                    std::future::ready(conns.map(|c| sqlite_fleet(&c)))
                },
                &NoHooks,
            )
            .await;
            for f in &files {
                remove_sqlite_files(f);
            }
        }
        run.durability_in_process();
        return Ok(None);
    }
    if store.starts_with("postgres://") || store.starts_with("postgresql://") {
        let schema = format!("loom_conform_{}", loom_conformance::runner::fresh_run_id());
        let pg = PgStore::connect_fresh(store, &schema)
            .await
            .map_err(|e| format!("connecting to {store}: {e}"))?;
        // The dispatcher and timer kits need a store holding no other case's data: their
        // cases share one more schema, emptied before each (`PgStore::reset`, a few
        // DELETEs) instead of a schema created and dropped per case; it is dropped when
        // the run ends.
        let case_schema = format!("{schema}_case");
        let case_pg = PgStore::connect_fresh(store, &case_schema)
            .await
            .map_err(|e| format!("connecting to {store} (schema {case_schema}): {e}"))?;
        let pg_for = |fresh: bool| -> PgFactory {
            if !fresh {
                return Box::pin(std::future::ready(Ok(pg.clone())));
            }
            let db = case_pg.clone();
            Box::pin(async move {
                db.reset()
                    .await
                    .map(|()| db.clone())
                    .map_err(|e| format!("emptying the case schema {}: {e}", db.schema()))
            })
        };
        run.kit::<_, EventStoreKit, _, _>(|_, f| pick(pg_for(f), PgStore::events), &NoHooks)
            .await;
        run.kit::<_, SnapshotStoreKit, _, _>(|_, f| pick(pg_for(f), PgStore::snapshots), &NoHooks)
            .await;
        run.kit::<_, ArchiveStoreKit, _, _>(|_, f| pick(pg_for(f), PgStore::archive), &NoHooks)
            .await;
        run.kit::<_, LifecycleKit, _, _>(
            |_, f| pick(pg_for(f), |d| (d.events(), d.snapshots(), d.archive())),
            &NoHooks,
        )
        .await;
        run.kit::<_, BranchRegistryKit, _, _>(|_, f| pick(pg_for(f), PgStore::branches), &NoHooks)
            .await;
        run.kit::<_, DispatcherKit, _, _>(|_, f| pick(pg_for(f), PgStore::dispatcher), &NoHooks)
            .await;
        run.kit::<_, TimerStoreKit, _, _>(|_, f| pick(pg_for(f), PgStore::timers), &NoHooks)
            .await;
        run.kit::<_, ContentStoreKit, _, _>(|_, f| pick(pg_for(f), PgStore::content), &NoHooks)
            .await;
        run.kit::<_, DurableStateStoreKit, _, _>(
            |_, f| pick(pg_for(f), PgStore::durable_state),
            &NoHooks,
        )
        .await;
        run.kit::<_, ReadModelStoreKit, _, _>(
            |_, f| pick(pg_for(f), PgStore::read_models),
            &NoHooks,
        )
        .await;
        if !run.concurrency_skipped() {
            // One connection per client on the case schema, emptied before each case.
            let n = run.clients;
            run.kit::<_, ConcurrencyKit, _, _>(
                |_, _| {
                    let (db, url, schema) =
                        (case_pg.clone(), store.to_string(), case_schema.clone());
                    async move {
                        db.reset()
                            .await
                            .map_err(|e| format!("emptying the case schema {schema}: {e}"))?;
                        let mut conns = Vec::with_capacity(n);
                        for i in 0..n {
                            conns.push(PgStore::connect(&url, &schema).await.map_err(|e| {
                                format!("connecting client {i} to {url} (schema {schema}): {e}")
                            })?);
                        }
                        Ok(pg_fleet(&conns))
                    }
                },
                &NoHooks,
            )
            .await;
        }
        run.durability_in_process();
        // A leftover schema is clutter, not a failed run: the results stand.
        drop(case_pg);
        if let Err(e) = PgStore::drop_schema(store, &case_schema).await {
            eprintln!("warning: could not drop the case schema {case_schema}: {e}");
        }
        return Ok(None);
    }
    if let Some(command) = store.strip_prefix("cmd:") {
        let mut config = stdio::StdioConfig::new(command.trim());
        config.restart_backend = run.restart_backend.clone();
        config.call_timeout = std::time::Duration::from_millis(limits.timeout_ms);
        config.hello_timeout = std::time::Duration::from_millis(limits.hello_timeout_ms);
        // With several clients, the first is client 0 of N from its hello on.
        let n = run.clients;
        let adapter = match StdioStore::start(&config.as_client(0, n)) {
            Ok(a) => a,
            Err(fault) => {
                // A failed handshake is a result of the run, not a usage error.
                let result = CaseResult::error(
                    KITS_AREA,
                    ADAPTER_SUITE,
                    "adapter/handshake",
                    Vec::<String>::new(),
                    fault.message,
                );
                run.opts.budget.record(&result);
                run.results.push(result);
                return Ok(None);
            }
        };
        let hooks = StdioHooks(&adapter);
        let not = |spi: &str| format!("the adapter's hello does not list {spi}");
        let has = |spi: &str| adapter.implements(spi);
        if has(stdio::SPI_EVENT_STORE) {
            run.kit::<_, EventStoreKit, _, _>(|_, _| ok(adapter.clone()), &hooks)
                .await;
        } else {
            run.skip::<StdioStore, EventStoreKit>(&not(stdio::SPI_EVENT_STORE));
        }
        if has(stdio::SPI_SNAPSHOT_STORE) {
            run.kit::<_, SnapshotStoreKit, _, _>(|_, _| ok(adapter.clone()), &hooks)
                .await;
        } else {
            run.skip::<StdioStore, SnapshotStoreKit>(&not(stdio::SPI_SNAPSHOT_STORE));
        }
        if has(stdio::SPI_ARCHIVE_STORE) {
            run.kit::<_, ArchiveStoreKit, _, _>(|_, _| ok(adapter.clone()), &hooks)
                .await;
        } else {
            run.skip::<StdioStore, ArchiveStoreKit>(&not(stdio::SPI_ARCHIVE_STORE));
        }
        if has(stdio::SPI_EVENT_STORE)
            && has(stdio::SPI_SNAPSHOT_STORE)
            && has(stdio::SPI_ARCHIVE_STORE)
        {
            run.kit::<_, LifecycleKit, _, _>(
                |_, _| ok((adapter.clone(), adapter.clone(), adapter.clone())),
                &hooks,
            )
            .await;
        } else {
            run.skip::<(StdioStore, StdioStore, StdioStore), LifecycleKit>(
                "the lifecycle needs eventStore, snapshotStore and archiveStore",
            );
        }
        if has(stdio::SPI_BRANCH_REGISTRY) {
            run.kit::<_, BranchRegistryKit, _, _>(|_, _| ok(adapter.clone()), &hooks)
                .await;
        } else {
            run.skip::<StdioStore, BranchRegistryKit>(&not(stdio::SPI_BRANCH_REGISTRY));
        }
        // Protocol 1.1 SPIs. The dispatcher and timer kits need a store holding no
        // other case's data; `reset` before each case gives exactly that.
        if has(stdio::SPI_DISPATCHER) {
            run.kit::<_, DispatcherKit, _, _>(|_, _| ok(adapter.clone()), &hooks)
                .await;
        } else {
            run.skip::<StdioStore, DispatcherKit>(&not(stdio::SPI_DISPATCHER));
        }
        if has(stdio::SPI_TIMER_STORE) {
            run.kit::<_, TimerStoreKit, _, _>(|_, _| ok(adapter.clone()), &hooks)
                .await;
        } else {
            run.skip::<StdioStore, TimerStoreKit>(&not(stdio::SPI_TIMER_STORE));
        }
        if has(stdio::SPI_CONTENT_STORE) {
            run.kit::<_, ContentStoreKit, _, _>(|_, _| ok(adapter.clone()), &hooks)
                .await;
        } else {
            run.skip::<StdioStore, ContentStoreKit>(&not(stdio::SPI_CONTENT_STORE));
        }
        if has(stdio::SPI_DURABLE_STATE_STORE) {
            run.kit::<_, DurableStateStoreKit, _, _>(|_, _| ok(adapter.clone()), &hooks)
                .await;
        } else {
            run.skip::<StdioStore, DurableStateStoreKit>(&not(stdio::SPI_DURABLE_STATE_STORE));
        }
        if has(stdio::SPI_READ_MODEL_STORE) {
            run.kit::<_, ReadModelStoreKit, _, _>(|_, _| ok(adapter.clone()), &hooks)
                .await;
        } else {
            run.skip::<StdioStore, ReadModelStoreKit>(&not(stdio::SPI_READ_MODEL_STORE));
        }
        // Last but one: the durability cases kill the adapter, which then starts again.
        run.kit::<_, DurabilityKit, _, _>(|_, _| ok(adapter.clone()), &hooks)
            .await;
        if run.wants(loom_conformance::kits::concurrency::NAME) && !run.concurrency_skipped() {
            run_stdio_concurrency(run, &adapter, &config).await;
        }
        let hello = adapter.hello();
        apply_shutdown(&mut run.results, adapter.shutdown());
        return Ok(hello);
    }
    Err(format!("unknown store {store:?}: use {STORE_SYNTAX}"))
}

/// The concurrent campaign's suite and case in reports.
pub const CAMPAIGN_SUITE: &str = "concurrency-campaign";

/// The concurrent campaign's case id for `seed`.
pub fn campaign_case_id(seed: u64) -> String {
    format!("concurrent campaign seed {seed}")
}

/// The concurrent campaign (`loom_conformance::kits::concurrency_campaign`) against the
/// store `options.store` names, with `options.clients` clients on one backend: one
/// result, passed when every round's histories were linearizable, and the outcome. A
/// `cmd:` adapter that does not answer `sharedBackend: true`, or one client, is a
/// visible skip. `Err` when the store cannot be opened.
pub fn concurrent_campaign(
    options: &KitOptions,
    seed: u64,
    budget: loom_conformance::kits::concurrency_campaign::Budget,
) -> Result<
    (
        CaseResult,
        Option<loom_conformance::kits::concurrency_campaign::Outcome>,
    ),
    String,
> {
    use loom_conformance::kits::concurrency_campaign::{run, RULES};
    preflight(&options.store)?;
    let case_id = campaign_case_id(seed);
    let result = |status, message: String| {
        CaseResult::new(KITS_AREA, CAMPAIGN_SUITE, &case_id, RULES, status).with_message(message)
    };
    let n = options.clients;
    if n < 2 {
        return Ok((
            result(
                loom_report::Status::SkipNotClaimed,
                format!("--clients {n}: the concurrent campaign needs at least two clients on one backend"),
            ),
            None,
        ));
    }
    let namespace = format!("cc{}.", loom_conformance::runner::fresh_run_id());
    let store = options.store.as_str();
    let outcome = loom_conformance::block_on(async {
        if store == "memory" {
            return run(&memory_fleet(n), &namespace, seed, budget)
                .await
                .map(Some);
        }
        if store == "sqlite" || store.starts_with("sqlite:") {
            let path = match store.strip_prefix("sqlite:") {
                Some(p) if !p.is_empty() && p != ":memory:" => std::path::PathBuf::from(p),
                _ => std::env::temp_dir()
                    .join(format!("loom-campaign-{}{namespace}db", std::process::id())),
            };
            let conns = (0..n)
                .map(|_| {
                    SqliteStore::open(&path).map_err(|e| format!("opening {}: {e}", path.display()))
                })
                .collect::<Result<Vec<_>, String>>()?;
            let fleet = sqlite_fleet(&conns);
            let r = run(&fleet, &namespace, seed, budget).await.map(Some);
            drop(fleet);
            drop(conns);
            if !store.starts_with("sqlite:") || store == "sqlite::memory:" {
                remove_sqlite_files(&path);
            }
            return r;
        }
        if store.starts_with("postgres://") || store.starts_with("postgresql://") {
            let schema = format!("loom_campaign_{}", loom_conformance::runner::fresh_run_id());
            let first = PgStore::connect_fresh(store, &schema)
                .await
                .map_err(|e| format!("connecting to {store}: {e}"))?;
            let mut conns = vec![first];
            for i in 1..n {
                conns.push(PgStore::connect(store, &schema).await.map_err(|e| {
                    format!("connecting client {i} to {store} (schema {schema}): {e}")
                })?);
            }
            let fleet = pg_fleet(&conns);
            let r = run(&fleet, &namespace, seed, budget).await.map(Some);
            drop(fleet);
            drop(conns);
            if let Err(e) = PgStore::drop_schema(store, &schema).await {
                eprintln!("warning: could not drop the campaign schema {schema}: {e}");
            }
            return r;
        }
        let Some(command) = store.strip_prefix("cmd:") else {
            return Err(format!("unknown store {store:?}"));
        };
        let mut config = stdio::StdioConfig::new(command.trim());
        config.call_timeout = std::time::Duration::from_millis(options.limits.timeout_ms);
        config.hello_timeout = std::time::Duration::from_millis(options.limits.hello_timeout_ms);
        let mut fleet: Vec<StdioStore> = Vec::with_capacity(n);
        let end = |fleet: &[StdioStore]| {
            for c in fleet {
                let _ = c.shutdown();
            }
        };
        for i in 0..n {
            match StdioStore::start(&config.as_client(i, n)) {
                Ok(c) => {
                    if i == 0 && !c.shared_backend() {
                        end(&[c]);
                        return Ok(None);
                    }
                    fleet.push(c);
                }
                Err(fault) => {
                    end(&fleet);
                    return Err(format!(
                        "client {i} of {n} did not start: {}",
                        fault.message
                    ));
                }
            }
        }
        let reset = fleet[0].reset(&namespace);
        let r = match reset {
            Ok(()) => {
                let serves = |spi: &str| fleet[0].implements(spi).then(|| fleet.clone());
                let handles = Handles {
                    events: serves(stdio::SPI_EVENT_STORE),
                    dispatchers: serves(stdio::SPI_DISPATCHER),
                    durable_state: serves(stdio::SPI_DURABLE_STATE_STORE),
                    timers: serves(stdio::SPI_TIMER_STORE),
                    read_models: serves(stdio::SPI_READ_MODEL_STORE),
                };
                run(&handles, &namespace, seed, budget).await.map(Some)
            }
            Err(e) => Err(format!("reset answered: {e}")),
        };
        // An adapter fault during the campaign is its result, with the adapter's words.
        let fault = fleet
            .iter()
            .enumerate()
            .find_map(|(i, c)| c.take_fault().map(|f| format!("client {i}: {}", f.message)));
        end(&fleet);
        match (r, fault) {
            (Ok(Some(mut o)), Some(f)) if o.failure.is_none() => {
                o.failure = Some(format!("an adapter fault during the campaign: {f}"));
                Ok(Some(o))
            }
            (r, _) => r,
        }
    });
    let outcome = match outcome.map_err(|e| e.to_string()).and_then(|r| r) {
        Ok(o) => o,
        Err(e) => {
            return Ok((
                result(
                    loom_report::Status::Error,
                    format!("the concurrent campaign could not run: {e}"),
                ),
                None,
            ))
        }
    };
    let Some(o) = outcome else {
        return Ok((
            result(
                loom_report::Status::SkipNotClaimed,
                "the adapter's hello does not answer sharedBackend: true (store protocol 1.2), so its processes may not share one backend and the concurrent campaign cannot run".into(),
            ),
            None,
        ));
    };
    let summary = format!(
        "{} rounds, {} operations from {n} clients in {:.1} s (seed {seed}; budget {} rounds or {} s)",
        o.rounds,
        o.operations,
        o.elapsed.as_secs_f64(),
        budget.rounds,
        budget.time.as_secs()
    );
    let r = match &o.failure {
        None if o.rounds == 0 => result(
            loom_report::Status::Error,
            format!("the concurrent campaign ran no round within its budget: {summary}"),
        ),
        None => result(loom_report::Status::Pass, summary),
        Some(f) => result(loom_report::Status::Fail, format!("{f}\n{summary}")),
    };
    Ok((r, Some(o)))
}
