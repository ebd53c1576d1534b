//! What each provider keeps and where: its data disk, its file storage that outlives an
//! instance, whether a saved image includes the data disk, and where its console releases an
//! instance. Our reading of the providers' documentation; the notes say "check the provider's
//! page" where it matters.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::parse::StorageLayout;
use super::report::{AtRiskReport, DiskKind, ScanNote};
use crate::billing::ProviderKey;

/// A provider's storage, as backups and release care about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ProviderStorage {
    /// The data disk's mount (AutoDL's `/root/autodl-tmp`): scanned by default.
    pub data_disk: Option<String>,
    /// File storage shared by the user's instances that survives a release (AutoDL's
    /// `/root/autodl-fs`): a backup can copy there without leaving the provider.
    pub file_storage: Option<String>,
    /// `Some(false)` when a saved image leaves the data disk out.
    pub image_keeps_data_disk: Option<bool>,
    /// The page of the provider's console that releases instances.
    pub console_url: Option<String>,
}

impl ProviderStorage {
    pub fn layout(&self) -> StorageLayout {
        StorageLayout {
            data_disk: self.data_disk.clone(),
            file_storage: self.file_storage.clone(),
        }
    }
}

/// The storage facts of `provider`.
pub fn storage_of(provider: ProviderKey) -> ProviderStorage {
    let make =
        |data: Option<&str>, fs: Option<&str>, image: Option<bool>, console: Option<&str>| {
            ProviderStorage {
                data_disk: data.map(str::to_owned),
                file_storage: fs.map(str::to_owned),
                image_keeps_data_disk: image,
                console_url: console.map(str::to_owned),
            }
        };
    match provider {
        ProviderKey::Autodl => make(
            Some("/root/autodl-tmp"),
            Some("/root/autodl-fs"),
            Some(false),
            Some("https://www.autodl.com/console/instance/list"),
        ),
        ProviderKey::Hengyuan => make(
            Some("/hy-tmp"),
            None,
            Some(false),
            Some("https://www.gpushare.com/center/hire"),
        ),
        ProviderKey::Runpod => make(
            Some("/workspace"),
            None,
            None,
            Some("https://www.runpod.io/console/pods"),
        ),
        ProviderKey::Vast => make(None, None, None, Some("https://cloud.vast.ai/instances/")),
        ProviderKey::Lambda => make(
            None,
            None,
            None,
            Some("https://cloud.lambdalabs.com/instances"),
        ),
        ProviderKey::Aliyun => make(None, None, None, Some("https://ecs.console.aliyun.com/")),
        ProviderKey::Tencent => make(
            None,
            None,
            None,
            Some("https://console.cloud.tencent.com/cvm/instance"),
        ),
        ProviderKey::Huawei => make(
            None,
            None,
            None,
            Some("https://console.huaweicloud.com/ecm/"),
        ),
        ProviderKey::Aws => make(
            None,
            None,
            None,
            Some("https://console.aws.amazon.com/ec2/home#Instances:"),
        ),
        ProviderKey::Gcp => make(
            None,
            None,
            None,
            Some("https://console.cloud.google.com/compute/instances"),
        ),
        ProviderKey::Bingxing | ProviderKey::Kuhu | ProviderKey::Custom => {
            make(None, None, None, None)
        }
    }
}

/// Default data-disk places scanned when the provider is not known (`backup scan` without an
/// instance): the ones that exist are scanned, the others are skipped silently.
pub const KNOWN_DATA_DISKS: &[&str] = &["/root/autodl-tmp", "/hy-tmp", "/workspace"];

/// The notes next to the list: what the provider keeps, and which items sit where it does not.
pub fn provider_notes(
    report: &AtRiskReport,
    storage: &ProviderStorage,
    wipe_after_stopped_days: Option<u32>,
) -> Vec<ScanNote> {
    let mut notes = Vec::new();
    let note = |code: &str, path: Option<&str>, days: Option<u32>, detail: String| ScanNote {
        code: code.to_owned(),
        path: path.map(str::to_owned),
        days,
        count: None,
        owner: None,
        detail,
    };
    if let Some(days) = wipe_after_stopped_days {
        notes.push(note(
            "provider.wipe_after_stopped",
            None,
            Some(days),
            format!("the provider deletes an instance that stays stopped for {days} days, with all its disks"),
        ));
    }
    let on_data_disk = report.disks.iter().find(|d| d.kind == DiskKind::DataDisk);
    if storage.image_keeps_data_disk == Some(false) {
        if let Some(disk) = on_data_disk {
            notes.push(note(
                "provider.image_skips_data_disk",
                Some(&disk.mount),
                None,
                format!(
                    "a saved image does not include the data disk {}; back up what is there",
                    disk.mount
                ),
            ));
        }
    }
    if let Some(fs) = &storage.file_storage {
        notes.push(note(
            "provider.file_storage",
            Some(fs),
            None,
            format!("{fs} is the provider's file storage: it outlives this instance, a copy there stays with the provider"),
        ));
    }
    notes.push(note(
        "release.deletes_disks",
        None,
        None,
        "releasing the instance deletes its system and data disks; nothing on them can be recovered".to_owned(),
    ));
    if !report.gpu_processes.is_empty() {
        notes.push(note(
            "scan.gpu_busy",
            None,
            None,
            format!(
                "{} process(es) still use the GPU; their output may still change",
                report.gpu_processes.len()
            ),
        ));
    }
    notes
}
