//! The boundary error: what crosses into the UI or out of the CLI.
//!
//! Each core module keeps its own `thiserror` enum; at the boundary every error becomes
//! `{code, message}` with a stable dotted code (`billing.unknown_instance`, `ssh.host_key_changed`)
//! that the UI matches to show the text in the user's language.

use serde::Serialize;
use ts_rs::TS;

/// Implemented by every module error: a stable, machine-matchable code.
pub trait Coded: std::error::Error {
    /// Dotted, stable identifier; never reworded once shipped.
    fn code(&self) -> &'static str;

    /// True when the caller gave bad input (CLI exit code 2), false for other failures (exit 1).
    fn is_bad_input(&self) -> bool {
        false
    }
}

/// `{code, message}` as the UI and `--json` consumers see it.
#[derive(Debug, Clone, Serialize, TS, PartialEq, Eq)]
#[ts(export)]
pub struct ApiError {
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl<E: Coded> From<E> for ApiError {
    fn from(err: E) -> Self {
        Self {
            code: err.code().to_owned(),
            message: err.to_string(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}
