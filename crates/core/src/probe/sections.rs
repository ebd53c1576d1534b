//! Several cheap commands in one exec channel, their outputs told apart by marker lines.
//!
//! Every exec channel pays for a shell start (and, for login shells, the rc files: ~250 ms on
//! rented images), so related probes share one script. Each part's output is framed by
//! `@@leasehold:begin NAME` / `@@leasehold:end NAME RC` lines; anything the rc files print
//! outside the frames is ignored.

use std::collections::HashMap;

const BEGIN: &str = "@@leasehold:begin ";
const END: &str = "@@leasehold:end ";

/// One named part of a batched script. `script` is shell text whose values were quoted.
pub(crate) struct Part {
    pub name: &'static str,
    pub script: String,
}

impl Part {
    pub fn new(name: &'static str, script: impl Into<String>) -> Self {
        Self {
            name,
            script: script.into(),
        }
    }
}

/// The shell text that runs every part in order (in one shell, so later parts can reuse
/// variables set by earlier ones) and frames its output.
pub(crate) fn script(parts: &[Part]) -> String {
    let mut out = String::new();
    for part in parts {
        out.push_str(&format!(
            "printf '\\n{BEGIN}%s\\n' {name}\n{{\n{body}\n}} 2>&1\nprintf '\\n{END}%s %s\\n' {name} \"$?\"\n",
            name = part.name,
            body = part.script,
        ));
    }
    out
}

/// What one part printed (stdout and stderr together) and its exit status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartOutput {
    pub text: String,
    pub exit: Option<i32>,
}

impl PartOutput {
    pub fn succeeded(&self) -> bool {
        self.exit == Some(0)
    }
}

/// Split a batched script's output back into its parts. Parts that never closed (the command
/// was cut off) keep what they printed, with no exit status.
pub fn split(output: &str) -> HashMap<String, PartOutput> {
    let mut parts = HashMap::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    for line in output.lines() {
        if let Some(name) = line.strip_prefix(BEGIN) {
            if let Some((open, lines)) = current.take() {
                parts.insert(open, finish(&lines, None));
            }
            current = Some((name.trim().to_owned(), Vec::new()));
        } else if let Some(rest) = line.strip_prefix(END) {
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap_or_default();
            let exit = words.next().and_then(|code| code.parse::<i32>().ok());
            match current.take() {
                Some((open, lines)) if open == name => {
                    parts.insert(open, finish(&lines, exit));
                }
                other => current = other,
            }
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line);
        }
    }
    if let Some((open, lines)) = current {
        parts.insert(open, finish(&lines, None));
    }
    parts
}

fn finish(lines: &[&str], exit: Option<i32>) -> PartOutput {
    // The closing printf starts with a newline, which leaves one empty line at the end.
    let mut text = lines.join("\n");
    while text.ends_with('\n') || text.ends_with('\r') {
        text.pop();
    }
    PartOutput { text, exit }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn parts_come_back_with_their_own_output_and_status() {
        use crate::target::{CommandSpec, LocalTarget, Target};
        let parts = [
            Part::new("one", "echo first; echo oops >&2"),
            Part::new("two", "printf 'no newline'; false"),
            Part::new("three", "x=kept"),
            Part::new("four", "echo \"$x\""),
        ];
        let out = LocalTarget
            .run(&CommandSpec::new(script(&parts)))
            .await
            .expect("sh runs");
        let got = split(&out.stdout_text());
        assert_eq!(
            got["one"].text, "first\noops",
            "stderr is folded into the part"
        );
        assert_eq!(got["one"].exit, Some(0));
        assert_eq!(
            got["two"].text, "no newline",
            "a missing newline does not swallow the marker"
        );
        assert_eq!(got["two"].exit, Some(1));
        assert_eq!(got["four"].text, "kept", "parts share one shell");
    }

    #[test]
    fn noise_outside_frames_is_ignored_and_cut_parts_keep_their_text() {
        let text = "motd banner\n@@leasehold:begin a\nhello\n\n@@leasehold:end a 0\nconda says hi\n@@leasehold:begin b\npartial";
        let got = split(text);
        assert_eq!(
            got["a"],
            PartOutput {
                text: "hello".into(),
                exit: Some(0)
            }
        );
        assert_eq!(
            got["b"],
            PartOutput {
                text: "partial".into(),
                exit: None
            }
        );
    }
}
