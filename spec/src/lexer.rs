//! Just enough of a Rust and JSON lexer for the evidence scan: it separates code from
//! comments and string literals, so that a rule id in a doc comment, in prose or inside a
//! string that happens to contain Rust source never counts as evidence.

/// A Rust source file with comments and literals blanked out, plus its string literals.
pub(crate) struct RustLexed {
    /// The source with every comment and every char/string literal replaced by spaces
    /// (newlines kept, so line numbers still match).
    pub code: String,
    /// Each string literal's raw contents (escapes not processed) and its 1-based line.
    pub strings: Vec<(usize, String)>,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Blanks `chars[from..to]` into `out`, keeping newlines; returns the newlines seen.
fn blank(out: &mut String, chars: &[char], from: usize, to: usize) -> usize {
    let mut newlines = 0;
    for &c in &chars[from..to.min(chars.len())] {
        if c == '\n' {
            out.push('\n');
            newlines += 1;
        } else {
            out.push(' ');
        }
    }
    newlines
}

/// Lexes Rust source. Never panics: unterminated constructs run to the end of the file.
pub(crate) fn lex_rust(src: &str) -> RustLexed {
    let chars: Vec<char> = src.chars().collect();
    let n = chars.len();
    let mut code = String::with_capacity(src.len());
    let mut strings = Vec::new();
    let mut line = 1usize;
    let mut i = 0usize;
    while i < n {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev_is_ident = i > 0 && is_ident(chars[i - 1]);
        // Line comment (including `///` and `//!` docs).
        if c == '/' && next == Some('/') {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(n, |p| i + p);
            line += blank(&mut code, &chars, i, end);
            i = end;
            continue;
        }
        // Block comment, nested.
        if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            let mut j = i;
            while j < n {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            line += blank(&mut code, &chars, i, j);
            i = j;
            continue;
        }
        // Raw string: r"..", r#".."#, br"..", cr#".."#.
        let raw_start = if prev_is_ident {
            None
        } else if c == 'r' {
            Some(i + 1)
        } else if (c == 'b' || c == 'c') && next == Some('r') {
            Some(i + 2)
        } else {
            None
        };
        if let Some(mut j) = raw_start {
            let mut hashes = 0usize;
            while j < n && chars[j] == '#' {
                hashes += 1;
                j += 1;
            }
            if j < n && chars[j] == '"' {
                let body_start = j + 1;
                let mut k = body_start;
                let mut body_end = n;
                let mut end = n;
                while k < n {
                    if chars[k] == '"'
                        && chars[k + 1..].len() >= hashes
                        && chars[k + 1..k + 1 + hashes].iter().all(|&h| h == '#')
                    {
                        body_end = k;
                        end = k + 1 + hashes;
                        break;
                    }
                    k += 1;
                }
                strings.push((line, chars[body_start..body_end].iter().collect()));
                line += blank(&mut code, &chars, i, end);
                i = end;
                continue;
            }
        }
        // Ordinary string literal (a `b`/`c` prefix stays behind as harmless code).
        if c == '"' {
            let mut k = i + 1;
            while k < n && chars[k] != '"' {
                k += if chars[k] == '\\' { 2 } else { 1 };
            }
            let body_end = k.min(n);
            let end = (k + 1).min(n);
            strings.push((line, chars[i + 1..body_end].iter().collect()));
            line += blank(&mut code, &chars, i, end);
            i = end;
            continue;
        }
        // Char literal or lifetime.
        if c == '\'' {
            if next == Some('\\') {
                let mut k = i + 2;
                while k < n && chars[k] != '\'' && chars[k] != '\n' {
                    k += if chars[k] == '\\' { 2 } else { 1 };
                }
                let end = (k + 1).min(n);
                line += blank(&mut code, &chars, i, end);
                i = end;
                continue;
            }
            if chars.get(i + 2) == Some(&'\'') && next != Some('\n') {
                line += blank(&mut code, &chars, i, i + 3);
                i += 3;
                continue;
            }
        }
        if c == '\n' {
            line += 1;
        }
        code.push(c);
        i += 1;
    }
    RustLexed { code, strings }
}

/// Every JSON string token (keys and values) with its 1-based line. Tolerant: malformed
/// input yields whatever strings could be read.
pub(crate) fn json_strings(src: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = src.chars().collect();
    let n = chars.len();
    let mut out = Vec::new();
    let mut line = 1usize;
    let mut i = 0usize;
    while i < n {
        match chars[i] {
            '\n' => {
                line += 1;
                i += 1;
            }
            '"' => {
                let start_line = line;
                let mut k = i + 1;
                while k < n && chars[k] != '"' {
                    if chars[k] == '\n' {
                        line += 1;
                    }
                    k += if chars[k] == '\\' { 2 } else { 1 };
                }
                out.push((start_line, chars[i + 1..k.min(n)].iter().collect()));
                i = k + 1;
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_strings_are_blanked_but_lines_kept() {
        let src = "/// doc fn a\n// fn b\n/* fn c /* nested */ */ fn d() {}\nlet s = \"fn e\nx\"; let r = r#\"fn \"f\"#; let ch = '{'; fn g<'a>() {}\n";
        let lexed = lex_rust(src);
        assert!(!lexed.code.contains("fn a"));
        assert!(!lexed.code.contains("fn b"));
        assert!(!lexed.code.contains("fn c"));
        assert!(lexed.code.contains("fn d"));
        assert!(!lexed.code.contains("fn e"));
        assert_eq!(lexed.code.matches('{').count(), 2);
        assert!(lexed.code.contains("fn g<'a>"));
        assert_eq!(lexed.code.lines().count(), src.lines().count());
        assert_eq!(lexed.strings[0], (4, "fn e\nx".to_string()));
        assert_eq!(lexed.strings[1], (5, "fn \"f".to_string()));
    }

    #[test]
    fn raw_identifiers_are_not_strings() {
        let lexed = lex_rust("let r#type = 1; let s = \"X\";");
        assert_eq!(lexed.strings, vec![(1, "X".to_string())]);
    }

    #[test]
    fn json_strings_have_lines() {
        let got = json_strings("{\n \"rules\": [\"FOLD-09\",\n \"GAP-\\\"x\"]\n}");
        assert_eq!(got[0], (2, "rules".to_string()));
        assert_eq!(got[1], (2, "FOLD-09".to_string()));
        assert_eq!(got[2], (3, "GAP-\\\"x".to_string()));
    }
}
