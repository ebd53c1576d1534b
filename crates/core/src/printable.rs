//! Text from the instance made safe to print on the user's terminal.
//!
//! A GPU name, a file name, a remote error or a job's log can hold escape sequences that a
//! terminal obeys: retitle the window (OSC 0), clear the screen (`ESC[2J`), rewrite what was
//! printed before, or in some terminals answer back with keystrokes (the CVE-2019-6109 class
//! that scp fixed). Every text output of the CLI goes through here; JSON needs nothing, since
//! serde escapes control characters.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// CSI (`ESC [ … final`), OSC and the other string sequences (up to BEL or `ESC \`), and
/// two-character escapes.
static ESCAPES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -~]?")
        .expect("valid regex")
});

fn keep(c: char, carriage_return: bool) -> bool {
    !c.is_control() || c == '\n' || c == '\t' || (carriage_return && c == '\r')
}

fn clean(text: &str, carriage_return: bool) -> Cow<'_, str> {
    if text.chars().all(|c| keep(c, carriage_return)) {
        return Cow::Borrowed(text);
    }
    let without_sequences = ESCAPES.replace_all(text, "");
    Cow::Owned(
        without_sequences
            .chars()
            .filter(|c| keep(*c, carriage_return))
            .collect(),
    )
}

/// `text` without escape sequences and control characters (newlines and tabs stay).
pub fn printable(text: &str) -> Cow<'_, str> {
    clean(text, false)
}

/// Like [`printable`], but a carriage return stays: a job's log redraws its progress bars
/// with it, which is harmless (it only moves to the start of the line).
pub fn printable_log(text: &str) -> Cow<'_, str> {
    clean(text, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_controls_are_removed_and_plain_text_is_borrowed() {
        assert!(matches!(printable("NVIDIA A100 80GB"), Cow::Borrowed(_)));
        assert_eq!(
            printable("A100\x1b]0;pwned\x07\x1b[2J\x1b[31m red\x1b[0m\x08\x07\u{9b}"),
            "A100 red"
        );
        assert_eq!(printable("title\x1b]0;x\x1b\\ end"), "title end");
        assert_eq!(printable("lines\nand\ttabs"), "lines\nand\ttabs");
        assert_eq!(printable("a\rb"), "ab");
        assert_eq!(printable_log("10%\r20%\x1b[K\n"), "10%\r20%\n");
        assert_eq!(printable("cut \x1b"), "cut ");
    }
}
