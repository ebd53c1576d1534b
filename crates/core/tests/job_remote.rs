//! Detached jobs on a real sshd test host: the job outlives a cut link and re-attach delivers
//! the whole log; cancel leaves no process; a vanished folder is `lost`, never a hang.

mod common;

use std::time::Duration;

use leasehold_core::job::{self, AttachOptions, JobId, JobRoot, JobState};
use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KeyFile, KnownHosts, LinkState,
    SshTarget,
};
use leasehold_core::target::{CommandSpec, Target};
use leasehold_testkit::delay_link::{DelayLink, LinkOptions};
use leasehold_testkit::netns;
use leasehold_testkit::{ClientKey, SshdOptions, TestHost};
use sha2::{Digest, Sha256};

fn fresh_id(tag: &str) -> JobId {
    let generated = JobId::generate(leasehold_core::clock::Clock::now(
        &leasehold_core::clock::SystemClock,
    ));
    JobId::parse(&format!("{generated}-{tag}")).expect("valid id")
}

async fn remote_sha256(target: &dyn Target, id: &JobId) -> String {
    let out = target
        .run(&CommandSpec::new(format!(
            "sha256sum \"$HOME\"/.leasehold/jobs/{id}/log | cut -d' ' -f1"
        )))
        .await
        .expect("sha256sum runs");
    out.stdout_text().trim().to_owned()
}

/// The client port of each connection sshd logged in, in order (its VERBOSE log:
/// "Accepted publickey for USER from ADDR port PORT ssh2: …").
fn logins(sshd_log: &str) -> Vec<String> {
    sshd_log
        .lines()
        .filter(|line| line.contains("Accepted publickey for "))
        .filter_map(client_port)
        .collect()
}

/// Commands sshd started on the connection from `port` ("Starting session: command for USER
/// from ADDR port PORT id N"): one per channel that ran something.
fn sessions_on(sshd_log: &str, port: &str) -> usize {
    sshd_log
        .lines()
        .filter(|line| line.contains("Starting session: "))
        .filter(|line| client_port(line).as_deref() == Some(port))
        .count()
}

fn client_port(line: &str) -> Option<String> {
    let (_, after) = line.split_once(" port ")?;
    Some(after.split_whitespace().next()?.to_owned())
}

fn pid_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| Some(!stat.rsplit_once(") ")?.1.starts_with('Z')))
        .unwrap_or(false)
}

/// A store holding rentals `names`, for jobs recorded against them.
async fn store_with_rentals(names: &[&str]) -> leasehold_core::store::Store {
    use leasehold_core::billing::{ledger, BillingRules, NewInstance};
    let store = leasehold_core::store::Store::open_in_memory()
        .await
        .expect("store");
    for name in names {
        ledger::add_instance(
            &store,
            &NewInstance {
                name: (*name).into(),
                provider: "custom".into(),
                region: None,
                gpu_model: "RTX 4090".into(),
                currency: "CNY".into(),
                notes: None,
                planned_hours: None,
                budget: None,
                rules: BillingRules::simple("2.5".parse().expect("decimal"), 1),
            },
            leasehold_core::clock::Clock::now(&leasehold_core::clock::SystemClock),
        )
        .await
        .expect("rental");
    }
    store
}

/// Start `jobs` (instance, name, script) on `target`, recorded as the app records them.
async fn start_recorded_jobs(
    store: &leasehold_core::store::Store,
    setup: &common::Setup,
    target: &SshTarget,
    jobs: &[(&str, &str, &str)],
) -> Vec<JobId> {
    use leasehold_core::job::record::{self, NewJob};
    let request = leasehold_core::ssh::ConnectRequest {
        ssh_command: setup.host.ssh_command(),
        ..leasehold_core::ssh::ConnectRequest::default()
    };
    let options = std::collections::BTreeMap::new();
    let mut ids = Vec::new();
    for (instance, tag, script) in jobs {
        let id = fresh_id(tag);
        let job = NewJob {
            id: &id,
            instance: Some(instance),
            target: "test",
            request: &request,
            name: Some(tag),
            recipe: None,
            options: &options,
            script,
            now: leasehold_core::clock::Clock::now(&leasehold_core::clock::SystemClock),
        };
        record::start_recorded(store, target, &JobRoot::Home, &job)
            .await
            .expect("starts");
        ids.push(id);
    }
    ids
}

#[tokio::test]
async fn a_job_survives_a_cut_link_and_reattach_delivers_every_byte_once() {
    // Keepalive every second: the transport itself notices the dead link within the cut.
    cut_link_during_attach(
        "a_job_survives_a_cut_link_and_reattach_delivers_every_byte_once",
        Duration::from_secs(1),
    )
    .await;
}

#[tokio::test]
async fn a_link_dead_without_the_transport_noticing_is_found_by_the_heartbeat() {
    // Keepalive far longer than the cut: only the log stream's heartbeat going silent can tell
    // that the link died, and the attach must dial a fresh connection (the old one would
    // otherwise come back by TCP retransmission after the cut, with no reconnect at all).
    cut_link_during_attach(
        "a_link_dead_without_the_transport_noticing_is_found_by_the_heartbeat",
        Duration::from_secs(120),
    )
    .await;
}

/// Attach to a job printing ~1.1 MB over ~6 s, cut the link at 1 s for 5 s, and check that the
/// attach dialled again and delivered the log exactly, ending with the job's own exit code.
async fn cut_link_during_attach(name: &str, keepalive: Duration) {
    if !netns::can_run(name) {
        return;
    }
    let link = DelayLink::start_with(LinkOptions {
        one_way_delay: Duration::from_millis(5),
        rate_bytes_per_sec: None,
    })
    .expect("delay link");
    let host = TestHost::start_with(SshdOptions {
        listen: link.ns_addr().into(),
        netns: Some(link.namespace().name().to_owned()),
        ..SshdOptions::default()
    });
    let scratch = tempfile::tempdir().expect("scratch");
    let destination = Destination::resolve(
        &parse_ssh_command(&host.ssh_command()).expect("parses"),
        None,
    )
    .expect("resolves");
    let credentials = Credentials {
        keys: vec![KeyFile {
            path: host.key(ClientKey::Ed25519),
            passphrase: None,
        }],
        ..Credentials::default()
    };
    let options = ConnectOptions {
        known_hosts: KnownHosts::only(scratch.path().join("known_hosts")),
        accept_new_host_key: true,
        keepalive,
        reconnect_window: Duration::from_secs(30),
        ..ConnectOptions::default()
    };
    let target = SshTarget::connect(destination, credentials, options)
        .await
        .unwrap_or_else(|err| panic!("connect through the link: {err}\n{}", host.log()));
    let mut link_states = target.link_state();

    // ~1.1 MB of random lines over ~6 s: still running when the link is cut at 1 s for 5 s.
    let id = fresh_id("cut");
    let script = "i=0; while [ $i -lt 300 ]; do head -c 2700 /dev/urandom | base64 -w 0; echo \" line $i\"; i=$((i+1)); sleep 0.02; done; echo done; exit 5";
    job::start(&target, &JobRoot::Home, &id, script)
        .await
        .expect("job starts");
    let saw_reconnect = tokio::spawn(async move {
        loop {
            if matches!(
                *link_states.borrow_and_update(),
                LinkState::Reconnecting { .. }
            ) {
                return true;
            }
            if link_states.changed().await.is_err() {
                return false;
            }
        }
    });
    let mut offset = 0u64;
    let mut got = Vec::new();
    let cutter = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        link.cut(Duration::from_secs(5));
        std::future::pending::<()>().await;
    };
    let mut collect = |chunk: &[u8]| got.extend_from_slice(chunk);
    let mut told = Vec::new();
    let mut on_link = |change: job::LinkChange| told.push(change);
    let attach = tokio::time::timeout(
        // A guard against a hang, not a speed test: the job itself ends after ~6 s.
        Duration::from_secs(120),
        job::attach_watching(
            &target,
            &JobRoot::Home,
            &id,
            &mut offset,
            &mut collect,
            AttachOptions::default(),
            &mut on_link,
        ),
    );
    let end = tokio::select! {
        end = attach => end
            .expect("attach hung: the dead link was never noticed")
            .expect("attach ends with the job"),
        () = cutter => unreachable!(),
    };
    // What the re-attach cost on the instance, from sshd's own log: one login after the cut
    // (a single handshake, not one per redial attempt), and on that connection exactly two
    // commands by the time attach returned: the log stream, carrying everything from the saved
    // offset, and the state read once it ended. No probe or state read before the stream.
    let sshd_log = wait_for_sessions(&host, 2).await;
    let logged_in = logins(&sshd_log);
    assert_eq!(
        logged_in.len(),
        2,
        "the first connection and exactly one after the cut:\n{sshd_log}"
    );
    assert_eq!(
        sessions_on(&sshd_log, &logged_in[1]),
        2,
        "on the new connection: the log stream, then the final state read:\n{sshd_log}"
    );
    assert_eq!(end.state, JobState::Failed, "exit 5 is reported as failed");
    assert_eq!(end.exit_code, Some(5), "the job's own exit code");
    assert!(
        saw_reconnect.await.unwrap_or(false),
        "the link really dropped while attached, and a fresh connection was dialled"
    );
    assert_eq!(offset, got.len() as u64, "offset = bytes delivered");
    assert_eq!(
        told,
        [job::LinkChange::Lost, job::LinkChange::Back],
        "the lost link and its return were each told once"
    );
    assert_eq!(end.log_bytes, offset, "every byte of the log was delivered");
    assert_eq!(
        hex::encode(Sha256::digest(&got)),
        remote_sha256(&target, &id).await,
        "the log as delivered equals the log on the instance: nothing lost, nothing repeated"
    );
    assert!(String::from_utf8_lossy(&got).ends_with(" line 299\ndone\n"));
    let _ = job::remove(&target, &JobRoot::Home, &id).await;
}

/// sshd's log once the newest connection shows at least `count` sessions. sshd's monitor process
/// writes the log, a moment after the session itself has started.
async fn wait_for_sessions(host: &TestHost, count: usize) -> String {
    for _ in 0..100 {
        let log = host.log();
        if let Some(port) = logins(&log).last() {
            if sessions_on(&log, port) >= count {
                return log;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    host.log()
}

#[tokio::test]
async fn cancel_ends_every_process_of_the_job_on_the_instance() {
    let setup = common::Setup::new();
    let target = setup.connect().await;
    let id = fresh_id("cancel");
    let script = "sleep 300 & echo \"child $!\"; nohup sh -c 'sleep 301 & echo \"grandchild $!\"; wait' & trap '' TERM; sleep 302";
    job::start(&target, &JobRoot::Home, &id, script)
        .await
        .expect("job starts");
    let mut pids: Vec<u32> = Vec::new();
    for _ in 0..100 {
        let log = target
            .run(&CommandSpec::new(format!(
                "cat \"$HOME\"/.leasehold/jobs/{id}/log; cat \"$HOME\"/.leasehold/jobs/{id}/pid | sed 's/^/wrapper /'"
            )))
            .await
            .expect("read log")
            .stdout_text();
        pids = log
            .lines()
            .filter_map(|l| l.split_whitespace().last()?.parse().ok())
            .collect();
        if pids.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        pids.len(),
        3,
        "child, grandchild and wrapper pids are known"
    );
    assert!(
        pids.iter().all(|p| pid_alive(*p)),
        "all running before cancel"
    );
    let report = job::cancel(&target, &JobRoot::Home, &id, Duration::from_secs(2))
        .await
        .expect("cancel");
    assert_eq!(report.status.state, JobState::Cancelled);
    assert!(
        report.killed,
        "the script ignores TERM, so KILL had to follow"
    );
    assert!(
        report.left_behind.is_empty(),
        "nothing survives: {:?}",
        report.left_behind
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    for pid in &pids {
        assert!(!pid_alive(*pid), "process {pid} of the job must be gone");
    }
    let _ = job::remove(&target, &JobRoot::Home, &id).await;
}

#[tokio::test]
async fn a_vanished_job_folder_is_lost_and_attach_returns() {
    let setup = common::Setup::new();
    let target = setup.connect().await;
    let id = fresh_id("lost");
    job::start(&target, &JobRoot::Home, &id, "echo hi; sleep 0.2")
        .await
        .expect("job starts");
    tokio::time::sleep(Duration::from_millis(600)).await;
    target
        .run(&CommandSpec::new(format!(
            "rm -rf \"$HOME\"/.leasehold/jobs/{id}"
        )))
        .await
        .expect("rm");
    let status = job::status(&target, &JobRoot::Home, &id)
        .await
        .expect("status");
    assert_eq!(status.state, JobState::Lost);
    let mut offset = 0;
    let end = tokio::time::timeout(
        Duration::from_secs(15),
        job::attach(
            &target,
            &JobRoot::Home,
            &id,
            &mut offset,
            &mut |_: &[u8]| {},
            AttachOptions::default(),
        ),
    )
    .await
    .expect("attach must not hang on a lost job")
    .expect("attach");
    assert_eq!(end.state, JobState::Lost);
}

/// After an app restart the jobs recorded as running are read again from the instance: one that
/// finished meanwhile becomes `succeeded`, one whose folder vanished `lost`, one still running
/// stays `running` (the Install page then follows it).
#[tokio::test]
async fn refresh_after_a_restart_reads_each_running_job_again() {
    use leasehold_core::job::record;

    let setup = common::Setup::new();
    let target = setup.connect().await;
    let store = store_with_rentals(&["gpu-a"]).await;
    let clock = leasehold_core::clock::SystemClock;
    let ids = start_recorded_jobs(
        &store,
        &setup,
        &target,
        &[
            ("gpu-a", "done", "echo done"),
            ("gpu-a", "gone", "echo gone; sleep 30"),
            ("gpu-a", "long", "sleep 30"),
        ],
    )
    .await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    // The folder of the second vanishes (a re-imaged instance), its processes with it.
    job::cancel(&target, &JobRoot::Home, &ids[1], Duration::from_secs(1))
        .await
        .expect("cancel");
    target
        .run(&CommandSpec::new(format!(
            "rm -rf \"$HOME\"/.leasehold/jobs/{}",
            ids[1]
        )))
        .await
        .expect("rm");
    // Until refreshed, the database still says running for all three.
    assert!(record::list_for_instance(&store, "gpu-a")
        .await
        .expect("list")
        .iter()
        .all(|job| job.state == JobState::Running));

    let jobs = record::refresh_running(&store, &target, "gpu-a", &clock)
        .await
        .expect("refresh");
    let state = |id: &JobId| jobs.iter().find(|j| j.id == id.as_str()).map(|j| j.state);
    assert_eq!(state(&ids[0]), Some(JobState::Succeeded));
    assert_eq!(state(&ids[1]), Some(JobState::Lost));
    assert_eq!(state(&ids[2]), Some(JobState::Running));
    job::cancel(&target, &JobRoot::Home, &ids[2], Duration::from_secs(1))
        .await
        .expect("cleanup");
}

/// Follow job `id` to its end; its whole log as text.
async fn whole_log(target: &dyn Target, id: &JobId) -> String {
    let mut offset = 0;
    let mut log = Vec::new();
    tokio::time::timeout(
        Duration::from_secs(30),
        job::attach(
            target,
            &JobRoot::Home,
            id,
            &mut offset,
            &mut |chunk: &[u8]| log.extend_from_slice(chunk),
            AttachOptions::default(),
        ),
    )
    .await
    .expect("the job ends")
    .expect("attach");
    String::from_utf8(log).expect("utf-8 log")
}

/// A user's own command sees what their terminal would: a typical image's `.bashrc` returns
/// early for a non-interactive shell, so conda's PATH (set after that guard, where `conda init`
/// writes it) reaches a job only through the interactive shell's environment. Whatever the
/// `.bashrc` prints stays out of the job's log. Recipes keep sshd's plain environment.
#[tokio::test]
async fn a_users_command_runs_with_the_environment_their_bashrc_sets() {
    let home = tempfile::tempdir().expect("home");
    let write = |name: &str, text: &str| {
        let path = home.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        path
    };
    write(
        ".profile",
        "if [ -n \"$BASH_VERSION\" ] && [ -f \"$HOME/.bashrc\" ]; then . \"$HOME/.bashrc\"; fi\n",
    );
    write(
        ".bashrc",
        "case $- in *i*) ;; *) return;; esac\n\
         echo 'Welcome to your GPU instance'\n\
         export PATH=\"$HOME/miniconda3/bin:$PATH\"\n\
         export CONDA_DEFAULT_ENV='train env'\n",
    );
    let python = write(
        "miniconda3/bin/python",
        "#!/bin/sh\necho \"conda python $*\"\n",
    );
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    // The login user's own home, as on an instance.
    let chown = std::process::Command::new("chown")
        .args(["-R", leasehold_testkit::TEST_USER])
        .arg(home.path())
        .status()
        .expect("chown");
    assert!(chown.success(), "chown the test home");
    let setup = common::Setup::with(SshdOptions {
        home: Some(home.path().to_owned()),
        ..SshdOptions::default()
    });
    let target = setup.connect().await;

    let id = fresh_id("shellenv");
    let words = [
        "python".to_owned(),
        "train.py;".to_owned(),
        "echo".to_owned(),
        "\"env=$CONDA_DEFAULT_ENV\"".to_owned(),
    ];
    job::start(
        &target,
        &JobRoot::Home,
        &id,
        &job::user_command_script(&words),
    )
    .await
    .expect("job starts");
    assert_eq!(
        whole_log(&target, &id).await,
        "conda python train.py\nenv=train env\n"
    );

    let recipe = fresh_id("plainenv");
    job::start(
        &target,
        &JobRoot::Home,
        &recipe,
        "echo \"env=${CONDA_DEFAULT_ENV:-none}\"",
    )
    .await
    .expect("job starts");
    assert_eq!(whole_log(&target, &recipe).await, "env=none\n");
}

/// The app's background watch (`install::watch::JobWatch`): each round reads the running jobs
/// of the instances with an open connection, reports a job that ended once (its state saved), and
/// leaves alone a job still running and the jobs of an instance with no connection (it never
/// dials). A job it saw running that another path then saw end (the Install page following it)
/// is reported by the next round too, once.
#[tokio::test]
async fn the_background_watch_reports_each_ended_job_once_and_never_dials() {
    use leasehold_core::connect::LiveTargets;
    use leasehold_core::install::watch;
    use leasehold_core::job::record;

    let setup = common::Setup::new();
    let target = setup.connect().await;
    let store = store_with_rentals(&["gpu-a", "gpu-b"]).await;
    let clock = leasehold_core::clock::SystemClock;
    let ids = start_recorded_jobs(
        &store,
        &setup,
        &target,
        &[
            ("gpu-a", "quick", "echo done"),
            ("gpu-a", "long", "sleep 30"),
            ("gpu-b", "unwatched", "echo done"),
        ],
    )
    .await;
    // Only gpu-a has a connection open in the app.
    let live = LiveTargets::default();
    let target = live.insert("gpu-a", target).await;
    tokio::time::sleep(Duration::from_millis(800)).await;

    let mut watch = watch::JobWatch::default();
    let ended = watch.round(&store, &live, &clock).await.expect("a round");
    let ended: Vec<(&str, JobState)> = ended.iter().map(|j| (j.id.as_str(), j.state)).collect();
    assert_eq!(ended, [(ids[0].as_str(), JobState::Succeeded)]);
    let state = |id: &JobId| {
        let store = store.clone();
        let id = id.as_str().to_owned();
        async move { record::load(&store, &id).await.expect("load").state }
    };
    assert_eq!(state(&ids[0]).await, JobState::Succeeded, "saved");
    assert_eq!(state(&ids[1]).await, JobState::Running);
    assert_eq!(
        state(&ids[2]).await,
        JobState::Running,
        "no connection, no look"
    );
    assert!(
        watch
            .round(&store, &live, &clock)
            .await
            .expect("a second round")
            .is_empty(),
        "told once"
    );
    // The long job is cancelled through the Install page's path, which saves its end itself.
    record::cancel_recorded(&store, target.as_ref(), ids[1].as_str(), &clock)
        .await
        .expect("cancel");
    let ended = watch
        .round(&store, &live, &clock)
        .await
        .expect("a third round");
    let ended: Vec<(&str, JobState)> = ended.iter().map(|j| (j.id.as_str(), j.state)).collect();
    assert_eq!(ended, [(ids[1].as_str(), JobState::Cancelled)]);
    assert!(watch
        .round(&store, &live, &clock)
        .await
        .expect("a fourth round")
        .is_empty());
}
