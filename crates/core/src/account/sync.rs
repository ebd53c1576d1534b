//! A sync: read the provider's listing, compare it with the ledger, write what changed.
//!
//! Every request is made first; [`plan`] is a pure function from the listing, what the last sync
//! saw and the ledger to the changes; they are written in one transaction. So a sync that fails
//! midway (the provider stops answering on page 3, the laptop is killed) records nothing, and a
//! second sync with nothing changed records nothing either.
//!
//! Times: a change is dated at the provider's timestamp where it gives one, else when this sync
//! saw it — never before the last sync that saw the old state, never before the ledger's last
//! event, never after now.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::remote::{Listing, RemoteInstance, RemoteState, SshEndpoint};
use super::{client, key_of, row_of, AccountError, AccountRef, Backoff, Endpoints, Provider};
use crate::billing::events::{EventKind, LedgerEvent};
use crate::billing::{ledger, BillingRules, InstanceState, NewInstance, StoppedBilling};
use crate::connect::{self, AuthChoice, ConnectPlan};
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
}

/// What the ledger and the last sync know of one linked instance.
#[derive(Debug, Clone)]
pub struct Known {
    pub instance_id: i64,
    pub name: String,
    pub remote_id: String,
    pub link_state: Option<RemoteState>,
    pub seen_at: DateTime<Utc>,
    pub ledger_state: Option<InstanceState>,
    pub last_event_at: Option<DateTime<Utc>>,
    pub rules: BillingRules,
    pub saved_ssh: Option<SshEndpoint>,
}

/// A change to write.
#[derive(Debug, Clone)]
pub enum Change {
    Import {
        remote: usize,
        name: String,
        new: Box<NewInstance>,
        created_at: DateTime<Utc>,
        then: Vec<LedgerEvent>,
    },
    Event {
        instance: String,
        event: LedgerEvent,
    },
    Endpoint {
        instance: String,
        endpoint: SshEndpoint,
    },
    Seen {
        instance_id: i64,
        state: RemoteState,
        note: Option<String>,
    },
}

/// The changes, and the warnings for what could not be brought in line.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub changes: Vec<Change>,
    pub warnings: Vec<String>,
    pub unchanged: u64,
}

/// Hand-recorded instances of this provider that carry a provider id (saved for `stop --api`),
/// by that id: the sync links them instead of importing a second copy.
pub type Unlinked = HashMap<String, Known>;

fn clamp(at: DateTime<Utc>, floor: &[Option<DateTime<Utc>>], now: DateTime<Utc>) -> DateTime<Utc> {
    floor.iter().flatten().fold(at, |t, f| t.max(*f)).min(now)
}

/// The ledger event that brings `ledger` in line with `remote`, if any.
fn event_for(remote: RemoteState, ledger: Option<InstanceState>) -> Option<EventKind> {
    use InstanceState as L;
    match (remote, ledger?) {
        (_, L::Released) => None,
        (RemoteState::Running, L::Created | L::Stopped | L::NoGpu) => Some(EventKind::Started),
        (RemoteState::Stopped, L::Created | L::Running | L::NoGpu) => Some(EventKind::Stopped),
        (RemoteState::Gone, _) => Some(EventKind::Released),
        _ => None,
    }
}

/// New rules when the provider's price or GPU count differs from the ledger's.
fn repriced(rules: &BillingRules, remote: &RemoteInstance) -> Option<BillingRules> {
    if remote.state != RemoteState::Running {
        return None;
    }
    let price = remote.price_per_hour?;
    let per_gpu = per_gpu_price(price, remote.gpu_count);
    (per_gpu != rules.price_per_gpu_hour || remote.gpu_count != rules.gpu_count).then(|| {
        BillingRules {
            price_per_gpu_hour: per_gpu,
            gpu_count: remote.gpu_count,
            ..rules.clone()
        }
    })
}

/// The whole instance's price per GPU, as the ledger keeps it (six decimals, so the same
/// provider price always gives the same figure and a second sync sees no change).
pub fn per_gpu_price(price: Decimal, gpus: u32) -> Decimal {
    (price / Decimal::from(gpus.max(1))).round_dp(6).normalize()
}

/// The rules an imported instance starts with: the preset's, the provider's price.
fn import_rules(provider: Provider, remote: &RemoteInstance, price: Decimal) -> BillingRules {
    let preset = provider.preset().preset();
    BillingRules {
        billing_starts: preset.billing_starts,
        granularity: preset.granularity,
        wipe_after_stopped_days: preset.wipe_after_stopped_days,
        // A stopped-storage rate is the renter's to fill in; reconcile suggests one when the
        // provider charges while stopped.
        stopped_billing: match remote.stopped_per_hour {
            Some(rate) if !rate.is_zero() => StoppedBilling::Storage { rate },
            _ => StoppedBilling::None,
        },
        ..BillingRules::simple(per_gpu_price(price, remote.gpu_count), remote.gpu_count)
    }
}

/// A ledger name from the provider's: its name (or provider and id), made unique.
pub fn unique_name(provider: Provider, remote: &RemoteInstance, taken: &HashSet<String>) -> String {
    let base = if remote.name.is_empty() {
        format!("{}-{}", provider.as_str(), remote.id)
    } else {
        remote.name.clone()
    };
    let base: String = base.chars().take(90).collect::<String>().trim().to_owned();
    if !taken.contains(&base) {
        return base;
    }
    let with_id = format!(
        "{base} ({})",
        remote.id.chars().take(12).collect::<String>()
    );
    if !taken.contains(&with_id) {
        return with_id;
    }
    (2..)
        .map(|n| format!("{with_id} {n}"))
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or(with_id)
}

/// The changes that bring the ledger in line with `listing`.
pub fn plan(
    provider: Provider,
    listing: &Listing,
    known: &[Known],
    unlinked: &Unlinked,
    taken_names: &HashSet<String>,
    now: DateTime<Utc>,
) -> Plan {
    let mut plan = Plan {
        warnings: listing.warnings.clone(),
        ..Plan::default()
    };
    let by_id: HashMap<&str, (usize, &RemoteInstance)> = listing
        .instances
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), (i, r)))
        .collect();
    let mut handled: HashSet<&str> = HashSet::new();
    let mut taken = taken_names.clone();

    let linked = known.iter().map(|k| (k, true));
    let newly_linked = unlinked
        .values()
        .filter(|k| by_id.contains_key(k.remote_id.as_str()))
        .map(|k| (k, false));
    for (k, was_linked) in linked.chain(newly_linked) {
        let remote = by_id.get(k.remote_id.as_str()).map(|(_, r)| *r);
        handled.insert(k.remote_id.as_str());
        let state = remote.map_or(RemoteState::Gone, |r| r.state);
        let before = plan.changes.len();
        let mut note = None;
        if k.ledger_state == Some(InstanceState::Released) && state != RemoteState::Gone {
            let word = remote.map_or("", |r| r.provider_word.as_str());
            plan.warnings.push(format!(
                "{}: the ledger says released, but {} still lists it ({word}) and may bill it",
                k.name,
                provider.display()
            ));
            note = Some(format!(
                "released in the ledger, still listed by {}",
                provider.display()
            ));
        }
        if let Some(kind) = event_for(state, k.ledger_state) {
            let stamp = match (&kind, remote) {
                (EventKind::Started, Some(r)) => r.started_at.unwrap_or(now),
                _ => now,
            };
            let at = clamp(stamp, &[Some(k.seen_at), k.last_event_at], now);
            if !was_linked && k.ledger_state.is_some() {
                note = Some(format!(
                    "the ledger said {}, {} said {}",
                    k.ledger_state.map_or("unknown", InstanceState::as_str),
                    provider.display(),
                    remote.map_or("gone", |r| r.provider_word.as_str())
                ));
            }
            plan.changes.push(Change::Event {
                instance: k.name.clone(),
                event: LedgerEvent::new(at, kind),
            });
        }
        if let Some(r) = remote {
            if let Some(rules) = repriced(&k.rules, r) {
                let after_event = plan.changes[before..].iter().find_map(|c| match c {
                    Change::Event { event, .. } => Some(event.at),
                    _ => None,
                });
                let at = clamp(now, &[after_event, k.last_event_at], now);
                plan.changes.push(Change::Event {
                    instance: k.name.clone(),
                    event: LedgerEvent::new(at, EventKind::RuleChanged(Box::new(rules))),
                });
            }
            if let Some(endpoint) = &r.ssh {
                match &k.saved_ssh {
                    None => plan.changes.push(Change::Endpoint {
                        instance: k.name.clone(),
                        endpoint: endpoint.clone(),
                    }),
                    Some(saved) if saved == endpoint => {}
                    Some(saved) if saved.host == endpoint.host => {
                        plan.changes.push(Change::Endpoint {
                            instance: k.name.clone(),
                            endpoint: endpoint.clone(),
                        });
                    }
                    Some(saved) => plan.warnings.push(format!(
                        "{}: {} now gives {}@{}:{} for SSH; the saved target ({}:{}) was left as it is",
                        k.name,
                        provider.display(),
                        endpoint.user,
                        endpoint.host,
                        endpoint.port,
                        saved.host,
                        saved.port
                    )),
                }
            }
        }
        if plan.changes.len() == before && was_linked {
            plan.unchanged += 1;
        }
        if was_linked || plan.changes.len() > before || remote.is_some() {
            plan.changes.push(Change::Seen {
                instance_id: k.instance_id,
                state,
                note,
            });
        }
    }

    for (index, remote) in listing.instances.iter().enumerate() {
        if handled.contains(remote.id.as_str()) || remote.state == RemoteState::Gone {
            continue;
        }
        let Some(price) = remote.price_per_hour else {
            plan.warnings.push(format!(
                "{} instance {} ({}) is not recorded yet: {} gives no price for it while it is {}",
                provider.display(),
                remote.id,
                if remote.name.is_empty() {
                    "no name"
                } else {
                    &remote.name
                },
                provider.display(),
                remote.provider_word
            ));
            continue;
        };
        let name = unique_name(provider, remote, &taken);
        taken.insert(name.clone());
        let created_at = remote.created_at.unwrap_or(now).min(now);
        let mut then = Vec::new();
        match remote.state {
            RemoteState::Running => then.push(LedgerEvent::new(
                clamp(
                    remote.started_at.unwrap_or(created_at),
                    &[Some(created_at)],
                    now,
                ),
                EventKind::Started,
            )),
            RemoteState::Stopped => {
                plan.warnings.push(format!(
                    "{name}: already stopped when first seen; the ledger counts it as billing from its creation until now (check it with reconcile)"
                ));
                then.push(LedgerEvent::new(now, EventKind::Stopped));
            }
            _ => {}
        }
        let new = NewInstance {
            name: name.clone(),
            provider: provider.preset().as_str().to_owned(),
            region: remote.region.clone(),
            gpu_model: remote
                .gpu_model
                .clone()
                .unwrap_or_else(|| "unknown GPU".to_owned()),
            currency: provider.currency().to_owned(),
            notes: Some(format!(
                "Imported from {} (instance {})",
                provider.display(),
                remote.id
            )),
            planned_hours: None,
            budget: None,
            rules: import_rules(provider, remote, price),
        };
        plan.changes.push(Change::Import {
            remote: index,
            name,
            new: Box::new(new),
            created_at,
            then,
        });
    }
    plan
}

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
        saved_ssh,
    })
}

/// How long the background sync waits after `failures` failures in a row.
pub fn backoff_after(failures: i64) -> chrono::Duration {
    let minutes = 2_i64.saturating_mul(1 << failures.clamp(0, 5));
    chrono::Duration::minutes(minutes.min(60))
}

/// Sync one account. A failure is remembered on the account (its words and a back-off) and
/// nothing else is written.
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
            repo::mark_failed(&mut tx, row.id, &err.to_string(), next).await?;
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
    let spend = if provider == Provider::Autodl {
        Some(super::autodl::balance(&api).await?)
    } else {
        None
    };

    let mut plan = plan(provider, &listing, &known, &unlinked, &instance_names, now);
    warnings.append(&mut plan.warnings);
    let report = write(store, account, row.id, &listing, &plan, spend, now).await?;
    remember_passwords(&listing);
    Ok(AccountSyncReport {
        warnings,
        unchanged: plan.unchanged,
        requests: listing.requests,
        ..report
    })
}

async fn write(
    store: &Store,
    account: &AccountRef,
    account_id: i64,
    listing: &Listing,
    plan: &Plan,
    spend: Option<Decimal>,
    now: DateTime<Utc>,
) -> Result<AccountSyncReport, AccountError> {
    let mut tx = store.write().await?;
    let mut imported = Vec::new();
    let mut events = Vec::new();
    for change in &plan.changes {
        match change {
            Change::Import {
                remote,
                name,
                new,
                created_at,
                then,
            } => {
                let remote = &listing.instances[*remote];
                ledger::add_instance_in(&mut tx, new, *created_at).await?;
                for event in then {
                    ledger::append_in(&mut tx, name, event.clone()).await?;
                }
                let Some(instance_id) = crate::store::ledger::find_instance(&mut tx, name)
                    .await?
                    .map(|row| row.id)
                else {
                    continue;
                };
                repo::insert_link(
                    &mut tx,
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
                crate::store::provider_ids::upsert(&mut tx, instance_id, &remote.id, now).await?;
                if let Some(endpoint) = &remote.ssh {
                    save_endpoint(&mut tx, name, endpoint, remote.password.is_some(), now).await?;
                }
                imported.push(name.clone());
            }
            Change::Event { instance, event } => {
                ledger::append_in(&mut tx, instance, event.clone()).await?;
                events.push(SyncEvent {
                    instance: instance.clone(),
                    kind: event.kind.name().to_owned(),
                    at: event.at,
                });
            }
            Change::Endpoint { instance, endpoint } => {
                let password = listing
                    .instances
                    .iter()
                    .any(|r| r.ssh.as_ref() == Some(endpoint) && r.password.is_some());
                save_endpoint(&mut tx, instance, endpoint, password, now).await?;
            }
            Change::Seen {
                instance_id,
                state,
                note,
            } => {
                // Instances linked just now get their link in `link_unlinked`.
                if repo::link_of_instance(&mut tx, *instance_id)
                    .await?
                    .is_some()
                {
                    repo::update_seen(&mut tx, *instance_id, state.as_str(), now, note.as_deref())
                        .await?;
                }
            }
        }
    }
    link_unlinked(&mut tx, account_id, listing, plan, now).await?;
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
    Ok(AccountSyncReport {
        provider: account.provider,
        label: account.label.clone(),
        imported,
        events,
        unchanged: 0,
        warnings: Vec::new(),
        requests: 0,
    })
}

/// Hand-recorded instances the listing matched by their saved provider id become linked.
async fn link_unlinked(
    tx: &mut sqlx::SqliteConnection,
    account_id: i64,
    listing: &Listing,
    plan: &Plan,
    now: DateTime<Utc>,
) -> Result<(), AccountError> {
    for change in &plan.changes {
        let Change::Seen {
            instance_id,
            state,
            note,
        } = change
        else {
            continue;
        };
        if repo::link_of_instance(&mut *tx, *instance_id)
            .await?
            .is_some()
        {
            continue;
        }
        let Some(remote_id) = crate::store::provider_ids::find(&mut *tx, *instance_id).await?
        else {
            continue;
        };
        if !listing.instances.iter().any(|r| r.id == remote_id) {
            continue;
        }
        repo::insert_link(
            &mut *tx,
            &NewLink {
                instance_id: *instance_id,
                account_id,
                remote_id: &remote_id,
                remote_state: state.as_str(),
                seen_at: now,
                imported: false,
                note: note.as_deref(),
            },
        )
        .await?;
    }
    Ok(())
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

/// AutoDL's root passwords go straight to the keychain, after the ledger is written.
fn remember_passwords(listing: &Listing) {
    for remote in &listing.instances {
        let (Some(endpoint), Some(password)) = (&remote.ssh, &remote.password) else {
            continue;
        };
        let Ok(destination) = crate::connect::resolve(&endpoint.command()) else {
            continue;
        };
        if let Err(err) =
            crate::ssh::store_secret(&crate::ssh::password_account(&destination), password)
        {
            tracing::warn!(%err, "the instance's password could not be kept in the keychain");
        }
    }
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
