//! What the workspace's `harness = false` test targets share: a test that cannot run on
//! this machine is reported as **skipped**, never as passed, and `LOOM_REQUIRE_TOOLS=1`
//! turns a skip for a missing tool or service into a failure that says what is missing
//! and how to provide it.
//!
//! A test is a libtest-mimic [`Trial`]. Whether it is skipped is decided while the test
//! binary builds its list, because that list is all a runner sees: nextest asks each
//! binary for `--list` and `--list --ignored`, reports the ignored trials as `SKIP` (and,
//! with `junit.report-skipped = "ignored"`, as `<skipped/>` in its JUnit file), and runs
//! every other trial in a process of its own, judging it by the exit code alone. A test
//! that found out only while running that it could not run would have to exit 0, and
//! would be counted as a pass.
//!
//! A skipped trial keeps its test name and carries the reason in a bracketed tag,
//! `<name> [<tag>]`: `[skip-missing python3]`, `[skip-not-claimed readRange]`. Forced
//! to run (`--ignored`), it fails with the reason.

use std::cell::RefCell;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::OnceLock;

pub use libtest_mimic::{Arguments, Failed, Trial};

/// The variable that turns a skip for a missing tool or service into a failure. CI sets
/// it (`.ci/run`); any value other than empty or `0` turns it on.
pub const REQUIRE_TOOLS_ENV: &str = "LOOM_REQUIRE_TOOLS";

/// The variable naming the PostgreSQL database the PostgreSQL store tests use.
pub const PG_URL_ENV: &str = "LOOM_PG_URL";

/// The variable naming the specification's rule list (RULES.md), which lives outside
/// this repository; without it the list is looked for as `shared/spec/RULES.md` in every
/// directory above the repository.
pub const RULES_MD_ENV: &str = "LOOM_RULES_MD";

/// The prefix of every skip tag, so a reader of test names (and of nextest's JUnit file)
/// can tell a skipped trial from a test whose name happens to end in brackets.
pub const SKIP_TAG_PREFIX: &str = "skip-";

/// A tool or service some tests need from the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// A PostgreSQL database, named by `LOOM_PG_URL`.
    Postgres,
    /// The `python3` interpreter.
    Python3,
    /// Node.js (`node`, 20 or newer for the JavaScript examples).
    Node,
    /// A headless Chromium (`chromium`, `chromium-browser` or `google-chrome`).
    Chromium,
    /// The specification's rule list, `RULES.md` (outside this repository).
    RulesMd,
}

/// Every tool, in a fixed order (the index of each is its cache slot).
pub const TOOLS: [Tool; 5] = [
    Tool::Postgres,
    Tool::Python3,
    Tool::Node,
    Tool::Chromium,
    Tool::RulesMd,
];

/// The programs tried, in order, for [`Tool::Chromium`].
const CHROMIUM_PROGRAMS: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

impl Tool {
    /// The tool's name as skip tags and messages spell it.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Postgres => "postgres",
            Tool::Python3 => "python3",
            Tool::Node => "node",
            Tool::Chromium => "chromium",
            Tool::RulesMd => "RULES.md",
        }
    }

    /// How to provide the tool, in one sentence.
    pub fn how_to_provide(self) -> &'static str {
        match self {
            Tool::Postgres => {
                "set LOOM_PG_URL to a PostgreSQL URL, e.g. postgres://postgres@127.0.0.1:5432/test \
                 (./scripts/test sets it when pg_isready finds a local server)"
            }
            Tool::Python3 => "install python3 (Debian: apt-get install -y python3)",
            Tool::Node => "install Node.js 20 or newer (Debian: apt-get install -y nodejs)",
            Tool::Chromium => "install Chromium (Debian: apt-get install -y chromium)",
            Tool::RulesMd => {
                "set LOOM_RULES_MD to the path of the specification's RULES.md, or check the \
                 repository out next to the specification's shared/ directory"
            }
        }
    }

    fn slot(self) -> usize {
        match self {
            Tool::Postgres => 0,
            Tool::Python3 => 1,
            Tool::Node => 2,
            Tool::Chromium => 3,
            Tool::RulesMd => 4,
        }
    }

    /// Looks for the tool on this machine, once per process: what to use (the database
    /// URL, the program to run) or why it was not found.
    pub fn locate(self) -> Result<String, String> {
        static FOUND: [OnceLock<Result<String, String>>; TOOLS.len()] =
            [const { OnceLock::new() }; TOOLS.len()];
        FOUND[self.slot()].get_or_init(|| self.locate_now()).clone()
    }

    fn locate_now(self) -> Result<String, String> {
        match self {
            Tool::Postgres => match std::env::var(PG_URL_ENV) {
                Ok(url) if !url.trim().is_empty() => Ok(url),
                _ => Err(format!("{PG_URL_ENV} is unset")),
            },
            Tool::Python3 => program("python3"),
            Tool::Node => program("node"),
            Tool::Chromium => CHROMIUM_PROGRAMS
                .iter()
                .find_map(|p| program(p).ok())
                .ok_or_else(|| format!("none of {} runs", CHROMIUM_PROGRAMS.join(", "))),
            Tool::RulesMd => rules_md(),
        }
    }
}

/// The path of RULES.md: `LOOM_RULES_MD`, else `shared/spec/RULES.md` in the nearest
/// directory above this repository that has one (wherever the repository is checked out).
fn rules_md() -> Result<String, String> {
    if let Ok(path) = std::env::var(RULES_MD_ENV) {
        if !path.trim().is_empty() {
            return if Path::new(&path).is_file() {
                Ok(path)
            } else {
                Err(format!("{RULES_MD_ENV}={path} is not a file"))
            };
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/spec/RULES.md"))
        .find(|candidate| candidate.is_file())
        .map(|found| found.display().to_string())
        .ok_or_else(|| {
            format!("{RULES_MD_ENV} is unset and no directory above the repository has shared/spec/RULES.md")
        })
}

/// `Ok(name)` when `name --version` runs and succeeds.
fn program(name: &str) -> Result<String, String> {
    match Command::new(name)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(status) if status.success() => Ok(name.to_string()),
        Ok(status) => Err(format!("`{name} --version` failed ({status})")),
        Err(e) => Err(format!("`{name}` does not start: {e}")),
    }
}

/// True when `LOOM_REQUIRE_TOOLS` asks for every tool to be present.
pub fn tools_required() -> bool {
    std::env::var(REQUIRE_TOOLS_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// What a test that needs a tool does on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// The tool is there: the URL or program to use.
    Ready(String),
    /// The tool is missing and may be: the test is skipped.
    Skip {
        /// The skip tag, e.g. `skip-missing python3`.
        tag: String,
        /// What is missing and how to provide it.
        reason: String,
    },
    /// The tool is missing and `LOOM_REQUIRE_TOOLS` forbids skipping: the test fails
    /// with this message.
    Fail(String),
}

/// Whether `tool` is here and, when it is not, whether that is a skip or a failure.
pub fn availability(tool: Tool) -> Availability {
    match tool.locate() {
        Ok(found) => Availability::Ready(found),
        // RULES.md lives outside the repository, so no CI can install it: its absence
        // stays a skip even when tools are required.
        Err(why) if tools_required() && tool != Tool::RulesMd => Availability::Fail(format!(
            "{} is missing ({why}) and {REQUIRE_TOOLS_ENV}=1 forbids skipping the tests that need it; {}",
            tool.name(),
            tool.how_to_provide()
        )),
        Err(why) => Availability::Skip {
            tag: format!("{SKIP_TAG_PREFIX}missing {}", tool.name()),
            reason: format!("{} is missing ({why}); {}", tool.name(), tool.how_to_provide()),
        },
    }
}

/// The tool's URL or program, for code that runs only when the tool is there; panics
/// with the reason otherwise (a test body reached without its tool is a harness bug).
pub fn located(tool: Tool) -> String {
    tool.locate()
        .unwrap_or_else(|why| panic!("{} is missing: {why}", tool.name()))
}

thread_local! {
    /// Why the last store factory on this thread gave no store, if it said.
    static NO_STORE: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// For a kit store factory (`loom_conformance`'s macros) that needs `tool`: its URL or
/// program when it is there; `None` when it is missing and may be, after noting why, so
/// every case of the kit is skipped as `[skip-missing <tool>]`; a panic with the message
/// when `LOOM_REQUIRE_TOOLS` forbids the skip (every case then fails with it).
pub fn locate_or_skip(tool: Tool) -> Option<String> {
    match availability(tool) {
        Availability::Ready(found) => Some(found),
        Availability::Skip { tag, reason } => {
            NO_STORE.with(|note| *note.borrow_mut() = Some((tag, reason)));
            None
        }
        Availability::Fail(message) => panic!("{message}"),
    }
}

/// Takes the note [`locate_or_skip`] left on this thread: the skip tag and reason.
pub fn take_no_store_note() -> Option<(String, String)> {
    NO_STORE.with(|note| note.borrow_mut().take())
}

/// The name of a skipped trial: `<name> [<tag>]`.
pub fn skipped_name(name: &str, tag: &str) -> String {
    format!("{name} [{tag}]")
}

/// Splits a test name into its name and its skip tag, if it carries one:
/// `"a::b [skip-missing node]"` gives `("a::b", Some("skip-missing node"))`.
pub fn split_skip_tag(name: &str) -> (&str, Option<&str>) {
    if let Some(open) = name.rfind(" [") {
        let tag = &name[open + 2..];
        if let Some(tag) = tag.strip_suffix(']') {
            if tag.starts_with(SKIP_TAG_PREFIX) {
                return (&name[..open], Some(tag));
            }
        }
    }
    (name, None)
}

/// A test that always runs; the body fails the test by panicking, like a `#[test]` fn.
pub fn test(name: impl Into<String>, body: impl FnOnce() + Send + 'static) -> Trial {
    Trial::test(name, move || {
        body();
        Ok(())
    })
}

/// A test that is skipped here: an ignored trial named `<name> [<tag>]`. Run anyway
/// (`--ignored`), it fails with `reason`, since it still cannot run.
pub fn skipped(name: &str, tag: &str, reason: impl Into<String>) -> Trial {
    let reason = reason.into();
    let tag_owned = tag.to_string();
    Trial::test(skipped_name(name, tag), move || {
        Err(format!("cannot run here ({tag_owned}): {reason}").into())
    })
    .with_ignored_flag(true)
}

/// A test that fails with `message` without running anything.
pub fn failing(name: impl Into<String>, message: impl Into<String>) -> Trial {
    let message = message.into();
    Trial::test(name, move || Err(message.into()))
}

/// A test that needs `tool`: it runs when the tool is there (the body gets the URL or
/// program), is skipped (`[skip-missing <tool>]`) when it is not, and fails naming the
/// tool when `LOOM_REQUIRE_TOOLS` is set.
pub fn needs(
    tool: Tool,
    name: impl Into<String>,
    body: impl FnOnce(&str) + Send + 'static,
) -> Trial {
    let name = name.into();
    match availability(tool) {
        Availability::Ready(found) => test(name, move || body(&found)),
        Availability::Skip { tag, reason } => skipped(&name, &tag, reason),
        Availability::Fail(message) => failing(name, message),
    }
}

/// The command-line arguments, parsed once (libtest's flags: `--list`, `--ignored`,
/// `--exact`, a filter, …).
pub fn args() -> &'static Arguments {
    static ARGS: OnceLock<Arguments> = OnceLock::new();
    ARGS.get_or_init(Arguments::from_args)
}

/// False when the arguments select one test by its exact name and that name is not under
/// `prefix::`: then the trials under `prefix` need not be built (nextest runs each test
/// in its own process with `--exact <name>`, and building a kit's trials asks its store
/// factory for a store). `prefix` empty means the crate root: always true.
pub fn may_select(prefix: &str) -> bool {
    let args = args();
    match (&args.filter, args.exact) {
        (Some(filter), true) if !prefix.is_empty() => filter
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with("::")),
        _ => true,
    }
}

/// Runs the trials the arguments select and returns the exit code: the `main` of a
/// `harness = false` test target.
pub fn run(trials: Vec<Trial>) -> ExitCode {
    libtest_mimic::run(args(), trials).exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_tags_split_off_and_only_skip_tags() {
        assert_eq!(
            split_skip_tag("events::spi_03_x [skip-not-claimed readRange]"),
            ("events::spi_03_x", Some("skip-not-claimed readRange"))
        );
        assert_eq!(
            split_skip_tag(&skipped_name("a", "skip-missing node")),
            ("a", Some("skip-missing node"))
        );
        assert_eq!(split_skip_tag("a [not a skip]"), ("a [not a skip]", None));
        assert_eq!(split_skip_tag("a [skip-x"), ("a [skip-x", None));
        assert_eq!(split_skip_tag("plain"), ("plain", None));
    }

    #[test]
    fn every_tool_has_a_distinct_slot_name_and_advice() {
        for (i, tool) in TOOLS.iter().enumerate() {
            assert_eq!(tool.slot(), i);
            assert!(!tool.how_to_provide().is_empty());
        }
        let mut names: Vec<_> = TOOLS.iter().map(|t| t.name()).collect();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
    }

    #[test]
    fn a_program_that_does_not_exist_is_missing_with_its_name() {
        let err = program("loom-no-such-program-anywhere").unwrap_err();
        assert!(err.contains("loom-no-such-program-anywhere"), "{err}");
    }
}
