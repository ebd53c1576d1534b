//! The hunt's pure rules: how long to wait before the next try, what a provider's answer means
//! for the hunt, and when the spending limit stops it. No I/O, so each is tested on its own.

use std::time::Duration;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::AccountError;
use crate::stop::StopError;

use super::KeeperError;

/// Why a hunt ended without powering the instance on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum GaveUp {
    /// The time limit passed.
    Time,
    /// The next power-on would pass the spending limit.
    Spend,
    /// The provider refused for a reason waiting will not fix (a wrong key, a released
    /// instance, an action it does not allow).
    Refused,
}

impl GaveUp {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Time => "time",
            Self::Spend => "spend",
            Self::Refused => "refused",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "time" => Self::Time,
            "spend" => Self::Spend,
            "refused" => Self::Refused,
            _ => return None,
        })
    }
}

/// What one power-on try's failure means for the hunt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The provider has no free GPU for it now: try again later.
    NoStock(String),
    /// Nothing was decided (unreachable, rate limited, an unreadable answer, a power-on taken
    /// but not yet confirmed): try again later.
    Transient(String),
    /// Waiting will not change it: the hunt ends at once.
    Refused(String),
}

/// The providers' "no free GPU" words. AutoDL publishes no error table: its answer as captured
/// by community clients is `{"code":"InternalError","msg":"当前算力规格暂无库存, …"}`, so the
/// message is matched, never a code. RunPod answers a start on a full host with free text.
const NO_STOCK_WORDS: &[&str] = &[
    "暂无库存",
    "not enough free gpus",
    "no longer any instances available",
    "insufficient-capacity",
    "no_capacity",
];

pub fn is_no_stock(detail: &str) -> bool {
    let lower = detail.to_lowercase();
    NO_STOCK_WORDS.iter().any(|w| lower.contains(w))
}

/// Read a failed power-on try.
pub fn classify(err: &StopError) -> Answer {
    let text = err.to_string();
    match err {
        StopError::Account(account) => match account.as_ref() {
            AccountError::ActionNotAllowed { detail, .. }
            | AccountError::Refused { detail, .. }
                if is_no_stock(detail) =>
            {
                Answer::NoStock(text)
            }
            AccountError::Refused { status, .. } if *status == 429 || *status >= 500 => {
                Answer::Transient(text)
            }
            AccountError::Unreachable { .. }
            | AccountError::RateLimited { .. }
            | AccountError::Malformed { .. }
            | AccountError::NotConfirmed { .. } => Answer::Transient(text),
            _ => Answer::Refused(text),
        },
        StopError::ApiUnreachable { .. } | StopError::NotConfirmedByApi { .. } => {
            Answer::Transient(text)
        }
        StopError::ApiRefused { detail, .. } if is_no_stock(detail) => Answer::NoStock(text),
        _ => Answer::Refused(text),
    }
}

/// The wait after try number `tries` (1 for the first): `min`, then half as long again after
/// each try (in whole seconds), never above `max` (community hunters: 10 s × 1.5 up to 120 s).
pub fn interval(tries: u32, min: Duration, max: Duration) -> Duration {
    // Whole seconds, as the hunt's row keeps its next try.
    let (min, max) = (min.as_secs(), max.as_secs());
    let mut wait = min;
    for _ in 1..tries {
        wait = wait.saturating_add(wait / 2);
        if wait >= max {
            return Duration::from_secs(max);
        }
    }
    Duration::from_secs(wait.min(max))
}

/// Whether powering on now would pass the spending limit: what the instance cost since the
/// hunt began (a stopped instance's disk keeps billing) plus one hour at the price it bills
/// while running. `None`: no limit.
pub fn passes_spend(
    limit: Option<Decimal>,
    spent_since_start: Decimal,
    hourly_when_running: Decimal,
) -> bool {
    limit.is_some_and(|limit| spent_since_start + hourly_when_running > limit)
}

/// `90s`, `30m`, `2h`, `1d` or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, KeeperError> {
    let bad = || {
        KeeperError::InvalidInput(format!(
            "{:?} is not a duration; use e.g. 90s, 30m, 2h or 3d",
            text.chars().take(40).collect::<String>()
        ))
    };
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let n: u64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit.trim() {
        "s" => n,
        "m" => n.checked_mul(60).ok_or_else(bad)?,
        "h" => n.checked_mul(3600).ok_or_else(bad)?,
        "d" => n.checked_mul(86_400).ok_or_else(bad)?,
        _ => return Err(bad()),
    };
    // Ten years: beyond it nothing in the ledger's arithmetic is meant to go.
    if seconds == 0 || seconds > 10 * 365 * 86_400 {
        return Err(bad());
    }
    Ok(Duration::from_secs(seconds))
}

/// `--every MIN[..MAX]` in seconds (a lone MIN keeps the same interval every try).
pub fn parse_every(text: &str) -> Result<(Duration, Duration), KeeperError> {
    let bad = |why: &str| {
        KeeperError::InvalidInput(format!(
            "--every {:?}: {why}; use seconds, MIN or MIN..MAX (e.g. 10..120)",
            text.chars().take(40).collect::<String>()
        ))
    };
    let number = |part: &str| -> Result<u64, KeeperError> {
        part.trim()
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=86_400).contains(n))
            .ok_or_else(|| bad("each bound is a whole number of seconds from 1 to 86400"))
    };
    let (min, max) = match text.split_once("..") {
        Some((min, max)) => (number(min)?, number(max)?),
        None => {
            let n = number(text)?;
            (n, n)
        }
    };
    if max < min {
        return Err(bad("MAX is below MIN"));
    }
    Ok((Duration::from_secs(min), Duration::from_secs(max)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn the_wait_grows_by_half_up_to_the_cap() {
        let s = Duration::from_secs;
        let waits: Vec<u64> = (1..=8)
            .map(|t| interval(t, s(10), s(120)).as_secs())
            .collect();
        assert_eq!(waits, [10, 15, 22, 33, 49, 73, 109, 120]);
        assert_eq!(interval(1000, s(10), s(120)), s(120));
        assert_eq!(interval(5, s(30), s(30)), s(30));
    }

    #[test]
    fn autodls_no_stock_is_told_apart_from_other_refusals() {
        let no_stock = StopError::from(AccountError::ActionNotAllowed {
            provider: "AutoDL",
            action: "on",
            detail: "当前算力规格暂无库存, 请修改配置或稍等再试".into(),
        });
        assert!(matches!(classify(&no_stock), Answer::NoStock(_)));
        let other = StopError::from(AccountError::ActionNotAllowed {
            provider: "AutoDL",
            action: "on",
            detail: "实例已释放".into(),
        });
        assert!(matches!(classify(&other), Answer::Refused(_)));
        let key = StopError::from(AccountError::KeyRefused {
            provider: "AutoDL",
            detail: "token 无效或已过期".into(),
        });
        assert!(matches!(classify(&key), Answer::Refused(_)));
        let gone = StopError::from(AccountError::UnknownRemote {
            provider: "AutoDL",
            id: "x".into(),
        });
        assert!(matches!(classify(&gone), Answer::Refused(_)));
        let busy = StopError::from(AccountError::Refused {
            provider: "RunPod",
            status: 503,
            detail: "busy".into(),
        });
        assert!(matches!(classify(&busy), Answer::Transient(_)));
    }

    #[test]
    fn the_spending_limit_counts_the_next_hour() {
        assert!(!passes_spend(None, dec!(100), dec!(100)));
        assert!(!passes_spend(Some(dec!(3)), dec!(0.5), dec!(2.28)));
        assert!(passes_spend(Some(dec!(3)), dec!(0.8), dec!(2.28)));
    }

    #[test]
    fn durations_and_intervals() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("45").unwrap(), Duration::from_secs(45));
        for bad in ["", "0m", "2w", "h", "-3m", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        let s = Duration::from_secs;
        assert_eq!(parse_every("10..120").unwrap(), (s(10), s(120)));
        assert_eq!(parse_every("30").unwrap(), (s(30), s(30)));
        for bad in ["120..10", "0..5", "a..b", "5.."] {
            assert!(parse_every(bad).is_err(), "{bad}");
        }
    }
}
