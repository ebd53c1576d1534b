use chrono::TimeZone;
use leasehold_testkit::update_server::{manifest, SigningKey};
use sqlx::{Connection, SqliteConnection};

use super::*;
use crate::Coded;

fn release(json: &str) -> Result<Release, UpdateError> {
    parse_manifest(json.as_bytes())
}

#[test]
fn a_release_reads_with_its_notes_per_language_date_and_platforms() {
    let text = manifest("v0.2.0", "https://example.org/Leasehold_0.2.0.deb", "c2ln");
    let release = release(&text).expect("reads");
    assert_eq!(release.version, Version::new(0, 2, 0));
    assert_eq!(
        release.pub_date,
        Some(Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0).unwrap())
    );
    assert_eq!(
        release.notes_in("zh-CN"),
        Some("“立即关机”已支持 RunPod REST v2。")
    );
    assert_eq!(
        release.notes_in("fr"),
        Some("Stop now works with RunPod REST v2."),
        "an unknown language falls back to English"
    );
    let linux = release.artifact_for("linux-x86_64", Some("deb")).unwrap();
    assert_eq!(
        linux.url.as_str(),
        "https://example.org/Leasehold_0.2.0.deb"
    );
}

#[test]
fn untrusted_descriptions_are_refused_or_trimmed_field_by_field() {
    let refused = [
        ("[]", "not an object"),
        (r#"{"platforms":{}}"#, "no version"),
        (
            r#"{"version":"two","platforms":{}}"#,
            "a version that is not semver",
        ),
        (r#"{"version":"1.0.0"}"#, "no platforms"),
        (
            r#"{"version":"1.0.0","pub_date":"yesterday","platforms":{}}"#,
            "a date that is not RFC 3339",
        ),
        (
            r#"{"version":"1.0.0","notes":5,"platforms":{}}"#,
            "notes that are not text",
        ),
    ];
    for (json, why) in refused {
        let err = release(json).expect_err(why);
        assert_eq!(err.code(), "update.bad_manifest", "{why}");
    }
    let huge = format!(
        r#"{{"version":"1.0.0","notes":"{}","platforms":{{}}}}"#,
        "x".repeat(manifest::MAX_MANIFEST_BYTES)
    );
    assert_eq!(release(&huge).unwrap_err().code(), "update.bad_manifest");

    // One bad platform entry is left out; the others still update.
    let json = r#"{"version":"1.0.0","notes":"a\u001b[31mb\nc","platforms":{
        "linux-x86_64":{"url":"http://evil.example/x.deb","signature":"c2ln"},
        "windows-x86_64":{"url":"https://example.org/x.exe","signature":"not base64!"},
        "linux-aarch64":{"url":"https://example.org/a.deb","signature":"c2ln"}}}"#;
    let release = release(json).expect("reads");
    assert_eq!(
        release.platforms.keys().collect::<Vec<_>>(),
        ["linux-aarch64"],
        "plain http elsewhere and a malformed signature are dropped"
    );
    assert_eq!(
        release.notes.as_deref(),
        Some("a[31mb\nc"),
        "escape characters removed"
    );
}

#[test]
fn newer_means_a_higher_semver_and_a_skipped_version_is_not_offered_again() {
    let text = manifest("0.10.0", "https://example.org/x", "c2ln");
    let release = release(&text).unwrap();
    let cases = [
        ("0.9.0", true),
        ("0.10.0", false),
        ("0.11.0", false),
        ("0.10.0-beta.1", true),
    ];
    for (current, newer) in cases {
        let (check, is_newer) = compare(&Version::parse(current).unwrap(), &release, "en");
        assert_eq!(is_newer, newer, "{current}");
        assert_eq!(check.latest, "0.10.0");
        assert_eq!(check.current, current);
    }
    assert!(should_offer(true, "0.10.0", None));
    assert!(!should_offer(true, "0.10.0", Some("0.10.0")));
    assert!(!should_offer(true, "0.10.0", Some("v0.10.0")));
    assert!(
        should_offer(true, "0.11.0", Some("0.10.0")),
        "a later one is offered"
    );
    assert!(!should_offer(false, "0.10.0", None));
}

#[test]
fn a_signature_holds_only_for_the_same_bytes_key_and_version() {
    let key = SigningKey::generate();
    let other = SigningKey::generate();
    let data = b"the installer".as_slice();
    let version = Version::new(0, 2, 0);
    let good = key.sign(data, "0.2.0");
    signature::verify(data, &good, &key.public_key_base64(), &version).expect("holds");

    let cases = [
        (
            b"the installer, tampered".as_slice(),
            good.clone(),
            key.public_key_base64(),
            "other bytes",
        ),
        (data, good, other.public_key_base64(), "another key"),
        (
            data,
            key.sign(data, "0.1.0"),
            key.public_key_base64(),
            "signed for an older version",
        ),
        (
            data,
            "bm90IGEgc2lnbmF0dXJl".to_owned(),
            key.public_key_base64(),
            "not a signature",
        ),
        (data, String::new(), key.public_key_base64(), "no signature"),
    ];
    for (bytes, signature, public_key, why) in cases {
        let err = signature::verify(bytes, &signature, &public_key, &version).expect_err(why);
        assert_eq!(err.code(), "update.bad_signature", "{why}: {err}");
    }
}

#[tokio::test]
async fn skip_this_version_is_kept_in_settings() {
    let mut conn = SqliteConnection::connect("sqlite::memory:").await.unwrap();
    sqlx::migrate!("./migrations").run(&mut conn).await.unwrap();
    assert_eq!(skipped_version(&mut conn).await.unwrap(), None);
    let now = Utc.with_ymd_and_hms(2026, 12, 4, 9, 0, 0).unwrap();
    skip_version(&mut conn, "v0.2.0", now).await.unwrap();
    assert_eq!(
        skipped_version(&mut conn).await.unwrap().as_deref(),
        Some("0.2.0")
    );
    assert_eq!(
        skip_version(&mut conn, "latest", now)
            .await
            .unwrap_err()
            .code(),
        "update.bad_version"
    );
}

#[test]
fn a_development_build_names_its_channel() {
    let info = build_info();
    assert_eq!(info.version, CURRENT_VERSION);
    assert!(!info.channel.is_empty());
}
