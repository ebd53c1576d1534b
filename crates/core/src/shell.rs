//! The one place where values become remote shell text.
//!
//! Every argument that reaches a remote (or local) shell goes through [`quote`]; callers never
//! build command lines by concatenating user input. Quoting follows POSIX `sh` rules via `shlex`.
//!
//! [`unix_newlines`] turns the CRLF of a command pasted on Windows into LF.

use std::borrow::Cow;

/// Quote one value so a POSIX shell reads it back as exactly that literal word.
///
/// NUL bytes cannot exist in a shell word; they are dropped rather than failing, because no
/// legitimate path, name or argument contains one.
pub fn quote(value: &str) -> Cow<'_, str> {
    if value.contains('\0') {
        let cleaned: String = value.chars().filter(|c| *c != '\0').collect();
        return Cow::Owned(quote_clean(&cleaned).into_owned());
    }
    quote_clean(value)
}

fn quote_clean(value: &str) -> Cow<'_, str> {
    if value.is_empty() {
        return Cow::Borrowed("''");
    }
    // shlex refuses only NUL, which `quote` removed above.
    shlex::try_quote(value).unwrap_or(Cow::Borrowed("''"))
}

/// Text pasted on Windows ends its lines with CRLF (and old Mac text with a lone CR); a remote
/// bash reads the CR as part of the word (`$'\r': command not found`, a host named `gpu\r`).
/// Every pasted command or script becomes LF-only before it is parsed or sent.
pub fn unix_newlines(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Join a program and its arguments into one shell command line, quoting each word.
pub fn join<I, S>(words: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    words
        .into_iter()
        .map(|word| quote(word.as_ref()).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_windows_line_ends_become_unix_ones() {
        assert_eq!(
            unix_newlines("nvidia-smi\r\nls -l\r\n"),
            "nvidia-smi\nls -l\n"
        );
        assert_eq!(unix_newlines("a\rb"), "a\nb", "a lone CR ends a line too");
        assert!(
            matches!(unix_newlines("plain\nunix"), Cow::Borrowed(_)),
            "LF-only text is passed through untouched"
        );
    }

    fn sh_echo(word: &str) -> String {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {}", quote(word)))
            .output()
            .expect("sh runs");
        String::from_utf8(out.stdout).expect("utf-8 back")
    }

    #[test]
    fn hostile_strings_reach_the_shell_as_literal_data() {
        for hostile in [
            "'; rm -rf ~ #",
            "$(reboot)",
            "`id`",
            "a\nb",
            "空格 和 unicode ✓",
            "",
            "--flag",
            "$HOME",
            "\\",
        ] {
            assert_eq!(
                sh_echo(hostile),
                hostile,
                "quoting must preserve {hostile:?} exactly"
            );
        }
    }

    #[test]
    fn join_quotes_every_word() {
        assert_eq!(join(["ls", "-la", "my dir"]), "ls -la 'my dir'");
    }
}
