use crate::settings::SettingsError;
use crate::Coded;

/// One endpoint that did not give a usable `latest.json`, and why (its URL already redacted).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[ts(export)]
pub struct EndpointFailure {
    pub url: String,
    pub reason: String,
}

fn list(failures: &[EndpointFailure]) -> String {
    failures
        .iter()
        .map(|failure| format!("{}: {}", failure.url, failure.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error("no update server answered ({})", list(.failures))]
    Unreachable { failures: Vec<EndpointFailure> },
    #[error("{value:?} is not an update address (https, or http on this computer only)")]
    BadEndpoint { value: String },
    #[error("{value:?} is not a version number (like 0.2.0)")]
    BadVersion { value: String },
    #[error("the update description cannot be read: {reason}")]
    BadManifest { reason: String },
    #[error("the new version has no download for this computer ({platform})")]
    NoBuildForPlatform { platform: String },
    #[error("this build of Leasehold has no update key built in, so it cannot check a download; get the new version from the website")]
    NoPublicKey,
    #[error("the download could not be fetched: {detail}")]
    Download { detail: String },
    #[error("the download is larger than {limit} bytes and was refused")]
    TooLarge { limit: u64 },
    #[error("the download's signature does not match Leasehold's update key ({reason}); nothing was installed")]
    BadSignature { reason: String },
    #[error("there is no update to install; check for updates first")]
    NothingToInstall,
    #[error("the update could not be installed: {detail}")]
    InstallFailed { detail: String },
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

impl Coded for UpdateError {
    fn code(&self) -> &'static str {
        match self {
            Self::Unreachable { .. } => "update.unreachable",
            Self::BadEndpoint { .. } => "update.bad_endpoint",
            Self::BadVersion { .. } => "update.bad_version",
            Self::BadManifest { .. } => "update.bad_manifest",
            Self::NoBuildForPlatform { .. } => "update.no_build_for_platform",
            Self::NoPublicKey => "update.no_public_key",
            Self::Download { .. } => "update.download_failed",
            Self::TooLarge { .. } => "update.too_large",
            Self::BadSignature { .. } => "update.bad_signature",
            Self::NothingToInstall => "update.nothing_to_install",
            Self::InstallFailed { .. } => "update.install_failed",
            Self::Settings(inner) => inner.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::BadEndpoint { .. } | Self::BadVersion { .. } => true,
            Self::Settings(inner) => inner.is_bad_input(),
            _ => false,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Unreachable { failures } => vec![(
                "endpoints",
                failures
                    .iter()
                    .map(|failure| failure.url.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            )],
            Self::BadEndpoint { value } | Self::BadVersion { value } => {
                vec![("value", value.clone())]
            }
            Self::NoBuildForPlatform { platform } => vec![("platform", platform.clone())],
            Self::TooLarge { limit } => vec![("limit_mib", (limit / (1024 * 1024)).to_string())],
            _ => Vec::new(),
        }
    }
}
