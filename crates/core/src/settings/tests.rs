use serde_json::json;
use sqlx::{Connection, SqliteConnection};

use super::*;
use crate::clock::{Clock, FixedClock};
use crate::Coded;

/// The tests' clock: a fixed afternoon, so a stored time can be checked exactly.
fn clock() -> FixedClock {
    FixedClock::new(
        DateTime::parse_from_rfc3339("2025-03-01T14:00:00Z")
            .expect("valid time")
            .with_timezone(&Utc),
    )
}

async fn fresh_db() -> SqliteConnection {
    let mut conn = SqliteConnection::connect("sqlite::memory:")
        .await
        .expect("an in-memory database opens");
    sqlx::migrate!("./migrations")
        .run(&mut conn)
        .await
        .expect("migrations apply to an empty database");
    conn
}

#[tokio::test]
async fn a_fresh_database_has_no_choices_so_the_ui_falls_back_to_the_system() {
    let mut conn = fresh_db().await;
    let preferences = load_preferences(&mut conn).await.unwrap();
    assert_eq!(
        preferences,
        Preferences::default(),
        "nothing chosen yet must read as no language, no currency, first run not done"
    );
}

#[tokio::test]
async fn saved_preferences_read_back_and_a_second_save_replaces_the_first() {
    let mut conn = fresh_db().await;
    let first = Preferences {
        language: Some("zh-CN".into()),
        currency: Some("CNY".into()),
        onboarded: false,
        theme: Theme::Dark,
    };
    save_preferences(&mut conn, &first, clock().now())
        .await
        .unwrap();
    assert_eq!(load_preferences(&mut conn).await.unwrap(), first);

    let second = Preferences {
        language: Some("en".into()),
        currency: Some("USD".into()),
        onboarded: true,
        theme: Theme::System,
    };
    save_preferences(&mut conn, &second, clock().now())
        .await
        .unwrap();
    assert_eq!(
        load_preferences(&mut conn).await.unwrap(),
        second,
        "switching language later must overwrite, not keep the old choice"
    );
}

#[tokio::test]
async fn an_unknown_language_is_refused_as_bad_input_and_nothing_is_written() {
    let mut conn = fresh_db().await;
    let err = save_preferences(
        &mut conn,
        &Preferences {
            language: Some("fr".into()),
            currency: Some("EUR".into()),
            onboarded: true,
            theme: Theme::Light,
        },
        clock().now(),
    )
    .await
    .expect_err("fr is not shipped");
    assert_eq!(err.code(), "settings.unknown_language");
    assert!(
        err.is_bad_input(),
        "a wrong language is the caller's mistake"
    );
    assert_eq!(
        load_preferences(&mut conn).await.unwrap(),
        Preferences::default(),
        "a refused save must not leave the currency or onboarding half-written"
    );
}

#[tokio::test]
async fn a_wizard_draft_survives_until_cleared() {
    let mut conn = fresh_db().await;
    assert_eq!(load_draft(&mut conn, "new_rental").await.unwrap(), None);

    let draft = json!({"step": 2, "values": {"name": "lora-4090", "price": "2.50"}});
    save_draft(&mut conn, "new_rental", &draft, clock().now())
        .await
        .unwrap();
    assert_eq!(
        load_draft(&mut conn, "new_rental").await.unwrap(),
        Some(draft),
        "closing the app half-way must bring the same draft back"
    );

    clear_draft(&mut conn, "new_rental").await.unwrap();
    assert_eq!(load_draft(&mut conn, "new_rental").await.unwrap(), None);
    clear_draft(&mut conn, "new_rental")
        .await
        .expect("clearing an absent draft is not an error");
}

#[tokio::test]
async fn drafts_of_unknown_wizards_and_oversized_drafts_are_refused() {
    let mut conn = fresh_db().await;
    let err = save_draft(&mut conn, "../etc", &json!({}), clock().now())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "settings.unknown_wizard");

    let huge = json!({ "notes": "x".repeat(MAX_DRAFT_BYTES) });
    let err = save_draft(&mut conn, "new_rental", &huge, clock().now())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "settings.draft_too_large");
    assert_eq!(
        load_draft(&mut conn, "new_rental").await.unwrap(),
        None,
        "a refused draft must not be stored"
    );
}

#[tokio::test]
async fn a_hand_edited_value_that_is_not_json_reports_which_key_is_broken() {
    let mut conn = fresh_db().await;
    sqlx::query(
        "INSERT INTO settings (key, value, updated_at) VALUES ('language', 'not json', '')",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let err = load_preferences(&mut conn).await.unwrap_err();
    assert_eq!(err.code(), "settings.corrupt");
    assert!(err.to_string().contains("language"), "{err}");
}

#[tokio::test]
async fn a_saved_value_is_stamped_with_the_time_the_caller_gives_not_the_wall_clock() {
    let mut conn = fresh_db().await;
    let clock = clock();
    save_draft(&mut conn, "new_rental", &json!({"step": 1}), clock.now())
        .await
        .unwrap();
    clock.advance(chrono::Duration::hours(3));
    save_preferences(&mut conn, &Preferences::default(), clock.now())
        .await
        .unwrap();
    let stamps: Vec<(String, DateTime<Utc>)> =
        sqlx::query_as("SELECT key, updated_at FROM settings ORDER BY key")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    let draft = stamps.iter().find(|(key, _)| key.starts_with("draft"));
    assert_eq!(
        draft.map(|(_, at)| at.to_rfc3339()),
        Some("2025-03-01T14:00:00+00:00".to_owned()),
        "the draft keeps the injected time: {stamps:?}"
    );
    assert!(
        stamps
            .iter()
            .filter(|(key, _)| !key.starts_with("draft"))
            .all(|(_, at)| at.to_rfc3339() == "2025-03-01T17:00:00+00:00"),
        "preferences saved three hours later carry that time: {stamps:?}"
    );
}

#[tokio::test]
async fn a_theme_this_version_does_not_know_reads_as_the_systems() {
    let mut conn = fresh_db().await;
    sqlx::query("INSERT INTO settings (key, value, updated_at) VALUES ('theme', '\"sepia\"', '2026-12-05T00:00:00Z')")
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        load_preferences(&mut conn).await.unwrap().theme,
        Theme::System
    );
}
