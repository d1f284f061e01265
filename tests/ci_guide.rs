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
    assert!(
        summary.contains("### Loom conformance: ✅ PASS"),
        "{file}: the job summary was not written:\n{summary}"
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

/// A `cargo install` step of the guide installs this repository's `loom` package, with
/// the lock file this repository commits, at the version the manifest declares.
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
    assert_eq!(
        words.last(),
        Some(&package),
        "`{script}` installs {package}"
    );
    let tag = words
        .iter()
        .position(|w| *w == "--tag")
        .map(|i| words[i + 1]);
    assert_eq!(
        tag,
        Some(format!("v{version}").as_str()),
        "`{script}`: the tag of this version"
    );
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
    assert_eq!(names, ["cflite_batch.yml", "cflite_pr.yml"]);
    for file in &files {
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
