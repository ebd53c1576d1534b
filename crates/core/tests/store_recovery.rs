//! A database that cannot be opened is classified for the recovery screen, and its ways out work,
//! on real files: garbage bytes, a damaged page, a database with a migration from a newer
//! version, a file locked by another connection, and a full disk (SQLite's own SQLITE_FULL).

use std::path::{Path, PathBuf};

use chrono::{TimeZone, Utc};
use leasehold_core::billing::{ledger, BillingRules, NewInstance};
use leasehold_core::store::recovery::{self, classify, open_read_only_copy, start_fresh};
use leasehold_core::store::{OpenProblem, RecoveryAction, Store, StoreError};
use leasehold_core::Coded;
use rust_decimal::Decimal;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, SqliteConnection};

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 14, 5, 9)
        .single()
        .expect("valid time")
}

fn db_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("leasehold.sqlite3")
}

async fn open_err(path: &Path) -> StoreError {
    Store::open(path)
        .await
        .expect_err("this database must not open")
}

/// A real Leasehold database with one rental in it.
async fn database_with_a_rental(path: &Path) {
    let store = Store::open(path).await.expect("fresh database");
    let rental = NewInstance {
        name: "box".into(),
        provider: "autodl".into(),
        region: None,
        gpu_model: "RTX 4090".into(),
        currency: "CNY".into(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: BillingRules::simple(Decimal::new(25, 1), 1),
    };
    ledger::add_instance(&store, &rental, now())
        .await
        .expect("record a rental");
    store.close().await;
}

async fn raw(path: &Path) -> SqliteConnection {
    SqliteConnectOptions::new()
        .filename(path)
        .connect()
        .await
        .expect("raw connection")
}

#[tokio::test]
async fn garbage_bytes_are_a_corrupt_file_with_copy_and_fresh_start_offered() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = db_in(&dir);
    std::fs::write(&path, b"not a database, just bytes\n".repeat(300)).expect("write garbage");
    let failure = classify(&path, &open_err(&path).await);
    assert_eq!(failure.problem, OpenProblem::Corrupt);
    assert_eq!(failure.code, "store.file_corrupt");
    assert_eq!(failure.path, path.display().to_string());
    assert_eq!(
        failure.actions,
        [
            RecoveryAction::OpenCopy,
            RecoveryAction::StartFresh,
            RecoveryAction::Quit
        ]
    );
    // Even a copy of garbage cannot be read: the action fails with a coded error, no panic.
    let copies = tempfile::tempdir().expect("copies dir");
    let err = open_read_only_copy(&path, copies.path(), now())
        .await
        .expect_err("garbage is not a database");
    assert_eq!(err.code(), "store.open");
}

#[tokio::test]
async fn a_damaged_page_is_found_at_open_not_later() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = db_in(&dir);
    database_with_a_rental(&path).await;
    // Move everything from the write-ahead log into the file, so its pages are on disk.
    let mut conn = raw(&path).await;
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .execute(&mut conn)
        .await
        .expect("checkpoint");
    conn.close().await.expect("close");
    let mut bytes = std::fs::read(&path).expect("read the database");
    assert!(bytes.len() > 4096 * 3, "several pages: {}", bytes.len());
    // Overwrite the second page (a b-tree page) with noise, header left intact.
    for (i, byte) in bytes[4096..8192].iter_mut().enumerate() {
        *byte = u8::try_from(i * 7 % 251).expect("below 256");
    }
    std::fs::write(&path, &bytes).expect("write the damage");
    let err = open_err(&path).await;
    assert_eq!(err.open_problem(), OpenProblem::Corrupt, "{err}");
}

#[tokio::test]
async fn a_migration_from_a_newer_version_is_newer_version_and_opens_as_a_read_only_copy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = db_in(&dir);
    database_with_a_rental(&path).await;
    let mut conn = raw(&path).await;
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (99990101, 'from a newer version', 1, x'00', 0)",
    )
    .execute(&mut conn)
    .await
    .expect("add a future migration");
    conn.close().await.expect("close");

    let failure = classify(&path, &open_err(&path).await);
    assert_eq!(failure.problem, OpenProblem::NewerVersion);
    assert_eq!(failure.code, "store.newer_version");

    let copies = tempfile::tempdir().expect("copies dir");
    let (copy, copied_to) = open_read_only_copy(&path, copies.path(), now())
        .await
        .expect("a read-only copy opens");
    assert!(copied_to.starts_with(copies.path()));
    assert!(
        copied_to
            .file_name()
            .is_some_and(|n| n == "leasehold-copy-20261201-140509.sqlite3"),
        "{}",
        copied_to.display()
    );
    let rentals = ledger::list(&copy, now())
        .await
        .expect("the copy can be read");
    assert_eq!(rentals.len(), 1, "the rental is there");
    let write = sqlx::query("DELETE FROM ledger_events")
        .execute(copy.pool())
        .await
        .expect_err("the copy is read-only");
    assert!(write.to_string().contains("readonly"), "{write}");
    copy.close().await;
    // The original was not changed by any of this.
    let mut conn = raw(&path).await;
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM ledger_events")
        .fetch_one(&mut conn)
        .await
        .expect("count");
    assert_eq!(events, 1);
}

#[tokio::test]
async fn a_file_locked_by_another_connection_is_locked_with_retry_offered() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = db_in(&dir);
    database_with_a_rental(&path).await;
    let mut holder = raw(&path).await;
    sqlx::query("PRAGMA locking_mode = EXCLUSIVE")
        .execute(&mut holder)
        .await
        .expect("exclusive locking mode");
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut holder)
        .await
        .expect("take the lock");
    sqlx::query("DELETE FROM budgets")
        .execute(&mut holder)
        .await
        .expect("write under the lock");

    let failure = classify(&path, &open_err(&path).await);
    assert_eq!(failure.problem, OpenProblem::Locked, "{}", failure.detail);
    assert_eq!(failure.code, "store.locked");
    assert_eq!(failure.actions[0], RecoveryAction::Retry);
    assert!(!failure.actions.contains(&RecoveryAction::StartFresh));

    sqlx::query("ROLLBACK")
        .execute(&mut holder)
        .await
        .expect("release");
    holder.close().await.expect("close");
    recovery::open_or_explain(&path)
        .await
        .expect("opens once the other program let go");
}

#[tokio::test]
async fn sqlite_full_from_a_page_limit_is_a_full_disk() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = db_in(&dir);
    database_with_a_rental(&path).await;
    let mut conn = raw(&path).await;
    let pages: i64 = sqlx::query_scalar("PRAGMA page_count")
        .fetch_one(&mut conn)
        .await
        .expect("page count");
    sqlx::query(&format!("PRAGMA max_page_count = {pages}"))
        .execute(&mut conn)
        .await
        .expect("cap the file at its size");
    let err =
        sqlx::query("CREATE TABLE filler (x BLOB); INSERT INTO filler VALUES (zeroblob(1000000))")
            .execute(&mut conn)
            .await
            .expect_err("no room left");
    let failure = classify(&path, &StoreError::from(err));
    assert_eq!(failure.problem, OpenProblem::DiskFull, "{}", failure.detail);
    assert_eq!(failure.code, "store.disk_full");
    assert_eq!(
        failure.actions,
        [
            RecoveryAction::Retry,
            RecoveryAction::OpenCopy,
            RecoveryAction::Quit
        ]
    );
}

/// The same through `Store::open`: a database path that is a link to /dev/full gets ENOSPC from
/// the kernel on every write, exactly as on a full disk. Linux only (the test harness is).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_full_disk_at_first_start_is_a_full_disk_and_no_copy_is_attempted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = db_in(&dir);
    std::os::unix::fs::symlink("/dev/full", &path).expect("link to /dev/full");
    let failure = classify(&path, &open_err(&path).await);
    assert_eq!(failure.problem, OpenProblem::DiskFull, "{}", failure.detail);
    // A device is never copied (it would copy without end).
    let copies = tempfile::tempdir().expect("copies dir");
    let err = open_read_only_copy(&path, copies.path(), now())
        .await
        .expect_err("not a regular file");
    assert_eq!(err.code(), "store.copy_failed");
}

#[tokio::test]
async fn starting_fresh_keeps_the_old_files_under_a_timestamped_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = db_in(&dir);
    let garbage = b"damaged\n".repeat(100);
    std::fs::write(&path, &garbage).expect("write garbage");
    std::fs::write(dir.path().join("leasehold.sqlite3-wal"), b"old wal").expect("write a wal");
    let (store, kept) = start_fresh(&path, now()).await.expect("start fresh");
    assert_eq!(
        kept,
        dir.path().join("leasehold-broken-20261201-140509.sqlite3")
    );
    assert_eq!(
        std::fs::read(&kept).expect("kept file"),
        garbage,
        "kept untouched"
    );
    assert_eq!(
        std::fs::read(
            dir.path()
                .join("leasehold-broken-20261201-140509.sqlite3-wal")
        )
        .expect("kept wal"),
        b"old wal",
        "the write-ahead log moves with its database"
    );
    assert!(ledger::list(&store, now())
        .await
        .expect("fresh list")
        .is_empty());
    store.close().await;

    // A second fresh start in the same second does not overwrite the first kept file.
    std::fs::write(&path, b"second").expect("write again");
    let (store, again) = start_fresh(&path, now()).await.expect("start fresh again");
    assert_eq!(
        again,
        dir.path()
            .join("leasehold-broken-20261201-140509-2.sqlite3")
    );
    assert_eq!(std::fs::read(&kept).expect("first kept file"), garbage);
    store.close().await;
}

#[tokio::test]
async fn a_read_only_copy_goes_to_a_private_folder_and_earlier_copies_are_cleaned() {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().expect("temp dir");
    // What earlier runs left: this user's old copy, the shared folder older versions used, a
    // link planted under a copy folder's name, and another user's folder.
    let earlier = temp.path().join("leasehold-read-only-earlier");
    std::fs::create_dir(&earlier).expect("earlier");
    std::fs::write(earlier.join("leasehold-copy.sqlite3"), b"old").expect("old copy");
    std::fs::create_dir(temp.path().join("leasehold-read-only")).expect("legacy");
    let elsewhere = tempfile::tempdir().expect("link target");
    std::fs::write(elsewhere.path().join("precious"), b"keep").expect("precious");
    std::os::unix::fs::symlink(
        elsewhere.path(),
        temp.path().join("leasehold-read-only-link"),
    )
    .expect("link");
    let theirs = temp.path().join("leasehold-read-only-theirs");
    std::fs::create_dir(&theirs).expect("theirs");
    let chowned = std::process::Command::new("chown")
        .arg("nobody")
        .arg(&theirs)
        .status()
        .is_ok_and(|s| s.success());

    let folder = recovery::private_copy_folder_in(temp.path()).expect("a private folder");
    let mode = std::fs::metadata(&folder)
        .expect("folder")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700, "only this user can read the copy");
    assert!(
        folder
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("leasehold-read-only-")),
        "{}",
        folder.display()
    );
    assert!(!earlier.exists(), "this user's earlier copy is cleaned");
    assert!(
        !temp.path().join("leasehold-read-only").exists(),
        "and so is the old shared folder"
    );
    assert!(
        elsewhere.path().join("precious").exists(),
        "a link is never followed into"
    );
    if chowned {
        assert!(theirs.exists(), "another user's folder is left alone");
    }

    let dir = tempfile::tempdir().expect("db dir");
    let path = db_in(&dir);
    database_with_a_rental(&path).await;
    let (copy, copied_to) = open_read_only_copy(&path, &folder, now())
        .await
        .expect("the copy opens");
    assert!(copied_to.starts_with(&folder));
    copy.close().await;
}
