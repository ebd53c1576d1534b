//! Self-update against a stand-in update server on loopback: the endpoints in order, every
//! failure named, and a download refused unless its signature holds.

use leasehold_core::update::{self, Endpoints, UpdateError};
use leasehold_core::Coded;
use leasehold_testkit::update_server::{manifest, refused_url, Reply, SigningKey, UpdateServer};

const INSTALLER: &[u8] = b"pretend this is Leasehold_0.2.0_amd64.deb";

fn serve_release(server: &UpdateServer, key: &SigningKey, signed_bytes: &[u8]) {
    let signature = key.sign(signed_bytes, "0.2.0");
    server.put(
        "latest.json",
        Reply::ok(manifest(
            "0.2.0",
            &server.url("Leasehold_0.2.0.deb"),
            &signature,
        )),
    );
    server.put("Leasehold_0.2.0.deb", Reply::ok(INSTALLER));
}

#[tokio::test]
async fn an_older_build_sees_the_newer_version_and_its_notes() {
    let server = UpdateServer::start();
    serve_release(&server, &SigningKey::generate(), INSTALLER);
    let endpoints = Endpoints::parse_list(&server.url("latest.json")).unwrap();

    let checked = update::check(&endpoints, "0.1.0", "zh-CN")
        .await
        .expect("answers");
    assert!(checked.newer);
    assert_eq!(checked.check.current, "0.1.0");
    assert_eq!(checked.check.latest, "0.2.0");
    assert_eq!(
        checked.check.notes.as_deref(),
        Some("“立即关机”已支持 RunPod REST v2。")
    );
    assert_eq!(
        checked.check.url.as_deref(),
        Some(server.url("Leasehold_0.2.0.deb").as_str())
    );
    let same = update::check(&endpoints, "0.2.0", "en").await.unwrap();
    assert!(!same.newer, "the same version is up to date");
}

#[tokio::test]
async fn the_first_endpoint_down_means_the_second_is_used() {
    let server = UpdateServer::start();
    serve_release(&server, &SigningKey::generate(), INSTALLER);
    server.put("broken.json", Reply::ok("{ not json"));
    for first in [
        refused_url("latest.json"),
        server.url("missing.json"),
        server.url("broken.json"),
    ] {
        let list = format!("{first},{}", server.url("latest.json"));
        let checked = update::check(&Endpoints::parse_list(&list).unwrap(), "0.1.0", "en")
            .await
            .unwrap_or_else(|err| panic!("{first}: {err}"));
        assert_eq!(checked.fetched.endpoint.as_str(), server.url("latest.json"));
    }
    assert_eq!(server.hits("latest.json"), 3);
}

#[tokio::test]
async fn when_no_endpoint_answers_each_failure_is_named() {
    let server = UpdateServer::start();
    server.put("gone.json", Reply::status(503));
    let refused = refused_url("latest.json");
    let list = format!("{refused},{}", server.url("gone.json"));
    let err = update::check(&Endpoints::parse_list(&list).unwrap(), "0.1.0", "en")
        .await
        .expect_err("nothing answered");
    assert_eq!(err.code(), "update.unreachable");
    let UpdateError::Unreachable { failures } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0].url, refused);
    assert!(
        failures[0].reason.to_lowercase().contains("refused"),
        "{}",
        failures[0].reason
    );
    assert_eq!(failures[1].reason, "HTTP 503");
    let message = err.to_string();
    assert!(
        message.contains(&refused) && message.contains("gone.json"),
        "{message}"
    );
}

#[tokio::test]
async fn a_download_is_handed_on_only_when_its_signature_holds() {
    let server = UpdateServer::start();
    let key = SigningKey::generate();
    serve_release(&server, &key, INSTALLER);
    let endpoints = Endpoints::parse_list(&server.url("latest.json")).unwrap();
    let release = update::check(&endpoints, "0.1.0", "en")
        .await
        .unwrap()
        .fetched
        .release;
    let artifact = release.platforms["linux-x86_64"].clone();

    let mut seen = 0;
    let bytes = update::download_verified(
        &artifact,
        &release.version,
        Some(&key.public_key_base64()),
        |done, _| seen = done,
    )
    .await
    .expect("a good signature holds");
    assert_eq!(bytes, INSTALLER);
    assert_eq!(seen, INSTALLER.len() as u64, "progress reached the end");

    // The same description, but the file on the server was swapped.
    server.put(
        "Leasehold_0.2.0.deb",
        Reply::ok(b"tampered installer".as_slice()),
    );
    let err = update::download_verified(
        &artifact,
        &release.version,
        Some(&key.public_key_base64()),
        |_, _| {},
    )
    .await
    .expect_err("tampered");
    assert_eq!(err.code(), "update.bad_signature", "{err}");

    // A build without a key refuses before downloading anything.
    let hits = server.hits("Leasehold_0.2.0.deb");
    let err = update::download_verified(&artifact, &release.version, None, |_, _| {})
        .await
        .expect_err("no key");
    assert_eq!(err.code(), "update.no_public_key");
    assert_eq!(server.hits("Leasehold_0.2.0.deb"), hits);
}
