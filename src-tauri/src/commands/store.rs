//! The recovery screen's commands (core `store::recovery`): what happened to the database at
//! start, and the ways out. They work whether or not a store is open.

use leasehold_core::store::recovery;
use leasehold_core::ApiError;
use tracing::instrument;

use crate::state::{Startup, StoreStatus};

/// Whether the app can start, and on what. The UI asks this before anything else.
#[tauri::command]
#[instrument(skip_all)]
pub fn store_status(startup: tauri::State<'_, Startup>) -> StoreStatus {
    startup.status()
}

/// Open the database again (after space was freed or the other program closed it).
#[tauri::command]
#[instrument(skip_all)]
pub async fn store_retry(
    app: tauri::AppHandle,
    startup: tauri::State<'_, Startup>,
) -> Result<StoreStatus, ApiError> {
    match recovery::open_or_explain(&startup.db_path).await {
        Ok(store) => {
            startup.opened(&app, store, None);
            crate::background::after_open(&app);
        }
        Err(failure) => startup.failed(failure),
    }
    Ok(startup.status())
}

/// Copy the database into a private temporary folder and run the app on the copy, read-only.
#[tauri::command]
#[instrument(skip_all, err(Debug))]
pub async fn store_open_copy(
    app: tauri::AppHandle,
    startup: tauri::State<'_, Startup>,
) -> Result<StoreStatus, ApiError> {
    let (store, copy) =
        recovery::open_private_read_only_copy(&startup.db_path, startup.clock.now()).await?;
    startup.opened(&app, store, Some(copy));
    crate::background::after_open(&app);
    Ok(startup.status())
}

/// Keep the old file under a timestamped name and start with an empty database.
#[tauri::command]
#[instrument(skip_all, err(Debug))]
pub async fn store_start_fresh(
    app: tauri::AppHandle,
    startup: tauri::State<'_, Startup>,
) -> Result<StoreStatus, ApiError> {
    let (store, kept) = recovery::start_fresh(&startup.db_path, startup.clock.now()).await?;
    startup.kept_as(&kept);
    startup.opened(&app, store, None);
    crate::background::after_open(&app);
    Ok(startup.status())
}

#[tauri::command]
#[instrument(skip_all)]
pub fn app_quit(app: tauri::AppHandle) {
    app.exit(0);
}
