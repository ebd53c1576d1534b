//! Rent or buy: after how many months does owning the card pay for itself?
//!
//! Owning costs the card once plus its electricity (power draw × hours × price per kWh);
//! renting costs the hourly price for the same hours. A month is taken as 30 days so the answer
//! is easy to check by hand. Resale value, cooling, the rest of the machine and the seeds' other
//! costs of owning (repairs, idle months) are left to the user's judgement and named in the UI.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use rust_decimal_macros::dec;

use super::engine::{add, mul};
use super::money::{display_amount, Currency};
use super::rules::{at_most, limits, non_negative, rate_in_range};
use super::BillingError;

const DAYS_PER_MONTH: u32 = 30;
/// Longest horizon we chart (50 years); beyond that the question is moot.
const MAX_MONTHS: u32 = 600;
/// A megawatt: more than any machine a person weighs against renting.
const MAX_WATTS: Decimal = dec!(1000000);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RentVsBuyInput {
    pub currency: String,
    /// What buying the card (or the whole machine) costs.
    #[ts(type = "string")]
    pub card_price: Decimal,
    /// Power draw under load, in watts.
    #[ts(type = "string")]
    pub power_watts: Decimal,
    #[ts(type = "string")]
    pub electricity_per_kwh: Decimal,
    /// Rental price per hour for the same hardware.
    #[ts(type = "string")]
    pub rent_per_hour: Decimal,
    #[ts(type = "string")]
    pub hours_per_day: Decimal,
    /// How many months the hardware will be used.
    pub months: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MonthCost {
    pub month: u32,
    #[ts(type = "string")]
    pub rent_cumulative: Decimal,
    #[ts(type = "string")]
    pub buy_cumulative: Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RentVsBuy {
    pub currency: Currency,
    #[ts(type = "string")]
    pub rent_per_month: Decimal,
    /// Electricity per month when owning.
    #[ts(type = "string")]
    pub power_per_month: Decimal,
    /// First month at whose end buying has cost no more than renting; `null` when renting is
    /// never more expensive (electricity alone costs as much as the rent).
    pub break_even_month: Option<u32>,
    /// Whether the break-even month falls within `months`.
    pub pays_off_within_months: bool,
    pub months: u32,
    #[ts(type = "string")]
    pub rent_total: Decimal,
    #[ts(type = "string")]
    pub buy_total: Decimal,
    /// `rent` or `buy`: the cheaper choice over `months`; `rent` on a tie (no capital tied up).
    pub cheaper: String,
    /// Month-by-month cumulative cost of both choices, for the break-even chart.
    pub by_month: Vec<MonthCost>,
}

pub fn rent_vs_buy(input: &RentVsBuyInput) -> Result<RentVsBuy, BillingError> {
    let currency = Currency::parse(&input.currency)?;
    if input.card_price <= Decimal::ZERO {
        return Err(BillingError::InvalidPrice {
            field: "card_price",
            value: input.card_price,
        });
    }
    if input.rent_per_hour <= Decimal::ZERO {
        return Err(BillingError::InvalidPrice {
            field: "rent_per_hour",
            value: input.rent_per_hour,
        });
    }
    at_most("card_price", input.card_price, limits::MAX_AMOUNT)?;
    at_most("rent_per_hour", input.rent_per_hour, limits::MAX_RATE)?;
    non_negative("power_watts", input.power_watts)?;
    at_most("power_watts", input.power_watts, MAX_WATTS)?;
    rate_in_range("electricity_per_kwh", input.electricity_per_kwh)?;
    if input.hours_per_day <= Decimal::ZERO || input.hours_per_day > Decimal::from(24) {
        return Err(BillingError::InvalidInput {
            field: "hours_per_day",
            reason: format!(
                "expected more than 0 and at most 24 (got {})",
                input.hours_per_day
            ),
        });
    }
    if input.months == 0 || input.months > MAX_MONTHS {
        return Err(BillingError::InvalidInput {
            field: "months",
            reason: format!("expected 1 to {MAX_MONTHS} months (got {})", input.months),
        });
    }
    let hours_per_month = mul("rent", input.hours_per_day, Decimal::from(DAYS_PER_MONTH))?;
    let rent_per_month = mul("rent", input.rent_per_hour, hours_per_month)?;
    let power_per_month = mul(
        "electricity",
        mul(
            "electricity",
            input.power_watts / Decimal::from(1000),
            hours_per_month,
        )?,
        input.electricity_per_kwh,
    )?;
    let monthly_saving = rent_per_month
        .checked_sub(power_per_month)
        .ok_or(BillingError::Overflow { what: "rent" })?;
    // A quotient too large for a decimal is far beyond any month count: never within reach.
    let break_even_month = (monthly_saving > Decimal::ZERO)
        .then(|| {
            let months = input.card_price.checked_div(monthly_saving)?.ceil();
            u32::try_from(months).ok()
        })
        .flatten()
        .map(|m| m.max(1));
    let rent_after = |month: u32| mul("rent", rent_per_month, Decimal::from(month));
    let buy_after = |month: u32| {
        add(
            "purchase",
            input.card_price,
            mul("electricity", power_per_month, Decimal::from(month))?,
        )
    };
    let by_month: Vec<MonthCost> = (1..=input.months)
        .map(|month| {
            Ok(MonthCost {
                month,
                rent_cumulative: display_amount(rent_after(month)?),
                buy_cumulative: display_amount(buy_after(month)?),
            })
        })
        .collect::<Result<_, BillingError>>()?;
    let rent_total = rent_after(input.months)?;
    let buy_total = buy_after(input.months)?;
    Ok(RentVsBuy {
        currency,
        rent_per_month: display_amount(rent_per_month),
        power_per_month: display_amount(power_per_month),
        break_even_month,
        pays_off_within_months: break_even_month.is_some_and(|m| m <= input.months),
        months: input.months,
        rent_total: display_amount(rent_total),
        buy_total: display_amount(buy_total),
        cheaper: if buy_total < rent_total {
            "buy"
        } else {
            "rent"
        }
        .to_owned(),
        by_month,
    })
}
