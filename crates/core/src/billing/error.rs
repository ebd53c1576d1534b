use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use crate::store::StoreError;
use crate::Coded;

/// Everything the ledger refuses or fails at. Bad input writes nothing.
#[derive(Debug, thiserror::Error)]
pub enum BillingError {
    #[error("unknown currency {code:?}: use an ISO 4217 code such as CNY, USD, EUR, HKD, JPY, GBP or SGD")]
    UnknownCurrency { code: String },
    #[error("{field} must be greater than zero (got {value}); type the price the provider shows")]
    InvalidPrice { field: &'static str, value: Decimal },
    #[error("{field} cannot be negative (got {value})")]
    NegativeAmount { field: &'static str, value: Decimal },
    #[error(
        "{field} is larger than Leasehold accepts (got {value}, at most {max}); check for a typo"
    )]
    TooLarge {
        field: &'static str,
        value: Decimal,
        max: Decimal,
    },
    #[error("an amount is too large to compute ({what}); a price, count or time recorded for this rental is out of range")]
    Overflow { what: &'static str },
    #[error("invalid {field}: {reason}")]
    InvalidInput { field: &'static str, reason: String },
    #[error("a fee quoted per GB needs the size in GB ({field})")]
    FeeNeedsSize { field: &'static str },
    #[error("unknown provider preset {key:?}: use bingxing, autodl, hengyuan, kuhu, runpod, vast, lambda, aliyun, tencent, huawei, aws, gcp or custom")]
    UnknownProvider { key: String },
    #[error("an instance named {name:?} already exists; pick another name")]
    DuplicateName { name: String },
    #[error("no instance named {name:?}; record it first with `instance add`")]
    UnknownInstance { name: String },
    #[error("{kind} at {at} comes before the last recorded event ({last_kind} at {last_at}); record events in time order")]
    OutOfOrder {
        kind: &'static str,
        at: DateTime<Utc>,
        last_kind: &'static str,
        last_at: DateTime<Utc>,
    },
    #[error("{kind} at {at} is before the instance was created ({created_at}); an instance must be created before it can be {kind}")]
    BeforeCreation {
        kind: &'static str,
        at: DateTime<Utc>,
        created_at: DateTime<Utc>,
    },
    #[error("the ledger must begin with `created`, not {kind}")]
    NotCreated { kind: &'static str },
    #[error("the instance was released at {released_at}; nothing can be recorded after release")]
    AfterRelease { released_at: DateTime<Utc> },
    #[error("cannot record {kind}: the instance is already {state}")]
    InvalidTransition {
        kind: &'static str,
        state: &'static str,
    },
    #[error("this instance has no no-GPU mode rate; set one (a rule change) before recording no-GPU mode")]
    NoGpuUnavailable,
    #[error("the forecast time {until} is before now ({now})")]
    ForecastInPast {
        until: DateTime<Utc>,
        now: DateTime<Utc>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Coded for BillingError {
    fn code(&self) -> &'static str {
        match self {
            Self::UnknownCurrency { .. } => "billing.unknown_currency",
            Self::InvalidPrice { .. } => "billing.invalid_price",
            Self::NegativeAmount { .. } => "billing.negative_amount",
            Self::TooLarge { .. } => "billing.too_large",
            Self::Overflow { .. } => "billing.amount_overflow",
            Self::InvalidInput { .. } => "billing.invalid_input",
            Self::FeeNeedsSize { .. } => "billing.fee_needs_size",
            Self::UnknownProvider { .. } => "billing.unknown_provider",
            Self::DuplicateName { .. } => "billing.duplicate_name",
            Self::UnknownInstance { .. } => "billing.unknown_instance",
            Self::OutOfOrder { .. } => "billing.out_of_order",
            Self::BeforeCreation { .. } => "billing.before_creation",
            Self::NotCreated { .. } => "billing.not_created",
            Self::AfterRelease { .. } => "billing.after_release",
            Self::InvalidTransition { .. } => "billing.invalid_transition",
            Self::NoGpuUnavailable => "billing.no_gpu_unavailable",
            Self::ForecastInPast { .. } => "billing.forecast_in_past",
            Self::Store(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        // An overflow comes from what is already stored, not from this request.
        !matches!(self, Self::Store(_) | Self::Overflow { .. })
    }

    /// The input the error is about, so a form can show it next to that field.
    fn field(&self) -> Option<&'static str> {
        match self {
            Self::InvalidPrice { field, .. }
            | Self::NegativeAmount { field, .. }
            | Self::TooLarge { field, .. }
            | Self::InvalidInput { field, .. }
            | Self::FeeNeedsSize { field } => Some(field),
            Self::UnknownCurrency { .. } => Some("currency"),
            Self::UnknownProvider { .. } => Some("provider"),
            Self::DuplicateName { .. } => Some("name"),
            _ => None,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::UnknownCurrency { code } => vec![("currency", code.clone())],
            Self::DuplicateName { name } | Self::UnknownInstance { name } => {
                vec![("name", name.clone())]
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;

    use super::*;
    use crate::ApiError;

    #[test]
    fn a_refused_value_names_the_field_the_ui_shows_it_next_to() {
        let err = ApiError::from(BillingError::InvalidPrice {
            field: "price_per_gpu_hour",
            value: Decimal::ZERO,
        });
        assert_eq!(err.code, "billing.invalid_price");
        assert_eq!(err.field.as_deref(), Some("price_per_gpu_hour"));

        let err = ApiError::from(BillingError::UnknownCurrency { code: "CYN".into() });
        assert_eq!(
            err.field.as_deref(),
            Some("currency"),
            "a currency error belongs next to the currency picker"
        );
        assert_eq!(
            err.params
                .and_then(|p| p.get("currency").cloned())
                .as_deref(),
            Some("CYN"),
            "the text can say which code was not understood"
        );
    }

    #[test]
    fn a_taken_name_is_shown_next_to_the_name_and_ledger_errors_belong_to_the_whole_form() {
        let err = ApiError::from(BillingError::DuplicateName { name: "a".into() });
        assert_eq!(err.field.as_deref(), Some("name"));
        assert_eq!(
            err.params.and_then(|p| p.get("name").cloned()).as_deref(),
            Some("a")
        );

        let err = ApiError::from(BillingError::NoGpuUnavailable);
        assert_eq!(
            err.field, None,
            "not about one field: shown above the buttons"
        );
        assert_eq!(err.code, "billing.no_gpu_unavailable");
    }
}
