//! Canonical JSON numbers against a real ECMAScript engine (Node.js). A test of its own
//! because it needs `node`: without it the test is reported as skipped (the known-answer
//! table in canonical.rs runs everywhere), and under `LOOM_REQUIRE_TOOLS=1` it fails.

use loom_kernel::canonical::canonical_string;
use loom_test_support::{needs, run, Tool};
use serde_json::json;

/// Cross-checks number formatting against a real ECMAScript engine
/// (Node.js): 4,000 doubles from a fixed pseudo-random stream, bit patterns included.
fn numbers_match_a_javascript_engine(node: &str) {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut xs = Vec::new();
    while xs.len() < 4000 {
        let bits = next();
        let x = match xs.len() % 4 {
            0 => f64::from_bits(bits),
            1 => (bits % 1_000_000_000_000_000) as f64 / 8.0,
            2 => (bits >> 11) as f64 * 2f64.powi((bits % 80) as i32 - 40),
            _ => ((bits % 100_000) as f64) / 1000.0,
        };
        if x.is_finite() {
            xs.push(x);
        }
    }
    let bits: Vec<String> = xs.iter().map(|x| x.to_bits().to_string()).collect();
    let script = "const b=require('fs').readFileSync(0,'utf8').trim().split('\\n');const v=new DataView(new ArrayBuffer(8));\
        console.log(b.map(s=>{v.setBigUint64(0,BigInt(s));return JSON.stringify(v.getFloat64(0));}).join('\\n'));";
    let mut child = std::process::Command::new(node)
        .args(["-e", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node starts");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(bits.join("\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let js: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(js.len(), xs.len());
    for (x, expected) in xs.iter().zip(&js) {
        assert_eq!(
            &canonical_string(&json!(x)),
            expected,
            "bits {}",
            x.to_bits()
        );
    }
}

fn main() -> std::process::ExitCode {
    run(vec![needs(
        Tool::Node,
        "numbers_match_a_javascript_engine",
        numbers_match_a_javascript_engine,
    )])
}
