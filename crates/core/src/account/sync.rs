//! A sync: read the provider's listing, compare it with the ledger, write what changed.
//!
//! Every request is made first (the listing, then a direct look at each linked instance it left
//! out); [`plan`] is a pure function from those answers, what the last sync saw and the ledger
//! to the changes of each instance; they are written in one transaction, each instance's under
//! its own savepoint. So a sync that fails midway (the provider stops answering on page 3, the
//! laptop is killed) records nothing, one instance whose changes cannot be written is skipped
//! with a warning while the others are recorded, and a second sync with nothing changed records
//! nothing either.
//!
//! Times: a change is dated at the provider's timestamp where it gives one, else when this sync
//! saw it — never before the last sync that saw the old state, never before the ledger's last
//! event, never after now.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use sqlx::Connection;
use ts_rs::TS;

use super::remote::{Listing, RemoteState, SshEndpoint};
use super::{client, key_of, row_of, AccountError, AccountRef, Backoff, Endpoints, Provider};
use crate::billing::ledger;
use crate::connect::{self, AuthChoice, ConnectPlan};
use crate::ssh::Secret;
use crate::store::accounts::{self as repo, LinkRow, NewLink};
use crate::store::Store;

/// One ledger event a sync recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SyncEvent {
    pub instance: String,
    /// `started`, `stopped`, `released` or `rule_changed`.
    pub kind: String,
    pub at: DateTime<Utc>,
}

/// What one account's sync did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AccountSyncReport {
    pub provider: Provider,
    pub label: String,
    /// Names given to instances nobody had recorded.
    pub imported: Vec<String>,
    pub events: Vec<SyncEvent>,
    /// Linked instances with nothing to record.
    #[ts(type = "number")]
    pub unchanged: u64,
    pub warnings: Vec<String>,
    /// Requests the provider answered for the listing.
    pub requests: u32,
    /// Price changes held until the renter accepts them (`leasehold account accept NAME`).
    pub held: Vec<HeldPrice>,
}

pub use super::plan::{
    far_apart, per_gpu_price, plan, unique_name, Change, Context, Group, Held, HeldPrice, Known,
    LinkFacts, Looks, Plan, Unlinked,
};

/// Read what the ledger knows of one linked or id-carrying instance. `None` (with a warning)
/// when its ledger cannot be read: one broken instance never stops the sync of the others.
async fn known_of(
    store: &Store,
    instance_id: i64,
    name: &str,
    remote_id: &str,
    link: Option<&LinkRow>,
    now: DateTime<Utc>,
    warnings: &mut Vec<String>,
) -> Option<Known> {
    let detail = match ledger::show(store, name, now).await {
        Ok(detail) => detail,
        Err(err) => {
            warnings.push(format!(
                "{name}: skipped, its ledger cannot be read ({err})"
            ));
            return None;
        }
    };
    let saved_ssh = {
        let mut conn = store.pool().acquire().await.ok()?;
        connect::load_target(&mut conn, name)
            .await
            .ok()
            .flatten()
            .map(|t| SshEndpoint {
                host: t.host,
                port: t.port,
                user: t.user,
            })
    };
    let held = link.and_then(|l| {
        Some(Held {
            price_per_hour: l.held_price_per_hour.as_deref()?.parse().ok()?,
            gpu_count: u32::try_from(l.held_gpu_count?).ok()?,
            currency: l.held_currency.clone()?,
            since: l.held_since?,
        })
    });
    let provider_price = link.and_then(|l| {
        Some((
            l.provider_price_per_hour.as_deref()?.parse().ok()?,
            l.provider_currency.clone()?,
        ))
    });
    Some(Known {
        instance_id,
        name: name.to_owned(),
        remote_id: remote_id.to_owned(),
        link_state: link.and_then(|l| RemoteState::parse(&l.remote_state)),
        // Not linked yet: nothing of the provider's was seen before the ledger's own history.
        seen_at: link.map_or_else(
            || {
                detail
                    .events
                    .last()
                    .map_or(detail.summary.created_at, |e| e.at)
            },
            |l| l.seen_at,
        ),
        ledger_state: detail.summary.state,
        last_event_at: detail.events.last().map(|e| e.at),
        rules: detail.rules,
        currency: detail.summary.currency.code().to_owned(),
        saved_ssh,
        missing_since: link.and_then(|l| l.missing_since),
        held,
        provider_price,
    })
}

/// How long the background sync waits after `failures` failures in a row.
pub fn backoff_after(failures: i64) -> chrono::Duration {
    let minutes = 2_i64.saturating_mul(1 << failures.clamp(0, 5));
    chrono::Duration::minutes(minutes.min(60))
}

/// Sync one account. A failure to read the provider at all is remembered on the account (its
/// words, without the key, and a back-off) and nothing else is written.
pub async fn sync_account(
    store: &Store,
    account: &AccountRef,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<AccountSyncReport, AccountError> {
    let row = {
        let mut conn = store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        row_of(&mut conn, account).await?
    };
    match sync_row(store, account, &row, endpoints, backoff, now).await {
        Ok(report) => Ok(report),
        Err(err) => {
            let mut tx = store.write().await?;
            let next = now + backoff_after(row.failures);
            let words = crate::redact::redact_secrets(&err.to_string(), None);
            repo::mark_failed(&mut tx, row.id, &words, next).await?;
            tx.commit().await.map_err(crate::store::StoreError::from)?;
            Err(err)
        }
    }
}

async fn sync_row(
    store: &Store,
    account: &AccountRef,
    row: &repo::AccountRow,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<AccountSyncReport, AccountError> {
    let provider = account.provider;
    let key = key_of(account, row.key_env.as_deref())?;
    let (links, id_rows, instance_names) = {
        let mut conn = store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        let links = repo::links_of(&mut conn, row.id).await?;
        let all_linked: HashSet<i64> = repo::all_links(&mut conn)
            .await?
            .into_iter()
            .map(|l| l.instance_id)
            .collect();
        let rows = crate::store::ledger::list_instances(&mut conn).await?;
        let mut id_rows = Vec::new();
        for instance in &rows {
            if instance.provider == provider.preset().as_str() && !all_linked.contains(&instance.id)
            {
                if let Some(id) = crate::store::provider_ids::find(&mut conn, instance.id).await? {
                    id_rows.push((instance.id, instance.name.clone(), id));
                }
            }
        }
        let names: HashSet<String> = rows.into_iter().map(|r| r.name).collect();
        (links, id_rows, names)
    };
    let mut warnings = Vec::new();
    let mut known = Vec::new();
    for link in &links {
        if let Some(k) = known_of(
            store,
            link.instance_id,
            &link.name,
            &link.remote_id,
            Some(link),
            now,
            &mut warnings,
        )
        .await
        {
            known.push(k);
        }
    }
    let mut unlinked = Unlinked::new();
    for (id, name, remote_id) in &id_rows {
        if let Some(k) = known_of(store, *id, name, remote_id, None, now, &mut warnings).await {
            unlinked.insert(remote_id.clone(), k);
        }
    }
    let seen: HashMap<String, RemoteState> = known
        .iter()
        .filter_map(|k| Some((k.remote_id.clone(), k.link_state?)))
        .collect();

    let api = client::api(provider, endpoints, key.clone(), backoff)?;
    let listing = client::list(&api, now, &seen).await?;
    let looks = direct_looks(&api, &listing, &known, now).await;
    let spend = client::total_spend(&api).await?;

    let mut plan = plan(
        &listing,
        &Context {
            provider,
            known: &known,
            unlinked: &unlinked,
            taken_names: &instance_names,
            looks: &looks,
            account_added_at: row.added_at,
            now,
        },
    );
    warnings.append(&mut plan.warnings);
    let written = write(store, account, row.id, &listing, &plan, spend, now).await?;
    warnings.extend(written.warnings);
    warnings.extend(remember_passwords(&written.passwords));
    let warnings = warnings
        .into_iter()
        .map(|w| crate::redact::redact_secrets(&w, Some(key.expose())))
        .collect();
    Ok(AccountSyncReport {
        provider: account.provider,
        label: account.label.clone(),
        imported: written.imported,
        events: written.events,
        unchanged: plan.unchanged,
        warnings,
        requests: listing.requests + u32::try_from(looks.len()).unwrap_or(u32::MAX),
        held: plan.held,
    })
}

/// A direct look at each linked instance the listing left out (not the released ones, not
/// those it listed but could not read). A failed look is its own instance's warning.
async fn direct_looks(
    api: &super::http::Api,
    listing: &Listing,
    known: &[Known],
    now: DateTime<Utc>,
) -> Looks {
    let listed: HashSet<&str> = listing
        .instances
        .iter()
        .map(|r| r.id.as_str())
        .chain(listing.skipped.iter().map(String::as_str))
        .collect();
    let mut looks = Looks::new();
    for k in known {
        if listed.contains(k.remote_id.as_str())
            || k.link_state == Some(RemoteState::Gone)
            || k.ledger_state == Some(crate::billing::InstanceState::Released)
        {
            continue;
        }
        let answer = client::look(api, &k.remote_id, now)
            .await
            .map_err(|err| err.to_string());
        looks.insert(k.remote_id.clone(), answer);
    }
    looks
}

/// What the write did: the groups that went in, and the warnings of those that did not.
struct Written {
    imported: Vec<String>,
    events: Vec<SyncEvent>,
    warnings: Vec<String>,
    /// AutoDL root passwords of endpoints that were saved, to keep in the keychain.
    passwords: Vec<(String, SshEndpoint, Secret)>,
}

async fn write(
    store: &Store,
    account: &AccountRef,
    account_id: i64,
    listing: &Listing,
    plan: &Plan,
    spend: Option<Decimal>,
    now: DateTime<Utc>,
) -> Result<Written, AccountError> {
    let mut tx = store.write().await?;
    let mut written = Written {
        imported: Vec::new(),
        events: Vec::new(),
        warnings: Vec::new(),
        passwords: Vec::new(),
    };
    for group in &plan.groups {
        // Each instance under its own savepoint: a change the ledger refuses (a price it
        // cannot bill, an event after a release) skips that instance, never the sync.
        let mut savepoint = tx.begin().await.map_err(crate::store::StoreError::from)?;
        let mut done = Written {
            imported: Vec::new(),
            events: Vec::new(),
            warnings: Vec::new(),
            passwords: Vec::new(),
        };
        match write_group(&mut savepoint, account_id, listing, group, now, &mut done).await {
            Ok(()) => {
                savepoint
                    .commit()
                    .await
                    .map_err(crate::store::StoreError::from)?;
                written.imported.append(&mut done.imported);
                written.events.append(&mut done.events);
                written.passwords.append(&mut done.passwords);
            }
            Err(err) => {
                savepoint
                    .rollback()
                    .await
                    .map_err(crate::store::StoreError::from)?;
                written.warnings.push(format!(
                    "{}: skipped, its changes could not be recorded ({err})",
                    group.instance
                ));
            }
        }
    }
    if let Some(total) = spend {
        repo::insert_spend(
            &mut tx,
            account_id,
            now,
            &total.to_string(),
            account.provider.currency(),
        )
        .await?;
    }
    repo::mark_synced(&mut tx, account_id, now).await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(written)
}

async fn write_group(
    tx: &mut sqlx::SqliteConnection,
    account_id: i64,
    listing: &Listing,
    group: &Group,
    now: DateTime<Utc>,
    done: &mut Written,
) -> Result<(), AccountError> {
    for change in &group.changes {
        match change {
            Change::Import {
                remote,
                name,
                new,
                created_at,
                then,
                import_warning,
            } => {
                let remote = &listing.instances[*remote];
                ledger::add_instance_in(&mut *tx, new, *created_at).await?;
                for event in then {
                    ledger::append_in(&mut *tx, name, event.clone()).await?;
                }
                let Some(instance_id) = crate::store::ledger::find_instance(&mut *tx, name)
                    .await?
                    .map(|row| row.id)
                else {
                    continue;
                };
                repo::insert_link(
                    &mut *tx,
                    &NewLink {
                        instance_id,
                        account_id,
                        remote_id: &remote.id,
                        remote_state: remote.state.as_str(),
                        seen_at: now,
                        imported: true,
                        note: None,
                    },
                )
                .await?;
                if let Some(words) = import_warning {
                    repo::set_import_warning(&mut *tx, instance_id, words).await?;
                }
                crate::store::provider_ids::upsert(&mut *tx, instance_id, &remote.id, now).await?;
                if let Some(endpoint) = &remote.ssh {
                    save_endpoint(&mut *tx, name, endpoint, remote.password.is_some(), now).await?;
                    if let Some(password) = &remote.password {
                        done.passwords
                            .push((name.clone(), endpoint.clone(), password.clone()));
                    }
                }
                done.imported.push(name.clone());
            }
            Change::Event { instance, event } => {
                ledger::append_in(&mut *tx, instance, event.clone()).await?;
                done.events.push(SyncEvent {
                    instance: instance.clone(),
                    kind: event.kind.name().to_owned(),
                    at: event.at,
                });
            }
            Change::Endpoint { instance, endpoint } => {
                let password = listing
                    .instances
                    .iter()
                    .find(|r| r.ssh.as_ref() == Some(endpoint))
                    .and_then(|r| r.password.clone());
                save_endpoint(&mut *tx, instance, endpoint, password.is_some(), now).await?;
                if let Some(password) = password {
                    done.passwords
                        .push((instance.clone(), endpoint.clone(), password));
                }
            }
            Change::Seen {
                instance_id,
                remote_id,
                seen_at,
                state,
                note,
                facts,
            } => {
                if repo::link_of_instance(&mut *tx, *instance_id)
                    .await?
                    .is_none()
                {
                    // A hand-recorded instance the listing matched by its saved provider id.
                    repo::insert_link(
                        &mut *tx,
                        &NewLink {
                            instance_id: *instance_id,
                            account_id,
                            remote_id,
                            remote_state: state.as_str(),
                            seen_at: *seen_at,
                            imported: false,
                            note: note.as_deref(),
                        },
                    )
                    .await?;
                }
                repo::update_seen(
                    &mut *tx,
                    *instance_id,
                    state.as_str(),
                    *seen_at,
                    note.as_deref(),
                )
                .await?;
                repo::set_link_facts(&mut *tx, *instance_id, &facts_row(facts)).await?;
            }
        }
    }
    Ok(())
}

fn facts_row(facts: &LinkFacts) -> repo::LinkFacts {
    repo::LinkFacts {
        missing_since: facts.missing_since,
        held_price_per_hour: facts.held.as_ref().map(|h| h.price_per_hour.to_string()),
        held_gpu_count: facts.held.as_ref().map(|h| i64::from(h.gpu_count)),
        held_currency: facts.held.as_ref().map(|h| h.currency.clone()),
        held_since: facts.held.as_ref().map(|h| h.since),
        provider_price_per_hour: facts.provider_price.as_ref().map(|(p, _)| p.to_string()),
        provider_currency: facts.provider_price.as_ref().map(|(_, c)| c.clone()),
    }
}

async fn save_endpoint(
    tx: &mut sqlx::SqliteConnection,
    instance: &str,
    endpoint: &SshEndpoint,
    password: bool,
    now: DateTime<Utc>,
) -> Result<(), AccountError> {
    let previous = connect::load_target(&mut *tx, instance).await?;
    let auth = match previous.map(|t| t.auth) {
        // A key the renter chose stays chosen.
        Some(auth @ AuthChoice::Key { .. }) => auth,
        _ if password => AuthChoice::Password,
        _ => AuthChoice::Agent,
    };
    let command = endpoint.command();
    let destination = crate::ssh::Destination {
        alias: endpoint.host.clone(),
        host: endpoint.host.clone(),
        port: endpoint.port,
        user: endpoint.user.clone(),
        identity_files: Vec::new(),
        jump: Vec::new(),
        keepalive: None,
        connect_timeout: None,
    };
    let plan = ConnectPlan {
        ssh_command: command,
        auth,
        secret: None,
        trusted_fingerprint: None,
        keep_trying: false,
    };
    connect::save_target(tx, instance, &plan, &destination, now).await?;
    Ok(())
}

/// AutoDL's root passwords go to the keychain after the ledger is written, and only for the
/// endpoints that were saved (a refused endpoint's password would land under another host's
/// name). Returns a warning for each one no keychain could keep.
fn remember_passwords(passwords: &[(String, SshEndpoint, Secret)]) -> Vec<String> {
    let mut warnings = Vec::new();
    for (instance, endpoint, password) in passwords {
        let Ok(destination) = crate::connect::resolve(&endpoint.command()) else {
            continue;
        };
        if let Err(err) =
            crate::ssh::store_secret(&crate::ssh::password_account(&destination), password)
        {
            warnings.push(format!(
                "{instance}: the root password from the provider was not kept (no keychain: {err}); copy it from the provider's console when you connect"
            ));
        }
    }
    warnings
}

/// Sync every account (or the one named), each on its own: one account's failure is its own
/// report's error and the others go on.
pub async fn sync_all(
    store: &Store,
    only: Option<&AccountRef>,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<Vec<Result<AccountSyncReport, (AccountRef, AccountError)>>, AccountError> {
    let accounts = super::list(store).await?;
    if let Some(only) = only {
        if !accounts
            .iter()
            .any(|a| a.provider == only.provider && a.label == only.label)
        {
            return Err(AccountError::UnknownAccount {
                provider: only.provider.as_str().to_owned(),
                label: only.label.clone(),
            });
        }
    }
    let mut out = Vec::new();
    for summary in accounts {
        let account = AccountRef {
            provider: summary.provider,
            label: summary.label,
        };
        if only.is_some_and(|o| *o != account) {
            continue;
        }
        out.push(
            sync_account(store, &account, endpoints, backoff, now)
                .await
                .map_err(|err| (account.clone(), err)),
        );
    }
    Ok(out)
}

/// Accounts whose background sync is due (not backing off).
pub async fn due(store: &Store, now: DateTime<Utc>) -> Result<Vec<AccountRef>, AccountError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    Ok(repo::list_accounts(&mut conn)
        .await?
        .into_iter()
        .filter(|row| row.next_sync_after.is_none_or(|t| t <= now))
        .filter_map(|row| {
            Some(AccountRef {
                provider: Provider::parse(&row.provider).ok()?,
                label: row.label,
            })
        })
        .collect())
}
