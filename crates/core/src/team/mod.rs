//! Team mode: a lab's or small team's shared ledger on PostgreSQL.
//!
//! Why: five students renting on their own accounts against one supervisor's budget each keep a
//! laptop ledger, so nobody sees the whole bill or who left an A100 running. The shared database
//! is an existing, trusted server (PostgreSQL through sqlx), not a sync protocol of our own.
//!
//! How: the local SQLite database stays the working copy (the app works offline). The ledger is
//! event-sourced, so merging is appending: every instance, rules version and event has a UUID
//! (SQLite migration 0140), events are immutable, [`push`] sends the ones the server lacks
//! (idempotent: `ON CONFLICT (uid) DO NOTHING`) and [`pull`] fetches the rest by a server
//! sequence that is commit-ordered, so a link cut mid-sync loses and doubles nothing. Every
//! laptop replays an instance's events in one canonical order (time, member, origin order) and
//! leaves out what the billing rules refuse the same way ([`crate::billing::events::settle`]),
//! so every laptop computes the same bill; the refused events are listed as [`Conflict`]s.
//!
//! Shared: instances and their rules and events, conflict resolutions, team budgets, and
//! ([`records`]) each instance's budget and project, backup records, release checks and
//! overrides, and reminders' state. Never shared: secrets (the password sits in the OS keychain
//! only), SSH targets and keys, known_hosts, logs, jobs.
//!
//! - [`address`]: the URL, names and password sources (the function [`link`] is this database's
//!   link); [`server`]: login, schema, joining, and every PostgreSQL statement, one file per table
//!   or concern. The SQLite side is `store::team`; nothing else here runs SQL.
//! - [`push`], [`pull`], [`conflicts`]: the sync; [`views`]: the team views (pure where they
//!   feed reminders and alerts); `time.rs`: a time from the server in the ledger's one form.
//! - `connect.rs`: linking this database to a team and unlinking it; `sync.rs`: one sync and the
//!   background loop; this file: what the Team page shows and sets (status, budgets, projects).
//!
//! Also: `connect.rs` has `open_linked` (this database's link); `sync.rs` has `keep_in_sync`.
//! [`alerts`] keeps its settings in `team_alert_settings` (PostgreSQL 0190) and exchanges idle
//! reports after `sync_with`, on the same connection. [`verify`] is opt-in per laptop (settings key
//! `team.share_verify`, off by default; CLI `team share-verify on|off`, Team page checkbox →
//! `team_share_verify`). It sends a summary of each instance's last `probe_runs` row, shown in
//! `TeamStatus.verify`.
//!
//! A sync in detail (moved here from ARCHITECTURE.md's flow):
//!
//! - Link: `sslmode=verify-full` by default. `require`, `prefer` and `allow` are used only when the
//!   URL asks; they never fall back to no TLS, and `ServerAddress::tls_warning` says so (the CLI
//!   and the Settings page show it). `disable` is accepted only for a server on loopback. A
//!   password in the URL, before the host or as `?password=`, is taken out before the URL is kept
//!   or shown, and goes to the keychain. Every session has `statement_timeout`
//!   (`address::STATEMENT_TIMEOUT`), and a whole sync is given up after `SYNC_TIMEOUT`
//!   (`team.timed_out`), so a stalled server never holds `keep_in_sync`.
//! - Push: small chunks are `INSERT … FROM unnest(…) ON CONFLICT (uid) DO NOTHING`; big ones go by
//!   binary `COPY` (`copy_binary`). They are numbered from the team row's counter under a row lock,
//!   and a chunk is marked shared here by one number, `team_link.shared_through` (SQLite migration
//!   0260).
//! - Pull checks: an instance passes `NewInstance`'s checks
//!   (`billing::new_instance::validate_described`). Times are stored in the one UTC form of the
//!   local ledger (`time::canonical_time`), so text order is time order. A `created` event must be
//!   at its instance's creation time, and rules must take effect at their event. Records dated
//!   beyond now plus `records::CLOCK_SKEW` are refused. The release gate reads only the checks run
//!   on this laptop (`release::latest_check_run_here`). Shared backups travel without local paths
//!   or `git push` output. Names already taken here are kept as `name@member` (then with the uid
//!   and a counter: `pull::free_name`).
//! - Conflicts: `refused_event` (beside the event standing in its place), `name_collision`,
//!   `unreadable` (naming who pushed it; never written), and `broken_instance`: an instance whose
//!   stored ledger cannot be billed at all, named by `billing::ledger::list_all` as a
//!   `BrokenInstance` (on stderr in the CLI's `instance list`) and skipped by the reminders and
//!   team views. A resolution (`ledger_withdrawals`, SQLite migration 0180) is honoured only when
//!   it names a refused pair that the replay here finds, with or without the resolutions held;
//!   otherwise it is listed as unreadable. The report replays only the instances whose fingerprint
//!   changed (`store::team::conflict_replays`, migration 0210), partly in the background during the sync
//!   (`conflicts::Warmup`).

pub mod address;
pub mod alerts;
pub mod conflicts;
mod connect;
mod copy_binary;
mod error;
pub mod pull;
pub mod push;
pub mod records;
pub mod server;
mod sync;
mod time;
pub mod verify;
pub mod views;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

pub use address::ServerAddress;
pub use alerts::AlertSettings;
pub use conflicts::{Conflict, StandingEvent};
pub(crate) use connect::current_link;
pub use connect::{connect, disconnect, link, open_linked, ConnectRequest, TeamLink};
pub use error::TeamError;
pub use server::Server;
use sync::exchange_extras;
pub use sync::{
    keep_in_sync, sync, sync_with, sync_within, SyncReport, BACKGROUND_SYNC_EVERY, SYNC_TIMEOUT,
};
pub use views::{LeftRunning, Member, MonthSpend, SpendLine, TeamBudget, TeamInstance, TeamStatus};

use crate::store::team as repo;
use crate::store::{Store, StoreError};

/// Set the team's monthly budget in one currency.
pub async fn set_budget(store: &Store, currency: &str, amount: Decimal) -> Result<(), TeamError> {
    let currency = crate::billing::Currency::parse(currency)?;
    crate::billing::new_instance::validate_budget(amount)?;
    let (mut server, row) = open_linked(store).await?;
    let result = server
        .set_budget(
            row.team_id,
            currency.code(),
            &amount.normalize().to_string(),
            &row.member,
        )
        .await;
    server.close().await;
    result?;
    // Until the next pull brings the whole list, the views show this budget offline too.
    let mut cached = {
        let mut conn = store.read().await?;
        repo::team_budgets(&mut conn).await?
    };
    cached.retain(|(c, _, _)| c != currency.code());
    cached.push((
        currency.code().to_owned(),
        amount.normalize().to_string(),
        row.member.clone(),
    ));
    let mut tx = store.write().await?;
    repo::replace_team_budgets(&mut tx, &cached).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

/// The team budgets and their use at `now`, from the working copy (as the last sync or
/// [`set_budget`] left them), so it works offline: what the reminders check for the team's
/// 50/80/100 % thresholds (`TeamBudget::usage.threshold_reached`).
pub async fn budgets(store: &Store, now: DateTime<Utc>) -> Result<Vec<TeamBudget>, TeamError> {
    let cached = {
        let mut conn = store.read().await?;
        repo::team_budgets(&mut conn).await?
    };
    let instances = views::instances(store, now).await?;
    views::budget_use(&cached_budgets(cached), &instances, now)
}

fn cached_budgets(rows: Vec<(String, String, String)>) -> Vec<(String, Decimal, String)> {
    rows.into_iter()
        .filter_map(|(currency, amount, set_by)| Some((currency, amount.parse().ok()?, set_by)))
        .collect()
}

/// Say which project an instance is rented for (`None`: no project). Shared with the team on
/// the next sync; the team views sum the month's spend by project.
pub async fn set_project(
    store: &Store,
    instance: &str,
    project: Option<&str>,
) -> Result<(), TeamError> {
    let project = project
        .map(|p| address::check_name("project", p))
        .transpose()?;
    let mut tx = store.write().await?;
    let id = repo::instance_id_by_name(&mut tx, instance).await?;
    let id = id.ok_or_else(|| crate::billing::BillingError::UnknownInstance {
        name: instance.to_owned(),
    })?;
    repo::set_project(&mut tx, id, project.as_deref()).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

/// The project `instance` is rented for, if anyone said.
pub async fn project_of(store: &Store, instance: &str) -> Result<Option<String>, TeamError> {
    let mut conn = store.read().await?;
    repo::project_of(&mut conn, instance).await?.ok_or_else(|| {
        crate::billing::BillingError::UnknownInstance {
            name: instance.to_owned(),
        }
        .into()
    })
}

/// Members and budgets as the server lists them.
async fn server_lists(
    server: &mut Server,
    team_id: i64,
) -> Result<
    (
        Vec<(String, Option<DateTime<Utc>>)>,
        Vec<(String, Decimal, String)>,
    ),
    TeamError,
> {
    let members = server.members(team_id).await?;
    let budgets = server.budgets(team_id).await?;
    let budgets = budgets
        .into_iter()
        .filter_map(|(currency, amount, set_by)| {
            Some((currency, amount.parse::<Decimal>().ok()?, set_by))
        })
        .collect();
    Ok((members, budgets))
}

/// Keep the budgets just read from the server in the working copy, where the offline views and
/// the team budget reminders (`remind::team`) read them.
async fn remember_budgets(
    store: &Store,
    budgets: &[(String, Decimal, String)],
) -> Result<(), TeamError> {
    let rows: Vec<(String, String, String)> = budgets
        .iter()
        .map(|(currency, amount, set_by)| {
            (
                currency.clone(),
                amount.normalize().to_string(),
                set_by.clone(),
            )
        })
        .collect();
    let mut tx = store.write().await?;
    repo::replace_team_budgets(&mut tx, &rows).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

/// The team views as of `now`: from the working copy, with the server's member list and budgets
/// when it answers (offline, the status says so and shows what the last sync brought).
/// The idle stretches come from this laptop's monitor history and the other members' idle
/// reports (`alerts::idle_stretches`): an instance nobody's app watches has none, so it is never
/// called "left running" on a guess.
pub async fn status(store: &Store, now: DateTime<Utc>) -> Result<TeamStatus, TeamError> {
    let row = current_link(store).await?.ok_or(TeamError::NotConnected)?;
    let instances = views::instances(store, now).await?;
    let idle = alerts::idle_stretches(store, &instances, &row.member, now)
        .await?
        .into_iter()
        .map(|(uid, stretch)| (uid, stretch.minutes))
        .collect();
    status_with_idle(store, &idle, now).await
}

/// [`status`] with each instance's current idle stretch in minutes by instance uid (the
/// monitor's busy hours), for the "left running" alerts.
pub async fn status_with_idle(
    store: &Store,
    idle_minutes: &std::collections::HashMap<String, u32>,
    now: DateTime<Utc>,
) -> Result<TeamStatus, TeamError> {
    let row = current_link(store).await?.ok_or(TeamError::NotConnected)?;
    let (online, server_error, known, budgets) = match open_linked(store).await {
        Ok((mut server, _)) => {
            let mut lists = server_lists(&mut server, row.team_id).await;
            if lists.is_ok() {
                if let Err(err) = exchange_extras(store, &mut server, &row, now).await {
                    lists = Err(err);
                }
            }
            server.close().await;
            match lists {
                Ok((members, budgets)) => {
                    remember_budgets(store, &budgets).await?;
                    (true, None, members, budgets)
                }
                Err(err) => (
                    false,
                    Some(crate::ApiError::from(err)),
                    Vec::new(),
                    Vec::new(),
                ),
            }
        }
        Err(err) => (
            false,
            Some(crate::ApiError::from(err)),
            Vec::new(),
            Vec::new(),
        ),
    };
    let budgets = if online {
        budgets
    } else {
        let mut conn = store.read().await?;
        cached_budgets(repo::team_budgets(&mut conn).await?)
    };
    let instances = views::instances(store, now).await?;
    let pending_push = {
        let mut conn = store.read().await?;
        repo::count_pending(&mut conn).await? + repo::count_pending_records(&mut conn).await?
    };
    let mut running: Vec<TeamInstance> = instances
        .iter()
        .filter(|i| i.is_running())
        .cloned()
        .collect();
    running.sort_by_key(|i| std::cmp::Reverse(i.burn_rate_per_hour));
    let alert_settings = alerts::settings(store).await?;
    let by_uid: std::collections::HashMap<&str, &TeamInstance> =
        instances.iter().map(|i| (i.uid.as_str(), i)).collect();
    let verify = verify::shared(store)
        .await?
        .into_iter()
        .filter_map(|summary| {
            let instance = by_uid.get(summary.instance_uid.as_str())?;
            Some(views::SharedVerify {
                instance: instance.name.clone(),
                member: instance.member.clone(),
                summary,
            })
        })
        .collect();
    Ok(TeamStatus {
        team: row.team.clone(),
        member: row.member.clone(),
        url: row.url.clone(),
        online,
        server_error,
        last_sync_at: row.last_sync_at,
        pending_push,
        members: views::members(&known, &instances),
        running,
        month_to_date: views::month_spend(&instances, now),
        budgets: views::budget_use(&budgets, &instances, now)?,
        left_running: views::left_running(&instances, idle_minutes, alert_settings.after_minutes),
        alerts: alert_settings,
        share_verify: verify::sharing(store).await?,
        verify,
        conflicts: conflicts::conflicts(store).await?,
        as_of: now,
    })
}
