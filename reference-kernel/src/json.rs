//! JSON values as compact text: [`JsonText`], what an event's payload is (always text),
//! and [`Json`], a value the folded state keeps (text, or the tree it came as).
//!
//! A long log's state holds a value per step (its input until it settles, then its
//! output or error) and an entry per decision. As `serde_json::Value` trees each object
//! among them is a `BTreeMap` whose first node alone takes 632 bytes, so the state of a
//! 10^6-event log held about 790 MB, and allocating, faulting in and freeing that memory
//! was most of the fold's own time (docs/performance.md, "Parse + fold"). As text each
//! value is one allocation of its own length.
//!
//! So a value the fold reads from a payload's text is kept as text, always in the
//! *normal form* `serde_json` writes a `Value` in: no whitespace, object keys in byte
//! order and each key once, integers as plain digits, other numbers as `serde_json`
//! prints an `f64`, strings escaped as it escapes them. Text and tree convert both ways
//! without loss, the state's JSON output is byte for byte what it was with trees, and
//! two texts of one value are the same text (up to the sign of a floating zero, which
//! [`PartialEq`] handles). A value the state gets as a tree (the general handler's
//! kinds, a snapshot read back) stays the tree: printing it would cost more than its
//! memory saves.
//!
//! A payload is normal text too, so the decoder takes a payload already in normal form
//! as it is, the stores write and read it as it is, and the fold finds a hot kind's
//! fields with one scan of it and keeps a slice of it.
//!
//! [`Json::from_normal_text`] takes text that is already in normal form (an event
//! payload written by a `serde_json`-based writer usually is) without building a tree:
//! one scan that checks the form and rejects every `__proto__` key, since the fold drops
//! those (FOLD-05) and a value holding one must go through the tree path that does.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;
use std::ops::Range;

/// Deepest nesting [`Json::from_normal_text`] scans; deeper text takes the tree path
/// (which handles any depth the decoder accepted), so the scan's recursion is bounded.
pub const NORMAL_SCAN_DEPTH_MAX: usize = 64;

/// A JSON value the state keeps: as its compact text in `serde_json`'s normal form (module
/// docs) when it came from log text ([`Json::from_normal_text`], the fold's text path), or
/// as the tree it came as ([`Json::tree`], a fold of envelopes already decoded, which
/// would only pay to print it). Either way it stands for one value: equality, output
/// and [`Json::to_value`] are the value's.
#[derive(Clone)]
pub struct Json(Repr);

#[derive(Clone)]
enum Repr {
    Text(Box<str>),
    /// Boxed, so a kept value takes two words whichever form it has.
    Tree(Box<Value>),
}

impl Json {
    /// `null`.
    pub fn null() -> Json {
        Json(Repr::Tree(Box::new(Value::Null)))
    }

    /// The value, kept as the tree it is.
    pub fn tree(value: Value) -> Json {
        Json(Repr::Tree(Box::new(value)))
    }

    /// The value, kept as its normal-form text.
    pub fn from_value(value: &Value) -> Json {
        // Printing a `Value` cannot fail: its keys are strings and it holds no
        // non-finite number.
        Json(Repr::Text(
            serde_json::to_string(value)
                .unwrap_or_else(|_| "null".to_owned())
                .into_boxed_str(),
        ))
    }

    /// `text` as it is, when it is one JSON value already in normal form with no
    /// `__proto__` key at any depth; `None` otherwise (then build a `Value`).
    pub fn from_normal_text(text: &str) -> Option<Json> {
        is_normal(text).then(|| Json(Repr::Text(text.into())))
    }

    /// Text the caller built from normal-form parts in normal-form order (the text
    /// path's decision entries): kept without a second scan, which debug builds (the
    /// tests) still make.
    pub(crate) fn from_built_normal_text(text: String) -> Json {
        // Normal form is what a `Value` prints as, so the check is a round trip.
        debug_assert_eq!(parse(&text).to_string(), text, "not in normal form");
        Json(Repr::Text(text.into_boxed_str()))
    }

    /// Text [`scan_normal`] took as one value: kept without a second scan (debug
    /// builds, the tests, still check it).
    pub(crate) fn from_scanned_normal_text(text: &str) -> Json {
        debug_assert!(is_normal(text), "not in normal form: {text}");
        Json(Repr::Text(text.into()))
    }

    /// Appends the value's canonical JSON (RFC 8785) to `out`: a text is read back into
    /// its tree for the writer, which alone knows canonical numbers and key order.
    pub fn write_canonical(&self, out: &mut String) {
        match &self.0 {
            Repr::Tree(v) => crate::canonical::write_value(out, v),
            Repr::Text(t) => match &**t {
                // Literals and plain integers, the commonest small values, as they are.
                "null" | "true" | "false" => out.push_str(t),
                _ => crate::canonical::write_value(out, &parse(t)),
            },
        }
    }

    /// The value's normal-form text (printed, for a value kept as a tree).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match &self.0 {
            Repr::Text(t) => std::borrow::Cow::Borrowed(t),
            Repr::Tree(v) => std::borrow::Cow::Owned(v.to_string()),
        }
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        match &self.0 {
            Repr::Text(t) => &**t == "null",
            Repr::Tree(v) => v.is_null(),
        }
    }

    /// The value as a tree.
    pub fn to_value(&self) -> Value {
        match &self.0 {
            Repr::Text(t) => parse(t),
            Repr::Tree(v) => (**v).clone(),
        }
    }

    /// The value under `key` when this is an object holding it: on text, that field's
    /// text alone is parsed (its place found by a scan of the object's top level).
    pub fn get(&self, key: &str) -> Option<Value> {
        match &self.0 {
            Repr::Tree(v) => v.get(key).cloned(),
            Repr::Text(t) if t.starts_with('{') => match top_level_field(t, key) {
                Ok(field) => field.map(parse),
                // Nested deeper than the scan reads: the whole tree.
                Err(()) => match parse(t) {
                    Value::Object(mut m) => m.remove(key),
                    _ => None,
                },
            },
            Repr::Text(_) => None,
        }
    }
}

/// The text of the top-level field `key` of `text`, a normal-form object (`__proto__`
/// keys allowed): `Ok(None)` when it has no such field, `Err` when it nests deeper than
/// the scan reads ([`NORMAL_SCAN_DEPTH_MAX`]; read its tree instead).
fn top_level_field<'t>(text: &'t str, key: &str) -> Result<Option<&'t str>, ()> {
    let b = text.as_bytes();
    let mut found = None;
    let mut at = 0;
    let scanned = object_fields(b, &mut at, 1, Proto::Allowed, &mut |k, v| {
        // Keys are unique in normal form, and compare as their bytes.
        if found.is_none() && &b[k] == key.as_bytes() {
            found = Some(v);
        }
    });
    if !scanned {
        return Err(());
    }
    // Every field begins and ends at an ASCII byte, so it is a slice of the text.
    Ok(found.and_then(|v| text.get(v)))
}

/// Normal-form text back into its tree.
fn parse(text: &str) -> Value {
    let mut de = serde_json::Deserializer::from_str(text);
    // The text came from a `Value` (or passed the scan), so it parses; a value built in
    // memory may nest deeper than the parser's default limit of 128.
    de.disable_recursion_limit();
    Value::deserialize(&mut de).unwrap_or(Value::Null)
}

impl From<Value> for Json {
    fn from(value: Value) -> Json {
        Json::tree(value)
    }
}

impl From<&Value> for Json {
    fn from(value: &Value) -> Json {
        Json::tree(value.clone())
    }
}

impl PartialEq for Json {
    /// Equal as the values they stand for. Normal form makes two texts of one value the
    /// same text, except that `0.0` and `-0.0` are equal numbers with different text, so
    /// two texts that differ and both may hold a float are compared as trees.
    fn eq(&self, other: &Json) -> bool {
        match (&self.0, &other.0) {
            (Repr::Tree(a), Repr::Tree(b)) => a == b,
            (Repr::Text(a), Repr::Text(b)) => {
                a == b || (may_hold_float(a) && may_hold_float(b) && parse(a) == parse(b))
            }
            // The tree printed (no allocation per node, where reading the text would
            // build a tree), compared as text the same way.
            (Repr::Tree(a), Repr::Text(b)) | (Repr::Text(b), Repr::Tree(a)) => {
                let printed = a.to_string();
                printed == **b || (may_hold_float(&printed) && may_hold_float(b) && **a == parse(b))
            }
        }
    }
}

impl PartialEq<Value> for Json {
    fn eq(&self, other: &Value) -> bool {
        match &self.0 {
            Repr::Tree(v) => **v == *other,
            Repr::Text(t) => parse(t) == *other,
        }
    }
}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for Json {
    /// As the `Value` it stands for. Text goes as serde_json's raw value: a serde_json
    /// writer copies it as it is (normal text is what the tree prints as), and
    /// `serde_json::to_value` (a snapshot's capture) builds its tree straight from it
    /// instead of from a tree built first to be copied.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Tree(v) => v.serialize(s),
            Repr::Text(t) => match serde_json::from_str::<&serde_json::value::RawValue>(t) {
                Ok(raw) => raw.serialize(s),
                Err(_) => parse(t).serialize(s),
            },
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        Value::deserialize(d).map(Json::tree)
    }
}

/// One JSON value as its compact text in normal form (module docs), `__proto__` keys
/// included: an event's payload ([`crate::EventEnvelope::payload`]).
///
/// The text is what the value is: it is written out as it is (a store's column, a
/// protocol answer), read by the fold in place (the hot kinds' fields are found by one
/// scan, a kept value is a slice of it), and cloned as one allocation. Normal form is
/// what `serde_json` prints a `Value` in, so the bytes are those a payload held as a
/// `Value` printed to, and two texts of one value are one text (up to a floating
/// zero's sign, which [`PartialEq`] handles as `Value` does).
///
/// For code that reads a payload as a tree, `JsonText` dereferences to its `Value`,
/// parsed on first use and kept (as `std::sync::LazyLock` computes its value once):
/// `payload.get("stepId")`, `payload["input"]` and `payload.is_null()` read as they do
/// on a `Value`. The fold never takes that path; it reads the text.
pub struct JsonText {
    text: Box<str>,
    tree: std::sync::OnceLock<Box<Value>>,
}

impl JsonText {
    /// `null`.
    pub fn null() -> JsonText {
        JsonText::from_normal(String::from("null"))
    }

    /// Text already known to be in normal form.
    fn from_normal(text: String) -> JsonText {
        JsonText {
            text: text.into_boxed_str(),
            tree: std::sync::OnceLock::new(),
        }
    }

    /// The value's normal text.
    pub fn from_value(value: &Value) -> JsonText {
        // Printing a `Value` cannot fail: its keys are strings and it holds no
        // non-finite number.
        JsonText::from_normal(serde_json::to_string(value).unwrap_or_else(|_| "null".into()))
    }

    /// Reads one JSON value from `text`: taken as it is when it is already in normal form
    /// (one scan, no tree), else parsed (with `serde_json`'s nesting limit, as the
    /// envelope decoder reads a payload) and printed in normal form. Objects keep the last
    /// of a repeated key, as a `Value` does.
    pub fn parse(text: &str) -> Result<JsonText, serde_json::Error> {
        if let Some(normal) = JsonText::from_normal_text(text) {
            return Ok(normal);
        }
        let value: Value = serde_json::from_str(text)?;
        Ok(JsonText::from_value(&value))
    }

    /// The normal text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The value as a tree: the kept tree's copy when one was parsed, else parsed now
    /// (and not kept).
    pub fn to_value(&self) -> Value {
        match self.tree.get() {
            Some(tree) => (**tree).clone(),
            None => parse(&self.text),
        }
    }

    /// The value as a tree, taking the kept one when there is one.
    pub fn into_value(self) -> Value {
        match self.tree.into_inner() {
            Some(tree) => *tree,
            None => parse(&self.text),
        }
    }

    /// Changes the value through its tree, then keeps the changed value's text: for code
    /// that rewrites a payload (a planted bug, a test's hostile edit, a buggy store).
    pub fn edit<R>(&mut self, f: impl FnOnce(&mut Value) -> R) -> R {
        let mut tree = std::mem::take(self).into_value();
        let out = f(&mut tree);
        *self = JsonText::from(tree);
        out
    }

    /// The tree this text derefs to, parsed on first use.
    pub fn tree(&self) -> &Value {
        self.tree.get_or_init(|| Box::new(parse(&self.text)))
    }

    /// The string under the top-level field `key`, when this is an object holding a
    /// string there, as `self.get(key).and_then(Value::as_str)` reads it: found by a scan
    /// of the text and borrowed from it (a normal-form string holds no escape), so no
    /// tree is built; only an object nested deeper than the scan reads
    /// ([`NORMAL_SCAN_DEPTH_MAX`]) is read through its tree.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        if !self.text.starts_with('{') {
            return None;
        }
        match top_level_field(&self.text, key) {
            Ok(field) => field?.strip_prefix('"')?.strip_suffix('"'),
            Err(()) => self.tree().get(key).and_then(Value::as_str),
        }
    }

    /// `text` as it is, when it is one value in normal form (`__proto__` keys allowed)
    /// no deeper than the scan reads; `None` otherwise.
    pub fn from_normal_text(text: &str) -> Option<JsonText> {
        is_normal_payload(text).then(|| JsonText::from_normal(text.to_owned()))
    }

    /// Text a scan already took as normal (the wire reader's payload): kept without a
    /// second scan, which debug builds (the tests) still make.
    pub(crate) fn from_scanned(text: &str) -> JsonText {
        debug_assert!(is_normal_payload(text), "not in normal form: {text}");
        JsonText::from_normal(text.to_owned())
    }
}

impl Clone for JsonText {
    /// The text alone: a tree parsed from it is not copied (the copy parses its own
    /// when it is read as one).
    fn clone(&self) -> JsonText {
        JsonText {
            text: self.text.clone(),
            tree: std::sync::OnceLock::new(),
        }
    }
}

impl Default for JsonText {
    fn default() -> JsonText {
        JsonText::null()
    }
}

impl std::ops::Deref for JsonText {
    type Target = Value;
    fn deref(&self) -> &Value {
        self.tree()
    }
}

impl From<Value> for JsonText {
    fn from(value: Value) -> JsonText {
        let text = JsonText::from_value(&value);
        // The tree is at hand: keep it, so reading it back costs no parse.
        let _ = text.tree.set(Box::new(value));
        text
    }
}

impl From<&Value> for JsonText {
    fn from(value: &Value) -> JsonText {
        JsonText::from_value(value)
    }
}

impl PartialEq for JsonText {
    /// Equal as the values they stand for (see [`Json`]'s equality: only a floating
    /// zero has two texts).
    fn eq(&self, other: &JsonText) -> bool {
        self.text == other.text
            || (may_hold_float(&self.text)
                && may_hold_float(&other.text)
                && self.tree() == other.tree())
    }
}

impl PartialEq<Value> for JsonText {
    fn eq(&self, other: &Value) -> bool {
        self.tree() == other
    }
}

impl PartialEq<JsonText> for Value {
    fn eq(&self, other: &JsonText) -> bool {
        self == other.tree()
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for JsonText {
    /// As its text, verbatim, to a `serde_json` writer (serde_json's raw value); any
    /// other serializer (`serde_json::to_value` among them) sees the value it stands for.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // `serde_json` lends a raw value only after a syntax pass over it (no tree, no
        // copy); normal text always passes.
        match serde_json::from_str::<&serde_json::value::RawValue>(&self.text) {
            Ok(raw) => raw.serialize(s),
            Err(_) => self.tree().serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<JsonText, D::Error> {
        Value::deserialize(d).map(JsonText::from)
    }
}

/// Whether normal text may hold a float (the only numbers with two normal texts of one
/// value: `0.0` and `-0.0`).
fn may_hold_float(s: &str) -> bool {
    s.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// Whether `text` is exactly one JSON value in normal form, with no `__proto__` key.
pub(crate) fn is_normal(text: &str) -> bool {
    whole(text, Proto::Refused)
}

/// Whether a `__proto__` key fails the scan (a value the state keeps, which the fold
/// has scrubbed) or is read like any other key (an event's payload, which keeps what
/// its writer wrote for the fold to drop and report, FOLD-05).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proto {
    Refused,
    Allowed,
}

/// Whether `text` is exactly one value in normal form, `__proto__` keys allowed (what a
/// payload's text must be, [`JsonText`]).
pub(crate) fn is_normal_payload(text: &str) -> bool {
    whole(text, Proto::Allowed)
}

/// Whether `text` is exactly one normal-form value under `proto`.
fn whole(text: &str, proto: Proto) -> bool {
    let b = text.as_bytes();
    let mut at = 0;
    value(b, &mut at, 0, proto) && at == b.len()
}

fn value(b: &[u8], at: &mut usize, depth: usize, proto: Proto) -> bool {
    match b.get(*at) {
        Some(b'{') => object(b, at, depth + 1, proto),
        Some(b'[') => array(b, at, depth + 1, proto),
        Some(b'"') => string(b, at).is_some(),
        Some(b'-' | b'0'..=b'9') => number(b, at),
        Some(b't') => literal(b, at, b"true"),
        Some(b'f') => literal(b, at, b"false"),
        Some(b'n') => literal(b, at, b"null"),
        _ => false,
    }
}

fn literal(b: &[u8], at: &mut usize, word: &[u8]) -> bool {
    if b[*at..].starts_with(word) {
        *at += word.len();
        true
    } else {
        false
    }
}

/// A string with no escape at all (`serde_json` writes a string without escapes unless
/// it holds a quote, a backslash or a control character, which take the tree path);
/// returns its contents.
fn string<'a>(b: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let start = *at + 1;
    let len = plain_run(&b[start..]);
    if b.get(start + len) != Some(&b'"') {
        return None;
    }
    *at = start + len + 1;
    Some(&b[start..start + len])
}

/// How many bytes of `s` come before its first quote, backslash or control character
/// (all of `s` when none does): eight bytes at a time, since strings are most of a log's
/// bytes. Each test below flags a byte with its high bit; a borrow can flag bytes above a
/// true hit, never below one, so the lowest flag is the first hit.
pub(crate) fn plain_run(s: &[u8]) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x;
    let mut chunks = s.chunks_exact(8);
    let mut done = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let hit = (zero_byte(w ^ (ONES * u64::from(b'"')))
            | zero_byte(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w))
            & HIGH;
        if hit != 0 {
            return done + (hit.trailing_zeros() / 8) as usize;
        }
        done += 8;
    }
    let rest = chunks.remainder();
    done + rest
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .unwrap_or(rest.len())
}

/// A number as `serde_json` prints one it read: an integer as plain digits (no leading
/// zero, no `-0`, within `i64` when negative and `u64` otherwise: outside those it reads
/// an `f64`), any other number as it prints that `f64` (`0.9`, `1.0`, `-0.0`, `1e300`),
/// which is checked by printing it: `1e3` (printed `1000.0`) and `0.90` are not normal.
fn number(b: &[u8], at: &mut usize) -> bool {
    let start = *at;
    let negative = b[start] == b'-';
    let digits_at = start + usize::from(negative);
    let n = b[digits_at..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if n == 0 || (n > 1 && b[digits_at] == b'0') {
        return false;
    }
    let end = digits_at + n;
    if matches!(b.get(end), Some(b'.' | b'e' | b'E')) {
        return float(b, at);
    }
    let fits = match digits_value(&b[digits_at..end]) {
        // Down to `i64::MIN`, whose magnitude is 2^63; `-0` reads as a float.
        Some(m) if negative => m != 0 && m <= 1u64 << 63,
        Some(_) => true,
        None => false,
    };
    *at = end;
    fits
}

/// The value of a run of ASCII digits, `None` past `u64::MAX` (or for an empty run or a
/// byte that is not a digit).
pub(crate) fn digits_value(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &d| {
        if !d.is_ascii_digit() {
            return None;
        }
        acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// A number with a fraction or an exponent, normal when `serde_json` prints the `f64`
/// it reads from the text as that text (the reading is serde_json's own, so the check
/// holds whatever rounding it makes).
fn float(b: &[u8], at: &mut usize) -> bool {
    let start = *at;
    let len = b[start..]
        .iter()
        .take_while(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        .count();
    let Ok(text) = std::str::from_utf8(&b[start..start + len]) else {
        return false;
    };
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Number(_)) if v.as_f64().is_some() && !v.is_i64() && !v.is_u64() => {
            *at = start + len;
            // Printed, not compared as a `Value` (which would compare it with a string).
            let printed = v.to_string();
            printed == text
        }
        _ => false,
    }
}

fn array(b: &[u8], at: &mut usize, depth: usize, proto: Proto) -> bool {
    if depth > NORMAL_SCAN_DEPTH_MAX {
        return false;
    }
    *at += 1;
    if b.get(*at) == Some(&b']') {
        *at += 1;
        return true;
    }
    loop {
        if !value(b, at, depth, proto) {
            return false;
        }
        match b.get(*at) {
            Some(b',') => *at += 1,
            Some(b']') => {
                *at += 1;
                return true;
            }
            _ => return false,
        }
    }
}

fn object(b: &[u8], at: &mut usize, depth: usize, proto: Proto) -> bool {
    object_fields(b, at, depth, proto, &mut |_, _| {})
}

/// One normal-form object at `b[*at]`, the positions of its top-level keys (without
/// their quotes) and values handed to `field` in order as they are scanned (each byte is
/// read once).
fn object_fields(
    b: &[u8],
    at: &mut usize,
    depth: usize,
    proto: Proto,
    field: &mut dyn FnMut(Range<usize>, Range<usize>),
) -> bool {
    if depth > NORMAL_SCAN_DEPTH_MAX {
        return false;
    }
    *at += 1;
    if b.get(*at) == Some(&b'}') {
        *at += 1;
        return true;
    }
    let mut previous: Option<&[u8]> = None;
    loop {
        if b.get(*at) != Some(&b'"') {
            return false;
        }
        let key_at = *at + 1;
        let Some(key) = string(b, at) else {
            return false;
        };
        // Keys in strictly rising byte order: the order of a `Value`'s map, and no key
        // twice (a repeated key in a payload keeps its last value, on the tree path).
        if previous.is_some_and(|p| p >= key)
            || (proto == Proto::Refused && key == crate::fold::PROTO_KEY.as_bytes())
        {
            return false;
        }
        previous = Some(key);
        let key_range = key_at..key_at + key.len();
        if b.get(*at) != Some(&b':') {
            return false;
        }
        *at += 1;
        let value_at = *at;
        if !value(b, at, depth, proto) {
            return false;
        }
        field(key_range, value_at..*at);
        match b.get(*at) {
            Some(b',') => *at += 1,
            Some(b'}') => {
                *at += 1;
                return true;
            }
            _ => return false,
        }
    }
}

/// Scans one normal-form value (module docs) starting at `b[*at]`, moving `at` past it:
/// whether it is one. Text it takes is valid JSON, holds no `__proto__` key and no escape.
pub(crate) fn scan_normal(b: &[u8], at: &mut usize) -> bool {
    value(b, at, 0, Proto::Refused)
}

/// Scans one normal-form object at `b[*at]` like [`scan_normal`], handing the position
/// of each top-level key (without its quotes) and value to `field` as it goes.
pub(crate) fn scan_normal_object(
    b: &[u8],
    at: &mut usize,
    field: &mut dyn FnMut(Range<usize>, Range<usize>),
) -> bool {
    b.get(*at) == Some(&b'{') && object_fields(b, at, 1, Proto::Refused, field)
}

/// Scans a JSON string at `b[*at]` (which must be its opening quote) that holds no
/// escape and no control character, moving `at` past it: its contents.
pub(crate) fn scan_plain_string<'a>(b: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    if b.get(*at) != Some(&b'"') {
        return None;
    }
    string(b, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The word-at-a-time scan finds the first quote, backslash or control character
    /// exactly where a byte-by-byte scan does, at every position and alignment, past
    /// multi-byte UTF-8 and the bytes either side of each stop.
    #[test]
    fn plain_run_stops_where_a_byte_scan_stops() {
        let naive = |s: &[u8]| {
            s.iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                .unwrap_or(s.len())
        };
        let fillers: [&[u8]; 4] = [
            b"abcdefgh",
            "é€😀".as_bytes(),
            b"!#[]~\x7f ",
            b"\x1f\x20\x21\x5b\x5d",
        ];
        for stop in [b'"', b'\\', 0x00, 0x1f, 0x0a, b'!', b'#', 0x20] {
            for filler in fillers {
                for len in 0..40 {
                    for at in 0..=len {
                        let mut s: Vec<u8> = filler.iter().copied().cycle().take(len).collect();
                        if at < len {
                            s[at] = stop;
                        }
                        assert_eq!(plain_run(&s), naive(&s), "{s:?}");
                    }
                }
            }
        }
    }

    /// The digit reader agrees with `str::parse` at the edges of `u64`.
    #[test]
    fn digits_value_is_u64_parse() {
        for d in [
            "0",
            "7",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "",
            "1a",
            "00",
        ] {
            assert_eq!(digits_value(d.as_bytes()), d.parse::<u64>().ok(), "{d}");
        }
    }

    /// Text a `Value` prints is normal, and is taken as it is.
    #[test]
    fn printed_values_are_normal() {
        for v in [
            json!(null),
            json!(true),
            json!(0),
            json!(-7),
            json!(u64::MAX),
            json!(i64::MIN),
            json!("plain é text"),
            json!([]),
            json!({}),
            json!({"a": [1, {"b": null, "c": [true, false]}], "b": "x", "z": {}}),
            json!(0.9),
            json!(1.0),
            json!(-0.0),
            json!(-2.5),
            json!(1e300),
            json!(5e-324),
            json!(0.30000000000000004),
            json!({"name": "router", "propensity": 0.9}),
        ] {
            let text = serde_json::to_string(&v).unwrap();
            let j = Json::from_normal_text(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(j.text(), text);
            assert_eq!(j.to_value(), v);
            assert_eq!(Json::from_value(&v).text(), text);
            assert_eq!(Json::tree(v.clone()).text(), text);
            assert_eq!(Json::tree(v.clone()), j);
        }
    }

    /// Everything that is not normal form, or that holds a `__proto__` key, is refused,
    /// so the caller builds the tree (which sorts, escapes and scrubs it).
    #[test]
    fn text_not_in_normal_form_is_refused() {
        for text in [
            "",
            " 1",
            "1 ",
            "{\"b\":1,\"a\":2}",
            "{\"a\":1,\"a\":2}",
            "{\"a\": 1}",
            "[1, 2]",
            "1e3",
            "1E3",
            "0.90",
            "1.",
            ".5",
            "1.5e",
            "--1.0",
            "1.0.0",
            "-0",
            "01",
            "18446744073709551616",
            "-9223372036854775809",
            "\"a\\nb\"",
            "\"\\u0041\"",
            "{\"__proto__\":1}",
            "[{\"x\":{\"__proto__\":{}}}]",
            "tru",
            "nul",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\"}",
            "[1]]",
            "\"open",
        ] {
            assert!(Json::from_normal_text(text).is_none(), "{text:?} was taken");
        }
        let deep = "[".repeat(NORMAL_SCAN_DEPTH_MAX + 1) + &"]".repeat(NORMAL_SCAN_DEPTH_MAX + 1);
        assert!(Json::from_normal_text(&deep).is_none());
        let ok = "[".repeat(NORMAL_SCAN_DEPTH_MAX) + &"]".repeat(NORMAL_SCAN_DEPTH_MAX);
        assert!(Json::from_normal_text(&ok).is_some());
    }

    /// Equality is the values': a float zero's sign does not count, as in `Value`.
    #[test]
    fn equality_is_the_values() {
        let (pos, neg) = (
            Json::from_value(&json!(0.0)),
            Json::from_value(&json!(-0.0)),
        );
        assert_ne!(pos.text(), neg.text());
        assert_eq!(pos, Json::tree(json!(-0.0)));
        assert_eq!(pos, neg);
        assert_eq!(json!(0.0), json!(-0.0));
        assert_ne!(Json::from_value(&json!(1)), Json::from_value(&json!(1.0)));
        assert_ne!(json!(1), json!(1.0));
        assert_eq!(Json::from_value(&json!({"a": 1})), json!({"a": 1}));
    }

    /// A value nested deeper than the parser's default limit converts back.
    #[test]
    fn deep_values_convert_back() {
        let mut v = json!(1);
        for _ in 0..300 {
            v = json!([v]);
        }
        assert_eq!(Json::from_value(&v).to_value(), v);
        assert_eq!(Json::from_value(&v), Json::tree(v));
    }

    /// A payload's text: normal text is taken as it is, anything else is read and printed
    /// in normal form (keys sorted, last of a repeated key, no whitespace, escapes as
    /// serde_json writes them), `__proto__` keys kept; the bytes are a `Value`'s print.
    #[test]
    fn json_text_is_the_values_normal_print() {
        for (text, normal) in [
            (r#"{"b":1,"a":[1,2.5]}"#, r#"{"a":[1,2.5],"b":1}"#),
            (r#"{ "a" : 1 }"#, r#"{"a":1}"#),
            (r#"{"a":1,"a":2}"#, r#"{"a":2}"#),
            (
                r#"{"__proto__":{"x":1},"b":"\u0041"}"#,
                r#"{"__proto__":{"x":1},"b":"A"}"#,
            ),
            ("1e3", "1000.0"),
            ("-0.0", "-0.0"),
            ("\"tab\\there\"", "\"tab\\there\""),
            ("null", "null"),
        ] {
            let t = JsonText::parse(text).unwrap();
            assert_eq!(t.as_str(), normal, "{text}");
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(t.as_str(), value.to_string(), "{text}");
            assert_eq!(t, value);
            assert_eq!(JsonText::from_value(&value).as_str(), normal);
            assert_eq!(JsonText::from(value.clone()).as_str(), normal);
            assert_eq!(t.to_value(), value);
            assert_eq!(t.clone().into_value(), value);
            // The text is what a serde_json writer prints for it, verbatim, and a
            // `Value` serializer sees the value.
            assert_eq!(serde_json::to_string(&t).unwrap(), normal);
            assert_eq!(serde_json::to_value(&t).unwrap(), value);
            // Normal text is taken as it is, and nothing else is; the scan leaves text
            // with an escape to the tree, which prints it alike.
            assert_eq!(
                JsonText::from_normal_text(text).is_some(),
                text == normal && !text.contains('\\'),
                "{text}"
            );
        }
        assert!(JsonText::parse("{").is_err());
        assert!(JsonText::parse("1 2").is_err());
    }

    /// A string field is read from the text as `get(key).and_then(as_str)` reads it,
    /// at any depth the scan reads and past it (through the tree).
    #[test]
    fn json_text_str_field_is_get_as_str() {
        let mut deep = json!("x");
        for _ in 0..(NORMAL_SCAN_DEPTH_MAX + 3) {
            deep = json!([deep]);
        }
        for value in [
            json!({"stepId": "s", "n": 1}),
            json!({"stepId": 7}),
            json!({"stepId": null}),
            json!({"other": "s"}),
            json!({"a": {"stepId": "inner"}}),
            json!({"stepId": "é\"q"}),
            json!({"deep": deep, "stepId": "past the scan"}),
            json!(["stepId"]),
            json!("stepId"),
        ] {
            let t = JsonText::from_value(&value);
            assert_eq!(
                t.str_field("stepId"),
                value.get("stepId").and_then(Value::as_str),
                "{value}"
            );
        }
    }

    /// Equality is the values': the text compares, and only a floating zero has two texts.
    #[test]
    fn json_text_equality_is_the_values() {
        let (pos, neg) = (
            JsonText::parse("0.0").unwrap(),
            JsonText::parse("-0.0").unwrap(),
        );
        assert_ne!(pos.as_str(), neg.as_str());
        assert_eq!(pos, neg);
        assert_ne!(
            JsonText::parse("1").unwrap(),
            JsonText::parse("1.0").unwrap()
        );
        assert_eq!(
            JsonText::parse(r#"{"a":[0.0]}"#).unwrap(),
            JsonText::parse(r#"{"a":[-0.0]}"#).unwrap()
        );
        assert_ne!(
            JsonText::parse(r#"{"a":1}"#).unwrap(),
            JsonText::parse(r#"{"a":2}"#).unwrap()
        );
    }

    /// The tree a text derefs to is parsed once and kept; a clone keeps the text alone;
    /// an edit rewrites the text.
    #[test]
    fn json_text_tree_and_edit() {
        let mut t = JsonText::parse(r#"{"k":1,"z":[true]}"#).unwrap();
        assert!(t.tree.get().is_none());
        assert_eq!(t["k"], 1);
        assert!(t.tree.get().is_some());
        let copy = t.clone();
        assert!(copy.tree.get().is_none());
        assert_eq!(copy, t);
        t.edit(|v| v["k"] = json!({"b": 2, "a": 1}));
        assert_eq!(t.as_str(), r#"{"k":{"a":1,"b":2},"z":[true]}"#);
        assert_eq!(t["k"]["b"], 2);
        assert_ne!(copy, t);
    }
}
