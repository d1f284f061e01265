//! The store's history, checked as its answers arrive: what a store answered is held
//! against what it had acknowledged before the request was sent (so requests in flight
//! at once may come back in either order without a false alarm).
//!
//! - PLACE-05: fence tokens of an execution strictly increase (a token is above every
//!   token whose answer arrived before it was asked for) and no token is handed out
//!   twice. (That an accepted append presented the current token is checked by the
//!   store host at the append.)
//! - SPI-23: a read reflects every append acknowledged before the read was sent.
//! - REPLAY-10: the timer store never answers, as due, a timer whose cancel (after it
//!   fired) was acknowledged before the `due` was sent and that was not scheduled again
//!   since: a timer fires once.
//!
//! (PLACE-02, no dispatch leased twice at once, is checked at every claim by the store
//! host.)

use std::collections::BTreeMap;

use loom_kernel::spi::Timer;

use crate::world::Violation;

/// What the store acknowledged so far, per execution.
#[derive(Debug, Default)]
pub struct History {
    /// Every fence token handed out per execution, with the host it went to.
    tokens: BTreeMap<String, BTreeMap<u64, String>>,
    /// The highest fence token per execution whose answer arrived.
    top_token: BTreeMap<String, u64>,
    /// The next sequence after the highest acknowledged append, per execution.
    acked_next: BTreeMap<String, u64>,
    /// Timers whose cancel was acknowledged: (execution, key) to the answer count then.
    cancelled: BTreeMap<(String, String), u64>,
    /// Answers recorded so far: a logical clock of acknowledgements.
    answers: u64,
}

fn violation(rule: &str, exec: &str, message: String, index: Option<u64>) -> Violation {
    Violation {
        rule: rule.into(),
        message,
        execution_id: Some(exec.to_owned()),
        event_index: index,
    }
}

impl History {
    /// The logical time of a request being sent now.
    pub fn now(&self) -> u64 {
        self.answers
    }

    /// The highest token of `exec` acknowledged before a fence request sent now.
    pub fn fence_floor(&self, exec: &str) -> u64 {
        self.top_token.get(exec).copied().unwrap_or(0)
    }

    /// A fence token the store handed to `host` for `exec`, asked for when the highest
    /// acknowledged token was `floor`.
    pub fn on_fence(&mut self, exec: &str, token: u64, host: &str, floor: u64) -> Vec<Violation> {
        self.answers += 1;
        let mut out = Vec::new();
        let handed = self.tokens.entry(exec.to_owned()).or_default();
        if let Some(before) = handed.get(&token) {
            out.push(violation(
                "PLACE-05",
                exec,
                format!("fence token {token} was handed to {host} and before to {before}: a token handed out twice"),
                None,
            ));
        } else if token <= floor {
            out.push(violation(
                "PLACE-05",
                exec,
                format!("fence token {token} handed to {host} is not above {floor}, a token acknowledged before it was asked for (tokens strictly increase)"),
                None,
            ));
        }
        handed.insert(token, host.to_owned());
        let top = self.top_token.entry(exec.to_owned()).or_default();
        *top = (*top).max(token);
        out
    }

    /// The length every read of `exec` sent now must reach.
    pub fn read_floor(&self, exec: &str) -> u64 {
        self.acked_next.get(exec).copied().unwrap_or(0)
    }

    /// A read of `exec` answered `len` events; `floor` was its [`Self::read_floor`].
    pub fn on_read(&mut self, exec: &str, len: u64, floor: u64) -> Vec<Violation> {
        self.answers += 1;
        if len >= floor {
            return Vec::new();
        }
        vec![violation(
            "SPI-23",
            exec,
            format!("a read answered {len} event(s), but appends up to sequence {} were acknowledged before it was sent (a stale or lost read)", floor - 1),
            Some(len),
        )]
    }

    /// An append of `exec` acknowledged up to `next_sequence`.
    pub fn on_append(&mut self, exec: &str, next_sequence: u64) {
        self.answers += 1;
        let next = self.acked_next.entry(exec.to_owned()).or_default();
        *next = (*next).max(next_sequence);
    }

    /// A timer is being scheduled (at the send: a `due` racing it may see it).
    pub fn on_schedule(&mut self, exec: &str, key: &str) {
        self.cancelled.remove(&(exec.to_owned(), key.to_owned()));
    }

    /// A cancel the store answered `true` (the timer was there and is gone).
    pub fn on_cancel(&mut self, exec: &str, key: &str) {
        self.answers += 1;
        self.cancelled
            .insert((exec.to_owned(), key.to_owned()), self.answers);
    }

    /// A `due` sent at logical time `sent` answered `due`.
    pub fn on_due(&mut self, due: &[Timer], sent: u64) -> Vec<Violation> {
        self.answers += 1;
        due.iter()
            .filter(|t| {
                self.cancelled
                    .get(&(t.execution_id.clone(), t.key.clone()))
                    .is_some_and(|at| *at <= sent)
            })
            .map(|t| {
                violation(
                    "REPLAY-10",
                    &t.execution_id,
                    format!("the timer store answered timer `{}` as due after it fired and its cancel was acknowledged: a timer fired twice", t.key),
                    None,
                )
            })
            .collect()
    }
}
