//! Writes a sample report (every status, one failure with a diff) with all
//! renderings into the directory given as the first argument.

use loom_report::{render_all, CaseResult, Environment, Failure, Report, RuleInfo};
use serde_json::json;

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/loom-report-sample".into());
    let mut env = Environment::detect("loom", env!("CARGO_PKG_VERSION"));
    env.seed = Some(42);
    env.implementation_hello = Some(json!({"name": "reference", "protocol": 1}));
    let fold9 = RuleInfo::new(
        "FOLD-09",
        "MUST",
        "FOLD",
        "STEP_FAILED does not fail the execution",
    );
    let rules = vec![
        fold9,
        RuleInfo::new("FOLD-01", "MUST", "FOLD", "events fold in sequence order"),
        RuleInfo::new(
            "SNAP-02",
            "MUST",
            "SNAP",
            "fold(snapshot, tail) == fold(events)",
        ),
        RuleInfo::new("SPI-03", "SHOULD", "SPI", "fences reject stale writers"),
        RuleInfo::new("GATE-01", "MAY", "GATE", "gates may refuse"),
    ];
    let results = vec![
        CaseResult::pass("vectors", "fold", "fold-001", ["FOLD-01"]).with_duration_ms(3),
        CaseResult::fail(
            "vectors",
            "fold",
            "fold-009",
            ["FOLD-09"],
            "state differs after event 4",
            Failure::values(
                json!({"status": "running", "sequence": 4, "variables": {"_decisions": {"a": {"seq": 1, "choice": "left"}}}}),
                json!({"status": "running", "sequence": 4, "variables": {"_decisions": {"a": {"seq": 2, "choice": "left"}}}}),
            )
            .with_event_index(4),
        ),
        CaseResult::skip_not_claimed("kits", "event-store", "fence-1", ["SPI-03"], "not claimed"),
        CaseResult::xfail("kits", "snapshot-store", "snap-1", ["SNAP-02"], "issue 12"),
        CaseResult::error("sim", "deploy", "seed-7", ["SNAP-02"], "adapter crashed: <script>alert(1)</script>"),
        CaseResult::timeout("sim", "deploy", "seed-8", Vec::<String>::new(), "hung for 30s"),
    ];
    let report = Report::new(env, rules, results);
    let paths = render_all(&report, &dir)?;
    println!("{}", paths.html.display());
    Ok(())
}
