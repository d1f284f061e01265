//! The crates meant for users package the Rust way (`cargo package`; CI runs it in
//! .ci/run): names free on crates.io (the package `loom` belongs to another project, so
//! this one is `loom-conform`, installing the binary `loom`), descriptions and licences,
//! every normal dependency on a workspace crate versioned (a path alone is refused by
//! crates.io), every dev-dependency on one a path alone (cargo drops it from the package,
//! which breaks the circles the tests make), and no source of a published crate reaching
//! outside its own directory for a file (`include_str!("../../spec/…")` builds in the
//! source tree only). Offline: nothing here asks the registry.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The packages that are not published, and why.
const UNPUBLISHED: &[(&str, &str)] = &[(
    "loom-buggy-stores",
    "planted bugs for the harness's own tests",
)];

fn manifests() -> Vec<(PathBuf, toml::Table)> {
    let root: toml::Table = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let members = root["workspace"]["members"].as_array().unwrap();
    members
        .iter()
        .map(|m| {
            let dir = Path::new(ROOT).join(m.as_str().unwrap());
            let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            (dir, text.parse().unwrap())
        })
        .collect()
}

fn workspace_deps() -> toml::Table {
    let root: toml::Table = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    root["workspace"]["dependencies"]
        .as_table()
        .unwrap()
        .clone()
}

#[test]
fn the_binary_package_has_a_free_name_and_installs_loom() {
    let (_, root) = manifests()
        .into_iter()
        .find(|(d, _)| d == Path::new(ROOT))
        .unwrap();
    assert_eq!(root["package"]["name"].as_str(), Some("loom-conform"));
    let bins = root["bin"].as_array().unwrap();
    assert_eq!(bins[0]["name"].as_str(), Some("loom"));
    // cargo-binstall finds the release archive the release workflow uploads.
    let binstall = &root["package"]["metadata"]["binstall"];
    let url = binstall["pkg-url"].as_str().unwrap();
    assert!(
        url.contains("{ version }") && url.contains("{ target }"),
        "{url}"
    );
}

#[test]
fn every_published_crate_packages_cleanly() {
    let ws = workspace_deps();
    let mut published = 0;
    for (dir, m) in manifests() {
        let pkg = m["package"].as_table().unwrap();
        let name = pkg["name"].as_str().unwrap();
        let unpublished = pkg.get("publish").and_then(|p| p.as_bool()) == Some(false);
        assert_eq!(
            unpublished,
            UNPUBLISHED.iter().any(|(n, _)| *n == name),
            "{name}: publish = false exactly for the packages UNPUBLISHED names"
        );
        if unpublished {
            continue;
        }
        published += 1;
        for field in ["description", "license"] {
            assert!(pkg.contains_key(field), "{name}: no {field}");
        }
        let version_of = |dep: &str, spec: &toml::Value| -> Option<String> {
            match spec {
                toml::Value::String(v) => Some(v.clone()),
                toml::Value::Table(t)
                    if t.get("workspace").and_then(|w| w.as_bool()) == Some(true) =>
                {
                    match &ws[dep] {
                        toml::Value::Table(w) => w.get("version").map(|v| v.to_string()),
                        v => Some(v.to_string()),
                    }
                }
                toml::Value::Table(t) => t.get("version").map(|v| v.to_string()),
                _ => None,
            }
        };
        for (section, must_version) in [("dependencies", true), ("dev-dependencies", false)] {
            let Some(deps) = m.get(section).and_then(|d| d.as_table()) else {
                continue;
            };
            for (dep, spec) in deps {
                if !dep.starts_with("loom-") {
                    continue;
                }
                let versioned = version_of(dep, spec).is_some();
                assert_eq!(
                    versioned,
                    must_version,
                    "{name}: {section}.{dep}: {}",
                    if must_version {
                        "a normal dependency on a workspace crate needs a version to publish"
                    } else {
                        "a dev-dependency on a workspace crate is a path alone, so packaging drops it"
                    }
                );
            }
        }
        // No source file reads a file outside the crate's own directory.
        let mut files = Vec::new();
        collect_rs(&dir.join("src"), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (i, line) in text.lines().enumerate() {
                for mac in ["include_str!(\"", "include_bytes!(\""] {
                    let Some(rest) = line.split(mac).nth(1) else {
                        continue;
                    };
                    let rel = rest.split('"').next().unwrap();
                    let target = f.parent().unwrap().join(rel);
                    let target = normalize(&target);
                    assert!(
                        target.starts_with(&dir),
                        "{}:{}: {name} includes {rel}, outside its package: a published crate would not build",
                        f.display(),
                        i + 1
                    );
                }
            }
        }
    }
    assert!(published >= 10, "{published} published crates");
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The container image builds the `loom` binary of this workspace and runs it as its
/// entrypoint (docker is not needed here; CI or a user with docker builds the image).
#[test]
fn the_dockerfile_builds_loom_and_runs_it() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("Dockerfile")).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert!(lines
        .iter()
        .any(|l| l.starts_with("RUN cargo build --release --locked --bin loom")));
    let copy = lines
        .iter()
        .find(|l| l.starts_with("COPY --from=build"))
        .expect("the binary is copied");
    assert!(
        copy.contains("/target/release/loom /usr/local/bin/loom"),
        "{copy}"
    );
    assert_eq!(
        lines.iter().rfind(|l| l.starts_with("ENTRYPOINT")),
        Some(&r#"ENTRYPOINT ["loom"]"#)
    );
    // The build context leaves out build output.
    let ignore = std::fs::read_to_string(Path::new(ROOT).join(".dockerignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "target"));
}

/// ARCHITECTURE.md, `store-client/`: the stdio store client depends on the kernel's SPI
/// types, the process runner, serde and serde_json only. A dependency on the kits, the
/// reports or the simulator would bring the runner's or the simulator's concerns into every
/// user of the client.
#[test]
fn the_store_client_depends_on_the_kernel_and_the_process_runner_only() {
    let (_, m) = manifests()
        .into_iter()
        .find(|(d, _)| d.ends_with("store-client"))
        .expect("store-client is a workspace member");
    assert_eq!(m["package"]["name"].as_str(), Some("loom-store-client"));
    let mut deps: Vec<&str> = m["dependencies"]
        .as_table()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    deps.sort_unstable();
    assert_eq!(
        deps,
        ["loom-kernel", "loom-process", "serde", "serde_json"],
        "store-client/Cargo.toml"
    );
    for section in ["target", "build-dependencies"] {
        assert!(
            !m.contains_key(section),
            "store-client/Cargo.toml: no {section} dependencies"
        );
    }
}
