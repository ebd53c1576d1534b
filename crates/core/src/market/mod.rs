//! The market: what the providers offer now (price, stock, region), checked and kept with its
//! age, ranked for a task, watched by alerts, and rented through the provider's create call.
//!
//! - [`offer`]: the one checked shape of an offer (`Offer`), its stock and where its price
//!   comes from.
//! - [`parse`]: pure readers of each provider's documented catalog into offers (RunPod REST v2
//!   `GET /v2/catalog/gpus?include=AVAILABILITY&product=POD`, Vast.ai `POST /api/v0/bundles/`,
//!   Lambda `GET /api/v1/instance-types`). Every catalog is untrusted input: absurd prices,
//!   duplicate ids, hostile names and 100 000 rows are refused, merged, cleaned or capped.
//! - [`snapshot`]: refreshing (the account's key through `account`'s clients; Vast.ai's search
//!   needs none; AutoDL rows are the user's own last prices from the ledger) and the SQLite
//!   snapshots (migration 0350): stale-while-revalidate, a failed refresh never empties a
//!   provider's offers, back-off after 429s and failures.
//! - [`filter`]: `market list`'s filters and its order (cheapest first).
//! - [`rank`]: offers for the recommender's plans, with what the task will cost on each.
//! - [`alerts`]: "RTX 4090 under $0.35/h", "H100 back in stock", fired through the reminders'
//!   webhooks at most once per alert per hour.
//! - [`rent`]: renting an offer through the provider's documented create call, recorded at once.
//! - [`rent_autodl`]: AutoDL by its compute spec, the price held to the cap after the create.
//! - [`view`]: what Choose GPU shows: the ranked offers in the user's currency and each
//!   provider's age, error and account.

pub mod alerts;
mod error;
pub mod filter;
pub mod offer;
pub mod parse;
pub mod rank;
pub mod rent;
pub mod rent_autodl;
mod rent_lambda;
pub mod snapshot;
pub mod view;

pub use error::MarketError;
pub use filter::{list, OfferFilter};
pub use offer::{Offer, PriceSource, Stock};
pub use snapshot::{refresh, ProviderRefresh, RefreshReport};
