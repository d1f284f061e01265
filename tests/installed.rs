//! The binary as someone else installs it: copied into a directory of its own and run
//! from an empty directory, with its source tree out of reach. `vectors run`, `check`
//! and `conform` must work, and write under `./loom-reports/` of where they run.
//!
//! "Out of reach" is enforced where the machine allows it: the run happens in a private
//! mount namespace (`unshare --mount`) with an empty tmpfs mounted over the source tree,
//! so any read of a build path fails. Where that is not allowed the runs still happen
//! from an empty directory with a cleared environment, and the test says so.
//!
//! A failed read can be hidden by a fallback, so where `strace` is installed (CI installs
//! it) every file system call of every process a run starts is recorded, and none may
//! name the source tree or the build's target directory. The binary itself and every
//! `--help` page are searched for those paths too: a path compiled into the program is
//! one it may read at run time, or show a user as a default that exists only on the
//! build machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The source tree the binary was built from (the test itself may know it; the binary
/// must not).
fn source_root() -> PathBuf {
    std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).expect("the source tree exists")
}

/// The target directory the binary under test was built into (it may lie outside the
/// source tree, with CARGO_TARGET_DIR).
fn target_root() -> PathBuf {
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_loom")).expect("the binary exists");
    // <target>/<profile>/loom
    bin.parent()
        .and_then(Path::parent)
        .expect("the binary lies in <target>/<profile>/")
        .to_path_buf()
}

/// The paths of the build machine no run may touch and no output may show.
fn build_paths() -> Vec<String> {
    vec![
        source_root().display().to_string(),
        target_root().display().to_string(),
    ]
}

struct Installed {
    dir: PathBuf,
    bin: PathBuf,
    work: PathBuf,
    hide_source: bool,
    /// Where `strace` writes its record of the file system calls, when it is installed.
    trace: Option<PathBuf>,
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
        let traced = Command::new("strace")
            .args(["-f", "-qq", "-e", "trace=%file", "-o", "/dev/null", "true"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !traced {
            println!(
                "note: strace is not installed (or not permitted); file accesses are not recorded (CI installs it, see .ci/run)"
            );
        }
        let trace = traced.then(|| dir.join("strace.log"));
        Installed {
            dir,
            bin,
            work,
            hide_source,
            trace,
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
        // `strace -f` follows every process the run starts (adapters, shells).
        let mut program: Vec<std::ffi::OsString> = Vec::new();
        if let Some(trace) = &self.trace {
            let _ = std::fs::remove_file(trace);
            program.extend(
                ["strace", "-f", "-qq", "-e", "trace=%file", "-o"].map(std::ffi::OsString::from),
            );
            program.push(trace.clone().into());
        }
        program.push(self.bin.clone().into());
        let mut cmd = if self.hide_source {
            let mut c = Command::new("unshare");
            c.args(["--mount", "--propagation", "private", "sh", "-c"])
                .arg(r#"mount -t tmpfs -o size=1m,mode=0555 loom-hidden "$1" || exit 97; shift; exec "$@""#)
                .arg("sh")
                .arg(source_root())
                .args(&program);
            c
        } else {
            let mut c = Command::new(&program[0]);
            c.args(&program[1..]);
            c
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
        self.assert_untouched(args, &out);
        out
    }

    /// The run neither touched nor showed a path of the build machine.
    fn assert_untouched(&self, args: &[&str], out: &Output) {
        let shown = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let trace = self
            .trace
            .as_ref()
            .map(|t| std::fs::read_to_string(t).expect("strace wrote its record"))
            .unwrap_or_default();
        if self.trace.is_some() {
            assert!(
                trace.contains("execve("),
                "strace recorded nothing for loom {args:?}"
            );
        }
        for p in build_paths() {
            assert!(
                !shown.contains(&p),
                "loom {args:?} shows the build path {p}:\n{shown}"
            );
            let touched: Vec<&str> = trace.lines().filter(|l| l.contains(&p)).collect();
            assert!(
                touched.is_empty(),
                "loom {args:?} reached into the build machine's {p}:\n{}",
                touched.join("\n")
            );
        }
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
    let r = report(&installed.run_folder("vectors-run"));
    let embedded = loom_vectors::set::embedded_version_file().unwrap();
    // One result per vector, plus the adapter's hello check (ABI-05).
    let vector_results = r
        .results
        .iter()
        .filter(|x| x.case_id != loom_vectors::runner::HELLO_ABI_CASE)
        .count();
    assert_eq!(vector_results, embedded.count, "every embedded vector ran");
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

/// The byte ranges an ELF64 file loads into memory (the sections with SHF_ALLOC that
/// occupy file space): what the program can read at run time, without the debug
/// information, which names the build directory and is never loaded.
fn loaded_bytes(elf: &[u8]) -> Vec<&[u8]> {
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
    assert_eq!(&elf[..4], b"\x7fELF", "an ELF file");
    assert_eq!(elf[4], 2, "64-bit ELF");
    assert_eq!(elf[5], 1, "little-endian ELF");
    const SHF_ALLOC: u64 = 0x2;
    const SHT_NOBITS: u32 = 8;
    let shoff = u64_at(0x28) as usize;
    let shentsize = u16_at(0x3a) as usize;
    let shnum = u16_at(0x3c) as usize;
    (0..shnum)
        .map(|i| shoff + i * shentsize)
        .filter(|&h| u64_at(h + 8) & SHF_ALLOC != 0 && u32_at(h + 4) != SHT_NOBITS)
        .map(|h| {
            let (off, size) = (u64_at(h + 0x18) as usize, u64_at(h + 0x20) as usize);
            &elf[off..off + size]
        })
        .collect()
}

/// The subcommands a `--help` page lists under "Commands:".
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn conf_01_the_binary_and_its_help_name_no_path_of_the_build_machine() {
    let installed = Installed::new("paths");
    let elf = std::fs::read(&installed.bin).unwrap();
    let loaded = loaded_bytes(&elf);
    assert!(loaded.iter().map(|s| s.len()).sum::<usize>() > 1_000_000);
    for p in build_paths() {
        for section in &loaded {
            assert!(
                !section.windows(p.len()).any(|w| w == p.as_bytes()),
                "the binary holds the build path {p} in a section it loads"
            );
        }
    }
    // Every --help page, found by walking the command tree; `loom` runs each under
    // the same watch as every other run (assert_untouched).
    let mut pending = vec![Vec::<String>::new()];
    let mut pages = 0;
    while let Some(words) = pending.pop() {
        let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
        args.push("--help");
        let o = installed.loom(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        pages += 1;
        for sub in subcommands(&String::from_utf8_lossy(&o.stdout)) {
            let mut w = words.clone();
            w.push(sub);
            pending.push(w);
        }
    }
    assert!(pages >= 18, "{pages} help pages");
}

#[test]
fn conf_01_reading_commands_work_without_the_source_tree() {
    let installed = Installed::new("reading");
    let log = installed.work.join("log.jsonl");
    std::fs::write(
        &log,
        concat!(
            r#"{"id":"e0","workflowId":"f","executionId":"x","eventType":"EXECUTION_STARTED","sequence":0,"timestamp":1000,"payload":{"input":1}}"#,
            "\n",
            r#"{"id":"e1","workflowId":"f","executionId":"x","eventType":"STEP_STARTED","sequence":1,"timestamp":1001,"payload":{"stepId":"a"}}"#,
            "\n"
        ),
    )
    .unwrap();
    for args in [
        &["rules", "FOLD-09"][..],
        &["rules", "--markdown"],
        &["vectors", "list", "--kind", "digest"],
        &["kernel-manifest", "--json"],
        &["replay", "--corpus"],
        &["fold", "log.jsonl"],
        &["verify-log", "log.jsonl"],
        &["compat", "--abi", "1.0.0"],
    ] {
        let o = installed.loom(args);
        assert!(
            o.status.code() == Some(0) || (args[0] == "compat" && o.status.code() == Some(1)),
            "loom {args:?}: {}",
            text(&o)
        );
        assert!(!o.stdout.is_empty(), "loom {args:?} printed nothing");
    }
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
