use crate::account::AccountError;
use crate::billing::BillingError;
use crate::stop::StopError;
use crate::store::StoreError;
use crate::Coded;

/// What the keeper can refuse or fail at. A provider's words are cleaned and cut before they
/// land here; no variant carries a key.
#[derive(Debug, thiserror::Error)]
pub enum KeeperError {
    #[error("{0}")]
    InvalidInput(String),
    #[error("{name} is {state} in the ledger; only a stopped instance can be hunted for a GPU")]
    NotStopped { name: String, state: &'static str },
    #[error("{name} has no hunt; start one with `leasehold account power {name} on --until-gpu`")]
    NoHunt { name: String },
    #[error(
        "{name}'s provider has no clean-up of stopped instances; there is nothing to keep alive"
    )]
    NoDeadline { name: String },
    #[error("keeping {name} alive costs {cost} {currency} now, more than the {accepted} you accepted; nothing was done")]
    CostChanged {
        name: String,
        cost: String,
        accepted: String,
        currency: String,
    },
    #[error("{name} is not linked to a Vast.ai account; bids and price increases are Vast.ai's")]
    NotVast { name: String },
    #[error("{name} is rented on demand, not as an interruptible (bid) instance; there is no bid to change")]
    NotInterruptible { name: String },
    #[error("a bid of {price} is above the cap of {cap} set for {name}; nothing was changed (`leasehold keeper policy {name} --bid-cap X` changes the cap)")]
    AboveBidCap {
        name: String,
        price: String,
        cap: String,
    },
    #[error("the host has no pending price increase on {name}")]
    NoPriceIncrease { name: String },
    #[error(transparent)]
    Stop(#[from] StopError),
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error(transparent)]
    Billing(#[from] BillingError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for KeeperError {
    fn from(err: sqlx::Error) -> Self {
        Self::Store(StoreError::from(err))
    }
}

impl Coded for KeeperError {
    fn code(&self) -> &'static str {
        match self {
            Self::InvalidInput(_) => "keeper.invalid_input",
            Self::NotStopped { .. } => "keeper.not_stopped",
            Self::NoHunt { .. } => "keeper.no_hunt",
            Self::NoDeadline { .. } => "keeper.no_deadline",
            Self::CostChanged { .. } => "keeper.cost_changed",
            Self::NotVast { .. } => "keeper.not_vast",
            Self::NotInterruptible { .. } => "keeper.not_interruptible",
            Self::AboveBidCap { .. } => "keeper.above_bid_cap",
            Self::NoPriceIncrease { .. } => "keeper.no_price_increase",
            Self::Stop(err) => err.code(),
            Self::Account(err) => err.code(),
            Self::Billing(err) => err.code(),
            Self::Store(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::InvalidInput(_)
            | Self::NotStopped { .. }
            | Self::NoHunt { .. }
            | Self::NoDeadline { .. }
            | Self::CostChanged { .. }
            | Self::NotVast { .. }
            | Self::NotInterruptible { .. }
            | Self::AboveBidCap { .. }
            | Self::NoPriceIncrease { .. } => true,
            Self::Stop(err) => err.is_bad_input(),
            Self::Account(err) => err.is_bad_input(),
            Self::Billing(err) => err.is_bad_input(),
            Self::Store(err) => err.is_bad_input(),
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::NotStopped { name, state } => {
                vec![("name", name.clone()), ("state", (*state).to_owned())]
            }
            Self::NoHunt { name }
            | Self::NoDeadline { name }
            | Self::NotVast { name }
            | Self::NotInterruptible { name }
            | Self::NoPriceIncrease { name } => vec![("name", name.clone())],
            Self::AboveBidCap { name, price, cap } => vec![
                ("name", name.clone()),
                ("price", price.clone()),
                ("cap", cap.clone()),
            ],
            Self::CostChanged {
                name,
                cost,
                accepted,
                currency,
            } => vec![
                ("name", name.clone()),
                ("cost", cost.clone()),
                ("accepted", accepted.clone()),
                ("currency", currency.clone()),
            ],
            Self::Stop(err) => err.params(),
            Self::Account(err) => err.params(),
            Self::Billing(err) => err.params(),
            Self::Store(err) => err.params(),
            Self::InvalidInput(_) => Vec::new(),
        }
    }
}
