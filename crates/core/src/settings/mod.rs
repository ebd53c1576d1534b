//! What the user chose and what they left unfinished, kept across restarts: the interface
//! language, the default currency for new rentals, whether first run is done, and the draft of a
//! wizard closed half-way. One JSON value per key in the `settings` table, so adding a preference
//! needs no migration. Functions take a `SqliteConnection` so they run on the pool or inside a
//! caller's transaction.

mod error;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sqlx::SqliteConnection;
use ts_rs::TS;

pub use error::SettingsError;

/// Languages the UI ships; the first is what a Chinese system gets, the second everyone else.
pub const LANGUAGES: &[&str] = &["zh-CN", "en"];

/// Wizards whose unfinished state is kept; later wizards add their name here.
pub const WIZARDS: &[&str] = &["new_rental", "choose_gpu"];

/// A draft is a form's worth of fields; anything bigger is a bug on the caller's side.
pub const MAX_DRAFT_BYTES: usize = 64 * 1024;

const LANGUAGE_KEY: &str = "language";
const CURRENCY_KEY: &str = "currency";
const ONBOARDED_KEY: &str = "onboarded";
const THEME_KEY: &str = "theme";

/// Light or dark, or whatever the system says (the default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Theme {
    #[default]
    System,
    Light,
    Dark,
}

/// The user's choices. `None` means never chosen: the UI falls back to the system locale.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Preferences {
    pub language: Option<String>,
    /// ISO 4217 code proposed for new rentals; each rental still keeps its own currency.
    pub currency: Option<String>,
    /// First run (welcome, language, currency) completed.
    pub onboarded: bool,
    /// Light, dark, or the system's (an unknown stored value reads as the system's).
    #[serde(default)]
    pub theme: Theme,
}

#[tracing::instrument(skip_all, err)]
pub async fn load_preferences(conn: &mut SqliteConnection) -> Result<Preferences, SettingsError> {
    Ok(Preferences {
        language: read(conn, LANGUAGE_KEY).await?,
        currency: read(conn, CURRENCY_KEY).await?,
        onboarded: read(conn, ONBOARDED_KEY).await?.unwrap_or(false),
        // A value a later version wrote and this one does not know is the system's theme.
        theme: read::<serde_json::Value>(conn, THEME_KEY)
            .await?
            .and_then(|value| serde_json::from_value(value).ok())
            .unwrap_or_default(),
    })
}

/// Saves all three choices. The currency is checked by the caller's currency rules (billing owns
/// which codes exist); the language is checked here.
#[tracing::instrument(skip_all, err)]
pub async fn save_preferences(
    conn: &mut SqliteConnection,
    preferences: &Preferences,
    now: DateTime<Utc>,
) -> Result<(), SettingsError> {
    if let Some(language) = &preferences.language {
        if !LANGUAGES.contains(&language.as_str()) {
            return Err(SettingsError::UnknownLanguage {
                value: language.clone(),
            });
        }
    }
    write(conn, LANGUAGE_KEY, &preferences.language, now).await?;
    write(conn, CURRENCY_KEY, &preferences.currency, now).await?;
    write(conn, ONBOARDED_KEY, &preferences.onboarded, now).await?;
    write(conn, THEME_KEY, &preferences.theme, now).await
}

/// The draft a wizard saved last, if any.
#[tracing::instrument(skip(conn), err)]
pub async fn load_draft(
    conn: &mut SqliteConnection,
    wizard: &str,
) -> Result<Option<serde_json::Value>, SettingsError> {
    read(conn, &draft_key(wizard)?).await
}

#[tracing::instrument(skip(conn, draft), err)]
pub async fn save_draft(
    conn: &mut SqliteConnection,
    wizard: &str,
    draft: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<(), SettingsError> {
    let key = draft_key(wizard)?;
    let bytes = draft.to_string().len();
    if bytes > MAX_DRAFT_BYTES {
        return Err(SettingsError::DraftTooLarge {
            bytes,
            limit: MAX_DRAFT_BYTES,
        });
    }
    write(conn, &key, draft, now).await
}

/// Forget a wizard's draft (finished or abandoned). Clearing a draft that is not there is fine.
#[tracing::instrument(skip(conn), err)]
pub async fn clear_draft(conn: &mut SqliteConnection, wizard: &str) -> Result<(), SettingsError> {
    let key = draft_key(wizard)?;
    Ok(crate::store::settings::delete(conn, &key).await?)
}

fn draft_key(wizard: &str) -> Result<String, SettingsError> {
    if WIZARDS.contains(&wizard) {
        Ok(format!("draft.{wizard}"))
    } else {
        Err(SettingsError::UnknownWizard {
            value: wizard.to_owned(),
        })
    }
}

/// One setting of another module (e.g. `update.skipped_version`), read as JSON.
pub(crate) async fn read_value<T: DeserializeOwned>(
    conn: &mut SqliteConnection,
    key: &str,
) -> Result<Option<T>, SettingsError> {
    read(conn, key).await
}

/// One setting of another module, written as JSON.
pub(crate) async fn write_value<T: Serialize>(
    conn: &mut SqliteConnection,
    key: &str,
    value: &T,
    now: DateTime<Utc>,
) -> Result<(), SettingsError> {
    write(conn, key, value, now).await
}

async fn read<T: DeserializeOwned>(
    conn: &mut SqliteConnection,
    key: &str,
) -> Result<Option<T>, SettingsError> {
    let text = crate::store::settings::value_of(conn, key).await?;
    text.map(|text| {
        serde_json::from_str(&text).map_err(|err| SettingsError::Corrupt {
            key: key.to_owned(),
            reason: err.to_string(),
        })
    })
    .transpose()
}

async fn write<T: Serialize>(
    conn: &mut SqliteConnection,
    key: &str,
    value: &T,
    now: DateTime<Utc>,
) -> Result<(), SettingsError> {
    let text = serde_json::to_string(value).map_err(|err| SettingsError::Corrupt {
        key: key.to_owned(),
        reason: err.to_string(),
    })?;
    Ok(crate::store::settings::put(conn, key, text, now).await?)
}

#[cfg(test)]
mod tests;
