//! What the help and messages point at travels with the binary: `loom docs` prints the
//! documents and schemas it was built with, and the simulator's scenarios run by name.

mod common;
use common::{code, scratch};
use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn loom_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Topic, the checkout file it prints, the schemas --export writes beside it.
const TOPICS: &[(&str, &str, &[&str])] = &[
    (
        "store-protocol",
        "docs/protocols/store.md",
        &["docs/protocols/store.schema.json"],
    ),
    (
        "kernel-protocol",
        "docs/protocols/kernel.md",
        &["docs/protocols/kernel.schema.json"],
    ),
    (
        "event-schema",
        "docs/event-schema.md",
        &[
            "docs/schemas/envelope.schema.json",
            "docs/schemas/state.schema.json",
            "docs/schemas/flow-script.schema.json",
        ],
    ),
    (
        "vectors",
        "docs/vectors.md",
        &["vectors/schema/vector.schema.json"],
    ),
    (
        "report-format",
        "docs/report-format.md",
        &["reports/schema/report.schema.json"],
    ),
];

#[test]
fn loom_docs_prints_and_exports_the_documents_it_was_built_with() {
    let dir = scratch("docs");
    let list = String::from_utf8(loom_in(&dir, &["docs"]).stdout).unwrap();
    for (topic, doc, schemas) in TOPICS {
        assert!(list.contains(topic), "{topic} is listed");
        let o = loom_in(&dir, &["docs", topic]);
        assert_eq!(code(&o), 0);
        let want = std::fs::read_to_string(Path::new(ROOT).join(doc)).unwrap();
        assert_eq!(String::from_utf8(o.stdout).unwrap(), want, "{topic}");
        let o = loom_in(&dir, &["docs", topic, "--schema"]);
        let printed = String::from_utf8(o.stdout).unwrap();
        for s in *schemas {
            let text = std::fs::read_to_string(Path::new(ROOT).join(s)).unwrap();
            assert!(printed.contains(&text), "{topic}: {s}");
        }
    }
    // --export writes every topic with its schemas, byte for byte.
    assert_eq!(code(&loom_in(&dir, &["docs", "--export", "out"])), 0);
    for (_, doc, schemas) in TOPICS {
        for f in std::iter::once(doc).chain(schemas.iter()) {
            let name = Path::new(f).file_name().unwrap();
            let written = std::fs::read(dir.join("out").join(name)).unwrap();
            assert_eq!(
                written,
                std::fs::read(Path::new(ROOT).join(f)).unwrap(),
                "{f}"
            );
        }
    }
    assert_eq!(code(&loom_in(&dir, &["docs", "no-such-topic"])), 2);
}

#[test]
fn every_scenario_of_the_source_tree_is_built_in_and_runs_by_name() {
    let dir = scratch("scenarios");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(Path::new(ROOT).join("simulator/scenarios")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            let o = loom_in(&dir, &["sim", "--print-scenario", &name]);
            assert_eq!(code(&o), 0, "{name} is built in");
            assert_eq!(
                o.stdout,
                std::fs::read(&path).unwrap(),
                "{name}: the same text"
            );
            names.push(name);
        }
    }
    assert!(names.len() >= 5, "{names:?}");
    // From an empty directory, by name, as the help's example says.
    let o = loom_in(&dir, &["sim", "--scenario", "two-recoverers-racing"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 0, "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("replayed two-recoverers-racing"), "{out}");
    let o = loom_in(&dir, &["sim", "--scenario", "no-such-scenario"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("built-in scenarios: crash-during-retry"));
}
