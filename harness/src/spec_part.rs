//! The spec part: traceability over the results of *this run* against the reference.
//!
//! CONF-01 passes when every binding rule has a passing result (or a listed expected
//! failure, or a hand-written exemption) in this run; CONF-07 and CONF-09 pass when every
//! shipped capability's binding rules do. Nothing here reads the source tree: a rule id
//! written somewhere is not evidence, a result that ran is.

use crate::subjects::REFERENCE;
use loom_report::{CaseResult, Failure, RuleInfo, Status};
use std::collections::{BTreeMap, BTreeSet};

/// The area spec results are written under.
pub const AREA: &str = "spec";

/// The rules this part's own results establish.
pub const OWN_RULES: [&str; 3] = ["CONF-01", "CONF-07", "CONF-09"];

/// Hand-written exemptions (`spec/exemptions.toml`): rule id → reason.
pub fn exemptions() -> Result<BTreeMap<String, String>, String> {
    Ok(loom_spec::load_exemptions()?
        .into_iter()
        .map(|e| (e.rule, e.reason))
        .collect())
}

/// Rules with a passing result against the reference and no failing one, and rules
/// with an expected failure.
fn standing(results: &[CaseResult]) -> (BTreeSet<&str>, BTreeSet<&str>) {
    let mut pass = BTreeSet::new();
    let mut failing = BTreeSet::new();
    let mut xfail = BTreeSet::new();
    for r in results
        .iter()
        .filter(|r| r.subject.as_deref().is_none_or(|s| s == REFERENCE))
    {
        for id in &r.rules {
            match r.status {
                Status::Pass => {
                    pass.insert(id.as_str());
                }
                Status::Xfail => {
                    xfail.insert(id.as_str());
                }
                s if s.is_failure() => {
                    failing.insert(id.as_str());
                }
                _ => {}
            }
        }
    }
    let pass = pass
        .difference(&failing)
        .copied()
        .filter(|id| !xfail.contains(id))
        .collect();
    (pass, xfail)
}

/// The spec part over `results` (everything the other parts produced). `complete`
/// says whether every part that credits the reference ran; a partial run cannot show
/// CONF-01 and says so with a skip.
pub fn run(
    results: &[CaseResult],
    rules: &[RuleInfo],
    exempted: &BTreeMap<String, String>,
    complete: bool,
) -> Vec<CaseResult> {
    let (pass, xfail) = standing(results);
    let covered = |id: &str| pass.contains(id) || xfail.contains(id) || exempted.contains_key(id);
    let mut out = Vec::new();
    let binding: Vec<&RuleInfo> = rules
        .iter()
        .filter(|r| r.is_binding() && !r.is_gap())
        .collect();
    let missing: Vec<&str> = binding
        .iter()
        .map(|r| r.id.as_str())
        .filter(|id| !OWN_RULES.contains(id) && !covered(id))
        .collect();
    out.push(if !complete {
        CaseResult::skip_untestable(
            AREA,
            "traceability",
            "every-binding-rule-has-a-result",
            ["CONF-01"],
            "a partial run (parts skipped or unavailable) cannot show that every binding rule has a passing result",
        )
    } else if missing.is_empty() {
        CaseResult::pass(
            AREA,
            "traceability",
            "every-binding-rule-has-a-result",
            ["CONF-01"],
        )
        .with_message(format!(
            "{} binding rules: {} with passing results in this run, {} expected failure(s), {} exempted by hand",
            binding.len(),
            binding.iter().filter(|r| pass.contains(r.id.as_str())).count(),
            binding.iter().filter(|r| xfail.contains(r.id.as_str())).count(),
            binding
                .iter()
                .filter(|r| exempted.contains_key(&r.id) && !pass.contains(r.id.as_str()))
                .count(),
        ))
    } else {
        CaseResult::fail(
            AREA,
            "traceability",
            "every-binding-rule-has-a-result",
            ["CONF-01"],
            format!(
                "{} binding rule(s) have no passing result in this run: {}",
                missing.len(),
                missing.join(", ")
            ),
            Failure::values(serde_json::json!([]), serde_json::json!(missing)),
        )
    });

    // Capabilities: a shipped badge may only claim rules this run backs.
    let capabilities = match loom_spec::load_capabilities() {
        Ok(c) => c,
        Err(e) => {
            out.push(CaseResult::error(
                AREA,
                "capabilities",
                "capabilities-parse",
                ["CONF-07"],
                format!("spec/capabilities.toml cannot be parsed: {e}"),
            ));
            return out;
        }
    };
    let binding_ids: BTreeSet<&str> = binding.iter().map(|r| r.id.as_str()).collect();
    for cap in &capabilities {
        if cap.maturity != loom_spec::Maturity::Shipped {
            continue;
        }
        let mut rules = vec!["CONF-07"];
        if cap.id == "typed-failure-channels" {
            rules.push("CONF-09");
        }
        // The rules this part establishes itself are not asked of the badges that cite
        // them: that would make each depend on its own result.
        let unbacked: Vec<&str> = cap
            .rules
            .iter()
            .map(String::as_str)
            .filter(|id| !OWN_RULES.contains(id))
            .filter(|id| binding_ids.contains(id) && !covered(id))
            .collect();
        let case = format!("shipped-{}", cap.id);
        out.push(if !complete {
            CaseResult::skip_untestable(
                AREA,
                "capabilities",
                case,
                rules,
                "a partial run cannot back a capability badge",
            )
        } else if unbacked.is_empty() {
            CaseResult::pass(AREA, "capabilities", case, rules).with_message(format!(
                "{}: every binding rule it cites has a passing result in this run",
                cap.title
            ))
        } else {
            CaseResult::fail(
                AREA,
                "capabilities",
                case,
                rules,
                format!(
                    "the shipped badge {} claims rules with no passing result in this run: {}",
                    cap.id,
                    unbacked.join(", ")
                ),
                Failure::values(serde_json::json!([]), serde_json::json!(unbacked)),
            )
        });
    }
    if !capabilities
        .iter()
        .any(|c| c.id == "typed-failure-channels" && c.maturity == loom_spec::Maturity::Shipped)
    {
        out.push(CaseResult::fail(
            AREA,
            "capabilities",
            "shipped-typed-failure-channels",
            ["CONF-09"],
            "the typed-failure-channels capability is not shipped in spec/capabilities.toml",
            Failure::default(),
        ));
    }
    out.into_iter().map(|r| r.with_subject(REFERENCE)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Vec<RuleInfo> {
        vec![
            RuleInfo::new("FOLD-01", "MUST", "FOLD", "a"),
            RuleInfo::new("FOLD-02", "GUARANTEE", "FOLD", "b"),
            RuleInfo::new("EMIT-09", "SHOULD", "EMIT", "c"),
        ]
    }

    #[test]
    fn conf_01_needs_a_passing_result_for_every_binding_rule_and_a_failure_is_not_one() {
        let none = BTreeMap::new();
        let results = vec![
            CaseResult::pass("x", "y", "a", ["FOLD-01"]),
            CaseResult::pass("x", "y", "b", ["FOLD-02"]),
        ];
        let out = run(&results, &rules(), &none, true);
        assert_eq!(out[0].status, Status::Pass, "{:?}", out[0].message);

        let mut with_failure = results.clone();
        with_failure.push(CaseResult::fail(
            "x",
            "y",
            "c",
            ["FOLD-02"],
            "no",
            Failure::default(),
        ));
        let out = run(&with_failure, &rules(), &none, true);
        assert_eq!(out[0].status, Status::Fail);
        assert!(out[0].message.as_deref().unwrap().contains("FOLD-02"));

        // A skip is not evidence.
        let skipped = vec![
            CaseResult::pass("x", "y", "a", ["FOLD-01"]),
            CaseResult::skip_untestable("x", "y", "b", ["FOLD-02"], "no server"),
        ];
        assert_eq!(run(&skipped, &rules(), &none, true)[0].status, Status::Fail);

        // An exemption by hand covers it; a partial run cannot show CONF-01.
        let exempt: BTreeMap<String, String> = [("FOLD-02".to_string(), "§4".to_string())].into();
        assert_eq!(
            run(&skipped, &rules(), &exempt, true)[0].status,
            Status::Pass
        );
        assert_eq!(
            run(&results, &rules(), &none, false)[0].status,
            Status::SkipUntestable
        );
    }
}
