//! The exact contract of `leasehold version --check [--json]` against a stand-in update server
//! on loopback: the JSON keys, exit 0 / 10 / 1, and every endpoint's failure named.

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use leasehold_testkit::update_server::{manifest, refused_url, Reply, SigningKey, UpdateServer};
use serde_json::Value;

fn leasehold(home: &Path, urls: &str) -> Command {
    let mut command = Command::cargo_bin("leasehold").expect("binary built");
    command
        .env("HOME", home)
        .env("XDG_DATA_HOME", home)
        .env("LEASEHOLD_UPDATE_URLS", urls);
    for proxy in [
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "all_proxy",
    ] {
        command.env_remove(proxy);
    }
    command
}

fn run(urls: &str, args: &[&str]) -> (i32, String, String) {
    let home = tempfile::tempdir().expect("tempdir");
    let out = leasehold(home.path(), urls)
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn serve(version: &str) -> UpdateServer {
    let server = UpdateServer::start();
    let key = SigningKey::generate();
    let url = server.url("Leasehold.deb");
    server.put(
        "latest.json",
        Reply::ok(manifest(version, &url, &key.sign(b"x", version))),
    );
    server
}

#[test]
fn a_newer_version_exits_10_with_exactly_the_documented_keys() {
    let server = serve("99.0.0");
    let (code, stdout, stderr) = run(
        &server.url("latest.json"),
        &["version", "--check", "--json"],
    );
    assert_eq!(code, 10, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).expect("JSON");
    let mut keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["current", "latest", "notes", "pub_date", "url"]);
    assert_eq!(json["current"], env!("CARGO_PKG_VERSION"));
    assert_eq!(json["latest"], "99.0.0");
    assert_eq!(json["notes"], "Stop now works with RunPod REST v2.");
    assert_eq!(json["url"], server.url("Leasehold.deb"));
    assert_eq!(json["pub_date"], "2026-12-01T08:00:00Z");

    let (code, stdout, _) = run(
        &server.url("latest.json"),
        &["version", "--check", "--lang", "zh-CN"],
    );
    assert_eq!(code, 10);
    assert!(
        stdout.contains("99.0.0") && stdout.contains("立即关机"),
        "{stdout}"
    );
}

#[test]
fn the_same_version_is_up_to_date_and_exits_0() {
    let server = serve(env!("CARGO_PKG_VERSION"));
    let (code, stdout, stderr) = run(
        &server.url("latest.json"),
        &["version", "--check", "--json"],
    );
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(json["latest"], json["current"]);
}

#[test]
fn the_second_endpoint_answers_when_the_first_is_down() {
    let server = serve("99.0.0");
    let urls = format!(
        "{},{}",
        refused_url("latest.json"),
        server.url("latest.json")
    );
    let (code, stdout, stderr) = run(&urls, &["version", "--check", "--json"]);
    assert_eq!(code, 10, "{stderr}");
    assert!(stdout.contains("99.0.0"));
}

#[test]
fn no_endpoint_answering_exits_1_naming_each() {
    let server = UpdateServer::start();
    server.put("latest.json", Reply::status(404));
    let down = refused_url("latest.json");
    let urls = format!("{down},{}", server.url("latest.json"));
    let (code, stdout, stderr) = run(&urls, &["version", "--check", "--json"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("update.unreachable"), "{stderr}");
    assert!(
        stderr.contains(&down),
        "the refused endpoint is named: {stderr}"
    );
    assert!(
        stderr.contains(&format!("{}: HTTP 404", server.url("latest.json"))),
        "{stderr}"
    );
}

#[test]
fn an_update_address_that_is_not_https_is_bad_input() {
    let (code, _, stderr) = run("http://example.org/latest.json", &["version", "--check"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("update.bad_endpoint"));
}
