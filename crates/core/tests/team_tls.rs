//! The team database's TLS against a real PostgreSQL serving TLS (`TestPostgres::start_tls`: a
//! certificate from a CA made for the test, as a lab with its own CA has): refused by default,
//! accepted with that CA as `--ca-file`; and a server that offers no TLS and asks for the
//! password in clear (a network attacker stripping TLS) is never sent it.

mod team_common;

use std::io::{Read, Write};
use std::net::TcpListener;

use chrono::{TimeZone, Utc};
use leasehold_core::ssh::Secret;
use leasehold_core::team::{self, address, ConnectRequest, TeamError};
use leasehold_testkit::postgres::{TestPostgres, PG_PASSWORD};

fn request(url: &str) -> ConnectRequest {
    ConnectRequest {
        url: url.to_owned(),
        member: "alice".to_owned(),
        team: "lab".to_owned(),
        password: Some(Secret::new(PG_PASSWORD)),
    }
}

fn at() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap()
}

#[tokio::test]
async fn a_server_certificate_from_an_unknown_ca_is_refused_by_default_and_accepted_with_its_ca() {
    let pg = TestPostgres::start_tls();
    let laptop = team_common::laptop().await;
    let refused = team::connect(&laptop.store, request(&pg.url_with_default_tls()), at())
        .await
        .expect_err("a certificate no trusted CA signed is refused");
    assert!(
        matches!(refused, TeamError::UntrustedCertificate { .. }),
        "{refused:?}"
    );
    assert!(
        team::link(&laptop.store).await.expect("link").is_none(),
        "nothing is linked"
    );

    let with_ca = address::with_ca_file(&pg.url_with_default_tls(), &pg.ca_file()).expect("url");
    let linked = team::connect(&laptop.store, request(&with_ca), at())
        .await
        .expect("the lab's CA makes the certificate trusted");
    assert_eq!(linked.tls_warning, None, "verified TLS warns of nothing");
    std::env::set_var("PGPASSWORD", PG_PASSWORD);
    team::sync(&laptop.store, at())
        .await
        .expect("later syncs verify against the same CA");
}

/// A server that answers PostgreSQL's TLS request with "no" and then asks for the password in
/// clear, keeping every byte it receives.
fn stripping_server() -> (u16, std::thread::JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let serving = std::thread::spawn(move || {
        let mut received = Vec::new();
        // One connection per attempt; three attempts below.
        for _ in 0..3 {
            let Ok((mut client, _)) = listener.accept() else {
                break;
            };
            client
                .set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .expect("timeout");
            let mut buf = [0u8; 4096];
            loop {
                let n = match client.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                received.extend_from_slice(&buf[..n]);
                let is_tls_request = n == 8 && buf[4..8] == [0x04, 0xd2, 0x16, 0x2f];
                let reply: &[u8] = if is_tls_request {
                    b"N"
                } else {
                    // AuthenticationCleartextPassword.
                    &[b'R', 0, 0, 0, 8, 0, 0, 0, 3]
                };
                if client.write_all(reply).is_err() {
                    break;
                }
            }
        }
        received
    });
    (port, serving)
}

#[tokio::test]
async fn a_server_that_strips_tls_and_asks_for_the_password_in_clear_gets_nothing() {
    let (port, serving) = stripping_server();
    let laptop = team_common::laptop().await;
    // The default, and the weaker modes a user may ask for: none falls back to no TLS. The
    // host is named so that `disable` (allowed on loopback only) is not what is tried.
    for mode in ["", "?sslmode=require", "?sslmode=prefer"] {
        let url = format!("postgres://leasehold@localhost:{port}/team{mode}");
        let err = team::connect(&laptop.store, request(&url), at())
            .await
            .expect_err("no TLS, no login");
        assert!(
            matches!(err, TeamError::Unreachable { .. }),
            "{mode}: {err:?}"
        );
    }
    let received = serving.join().expect("server thread");
    assert!(
        !received.is_empty(),
        "the client did ask the server for TLS"
    );
    let text = String::from_utf8_lossy(&received);
    assert!(
        !text.contains(PG_PASSWORD),
        "the password never left this computer: {text:?}"
    );
    assert!(
        !text.contains("leasehold"),
        "not even the login: the client stopped at the refused TLS request: {text:?}"
    );
    assert!(
        team::link(&laptop.store).await.expect("link").is_none(),
        "nothing is linked"
    );
}

#[tokio::test]
async fn sslmode_disable_is_refused_beyond_this_computer() {
    let laptop = team_common::laptop().await;
    let err = team::connect(
        &laptop.store,
        request("postgres://leasehold@db.lab.example:5432/team?sslmode=disable"),
        at(),
    )
    .await
    .expect_err("refused before any connection");
    assert!(matches!(err, TeamError::InvalidUrl { .. }), "{err:?}");
}
