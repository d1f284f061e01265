//! Argument checks shared by every reference store, so they refuse exactly the same
//! inputs with the same kinds. Each returns `InvalidArgument` (or `Fenced`) and never
//! panics.

use super::error::StoreError;
use super::event_store::FenceToken;
use super::{
    BranchRecord, ExecutionPackage, Timer, APPEND_BATCH_EVENTS_MAX, BRANCH_CHAIN_LEN_MAX,
    ID_BYTES_MAX, LIST_PAGE_LIMIT_MAX, SEQUENCE_MAX, TIMER_DUE_LIMIT_MAX,
};
use crate::envelope::EventEnvelope;

/// An id (execution, flow, target, worker, key) must be non-empty and at most
/// [`ID_BYTES_MAX`] bytes. `what` names it in the message.
pub fn id(what: &str, value: &str) -> Result<(), StoreError> {
    if value.is_empty() {
        return Err(StoreError::invalid(format!("{what} must not be empty")));
    }
    if value.len() > ID_BYTES_MAX {
        return Err(StoreError::invalid(format!(
            "{what} is {} bytes, the limit is {ID_BYTES_MAX}",
            value.len()
        )));
    }
    Ok(())
}

/// A sequence argument must fit the stores' signed 64-bit columns.
pub fn sequence(what: &str, value: u64) -> Result<(), StoreError> {
    if value > SEQUENCE_MAX {
        return Err(StoreError::invalid(format!(
            "{what} {value} exceeds SEQUENCE_MAX"
        )));
    }
    Ok(())
}

/// An append batch: non-empty, bounded, every envelope of `execution_id`, sequences
/// contiguous from `first`, none past [`SEQUENCE_MAX`].
pub fn append_batch(
    execution_id: &str,
    first: u64,
    events: &[EventEnvelope],
) -> Result<(), StoreError> {
    id("execution id", execution_id)?;
    if events.is_empty() {
        return Err(StoreError::invalid(
            "an append must carry at least one event",
        ));
    }
    if events.len() > APPEND_BATCH_EVENTS_MAX {
        return Err(StoreError::invalid(format!(
            "{} events in one append, the limit is {APPEND_BATCH_EVENTS_MAX}",
            events.len()
        )));
    }
    for (idx, event) in events.iter().enumerate() {
        if event.execution_id != execution_id {
            return Err(StoreError::invalid(format!(
                "event {idx} names execution {:?}, the append is for {execution_id:?}",
                event.execution_id
            )));
        }
        let want = first.checked_add(idx as u64).filter(|s| *s <= SEQUENCE_MAX);
        match want {
            Some(want) if event.sequence == want => {}
            Some(want) => {
                return Err(StoreError::invalid(format!(
                    "event {idx} has sequence {}, expected {want} (contiguous from {first})",
                    event.sequence
                )))
            }
            None => return Err(StoreError::invalid("sequence exceeds SEQUENCE_MAX")),
        }
    }
    Ok(())
}

/// An archive batch: bounded, every envelope of `execution_id`, strictly ascending
/// sequences (gaps allowed). Empty is allowed (a no-op, or an empty replacement).
pub fn archive_batch(execution_id: &str, events: &[EventEnvelope]) -> Result<(), StoreError> {
    id("execution id", execution_id)?;
    if events.len() > APPEND_BATCH_EVENTS_MAX {
        return Err(StoreError::invalid(format!(
            "{} envelopes in one call, the limit is {APPEND_BATCH_EVENTS_MAX}",
            events.len()
        )));
    }
    let mut previous: Option<u64> = None;
    for (idx, event) in events.iter().enumerate() {
        if event.execution_id != execution_id {
            return Err(StoreError::invalid(format!(
                "envelope {idx} names execution {:?}, the archive is for {execution_id:?}",
                event.execution_id
            )));
        }
        sequence("sequence", event.sequence)?;
        if previous.is_some_and(|p| event.sequence <= p) {
            return Err(StoreError::invalid(format!(
                "envelope {idx}: sequences must be strictly ascending"
            )));
        }
        previous = Some(event.sequence);
    }
    Ok(())
}

/// The fence rule of `append` (PLACE-05): with current token `current` (0 = never
/// fenced), the append must present exactly `current`, or nothing when 0.
pub fn fence(current: u64, presented: Option<FenceToken>) -> Result<(), StoreError> {
    let ok = match presented {
        None => current == 0,
        Some(FenceToken(t)) => current != 0 && t == current,
    };
    if ok {
        Ok(())
    } else {
        Err(StoreError::fenced(presented.map(|t| t.0), current))
    }
}

/// `listExecutionsPage`'s limit: `1..=LIST_PAGE_LIMIT_MAX`.
pub fn page_limit(limit: usize) -> Result<(), StoreError> {
    if limit == 0 || limit > LIST_PAGE_LIMIT_MAX {
        return Err(StoreError::invalid(format!(
            "page limit {limit} is outside 1..={LIST_PAGE_LIMIT_MAX}"
        )));
    }
    Ok(())
}

/// `TimerStore::due`'s limit: `1..=TIMER_DUE_LIMIT_MAX`.
pub fn due_limit(limit: usize) -> Result<(), StoreError> {
    if limit == 0 || limit > TIMER_DUE_LIMIT_MAX {
        return Err(StoreError::invalid(format!(
            "due limit {limit} is outside 1..={TIMER_DUE_LIMIT_MAX}"
        )));
    }
    Ok(())
}

/// A fork record (GAP-19).
pub fn branch_record(record: &BranchRecord) -> Result<(), StoreError> {
    id("execution id", &record.execution_id)?;
    id("parent execution id", &record.parent_execution_id)?;
    sequence("forkedAtSequence", record.forked_at_sequence)?;
    if record.execution_id == record.parent_execution_id {
        return Err(StoreError::invalid("an execution cannot be its own parent"));
    }
    if record.chain.len() > BRANCH_CHAIN_LEN_MAX {
        return Err(StoreError::invalid(format!(
            "chain is longer than {BRANCH_CHAIN_LEN_MAX}"
        )));
    }
    for ancestor in &record.chain {
        id("chain entry", ancestor)?;
        if *ancestor == record.execution_id {
            return Err(StoreError::invalid(
                "the execution appears in its own chain",
            ));
        }
    }
    if let Some(last) = record.chain.last() {
        if *last != record.parent_execution_id {
            return Err(StoreError::invalid(
                "a non-empty chain must end with the parent",
            ));
        }
    }
    Ok(())
}

/// A dispatched package (PLACE-03): ids present and bounded.
pub fn package(package: &ExecutionPackage) -> Result<(), StoreError> {
    id("execution id", &package.execution_id)?;
    id("flow id", &package.flow_id)?;
    if let Some(hint) = &package.resume_hint {
        if hint.len() > ID_BYTES_MAX {
            return Err(StoreError::invalid(format!(
                "resume hint is longer than {ID_BYTES_MAX} bytes"
            )));
        }
    }
    if let Some(target) = &package.compute_target {
        id("compute target", target)?;
    }
    Ok(())
}

/// A timer: ids present and bounded.
pub fn timer(timer: &Timer) -> Result<(), StoreError> {
    id("execution id", &timer.execution_id)?;
    id("timer key", &timer.key)
}
