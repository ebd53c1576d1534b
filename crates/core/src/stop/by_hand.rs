//! "Already stopped at the provider — record it": the secondary way, for when the user stopped
//! the machine in the provider's console. The ledger takes the user's word, and then Leasehold
//! looks for itself (the provider's API, else a fresh SSH login): a machine that still answers
//! is recorded as such, and the reminders raise `stop_contradicted` until it is dealt with, so
//! a mistaken "it's off" never silences the alarms while the meter runs.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::api::{self, PowerState};
use super::{
    check_route, provider_id, running_provider, saved_request, stored_api_key, ApiEndpoints,
    RouteFacts, StopError, StopVia,
};
use crate::billing::{ledger, PowerAction, ProviderKey, StopApi};
use crate::clock::Clock;
use crate::ssh::{ConnectRequest, Secret};
use crate::store::stop_checks::{self, StopCheckRow};
use crate::store::Store;

/// How to look whether the machine still answers.
pub enum Look {
    /// A fresh SSH login (never the app's open link, which may not have noticed yet).
    Ssh(ConnectRequest),
    /// The provider's status of the instance, asked through the provider account it is
    /// linked to.
    Account {
        store: Store,
        name: String,
        endpoints: ApiEndpoints,
    },
    /// The provider's own status of the instance.
    Api {
        endpoints: ApiEndpoints,
        api: StopApi,
        id: String,
        key: Secret,
    },
}

impl Look {
    pub fn via(&self) -> StopVia {
        match self {
            Self::Ssh(_) => StopVia::Ssh,
            Self::Api { .. } | Self::Account { .. } => StopVia::Api,
        }
    }

    /// Whether the machine answers now. Over the API anything but "stopped" counts as
    /// answering (the provider still runs it); an API that cannot be asked proves nothing.
    async fn answers(&self, now: chrono::DateTime<chrono::Utc>) -> Result<bool, StopError> {
        match self {
            Self::Ssh(request) => {
                let request = ConnectRequest {
                    connect_timeout: Some(Duration::from_secs(5)),
                    ..request.clone()
                };
                Ok(match request.connect().await {
                    Ok(target) => {
                        target.disconnect().await;
                        true
                    }
                    Err(err) => sshd_answered(&err),
                })
            }
            Self::Account {
                store,
                name,
                endpoints,
            } => Ok(matches!(
                crate::account::power::state_now(store, name, endpoints, now).await?,
                Some(state) if state != crate::account::RemoteState::Stopped
            )),
            Self::Api {
                endpoints,
                api,
                id,
                key,
            } => Ok(matches!(
                api::power_state(endpoints, *api, id, key, now).await?,
                PowerState::NotYet(_)
            )),
        }
    }
}

/// Whether a failed login still proves the machine is up: an sshd that refused the key or
/// showed another host key answered. A connection that got nowhere (refused, unreachable, timed
/// out, dropped during the handshake) counts as silence, and so does a failure on this side (a
/// key that cannot be read), which says nothing either way.
fn sshd_answered(err: &crate::ssh::SshError) -> bool {
    use crate::Coded;
    matches!(
        err.code(),
        "ssh.host_key_unknown"
            | "ssh.host_key_changed"
            | "ssh.host_key_revoked"
            | "ssh.auth_failed"
    )
}

/// What a look after a hand-recorded stop found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct HandCheck {
    pub via: StopVia,
    /// The machine still answered: the provider may still be billing.
    pub answered: bool,
    pub checked_at: DateTime<Utc>,
}

/// A stop recorded by hand, and what the look afterwards found (`null`: no way to look).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct HandStop {
    pub instance: String,
    pub stopped_at: DateTime<Utc>,
    pub check: Option<HandCheck>,
}

/// The way to look at `name` after a hand-recorded stop, as the plan's `check_by` says: its
/// linked provider account, else the API when its id and key are saved, else the saved SSH
/// target, else none.
pub async fn look_for(
    store: &Store,
    name: &str,
    endpoints: &ApiEndpoints,
    now: DateTime<Utc>,
) -> Result<Option<Look>, StopError> {
    let detail = ledger::show(store, name, now).await?;
    if crate::account::power::ready_for(store, name, crate::account::PowerVerb::Off)
        .await?
        .is_some()
    {
        return Ok(Some(Look::Account {
            store: store.clone(),
            name: name.to_owned(),
            endpoints: endpoints.clone(),
        }));
    }
    let api = ProviderKey::parse(&detail.summary.provider)
        .ok()
        .and_then(|p| p.power_off().api);
    let id = provider_id(store, name).await?;
    let key = api.and_then(stored_api_key);
    let request = saved_request(store, name).await.ok();
    let facts = RouteFacts {
        command: false,
        api: api.is_some(),
        api_ready: id.is_some() && key.is_some(),
        ssh_target_saved: request.is_some(),
    };
    Ok(match check_route(facts) {
        Some(StopVia::Api) => match (api, id, key) {
            (Some(api), Some(id), Some(key)) => Some(Look::Api {
                endpoints: endpoints.clone(),
                api,
                id,
                key,
            }),
            _ => None,
        },
        Some(StopVia::Ssh) => request.map(Look::Ssh),
        None => None,
    })
}

/// Record `stopped` now on the user's word, then look (when `look` is given) and keep what it
/// found. The stop stays recorded whatever the look says: the user saw the console; the
/// reminder carries the contradiction.
#[tracing::instrument(skip(store, look, clock), err)]
pub async fn record_by_hand(
    store: &Store,
    name: &str,
    look: Option<&Look>,
    clock: &dyn Clock,
) -> Result<HandStop, StopError> {
    running_provider(store, name, clock.now()).await?;
    let stopped_at = clock.now();
    ledger::record(store, name, PowerAction::Stop, stopped_at).await?;
    let check = match look {
        Some(look) => Some(check_recorded_stop(store, name, look, LOOK_AGAIN_AFTER, clock).await?),
        None => None,
    };
    Ok(HandStop {
        instance: name.to_owned(),
        stopped_at,
        check,
    })
}

/// A second look this long after a silent first one: a console's stop takes a moment.
pub const LOOK_AGAIN_AFTER: Duration = Duration::from_secs(3);

/// Look at `name` (twice, `again` apart, when the first look gets no answer: an answer is
/// proof, a silence may be a blip) and keep the result as its newest stop check.
pub async fn check_recorded_stop(
    store: &Store,
    name: &str,
    look: &Look,
    again: Duration,
    clock: &dyn Clock,
) -> Result<HandCheck, StopError> {
    let mut answered = look.answers(clock.now()).await?;
    if !answered && look.via() == StopVia::Ssh {
        tokio::time::sleep(again).await;
        answered = look.answers(clock.now()).await?;
    }
    let check = HandCheck {
        via: look.via(),
        answered,
        checked_at: clock.now(),
    };
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let Some(row) = crate::store::ledger::find_instance(&mut conn, name).await? else {
        return Err(StopError::Billing(
            crate::billing::BillingError::UnknownInstance {
                name: name.to_owned(),
            },
        ));
    };
    stop_checks::upsert(
        &mut conn,
        &StopCheckRow {
            instance_id: row.id,
            checked_at: check.checked_at,
            answered: check.answered,
            via: check.via_str().to_owned(),
        },
    )
    .await?;
    Ok(check)
}

impl HandCheck {
    fn via_str(&self) -> &'static str {
        match self.via {
            StopVia::Ssh => "ssh",
            StopVia::Api => "api",
        }
    }
}
