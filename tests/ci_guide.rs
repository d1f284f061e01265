//! docs/guides/ci.md is copy-paste ready: every YAML block parses, every workflow has
//! the shape GitHub Actions reads, and every shell step of every workflow runs here, in
//! a scratch repository laid out as the guide assumes (the Node example store as
//! `adapter.mjs`, the Node example kernel as `kernel.mjs`), job after job and matrix
//! entry after matrix entry, with `loom` on the PATH. Uploads and downloads of
//! artifacts are the shared scratch directory; `cargo install` is skipped (the binary
//! under test stands in for it); the sweep sizes in `env:` are turned down to seconds.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every ```yaml block of the guide, with its first line.
fn yaml_blocks() -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(root().join("docs/guides/ci.md")).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```yaml" {
            continue;
        }
        let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let body = body.join("\n");
        let value: Value = serde_yaml::from_str(&body)
            .unwrap_or_else(|e| panic!("a YAML block of ci.md does not parse: {e}\n{body}"));
        out.push((body.lines().next().unwrap_or("").to_string(), value));
    }
    out
}

/// The blocks that are whole workflows (their first line names the workflow file).
fn workflows() -> Vec<(String, Value)> {
    yaml_blocks()
        .into_iter()
        .filter_map(|(first, v)| {
            first
                .strip_prefix("# .github/workflows/")
                .map(|f| (f.to_string(), v))
        })
        .collect()
}

fn str_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn every_yaml_block_parses_and_every_workflow_has_the_shape_actions_reads() {
    let blocks = yaml_blocks();
    assert!(blocks.len() >= 4, "found {} YAML blocks", blocks.len());
    let workflows = workflows();
    let names: Vec<&str> = workflows.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        names,
        ["loom-store.yml", "loom-kernel.yml", "loom-sweep.yml"],
        "the three workflows"
    );
    for (file, wf) in &workflows {
        assert_copyable(file, wf);
        assert!(wf["name"].is_string(), "{file}: name");
        assert!(!wf["on"].is_null(), "{file}: on");
        let jobs = wf["jobs"]
            .as_object()
            .unwrap_or_else(|| panic!("{file}: jobs"));
        for (name, job) in jobs {
            assert!(job["runs-on"].is_string(), "{file}/{name}: runs-on");
            let steps = job["steps"]
                .as_array()
                .unwrap_or_else(|| panic!("{file}/{name}: steps"));
            for step in steps {
                let keys: Vec<&str> = step
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(String::as_str)
                    .collect();
                assert!(
                    step["run"].is_string() ^ step["uses"].is_string(),
                    "{file}/{name}: a step needs exactly one of run and uses: {keys:?}"
                );
                for k in keys {
                    assert!(
                        ["name", "id", "if", "run", "uses", "with", "env"].contains(&k),
                        "{file}/{name}: unknown step key {k}"
                    );
                }
            }
            for needed in job["needs"].as_array().into_iter().flatten() {
                assert!(
                    jobs.contains_key(needed.as_str().unwrap()),
                    "{file}/{name}: needs {needed}"
                );
            }
        }
    }
}

/// A scratch repository for the workflows: the Node store as `adapter.mjs`, the Node
/// kernel as `kernel.mjs`, an empty baseline, and `loom` on the PATH.
fn scratch_repo(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("loom-ci-guide-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let repo = dir.join("repo");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_loom"), bin.join("loom")).unwrap();
    for (example, main) in [("node-store", "adapter.mjs"), ("node-kernel", "kernel.mjs")] {
        for entry in std::fs::read_dir(root().join("examples").join(example))
            .unwrap()
            .flatten()
        {
            let p = entry.path();
            if p.extension().is_some_and(|e| e == "mjs") {
                std::fs::copy(&p, repo.join(p.file_name().unwrap())).unwrap();
            }
        }
        if example == "node-kernel" {
            std::fs::copy(repo.join("minimal-kernel.mjs"), repo.join(main)).unwrap();
        }
    }
    // The guide's baseline block: every entry commented out, so nothing is known to fail.
    std::fs::write(
        repo.join("loom-known-failures.toml"),
        "# [[entries]]\n# case_id = \"…\"\n# reason = \"…\"\n",
    )
    .unwrap();
    (dir, bin)
}

/// Every combination of a job's matrix (one empty combination without a matrix).
fn matrix(job: &Value) -> Vec<BTreeMap<String, String>> {
    let mut combos = vec![BTreeMap::new()];
    if let Some(m) = job["strategy"]["matrix"].as_object() {
        for (key, values) in m {
            let values = values.as_array().expect("a matrix list");
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.insert(key.clone(), str_of(v));
                        c
                    })
                })
                .collect();
        }
    }
    combos
}

fn expand(script: &str, combo: &BTreeMap<String, String>) -> String {
    let mut s = script.to_string();
    for (k, v) in combo {
        s = s.replace(&format!("${{{{ matrix.{k} }}}}"), v);
    }
    assert!(
        !s.contains("${{"),
        "an expression the test cannot expand: {s}"
    );
    s
}

/// Sweep sizes the test turns down: these knobs only say how long a sweep runs.
const SMALL: [(&str, &str); 2] = [("SIM_SEEDS", "4"), ("FOLD_LOGS", "8")];

fn run_workflow(file: &str, wf: &Value) {
    let (dir, bin) = scratch_repo(file.trim_end_matches(".yml"));
    let repo = dir.join("repo");
    let summary = dir.join("step-summary.md");
    let mut env: BTreeMap<String, String> = wf["env"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), str_of(v))).collect())
        .unwrap_or_default();
    for (k, v) in SMALL {
        if env.contains_key(k) {
            env.insert(k.into(), v.into());
        }
    }
    // Jobs run after the jobs they need, as Actions runs them.
    let jobs = wf["jobs"].as_object().unwrap();
    let mut order: Vec<&String> = Vec::new();
    while order.len() < jobs.len() {
        let before = order.len();
        for (name, job) in jobs {
            let ready = job["needs"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|n| order.iter().any(|done| Some(done.as_str()) == n.as_str()));
            if ready && !order.contains(&name) {
                order.push(name);
            }
        }
        assert!(order.len() > before, "{file}: the needs form a cycle");
    }
    let mut ran = 0;
    for name in order {
        let job = &jobs[name];
        for combo in matrix(job) {
            for step in job["steps"].as_array().unwrap() {
                let Some(script) = step["run"].as_str() else {
                    continue;
                };
                if script.contains("cargo install") {
                    assert_installs_this_package(script);
                    continue;
                }
                let script = expand(script, &combo);
                let out = Command::new("bash")
                    .args(["-e", "-c", &script])
                    .current_dir(&repo)
                    .env(
                        "PATH",
                        format!(
                            "{}:{}",
                            bin.display(),
                            std::env::var("PATH").unwrap_or_default()
                        ),
                    )
                    .env("GITHUB_STEP_SUMMARY", &summary)
                    .envs(&env)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{file} job {name} {combo:?}: `{script}` failed ({:?})\nstdout:\n{}\nstderr:\n{}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                ran += 1;
            }
        }
    }
    assert!(ran > 0, "{file}: no step ran");
    let summary = std::fs::read_to_string(&summary).unwrap_or_default();
    // The sweep's fold shards run `loom check --only fold`: honestly a partial pass.
    let verdict = if file == "loom-sweep.yml" {
        "### Loom conformance: ⚠️ PARTIAL PASS"
    } else {
        "### Loom conformance: ✅ PASS"
    };
    assert!(
        summary.contains(verdict),
        "{file}: the job summary was not written, or not {verdict}:\n{summary}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn workflow(file: &str) -> Value {
    workflows()
        .into_iter()
        .find(|(f, _)| f == file)
        .unwrap_or_else(|| panic!("ci.md has no {file}"))
        .1
}

fn spi_22_the_store_author_workflow_runs() {
    run_workflow("loom-store.yml", &workflow("loom-store.yml"));
}

fn conf_03_the_kernel_implementer_workflow_runs() {
    run_workflow("loom-kernel.yml", &workflow("loom-kernel.yml"));
}

fn the_sharded_sweep_workflow_runs_and_merges() {
    run_workflow("loom-sweep.yml", &workflow("loom-sweep.yml"));
}

/// A `cargo install` step of the guide installs this repository's package (the one
/// whose binary is `loom`), with its lock file, at the version the manifest declares.
fn assert_installs_this_package(script: &str) {
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let package = manifest["package"]["name"].as_str().unwrap();
    let version = manifest["workspace"]["package"]["version"]
        .as_str()
        .unwrap();
    let words: Vec<&str> = script.split_whitespace().collect();
    assert!(
        words.contains(&"--locked") && root().join("Cargo.lock").is_file(),
        "`{script}`: --locked needs the committed Cargo.lock"
    );
    assert!(words.contains(&package), "`{script}` installs {package}");
    let pinned = words
        .iter()
        .position(|w| *w == "--version")
        .map(|i| words[i + 1]);
    assert_eq!(pinned, Some(version), "`{script}`: pinned to this version");
}

/// The least major version of each action the workflows may use: older majors run on
/// end-of-life Node versions and are refused or warned about by GitHub.
const ACTION_MAJORS_MIN: [(&str, u32); 6] = [
    ("actions/checkout", 5),
    ("actions/setup-node", 5),
    ("actions/cache", 4),
    ("actions/upload-artifact", 4),
    ("actions/download-artifact", 4),
    ("dorny/test-reporter", 2),
];

/// The least Node major a workflow may ask for (Node 20 reached its end of life in April 2026).
const NODE_MAJOR_MIN: u64 = 22;

/// A workflow works when copied into a repository whose token is read-only by default:
/// it says which permissions it needs, a job that publishes a check (dorny/test-reporter)
/// has `checks: write`, a job that creates a release has `contents: write`, and every
/// action is at a current major with a supported Node.
fn assert_copyable(file: &str, wf: &Value) {
    assert!(
        wf["permissions"].is_object(),
        "{file}: no top-level permissions block (a copied workflow must not rely on the repository's default token)"
    );
    for (name, job) in wf["jobs"].as_object().unwrap() {
        let perm = |key: &str| {
            job["permissions"][key]
                .as_str()
                .or(wf["permissions"][key].as_str())
                .unwrap_or("none")
                .to_string()
        };
        for step in job["steps"].as_array().unwrap() {
            let uses = step["uses"].as_str().unwrap_or_default();
            if let Some((action, version)) = uses.split_once('@') {
                let major: u32 = version
                    .trim_start_matches('v')
                    .split('.')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap_or_else(|_| panic!("{file}/{name}: {uses}: not a major version"));
                if let Some((_, min)) = ACTION_MAJORS_MIN.iter().find(|(a, _)| *a == action) {
                    assert!(major >= *min, "{file}/{name}: {uses} is older than v{min}");
                }
                if action == "dorny/test-reporter" {
                    assert_eq!(
                        perm("checks"),
                        "write",
                        "{file}/{name}: {uses} needs checks: write"
                    );
                }
            }
            if let Some(node) = step["with"]["node-version"].as_u64() {
                assert!(node >= NODE_MAJOR_MIN, "{file}/{name}: node-version {node}");
            }
            if step["run"]
                .as_str()
                .is_some_and(|r| r.contains("gh release create"))
            {
                assert_eq!(
                    perm("contents"),
                    "write",
                    "{file}/{name}: creating a release"
                );
            }
        }
    }
}

/// The repository's own workflows (ClusterFuzzLite on pull requests and nightly) parse,
/// have the shape Actions reads, and point at what exists: the paths a pull request
/// filter names, the build image and script, and fuzz targets to build.
fn the_repositorys_own_workflows_parse_and_name_what_exists() {
    let dir = root().join(".github/workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["cflite_batch.yml", "cflite_pr.yml", "release.yml"]);
    release_workflow(&files[2]);
    for file in files
        .iter()
        .filter(|f| f.to_string_lossy().contains("cflite_"))
    {
        let wf: Value = serde_yaml::from_str(&std::fs::read_to_string(file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(wf["name"].is_string() && !wf["on"].is_null(), "{file:?}");
        for path in wf["on"]["pull_request"]["paths"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let dir = path.as_str().unwrap().trim_end_matches("/**");
            assert!(root().join(dir).exists(), "{file:?}: path filter {dir}");
        }
        for (name, job) in wf["jobs"].as_object().unwrap() {
            let steps = job["steps"].as_array().unwrap();
            assert!(!steps.is_empty(), "{file:?}/{name}");
            for step in steps {
                let uses = step["uses"].as_str().unwrap_or_default();
                assert!(
                    uses.starts_with("google/clusterfuzzlite/actions/"),
                    "{file:?}/{name}: {uses}"
                );
                assert_eq!(step["with"]["language"].as_str().unwrap_or("rust"), "rust");
            }
        }
    }
    for f in ["Dockerfile", "build.sh", "project.yaml"] {
        assert!(root().join(".clusterfuzzlite").join(f).is_file(), "{f}");
    }
    let fuzz: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap()).unwrap();
    let targets = fuzz["bin"].as_array().map(Vec::len).unwrap_or(0);
    assert!(targets >= 4, "fuzz/ declares {targets} targets");
}

/// The release workflow: on a version tag, one build per target of the matrix the
/// install guide names, each packed as the archive cargo-binstall's `pkg-url` names with
/// a checksum beside it, then one job that checks the checksums and publishes them.
fn release_workflow(file: &Path) {
    let wf: Value = serde_yaml::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_copyable("release.yml", &wf);
    assert_eq!(wf["on"]["push"]["tags"][0], "v*");
    let build = &wf["jobs"]["build"];
    let targets: Vec<&str> = build["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["target"].as_str().unwrap())
        .collect();
    for t in [
        "x86_64-unknown-linux-gnu",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-gnu",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(targets.contains(&t), "release.yml builds no {t}");
    }
    let steps = build["steps"].as_array().unwrap();
    let script: String = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        script.contains("cargo build --release --locked --bin loom"),
        "{script}"
    );
    assert!(
        script.contains("loom-${{ matrix.target }}.tar.gz") && script.contains("sha256"),
        "{script}"
    );
    // The archive is the one cargo-binstall looks for.
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let url = manifest["package"]["metadata"]["binstall"]["pkg-url"]
        .as_str()
        .unwrap();
    assert!(url.ends_with("/loom-{ target }.tar.gz"), "{url}");
    // Release binaries are stripped, without debug info.
    let release = &manifest["profile"]["release"];
    assert_eq!(release["strip"].as_str(), Some("symbols"));
    assert_eq!(release["debug"].as_bool(), Some(false));
    assert_eq!(wf["jobs"]["publish"]["needs"][0], "build");
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, test, Tool};
    run(vec![
        test(
            "every_yaml_block_parses_and_every_workflow_has_the_shape_actions_reads",
            every_yaml_block_parses_and_every_workflow_has_the_shape_actions_reads,
        ),
        needs(Tool::Node, "spi_22_the_store_author_workflow_runs", |_| {
            spi_22_the_store_author_workflow_runs()
        }),
        needs(
            Tool::Node,
            "conf_03_the_kernel_implementer_workflow_runs",
            |_| conf_03_the_kernel_implementer_workflow_runs(),
        ),
        test(
            "the_sharded_sweep_workflow_runs_and_merges",
            the_sharded_sweep_workflow_runs_and_merges,
        ),
        test(
            "the_repositorys_own_workflows_parse_and_name_what_exists",
            the_repositorys_own_workflows_parse_and_name_what_exists,
        ),
    ])
}
