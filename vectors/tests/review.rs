//! The review snapshot of the generated vector set (insta): one line per vector with its
//! kind, rules and a digest of its expected answer. A change to the kernel that moves
//! any expected value shows up here as a reviewable diff (`cargo insta review`), next to
//! the full files under vectors/cases/. Under `CI=true` insta writes nothing, so a
//! missing or different snapshot fails.

use loom_kernel::canonical_string;
use loom_kernel::digest::sha256_hex;
use loom_vectors::generate::generate_all;
use std::collections::BTreeMap;

#[test]
fn generated_vector_index_is_reviewed() {
    let vectors = generate_all().expect("the generator runs");
    let index: BTreeMap<String, String> = vectors
        .iter()
        .map(|v| {
            let expected = sha256_hex(canonical_string(&v.expected).as_bytes());
            (
                v.id.clone(),
                format!(
                    "{:?} [{}] expected sha256:{} basis {}{}",
                    v.kind,
                    v.rules.join(","),
                    &expected[..16],
                    v.basis.kind.as_str(),
                    v.basis
                        .resolutions
                        .iter()
                        .map(|r| format!(" {}{:?}", r.gap, r.paths))
                        .chain(v.alternatives.iter().map(|a| format!(" or {}", a.reading)))
                        .collect::<String>()
                ),
            )
        })
        .collect();
    insta::assert_json_snapshot!("generated-vector-index", index);
}
