use futures::FutureExt;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::{CommandOutput, CommandSpec, OutputCollector, OutputStream, Target, TargetError};

/// This computer, through `sh -c` (or `bash -lc` for login-shell commands).
#[derive(Debug, Default, Clone)]
pub struct LocalTarget;

impl Target for LocalTarget {
    fn run<'a>(
        &'a self,
        spec: &'a CommandSpec,
    ) -> futures::future::BoxFuture<'a, Result<CommandOutput, TargetError>> {
        async move {
            // Through the streaming path, so output is capped as it arrives (never read whole).
            let mut collector = OutputCollector::new(spec.output_cap);
            let status = {
                let mut sink = |stream: OutputStream, chunk: &[u8]| collector.push(stream, chunk);
                self.run_streaming(spec, &mut sink).await?
            };
            Ok(collector.finish(status))
        }
        .boxed()
    }

    fn run_streaming<'a>(
        &'a self,
        spec: &'a CommandSpec,
        sink: &'a mut (dyn FnMut(OutputStream, &[u8]) + Send),
    ) -> futures::future::BoxFuture<'a, Result<Option<u32>, TargetError>> {
        async move {
            let mut command = shell_command(spec);
            command
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let mut child = command
                .spawn()
                .map_err(|err| TargetError::Spawn(spawn_failure(&err)))?;
            let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take())
            else {
                return Err(TargetError::Spawn(
                    "the output pipes were not opened".into(),
                ));
            };
            let pump = async {
                let mut out_buf = vec![0u8; 64 * 1024];
                let mut err_buf = vec![0u8; 64 * 1024];
                let (mut out_open, mut err_open) = (true, true);
                while out_open || err_open {
                    tokio::select! {
                        read = stdout.read(&mut out_buf), if out_open => match read? {
                            0 => out_open = false,
                            n => sink(OutputStream::Stdout, &out_buf[..n]),
                        },
                        read = stderr.read(&mut err_buf), if err_open => match read? {
                            0 => err_open = false,
                            n => sink(OutputStream::Stderr, &err_buf[..n]),
                        },
                    }
                }
                child.wait().await
            };
            let status = tokio::time::timeout(spec.timeout, pump)
                .await
                .map_err(|_| TargetError::Timeout(spec.timeout))?
                .map_err(|err| TargetError::Spawn(err.to_string()))?;
            Ok(status.code().and_then(|c| u32::try_from(c).ok()))
        }
        .boxed()
    }

    fn describe(&self) -> String {
        "this computer".to_owned()
    }
}

/// Windows has no `sh` unless Git for Windows' `usr\bin` or MSYS2 is on PATH; say so rather than
/// "program not found".
fn spawn_failure(err: &std::io::Error) -> String {
    if cfg!(windows) && err.kind() == std::io::ErrorKind::NotFound {
        "no POSIX shell (sh, bash) on PATH: checking this computer runs shell probes, which on \
         Windows need Git for Windows' usr\\bin or MSYS2 on PATH (`leasehold local-gpu` reads \
         the GPUs without one)"
            .to_owned()
    } else {
        err.to_string()
    }
}

/// `sh -c SCRIPT`, or `bash -lc SCRIPT` when the login profile must set PATH.
fn shell_command(spec: &CommandSpec) -> Command {
    let mut command = if spec.login_shell {
        let mut c = Command::new("bash");
        c.arg("-lc");
        c
    } else {
        let mut c = Command::new("sh");
        c.arg("-c");
        c
    };
    command
        .arg(&spec.script)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    command
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn local_target_collects_stdout_stderr_and_status() {
        let out = LocalTarget
            .run(&CommandSpec::new("echo out; echo err >&2; exit 3"))
            .await
            .expect("sh runs");
        assert_eq!(out.stdout_text(), "out\n");
        assert_eq!(out.stderr_text(), "err\n");
        assert_eq!(
            out.exit_status,
            Some(3),
            "exit status must be passed through"
        );
    }

    #[tokio::test]
    async fn local_streaming_delivers_both_streams_and_the_status() {
        let mut seen: Vec<(OutputStream, Vec<u8>)> = Vec::new();
        let mut sink = |stream: OutputStream, chunk: &[u8]| seen.push((stream, chunk.to_vec()));
        let status = LocalTarget
            .run_streaming(
                &CommandSpec::new("printf a; printf b >&2; exit 4"),
                &mut sink,
            )
            .await
            .expect("sh runs");
        assert_eq!(status, Some(4), "the exit status must be returned");
        let stdout: Vec<u8> = seen
            .iter()
            .filter(|(s, _)| *s == OutputStream::Stdout)
            .flat_map(|(_, c)| c.clone())
            .collect();
        let stderr: Vec<u8> = seen
            .iter()
            .filter(|(s, _)| *s == OutputStream::Stderr)
            .flat_map(|(_, c)| c.clone())
            .collect();
        assert_eq!(
            (stdout.as_slice(), stderr.as_slice()),
            (&b"a"[..], &b"b"[..])
        );
    }

    #[tokio::test]
    async fn collected_output_is_cut_at_the_commands_cap() {
        let spec = CommandSpec::new("head -c 100000 /dev/zero; echo done >&2").output_cap(1000);
        let out = LocalTarget.run(&spec).await.expect("sh runs");
        assert!(
            out.stdout.len() < 1100,
            "only the cap and a marker are kept, got {} bytes",
            out.stdout.len()
        );
        assert!(
            out.stdout_text()
                .ends_with(&crate::target::truncation_marker(1000, 99000)),
            "the marker says how much was cut"
        );
        assert_eq!(out.stderr_text(), "done\n");
        assert_eq!(out.exit_status, Some(0));
    }

    #[tokio::test]
    async fn local_target_enforces_the_timeout() {
        let spec = CommandSpec::new("sleep 5").timeout(Duration::from_millis(100));
        let err = LocalTarget.run(&spec).await.expect_err("must time out");
        assert!(matches!(err, TargetError::Timeout(_)), "got {err:?}");
    }
}
