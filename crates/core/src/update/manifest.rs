//! `latest.json`, the update description: read like any other untrusted input (bounded, every
//! field checked), in the shape tauri-plugin-updater reads too, so the app can hand the same JSON
//! to the plugin's installer.
//!
//! ```json
//! { "version": "0.2.0", "pub_date": "2026-12-01T08:00:00Z",
//!   "notes": "English notes (what the plugin shows)",
//!   "notes_by_language": { "en": "…", "zh-CN": "…" },
//!   "platforms": { "linux-x86_64": { "url": "https://…/Leasehold_0.2.0_amd64.deb", "signature": "…" },
//!                  "windows-x86_64": { "url": "https://…/Leasehold_0.2.0_x64-setup.exe", "signature": "…" } } }
//! ```

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use semver::Version;
use serde_json::Value;

use super::endpoints::checked_url;
use super::UpdateError;

/// The largest `latest.json` read: notes for two languages and a few platforms fit many times.
pub const MAX_MANIFEST_BYTES: usize = 256 * 1024;
/// Release notes longer than this (per language) are cut.
pub const MAX_NOTES_CHARS: usize = 20_000;
/// A minisign signature, base64-encoded, is about 400 characters.
const MAX_SIGNATURE_CHARS: usize = 4096;

/// One platform's download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub url: url::Url,
    /// Base64 of the minisign signature file, as `tauri signer sign` writes it.
    pub signature: String,
}

/// What one `latest.json` announces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    pub version: Version,
    pub pub_date: Option<DateTime<Utc>>,
    /// `notes`: one text (English), what the Tauri plugin reads.
    pub notes: Option<String>,
    /// `notes_by_language`: the notes per language (`en`, `zh-CN`).
    pub notes_by_language: BTreeMap<String, String>,
    /// Keyed by `{os}-{arch}` (and `{os}-{arch}-{installer}`); entries that cannot be read are
    /// left out, so a broken entry for one platform does not stop another from updating.
    pub platforms: BTreeMap<String, Artifact>,
}

impl Release {
    /// The notes in `language`, else English, else the plain `notes`.
    pub fn notes_in(&self, language: &str) -> Option<&str> {
        self.notes_by_language
            .get(language)
            .or_else(|| self.notes_by_language.get("en"))
            .or(self.notes.as_ref())
            .map(String::as_str)
    }

    /// The download for `platform` (`linux-x86_64`), preferring the entry for its installer
    /// (`linux-x86_64-deb`, `windows-x86_64-nsis`) the way the Tauri plugin does.
    pub fn artifact_for(&self, platform: &str, installer: Option<&str>) -> Option<&Artifact> {
        installer
            .and_then(|installer| self.platforms.get(&format!("{platform}-{installer}")))
            .or_else(|| self.platforms.get(platform))
    }
}

fn bad(reason: impl Into<String>) -> UpdateError {
    UpdateError::BadManifest {
        reason: reason.into(),
    }
}

/// A version as release tags write it (`v0.2.0` or `0.2.0`).
pub fn parse_version(text: &str) -> Result<Version, UpdateError> {
    Version::parse(text.trim().trim_start_matches('v')).map_err(|_| UpdateError::BadVersion {
        value: text.chars().take(64).collect(),
    })
}

/// Notes as text to show: control characters other than line breaks and tabs removed, cut to
/// [`MAX_NOTES_CHARS`].
fn clean_notes(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .take(MAX_NOTES_CHARS)
        .collect::<String>()
        .trim()
        .to_owned()
}

fn artifact(value: &Value) -> Option<Artifact> {
    let url = checked_url(value.get("url")?.as_str()?).ok()?;
    let signature = value.get("signature")?.as_str()?.trim();
    let well_formed = !signature.is_empty()
        && signature.len() <= MAX_SIGNATURE_CHARS
        && signature
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    well_formed.then(|| Artifact {
        url,
        signature: signature.to_owned(),
    })
}

/// Reads `bytes` as a `latest.json`.
pub fn parse_manifest(bytes: &[u8]) -> Result<Release, UpdateError> {
    if bytes.len() > MAX_MANIFEST_BYTES {
        return Err(bad(format!("larger than {MAX_MANIFEST_BYTES} bytes")));
    }
    let json: Value = serde_json::from_slice(bytes).map_err(|err| bad(err.to_string()))?;
    let Some(object) = json.as_object() else {
        return Err(bad("not a JSON object"));
    };
    let version = match object.get("version") {
        Some(Value::String(text)) => {
            parse_version(text).map_err(|_| bad(format!("version {text:?} is not semver")))?
        }
        _ => return Err(bad("no version")),
    };
    // The plugin refuses a date it cannot read, so this does too.
    let pub_date = match object.get("pub_date") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(
            DateTime::parse_from_rfc3339(text)
                .map_err(|err| bad(format!("pub_date {text:?}: {err}")))?
                .with_timezone(&Utc),
        ),
        Some(_) => return Err(bad("pub_date is not a date")),
    };
    let notes = match object.get("notes") {
        Some(Value::String(text)) => Some(clean_notes(text)).filter(|text| !text.is_empty()),
        None | Some(Value::Null) => None,
        Some(_) => return Err(bad("notes is not text")),
    };
    let notes_by_language = object
        .get("notes_by_language")
        .and_then(Value::as_object)
        .map(|languages| {
            languages
                .iter()
                .filter(|(language, _)| language.len() <= 16)
                .filter_map(|(language, text)| {
                    Some((language.clone(), clean_notes(text.as_str()?)))
                })
                .filter(|(_, text)| !text.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let Some(entries) = object.get("platforms").and_then(Value::as_object) else {
        return Err(bad("no platforms"));
    };
    let platforms = entries
        .iter()
        .filter_map(|(name, entry)| Some((name.clone(), artifact(entry)?)))
        .collect();
    Ok(Release {
        version,
        pub_date,
        notes,
        notes_by_language,
        platforms,
    })
}

/// This computer's key in `platforms` (`linux-x86_64`, `windows-x86_64`), as the plugin names it.
pub fn current_platform() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("linux-x86_64"),
        ("linux", "aarch64") => Some("linux-aarch64"),
        ("windows", "x86_64") => Some("windows-x86_64"),
        ("windows", "aarch64") => Some("windows-aarch64"),
        ("macos", "x86_64") => Some("darwin-x86_64"),
        ("macos", "aarch64") => Some("darwin-aarch64"),
        _ => None,
    }
}

/// The installer this platform's updates use (`deb` on Linux, `nsis` on Windows).
pub fn current_installer() -> Option<&'static str> {
    match std::env::consts::OS {
        "linux" => Some("deb"),
        "windows" => Some("nsis"),
        _ => None,
    }
}
