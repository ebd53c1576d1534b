//! The connections the app keeps open, one per instance, shared by Verify, the terminal and the
//! port forwards so they ride one SSH connection instead of dialling again each time.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sqlx::SqliteConnection;
use tokio::sync::Mutex;
use ts_rs::TS;

use super::saved::load_target;
use super::terminal::Terminals;
use super::ConnectError;
use crate::ssh::{ConnectOptions, ForwardInfo, ForwardPreset, LinkState, SshTarget};

/// Open connections by instance name. A tokio mutex: it is held across the map update only,
/// never across a connect.
#[derive(Default)]
pub struct LiveTargets {
    targets: Mutex<HashMap<String, Arc<SshTarget>>>,
    pub terminals: Terminals,
}

/// A port forward to open: a preset service, or any remote port.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum ForwardRequest {
    /// Jupyter, TensorBoard, Ollama or vLLM on its usual port (same local port when free).
    Preset { preset: ForwardPreset },
    /// `local_port` 0 (or absent) picks a free port here.
    Custom {
        remote_port: u16,
        local_port: Option<u16>,
    },
}

/// The link of one instance as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct LinkStatus {
    pub instance: String,
    /// `None`: no connection open (it opens on first use).
    pub link: Option<LinkState>,
    pub destination: Option<String>,
}

impl LiveTargets {
    /// Keep `target` as the connection of `instance`, closing the one it replaces (a new port
    /// or password after the provider restarted the machine).
    pub async fn insert(&self, instance: &str, target: SshTarget) -> Arc<SshTarget> {
        let target = Arc::new(target);
        let previous = self
            .targets
            .lock()
            .await
            .insert(instance.to_owned(), target.clone());
        if let Some(previous) = previous {
            previous.disconnect().await;
        }
        target
    }

    /// The open connection of `instance`, or a new one from its saved target.
    pub async fn get_or_connect(
        &self,
        conn: &mut SqliteConnection,
        instance: &str,
        options: ConnectOptions,
    ) -> Result<Arc<SshTarget>, ConnectError> {
        if let Some(target) = self.targets.lock().await.get(instance) {
            return Ok(target.clone());
        }
        let saved = load_target(conn, instance)
            .await?
            .ok_or_else(|| ConnectError::NoTarget(instance.to_owned()))?;
        let plan = saved.plan();
        let destination = plan.destination()?;
        let credentials = plan.credentials(&destination)?;
        let target = SshTarget::connect(destination, credentials, options).await?;
        let target = Arc::new(target);
        let mut targets = self.targets.lock().await;
        // Another caller may have connected meanwhile; keep theirs and drop ours.
        Ok(targets.entry(instance.to_owned()).or_insert(target).clone())
    }

    /// The open connection of `instance`, if any (never dials).
    pub async fn get(&self, instance: &str) -> Option<Arc<SshTarget>> {
        self.targets.lock().await.get(instance).cloned()
    }

    pub async fn status(&self, instance: &str) -> LinkStatus {
        let target = self.get(instance).await;
        LinkStatus {
            instance: instance.to_owned(),
            link: target.as_ref().map(|t| *t.link_state().borrow()),
            destination: target.as_ref().map(|t| t.destination().label()),
        }
    }

    /// Close the connection of `instance` with its forwards and terminals.
    pub async fn disconnect(&self, instance: &str) {
        let target = self.targets.lock().await.remove(instance);
        if let Some(target) = target {
            self.terminals.close_all_on(&target).await;
            target.disconnect().await;
        }
    }

    /// Close every connection (the app is quitting).
    pub async fn disconnect_all(&self) {
        let all: Vec<Arc<SshTarget>> = self.targets.lock().await.drain().map(|(_, t)| t).collect();
        for target in all {
            self.terminals.close_all_on(&target).await;
            target.disconnect().await;
        }
    }
}

/// Open the forward `request` asks for on `target`.
pub async fn open_forward(
    target: &Arc<SshTarget>,
    request: &ForwardRequest,
) -> Result<ForwardInfo, ConnectError> {
    Ok(match request {
        ForwardRequest::Preset { preset } => target.forward_preset(*preset).await?,
        ForwardRequest::Custom {
            remote_port,
            local_port,
        } => {
            target
                .forward_local(local_port.unwrap_or(0), "127.0.0.1", *remote_port)
                .await?
        }
    })
}
