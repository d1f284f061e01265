//! CONF-08: every fitness function in docs/fitness-functions.md that says CI runs it is
//! in fact run there. `tests/cli.rs` checks that each cited location exists; this checks
//! the step after: a test file a `scripts/test` row cites is a test target that
//! `cargo nextest run --workspace` runs (its crate is a workspace member, the file is not
//! switched off with `autotests = false` or `test = false`, nextest filters nothing out),
//! a pin file it cites is read by Rust code, and a `.ci/run` row's command is in `.ci/run`.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The table rows: (fitness function, enforced by, run in CI by).
fn rows(page: &str) -> Vec<(String, String, String)> {
    page.lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 4, "a fitness row has four cells: {l}");
            (cells[0].into(), cells[2].into(), cells[3].into())
        })
        .collect()
}

fn backticked(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The workspace members' directories, "." for the root package.
fn members(root: &Path) -> Vec<String> {
    let manifest: toml::Value = toml::from_str(&read(&root.join("Cargo.toml"))).unwrap();
    manifest["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_owned())
        .collect()
}

/// Why the test file `rel` (relative to the root) would not run under
/// `cargo nextest run --workspace`, or None when it runs.
fn not_run_reason(root: &Path, members: &[String], rel: &str) -> Option<String> {
    let (crate_dir, in_crate) = members
        .iter()
        .filter(|m| *m != ".")
        .find_map(|m| Some((m.as_str(), rel.strip_prefix(&format!("{m}/"))?)))
        .unwrap_or((".", rel));
    if crate_dir == "." && !members.iter().any(|m| m == ".") {
        return Some("the root package is not a workspace member".into());
    }
    let Some(file) = in_crate.strip_prefix("tests/") else {
        return Some(format!(
            "{in_crate} is not under {crate_dir}/tests/, so no test target runs it (benches and src are not run by nextest)"
        ));
    };
    let manifest: toml::Value =
        toml::from_str(&read(&root.join(crate_dir).join("Cargo.toml"))).unwrap();
    if let Some((dir, _)) = file.split_once('/') {
        // A helper module: some test target of the crate must include it.
        let tests = root.join(crate_dir).join("tests");
        let used = std::fs::read_dir(&tests).unwrap().flatten().any(|e| {
            let p = e.path();
            p.extension().is_some_and(|x| x == "rs") && {
                let text = read(&p);
                text.contains(&format!("{dir}/")) || text.contains(&format!("mod {dir};"))
            }
        });
        return (!used).then(|| format!("no test in {crate_dir}/tests includes {file}"));
    }
    let name = file.strip_suffix(".rs").unwrap();
    let autotests = manifest
        .get("package")
        .and_then(|p| p.get("autotests"))
        .and_then(toml::Value::as_bool)
        .unwrap_or(true);
    let declared = manifest
        .get("test")
        .and_then(toml::Value::as_array)
        .and_then(|t| {
            t.iter()
                .find(|t| t.get("name").and_then(toml::Value::as_str) == Some(name))
        });
    match declared {
        Some(t) if t.get("test").and_then(toml::Value::as_bool) == Some(false) => {
            Some(format!("[[test]] {name} has test = false"))
        }
        None if !autotests => Some(format!("autotests = false and no [[test]] {name}")),
        _ => None,
    }
}

/// True when some Rust source of a workspace member names the file `rel`.
fn read_by_rust(root: &Path, members: &[String], rel: &str) -> bool {
    let file_name = Path::new(rel).file_name().unwrap().to_str().unwrap();
    fn walk(dir: &Path, needle: &str) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return false;
        };
        entries.flatten().any(|e| {
            let p = e.path();
            if p.is_dir() {
                !p.ends_with("target") && walk(&p, needle)
            } else {
                p.extension().is_some_and(|x| x == "rs") && read(&p).contains(needle)
            }
        })
    }
    members.iter().any(|m| {
        ["src", "tests"]
            .iter()
            .any(|d| walk(&root.join(m).join(d), file_name))
    })
}

/// Everything wrong with the page against the tree at `root`.
fn problems(root: &Path) -> Vec<String> {
    let members = members(root);
    let page = read(&root.join("docs/fitness-functions.md"));
    let ci = read(&root.join(".ci/run"));
    let script = read(&root.join("scripts/test"));
    let mut out = Vec::new();
    if !ci.lines().any(|l| l.trim() == "./scripts/test") {
        out.push(".ci/run does not call ./scripts/test".into());
    }
    if !script.contains("cargo nextest run --workspace") {
        out.push("scripts/test does not run cargo nextest run --workspace".into());
    }
    if let Ok(nextest) = std::fs::read_to_string(root.join(".config/nextest.toml")) {
        if nextest.contains("default-filter") {
            out.push(".config/nextest.toml filters tests out of the run".into());
        }
    }
    let table = rows(&page);
    assert!(table.len() >= 10, "found only {} rows", table.len());
    for (name, enforced, ci_cell) in &table {
        let cells = backticked(enforced);
        if ci_cell.contains("scripts/test") {
            let tests: Vec<&str> = cells
                .iter()
                .copied()
                .filter(|c| c.ends_with(".rs") && !c.contains(' '))
                .collect();
            if tests.is_empty() {
                out.push(format!(
                    "{name}: says scripts/test runs it but cites no test file"
                ));
            }
            for t in tests {
                if let Some(why) = not_run_reason(root, &members, t) {
                    out.push(format!("{name}: {t} is not run by scripts/test: {why}"));
                }
            }
            for pin in cells
                .iter()
                .filter(|c| (c.ends_with(".json") || c.ends_with(".toml")) && !c.contains(' '))
            {
                if !read_by_rust(root, &members, pin) {
                    out.push(format!("{name}: no Rust source reads {pin}"));
                }
            }
        } else if ci_cell.contains(".ci/run") {
            for command in cells {
                let head: Vec<&str> = command.split_whitespace().take(2).collect();
                if !ci.contains(&head.join(" ")) {
                    out.push(format!("{name}: .ci/run does not run {command}"));
                }
            }
        } else if !ci_cell.starts_with("by hand") {
            out.push(format!(
                "{name}: run in CI by `{ci_cell}`, which this test cannot check"
            ));
        }
    }
    out
}

#[test]
fn conf_08_every_fitness_function_said_to_run_in_ci_is_a_test_ci_runs() {
    let found = problems(&root());
    assert!(found.is_empty(), "\n{}", found.join("\n"));
}

#[test]
fn conf_08_a_fitness_test_switched_off_in_its_manifest_is_caught() {
    // The planted side: a copy of the pieces the check reads, with the G2 test switched
    // off (`test = false`); the check must name it.
    let root = root();
    let scratch = std::env::temp_dir().join(format!("loom-conf08-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    for rel in [
        "Cargo.toml",
        "docs/fitness-functions.md",
        ".ci/run",
        "scripts/test",
    ] {
        let to = scratch.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(rel), &to).unwrap();
    }
    // Every member's manifest and test/src tree is linked in, except reference-kernel's
    // manifest, which gets the planted `test = false`.
    for m in members(&root).iter().filter(|m| *m != ".") {
        std::fs::create_dir_all(scratch.join(m)).unwrap();
        for d in ["src", "tests"] {
            let from = root.join(m).join(d);
            if from.exists() {
                std::os::unix::fs::symlink(from.canonicalize().unwrap(), scratch.join(m).join(d))
                    .unwrap();
            }
        }
        let manifest = read(&root.join(m).join("Cargo.toml"));
        let manifest = if m == "reference-kernel" {
            format!("{manifest}\n[[test]]\nname = \"g2\"\ntest = false\n")
        } else {
            manifest
        };
        std::fs::write(scratch.join(m).join("Cargo.toml"), manifest).unwrap();
    }
    for d in ["src", "tests"] {
        std::os::unix::fs::symlink(root.join(d).canonicalize().unwrap(), scratch.join(d)).unwrap();
    }
    let found = problems(&scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        found
            .iter()
            .any(|p| p.contains("reference-kernel/tests/g2.rs") && p.contains("test = false")),
        "{found:?}"
    );
}
