//! What the faults and the workload did in a run: the coverage counters a passing seed
//! shows as evidence that it exercised something, summed over a sweep.

use crate::schedule::FAULT_KINDS;
use crate::workload::CRASH_POINTS;
use crate::world::ResumeFaults;

/// Counts of what happened in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Zombie appends the store refused as fenced (PLACE-05 evidence).
    pub zombie_refused: u64,
    /// Hostile resumes ingress refused (INGRESS-15 evidence).
    pub hostile_refused: u64,
    /// Runs that stopped at an injected crash point.
    pub injected_crashes: u64,
    /// Those runs by crash point, in [`CRASH_POINTS`] order.
    pub crash_points: [u64; CRASH_POINTS.len()],
    /// Effect invocations in total (the effect ledger's length).
    pub effect_calls: u64,
    /// Invocations of a step that had been invoked before (at least once: a crash
    /// after the effect and before its outcome was appended, a lost append).
    pub effect_reruns: u64,
    /// Store restarts (the store host bounced; committed data survives).
    pub store_restarts: u64,
    /// Partitions applied.
    pub partitions: u64,
    /// Worker bounces applied.
    pub bounces: u64,
    /// `TIMER_FIRED` appends the store took.
    pub timer_fires: u64,
    /// Resumes answered by the client.
    pub answers: u64,
    /// Simulated time the run covered, milliseconds.
    pub simulated_ms: u64,
    /// Expired, uncompleted leases handed to another worker (two recoverers racing).
    pub lease_takeovers: u64,
    /// Due timers a worker was served before their park had landed (the window in
    /// which a fire must keep the timer).
    pub due_before_park: u64,
    /// Executions that completed.
    pub completed: u64,
    /// Hosts whose clock was skewed from store time.
    pub skewed_hosts: u64,
    /// `TIMER_FIRED` appends that landed before `wakeAt` in store time but not on the
    /// firing host's (fast) clock: skew reached the timers.
    pub skew_early_fires: u64,
    /// Latency spikes applied.
    pub spikes: u64,
    /// Links that lost messages in the safety phase.
    pub lossy_links: u64,
    /// Snapshots runtimes saved through the SnapshotStore.
    pub snapshots_saved: u64,
    /// Of those, snapshots written by a worker folding at an older minor.
    pub old_writer_snapshots: u64,
    /// Old writers' snapshots holding `input` on a settled frame (SNAP-11 reached).
    pub stray_inputs: u64,
    /// Snapshots a runtime refused on load (an older node facing a newer snapshot).
    pub snapshot_refusals: u64,
    /// Fold-version switches of workers (rolling upgrade and rollback steps).
    pub fleet_switches: u64,
    /// Store calls that timed out (lost requests or answers, partitions, spikes).
    pub calls_timed_out: u64,
    /// Seeds that ran with each fault kind of [`FAULT_KINDS`] switched off (swarm).
    pub swarm_off: [u64; FAULT_KINDS.len()],
    /// The client's resume faults (early, duplicate, reordered, concurrent, to ended
    /// executions) and how many were refused.
    pub resume_faults: ResumeFaults,
    /// `STEP_RETRYING` facts in the final logs (a retry middleware's next attempt).
    pub retries: u64,
    /// Step runs that continued an attempt count after a crash or a fence (a
    /// `STEP_STARTED` with an attempt above 1).
    pub attempts_continued: u64,
    /// Untyped `STEP_FAILED` facts (errors and timeouts) in the final logs.
    pub untyped_failures: u64,
    /// Typed `STEP_FAILED` facts (a channel) in the final logs.
    pub typed_failures: u64,
    /// In-doubt verdicts in the final logs (`__loom_verdict:` decisions).
    pub verdicts: u64,
    /// Executions that continued as new (`EXECUTION_CONTINUED` in the final logs).
    pub continued: u64,
    /// Recoveries of a continued execution that started its missing successor.
    pub successor_starts: u64,
}

impl SimStats {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &SimStats) {
        self.zombie_refused += other.zombie_refused;
        self.hostile_refused += other.hostile_refused;
        self.injected_crashes += other.injected_crashes;
        for (mine, theirs) in self.crash_points.iter_mut().zip(other.crash_points) {
            *mine += theirs;
        }
        self.effect_calls += other.effect_calls;
        self.effect_reruns += other.effect_reruns;
        self.completed += other.completed;
        self.store_restarts += other.store_restarts;
        self.partitions += other.partitions;
        self.bounces += other.bounces;
        self.timer_fires += other.timer_fires;
        self.answers += other.answers;
        self.due_before_park += other.due_before_park;
        self.simulated_ms += other.simulated_ms;
        self.lease_takeovers += other.lease_takeovers;
        self.skewed_hosts += other.skewed_hosts;
        self.skew_early_fires += other.skew_early_fires;
        self.spikes += other.spikes;
        self.lossy_links += other.lossy_links;
        self.calls_timed_out += other.calls_timed_out;
        self.snapshots_saved += other.snapshots_saved;
        self.old_writer_snapshots += other.old_writer_snapshots;
        self.stray_inputs += other.stray_inputs;
        self.snapshot_refusals += other.snapshot_refusals;
        self.fleet_switches += other.fleet_switches;
        for (mine, theirs) in self.swarm_off.iter_mut().zip(other.swarm_off) {
            *mine += theirs;
        }
        self.retries += other.retries;
        self.attempts_continued += other.attempts_continued;
        self.untyped_failures += other.untyped_failures;
        self.typed_failures += other.typed_failures;
        self.verdicts += other.verdicts;
        self.continued += other.continued;
        self.successor_starts += other.successor_starts;
        let (r, o) = (&mut self.resume_faults, &other.resume_faults);
        r.early += o.early;
        r.early_refused += o.early_refused;
        r.early_admitted += o.early_admitted;
        r.duplicate += o.duplicate;
        r.reordered += o.reordered;
        r.concurrent += o.concurrent;
        r.finished += o.finished;
        r.refused += o.refused;
        r.messages += o.messages;
        r.early_messages += o.early_messages;
        r.duplicate_messages += o.duplicate_messages;
    }

    /// The fault and coverage counts as `name=count` pairs, for a summary line.
    pub fn counts(&self) -> String {
        let off: Vec<String> = FAULT_KINDS
            .iter()
            .zip(self.swarm_off)
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        let points: Vec<String> = CRASH_POINTS
            .iter()
            .zip(self.crash_points)
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        format!(
            "{} effect-reruns={} spikes={} lossy-links={} calls-timed-out={} snapshots={} old-writer-snapshots={} stray-inputs={} snapshot-refusals={} fleet-switches={}; crashes by point: {}; seeds with a kind off (swarm): {}",
            self.fault_counts(),
            self.effect_reruns,
            self.spikes,
            self.lossy_links,
            self.calls_timed_out,
            self.snapshots_saved,
            self.old_writer_snapshots,
            self.stray_inputs,
            self.snapshot_refusals,
            self.fleet_switches,
            points.join(" "),
            off.join(" ")
        )
    }

    fn fault_counts(&self) -> String {
        format!(
            "crashes={} zombies-refused={} hostile-refused={} bounces={} partitions={} store-restarts={} timer-fires={} answers={} due-before-park={} lease-takeovers={} skewed-hosts={} skew-early-fires={} effect-calls={} completed={} \
             early-resumes={} early-refused={} early-admitted={} duplicate-resumes={} reordered-resumes={} concurrent-resumes={} resumes-to-ended={} resume-faults-refused={} messages={} early-messages={} duplicate-messages={} \
             retries={} attempts-continued={} untyped-failures={} typed-failures={} verdicts={} continued={} successor-starts={}",
            self.injected_crashes,
            self.zombie_refused,
            self.hostile_refused,
            self.bounces,
            self.partitions,
            self.store_restarts,
            self.timer_fires,
            self.answers,
            self.due_before_park,
            self.lease_takeovers,
            self.skewed_hosts,
            self.skew_early_fires,
            self.effect_calls,
            self.completed,
            self.resume_faults.early,
            self.resume_faults.early_refused,
            self.resume_faults.early_admitted,
            self.resume_faults.duplicate,
            self.resume_faults.reordered,
            self.resume_faults.concurrent,
            self.resume_faults.finished,
            self.resume_faults.refused,
            self.resume_faults.messages,
            self.resume_faults.early_messages,
            self.resume_faults.duplicate_messages,
            self.retries,
            self.attempts_continued,
            self.untyped_failures,
            self.typed_failures,
            self.verdicts,
            self.continued,
            self.successor_starts
        )
    }
}

/// The workload coverage counted on the final logs: retries, continued attempt counts,
/// failures by kind and in-doubt verdicts.
pub(crate) fn log_counts(logs: &[(String, Vec<loom_kernel::EventEnvelope>)]) -> SimStats {
    let mut s = SimStats::default();
    for e in logs.iter().flat_map(|(_, l)| l) {
        match e.event_type.as_str() {
            "STEP_RETRYING" => s.retries += 1,
            "EXECUTION_CONTINUED" => s.continued += 1,
            "STEP_STARTED" if e.payload["attempt"].as_u64().is_some_and(|a| a > 1) => {
                s.attempts_continued += 1
            }
            "STEP_FAILED" if e.payload.get("channel").is_some() => s.typed_failures += 1,
            "STEP_FAILED" => s.untyped_failures += 1,
            "DECISION_RECORDED"
                if e.payload["id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with("__loom_verdict:")) =>
            {
                s.verdicts += 1
            }
            _ => {}
        }
    }
    s
}
