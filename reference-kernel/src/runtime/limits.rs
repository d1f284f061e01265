//! Every bound the reference runtime enforces, with units in the names. Shared by the
//! runtime, its tests and the fuzzers that generate flow scripts.

/// Most statements one flow script may hold, nested ones included. A 10,000-step
/// benchmark flow must fit, with room to spare.
pub const SCRIPT_STATEMENTS_MAX: usize = 100_000;
/// Deepest statement nesting (`catch`, `if`, `parallel`, `block`); bounds recursion.
pub const SCRIPT_DEPTH_MAX: usize = 64;
/// Most branches one `parallel` may have.
pub const SCRIPT_BRANCHES_MAX: usize = 64;
/// Most scripted outcomes one effect may list (one per attempt).
pub const SCRIPT_OUTCOMES_MAX: usize = 1_000;
/// Most attempts a retry policy may ask for.
pub const RETRY_ATTEMPTS_MAX: u32 = 100;
/// Most scheduler ticks an effect or decider may stay in flight.
pub const EFFECT_TICKS_MAX: u32 = 10_000;
/// Most timers one `fire_timers` call fires.
pub const TIMERS_PER_FIRE_MAX: usize = 1_000;
/// Most statements one run may execute (loops are impossible, but `parallel` and
/// re-entrant catch handlers multiply work): a runaway script stops with an error.
pub const RUN_STATEMENTS_MAX: u64 = 10_000_000;
/// Most diagnostics the runtime keeps in memory; older ones are dropped first.
pub const DIAGNOSTICS_KEPT_MAX: usize = 10_000;
/// Most executions one call starts by following `continueAsNew` (a flow that always
/// continues would otherwise never return); `recover` on the last one goes on.
pub const CONTINUATIONS_PER_CALL_MAX: usize = 64;
/// Most times one `deliver` call decides again after losing an append race to
/// quarantine facts only (they do not move the park fence, FOLD-46).
pub const DELIVERY_ATTEMPTS_MAX: u32 = 4;
/// Events between two periodic snapshots when a SnapshotStore is wired and the policy
/// is not set: a snapshot costs one serialisation of the state, so one per hundred
/// appended events keeps its cost small next to the folding it saves (REPLAY-15).
pub const SNAPSHOT_EVERY_EVENTS_DEFAULT: u64 = 100;
