//! Saved webhooks against a real Secret Service (a private D-Bus with gnome-keyring): the URL and
//! the signing secret land in the keychain and nowhere in the database file, the test button
//! sends a correctly signed message with them, a second database's webhook of the same row id
//! leaves them alone, and removing the webhook forgets both.
//!
//! One test in its own binary: it points this process's `DBUS_SESSION_BUS_ADDRESS` at the test
//! bus before the keychain is first used.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{TimeZone, Utc};
use hmac::{Hmac, Mac};
use leasehold_core::ssh::{stored_secret, Secret};
use leasehold_core::store::{identity, Store};
use leasehold_core::webhook::{client, saved, WebhookKind, WebhookMessage, WebhookTarget};
use leasehold_testkit::secret_service::SecretService;
use sha2::Sha256;

/// Answer one request with DingTalk's "ok" and hand its request line back.
fn one_request_server() -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        let mut reader = BufReader::new(stream);
        let mut request_line = String::new();
        reader.read_line(&mut request_line).expect("request line");
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("header");
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).expect("body");
        let answer = "{\"errcode\":0,\"errmsg\":\"ok\"}";
        let mut stream = reader.into_inner();
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
            answer.len()
        );
        let _ = tx.send(request_line.trim().to_owned());
    });
    (url, rx)
}

fn file_contains(path: &std::path::Path, needle: &str) -> bool {
    ["", "-wal"].iter().any(|suffix| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        std::fs::read(&name)
            .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
    })
}

#[tokio::test]
async fn a_saved_webhook_keeps_its_url_and_secret_in_the_keychain_only() {
    let secrets = SecretService::start();
    // Before the first keychain call, which picks the bus up; this binary has no other test.
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", secrets.bus_address());

    let folder = tempfile::tempdir().expect("temp dir");
    let db = folder.path().join("leasehold.sqlite3");
    let store = Store::open(&db).await.expect("store");
    let now = Utc
        .with_ymd_and_hms(2026, 3, 1, 10, 0, 0)
        .single()
        .expect("time");
    let (base, requests) = one_request_server();
    let url = format!("{base}/robot/send?access_token=TOKEN-IN-KEYCHAIN-ONLY");
    let secret = "SEC-IN-KEYCHAIN-ONLY";
    let target = WebhookTarget::new(WebhookKind::Dingtalk, &url, Some(Secret::new(secret)))
        .expect("valid target");

    let hook = saved::add(&store, "team chat", &target, now)
        .await
        .expect("saved");
    assert!(hook.has_secret);
    let database = {
        let mut conn = store.pool().acquire().await.expect("connection");
        identity::database_id(&mut conn).await.expect("an id")
    };
    let url_name = format!("webhook-url:{database}:{}", hook.id);
    let secret_name = format!("webhook-secret:{database}:{}", hook.id);
    assert_eq!(
        stored_secret(&url_name).map(|s| s.expose().to_owned()),
        Some(url.clone()),
        "the URL is in the keychain"
    );

    // A second database (`--db`) whose first webhook has the same row id.
    let other = Store::open(&folder.path().join("other.sqlite3"))
        .await
        .expect("second store");
    let elsewhere = WebhookTarget::new(WebhookKind::Slack, "https://hooks.example/other", None)
        .expect("valid target");
    let other_hook = saved::add(&other, "other", &elsewhere, now)
        .await
        .expect("saved in the second database");
    assert_eq!(other_hook.id, hook.id, "row ids repeat across files");
    assert_eq!(
        stored_secret(&url_name).map(|s| s.expose().to_owned()),
        Some(url.clone()),
        "the second database did not overwrite the first one's URL"
    );
    saved::remove(&other, other_hook.id).await.expect("removed");
    other.close().await;
    store.close().await;
    assert!(
        !file_contains(&db, "TOKEN-IN-KEYCHAIN-ONLY"),
        "the URL's token is not in the database file"
    );
    assert!(
        !file_contains(&db, secret),
        "the secret is not in the database file"
    );

    let store = Store::open(&db).await.expect("reopened");
    let listed = saved::list(&store).await.expect("listed");
    assert_eq!(listed, vec![hook.clone()]);
    let delivery = saved::send_to(
        &client().expect("client"),
        &store,
        hook.id,
        &WebhookMessage::test(),
        now,
    )
    .await
    .expect("the test message is delivered");
    assert_eq!(delivery.attempts, 1);
    let line = requests.recv().expect("the server saw the request");
    let query = line.split(' ').nth(1).expect("request target");
    let parsed = reqwest::Url::parse(&format!("http://x{query}")).expect("a URL");
    let value = |name: &str| {
        parsed
            .query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
            .expect(name)
    };
    assert_eq!(value("access_token"), "TOKEN-IN-KEYCHAIN-ONLY");
    let timestamp = value("timestamp");
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key");
    mac.update(format!("{timestamp}\n{secret}").as_bytes());
    assert_eq!(
        value("sign"),
        STANDARD.encode(mac.finalize().into_bytes()),
        "signed with the secret read back from the keychain"
    );

    saved::remove(&store, hook.id).await.expect("removed");
    assert!(saved::list(&store).await.expect("listed").is_empty());
    assert_eq!(stored_secret(&url_name), None, "the URL left the keychain");
    assert_eq!(stored_secret(&secret_name), None, "and so did the secret");
    store.close().await;
}
