//! The keeper in the background: hunts left `hunting` when the app last closed are picked up
//! at start ([`start`]), one loop per instance at most (`hunt_runners::HuntRunners`, shared with
//! `keeper_hunt_start` and the tray), and every [`EVERY`] a hunt's success is told once (core
//! `keeper::notices::take`, which marks it told): a desktop notice and the saved webhooks.
//! Every [`VAST_EVERY`] each Vast.ai rental is looked at (`keeper::vast::watch`): Vast.ai's
//! own notices only reach a public HTTPS address, so an outbid or a host's price rise is found
//! here and told by the reminders. Each step is one call into core.

use std::time::Duration;

use leasehold_core::account::{Backoff, Endpoints};
use leasehold_core::keeper::{self, notices::HuntNotice};
use leasehold_core::store::Store;
use leasehold_core::webhook::{self, saved, WebhookMessage};
use tauri::Manager;

use crate::board::ReminderBoard;
use crate::state::AppState;

pub const EVERY: Duration = Duration::from_secs(10);
/// How often Vast.ai is asked about outbids and price rises: soon enough that an outbid GPU
/// can still be won back, rare enough for Vast.ai's rate limits.
pub const VAST_EVERY: Duration = Duration::from_secs(300);

/// Pick up the hunts under way, then tell each success once, every [`EVERY`].
pub fn start(app: tauri::AppHandle) {
    tauri::async_runtime::spawn(async move {
        let mut resumed = false;
        let mut vast_looked: Option<tokio::time::Instant> = None;
        let mut ticker = tokio::time::interval(EVERY);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let Some(state) = app.try_state::<AppState>() else {
                continue;
            };
            if !resumed {
                resumed = resume(&state).await;
            }
            if vast_looked.is_none_or(|at| at.elapsed() >= VAST_EVERY) {
                vast_looked = Some(tokio::time::Instant::now());
                look_at_vast(&state).await;
            }
            match keeper::notices::take(&state.store, state.now()).await {
                Ok(told) => {
                    for notice in told {
                        notify_desktop(&app, &notice);
                        send_webhooks(state.store.clone(), notice, state.now());
                    }
                }
                Err(err) => tracing::warn!(%err, "the keeper's notices could not be read"),
            }
        }
    });
}

async fn look_at_vast(state: &AppState) {
    let Ok(endpoints) = Endpoints::checked_from_env() else {
        return;
    };
    match keeper::vast::watch(&state.store, &endpoints, Backoff::default(), state.now()).await {
        Ok(round) => {
            for failed in round.failed {
                tracing::warn!(
                    instance = failed.instance,
                    code = failed.code,
                    "Vast.ai could not be asked about this rental"
                );
            }
        }
        Err(err) => tracing::warn!(%err, "the Vast.ai rentals could not be read"),
    }
}

/// Run again every hunt the database says is under way; `false` to try again next tick.
async fn resume(state: &AppState) -> bool {
    let Ok(endpoints) = Endpoints::checked_from_env() else {
        return true;
    };
    let kept = match keeper::list(&state.store, state.now()).await {
        Ok(kept) => kept,
        Err(err) => {
            tracing::warn!(%err, "the keeper's hunts could not be read");
            return false;
        }
    };
    for row in kept {
        if row.hunt.as_ref().is_some_and(|h| h.state == "hunting") {
            tracing::info!(instance = row.instance, "picking up the power-on hunt");
            state.hunts.spawn(
                state.store.clone(),
                state.clock.clone(),
                endpoints.clone(),
                row.instance,
            );
        }
    }
    true
}

/// The notice in the UI's language (`TrayLabels.keeper_on`), at this computer's local time.
fn notify_desktop(app: &tauri::AppHandle, notice: &HuntNotice) {
    use tauri_plugin_notification::NotificationExt;
    let labels = app
        .try_state::<ReminderBoard>()
        .map(|board| board.labels())
        .unwrap_or_default();
    let gpu = if notice.gpu_model.is_empty() {
        &notice.instance
    } else {
        &notice.gpu_model
    };
    let body = crate::tray::keeper_on_text(
        &labels,
        gpu,
        notice.price_per_hour,
        &notice.currency,
        notice.since,
    );
    let shown = app
        .notification()
        .builder()
        .title(format!("Leasehold · {}", notice.instance))
        .body(body)
        .show();
    if let Err(err) = shown {
        tracing::debug!(%err, "no desktop notification service");
    }
}

fn send_webhooks(store: Store, notice: HuntNotice, now: chrono::DateTime<chrono::Utc>) {
    tauri::async_runtime::spawn(async move {
        let client = match webhook::client() {
            Ok(client) => client,
            Err(err) => {
                tracing::warn!(%err, "no HTTP client for webhooks");
                return;
            }
        };
        let mut fields = serde_json::Map::new();
        fields.insert("instance".into(), notice.instance.clone().into());
        fields.insert("kind".into(), "gpu_powered_on".into());
        fields.insert("since".into(), notice.since.to_rfc3339().into());
        fields.insert(
            "price_per_hour".into(),
            notice.price_per_hour.to_string().into(),
        );
        fields.insert("currency".into(), notice.currency.clone().into());
        let message = WebhookMessage {
            title: format!("Leasehold · {}", notice.instance),
            text: notice.text.clone(),
            fields,
        };
        match saved::send_to_all(&client, &store, &message, now).await {
            Ok(results) => {
                for (hook, outcome) in results {
                    if let Err(err) = outcome {
                        tracing::warn!(id = hook.id, kind = hook.kind.as_str(), %err, "webhook not delivered");
                    }
                }
            }
            Err(err) => tracing::warn!(%err, "could not read the saved webhooks"),
        }
    });
}
