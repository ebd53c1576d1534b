//! The keeper: getting a GPU when one frees up, and never losing a stopped instance to a
//! provider's clean-up or to being forgotten.
//!
//! - [`hunt`]: keep asking the provider to power a stopped instance on (AutoDL `power_on`,
//!   RunPod start, Vast.ai `state: running`) with a growing wait between tries, until it is on
//!   (confirmed and recorded through `stop::power`), the time limit passes, the spending limit
//!   would be passed, or the provider refuses for a reason waiting will not fix. AutoDL's "no
//!   stock" is told by its words (`暂无库存`, [`rules::is_no_stock`]); a wrong key or a released
//!   instance ends the hunt at once. One hunt per instance, kept in SQLite (`keeper_hunts`), so
//!   it survives a restart and is stopped by writing its row.
//! - The spending limit ([`rules::passes_spend`]): a try is made only while what the instance
//!   cost since the hunt began plus one hour on at its running price stays within the limit.
//! - [`keep_alive`]: the provider's clean-up deadline (AutoDL: stopped 15 days) kept by powering
//!   on and off again, its cost quoted first and accepted by the user.
//! - [`policy`]: the two-stage policy (idle → stop, stopped → remind or, opted in and covered
//!   by a backup, release), decided by the pure [`policy::next_step`]; [`list`] shows each
//!   instance's hunt, deadline, policy and next step.
//! - [`notices`]: a hunt's success told once; [`tray`]: the tray's lines (hunts under way, a
//!   success, a hunt to start).
//! - [`vast`]: a Vast.ai interruptible instance outbid, its bid raised up to the policy's cap,
//!   and a host's pending price increase accepted or rejected.

mod error;
pub mod hunt;
pub mod keep_alive;
pub mod list;
pub mod notices;
pub mod policy;
pub mod rules;
pub mod tray;
pub mod vast;

pub use error::KeeperError;
pub use hunt::{run, start, stop, HuntDeps, HuntLimits, HuntReport, Sleeper, TokioSleeper};
pub use keep_alive::{keep_alive, quote, KeepAliveQuote, KeepAliveReport};
pub use list::{default_policy, list, set_policy, Kept, PolicyChange, Stage};
pub use policy::{next_step, Action, Facts, NextStep, Policy};
pub use rules::GaveUp;
