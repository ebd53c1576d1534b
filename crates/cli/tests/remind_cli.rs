//! `leasehold remind` as scripts use it: the exact `due` JSON, stateless; `test` posting to a
//! real HTTP server on loopback; bad kinds, URLs and times exit 2 with nothing sent.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::mpsc;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

fn leasehold(db: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    cargo_bin_cmd!("leasehold")
        .args(args)
        .arg("--db")
        .arg(db)
        .assert()
}

fn json(assert: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&assert.get_output().stdout).expect("stdout is JSON")
}

#[test]
fn due_lists_every_reminder_that_holds_at_the_time_asked_with_the_exact_keys() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    leasehold(
        &db,
        &[
            "instance",
            "add",
            "a100",
            "--gpu",
            "A100",
            "--count",
            "1",
            "--price",
            "10",
            "--currency",
            "CNY",
            "--budget",
            "100",
            "--planned-hours",
            "8",
            "--at",
            "2025-03-01T00:00:00Z",
        ],
    )
    .success();
    leasehold(
        &db,
        &["instance", "start", "a100", "--at", "2025-03-01T00:00:00Z"],
    )
    .success();

    let early = json(
        &leasehold(
            &db,
            &["remind", "due", "--at", "2025-03-01T04:00:00Z", "--json"],
        )
        .success(),
    );
    assert_eq!(
        early,
        serde_json::json!({"reminders": []}),
        "40 % spent, 4 of 8 hours: nothing"
    );

    let late = json(
        &leasehold(
            &db,
            &["remind", "due", "--at", "2025-03-01T08:20:00Z", "--json"],
        )
        .success(),
    );
    let reminders = late["reminders"].as_array().expect("a list");
    let kinds: Vec<&str> = reminders
        .iter()
        .map(|r| r["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(
        kinds,
        ["budget_50", "backup_missing", "over_planned", "budget_80"],
        "oldest due first; no samples, so no gpu_idle"
    );
    for reminder in reminders {
        let mut keys: Vec<&String> = reminder.as_object().expect("object").keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            ["detail", "due_at", "instance", "kind"],
            "exactly the contract's keys"
        );
        assert_eq!(reminder["instance"], "a100");
    }
    assert_eq!(
        reminders[0]["due_at"], "2025-03-01T05:00:00Z",
        "50 of 100 at 10 an hour"
    );
    assert_eq!(
        reminders[2]["due_at"], "2025-03-01T08:00:00Z",
        "the 8 planned hours"
    );

    let again = json(
        &leasehold(
            &db,
            &["remind", "due", "--at", "2025-03-01T08:20:00Z", "--json"],
        )
        .success(),
    );
    assert_eq!(again, late, "stateless: asking twice gives the same answer");
}

#[test]
fn due_without_a_database_is_empty_and_creates_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("none.sqlite3");
    let out = json(&leasehold(&db, &["remind", "due", "--json"]).success());
    assert_eq!(out, serde_json::json!({"reminders": []}));
    assert!(!db.exists(), "asking created no database");
}

#[test]
fn bad_times_kinds_urls_and_secrets_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    leasehold(&db, &["remind", "due", "--at", "yesterday", "--json"]).code(2);
    leasehold(
        &db,
        &[
            "remind",
            "test",
            "--webhook",
            "telegram=https://example.com/x",
        ],
    )
    .code(2);
    leasehold(&db, &["remind", "test", "--webhook", "slack=not a url"]).code(2);
    leasehold(
        &db,
        &["remind", "test", "--webhook", "https://hooks.example.com/x"],
    )
    .code(2);
    cargo_bin_cmd!("leasehold")
        .args([
            "remind",
            "test",
            "--webhook",
            "dingtalk=https://example.com/robot",
            "--secret-env",
            "LEASEHOLD_TEST_UNSET_SECRET",
        ])
        .env_remove("LEASEHOLD_TEST_UNSET_SECRET")
        .assert()
        .code(2);
}

/// Answer one HTTP request with 200 and hand its request line and body back.
fn one_request_server() -> (String, mpsc::Receiver<(String, String)>) {
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
        let mut stream = reader.into_inner();
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
        let _ = tx.send((
            request_line.trim().to_owned(),
            String::from_utf8_lossy(&body).into_owned(),
        ));
    });
    (url, rx)
}

#[test]
fn test_posts_one_message_to_the_webhook() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    let (url, requests) = one_request_server();
    let out = json(
        &leasehold(
            &db,
            &[
                "remind",
                "test",
                "--webhook",
                &format!("json={url}/hooks/leasehold"),
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(out["sent"], true);
    assert_eq!(out["kind"], "json");
    assert_eq!(out["status"], 200);
    let (line, body) = requests.recv().expect("the server saw the request");
    assert_eq!(line, "POST /hooks/leasehold HTTP/1.1");
    let body: Value = serde_json::from_str(&body).expect("a JSON body");
    assert_eq!(body["source"], "leasehold");
    assert!(body["title"].as_str().expect("title").contains("test"));
    assert!(!db.exists(), "a test message needs no database");
}
