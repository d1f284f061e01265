//! JSON comparison helpers: the first differing path, and a pretty-printer
//! that marks the lines of the value at that path (for the HTML page).

use crate::canonical::utf16_cmp;
use serde_json::Value;

/// The RFC 6901 JSON pointer of the first place where `expected` and
/// `actual` differ, or `None` when they are equal. Object keys are visited in
/// sorted order; an array length mismatch points at the first missing or
/// extra index. The empty pointer `""` means the roots differ.
pub fn first_difference(expected: &Value, actual: &Value) -> Option<String> {
    let mut path = String::new();
    if find_difference(expected, actual, &mut path) {
        Some(path)
    } else {
        None
    }
}

/// Escapes one pointer segment (`~` as `~0`, `/` as `~1`).
pub(crate) fn escape_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn find_difference(a: &Value, b: &Value, path: &mut String) -> bool {
    match (a, b) {
        (Value::Object(ma), Value::Object(mb)) => {
            let mut keys: Vec<&String> = ma.keys().chain(mb.keys()).collect();
            keys.sort_by(|x, y| utf16_cmp(x, y));
            keys.dedup();
            for key in keys {
                let len = path.len();
                path.push('/');
                path.push_str(&escape_segment(key));
                match (ma.get(key.as_str()), mb.get(key.as_str())) {
                    (Some(va), Some(vb)) => {
                        if find_difference(va, vb, path) {
                            return true;
                        }
                    }
                    _ => return true,
                }
                path.truncate(len);
            }
            false
        }
        (Value::Array(xa), Value::Array(xb)) => {
            for idx in 0..xa.len().max(xb.len()) {
                let len = path.len();
                path.push('/');
                path.push_str(&idx.to_string());
                match (xa.get(idx), xb.get(idx)) {
                    (Some(va), Some(vb)) => {
                        if find_difference(va, vb, path) {
                            return true;
                        }
                    }
                    _ => return true,
                }
                path.truncate(len);
            }
            false
        }
        _ => a != b,
    }
}

/// One line of pretty-printed JSON.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Line {
    pub text: String,
    /// The line belongs to the value at the highlighted path.
    pub hl: bool,
}

/// Pretty-prints `value` (two-space indent, keys sorted) into lines. When
/// `highlight` names a path that exists, every line of that value is marked;
/// when only an ancestor exists (a missing key or index), the ancestor's
/// first line is marked.
pub(crate) fn pretty_lines(value: &Value, highlight: Option<&str>) -> Vec<Line> {
    let mut printer = Printer {
        lines: Vec::new(),
        current: String::new(),
        target: highlight,
        depth_hl: 0,
    };
    let anchor = highlight.map(|p| deepest_existing(value, p));
    printer.value(value, 0, "", anchor.as_deref());
    printer.lines
}

/// The longest prefix of `pointer` that exists in `value`.
fn deepest_existing(value: &Value, pointer: &str) -> String {
    let mut node = value;
    let mut found = String::new();
    if pointer.is_empty() {
        return found;
    }
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        let next = match node {
            Value::Object(m) => m.get(&seg),
            Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        };
        match next {
            Some(n) => {
                node = n;
                found.push('/');
                found.push_str(raw);
            }
            None => break,
        }
    }
    found
}

struct Printer<'a> {
    lines: Vec<Line>,
    current: String,
    target: Option<&'a str>,
    /// > 0 while printing inside the highlighted value.
    depth_hl: usize,
}

impl Printer<'_> {
    fn push(&mut self, text: String, force_hl: bool) {
        self.lines.push(Line {
            text,
            hl: self.depth_hl > 0 || force_hl,
        });
    }

    fn value(&mut self, value: &Value, indent: usize, prefix: &str, anchor: Option<&str>) {
        let exact = self.target == Some(self.current.as_str());
        // Only an ancestor exists: mark its opening line alone.
        let anchor_only = !exact && anchor == Some(self.current.as_str());
        if exact {
            self.depth_hl += 1;
        }
        let pad = "  ".repeat(indent);
        match value {
            Value::Object(map) if !map.is_empty() => {
                self.push(format!("{pad}{prefix}{{"), anchor_only);
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_by(|a, b| utf16_cmp(a, b));
                let n = keys.len();
                for (idx, key) in keys.into_iter().enumerate() {
                    let len = self.current.len();
                    self.current.push('/');
                    self.current.push_str(&escape_segment(key));
                    let key_json = serde_json::to_string(key).unwrap_or_default();
                    self.value(
                        &map[key.as_str()],
                        indent + 1,
                        &format!("{key_json}: "),
                        anchor,
                    );
                    if idx + 1 < n {
                        if let Some(last) = self.lines.last_mut() {
                            last.text.push(',');
                        }
                    }
                    self.current.truncate(len);
                }
                self.push(format!("{pad}}}"), false);
            }
            Value::Array(items) if !items.is_empty() => {
                self.push(format!("{pad}{prefix}["), anchor_only);
                let n = items.len();
                for (idx, item) in items.iter().enumerate() {
                    let len = self.current.len();
                    self.current.push('/');
                    self.current.push_str(&idx.to_string());
                    self.value(item, indent + 1, "", anchor);
                    if idx + 1 < n {
                        if let Some(last) = self.lines.last_mut() {
                            last.text.push(',');
                        }
                    }
                    self.current.truncate(len);
                }
                self.push(format!("{pad}]"), false);
            }
            scalar => {
                let text = serde_json::to_string(scalar).unwrap_or_default();
                self.push(format!("{pad}{prefix}{text}"), anchor_only);
            }
        }
        if exact {
            self.depth_hl -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_have_no_difference() {
        assert_eq!(
            first_difference(&json!({"a": [1, 2]}), &json!({"a": [1, 2]})),
            None
        );
    }

    #[test]
    fn nested_difference_is_found() {
        let a = json!({"variables": {"_decisions": {"a": {"seq": 1}}}, "z": 1});
        let b = json!({"variables": {"_decisions": {"a": {"seq": 2}}}, "z": 2});
        assert_eq!(
            first_difference(&a, &b).as_deref(),
            Some("/variables/_decisions/a/seq")
        );
    }

    #[test]
    fn missing_key_extra_index_and_root() {
        assert_eq!(
            first_difference(&json!({"a": 1}), &json!({})).as_deref(),
            Some("/a")
        );
        assert_eq!(
            first_difference(&json!([1]), &json!([1, 2])).as_deref(),
            Some("/1")
        );
        assert_eq!(
            first_difference(&json!(1), &json!("1")).as_deref(),
            Some("")
        );
        assert_eq!(
            first_difference(&json!({"a/b~": 1}), &json!({"a/b~": 2})).as_deref(),
            Some("/a~1b~0")
        );
    }

    #[test]
    fn pretty_lines_marks_the_value_at_the_path() {
        let v = json!({"a": {"b": [1, 2]}, "c": 3});
        let lines = pretty_lines(&v, Some("/a/b"));
        let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            text,
            vec![
                "{",
                "  \"a\": {",
                "    \"b\": [",
                "      1,",
                "      2",
                "    ]",
                "  },",
                "  \"c\": 3",
                "}"
            ]
        );
        let hl: Vec<bool> = lines.iter().map(|l| l.hl).collect();
        assert_eq!(
            hl,
            vec![false, false, true, true, true, true, false, false, false]
        );
    }

    #[test]
    fn pretty_lines_marks_the_ancestor_of_a_missing_path() {
        let v = json!({"a": {"x": 1}});
        let lines = pretty_lines(&v, Some("/a/missing"));
        let hl: Vec<bool> = lines.iter().map(|l| l.hl).collect();
        assert_eq!(hl, vec![false, true, false, false, false]);
    }
}
