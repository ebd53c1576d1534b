//! An interactive shell on the instance (the UI's Terminal tab): a PTY channel whose output
//! arrives as raw bytes for xterm.js, with keystrokes and window resizes going the other way.

use russh::client::Msg;
use russh::{ChannelMsg, ChannelReadHalf, ChannelWriteHalf, Pty};
use tokio::sync::OwnedSemaphorePermit;

use super::target::SshTarget;
use super::SshError;

/// What the shell did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PtyEvent {
    /// Terminal output (may contain escape sequences; pass it to the terminal untouched).
    Output(Vec<u8>),
    /// The shell ended with this status (`None`: killed by a signal).
    Exited(Option<u32>),
}

/// An open interactive shell.
pub struct PtySession {
    reader: PtyReader,
    writer: PtyWriter,
}

/// The receiving half, for a task that forwards output to the UI.
pub struct PtyReader {
    read: ChannelReadHalf,
    status: Option<u32>,
    _permit: OwnedSemaphorePermit,
}

/// The sending half: keystrokes, pastes and resizes.
pub struct PtyWriter {
    write: ChannelWriteHalf<Msg>,
    host: String,
}

impl SshTarget {
    /// Start a login shell on a PTY of `cols`×`rows` characters (`term` e.g. `xterm-256color`).
    pub async fn open_pty(&self, term: &str, cols: u32, rows: u32) -> Result<PtySession, SshError> {
        let (channel, permit) = self.session_channel().await?;
        let host = self.destination().host.clone();
        let failed = |err: russh::Error| SshError::Channel {
            host: host.clone(),
            message: format!("cannot start a terminal: {err}"),
        };
        // Echo on and UTF-8 input: what a terminal user expects.
        let modes = [(Pty::ECHO, 1), (Pty::IUTF8, 1)];
        channel
            .request_pty(true, term, cols, rows, 0, 0, &modes)
            .await
            .map_err(failed)?;
        channel.request_shell(true).await.map_err(failed)?;
        let (read, write) = channel.split();
        Ok(PtySession {
            reader: PtyReader {
                read,
                status: None,
                _permit: permit,
            },
            writer: PtyWriter { write, host },
        })
    }
}

impl PtySession {
    pub fn into_parts(self) -> (PtyReader, PtyWriter) {
        (self.reader, self.writer)
    }

    pub async fn next(&mut self) -> Option<PtyEvent> {
        self.reader.next().await
    }

    pub async fn write(&self, bytes: &[u8]) -> Result<(), SshError> {
        self.writer.write(bytes).await
    }

    pub async fn resize(&self, cols: u32, rows: u32) -> Result<(), SshError> {
        self.writer.resize(cols, rows).await
    }
}

impl PtyReader {
    /// The next output or the exit; `None` once the channel is closed.
    pub async fn next(&mut self) -> Option<PtyEvent> {
        loop {
            match self.read.wait().await? {
                ChannelMsg::Data { data } => return Some(PtyEvent::Output(data.to_vec())),
                ChannelMsg::ExtendedData { data, .. } => {
                    return Some(PtyEvent::Output(data.to_vec()));
                }
                ChannelMsg::ExitStatus { exit_status } => self.status = Some(exit_status),
                ChannelMsg::Close => return Some(PtyEvent::Exited(self.status)),
                _ => {}
            }
        }
    }
}

impl PtyWriter {
    pub async fn write(&self, bytes: &[u8]) -> Result<(), SshError> {
        self.write
            .data_bytes(bytes.to_vec())
            .await
            .map_err(|err| self.closed(&err))
    }

    /// Tell the shell the terminal's new size (programs like `top` redraw on it).
    pub async fn resize(&self, cols: u32, rows: u32) -> Result<(), SshError> {
        self.write
            .window_change(cols, rows, 0, 0)
            .await
            .map_err(|err| self.closed(&err))
    }

    pub async fn close(&self) {
        let _ = self.write.eof().await;
        let _ = self.write.close().await;
    }

    fn closed(&self, err: &dyn std::fmt::Display) -> SshError {
        SshError::Disconnected {
            host: self.host.clone(),
            message: format!("the terminal closed: {err}"),
        }
    }
}
