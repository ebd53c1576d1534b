//! One instance as Stop needs it, read once per request: the ledger (replayed once), the rules,
//! the provider, the saved provider id, the saved SSH target and the provider-account link.
//! Every route below takes a [`Resolved`] and never looks the instance up again.

use chrono::{DateTime, Utc};

use crate::account::{self, AccountRef, InstanceLink, PowerVerb, Provider, RemoteState};
use crate::billing::{ledger, BillingRules, InstanceDetail, InstanceState, ProviderKey};
use crate::ssh::{ConnectRequest, Secret};
use crate::store::Store;

use super::StopError;

/// Everything a stop, a power change or a look needs about one instance.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub name: String,
    /// The ledger's row id.
    pub instance_id: i64,
    /// The ledger as of the request (state, rules, timeline).
    pub detail: InstanceDetail,
    /// The ledger's provider preset, when it is one Leasehold knows.
    pub provider: Option<ProviderKey>,
    /// The provider's id saved for the API route (`provider_ids`).
    pub provider_id: Option<String>,
    /// How the saved SSH target is reached again, or why there is none.
    pub saved_target: Result<ConnectRequest, String>,
    /// The provider account it is linked to, with where that account's key may come from.
    pub link: Option<Link>,
}

/// A provider-account link as Stop uses it.
#[derive(Debug, Clone)]
pub struct Link {
    pub link: InstanceLink,
    /// The environment variable the account's key is read from where no keychain kept it.
    pub key_env: Option<String>,
}

impl Link {
    pub fn account(&self) -> &AccountRef {
        &self.link.account
    }

    /// The account's key: the keychain's, else its environment variable.
    pub fn key(&self) -> Result<Secret, account::AccountError> {
        account::key_of(&self.link.account, self.key_env.as_deref())
    }

    /// Whether the account can `verb` the instance now: the provider offers the verb, the last
    /// sync still saw it, and the key is at hand.
    pub fn ready_for(&self, verb: PowerVerb) -> bool {
        self.link.account.provider.verbs().contains(&verb)
            && self.link.remote_state != Some(RemoteState::Gone)
            && self.key().is_ok()
    }
}

impl Resolved {
    /// Read `name` once: one ledger replay, one look at each table Stop needs.
    pub async fn resolve(store: &Store, name: &str, now: DateTime<Utc>) -> Result<Self, StopError> {
        count_resolve();
        let detail = ledger::show(store, name, now).await?;
        let instance_id = detail.summary.id;
        let mut conn = store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        let provider_id = crate::store::provider_ids::find(&mut conn, instance_id).await?;
        let saved_target = match crate::connect::load_target(&mut conn, name).await {
            Ok(Some(saved)) => Ok(ConnectRequest {
                ssh_command: saved.ssh_command.clone(),
                identity_files: match &saved.auth {
                    crate::connect::AuthChoice::Key { path } => {
                        vec![std::path::PathBuf::from(path)]
                    }
                    _ => Vec::new(),
                },
                ..ConnectRequest::default()
            }),
            Ok(None) => Err("nothing saved".to_owned()),
            Err(err) => Err(err.to_string()),
        };
        let link = account::link_by_id(&mut conn, instance_id)
            .await?
            .map(|(link, key_env)| Link { link, key_env });
        Ok(Self {
            name: detail.summary.name.clone(),
            instance_id,
            provider: ProviderKey::parse(&detail.summary.provider).ok(),
            detail,
            provider_id,
            saved_target,
            link,
        })
    }

    pub fn state(&self) -> Option<InstanceState> {
        self.detail.summary.state
    }

    pub fn rules(&self) -> &BillingRules {
        &self.detail.rules
    }

    /// Refuse an instance the ledger does not have running.
    pub fn require_running(&self) -> Result<(), StopError> {
        match self.state() {
            Some(InstanceState::Created | InstanceState::Running | InstanceState::NoGpu) => Ok(()),
            state => Err(StopError::NotRunning {
                name: self.name.clone(),
                state: state.map_or("unknown", InstanceState::as_str),
            }),
        }
    }

    /// The provider whose API stops it with a saved id and key (RunPod, Vast.ai).
    pub fn stop_api(&self) -> Option<Provider> {
        self.provider.and_then(|p| p.power_off().api)
    }

    /// The link, when its account can `verb` the instance now.
    pub fn link_ready_for(&self, verb: PowerVerb) -> Option<&Link> {
        self.link.as_ref().filter(|link| link.ready_for(verb))
    }

    /// The saved SSH target, or `NoSavedTarget`.
    pub fn saved_request(&self) -> Result<ConnectRequest, StopError> {
        self.saved_target
            .clone()
            .map_err(|detail| StopError::NoSavedTarget {
                name: self.name.clone(),
                detail,
            })
    }
}

thread_local! {
    static RESOLVES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn count_resolve() {
    RESOLVES.with(|n| n.set(n.get() + 1));
}

/// How many times an instance was resolved (its ledger replayed) on this thread: tests check
/// that each request reads it once. Under a current-thread runtime (`#[tokio::test]`) every
/// resolve of a test runs on its thread.
#[doc(hidden)]
pub fn resolves_on_this_thread() -> u64 {
    RESOLVES.with(std::cell::Cell::get)
}
