//! The background market refresh: every [`EVERY`] while the app runs, each provider's offers
//! are fetched (core `market::refresh`, which keeps the last good offers and backs off after
//! failures and 429s), then the market alerts that now hold are sent to the saved webhooks
//! (core `market::alerts::refresh_and_fire`, at most once an hour each) and shown as a desktop
//! notice in the UI's language. The window hears of it through the `market-refreshed` event
//! (Choose GPU reloads its offers and alerts).

use std::time::Duration;

use leasehold_core::account::Endpoints;
use leasehold_core::market;
use tauri::{Emitter, Manager};

use crate::state::AppState;

pub const EVERY: Duration = Duration::from_secs(15 * 60);
pub const MARKET_REFRESHED_EVENT: &str = "market-refreshed";

/// Start the refresh loop (once the database is open); the first refresh runs at once.
pub fn start(app: tauri::AppHandle) {
    tauri::async_runtime::spawn(async move {
        let mut ticker = tokio::time::interval(EVERY);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let Some(state) = app.try_state::<AppState>() else {
                continue;
            };
            // A refused base URL is said where the user asks for a refresh; here it only waits.
            let Ok(endpoints) = Endpoints::checked_from_env() else {
                continue;
            };
            match market::alerts::refresh_and_fire(&state.store, &endpoints, None, state.now())
                .await
            {
                Ok(round) => {
                    for failed in round.report.providers.iter().filter(|p| p.error.is_some()) {
                        tracing::info!(
                            provider = failed.provider.as_str(),
                            "market refresh failed; earlier offers kept"
                        );
                    }
                    for hit in &round.alerts {
                        notify_desktop(&app, hit);
                    }
                }
                Err(err) => {
                    tracing::warn!(%err, "market refresh failed");
                    continue;
                }
            }
            if let Err(err) = app.emit(MARKET_REFRESHED_EVENT, ()) {
                tracing::debug!(%err, "no window to tell");
            }
        }
    });
}

/// "RTX 4090 at $0.33/h per GPU on Vast.ai (Texas, US)" in the UI's language
/// (`TrayLabels.market_alert`).
fn notify_desktop(app: &tauri::AppHandle, hit: &market::alerts::AlertHit) {
    use tauri_plugin_notification::NotificationExt;
    let labels = app
        .try_state::<crate::board::ReminderBoard>()
        .map(|board| board.labels())
        .unwrap_or_default();
    let offer = &hit.offer;
    let price = labels
        .per_hour
        .replace("{rate}", &offer.price_per_gpu_hour.normalize().to_string())
        .replace("{currency}", &offer.currency);
    let body = labels
        .market_alert
        .replace("{gpu}", &offer.gpu)
        .replace("{price}", &price)
        .replace("{provider}", offer.provider.display())
        .replace("{region}", offer.region.as_deref().unwrap_or("—"));
    let shown = app
        .notification()
        .builder()
        .title("Leasehold")
        .body(body)
        .show();
    if let Err(err) = shown {
        tracing::debug!(%err, "no desktop notification service");
    }
}
