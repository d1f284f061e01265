//! ExecutionDispatcher cases (PLACE-02, PLACE-03, PLACE-04, PLACE-07; reference-defined
//! queue and lease mechanics).

use loom_kernel::spi::{ExecutionDispatcher, ExecutionPackage};

use crate::case::{ensure, err_kind, ok, Ctx, Failure, Outcome, Verdict};

crate::__kit_cases! {
    kit: DispatcherKit, name: "dispatcher", bound: ExecutionDispatcher, fresh: true, claims: crate::case::no_claims,
    cases: [
        place_02_dispatch_claim_complete_is_fifo => ["PLACE-02", "SPI-01"], "1.0.0", [];
        place_03_package_carries_coordinates_only => ["PLACE-03"], "1.0.0", [];
        place_07_unregistered_compute_target_refused => ["PLACE-07"], "1.0.0", [];
        place_02_one_live_lease_per_execution => ["PLACE-02"], "1.0.0", [];
        place_04_expired_lease_is_requeued => ["PLACE-04", "PLACE-02"], "1.0.0", [];
        place_02_release_requeues_at_the_back => ["PLACE-02"], "1.0.0", [];
        place_02_renew_extends_a_live_lease => ["PLACE-02"], "1.0.0", [];
        place_02_blocked_head_does_not_block_the_queue => ["PLACE-02", "PLACE-07"], "1.0.0", [];
        place_04_expired_leases_requeue_in_order_behind_newer_packages => ["PLACE-04", "PLACE-02"], "1.0.0", [];
        place_02_execution_id_reused_after_completion => ["PLACE-02"], "1.0.0", [];
        place_07_dispatch_checks_in_order => ["PLACE-07", "PLACE-02"], "1.0.0", [];
        place_03_package_reads_back_identical => ["PLACE-03"], "1.0.0", [];
        gap_27_out_of_range_ids_follow_the_table => ["GAP-27", "PLACE-07"], "1.0.0", [];
    ]
}

fn package(execution_id: &str, target: Option<&str>) -> ExecutionPackage {
    ExecutionPackage {
        execution_id: execution_id.to_string(),
        flow_id: "kit-flow".to_string(),
        resume_hint: None,
        compute_target: target.map(str::to_string),
    }
}

async fn claimed<D: ExecutionDispatcher>(
    d: &D,
    target: &str,
    worker: &str,
    now_ms: i64,
) -> Result<Option<String>, Failure> {
    Ok(ok(d.claim(target, worker, now_ms).await, "claim")?.map(|l| l.package.execution_id))
}

/// The dispatcher declares a well-formed version of its seam (SPI-01); packages are
/// claimed oldest first; a completed one is gone (PLACE-02).
pub async fn place_02_dispatch_claim_complete_is_fifo<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    crate::case::check_declared_version(
        "the dispatcher",
        &d.spi_version(),
        loom_kernel::versions::DISPATCHER_SPI_VERSION,
    )?;
    ok(d.register_target("cpu").await, "register")?;
    let mut ids = Vec::new();
    for e in ["p02-e1", "p02-e2", "p02-e3"] {
        ids.push(ok(d.dispatch(package(e, None)).await, "dispatch")?);
    }
    ensure!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "dispatch ids do not increase: {ids:?}"
    );
    let l1 = ok(d.claim("cpu", "w1", 0).await, "claim")?
        .ok_or_else(|| Failure("nothing to claim".into()))?;
    ensure!(
        l1.package.execution_id == "p02-e1" && l1.dispatch_id == ids[0],
        "first claim got {l1:?}"
    );
    ensure!(
        claimed(d, "cpu", "w2", 0).await?.as_deref() == Some("p02-e2"),
        "second claim is not the second package"
    );
    ok(d.complete(&l1).await, "complete")?;
    ensure!(
        claimed(d, "cpu", "w3", 0).await?.as_deref() == Some("p02-e3"),
        "third claim is not the third package"
    );
    ensure!(
        claimed(d, "cpu", "w4", 0).await?.is_none(),
        "a fourth package appeared"
    );
    err_kind(d.complete(&l1).await, "lease-lost", "completing twice")?;
    Ok(Outcome::Pass)
}

/// A package is coordinates only: the claimed package equals the dispatched one, it
/// serialises to the four coordinate fields, and a field carrying code is refused
/// (PLACE-03).
pub async fn place_03_package_carries_coordinates_only<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    ok(d.register_target("cpu").await, "register")?;
    let p = ExecutionPackage {
        execution_id: "p03-e".to_string(),
        flow_id: "p03-flow".to_string(),
        resume_hint: Some("APPROVAL".to_string()),
        compute_target: Some("cpu".to_string()),
    };
    ok(d.dispatch(p.clone()).await, "dispatch")?;
    let lease = ok(d.claim("cpu", "w", 0).await, "claim")?
        .ok_or_else(|| Failure("nothing to claim".into()))?;
    ensure!(
        lease.package == p,
        "the claimed package {:?} differs from the dispatched one",
        lease.package
    );
    let value = serde_json::to_value(&p).map_err(|e| Failure(e.to_string()))?;
    let keys: Vec<&String> = value
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    ensure!(
        keys.iter().all(|k| ["executionId", "flowId", "resumeHint", "computeTarget"].contains(&k.as_str())),
        "package fields {keys:?} go beyond coordinates"
    );
    let with_code =
        serde_json::json!({ "executionId": "e", "flowId": "f", "code": "function () {}" });
    ensure!(
        serde_json::from_value::<ExecutionPackage>(with_code).is_err(),
        "a package with code was accepted"
    );
    Ok(Outcome::Pass)
}

/// A package pinned to an unregistered target is refused, nothing queued; once the
/// target is registered it is accepted and only that target may claim it (PLACE-07).
pub async fn place_07_unregistered_compute_target_refused<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    ok(d.register_target("cpu").await, "register cpu")?;
    err_kind(
        d.dispatch(package("p07-e", Some("gpu"))).await,
        "not-found",
        "dispatch to an unregistered target",
    )?;
    err_kind(
        d.claim("gpu", "w", 0).await,
        "not-found",
        "claim for an unregistered target",
    )?;
    ensure!(
        claimed(d, "cpu", "w", 0).await?.is_none(),
        "the refused package was queued"
    );
    ensure!(
        ok(d.register_target("gpu").await, "register gpu")?,
        "a new target was reported as known"
    );
    ensure!(
        !ok(d.register_target("gpu").await, "register gpu again")?,
        "re-registering reported a new target"
    );
    ensure!(
        ok(d.targets().await, "targets")? == vec!["cpu".to_string(), "gpu".to_string()],
        "targets are not [cpu, gpu]"
    );
    ok(
        d.dispatch(package("p07-e", Some("gpu"))).await,
        "dispatch to a registered target",
    )?;
    ensure!(
        claimed(d, "cpu", "w", 0).await?.is_none(),
        "another target claimed a pinned package"
    );
    ensure!(
        claimed(d, "gpu", "w", 0).await?.as_deref() == Some("p07-e"),
        "the pinned target could not claim it"
    );
    Ok(Outcome::Pass)
}

/// An execution is queued or leased at most once: at most one live lease (PLACE-02).
pub async fn place_02_one_live_lease_per_execution<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    ok(d.register_target("cpu").await, "register")?;
    ok(d.dispatch(package("p02-once", None)).await, "dispatch")?;
    err_kind(
        d.dispatch(package("p02-once", None)).await,
        "already-exists",
        "dispatch while queued",
    )?;
    let lease = ok(d.claim("cpu", "w", 0).await, "claim")?
        .ok_or_else(|| Failure("nothing to claim".into()))?;
    err_kind(
        d.dispatch(package("p02-once", None)).await,
        "already-exists",
        "dispatch while leased",
    )?;
    ok(d.complete(&lease).await, "complete")?;
    ok(
        d.dispatch(package("p02-once", None)).await,
        "dispatch after completion",
    )?;
    Ok(Outcome::Pass)
}

/// A lease past its deadline is re-queued; another worker claims it with a new lease
/// and the old lease is lost ("resume is migration", PLACE-04).
pub async fn place_04_expired_lease_is_requeued<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    ok(d.register_target("cpu").await, "register")?;
    ok(d.dispatch(package("p04-e", None)).await, "dispatch")?;
    let a = ok(d.claim("cpu", "worker-a", 1_000).await, "A claims")?
        .ok_or_else(|| Failure("nothing to claim".into()))?;
    ensure!(
        a.deadline_ms > 1_000,
        "deadline {} is not after the claim",
        a.deadline_ms
    );
    ensure!(
        claimed(d, "cpu", "worker-b", a.deadline_ms - 1)
            .await?
            .is_none(),
        "a live lease was re-queued early"
    );
    let b = ok(d.claim("cpu", "worker-b", a.deadline_ms).await, "B claims")?
        .ok_or_else(|| Failure("the expired lease was not re-queued".into()))?;
    ensure!(
        b.dispatch_id == a.dispatch_id && b.lease_id != a.lease_id,
        "B's lease {b:?} is not a new lease on the same dispatch"
    );
    err_kind(
        d.complete(&a).await,
        "lease-lost",
        "A completes after expiry",
    )?;
    err_kind(d.release(&a).await, "lease-lost", "A releases after expiry")?;
    ok(d.complete(&b).await, "B completes")?;
    let expired = ok(d.expire_leases(i64::MAX).await, "expire")?;
    ensure!(
        expired.is_empty(),
        "a completed dispatch expired: {expired:?}"
    );
    Ok(Outcome::Pass)
}

/// A released package goes to the back of the queue (reference-defined).
pub async fn place_02_release_requeues_at_the_back<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    ok(d.register_target("cpu").await, "register")?;
    ok(d.dispatch(package("p02-r1", None)).await, "dispatch")?;
    ok(d.dispatch(package("p02-r2", None)).await, "dispatch")?;
    let first = ok(d.claim("cpu", "w", 0).await, "claim")?
        .ok_or_else(|| Failure("nothing to claim".into()))?;
    ensure!(
        first.package.execution_id == "p02-r1",
        "claimed {:?} first",
        first.package.execution_id
    );
    ok(d.release(&first).await, "release")?;
    ensure!(
        claimed(d, "cpu", "w", 0).await?.as_deref() == Some("p02-r2"),
        "the released package jumped the queue"
    );
    ensure!(
        claimed(d, "cpu", "w", 0).await?.as_deref() == Some("p02-r1"),
        "the released package was lost"
    );
    Ok(Outcome::Pass)
}

/// `renew` moves a live lease's deadline; a lapsed lease cannot be renewed and is
/// re-queued (reference-defined).
pub async fn place_02_renew_extends_a_live_lease<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    ok(d.register_target("cpu").await, "register")?;
    ok(d.dispatch(package("p02-renew", None)).await, "dispatch")?;
    let lease = ok(d.claim("cpu", "w", 0).await, "claim")?
        .ok_or_else(|| Failure("nothing to claim".into()))?;
    let renewed = ok(d.renew(&lease, lease.deadline_ms - 1).await, "renew")?;
    ensure!(
        renewed.deadline_ms > lease.deadline_ms,
        "renew did not move the deadline"
    );
    ensure!(
        claimed(d, "cpu", "other", lease.deadline_ms)
            .await?
            .is_none(),
        "a renewed lease expired at the old deadline"
    );
    err_kind(
        d.renew(&renewed, renewed.deadline_ms).await,
        "lease-lost",
        "renew at the deadline",
    )?;
    ensure!(
        claimed(d, "cpu", "other", renewed.deadline_ms)
            .await?
            .as_deref()
            == Some("p02-renew"),
        "the lapsed lease was not re-queued"
    );
    Ok(Outcome::Pass)
}

async fn lease_of<D: ExecutionDispatcher>(
    d: &D,
    target: &str,
    worker: &str,
    now_ms: i64,
) -> Result<loom_kernel::spi::Lease, Failure> {
    ok(d.claim(target, worker, now_ms).await, "claim")?.ok_or_else(|| {
        Failure(format!(
            "{worker} found nothing to claim for {target} at {now_ms}"
        ))
    })
}

/// A package at the head that this worker's target may not run (pinned elsewhere)
/// does not block the packages behind it: a `cpu` worker skips the `gpu`-pinned head
/// and takes the oldest it may run, in order, and the `gpu` worker still gets the head
/// (PLACE-02, PLACE-07).
pub async fn place_02_blocked_head_does_not_block_the_queue<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    ok(d.register_target("cpu").await, "register cpu")?;
    ok(d.register_target("gpu").await, "register gpu")?;
    for (e, t) in [
        ("bh-1", Some("gpu")),
        ("bh-2", Some("gpu")),
        ("bh-3", None),
        ("bh-4", Some("cpu")),
        ("bh-5", None),
        ("bh-6", Some("gpu")),
    ] {
        ok(d.dispatch(package(e, t)).await, "dispatch")?;
    }
    let mut cpu = Vec::new();
    while let Some(e) = claimed(d, "cpu", "c", 0).await? {
        cpu.push(e);
        ensure!(cpu.len() <= 6, "the cpu worker keeps claiming: {cpu:?}");
    }
    ensure!(
        cpu == ["bh-3", "bh-4", "bh-5"],
        "behind a gpu-pinned head, the cpu worker claimed {cpu:?}, expected [bh-3, bh-4, bh-5]"
    );
    let mut gpu = Vec::new();
    while let Some(e) = claimed(d, "gpu", "g", 0).await? {
        gpu.push(e);
        ensure!(gpu.len() <= 6, "the gpu worker keeps claiming: {gpu:?}");
    }
    ensure!(
        gpu == ["bh-1", "bh-2", "bh-6"],
        "the gpu worker claimed {gpu:?}, expected [bh-1, bh-2, bh-6]"
    );
    Ok(Outcome::Pass)
}

/// Expired leases re-enter the queue at the back, behind packages dispatched while
/// they were leased, and several that expire together keep their dispatch order; the
/// deadline is probed from both sides (live at `deadline - 1`, expired at `deadline`);
/// `expireLeases` answers exactly the dispatch ids it re-queued, ascending, and nothing
/// the second time; the old lease is lost once its package is claimed again (PLACE-04,
/// PLACE-02).
pub async fn place_04_expired_leases_requeue_in_order_behind_newer_packages<
    D: ExecutionDispatcher,
>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    ok(d.register_target("cpu").await, "register")?;
    ok(d.dispatch(package("ex-a", None)).await, "dispatch a")?;
    ok(d.dispatch(package("ex-b", None)).await, "dispatch b")?;
    let a = lease_of(d, "cpu", "w1", 0).await?;
    let b = lease_of(d, "cpu", "w2", 10).await?;
    ensure!(
        a.package.execution_id == "ex-a" && b.package.execution_id == "ex-b",
        "claimed {} then {}",
        a.package.execution_id,
        b.package.execution_id
    );
    ensure!(
        b.lease_id > a.lease_id && b.deadline_ms > a.deadline_ms,
        "the second lease {b:?} does not come after the first {a:?}"
    );
    ok(d.dispatch(package("ex-c", None)).await, "dispatch c")?;
    let none = ok(
        d.expire_leases(a.deadline_ms - 1).await,
        "expire before the deadline",
    )?;
    ensure!(
        none.is_empty(),
        "expireLeases at deadline - 1 re-queued {none:?}"
    );
    let late = b.deadline_ms.max(a.deadline_ms);
    let expired = ok(d.expire_leases(late).await, "expire at the deadline")?;
    ensure!(
        expired == [a.dispatch_id, b.dispatch_id],
        "expireLeases at the later deadline answered {expired:?}, expected the two re-queued dispatches [{:?}, {:?}], ascending",
        a.dispatch_id,
        b.dispatch_id
    );
    let again = ok(d.expire_leases(late).await, "expire again")?;
    ensure!(
        again.is_empty(),
        "a second expireLeases re-queued {again:?} again"
    );
    let mut order = Vec::new();
    let mut leases = Vec::new();
    while let Some(l) = ok(d.claim("cpu", "w3", late).await, "claim")? {
        order.push(l.package.execution_id.clone());
        leases.push(l);
        ensure!(order.len() <= 4, "claims keep coming: {order:?}");
    }
    ensure!(
        order == ["ex-c", "ex-a", "ex-b"],
        "after both leases expired, claims came in the order {order:?}, expected [ex-c, ex-a, ex-b]"
    );
    for l in &leases {
        ensure!(
            l.lease_id > b.lease_id,
            "a re-claim reused lease id {}",
            l.lease_id
        );
    }
    err_kind(
        d.complete(&a).await,
        "lease-lost",
        "the expired lease of a completes",
    )?;
    err_kind(
        d.renew(&b, late).await,
        "lease-lost",
        "the expired lease of b renews",
    )?;
    for l in &leases {
        ok(d.complete(l).await, "complete the new lease")?;
    }
    Ok(Outcome::Pass)
}

/// An execution id used again after its dispatch completed gets a new dispatch, a
/// larger dispatch id and a new lease; the old lease cannot complete, release or renew
/// the new dispatch (a store that finds leases by execution id would let it) (PLACE-02).
pub async fn place_02_execution_id_reused_after_completion<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    ok(d.register_target("cpu").await, "register")?;
    let first_id = ok(d.dispatch(package("reuse", None)).await, "dispatch")?;
    let first = lease_of(d, "cpu", "w", 0).await?;
    ok(d.complete(&first).await, "complete")?;
    let second_id = ok(d.dispatch(package("reuse", None)).await, "dispatch again")?;
    ensure!(
        second_id > first_id,
        "the second dispatch got id {second_id:?}, the first {first_id:?}"
    );
    let second = lease_of(d, "cpu", "w", 0).await?;
    ensure!(
        second.dispatch_id == second_id && second.lease_id > first.lease_id,
        "the second lease {second:?} is not a new lease on the new dispatch"
    );
    err_kind(
        d.complete(&first).await,
        "lease-lost",
        "the first lease completes",
    )?;
    err_kind(
        d.release(&first).await,
        "lease-lost",
        "the first lease releases",
    )?;
    err_kind(
        d.renew(&first, 1).await,
        "lease-lost",
        "the first lease renews",
    )?;
    let renewed = ok(d.renew(&second, 1).await, "the second lease is still live")?;
    ok(d.complete(&renewed).await, "complete the second")?;
    ensure!(
        claimed(d, "cpu", "w", 0).await?.is_none(),
        "a package is left after both dispatches completed"
    );
    Ok(Outcome::Pass)
}

/// `dispatch` checks in order: an invalid package is `invalid-argument` even when its
/// target is unregistered, an unregistered target is `not-found` even when the
/// execution is already queued, and only then a duplicate is `already-exists`; a target
/// name is bounded in UTF-8 bytes (PLACE-07, PLACE-02).
pub async fn place_07_dispatch_checks_in_order<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    use loom_kernel::spi::ID_BYTES_MAX;
    ok(d.register_target("cpu").await, "register")?;
    ok(d.dispatch(package("order-e", None)).await, "dispatch")?;
    let mut bad = package("order-x", Some("nowhere"));
    bad.flow_id = String::new();
    err_kind(
        d.dispatch(bad).await,
        "invalid-argument",
        "an empty flow id pinned to an unregistered target",
    )?;
    err_kind(
        d.dispatch(package("order-e", Some("nowhere"))).await,
        "not-found",
        "an already queued execution pinned to an unregistered target",
    )?;
    err_kind(
        d.dispatch(package("order-e", Some("cpu"))).await,
        "already-exists",
        "an already queued execution",
    )?;
    let longest = "\u{e9}".repeat(ID_BYTES_MAX / 2);
    ensure!(
        ok(
            d.register_target(&longest).await,
            "register a target of ID_BYTES_MAX bytes"
        )?,
        "a new target was reported as known"
    );
    err_kind(
        d.register_target(&format!("{longest}x")).await,
        "invalid-argument",
        "a target of ID_BYTES_MAX + 1 bytes",
    )?;
    err_kind(
        d.register_target("").await,
        "invalid-argument",
        "an empty target",
    )?;
    Ok(Outcome::Pass)
}

/// A claimed package is exactly the one dispatched, non-ASCII and astral text
/// included, and a renewed lease differs from the old one only in its deadline
/// (PLACE-03; decision 0006).
pub async fn place_03_package_reads_back_identical<D: ExecutionDispatcher>(
    d: &D,
    _cx: &Ctx,
) -> Verdict {
    ok(d.register_target("c\u{e9}").await, "register")?;
    let p = ExecutionPackage {
        execution_id: "e-\u{1f600}-\u{65e5}".to_string(),
        flow_id: "flow/\u{1d11e}".to_string(),
        resume_hint: Some("hint \"quoted\" \\ \u{2028}".to_string()),
        compute_target: Some("c\u{e9}".to_string()),
    };
    ok(d.dispatch(p.clone()).await, "dispatch")?;
    let lease = lease_of(d, "c\u{e9}", "w\u{f6}rker", 5).await?;
    ensure!(
        lease.package == p && lease.target == "c\u{e9}" && lease.worker_id == "w\u{f6}rker",
        "the lease {lease:?} does not carry the package, target and worker as given"
    );
    let renewed = ok(d.renew(&lease, 6).await, "renew")?;
    ensure!(
        renewed.lease_id == lease.lease_id
            && renewed.dispatch_id == lease.dispatch_id
            && renewed.package == p
            && renewed.worker_id == lease.worker_id
            && renewed.target == lease.target
            && renewed.deadline_ms > lease.deadline_ms,
        "renewing {lease:?} gave {renewed:?}"
    );
    Ok(Outcome::Pass)
}

/// Every dispatcher method answers an empty or over-long id as the id-validation table says
/// (`loom_conformance::ids::ID_VALIDATION`, printed in docs/protocols/store.md): `registerTarget`, `dispatch` and a claim's worker refuse it, a claim for such a target answers `not-found` as for any unregistered target
/// (GAP-27).
pub async fn gap_27_out_of_range_ids_follow_the_table<S: ExecutionDispatcher>(
    store: &S,
    cx: &Ctx,
) -> Verdict {
    use crate::ids::{id_answer, judge_id_rule, out_of_range_ids, rules_of};
    let _ = cx;
    ok(store.register_target("cpu").await, "registerTarget cpu")?;
    for rule in rules_of("dispatcher") {
        for bad in out_of_range_ids() {
            let b = &*bad;
            let answer = match (rule.method, rule.argument) {
                ("dispatcher.registerTarget", _) => {
                    id_answer(store.register_target(b).await, |_| false)
                }
                ("dispatcher.dispatch", "package.executionId") => id_answer(
                    store
                        .dispatch(loom_kernel::spi::ExecutionPackage {
                            execution_id: bad.clone(),
                            flow_id: "f".into(),
                            resume_hint: None,
                            compute_target: None,
                        })
                        .await,
                    |_| false,
                ),
                ("dispatcher.dispatch", _) => id_answer(
                    store
                        .dispatch(loom_kernel::spi::ExecutionPackage {
                            execution_id: cx.id("gap_27-pinned"),
                            flow_id: "f".into(),
                            resume_hint: None,
                            compute_target: Some(bad.clone()),
                        })
                        .await,
                    |_| false,
                ),
                ("dispatcher.claim", "target") => id_answer(
                    store.claim(b, "w", 0).await,
                    |r| matches!(r, Err(e) if e.kind.name() == "not-found"),
                ),
                ("dispatcher.claim", _) => id_answer(store.claim("cpu", b, 0).await, |_| false),
                _ => continue,
            };
            judge_id_rule(rule, b, answer)?;
        }
    }
    Ok(Outcome::Pass)
}
