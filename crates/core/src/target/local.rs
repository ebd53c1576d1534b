use futures::FutureExt;
use tokio::process::Command;

use super::{CommandOutput, CommandSpec, Target, TargetError};

/// This computer, through `sh -c` (or `bash -lc` for login-shell commands).
#[derive(Debug, Default, Clone)]
pub struct LocalTarget;

impl Target for LocalTarget {
    fn run<'a>(
        &'a self,
        spec: &'a CommandSpec,
    ) -> futures::future::BoxFuture<'a, Result<CommandOutput, TargetError>> {
        async move {
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
            let output = tokio::time::timeout(spec.timeout, command.output())
                .await
                .map_err(|_| TargetError::Timeout(spec.timeout))?
                .map_err(|err| TargetError::Spawn(err.to_string()))?;
            Ok(CommandOutput {
                stdout: output.stdout,
                stderr: output.stderr,
                exit_status: output.status.code().and_then(|c| u32::try_from(c).ok()),
            })
        }
        .boxed()
    }

    fn describe(&self) -> String {
        "this computer".to_owned()
    }
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
    async fn local_target_enforces_the_timeout() {
        let spec = CommandSpec::new("sleep 5").timeout(Duration::from_millis(100));
        let err = LocalTarget.run(&spec).await.expect_err("must time out");
        assert!(matches!(err, TargetError::Timeout(_)), "got {err:?}");
    }
}
