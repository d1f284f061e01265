//! BranchRegistry cases (GAP-19: create/get/list for fork lineage, reference-defined).

use loom_kernel::spi::{BranchRecord, BranchRegistry};

use crate::case::{ensure, err_kind, ok, Ctx, Outcome, Verdict};

crate::__kit_cases! {
    kit: BranchRegistryKit, name: "branch-registry", bound: BranchRegistry, fresh: false,
    cases: [
        gap_19_register_get_children => ["GAP-19", "SPI-01"], "1.0.0", [];
        gap_19_duplicate_registration_refused => ["GAP-19"], "1.0.0", [];
        gap_19_invalid_records_refused => ["GAP-19"], "1.0.0", [];
    ]
}

fn fork(child: &str, parent: &str, at: u64, chain: &[&str]) -> BranchRecord {
    BranchRecord {
        execution_id: child.to_string(),
        parent_execution_id: parent.to_string(),
        forked_at_sequence: at,
        chain: chain.iter().map(|s| s.to_string()).collect(),
    }
}

/// Registered forks read back by id and list under their parent, ascending.
pub async fn gap_19_register_get_children<R: BranchRegistry>(registry: &R, cx: &Ctx) -> Verdict {
    let b = fork(
        &cx.id("gap_19-b"),
        &cx.id("gap_19-root"),
        4,
        &[&*cx.id("gap_19-root")],
    );
    let a = fork(&cx.id("gap_19-a"), &cx.id("gap_19-root"), 2, &[]);
    let grandchild = fork(
        &cx.id("gap_19-c"),
        &cx.id("gap_19-a"),
        1,
        &[&*cx.id("gap_19-root"), &*cx.id("gap_19-a")],
    );
    for r in [&b, &a, &grandchild] {
        ok(registry.register(r.clone()).await, "register")?;
    }
    ensure!(
        ok(registry.get(&cx.id("gap_19-b")).await, "get")? == Some(b.clone()),
        "get returned a different record"
    );
    ensure!(
        ok(registry.get(&cx.id("gap_19-root")).await, "get root")?.is_none(),
        "a root has a branch record"
    );
    let kids = ok(registry.children(&cx.id("gap_19-root")).await, "children")?;
    ensure!(
        kids == vec![a.clone(), b],
        "children of the root are {kids:?}"
    );
    ensure!(
        ok(registry.children(&cx.id("gap_19-a")).await, "children")? == vec![grandchild],
        "grandchild not listed"
    );
    ensure!(
        ok(registry.children(&cx.id("gap_19-b")).await, "children")?.is_empty(),
        "a leaf has children"
    );
    Ok(Outcome::Pass)
}

/// A child has one parent: a second registration is `AlreadyExists`, the first kept.
pub async fn gap_19_duplicate_registration_refused<R: BranchRegistry>(
    registry: &R,
    cx: &Ctx,
) -> Verdict {
    let first = fork(&cx.id("gap_19-dup"), &cx.id("gap_19-p1"), 1, &[]);
    ok(registry.register(first.clone()).await, "register")?;
    err_kind(
        registry
            .register(fork(&cx.id("gap_19-dup"), &cx.id("gap_19-p2"), 2, &[]))
            .await,
        "already-exists",
        "duplicate",
    )?;
    ensure!(
        ok(registry.get(&cx.id("gap_19-dup")).await, "get")? == Some(first),
        "the duplicate replaced the first record"
    );
    ensure!(
        ok(registry.children(&cx.id("gap_19-p2")).await, "children")?.is_empty(),
        "the refused record was indexed"
    );
    Ok(Outcome::Pass)
}

/// Self-parenting, cycles through the chain and a chain not ending at the parent are
/// `InvalidArgument`.
pub async fn gap_19_invalid_records_refused<R: BranchRegistry>(registry: &R, cx: &Ctx) -> Verdict {
    err_kind(
        registry
            .register(fork(&cx.id("gap_19-x"), &cx.id("gap_19-x"), 0, &[]))
            .await,
        "invalid-argument",
        "own parent",
    )?;
    err_kind(
        registry
            .register(fork(
                &cx.id("gap_19-x"),
                &cx.id("gap_19-p"),
                0,
                &[&*cx.id("gap_19-x"), &*cx.id("gap_19-p")],
            ))
            .await,
        "invalid-argument",
        "in own chain",
    )?;
    err_kind(
        registry
            .register(fork(
                &cx.id("gap_19-x"),
                &cx.id("gap_19-p"),
                0,
                &[&*cx.id("gap_19-q")],
            ))
            .await,
        "invalid-argument",
        "chain ends elsewhere",
    )?;
    err_kind(
        registry
            .register(fork("", &cx.id("gap_19-p"), 0, &[]))
            .await,
        "invalid-argument",
        "empty id",
    )?;
    ensure!(
        ok(registry.get(&cx.id("gap_19-x")).await, "get")?.is_none(),
        "a refused record was stored"
    );
    Ok(Outcome::Pass)
}
