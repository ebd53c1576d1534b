//! Leasehold's domain: everything a GPU renter's desktop app knows, with no Tauri and no UI.
//!
//! The desktop shell (`src-tauri`) and the CLI (`crates/cli`) are thin adapters over the
//! functions here, so both behave the same and both are tested through the same code.

pub mod account;
pub mod backup;
pub mod billing;
pub mod catalog;
pub mod clock;
pub mod connect;
pub mod diagnose;
pub mod error;
pub mod explain;
pub mod install;
pub mod job;
pub mod keeper;
pub mod market;
pub mod monitor;
pub mod paths;
pub mod price_check;
pub mod printable;
pub mod probe;
pub mod redact;
pub mod release;
pub mod remind;
pub mod report;
pub mod settings;
pub mod shell;
pub mod ssh;
pub mod status;
pub mod stop;
pub mod store;
pub mod target;
pub mod team;
pub mod update;
pub mod usecase;
pub mod verify;
pub mod watchdog;
pub mod webhook;

pub use clock::{Clock, FixedClock, SystemClock};
pub use error::{AdapterError, ApiError, Coded};
