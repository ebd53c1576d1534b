//! `SshTarget`: one SSH connection to an instance that many commands share at once, and that
//! comes back by itself after the link drops.
//!
//! Channels are limited to [`MAX_CHANNELS`] at a time because OpenSSH refuses more than
//! `MaxSessions` (default 10) per connection; callers simply wait for a free slot.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use russh::client::Msg;
use russh::Channel;
use tokio::io::AsyncRead;
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};

use super::auth::Credentials;
use super::connect::{connect_with_retry, ConnectOptions, Connection};
use super::destination::Destination;
use super::exec::{collect_until, remote_command_line, run_on_channel, ExitReport};
use super::fanout::FanOut;
use super::forward_table::ForwardTable;
use super::redial::redial;
use super::SshError;
use crate::target::{
    CommandOutput, CommandSpec, OutputCollector, OutputStream, Target, TargetError,
};

/// Session channels open at once on one connection; below OpenSSH's default MaxSessions of 10
/// so a PTY or SFTP channel opened by the UI still fits.
pub const MAX_CHANNELS: usize = 8;

/// The link as the UI shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum LinkState {
    Connected,
    /// The link dropped and we are dialling again (attempt counts from 1).
    Reconnecting {
        attempt: u32,
    },
    Disconnected,
}

/// A rented instance reached over SSH.
pub struct SshTarget {
    destination: Destination,
    credentials: Credentials,
    options: ConnectOptions,
    connection: Mutex<Option<Arc<Connection>>>,
    channel_slots: Arc<Semaphore>,
    link: tokio::sync::watch::Sender<LinkState>,
    pub(crate) forwards: ForwardTable,
}

impl std::fmt::Debug for SshTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshTarget")
            .field("destination", &self.destination.label())
            .finish_non_exhaustive()
    }
}

impl SshTarget {
    /// Connect now (so every failure — host key, login, unreachable — surfaces here, before any
    /// command is sent), retrying for `options.boot_wait` while sshd is still starting.
    pub async fn connect(
        destination: Destination,
        credentials: Credentials,
        options: ConnectOptions,
    ) -> Result<Self, SshError> {
        let connection =
            connect_with_retry(&destination, &credentials, &options, options.boot_wait).await?;
        let (link, _) = tokio::sync::watch::channel(LinkState::Connected);
        Ok(Self {
            destination,
            credentials,
            options,
            connection: Mutex::new(Some(Arc::new(connection))),
            channel_slots: Arc::new(Semaphore::new(MAX_CHANNELS)),
            link,
            forwards: ForwardTable::default(),
        })
    }

    pub fn destination(&self) -> &Destination {
        &self.destination
    }

    /// Watch the link state (connected / reconnecting / disconnected).
    pub fn link_state(&self) -> tokio::sync::watch::Receiver<LinkState> {
        self.link.subscribe()
    }

    /// Close the connection; a later command dials again.
    pub async fn disconnect(&self) {
        if let Some(connection) = self.connection.lock().await.take() {
            let _ = connection
                .handle
                .disconnect(russh::Disconnect::ByApplication, "", "en")
                .await;
        }
        self.forwards.close_all();
        self.link.send_replace(LinkState::Disconnected);
    }

    /// The live connection, dialling again if the previous one dropped.
    pub(crate) async fn live_connection(&self) -> Result<Arc<Connection>, SshError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            if !connection.handle.is_closed() {
                return Ok(connection.clone());
            }
        }
        *slot = None;
        self.link
            .send_replace(LinkState::Reconnecting { attempt: 1 });
        tracing::info!(target = %self.destination.label(), "reconnecting");
        match redial(
            &self.destination,
            &self.credentials,
            &self.options,
            self.options.reconnect_window,
        )
        .await
        {
            Ok(connection) => {
                let connection = Arc::new(connection);
                *slot = Some(connection.clone());
                self.link.send_replace(LinkState::Connected);
                Ok(connection)
            }
            Err(err) => {
                self.link.send_replace(LinkState::Disconnected);
                Err(err)
            }
        }
    }

    /// Drop the current connection (if any) so the next operation dials again. Channels still
    /// open on it keep it until they end (if it was only slow they finish normally).
    pub(crate) async fn forget_connection(&self) {
        if self.connection.lock().await.take().is_some() {
            self.link
                .send_replace(LinkState::Reconnecting { attempt: 1 });
        }
    }

    /// Forget a connection that failed under us so the next call dials again.
    async fn drop_connection(&self, dead: &Arc<Connection>) {
        let mut slot = self.connection.lock().await;
        if slot
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, dead))
        {
            *slot = None;
        }
    }

    /// A session channel and the slot it occupies (released when the permit drops). Retries
    /// once on a fresh connection when the old one turns out to be dead.
    pub(crate) async fn session_channel(
        &self,
    ) -> Result<(Channel<Msg>, OwnedSemaphorePermit), SshError> {
        let wait = self.options.channel_wait;
        let permit = tokio::time::timeout(wait, self.channel_slots.clone().acquire_owned())
            .await
            .map_err(|_| SshError::ChannelsBusy {
                host: self.destination.host.clone(),
                channels: MAX_CHANNELS,
                after: wait,
            })?
            .map_err(|_| SshError::Disconnected {
                host: self.destination.host.clone(),
                message: "the target was shut down".to_owned(),
            })?;
        let mut last_error = None;
        for _ in 0..2 {
            let connection = self.live_connection().await?;
            match connection.handle.channel_open_session().await {
                Ok(channel) => return Ok((channel, permit)),
                Err(err) => {
                    tracing::debug!(%err, "channel open failed; checking the link");
                    last_error = Some(err);
                    self.drop_connection(&connection).await;
                }
            }
        }
        Err(SshError::Channel {
            host: self.destination.host.clone(),
            message: last_error.map_or_else(String::new, |e| e.to_string()),
        })
    }

    /// Run one command; output streamed to `sink`, optional `stdin` fed to it.
    pub async fn exec_streaming(
        &self,
        spec: &CommandSpec,
        stdin: Option<Box<dyn AsyncRead + Send + Unpin>>,
        sink: &mut (dyn FnMut(OutputStream, &[u8]) + Send),
    ) -> Result<ExitReport, SshError> {
        let (channel, _permit) = self.session_channel().await?;
        let report = run_on_channel(
            channel,
            &self.destination.host,
            &remote_command_line(spec),
            stdin,
            spec.timeout,
            sink,
        )
        .await?;
        if report.status.is_none() && report.signal.is_none() && self.link_is_down().await {
            // The channel ended because the connection did, not because the command finished.
            return Err(SshError::Disconnected {
                host: self.destination.host.clone(),
                message: "the link dropped while the command ran".to_owned(),
            });
        }
        Ok(report)
    }

    /// True when there is no live connection right now.
    async fn link_is_down(&self) -> bool {
        self.connection
            .lock()
            .await
            .as_ref()
            .is_none_or(|connection| connection.handle.is_closed())
    }

    /// Run one command and collect its output (each byte is held once, in the result).
    /// Output beyond `spec.output_cap` per stream is dropped and marked, never held.
    pub async fn exec(&self, spec: &CommandSpec) -> Result<CommandOutput, SshError> {
        let mut collector = OutputCollector::new(spec.output_cap);
        let report = {
            let mut sink = |stream: OutputStream, chunk: &[u8]| collector.push(stream, chunk);
            self.exec_streaming(spec, None, &mut sink).await?
        };
        Ok(collector.finish(report.status))
    }
}

impl SshTarget {
    /// Session channels that can be opened right now without waiting.
    pub(crate) fn free_channels(&self) -> usize {
        self.channel_slots.available_permits()
    }

    /// Run several commands at once on this connection. When they fit in the free channels each
    /// gets its own; otherwise they share one channel and run side by side on the instance (see
    /// `fanout`), which beats waiting for channels to free up and starts one shell instead of many.
    pub async fn exec_many(&self, specs: &[CommandSpec]) -> Vec<Result<CommandOutput, SshError>> {
        if specs.len() <= self.free_channels().max(1) {
            return futures::future::join_all(specs.iter().map(|spec| self.exec(spec))).await;
        }
        let fan = FanOut::new(specs.iter().collect());
        match self.exec_fan_out(&fan).await {
            Ok(output) => fan.split(&output, &self.destination.host),
            Err(err) => vec![Err(err); specs.len()],
        }
    }

    async fn exec_fan_out(&self, fan: &FanOut<'_>) -> Result<CommandOutput, SshError> {
        let spec = fan.command();
        let (channel, _permit) = self.session_channel().await?;
        let host = &self.destination.host;
        let output = collect_until(
            channel,
            host,
            &spec.script,
            spec.timeout,
            spec.output_cap,
            &fan.end_line(),
        )
        .await?;
        if !output.stdout.ends_with(&fan.end_line()) && self.link_is_down().await {
            return Err(SshError::Disconnected {
                host: host.clone(),
                message: "the link dropped while the commands ran".to_owned(),
            });
        }
        Ok(output)
    }
}

impl Target for SshTarget {
    fn run<'a>(
        &'a self,
        spec: &'a CommandSpec,
    ) -> BoxFuture<'a, Result<CommandOutput, TargetError>> {
        async move { self.exec(spec).await.map_err(map_timeout) }.boxed()
    }

    fn run_streaming<'a>(
        &'a self,
        spec: &'a CommandSpec,
        sink: &'a mut (dyn FnMut(OutputStream, &[u8]) + Send),
    ) -> BoxFuture<'a, Result<Option<u32>, TargetError>> {
        async move {
            self.exec_streaming(spec, None, sink)
                .await
                .map(|report| report.status)
                .map_err(map_timeout)
        }
        .boxed()
    }

    fn run_many<'a>(
        &'a self,
        specs: &'a [CommandSpec],
    ) -> BoxFuture<'a, Vec<Result<CommandOutput, TargetError>>> {
        async move {
            self.exec_many(specs)
                .await
                .into_iter()
                .map(|result| result.map_err(map_timeout))
                .collect()
        }
        .boxed()
    }

    fn describe(&self) -> String {
        self.destination.label()
    }

    fn link_stalled(&self) -> BoxFuture<'_, ()> {
        async move {
            tracing::info!(target = %self.destination.label(), "the link went silent; dialling a fresh connection");
            self.forget_connection().await;
        }
        .boxed()
    }
}

/// A command timeout is the same event on every target; other SSH errors keep their codes.
fn map_timeout(err: SshError) -> TargetError {
    match err {
        SshError::CommandTimeout(after) => TargetError::Timeout(after),
        other => other.into(),
    }
}
