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

/// What a check found: the rule, the execution, what happened and the event index
/// (the world turns it into a `Violation`; this module knows nothing of the world).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule id.
    pub rule: &'static str,
    /// The execution.
    pub execution_id: String,
    /// What happened.
    pub message: String,
    /// The event index involved, when there is one.
    pub event_index: Option<u64>,
}

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

fn violation(rule: &'static str, exec: &str, message: String, index: Option<u64>) -> Finding {
    Finding {
        rule,
        message,
        execution_id: exec.to_owned(),
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
    pub fn on_fence(&mut self, exec: &str, token: u64, host: &str, floor: u64) -> Vec<Finding> {
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
    pub fn on_read(&mut self, exec: &str, len: u64, floor: u64) -> Vec<Finding> {
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
    pub fn on_due(&mut self, due: &[Timer], sent: u64) -> Vec<Finding> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Two fences asked for together may come back in either order; a token at or
    /// below one acknowledged before the request, or handed out twice, is PLACE-05.
    #[test]
    fn place_05_fence_tokens_rise_against_what_was_acknowledged_before() {
        // (tokens answered in order, each with the floor its request saw; rules found)
        type Case<'a> = (&'a [(u64, u64)], &'a [&'a str]);
        let cases: [Case; 4] = [
            (&[(1, 0), (2, 1)], &[]),
            (&[(2, 0), (1, 0)], &[]),
            (&[(2, 0), (2, 0)], &["PLACE-05"]),
            (&[(3, 0), (2, 3)], &["PLACE-05"]),
        ];
        for (answers, want) in cases {
            let mut h = History::default();
            let found: Vec<&str> = answers
                .iter()
                .flat_map(|(t, floor)| h.on_fence("e", *t, "w", *floor))
                .map(|f| f.rule)
                .collect();
            assert_eq!(found, want, "{answers:?}");
        }
    }

    /// A read sent after appends were acknowledged must reach them (SPI-23); one sent
    /// before may not.
    #[test]
    fn spi_23_a_read_reflects_what_was_acknowledged_before_it_was_sent() {
        let mut h = History::default();
        let early = h.read_floor("e");
        h.on_append("e", 3);
        assert!(h.on_read("e", 0, early).is_empty());
        let late = h.read_floor("e");
        assert_eq!(h.on_read("e", 2, late)[0].rule, "SPI-23");
        assert!(h.on_read("e", 3, late).is_empty());
    }

    /// A timer cancelled before a `due` was sent must not be in its answer (REPLAY-10);
    /// one scheduled again, or cancelled after the `due` was sent, may be.
    #[test]
    fn replay_10_a_cancelled_timer_is_not_due_again() {
        let t = Timer {
            execution_id: "e".into(),
            wake_at_ms: 5,
            key: "k".into(),
        };
        let mut h = History::default();
        let before = h.now();
        h.on_cancel("e", "k");
        assert!(h.on_due(std::slice::from_ref(&t), before).is_empty());
        let after = h.now();
        assert_eq!(
            h.on_due(std::slice::from_ref(&t), after)[0].rule,
            "REPLAY-10"
        );
        h.on_schedule("e", "k");
        let again = h.now();
        assert!(h.on_due(std::slice::from_ref(&t), again).is_empty());
    }
}
