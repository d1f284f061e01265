//! Numbers the documents state are checked against what they count, so they cannot go
//! stale: the vector count in the README, the size of the Python example adapter, and
//! the store guide's table of kit results, which a real run of that adapter reproduces.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

/// The number just before `suffix` in `text` (digits, commas allowed).
fn number_before(text: &str, suffix: &str) -> usize {
    let at = text
        .find(suffix)
        .unwrap_or_else(|| panic!("`{suffix}` not found"));
    let digits: String = text[..at]
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .filter(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number before `{suffix}`"))
}

fn conf_02_the_readme_states_the_vector_count_to_the_hundred() {
    let count = loom_vectors::set::embedded_version_file().unwrap().count;
    let stated = number_before(&read("README.md"), "+ JSON files");
    assert!(
        stated <= count && count - stated < 100,
        "README says {stated}+ vectors, the set holds {count}"
    );
}

fn the_store_guide_states_the_python_adapter_size() {
    let lines = read("examples/python-sqlite-store/adapter.py")
        .lines()
        .count();
    let stated = number_before(
        &read("docs/guides/store-authors.md"),
        " lines of standard-library",
    );
    let off = stated.abs_diff(lines) as f64 / lines as f64;
    assert!(
        off <= 0.1,
        "the guide says about {stated} lines; adapter.py has {lines}"
    );
}

fn spi_22_the_store_guide_kit_table_is_what_the_python_adapter_gets() {
    let guide = read("docs/guides/store-authors.md");
    let start = guide
        .find("   kit                    pass")
        .expect("the kit table");
    let table: Vec<Vec<String>> = guide[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("```"))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    assert!(table.len() >= 10, "{table:?}");

    let out = std::env::temp_dir().join(format!("loom-doc-counts-{}", std::process::id()));
    let adapter = root().join("examples/python-sqlite-store/adapter.py");
    let o = Command::new(env!("CARGO_BIN_EXE_loom"))
        .args([
            "conform",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
            "--store",
        ])
        .arg(format!("cmd:python3 {}", adapter.display()))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let report = loom_report::Report::load(out.join("report.json")).unwrap();
    for row in &table {
        let kit = &row[0];
        let mine: Vec<_> = report.results.iter().filter(|r| &r.suite == kit).collect();
        let n = |f: &dyn Fn(loom_report::Status) -> bool| {
            mine.iter().filter(|r| f(r.status)).count().to_string()
        };
        use loom_report::Status as S;
        let actual = [
            kit.clone(),
            n(&|s| s == S::Pass),
            n(&|s| s == S::Fail),
            n(&|s| s.is_skip()),
            n(&|s| s == S::Error),
            n(&|s| s == S::Timeout),
        ];
        assert_eq!(
            row.as_slice(),
            actual.as_slice(),
            "docs/guides/store-authors.md: the {kit} row differs from a real run"
        );
    }
    std::fs::remove_dir_all(&out).unwrap();
}

fn the_readme_states_the_catalogue_size_in_the_reference_figure() {
    let readme = read("README.md");
    let at = readme
        .find(" rules of the catalogue")
        .expect("README states the figure");
    let stated: usize = readme[..at]
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a number before ` rules of the catalogue`");
    assert_eq!(stated, loom_spec::Catalogue::load().rules().len());
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, test, Tool};
    run(vec![
        test(
            "conf_02_the_readme_states_the_vector_count_to_the_hundred",
            conf_02_the_readme_states_the_vector_count_to_the_hundred,
        ),
        test(
            "the_store_guide_states_the_python_adapter_size",
            the_store_guide_states_the_python_adapter_size,
        ),
        needs(
            Tool::Python3,
            "spi_22_the_store_guide_kit_table_is_what_the_python_adapter_gets",
            |_| spi_22_the_store_guide_kit_table_is_what_the_python_adapter_gets(),
        ),
        test(
            "the_readme_states_the_catalogue_size_in_the_reference_figure",
            the_readme_states_the_catalogue_size_in_the_reference_figure,
        ),
    ])
}
