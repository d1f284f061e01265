//! One-line mutations of the Node minimal kernel's fold (issue 23): for every field
//! `examples/node-kernel/fold.mjs` writes (status, bookkeeping, every variable, every
//! frame and decision field, the park record, the inbox and quarantine, the two
//! normalization boundaries), one realistic one-line change to the line that writes
//! it, applied to a copy of the kernel and run through the stdio kernel protocol
//! (`KernelProcess`, as `loom vectors run --kernel-cmd` runs it): each mutant must fail
//! at least one fold or normalize vector (a `fail`, not an error). A mutant that passes
//! every vector is a field the vectors do not pin; the `fields-` fold cases
//! (typed failure without payload, a re-settled frame, a park without waits, the custom
//! meter cap, a quarantine held twice) were added for the survivors this test found.
//!
//! The kernels claim every resolution of the reference in `hello` (`--resolutions
//! reference`; the unmutated kernel then passes every vector exactly, checked first): a
//! mutant of a line that implements a resolution (GAP-01's `null` for an absent field,
//! GAP-17's quarantine cap) is then a kernel breaking what it claims. Without the claim
//! such a mutant is a kernel that resolved the open point otherwise, which the vectors
//! rightly report as a resolution difference or accept as an alternative.
//!
//! The Python minimal kernel (`vectors/examples/minimal_kernel.py`) has no fold: it
//! claims only `digest`, so there is no fold of it to mutate.
//!
//! Cost: one kernel start per mutant and the vectors up to its first failure (the set
//! is loaded once), two mutants at a time. Needs `node` (skipped without it, failing
//! under `LOOM_REQUIRE_TOOLS=1`).

use loom_report::Status;
use loom_vectors::runner::{run_vector, Claims, KernelClient};
use loom_vectors::set::{default_cases_dir, load_set};
use loom_vectors::{KernelProcess, KernelProcessConfig, Vector};
use std::path::{Path, PathBuf};

/// (name, the exact text in fold.mjs, its replacement): each changes one line (or
/// deletes it). The text must occur exactly once, so the table follows the source.
const MUTANTS: &[(&str, &str, &str)] = &[
    (
        "started-at-null",
        r#"state.startedAt = timestamp;"#,
        r#"state.startedAt = null;"#,
    ),
    (
        "start-status-pending",
        r#"    state.status = "running";
    state.startedAt"#,
        r#"    state.status = "pending";
    state.startedAt"#,
    ),
    (
        "input-default-dropped",
        r#"vars._input = has(m, "input") ? m.input : null;"#,
        r#"if (has(m, "input")) vars._input = m.input;"#,
    ),
    (
        "flow-hash-dropped",
        r#"if (typeof m.flowHash === "string") vars._flowHash = m.flowHash;"#,
        r#"if (typeof m.flowHash === "string") {}"#,
    ),
    (
        "principal-dropped",
        r#"[["principal", "_principal"], ["parent""#,
        r#"[["parent""#,
    ),
    (
        "chain-dropped",
        r#"["chain", "_chain"], ["codeHash""#,
        r#"["codeHash""#,
    ),
    (
        "code-hash-dropped",
        r#", ["codeHash", "_codeHash"]]) {"#,
        r#"]) {"#,
    ),
    (
        "fork-chain-dropped",
        r#"          vars._chain = chain;"#,
        r#"          void chain;"#,
    ),
    (
        "forked-by-dropped",
        r#"typeof meta.forkedBy === "string") vars._parent = meta.forkedBy;"#,
        r#"typeof meta.forkedBy === "string") {}"#,
    ),
    (
        "carry-resources-dropped",
        r#"if (carry?.resources !== undefined) vars._resources = carry.resources;"#,
        r#"if (carry?.resources !== undefined) {}"#,
    ),
    (
        "carry-inbox-dropped",
        r#"if (carry?.inbox !== undefined) vars._inbox = carry.inbox;"#,
        r#"if (carry?.inbox !== undefined) {}"#,
    ),
    (
        "carried-quarantine-dropped",
        r#"        vars._quarantined = carried.quarantined;"#,
        r#"        void carried;"#,
    ),
    (
        "park-gate-lowercased",
        r#"const park = { on: m.on };"#,
        r#"const park = { on: m.on.toLowerCase() };"#,
    ),
    (
        "wake-at-plus-one",
        r#"if (isInteger(m.wakeAt)) park.wakeAt = m.wakeAt;"#,
        r#"if (isInteger(m.wakeAt)) park.wakeAt = Number(m.wakeAt) + 1;"#,
    ),
    (
        "condition-dropped",
        r#"if (isObject(m.condition)) park.condition = m.condition;"#,
        r#"if (isObject(m.condition)) {}"#,
    ),
    (
        "suspend-status-running",
        r#"    state.status = "suspended";
    delete state.variables._failedWhileParked;"#,
        r#"    state.status = "running";
    delete state.variables._failedWhileParked;"#,
    ),
    (
        "suspend-keeps-parked-failure",
        r#"    delete state.variables._failedWhileParked;
    state.variables._suspendedOn = park;"#,
        r#"    state.variables._suspendedOn = park;"#,
    ),
    (
        "waits-dropped",
        r#"if (Array.isArray(m.waits)) state.variables._waits = m.waits;"#,
        r#"if (Array.isArray(m.waits)) {}"#,
    ),
    (
        "waits-kept-by-next-park",
        r#"      else delete state.variables._waits;"#,
        r#"      else {}"#,
    ),
    (
        "wait-answer-whole-payload",
        r#"waitId, has(p, "answer") ? p.answer : null);"#,
        r#"waitId, p);"#,
    ),
    (
        "passthrough-order-reversed",
        r#"if (passthrough) arrayVar(state.variables, "_resumePayloads").push(p);"#,
        r#"if (passthrough) arrayVar(state.variables, "_resumePayloads").unshift(p);"#,
    ),
    (
        "null-passthrough-always",
        r#"        passthrough = state.status === "suspended" && gate !== INDOUBT_GATE &&"#,
        r#"        passthrough = true || state.status === "suspended" && gate !== INDOUBT_GATE &&"#,
    ),
    (
        "resume-status-suspended",
        r#"    state.status = "running";
    endPark(state);
    return ACTED;
  },

  EXECUTION_COMPLETED"#,
        r#"    state.status = "suspended";
    endPark(state);
    return ACTED;
  },

  EXECUTION_COMPLETED"#,
    ),
    (
        "park-not-ended",
        r#"  delete state.variables._suspendedOn;
  delete state.variables._failedWhileParked;"#,
        r#"  delete state.variables._failedWhileParked;"#,
    ),
    (
        "parked-failure-not-ended",
        r#"  delete state.variables._suspendedOn;
  delete state.variables._failedWhileParked;"#,
        r#"  delete state.variables._suspendedOn;"#,
    ),
    (
        "ended-whole-payload",
        r#"has(p, field)) state.variables[key] = p[field];"#,
        r#"has(p, field)) state.variables[key] = p;"#,
    ),
    (
        "completed-as-failed",
        r#"EXECUTION_COMPLETED: (state, p) => ended(state, "completed""#,
        r#"EXECUTION_COMPLETED: (state, p) => ended(state, "failed""#,
    ),
    (
        "cancelled-as-failed",
        r#"EXECUTION_CANCELLED: (state, p) => ended(state, "cancelled""#,
        r#"EXECUTION_CANCELLED: (state, p) => ended(state, "failed""#,
    ),
    (
        "continued-as-completed",
        r#"    state.status = "continued";"#,
        r#"    state.status = "completed";"#,
    ),
    (
        "continued-to-dropped",
        r#"    state.variables._continuedTo = p.continuedTo;"#,
        r#"    void p;"#,
    ),
    (
        "migrated-input-ignored",
        r#"if (has(m, "migratedInput")) state.variables._input = m.migratedInput;"#,
        r#"if (has(m, "migratedInput")) {}"#,
    ),
    (
        "to-code-hash-ignored",
        r#"typeof m.toCodeHash === "string") state.variables._codeHash = m.toCodeHash;"#,
        r#"typeof m.toCodeHash === "string") {}"#,
    ),
    ("attempt-not-counted", r#": prior + 1));"#, r#": prior));"#),
    (
        "tool-id-dropped",
        r#"if (typeof m.toolId === "string") frame.toolId = m.toolId;"#,
        r#"if (typeof m.toolId === "string") {}"#,
    ),
    (
        "kind-dropped",
        r#"if (typeof m.kind === "string") frame.kind = m.kind;"#,
        r#"if (typeof m.kind === "string") {}"#,
    ),
    (
        "step-input-default-dropped",
        r#"frame.input = has(m, "input") ? m.input : null;"#,
        r#"if (has(m, "input")) frame.input = m.input;"#,
    ),
    (
        "restatus-keeps-status",
        r#"  frame.status = status;
  const attempt = asU64(m.attempt);"#,
        r#"  const attempt = asU64(m.attempt);"#,
    ),
    (
        "restatus-attempt-ignored",
        r#"  if (attempt !== null) frame.attempt = attempt;"#,
        r#"  void attempt;"#,
    ),
    (
        "output-default-dropped",
        r#"if (status === "completed") frame.output = has(m, "output") ? m.output : null;"#,
        r#"if (status === "completed" && has(m, "output")) frame.output = m.output;"#,
    ),
    (
        "error-default-dropped",
        r#"    frame.error = has(m, "error") ? m.error : null;"#,
        r#"    if (has(m, "error")) frame.error = m.error;"#,
    ),
    (
        "error-channel-dropped",
        r#"      frame.errorChannel = m.channel;"#,
        r#"      void m.channel;"#,
    ),
    (
        "error-payload-default-dropped",
        r#"frame.errorPayload = has(m, "payload") ? m.payload : null;"#,
        r#"if (has(m, "payload")) frame.errorPayload = m.payload;"#,
    ),
    (
        "settled-keeps-input",
        r#"  if (v >= 26) delete frame.input;"#,
        r#"  if (v >= 27) delete frame.input;"#,
    ),
    (
        "settle-keeps-old-output",
        r#"  for (const f of ["output", "error", "errorChannel", "errorPayload"]) delete frame[f];"#,
        r#"  for (const f of ["errorChannel", "errorPayload"]) delete frame[f];"#,
    ),
    (
        "parked-failure-not-recorded",
        r#"      if (state.status === "suspended") state.variables._failedWhileParked = true;"#,
        r#"      void state;"#,
    ),
    (
        "legacy-step-failure-kept-running",
        r#"      state.status = "failed"; // before 1.21.0"#,
        r#"      void state; // before 1.21.0"#,
    ),
    (
        "decision-policy-dropped",
        r#"for (const f of ["context", "policy"]) if (has(m, f)) entry[f] = m[f];"#,
        r#"for (const f of ["context"]) if (has(m, f)) entry[f] = m[f];"#,
    ),
    (
        "inner-steps-dropped",
        r#"if (v >= 23 && kernel && has(m, "innerSteps")) entry.innerSteps = m.innerSteps;"#,
        r#"if (v >= 23 && kernel && has(m, "innerSteps")) {}"#,
    ),
    (
        "decision-seq-dropped",
        r#"      if (seq !== undefined) entry.seq = seq;"#,
        r#"      void seq;"#,
    ),
    (
        "decision-seq-last-wins",
        r#"const seq = prev === undefined ? sequence :"#,
        r#"const seq = true ? sequence :"#,
    ),
    (
        "resources-last-meter-wins",
        r#"  const sum = (asF64(get(map, key)) ?? 0) + x;"#,
        r#"  const sum = x;"#,
    ),
    (
        "custom-cap-off-by-one",
        r#"Object.keys(c).length < RESOURCE_CUSTOM_KEYS_MAX)"#,
        r#"Object.keys(c).length <= RESOURCE_CUSTOM_KEYS_MAX)"#,
    ),
    (
        "lifecycle-seq-dropped",
        r#"    put(m, "seq", sequence);"#,
        r#"    void sequence;"#,
    ),
    (
        "scope-id-kept",
        r#"    delete m.scopeId;"#,
        r#"    void m;"#,
    ),
    (
        "inbox-consumed-not-counted",
        r#"consumed: typeof consumed === "bigint" ? consumed + 1n : consumed + 1,"#,
        r#"consumed: typeof consumed === "bigint" ? consumed + 1n : consumed,"#,
    ),
    (
        "inbox-last-message-is-topic",
        r#"lastMessageId: messageId };"#,
        r#"lastMessageId: topic };"#,
    ),
    (
        "message-wait-answer-dropped",
        r#"      put(objectVar(state.variables, "_waitAnswers"), m.waitId, has(m, "message") ? m.message : null);"#,
        r#"      void m;"#,
    ),
    (
        "delivered-release-kept",
        r#"          queue.shift();
          if (queue.length === 0) delete q[topic];
        }
      }
    }
    return ACTED;
  },

  INBOX_QUARANTINED"#,
        r#"          void queue;
          if (queue.length === 0) delete q[topic];
        }
      }
    }
    return ACTED;
  },

  INBOX_QUARANTINED"#,
    ),
    (
        "quarantine-cap-off-by-one",
        r#"if (total >= QUARANTINED_ENTRIES_MAX) return INERT;"#,
        r#"if (total > QUARANTINED_ENTRIES_MAX) return INERT;"#,
    ),
    (
        "quarantine-seq-is-timestamp",
        r#"queue.push({ messageId, seq: e.sequence });"#,
        r#"queue.push({ messageId, seq: e.timestamp });"#,
    ),
    (
        "quarantine-duplicates-held",
        r#"      if (queue.some((x) => isObject(x) && x.messageId === messageId)) return INERT;"#,
        r#"      void messageId;"#,
    ),
    (
        "release-by-always-operator",
        r#"head.released = { by: operator ? "operator" : "auto", deliver: true };"#,
        r#"head.released = { by: "operator", deliver: true };"#,
    ),
    (
        "discard-release-keeps-entry",
        r#"      queue.shift();
      if (queue.length === 0) delete q[topic];
    }
    return ACTED;"#,
        r#"      void queue;
      if (queue.length === 0) delete q[topic];
    }
    return ACTED;"#,
    ),
    (
        "flow-emit-count-stuck",
        r#"put(counts, meta.flowEmit, typeof n === "bigint" ? n + 1n : n + 1);"#,
        r#"put(counts, meta.flowEmit, typeof n === "bigint" ? n + 1n : 1);"#,
    ),
    (
        "sequence-not-moved",
        r#"      state.sequence = event.sequence;"#,
        r#"      void event;"#,
    ),
    (
        "updated-at-is-sequence",
        r#"      state.updatedAt = event.timestamp;"#,
        r#"      state.updatedAt = event.sequence;"#,
    ),
    (
        "normalize-status-fix-misses-1-20",
        r#"if (writtenBy < 21 && state.status === "failed""#,
        r#"if (writtenBy < 20 && state.status === "failed""#,
    ),
    (
        "normalize-parked-failure-not-restored",
        r#"      state.variables._failedWhileParked = true;
    } else {"#,
        r#"      void state;
    } else {"#,
    ),
    (
        "normalize-input-strip-misses-1-25",
        r#"  if (writtenBy < 26) {"#,
        r#"  if (writtenBy < 25) {"#,
    ),
];

/// Mutants run at a time (the CI machine has two cores).
const PARALLEL_RUNS: usize = 2;

fn kernel_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/node-kernel")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loom-node-mutants-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the kernel copy `name`, with `fold` as its fold.mjs, over `vectors` until the
/// first one that does not pass: `Ok(None)` when all pass, `Ok(Some(id))` at a `fail`,
/// `Err` for anything else (an error, a timeout, a kernel that does not start).
fn first_failure(
    name: &str,
    fold: &str,
    root: &Path,
    vectors: &[Vector],
) -> Result<Option<String>, String> {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(kernel_dir()).unwrap() {
        let p = entry.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::write(dir.join("fold.mjs"), fold).unwrap();
    let cmd = format!(
        "node {} --resolutions reference",
        dir.join("minimal-kernel.mjs").display()
    );
    let mut kernel = KernelProcess::start(KernelProcessConfig::new(cmd))
        .map_err(|e| format!("{name}: the kernel does not start: {e}"))?;
    let claims = Claims::from_hello(kernel.hello().map_err(|e| format!("{name}: hello: {e}"))?);
    let mut found = Ok(None);
    for v in vectors {
        let r = run_vector(&mut kernel, &claims, v);
        match r.status {
            Status::Pass => continue,
            Status::Fail => found = Ok(Some(v.id.clone())),
            other => found = Err(format!("{name}: {} is {other}: {:?}", v.id, r.message)),
        }
        break;
    }
    kernel.shutdown();
    found
}

fn conf_03_every_one_line_mutant_of_the_node_fold_fails_a_vector() {
    let fold = std::fs::read_to_string(kernel_dir().join("fold.mjs")).unwrap();
    for (name, from, to) in MUTANTS {
        assert_eq!(
            fold.matches(from).count(),
            1,
            "{name}: its text must occur once in fold.mjs"
        );
        assert!(
            from.lines().count().abs_diff(to.lines().count()) <= 1
                && from.lines().zip(to.lines()).filter(|(a, b)| a != b).count() <= 1,
            "{name}: more than one line changed"
        );
    }
    let vectors: Vec<Vector> = load_set(&default_cases_dir())
        .expect("the set loads")
        .vectors
        .into_iter()
        .filter(|v| matches!(v.kind.as_str(), "fold" | "normalize"))
        .collect();
    assert!(vectors.len() > 1000);
    let root = scratch("run");
    // The unmutated kernel, claiming every resolution, passes every vector exactly.
    assert_eq!(first_failure("unmutated", &fold, &root, &vectors), Ok(None));
    let chunks: Vec<&[(&str, &str, &str)]> = MUTANTS
        .chunks(MUTANTS.len().div_ceil(PARALLEL_RUNS))
        .collect();
    let problems: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|part| {
                let (fold, root, vectors) = (&fold, &root, &vectors);
                s.spawn(move || {
                    part.iter()
                        .filter_map(|(name, from, to)| {
                            match first_failure(name, &fold.replacen(from, to, 1), root, vectors) {
                                Ok(Some(id)) => {
                                    eprintln!("{name:<40} caught by {id}");
                                    None
                                }
                                Ok(None) => {
                                    Some(format!("{name}: passes every fold and normalize vector"))
                                }
                                Err(e) => Some(e),
                            }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("thread"))
            .collect()
    });
    assert!(
        problems.is_empty(),
        "{} of {} mutants survive:\n{}",
        problems.len(),
        MUTANTS.len(),
        problems.join("\n")
    );
    std::fs::remove_dir_all(&root).unwrap();
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, Tool};
    run(vec![needs(
        Tool::Node,
        "conf_03_every_one_line_mutant_of_the_node_fold_fails_a_vector",
        |_| conf_03_every_one_line_mutant_of_the_node_fold_fails_a_vector(),
    )])
}
