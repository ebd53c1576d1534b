//! The saved target on fresh in-memory databases.

use chrono::{DateTime, TimeZone, Utc};

use super::*;
use crate::ssh::Secret;
use crate::store::ledger::{insert_instance, NewInstanceRow};
use crate::store::Store;

async fn store_with(instance: &str) -> Store {
    let store = Store::open_in_memory().await.expect("in-memory store");
    let mut conn = store.pool().acquire().await.expect("conn");
    insert_instance(
        &mut conn,
        &NewInstanceRow {
            name: instance,
            provider: "autodl",
            region: None,
            gpu_model: "RTX 4090",
            currency: "CNY",
            notes: None,
            planned_hours: None,
            created_at: Utc
                .with_ymd_and_hms(2026, 3, 1, 9, 0, 0)
                .single()
                .expect("time"),
        },
    )
    .await
    .expect("insert instance");
    store
}

fn plan(command: &str, auth: AuthChoice) -> ConnectPlan {
    ConnectPlan {
        ssh_command: command.to_owned(),
        auth,
        secret: None,
        trusted_fingerprint: None,
        keep_trying: false,
    }
}

#[tokio::test]
async fn a_saved_target_reads_back_with_where_it_resolved_to() {
    let store = store_with("gpu-a").await;
    let mut conn = store.pool().acquire().await.expect("conn");
    let plan = plan(
        "ssh -p 40022 root@region-9.autodl.com",
        AuthChoice::Key {
            path: "~/.ssh/id_ed25519".into(),
        },
    );
    let now = Utc
        .with_ymd_and_hms(2026, 3, 1, 10, 0, 0)
        .single()
        .expect("time");
    let destination = plan.destination().expect("resolves");
    let report = save_target(&mut conn, "gpu-a", &plan, &destination, now)
        .await
        .expect("saves");
    assert!(
        report.secret_remembered,
        "no secret given, nothing to forget"
    );
    let loaded = load_target(&mut conn, "gpu-a")
        .await
        .expect("loads")
        .expect("a target was saved");
    assert_eq!(loaded, report.target, "what is read back is what was saved");
    assert_eq!(
        (loaded.host.as_str(), loaded.port, loaded.user.as_str()),
        ("region-9.autodl.com", 40022, "root")
    );
    assert_eq!(loaded.saved_at, now);
}

#[tokio::test]
async fn saving_again_replaces_the_target_as_after_a_provider_restart() {
    let store = store_with("gpu-a").await;
    let mut conn = store.pool().acquire().await.expect("conn");
    let now = Utc
        .with_ymd_and_hms(2026, 3, 1, 10, 0, 0)
        .single()
        .expect("time");
    for (command, auth) in [
        ("ssh -p 40022 root@region-9.autodl.com", AuthChoice::Agent),
        (
            "ssh -p 41999 root@region-9.autodl.com",
            AuthChoice::Password,
        ),
    ] {
        let plan = plan(command, auth);
        let destination = plan.destination().expect("resolves");
        save_target(&mut conn, "gpu-a", &plan, &destination, now)
            .await
            .expect("saves");
    }
    let loaded = load_target(&mut conn, "gpu-a")
        .await
        .expect("loads")
        .expect("saved");
    assert_eq!(loaded.port, 41999, "the new port replaces the old one");
    assert_eq!(loaded.auth, AuthChoice::Password);
}

#[tokio::test]
async fn no_secret_ever_reaches_the_database() {
    let store = store_with("gpu-a").await;
    let mut conn = store.pool().acquire().await.expect("conn");
    // Pasted with the password after it, as people do when a provider shows both together.
    let mut plan = plan(
        "ssh -p 2222 root@10.1.2.3 pasted-pw-must-not-be-stored",
        AuthChoice::Password,
    );
    plan.secret = Some(Secret::new("pw-that-must-not-be-stored"));
    let destination = plan.destination().expect("resolves");
    let now = Utc
        .with_ymd_and_hms(2026, 3, 1, 10, 0, 0)
        .single()
        .expect("time");
    save_target(&mut conn, "gpu-a", &plan, &destination, now)
        .await
        .expect("saves even when no keychain can keep the password");
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT ssh_command || '|' || auth_method || '|' || coalesce(key_path, '') || '|' || host || '|' || user FROM ssh_targets",
    )
    .fetch_all(&mut *conn)
    .await
    .expect("read raw rows");
    // On a desktop with a keychain the test wrote a real entry: remove it again.
    crate::ssh::forget_secret(&crate::ssh::password_account(&destination)).ok();
    assert_eq!(rows.len(), 1);
    assert!(
        !rows[0].0.contains("pw-that-must-not-be-stored"),
        "the password must live only in the keychain: {rows:?}"
    );
    assert!(
        !rows[0].0.contains("pasted-pw-must-not-be-stored"),
        "words pasted after the host must not be stored: {rows:?}"
    );
    assert!(
        rows[0].0.starts_with("ssh -p 2222 root@10.1.2.3|"),
        "what was understood is kept: {rows:?}"
    );
}

#[tokio::test]
async fn an_unknown_instance_is_named_and_nothing_is_saved() {
    let store = store_with("gpu-a").await;
    let mut conn = store.pool().acquire().await.expect("conn");
    let plan = plan("ssh root@h", AuthChoice::Agent);
    let destination = plan.destination().expect("resolves");
    let now = DateTime::UNIX_EPOCH;
    let err = save_target(&mut conn, "nope", &plan, &destination, now)
        .await
        .expect_err("no such rental");
    assert_eq!(crate::Coded::code(&err), "connect.unknown_instance");
    assert!(
        load_target(&mut conn, "gpu-a")
            .await
            .expect("loads")
            .is_none(),
        "the other rental got nothing"
    );
}

#[tokio::test]
async fn forgetting_a_target_leaves_the_instance_unconnected() {
    let store = store_with("gpu-a").await;
    let mut conn = store.pool().acquire().await.expect("conn");
    let plan = plan("ssh root@h", AuthChoice::Agent);
    let destination = plan.destination().expect("resolves");
    save_target(
        &mut conn,
        "gpu-a",
        &plan,
        &destination,
        DateTime::UNIX_EPOCH,
    )
    .await
    .expect("saves");
    assert!(forget_target(&mut conn, "gpu-a").await.expect("forgets"));
    assert!(load_target(&mut conn, "gpu-a")
        .await
        .expect("loads")
        .is_none());
    assert!(
        !forget_target(&mut conn, "gpu-a").await.expect("forgets"),
        "forgetting twice reports there was nothing left"
    );
}

/// Issue #13, item 14: Verify's diagnosis learns from the rental's provider preset whether the
/// machine is a container (AutoDL) or a VM (a big cloud), and a provider this version does not
/// know leaves it to the probe.
#[tokio::test]
async fn the_diagnosis_context_takes_the_machine_kind_from_the_provider_preset() {
    use crate::billing::MachineKind;
    use crate::diagnose::Lang;
    let store = store_with("box").await;
    let mut conn = store.pool().acquire().await.expect("conn");
    let context = diagnose_context(&mut conn, "box", Lang::En)
        .await
        .expect("context");
    assert_eq!(context.machine, Some(MachineKind::Container), "autodl");
    for (name, provider, machine) in [
        ("vm", "aliyun", Some(MachineKind::VirtualMachine)),
        ("future", "a-provider-from-a-newer-version", None),
    ] {
        insert_instance(
            &mut conn,
            &NewInstanceRow {
                name,
                provider,
                region: None,
                gpu_model: "A10",
                currency: "CNY",
                notes: None,
                planned_hours: None,
                created_at: Utc
                    .with_ymd_and_hms(2026, 3, 1, 9, 0, 0)
                    .single()
                    .expect("time"),
            },
        )
        .await
        .expect("insert instance");
        let context = diagnose_context(&mut conn, name, Lang::En)
            .await
            .expect("context");
        assert_eq!(context.machine, machine, "{provider}");
    }
    let err = diagnose_context(&mut conn, "ghost", Lang::En)
        .await
        .expect_err("unknown instance");
    assert_eq!(crate::Coded::code(&err), "connect.unknown_instance");
}
