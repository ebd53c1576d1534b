//! The rental ledger: what a rented GPU instance has cost, costs now, and will cost.
//!
//! Why it exists: renters lose money to rules they did not check (billing from creation, a
//! stopped instance that still bills, disk and IP fees, hourly rounding) and to instances they
//! forgot. The ledger records what happened as events (`created`, `started`, `stopped`,
//! `no_gpu_started`, `released`, `rule_changed`, `traffic_recorded`) and derives every cost from
//! them with a pure function of the events and `now` ([`engine::compute`]); nothing is
//! accumulated in place, so a bill can always be recomputed and explained interval by interval.
//!
//! - [`rules`]: the provider's billing rules; [`presets`]: per-provider defaults (no prices).
//! - [`events`]: the event state machine; [`engine`]: cost over intervals, burn rate, wipe date.
//! - [`ledger`]: the API over the store the app and the CLI call; [`report`]: what it returns.
//! - [`estimate`]: pricing a job before renting; [`rent_vs_buy`]: the break-even month.
//! - [`quoted_fee`]: a fee quoted per day, month or GB as the hourly figure the rules keep.
//! - [`exchange`]: the fixed, dated rate table the price checks (`crate::price_check`, a module
//!   of its own because it reads the GPU catalog, which reads the ledger) convert with.
//!
//! Details kept here from the old architecture map: each preset also carries the currency the
//! provider bills in; `report::BudgetUse`'s `urgency` is what every budget bar reads.

pub mod engine;
mod error;
pub mod estimate;
pub mod events;
pub mod exchange;
pub mod ledger;
pub mod money;
pub(crate) mod new_instance;
pub mod presets;
pub mod quoted_fee;
pub mod rent_vs_buy;
pub mod report;
pub(crate) mod rows;
pub mod rules;

pub use error::BillingError;
pub use estimate::{estimate, CostEstimate, EstimateInput, SplitRunComparison, SplitRunOption};
pub use events::{EventKind, InstanceState, LedgerEvent};
pub use money::Currency;
pub use new_instance::{NewInstance, PowerAction};
pub use presets::{presets, MachineKind, ProviderKey, ProviderPreset};
pub use quoted_fee::{FeePer, HourlyExtra, QuotedFee};
pub use rent_vs_buy::{rent_vs_buy, MonthCost, RentVsBuy, RentVsBuyInput};
pub use report::{
    BudgetUse, CostBreakdown, CostInterval, CostReport, EventView, Forecast, InstanceDetail,
    InstanceSummary,
};
pub use rules::{BillingRules, BillingStart, Granularity, StoppedBilling};
