//! "Stop now": over SSH against a real sshd test host (the power-off command is a stand-in that
//! records its call; the test then takes the host down, as a real power-off would), and through
//! the RunPod and Vast.ai APIs against a local HTTP stand-in that checks method, path, headers
//! and body. `stopped` is recorded only when the stop is confirmed.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use leasehold_core::billing::{ledger, BillingRules, InstanceState, NewInstance, PowerAction};
use leasehold_core::ssh::{ConnectRequest, Secret};
use leasehold_core::stop::{self, ApiEndpoints, StopError, StopVia, StopWait};
use leasehold_core::store::Store;
use leasehold_core::FixedClock;
use leasehold_testkit::ClientKey;
use rust_decimal::Decimal;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_790_000_000 + seconds, 0).expect("a valid time")
}

async fn running_instance(provider: &str) -> Store {
    let store = Store::open_in_memory().await.expect("store");
    ledger::add_instance(
        &store,
        &NewInstance {
            name: "box".into(),
            provider: provider.into(),
            region: None,
            gpu_model: "RTX 4090".into(),
            currency: "CNY".into(),
            notes: None,
            planned_hours: None,
            budget: None,
            rules: BillingRules::simple(Decimal::new(25, 1), 1),
        },
        at(0),
    )
    .await
    .expect("instance");
    ledger::record(&store, "box", PowerAction::Start, at(1))
        .await
        .expect("started");
    store
}

async fn state(store: &Store) -> Option<InstanceState> {
    ledger::show(store, "box", at(3600))
        .await
        .expect("shown")
        .summary
        .state
}

fn short_wait(limit_secs: u64) -> StopWait {
    StopWait {
        limit: Duration::from_secs(limit_secs),
        every: Duration::from_millis(300),
        ..StopWait::default()
    }
}

/// Looks at the provider's answer every 20 ms for at most 2 s.
fn quick_looks() -> StopWait {
    StopWait {
        limit: Duration::from_secs(2),
        every: Duration::from_millis(20),
        ..StopWait::default()
    }
}

fn request_for(setup: &common::Setup) -> ConnectRequest {
    ConnectRequest {
        ssh_command: setup.host.ssh_command(),
        identity_files: vec![setup.host.key(ClientKey::Ed25519)],
        known_hosts: Some(setup.known_hosts_path()),
        ..ConnectRequest::default()
    }
}

#[tokio::test]
async fn an_ssh_stop_is_recorded_once_the_instance_stops_answering() {
    let store = running_instance("custom").await;
    let setup = common::Setup::new();
    let target = setup.connect().await;
    let calls = setup.host.remote_dir().join("calls");
    let command = format!("echo off >> {}", calls.display());
    let answers = stop::answers_for(request_for(&setup));
    let common::Setup { host, scratch } = setup;
    // The "machine": once the power-off ran, it goes down (sshd and every session end).
    let power = std::thread::spawn({
        let calls = calls.clone();
        move || {
            let mut host = host;
            for _ in 0..300 {
                if std::fs::read_to_string(&calls)
                    .unwrap_or_default()
                    .contains("off")
                {
                    host.stop();
                    return host;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            panic!("the power-off command never ran");
        }
    });
    let clock = FixedClock::new(at(600));
    let report = stop::over_ssh(
        &store,
        "box",
        &target,
        &answers,
        Some(&command),
        short_wait(30),
        &clock,
    )
    .await
    .expect("the stop is confirmed");
    let _host = power.join().expect("power thread");
    drop(scratch);
    assert_eq!(report.via, StopVia::Ssh);
    assert_eq!(report.command.as_deref(), Some(command.as_str()));
    assert_eq!(report.stopped_at, at(600));
    assert_eq!(std::fs::read_to_string(&calls).unwrap(), "off\n");
    assert_eq!(
        state(&store).await,
        Some(InstanceState::Stopped),
        "recorded once confirmed"
    );
}

#[tokio::test]
async fn an_instance_that_keeps_answering_is_not_recorded_as_stopped() {
    let store = running_instance("custom").await;
    let setup = common::Setup::new();
    let target = setup.connect().await;
    let calls = setup.host.remote_dir().join("calls");
    let answers = stop::answers_for(request_for(&setup));
    let err = stop::over_ssh(
        &store,
        "box",
        &target,
        &answers,
        Some(&format!("echo off >> {}", calls.display())),
        short_wait(3),
        &FixedClock::new(at(600)),
    )
    .await
    .expect_err("it still answers");
    assert!(matches!(err, StopError::NotConfirmed { .. }), "{err:?}");
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap(),
        "off\n",
        "it did run"
    );
    assert_eq!(
        state(&store).await,
        Some(InstanceState::Running),
        "nothing recorded"
    );
}

#[tokio::test]
async fn a_failing_power_off_command_records_nothing() {
    let store = running_instance("custom").await;
    let setup = common::Setup::new();
    let target = setup.connect().await;
    let answers = stop::answers_for(request_for(&setup));
    let err = stop::over_ssh(
        &store,
        "box",
        &target,
        &answers,
        Some("echo 'shutdown: Permission denied' >&2; exit 3"),
        short_wait(3),
        &FixedClock::new(at(600)),
    )
    .await
    .expect_err("exit 3 is a failure");
    match err {
        StopError::PowerOffFailed { exit, detail } => {
            assert_eq!(exit, 3);
            assert!(detail.contains("Permission denied"), "{detail}");
        }
        other => panic!("expected PowerOffFailed, got {other:?}"),
    }
    assert_eq!(state(&store).await, Some(InstanceState::Running));
}

#[tokio::test]
async fn vast_from_inside_is_refused_before_anything_runs() {
    let store = running_instance("vast").await;
    let setup = common::Setup::new();
    let target = setup.connect().await;
    let answers = stop::answers_for(request_for(&setup));
    let err = stop::over_ssh(
        &store,
        "box",
        &target,
        &answers,
        None,
        short_wait(3),
        &FixedClock::new(at(600)),
    )
    .await
    .expect_err("no in-instance command stops Vast billing");
    assert!(
        matches!(err, StopError::NoPowerOffCommand { .. }),
        "{err:?}"
    );
}

/// One request as the stand-in saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    body: String,
}

/// A local HTTP/1.1 server that records each request. A stop request is answered `status` with
/// `answer`; the n-th status look (GET) with `looks[n]`, the last one repeating.
async fn stand_in(
    status: u16,
    answer: &'static str,
    looks: &'static [&'static str],
) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let seen = Arc::new(Mutex::new(Vec::<Seen>::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    let n = stream.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buffer.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
                let mut lines = head.lines();
                let mut first = lines.next().unwrap_or("").split(' ');
                let method = first.next().unwrap_or("").to_owned();
                let path = first.next().unwrap_or("").to_owned();
                let headers: BTreeMap<String, String> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
                    .collect();
                let length: usize = headers
                    .get("content-length")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                while buffer.len() < head_end + length {
                    let n = stream.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    buffer.extend_from_slice(&chunk[..n]);
                }
                let body = String::from_utf8_lossy(&buffer[head_end..]).into_owned();
                let (status, answer) = {
                    let mut log = log.lock().unwrap();
                    let looked = log.iter().filter(|seen| seen.method == "GET").count();
                    let reply = if method == "GET" {
                        (200, looks[looked.min(looks.len().saturating_sub(1))])
                    } else {
                        (status, answer)
                    };
                    log.push(Seen {
                        method,
                        path,
                        headers,
                        body,
                    });
                    reply
                };
                let answer = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len(),
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    (format!("http://{address}"), seen)
}

#[tokio::test]
async fn runpod_stop_posts_to_the_pod_with_the_bearer_key_and_is_recorded_once_it_exited() {
    let store = running_instance("runpod").await;
    let (base, seen) = stand_in(
        200,
        "",
        &[
            r#"{"id": "abc123xyz456", "status": "RUNNING"}"#,
            r#"{"id": "abc123xyz456", "status": "EXITED"}"#,
        ],
    )
    .await;
    let endpoints = ApiEndpoints::all_at(&base);
    let report = stop::over_api(
        &store,
        "box",
        &endpoints,
        Some("abc123xyz456"),
        Some(Secret::new("rp-test-key")),
        quick_looks(),
        &FixedClock::new(at(900)),
    )
    .await
    .expect("RunPod said stopped");
    assert_eq!(report.via, StopVia::Api);
    assert_eq!(report.stopped_at, at(900));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "the stop, then looks until EXITED: {seen:?}");
    assert_eq!(seen[0].method, "POST");
    assert_eq!(
        seen[0].path, "/v2/pods/abc123xyz456/action",
        "RunPod REST v2"
    );
    assert_eq!(seen[0].headers["authorization"], "Bearer rp-test-key");
    let body: serde_json::Value = serde_json::from_str(&seen[0].body).expect("a JSON body");
    assert_eq!(body, serde_json::json!({"action": "stop"}));
    for look in &seen[1..] {
        assert_eq!(look.method, "GET");
        assert_eq!(look.path, "/v2/pods/abc123xyz456");
        assert_eq!(look.headers["authorization"], "Bearer rp-test-key");
    }
    assert_eq!(state(&store).await, Some(InstanceState::Stopped));
    assert_eq!(
        stop::provider_id(&store, "box").await.unwrap().as_deref(),
        Some("abc123xyz456"),
        "the pod id is kept for next time"
    );
}

#[tokio::test]
async fn a_refused_key_records_nothing() {
    let store = running_instance("runpod").await;
    let (base, _seen) = stand_in(401, "", &[]).await;
    let endpoints = ApiEndpoints::all_at(&base);
    let err = stop::over_api(
        &store,
        "box",
        &endpoints,
        Some("abc123"),
        Some(Secret::new("wrong-key")),
        quick_looks(),
        &FixedClock::new(at(900)),
    )
    .await
    .expect_err("401");
    assert!(
        matches!(err, StopError::BadApiKey { status: 401, .. }),
        "{err:?}"
    );
    assert!(
        !format!("{err}").contains("wrong-key"),
        "the key never appears in an error"
    );
    assert_eq!(state(&store).await, Some(InstanceState::Running));
}

#[tokio::test]
async fn a_bad_provider_id_never_reaches_the_api() {
    let store = running_instance("vast").await;
    let (base, seen) = stand_in(200, "", &[]).await;
    let endpoints = ApiEndpoints::all_at(&base);
    let err = stop::over_api(
        &store,
        "box",
        &endpoints,
        Some("42/../../admin"),
        Some(Secret::new("k")),
        quick_looks(),
        &FixedClock::new(at(900)),
    )
    .await
    .expect_err("not a Vast id");
    assert!(matches!(err, StopError::BadProviderId { .. }), "{err:?}");
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn vast_stop_puts_the_stopped_state_and_is_recorded_when_it_says_success() {
    let store = running_instance("vast").await;
    let (base, seen) = stand_in(
        200,
        r#"{"success": true}"#,
        &[r#"{"instances": {"id": 4242, "actual_status": "stopped", "intended_status": "stopped"}}"#],
    )
    .await;
    let endpoints = ApiEndpoints::all_at(&base);
    stop::over_api(
        &store,
        "box",
        &endpoints,
        Some("4242"),
        Some(Secret::new("vast-test-key")),
        quick_looks(),
        &FixedClock::new(at(900)),
    )
    .await
    .expect("Vast said success");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "the stop and one look: {seen:?}");
    assert_eq!(seen[1].method, "GET");
    assert_eq!(seen[1].path, "/api/v0/instances/4242/");
    assert_eq!(seen[0].method, "PUT");
    assert_eq!(seen[0].path, "/api/v0/instances/4242/");
    assert_eq!(seen[0].headers["authorization"], "Bearer vast-test-key");
    assert!(
        seen[0].headers["content-type"].starts_with("application/json"),
        "{:?}",
        seen[0].headers
    );
    let body: serde_json::Value = serde_json::from_str(&seen[0].body).expect("a JSON body");
    assert_eq!(body, serde_json::json!({"state": "stopped"}));
    assert_eq!(state(&store).await, Some(InstanceState::Stopped));
}

#[tokio::test]
async fn vast_answering_without_success_records_nothing() {
    let store = running_instance("vast").await;
    let (base, _seen) =
        stand_in(200, r#"{"success": false, "msg": "no such instance"}"#, &[]).await;
    let endpoints = ApiEndpoints::all_at(&base);
    let err = stop::over_api(
        &store,
        "box",
        &endpoints,
        Some("4242"),
        Some(Secret::new("k")),
        quick_looks(),
        &FixedClock::new(at(900)),
    )
    .await
    .expect_err("not a success");
    assert!(matches!(err, StopError::ApiRefused { .. }), "{err:?}");
    assert_eq!(state(&store).await, Some(InstanceState::Running));
}

#[tokio::test]
async fn a_pod_that_keeps_running_after_the_stop_request_is_not_recorded() {
    let store = running_instance("runpod").await;
    let (base, seen) = stand_in(200, "", &[r#"{"id": "abc123xyz456", "status": "RUNNING"}"#]).await;
    let endpoints = ApiEndpoints::all_at(&base);
    let err = stop::over_api(
        &store,
        "box",
        &endpoints,
        Some("abc123xyz456"),
        Some(Secret::new("k")),
        StopWait {
            limit: Duration::from_millis(200),
            every: Duration::from_millis(20),
            ..StopWait::default()
        },
        &FixedClock::new(at(900)),
    )
    .await
    .expect_err("still running");
    match &err {
        StopError::NotConfirmedByApi { last, .. } => assert_eq!(last, "RUNNING"),
        other => panic!("{other:?}"),
    }
    assert!(seen.lock().unwrap().len() >= 3, "it kept asking");
    assert_eq!(state(&store).await, Some(InstanceState::Running));
}

#[tokio::test]
async fn a_confirmation_login_refused_for_a_wrong_password_is_not_taken_for_a_stop() {
    let store = running_instance("custom").await;
    let setup = common::Setup::new();
    let target = setup.connect().await;
    // The host is up all along; only the confirmation's credentials are wrong.
    let answers = stop::answers_for(ConnectRequest {
        ssh_command: setup.host.ssh_command(),
        known_hosts: Some(setup.known_hosts_path()),
        password: Some(Secret::new("not the password")),
        ..ConnectRequest::default()
    });
    let err = stop::over_ssh(
        &store,
        "box",
        &target,
        &answers,
        Some("true"),
        short_wait(10),
        &FixedClock::new(at(600)),
    )
    .await
    .expect_err("a refused login says nothing about the power");
    assert!(
        matches!(err, StopError::CouldNotConfirm { .. }),
        "expected CouldNotConfirm, got {err:?}"
    );
    assert_eq!(
        state(&store).await,
        Some(InstanceState::Running),
        "the meter still runs: nothing recorded"
    );
}

#[tokio::test]
async fn a_power_off_command_that_times_out_records_nothing() {
    let store = running_instance("custom").await;
    let setup = common::Setup::new();
    let target = setup.connect().await;
    let answers = stop::answers_for(request_for(&setup));
    let err = stop::over_ssh(
        &store,
        "box",
        &target,
        &answers,
        Some("sleep 30"),
        StopWait {
            command_limit: Duration::from_secs(1),
            ..short_wait(3)
        },
        &FixedClock::new(at(600)),
    )
    .await
    .expect_err("a command still running has powered nothing off");
    assert!(
        matches!(err, StopError::CouldNotConfirm { .. }),
        "expected CouldNotConfirm, got {err:?}"
    );
    assert_eq!(state(&store).await, Some(InstanceState::Running));
}

#[tokio::test]
async fn a_stop_recorded_by_hand_is_checked_and_one_the_machine_contradicts_raises_a_reminder() {
    use leasehold_core::remind::{self, ReminderKind};
    let store = running_instance("custom").await;
    let setup = common::Setup::new();
    let look = stop::Look::Ssh(request_for(&setup));
    let stopped = stop::record_by_hand(&store, "box", Some(&look), &FixedClock::new(at(600)))
        .await
        .expect("recorded on the user's word");
    assert_eq!(stopped.stopped_at, at(600));
    assert_eq!(
        state(&store).await,
        Some(InstanceState::Stopped),
        "the ledger takes the user's word"
    );
    let check = stopped.check.expect("a saved target means a look");
    assert_eq!(check.via, StopVia::Ssh);
    assert!(
        check.answered,
        "sshd on loopback still answers a fresh login"
    );
    let contradicted = |due: &[remind::Reminder]| {
        due.iter()
            .any(|r| r.kind == ReminderKind::StopContradicted && r.instance == "box")
    };
    let (_, due) = remind::due_observed(&store, at(700)).await.expect("due");
    assert!(contradicted(&due), "the reminders do not go quiet: {due:?}");

    // Powered off for real: the next look finds silence and the reminder ends.
    let common::Setup { host, scratch } = setup;
    let mut host = host;
    host.stop();
    let again = stop::check_recorded_stop(
        &store,
        "box",
        &look,
        Duration::from_millis(50),
        &FixedClock::new(at(800)),
    )
    .await
    .expect("looked again");
    assert!(!again.answered, "nothing listens any more");
    let (_, due) = remind::due_observed(&store, at(900)).await.expect("due");
    assert!(
        !contradicted(&due),
        "a silent look confirms the stop: {due:?}"
    );
    drop(scratch);
}

#[tokio::test]
async fn a_stop_recorded_by_hand_without_a_way_to_look_says_so() {
    let store = running_instance("autodl").await;
    let stopped = stop::record_by_hand(&store, "box", None, &FixedClock::new(at(600)))
        .await
        .expect("recorded");
    assert_eq!(stopped.check, None);
    let plan = stop::plan(&store, "box", at(600)).await;
    assert!(
        plan.is_ok(),
        "the plan still reads a stopped instance: {plan:?}"
    );
}

#[tokio::test]
async fn the_plan_of_a_rental_never_connected_sends_the_user_to_the_console() {
    let store = running_instance("autodl").await;
    let plan = stop::plan(&store, "box", at(600)).await.expect("plan");
    assert_eq!(
        plan.route,
        stop::StopRoute::Console,
        "AutoDL's shutdown cannot be run from here"
    );
    assert_eq!(plan.check_by, None);
    assert!(
        plan.console_url
            .as_deref()
            .is_some_and(|u| u.contains("autodl.com")),
        "{plan:?}"
    );
    let err = stop::by_plan(
        &store,
        "box",
        &ApiEndpoints::from_env(),
        quick_looks(),
        &FixedClock::new(at(600)),
    )
    .await
    .expect_err("nothing to run");
    assert!(matches!(err, StopError::NeedsConsole { .. }), "{err:?}");
    assert_eq!(
        state(&store).await,
        Some(InstanceState::Running),
        "a refused stop records nothing"
    );
}
