//! Command lines that reports and messages print for a user to paste into a POSIX
//! shell: every argument one shell word, quoted only when it needs to be.

/// Bytes that never need quoting in a shell word.
const PLAIN_BYTES: &[u8] = b"-_./:=@%+,";

/// `text` as one shell word (single-quoted when it needs quoting).
pub fn word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || PLAIN_BYTES.contains(&b));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `args` as one pasteable command line.
pub fn command(args: impl IntoIterator<Item = String>) -> String {
    args.into_iter()
        .map(|a| word(&a))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text, quoted and given to `sh`, comes back unchanged.
    #[test]
    fn quoting_survives_the_shell() {
        for text in [
            "plain",
            "cmd:python3 a.py --db /tmp/x.db",
            "it's",
            "",
            "$HOME `x`",
            "a\nb",
        ] {
            let o = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", word(text)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&o.stdout), text);
        }
    }

    #[test]
    fn a_command_line_joins_its_words() {
        let args = ["loom", "sim", "--store", "cmd:python3 a.py"].map(String::from);
        assert_eq!(command(args), "loom sim --store 'cmd:python3 a.py'");
    }
}
