//! A download's minisign signature, checked as tauri-plugin-updater checks it (the plugin checks
//! it again before installing): the public key and the signature are base64 of minisign's text
//! files, as `tauri signer` writes them; the signature must be by that key over exactly these
//! bytes, and its trusted comment (covered by the signature) must name the version announced, so
//! an old, validly signed build cannot be passed off as a new one.

use base64::Engine;
use minisign_verify::{PublicKey, Signature};
use semver::Version;

use super::UpdateError;

/// The public key this build trusts: the one given at build time (`LEASEHOLD_UPDATE_PUBKEY`,
/// set by `make release-artifacts`). A debug build also takes it from the environment at run
/// time, so the tests can sign with a throwaway key; a release build never does.
pub fn public_key() -> Option<String> {
    if cfg!(debug_assertions) {
        if let Some(key) = std::env::var(PUBLIC_KEY_ENV)
            .ok()
            .filter(|key| !key.trim().is_empty())
        {
            return Some(key.trim().to_owned());
        }
    }
    option_env!("LEASEHOLD_UPDATE_PUBKEY")
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .map(str::to_owned)
}

/// The build-time variable holding the public key (base64 of the minisign `.pub` file).
pub const PUBLIC_KEY_ENV: &str = "LEASEHOLD_UPDATE_PUBKEY";

fn refused(reason: impl Into<String>) -> UpdateError {
    UpdateError::BadSignature {
        reason: reason.into(),
    }
}

fn base64_text(value: &str, what: &str) -> Result<String, UpdateError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(value.trim())
        .map_err(|_| refused(format!("the {what} is not base64")))?;
    String::from_utf8(bytes).map_err(|_| refused(format!("the {what} is not text")))
}

/// The version a signature's trusted comment names (`…\tversion:0.2.0`), as the Tauri CLI
/// writes it with `--app-version`.
fn signed_version(trusted_comment: &str) -> Option<&str> {
    trusted_comment
        .split('\t')
        .find_map(|field| field.strip_prefix("version:"))
}

/// Checks `bytes` against `signature` (base64) with `public_key` (base64), and that the
/// signature was made for `announced`.
pub fn verify(
    bytes: &[u8],
    signature: &str,
    public_key: &str,
    announced: &Version,
) -> Result<(), UpdateError> {
    let key = PublicKey::decode(&base64_text(public_key, "update key")?)
        .map_err(|err| refused(format!("the update key cannot be read: {err}")))?;
    let signature = Signature::decode(&base64_text(signature, "signature")?)
        .map_err(|err| refused(format!("the signature cannot be read: {err}")))?;
    key.verify(bytes, &signature, true)
        .map_err(|err| refused(err.to_string()))?;
    let Some(signed) = signed_version(signature.trusted_comment()) else {
        return Err(refused("the signature does not name a version"));
    };
    match Version::parse(signed.trim().trim_start_matches('v')) {
        Ok(signed) if signed == *announced => Ok(()),
        _ => Err(refused(format!(
            "signed for version {signed}, announced as {announced}"
        ))),
    }
}
