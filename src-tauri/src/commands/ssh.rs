//! Connect, terminal and port forwards: thin commands over `leasehold_core::connect`. Step
//! reports and terminal output stream through `tauri::ipc::Channel`; secrets come in with a
//! connect plan and never go back out.

use leasehold_core::connect::{
    self, ConnectPlan, DestinationSummary, ForwardRequest, LinkStatus, LoginChoices, SavedTarget,
    TerminalOutput, TestReport,
};
use leasehold_core::ssh::{ConnectOptions, ForwardInfo, GeneratedKey, StepEvent, StepObserver};
use leasehold_core::usecase;
use leasehold_core::ApiError;
use tauri::ipc::{Channel, InvokeResponseBody};
use tracing::instrument;

use crate::state::AppState;

#[tauri::command(async)]
pub fn connect_choices() -> LoginChoices {
    connect::login_choices()
}

/// Not logged: a pasted line may carry a secret (`sshpass -p …`).
#[tauri::command(async)]
#[instrument(skip_all, err(Debug))]
pub fn connect_preview(ssh_command: String) -> Result<DestinationSummary, ApiError> {
    Ok(connect::preview(&ssh_command)?)
}

#[tauri::command(async)]
#[instrument(err(Debug))]
pub fn connect_generate_key() -> Result<GeneratedKey, ApiError> {
    Ok(connect::generate_key()?)
}

/// Test the connection step by step; on success the target is saved on the instance.
#[tauri::command]
#[instrument(skip(state, plan, on_step), err(Debug))]
pub async fn connect_test(
    state: tauri::State<'_, AppState>,
    instance: String,
    plan: ConnectPlan,
    on_step: Channel<StepEvent>,
) -> Result<TestReport, ApiError> {
    let options = ConnectOptions {
        observer: StepObserver::new(move |event| {
            let _ = on_step.send(event);
        }),
        ..ConnectOptions::default()
    };
    let mut conn = state.conn().await?;
    let now = state.now();
    Ok(connect::test_and_save(&mut conn, &state.live, &instance, &plan, options, now).await?)
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn connect_saved_target(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Option<SavedTarget>, ApiError> {
    Ok(connect::load_target(&mut *state.conn().await?, &instance).await?)
}

#[tauri::command]
pub async fn connect_status(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<LinkStatus, ApiError> {
    Ok(state.live.status(&instance).await)
}

#[tauri::command]
#[instrument(skip(state))]
pub async fn connect_disconnect(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<(), ApiError> {
    state.live.disconnect(&instance).await;
    Ok(())
}

/// A login shell on the instance; raw output bytes and then a JSON `TerminalExit` arrive on
/// `on_output`. Returns the terminal id for writes and resizes.
#[tauri::command]
#[instrument(skip(state, on_output), err(Debug))]
pub async fn terminal_open(
    state: tauri::State<'_, AppState>,
    instance: String,
    cols: u32,
    rows: u32,
    on_output: Channel<InvokeResponseBody>,
) -> Result<u64, ApiError> {
    let sink = raw_or_json(on_output);
    Ok(usecase::install::open_terminal(&state.context(), &instance, cols, rows, sink).await?)
}

#[tauri::command]
pub async fn terminal_write(
    state: tauri::State<'_, AppState>,
    id: u64,
    data: String,
) -> Result<(), ApiError> {
    Ok(state.live.terminals.write(id, data.as_bytes()).await?)
}

#[tauri::command]
pub async fn terminal_resize(
    state: tauri::State<'_, AppState>,
    id: u64,
    cols: u32,
    rows: u32,
) -> Result<(), ApiError> {
    Ok(state.live.terminals.resize(id, cols, rows).await?)
}

#[tauri::command]
pub async fn terminal_close(state: tauri::State<'_, AppState>, id: u64) -> Result<(), ApiError> {
    state.live.terminals.close(id).await;
    Ok(())
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn forward_open(
    state: tauri::State<'_, AppState>,
    instance: String,
    request: ForwardRequest,
) -> Result<ForwardInfo, ApiError> {
    Ok(usecase::forward::open(&state.context(), &instance, &request).await?)
}

/// Forwards of an instance; none when it is not connected (listing never dials).
#[tauri::command]
pub async fn forward_list(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Vec<ForwardInfo>, ApiError> {
    Ok(match state.live.get(&instance).await {
        Some(target) => target.forwards(),
        None => Vec::new(),
    })
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn forward_close(
    state: tauri::State<'_, AppState>,
    instance: String,
    id: u64,
) -> Result<(), ApiError> {
    Ok(usecase::forward::close(&state.context(), &instance, id).await?)
}

/// The terminal's output as the page reads it: raw bytes, then the exit as JSON.
fn raw_or_json(channel: Channel<InvokeResponseBody>) -> impl Fn(TerminalOutput) + Send + 'static {
    move |output: TerminalOutput| {
        let body = match output {
            TerminalOutput::Data(bytes) => InvokeResponseBody::Raw(bytes),
            TerminalOutput::Exited(exit) => match serde_json::to_string(&exit) {
                Ok(json) => InvokeResponseBody::Json(json),
                Err(_) => return,
            },
        };
        let _ = channel.send(body);
    }
}
