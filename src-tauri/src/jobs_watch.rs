//! The background job watch: every [`EVERY`], core `install::watch::JobWatch` reads again the
//! running jobs of the instances with an open connection. Each job that ended is told to the
//! window (the `job-ended` event: the instance page's jobs card and the Install page reload
//! their lists) and to the desktop, in the words the UI sent (`TrayLabels`).

use std::time::Duration;

use leasehold_core::install::watch;
use leasehold_core::job::record::JobRecord;
use leasehold_core::job::JobState;
use tauri::{AppHandle, Emitter, Manager};

use crate::board::{ReminderBoard, TrayLabels};
use crate::state::AppState;

/// One status read per running job and connected instance this often: a finished install is
/// told within this time, and the cost is one short command on a connection already open.
pub const EVERY: Duration = Duration::from_secs(10);
/// The event the window listens to; its payload is the ended job's `JobRecord`.
pub const JOB_ENDED_EVENT: &str = "job-ended";

/// Start the watch (once the database is open).
pub fn start(app: tauri::AppHandle) {
    tauri::async_runtime::spawn(async move {
        let mut ticker = tokio::time::interval(EVERY);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut jobs = watch::JobWatch::default();
        loop {
            ticker.tick().await;
            let Some(state) = app.try_state::<AppState>() else {
                continue;
            };
            match jobs
                .round(&state.store, &state.live, state.clock.as_ref())
                .await
            {
                Ok(ended) => ended.iter().for_each(|job| tell(&app, job)),
                Err(err) => tracing::warn!(%err, "background job watch"),
            }
        }
    });
}

fn tell(app: &AppHandle, job: &JobRecord) {
    tracing::info!(job = %job.id, state = job.state.as_str(), "job ended");
    if let Err(err) = app.emit(JOB_ENDED_EVENT, job) {
        tracing::warn!(%err, "could not tell the window about an ended job");
    }
    let labels = app
        .try_state::<ReminderBoard>()
        .map(|board| board.labels())
        .unwrap_or_default();
    use tauri_plugin_notification::NotificationExt;
    let shown = app
        .notification()
        .builder()
        .title(format!(
            "Leasehold · {}",
            job.instance.as_deref().unwrap_or(&job.target)
        ))
        .body(sentence(&labels, job))
        .show();
    if let Err(err) = shown {
        tracing::debug!(%err, "no desktop notification service");
    }
}

/// "pytorch finished on gpu-1", in the UI's language.
fn sentence(labels: &TrayLabels, job: &JobRecord) -> String {
    let pattern = match job.state {
        JobState::Succeeded => &labels.job_succeeded,
        JobState::Failed => &labels.job_failed,
        JobState::Cancelled => &labels.job_cancelled,
        JobState::Lost | JobState::Running => &labels.job_lost,
    };
    let name = job
        .recipe
        .as_deref()
        .or(job.name.as_deref())
        .unwrap_or(&job.id);
    pattern
        .replace("{job}", name)
        .replace("{instance}", job.instance.as_deref().unwrap_or(&job.target))
        .replace(
            "{code}",
            &job.exit_code.map(|c| c.to_string()).unwrap_or_default(),
        )
}
