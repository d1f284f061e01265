//! The snapshot property of a whole log, checked at every k in linear time (SNAP-01,
//! SNAP-03): `restore(snapshot written at k, events) == fold(events)` for every k.
//!
//! The literal form restores and re-folds the tail at every k, which costs
//! O(n × (state + tail)), quadratic in the log. The linear form folds once and, at each
//! k, checks the two facts that together imply the property for that k:
//!
//! 1. the snapshot's state reads back (`normalize_snapshot_state`, the real snapshot
//!    path) as exactly the state the current fold has at k, structurally; and
//! 2. the tail `restore` selects (envelopes with a sequence above the snapshot's) is
//!    exactly the envelopes after k.
//!
//! Then `restore = fold_from(S_k, events[k+1..]) = fold(events)`, because the fold is a
//! pure left fold (FOLD-01, FOLD-03). Where either fact does not hold (a legitimate
//! normalization, an older writer's shape, an out-of-order sequence), that k is checked
//! literally, so the first failing k and the states reported are exactly the literal
//! form's.
//!
//! States grow with the log, so fact 1 is not checked on the whole state at every k:
//! the parts an event can change are its [`footprint`], and only those (plus a few
//! small parts) are read back and compared at each k; what was known about the other
//! parts carries over. Parts found to differ stay listed until a later comparison shows
//! them equal again, and while any is listed every k is checked literally.

use crate::fold::footprint::{footprint, Footprint, VarTouch};
use crate::fold::{fold_versioned, keys, DecisionMap, ExecutionState, FoldVersion, NoDiagnostics};
use crate::snapshot::{normalize_snapshot_state, restore, SnapshotError, SnapshotRecord};
use crate::EventEnvelope;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Which snapshot points are checked, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every k, in linear time; literal only where the fast check cannot decide.
    Linear,
    /// Every k, literally: restore and fold the tail each time (quadratic).
    Exhaustive,
    /// This many k, evenly spaced from the first event to the last, literally.
    Sample(usize),
}

/// The first k at which the property fails.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// Index of the envelope the snapshot was taken after.
    pub k: usize,
    /// The state restored from that snapshot plus its tail.
    pub restored: ExecutionState,
}

/// What a check found.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The fold of the whole log at the current version.
    pub full: ExecutionState,
    /// How many snapshot points were checked (up to and including a divergence).
    pub checked: usize,
    /// How many of those were restored and re-folded literally.
    pub literal: usize,
    /// The first failing k, if any.
    pub divergence: Option<Divergence>,
}

/// Checks the snapshot property of `events` for snapshots written by a fold of
/// `writer`. `progress(done, total)` is called now and then with the number of snapshot
/// points checked. An error means a snapshot the writer wrote could not be read back.
pub fn verify_snapshots(
    writer: FoldVersion,
    events: &[EventEnvelope],
    mode: Mode,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Verdict, (usize, SnapshotError)> {
    match mode {
        Mode::Linear => linear(writer, events, progress),
        Mode::Exhaustive => {
            let all: Vec<usize> = (0..events.len()).collect();
            literal_at(writer, events, &all, progress)
        }
        Mode::Sample(n) => literal_at(writer, events, &sample_points(events.len(), n), progress),
    }
}

/// `n` snapshot points evenly spaced over `0..len`, always including the last event.
pub fn sample_points(len: usize, n: usize) -> Vec<usize> {
    if len == 0 || n == 0 {
        return Vec::new();
    }
    if n >= len {
        return (0..len).collect();
    }
    let mut out: Vec<usize> = (1..=n).map(|i| (i * len).div_ceil(n) - 1).collect();
    out.dedup();
    out
}

/// How often (in snapshot points) progress is reported.
const PROGRESS_EVERY: usize = 1 << 14;

fn fold_one(state: ExecutionState, e: &EventEnvelope, v: FoldVersion) -> ExecutionState {
    fold_versioned(state, std::iter::once(e), v, &mut NoDiagnostics)
}

/// Restores the snapshot written at `k` from `writer_state` and folds its tail; `None`
/// when it equals `full`.
fn literal_check(
    writer: FoldVersion,
    writer_state: &ExecutionState,
    events: &[EventEnvelope],
    k: usize,
    full: &ExecutionState,
    full_canonical: &mut Option<String>,
) -> Result<Option<ExecutionState>, (usize, SnapshotError)> {
    let record = SnapshotRecord::capture_as(writer, writer_state, events[k].sequence);
    let restored = restore(&record, events).map_err(|e| (k, e))?;
    // Structural equality implies equal canonical bytes; the bytes decide otherwise
    // (two numbers of different kinds can print alike).
    if &restored == full {
        return Ok(None);
    }
    let want = full_canonical.get_or_insert_with(|| full.canonical());
    Ok((restored.canonical() != *want).then_some(restored))
}

fn literal_at(
    writer: FoldVersion,
    events: &[EventEnvelope],
    points: &[usize],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Verdict, (usize, SnapshotError)> {
    let full = crate::fold::fold(events);
    let mut full_canonical = None;
    let mut state = ExecutionState::new();
    let mut folded = 0;
    let mut checked = 0;
    for &k in points {
        while folded <= k {
            state = fold_one(state, &events[folded], writer);
            folded += 1;
        }
        checked += 1;
        if checked % (PROGRESS_EVERY / 64).max(1) == 0 {
            progress(checked, points.len());
        }
        if let Some(restored) =
            literal_check(writer, &state, events, k, &full, &mut full_canonical)?
        {
            return Ok(Verdict {
                full,
                checked,
                literal: checked,
                divergence: Some(Divergence { k, restored }),
            });
        }
    }
    progress(checked, points.len());
    Ok(Verdict {
        full,
        checked,
        literal: checked,
        divergence: None,
    })
}

/// Whether `restore` of a snapshot at k selects exactly `events[k+1..]`: every envelope
/// up to k has a sequence at most k's, every later one a greater sequence.
fn tail_is_suffix(events: &[EventEnvelope]) -> Vec<bool> {
    let n = events.len();
    let mut suffix_min: Vec<Option<u64>> = vec![None; n + 1];
    for i in (0..n).rev() {
        let s = events[i].sequence;
        suffix_min[i] = Some(suffix_min[i + 1].map_or(s, |m| m.min(s)));
    }
    let mut prefix_max = 0u64;
    (0..n)
        .map(|k| {
            let s = events[k].sequence;
            prefix_max = if k == 0 { s } else { prefix_max.max(s) };
            prefix_max == s && suffix_min[k + 1].is_none_or(|m| m > s)
        })
        .collect()
}

/// A part of the state the fast check compares. `Top` is the small parts compared at
/// every k.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Top,
    Frame(String),
    Decision(String),
    Var(String),
    Entry(String, String),
    Append(String),
}

/// The variables a snapshot's normalization reads or writes, always compared.
const NORMALIZED_VARIABLES: [&str; 3] =
    [keys::ERROR, keys::SUSPENDED_ON, keys::FAILED_WHILE_PARKED];

fn linear(
    writer: FoldVersion,
    events: &[EventEnvelope],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Verdict, (usize, SnapshotError)> {
    let n = events.len();
    // The whole fold is needed only by a literal check; otherwise it is the current
    // fold's last state.
    let mut full: Option<ExecutionState> = None;
    let mut full_canonical = None;
    let suffix = tail_is_suffix(events);
    let two_folds = writer != FoldVersion::CURRENT;
    // The writer's state at k, and (for an older writer) the current fold's.
    let mut ws = ExecutionState::new();
    let mut cs = ExecutionState::new();
    let mut differing: BTreeSet<Part> = BTreeSet::new();
    let mut literal = 0;
    for k in 0..n {
        let e = &events[k];
        ws = fold_one(ws, e, writer);
        if two_folds {
            cs = fold_one(cs, e, FoldVersion::CURRENT);
        }
        let current = if two_folds { &cs } else { &ws };
        let fp = widen(footprint(e), &differing);
        let read_back = read_back_part(writer, &ws, &fp, k)?;
        compare(&ws, &read_back, current, &fp, &mut differing);
        if (k + 1) % PROGRESS_EVERY == 0 {
            progress(k + 1, n);
        }
        if differing.is_empty() && suffix[k] {
            continue;
        }
        literal += 1;
        let whole = full.get_or_insert_with(|| crate::fold::fold(events));
        if let Some(restored) = literal_check(writer, &ws, events, k, whole, &mut full_canonical)? {
            return Ok(Verdict {
                full: full.unwrap_or_default(),
                checked: k + 1,
                literal,
                divergence: Some(Divergence { k, restored }),
            });
        }
    }
    progress(n, n);
    Ok(Verdict {
        full: full.unwrap_or(if two_folds { cs } else { ws }),
        checked: n,
        literal,
        divergence: None,
    })
}

/// A part already known to differ is compared whole: an entry or a pushed element
/// cannot show that the rest of its variable became equal again.
fn widen(mut fp: Footprint, differing: &BTreeSet<Part>) -> Footprint {
    if differing.is_empty() {
        return fp;
    }
    for touch in &mut fp.variables {
        let key = match touch {
            VarTouch::Entry(key, _) if differing.contains(&Part::Var((*key).to_owned())) => *key,
            VarTouch::Append(key)
                if differing.contains(&Part::Var((*key).to_owned()))
                    || differing.contains(&Part::Append((*key).to_owned())) =>
            {
                *key
            }
            _ => continue,
        };
        *touch = VarTouch::Whole(key);
    }
    fp
}

/// The parts of `ws` the footprint names (plus the always-compared ones), written as a
/// snapshot by `writer` and read back through `normalize_snapshot_state`.
fn read_back_part(
    writer: FoldVersion,
    ws: &ExecutionState,
    fp: &Footprint,
    k: usize,
) -> Result<ExecutionState, (usize, SnapshotError)> {
    let mut part = ExecutionState {
        status: ws.status,
        frames: Default::default(),
        variables: Default::default(),
        sequence: ws.sequence,
        started_at: ws.started_at,
        updated_at: ws.updated_at,
    };
    if let Some(f) = &fp.frame {
        if let Some(frame) = ws.frames.get(f) {
            part.frames.insert(f.clone(), frame.clone());
        }
    }
    if let Some(d) = &ws.variables.decisions {
        let mut only = DecisionMap::default();
        if let Some(id) = &fp.decision {
            if let Some(entry) = d.get(id) {
                only.insert(id.clone(), entry.clone());
            }
        }
        part.variables.decisions = Some(only);
    }
    let rest = &ws.variables.rest;
    let copy = |into: &mut BTreeMap<String, Value>, key: &str| {
        if let Some(v) = rest.get(key) {
            into.insert(key.to_owned(), v.clone());
        }
    };
    for key in NORMALIZED_VARIABLES {
        copy(&mut part.variables.rest, key);
    }
    if fp.all_variables {
        for key in rest.keys() {
            copy(&mut part.variables.rest, key);
        }
    }
    for touch in &fp.variables {
        match touch {
            VarTouch::Whole(key) => copy(&mut part.variables.rest, key),
            VarTouch::Entry(key, sub) => match rest.get(*key) {
                Some(Value::Object(m)) => {
                    let mut only = Map::new();
                    if let Some(v) = m.get(sub) {
                        only.insert(sub.clone(), v.clone());
                    }
                    // Entries of one variable accumulate in `part` (several touches).
                    match part.variables.rest.get_mut(*key) {
                        Some(Value::Object(have)) => have.extend(only),
                        _ => {
                            part.variables
                                .rest
                                .insert((*key).to_owned(), Value::Object(only));
                        }
                    }
                }
                _ => copy(&mut part.variables.rest, key),
            },
            VarTouch::Append(key) => match rest.get(*key) {
                Some(Value::Array(a)) => {
                    let last: Vec<Value> = a.last().cloned().into_iter().collect();
                    part.variables
                        .rest
                        .insert((*key).to_owned(), Value::Array(last));
                }
                _ => copy(&mut part.variables.rest, key),
            },
        }
    }
    let sequence = ws.sequence.unwrap_or(0);
    let record = SnapshotRecord::capture_as(writer, &part, sequence);
    normalize_snapshot_state(&record).map_err(|e| (k, e))
}

fn mark(differing: &mut BTreeSet<Part>, part: Part, equal: bool) {
    if equal {
        differing.remove(&part);
    } else {
        differing.insert(part);
    }
}

/// Forgets every finer-grained verdict on variable `key` (a whole comparison of it
/// just decided them all).
fn clear_var(differing: &mut BTreeSet<Part>, key: &str) {
    differing.retain(|p| match p {
        Part::Entry(k, _) | Part::Append(k) => k != key,
        _ => true,
    });
}

/// Compares the read-back parts with the current fold's and updates `differing`.
/// `ws` is the writer's whole state (for lengths and key sets, which a read-back does
/// not change except where normalization adds `_failedWhileParked`).
fn compare(
    ws: &ExecutionState,
    back: &ExecutionState,
    current: &ExecutionState,
    fp: &Footprint,
    differing: &mut BTreeSet<Part>,
) {
    let cv = &current.variables;
    let bv = &back.variables;
    let back_keys = ws
        .variables
        .rest
        .keys()
        .map(String::as_str)
        .filter(|k| !NORMALIZED_VARIABLES.contains(k))
        .chain(
            NORMALIZED_VARIABLES
                .into_iter()
                .filter(|k| bv.rest.contains_key(*k)),
        )
        .collect::<BTreeSet<&str>>();
    let top = back.status == current.status
        && back.sequence == current.sequence
        && back.started_at == current.started_at
        && back.updated_at == current.updated_at
        && ws.frames.len() == current.frames.len()
        && bv.decisions.is_some() == cv.decisions.is_some()
        && ws.variables.decisions.as_ref().map(DecisionMap::len)
            == cv.decisions.as_ref().map(DecisionMap::len)
        && back_keys
            .iter()
            .copied()
            .eq(cv.rest.keys().map(String::as_str))
        && NORMALIZED_VARIABLES
            .iter()
            .all(|k| bv.rest.get(*k) == cv.rest.get(*k));
    mark(differing, Part::Top, top);
    if let Some(f) = &fp.frame {
        let equal = back.frames.get(f) == current.frames.get(f);
        mark(differing, Part::Frame(f.clone()), equal);
    }
    if let Some(id) = &fp.decision {
        let equal = bv.decisions.as_ref().and_then(|d| d.get(id))
            == cv.decisions.as_ref().and_then(|d| d.get(id));
        mark(differing, Part::Decision(id.clone()), equal);
    }
    let whole = |key: &str, differing: &mut BTreeSet<Part>| {
        let equal = bv.rest.get(key) == cv.rest.get(key);
        clear_var(differing, key);
        mark(differing, Part::Var(key.to_owned()), equal);
    };
    if fp.all_variables {
        let keys: BTreeSet<&str> = bv
            .rest
            .keys()
            .chain(cv.rest.keys())
            .map(String::as_str)
            .collect();
        for key in keys {
            whole(key, differing);
        }
        // A variable both states lack is equal.
        let stale: Vec<String> = differing
            .iter()
            .filter_map(|p| match p {
                Part::Var(k) if !bv.rest.contains_key(k) && !cv.rest.contains_key(k) => {
                    Some(k.clone())
                }
                _ => None,
            })
            .collect();
        for k in stale {
            clear_var(differing, &k);
            differing.remove(&Part::Var(k));
        }
    }
    for touch in &fp.variables {
        match touch {
            VarTouch::Whole(key) => whole(key, differing),
            VarTouch::Entry(key, sub) => match (bv.rest.get(*key), cv.rest.get(*key)) {
                (Some(Value::Object(b)), Some(Value::Object(c))) => {
                    let equal = b.get(sub) == c.get(sub);
                    mark(
                        differing,
                        Part::Entry((*key).to_owned(), sub.clone()),
                        equal,
                    );
                }
                _ => whole(key, differing),
            },
            VarTouch::Append(key) => {
                match (
                    ws.variables.rest.get(*key),
                    bv.rest.get(*key),
                    cv.rest.get(*key),
                ) {
                    (Some(Value::Array(w)), Some(Value::Array(b)), Some(Value::Array(c))) => {
                        let equal = w.len() == c.len() && b.last() == c.last();
                        mark(differing, Part::Append((*key).to_owned()), equal);
                    }
                    _ => whole(key, differing),
                }
            }
        }
    }
}
