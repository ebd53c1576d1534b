//! The port forwards one target holds open: what each is, and the task carrying it. Kept apart
//! from `forward` (which opens them through the target) so the target can own its table
//! without the two modules depending on each other.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use tokio::task::AbortHandle;
use ts_rs::TS;

use super::SshError;

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
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(crate) fn insert(&self, info: ForwardInfo, task: AbortHandle) {
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
