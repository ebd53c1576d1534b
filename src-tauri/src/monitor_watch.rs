//! The GPU sampler in the background: the minute history (busy hours, idle streaks) and the
//! idle reminder know the GPUs of every connected instance even while no dashboard is open.

use leasehold_core::monitor::background;
use tauri::Manager;

use crate::state::AppState;

/// Once a minute, look at every billing instance the app holds a connection to.
pub fn start(app: tauri::AppHandle) {
    tauri::async_runtime::spawn(async move {
        let mut ticker = tokio::time::interval(background::BACKGROUND_INTERVAL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let Some(state) = app.try_state::<AppState>() else {
                continue;
            };
            match background::sample_live_instances(&state.store, &state.live, state.now()).await {
                Ok(done) => {
                    for (instance, result) in done {
                        if let Err(err) = result {
                            tracing::info!(%err, instance, "background GPU look failed");
                        }
                    }
                }
                Err(err) => tracing::warn!(%err, "background GPU sampler"),
            }
        }
    });
}
