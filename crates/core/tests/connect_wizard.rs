//! The Connect wizard's "Test the connection" against a real sshd: live steps in order, trust on
//! first use only for the fingerprint the user confirmed, the hard stop on a changed key with
//! nothing saved, a failure pinned on its step, and a working target saved on the instance.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use leasehold_core::connect::{
    load_target, test_and_save, AuthChoice, ConnectPlan, ConnectionCheck, LiveTargets,
};
use leasehold_core::ssh::{
    ConnectOptions, ConnectStep, KnownHosts, Secret, StepEvent, StepObserver, StepStatus,
};
use leasehold_core::store::ledger::{insert_instance, NewInstanceRow};
use leasehold_core::store::Store;
use leasehold_core::target::CommandSpec;
use leasehold_core::Coded;
use leasehold_testkit::{ClientKey, TestHost};

struct Wizard {
    host: TestHost,
    scratch: tempfile::TempDir,
    store: Store,
    live: LiveTargets,
    steps: Arc<Mutex<Vec<StepEvent>>>,
}

impl Wizard {
    async fn new() -> Self {
        let store = Store::open_in_memory().await.expect("store");
        let mut conn = store.pool().acquire().await.expect("conn");
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
                created_at: Utc
                    .with_ymd_and_hms(2026, 3, 1, 9, 0, 0)
                    .single()
                    .expect("time"),
            },
        )
        .await
        .expect("insert instance");
        drop(conn);
        Self {
            host: TestHost::start(),
            scratch: tempfile::tempdir().expect("scratch"),
            store,
            live: LiveTargets::default(),
            steps: Arc::new(Mutex::new(Vec::new())),
        }
    }

    fn options(&self) -> ConnectOptions {
        let sink = self.steps.clone();
        ConnectOptions {
            known_hosts: KnownHosts::only(self.scratch.path().join("known_hosts")),
            connect_timeout: Duration::from_secs(10),
            observer: StepObserver::new(move |event| sink.lock().expect("lock").push(event)),
            ..ConnectOptions::default()
        }
    }

    fn key_plan(&self, trusted: Option<String>) -> ConnectPlan {
        ConnectPlan {
            ssh_command: self.host.ssh_command(),
            auth: AuthChoice::Key {
                path: self.host.key(ClientKey::Ed25519).display().to_string(),
            },
            secret: None,
            trusted_fingerprint: trusted,
            keep_trying: false,
        }
    }

    async fn test(
        &self,
        plan: &ConnectPlan,
    ) -> Result<leasehold_core::connect::TestReport, leasehold_core::connect::ConnectError> {
        self.steps.lock().expect("lock").clear();
        let mut conn = self.store.pool().acquire().await.expect("conn");
        let now = Utc
            .with_ymd_and_hms(2026, 3, 1, 10, 0, 0)
            .single()
            .expect("time");
        test_and_save(&mut conn, &self.live, "gpu-a", plan, self.options(), now).await
    }

    fn steps(&self) -> Vec<(ConnectStep, StepStatus)> {
        self.steps
            .lock()
            .expect("lock")
            .iter()
            .map(|e| (e.step, e.status))
            .collect()
    }

    async fn saved(&self) -> Option<leasehold_core::connect::SavedTarget> {
        let mut conn = self.store.pool().acquire().await.expect("conn");
        load_target(&mut conn, "gpu-a").await.expect("load")
    }

    /// First contact confirmed: returns the fingerprint the user saw.
    async fn trust(&self) -> String {
        let first = self.test(&self.key_plan(None)).await.expect("first test");
        let ConnectionCheck::NeedsTrust { fingerprint, .. } = first.check else {
            panic!("first contact must ask, got {:?}", first.check);
        };
        let report = self
            .test(&self.key_plan(Some(fingerprint.clone())))
            .await
            .expect("confirmed test");
        assert!(
            matches!(report.check, ConnectionCheck::Connected { .. }),
            "{:?}\n{}",
            report.check,
            self.host.log()
        );
        fingerprint
    }
}

use ConnectStep::{Auth, FirstCommand, Handshake, HostKey, Tcp};
use StepStatus::{Done, Failed, Started};

#[tokio::test]
async fn first_contact_asks_and_only_the_confirmed_fingerprint_is_trusted() {
    let wizard = Wizard::new().await;
    let first = wizard
        .test(&wizard.key_plan(None))
        .await
        .expect("test runs");
    let ConnectionCheck::NeedsTrust {
        fingerprint, port, ..
    } = &first.check
    else {
        panic!("an unknown host must be a question, got {:?}", first.check);
    };
    assert!(fingerprint.starts_with("SHA256:"), "{fingerprint}");
    assert_eq!(*port, wizard.host.port());
    assert_eq!(
        wizard.steps(),
        vec![
            (Tcp, Started),
            (Tcp, Done),
            (Handshake, Started),
            (Handshake, Done),
            (HostKey, Started),
            (HostKey, Failed),
        ],
        "the host key step is where it stopped"
    );
    assert!(
        first.saved.is_none() && wizard.saved().await.is_none(),
        "nothing saved before trust"
    );

    let wrong = wizard
        .test(&wizard.key_plan(Some("SHA256:not-the-key-the-host-has".into())))
        .await
        .expect("test runs");
    assert!(
        matches!(wrong.check, ConnectionCheck::NeedsTrust { .. }),
        "confirming another fingerprint must not trust this host: {:?}",
        wrong.check
    );

    let confirmed = wizard
        .test(&wizard.key_plan(Some(fingerprint.clone())))
        .await
        .expect("test runs");
    let ConnectionCheck::Connected { remote, .. } = &confirmed.check else {
        panic!(
            "the confirmed host must connect: {:?}\n{}",
            confirmed.check,
            wizard.host.log()
        );
    };
    assert_eq!(
        remote.user,
        wizard.host.user(),
        "the first command ran as the login user"
    );
    assert!(remote.system.starts_with("Linux"), "{remote:?}");
    assert_eq!(
        wizard.steps(),
        vec![
            (Tcp, Started),
            (Tcp, Done),
            (Handshake, Started),
            (Handshake, Done),
            (HostKey, Started),
            (HostKey, Done),
            (Auth, Started),
            (Auth, Done),
            (FirstCommand, Started),
            (FirstCommand, Done),
        ]
    );
    let saved = wizard
        .saved()
        .await
        .expect("a working target is saved on the instance");
    assert_eq!(saved.port, wizard.host.port());
    assert_eq!(saved.user, wizard.host.user());
    assert_eq!(confirmed.saved.map(|s| s.target), Some(saved));

    let kept = wizard
        .live
        .get("gpu-a")
        .await
        .expect("the connection stays open for Verify");
    let out = kept
        .exec(&CommandSpec::new("echo reused"))
        .await
        .expect("the kept connection runs commands");
    assert_eq!(out.stdout_text().trim(), "reused");
}

#[tokio::test]
async fn a_changed_host_key_is_a_hard_stop_with_both_fingerprints_and_nothing_saved() {
    let wizard = Wizard::new().await;
    let old = wizard.trust().await;
    let saved_before = wizard.saved().await;
    wizard.host.rotate_host_key();
    // Even a fingerprint "confirmation" must not override a recorded key.
    let report = wizard
        .test(&wizard.key_plan(Some(old.clone())))
        .await
        .expect("test runs");
    let ConnectionCheck::HostKeyChanged {
        old_fingerprint,
        new_fingerprint,
        line,
        forget_command,
        ..
    } = &report.check
    else {
        panic!("a changed key must stop: {:?}", report.check);
    };
    assert_eq!(old_fingerprint, &old);
    assert_ne!(new_fingerprint, &old);
    assert_eq!(*line, 1);
    assert!(
        forget_command.starts_with("ssh-keygen -R "),
        "{forget_command}"
    );
    assert!(report.saved.is_none());
    assert_eq!(
        wizard.saved().await,
        saved_before,
        "the saved target is untouched"
    );
    assert!(
        !wizard.steps().contains(&(Auth, Started)),
        "no login was attempted"
    );

    let retried = wizard
        .test(&wizard.key_plan(Some(new_fingerprint.clone())))
        .await
        .expect("test runs");
    assert!(
        matches!(retried.check, ConnectionCheck::HostKeyChanged { .. }),
        "confirming the new fingerprint in the wizard must not replace a recorded key"
    );
}

#[tokio::test]
async fn a_wrong_password_fails_at_the_login_step_with_its_code() {
    let wizard = Wizard::new().await;
    let fingerprint = wizard.trust().await;
    let plan = ConnectPlan {
        ssh_command: wizard.host.ssh_command(),
        auth: AuthChoice::Password,
        secret: Some(Secret::new("not-the-password")),
        trusted_fingerprint: Some(fingerprint),
        keep_trying: false,
    };
    let err = wizard
        .test(&plan)
        .await
        .expect_err("a wrong password is refused");
    assert_eq!(err.code(), "ssh.auth_failed");
    assert!(!err.to_string().contains("not-the-password"), "{err}");
    assert_eq!(wizard.steps().last(), Some(&(Auth, Failed)));
}

#[tokio::test]
async fn the_right_password_connects() {
    let wizard = Wizard::new().await;
    let fingerprint = wizard.trust().await;
    let plan = ConnectPlan {
        ssh_command: wizard.host.ssh_command(),
        auth: AuthChoice::Password,
        secret: Some(Secret::new(wizard.host.password())),
        trusted_fingerprint: Some(fingerprint),
        keep_trying: false,
    };
    let report = wizard.test(&plan).await.expect("password login works");
    assert!(matches!(report.check, ConnectionCheck::Connected { .. }));
    let saved = wizard.saved().await.expect("saved");
    assert_eq!(saved.auth, AuthChoice::Password);
}

#[tokio::test]
async fn nothing_listening_fails_at_the_tcp_step_as_refused() {
    let mut wizard = Wizard::new().await;
    wizard.host.stop();
    let err = wizard
        .test(&wizard.key_plan(None))
        .await
        .expect_err("nothing listens any more");
    assert_eq!(err.code(), "ssh.refused", "{err}");
    assert_eq!(wizard.steps(), vec![(Tcp, Started), (Tcp, Failed)]);
}

#[tokio::test]
async fn an_unknown_rental_fails_before_dialling() {
    let wizard = Wizard::new().await;
    let mut conn = wizard.store.pool().acquire().await.expect("conn");
    let err = test_and_save(
        &mut conn,
        &wizard.live,
        "no-such-rental",
        &wizard.key_plan(None),
        wizard.options(),
        DateTime::UNIX_EPOCH,
    )
    .await
    .expect_err("unknown rental");
    assert_eq!(err.code(), "connect.unknown_instance");
    assert!(
        wizard.steps().is_empty(),
        "no step ran: {:?}",
        wizard.steps()
    );
}

#[tokio::test]
async fn keep_trying_connects_once_a_booting_machines_sshd_listens() {
    let mut wizard = Wizard::new().await;
    let fingerprint = wizard.trust().await;
    wizard.host.stop();
    let mut plan = wizard.key_plan(Some(fingerprint));
    plan.keep_trying = true;
    // Bring sshd back only after the wizard has seen it refused at least once.
    let steps = wizard.steps.clone();
    let mut host = std::mem::replace(&mut wizard.host, TestHost::start());
    let restarter = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !steps
            .lock()
            .expect("lock")
            .iter()
            .any(|e| (e.step, e.status) == (Tcp, Failed))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "no refused attempt seen"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        host.restart();
        host
    });
    let report = wizard
        .test(&plan)
        .await
        .expect("connects after the retries");
    let host = restarter.join().expect("restarter");
    assert!(
        matches!(report.check, ConnectionCheck::Connected { .. }),
        "{:?}\n{}",
        report.check,
        host.log()
    );
    assert!(
        wizard.steps().contains(&(Tcp, Failed)),
        "the refused attempts were shown before it connected"
    );
    assert_eq!(wizard.steps().last(), Some(&(FirstCommand, Done)));
}
