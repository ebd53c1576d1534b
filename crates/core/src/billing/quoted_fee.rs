//! A fee as the provider's page quotes it — per hour, per day or per month, for the whole thing
//! or per GB — turned into the hourly figure the ledger keeps.
//!
//! Why it exists: providers quote disks and IPs in whatever unit reads cheapest (0.005 元/GB·天 for
//! an AutoDL data disk, $0.10/GB·month for a RunPod volume, $0.005/h for an IP), while the rules
//! store one hourly fee per extra. Doing that sum in the user's head at 2 a.m. is where a missing
//! zero turns into a wrong bill, so the form takes the quote as written and core converts it.
//! A month counts as 30 days (720 hours), the way providers that quote monthly prorate.

use rust_decimal::{Decimal, RoundingStrategy};
use rust_decimal_macros::dec;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::rules::{limits, rate_in_range};
use super::BillingError;

/// Hours in the month a monthly quote means.
pub const HOURS_PER_MONTH: Decimal = dec!(720);
/// Decimal places kept in the hourly figure: enough that a month of it differs from the quote by
/// well under a cent.
const HOURLY_DECIMALS: u32 = 8;

/// The unit a provider quotes a fee in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum FeePer {
    Hour,
    Day,
    Month,
    /// Per GB per day: needs the size.
    GbDay,
    /// Per GB per month: needs the size.
    GbMonth,
}

impl FeePer {
    fn hours(self) -> Decimal {
        match self {
            Self::Hour => Decimal::ONE,
            Self::Day | Self::GbDay => dec!(24),
            Self::Month | Self::GbMonth => HOURS_PER_MONTH,
        }
    }

    fn is_per_gb(self) -> bool {
        matches!(self, Self::GbDay | Self::GbMonth)
    }
}

/// A fee as typed: the amount, its unit, and the size in GB when the unit is per GB.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct QuotedFee {
    #[ts(type = "string")]
    pub amount: Decimal,
    pub per: FeePer,
    #[ts(type = "string | null")]
    pub size_gb: Option<Decimal>,
}

/// The extras of [`super::BillingRules`] that are quoted per hour, day or month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum HourlyExtra {
    DataDisk,
    Snapshot,
    PublicIp,
}

impl HourlyExtra {
    /// The rules field the hourly figure goes to (a refused amount is shown next to it).
    pub fn field(self) -> &'static str {
        match self {
            Self::DataDisk => "data_disk_per_hour",
            Self::Snapshot => "snapshot_per_hour",
            Self::PublicIp => "public_ip_per_hour",
        }
    }

    /// The form field for the size a per-GB quote needs; none for an IP, which has no size.
    pub fn size_field(self) -> Option<&'static str> {
        match self {
            Self::DataDisk => Some("data_disk_size_gb"),
            Self::Snapshot => Some("snapshot_size_gb"),
            Self::PublicIp => None,
        }
    }
}

impl std::str::FromStr for FeePer {
    type Err = String;

    /// The unit as a command line writes it: `hour`, `day`, `month`, `gb-day`, `gb-month`
    /// (`h`, `d`, `mo`, `gb/day`, `GB·month` and other spellings of the same are taken too).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let unit: String = text
            .trim()
            .to_ascii_lowercase()
            .chars()
            .map(|c| {
                if matches!(c, '/' | '·' | '_' | ' ') {
                    '-'
                } else {
                    c
                }
            })
            .collect();
        match unit.as_str() {
            "h" | "hr" | "hour" => Ok(Self::Hour),
            "d" | "day" => Ok(Self::Day),
            "mo" | "month" => Ok(Self::Month),
            "gb-day" | "gb-d" => Ok(Self::GbDay),
            "gb-month" | "gb-mo" => Ok(Self::GbMonth),
            _ => Err(format!(
                "{text:?} is not a fee unit (hour, day, month, gb-day or gb-month)"
            )),
        }
    }
}

impl QuotedFee {
    /// A fee as typed on a command line, `AMOUNT` (per hour) or `AMOUNT/UNIT` (`0.005/gb-day`,
    /// `20/month`), with the size a per-GB unit needs; `field` names the rules field it is for.
    /// The amount and unit are only read here: [`Self::per_hour`] judges them.
    pub fn parse(
        field: &'static str,
        text: &str,
        size_gb: Option<Decimal>,
    ) -> Result<Self, BillingError> {
        let (amount, per) = match text.split_once('/') {
            Some((amount, unit)) => (
                amount,
                unit.parse::<FeePer>()
                    .map_err(|reason| BillingError::InvalidInput { field, reason })?,
            ),
            None => (text, FeePer::Hour),
        };
        Ok(Self {
            amount: super::rules::parse_decimal(field, amount)?,
            per,
            size_gb,
        })
    }

    /// The fee per hour, rounded to 8 decimals; refuses a negative amount, a per-GB quote without
    /// a size above zero (or on an extra that has no size), and a result beyond what any hourly fee
    /// may be.
    pub fn per_hour(&self, extra: HourlyExtra) -> Result<Decimal, BillingError> {
        rate_in_range(extra.field(), self.amount)?;
        let whole = if self.per.is_per_gb() {
            let size_field = extra.size_field().ok_or(BillingError::InvalidInput {
                field: extra.field(),
                reason: "this fee has no size to quote per GB".into(),
            })?;
            let size = self
                .size_gb
                .filter(|size| *size > Decimal::ZERO)
                .ok_or(BillingError::FeeNeedsSize { field: size_field })?;
            if size > limits::MAX_TRAFFIC_GB {
                return Err(BillingError::TooLarge {
                    field: size_field,
                    value: size,
                    max: limits::MAX_TRAFFIC_GB,
                });
            }
            self.amount
                .checked_mul(size)
                .ok_or(BillingError::Overflow {
                    what: "fee × size"
                })?
        } else {
            self.amount
        };
        let hourly = (whole / self.per.hours())
            .round_dp_with_strategy(HOURLY_DECIMALS, RoundingStrategy::MidpointAwayFromZero)
            .normalize();
        rate_in_range(extra.field(), hourly)?;
        Ok(hourly)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: HourlyExtra = HourlyExtra::DataDisk;

    fn fee(amount: Decimal, per: FeePer, size_gb: Option<Decimal>) -> QuotedFee {
        QuotedFee {
            amount,
            per,
            size_gb,
        }
    }

    #[test]
    fn an_hourly_quote_is_kept_as_typed() {
        let hourly = fee(dec!(0.05), FeePer::Hour, None)
            .per_hour(FIELDS)
            .unwrap();
        assert_eq!(hourly, dec!(0.05));
    }

    #[test]
    fn a_daily_or_monthly_quote_is_spread_over_its_hours() {
        assert_eq!(
            fee(dec!(2.4), FeePer::Day, None).per_hour(FIELDS).unwrap(),
            dec!(0.1)
        );
        assert_eq!(
            fee(dec!(36), FeePer::Month, None).per_hour(FIELDS).unwrap(),
            dec!(0.05)
        );
    }

    #[test]
    fn a_per_gb_quote_is_multiplied_by_the_size_first() {
        // AutoDL's data disk expansion: 0.005 元/GB·天 on 200 GB is 1 元 a day.
        let autodl = fee(dec!(0.005), FeePer::GbDay, Some(dec!(200)));
        assert_eq!(autodl.per_hour(FIELDS).unwrap(), dec!(0.04166667));
        // A RunPod network volume: $0.07/GB·month on 100 GB is $7 a month.
        let runpod = fee(dec!(0.07), FeePer::GbMonth, Some(dec!(100)));
        let hourly = runpod.per_hour(FIELDS).unwrap();
        assert_eq!(hourly, dec!(0.00972222));
        let month = hourly * HOURS_PER_MONTH;
        assert!(
            (month - dec!(7)).abs() < dec!(0.01),
            "a month of it is $7, got {month}"
        );
    }

    #[test]
    fn a_per_gb_quote_without_a_size_names_the_size_field() {
        for size in [None, Some(Decimal::ZERO), Some(dec!(-5))] {
            let err = fee(dec!(0.1), FeePer::GbMonth, size)
                .per_hour(FIELDS)
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    BillingError::FeeNeedsSize {
                        field: "data_disk_size_gb"
                    }
                ),
                "{size:?}: {err:?}"
            );
        }
    }

    #[test]
    fn a_command_line_quote_reads_its_unit() {
        let parsed = |text: &str, size| QuotedFee::parse("data_disk_per_hour", text, size);
        assert_eq!(
            parsed("0.005/gb-day", Some(dec!(200))).unwrap(),
            fee(dec!(0.005), FeePer::GbDay, Some(dec!(200)))
        );
        assert_eq!(
            parsed(" 20 / Month ", None).unwrap(),
            fee(dec!(20), FeePer::Month, None)
        );
        assert_eq!(parsed("0.07/GB·month", None).unwrap().per, FeePer::GbMonth);
        assert_eq!(
            parsed("0.05", None).unwrap(),
            fee(dec!(0.05), FeePer::Hour, None)
        );
        for refused in ["0.1/week", "0.1/", "abc/day", "/day"] {
            let err = parsed(refused, None).unwrap_err();
            assert!(
                matches!(
                    err,
                    BillingError::InvalidInput {
                        field: "data_disk_per_hour",
                        ..
                    }
                ),
                "{refused}: {err:?}"
            );
        }
    }

    #[test]
    fn an_ip_is_not_quoted_per_gb() {
        let err = fee(dec!(0.01), FeePer::GbMonth, Some(dec!(10)))
            .per_hour(HourlyExtra::PublicIp)
            .unwrap_err();
        assert!(matches!(
            err,
            BillingError::InvalidInput {
                field: "public_ip_per_hour",
                ..
            }
        ));
    }

    #[test]
    fn a_negative_or_absurd_quote_is_refused_on_the_amount() {
        let err = fee(dec!(-1), FeePer::Day, None)
            .per_hour(FIELDS)
            .unwrap_err();
        assert!(matches!(
            err,
            BillingError::NegativeAmount {
                field: "data_disk_per_hour",
                ..
            }
        ));
        let err = fee(dec!(90000000), FeePer::GbDay, Some(dec!(1000)))
            .per_hour(FIELDS)
            .unwrap_err();
        assert!(matches!(
            err,
            BillingError::TooLarge {
                field: "data_disk_per_hour",
                ..
            }
        ));
    }
}
