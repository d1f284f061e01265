//! A seeded, dependency-free generator of realistic (and sometimes hostile) event logs
//! for `loom check`'s fold part. The same seed always gives the same logs.

use loom_kernel::EventEnvelope;
use serde_json::{json, Map, Value};

/// xorshift64*: small, fast, and fully determined by its seed.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is remapped: xorshift has no zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// True with probability 1/n.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// A small JSON value, occasionally with a `__proto__` key.
pub fn value(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth >= 2 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.one_in(2)),
        2 => Value::from(rng.below(1000) as i64 - 500),
        3 => json!(rng.below(10_000) as f64 / 8.0),
        4 => Value::String(["a", "b", "ok", "é", "😀"][rng.below(5) as usize].to_string()),
        5 => Value::Array((0..rng.below(3)).map(|_| value(rng, depth + 1)).collect()),
        _ => {
            let mut m = Map::new();
            for _ in 0..rng.below(3) {
                let k = ["a", "b", "c", "__proto__", "x"][rng.below(5) as usize];
                m.insert(k.to_string(), value(rng, depth + 1));
            }
            Value::Object(m)
        }
    }
}

/// One generated event: (type, payload, kernel-stamped, flowEmit stamp).
fn event(rng: &mut Rng) -> (String, Value, bool, Option<String>) {
    let step = rng.pick(&["a", "b", "c"]).to_string();
    let gate = rng
        .pick(&["approve", "review", "__loom_indoubt__", "__loom_diverged__"])
        .to_string();
    let kernel = rng.one_in(2);
    let (t, p) = match rng.below(24) {
        0 => ("EXECUTION_STARTED", json!({"input": value(rng, 0)})),
        1 | 2 => (
            "STEP_STARTED",
            json!({"stepId": step, "input": value(rng, 0)}),
        ),
        3 | 4 => (
            "STEP_COMPLETED",
            json!({"stepId": step, "output": value(rng, 0)}),
        ),
        5 => ("STEP_FAILED", json!({"stepId": step, "error": "boom"})),
        6 => (
            "STEP_FAILED",
            json!({"stepId": step, "error": "typed", "channel": "c", "payload": value(rng, 0)}),
        ),
        7 => (
            "STEP_RETRYING",
            json!({"stepId": step, "attempt": rng.below(3) + 1}),
        ),
        8 => ("EFFECT_INDOUBT", json!({"stepId": step, "attempt": 1})),
        9 | 10 => {
            let mut p = json!({"on": gate});
            if rng.one_in(2) {
                p["wakeAt"] = json!(rng.below(100_000));
            }
            ("EXECUTION_SUSPENDED", p)
        }
        11 | 12 => (
            "EXECUTION_RESUMED",
            if rng.one_in(2) {
                Value::Null
            } else {
                value(rng, 0)
            },
        ),
        13 => (
            "DECISION_RECORDED",
            json!({"id": rng.pick(&["d1", "d2", "7"]), "choice": value(rng, 0), "context": value(rng, 1)}),
        ),
        14 => (
            "EXECUTION_FAILED",
            if rng.one_in(3) {
                json!({})
            } else {
                json!({"error": "e"})
            },
        ),
        15 => ("EXECUTION_COMPLETED", json!({"output": value(rng, 0)})),
        16 => (
            "EXECUTION_MIGRATED",
            json!({"migratedInput": value(rng, 0)}),
        ),
        17 => (
            "RESOURCE_METERED",
            json!({"tokens": rng.below(50), "costUsd": rng.below(4) as f64 * 0.25}),
        ),
        18 => (
            "INBOX_QUARANTINED",
            json!({"topic": "t", "messageId": rng.pick(&["m1", "m2"])}),
        ),
        19 => (
            "INBOX_RELEASED",
            json!({"topic": "t", "operator": "op", "deliver": rng.one_in(2)}),
        ),
        20 => (
            "MESSAGE_CONSUMED",
            json!({"topic": "t", "messageId": rng.pick(&["m1", "m2"]), "waitId": "w"}),
        ),
        21 => ("EXECUTION_CONTINUED", json!({"continuedTo": "next"})),
        22 => ("app.progress", value(rng, 0)),
        _ => ("NOT_A_KERNEL_KIND", value(rng, 0)),
    };
    let stamp = (rng.one_in(6)).then(|| {
        rng.pick(&["00000000000000aa", "00000000000000bb"])
            .to_string()
    });
    (t.to_string(), p, kernel, stamp)
}

/// A log of up to `max_len` events for execution `exec-<n>`, usually starting with
/// `EXECUTION_STARTED`.
pub fn log(rng: &mut Rng, n: u64, max_len: u64) -> Vec<EventEnvelope> {
    let len = rng.below(max_len) + 1;
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let (event_type, payload, kernel, stamp) = if i == 0 && !rng.one_in(8) {
            (
                "EXECUTION_STARTED".to_string(),
                json!({"input": n}),
                false,
                None,
            )
        } else {
            event(rng)
        };
        let mut meta = Map::new();
        if kernel {
            meta.insert("kernel".into(), Value::Bool(true));
        }
        if let Some(d) = stamp {
            meta.insert("flowEmit".into(), Value::String(d));
        }
        out.push(EventEnvelope {
            id: format!("exec-{n}:{i}"),
            workflow_id: "generated".into(),
            execution_id: format!("exec-{n}"),
            event_type,
            sequence: i,
            timestamp_ms: 1_000_000 + 10 * i as i64,
            payload: payload.into(),
            metadata: (!meta.is_empty()).then_some(meta),
        });
    }
    out
}
