//! scripts/fuzz's table of what each kind of fuzz target instruments is the one
//! docs/guides/fuzzing.md prints ("What a campaign build instruments"), and the targets
//! built without libFuzzer's comparison interceptors are run without the comparison
//! mutator those interceptors feed (`use_cmp = 0` in their options).

use loom_props::Target;
use std::path::Path;

/// One row: the target pattern, the instrumented crates, whether libFuzzer keeps its
/// interceptors, the build directory.
type Row = (String, Vec<String>, bool, String);

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The rows of the script's `case` (`PATTERN) instrument="…"; flavor="…"; interceptors=N ;;`).
fn script_rows() -> Vec<Row> {
    let text = std::fs::read_to_string(root().join("scripts/fuzz")).unwrap();
    let mut rows = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let Some((pattern, rest)) = line.split_once(')') else {
            continue;
        };
        let Some(rest) = rest.trim().strip_prefix("instrument=\"") else {
            continue;
        };
        let (crates, rest) = rest.split_once('"').unwrap();
        let flavor = rest
            .split("flavor=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let interceptors = rest.split("interceptors=").nth(1).unwrap().starts_with('1');
        let dir = format!(
            "fuzz/target/build-{flavor}{}",
            if interceptors { "" } else { "-no-interceptors" }
        );
        let crates = crates.split_whitespace().map(str::to_owned).collect();
        rows.push((pattern.to_owned(), crates, interceptors, dir));
    }
    rows
}

/// The guide's table, its words turned back into the script's names.
fn guide_rows() -> Vec<Row> {
    let text = std::fs::read_to_string(root().join("docs/guides/fuzzing.md")).unwrap();
    let table = text
        .split("### What a campaign build instruments")
        .nth(1)
        .expect("the guide has the section");
    let crate_name = |words: &str| match words.trim() {
        "the kernel" => "loom_kernel".to_owned(),
        "the stores" => "loom_stores".to_owned(),
        w if w.starts_with("serde_json") => "serde_json".to_owned(),
        other => panic!("the guide names a crate the test does not know: {other}"),
    };
    // The first table of the section: its lines up to the first that is not a row.
    table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let pattern = if cells[0].starts_with("every other") {
                "*".to_owned()
            } else {
                cells[0].trim_matches('`').to_owned()
            };
            let crates = cells[1].split(", ").map(crate_name).collect();
            let interceptors = match cells[2] {
                "kept" => true,
                "left out" => false,
                other => panic!("interceptors cell {other:?}"),
            };
            (
                pattern,
                crates,
                interceptors,
                cells[3].trim_matches('`').to_owned(),
            )
        })
        .collect()
}

#[test]
fn fuzz_build_table_is_the_guides() {
    let script = script_rows();
    assert_eq!(script.len(), 3, "{script:?}");
    assert_eq!(script, guide_rows());
}

/// Whether a `case` pattern of the script matches a target name (`*`, `*_suffix` or a name).
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_prefix('*') {
        Some(suffix) => name.ends_with(suffix),
        None => pattern == name,
    }
}

#[test]
fn targets_without_interceptors_run_without_the_comparison_mutator() {
    let rows = script_rows();
    let mut without = Vec::new();
    for target in Target::ALL {
        let name = target.name();
        // The first row that matches, as bash's `case` takes it.
        let row = rows
            .iter()
            .find(|r| matches(&r.0, name))
            .expect("a row matches");
        if row.2 {
            continue;
        }
        let options = root().join(format!("fuzz/options/{name}.options"));
        let text = std::fs::read_to_string(&options)
            .unwrap_or_else(|e| panic!("{}: {e}", options.display()));
        assert!(
            text.lines().any(|l| l.trim() == "use_cmp = 0"),
            "{name} is built without libFuzzer's interceptors but its options leave the \
             comparison mutator on"
        );
        without.push(name);
    }
    assert_eq!(
        without,
        [
            "fold_total_structured",
            "fold_snapshot_structured",
            "versioned_fold_structured",
            "fold_roundtrip_structured"
        ]
    );
}
