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
//! - [`link`]: the URL, names and password sources; [`server`]: login, schema, joining.
//! - [`push`], [`pull`], [`conflicts`]: the sync; [`views`]: the team views (pure where they
//!   feed reminders and alerts).

pub mod alerts;
pub mod conflicts;
mod copy_binary;
mod error;
pub mod link;
pub mod pull;
pub mod push;
pub mod records;
pub mod server;
pub mod verify;
pub mod views;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::Serialize;
use ts_rs::TS;

pub use alerts::AlertSettings;
pub use conflicts::{Conflict, StandingEvent};
pub use error::TeamError;
pub use link::ServerAddress;
pub use server::Server;
pub use views::{LeftRunning, Member, MonthSpend, SpendLine, TeamBudget, TeamInstance, TeamStatus};

use crate::ssh::Secret;
use crate::store::team::{self as repo, LinkRow};
use crate::store::{Store, StoreError};

/// What `connect` needs.
#[derive(Debug, Clone)]
pub struct ConnectRequest {
    pub url: String,
    pub member: String,
    pub team: String,
    /// Given now (typed in Settings, or `--password-env`); else the keychain's, else
    /// PGPASSWORD / ~/.pgpass.
    pub password: Option<Secret>,
}

/// The link as the UI and `--json` show it (never the password).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct TeamLink {
    pub url: String,
    pub member: String,
    pub team: String,
    pub connected_at: DateTime<Utc>,
    pub last_sync_at: Option<DateTime<Utc>>,
    /// Whether the password is kept in the OS keychain (false: PGPASSWORD / ~/.pgpass, or none).
    pub password_in_keychain: bool,
    /// The code of the warning about this link's TLS (`team.tls_unverified`: the certificate is
    /// not checked; `team.tls_off`: no encryption), when the URL asked for less than the default.
    pub tls_warning: Option<String>,
}

impl TeamLink {
    fn of(row: &LinkRow, password_in_keychain: bool) -> Self {
        let tls_warning = ServerAddress::parse(&row.url)
            .ok()
            .and_then(|(address, _)| address.tls_warning())
            .map(str::to_owned);
        Self {
            tls_warning,
            url: row.url.clone(),
            member: row.member.clone(),
            team: row.team.clone(),
            connected_at: row.connected_at,
            last_sync_at: row.last_sync_at,
            password_in_keychain,
        }
    }
}

/// What one sync did: `{"pushed", "pulled", "conflicts"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct SyncReport {
    pub pushed: i64,
    pub pulled: i64,
    pub conflicts: Vec<Conflict>,
}

pub(crate) async fn current_link(store: &Store) -> Result<Option<LinkRow>, TeamError> {
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    Ok(repo::link(&mut conn).await?)
}

/// The link, if this database has one.
pub async fn link(store: &Store) -> Result<Option<TeamLink>, TeamError> {
    Ok(current_link(store).await?.map(|row| {
        let kept = ServerAddress::parse(&row.url)
            .map(|(address, _)| link::kept_password(&address).is_some())
            .unwrap_or(false);
        TeamLink::of(&row, kept)
    }))
}

/// Log in to the team database (migrating its schema), join `team` as `member`, keep the
/// password in the keychain, and link this database. Nothing is written here unless the server
/// accepted the login and its schema.
#[tracing::instrument(skip_all, err, fields(team = %request.team, member = %request.member))]
pub async fn connect(
    store: &Store,
    request: ConnectRequest,
    now: DateTime<Utc>,
) -> Result<TeamLink, TeamError> {
    let member = link::check_name("member", &request.member)?;
    let team = link::check_name("team", &request.team)?;
    let (address, in_url) = ServerAddress::parse(&request.url)?;
    let given = request.password.or(in_url);
    let password = given.clone().or_else(|| link::kept_password(&address));
    let mut server = Server::open(&address, password.as_ref()).await?;
    let team_id = server.join(&team, &member).await?;
    server.close().await;
    let mut kept = given.is_none() && password.is_some();
    if let Some(password) = &given {
        match link::keep_password(&address, password) {
            Ok(()) => kept = true,
            // No keychain (a server, CI): later syncs use PGPASSWORD / ~/.pgpass instead.
            Err(err) => tracing::warn!(%err, "team password not kept"),
        }
    }
    let previous = current_link(store).await?;
    let same_team = previous
        .as_ref()
        .is_some_and(|p| p.url == address.url && p.team == team && p.team_id == team_id);
    let row = LinkRow {
        url: address.url.clone(),
        member,
        team,
        team_id,
        laptop_uid: previous.as_ref().map_or_else(
            || uuid::Uuid::new_v4().to_string(),
            |p| p.laptop_uid.clone(),
        ),
        pulled_seq: previous
            .as_ref()
            .filter(|_| same_team)
            .map_or(0, |p| p.pulled_seq),
        pulled_record_seq: previous
            .as_ref()
            .filter(|_| same_team)
            .map_or(0, |p| p.pulled_record_seq),
        connected_at: now,
        last_sync_at: previous
            .as_ref()
            .filter(|_| same_team)
            .and_then(|p| p.last_sync_at),
    };
    let mut tx = store.write().await?;
    repo::settle_shared(&mut tx).await?;
    if !same_team {
        // A different team gets this laptop's whole ledger.
        sqlx::query("UPDATE ledger_events SET shared = 0")
            .execute(&mut *tx)
            .await
            .map_err(StoreError::from)?;
        repo::unshare_records(&mut tx).await?;
    }
    repo::set_link(&mut tx, &row).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(TeamLink::of(&row, kept))
}

/// Open the linked team database with the kept password (or PGPASSWORD / ~/.pgpass).
pub async fn open_linked(store: &Store) -> Result<(Server, LinkRow), TeamError> {
    let row = current_link(store).await?.ok_or(TeamError::NotConnected)?;
    let (address, _) = ServerAddress::parse(&row.url)?;
    let password = link::kept_password(&address);
    let server = Server::open(&address, password.as_ref()).await?;
    Ok((server, row))
}

/// The longest a whole sync may take: a server that stops answering (a half-open connection, a
/// stalled proxy) ends it with [`TeamError::TimedOut`] instead of holding the background sync.
/// Every page is committed with its cursor, so a sync cut here loses nothing.
pub const SYNC_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Push what this laptop recorded, pull what the others did, and list the conflicts.
#[tracing::instrument(skip_all, err)]
pub async fn sync(store: &Store, now: DateTime<Utc>) -> Result<SyncReport, TeamError> {
    sync_within(store, now, SYNC_TIMEOUT).await
}

/// [`sync`], given up after `limit`.
pub async fn sync_within(
    store: &Store,
    now: DateTime<Utc>,
    limit: std::time::Duration,
) -> Result<SyncReport, TeamError> {
    tokio::time::timeout(limit, sync_unbounded(store, now))
        .await
        .unwrap_or(Err(TeamError::TimedOut {
            seconds: limit.as_secs(),
        }))
}

async fn sync_unbounded(store: &Store, now: DateTime<Utc>) -> Result<SyncReport, TeamError> {
    let (mut server, row) = open_linked(store).await?;
    let mut report = sync_with(store, &mut server, &row, now).await;
    if report.is_ok() {
        // The left-running alerts' settings and idle reports travel after the ledger.
        if let Err(err) = exchange_extras(store, &mut server, &row, now).await {
            report = Err(err);
        }
    }
    server.close().await;
    report
}

/// [`sync`] over an open connection (the app keeps one; the benchmark counts its round trips).
pub async fn sync_with(
    store: &Store,
    server: &mut Server,
    row: &LinkRow,
    now: DateTime<Utc>,
) -> Result<SyncReport, TeamError> {
    // The conflict report replays the instances whose ledger changed; that work runs beside the
    // push (the server is busy inserting) and beside the pull's pages, not after them.
    let mut warmup = conflicts::Warmup::default();
    warmup.nudge(store);
    let pushed = push::push(store, server, row.team_id, &row.member, &row.laptop_uid).await?;
    // After the events: every instance a record names is on the server by then.
    records::push(store, server, row.team_id, &row.member, &row.laptop_uid).await?;
    let pulled = pull::pull(
        store,
        server,
        pull::Pulling {
            team_id: row.team_id,
            member: &row.member,
            laptop: &row.laptop_uid,
            now,
        },
        &mut warmup,
    )
    .await?;
    let warmed = warmup.finish().await;
    // After the events, so every instance a resolution names is on the server.
    let mut found = conflicts::conflicts_using(store, warmed).await?;
    if conflicts::exchange(store, server, row.team_id, &found, now).await? > 0 {
        found = conflicts::conflicts(store).await?;
    }
    let mut tx = store.write().await?;
    repo::set_last_sync(&mut tx, now).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(SyncReport {
        pushed,
        pulled: pulled.events,
        conflicts: found,
    })
}

/// What travels besides the ledger and its records, after them: the left-running alerts'
/// settings and idle reports, and the shared Verify summaries.
async fn exchange_extras(
    store: &Store,
    server: &mut Server,
    row: &LinkRow,
    now: DateTime<Utc>,
) -> Result<(), TeamError> {
    alerts::exchange(store, server, row, now).await?;
    verify::exchange(store, server, row, now).await
}

/// Unlink this database and forget the kept password. The ledger stays as it is.
pub async fn disconnect(store: &Store) -> Result<Option<TeamLink>, TeamError> {
    let Some(row) = current_link(store).await? else {
        return Ok(None);
    };
    if let Ok((address, _)) = ServerAddress::parse(&row.url) {
        if let Err(err) = link::forget_password(&address) {
            tracing::warn!(%err, "team password not removed from the keychain");
        }
    }
    let mut tx = store.write().await?;
    repo::delete_link(&mut tx).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(Some(TeamLink::of(&row, false)))
}

/// Set the team's monthly budget in one currency.
pub async fn set_budget(store: &Store, currency: &str, amount: Decimal) -> Result<(), TeamError> {
    let currency = crate::billing::Currency::parse(currency)?;
    crate::billing::new_instance::validate_budget(amount)?;
    let (mut server, row) = open_linked(store).await?;
    let result = sqlx::query(
        "INSERT INTO team_budgets (team_id, currency, amount, set_by) VALUES ($1, $2, $3, $4)
         ON CONFLICT (team_id, currency)
         DO UPDATE SET amount = excluded.amount, set_by = excluded.set_by, set_at = now()",
    )
    .bind(row.team_id)
    .bind(currency.code())
    .bind(amount.normalize().to_string())
    .bind(&row.member)
    .execute(&mut server.conn)
    .await
    .map_err(|e| server.failed(&e));
    server.close().await;
    result?;
    // Until the next pull brings the whole list, the views show this budget offline too.
    let mut cached = {
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
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
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
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
        .map(|p| link::check_name("project", p))
        .transpose()?;
    let mut tx = store.write().await?;
    let id: Option<i64> = sqlx::query_scalar("SELECT id FROM instances WHERE name = ?")
        .bind(instance)
        .fetch_optional(&mut *tx)
        .await
        .map_err(StoreError::from)?;
    let id = id.ok_or_else(|| crate::billing::BillingError::UnknownInstance {
        name: instance.to_owned(),
    })?;
    repo::set_project(&mut tx, id, project.as_deref()).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

/// The project `instance` is rented for, if anyone said.
pub async fn project_of(store: &Store, instance: &str) -> Result<Option<String>, TeamError> {
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
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
    let members: Vec<(String, Option<DateTime<Utc>>)> =
        sqlx::query_as("SELECT name, last_sync_at FROM members WHERE team_id = $1 ORDER BY name")
            .bind(team_id)
            .fetch_all(&mut server.conn)
            .await
            .map_err(|e| server.failed(&e))?;
    let budgets: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT currency, amount, set_by FROM team_budgets WHERE team_id = $1 ORDER BY currency",
    )
    .bind(team_id)
    .fetch_all(&mut server.conn)
    .await
    .map_err(|e| server.failed(&e))?;
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
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
        cached_budgets(repo::team_budgets(&mut conn).await?)
    };
    let instances = views::instances(store, now).await?;
    let pending_push = {
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
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

/// How often the app syncs in the background while linked.
pub const BACKGROUND_SYNC_EVERY: std::time::Duration = std::time::Duration::from_secs(120);

/// The app's background push/pull: every `every`, sync when this database is linked to a team.
/// A failure (offline, a password changed elsewhere) is logged and retried next time; the
/// Settings → Team page shows the last sync time and the conflicts.
pub async fn keep_in_sync(
    store: Store,
    clock: std::sync::Arc<dyn crate::Clock>,
    every: std::time::Duration,
) {
    loop {
        tokio::time::sleep(every).await;
        if !matches!(current_link(&store).await, Ok(Some(_))) {
            continue;
        }
        match sync(&store, clock.now()).await {
            // The sync's last page brings the team budgets the reminders read.
            Ok(report) => tracing::info!(
                pushed = report.pushed,
                pulled = report.pulled,
                conflicts = report.conflicts.len(),
                "team sync"
            ),
            Err(err) => tracing::warn!(%err, "team sync failed; retrying later"),
        }
    }
}
