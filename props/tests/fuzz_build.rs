//! scripts/fuzz's table of what each kind of fuzz target instruments is the one
//! docs/guides/fuzzing.md prints ("What a campaign build instruments"), the targets
//! built without libFuzzer's comparison interceptors are run without the comparison
//! mutator those interceptors feed (`use_cmp = 0` in their options), and the options
//! files of the targets built without comparison tracing do not claim it.

use loom_props::Target;
use std::path::Path;

/// One row: the target pattern (bash `case` alternatives joined by `|`), the
/// instrumented crates, whether libFuzzer keeps its interceptors, whether comparisons
/// are traced, the build directory.
type Row = (String, Vec<String>, bool, bool, String);

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The rows of the script's `case`
/// (`PATTERN) instrument="…"; flavor="…"; interceptors=N; trace=N ;;`).
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
        let trace = rest.split("trace=").nth(1).unwrap().starts_with('1');
        let dir = format!(
            "fuzz/target/build-{flavor}{}",
            if interceptors { "" } else { "-no-interceptors" }
        );
        let crates = crates.split_whitespace().map(str::to_owned).collect();
        rows.push((pattern.to_owned(), crates, interceptors, trace, dir));
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
                let names: Vec<&str> = cells[0].split(", ").map(|n| n.trim_matches('`')).collect();
                names.join("|")
            };
            let crates = cells[1].split(", ").map(crate_name).collect();
            let kept = |cell: &str| match cell {
                "kept" => true,
                "left out" => false,
                other => panic!("a kept/left out cell reads {other:?}"),
            };
            (
                pattern,
                crates,
                kept(cells[2]),
                kept(cells[3]),
                cells[4].trim_matches('`').to_owned(),
            )
        })
        .collect()
}

#[test]
fn fuzz_build_table_is_the_guides() {
    let script = script_rows();
    assert_eq!(script.len(), 4, "{script:?}");
    assert_eq!(script, guide_rows());
}

/// Whether a `case` pattern of the script matches a target name: alternatives joined by
/// `|`, each `*`, `*suffix`, `prefix*` or a name.
fn matches(pattern: &str, name: &str) -> bool {
    pattern.split('|').any(|p| {
        if let Some(suffix) = p.strip_prefix('*') {
            name.ends_with(suffix)
        } else if let Some(prefix) = p.strip_suffix('*') {
            name.starts_with(prefix)
        } else {
            p == name
        }
    })
}

/// The script's row for a target: the first that matches, as bash's `case` takes it.
fn row_of<'r>(rows: &'r [Row], name: &str) -> &'r Row {
    rows.iter()
        .find(|r| matches(&r.0, name))
        .expect("a row matches")
}

/// The targets whose script row `pick` selects, in `Target::ALL`'s order.
fn targets_whose_row(pick: impl Fn(&Row) -> bool) -> Vec<&'static str> {
    let rows = script_rows();
    Target::ALL
        .iter()
        .map(|t| t.name())
        .filter(|name| pick(row_of(&rows, name)))
        .collect()
}

/// A target's options file (fuzz/options/NAME.options), when it has one.
fn options_of(name: &str) -> Option<String> {
    std::fs::read_to_string(root().join(format!("fuzz/options/{name}.options"))).ok()
}

#[test]
fn targets_without_interceptors_run_without_the_comparison_mutator() {
    let without = targets_whose_row(|row| !row.2);
    for name in &without {
        let text =
            options_of(name).unwrap_or_else(|| panic!("fuzz/options/{name}.options is missing"));
        assert!(
            text.lines().any(|l| l.trim() == "use_cmp = 0"),
            "{name} is built without libFuzzer's interceptors but its options leave the \
             comparison mutator on"
        );
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

/// The fold targets that read JSON text are built without comparison tracing (the
/// structured ones too), every other target with it; an options file that says tracing
/// stays on would mislead whoever reads it beside the build.
#[test]
fn fold_targets_build_without_comparison_tracing() {
    let mut untraced = targets_whose_row(|row| !row.3);
    for name in &untraced {
        assert!(
            !options_of(name)
                .unwrap_or_default()
                .contains("tracing stays on"),
            "fuzz/options/{name}.options says comparison tracing stays on, but scripts/fuzz \
             builds {name} without it"
        );
    }
    untraced.sort();
    assert_eq!(
        untraced,
        [
            "fold_roundtrip",
            "fold_roundtrip_structured",
            "fold_snapshot_equivalence",
            "fold_snapshot_structured",
            "fold_total",
            "fold_total_structured",
            "versioned_fold",
            "versioned_fold_structured"
        ]
    );
}
