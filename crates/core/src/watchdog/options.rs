//! The watchdog's settings: parsed from the CLI's flags or the card's form (the same strings,
//! `90s`, `30m`, `8h`), checked, and filled from the rental's provider where left out.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::WatchdogError;
use crate::billing::ProviderKey;
use crate::stop::GENERIC_POWER_OFF;

/// One thing the watchdog watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Signal {
    /// Utilisation of every GPU (`nvidia-smi`), below `gpu_below` percent on all of them.
    Gpu,
    /// CPU time of the instance's cgroup (or the machine), below 10 % of one core.
    Cpu,
    /// Bytes read and written on disk, below 1 MiB/s.
    Io,
    /// Bytes received and sent on every interface but loopback, below 100 KiB/s.
    Net,
    /// Interactive SSH logins (a terminal open on the instance): none.
    Ssh,
}

impl Signal {
    pub const ALL: [Self; 5] = [Self::Gpu, Self::Cpu, Self::Io, Self::Net, Self::Ssh];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gpu => "gpu",
            Self::Cpu => "cpu",
            Self::Io => "io",
            Self::Net => "net",
            Self::Ssh => "ssh",
        }
    }
}

/// The settings as typed: every field optional, durations as text. What the CLI flags and the
/// card's form both send.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct WatchdogRequest {
    #[ts(optional)]
    pub idle: Option<String>,
    #[ts(optional)]
    pub interval: Option<String>,
    #[ts(optional)]
    pub grace: Option<String>,
    #[ts(optional)]
    pub ttl: Option<String>,
    #[ts(optional)]
    pub gpu_below: Option<String>,
    /// Comma-separated: `gpu,cpu,io,net,ssh`.
    #[ts(optional)]
    pub signals: Option<String>,
    #[ts(optional)]
    pub power_off: Option<String>,
    #[ts(optional)]
    pub pre_stop: Option<String>,
    #[ts(optional)]
    pub state_dir: Option<String>,
}

/// Checked settings, in whole seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct WatchdogOptions {
    #[ts(type = "number")]
    pub idle_seconds: u64,
    #[ts(type = "number")]
    pub interval_seconds: u64,
    #[ts(type = "number")]
    pub grace_seconds: u64,
    /// Power off after this long whatever the instance does; `null`: no limit.
    #[ts(type = "number | null")]
    pub ttl_seconds: Option<u64>,
    /// A GPU at or above this utilisation (percent) is busy.
    pub gpu_below: u8,
    pub signals: Vec<Signal>,
    pub power_off: String,
    pub pre_stop: Option<String>,
    /// `~/…` or an absolute path.
    pub state_dir: String,
}

pub const DEFAULT_STATE_DIR: &str = "~/.leasehold/watchdog";
const DAY: u64 = 24 * 3600;
const MAX_COMMAND_CHARS: usize = 2000;

impl Default for WatchdogOptions {
    fn default() -> Self {
        Self {
            idle_seconds: 30 * 60,
            interval_seconds: 60,
            grace_seconds: 10 * 60,
            ttl_seconds: None,
            gpu_below: 5,
            signals: Signal::ALL.to_vec(),
            power_off: GENERIC_POWER_OFF.to_owned(),
            pre_stop: None,
            state_dir: DEFAULT_STATE_DIR.to_owned(),
        }
    }
}

impl WatchdogOptions {
    /// The defaults for an instance of `provider`: its own power-off command where it has one.
    pub fn for_provider(provider: Option<ProviderKey>) -> Self {
        let power_off = provider
            .and_then(|p| p.power_off().command)
            .unwrap_or_else(|| GENERIC_POWER_OFF.to_owned());
        Self {
            power_off,
            ..Self::default()
        }
    }

    /// `request` on top of `defaults`, checked. Nothing is installed when this fails.
    pub fn resolve(request: &WatchdogRequest, defaults: Self) -> Result<Self, WatchdogError> {
        let mut options = defaults;
        if let Some(text) = given(request.idle.as_deref()) {
            options.idle_seconds = parse_duration("idle", text)?;
        }
        if let Some(text) = given(request.interval.as_deref()) {
            options.interval_seconds = parse_duration("interval", text)?;
        }
        if let Some(text) = given(request.grace.as_deref()) {
            options.grace_seconds = parse_duration("grace", text)?;
        }
        if let Some(text) = given(request.ttl.as_deref()) {
            options.ttl_seconds = Some(parse_duration("ttl", text)?);
        }
        if let Some(text) = given(request.gpu_below.as_deref()) {
            options.gpu_below = parse_percent(text)?;
        }
        if let Some(text) = given(request.signals.as_deref()) {
            options.signals = parse_signals(text)?;
        }
        if let Some(text) = given(request.power_off.as_deref()) {
            options.power_off = text.to_owned();
        }
        if let Some(text) = request.pre_stop.as_deref() {
            options.pre_stop = given(Some(text)).map(str::to_owned);
        }
        if let Some(text) = given(request.state_dir.as_deref()) {
            options.state_dir = text.to_owned();
        }
        options.validate()?;
        Ok(options)
    }

    /// Checks what `resolve` cannot see from one field alone.
    pub fn validate(&self) -> Result<(), WatchdogError> {
        let bad = |field: &'static str, reason: &str| {
            Err(WatchdogError::BadSetting {
                field,
                reason: reason.to_owned(),
            })
        };
        if !(1..=3600).contains(&self.interval_seconds) {
            return bad("interval", "between 1 s and 1 h");
        }
        if self.idle_seconds < self.interval_seconds || self.idle_seconds > 30 * DAY {
            return bad("idle", "at least one interval and at most 30 days");
        }
        if self.grace_seconds > 30 * DAY {
            return bad("grace", "at most 30 days");
        }
        if let Some(ttl) = self.ttl_seconds {
            if ttl == 0 || ttl > 365 * DAY {
                return bad("ttl", "more than 0 s and at most 365 days");
            }
        }
        if self.gpu_below > 100 {
            return Err(WatchdogError::BadThreshold(self.gpu_below.to_string()));
        }
        if self.signals.is_empty() {
            return Err(WatchdogError::BadSignal(String::new()));
        }
        check_command("power_off", &self.power_off)?;
        if let Some(pre_stop) = &self.pre_stop {
            check_command("pre_stop", pre_stop)?;
        }
        check_state_dir(&self.state_dir)
    }
}

fn given(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

/// `90s`, `30m`, `8h`, `1h 30m` in whole seconds (humantime's grammar).
pub fn parse_duration(field: &'static str, text: &str) -> Result<u64, WatchdogError> {
    let bad = || WatchdogError::BadDuration {
        field,
        value: text.to_owned(),
    };
    let duration: Duration = humantime::parse_duration(text.trim()).map_err(|_| bad())?;
    if duration.subsec_nanos() != 0 {
        return Err(bad());
    }
    Ok(duration.as_secs())
}

fn parse_percent(text: &str) -> Result<u8, WatchdogError> {
    let trimmed = text.trim().trim_end_matches('%');
    match trimmed.parse::<u8>() {
        Ok(value) if value <= 100 => Ok(value),
        _ => Err(WatchdogError::BadThreshold(text.to_owned())),
    }
}

fn parse_signals(text: &str) -> Result<Vec<Signal>, WatchdogError> {
    let mut signals = Vec::new();
    for word in text.split(',').map(str::trim) {
        let signal = Signal::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(word))
            .ok_or_else(|| WatchdogError::BadSignal(word.to_owned()))?;
        if !signals.contains(&signal) {
            signals.push(signal);
        }
    }
    signals.sort();
    Ok(signals)
}

fn check_command(field: &'static str, command: &str) -> Result<(), WatchdogError> {
    let reason = if command.trim().is_empty() {
        "it is empty"
    } else if command.chars().count() > MAX_COMMAND_CHARS {
        "it is longer than 2000 characters"
    } else if command.contains(['\n', '\r', '\0']) {
        "it must be one line"
    } else {
        return Ok(());
    };
    Err(WatchdogError::BadSetting {
        field,
        reason: reason.to_owned(),
    })
}

/// `~/…` or `/…`, of letters, digits, `.`, `_`, `-` and `/`, without `..`: the folder is written
/// into a systemd unit, a crontab line and a profile hook, which must all read it unchanged.
fn check_state_dir(dir: &str) -> Result<(), WatchdogError> {
    let rest = dir
        .strip_prefix("~/")
        .or_else(|| dir.strip_prefix('/'))
        .unwrap_or("");
    let ok = !rest.is_empty()
        && dir.len() <= 200
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
        && !rest.split('/').any(|part| part == "..");
    if ok {
        Ok(())
    } else {
        Err(WatchdogError::BadStateDir(dir.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> WatchdogRequest {
        WatchdogRequest::default()
    }

    #[test]
    fn defaults_match_the_cli_contract() {
        let options = WatchdogOptions::resolve(&request(), WatchdogOptions::default()).unwrap();
        assert_eq!(options.idle_seconds, 1800);
        assert_eq!(options.interval_seconds, 60);
        assert_eq!(options.grace_seconds, 600);
        assert_eq!(options.gpu_below, 5);
        assert_eq!(options.signals, Signal::ALL.to_vec());
        assert_eq!(options.power_off, "shutdown -h now");
        assert_eq!(options.state_dir, "~/.leasehold/watchdog");
        assert_eq!(options.ttl_seconds, None);
    }

    #[test]
    fn durations_thresholds_and_signals_are_read_as_typed() {
        let options = WatchdogOptions::resolve(
            &WatchdogRequest {
                idle: Some("90s".into()),
                interval: Some("30s".into()),
                grace: Some("1h 30m".into()),
                ttl: Some("8h".into()),
                gpu_below: Some("10%".into()),
                signals: Some("ssh, GPU".into()),
                ..request()
            },
            WatchdogOptions::default(),
        )
        .unwrap();
        assert_eq!(options.idle_seconds, 90);
        assert_eq!(options.grace_seconds, 5400);
        assert_eq!(options.ttl_seconds, Some(8 * 3600));
        assert_eq!(options.gpu_below, 10);
        assert_eq!(options.signals, vec![Signal::Gpu, Signal::Ssh]);
    }

    #[test]
    fn bad_input_is_refused_with_the_field_it_belongs_to() {
        let cases = [
            (
                WatchdogRequest {
                    idle: Some("30 minutes please".into()),
                    ..request()
                },
                "watchdog.bad_duration",
            ),
            (
                WatchdogRequest {
                    interval: Some("500ms".into()),
                    ..request()
                },
                "watchdog.bad_duration",
            ),
            (
                WatchdogRequest {
                    interval: Some("0s".into()),
                    ..request()
                },
                "watchdog.bad_setting",
            ),
            (
                WatchdogRequest {
                    idle: Some("10s".into()),
                    ..request()
                },
                "watchdog.bad_setting",
            ),
            (
                WatchdogRequest {
                    gpu_below: Some("101".into()),
                    ..request()
                },
                "watchdog.bad_threshold",
            ),
            (
                WatchdogRequest {
                    gpu_below: Some("-1".into()),
                    ..request()
                },
                "watchdog.bad_threshold",
            ),
            (
                WatchdogRequest {
                    signals: Some("gpu,disk".into()),
                    ..request()
                },
                "watchdog.bad_signal",
            ),
            (
                WatchdogRequest {
                    state_dir: Some("~/a b".into()),
                    ..request()
                },
                "watchdog.bad_state_dir",
            ),
            (
                WatchdogRequest {
                    state_dir: Some("/tmp/../etc".into()),
                    ..request()
                },
                "watchdog.bad_state_dir",
            ),
            (
                WatchdogRequest {
                    state_dir: Some("relative".into()),
                    ..request()
                },
                "watchdog.bad_state_dir",
            ),
            (
                WatchdogRequest {
                    power_off: Some("a\nb".into()),
                    ..request()
                },
                "watchdog.bad_setting",
            ),
        ];
        for (case, code) in cases {
            let err = WatchdogOptions::resolve(&case, WatchdogOptions::default())
                .expect_err(&format!("{case:?} must be refused"));
            assert_eq!(crate::Coded::code(&err), code, "{case:?}");
            assert!(
                crate::Coded::is_bad_input(&err),
                "{case:?} is the caller's mistake"
            );
        }
    }

    #[test]
    fn the_providers_power_off_command_is_the_default() {
        let autodl = WatchdogOptions::for_provider(Some(ProviderKey::Autodl));
        assert_eq!(autodl.power_off, "/usr/bin/shutdown");
        let vast = WatchdogOptions::for_provider(Some(ProviderKey::Vast));
        assert_eq!(
            vast.power_off, GENERIC_POWER_OFF,
            "no in-instance command: the generic one"
        );
    }
}
