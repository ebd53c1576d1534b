//! What a provider says of one of its instances, in one shape for every provider, and the
//! checks every value passes before Leasehold believes it (a provider's API is untrusted input:
//! names with newlines, right-to-left marks or 10 000 characters, ids that would bend a URL,
//! prices that are not numbers).

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ssh::Secret;

/// An instance's power as the provider reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum RemoteState {
    /// Being created or powered on; not yet usable (RunPod PROVISIONING/STARTING, Vast.ai
    /// `loading`, Lambda `booting`, AutoDL `starting`).
    Starting,
    Running,
    /// Powered off: no GPU charge (storage may still bill).
    Stopped,
    /// The provider reports a failure (RunPod ERROR, Lambda `unhealthy`).
    Error,
    /// Terminated, destroyed or released: nothing bills any more.
    Gone,
    /// Left out of the listing, and no direct look said it was released (Leasehold's own word,
    /// never a provider's): it may still bill.
    Missing,
}

impl RemoteState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Running => "running",
            Self::Stopped => "stopped",
            Self::Error => "error",
            Self::Gone => "gone",
            Self::Missing => "missing",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "starting" => Self::Starting,
            "running" => Self::Running,
            "stopped" => Self::Stopped,
            "error" => Self::Error,
            "gone" => Self::Gone,
            "missing" => Self::Missing,
            _ => return None,
        })
    }
}

/// A power change the provider's API can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum PowerVerb {
    On,
    Off,
    Release,
}

impl PowerVerb {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
            Self::Release => "release",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "on" => Self::On,
            "off" => Self::Off,
            "release" => Self::Release,
            _ => return None,
        })
    }

    /// The state that confirms the change.
    pub fn confirmed_by(self) -> RemoteState {
        match self {
            Self::On => RemoteState::Running,
            Self::Off => RemoteState::Stopped,
            Self::Release => RemoteState::Gone,
        }
    }
}

/// How the provider says the instance is reached over SSH.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SshEndpoint {
    pub host: String,
    pub port: u16,
    pub user: String,
}

impl SshEndpoint {
    /// Checked host, port and user; `None` for anything a shell or URL could be bent by.
    pub fn checked(host: &str, port: i64, user: &str) -> Option<Self> {
        let host = host.trim();
        let user = user.trim();
        let host_ok = !host.is_empty()
            && host.len() <= 253
            && !host.starts_with('-')
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'));
        let user_ok = !user.is_empty()
            && user.len() <= 64
            && !user.starts_with('-')
            && user
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
        let port = u16::try_from(port).ok().filter(|p| *p > 0)?;
        (host_ok && user_ok).then(|| Self {
            host: host.to_owned(),
            port,
            user: user.to_owned(),
        })
    }

    /// The `ssh …` line Leasehold saves for the instance.
    pub fn command(&self) -> String {
        format!("ssh -p {} {}@{}", self.port, self.user, self.host)
    }
}

/// One instance as its provider lists it, every value already checked.
#[derive(Debug, Clone)]
pub struct RemoteInstance {
    /// The provider's id, safe in a URL path.
    pub id: String,
    /// The provider's name for it, cleaned (may be empty).
    pub name: String,
    pub state: RemoteState,
    /// The provider's own word for the state, for notes and errors.
    pub provider_word: String,
    pub gpu_model: Option<String>,
    pub gpu_count: u32,
    pub region: Option<String>,
    /// What the whole instance costs per hour while running, in the provider's currency;
    /// `None` when the provider did not say (RunPod reports 0 while stopped).
    pub price_per_hour: Option<Decimal>,
    /// What it costs per hour while stopped (Vast.ai's `storage_cost`), when the provider says.
    pub stopped_per_hour: Option<Decimal>,
    /// A price the provider sent that was not believed (its text), for the sync's warning.
    pub refused_price: Option<String>,
    pub created_at: Option<DateTime<Utc>>,
    pub started_at: Option<DateTime<Utc>>,
    pub ssh: Option<SshEndpoint>,
    /// A root password the provider hands out (AutoDL); goes straight to the keychain.
    pub password: Option<Secret>,
    /// The power changes the provider allows now; `None` when it does not say (all it
    /// supports are tried).
    pub actions: Option<Vec<PowerVerb>>,
}

/// A listing: the instances that passed the checks, and a warning for each one that did not.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub instances: Vec<RemoteInstance>,
    pub warnings: Vec<String>,
    /// Requests it took (pages).
    pub requests: u32,
    /// False when the provider's answer did not show that every page was read (AutoDL without
    /// `max_page`): an instance it leaves out may be on a page never asked for.
    pub complete: bool,
    /// Ids the provider listed but that could not be read this time (listed more than once, or
    /// a refused AutoDL snapshot): their instances are left as they are, neither changed nor
    /// missing.
    pub skipped: Vec<String>,
}

impl Listing {
    /// An empty listing, complete until a provider file says otherwise.
    pub fn new() -> Self {
        Self {
            complete: true,
            ..Self::default()
        }
    }

    /// Add the instances of the list under `key` in `body`, each read by `parse`; one that
    /// does not read becomes a warning, never the end of the listing. Returns how many the
    /// page held; no such list is a malformed answer.
    pub fn read_page(
        &mut self,
        provider: &'static str,
        body: &serde_json::Value,
        key: &str,
        parse: impl Fn(&serde_json::Value) -> Result<RemoteInstance, String>,
    ) -> Result<usize, super::AccountError> {
        let items = body
            .get(key)
            .and_then(serde_json::Value::as_array)
            .ok_or_else(|| super::AccountError::Malformed {
                provider,
                detail: format!("no {key:?} list"),
            })?;
        self.requests += 1;
        for item in items {
            match parse(item) {
                Ok(instance) => self.instances.push(instance),
                Err(why) => self.warnings.push(format!("{provider}: {why}; skipped")),
            }
        }
        Ok(items.len())
    }

    /// Drop every entry whose id appears more than once, with a warning naming the id.
    pub fn drop_duplicates(&mut self, provider: &'static str) {
        let mut count: std::collections::HashMap<String, usize> = Default::default();
        for i in &self.instances {
            *count.entry(i.id.clone()).or_default() += 1;
        }
        let mut twice: Vec<String> = count
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(id, _)| id)
            .collect();
        if twice.is_empty() {
            return;
        }
        twice.sort();
        self.instances.retain(|i| !twice.contains(&i.id));
        for id in &twice {
            self.warnings.push(format!(
                "{provider} listed instance {id} more than once; skipped (which entry is true is unknown)"
            ));
        }
        self.skipped.extend(twice);
    }
}

/// What the provider charged for one instance on one UTC day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    pub remote_id: String,
    pub day: NaiveDate,
    pub amount: Decimal,
}

/// Longest provider name kept; the rest is cut (a name is a label).
pub const MAX_NAME_CHARS: usize = 80;

/// Characters that print as nothing (or as a blank) and so let two names that look the same
/// differ: Unicode's format class (Cf, as of Unicode 15.1: soft hyphen, zero-width and
/// direction marks, word joiners, invisible operators, tag characters …), the Braille blank
/// U+2800, the Hangul fillers and the variation selectors.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{0600}'..='\u{0605}' | '\u{061C}' | '\u{06DD}' | '\u{070F}'
        | '\u{0890}'..='\u{0891}' | '\u{08E2}' | '\u{180E}' | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}'
        | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}' | '\u{110BD}' | '\u{110CD}'
        | '\u{13430}'..='\u{1343F}' | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0001}' | '\u{E0020}'..='\u{E007F}'
        // Not Cf, but blank all the same.
        | '\u{2800}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

/// A provider's text made safe to show and store: control characters, invisible characters
/// ([`is_invisible`]: direction marks, zero-width characters, tags, variation selectors) removed
/// before anything is cut, whitespace collapsed, at most `max` characters.
pub fn clean_text(raw: &str, max: usize) -> String {
    let mut out = String::new();
    let mut space = false;
    for c in raw.chars() {
        if is_invisible(c) {
            continue;
        }
        // Control characters (newlines, escapes) part words like spaces do.
        if c.is_control() || c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
        if out.chars().count() >= max {
            break;
        }
    }
    out
}

/// What two names are compared by: case and width folded (fullwidth `ｍｙｂｏｘ` is `mybox`), so
/// names that read the same are taken as the same.
pub fn name_key(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    name.nfkc()
        .filter(|c| !is_invisible(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// A provider's id, if it is one: letters, digits, '-' and '_', at most 64 characters.
pub fn checked_id(raw: &str) -> Option<String> {
    let id = raw.trim();
    (!id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    .then(|| id.to_owned())
}

/// The largest hourly price believed (the catalog's most expensive 8-GPU machines cost far less).
/// Every provider's hourly price passes it, whatever unit the provider sends it in.
pub const MAX_PRICE_PER_HOUR: i64 = 10_000;

/// A JSON number or numeric string as a decimal, read from its text (never through a float);
/// `None` for anything else and for a negative number.
pub fn number(value: Option<&serde_json::Value>) -> Option<Decimal> {
    let text = match value? {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => s.trim().to_owned(),
        _ => return None,
    };
    text.parse::<Decimal>()
        .or_else(|_| Decimal::from_scientific(&text))
        .ok()
        .filter(|n| *n >= Decimal::ZERO)
}

/// An hourly price in the provider's currency, if it is believable: at most
/// [`MAX_PRICE_PER_HOUR`], six decimals.
pub fn hourly(price: Decimal) -> Option<Decimal> {
    (price >= Decimal::ZERO && price <= Decimal::from(MAX_PRICE_PER_HOUR))
        .then(|| price.round_dp(6).normalize())
}

/// A JSON number or numeric string as a decimal hourly price, refused when negative or absurd.
pub fn price(value: Option<&serde_json::Value>) -> Option<Decimal> {
    number(value).and_then(hourly)
}

/// The provider's price text when it sent one Leasehold refused (negative, absurd, not a number),
/// for the warning that names it.
pub fn refused_price(value: Option<&serde_json::Value>, read: Option<Decimal>) -> Option<String> {
    if read.is_some() {
        return None;
    }
    match value? {
        serde_json::Value::Null => None,
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::String(s) if s.trim().is_empty() => None,
        other => Some(clean_text(&other.to_string(), 40)),
    }
}

/// An RFC 3339 time, or unix seconds (a number, possibly fractional), as UTC; times before 2015
/// or far in the future are not believed.
pub fn time(value: Option<&serde_json::Value>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let parsed = match value? {
        serde_json::Value::String(s) => DateTime::parse_from_rfc3339(s.trim())
            .ok()
            .map(|t| t.with_timezone(&Utc)),
        serde_json::Value::Number(n) => {
            let seconds = n.as_f64()?;
            if !seconds.is_finite() {
                return None;
            }
            // Whole seconds are enough for a bill; the fraction would be float noise.
            Utc.timestamp_opt(seconds.trunc() as i64, 0).single()
        }
        _ => None,
    }?;
    let earliest = Utc.with_ymd_and_hms(2015, 1, 1, 0, 0, 0).single()?;
    (parsed >= earliest && parsed <= now + chrono::Duration::days(1)).then_some(parsed.min(now))
}

/// A GPU count between 1 and 64.
pub fn gpu_count(value: Option<&serde_json::Value>) -> Option<u32> {
    let n = value?.as_u64()?;
    (1..=64).contains(&n).then_some(n as u32)
}

/// The catalog's name for a provider's GPU name ("NVIDIA GeForce RTX 4090" → "RTX 4090"), or the
/// cleaned provider name when the catalog does not know it.
pub fn gpu_model(raw: &str) -> Option<String> {
    let cleaned = clean_text(raw, 60);
    if cleaned.is_empty() {
        return None;
    }
    Some(
        crate::catalog::find_gpu(&cleaned)
            .map(|spec| spec.name.to_string())
            .unwrap_or(cleaned),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hostile_text_is_cleaned_and_cut() {
        assert_eq!(clean_text("a\nb\"c'\u{202E}d", 80), "a b\"c'd");
        for hidden in [
            "\u{2060}",
            "\u{00AD}",
            "\u{2800}",
            "\u{E0061}",
            "\u{FE0F}",
            "\u{E0100}",
        ] {
            assert_eq!(
                clean_text(&format!("my{hidden}box"), 80),
                "mybox",
                "{hidden:?}"
            );
        }
        assert_eq!(
            clean_text(&format!("{}ab", "\u{200B}".repeat(200)), 2),
            "ab",
            "invisible characters go before the cut"
        );
        assert_eq!(name_key("ＭｙＢｏｘ"), name_key("mybox"));
        assert_eq!(clean_text("  \u{200B} ", 80), "");
        assert_eq!(clean_text(&"x".repeat(10_000), 80).chars().count(), 80);
        assert_eq!(clean_text("\x1b]0;pwned\x07name", 80), "]0;pwned name");
    }

    #[test]
    fn ids_that_would_bend_a_url_are_refused() {
        assert_eq!(checked_id(" pod_abc-1 "), Some("pod_abc-1".into()));
        assert_eq!(checked_id("../pods"), None);
        assert_eq!(checked_id("a?b"), None);
        assert_eq!(checked_id(&"1".repeat(65)), None);
    }

    #[test]
    fn prices_are_read_from_their_text() {
        assert_eq!(price(Some(&json!(0.44))), Some("0.44".parse().unwrap()));
        assert_eq!(price(Some(&json!("2.49"))), Some("2.49".parse().unwrap()));
        assert_eq!(price(Some(&json!(0.8021))), Some("0.8021".parse().unwrap()));
        assert_eq!(price(Some(&json!(-1))), None);
        assert_eq!(price(Some(&json!("NaN"))), None);
        assert_eq!(price(Some(&json!(1e9))), None);
        assert_eq!(price(Some(&json!(null))), None);
        assert_eq!(refused_price(Some(&json!(-1)), None), Some("-1".into()));
        assert_eq!(refused_price(Some(&json!(null)), None), None);
    }

    #[test]
    fn times_from_text_or_unix_seconds() {
        let now = Utc.with_ymd_and_hms(2026, 6, 2, 0, 0, 0).unwrap();
        assert_eq!(
            time(Some(&json!("2026-06-01T12:02:00+02:00")), now),
            Some(Utc.with_ymd_and_hms(2026, 6, 1, 10, 2, 0).unwrap())
        );
        assert_eq!(
            time(Some(&json!(1_780_000_000.7)), now),
            Some(Utc.timestamp_opt(1_780_000_000, 0).unwrap())
        );
        assert_eq!(time(Some(&json!("yesterday")), now), None);
        assert_eq!(time(Some(&json!(0)), now), None, "1970 is no creation time");
    }

    #[test]
    fn ssh_endpoints_are_checked() {
        assert!(SshEndpoint::checked("195.26.233.3", 34446, "root").is_some());
        assert!(SshEndpoint::checked("host;rm -rf", 22, "root").is_none());
        assert!(SshEndpoint::checked("-oProxyCommand=x", 22, "root").is_none());
        assert!(SshEndpoint::checked("h", 70000, "root").is_none());
        assert_eq!(
            SshEndpoint::checked("ssh4.vast.ai", 10600, "root")
                .unwrap()
                .command(),
            "ssh -p 10600 root@ssh4.vast.ai"
        );
    }
}
