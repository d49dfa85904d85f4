//! Text for people: what a message echoes of its input, and words a shell reads back.

/// At most `max` characters of `s` for a message that echoes input: a longer text is cut
/// there and followed by `...` and its length.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!("{}... ({} bytes)", &s[..at], s.len()),
    }
}

/// `s` as one word a POSIX shell reads back unchanged: as it is when it holds only
/// characters no shell treats specially, else in single quotes (a `'` inside written `'\''`).
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Words joined by blanks, each with [`shell_word`]: a command line to paste.
pub fn shell_line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| shell_word(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_keeps_a_short_prefix() {
        assert_eq!(clip("short", 80), "short");
        let long = "é".repeat(1000);
        let c = clip(&long, 80);
        assert_eq!(c, format!("{}... (2000 bytes)", "é".repeat(80)));
    }

    #[test]
    fn shell_words_read_back_as_one() {
        assert_eq!(shell_word("--count=10"), "--count=10");
        assert_eq!(
            shell_word("--count=10 --dev eth0 --real"),
            "'--count=10 --dev eth0 --real'"
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("$(x)"), "'$(x)'");
        assert_eq!(shell_line(&["run", "--dst=a b"]), "run '--dst=a b'");
        // What sh makes of them: the same words.
        let words = ["a b", "it's", "$HOME", "*", "x\ny", "--ok=1"];
        let o = std::process::Command::new("sh")
            .args(["-c", &format!("printf '%s\\0' {}", shell_line(&words))])
            .output()
            .unwrap();
        let back: Vec<String> = String::from_utf8(o.stdout)
            .unwrap()
            .split_terminator('\0')
            .map(str::to_string)
            .collect();
        assert_eq!(back, words);
    }
}
