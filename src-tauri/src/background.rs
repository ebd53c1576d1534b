//! What runs in the background once a database is open: the team sync for that database, and,
//! the first time only, the loops that live as long as the app (the GPU sampler, jobs, provider
//! accounts, the market, the keeper). Started from here, after the state is managed, so the
//! state never imports the loops that read it.

use std::sync::Once;

use tauri::{AppHandle, Manager};

use crate::state::AppState;

static LOOPS: Once = Once::new();

pub fn after_open(app: &AppHandle) {
    if let Some(state) = app.try_state::<AppState>() {
        crate::team_watch::start(&state);
    }
    LOOPS.call_once(|| {
        crate::monitor_watch::start(app.clone());
        crate::jobs_watch::start(app.clone());
        crate::accounts_watch::start(app.clone());
        crate::market_watch::start(app.clone());
        crate::keeper_watch::start(app.clone());
    });
}
