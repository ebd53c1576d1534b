//! `make release-artifacts`' signing and latest.json (packaging/release/), with a throwaway key
//! made by the Tauri CLI's own signer: what it writes must be what core and the CLI accept, and
//! nothing is built without a key.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use leasehold_core::update::{parse_manifest, signature};
use leasehold_core::Coded;
use leasehold_testkit::update_server::{Reply, UpdateServer};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tauri() -> PathBuf {
    let tauri = repo().join("ui/node_modules/.bin/tauri");
    assert!(
        tauri.exists(),
        "{} is missing: run make ui-deps",
        tauri.display()
    );
    tauri
}

#[test]
fn without_a_signing_key_it_says_so_and_builds_nothing() {
    let out = Command::new("bash")
        .arg(repo().join("packaging/release/artifacts.sh"))
        .env_remove("TAURI_SIGNING_PRIVATE_KEY")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("TAURI_SIGNING_PRIVATE_KEY is not set"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing was built");
}

#[test]
fn the_signed_installers_and_latest_json_pass_the_apps_own_checks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let key = dir.path().join("update.key");
    let generated = Command::new(tauri())
        .args(["signer", "generate", "--ci", "-p", "", "-w"])
        .arg(&key)
        .output()
        .expect("the Tauri signer runs");
    assert!(generated.status.success(), "{generated:?}");
    let private_key = std::fs::read_to_string(&key).unwrap();
    let public_key = std::fs::read_to_string(dir.path().join("update.key.pub")).unwrap();

    let deb = dir.path().join("Leasehold_99.0.0_amd64.deb");
    let setup = dir.path().join("Leasehold_99.0.0_x64-setup.exe");
    std::fs::write(&deb, b"a stand-in .deb").unwrap();
    std::fs::write(&setup, b"a stand-in installer").unwrap();
    let (notes_en, notes_zh) = (dir.path().join("en.md"), dir.path().join("zh.md"));
    std::fs::write(&notes_en, "Stop now uses RunPod REST v2.\n").unwrap();
    std::fs::write(&notes_zh, "“立即关机”改用 RunPod REST v2。\n").unwrap();

    let server = UpdateServer::start();
    let out_dir = dir.path().join("out");
    let made = Command::new("bash")
        .arg(repo().join("packaging/release/manifest.sh"))
        .arg(&out_dir)
        .args(["99.0.0", &server.url("")])
        .args([&deb, &setup, &notes_en, &notes_zh])
        .env("TAURI_SIGNING_PRIVATE_KEY", private_key.trim())
        .env("TAURI_SIGNING_PRIVATE_KEY_PASSWORD", "")
        .env("SOURCE_DATE_EPOCH", "1764576000")
        .output()
        .expect("runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );

    let json = std::fs::read(out_dir.join("latest.json")).unwrap();
    let release = parse_manifest(&json).expect("core reads the latest.json it wrote");
    assert_eq!(release.version.to_string(), "99.0.0");
    assert_eq!(
        release.notes_in("zh-CN"),
        Some("“立即关机”改用 RunPod REST v2。")
    );
    assert_eq!(
        release.notes_in("en"),
        Some("Stop now uses RunPod REST v2.")
    );
    assert_eq!(
        release.pub_date.map(|date| date.to_rfc3339()).as_deref(),
        Some("2025-12-01T08:00:00+00:00")
    );
    for (platform, file) in [
        ("linux-x86_64", &deb),
        ("linux-x86_64-deb", &deb),
        ("windows-x86_64", &setup),
        ("windows-x86_64-nsis", &setup),
    ] {
        let artifact = &release.platforms[platform];
        let name = file.file_name().unwrap().to_str().unwrap();
        assert_eq!(artifact.url.as_str(), server.url(name), "{platform}");
        let bytes = std::fs::read(out_dir.join(name)).unwrap();
        signature::verify(&bytes, &artifact.signature, &public_key, &release.version)
            .unwrap_or_else(|err| panic!("{platform}: {err}"));
        let err = signature::verify(
            b"tampered",
            &artifact.signature,
            &public_key,
            &release.version,
        )
        .expect_err("other bytes");
        assert_eq!(err.code(), "update.bad_signature");
    }

    // The CLI reads it from a server as the app would.
    server.put("latest.json", Reply::ok(json));
    let checked = Command::cargo_bin("leasehold")
        .unwrap()
        .args(["version", "--check", "--json"])
        .env("LEASEHOLD_UPDATE_URLS", server.url("latest.json"))
        .output()
        .unwrap();
    assert_eq!(checked.status.code(), Some(10), "{checked:?}");
}
