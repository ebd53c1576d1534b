//! Provider accounts: the renter adds a provider's API key once, and Leasehold sees every
//! instance the provider bills, however it was created.
//!
//! - [`runpod`], [`vast`], [`lambda`], [`autodl`]: one file per provider API, each reading the
//!   provider's documented JSON into [`remote::RemoteInstance`] (every value checked: a
//!   provider's answer is untrusted input) and making its power calls.
//! - [`client`]: the one place that picks the provider file for a call.
//! - [`sync`]: the provider's listing against the ledger — imports, state changes as ledger
//!   events, price changes as rule changes, SSH endpoint changes — computed first and written
//!   in one transaction, so a sync that fails midway records nothing.
//! - [`link`]: which account and provider id an instance is linked to. Powering it through the
//!   account (on, off, release, confirmed by the provider) is the `stop` module's, which calls
//!   [`client`].
//! - [`reconcile`]: the ledger's cost per day beside what the provider charged.
//!
//! Keys live only in the OS keychain, as `provider-key:PROVIDER:LABEL` (the one naming: Stop's
//! key of a provider is its `default` account's); the database (`store::accounts`) keeps the
//! provider, the label and, for machines without a keychain, the name of the environment
//! variable the key came from.
//! Adding a provider: a file like [`runpod`], a [`Provider`] variant, its row in
//! [`providers`] and its arms in [`client`]; [`providers`] lists the rest.
//!
//! Also: [`remote`] is the one checked shape every client reads into. `plan` plans a sync per
//! instance (savepoints; an instance missing from a listing is looked up before it counts as
//! released). [`held`]: price changes 3× or more away from the rules, held by the sync until the
//! renter accepts them. Powering goes through `stop`, which this module never imports.

pub mod autodl;
pub mod client;
mod error;
pub mod held;
pub mod http;
pub mod lambda;
pub mod link;
mod plan;
pub mod providers;
pub mod reconcile;
pub mod remote;
pub mod runpod;
pub mod sync;
pub mod vast;
pub mod vast_bid;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::billing::ProviderKey;
use crate::ssh::{forget_secret, store_secret, stored_secret, Secret};
use crate::store::accounts as repo;
use crate::store::Store;

pub use error::AccountError;
pub use http::Backoff;
pub use link::{acknowledge, link_by_id, link_of, InstanceLink};
pub use remote::{PowerVerb, RemoteState};

/// A provider whose API Leasehold can sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Provider {
    Runpod,
    Vast,
    Lambda,
    Autodl,
}

impl Provider {
    pub const ALL: [Self; 4] = [Self::Runpod, Self::Vast, Self::Lambda, Self::Autodl];

    pub fn as_str(self) -> &'static str {
        self.row().key
    }

    pub fn display(self) -> &'static str {
        self.row().display
    }

    pub fn parse(text: &str) -> Result<Self, AccountError> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == text.trim().to_ascii_lowercase())
            .ok_or_else(|| AccountError::UnknownProvider(remote::clean_text(text, 40)))
    }

    /// The ledger's provider preset of this provider's instances.
    pub fn preset(self) -> ProviderKey {
        self.row().preset
    }

    /// The provider whose API syncs instances of this preset.
    pub fn of_preset(key: ProviderKey) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.preset() == key)
    }

    /// What the provider's prices and charges are in.
    pub fn currency(self) -> &'static str {
        self.row().currency
    }

    /// The power changes its API offers at all (Lambda has no stop).
    pub fn verbs(self) -> &'static [PowerVerb] {
        self.row().verbs
    }

    /// The provider's console, for what its API cannot do.
    pub fn console(self) -> &'static str {
        self.row().console
    }

    fn default_base(self) -> &'static str {
        self.row().default_base
    }

    fn env_var(self) -> &'static str {
        self.row().base_var
    }
}

/// Where each provider's API lives: scheme, host and port only; requests go to the documented
/// paths under it. A provider not named here answers at its row's default base, so a new
/// provider needs nothing in this type.
#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    bases: HashMap<Provider, String>,
}

/// What a refused base-URL variable leaves as the provider's base: [`http::Api::new`] refuses
/// it with the variable's name, so no request ever falls back to the real API.
pub(crate) const REFUSED_BASE: &str = "refused:";

impl Endpoints {
    /// The defaults, or `LEASEHOLD_<PROVIDER>_API_URL` where set (a proxy, or a test's
    /// stand-in). A refused variable ([`origin_of`]) makes every call to that provider fail
    /// naming the variable; [`Endpoints::checked_from_env`] refuses it at once.
    pub fn from_env() -> Self {
        let mut endpoints = Self::default();
        for provider in Provider::ALL {
            if let Ok(value) = std::env::var(provider.env_var()) {
                let base = match origin_of(&value) {
                    Ok(origin) => origin,
                    Err(why) => {
                        tracing::warn!(var = provider.env_var(), why, "refused base URL");
                        format!("{REFUSED_BASE}{}", provider.env_var())
                    }
                };
                endpoints.bases.insert(provider, base);
            }
        }
        endpoints
    }

    /// [`Endpoints::from_env`], or the error naming the first refused variable (exit 2).
    pub fn checked_from_env() -> Result<Self, AccountError> {
        for provider in Provider::ALL {
            if let Ok(value) = std::env::var(provider.env_var()) {
                origin_of(&value).map_err(|why| AccountError::BadEndpoint {
                    var: provider.env_var().to_owned(),
                    why: why.to_owned(),
                })?;
            }
        }
        Ok(Self::from_env())
    }

    pub fn base(&self, provider: Provider) -> &str {
        self.bases
            .get(&provider)
            .map_or(provider.default_base(), String::as_str)
    }

    /// These endpoints with `provider` at `base` (a proxy, or a test's stand-in).
    #[must_use]
    pub fn with(mut self, provider: Provider, base: &str) -> Self {
        self.bases
            .insert(provider, base.trim_end_matches('/').to_owned());
        self
    }

    /// Every provider at one base (a test's stand-in).
    pub fn all_at(base: &str) -> Self {
        Provider::ALL
            .into_iter()
            .fold(Self::default(), |endpoints, provider| {
                endpoints.with(provider, base)
            })
    }
}

/// `scheme://host[:port]` of a base URL: https anywhere, http only on loopback, and nothing
/// after the port (requests go to the documented paths; a path, query or user name there is a
/// mistake worth saying). The error says why in a few words.
pub fn origin_of(value: &str) -> Result<String, &'static str> {
    let url = url::Url::parse(value.trim()).map_err(|_| "not a URL")?;
    let loopback = match url.host().ok_or("no host")? {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    };
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err("plain http is accepted only for this computer (127.0.0.1, localhost)")
        }
        _ => return Err("not an http(s) URL"),
    }
    if !matches!(url.path(), "" | "/") {
        return Err("a path where only scheme, host and port belong");
    }
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err("a query, fragment or user name where only scheme, host and port belong");
    }
    Ok(url.origin().ascii_serialization())
}

/// One account: a provider and the renter's label for it (`default` when none was given).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AccountRef {
    pub provider: Provider,
    pub label: String,
}

pub const DEFAULT_LABEL: &str = "default";

impl AccountRef {
    /// `PROVIDER[:LABEL]`.
    pub fn parse(text: &str) -> Result<Self, AccountError> {
        let (provider, label) = match text.split_once(':') {
            Some((p, l)) => (p, l),
            None => (text, DEFAULT_LABEL),
        };
        Ok(Self {
            provider: Provider::parse(provider)?,
            label: check_label(label)?,
        })
    }

    /// The keychain entry of the account's API key: `provider-key:PROVIDER:LABEL`, the one
    /// naming every provider key uses (Stop's key of a provider is its `default` account's).
    pub fn keychain_entry(&self) -> String {
        format!("provider-key:{}:{}", self.provider.as_str(), self.label)
    }
}

pub fn check_label(label: &str) -> Result<String, AccountError> {
    let label = label.trim();
    let ok = !label.is_empty()
        && label.chars().count() <= 40
        && label
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(label.to_owned())
    } else {
        Err(AccountError::BadLabel(remote::clean_text(label, 40)))
    }
}

/// An account as the list shows it (no key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AccountSummary {
    pub provider: Provider,
    pub label: String,
    pub added_at: DateTime<Utc>,
    pub last_sync_at: Option<DateTime<Utc>>,
    /// What went wrong at the last sync, in plain words; `null` when it went through.
    pub last_error: Option<String>,
    /// Instances linked to it that are not released.
    #[ts(type = "number")]
    pub instances: u64,
    /// What the API can do for its instances.
    pub verbs: Vec<PowerVerb>,
    /// Whether the provider's API lists every instance (AutoDL's lists Pro instances only).
    pub lists_everything: bool,
}

/// The account's key: the keychain's, else the environment variable it was added from.
pub fn key_of(account: &AccountRef, key_env: Option<&str>) -> Result<Secret, AccountError> {
    stored_secret(&account.keychain_entry())
        .or_else(|| {
            key_env
                .and_then(|var| std::env::var(var).ok())
                .filter(|v| !v.trim().is_empty())
                .map(|v| Secret::new(v.trim()))
        })
        .ok_or_else(|| AccountError::NoKey {
            provider: account.provider.display(),
            label: account.label.clone(),
            env: key_env.unwrap_or("VAR").to_owned(),
        })
}

/// The key in environment variable `var`.
pub fn key_from_env(var: &str) -> Result<Secret, AccountError> {
    std::env::var(var)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .map(Secret::new)
        .ok_or_else(|| AccountError::NoKeyInEnv(remote::clean_text(var, 60)))
}

/// What adding an account did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AddReport {
    pub account: AccountSummary,
    /// False when no keychain could keep the key: it is then read from the environment
    /// variable at each sync.
    pub key_in_keychain: bool,
}

/// Add an account: the key is checked with one read-only call first, then kept in the keychain;
/// a refused key saves nothing.
pub async fn add(
    store: &Store,
    account: &AccountRef,
    key: &Secret,
    key_env: Option<&str>,
    endpoints: &Endpoints,
    now: DateTime<Utc>,
) -> Result<AddReport, AccountError> {
    // The one place a label is judged: the app's form and the CLI's flag both land here.
    let account = &AccountRef {
        label: check_label(&account.label)?,
        ..account.clone()
    };
    {
        let mut conn = store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        if repo::find_account(&mut conn, account.provider.as_str(), &account.label)
            .await?
            .is_some()
        {
            return Err(AccountError::DuplicateAccount {
                provider: account.provider.display(),
                label: account.label.clone(),
            });
        }
    }
    let api = client::api(account.provider, endpoints, key.clone(), Backoff::default())?;
    client::check_key(&api).await?;
    let key_in_keychain = match store_secret(&account.keychain_entry(), key) {
        Ok(()) => true,
        Err(err) if key_env.is_some() => {
            tracing::warn!(%err, "no keychain; the key will be read from the environment");
            false
        }
        Err(err) => return Err(AccountError::Keychain(err.to_string())),
    };
    let mut tx = store.write().await?;
    repo::insert_account(
        &mut tx,
        account.provider.as_str(),
        &account.label,
        key_env,
        now,
    )
    .await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    let account = list(store)
        .await?
        .into_iter()
        .find(|a| a.provider == account.provider && a.label == account.label)
        .ok_or_else(|| AccountError::UnknownAccount {
            provider: account.provider.as_str().to_owned(),
            label: account.label.clone(),
        })?;
    Ok(AddReport {
        account,
        key_in_keychain,
    })
}

/// Every account, by provider then label.
pub async fn list(store: &Store) -> Result<Vec<AccountSummary>, AccountError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let rows = repo::list_accounts(&mut conn).await?;
    let links = repo::all_links(&mut conn).await?;
    let mut out = Vec::new();
    for row in rows {
        // A row of a provider this version does not know is left out, not an error.
        let Ok(provider) = Provider::parse(&row.provider) else {
            continue;
        };
        let instances = links
            .iter()
            .filter(|l| l.account_id == row.id && l.remote_state != RemoteState::Gone.as_str())
            .count() as u64;
        out.push(AccountSummary {
            provider,
            label: row.label,
            added_at: row.added_at,
            last_sync_at: row.last_sync_at,
            // Written redacted; read through the patterns again for rows kept before that.
            last_error: row
                .last_error
                .map(|e| crate::redact::redact_secrets(&e, None)),
            instances,
            verbs: provider.verbs().to_vec(),
            lists_everything: provider.row().lists_everything,
        });
    }
    Ok(out)
}

/// What removing an account did with its key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AccountRemoved {
    pub account: AccountRef,
    /// True when the keychain no longer holds the key (or never did).
    pub key_forgotten: bool,
    /// Why the keychain could not forget it, in plain words; `null` when it did.
    pub keychain_error: Option<String>,
}

/// Remove an account and its key; the instances it imported stay in the ledger, unlinked. The
/// account is gone once this returns `Ok`, whatever the keychain did (the report says).
pub async fn remove(store: &Store, account: &AccountRef) -> Result<AccountRemoved, AccountError> {
    let mut tx = store.write().await?;
    let row = repo::find_account(&mut tx, account.provider.as_str(), &account.label)
        .await?
        .ok_or_else(|| AccountError::UnknownAccount {
            provider: account.provider.as_str().to_owned(),
            label: account.label.clone(),
        })?;
    repo::delete_account(&mut tx, row.id).await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    let keychain_error = forget_secret(&account.keychain_entry())
        .err()
        .map(|e| e.to_string());
    Ok(AccountRemoved {
        account: account.clone(),
        key_forgotten: keychain_error.is_none(),
        keychain_error,
    })
}

/// The stored account row of `account`, or `UnknownAccount`.
pub(crate) async fn row_of(
    conn: &mut sqlx::SqliteConnection,
    account: &AccountRef,
) -> Result<repo::AccountRow, AccountError> {
    repo::find_account(conn, account.provider.as_str(), &account.label)
        .await?
        .ok_or_else(|| AccountError::UnknownAccount {
            provider: account.provider.as_str().to_owned(),
            label: account.label.clone(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_refs_and_labels() {
        let a = AccountRef::parse("runpod").unwrap();
        assert_eq!(
            (a.provider, a.label.as_str()),
            (Provider::Runpod, "default")
        );
        let b = AccountRef::parse("vast:lab-2").unwrap();
        assert_eq!((b.provider, b.label.as_str()), (Provider::Vast, "lab-2"));
        assert!(matches!(
            AccountRef::parse("aws"),
            Err(AccountError::UnknownProvider(_))
        ));
        assert!(matches!(
            AccountRef::parse("vast:a b"),
            Err(AccountError::BadLabel(_))
        ));
    }

    #[test]
    fn each_provider_answers_at_its_row_base_unless_pointed_elsewhere() {
        let endpoints = Endpoints::default().with(Provider::Vast, "http://127.0.0.1:8080/");
        assert_eq!(endpoints.base(Provider::Vast), "http://127.0.0.1:8080");
        for provider in Provider::ALL.into_iter().filter(|p| *p != Provider::Vast) {
            assert_eq!(endpoints.base(provider), provider.row().default_base);
        }
        let stand_in = Endpoints::all_at("http://127.0.0.1:9/");
        for provider in Provider::ALL {
            assert_eq!(stand_in.base(provider), "http://127.0.0.1:9");
        }
    }

    #[test]
    fn base_urls_are_an_origin_or_refused_with_a_reason() {
        assert_eq!(
            origin_of("https://rest.runpod.io/").as_deref(),
            Ok("https://rest.runpod.io")
        );
        assert_eq!(
            origin_of("http://127.0.0.1:8080").as_deref(),
            Ok("http://127.0.0.1:8080")
        );
        // Issue 35: a path is refused, not silently dropped.
        assert!(origin_of("https://rest.runpod.io/v1")
            .unwrap_err()
            .contains("path"));
        assert!(origin_of("http://example.com")
            .unwrap_err()
            .contains("plain http"));
        assert!(origin_of("https://user@example.com").is_err());
        assert!(origin_of("https://example.com/?x=1").is_err());
        assert_eq!(origin_of("ftp://x"), Err("not an http(s) URL"));
        assert_eq!(origin_of("garbage"), Err("not a URL"));
    }
}
