//! The boundary error: what crosses into the UI or out of the CLI.
//!
//! Each core module keeps its own `thiserror` enum; at the boundary every error becomes
//! `{code, message}` with a stable dotted code (`billing.unknown_instance`, `ssh.host_key_changed`)
//! that the UI matches to show the text in the user's language. A refused form also says which
//! field the error belongs next to, and an error whose text names a value (a taken name, an
//! unknown currency) carries that value as a parameter, so the UI's text can name it too. There is
//! no second error shape: everything the UI or a `--json` consumer sees is an [`ApiError`].
//!
//! [`AdapterError`] holds the few codes the UI and the app shell raise themselves.
//! `error/code_list.rs` reads every code from the `impl Coded` bodies and writes `ErrorCode.ts`.

use std::collections::BTreeMap;

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

    /// The form field this error belongs next to (`name`, `price_per_gpu_hour`, …); `None` when
    /// it concerns the request as a whole.
    fn field(&self) -> Option<&'static str> {
        None
    }

    /// Values the localized text may name (`{name}` in `errors.billing.duplicate_name`).
    fn params(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

/// `{code, message}` (plus `field` and `params` when there are any) as the UI and `--json`
/// consumers see it. `message` is English, for logs and for codes the UI does not know.
#[derive(Debug, Clone, Serialize, TS, PartialEq, Eq)]
#[ts(export)]
pub struct ApiError {
    /// One of core's codes (generated into `ErrorCode.ts` by `error/code_list.rs`).
    #[ts(type = "import('./ErrorCode').ErrorCode")]
    pub code: String,
    pub message: String,
    /// The form field the error belongs next to; absent when it is about the whole request.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub field: Option<String>,
    /// Values for the placeholders of the localized text, by name; absent when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub params: Option<BTreeMap<String, String>>,
}

impl ApiError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            field: None,
            params: None,
        }
    }
}

impl<E: Coded> From<E> for ApiError {
    fn from(err: E) -> Self {
        let params = err.params();
        Self {
            code: err.code().to_owned(),
            message: err.to_string(),
            field: err.field().map(str::to_owned),
            params: (!params.is_empty()).then(|| {
                params
                    .into_iter()
                    .map(|(name, value)| (name.to_owned(), value))
                    .collect()
            }),
        }
    }
}

/// The few errors the adapters raise themselves, before or around a core call: a form field
/// the UI could not read, IPC itself failing, the OS refusing the login item. Listed here so
/// that core's codes are the whole contract (`ui/src/lib/bindings/ErrorCode.ts`); the UI and
/// the app shell never make up a code of their own.
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    #[error("the app could not reach its backend: {0}")]
    Unexpected(String),
    #[error("the OS refused to change starting at login: {0}")]
    Autostart(String),
    #[error("this field is required")]
    Required,
    #[error("fill this in to continue")]
    ConnectFieldRequired,
    #[error("this field needs a number")]
    NotANumber,
    #[error("this field needs a whole number")]
    WholeNumber,
    #[error("the port must be a number from 1 to 65535")]
    BadPort,
    #[error("generate the key first")]
    GenerateKeyFirst,
    #[error("run the release checks first")]
    ReleaseNotChecked,
}

impl Coded for AdapterError {
    fn code(&self) -> &'static str {
        match self {
            Self::Unexpected(_) => "app.unexpected",
            Self::Autostart(_) => "tray.autostart",
            Self::Required => "form.required",
            Self::ConnectFieldRequired => "connect.required",
            Self::NotANumber => "form.not_a_number",
            Self::WholeNumber => "form.whole_number",
            Self::BadPort => "connect.bad_port",
            Self::GenerateKeyFirst => "connect.generate_first",
            Self::ReleaseNotChecked => "release.not_checked",
        }
    }

    fn is_bad_input(&self) -> bool {
        !matches!(self, Self::Unexpected(_) | Self::Autostart(_))
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

#[cfg(test)]
mod code_list;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("an instance named {0:?} already exists")]
    struct Taken(String);

    impl Coded for Taken {
        fn code(&self) -> &'static str {
            "test.taken"
        }
        fn field(&self) -> Option<&'static str> {
            Some("name")
        }
        fn params(&self) -> Vec<(&'static str, String)> {
            vec![("name", self.0.clone())]
        }
    }

    #[derive(Debug, thiserror::Error)]
    #[error("the disk is full")]
    struct Full;

    impl Coded for Full {
        fn code(&self) -> &'static str {
            "test.full"
        }
    }

    #[test]
    fn a_refused_field_travels_in_the_one_error_shape_with_the_values_its_text_names() {
        let json = serde_json::to_value(ApiError::from(Taken("gpu-a".into()))).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({
                "code": "test.taken",
                "message": "an instance named \"gpu-a\" already exists",
                "field": "name",
                "params": {"name": "gpu-a"},
            }),
            "the UI shows it next to the name field and can name the taken name in either language"
        );
    }

    #[test]
    fn an_error_about_the_whole_request_stays_code_and_message() {
        let json = serde_json::to_value(ApiError::from(Full)).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({"code": "test.full", "message": "the disk is full"}),
            "no empty field or params keys for consumers of --json to trip over"
        );
    }
}
