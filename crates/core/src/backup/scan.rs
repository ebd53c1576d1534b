//! Running the at-risk scan: the instance's context from the store (provider, wipe rule, last
//! backup, recipes run), the one script on the target, the parser, the provider's notes.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::parse::{parse_scan, StorageLayout};
use super::provider::{provider_notes, storage_of, ProviderStorage, KNOWN_DATA_DISKS};
use super::record::last_backup_at;
use super::report::{AtRiskReport, Environment};
use super::script::ScanScript;
use super::BackupError;
use crate::billing::{ledger, ProviderKey};
use crate::job::record::succeeded_recipes;
use crate::store::Store;
use crate::target::{CommandSpec, Target};

/// How long a scan may take (a very large home on a slow disk).
const SCAN_TIMEOUT: Duration = Duration::from_secs(600);

/// What the user chose for a scan.
#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// Folders to scan; empty means the defaults.
    pub roots: Vec<String>,
    /// Put first on PATH on the instance (tests put the fake GPU tools there).
    pub path_prefix: Option<String>,
}

/// What the store knows about the instance being scanned.
#[derive(Debug, Clone)]
pub struct InstanceContext {
    pub name: String,
    pub storage: ProviderStorage,
    pub wipe_after_stopped_days: Option<u32>,
    pub last_backup: Option<DateTime<Utc>>,
    pub recipes_run: usize,
    /// This computer's time when the context was read: the scan compares it with the
    /// instance's own clock, because `last_backup` is in this computer's time and the files'
    /// times are in the instance's.
    pub read_at: DateTime<Utc>,
}

impl InstanceContext {
    /// Read instance `name`'s provider, rules, last backup and recipes as of `now`.
    pub async fn load(store: &Store, name: &str, now: DateTime<Utc>) -> Result<Self, BackupError> {
        let detail = ledger::show(store, name, now)
            .await
            .map_err(|err| match err {
                crate::billing::BillingError::UnknownInstance { .. } => {
                    BackupError::UnknownInstance(name.to_owned())
                }
                other => other.into(),
            })?;
        let provider = ProviderKey::parse(&detail.summary.provider).unwrap_or(ProviderKey::Custom);
        let recipes_run = succeeded_recipes(store, name)
            .await
            .map(|jobs| jobs.len())
            .unwrap_or(0);
        Ok(Self {
            name: name.to_owned(),
            storage: storage_of(provider),
            wipe_after_stopped_days: detail.rules.wipe_after_stopped_days,
            last_backup: last_backup_at(store, name).await?,
            recipes_run,
            read_at: now,
        })
    }
}

/// Scan `target` for what would be lost. `context` is `None` for a target that is no recorded
/// instance (then every known data disk is tried and nothing counts as backed up).
pub async fn scan(
    target: &dyn Target,
    options: &ScanOptions,
    context: Option<&InstanceContext>,
) -> Result<AtRiskReport, BackupError> {
    let storage = context
        .map(|c| c.storage.clone())
        .unwrap_or_else(|| storage_of(ProviderKey::Custom));
    let data_disks = match &storage.data_disk {
        Some(disk) => vec![disk.clone()],
        None => KNOWN_DATA_DISKS.iter().map(|d| (*d).to_owned()).collect(),
    };
    let script = ScanScript {
        roots: options.roots.clone(),
        data_disks,
        since: context.and_then(|c| c.last_backup),
        sent_at: context.map(|c| c.read_at),
        path_prefix: options.path_prefix.clone(),
    };
    let spec = CommandSpec::new(script.render())
        .login_shell()
        .timeout(SCAN_TIMEOUT);
    let output = target.run(&spec).await?;
    let layout = if storage.data_disk.is_some() {
        storage.layout()
    } else {
        StorageLayout::default()
    };
    let mut report = parse_scan(&output.stdout, &layout);
    if !report.complete {
        let stderr = output.stderr_text();
        return Err(BackupError::ScanFailed(
            stderr
                .lines()
                .last()
                .unwrap_or("the scan ended early")
                .trim()
                .to_owned(),
        ));
    }
    if let Some(context) = context {
        if context.recipes_run > 0 {
            report.environments.push(Environment {
                kind: "recipes".into(),
                name: "leasehold".into(),
                path: None,
                packages: u32::try_from(context.recipes_run).ok(),
            });
        }
    }
    let mut notes = provider_notes(
        &report,
        &storage,
        context.and_then(|c| c.wipe_after_stopped_days),
    );
    report.notes.append(&mut notes);
    Ok(report)
}

/// Scan an instance recorded in `store` (or a bare target when `instance` is `None`).
pub async fn scan_recorded(
    store: &Store,
    target: &dyn Target,
    instance: Option<&str>,
    options: &ScanOptions,
    now: DateTime<Utc>,
) -> Result<AtRiskReport, BackupError> {
    let context = match instance {
        Some(name) => Some(InstanceContext::load(store, name, now).await?),
        None => None,
    };
    scan(target, options, context.as_ref()).await
}
