//! Text for people: what a message echoes of its input, and words a shell reads back.

use std::borrow::Cow;

/// `s` safe to print on a terminal when it came from elsewhere (a far end, a file): every
/// control character (C0, DEL, C1) and every bidirectional override is written as an escape
/// (`\x1b`, `\n`, `\u{202e}`), so that nothing it holds moves the cursor, changes colours,
/// reorders the line or starts a line that looks like ours. Plain text comes back unchanged.
pub fn printable(s: &str) -> Cow<'_, str> {
    fn unsafe_char(c: char) -> bool {
        c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && unsafe_char(c) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

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
    fn printable_escapes_what_a_terminal_would_act_on() {
        assert_eq!(printable("far-host.example"), "far-host.example");
        assert!(matches!(printable("plain é"), Cow::Borrowed(_)));
        assert_eq!(
            printable("x\x1b[2J\rResult: OK\n"),
            "x\\x1b[2J\\rResult: OK\\n"
        );
        assert_eq!(
            printable("a\u{9b}31m\u{202e}b\x7f"),
            "a\\u{9b}31m\\u{202e}b\\x7f"
        );
        // Whatever it is given, nothing printed is a control character.
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(!printable(&all).chars().any(char::is_control));
    }

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
