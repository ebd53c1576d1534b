//! Team-mode rows in the local database: the link to the team's server (never its password),
//! the events not yet on the server, the rows pulled from it, and the conflicts found while
//! merging. Decimals travel as the exact text the recording laptop stored and times in the one
//! UTC form the ledger stores, so every laptop replays identical values. `crate::team` decides
//! what is pushed and pulled, and checks what is pulled before it reaches these functions.
//!
//! One file per aggregate; these are re-exported here, so callers say `store::team::…`. The
//! team's other local rows keep their module's name: [`alerts`] (alert settings, idle reports,
//! shared Verify), [`reminders`] (team reminders fired here), [`withdrawals`] (conflict
//! resolutions) and [`conflict_replays`] (the conflict report's kept replays). Every SQLite
//! statement of team mode is here; `crate::team::server` holds the PostgreSQL ones.

pub mod alerts;
pub mod conflict_replays;
mod conflicts;
mod link;
mod pending;
mod pulled;
mod records;
pub mod reminders;
mod views;
pub mod withdrawals;

pub use conflicts::*;
pub use link::*;
pub use pending::*;
pub use pulled::*;
pub use records::*;
pub use views::*;
