//! The error of a use case: the coded error of whichever step failed, kept whole, so the app
//! turns it into an `ActionError` and the CLI still tells bad input (exit 2) from a failure.

use crate::error::Coded;

/// The step's own error, unchanged: its code, text, field, parameters and whether it was bad
/// input.
#[derive(Debug)]
pub struct ActionError(Box<dyn Coded + Send + Sync>);

impl std::fmt::Display for ActionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ActionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl Coded for ActionError {
    // No code of its own: it passes on the step's.
    fn code(&self) -> &'static str {
        self.0.code()
    }

    fn is_bad_input(&self) -> bool {
        self.0.is_bad_input()
    }

    fn field(&self) -> Option<&'static str> {
        self.0.field()
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        self.0.params()
    }
}

macro_rules! step_errors {
    ($($error:ty),* $(,)?) => {
        $(impl From<$error> for ActionError {
            fn from(err: $error) -> Self {
                Self(Box::new(err))
            }
        })*
    };
}

step_errors!(
    crate::account::AccountError,
    crate::backup::BackupError,
    crate::billing::BillingError,
    crate::connect::ConnectError,
    crate::install::InstallError,
    crate::job::JobError,
    crate::keeper::KeeperError,
    crate::market::MarketError,
    crate::monitor::MonitorError,
    crate::release::ReleaseError,
    crate::ssh::SshError,
    crate::stop::StopError,
    crate::store::StoreError,
    crate::team::TeamError,
    crate::update::UpdateError,
    crate::verify::VerifyError,
    crate::watchdog::WatchdogError,
    crate::webhook::WebhookError,
);
