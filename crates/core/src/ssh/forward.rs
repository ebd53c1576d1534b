//! Local port forwarding (`ssh -L`): a port on this computer that reaches a port on the
//! instance through the SSH connection, for Jupyter, TensorBoard, Ollama's API or vLLM.
//!
//! The local side listens on 127.0.0.1 only, so a forward never exposes the instance to the
//! user's network. Each forward survives reconnects: every new local connection asks the target
//! for its live SSH connection.

use std::sync::{Arc, Weak};

use serde::{Deserialize, Serialize};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use ts_rs::TS;

use super::forward_table::ForwardInfo;
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
            id: self.forwards.next_id(),
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
