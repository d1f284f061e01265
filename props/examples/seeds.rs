//! Writes the small seed corpus under `fuzz/corpus/<target>/`: a few deterministic
//! byte strings per target (kept only if they decode and pass), plus hand-written
//! JSON-lines logs for the decoder mode of `fold_total`.
//!
//! `cargo run -p loom-props --example seeds` (rewrites the seed files; existing files
//! with other names, such as minimised corpus entries, are left alone).

use loom_props::{run_target, Target};
use std::path::Path;

const SEEDS_PER_TARGET: usize = 4;

fn xorshift(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn decodes(target: Target, b: &[u8]) -> bool {
    use loom_props::*;
    match target {
        Target::FoldSnapshotEquivalence => decode::<FoldSnapshotInput>(b).is_some(),
        Target::FoldTotal => decode::<FoldTotalInput>(b).is_some(),
        Target::VersionedFold => decode::<VersionedFoldInput>(b).is_some(),
        Target::IngressRefusal => decode::<IngressInput>(b).is_some(),
        Target::EmitIdentity => decode::<EmitInput>(b).is_some(),
        Target::CanonicalJson => decode::<CanonicalInput>(b).is_some(),
        Target::StoreDifferential => decode::<StoreInput>(b).is_some(),
        Target::FoldRoundtrip => decode::<FoldRoundtripInput>(b).is_some(),
        Target::FoldTotalStructured => decode::<structured::TotalModel>(b).is_some(),
        Target::FoldSnapshotStructured => decode::<structured::SnapshotModel>(b).is_some(),
        Target::VersionedFoldStructured => decode::<structured::VersionedModel>(b).is_some(),
        Target::FoldRoundtripStructured => decode::<structured::UnknownModel>(b).is_some(),
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for target in Target::ALL {
        let dir = root.join(target.name());
        std::fs::create_dir_all(&dir).expect("create corpus dir");
        let mut written = 0;
        // The structured targets read at most about 110 bytes (header and 24 records).
        let lens = if target.name().ends_with("_structured") {
            [24usize, 48, 72, 100, 36, 60]
        } else {
            [96usize, 256, 512, 1024, 160, 768]
        };
        for (i, len) in lens.into_iter().enumerate() {
            if written == SEEDS_PER_TARGET {
                break;
            }
            let b = xorshift(0x5eed_0000 + i as u64 * 7919 + target as u64, len);
            if decodes(target, &b) && run_target(target, &b).is_ok() {
                std::fs::write(dir.join(format!("seed-{written}")), &b).expect("write seed");
                written += 1;
            }
        }
    }
    // Decoder mode of fold_total: mode byte 0, then a log as JSON lines and as an array.
    let log = r#"{"id":"e0","workflowId":"f","executionId":"x","eventType":"EXECUTION_STARTED","sequence":0,"timestamp":1000,"payload":{"input":1}}
{"id":"e1","workflowId":"f","executionId":"x","eventType":"STEP_STARTED","sequence":1,"timestamp":1010,"payload":{"stepId":"a","input":{"__proto__":{"x":1}}}}
{"id":"e2","workflowId":"f","executionId":"x","eventType":"EXECUTION_SUSPENDED","sequence":2,"timestamp":1020,"payload":{"on":"approve","wakeAt":5000}}
{"id":"e3","workflowId":"f","executionId":"x","eventType":"STEP_FAILED","sequence":3,"timestamp":1030,"payload":{"stepId":"a","error":"boom"}}
{"id":"e4","workflowId":"f","executionId":"x","eventType":"DECISION_RECORDED","sequence":4,"timestamp":1040,"payload":{"id":"d1","choice":2,"seq":9},"metadata":{"kernel":true,"flowEmit":"00000000000000aa"}}
"#;
    let dir = root.join("fold_total");
    let mut lines = vec![0u8];
    lines.extend_from_slice(log.as_bytes());
    std::fs::write(dir.join("jsonl-log"), &lines).expect("write");
    let array = format!("[{}]", log.trim_end().replace('\n', ","));
    let mut arr = vec![0u8];
    arr.extend_from_slice(array.as_bytes());
    std::fs::write(dir.join("array-log"), &arr).expect("write");
    structured_seeds(&root);
    for t in Target::ALL {
        let n = std::fs::read_dir(root.join(t.name())).map_or(0, |d| d.count());
        println!("{}: {n} seed files", t.name());
    }
}

/// Hand-written logs for the structure-aware targets (`loom_props::structured`): event
/// records `[kind, ids, shape, leaf]` after each target's header. Kind bytes: 0 start,
/// 1 step started, 3 step completed, 5 step failed, 7 retrying, 9 in doubt, 10 suspended,
/// 11 resumed, 12 decision, 14 failed, 15 completed, 22 stamped progress, 24 quarantined,
/// 25 released, 26 consumed, 27 continued, 29 wait resume, 31 failed without error;
/// 240 and up a corruption of the event before.
fn structured_seeds(root: &Path) {
    // A turn of an agent loop: a step, a decision, a park and resume, the same decision
    // id recorded again (FOLD-38), a stamped emit, completion.
    let agent_loop: &[[u8; 4]] = &[
        [1, 0, 6, 7],
        [3, 0, 0, 12],
        [12, 0, 6, 2],
        [10, 0, 0, 0],
        [11, 1, 0, 0],
        [12, 8, 17, 9],
        [12, 5, 6, 1],
        [22, 1, 0, 0],
        [15, 0, 6, 2],
    ];
    // Failures: a failed step retried (its start corrupted with a `__proto__` key, kind
    // byte 240 and corruption 3), an effect in doubt parked on the in-doubt gate, a timed
    // park, an execution failure.
    let failures: &[[u8; 4]] = &[
        [1, 1, 8, 3],
        [240, 3, 1, 0],
        [5, 1, 0, 0],
        [7, 1, 0, 0],
        [1, 1, 9, 4],
        [9, 1, 0, 0],
        [10, 2, 0, 0],
        [11, 0, 3, 8],
        [10, 4, 100, 0],
        [14, 0, 6, 4],
    ];
    // The 1.22+ kinds: quarantine, release, consume, continue, a wait resume, a failure
    // without error; kernel-stamped (ids byte bit 7) and not.
    let newer: &[[u8; 4]] = &[
        [24, 0x81, 0, 0],
        [25, 0x82, 0, 0],
        [24, 0x00, 0, 0],
        [26, 0x81, 0, 0],
        [10, 0, 0, 0],
        [29, 0x80, 0, 0],
        [27, 0x80, 0, 0],
        [31, 0, 0, 0],
    ];
    let logs = [
        ("agent-loop", agent_loop),
        ("failures", failures),
        ("newer-kinds", newer),
    ];
    // Headers (loom_props::structured): snapshot [writer + start + points, k0, k1, k2]
    // (160: the current writer, a leading start, three points), total [pick + start],
    // versioned [writer, flags, k] (writer 9 is 1.24, flags 0 the full grammar),
    // unknown [position, kind, flags, minor, shape, leaf] (flags 0x40: kernel-stamped).
    let headers: [(Target, &[u8]); 4] = [
        (Target::FoldSnapshotStructured, &[160, 2, 5, 8]),
        (Target::FoldTotalStructured, &[3]),
        (Target::VersionedFoldStructured, &[9, 0, 4]),
        (Target::FoldRoundtripStructured, &[3, 1, 0x40, 7, 6, 2]),
    ];
    for (target, header) in headers {
        let dir = root.join(target.name());
        for (name, log) in logs {
            let mut b = header.to_vec();
            b.extend(log.iter().flatten());
            assert!(
                run_target(target, &b).is_ok(),
                "{name} fails {}",
                target.name()
            );
            std::fs::write(dir.join(name), &b).expect("write seed");
        }
    }
}
