//! The stages of opening a connection, reported as they happen, so the Connect wizard can show
//! "TCP ✓ handshake ✓ host key ✗" instead of one spinner and a late error: the user sees at once
//! whether the address, the server or the login is at fault.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One stage of reaching a shell on the instance, in the order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ConnectStep {
    /// A TCP connection to host:port (or a tunnel through the jump hosts).
    Tcp,
    /// SSH version exchange and key exchange, up to the server presenting its host key.
    Handshake,
    /// The host key judged against known_hosts.
    HostKey,
    /// Logging in with a key, the agent or a password.
    Auth,
    /// A first command run in a shell on the instance.
    FirstCommand,
}

impl ConnectStep {
    pub const ALL: [Self; 5] = [
        Self::Tcp,
        Self::Handshake,
        Self::HostKey,
        Self::Auth,
        Self::FirstCommand,
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum StepStatus {
    Started,
    Done,
    Failed,
}

/// One report: `step` moved to `status`. A retry while the instance boots starts again at `Tcp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct StepEvent {
    pub step: ConnectStep,
    pub status: StepStatus,
}

/// Where step reports go; by default nowhere. Clones share the receiver and know which step is
/// under way, so a failure anywhere can be pinned on the step that was running.
#[derive(Clone, Default)]
pub struct StepObserver(Option<Arc<Receiver>>);

struct Receiver {
    report: Box<dyn Fn(StepEvent) + Send + Sync>,
    /// The step started and not yet done. A std mutex: never held across an `.await`.
    running: Mutex<Option<ConnectStep>>,
}

impl StepObserver {
    pub fn new(report: impl Fn(StepEvent) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(Receiver {
            report: Box::new(report),
            running: Mutex::new(None),
        })))
    }

    fn report(&self, step: ConnectStep, status: StepStatus) {
        if let Some(receiver) = &self.0 {
            if let Ok(mut running) = receiver.running.lock() {
                *running = (status == StepStatus::Started).then_some(step);
            }
            (receiver.report)(StepEvent { step, status });
        }
    }

    pub fn started(&self, step: ConnectStep) {
        self.report(step, StepStatus::Started);
    }

    pub fn done(&self, step: ConnectStep) {
        self.report(step, StepStatus::Done);
    }

    /// Mark the step under way (if any) as failed.
    pub fn fail_running(&self) {
        let running = self
            .0
            .as_ref()
            .and_then(|receiver| receiver.running.lock().ok().and_then(|r| *r));
        if let Some(step) = running {
            self.report(step, StepStatus::Failed);
        }
    }
}

impl std::fmt::Debug for StepObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "StepObserver(set)"
        } else {
            "StepObserver(none)"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_pinned_on_the_step_that_was_running() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let observer = StepObserver::new(move |event| sink.lock().expect("lock").push(event));
        observer.started(ConnectStep::Tcp);
        observer.done(ConnectStep::Tcp);
        let clone = observer.clone();
        clone.started(ConnectStep::Handshake);
        observer.fail_running();
        clone.fail_running();
        let events = seen.lock().expect("lock").clone();
        assert_eq!(
            events.last(),
            Some(&StepEvent {
                step: ConnectStep::Handshake,
                status: StepStatus::Failed
            }),
            "the handshake was under way when it failed: {events:?}"
        );
        assert_eq!(
            events.len(),
            4,
            "clones share what is running; a second failure report has nothing to blame: {events:?}"
        );
    }

    #[test]
    fn nothing_running_after_a_step_is_done() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let observer = StepObserver::new(move |event| sink.lock().expect("lock").push(event));
        observer.started(ConnectStep::Auth);
        observer.done(ConnectStep::Auth);
        observer.fail_running();
        assert!(
            seen.lock()
                .expect("lock")
                .iter()
                .all(|e| e.status != StepStatus::Failed),
            "a finished step must never be reported as failed"
        );
    }
}
