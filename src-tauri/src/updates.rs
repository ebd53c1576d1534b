//! The self-update loop: a check soon after start and every 6 hours (`update::CHECK_EVERY`); when
//! core says there is something to offer, the window gets `update-available` and asks
//! `update_pending` for the dialog. Installing is `commands::update::update_install`.

use std::sync::Mutex;

use leasehold_core::update::{self, Endpoints, Fetched};
use tauri::{Emitter, Manager};

use crate::state::AppState;

/// Wait this long after start before the first check, so start-up is not slowed by it.
const FIRST_CHECK_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// The newest `latest.json` a check read (background or "Check now").
#[derive(Default)]
pub struct Updates {
    last: Mutex<Option<Fetched>>,
}

impl Updates {
    pub fn last(&self) -> Option<Fetched> {
        self.lock().clone()
    }

    pub fn remember(&self, fetched: Fetched) {
        *self.lock() = Some(fetched);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Fetched>> {
        self.last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Starts the background checks.
pub fn start(app: &tauri::AppHandle) {
    app.manage(Updates::default());
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(FIRST_CHECK_AFTER).await;
        loop {
            check_once(&app).await;
            tokio::time::sleep(update::CHECK_EVERY).await;
        }
    });
}

async fn check_once(app: &tauri::AppHandle) {
    let endpoints = match Endpoints::from_env() {
        Ok(endpoints) => endpoints,
        Err(err) => {
            tracing::warn!(%err, "update check skipped");
            return;
        }
    };
    let fetched = match update::fetch_latest(&endpoints).await {
        Ok(fetched) => fetched,
        // Offline or the servers are down: try again at the next round, say nothing.
        Err(err) => {
            tracing::info!(%err, "update check failed");
            return;
        }
    };
    app.state::<Updates>().remember(fetched.clone());
    // Before the database is open (the recovery screen) nothing is offered.
    let Some(state) = app.try_state::<AppState>() else {
        return;
    };
    let Ok(mut conn) = state.conn().await else {
        return;
    };
    let running = state.running_work.running();
    match update::offer(&mut conn, &fetched, "en", &running, true).await {
        Ok(Some(offer)) => {
            tracing::info!(version = %offer.version, "update available");
            let _ = app.emit("update-available", &offer.version);
        }
        Ok(None) => {}
        Err(err) => tracing::warn!(%err, "update offer"),
    }
}
