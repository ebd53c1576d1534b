//! Connecting a rental to its machine: the Connect wizard's step-by-step test (with trust on
//! first use and the hard stop on a changed host key), the target saved on the instance (no
//! secrets in the database), and the connections the app keeps open for Verify, the terminal
//! and port forwards.
//!
//! `crate::ssh` knows how to talk SSH; this module knows which instance a connection belongs to
//! and what the wizard asked for.

mod check;
mod choices;
mod error;
mod flow;
mod live;
mod plan;
mod saved;
mod terminal;

pub use check::{check, parse_hello, CheckOutcome, ConnectionCheck, RemoteHello};
pub use choices::{generate_key, login_choices, KeyCandidate, LoginChoices};
pub use error::ConnectError;
pub use flow::{test_and_save, TestReport};
pub use live::{open_forward, ForwardRequest, LinkStatus, LiveTargets};
pub use plan::{agent_available, preview, resolve, AuthChoice, ConnectPlan, DestinationSummary};
pub use saved::{
    diagnose_context, forget_target, load_target, rented_gpu_count, save_target, SaveReport,
    SavedTarget,
};
pub use terminal::{TerminalExit, TerminalOutput, Terminals};

#[cfg(test)]
mod tests;
