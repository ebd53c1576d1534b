//! "Already stopped at the provider — record it": the secondary way, for when the user stopped
//! the machine in the provider's console. The ledger takes the user's word, and then Leasehold
//! looks for itself (the provider route, else a fresh SSH login): a machine that still answers
//! is recorded as such, and the reminders raise `stop_contradicted` until it is dealt with, so
//! a mistaken "it's off" never silences the alarms while the meter runs.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::api::{ApiEndpoints, ProviderRoute};
use super::instance::Resolved;
use super::{check_route, StopError, StopVia};
use crate::billing::{ledger, PowerAction};
use crate::clock::Clock;
use crate::ssh::ConnectRequest;
use crate::store::stop_checks::{self, StopCheckRow};
use crate::store::Store;

/// How to look whether the machine still answers.
pub enum Look {
    /// A fresh SSH login (never the app's open link, which may not have noticed yet).
    Ssh(ConnectRequest),
    /// The provider's status of the instance, through the provider route (its linked account,
    /// else the saved id and key): only an answer about the same id counts.
    Api {
        endpoints: ApiEndpoints,
        route: ProviderRoute,
    },
}

impl Look {
    pub fn via(&self) -> StopVia {
        match self {
            Self::Ssh(_) => StopVia::Ssh,
            Self::Api { .. } => StopVia::Api,
        }
    }

    /// Whether the machine answers now. Over the API anything but "stopped" counts as
    /// answering (the provider still runs it); an API that cannot be asked proves nothing.
    async fn answers(&self, now: DateTime<Utc>) -> Result<bool, StopError> {
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
            Self::Api { endpoints, route } => route.still_runs(endpoints, now).await,
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

impl Resolved {
    /// The way to look at it after a hand-recorded stop, as the plan's `check_by` says: the
    /// provider route when set up, else the saved SSH target, else none.
    pub fn look(&self, endpoints: &ApiEndpoints) -> Option<Look> {
        let route = ProviderRoute::for_look(self);
        let facts = super::RouteFacts {
            command: false,
            api: route.is_some(),
            api_ready: route.is_some(),
            ssh_target_saved: self.saved_target.is_ok(),
        };
        match check_route(facts)? {
            StopVia::Api => route.map(|route| Look::Api {
                endpoints: endpoints.clone(),
                route,
            }),
            StopVia::Ssh => self.saved_target.clone().ok().map(Look::Ssh),
        }
    }
}

/// The way to look at `name` after a hand-recorded stop ([`Resolved::look`]).
pub async fn look_for(
    store: &Store,
    name: &str,
    endpoints: &ApiEndpoints,
    now: DateTime<Utc>,
) -> Result<Option<Look>, StopError> {
    Ok(Resolved::resolve(store, name, now).await?.look(endpoints))
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
    let resolved = Resolved::resolve(store, name, clock.now()).await?;
    record_resolved(store, &resolved, look, clock).await
}

/// The app's "record it": `name` resolved once, the stop recorded, then the look its plan
/// offers.
pub async fn record_by_hand_and_look(
    store: &Store,
    name: &str,
    endpoints: &ApiEndpoints,
    clock: &dyn Clock,
) -> Result<HandStop, StopError> {
    let resolved = Resolved::resolve(store, name, clock.now()).await?;
    let look = resolved.look(endpoints);
    record_resolved(store, &resolved, look.as_ref(), clock).await
}

async fn record_resolved(
    store: &Store,
    resolved: &Resolved,
    look: Option<&Look>,
    clock: &dyn Clock,
) -> Result<HandStop, StopError> {
    resolved.require_running()?;
    let stopped_at = clock.now();
    ledger::record(store, &resolved.name, PowerAction::Stop, stopped_at).await?;
    let check = match look {
        Some(look) => {
            Some(check_and_keep(store, resolved.instance_id, look, LOOK_AGAIN_AFTER, clock).await?)
        }
        None => None,
    };
    Ok(HandStop {
        instance: resolved.name.clone(),
        stopped_at,
        check,
    })
}

/// A second look this long after a silent first one: a console's stop takes a moment.
pub const LOOK_AGAIN_AFTER: Duration = Duration::from_secs(3);

/// The app's "look again": `name` resolved once, then the look its plan offers, kept as its
/// newest stop check; `None` when there is no way to look.
pub async fn check_again(
    store: &Store,
    name: &str,
    endpoints: &ApiEndpoints,
    clock: &dyn Clock,
) -> Result<Option<HandCheck>, StopError> {
    let resolved = Resolved::resolve(store, name, clock.now()).await?;
    let Some(look) = resolved.look(endpoints) else {
        return Ok(None);
    };
    Ok(Some(
        check_and_keep(store, resolved.instance_id, &look, LOOK_AGAIN_AFTER, clock).await?,
    ))
}

/// Look at `name` (twice, `again` apart, when the first look gets no answer: an answer is
/// proof, a silence may be a blip) and keep the result as its newest stop check.
pub async fn check_recorded_stop(
    store: &Store,
    name: &str,
    look: &Look,
    again: Duration,
    clock: &dyn Clock,
) -> Result<HandCheck, StopError> {
    let instance_id = {
        let mut conn = store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        crate::store::ledger::find_instance(&mut conn, name)
            .await?
            .ok_or_else(|| crate::billing::BillingError::UnknownInstance {
                name: name.to_owned(),
            })?
            .id
    };
    check_and_keep(store, instance_id, look, again, clock).await
}

async fn check_and_keep(
    store: &Store,
    instance_id: i64,
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
    stop_checks::upsert(
        &mut conn,
        &StopCheckRow {
            instance_id,
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
