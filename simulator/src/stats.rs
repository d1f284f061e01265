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
    /// A real store's adapter processes killed (`SIGKILL`), between calls or between
    /// a write and its answer.
    pub store_kills: u64,
    /// `--restart-backend` commands run.
    pub backend_restarts: u64,
    /// Seeds whose `cmd:` adapter did not answer `sharedBackend: true`, so every host
    /// shared one process.
    pub shared_process_seeds: u64,
    /// Adapter faults (crashes, garbled output) other than the simulator's own kills.
    pub adapter_faults: u64,
    /// Store answers the history checks held against what was acknowledged before
    /// (fence tokens, reads, due timers).
    pub history_checks: u64,
    /// Executions whose stream history was judged by linearizability (`linear`).
    pub linear_judged: u64,
    /// Writes of unknown outcome (answered `backend`, or never) in the judged
    /// executions, each judged both as landed and as not.
    pub linear_unknown_writes: u64,
    /// Executions not judged: more than `linear::UNKNOWN_WRITES_MAX` writes of unknown
    /// outcome, or too long a history.
    pub linear_not_judged: u64,
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
    /// Appends the store acknowledged (in the trace).
    pub appends_acked: u64,
    /// Claims the dispatcher answered with a package (in the trace).
    pub claims: u64,
    /// Fence tokens the store handed out (in the trace).
    pub fences_acquired: u64,
    /// Stamped flow emits in the final logs.
    pub flow_emits: u64,
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
        self.store_kills += other.store_kills;
        self.backend_restarts += other.backend_restarts;
        self.shared_process_seeds += other.shared_process_seeds;
        self.adapter_faults += other.adapter_faults;
        self.history_checks += other.history_checks;
        self.linear_judged += other.linear_judged;
        self.linear_unknown_writes += other.linear_unknown_writes;
        self.linear_not_judged += other.linear_not_judged;
        self.fences_acquired += other.fences_acquired;
        self.partitions += other.partitions;
        self.bounces += other.bounces;
        self.timer_fires += other.timer_fires;
        self.answers += other.answers;
        self.due_before_park += other.due_before_park;
        self.simulated_ms += other.simulated_ms;
        self.appends_acked += other.appends_acked;
        self.claims += other.claims;
        self.flow_emits += other.flow_emits;
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
             retries={} attempts-continued={} untyped-failures={} typed-failures={} verdicts={} continued={} successor-starts={} \
             appends-acked={} claims={} flow-emits={} linear-judged={} linear-unknown-writes={} linear-not-judged={} fences={}",
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
            self.successor_starts,
            self.appends_acked,
            self.claims,
            self.flow_emits,
            self.linear_judged,
            self.linear_unknown_writes,
            self.linear_not_judged,
            self.fences_acquired
        )
    }
}

/// The workload coverage counted on the final logs: retries, continued attempt counts,
/// failures by kind and in-doubt verdicts.
pub(crate) fn log_counts(logs: &[(String, Vec<loom_kernel::EventEnvelope>)]) -> SimStats {
    let mut s = SimStats::default();
    for e in logs.iter().flat_map(|(_, l)| l) {
        s.flow_emits += u64::from(e.flow_emit().is_some());
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

/// What the trace shows the store did: appends it acknowledged and claims that handed
/// out a package (the evidence that SPI-23 and PLACE-02 were exercised).
pub(crate) fn trace_counts(trace: &[String]) -> SimStats {
    let mut s = SimStats::default();
    for line in trace {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let ok = v.get("ok").is_some_and(|ok| !ok.is_null());
        match v["op"].as_str() {
            Some("append") if ok => s.appends_acked += 1,
            Some("claim") if ok => s.claims += 1,
            Some("fence") if ok => s.fences_acquired += 1,
            _ => {}
        }
    }
    s
}

/// Whether a seed exercised `rule`, by the counters that show it: `Ok` names the
/// evidence, `Err` says which counter stayed at zero. A seed that never reached a
/// rule's situation (no stale fence presented, no typed failure, no timer) proves
/// nothing about it, so its result is a skip, not a pass.
pub fn evidence(rule: &str, s: &SimStats) -> Result<String, String> {
    let resumes = {
        let r = &s.resume_faults;
        r.early + r.duplicate + r.reordered + r.concurrent + r.finished
    };
    let recoveries = s.injected_crashes + s.bounces + s.lease_takeovers + s.store_restarts;
    let (counts, what): (Vec<(&str, u64)>, &str) = match rule {
        "SPI-23" => (
            vec![("appends-acked", s.appends_acked)],
            "acknowledged appends",
        ),
        "PLACE-02" => (
            vec![("claims", s.claims)],
            "claims that handed out a package",
        ),
        "PLACE-05" => (
            vec![
                ("zombies-refused", s.zombie_refused),
                ("lease-takeovers", s.lease_takeovers),
            ],
            "stale fences presented",
        ),
        "REPLAY-01" => (
            if s.effect_calls == 0 {
                vec![("effect-calls", 0)]
            } else {
                vec![("crashes+bounces+lease-takeovers+store-restarts", recoveries)]
            },
            "runs recovered after a crash, a bounce, a takeover or a store restart",
        ),
        "REPLAY-02" => (
            vec![("effect-calls", s.effect_calls)],
            "recorded step outputs",
        ),
        "REPLAY-09" => (
            vec![
                ("retries", s.retries),
                ("attempts-continued", s.attempts_continued),
            ],
            "retried attempts",
        ),
        "TYPED-09" => (vec![("typed-failures", s.typed_failures)], "typed failures"),
        "EMIT-01" => (vec![("flow-emits", s.flow_emits)], "stamped flow emits"),
        "SNAP-01" => (vec![("snapshots", s.snapshots_saved)], "stored snapshots"),
        "INGRESS-03" => (vec![("resume-faults", resumes)], "resume faults sent"),
        "INGRESS-15" => (
            vec![
                ("hostile-refused", s.hostile_refused),
                ("resume-faults-refused", s.resume_faults.refused),
            ],
            "refused resumes",
        ),
        "PLACE-04" => (vec![("completed", s.completed)], "completed executions"),
        "REPLAY-10" => (vec![("timer-fires", s.timer_fires)], "timer fires"),
        _ => return Ok(String::new()),
    };
    let shown: Vec<String> = counts.iter().map(|(k, n)| format!("{k}={n}")).collect();
    if counts.iter().any(|(_, n)| *n > 0) {
        Ok(format!("{what}: {}", shown.join(" ")))
    } else {
        Err(format!("no {what} in this seed ({})", shown.join(" ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets the counter that shows a rule was exercised.
    type Raise = fn(&mut SimStats);

    /// Every rule the check names has a counter that credits it: with every counter at
    /// zero each rule is a skip; with only its own counter raised it is credited.
    #[test]
    fn each_rule_is_credited_by_its_own_counter_only() {
        let raise: [(&str, Raise); 13] = [
            ("SPI-23", |s| s.appends_acked = 1),
            ("PLACE-02", |s| s.claims = 1),
            ("PLACE-05", |s| s.zombie_refused = 1),
            ("REPLAY-01", |s| {
                s.effect_calls = 1;
                s.injected_crashes = 1
            }),
            ("REPLAY-02", |s| s.effect_calls = 1),
            ("REPLAY-09", |s| s.retries = 1),
            ("TYPED-09", |s| s.typed_failures = 1),
            ("EMIT-01", |s| s.flow_emits = 1),
            ("SNAP-01", |s| s.snapshots_saved = 1),
            ("INGRESS-03", |s| s.resume_faults.duplicate = 1),
            ("INGRESS-15", |s| s.hostile_refused = 1),
            ("PLACE-04", |s| s.completed = 1),
            ("REPLAY-10", |s| s.timer_fires = 1),
        ];
        let rules: Vec<&str> = raise.iter().map(|(r, _)| *r).collect();
        assert_eq!(rules, crate::check::RULES, "one row per rule of the check");
        for (rule, set) in raise {
            let none = SimStats::default();
            assert!(
                evidence(rule, &none).is_err(),
                "{rule} credited with nothing"
            );
            let mut s = SimStats::default();
            set(&mut s);
            assert!(
                evidence(rule, &s).is_ok(),
                "{rule}: {:?}",
                evidence(rule, &s)
            );
        }
        // Crashes alone, with no effect ever called, recover nothing REPLAY-01 judges.
        let s = SimStats {
            injected_crashes: 3,
            ..SimStats::default()
        };
        assert!(evidence("REPLAY-01", &s).is_err());
    }
}
