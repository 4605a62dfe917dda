//! Text from plugins and input files shown to people: control characters
//! (newlines, escape sequences, bidi overrides) are escaped so a node or
//! plugin name cannot break a table, forge a log line or drive a terminal.

use std::borrow::Cow;

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with control characters written as `\n`, `\r`, `\t` or `\u{1b}`;
/// borrowed when there is nothing to escape.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`printable`] of at most `max` bytes of `s` (cut at a character
/// boundary), saying how much was cut: the work is bounded by `max`
/// whatever the length of `s`.
pub fn printable_truncated(s: &str, max: usize) -> String {
    let cut = truncate(s, max);
    let text = printable(&cut);
    // Escapes may have grown it (up to 8 bytes a character): cap again.
    match truncate(&text, max + max / 2) {
        Cow::Borrowed(b) => b.to_string(),
        Cow::Owned(o) => o,
    }
}

/// At most `max` bytes of `s` (cut at a character boundary), saying how
/// much was cut.
pub fn truncate(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}... ({} more bytes)", &s[..end], s.len() - end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_plain_text_borrowed() {
        assert!(matches!(printable("node-a.zone_1"), Cow::Borrowed(_)));
        assert_eq!(printable("a\nb\x1b[31m\t"), "a\\nb\\u{1b}[31m\\t");
        assert_eq!(printable("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(printable("ünïcode ok"), "ünïcode ok");
    }

    #[test]
    fn truncation_keeps_whole_characters() {
        assert_eq!(truncate("short", 10), "short");
        assert_eq!(truncate("ééé", 3), "é... (4 more bytes)");
        let hostile = "\u{0}".repeat(1 << 20);
        assert!(printable_truncated(&hostile, 4096).len() < 8192);
    }
}
