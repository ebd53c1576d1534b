//! Running one command on one session channel and reading it to the end.
//!
//! We read until the channel closes, not until the exit status arrives: OpenSSH may send the
//! status before the last output, and stopping early would lose it.

use std::time::Duration;

use russh::client::Msg;
use russh::{Channel, ChannelMsg, ChannelWriteHalf, Sig};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::SshError;
use crate::target::{CommandOutput, CommandSpec, OutputStream};

/// How a finished command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitReport {
    /// `None` when the command was killed by a signal (see `signal`) or the server sent no status.
    pub status: Option<u32>,
    pub signal: Option<String>,
}

/// The text the remote shell runs: the script itself, or `bash -lc 'script'` when the login
/// profile must run first (conda and CUDA paths on GPU images are set there).
pub fn remote_command_line(spec: &CommandSpec) -> String {
    if spec.login_shell {
        crate::shell::join(["bash", "-lc", spec.script.as_str()])
    } else {
        spec.script.clone()
    }
}

/// Closes the channel when the command's future is dropped before the command ended (a stopped
/// Verify run, a closed dashboard): russh does not close a split channel on drop, so without
/// this the remote process (a looping `nvidia-smi`) would run on, holding one of sshd's sessions.
struct CloseOnDrop(Option<ChannelWriteHalf<Msg>>);

impl CloseOnDrop {
    fn writer(&self) -> &ChannelWriteHalf<Msg> {
        self.0.as_ref().expect("held until disarmed")
    }

    /// The command ended by itself: nothing to close.
    fn disarm(mut self) -> ChannelWriteHalf<Msg> {
        self.0.take().expect("held until disarmed")
    }
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if let Some(writer) = self.0.take() {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    // OpenSSH delivers the signal; closing makes sshd hang up the process's
                    // pipes either way.
                    let _ = writer.signal(Sig::KILL).await;
                    let _ = writer.close().await;
                });
            }
        }
    }
}

/// Run `command` on `channel`, feeding `stdin` (if any) and passing output to `sink` as it comes.
pub(crate) async fn run_on_channel(
    channel: Channel<Msg>,
    host: &str,
    command: &str,
    stdin: Option<Box<dyn AsyncRead + Send + Unpin>>,
    timeout: Duration,
    sink: &mut (dyn FnMut(OutputStream, &[u8]) + Send),
) -> Result<ExitReport, SshError> {
    let channel_error = |err: russh::Error| SshError::Channel {
        host: host.to_owned(),
        message: err.to_string(),
    };
    channel
        .exec(true, command.as_bytes())
        .await
        .map_err(channel_error)?;
    let (mut reader, writer) = channel.split();
    let guard = CloseOnDrop(Some(writer));
    let writer = guard.writer();
    let feeder = async {
        match stdin {
            Some(mut input) => {
                let mut buf = vec![0u8; 32 * 1024];
                loop {
                    match input.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if writer.data_bytes(buf[..n].to_vec()).await.is_err() {
                                break;
                            }
                        }
                    }
                }
                let _ = writer.eof().await;
            }
            None => {
                // Nothing to send: say so, so commands that read stdin do not wait forever.
                let _ = writer.eof().await;
            }
        }
    };
    let read_all = async {
        let mut report = ExitReport {
            status: None,
            signal: None,
        };
        let mut accepted = false;
        while let Some(message) = reader.wait().await {
            match message {
                ChannelMsg::Data { data } => sink(OutputStream::Stdout, &data),
                ChannelMsg::ExtendedData { data, ext: 1 } => sink(OutputStream::Stderr, &data),
                ChannelMsg::ExitStatus { exit_status } => report.status = Some(exit_status),
                ChannelMsg::ExitSignal { signal_name, .. } => {
                    report.signal = Some(format!("{signal_name:?}"));
                }
                ChannelMsg::Success => accepted = true,
                ChannelMsg::Failure if !accepted => {
                    return Err(SshError::Channel {
                        host: host.to_owned(),
                        message: "the server refused to run the command".to_owned(),
                    });
                }
                _ => {}
            }
        }
        Ok(report)
    };
    let outcome = tokio::time::timeout(timeout, async {
        tokio::pin!(read_all, feeder);
        let mut feeding = true;
        loop {
            tokio::select! {
                report = &mut read_all => break report,
                () = &mut feeder, if feeding => feeding = false,
            }
        }
    })
    .await;
    match outcome {
        Ok(report) => {
            guard.disarm();
            report
        }
        Err(_) => {
            // Best effort: OpenSSH honours signal requests; closing the channel hangs up anyway.
            let writer = guard.disarm();
            let _ = writer.signal(Sig::KILL).await;
            let _ = writer.close().await;
            Err(SshError::CommandTimeout(timeout))
        }
    }
}

/// Run `command` on `channel` with empty stdin and collect its output until stdout ends with
/// `end` (or the channel closes). For scripts that announce their own end, and so need neither
/// the server's reply to the exec request nor the exit status: each is a small TCP segment that
/// sshd (Nagle on, without a terminal) holds back until the previous one is acknowledged, which
/// costs a round trip plus the delayed ACK. More than `cap` bytes on either stream ends the
/// command: the output is one frame to be split, so a cut one would be read wrongly.
pub(crate) async fn collect_until(
    channel: Channel<Msg>,
    host: &str,
    command: &str,
    timeout: Duration,
    cap: usize,
    end: &[u8],
) -> Result<CommandOutput, SshError> {
    let channel_error = |err: russh::Error| SshError::Channel {
        host: host.to_owned(),
        message: err.to_string(),
    };
    channel
        .exec(false, command.as_bytes())
        .await
        .map_err(channel_error)?;
    let (mut reader, writer) = channel.split();
    let _ = writer.eof().await;
    let read = async {
        let mut output = CommandOutput::default();
        while let Some(message) = reader.wait().await {
            match message {
                ChannelMsg::Data { data } => {
                    if output.stdout.len() + data.len() > cap {
                        return Err(SshError::OutputTooLarge { limit: cap });
                    }
                    output.stdout.extend_from_slice(&data);
                    if output.stdout.ends_with(end) {
                        break;
                    }
                }
                ChannelMsg::ExtendedData { data, ext: 1 } => {
                    if output.stderr.len() + data.len() > cap {
                        return Err(SshError::OutputTooLarge { limit: cap });
                    }
                    output.stderr.extend_from_slice(&data);
                }
                ChannelMsg::ExitStatus { exit_status } => output.exit_status = Some(exit_status),
                _ => {}
            }
        }
        Ok(output)
    };
    let outcome = tokio::time::timeout(timeout, read).await;
    if !matches!(outcome, Ok(Ok(_))) {
        let _ = writer.signal(Sig::KILL).await;
    }
    // Done either way; the exit status and close still on their way are not needed.
    let _ = writer.close().await;
    outcome.map_err(|_| SshError::CommandTimeout(timeout))?
}
