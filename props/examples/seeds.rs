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
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for target in Target::ALL {
        let dir = root.join(target.name());
        std::fs::create_dir_all(&dir).expect("create corpus dir");
        let mut written = 0;
        for (i, len) in [96usize, 256, 512, 1024, 160, 768].into_iter().enumerate() {
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
    for t in Target::ALL {
        let n = std::fs::read_dir(root.join(t.name())).map_or(0, |d| d.count());
        println!("{}: {n} seed files", t.name());
    }
}
