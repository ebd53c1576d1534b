//! The power-on hunts whose loop runs in this app, one per instance at most: started by
//! `keeper_hunt_start`, the tray and `keeper_watch` (hunts picked up at start). Each loop is one
//! call into core `keeper::run`. Apart from `keeper_watch` so the app's state can hold it
//! without importing the loop that reads that state.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use leasehold_core::account::{Backoff, Endpoints};
use leasehold_core::keeper::{self, HuntDeps, TokioSleeper};
use leasehold_core::stop::StopWait;
use leasehold_core::store::Store;

/// The instances whose hunt loop runs in this app, so a second start never runs a second loop.
#[derive(Clone, Default)]
pub struct HuntRunners(Arc<Mutex<HashSet<String>>>);

impl HuntRunners {
    /// Run `name`'s hunt (already started in core) in the background, unless it runs already.
    pub fn spawn(
        &self,
        store: Store,
        clock: Arc<dyn leasehold_core::Clock>,
        endpoints: Endpoints,
        name: String,
    ) {
        {
            let mut running = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if !running.insert(name.clone()) {
                return;
            }
        }
        let runners = self.clone();
        tauri::async_runtime::spawn(async move {
            let deps = HuntDeps {
                endpoints: &endpoints,
                backoff: Backoff::default(),
                wait: StopWait::default(),
                clock: clock.as_ref(),
                sleeper: &TokioSleeper,
            };
            if let Err(err) = keeper::run(&store, &name, &deps).await {
                tracing::warn!(%err, instance = name, "the power-on hunt failed");
            }
            runners
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&name);
        });
    }
}
