//! Many commands in one exec channel, running side by side on the instance.
//!
//! OpenSSH refuses more than `MaxSessions` channels per connection, and every channel pays for a
//! shell start (plus the rc files: conda init on GPU images). When more commands are asked for
//! at once than channels are free, they go into one channel whose script starts each command in
//! the background, keeps its stdout, stderr and exit status in a private temporary folder, waits
//! for all of them and then prints them one after another between marker lines, in one write:
//! sshd leaves Nagle's algorithm on for sessions without a terminal, so output dribbled out in
//! small writes waits a round trip (plus the client's delayed ACK) between pieces. A random nonce
//! in the markers means no output (nor anything an rc file prints first) can be mistaken for one;
//! outputs are taken byte for byte, so binary output survives.

use std::time::Duration;

use crate::shell;
use crate::target::{CommandOutput, CommandSpec};

use super::SshError;

/// Extra time the channel gets over the longest command limit, for the script's own work.
const SCRIPT_GRACE: Duration = Duration::from_secs(5);
/// Written as a command's status when its own time limit ended it.
const TIMED_OUT: &str = "timeout";
/// Room for the marker lines framing one command's output.
const FRAME_BYTES: usize = 1024;

/// One fan-out channel's script and how to read its output back.
pub(crate) struct FanOut<'a> {
    specs: Vec<&'a CommandSpec>,
    nonce: String,
}

impl<'a> FanOut<'a> {
    pub(crate) fn new(specs: Vec<&'a CommandSpec>) -> Self {
        let mut bytes = [0u8; 16];
        // Without randomness the nonce is only a little weaker; the markers stay unusual.
        if getrandom::fill(&mut bytes).is_err() {
            let nanos = crate::clock::Clock::now(&crate::clock::SystemClock)
                .timestamp_nanos_opt()
                .unwrap_or_default();
            bytes.copy_from_slice(&i128::from(nanos).to_le_bytes());
        }
        Self {
            specs,
            nonce: hex::encode(bytes),
        }
    }

    fn marker(&self) -> String {
        format!("@@leasehold-fanout-{}", self.nonce)
    }

    /// The last line of a complete fan-out output.
    pub(crate) fn end_line(&self) -> Vec<u8> {
        format!("\n{}-end\n", self.marker()).into_bytes()
    }

    /// The command for the exec channel: the fan-out script under `sh -c`, so it is read by a
    /// POSIX shell whatever the login shell is. Each command itself runs the way a channel of its
    /// own would run it: `$SHELL -c` (or `bash -lc` for a login shell), stdin empty. Every frame
    /// piece is a file written by a shell builtin and one `cat` prints them all, so small outputs
    /// leave in a single write and no process is started per frame.
    pub(crate) fn command(&self) -> CommandSpec {
        let marker = self.marker();
        let count = self.specs.len();
        let mut script = format!(
            "d=\"${{TMPDIR:-/tmp}}/leasehold-fanout-{nonce}\"\n\
             mkdir -m 700 \"$d\" || exit 125\n\
             trap 'rm -rf \"$d\"' EXIT\n\
             trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM\n\
             t=; if command -v timeout >/dev/null 2>&1; then t=timeout; fi\n\
             printf '\\n{marker}-begin\\n' >\"$d/begin\"\n\
             printf '\\n{marker}-stderr\\n' >\"$d/sep\"\n\
             printf '\\n{marker}-end\\n' >\"$d/end\"\n\
             i=0\n\
             while [ \"$i\" -lt {count} ]; do\n\
             \x20 printf '\\n{marker}-status %s -\\n' \"$i\" >\"$d/$i.s\"; : >\"$d/$i.o\"; : >\"$d/$i.e\"\n\
             \x20 i=$((i + 1))\n\
             done\n\
             run() {{\n\
             \x20 i=$1; limit=$2; shift 2\n\
             \x20 if [ -n \"$t\" ]; then timeout -k 5 \"$limit\" \"$@\"; else \"$@\"; fi \
             </dev/null >\"$d/$i.o\" 2>\"$d/$i.e\"\n\
             \x20 s=$?; if [ -n \"$t\" ] && [ \"$s\" = 124 ]; then s={TIMED_OUT}; fi\n\
             \x20 printf '\\n{marker}-status %s %s\\n' \"$i\" \"$s\" >\"$d/$i.s\"\n\
             }}\n",
            nonce = self.nonce,
        );
        for (index, spec) in self.specs.iter().enumerate() {
            let limit = spec.timeout.as_secs().max(1);
            let invocation = if spec.login_shell {
                shell::join(["bash", "-lc", spec.script.as_str()])
            } else {
                format!("\"${{SHELL:-/bin/sh}}\" -c {}", shell::quote(&spec.script))
            };
            script.push_str(&format!("run {index} {limit} {invocation} &\n"));
        }
        script.push_str("wait\ncat \"$d/begin\"");
        for index in 0..count {
            script.push_str(&format!(
                " \"$d/{index}.o\" \"$d/sep\" \"$d/{index}.e\" \"$d/{index}.s\""
            ));
        }
        script.push_str(" \"$d/end\"\n");
        let longest = self
            .specs
            .iter()
            .map(|spec| spec.timeout)
            .max()
            .unwrap_or_default();
        // Every command's own cap, plus the frame lines around each.
        let cap = self
            .specs
            .iter()
            .map(|spec| spec.output_cap.saturating_add(FRAME_BYTES))
            .fold(FRAME_BYTES, usize::saturating_add);
        CommandSpec::new(shell::join(["sh", "-c", script.as_str()]))
            .timeout(longest + SCRIPT_GRACE)
            .output_cap(cap)
    }

    /// Each command's result, in the order given. A command the script could not report (the
    /// channel ended early) is an error of its own, as is one its time limit ended.
    pub(crate) fn split(
        &self,
        output: &CommandOutput,
        host: &str,
    ) -> Vec<Result<CommandOutput, SshError>> {
        let marker = format!("\n{}", self.marker());
        let begin = format!("{marker}-begin\n");
        let stderr_marker = format!("{marker}-stderr\n");
        let status_marker = format!("{marker}-status ");
        let bytes = output.stdout.as_slice();
        let mut results = Vec::with_capacity(self.specs.len());
        let mut at = find(bytes, begin.as_bytes(), 0).map(|start| start + begin.len());
        for (index, spec) in self.specs.iter().enumerate() {
            let Some(frame) =
                at.and_then(|from| read_frame(bytes, from, &stderr_marker, &status_marker))
            else {
                break;
            };
            at = Some(frame.next);
            results.push(if frame.index != Some(index) {
                Err(unreported(host, "the batched output is out of order"))
            } else if frame.status == TIMED_OUT {
                Err(SshError::CommandTimeout(spec.timeout))
            } else if frame.status == "-" {
                Err(unreported(host, "the command did not finish"))
            } else {
                Ok(CommandOutput {
                    stdout: frame.stdout.to_vec(),
                    stderr: frame.stderr.to_vec(),
                    exit_status: frame.status.parse().ok(),
                })
            });
        }
        while results.len() < self.specs.len() {
            let why = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            results.push(Err(unreported(
                host,
                &format!("the batched commands ended before reporting this one: {why}"),
            )));
        }
        results
    }
}

/// One command's piece of the output: stdout, stderr, and its status line.
struct Frame<'b> {
    stdout: &'b [u8],
    stderr: &'b [u8],
    index: Option<usize>,
    status: String,
    next: usize,
}

fn read_frame<'b>(
    bytes: &'b [u8],
    from: usize,
    stderr_marker: &str,
    status_marker: &str,
) -> Option<Frame<'b>> {
    let stderr_at = find(bytes, stderr_marker.as_bytes(), from)?;
    let stderr_from = stderr_at + stderr_marker.len();
    let status_at = find(bytes, status_marker.as_bytes(), stderr_from)?;
    let line_from = status_at + status_marker.len();
    let line_end = find(bytes, b"\n", line_from)?;
    let line = String::from_utf8_lossy(&bytes[line_from..line_end]);
    let mut words = line.split(' ');
    let index = words.next().and_then(|word| word.parse().ok());
    let status = words.next().unwrap_or_default().trim().to_owned();
    Some(Frame {
        stdout: &bytes[from..stderr_at],
        stderr: &bytes[stderr_from..status_at],
        index,
        status,
        next: line_end + 1,
    })
}

fn unreported(host: &str, why: &str) -> SshError {
    SshError::Channel {
        host: host.to_owned(),
        message: why.to_owned(),
    }
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|position| position + from)
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    /// Run a fan-out script with the local `sh`, as the remote login shell would.
    fn run_locally(fan: &FanOut<'_>) -> CommandOutput {
        let spec = fan.command();
        let out = Command::new("sh")
            .arg("-c")
            .arg(&spec.script)
            .env("SHELL", "/bin/sh")
            .output()
            .expect("sh runs");
        CommandOutput {
            stdout: out.stdout,
            stderr: out.stderr,
            exit_status: out.status.code().and_then(|c| u32::try_from(c).ok()),
        }
    }

    #[test]
    fn every_command_keeps_its_own_output_and_exit_status() {
        let specs = [
            CommandSpec::new("echo one; echo oops >&2; exit 3"),
            CommandSpec::new("printf 'no newline'"),
            CommandSpec::new("printf 'two\\n\\n'"),
            CommandSpec::new("true"),
        ];
        let fan = FanOut::new(specs.iter().collect());
        let results = fan.split(&run_locally(&fan), "local");
        let got: Vec<_> = results
            .into_iter()
            .map(|r| {
                let out = r.expect("each command reported");
                (out.stdout_text(), out.stderr_text(), out.exit_status)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("one\n".into(), "oops\n".into(), Some(3)),
                ("no newline".into(), String::new(), Some(0)),
                ("two\n\n".into(), String::new(), Some(0)),
                (String::new(), String::new(), Some(0)),
            ]
        );
    }

    /// Each command waits until every other one has started: only side-by-side runs finish.
    fn rendezvous(dir: &std::path::Path, count: usize) -> Vec<CommandSpec> {
        let dir = shell::quote(dir.to_str().expect("utf-8 temp path")).into_owned();
        (0..count)
            .map(|i| {
                CommandSpec::new(format!(
                    "touch {dir}/{i}; while [ \"$(ls {dir} | wc -l)\" -lt {count} ]; do sleep 0.05; done; echo met-{i}"
                ))
                .timeout(Duration::from_secs(20))
            })
            .collect()
    }

    #[test]
    fn commands_run_side_by_side_not_one_after_another() {
        let dir = tempfile::tempdir().expect("temp dir");
        let specs = rendezvous(dir.path(), 6);
        let fan = FanOut::new(specs.iter().collect());
        for (i, result) in fan
            .split(&run_locally(&fan), "local")
            .into_iter()
            .enumerate()
        {
            assert_eq!(
                result.expect("met the others").stdout_text(),
                format!("met-{i}\n")
            );
        }
    }

    #[test]
    fn markers_in_the_output_and_binary_bytes_do_not_confuse_the_split() {
        let specs = [
            CommandSpec::new("printf '\\n@@leasehold-fanout-x-stderr\\n\\000\\377'"),
            CommandSpec::new("printf 'after'"),
        ];
        let fan = FanOut::new(specs.iter().collect());
        let results = fan.split(&run_locally(&fan), "local");
        let first = results[0].as_ref().expect("reported");
        assert_eq!(first.stdout, b"\n@@leasehold-fanout-x-stderr\n\0\xff");
        assert_eq!(results[1].as_ref().expect("reported").stdout, b"after");
    }

    #[test]
    fn hostile_strings_reach_each_command_as_literal_data() {
        let hostile = [
            "'; rm -rf ~ #",
            "$(reboot)",
            "`id`",
            "a\nb",
            "名字 with spaces",
        ];
        let specs: Vec<_> = hostile
            .iter()
            .map(|value| CommandSpec::new(shell::join(["printf", "%s", value])))
            .collect();
        let fan = FanOut::new(specs.iter().collect());
        let results = fan.split(&run_locally(&fan), "local");
        for (value, result) in hostile.iter().zip(results) {
            assert_eq!(result.expect("reported").stdout_text(), *value);
        }
    }

    #[test]
    fn a_command_past_its_own_limit_is_a_timeout_and_the_others_still_report() {
        let specs = [
            CommandSpec::new("sleep 5").timeout(Duration::from_secs(1)),
            CommandSpec::new("echo quick"),
        ];
        let fan = FanOut::new(specs.iter().collect());
        let results = fan.split(&run_locally(&fan), "local");
        assert!(
            matches!(results[0], Err(SshError::CommandTimeout(limit)) if limit == Duration::from_secs(1))
        );
        assert_eq!(
            results[1].as_ref().expect("reported").stdout_text(),
            "quick\n"
        );
    }

    #[test]
    fn output_cut_short_reports_the_missing_commands_as_errors() {
        let specs = [CommandSpec::new("true"), CommandSpec::new("true")];
        let fan = FanOut::new(specs.iter().collect());
        let mut out = run_locally(&fan);
        let second = find(
            &out.stdout,
            format!("\n{}-status 1 ", fan.marker()).as_bytes(),
            0,
        )
        .expect("second status");
        out.stdout.truncate(second);
        let results = fan.split(&out, "h");
        assert!(results[0].is_ok());
        assert!(matches!(results[1], Err(SshError::Channel { .. })));
    }

    #[test]
    fn rc_file_noise_before_the_first_marker_is_ignored() {
        let specs = [CommandSpec::new("echo hi")];
        let fan = FanOut::new(specs.iter().collect());
        let mut out = run_locally(&fan);
        let mut noisy = b"Welcome to the GPU image\n(base) ".to_vec();
        noisy.extend_from_slice(&out.stdout);
        out.stdout = noisy;
        assert_eq!(
            fan.split(&out, "h")[0]
                .as_ref()
                .expect("reported")
                .stdout_text(),
            "hi\n"
        );
    }
}
