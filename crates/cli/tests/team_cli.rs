//! `leasehold team …` as scripts use it, against a real PostgreSQL server: the exact JSON of
//! `sync` and `status`, exit 1 with a clear message (and the ledger untouched) for a wrong
//! password, and the libpq password sources (`PGPASSWORD`, `~/.pgpass`) where no keychain is.

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use leasehold_testkit::postgres::{TestPostgres, PG_PASSWORD};
use predicates::str::contains;
use serde_json::Value;

struct Laptop {
    dir: tempfile::TempDir,
    db: PathBuf,
}

fn laptop() -> Laptop {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    Laptop { dir, db }
}

/// The CLI with a private HOME (so no ~/.pgpass of the developer's is read) and no libpq
/// password unless a test gives one.
fn leasehold(laptop: &Laptop, args: &[&str]) -> assert_cmd::Command {
    let mut cmd = cargo_bin_cmd!("leasehold");
    cmd.args(args)
        .arg("--db")
        .arg(&laptop.db)
        .env("HOME", laptop.dir.path())
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .env_remove("DBUS_SESSION_BUS_ADDRESS");
    cmd
}

fn json(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "stdout is JSON ({err}): {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// `team sync --json` (the password as libpq reads it), succeeded; its report.
fn synced(laptop: &Laptop) -> Value {
    let out = leasehold(laptop, &["team", "sync", "--json"])
        .env("PGPASSWORD", PG_PASSWORD)
        .output()
        .expect("run sync");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

fn connect(laptop: &Laptop, pg: &TestPostgres, member: &str) {
    leasehold(
        laptop,
        &[
            "team",
            "connect",
            "--url",
            &pg.url(),
            "--member",
            member,
            "--team",
            "lab",
            "--password-env",
            "LAB_PW",
        ],
    )
    .env("LAB_PW", PG_PASSWORD)
    .assert()
    .success()
    // The test server has no TLS (asked for with sslmode=disable, allowed on loopback only).
    .stderr(contains("not encrypted"));
}

fn add(laptop: &Laptop, name: &str, at: &str) {
    add_for(laptop, name, at, &[]);
}

fn add_for(laptop: &Laptop, name: &str, at: &str, more: &[&str]) {
    let mut args = vec![
        "instance",
        "add",
        name,
        "--gpu",
        "A100",
        "--price",
        "10",
        "--currency",
        "CNY",
        "--at",
        at,
    ];
    args.extend_from_slice(more);
    leasehold(laptop, &args).assert().success();
}

#[test]
fn sync_and_status_print_the_documented_json() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop(), laptop());
    connect(&alice, &pg, "alice");
    connect(&bob, &pg, "bob");
    add_for(
        &alice,
        "a100",
        "2026-03-01T08:00:00Z",
        &["--project", "vision"],
    );
    leasehold(
        &alice,
        &["instance", "start", "a100", "--at", "2026-03-01T09:00:00Z"],
    )
    .assert()
    .success();

    let report = synced(&alice);
    assert_eq!(report["pushed"], 2);
    assert_eq!(report["pulled"], 0);
    assert_eq!(report["conflicts"], Value::Array(Vec::new()));

    assert_eq!(synced(&bob)["pulled"], 2, "Bob pulls Alice's two events");

    let status = leasehold(&bob, &["team", "status", "--json"])
        .env("PGPASSWORD", PG_PASSWORD)
        .output()
        .expect("run status");
    let status = json(&status);
    assert_eq!(status["online"], true);
    let members: Vec<&str> = status["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["alice", "bob"]);
    let running = &status["running"][0];
    assert_eq!(running["name"], "a100");
    assert_eq!(running["member"], "alice");
    assert_eq!(running["burn_rate_per_hour"], "10.00");
    assert!(status["month_to_date"]["by_member"].is_array());
    assert!(status["month_to_date"]["by_gpu"].is_array());
    assert_eq!(running["project"], "vision", "Alice's project reached Bob");
    assert_eq!(
        status["month_to_date"]["by_project"][0]["key"], "vision",
        "spend by project: {}",
        status["month_to_date"]
    );

    leasehold(&bob, &["team", "disconnect"]).assert().success();
    leasehold(&bob, &["team", "sync"])
        .assert()
        .code(1)
        .stderr(contains("not linked to a team"));
}

#[test]
fn a_wrong_password_exits_1_without_echoing_it_and_writes_nothing() {
    let pg = TestPostgres::start();
    let alice = laptop();
    add(&alice, "a100", "2026-03-01T08:00:00Z");
    let out = leasehold(
        &alice,
        &[
            "team",
            "connect",
            "--url",
            &pg.url(),
            "--member",
            "alice",
            "--team",
            "lab",
            "--password-env",
            "LAB_PW",
        ],
    )
    .env("LAB_PW", "Wrong-Horse-42")
    .output()
    .expect("run connect");
    assert_eq!(out.status.code(), Some(1), "exit 1");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refused the password"),
        "a clear message: {stderr}"
    );
    assert!(
        !stderr.contains("Wrong-Horse-42"),
        "the password is never printed: {stderr}"
    );
    leasehold(&alice, &["team", "status", "--json"])
        .assert()
        .code(1)
        .stderr(contains("not linked to a team"));
    assert!(!file_contains(&alice.db, "Wrong-Horse-42"), "nor stored");
}

#[test]
fn the_password_comes_from_pgpass_where_no_keychain_is() {
    let pg = TestPostgres::start();
    let alice = laptop();
    connect(&alice, &pg, "alice");
    add(&alice, "a100", "2026-03-01T08:00:00Z");
    // No PGPASSWORD and no keychain: without ~/.pgpass the server refuses.
    leasehold(&alice, &["team", "sync"])
        .assert()
        .code(1)
        .stderr(contains("PGPASSWORD"));
    let pgpass = alice.dir.path().join(".pgpass");
    // A line for another database first: the first matching line is the one used.
    std::fs::write(
        &pgpass,
        format!(
            "127.0.0.1:{}:other:leasehold:nope\n127.0.0.1:{}:team:leasehold:{}\n",
            pg.port(),
            pg.port(),
            PG_PASSWORD
        ),
    )
    .unwrap();
    set_mode(&pgpass, 0o600);
    let out = leasehold(&alice, &["team", "sync", "--json"])
        .output()
        .expect("run sync");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json(&out)["pushed"], 1);
    assert!(
        !file_contains(&alice.db, PG_PASSWORD),
        "the password is never in SQLite"
    );
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Whether the database file (and its WAL) contain `needle` anywhere.
fn file_contains(db: &Path, needle: &str) -> bool {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    [db.to_path_buf(), PathBuf::from(wal)].iter().any(|path| {
        std::fs::read(path)
            .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
    })
}

#[test]
fn team_alerts_names_who_is_told_and_status_shows_it_to_every_member() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop(), laptop());
    connect(&alice, &pg, "alice");
    connect(&bob, &pg, "bob");
    let shown = leasehold(&bob, &["team", "alerts", "--json"])
        .output()
        .expect("run alerts");
    let shown = json(&shown);
    assert_eq!(shown["recipients"], Value::Array(Vec::new()), "{shown}");
    assert_eq!(shown["after_minutes"], 30, "the default");
    assert_eq!(shown["set_by"], Value::Null);

    leasehold(&alice, &["team", "alerts", "--to", "nobody"])
        .env("PGPASSWORD", PG_PASSWORD)
        .assert()
        .code(2)
        .stderr(contains("nobody is not a member"));
    leasehold(&alice, &["team", "alerts", "--after-minutes", "1"])
        .env("PGPASSWORD", PG_PASSWORD)
        .assert()
        .code(2)
        .stderr(contains("between 5 and 1440"));
    let set = leasehold(
        &alice,
        &[
            "team",
            "alerts",
            "--to",
            "alice,bob",
            "--after-minutes",
            "45",
            "--json",
        ],
    )
    .env("PGPASSWORD", PG_PASSWORD)
    .output()
    .expect("run alerts");
    let set = json(&set);
    assert_eq!(set["recipients"], serde_json::json!(["alice", "bob"]));
    assert_eq!(set["set_by"], "alice");

    leasehold(&bob, &["team", "sync"])
        .env("PGPASSWORD", PG_PASSWORD)
        .assert()
        .success();
    let status = leasehold(&bob, &["team", "status", "--json"])
        .env("PGPASSWORD", PG_PASSWORD)
        .output()
        .expect("run status");
    let status = json(&status);
    assert_eq!(status["alerts"]["after_minutes"], 45, "{status}");
    assert_eq!(
        status["alerts"]["recipients"],
        serde_json::json!(["alice", "bob"])
    );
    assert!(status["left_running"].is_array());
    for kept in [
        "members",
        "running",
        "month_to_date",
        "budgets",
        "conflicts",
    ] {
        assert!(status.get(kept).is_some(), "{kept} is still there");
    }
    leasehold(&bob, &["team", "alerts"])
        .assert()
        .success()
        .stdout(contains(
            "after 45 idle minutes go to each instance's own member and alice, bob",
        ));
}

fn conflicts(laptop: &Laptop, args: &[&str]) -> Value {
    let out = leasehold(laptop, args).output().expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)["conflicts"].clone()
}

/// Alice and Bob both start the shared instance while apart: Bob's start is refused in the
/// merged ledger. `team conflicts` lists it beside Alice's; `team resolve … --keep` keeps Bob's,
/// and after the next syncs neither laptop lists a conflict.
#[test]
fn team_conflicts_lists_a_refused_start_and_team_resolve_settles_it_everywhere() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop(), laptop());
    connect(&alice, &pg, "alice");
    connect(&bob, &pg, "bob");
    add(&alice, "a100", "2026-03-01T08:00:00Z");
    synced(&alice);
    synced(&bob);
    for (laptop, at) in [
        (&alice, "2026-03-01T09:00:00Z"),
        (&bob, "2026-03-01T09:30:00Z"),
    ] {
        leasehold(laptop, &["instance", "start", "a100", "--at", at])
            .assert()
            .success();
    }
    synced(&alice);
    assert_eq!(synced(&bob)["conflicts"].as_array().map(Vec::len), Some(1));

    let listed = conflicts(&bob, &["team", "conflicts", "--json"]);
    let refused = &listed[0];
    assert_eq!(refused["kind"], "refused_event");
    assert_eq!(refused["member"], "bob");
    assert_eq!(refused["standing"]["member"], "alice");
    let bobs = refused["event_uid"].as_str().expect("event uid").to_owned();

    let left = conflicts(&bob, &["team", "resolve", &bobs, "--keep", &bobs, "--json"]);
    assert_eq!(left, Value::Array(Vec::new()), "settled here at once");
    synced(&bob);
    assert_eq!(synced(&alice)["conflicts"], Value::Array(Vec::new()));
    assert_eq!(
        conflicts(&alice, &["team", "conflicts", "--json"]),
        Value::Array(Vec::new()),
        "Bob's choice reached Alice"
    );
    leasehold(&bob, &["team", "resolve", &bobs, "--keep", "not-an-event"])
        .assert()
        .failure()
        .stderr(contains("team.conflict_gone"));
}

/// Alice and Bob each rented an instance named "gpu" before joining: Bob's pull keeps Alice's as
/// "gpu@alice" and leaves a notice, which `team conflicts` shows with how to dismiss it and
/// `team dismiss KEY` hides; dismissing it again exits 2 (`team.conflict_gone`).
#[test]
fn team_dismiss_hides_a_name_collision_notice_once_read() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop(), laptop());
    connect(&alice, &pg, "alice");
    connect(&bob, &pg, "bob");
    add(&alice, "gpu", "2026-03-01T08:00:00Z");
    add(&bob, "gpu", "2026-03-01T08:00:00Z");
    synced(&alice);
    synced(&bob);

    let listed = conflicts(&bob, &["team", "conflicts", "--json"]);
    let notice = &listed[0];
    assert_eq!(notice["kind"], "name_collision");
    assert_eq!(notice["instance"], "gpu@alice");
    let key = notice["key"]
        .as_str()
        .expect("a notice has a key")
        .to_owned();
    leasehold(&bob, &["team", "conflicts"])
        .assert()
        .success()
        .stdout(contains(format!("once read: leasehold team dismiss {key}")));

    let left = conflicts(&bob, &["team", "dismiss", &key, "--json"]);
    assert_eq!(left, Value::Array(Vec::new()));
    assert_eq!(synced(&bob)["conflicts"], Value::Array(Vec::new()));
    leasehold(&bob, &["team", "dismiss", &key])
        .assert()
        .code(2)
        .stderr(contains("team.conflict_gone"));
}
