//! The ids the kits and the exploration campaign draw, and which methods validate them.
//!
//! A store keyed by a real database gets ids wrong in ways plain ASCII never shows: a
//! case-insensitive collation, Unicode normalisation, a percent-decoding layer, an index
//! on a 255-byte prefix, composite keys joined with `:`, SQL `CHAR` padding, numeric
//! column affinity, an ordering by UTF-16 code units. Each [`Family`] is a group of ids
//! that a faithful store keeps apart (and lists in byte order) while a store with that
//! bug merges or reorders them. The kits write every family through every SPI; the
//! campaign (`loom_props::explore`) draws its ids from [`campaign_ids`].
//!
//! [`ID_VALIDATION`] is the per-method table docs/protocols/store.md prints (a test holds
//! the two together): which methods refuse an empty or over-long id with
//! `invalid-argument` and which answer as for an unknown id.

use loom_kernel::spi::ID_BYTES_MAX;

/// The index length a store with a prefix index keys on (MySQL's classic limit).
pub const PREFIX_INDEX_BYTES: usize = 255;

/// A family of hostile ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// Ids that differ only in letter case (`Key`, `key`, `KEY`).
    CaseTwins,
    /// The same text composed (NFC) and decomposed (NFD), plus stacked combining marks.
    NormalizationTwins,
    /// An id and its percent-encoded spelling (`p/q` and `p%2Fq`).
    PercentTwins,
    /// Ids with `:`, `.`, `/`, `%` and spaces, which a store joining composite keys or
    /// splitting paths takes apart.
    Separators,
    /// Ids that differ only in trailing spaces (SQL `CHAR` pads and ignores them).
    TrailingSpaces,
    /// Characters whose UTF-16 order differs from their code-point (and UTF-8 byte)
    /// order: U+FF61 sorts before U+1F600 by code point, after it by UTF-16 unit.
    Utf16Order,
    /// Ids sharing their first [`PREFIX_INDEX_BYTES`] bytes.
    LongPrefix,
    /// Ids of exactly [`ID_BYTES_MAX`] bytes, made of multi-byte characters.
    AtLimit,
    /// Ids that read as numbers (`9`, `10`, `1e1`, `010`, `10.0`): numeric affinity makes
    /// some equal and orders them by value.
    NumericLooking,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 9] = [
        Family::CaseTwins,
        Family::NormalizationTwins,
        Family::PercentTwins,
        Family::Separators,
        Family::TrailingSpaces,
        Family::Utf16Order,
        Family::LongPrefix,
        Family::AtLimit,
        Family::NumericLooking,
    ];

    /// The family's name in failure messages.
    pub fn name(self) -> &'static str {
        match self {
            Family::CaseTwins => "case twins",
            Family::NormalizationTwins => "NFC/NFD twins",
            Family::PercentTwins => "percent-encoded twins",
            Family::Separators => "separators",
            Family::TrailingSpaces => "trailing spaces",
            Family::Utf16Order => "UTF-16 order",
            Family::LongPrefix => "shared 255-byte prefix",
            Family::AtLimit => "at the length limit",
            Family::NumericLooking => "numeric-looking",
        }
    }

    /// The family's ids, each `prefix` followed by the hostile part. All are distinct,
    /// valid (1..=`ID_BYTES_MAX` bytes when `prefix` is shorter than 200 bytes) and
    /// returned in byte order, which is the order every listing must use.
    pub fn ids(self, prefix: &str) -> Vec<String> {
        let mut ids: Vec<String> = match self {
            Family::CaseTwins => ["Key", "key", "KEY", "kEy"]
                .iter()
                .map(|s| format!("{prefix}{s}"))
                .collect(),
            Family::NormalizationTwins => [
                "caf\u{e9}",
                "cafe\u{301}",
                "a\u{301}\u{302}",
                "a\u{302}\u{301}",
            ]
            .iter()
            .map(|s| format!("{prefix}{s}"))
            .collect(),
            Family::PercentTwins => ["p/q", "p%2Fq", "p%2fq", "p r", "p%20r", "p%2520r"]
                .iter()
                .map(|s| format!("{prefix}{s}"))
                .collect(),
            Family::Separators => ["s:t", "s.t", "s/t", "s%t", "s t", "s:", ":s"]
                .iter()
                .map(|s| format!("{prefix}{s}"))
                .collect(),
            Family::TrailingSpaces => ["t", "t ", "t  ", " t"]
                .iter()
                .map(|s| format!("{prefix}{s}"))
                .collect(),
            Family::Utf16Order => ["\u{ff61}", "\u{1f600}", "\u{e000}", "\u{10ffff}"]
                .iter()
                .map(|s| format!("{prefix}{s}"))
                .collect(),
            Family::LongPrefix => {
                let pad = PREFIX_INDEX_BYTES.saturating_sub(prefix.len());
                ["1", "2", "10"]
                    .iter()
                    .map(|s| format!("{prefix}{}{s}", "l".repeat(pad)))
                    .collect()
            }
            Family::AtLimit => {
                // Two-byte characters up to the limit (an odd remainder is one ASCII
                // byte), so a store counting characters instead of bytes sees a
                // shorter id; the twins differ only in their last character.
                let room = ID_BYTES_MAX.saturating_sub(prefix.len() + 1);
                let body = "\u{e9}".repeat(room / 2) + &"x".repeat(room % 2);
                ["a", "b"]
                    .iter()
                    .map(|s| format!("{prefix}{body}{s}"))
                    .collect()
            }
            Family::NumericLooking => ["9", "10", "1e1", "010", "10.0", "-0", "0"]
                .iter()
                .map(|s| format!("{prefix}{s}"))
                .collect(),
        };
        ids.sort();
        ids
    }
}

/// Every family's ids under `prefix`, tagged with their family, in byte order within a
/// family.
pub fn hostile_ids(prefix: &str) -> Vec<(Family, String)> {
    Family::ALL
        .iter()
        .flat_map(|f| f.ids(prefix).into_iter().map(move |id| (*f, id)))
        .collect()
}

/// Pairs of two-part keys that collide when a store joins the parts with `:` or `.`
/// (`("j:k", "m")` and `("j", "k:m")` both join to `j:k:m`). A faithful store keeps each
/// pair apart.
pub fn composite_twins() -> Vec<[(String, String); 2]> {
    [":", ".", "/"]
        .iter()
        .map(|sep| {
            [
                (format!("j{sep}k"), "m".to_string()),
                ("j".to_string(), format!("k{sep}m")),
            ]
        })
        .collect()
}

/// The plain ids the campaign uses for `selector` 0, 1, 2 when a case draws no family.
pub const CAMPAIGN_PLAIN: [&str; 3] = ["e0", "e1", "e2"];

/// The campaign's ids for a case that draws `family` (`None`: the plain ones): three
/// ids, the first two of which a store with the family's bug confuses or misorders.
pub fn campaign_ids(family: Option<Family>) -> [String; 3] {
    campaign_ids_under("e", family)
}

/// As [`campaign_ids`], each id starting with `prefix` (ids at the length limit stay
/// within it): the concurrent campaign's fresh ids per round.
pub fn campaign_ids_under(prefix: &str, family: Option<Family>) -> [String; 3] {
    match family {
        None => ["0", "1", "2"].map(|s| format!("{prefix}{s}")),
        Some(f) => {
            let ids = f.ids(prefix);
            let pick = |i: usize| ids[i.min(ids.len() - 1)].clone();
            match f {
                // The two that sort apart by UTF-16 unit, and a third.
                Family::Utf16Order => [pick(1), pick(2), pick(0)],
                // "10" and "1e1" are equal under numeric affinity, "9" orders after.
                Family::NumericLooking => ["10", "1e1", "9"].map(|s| format!("{prefix}{s}")),
                _ => [pick(0), pick(1), pick(2)],
            }
        }
    }
}

/// What a method answers for an id outside 1..=[`ID_BYTES_MAX`] bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfRange {
    /// `invalid-argument`, nothing written.
    Refused,
    /// As for an id the store never saw: no such id can have been written, so a read
    /// or a delete of it finds nothing.
    AsUnknown,
}

/// One row of the id-validation table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdRule {
    /// The wire method (`eventStore.read`).
    pub method: &'static str,
    /// The id argument (`executionId`, `package.executionId`).
    pub argument: &'static str,
    /// What an empty or over-long id gets.
    pub out_of_range: OutOfRange,
    /// The answer for an unknown id, as store.md states it (for `AsUnknown` rows).
    pub unknown_answer: &'static str,
}

const fn refused(method: &'static str, argument: &'static str) -> IdRule {
    IdRule {
        method,
        argument,
        out_of_range: OutOfRange::Refused,
        unknown_answer: "",
    }
}

const fn unknown(
    method: &'static str,
    argument: &'static str,
    unknown_answer: &'static str,
) -> IdRule {
    IdRule {
        method,
        argument,
        out_of_range: OutOfRange::AsUnknown,
        unknown_answer,
    }
}

/// Which methods refuse an empty or over-long id and which answer as for an unknown one
/// (GAP-27, decision 0006): every write refuses it; every event-tier read, delete and
/// lookup answers as for an unknown id (no write can have stored it); the plugin tier
/// (durable state, read models, content owners) refuses it everywhere, because its
/// keys are names a caller chooses, not ids the kernel mints. The kits probe every row
/// (`gap_27_out_of_range_ids_*` cases) and docs/protocols/store.md prints the table.
pub const ID_VALIDATION: &[IdRule] = &[
    refused("eventStore.append", "executionId"),
    unknown("eventStore.read", "executionId", "`[]`"),
    unknown("eventStore.readRange", "executionId", "`[]`"),
    refused("eventStore.acquireFence", "executionId"),
    refused("eventStore.acquireFenceIf", "executionId"),
    unknown(
        "eventStore.observe",
        "executionId",
        "the zero anchor `{0, 0, 0}`",
    ),
    refused("eventStore.appendIfUnchanged", "executionId"),
    unknown("eventStore.deleteThrough", "executionId", "`not-found`"),
    refused("eventStore.copyPrefix", "source"),
    refused("eventStore.copyPrefix", "target"),
    unknown("eventStore.deleteExecution", "executionId", "`false`"),
    refused("snapshotStore.save", "executionId"),
    unknown("snapshotStore.loadLatest", "executionId", "`null`"),
    unknown("snapshotStore.loadLatestSealed", "executionId", "`null`"),
    unknown("snapshotStore.pruneSnapshots", "executionId", "`0`"),
    unknown("snapshotStore.listSequences", "executionId", "`[]`"),
    unknown("snapshotStore.deleteExecution", "executionId", "`0`"),
    refused("archiveStore.archive", "executionId"),
    unknown("archiveStore.readArchived", "executionId", "`[]`"),
    refused("archiveStore.replaceSegments", "executionId"),
    unknown("archiveStore.deleteExecution", "executionId", "`0`"),
    refused("branchRegistry.register", "record.executionId"),
    refused("branchRegistry.register", "record.parentExecutionId"),
    unknown("branchRegistry.get", "executionId", "`null`"),
    unknown("branchRegistry.children", "parentExecutionId", "`[]`"),
    refused("dispatcher.registerTarget", "name"),
    refused("dispatcher.dispatch", "package.executionId"),
    refused("dispatcher.dispatch", "package.computeTarget"),
    unknown("dispatcher.claim", "target", "`not-found`"),
    refused("dispatcher.claim", "workerId"),
    refused("timerStore.schedule", "timer.executionId"),
    refused("timerStore.schedule", "timer.key"),
    unknown("timerStore.cancel", "executionId", "`false`"),
    unknown("timerStore.cancel", "key", "`false`"),
    refused("contentStore.put", "owner"),
    refused("contentStore.get", "owner"),
    refused("durableStateStore.get", "key"),
    refused("durableStateStore.put", "key"),
    refused("durableStateStore.delete", "key"),
    refused("readModelStore.upsert", "collection"),
    refused("readModelStore.upsert", "id"),
    refused("readModelStore.get", "collection"),
    refused("readModelStore.get", "id"),
    refused("readModelStore.query", "collection"),
];

/// The rows of [`ID_VALIDATION`] for one SPI (the method prefix, e.g. `"eventStore"`).
pub fn rules_of(spi: &str) -> impl Iterator<Item = &'static IdRule> + '_ {
    ID_VALIDATION
        .iter()
        .filter(move |r| r.method.split('.').next() == Some(spi))
}

/// The two out-of-range ids every row is probed with: empty, and one byte over.
pub fn out_of_range_ids() -> [String; 2] {
    [String::new(), "x".repeat(ID_BYTES_MAX + 1)]
}

/// How a store answered one out-of-range probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdAnswer {
    /// `invalid-argument`.
    Refused,
    /// What the method answers for an unknown id.
    Unknown,
    /// Anything else (rendered for the message).
    Other(String),
}

/// Classifies `result`: `invalid-argument`, the unknown-id answer (`is_unknown`), or
/// something else.
pub fn id_answer<T: std::fmt::Debug>(
    result: Result<T, loom_kernel::spi::StoreError>,
    is_unknown: impl FnOnce(&Result<T, loom_kernel::spi::StoreError>) -> bool,
) -> IdAnswer {
    if matches!(&result, Err(e) if e.kind.name() == "invalid-argument") {
        return IdAnswer::Refused;
    }
    if is_unknown(&result) {
        return IdAnswer::Unknown;
    }
    IdAnswer::Other(crate::case::outcome_text(&result))
}

/// Fails unless `answer` is what `rule` says for the out-of-range id `bad`.
pub fn judge_id_rule(rule: &IdRule, bad: &str, answer: IdAnswer) -> Result<(), crate::Failure> {
    let which = if bad.is_empty() {
        "an empty id".to_string()
    } else {
        format!("an id of {} bytes", bad.len())
    };
    let ok = match rule.out_of_range {
        OutOfRange::Refused => answer == IdAnswer::Refused,
        OutOfRange::AsUnknown => answer == IdAnswer::Unknown,
    };
    if ok {
        return Ok(());
    }
    let want = match rule.out_of_range {
        OutOfRange::Refused => "invalid-argument".to_string(),
        OutOfRange::AsUnknown => format!("the unknown-id answer {}", rule.unknown_answer),
    };
    Err(crate::Failure(format!(
        "{} with {which} as {}: expected {want} (docs/protocols/store.md, out-of-range ids), got {}",
        rule.method,
        rule.argument,
        match answer {
            IdAnswer::Refused => "invalid-argument".to_string(),
            IdAnswer::Unknown => "the unknown-id answer".to_string(),
            IdAnswer::Other(s) => s,
        }
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_gives_distinct_valid_ids_in_byte_order() {
        for f in Family::ALL {
            let ids = f.ids("r1a2b3.4.");
            let mut sorted = ids.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(ids, sorted, "{f:?}");
            assert!(ids.len() >= 2, "{f:?}");
            for id in &ids {
                assert!(!id.is_empty() && id.len() <= ID_BYTES_MAX, "{f:?}: {id:?}");
            }
        }
        let at = Family::AtLimit.ids("p.");
        assert!(at.iter().all(|id| id.len() == ID_BYTES_MAX));
        let long = Family::LongPrefix.ids("p.");
        assert_eq!(long[0][..PREFIX_INDEX_BYTES], long[1][..PREFIX_INDEX_BYTES]);
    }

    #[test]
    fn utf16_order_differs_from_byte_order() {
        let ids = Family::Utf16Order.ids("");
        let mut by_utf16 = ids.clone();
        by_utf16.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        assert_ne!(ids, by_utf16);
        let [a, b, _] = campaign_ids(Some(Family::Utf16Order));
        assert_ne!(
            a.cmp(&b),
            a.encode_utf16().cmp(b.encode_utf16()),
            "the campaign's first two ids must order apart"
        );
    }
}
