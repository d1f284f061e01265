//! BranchRegistry cases (GAP-19: create/get/list for fork lineage, reference-defined).

use loom_kernel::spi::{BranchRecord, BranchRegistry};

use crate::case::{ensure, err_kind, ok, Ctx, Outcome, Verdict};

crate::__kit_cases! {
    kit: BranchRegistryKit, name: "branch-registry", bound: BranchRegistry, fresh: false, claims: crate::case::no_claims,
    cases: [
        gap_19_register_get_children => ["GAP-19", "SPI-01"], "1.0.0", [];
        gap_19_duplicate_registration_refused => ["GAP-19"], "1.0.0", [];
        gap_19_invalid_records_refused => ["GAP-19"], "1.0.0", [];
        gap_19_chain_limit_from_both_sides => ["GAP-19"], "1.0.0", [];
        gap_19_children_in_byte_order_and_checks_in_order => ["GAP-19"], "1.0.0", [];
        gap_27_out_of_range_ids_follow_the_table => ["GAP-27", "GAP-19"], "1.0.0", [];
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

/// The registry declares a well-formed version of its seam (SPI-01); registered forks
/// read back by id and list under their parent, ascending.
pub async fn gap_19_register_get_children<R: BranchRegistry>(registry: &R, cx: &Ctx) -> Verdict {
    crate::case::check_declared_version(
        "the branch registry",
        &registry.spi_version(),
        loom_kernel::versions::BRANCH_REGISTRY_SPI_VERSION,
    )?;
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

/// The chain limit from both sides: exactly `BRANCH_CHAIN_LEN_MAX` ancestors is
/// accepted and reads back whole, one more is `invalid-argument`; ids are bounded in
/// bytes (GAP-19).
pub async fn gap_19_chain_limit_from_both_sides<R: BranchRegistry>(
    registry: &R,
    cx: &Ctx,
) -> Verdict {
    use loom_kernel::spi::{BRANCH_CHAIN_LEN_MAX, ID_BYTES_MAX};
    let parent = cx.id("gap_19-deep-parent");
    let chain_of = |len: usize| -> Vec<String> {
        let mut chain: Vec<String> = (0..len - 1)
            .map(|i| cx.id(&format!("gap_19-ancestor-{i}")))
            .collect();
        chain.push(parent.clone());
        chain
    };
    let at = BranchRecord {
        execution_id: cx.id("gap_19-deep-at"),
        parent_execution_id: parent.clone(),
        forked_at_sequence: 9_007_199_254_740_993,
        chain: chain_of(BRANCH_CHAIN_LEN_MAX),
    };
    ok(
        registry.register(at.clone()).await,
        "register a chain of the limit",
    )?;
    ensure!(
        ok(registry.get(&at.execution_id).await, "get")? == Some(at.clone()),
        "a record with a chain of {BRANCH_CHAIN_LEN_MAX} did not read back whole"
    );
    let over = BranchRecord {
        execution_id: cx.id("gap_19-deep-over"),
        chain: chain_of(BRANCH_CHAIN_LEN_MAX + 1),
        ..at.clone()
    };
    err_kind(
        registry.register(over.clone()).await,
        "invalid-argument",
        "a chain of the limit + 1",
    )?;
    ensure!(
        ok(registry.get(&over.execution_id).await, "get")?.is_none(),
        "the refused record was stored"
    );
    let long_id = crate::case::id_of_bytes(cx, "gap_19-long-", ID_BYTES_MAX, '\u{e9}');
    ok(
        registry.register(fork(&long_id, &parent, 0, &[])).await,
        "a child id of ID_BYTES_MAX bytes",
    )?;
    err_kind(
        registry
            .register(fork(&format!("{long_id}x"), &parent, 0, &[]))
            .await,
        "invalid-argument",
        "a child id of ID_BYTES_MAX + 1 bytes",
    )?;
    Ok(Outcome::Pass)
}

/// Many children list in byte order of their ids (`c-10` before `c-9`, upper case
/// before lower case, non-ASCII last), each once; an invalid record that also
/// duplicates a registered child is `invalid-argument`, validation first (GAP-19).
pub async fn gap_19_children_in_byte_order_and_checks_in_order<R: BranchRegistry>(
    registry: &R,
    cx: &Ctx,
) -> Verdict {
    let parent = cx.id("gap_19-many-parent");
    let names = [
        "c-9",
        "c-10",
        "c-1",
        "c-B",
        "c-a",
        "c-\u{e9}",
        "c-Z",
        "c-100",
        "c-\u{1f600}",
        "c-0",
        "c-11",
        "c-b",
    ];
    for name in names {
        ok(
            registry.register(fork(&cx.id(name), &parent, 1, &[])).await,
            "register",
        )?;
    }
    let got: Vec<String> = ok(registry.children(&parent).await, "children")?
        .into_iter()
        .map(|r| r.execution_id)
        .collect();
    let mut want: Vec<String> = names.iter().map(|n| cx.id(n)).collect();
    want.sort();
    ensure!(
        got == want,
        "children of {parent} came as {got:?}, expected byte order {want:?}"
    );
    let dup_self = fork(&cx.id("c-9"), &cx.id("c-9"), 0, &[]);
    err_kind(
        registry.register(dup_self).await,
        "invalid-argument",
        "a registered child naming itself as parent",
    )?;
    Ok(Outcome::Pass)
}

/// Every branch-registry method answers an empty or over-long id as the id-validation table says
/// (`loom_conformance::ids::ID_VALIDATION`, printed in docs/protocols/store.md): `register` refuses it as child or parent, `get` and `children` answer as for an unknown id
/// (GAP-27).
pub async fn gap_27_out_of_range_ids_follow_the_table<S: BranchRegistry>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use crate::ids::{id_answer, judge_id_rule, out_of_range_ids, rules_of};
    let _ = cx;
    for rule in rules_of("branchRegistry") {
        for bad in out_of_range_ids() {
            let b = &*bad;
            let answer = match (rule.method, rule.argument) {
                ("branchRegistry.register", "record.executionId") => id_answer(
                    store
                        .register(loom_kernel::spi::BranchRecord {
                            execution_id: bad.clone(),
                            parent_execution_id: cx.id("gap_27-parent"),
                            forked_at_sequence: 0,
                            chain: vec![],
                        })
                        .await,
                    |_| false,
                ),
                ("branchRegistry.register", _) => id_answer(
                    store
                        .register(loom_kernel::spi::BranchRecord {
                            execution_id: cx.id("gap_27-child"),
                            parent_execution_id: bad.clone(),
                            forked_at_sequence: 0,
                            chain: vec![],
                        })
                        .await,
                    |_| false,
                ),
                ("branchRegistry.get", _) => {
                    id_answer(store.get(b).await, |r| matches!(r, Ok(None)))
                }
                ("branchRegistry.children", _) => id_answer(
                    store.children(b).await,
                    |r| matches!(r, Ok(v) if v.is_empty()),
                ),
                _ => continue,
            };
            judge_id_rule(rule, b, answer)?;
        }
    }
    Ok(Outcome::Pass)
}
