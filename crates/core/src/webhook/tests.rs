//! Webhooks against a real HTTP server on loopback: the body each service gets, the DingTalk and
//! Feishu signatures recomputed by the server from the secret, retries on 500, and neither the
//! URL's token nor the secret in any log line or error text.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{DateTime, TimeZone, Utc};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{client, send, Retry, WebhookError, WebhookKind, WebhookMessage, WebhookTarget};
use crate::ssh::Secret;
use crate::Coded;

/// One request as the server read it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    target: String,
    content_type: String,
    body: Value,
}

/// A loopback HTTP/1.1 server answering each request with the next scripted status and body.
struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn server(answers: Vec<(u16, &'static str)>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let task = tokio::spawn(async move {
        let mut answers = answers.into_iter();
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut buffer = Vec::new();
            let mut chunk = [0u8; 4096];
            let header_end = loop {
                let n = socket.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    break None;
                }
                buffer.extend_from_slice(&chunk[..n]);
                if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                    break Some(at + 4);
                }
            };
            let Some(header_end) = header_end else {
                continue;
            };
            let head = String::from_utf8_lossy(&buffer[..header_end]).to_string();
            let header = |name: &str| {
                head.lines()
                    .find_map(|line| {
                        let (key, value) = line.split_once(':')?;
                        key.eq_ignore_ascii_case(name)
                            .then(|| value.trim().to_owned())
                    })
                    .unwrap_or_default()
            };
            let length: usize = header("content-length").parse().unwrap_or(0);
            while buffer.len() < header_end + length {
                let n = socket.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                buffer.extend_from_slice(&chunk[..n]);
            }
            let mut request_line = head.lines().next().unwrap_or("").split(' ');
            log.lock().expect("log").push(Seen {
                method: request_line.next().unwrap_or("").to_owned(),
                target: request_line.next().unwrap_or("").to_owned(),
                content_type: header("content-type"),
                body: serde_json::from_slice(&buffer[header_end..]).unwrap_or(Value::Null),
            });
            let (status, body) = answers.next().unwrap_or((200, "{\"errcode\":0}"));
            // A redirect sends the client on to another path of this same server.
            let location = if (300..400).contains(&status) {
                "location: /redirected-here\r\n"
            } else {
                ""
            };
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{location}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(reply.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
    });
    Server { url, seen, task }
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 9, 30, 15)
        .single()
        .expect("valid")
}

fn quick() -> Retry {
    Retry {
        attempts: 3,
        first_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(40),
        timeout: Duration::from_secs(5),
    }
}

fn message() -> WebhookMessage {
    WebhookMessage {
        title: "gpu-a: budget 80 %".into(),
        text: "80 of 100 CNY spent".into(),
        fields: [("instance".to_owned(), Value::from("gpu-a"))]
            .into_iter()
            .collect(),
    }
}

fn target(kind: WebhookKind, url: &str, secret: Option<&str>) -> WebhookTarget {
    WebhookTarget::new(kind, url, secret.map(Secret::new)).expect("a valid target")
}

fn hmac_b64(key: &[u8], data: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key");
    mac.update(data);
    STANDARD.encode(mac.finalize().into_bytes())
}

/// `name=value` from a query string, percent-decoded the way a server does.
fn query_value(target: &str, name: &str) -> Option<String> {
    let query = target.split_once('?')?.1;
    reqwest::Url::parse(&format!("http://x/?{query}"))
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

#[tokio::test]
async fn each_service_gets_its_own_body() {
    let server = server(vec![]).await;
    let http = client().expect("client");
    for kind in [
        WebhookKind::Wecom,
        WebhookKind::Slack,
        WebhookKind::Serverchan,
        WebhookKind::Json,
    ] {
        let url = format!("{}/hook/{}?key=TOKEN123", server.url, kind.as_str());
        send(&http, &target(kind, &url, None), &message(), now(), quick())
            .await
            .expect("accepted");
    }
    let seen = server.seen.lock().expect("log").clone();
    assert!(seen
        .iter()
        .all(|s| s.method == "POST" && s.content_type == "application/json"));
    assert_eq!(
        seen[0].target, "/hook/wecom?key=TOKEN123",
        "the URL is used as given"
    );
    assert_eq!(
        seen[0].body,
        json!({"msgtype": "text", "text": {"content": "gpu-a: budget 80 %\n80 of 100 CNY spent"}})
    );
    assert_eq!(
        seen[1].body,
        json!({"text": "*gpu-a: budget 80 %*\n80 of 100 CNY spent"})
    );
    assert_eq!(
        seen[2].body,
        json!({"title": "gpu-a: budget 80 %", "desp": "80 of 100 CNY spent"})
    );
    assert_eq!(seen[3].body["source"], "leasehold");
    assert_eq!(
        seen[3].body["instance"], "gpu-a",
        "the JSON kind carries the fields"
    );
    assert_eq!(seen[3].body["sent_at"], "2025-03-01T09:30:15+00:00");
}

#[tokio::test]
async fn dingtalk_signs_in_the_query_with_milliseconds() {
    let server = server(vec![]).await;
    let secret = "SECabc+/=secret";
    let url = format!("{}/robot/send?access_token=TOKEN123", server.url);
    send(
        &client().expect("client"),
        &target(WebhookKind::Dingtalk, &url, Some(secret)),
        &message(),
        now(),
        quick(),
    )
    .await
    .expect("accepted");
    let seen = server.seen.lock().expect("log")[0].clone();
    let timestamp = query_value(&seen.target, "timestamp").expect("timestamp in the query");
    assert_eq!(
        timestamp,
        now().timestamp_millis().to_string(),
        "milliseconds"
    );
    let sign = query_value(&seen.target, "sign").expect("sign in the query");
    let expected = hmac_b64(
        secret.as_bytes(),
        format!("{timestamp}\n{secret}").as_bytes(),
    );
    assert_eq!(
        sign, expected,
        "HMAC-SHA256(secret, timestamp\\nsecret), base64"
    );
    assert!(
        !seen.target.contains('+') && seen.target.contains("sign="),
        "the base64 is URL-encoded in the query: {}",
        seen.target
    );
    assert_eq!(
        query_value(&seen.target, "access_token").as_deref(),
        Some("TOKEN123")
    );
    assert_eq!(seen.body["msgtype"], "text");
}

#[tokio::test]
async fn feishu_signs_in_the_body_with_seconds() {
    let server = server(vec![(200, "{\"code\":0,\"msg\":\"success\"}")]).await;
    let secret = "feishu-secret";
    let url = format!("{}/open-apis/bot/v2/hook/abc", server.url);
    send(
        &client().expect("client"),
        &target(WebhookKind::Feishu, &url, Some(secret)),
        &message(),
        now(),
        quick(),
    )
    .await
    .expect("accepted");
    let body = server.seen.lock().expect("log")[0].body.clone();
    let timestamp = body["timestamp"].as_str().expect("timestamp as a string");
    assert_eq!(timestamp, now().timestamp().to_string(), "seconds");
    let expected = hmac_b64(format!("{timestamp}\n{secret}").as_bytes(), b"");
    assert_eq!(
        body["sign"],
        expected.as_str(),
        "HMAC-SHA256(timestamp\\nsecret, empty), base64"
    );
    assert_eq!(body["msg_type"], "text");
    assert_eq!(
        body["content"]["text"],
        "gpu-a: budget 80 %\n80 of 100 CNY spent"
    );
}

#[tokio::test]
async fn a_500_is_tried_again_and_a_400_is_not() {
    let flaky = server(vec![(500, "{}"), (502, "{}"), (200, "ok")]).await;
    let http = client().expect("client");
    let url = format!("{}/services/T/B/X", flaky.url);
    let delivery = send(
        &http,
        &target(WebhookKind::Slack, &url, None),
        &message(),
        now(),
        quick(),
    )
    .await
    .expect("third try succeeds");
    assert_eq!(delivery.attempts, 3);
    assert_eq!(flaky.seen.lock().expect("log").len(), 3);

    let refusing = server(vec![(400, "invalid_payload")]).await;
    let url = format!("{}/services/T/B/X", refusing.url);
    let err = send(
        &http,
        &target(WebhookKind::Slack, &url, None),
        &message(),
        now(),
        quick(),
    )
    .await
    .expect_err("400 is final");
    assert_eq!(err.code(), "webhook.refused");
    assert_eq!(
        refusing.seen.lock().expect("log").len(),
        1,
        "no retry on a 4xx"
    );

    let rejecting = server(vec![(
        200,
        "{\"errcode\":310000,\"errmsg\":\"sign not match\"}",
    )])
    .await;
    let url = format!("{}/robot/send?access_token=T", rejecting.url);
    let err = send(
        &http,
        &target(WebhookKind::Dingtalk, &url, Some("s")),
        &message(),
        now(),
        quick(),
    )
    .await
    .expect_err("DingTalk's own refusal inside a 200");
    assert!(err.to_string().contains("310000"), "{err}");
}

/// A writer the test subscriber logs into.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log buffer").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_url_token_and_the_secret_never_reach_logs_or_errors() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let failing = server(vec![(500, "{}"), (503, "{}"), (500, "{}")]).await;
    let url = format!(
        "{}/robot/send?access_token=TOKEN-SHOULD-NOT-LEAK",
        failing.url
    );
    let hook = target(WebhookKind::Dingtalk, &url, Some("SECRET-SHOULD-NOT-LEAK"));
    let err = send(
        &client().expect("client"),
        &hook,
        &message(),
        now(),
        quick(),
    )
    .await
    .expect_err("every try fails");
    assert!(
        matches!(err, WebhookError::Unreachable { attempts: 3, .. }),
        "{err:?}"
    );

    // Nothing listens here any more: a refused connection must not leak the URL either.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
        listener.local_addr().expect("address")
    };
    let gone = target(
        WebhookKind::Wecom,
        &format!("http://{closed}/cgi-bin/webhook/send?key=TOKEN-SHOULD-NOT-LEAK"),
        None,
    );
    let err2 = send(
        &client().expect("client"),
        &gone,
        &message(),
        now(),
        quick(),
    )
    .await
    .expect_err("nothing listens");

    let logs = String::from_utf8(captured.0.lock().expect("log buffer").clone()).expect("utf-8");
    assert!(
        logs.contains("webhook try failed"),
        "the retries were logged: {logs}"
    );
    for text in [
        logs,
        err.to_string(),
        format!("{err:?}"),
        err2.to_string(),
        format!("{err2:?}"),
        format!("{hook:?}"),
    ] {
        assert!(
            !text.contains("TOKEN-SHOULD-NOT-LEAK"),
            "the URL's token leaked: {text}"
        );
        assert!(
            !text.contains("SECRET-SHOULD-NOT-LEAK"),
            "the secret leaked: {text}"
        );
    }
}

#[test]
fn bad_kinds_and_urls_are_refused_before_anything_is_sent() {
    for (pair, code) in [
        ("telegram=https://example.com/x", "webhook.unknown_kind"),
        ("slack=", "webhook.invalid_url"),
        ("slack=not a url", "webhook.invalid_url"),
        ("slack=ftp://example.com/x", "webhook.invalid_url"),
        ("slack=file:///etc/passwd", "webhook.invalid_url"),
        (
            "slack=http://hooks.slack.com/services/x",
            "webhook.invalid_url",
        ),
        ("json=http://192.168.1.20/hook", "webhook.invalid_url"),
        ("https://hooks.slack.com/services/x", "webhook.invalid_url"),
    ] {
        let err = WebhookTarget::parse_pair(pair, None).expect_err(pair);
        assert_eq!(err.code(), code, "{pair}");
        assert!(err.is_bad_input(), "{pair} is the caller's mistake");
    }
    let ok = WebhookTarget::parse_pair(
        "DingTalk=https://oapi.dingtalk.com/robot/send?access_token=x",
        None,
    )
    .expect("kind names are case-insensitive");
    assert_eq!(ok.kind, WebhookKind::Dingtalk);
    for local in [
        "json=http://127.0.0.1:8080/x",
        "json=http://localhost/x",
        "json=http://[::1]/x",
    ] {
        WebhookTarget::parse_pair(local, None).expect("plain http to this computer is allowed");
    }
}

#[tokio::test]
async fn a_redirect_is_the_final_answer_and_never_followed() {
    let redirecting = server(vec![(302, ""), (200, "{\"errcode\":0}")]).await;
    let url = format!("{}/cgi-bin/webhook/send?key=TOKEN", redirecting.url);
    let err = send(
        &client().expect("client"),
        &target(WebhookKind::Wecom, &url, None),
        &message(),
        now(),
        quick(),
    )
    .await
    .expect_err("a 302 is not a delivery");
    assert_eq!(err.code(), "webhook.refused", "{err}");
    let seen = redirecting.seen.lock().expect("log").clone();
    assert_eq!(
        seen.iter().map(|s| s.target.as_str()).collect::<Vec<_>>(),
        vec!["/cgi-bin/webhook/send?key=TOKEN"],
        "the redirect's target was never asked"
    );
}

/// Accepts connections, reads what comes, never answers; counts the requests and their
/// `Idempotency-Key` headers.
async fn silent_server() -> (String, Arc<Mutex<Vec<String>>>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let keys = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&keys);
    let task = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut chunk = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&chunk[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).to_lowercase();
                let key = text
                    .lines()
                    .find_map(|l| l.strip_prefix("idempotency-key:"))
                    .unwrap_or("")
                    .trim()
                    .to_owned();
                log.lock().expect("log").push(key);
                std::future::pending::<()>().await;
            });
        }
    });
    (url, keys, task)
}

#[tokio::test]
async fn a_timed_out_post_is_tried_again_only_with_an_idempotency_key() {
    let (url, keys, task) = silent_server().await;
    let retry = Retry {
        timeout: Duration::from_millis(300),
        ..quick()
    };
    let http = client().expect("client");
    let err = send(
        &http,
        &target(WebhookKind::Slack, &format!("{url}/s"), None),
        &message(),
        now(),
        retry,
    )
    .await
    .expect_err("no answer");
    assert_eq!(err.code(), "webhook.unreachable");
    assert_eq!(
        keys.lock().expect("log").len(),
        1,
        "Slack takes no key: posted once"
    );

    keys.lock().expect("log").clear();
    send(
        &http,
        &target(WebhookKind::Json, &format!("{url}/j"), None),
        &message(),
        now(),
        retry,
    )
    .await
    .expect_err("no answer");
    let seen = keys.lock().expect("log").clone();
    assert_eq!(seen.len(), 3, "tried again: {seen:?}");
    assert!(
        !seen[0].is_empty() && seen.iter().all(|k| *k == seen[0]),
        "every try carries the same key: {seen:?}"
    );
    task.abort();
}
