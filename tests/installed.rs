//! The binary as someone else installs it: copied into a directory of its own and run
//! from an empty directory, with its source tree out of reach. `vectors run`, `check`
//! and `conform` must work, and write under `./loom-reports/` of where they run.
//!
//! "Out of reach" is enforced where the machine allows it: the run happens in a private
//! mount namespace (`unshare --mount`) with an empty tmpfs mounted over the source tree,
//! so any read of a build path fails. Where that is not allowed the runs still happen
//! from an empty directory with a cleared environment, and the test says so.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The source tree the binary was built from (the test itself may know it; the binary
/// must not).
fn source_root() -> PathBuf {
    std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).expect("the source tree exists")
}

struct Installed {
    dir: PathBuf,
    bin: PathBuf,
    work: PathBuf,
    hide_source: bool,
}

impl Installed {
    /// "Installs" the binary: one copy in a fresh directory, as `cargo install --root`
    /// leaves it.
    fn new(name: &str) -> Installed {
        let dir =
            std::env::temp_dir().join(format!("loom-installed-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let bin_dir = dir.join("bin");
        let work = dir.join("work");
        std::fs::create_dir_all(&bin_dir).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(dir.join("home")).unwrap();
        let bin = bin_dir.join("loom");
        std::fs::copy(env!("CARGO_BIN_EXE_loom"), &bin).expect("copy the binary");
        assert!(
            !dir.starts_with(source_root()),
            "the temporary directory must lie outside the source tree"
        );
        let hide_source = Command::new("unshare")
            .args(["--mount", "true"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !hide_source {
            println!(
                "note: `unshare --mount` is not permitted here; running from an empty directory without hiding {}",
                source_root().display()
            );
        }
        Installed {
            dir,
            bin,
            work,
            hide_source,
        }
    }

    /// Runs `loom ARGS` in the empty work directory with a cleared environment (no
    /// CARGO_* variables, no path into the source tree) and, where allowed, with the
    /// source tree hidden under an empty tmpfs.
    fn loom(&self, args: &[&str]) -> Output {
        let path = format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            self.bin.parent().unwrap().display()
        );
        let mut cmd = if self.hide_source {
            let mut c = Command::new("unshare");
            c.args(["--mount", "--propagation", "private", "sh", "-c"])
                .arg(r#"mount -t tmpfs -o size=1m,mode=0555 loom-hidden "$1" || exit 97; shift; exec "$@""#)
                .arg("sh")
                .arg(source_root())
                .arg(&self.bin);
            c
        } else {
            Command::new(&self.bin)
        };
        cmd.args(args)
            .current_dir(&self.work)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.dir.join("home"))
            .env("LANG", "C.UTF-8");
        let out = cmd.output().expect("run the installed binary");
        assert_ne!(
            out.status.code(),
            Some(97),
            "could not hide the source tree: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// The one run folder `command` wrote under ./loom-reports/.
    fn run_folder(&self, command: &str) -> PathBuf {
        let reports = self.work.join("loom-reports");
        let mut found: Vec<PathBuf> = std::fs::read_dir(&reports)
            .unwrap_or_else(|e| panic!("{} was not written: {e}", reports.display()))
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("{command}-")))
            })
            .collect();
        assert_eq!(found.len(), 1, "run folders for {command}: {found:?}");
        found.pop().unwrap()
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn report(folder: &Path) -> loom_report::Report {
    let r = loom_report::Report::load(folder.join("report.json")).expect("a readable report");
    assert!(r.verify_digest());
    for f in ["report.html", "report.xml", "report.md"] {
        assert!(
            folder.join(f).is_file(),
            "{f} missing in {}",
            folder.display()
        );
    }
    r
}

#[test]
fn conf_01_vectors_run_check_and_conform_work_without_the_source_tree() {
    let installed = Installed::new("runs");

    let o = installed.loom(&["vectors", "run", "--quiet"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = report(&installed.run_folder("vectors"));
    let embedded = loom_vectors::set::embedded_version_file().unwrap();
    assert_eq!(r.results.len(), embedded.count, "every embedded vector ran");
    assert_eq!(
        r.environment.vector_set_digest.as_deref(),
        Some(embedded.digest.as_str())
    );

    let o = installed.loom(&["conform", "--store", "memory", "--quiet"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = report(&installed.run_folder("conform"));
    assert!(r.results.len() > 50 && r.summary.ok);

    let o = installed.loom(&["check", "--quiet", "--fold-logs", "10", "--sim-seeds", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let folder = installed.run_folder("check");
    let r = report(&folder);
    assert!(r.summary.ok && r.summary.by_area.contains_key("vectors"));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let shown = std::fs::canonicalize(folder.join("report.html")).unwrap();
    assert!(
        stdout.contains(&format!("report: {}", shown.display())),
        "the report path is printed:\n{stdout}"
    );

    // Nothing else was written: no ./target/, nothing outside ./loom-reports/.
    let written: Vec<String> = std::fs::read_dir(&installed.work)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written, ["loom-reports"]);
}

#[test]
fn vectors_export_writes_the_set_the_binary_runs() {
    let installed = Installed::new("export");
    let o = installed.loom(&["vectors", "export", "set"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let set = loom_vectors::set::load_set(&installed.work.join("set/cases")).expect("loads");
    assert_eq!(
        set.version_file(),
        loom_vectors::set::read_version_file(&installed.work.join("set/VERSION.json")).unwrap()
    );
    assert!(installed
        .work
        .join("set/schema/vector.schema.json")
        .is_file());
    // The exported set runs, and a second export is refused without --force.
    let o = installed.loom(&[
        "vectors",
        "run",
        "--vectors",
        "set",
        "--quiet",
        "--filter",
        "digest-fnv1a64",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = installed.loom(&["vectors", "export", "set"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}
