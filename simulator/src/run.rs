//! One run: the hosts as tasks of one paused runtime on the simulated network
//! ([`crate::net`]), the fault schedule applied as simulated time passes, then the final
//! checks over the logs the store holds.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use loom_kernel::runtime::block_on;
use loom_kernel::spi::ExecutionDispatcher;
use loom_report::CaseResult;
use loom_stores::memory::{MemoryDispatcher, MemoryTimerStore};
use serde_json::{json, Value};

use crate::check::{self, RULES};
use crate::config::SimConfig;
use crate::hosts::{self, HostResult};
use crate::net::Net;
use crate::outcome::{write_artifacts, SimOutcome};
use crate::rng::Rng;
use crate::schedule::{
    draw, schedule_json, setup_from_json, worker_name, Fault, Setup, FAULT_KINDS,
};
use crate::stats::{evidence, log_counts, trace_counts, SimStats};
use crate::store::SimStore;
use crate::store_client;
use crate::wire::{STORE_HOST, TARGET};
use crate::world::{Book, Violation, World};

/// How long a store restart keeps the store unreachable, simulated milliseconds.
pub const STORE_DOWN_MS: u64 = 150;

/// Slack between the client's deadline and the run's hard limit, simulated ms.
const SIM_SLACK_MS: u64 = 5_000;

/// Runs a schedule file (as `write_artifacts` writes it, shrunk or not) under `config`
/// (its store, planted bug and phase lengths).
pub fn replay(schedule: &Value, config: &SimConfig) -> Result<SimOutcome, String> {
    let setup = setup_from_json(schedule, config)?;
    let seed = schedule
        .get("seed")
        .and_then(Value::as_u64)
        .ok_or("schedule: `seed` (the per-host randomness) is missing")?;
    Ok(run_setup(seed, setup, config))
}

/// Runs one seed: draws the setup, simulates both phases, checks every invariant.
pub fn run_seed(seed: u64, config: &SimConfig) -> SimOutcome {
    run_setup(seed, draw(seed, config), config)
}

/// Runs a setup with the per-host randomness of `seed`.
fn run_setup(seed: u64, setup: Setup, config: &SimConfig) -> SimOutcome {
    store_client::take_calls_timed_out();
    let schedule = schedule_json(seed, &setup);
    // Every host that calls the store gets a connection of its own (a real store).
    let callers: Vec<String> = (0..setup.workers)
        .map(worker_name)
        .chain(["client".to_owned(), "dispatcher".to_owned()])
        .collect();
    let store = match SimStore::open_with(
        &config.store,
        seed,
        &callers,
        config.lease_ms,
        config.adapter,
    ) {
        Ok(s) => s,
        Err(e) => {
            let store = &config.store;
            let message = format!("seed {seed}: the store `{store}` could not be opened: {e}");
            return unrunnable(seed, schedule, &message);
        }
    };
    let dispatcher = MemoryDispatcher::with_lease_ms(config.lease_ms as i64)
        .unwrap_or_else(|_| MemoryDispatcher::new());
    // Registering the one target on a fresh in-memory dispatcher cannot fail.
    let _ = block_on(dispatcher.register_target(TARGET));
    let world = Arc::new(World {
        events_cell: Mutex::new(Arc::new(store)),
        timers: MemoryTimerStore::new(),
        snapshots: loom_stores::memory::MemorySnapshotStore::new(),
        dispatcher,
        book: Mutex::new(Book::default()),
        bug: config.bug,
        clock_skew_ms: setup.clock_skew_ms.clone(),
    });
    // Real crashes of a real store, from a randomness stream of their own.
    let (killable, real) = world
        .events()
        .real()
        .map_or((false, false), |r| (r.killable(), true));
    let mut crashes = crate::kills::StoreCrashes::draw(
        seed,
        &callers,
        config.safety_ms,
        killable,
        real && config.restart_backend.is_some(),
    );
    let scenarios = Arc::new(crate::workload::with_successors(&setup.scenarios));
    let faults_on = Arc::new(AtomicBool::new(true));
    let deadline_ms = config.safety_ms + config.liveness_ms;
    let plan = Plan {
        seed,
        setup: &setup,
        config,
        schedule: &schedule,
        callers: &callers,
        scenarios,
        faults_on,
        deadline_ms,
    };
    let ran = match simulate(&world, plan, &mut crashes) {
        Ok(r) => r,
        Err(e) => {
            let message = format!("seed {seed}: the simulation could not start: {e}");
            return unrunnable(seed, schedule, &message);
        }
    };
    let Ran {
        simulated_ms,
        sim_error,
        bounces,
        partitions,
        spikes,
    } = ran;
    let mut outcome = finish(seed, config, &world, &setup, schedule, sim_error);
    outcome.stats.bounces = bounces;
    outcome.stats.partitions = partitions;
    outcome.stats.spikes = spikes;
    outcome.stats.calls_timed_out = store_client::take_calls_timed_out();
    outcome.stats.simulated_ms = simulated_ms;
    outcome.stats.store_kills = crashes.kills;
    outcome.stats.backend_restarts = crashes.restarts;
    outcome.results = credited(seed, std::mem::take(&mut outcome.results), &outcome.stats);
    outcome
}

/// What a run needs besides the world: the seed's setup and the run's options.
struct Plan<'a> {
    seed: u64,
    setup: &'a Setup,
    config: &'a SimConfig,
    schedule: &'a Value,
    /// Every host that calls the store (the workers, the client, the dispatcher).
    callers: &'a [String],
    scenarios: Arc<Vec<crate::workload::Scenario>>,
    faults_on: Arc<AtomicBool>,
    deadline_ms: u64,
}

/// What the simulation itself counted.
struct Ran {
    simulated_ms: u64,
    sim_error: Option<String>,
    bounces: u64,
    partitions: u64,
    spikes: u64,
}

/// One incarnation of a host's software.
type HostRun = Pin<Box<dyn Future<Output = HostResult>>>;
/// A host's software: started again from the top when the host is bounced.
type Software = Rc<dyn Fn() -> HostRun>;

/// The hosts of one run, on one paused current-thread runtime: a host is a task.
struct Fleet {
    /// Woken when the client ends or a host fails.
    stop: Rc<Notify>,
    client_done: Rc<Cell<bool>>,
    error: Rc<RefCell<Option<String>>>,
    /// The bounceable hosts: their software and their running task.
    running: BTreeMap<String, (Software, tokio::task::JoinHandle<()>)>,
}

impl Fleet {
    /// Runs one incarnation of a host: its failure, or the client's end, stops the run.
    fn spawn(&self, name: &str, run: HostRun, is_client: bool) -> tokio::task::JoinHandle<()> {
        let (stop, done, error) = (
            self.stop.clone(),
            self.client_done.clone(),
            self.error.clone(),
        );
        let name = name.to_owned();
        tokio::task::spawn_local(async move {
            let result = run.await;
            if let Err(e) = result {
                error
                    .borrow_mut()
                    .get_or_insert_with(|| format!("host {}: {e}", json!(name)));
            } else if is_client {
                done.set(true);
            } else {
                return;
            }
            stop.notify_one();
        })
    }

    fn start(&mut self, name: &str, software: Software) {
        let task = self.spawn(name, software(), false);
        self.running.insert(name.to_owned(), (software, task));
    }

    /// Crashes `name` (its tasks are dropped where they wait) and starts its software
    /// again.
    fn bounce(&mut self, name: &str) {
        let Some((software, task)) = self.running.remove(name) else {
            return;
        };
        task.abort();
        let task = self.spawn(name, software(), false);
        self.running.insert(name.to_owned(), (software, task));
    }
}

/// Runs the hosts and applies the fault schedule as simulated time passes, until the
/// client ends, a host fails or the hard limit is reached. Time jumps from event to
/// event (docs/decisions/0011): the runtime is paused, so when every host waits, its
/// clock moves to the next timer, packet delivery or fault, whichever is first.
fn simulate(
    world: &Arc<World>,
    plan: Plan<'_>,
    crashes: &mut crate::kills::StoreCrashes,
) -> Result<Ran, String> {
    let settle = world.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        // A real store's answers to the requests in flight land before simulated time
        // moves on: the runtime parks only when every host waits.
        .on_thread_park(move || settle.settle_store())
        .build()
        .map_err(|e| format!("starting the simulation's runtime: {e}"))?;
    let local = tokio::task::LocalSet::new();
    let ran = local.block_on(&rt, harness(world, plan, crashes));
    // The hosts' tasks are dropped with the set, before the runtime.
    drop(local);
    Ok(ran)
}

async fn harness(
    world: &Arc<World>,
    plan: Plan<'_>,
    crashes: &mut crate::kills::StoreCrashes,
) -> Ran {
    let Plan {
        seed,
        setup,
        config,
        schedule,
        callers,
        scenarios,
        faults_on,
        deadline_ms,
    } = plan;
    let net = Net::new(seed, setup.latency_ms);
    let _installed = net.install();
    tokio::task::spawn_local(crate::net::drive(net.clone()));
    let mut fleet = Fleet {
        stop: Rc::new(Notify::new()),
        client_done: Rc::new(Cell::new(false)),
        error: Rc::new(RefCell::new(None)),
        running: BTreeMap::new(),
    };
    {
        let world = world.clone();
        let store: Software = Rc::new(move || Box::pin(crate::server::serve(world.clone())));
        fleet.start(STORE_HOST, store);
    }
    for w in 0..setup.workers {
        let (world, scenarios, faults_on) = (world.clone(), scenarios.clone(), faults_on.clone());
        let rng = Arc::new(Mutex::new(Rng::derive(seed, 100 + w as u64)));
        let faults = setup.faults;
        let name = worker_name(w);
        let fleet_plan: Arc<Vec<(u64, loom_kernel::FoldVersion)>> = Arc::new(
            setup
                .fold_versions
                .get(&name)
                .into_iter()
                .flatten()
                .filter_map(|(at, minor)| {
                    Some((*at, loom_kernel::FoldVersion::from_minor(*minor)?))
                })
                .collect(),
        );
        let host = name.clone();
        let software: Software = Rc::new(move || {
            Box::pin(hosts::worker(
                name.clone(),
                world.clone(),
                scenarios.clone(),
                faults_on.clone(),
                rng.clone(),
                faults,
                fleet_plan.clone(),
            ))
        });
        fleet.start(&host, software);
    }
    {
        let (world, scenarios, faults_on) = (world.clone(), scenarios.clone(), faults_on.clone());
        let rng = Rng::derive(seed, 1);
        let hostile = setup.hostile_per_mille;
        let resume_faults = setup.resume_fault_per_mille;
        let start_gap_ms_max = setup.start_gap_ms_max;
        // The client runs once (it is never bounced): when it ends, the run ends.
        let run = hosts::client(
            world,
            scenarios,
            faults_on,
            rng,
            hostile,
            resume_faults,
            (deadline_ms, start_gap_ms_max),
        );
        fleet.spawn("client", Box::pin(run), true);
    }
    // The sweeper is the dispatcher's half that watches the log: it re-queues every
    // execution that is neither parked nor ended (a crashed resume, a lost lease).
    fleet.start("dispatcher", Rc::new(|| Box::pin(hosts::sweeper())));

    // Each fault with its entry in the schedule file, which is how the trace names it
    // (the protocol's JSON, the same words a schedule file uses).
    let fault_entries = schedule["faults"].as_array().cloned().unwrap_or_default();
    let mut pending: Vec<(u64, Fault, Value)> = setup
        .schedule
        .iter()
        .cloned()
        .zip(
            fault_entries
                .into_iter()
                .chain(std::iter::repeat(Value::Null)),
        )
        .map(|((at, f), entry)| (at, f, entry))
        .collect();
    pending.reverse();
    // (when, from, to, one way): links to heal.
    let mut repairs: Vec<(u64, String, String, bool)> = Vec::new();
    let (mut bounces, mut partitions, mut spikes) = (0, 0, 0);
    // (when it ends, host): latency spikes to undo.
    let mut spikes_on: Vec<(u64, String)> = Vec::new();
    // Lossy links from the start of the safety phase (the hosts exist by now).
    for (host, rate) in &setup.loss_per_mille {
        net.set_loss(host, STORE_HOST, *rate);
    }
    let limit_ms = deadline_ms + SIM_SLACK_MS;
    let mut sim_error = None;
    loop {
        let now = net.now_ms();
        while pending.last().is_some_and(|(at, _, _)| *at <= now) {
            if let Some((at, fault, entry)) = pending.pop() {
                match fault {
                    Fault::Bounce(w) => {
                        fleet.bounce(&worker_name(w));
                        bounces += 1;
                    }
                    Fault::Partition(ref h, d) => {
                        net.partition(h, STORE_HOST);
                        repairs.push((at + d, h.clone(), STORE_HOST.to_owned(), false));
                        partitions += 1;
                    }
                    Fault::Spike(ref h, latency, d) => {
                        net.set_latency(h, STORE_HOST, latency, latency);
                        spikes_on.push((at + d, h.clone()));
                        spikes += 1;
                    }
                    Fault::OneWay(ref from, ref to, d) => {
                        net.partition_oneway(from, to);
                        repairs.push((at + d, from.clone(), to.clone(), true));
                        partitions += 1;
                    }
                    Fault::StoreRestart => {
                        // The store is down for STORE_DOWN_MS: it is cut off from every
                        // host, so requests and acknowledgements in flight are lost; what
                        // it committed survives (World outlives it), and it reopens its
                        // store.
                        for h in callers {
                            net.partition(STORE_HOST, h);
                            repairs.push((
                                at + STORE_DOWN_MS,
                                STORE_HOST.to_owned(),
                                h.clone(),
                                false,
                            ));
                        }
                        world.restart_store();
                    }
                }
                world.trace(json!({ "t": now, "fault": entry }));
            }
        }
        repairs.retain(|(at, from, to, oneway)| {
            if *at <= now || now >= config.safety_ms {
                if *oneway {
                    net.repair_oneway(from, to);
                } else {
                    net.repair(from, to);
                }
                false
            } else {
                true
            }
        });
        spikes_on.retain(|(at, host)| {
            if *at <= now || now >= config.safety_ms {
                // Back to the seed's latency range.
                let (lo, hi) = setup.latency_ms;
                net.set_latency(host, STORE_HOST, lo, hi);
                false
            } else {
                true
            }
        });
        if now >= config.safety_ms && faults_on.load(Ordering::SeqCst) {
            faults_on.store(false, Ordering::SeqCst);
            // The liveness phase has a healthy network: no more lost messages.
            for host in setup.loss_per_mille.keys() {
                net.set_loss(host, STORE_HOST, 0);
            }
            world.trace(json!({ "t": now, "phase": "liveness" }));
        }
        crashes.apply(now, world, config.restart_backend.as_deref());
        if let Some(e) = fleet.error.borrow_mut().take() {
            sim_error = Some(e);
            break;
        }
        if fleet.client_done.get() {
            break;
        }
        if now >= limit_ms {
            sim_error = Some(format!(
                "the client had not finished after {limit_ms} ms of simulated time"
            ));
            break;
        }
        // The next instant the schedule acts at.
        let next = pending
            .last()
            .map(|(at, _, _)| *at)
            .into_iter()
            .chain(repairs.iter().map(|r| r.0))
            .chain(spikes_on.iter().map(|s| s.0))
            .chain(faults_on.load(Ordering::SeqCst).then_some(config.safety_ms))
            .chain(crashes.next_at())
            .fold(limit_ms, u64::min)
            .max(now + 1);
        tokio::select! {
            biased;
            _ = fleet.stop.notified() => {}
            _ = tokio::time::sleep_until(net.at(next)) => {}
        }
    }
    Ran {
        simulated_ms: net.now_ms(),
        sim_error,
        bounces,
        partitions,
        spikes,
    }
}

fn finish(
    seed: u64,
    config: &SimConfig,
    world: &World,
    setup: &Setup,
    schedule: Value,
    sim_error: Option<String>,
) -> SimOutcome {
    // A real store's own faults (crashes, garbled output, with its stderr) go into the
    // trace, which is in the seed's files.
    let (adapter_faults, shared_process) = match world.events().real() {
        Some(r) => {
            let faults = r.take_faults();
            for f in &faults {
                world.trace(json!({ "adapterFault": f }));
            }
            (faults.len() as u64, u64::from(!r.per_host()))
        }
        None => (0, 0),
    };
    let mut logs = Vec::new();
    let scenarios = crate::workload::with_successors(&setup.scenarios);
    for s in &scenarios {
        match crate::check::final_read(world, &s.execution_id) {
            Ok(log) => logs.push((s.execution_id.clone(), log)),
            // A read that failed is an error of that read, never an empty log (which
            // the checks would take for lost data).
            Err(e) => {
                let message = format!(
                    "seed {seed}: the final read of {} failed: {e}",
                    s.execution_id
                );
                return unrunnable(seed, schedule, &message);
            }
        }
    }
    let mut violations = std::mem::take(&mut world.book().violations);
    if let Some(e) = sim_error {
        violations.push(Violation {
            rule: "PLACE-04".into(),
            message: format!("the simulation stopped: {e}"),
            execution_id: None,
            event_index: None,
        });
    }
    let mut found = check::final_checks_with(&scenarios, &logs, config.bug);
    name_outliving_leases(
        &mut found,
        &world.book().leases,
        config.safety_ms + config.liveness_ms,
    );
    violations.extend(found);
    violations.extend(check::acknowledged_survive(&world.book().acked, &logs));
    violations.extend(check::ledger_backs_every_output(
        &world.book().ledger,
        &logs,
    ));
    let pre_1_24 = setup
        .fold_versions
        .values()
        .flatten()
        .any(|(_, minor)| *minor < 24);
    let snaps = check::stored_snapshots(&world.book().snapshots_saved, &logs, pre_1_24);
    violations.extend(snaps.violations);
    // SPI-23 / PLACE-05: each execution's reads, appends, fences and observes, as the
    // store answered them, must be linearizable.
    let linear = world.book().linear.judge();
    violations.extend(linear.findings.into_iter().map(|f| Violation {
        rule: f.rule.into(),
        message: f.message,
        execution_id: Some(f.execution_id),
        event_index: f.event_index,
    }));
    let trace = std::mem::take(&mut world.book().trace);
    let counted = trace_counts(&trace);
    let stats = {
        let book = world.book();
        SimStats {
            zombie_refused: book.zombie_refused,
            hostile_refused: book.hostile_refused,
            injected_crashes: book.injected_crashes,
            crash_points: book.crash_points,
            effect_calls: book.ledger.len() as u64,
            effect_reruns: {
                let mut seen = std::collections::BTreeSet::new();
                book.ledger
                    .iter()
                    .filter(|l| !seen.insert((&l.execution_id, &l.step_id)))
                    .count() as u64
            },
            store_restarts: book.store_restarts,
            adapter_faults,
            shared_process_seeds: shared_process,
            history_checks: book.history_checks,
            linear_judged: linear.judged,
            linear_unknown_writes: linear.unknown_writes,
            linear_not_judged: linear.not_judged,
            partitions: 0,
            bounces: 0,
            timer_fires: book.timer_fires,
            answers: book.answers_sent,
            simulated_ms: 0,
            lease_takeovers: book.lease_takeovers,
            due_before_park: book.due_before_park,
            successor_starts: book.successor_starts,
            skewed_hosts: setup.clock_skew_ms.values().filter(|ms| **ms != 0).count() as u64,
            skew_early_fires: book.skew_early_fires,
            spikes: 0,
            calls_timed_out: 0,
            snapshots_saved: book.snapshots_saved.len() as u64,
            old_writer_snapshots: snaps.old_writers,
            stray_inputs: snaps.stray_inputs,
            snapshot_refusals: book.snapshot_refusals,
            fleet_switches: book.fleet_switches,
            lossy_links: setup.loss_per_mille.values().filter(|r| **r > 0).count() as u64,
            swarm_off: std::array::from_fn(|i| {
                u64::from(setup.swarm_off.contains(&FAULT_KINDS[i]))
            }),
            completed: logs
                .iter()
                .filter(|(_, l)| l.iter().any(|e| e.event_type == "EXECUTION_COMPLETED"))
                .count() as u64,
            resume_faults: book.resume_faults,
            appends_acked: counted.appends_acked,
            claims: counted.claims,
            fences_acquired: counted.fences_acquired,
            ..log_counts(&logs)
        }
    };
    // Credited by what the seed exercised once the harness's own counts are in
    // (`run_setup`).
    let results = check::results(seed, &violations);
    let ledger = world.book().ledger.iter().map(|e| e.to_value()).collect();
    // A fold disagreement becomes a vector: one per execution whose final log failed
    // the SNAP-01 check (a kernel's restore against its full fold).
    let mut vectors = Vec::new();
    for v in violations
        .iter()
        .filter(|v| v.rule == "SNAP-01" && v.message.starts_with(check::SNAP_01_FINAL_LOG))
    {
        let (Some(exec), Some(k)) = (&v.execution_id, v.event_index) else {
            continue;
        };
        if let Some((_, log)) = logs.iter().find(|(id, _)| id == exec) {
            vectors.push(check::snapshot_vector(seed, exec, log, k));
        }
    }
    // An ingress disagreement becomes a vector: a resume the client's runtime admitted
    // that the reference gate refuses on the log the client read.
    let admitted = world.book().ingress_admitted.clone();
    for (i, (exec, read, request)) in admitted.iter().enumerate() {
        if let Some((_, log)) = logs.iter().find(|(id, _)| id == exec) {
            let seen: Vec<_> = log.iter().filter(|e| e.sequence < *read).cloned().collect();
            if let Some(v) = check::ingress_vector(seed, exec, i, &seen, request) {
                vectors.push(v);
            }
        }
    }
    let outcome = SimOutcome {
        seed,
        ledger,
        vectors,
        error: None,
        trace,
        violations,
        results,
        schedule,
        logs: logs
            .into_iter()
            .map(|(id, log)| (id, log.iter().map(|e| e.to_value()).collect()))
            .collect(),
        stats,
    };
    if !outcome.violations.is_empty() {
        if let Some(dir) = &config.artifacts_dir {
            if let Err(e) = write_artifacts(dir, &outcome) {
                eprintln!("loom-sim: could not write the artefacts of seed {seed}: {e}");
            }
        }
    }
    outcome
}

/// An execution that never ended while the store still held a lease on it past the
/// end of the run was waiting for that lease to expire: its finding names the lease,
/// its holder and its deadline, so a store whose lease is longer than the run (a
/// `cmd:` adapter's lease is its own) reads as that, with the fix, and not as a lost
/// execution.
fn name_outliving_leases(
    found: &mut [Violation],
    leases: &std::collections::BTreeMap<String, loom_kernel::spi::Lease>,
    end_ms: u64,
) {
    for v in found.iter_mut() {
        if !v.message.starts_with(check::NOT_FINISHED) {
            continue;
        }
        let Some(lease) = v.execution_id.as_ref().and_then(|e| leases.get(e)) else {
            continue;
        };
        let until_ms = lease.deadline_ms - crate::clock::EPOCH_MS;
        if until_ms > end_ms as i64 {
            v.message += &format!(
                "; the store still held lease {} on it for {}, live until {until_ms} ms, after the run ended at {end_ms} ms: the store's lease outlives the run (give the adapter a lease of at most a few seconds, e.g. the example adapter's --lease-ms 1000)",
                lease.lease_id,
                serde_json::json!(lease.worker_id)
            );
        }
    }
}

/// The check's results, credited by what the seed exercised: a rule that held in a seed
/// that never reached its situation is a skip naming the counter that stayed at zero
/// (`stats::evidence`); a pass carries its evidence; a failure stays a failure.
fn credited(seed: u64, results: Vec<CaseResult>, stats: &SimStats) -> Vec<CaseResult> {
    results
        .into_iter()
        .map(|mut r| {
            if r.status != loom_report::Status::Pass {
                return r;
            }
            let rule = r.rules.first().cloned().unwrap_or_default();
            match evidence(&rule, stats) {
                Ok(e) if e.is_empty() => r,
                Ok(e) => {
                    r.message = Some(format!("seed {seed}: {e}"));
                    r
                }
                Err(why) => CaseResult::skip_untestable(
                    r.area,
                    r.suite,
                    r.case_id,
                    [rule],
                    format!("seed {seed} did not exercise it: {why}"),
                ),
            }
        })
        .collect()
}

/// The outcome of a seed whose store could not be opened or read back: an `error`
/// result per rule (the seed did not run to a verdict; it is neither a pass nor a
/// violation).
fn unrunnable(seed: u64, schedule: Value, message: &str) -> SimOutcome {
    let message = message.to_owned();
    SimOutcome {
        seed,
        trace: Vec::new(),
        violations: Vec::new(),
        results: RULES
            .iter()
            .map(|rule| {
                CaseResult::error(
                    "sim",
                    "deploy",
                    format!("seed-{seed}/{rule}"),
                    [*rule],
                    &message,
                )
            })
            .collect(),
        schedule,
        logs: Vec::new(),
        stats: SimStats::default(),
        ledger: Vec::new(),
        vectors: Vec::new(),
        error: Some(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loom_kernel::spi::{DispatchId, ExecutionPackage, Lease};

    fn not_finished(exec: &str) -> Violation {
        Violation {
            rule: "PLACE-04".into(),
            message: format!(
                "{}: status \"running\", parked on null",
                check::NOT_FINISHED
            ),
            execution_id: Some(exec.into()),
            event_index: Some(3),
        }
    }

    fn lease(exec: &str, until_ms: i64) -> Lease {
        Lease {
            lease_id: 7,
            dispatch_id: DispatchId(1),
            package: ExecutionPackage {
                execution_id: exec.into(),
                flow_id: "f".into(),
                resume_hint: None,
                compute_target: None,
            },
            target: TARGET.into(),
            worker_id: "worker-1".into(),
            deadline_ms: crate::clock::EPOCH_MS + until_ms,
        }
    }

    /// PLACE-04: an execution left waiting on a lease that outlives the run is named
    /// with that lease and the fix; one whose lease expired in time, one with no lease
    /// and a finding of another kind are left as they were.
    #[test]
    fn place_04_a_lease_that_outlives_the_run_is_named_in_the_finding() {
        let leases: std::collections::BTreeMap<String, Lease> = [
            ("long".to_owned(), lease("long", 31_204)),
            ("short".to_owned(), lease("short", 25_000)),
        ]
        .into_iter()
        .collect();
        let other = Violation {
            message: "final result differs from the crash-free run".into(),
            ..not_finished("long")
        };
        let mut found = vec![
            not_finished("long"),
            not_finished("short"),
            not_finished("none"),
            other.clone(),
        ];
        name_outliving_leases(&mut found, &leases, 26_000);
        assert!(
            found[0].message.contains(
                "the store still held lease 7 on it for \"worker-1\", live until 31204 ms, after the run ended at 26000 ms"
            ),
            "{}",
            found[0].message
        );
        assert!(found[0].message.contains("--lease-ms 1000"));
        for v in &found[1..3] {
            assert_eq!(v.message, not_finished("short").message);
        }
        assert_eq!(found[3].message, other.message);
    }
}
