//! The background provider sync: at start-up and every [`EVERY`], each provider account whose
//! back-off has passed is synced (core `account::sync::due` + `sync_account`), so the ledger,
//! the tray and the reminders follow what the provider bills. The window hears of it through
//! the `accounts-synced` event (the Rentals list and Settings → Accounts reload).

use std::time::Duration;

use leasehold_core::account::{sync, Backoff, Endpoints};
use tauri::{Emitter, Manager};

use crate::board::ReminderBoard;
use crate::state::AppState;

pub const EVERY: Duration = Duration::from_secs(120);
pub const ACCOUNTS_SYNCED_EVENT: &str = "accounts-synced";

/// Start the sync loop (once the database is open).
pub fn start(app: tauri::AppHandle) {
    tauri::async_runtime::spawn(async move {
        let mut ticker = tokio::time::interval(EVERY);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let Some(state) = app.try_state::<AppState>() else {
                continue;
            };
            let now = state.now();
            let due = match sync::due(&state.store, now).await {
                Ok(due) => due,
                Err(err) => {
                    tracing::warn!(%err, "provider accounts could not be read");
                    continue;
                }
            };
            let mut changed = false;
            for account in due {
                match sync::sync_account(
                    &state.store,
                    &account,
                    &Endpoints::from_env(),
                    Backoff::default(),
                    state.now(),
                )
                .await
                {
                    Ok(report) => {
                        changed |= !report.imported.is_empty() || !report.events.is_empty();
                        // An instance nobody recorded is itself a reminder: the orphan case.
                        for name in &report.imported {
                            tell_new(&app, account.provider.display(), name);
                        }
                    }
                    // Remembered on the account (its words, a back-off) by core.
                    Err(err) => {
                        tracing::info!(provider = account.provider.as_str(), %err, "sync failed");
                    }
                }
            }
            if !changed {
                continue;
            }
            if let Err(err) = app.emit(ACCOUNTS_SYNCED_EVENT, ()) {
                tracing::debug!(%err, "no window to tell");
            }
        }
    });
}

fn tell_new(app: &tauri::AppHandle, provider: &str, name: &str) {
    let labels = app
        .try_state::<ReminderBoard>()
        .map(|board| board.labels())
        .unwrap_or_default();
    use tauri_plugin_notification::NotificationExt;
    let shown = app
        .notification()
        .builder()
        .title("Leasehold")
        .body(
            labels
                .account_new_instance
                .replace("{provider}", provider)
                .replace("{name}", name),
        )
        .show();
    if let Err(err) = shown {
        tracing::debug!(%err, "no desktop notification service");
    }
}
