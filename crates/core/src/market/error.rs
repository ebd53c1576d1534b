use crate::account::AccountError;
use crate::billing::BillingError;
use crate::store::StoreError;
use crate::Coded;

/// What the market can refuse or fail at. Provider texts are cleaned and cut before they land
/// here; no variant carries a key.
#[derive(Debug, thiserror::Error)]
pub enum MarketError {
    #[error("{0}")]
    InvalidInput(String),
    #[error("{provider} has no offer {offer_id} in the last snapshot; run `leasehold market refresh` and pick one from `leasehold market list`")]
    UnknownOffer {
        provider: &'static str,
        offer_id: String,
    },
    #[error("{provider} no longer offers {offer_id}: {detail}")]
    OfferGone {
        provider: &'static str,
        offer_id: String,
        detail: String,
    },
    #[error("{provider} asks {price} {currency}/h now, above your cap of {cap} {currency}/h; nothing was rented")]
    AboveCap {
        provider: &'static str,
        price: String,
        cap: String,
        currency: String,
    },
    #[error("{provider} has no capacity for this offer now: {detail}")]
    NoCapacity {
        provider: &'static str,
        detail: String,
    },
    #[error("{provider} cannot be rented from Leasehold: {detail}")]
    CannotRent {
        provider: &'static str,
        detail: String,
    },
    #[error("{provider} set {price} {currency}/h for the new instance, above your cap of {cap} {currency}/h: it was powered off and released at once (only the seconds it ran are billed); nothing was recorded")]
    ReleasedAboveCap {
        provider: &'static str,
        price: String,
        cap: String,
        currency: String,
    },
    #[error("{provider} did not say the new instance's price, so it could not be held to your cap: it was powered off and released at once (only the seconds it ran are billed); nothing was recorded")]
    ReleasedPriceUnknown { provider: &'static str },
    #[error("the new instance is above your cap or did not say its price, and releasing it failed ({detail}); it is recorded as {name} and may be billing: stop and release it from its page now")]
    KeptAboveCap { name: String, detail: String },
    #[error("the answer to the create request was lost ({detail}); nothing was recorded yet: the next account sync finds the instance by its name {name:?} if it was created, so do not rent again")]
    AnswerLost { name: String, detail: String },
    #[error("no market alert {0}; `leasehold market alert list` shows them")]
    UnknownAlert(i64),
    #[error("no SSH public key at {path} (nor beside it as .pub)")]
    NoPublicKey { path: String },
    #[error(transparent)]
    Catalog(#[from] crate::catalog::CatalogError),
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error(transparent)]
    Billing(#[from] BillingError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for MarketError {
    fn from(err: sqlx::Error) -> Self {
        Self::Store(StoreError::from(err))
    }
}

impl Coded for MarketError {
    fn code(&self) -> &'static str {
        match self {
            Self::InvalidInput(_) => "market.invalid_input",
            Self::UnknownOffer { .. } => "market.unknown_offer",
            Self::OfferGone { .. } => "market.offer_gone",
            Self::AboveCap { .. } => "market.above_cap",
            Self::NoCapacity { .. } => "market.no_capacity",
            Self::CannotRent { .. } => "market.cannot_rent",
            Self::AnswerLost { .. } => "market.answer_lost",
            Self::ReleasedAboveCap { .. } => "market.released_above_cap",
            Self::ReleasedPriceUnknown { .. } => "market.released_price_unknown",
            Self::KeptAboveCap { .. } => "market.kept_above_cap",
            Self::UnknownAlert(_) => "market.unknown_alert",
            Self::NoPublicKey { .. } => "market.no_public_key",
            Self::Catalog(err) => err.code(),
            Self::Account(err) => err.code(),
            Self::Billing(err) => err.code(),
            Self::Store(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::InvalidInput(_)
            | Self::UnknownOffer { .. }
            | Self::UnknownAlert(_)
            | Self::NoPublicKey { .. } => true,
            Self::Catalog(err) => err.is_bad_input(),
            Self::Account(err) => err.is_bad_input(),
            Self::Billing(err) => err.is_bad_input(),
            Self::Store(err) => err.is_bad_input(),
            _ => false,
        }
    }

    fn field(&self) -> Option<&'static str> {
        match self {
            Self::Catalog(err) => err.field(),
            Self::Account(err) => err.field(),
            Self::Billing(err) => err.field(),
            Self::Store(err) => err.field(),
            _ => None,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Catalog(err) => err.params(),
            Self::NoPublicKey { path } => vec![("path", path.clone())],
            Self::Account(err) => err.params(),
            Self::Billing(err) => err.params(),
            Self::Store(err) => err.params(),
            Self::AboveCap {
                provider,
                price,
                cap,
                currency,
            } => vec![
                ("provider", (*provider).to_owned()),
                ("price", price.clone()),
                ("cap", cap.clone()),
                ("currency", currency.clone()),
            ],
            Self::NoCapacity { provider, detail }
            | Self::CannotRent { provider, detail }
            | Self::OfferGone {
                provider, detail, ..
            } => vec![
                ("provider", (*provider).to_owned()),
                ("detail", detail.clone()),
            ],
            Self::UnknownOffer { provider, offer_id } => vec![
                ("provider", (*provider).to_owned()),
                ("offer_id", offer_id.clone()),
            ],
            Self::AnswerLost { name, .. } => vec![("name", name.clone())],
            Self::ReleasedAboveCap {
                provider,
                price,
                cap,
                currency,
            } => vec![
                ("provider", (*provider).to_owned()),
                ("price", price.clone()),
                ("cap", cap.clone()),
                ("currency", currency.clone()),
            ],
            Self::ReleasedPriceUnknown { provider } => vec![("provider", (*provider).to_owned())],
            Self::KeptAboveCap { name, detail } => {
                vec![("name", name.clone()), ("detail", detail.clone())]
            }
            Self::UnknownAlert(id) => vec![("id", id.to_string())],
            Self::InvalidInput(_) => Vec::new(),
        }
    }
}
