//! Each service's request, as a pure function of the target, the message and `now`.

use chrono::{DateTime, Utc};
use reqwest::Url;
use serde_json::{json, Value};

use super::sign::{dingtalk_sign, feishu_sign};
use super::{WebhookKind, WebhookMessage, WebhookTarget};

/// A POST with a JSON body, ready to send.
#[derive(Clone, PartialEq, Eq)]
pub struct Prepared {
    pub url: Url,
    pub body: Value,
}

/// The request `target` expects for `message` at `now` (the signed services put `now` in the
/// signature, so a request is built once and retried as it is).
pub fn prepare(target: &WebhookTarget, message: &WebhookMessage, now: DateTime<Utc>) -> Prepared {
    let both = format!("{}\n{}", message.title, message.text);
    let mut url = target.url.clone();
    let secret = target.secret.as_ref().map(|s| s.expose());
    let body = match target.kind {
        WebhookKind::Wecom => json!({"msgtype": "text", "text": {"content": both}}),
        WebhookKind::Dingtalk => {
            if let Some(secret) = secret {
                let timestamp = now.timestamp_millis();
                // `append_pair` percent-encodes the base64 (`+`, `/`, `=`) as DingTalk requires.
                url.query_pairs_mut()
                    .append_pair("timestamp", &timestamp.to_string())
                    .append_pair("sign", &dingtalk_sign(secret, timestamp));
            }
            json!({"msgtype": "text", "text": {"content": both}})
        }
        WebhookKind::Feishu => {
            let mut body = json!({"msg_type": "text", "content": {"text": both}});
            if let Some(secret) = secret {
                let timestamp = now.timestamp();
                body["timestamp"] = Value::String(timestamp.to_string());
                body["sign"] = Value::String(feishu_sign(secret, timestamp));
            }
            body
        }
        WebhookKind::Slack => json!({"text": format!("*{}*\n{}", message.title, message.text)}),
        WebhookKind::Serverchan => json!({"title": message.title, "desp": message.text}),
        WebhookKind::Json => {
            let mut body = serde_json::Map::new();
            body.insert("source".into(), "leasehold".into());
            body.insert("title".into(), message.title.clone().into());
            body.insert("text".into(), message.text.clone().into());
            body.insert("sent_at".into(), now.to_rfc3339().into());
            for (key, value) in &message.fields {
                body.entry(key.clone()).or_insert_with(|| value.clone());
            }
            Value::Object(body)
        }
    };
    Prepared { url, body }
}
