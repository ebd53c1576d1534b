//! Every backup is recorded: where it went on this computer, what it saved, and the SHA-256
//! that proved each copy. The release check reads the latest one.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::BackupError;
use crate::store::backups::{self as repo, BackupItemRow, BackupRow};
use crate::store::ledger::find_instance;
use crate::store::{Store, StoreError};

/// What kind of thing one item of a backup saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ItemKind {
    /// One file over SFTP.
    File,
    /// A folder file by file over SFTP (few, large files).
    Folder,
    /// A folder packed on the instance into one stream and unpacked here.
    PackedFolder,
    /// An environment export (conda / pip / recipes) saved here.
    Environment,
    /// `git push` run in a repository on the instance.
    GitPush,
    /// A copy into the provider's file storage on the instance.
    FileStorage,
}

impl ItemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::File => "file",
            Self::Folder => "folder",
            Self::PackedFolder => "packed_folder",
            Self::Environment => "environment",
            Self::GitPush => "git_push",
            Self::FileStorage => "file_storage",
        }
    }

    /// Copies files somewhere that outlives the instance.
    pub fn saves_data(self) -> bool {
        matches!(
            self,
            Self::File | Self::Folder | Self::PackedFolder | Self::FileStorage
        )
    }

    fn parse(text: &str) -> Result<Self, StoreError> {
        Ok(match text {
            "file" => Self::File,
            "folder" => Self::Folder,
            "packed_folder" => Self::PackedFolder,
            "environment" => Self::Environment,
            "git_push" => Self::GitPush,
            "file_storage" => Self::FileStorage,
            other => {
                return Err(StoreError::Corrupt {
                    what: "backup item kind",
                    value: other.to_owned(),
                })
            }
        })
    }
}

/// One thing a backup saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BackupItem {
    pub kind: ItemKind,
    pub remote_path: String,
    /// Where it is on this computer (`null` for a push or a copy that stayed on the instance).
    pub local_path: Option<String>,
    #[ts(type = "number")]
    pub files: u64,
    #[ts(type = "number")]
    pub bytes: u64,
    /// A file's SHA-256, or a folder's manifest's (one `HASH  ./path` line per file, sorted).
    pub sha256: Option<String>,
    /// What `git push` printed, or what the copy did.
    pub detail: Option<String>,
}

/// One recorded backup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BackupRecord {
    pub id: i64,
    pub instance: Option<String>,
    pub target: String,
    pub local_dir: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    #[ts(type = "number")]
    pub files: u64,
    #[ts(type = "number")]
    pub bytes: u64,
    pub items: Vec<BackupItem>,
}

/// The id of the instance named `name`, or why there is none.
pub async fn instance_id(store: &Store, name: &str) -> Result<i64, BackupError> {
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    find_instance(&mut conn, name)
        .await?
        .map(|row| row.id)
        .ok_or_else(|| BackupError::UnknownInstance(name.to_owned()))
}

fn count(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Record a finished backup; returns it with its id.
#[allow(clippy::too_many_arguments)]
pub async fn save(
    store: &Store,
    instance: Option<&str>,
    target: &str,
    local_dir: &Path,
    started_at: DateTime<Utc>,
    finished_at: DateTime<Utc>,
    items: Vec<BackupItem>,
) -> Result<BackupRecord, BackupError> {
    let instance_id = match instance {
        Some(name) => Some(instance_id(store, name).await?),
        None => None,
    };
    let files = items.iter().map(|i| i.files).sum();
    let bytes = items.iter().map(|i| i.bytes).sum();
    let mut tx = store.write().await?;
    let id = repo::insert_backup(
        &mut tx,
        &BackupRow {
            id: 0,
            instance_id,
            target: target.to_owned(),
            local_dir: local_dir.display().to_string(),
            started_at,
            finished_at,
            files: count(files),
            bytes: count(bytes),
        },
    )
    .await?;
    for item in &items {
        repo::insert_item(
            &mut tx,
            &BackupItemRow {
                id: 0,
                backup_id: id,
                kind: item.kind.as_str().to_owned(),
                remote_path: item.remote_path.clone(),
                local_path: item.local_path.clone(),
                files: count(item.files),
                bytes: count(item.bytes),
                sha256: item.sha256.clone(),
                detail: item.detail.clone(),
            },
        )
        .await?;
    }
    tx.commit().await.map_err(StoreError::from)?;
    Ok(BackupRecord {
        id,
        instance: instance.map(str::to_owned),
        target: target.to_owned(),
        local_dir: local_dir.display().to_string(),
        started_at,
        finished_at,
        files,
        bytes,
        items,
    })
}

async fn load(
    conn: &mut sqlx::SqliteConnection,
    instance: Option<&str>,
    rows: Vec<BackupRow>,
) -> Result<Vec<BackupRecord>, BackupError> {
    let mut records = Vec::with_capacity(rows.len());
    for row in rows {
        let items = repo::items(conn, row.id)
            .await?
            .into_iter()
            .map(|item| {
                Ok(BackupItem {
                    kind: ItemKind::parse(&item.kind)?,
                    remote_path: item.remote_path,
                    local_path: item.local_path,
                    files: u64::try_from(item.files).unwrap_or(0),
                    bytes: u64::try_from(item.bytes).unwrap_or(0),
                    sha256: item.sha256,
                    detail: item.detail,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        records.push(BackupRecord {
            id: row.id,
            instance: instance.map(str::to_owned),
            target: row.target,
            local_dir: row.local_dir,
            started_at: row.started_at,
            finished_at: row.finished_at,
            files: u64::try_from(row.files).unwrap_or(0),
            bytes: u64::try_from(row.bytes).unwrap_or(0),
            items,
        });
    }
    Ok(records)
}

/// The backups of instance `name`, newest first.
pub async fn history(store: &Store, name: &str) -> Result<Vec<BackupRecord>, BackupError> {
    let id = instance_id(store, name).await?;
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    let rows = repo::for_instance(&mut conn, id).await?;
    load(&mut conn, Some(name), rows).await
}

/// When instance `name`'s data was last saved (the start of its latest backup that copied
/// something: a push or an environment export alone does not count).
pub async fn last_backup_at(
    store: &Store,
    name: &str,
) -> Result<Option<DateTime<Utc>>, BackupError> {
    Ok(history(store, name)
        .await?
        .into_iter()
        .find(|record| record.items.iter().any(|item| item.kind.saves_data()))
        .map(|record| record.started_at))
}
