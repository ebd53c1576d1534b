//! Self-update (core `update`): About, the checks, "Skip this version", and the install: core
//! waits for running work, downloads and checks the signature; the plugin only installs.

use leasehold_core::update::{
    self, BuildInfo, Endpoints, Fetched, UpdateError, UpdateOffer, UpdateProgress,
};
use leasehold_core::usecase;
use leasehold_core::ApiError;
use tauri::ipc::Channel;
use tauri_plugin_updater::UpdaterExt;

use crate::state::AppState;
use crate::updates::Updates;

#[tauri::command]
pub fn update_about() -> BuildInfo {
    update::build_info()
}

/// What the last check found, for the dialog (`None`: nothing to offer).
#[tauri::command]
#[tracing::instrument(skip(state, updates), err(Debug))]
pub async fn update_pending(
    state: tauri::State<'_, AppState>,
    updates: tauri::State<'_, Updates>,
    language: String,
) -> Result<Option<UpdateOffer>, ApiError> {
    Ok(usecase::update::pending(&state.context(), updates.last(), &language).await?)
}

/// "Check now": asks the servers at once; a skipped version is offered again.
#[tauri::command]
#[tracing::instrument(skip(state, updates), err(Debug))]
pub async fn update_check_now(
    state: tauri::State<'_, AppState>,
    updates: tauri::State<'_, Updates>,
    language: String,
) -> Result<Option<UpdateOffer>, ApiError> {
    let remember = |fetched: &Fetched| updates.remember(fetched.clone());
    Ok(usecase::update::check_now(&state.context(), &language, remember).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn update_skip(
    state: tauri::State<'_, AppState>,
    version: String,
) -> Result<(), ApiError> {
    Ok(update::skip_version(&mut *state.conn().await?, &version, state.now()).await?)
}

/// "Install and restart": waits while a backup, a followed install, a stop or a release runs,
/// downloads, checks the signature, installs and restarts. Nothing is installed when any step fails.
#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn update_install(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    updates: tauri::State<'_, Updates>,
    progress: Channel<UpdateProgress>,
) -> Result<(), ApiError> {
    let send = |step: UpdateProgress| {
        let _ = progress.send(step);
    };
    let installer = |fetched: &Fetched, bytes: &[u8]| install(&app, &fetched.json, bytes);
    usecase::update::install(&state.context(), updates.last(), send, installer).await?;
    app.restart()
}

/// Hands the verified bytes to the plugin's installer (which checks the signature once more).
fn install(
    app: &tauri::AppHandle,
    json: &serde_json::Value,
    bytes: &[u8],
) -> Result<(), UpdateError> {
    let failed = |detail: String| UpdateError::InstallFailed { detail };
    let key = update::signature::public_key().ok_or(UpdateError::NoPublicKey)?;
    let update = app
        .updater_builder()
        .pubkey(key)
        .endpoints(Endpoints::built_in().urls().to_vec())
        .and_then(tauri_plugin_updater::UpdaterBuilder::build)
        .and_then(|updater| updater.restore_update(json.clone()))
        .map_err(|err| failed(err.to_string()))?
        .ok_or(UpdateError::NothingToInstall)?;
    update.install(bytes).map_err(|err| failed(err.to_string()))
}
