//! The team sync in the background: push and pull every few minutes for the database that is
//! open (it syncs only while linked). Started by `background` each time a database opens.

use leasehold_core::team;

use crate::state::AppState;

/// Start the background push/pull for this database's lifetime.
pub fn start(state: &AppState) {
    tauri::async_runtime::spawn(team::keep_in_sync(
        state.store.clone(),
        state.clock.clone(),
        team::BACKGROUND_SYNC_EVERY,
    ));
}
