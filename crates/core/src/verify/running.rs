//! Check runs the UI can stop: each runs under a key (the instance), and `cancel(key)` ends it
//! at its next `.await`. A second run under the same key stops the first.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

#[derive(Default)]
pub struct RunningChecks {
    next_ticket: AtomicU64,
    /// A std mutex: held only to look a key up, never across `.await`.
    running: Mutex<HashMap<String, (u64, Arc<Notify>)>>,
}

impl RunningChecks {
    /// Run `work` under `key`; `None` when it was cancelled.
    pub async fn run<T>(&self, key: &str, work: impl Future<Output = T>) -> Option<T> {
        let ticket = self.next_ticket.fetch_add(1, Ordering::Relaxed);
        let stop = Arc::new(Notify::new());
        if let Ok(mut running) = self.running.lock() {
            if let Some((_, previous)) = running.insert(key.to_owned(), (ticket, stop.clone())) {
                previous.notify_one();
            }
        }
        let outcome = tokio::select! {
            result = work => Some(result),
            () = stop.notified() => None,
        };
        if let Ok(mut running) = self.running.lock() {
            if running.get(key).is_some_and(|(owner, _)| *owner == ticket) {
                running.remove(key);
            }
        }
        outcome
    }

    pub fn cancel(&self, key: &str) {
        let stop = self
            .running
            .lock()
            .ok()
            .and_then(|mut running| running.remove(key))
            .map(|(_, stop)| stop);
        if let Some(stop) = stop {
            stop.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_cancelled_run_ends_with_none_and_others_are_untouched() {
        let checks = Arc::new(RunningChecks::default());
        let runner = checks.clone();
        let stopped =
            tokio::spawn(async move { runner.run("gpu-a", std::future::pending::<()>()).await });
        // Cancel once the run is registered (poll, no fixed sleep).
        while checks.running.lock().expect("lock").get("gpu-a").is_none() {
            tokio::task::yield_now().await;
        }
        checks.cancel("gpu-b");
        checks.cancel("gpu-a");
        assert_eq!(stopped.await.expect("joins"), None, "the run was stopped");
        assert_eq!(checks.run("gpu-b", async { 7 }).await, Some(7));
        assert!(
            checks.running.lock().expect("lock").is_empty(),
            "finished runs are forgotten"
        );
    }

    #[tokio::test]
    async fn a_new_run_under_the_same_key_stops_the_old_one() {
        let checks = Arc::new(RunningChecks::default());
        let runner = checks.clone();
        let first =
            tokio::spawn(async move { runner.run("gpu-a", std::future::pending::<()>()).await });
        while checks.running.lock().expect("lock").get("gpu-a").is_none() {
            tokio::task::yield_now().await;
        }
        assert_eq!(checks.run("gpu-a", async { 1 }).await, Some(1));
        assert_eq!(first.await.expect("joins"), None);
    }
}
