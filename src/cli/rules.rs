//! `loom rules [ID]`: the rule catalogue built into the binary, one entry or all of
//! them, or the whole page as Markdown (`docs/rules.md` is this output).

use super::{EXIT_OK, EXIT_USAGE};
use clap::Args;
use loom_spec::page::{gap_entry, rule_entry, rules_markdown};
use loom_spec::Catalogue;

/// Arguments of `loom rules`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  loom rules                 every rule, one per line\n  loom rules FOLD-09         one rule: level, spec section, summary, planned evidence\n  \
loom rules GAP-12          an open question and the reference resolution\n  loom rules --group SPI\n  loom rules --markdown > rules.md\n\n\
Exit status: 0 printed, 2 usage error (no such rule or group)."
)]
pub struct RulesArgs {
    /// A rule or gap id (case does not matter), e.g. FOLD-09 or GAP-12.
    pub id: Option<String>,
    /// Only the rules of this group (FOLD, SNAP, EMIT, REPLAY, TYPED, INGRESS, ABI, SPI, PLACE, RES, COMPAT, CONF, GAP).
    #[arg(long, conflicts_with = "id")]
    pub group: Option<String>,
    /// Print the whole catalogue as one Markdown page.
    #[arg(long, conflicts_with_all = ["id", "group"])]
    pub markdown: bool,
}

/// Runs `loom rules`.
pub fn run(args: RulesArgs) -> u8 {
    let catalogue = Catalogue::load();
    if args.markdown {
        print!("{}", rules_markdown(&catalogue));
        return EXIT_OK;
    }
    if let Some(id) = &args.id {
        let id = id.to_ascii_uppercase();
        if let Some(rule) = catalogue.get(&id) {
            print!("{}", rule_entry(rule));
            return EXIT_OK;
        }
        if let Some(gap) = catalogue.gap(&id) {
            print!("{}", gap_entry(gap));
            return EXIT_OK;
        }
        eprintln!(
            "error: no rule or gap `{id}` in the catalogue (`loom rules` lists them; ids look like FOLD-09 or GAP-12)"
        );
        return EXIT_USAGE;
    }
    let group = args.group.as_deref().map(str::to_ascii_uppercase);
    let mut n = 0;
    if group.as_deref() != Some("GAP") {
        for r in catalogue.rules() {
            if group.as_deref().is_some_and(|g| g != r.group) {
                continue;
            }
            n += 1;
            println!(
                "{:<11} {:<17} {:<22} {}",
                r.id,
                r.level.as_str(),
                r.section,
                r.summary
            );
        }
    }
    if group.is_none() || group.as_deref() == Some("GAP") {
        for g in catalogue.gaps() {
            n += 1;
            println!("{:<11} {:<17} {:<22} {}", g.id, "gap", "", g.title);
        }
    }
    if n == 0 {
        eprintln!(
            "error: no group `{}` (groups: {}, GAP)",
            group.unwrap_or_default(),
            loom_spec::RULE_GROUPS.join(", ")
        );
        return EXIT_USAGE;
    }
    EXIT_OK
}
