//! Linking this database to a team and unlinking it: what `team connect` and `team disconnect`
//! change here, apart from the sync so that what a link keeps (and what it never keeps, the
//! password) can be read in one place.

use chrono::{DateTime, Utc};
use serde::Serialize;
use ts_rs::TS;

use super::address::{check_name, forget_password, keep_password, kept_password, ServerAddress};
use super::server::Server;
use super::TeamError;
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

pub(crate) async fn current_link(store: &Store) -> Result<Option<LinkRow>, TeamError> {
    let mut conn = store.read().await?;
    Ok(repo::link(&mut conn).await?)
}

/// The link, if this database has one.
pub async fn link(store: &Store) -> Result<Option<TeamLink>, TeamError> {
    Ok(current_link(store).await?.map(|row| {
        let kept = ServerAddress::parse(&row.url)
            .map(|(address, _)| kept_password(&address).is_some())
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
    let member = check_name("member", &request.member)?;
    let team = check_name("team", &request.team)?;
    let (address, in_url) = ServerAddress::parse(&request.url)?;
    let given = request.password.or(in_url);
    let password = given.clone().or_else(|| kept_password(&address));
    let mut server = Server::open(&address, password.as_ref()).await?;
    let team_id = server.join(&team, &member).await?;
    server.close().await;
    let mut kept = given.is_none() && password.is_some();
    if let Some(password) = &given {
        match keep_password(&address, password) {
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
        repo::unshare_events(&mut tx).await?;
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
    let password = kept_password(&address);
    let server = Server::open(&address, password.as_ref()).await?;
    Ok((server, row))
}

/// Unlink this database and forget the kept password. The ledger stays as it is.
pub async fn disconnect(store: &Store) -> Result<Option<TeamLink>, TeamError> {
    let Some(row) = current_link(store).await? else {
        return Ok(None);
    };
    if let Ok((address, _)) = ServerAddress::parse(&row.url) {
        if let Err(err) = forget_password(&address) {
            tracing::warn!(%err, "team password not removed from the keychain");
        }
    }
    let mut tx = store.write().await?;
    repo::delete_link(&mut tx).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(Some(TeamLink::of(&row, false)))
}
