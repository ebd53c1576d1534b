//! Interactive shells for the Terminal tab: each open PTY has an id the UI writes keystrokes
//! and resizes to, and a task that hands its output to a sink (the app's IPC channel) until the
//! shell exits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::Serialize;
use ts_rs::TS;

use super::ConnectError;
use crate::ssh::{PtyEvent, PtyWriter, SshTarget};

/// What the shell sends back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalOutput {
    /// Raw terminal bytes (escape sequences included) for xterm.js.
    Data(Vec<u8>),
    /// The shell ended; the terminal is gone.
    Exited(TerminalExit),
}

/// The end of a shell, sent to the UI as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct TerminalExit {
    /// `None`: ended by a signal, or the connection dropped.
    pub status: Option<u32>,
}

type OpenTerminals = Arc<std::sync::Mutex<HashMap<u64, Entry>>>;

struct Entry {
    writer: Arc<PtyWriter>,
    /// Which connection it runs on, so closing a connection closes its terminals.
    target: usize,
}

/// Open terminals by id. A std mutex: held only to look an entry up, never across `.await`.
#[derive(Default)]
pub struct Terminals {
    next_id: AtomicU64,
    open: OpenTerminals,
}

fn target_key(target: &SshTarget) -> usize {
    std::ptr::from_ref(target) as usize
}

impl Terminals {
    /// Start a login shell of `cols`×`rows` on `target`; its output goes to `sink` from a task
    /// of its own until the shell exits or the terminal is closed.
    pub async fn open(
        &self,
        target: &SshTarget,
        cols: u32,
        rows: u32,
        sink: impl Fn(TerminalOutput) + Send + 'static,
    ) -> Result<u64, ConnectError> {
        let session = target.open_pty("xterm-256color", cols, rows).await?;
        let (mut reader, writer) = session.into_parts();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        if let Ok(mut open) = self.open.lock() {
            open.insert(
                id,
                Entry {
                    writer: Arc::new(writer),
                    target: target_key(target),
                },
            );
        }
        let open = self.open.clone();
        tokio::spawn(async move {
            let mut status = None;
            while let Some(event) = reader.next().await {
                match event {
                    PtyEvent::Output(bytes) => sink(TerminalOutput::Data(bytes)),
                    PtyEvent::Exited(code) => {
                        status = code;
                        break;
                    }
                }
            }
            if let Ok(mut open) = open.lock() {
                open.remove(&id);
            }
            sink(TerminalOutput::Exited(TerminalExit { status }));
        });
        Ok(id)
    }

    fn writer(&self, id: u64) -> Result<Arc<PtyWriter>, ConnectError> {
        self.open
            .lock()
            .ok()
            .and_then(|open| open.get(&id).map(|entry| entry.writer.clone()))
            .ok_or(ConnectError::UnknownTerminal(id))
    }

    /// Keystrokes or pasted text.
    pub async fn write(&self, id: u64, data: &[u8]) -> Result<(), ConnectError> {
        Ok(self.writer(id)?.write(data).await?)
    }

    pub async fn resize(&self, id: u64, cols: u32, rows: u32) -> Result<(), ConnectError> {
        Ok(self.writer(id)?.resize(cols, rows).await?)
    }

    /// Hang up; the output task then reports the exit. Closing a closed terminal is fine.
    pub async fn close(&self, id: u64) {
        let entry = self.open.lock().ok().and_then(|mut open| open.remove(&id));
        if let Some(entry) = entry {
            entry.writer.close().await;
        }
    }

    /// Close every terminal running on `target`.
    pub(crate) async fn close_all_on(&self, target: &SshTarget) {
        let key = target_key(target);
        let writers: Vec<Arc<PtyWriter>> = self
            .open
            .lock()
            .map(|mut open| {
                let ids: Vec<u64> = open
                    .iter()
                    .filter(|(_, e)| e.target == key)
                    .map(|(id, _)| *id)
                    .collect();
                ids.iter()
                    .filter_map(|id| open.remove(id).map(|e| e.writer))
                    .collect()
            })
            .unwrap_or_default();
        for writer in writers {
            writer.close().await;
        }
    }
}
