//! Local port forwarding (`ssh -L`): a port on this computer that reaches a port on the
//! instance through the SSH connection, for Jupyter, TensorBoard, Ollama's API or vLLM.
//!
//! The local side listens on 127.0.0.1 only, so a forward never exposes the instance to the
//! user's network. Each forward survives reconnects: every new local connection asks the target
//! for its live SSH connection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use serde::{Deserialize, Serialize};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinSet};
use ts_rs::TS;

use super::target::SshTarget;
use super::SshError;

/// Services people usually forward, with their default ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum ForwardPreset {
    Jupyter,
    TensorBoard,
    Ollama,
    Vllm,
}

impl ForwardPreset {
    pub const ALL: [Self; 4] = [Self::Jupyter, Self::TensorBoard, Self::Ollama, Self::Vllm];

    pub fn remote_port(self) -> u16 {
        match self {
            Self::Jupyter => 8888,
            Self::TensorBoard => 6006,
            Self::Ollama => 11434,
            Self::Vllm => 8000,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Jupyter => "Jupyter",
            Self::TensorBoard => "TensorBoard",
            Self::Ollama => "Ollama API",
            Self::Vllm => "vLLM (OpenAI API)",
        }
    }
}

/// One active forward.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct ForwardInfo {
    pub id: u64,
    pub local_port: u16,
    pub remote_host: String,
    pub remote_port: u16,
    /// `http://127.0.0.1:PORT/` for "open in browser".
    pub url: String,
}

/// The forwards of one target. A std mutex: it is never held across an `.await`.
#[derive(Default)]
pub(crate) struct ForwardTable {
    next_id: AtomicU64,
    entries: std::sync::Mutex<Vec<(ForwardInfo, AbortHandle)>>,
}

impl ForwardTable {
    fn insert(&self, info: ForwardInfo, task: AbortHandle) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.push((info, task));
        }
    }

    pub(crate) fn list(&self) -> Vec<ForwardInfo> {
        self.entries
            .lock()
            .map(|entries| entries.iter().map(|(info, _)| info.clone()).collect())
            .unwrap_or_default()
    }

    pub(crate) fn close(&self, id: u64) -> Result<(), SshError> {
        let mut entries = self
            .entries
            .lock()
            .map_err(|_| SshError::UnknownForward(id))?;
        let index = entries
            .iter()
            .position(|(info, _)| info.id == id)
            .ok_or(SshError::UnknownForward(id))?;
        let (_, task) = entries.remove(index);
        task.abort();
        Ok(())
    }

    pub(crate) fn close_all(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            for (_, task) in entries.drain(..) {
                task.abort();
            }
        }
    }
}

impl Drop for ForwardTable {
    fn drop(&mut self) {
        self.close_all();
    }
}

impl SshTarget {
    /// Listen on `127.0.0.1:local_port` (0 picks a free port) and carry each connection to
    /// `remote_host:remote_port` as seen from the instance.
    pub async fn forward_local(
        self: &Arc<Self>,
        local_port: u16,
        remote_host: &str,
        remote_port: u16,
    ) -> Result<ForwardInfo, SshError> {
        let listener = TcpListener::bind(("127.0.0.1", local_port))
            .await
            .map_err(|err| SshError::ForwardBind {
                port: local_port,
                message: err.to_string(),
            })?;
        let bound = listener
            .local_addr()
            .map_err(|err| SshError::ForwardBind {
                port: local_port,
                message: err.to_string(),
            })?
            .port();
        let info = ForwardInfo {
            id: self.forwards.next_id.fetch_add(1, Ordering::Relaxed) + 1,
            local_port: bound,
            remote_host: remote_host.to_owned(),
            remote_port,
            url: format!("http://127.0.0.1:{bound}/"),
        };
        // Weak: the accept loop must not keep the target (and its connection) alive.
        let target = Arc::downgrade(self);
        let remote = (remote_host.to_owned(), remote_port);
        let task = tokio::spawn(accept_loop(listener, target, remote));
        self.forwards.insert(info.clone(), task.abort_handle());
        Ok(info)
    }

    /// Forward a preset service's port to the same local port, or any free one if taken.
    pub async fn forward_preset(
        self: &Arc<Self>,
        preset: ForwardPreset,
    ) -> Result<ForwardInfo, SshError> {
        let port = preset.remote_port();
        match self.forward_local(port, "127.0.0.1", port).await {
            Ok(info) => Ok(info),
            Err(SshError::ForwardBind { .. }) => self.forward_local(0, "127.0.0.1", port).await,
            Err(err) => Err(err),
        }
    }

    pub fn forwards(&self) -> Vec<ForwardInfo> {
        self.forwards.list()
    }

    pub fn close_forward(&self, id: u64) -> Result<(), SshError> {
        self.forwards.close(id)
    }
}

async fn accept_loop(listener: TcpListener, target: Weak<SshTarget>, remote: (String, u16)) {
    // Dropping the JoinSet (when this task is aborted) ends every carried connection too.
    let mut carried = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, peer)) = accepted else { continue };
                let Some(target) = target.upgrade() else { return };
                let remote = remote.clone();
                carried.spawn(async move {
                    if let Err(err) = carry(stream, peer.port(), &target, &remote).await {
                        tracing::warn!(code = crate::Coded::code(&err), %err, "forwarded connection failed");
                    }
                });
            }
            Some(_) = carried.join_next(), if !carried.is_empty() => {}
        }
    }
}

async fn carry(
    mut local: TcpStream,
    peer_port: u16,
    target: &SshTarget,
    (remote_host, remote_port): &(String, u16),
) -> Result<(), SshError> {
    let _ = local.set_nodelay(true);
    let connection = target.live_connection().await?;
    let channel = connection
        .handle
        .channel_open_direct_tcpip(
            remote_host.clone(),
            u32::from(*remote_port),
            "127.0.0.1",
            u32::from(peer_port),
        )
        .await
        .map_err(|err| SshError::Channel {
            host: target.destination().host.clone(),
            message: format!("cannot reach {remote_host}:{remote_port} from the instance: {err}"),
        })?;
    let mut remote = channel.into_stream();
    // Ends when either side closes; errors here are the peer hanging up.
    let _ = tokio::io::copy_bidirectional(&mut local, &mut remote).await;
    Ok(())
}
