//! What the instance page shows about backups: the last one, and for a stopped instance the
//! moment the provider wipes it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{latest_check, unknown, ReleaseError};
use crate::backup::record::history;
use crate::backup::{storage_of, BackupRecord};
use crate::billing::{ledger, InstanceState, ProviderKey};
use crate::store::Store;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BackupStatus {
    pub last_backup: Option<BackupRecord>,
    pub state: Option<InstanceState>,
    /// When the provider deletes the instance if it stays stopped.
    pub wipe_at: Option<DateTime<Utc>>,
    /// The latest release check: when, and whether it blocked.
    pub last_check_at: Option<DateTime<Utc>>,
    pub last_check_blocked: Option<bool>,
    pub console_url: Option<String>,
    pub file_storage: Option<String>,
}

pub async fn backup_status(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<BackupStatus, ReleaseError> {
    let detail = ledger::show(store, name, now)
        .await
        .map_err(unknown(name))?;
    let storage =
        storage_of(ProviderKey::parse(&detail.summary.provider).unwrap_or(ProviderKey::Custom));
    let check = latest_check(store, name).await?;
    let state = detail.summary.state;
    Ok(BackupStatus {
        last_backup: history(store, name).await?.into_iter().next(),
        state,
        wipe_at: (state == Some(InstanceState::Stopped))
            .then_some(detail.summary.wipe_at)
            .flatten(),
        last_check_at: check.as_ref().map(|c| c.at),
        last_check_blocked: check.map(|c| c.blocked),
        console_url: storage.console_url,
        file_storage: storage.file_storage,
    })
}
