//! Self-update, everything but the installer itself (the app hands a verified download to
//! tauri-plugin-updater): where to look ([`endpoints`]), what a `latest.json` says
//! ([`manifest`]), whether it is newer than this build, the user's "Skip this version", when an
//! install may run ([`gate`]) and the download's signature ([`signature`]). The CLI's
//! `leasehold version --check` and the app's check share [`check`].

pub mod endpoints;
mod error;
pub mod fetch;
pub mod gate;
pub mod manifest;
pub mod signature;

use chrono::{DateTime, Utc};
use semver::Version;
use serde::Serialize;
use sqlx::SqliteConnection;
use ts_rs::TS;

pub use endpoints::Endpoints;
pub use error::{EndpointFailure, UpdateError};
pub use fetch::{download_verified, fetch_latest, Fetched};
pub use gate::{may_install, Activity, Readiness, RunningWork};
pub use manifest::{parse_manifest, Release};

/// This build's version.
pub const CURRENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// How often the app looks for an update while it runs.
pub const CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(6 * 60 * 60);

/// What a check found, in the CLI's `--json` shape (`leasehold version --check`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct UpdateCheck {
    pub current: String,
    pub latest: String,
    /// The release notes in the asked language (else English).
    pub notes: Option<String>,
    /// The download for this computer; `null` when the release has none.
    pub url: Option<String>,
    pub pub_date: Option<DateTime<Utc>>,
}

/// A check's result with what the adapters decide on.
#[derive(Debug, Clone)]
pub struct Checked {
    pub check: UpdateCheck,
    /// The release is newer than this build.
    pub newer: bool,
    pub fetched: Fetched,
}

/// Pure: `release` against the running `current` version, notes in `language`.
pub fn compare(current: &Version, release: &Release, language: &str) -> (UpdateCheck, bool) {
    let url = manifest::current_platform()
        .and_then(|platform| release.artifact_for(platform, manifest::current_installer()))
        .map(|artifact| artifact.url.to_string());
    let check = UpdateCheck {
        current: current.to_string(),
        latest: release.version.to_string(),
        notes: release.notes_in(language).map(str::to_owned),
        url,
        pub_date: release.pub_date,
    };
    (check, release.version > *current)
}

/// Asks `endpoints` in order and compares what the first usable one says with `current`.
pub async fn check(
    endpoints: &Endpoints,
    current: &str,
    language: &str,
) -> Result<Checked, UpdateError> {
    let current = manifest::parse_version(current)?;
    let fetched = fetch_latest(endpoints).await?;
    let (check, newer) = compare(&current, &fetched.release, language);
    Ok(Checked {
        check,
        newer,
        fetched,
    })
}

/// What the app's update dialog shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct UpdateOffer {
    pub current: String,
    pub version: String,
    pub pub_date: Option<DateTime<Utc>>,
    pub notes: Option<String>,
    /// Work an install would wait for right now (empty: it can install at once).
    pub waiting_for: Vec<Activity>,
}

const SKIPPED_KEY: &str = "update.skipped_version";

/// Pure: offer `checked` unless it is not newer or is the version the user chose to skip (a
/// later one is offered again).
pub fn should_offer(newer: bool, latest: &str, skipped: Option<&str>) -> bool {
    newer && skipped.is_none_or(|skipped| skipped.trim_start_matches('v') != latest)
}

/// The version the user chose to skip, if any.
pub async fn skipped_version(conn: &mut SqliteConnection) -> Result<Option<String>, UpdateError> {
    Ok(crate::settings::read_value(conn, SKIPPED_KEY).await?)
}

/// Remember "Skip this version" for `version`.
pub async fn skip_version(
    conn: &mut SqliteConnection,
    version: &str,
    now: DateTime<Utc>,
) -> Result<(), UpdateError> {
    let version = manifest::parse_version(version)?;
    crate::settings::write_value(conn, SKIPPED_KEY, &version.to_string(), now).await?;
    Ok(())
}

/// What the dialog should offer for `fetched` (compared with this build, notes in `language`),
/// or `None` when it is not newer, or is the version the user skipped and `respect_skip` (the
/// background check does; "Check now" does not).
pub async fn offer(
    conn: &mut SqliteConnection,
    fetched: &Fetched,
    language: &str,
    running: &[Activity],
    respect_skip: bool,
) -> Result<Option<UpdateOffer>, UpdateError> {
    let current = manifest::parse_version(CURRENT_VERSION)?;
    let (check, newer) = compare(&current, &fetched.release, language);
    let skipped = if respect_skip {
        skipped_version(conn).await?
    } else {
        None
    };
    if !should_offer(newer, &check.latest, skipped.as_deref()) {
        return Ok(None);
    }
    Ok(Some(UpdateOffer {
        current: check.current,
        version: check.latest,
        pub_date: check.pub_date,
        notes: check.notes,
        waiting_for: match may_install(running) {
            Readiness::Ready => Vec::new(),
            Readiness::Wait { for_activities } => for_activities,
        },
    }))
}

/// Downloads the release's build for this computer and checks its signature with the key built
/// into this build; the bytes go to the installer only when it holds.
pub async fn download_for_this_computer(
    release: &Release,
    progress: impl FnMut(u64, Option<u64>),
) -> Result<Vec<u8>, UpdateError> {
    let platform = manifest::current_platform().unwrap_or(std::env::consts::OS);
    let Some(artifact) = release.artifact_for(platform, manifest::current_installer()) else {
        return Err(UpdateError::NoBuildForPlatform {
            platform: platform.to_owned(),
        });
    };
    download_verified(
        artifact,
        &release.version,
        signature::public_key().as_deref(),
        progress,
    )
    .await
}

/// How an install goes, step by step, for the dialog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "step", rename_all = "snake_case")]
#[ts(export)]
pub enum UpdateProgress {
    /// Held back until these end.
    Waiting { for_activities: Vec<Activity> },
    Downloading {
        #[ts(type = "number")]
        done: u64,
        #[ts(type = "number | null")]
        total: Option<u64>,
    },
    /// The signature held; the installer runs and the app restarts.
    Installing,
}

/// Download progress worth telling: the first bytes, then each whole percent (or MiB when the
/// size is unknown), so a large download does not flood the window.
pub fn progress_step(done: u64, total: Option<u64>) -> u64 {
    match total {
        Some(total) if total > 0 => done.saturating_mul(100) / total,
        _ => done / (1024 * 1024),
    }
}

/// What Settings → About shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct BuildInfo {
    pub version: String,
    /// When this build was made (`SOURCE_DATE_EPOCH` at build time); `null` for a development
    /// build, which has none.
    pub build_date: Option<DateTime<Utc>>,
    /// `stable` for released builds, `dev` for one built from source.
    pub channel: String,
    /// An update key is built in (without one, updates are shown but never installed).
    pub can_verify_updates: bool,
}

/// This build's version, date and channel.
pub fn build_info() -> BuildInfo {
    BuildInfo {
        version: CURRENT_VERSION.to_owned(),
        build_date: option_env!("SOURCE_DATE_EPOCH")
            .and_then(|epoch| epoch.trim().parse::<i64>().ok())
            .and_then(|epoch| DateTime::from_timestamp(epoch, 0)),
        channel: option_env!("LEASEHOLD_CHANNEL")
            .filter(|channel| !channel.is_empty())
            .unwrap_or("dev")
            .to_owned(),
        can_verify_updates: signature::public_key().is_some(),
    }
}

#[cfg(test)]
mod tests;
