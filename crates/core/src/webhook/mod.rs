//! Webhooks: reminders that reach a phone through the chat the user already reads (WeCom,
//! Feishu, DingTalk, Slack, ServerChan) or any service that takes JSON.
//!
//! Why a module of its own: each service wants its own body, two of them a signature computed
//! from a secret and the time, and all of them fail now and then. [`request`] builds each
//! service's request as a pure function of the target, the message and `now` (so the signatures
//! are tested exactly), [`deliver`] sends it with bounded retries on 5xx, 429 and timeouts, and
//! [`saved`] keeps the user's webhooks: only the kind and a label in SQLite, the URL and the
//! secret in the OS keychain. A webhook URL is itself a credential (WeCom's `key=`, Slack's
//! path), so neither it nor the secret ever appears in a log line or an error's text.
//!
//! Also: a timed-out POST is tried again only with the JSON kind's `Idempotency-Key`. No redirect
//! is followed, answers are read up to 64 KiB, and plain `http` is allowed only to this computer.
//! The keychain names carry the database's own id (`store::identity`, migration 0290), so two
//! `--db` files never share them.

mod deliver;
mod error;
mod kind;
mod request;
pub mod saved;
mod sign;

#[cfg(test)]
mod tests;

pub use deliver::{client, send, Delivery, Retry};
pub use error::WebhookError;
pub use kind::{WebhookKind, WebhookMessage, WebhookTarget};
pub use request::{prepare, Prepared};
pub use saved::WebhookView;
pub use sign::{dingtalk_sign, feishu_sign};
