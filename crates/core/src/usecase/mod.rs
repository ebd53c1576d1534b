//! The use-case layer: one function per user action (stop now, check before release, back up,
//! sync the accounts…), each taking one [`Context`]. A Tauri command and a CLI subcommand make
//! one call here and only adapt its input and answer, so where the app and the CLI could chain
//! the same calls differently there is one place left that decides.
//!
//! A use case answers in the boundary's shape (`ActionError`): it chains several modules, and each
//! one's coded error passes through unchanged. Progress goes out through the sink passed in (a
//! Tauri channel in the app, a printer in the CLI), so this stays free of Tauri.
//!
//! What the app does with its own parts (a hunt's loop, the updater plugin, the remembered
//! update) comes in as a closure, called where the chain needs it.

pub mod account;
pub mod backup;
mod error;
pub mod forward;
pub mod install;
pub mod keeper;
pub mod market;
pub mod monitor;
pub mod price;
pub mod stop;
pub mod team;
pub mod update;
pub mod verify;
pub mod watchdog;
pub mod webhook;

pub use error::ActionError;

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::account::Endpoints;
use crate::clock::Clock;
use crate::connect::LiveTargets;
use crate::monitor::live::StreamLanguages;
use crate::ssh::{ConnectOptions, SshTarget};
use crate::store::{Store, StoreError};
use crate::update::RunningWork;
use crate::verify::RunningChecks;

/// What every use case may need, borrowed from whoever keeps it (the app's state, or the CLI's
/// one run): the store, the open connections, the stoppable runs, the streams' languages, the
/// work an update waits for, and the clock; [`Context::endpoints`] says where the providers are.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub store: &'a Store,
    /// Open SSH connections by instance; an instance without one is dialled from its saved
    /// target.
    pub live: &'a LiveTargets,
    /// Runs the user can stop (Verify, backups, monitor streams), by key.
    pub checks: &'a RunningChecks,
    pub languages: &'a StreamLanguages,
    pub running_work: &'a RunningWork,
    pub clock: &'a dyn Clock,
}

/// The handles a context borrows, owned: the app keeps them in its state for its whole life;
/// the CLI makes one for its one action.
#[derive(Default)]
pub struct Handles {
    pub live: LiveTargets,
    pub checks: RunningChecks,
    pub languages: StreamLanguages,
    pub running_work: RunningWork,
}

impl Handles {
    pub fn context<'a>(&'a self, store: &'a Store, clock: &'a dyn Clock) -> Context<'a> {
        Context {
            store,
            live: &self.live,
            checks: &self.checks,
            languages: &self.languages,
            running_work: &self.running_work,
            clock,
        }
    }
}

impl Context<'_> {
    /// "Now" for one action, read once.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// The open connection of `instance`, dialling its saved target when there is none.
    pub async fn live_target(&self, instance: &str) -> Result<Arc<SshTarget>, ActionError> {
        let mut conn = self
            .store
            .pool()
            .acquire()
            .await
            .map_err(|err| ActionError::from(StoreError::from(err)))?;
        Ok(self
            .live
            .get_or_connect(&mut conn, instance, ConnectOptions::default())
            .await?)
    }

    /// Where the providers' APIs answer: the built-in addresses, or the ones the environment
    /// names (test stand-ins); a malformed one is refused before anything is sent.
    pub fn endpoints(&self) -> Result<Endpoints, ActionError> {
        Ok(Endpoints::checked_from_env()?)
    }

    /// The monitor's view of the same handles.
    pub fn monitor(&self) -> crate::monitor::live::Context<'_> {
        crate::monitor::live::Context {
            store: self.store,
            live: self.live,
            running: self.checks,
            languages: self.languages,
            clock: self.clock,
        }
    }
}
