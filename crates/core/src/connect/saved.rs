//! The SSH target saved on an instance: the command and the login method in SQLite, the secret
//! (password or key passphrase) in the OS keychain and nowhere else.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::SqliteConnection;
use ts_rs::TS;

use super::plan::{AuthChoice, ConnectPlan};
use super::ConnectError;
use crate::billing::ProviderKey;
use crate::diagnose::{DiagnoseContext, Lang};
use crate::ssh::{
    expand_tilde, parse_ssh_command, passphrase_account, password_account, store_secret,
    Destination,
};
use crate::store::ledger::{find_instance, rules_for};
use crate::store::ssh_targets::{self, SshTargetRow};

/// How an instance is reached, as the UI shows it. Holds no secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct SavedTarget {
    pub instance: String,
    pub ssh_command: String,
    pub auth: AuthChoice,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub saved_at: DateTime<Utc>,
}

impl SavedTarget {
    /// The plan to connect again: the keychain supplies any secret.
    pub fn plan(&self) -> ConnectPlan {
        ConnectPlan {
            ssh_command: self.ssh_command.clone(),
            auth: self.auth.clone(),
            secret: None,
            trusted_fingerprint: None,
            keep_trying: false,
        }
    }
}

/// What saving did with the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct SaveReport {
    pub target: SavedTarget,
    /// False when a password or passphrase was given but no keychain could keep it (a Linux
    /// desktop without Secret Service): it is then asked again next time.
    pub secret_remembered: bool,
}

async fn instance_id(conn: &mut SqliteConnection, instance: &str) -> Result<i64, ConnectError> {
    find_instance(conn, instance)
        .await?
        .map(|row| row.id)
        .ok_or_else(|| ConnectError::UnknownInstance(instance.to_owned()))
}

/// Save (or replace) the target of `instance` after a successful test. The secret goes to the
/// keychain; the database gets the command, the method and where it resolved to.
#[tracing::instrument(skip(conn, plan, destination), err)]
pub async fn save_target(
    conn: &mut SqliteConnection,
    instance: &str,
    plan: &ConnectPlan,
    destination: &Destination,
    now: DateTime<Utc>,
) -> Result<SaveReport, ConnectError> {
    let instance_id = instance_id(conn, instance).await?;
    let row = SshTargetRow {
        instance_id,
        // Rebuilt from what was understood: words pasted after the host (a password, say)
        // never reach the database.
        ssh_command: parse_ssh_command(&plan.ssh_command)?.to_command_line(),
        auth_method: plan.auth.method().to_owned(),
        key_path: match &plan.auth {
            AuthChoice::Key { path } => Some(path.trim().to_owned()),
            AuthChoice::Agent | AuthChoice::Password => None,
        },
        host: destination.host.clone(),
        port: i64::from(destination.port),
        user: destination.user.clone(),
        saved_at: now,
    };
    ssh_targets::upsert(conn, &row).await?;
    let secret_remembered = match (&plan.secret, &plan.auth) {
        (Some(secret), AuthChoice::Password) => remember(&password_account(destination), secret),
        (Some(secret), AuthChoice::Key { path }) => {
            remember(&passphrase_account(&expand_tilde(path.trim())), secret)
        }
        _ => true,
    };
    Ok(SaveReport {
        target: from_row(instance, row)?,
        secret_remembered,
    })
}

fn remember(account: &str, secret: &crate::ssh::Secret) -> bool {
    match store_secret(account, secret) {
        Ok(()) => true,
        Err(err) => {
            tracing::warn!(code = crate::Coded::code(&err), %err, "secret not remembered");
            false
        }
    }
}

/// The saved target of `instance`, if it has one.
#[tracing::instrument(skip(conn), err)]
pub async fn load_target(
    conn: &mut SqliteConnection,
    instance: &str,
) -> Result<Option<SavedTarget>, ConnectError> {
    let instance_id = instance_id(conn, instance).await?;
    match ssh_targets::find(conn, instance_id).await? {
        Some(row) => from_row(instance, row).map(Some),
        None => Ok(None),
    }
}

/// How many GPUs the rental promised (its latest billing rules), so Verify can tell when fewer
/// are visible on the machine.
pub async fn rented_gpu_count(
    conn: &mut SqliteConnection,
    instance: &str,
) -> Result<Option<u32>, ConnectError> {
    let instance_id = instance_id(conn, instance).await?;
    Ok(rules_for(conn, instance_id)
        .await?
        .last()
        .and_then(|rules| u32::try_from(rules.gpu_count).ok()))
}

/// What the rental record tells the diagnosis rules about `instance`: the GPUs it promised and,
/// from its provider preset, whether it is a container or a virtual machine.
pub async fn diagnose_context(
    conn: &mut SqliteConnection,
    instance: &str,
    lang: Lang,
) -> Result<DiagnoseContext, ConnectError> {
    let row = find_instance(conn, instance)
        .await?
        .ok_or_else(|| ConnectError::UnknownInstance(instance.to_owned()))?;
    let expected_gpu_count = rented_gpu_count(conn, instance).await?;
    // A provider this version does not know (written by a newer one) just leaves it to the probe.
    let machine = ProviderKey::parse(&row.provider)
        .ok()
        .and_then(|key| key.preset().machine);
    Ok(DiagnoseContext {
        lang,
        expected_gpu_count,
        machine,
    })
}

/// Forget how to reach `instance` (the keychain entry stays for other instances on that host).
pub async fn forget_target(
    conn: &mut SqliteConnection,
    instance: &str,
) -> Result<bool, ConnectError> {
    let instance_id = instance_id(conn, instance).await?;
    Ok(ssh_targets::delete(conn, instance_id).await?)
}

fn from_row(instance: &str, row: SshTargetRow) -> Result<SavedTarget, ConnectError> {
    let corrupt = |what| ConnectError::CorruptTarget {
        instance: instance.to_owned(),
        what,
    };
    let auth = match (row.auth_method.as_str(), row.key_path) {
        ("key", Some(path)) => AuthChoice::Key { path },
        ("agent", None) => AuthChoice::Agent,
        ("password", None) => AuthChoice::Password,
        _ => return Err(corrupt("auth_method")),
    };
    Ok(SavedTarget {
        instance: instance.to_owned(),
        ssh_command: row.ssh_command,
        auth,
        host: row.host,
        port: u16::try_from(row.port).map_err(|_| corrupt("port"))?,
        user: row.user,
        saved_at: row.saved_at,
    })
}
