//! The keychain round trip against a real Secret Service (a private session D-Bus with
//! gnome-keyring, in a temporary HOME), never the developer's own keychain: a password saved
//! with a target lands in the keychain and nowhere in the database, comes back on the next
//! connect, and logs in to a real sshd.
//!
//! One test in its own binary: it points this process's `DBUS_SESSION_BUS_ADDRESS` at the test
//! bus before the keychain is first used.

mod common;

use chrono::{TimeZone, Utc};
use common::Setup;
use leasehold_core::connect::{load_target, save_target, AuthChoice, ConnectPlan};
use leasehold_core::ssh::{
    forget_secret, password_account, store_secret, stored_secret, Secret, SshTarget,
};
use leasehold_core::store::ledger::{insert_instance, NewInstanceRow};
use leasehold_core::store::Store;
use leasehold_core::target::{CommandSpec, Target};
use leasehold_testkit::secret_service::SecretService;

#[tokio::test]
async fn a_saved_password_lives_in_the_secret_service_and_logs_in_again() {
    let secrets = SecretService::start();
    // Before the first keychain call, which picks the bus up; this binary has no other test.
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", secrets.bus_address());

    // The plain round trip.
    let account = "ssh-password:someone@round-trip.example:22";
    assert_eq!(
        stored_secret(account),
        None,
        "a fresh keychain holds nothing"
    );
    store_secret(account, &Secret::new("round-trip-secret")).expect("the Secret Service stores it");
    assert_eq!(
        stored_secret(account),
        Some(Secret::new("round-trip-secret")),
        "what was stored reads back"
    );
    forget_secret(account).expect("forgotten");
    assert_eq!(stored_secret(account), None, "forgetting removes it");

    // Through the wizard's save and the next connect.
    let setup = Setup::new();
    let store = Store::open_in_memory().await.expect("store");
    let mut conn = store.pool().acquire().await.expect("conn");
    let now = Utc
        .with_ymd_and_hms(2026, 3, 1, 10, 0, 0)
        .single()
        .expect("time");
    insert_instance(
        &mut conn,
        &NewInstanceRow {
            name: "gpu-a",
            provider: "autodl",
            region: None,
            gpu_model: "RTX 4090",
            currency: "CNY",
            notes: None,
            planned_hours: None,
            created_at: now,
        },
    )
    .await
    .expect("insert instance");
    let plan = ConnectPlan {
        ssh_command: setup.host.ssh_command(),
        auth: AuthChoice::Password,
        secret: Some(Secret::new(setup.host.password())),
        trusted_fingerprint: None,
        keep_trying: false,
    };
    let destination = plan.destination().expect("resolves");
    let report = save_target(&mut conn, "gpu-a", &plan, &destination, now)
        .await
        .expect("saves");
    assert!(
        report.secret_remembered,
        "a running Secret Service keeps the password"
    );
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT ssh_command || '|' || auth_method || '|' || coalesce(key_path, '') || '|' || host || '|' || user FROM ssh_targets",
    )
    .fetch_all(&mut *conn)
    .await
    .expect("raw rows");
    assert!(
        rows.iter()
            .all(|(row,)| !row.contains(setup.host.password())),
        "the password is in the keychain only: {rows:?}"
    );
    assert_eq!(
        stored_secret(&password_account(&destination)),
        Some(Secret::new(setup.host.password())),
        "the keychain entry is named after user, host and port"
    );

    let saved = load_target(&mut conn, "gpu-a")
        .await
        .expect("loads")
        .expect("saved");
    let again = saved.plan();
    assert!(
        again.secret.is_none(),
        "nothing secret comes from the database"
    );
    let credentials = again.credentials(&destination).expect("credentials");
    let target = SshTarget::connect(destination.clone(), credentials, setup.options(true))
        .await
        .expect("the keychain's password logs in");
    let out = target.run(&CommandSpec::new("id -un")).await.expect("runs");
    assert_eq!(out.stdout_text().trim(), setup.host.user());
    forget_secret(&password_account(&destination)).expect("clean up");
}
