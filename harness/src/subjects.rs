//! The subjects a run can name: the reference, a foreign kernel, a store, the harness.

use loom_report::{Subject, SubjectKind};
use serde_json::Value;

/// The id of the reference subject.
pub const REFERENCE: &str = "reference";
/// The id of a foreign kernel subject.
pub const KERNEL: &str = "kernel";
/// The id of a store subject.
pub const STORE: &str = "store";

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The reference kernel, runtime and stores; `store` names the store the kits used.
pub fn reference(store: &str) -> Subject {
    Subject::new(
        REFERENCE,
        SubjectKind::Reference,
        "loom reference kernel, runtime and stores",
    )
    .with_version(VERSION)
    .with_endpoint(format!("in-process; kits against {store}"))
}

/// A kernel reached by `command`, named by its hello when it gave one.
pub fn foreign_kernel(command: &str, hello: Option<&Value>) -> Subject {
    named(KERNEL, SubjectKind::Kernel, "kernel", command, hello)
}

/// A store named by `store` (`memory`, `sqlite…`, `postgres://…`, `cmd:…`); a `cmd:`
/// store is named by its hello. The reference stores are judged as stores too.
pub fn store(store: &str, hello: Option<&Value>) -> Subject {
    let default = match store {
        "memory" => "loom in-memory reference store",
        s if s.starts_with("sqlite") => "loom SQLite reference store",
        s if s.starts_with("postgres") => "loom PostgreSQL reference store",
        _ => "store",
    };
    let mut s = named(STORE, SubjectKind::Store, default, store, hello);
    if !store.starts_with("cmd:") && s.version.is_none() {
        s.version = Some(VERSION.to_string());
    }
    s
}

/// The harness self-check.
pub fn harness() -> Subject {
    Subject::harness("loom", VERSION)
}

fn named(
    id: &str,
    kind: SubjectKind,
    default_name: &str,
    endpoint: &str,
    hello: Option<&Value>,
) -> Subject {
    let text = |k: &str| hello.and_then(|h| h.get(k)).and_then(Value::as_str);
    let mut s =
        Subject::new(id, kind, text("name").unwrap_or(default_name)).with_endpoint(endpoint);
    if let Some(v) = text("version") {
        s = s.with_version(v);
    }
    if let Some(h) = hello {
        s = s.with_hello(h.clone());
    }
    s
}

/// What a kernel's `hello` claims, and so what it is judged on: the vector kinds it
/// claims (judged) and those it does not (shown as not claimed, never judged), and the
/// rules of the claimed parts: every rule cited by a result against it that ran (not
/// `skip-not-claimed`). `None` when the hello claims no kind at all (nothing is a claim;
/// the run is judged as it is, and an empty one never passes).
pub fn kernel_claims(
    hello: Option<&Value>,
    results: &[loom_report::CaseResult],
) -> Option<loom_report::ClaimScope> {
    let claimed: Vec<&str> = hello?
        .get("kinds")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let (judged, not_claimed): (Vec<&str>, Vec<&str>) = loom_vectors::format::Kind::ALL
        .iter()
        .map(|k| k.as_str())
        .partition(|k| claimed.contains(k));
    if judged.is_empty() {
        return None;
    }
    let mut rules: Vec<String> = results
        .iter()
        .filter(|r| r.subject.as_deref() == Some(KERNEL) || r.subject.is_none())
        .filter(|r| r.status != loom_report::Status::SkipNotClaimed)
        .flat_map(|r| r.rules.iter().cloned())
        .collect();
    rules.sort();
    rules.dedup();
    Some(loom_report::ClaimScope {
        judged: judged.into_iter().map(str::to_owned).collect(),
        not_claimed: not_claimed.into_iter().map(str::to_owned).collect(),
        rules,
    })
}
