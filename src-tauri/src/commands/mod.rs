//! Tauri commands, one file per area. Each is an adapter of a few lines: take the state, call
//! leasehold-core, map the error into `ApiError` (`{code, message}`) for the UI.

// Tauri hands `State` (and deserialized arguments) to a command by value; that is its API.
#![allow(clippy::needless_pass_by_value)]

pub mod account;
pub mod app;
pub mod backup;
pub mod billing;
pub mod catalog;
pub mod explain;
pub mod install;
pub mod keeper;
pub mod market;
pub mod monitor;
pub mod remind;
pub mod settings;
pub mod ssh;
pub mod status;
pub mod stop;
pub mod store;
pub mod team;
pub mod update;
pub mod verify;
pub mod watchdog;
