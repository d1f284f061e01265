//! The vector set as a whole: the committed files are exactly what the generator
//! produces (the reviewable diff), VERSION.json pins the set's digest (the wire
//! fold-vector pin, CONF-02/CONF-03), and the whole set passes in-process.
//!
//! To accept a change after reviewing it: `LOOM_VECTORS_UPDATE=1 cargo test -p
//! loom-vectors --test set` (or `loom vectors regen`). Under `CI=true` nothing is
//! written.

use loom_vectors::generate::{diff_against, generate_all, write_set};
use loom_vectors::set::{default_cases_dir, load_set, read_version_file, vectors_dir};

fn update_requested() -> bool {
    std::env::var("LOOM_VECTORS_UPDATE").is_ok_and(|v| v == "1")
        && !std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

#[test]
fn committed_files_match_the_generator() {
    let vectors = generate_all().expect("the generator runs");
    if update_requested() {
        let n = write_set(&vectors_dir(), &vectors).expect("write the set");
        eprintln!("wrote {n} changed file(s)");
        return;
    }
    let diff = diff_against(&vectors_dir(), &vectors);
    assert!(
        diff.is_empty(),
        "the committed vectors differ from what the generator produces ({} file(s)); review and run `loom vectors regen` (or LOOM_VECTORS_UPDATE=1):\n{}",
        diff.len(),
        diff.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn generator_is_byte_identical_run_to_run() {
    let a = loom_vectors::generate::files_for(&generate_all().unwrap());
    let b = loom_vectors::generate::files_for(&generate_all().unwrap());
    assert_eq!(a, b);
}

#[test]
fn conf_02_conf_03_version_file_pins_the_set_digest() {
    let set = load_set(&default_cases_dir()).unwrap_or_else(|errors| {
        panic!(
            "{}",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    let pinned = read_version_file(&vectors_dir().join("VERSION.json")).unwrap();
    let actual = set.version_file();
    assert_eq!(
        pinned, actual,
        "vectors/VERSION.json does not pin the committed set: any change to a vector changes the set's version"
    );
    assert!(
        actual.count >= 400,
        "the set holds {} vectors",
        actual.count
    );
}
