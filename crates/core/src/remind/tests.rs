//! Every trigger under an injected clock: fires once and at the right time, snoozes, survives a
//! restart without repeating, and catches up once after a sleep.

use chrono::{DateTime, Duration, FixedOffset, TimeZone, Utc};
use rust_decimal::Decimal;

use super::schedule::{self, Snooze, Tick};
use super::triggers::{due_now, Observations};
use super::{stakes, GpuSample, QuietHours, ReminderKind, ReminderRules, Urgency};
use crate::billing::ledger::{self, histories};
use crate::billing::{BillingRules, NewInstance, PowerAction};
use crate::store::Store;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0)
        .single()
        .expect("valid")
}

fn at(minutes: i64) -> DateTime<Utc> {
    t0() + Duration::minutes(minutes)
}

fn d(text: &str) -> Decimal {
    text.parse().expect("decimal")
}

/// A rental of 10 per hour created and started at `t0`, with the budget and planned hours given.
async fn rental(store: &Store, name: &str, budget: Option<&str>, planned: Option<&str>) -> i64 {
    let mut rules = BillingRules::simple(d("10"), 1);
    rules.wipe_after_stopped_days = Some(15);
    let new = NewInstance {
        name: name.into(),
        provider: "autodl".into(),
        region: None,
        gpu_model: "RTX 4090".into(),
        currency: "CNY".into(),
        notes: None,
        planned_hours: planned.map(d),
        budget: budget.map(d),
        rules,
    };
    let summary = ledger::add_instance(store, &new, t0())
        .await
        .expect("recorded");
    ledger::record(store, name, PowerAction::Start, t0())
        .await
        .expect("started");
    summary.id
}

async fn due(
    store: &Store,
    observations: &Observations,
    now: DateTime<Utc>,
) -> Vec<super::Reminder> {
    let all = histories(store).await.expect("ledger loads");
    due_now(&all, observations, &ReminderRules::default(), now).expect("triggers run")
}

async fn tick_at(store: &Store, now: DateTime<Utc>) -> Tick {
    tick_with(
        store,
        &Observations::default(),
        &ReminderRules::default(),
        now,
    )
    .await
}

async fn tick_with(
    store: &Store,
    observations: &Observations,
    rules: &ReminderRules,
    now: DateTime<Utc>,
) -> Tick {
    let all = histories(store).await.expect("ledger loads");
    let due = due_now(&all, observations, rules, now).expect("triggers run");
    schedule::tick(store, &due, rules, now, &Utc)
        .await
        .expect("tick")
}

fn kinds(list: &[super::Reminder]) -> Vec<ReminderKind> {
    list.iter().map(|r| r.kind).collect()
}

#[tokio::test]
async fn a_budget_threshold_fires_once_at_the_moment_it_is_crossed() {
    let store = Store::open_in_memory().await.expect("store");
    rental(&store, "a100", Some("100"), None).await;
    // 10 per hour against 100: half is spent at exactly 5 h.
    assert!(
        tick_at(&store, at(299)).await.fired.is_empty(),
        "49.8 % is not 50 %"
    );
    let tick = tick_at(&store, at(300) + Duration::seconds(30)).await;
    assert_eq!(
        kinds(&tick.fired),
        [ReminderKind::Budget50],
        "50 % just crossed"
    );
    assert_eq!(
        tick.fired[0].due_at,
        at(300),
        "due when the bill reached 50, to the second"
    );
    assert_eq!(tick.fired[0].params["percent"], "50");
    let again = tick_at(&store, at(301)).await;
    assert!(again.fired.is_empty(), "an occurrence fires once");
    assert_eq!(
        kinds(&again.open),
        [ReminderKind::Budget50],
        "and stays open in the popup"
    );
}

#[tokio::test]
async fn a_laptop_that_slept_through_every_threshold_gets_one_reminder() {
    let store = Store::open_in_memory().await.expect("store");
    rental(&store, "a100", Some("100"), None).await;
    assert!(tick_at(&store, at(10)).await.fired.is_empty());
    // Asleep from 10 min to 11 h: 50 %, 80 % and 100 % all came due meanwhile.
    let woke = tick_at(&store, at(660)).await;
    assert_eq!(
        kinds(&woke.fired),
        [ReminderKind::Budget100],
        "only the most urgent is sent"
    );
    assert_eq!(
        kinds(&woke.open),
        [ReminderKind::Budget100],
        "the popup shows one, not three"
    );
    let next = tick_at(&store, at(661)).await;
    assert!(
        next.fired.is_empty(),
        "the ones caught up silently are not sent later either"
    );
}

#[tokio::test]
async fn a_snooze_of_an_hour_hides_it_then_it_fires_once_more() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "a100", Some("100"), None).await;
    let fired = tick_at(&store, at(300)).await.fired;
    let reminder = &fired[0];
    let until = Snooze::Hour.until(at(300), &Utc);
    assert_eq!(until, at(360));
    schedule::snooze(&store, id, reminder.kind, &reminder.occurrence, until)
        .await
        .expect("snoozed");
    let hidden = tick_at(&store, at(330)).await;
    assert!(
        hidden.fired.is_empty() && hidden.open.is_empty(),
        "hidden while snoozed"
    );
    let back = tick_at(&store, at(361)).await;
    assert_eq!(
        kinds(&back.fired),
        [ReminderKind::Budget50],
        "back once the hour is over"
    );
    assert!(
        tick_at(&store, at(362)).await.fired.is_empty(),
        "and only once"
    );
}

#[tokio::test]
async fn snoozing_the_top_of_a_family_does_not_uncover_the_one_below() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "a100", Some("100"), None).await;
    tick_at(&store, at(300)).await;
    let top = tick_at(&store, at(480)).await.fired;
    assert_eq!(kinds(&top), [ReminderKind::Budget80]);
    schedule::snooze(
        &store,
        id,
        ReminderKind::Budget80,
        &top[0].occurrence,
        at(540),
    )
    .await
    .expect("snoozed");
    let tick = tick_at(&store, at(500)).await;
    assert!(
        tick.open.is_empty(),
        "the 50 % reminder stays snoozed with the 80 % one: {tick:?}"
    );
}

#[tokio::test]
async fn a_dismissed_reminder_never_comes_back() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "a100", Some("100"), None).await;
    let fired = tick_at(&store, at(300)).await.fired;
    schedule::dismiss(&store, id, fired[0].kind, &fired[0].occurrence, at(301))
        .await
        .expect("dismissed");
    let later = tick_at(&store, at(400)).await;
    assert!(later.fired.is_empty() && later.open.is_empty());
    let err = schedule::snooze(&store, id, ReminderKind::GpuIdle, "never", at(500))
        .await
        .expect_err("nothing to snooze");
    assert_eq!(crate::Coded::code(&err), "remind.not_fired");
}

#[test]
fn until_tomorrow_means_nine_in_the_morning_of_the_next_local_day() {
    let beijing = FixedOffset::east_opt(8 * 3600).expect("offset");
    let late_evening = beijing
        .with_ymd_and_hms(2025, 3, 1, 22, 0, 0)
        .single()
        .expect("valid")
        .with_timezone(&Utc);
    let until = Snooze::Tomorrow.until(late_evening, &beijing);
    assert_eq!(
        until.with_timezone(&beijing).to_rfc3339(),
        "2025-03-02T09:00:00+08:00"
    );
    // 01:00 UTC on 2 March is already the 2nd in Beijing: tomorrow is the 3rd.
    let after_midnight_there = Utc
        .with_ymd_and_hms(2025, 3, 2, 1, 0, 0)
        .single()
        .expect("valid");
    assert_eq!(
        Snooze::Tomorrow
            .until(after_midnight_there, &beijing)
            .with_timezone(&beijing)
            .to_rfc3339(),
        "2025-03-03T09:00:00+08:00",
        "local time decides which day tomorrow is"
    );
}

#[tokio::test]
async fn a_restart_neither_repeats_nor_loses_a_reminder_and_keeps_the_snooze() {
    let folder = tempfile::tempdir().expect("temp dir");
    let path = folder.path().join("leasehold.sqlite3");
    let store = Store::open(&path).await.expect("store");
    let id = rental(&store, "a100", Some("100"), Some("8")).await;
    let first = tick_at(&store, at(300)).await;
    assert_eq!(kinds(&first.fired), [ReminderKind::Budget50]);
    store.close().await;

    let store = Store::open(&path).await.expect("reopened");
    let after = tick_at(&store, at(301)).await;
    assert!(
        after.fired.is_empty(),
        "already sent before the restart: {after:?}"
    );
    assert_eq!(kinds(&after.open), [ReminderKind::Budget50], "still open");
    schedule::snooze(
        &store,
        id,
        ReminderKind::Budget50,
        &first.fired[0].occurrence,
        at(1000),
    )
    .await
    .expect("snoozed");
    store.close().await;

    // Closed from 301 min to 8 h 10 min: the backup warning came due at 7 h 30, the planned
    // hours ran out and 80 % of the budget was spent at 8 h.
    let store = Store::open(&path).await.expect("reopened again");
    let back = tick_at(&store, at(490)).await;
    assert_eq!(
        kinds(&back.fired),
        [
            ReminderKind::BackupMissing,
            ReminderKind::OverPlanned,
            ReminderKind::Budget80
        ],
        "what came due while closed fires on the first tick"
    );
    assert!(
        !kinds(&back.open).contains(&ReminderKind::Budget50),
        "the snooze outlived the restart"
    );
    store.close().await;
}

#[tokio::test]
async fn the_planned_hours_warn_before_and_after_and_ask_for_a_backup() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "h100", None, Some("2")).await;
    assert!(due(&store, &Observations::default(), at(89))
        .await
        .is_empty());
    let near = due(&store, &Observations::default(), at(95)).await;
    assert_eq!(
        kinds(&near),
        [ReminderKind::ReleaseDue, ReminderKind::BackupMissing]
    );
    assert_eq!(near[0].due_at, at(90), "30 min before the 2 h run out");
    assert_eq!(near[0].params["minutes"], "25");

    let backed_up = Observations {
        last_backup: [(id, at(60))].into(),
        ..Observations::default()
    };
    assert_eq!(
        kinds(&due(&store, &backed_up, at(95)).await),
        [ReminderKind::ReleaseDue],
        "a backup during this run is enough"
    );

    let over = due(&store, &backed_up, at(125)).await;
    assert_eq!(kinds(&over), [ReminderKind::OverPlanned]);
    assert_eq!(over[0].due_at, at(120));
}

#[tokio::test]
async fn planned_hours_count_running_time_not_stopped_time() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "h100", None, Some("2")).await;
    ledger::record(&store, "h100", PowerAction::Stop, at(60))
        .await
        .expect("stop");
    ledger::record(&store, "h100", PowerAction::Start, at(120))
        .await
        .expect("start");
    let over = due(
        &store,
        &Observations {
            last_backup: [(id, at(200))].into(),
            ..Observations::default()
        },
        at(200),
    )
    .await;
    assert_eq!(kinds(&over), [ReminderKind::OverPlanned]);
    assert_eq!(
        over[0].due_at,
        at(180),
        "one hour before the stop and one after the start"
    );
}

#[tokio::test]
async fn a_stopped_instance_is_warned_three_days_before_the_wipe() {
    let store = Store::open_in_memory().await.expect("store");
    rental(&store, "a100", None, None).await;
    ledger::record(&store, "a100", PowerAction::Stop, at(60))
        .await
        .expect("stop");
    let wipe = at(60) + Duration::days(15);
    let before = wipe - Duration::days(3) - Duration::seconds(1);
    assert!(due(&store, &Observations::default(), before)
        .await
        .is_empty());
    let warned = due(&store, &Observations::default(), wipe - Duration::days(2)).await;
    assert_eq!(kinds(&warned), [ReminderKind::WipeDeadline]);
    assert_eq!(warned[0].due_at, wipe - Duration::days(3));
    assert_eq!(warned[0].params["hours"], "48");
    assert!(
        due(&store, &Observations::default(), wipe).await.is_empty(),
        "wiped already"
    );
}

#[tokio::test]
async fn the_wipe_is_warned_at_three_days_and_again_on_the_last_day_through_quiet_hours() {
    let store = Store::open_in_memory().await.expect("store");
    rental(&store, "a100", None, None).await;
    ledger::record(&store, "a100", PowerAction::Stop, at(60))
        .await
        .expect("stop");
    let wipe = at(60) + Duration::days(15);
    let none = Observations::default();
    // 14 days before: nothing yet.
    assert!(due(&store, &none, wipe - Duration::days(14))
        .await
        .is_empty());
    // 3 days before: a warning, inside the quiet hours' rule.
    let three = due(&store, &none, wipe - Duration::days(3)).await;
    assert_eq!(kinds(&three), [ReminderKind::WipeDeadline]);
    assert_eq!(three[0].params["last_day"], "false");
    assert_eq!(three[0].stakes.urgency, Urgency::Warning);
    assert!(!stakes::breaks_quiet_hours(&three[0]));
    // 1 day before: its own occurrence, critical, sent even in the quiet hours.
    let one = due(&store, &none, wipe - Duration::days(1)).await;
    assert_eq!(kinds(&one), [ReminderKind::WipeDeadline]);
    assert_eq!(one[0].due_at, wipe - Duration::days(1));
    assert_ne!(one[0].occurrence, three[0].occurrence);
    assert_eq!(one[0].params["last_day"], "true");
    assert_eq!(one[0].stakes.urgency, Urgency::Critical);
    assert!(stakes::breaks_quiet_hours(&one[0]));
}

fn samples(from: i64, to: i64, utilisation: &[u32]) -> Vec<GpuSample> {
    (from..=to)
        .map(|m| GpuSample {
            at: at(m),
            utilisation: utilisation.to_vec(),
        })
        .collect()
}

#[tokio::test]
async fn idle_gpus_fire_after_the_idle_time_and_a_busy_one_keeps_them_quiet() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "8xa100", None, None).await;
    let mut history = samples(0, 10, &[90, 88]);
    history.extend(samples(11, 45, &[0, 3]));
    let observed = Observations {
        samples: [(id, history.clone())].into(),
        ..Observations::default()
    };
    assert!(
        due(&store, &observed, at(40)).await.is_empty(),
        "idle for 29 min only"
    );
    let idle = due(&store, &observed, at(41)).await;
    assert_eq!(kinds(&idle), [ReminderKind::GpuIdle]);
    assert_eq!(idle[0].due_at, at(41), "30 min after the first idle sample");

    let mut one_busy = samples(0, 45, &[0, 3]);
    one_busy[30].utilisation = vec![0, 60];
    let observed = Observations {
        samples: [(id, one_busy)].into(),
        ..Observations::default()
    };
    assert!(
        due(&store, &observed, at(45)).await.is_empty(),
        "one busy GPU minute restarts the count"
    );

    let mut gap = samples(0, 45, &[0, 0]);
    gap.retain(|s| s.at < at(5) || s.at > at(20));
    let observed = Observations {
        samples: [(id, gap)].into(),
        ..Observations::default()
    };
    assert!(
        due(&store, &observed, at(45)).await.is_empty(),
        "a 15 min hole (asleep) proves nothing about those minutes"
    );
    let stale = Observations {
        samples: [(id, history)].into(),
        ..Observations::default()
    };
    assert!(
        due(&store, &stale, at(60)).await.is_empty(),
        "no sample for 15 min: unknown, not idle"
    );
}

#[tokio::test]
async fn quiet_hours_hold_reminders_back_until_they_end() {
    let store = Store::open_in_memory().await.expect("store");
    rental(&store, "a100", Some("100"), None).await;
    let rules = ReminderRules {
        quiet_hours: Some(QuietHours {
            start: "04:00".into(),
            end: "06:00".into(),
        }),
        ..ReminderRules::default()
    };
    let quiet = tick_with(&store, &Observations::default(), &rules, at(300)).await;
    assert!(
        quiet.quiet && quiet.fired.is_empty(),
        "05:00 is inside 04:00-06:00"
    );
    let after = tick_with(&store, &Observations::default(), &rules, at(361)).await;
    assert_eq!(
        kinds(&after.fired),
        [ReminderKind::Budget50],
        "sent when the quiet hours end"
    );
}

#[tokio::test]
async fn rules_are_checked_and_kept() {
    let store = Store::open_in_memory().await.expect("store");
    let mut conn = store.pool().acquire().await.expect("conn");
    assert_eq!(
        super::rules::load(&mut conn).await.expect("defaults"),
        ReminderRules::default()
    );
    let bad = ReminderRules {
        gpu_idle_below_percent: 0,
        ..ReminderRules::default()
    };
    let err = super::rules::save(&mut conn, &bad, t0())
        .await
        .expect_err("0 % is never idle");
    assert_eq!(crate::Coded::field(&err), Some("gpu_idle_below_percent"));
    let late = ReminderRules {
        quiet_hours: Some(QuietHours {
            start: "23:00".into(),
            end: "25:00".into(),
        }),
        ..ReminderRules::default()
    };
    assert!(
        super::rules::save(&mut conn, &late, t0()).await.is_err(),
        "25:00 is no time"
    );
    let good = ReminderRules {
        gpu_idle_minutes: 15,
        quiet_hours: Some(QuietHours {
            start: "23:00".into(),
            end: "07:30".into(),
        }),
        ..ReminderRules::default()
    };
    super::rules::save(&mut conn, &good, t0())
        .await
        .expect("saved");
    assert_eq!(super::rules::load(&mut conn).await.expect("loads"), good);
}

#[test]
fn kinds_are_named_the_same_in_json_and_in_text() {
    for kind in ReminderKind::ALL {
        assert_eq!(
            serde_json::to_value(kind).expect("serializes"),
            serde_json::Value::from(kind.as_str()),
            "the CLI's JSON and the locale keys use one name"
        );
        assert_eq!(ReminderKind::parse(kind.as_str()).expect("parses"), kind);
    }
}

/// Writes one minute of the monitor's history for each GPU of `instance`.
async fn monitor_minute(store: &Store, instance: i64, minute: i64, utilisation: &[f64]) {
    let mut conn = store.pool().acquire().await.expect("connection");
    for (gpu, average) in utilisation.iter().enumerate() {
        let row = crate::store::gpu_minutes::GpuMinuteRow {
            instance_id: instance,
            gpu_index: i64::try_from(gpu).expect("small"),
            minute: at(minute),
            samples: 60,
            utilization_avg: *average,
            utilization_max: average.ceil() as i64,
            memory_used_max_mib: 1024,
            memory_total_mib: 81_920,
            power_avg_w: Some(60.0),
        };
        crate::store::gpu_minutes::merge(&mut conn, &row)
            .await
            .expect("minute written");
    }
}

#[tokio::test]
async fn the_monitors_minute_history_in_the_store_drives_gpu_idle() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "2xa100", None, None).await;
    for minute in 0..=10 {
        monitor_minute(&store, id, minute, &[95.0, 91.5]).await;
    }
    for minute in 11..=45 {
        monitor_minute(&store, id, minute, &[0.0, 2.5]).await;
    }
    let (_, before) = super::due_observed(&store, at(40)).await.expect("due");
    assert!(before.is_empty(), "idle for 29 minutes only: {before:?}");
    let (_, idle) = super::due_observed(&store, at(41)).await.expect("due");
    assert_eq!(kinds(&idle), [ReminderKind::GpuIdle]);
    assert_eq!(idle[0].due_at, at(41));

    // The history stops (the app was closed): an hour later nobody knows, so nothing fires.
    let (_, stale) = super::due_observed(&store, at(105)).await.expect("due");
    assert!(stale.is_empty(), "old minutes prove nothing: {stale:?}");
}

#[tokio::test]
async fn a_backup_recorded_in_the_store_answers_backup_missing() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "h100", None, Some("2")).await;
    let (_, near) = super::due_observed(&store, at(95)).await.expect("due");
    assert_eq!(
        kinds(&near),
        [ReminderKind::ReleaseDue, ReminderKind::BackupMissing]
    );

    let mut conn = store.pool().acquire().await.expect("connection");
    let backup = crate::store::backups::BackupRow {
        id: 0,
        instance_id: Some(id),
        target: "root@gpu:22".into(),
        local_dir: "/backups/h100".into(),
        started_at: at(55),
        finished_at: at(60),
        files: 3,
        bytes: 4096,
    };
    crate::store::backups::insert_backup(&mut conn, &backup)
        .await
        .expect("backup recorded");
    drop(conn);
    let (_, after) = super::due_observed(&store, at(95)).await.expect("due");
    assert_eq!(kinds(&after), [ReminderKind::ReleaseDue]);
}

#[tokio::test]
async fn a_long_idle_stretch_keeps_one_occurrence_so_a_dismissal_holds() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "2xa100", None, None).await;
    monitor_minute(&store, id, 0, &[95.0, 91.5]).await;
    for minute in 1..=90 {
        monitor_minute(&store, id, minute, &[0.0, 2.5]).await;
    }
    let (_, first) = super::due_observed(&store, at(60)).await.expect("due");
    let (_, later) = super::due_observed(&store, at(90)).await.expect("due");
    assert_eq!(kinds(&first), [ReminderKind::GpuIdle]);
    assert_eq!(kinds(&later), [ReminderKind::GpuIdle]);
    assert_eq!(
        first[0].occurrence, later[0].occurrence,
        "the stretch began at minute 1 both times, however long it has lasted"
    );
    assert_eq!(later[0].due_at, at(31));
    assert_eq!(
        later[0].params.get("minutes").map(String::as_str),
        Some("89")
    );
}

#[tokio::test]
async fn a_spent_budget_breaks_through_the_quiet_hours() {
    let store = Store::open_in_memory().await.expect("store");
    rental(&store, "a100", Some("40"), None).await;
    let rules = ReminderRules {
        quiet_hours: Some(QuietHours {
            start: "04:00".into(),
            end: "06:00".into(),
        }),
        ..ReminderRules::default()
    };
    // 05:00: 50 spent of a 40 budget, inside the quiet hours.
    let tick = tick_with(&store, &Observations::default(), &rules, at(300)).await;
    assert!(tick.quiet, "05:00 is inside 04:00-06:00");
    assert_eq!(
        kinds(&tick.fired),
        [ReminderKind::Budget100],
        "over budget is sent at night, once, as the family's most urgent"
    );
    let stakes = &tick.fired[0].stakes;
    assert_eq!(stakes.budget_percent, Some(125));
    assert_eq!(stakes.minutes_to_empty, Some(0));
    assert_eq!(stakes.urgency, super::Urgency::Critical);
}

#[tokio::test]
async fn a_hand_recorded_stop_that_still_answers_raises_stop_contradicted() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "h100", None, None).await;
    ledger::record(&store, "h100", PowerAction::Stop, at(60))
        .await
        .expect("stopped by hand");
    let look = |minutes, answered| Observations {
        stop_checks: [(
            id,
            super::StopCheck {
                checked_at: at(minutes),
                answered,
            },
        )]
        .into(),
        ..Observations::default()
    };
    let found = due(&store, &look(61, true), at(62)).await;
    assert_eq!(kinds(&found), [ReminderKind::StopContradicted]);
    assert_eq!(found[0].stakes.urgency, super::Urgency::Critical);
    assert_eq!(
        found[0].burn_rate_per_hour,
        d("10.00"),
        "what the provider may still be charging, not the ledger's 0 while stopped"
    );
    assert!(
        due(&store, &look(61, false), at(62)).await.is_empty(),
        "a silent machine confirms the stop"
    );
    assert!(
        due(&store, &look(59, true), at(62)).await.is_empty(),
        "an answer from before the stop says nothing about it"
    );
}

#[tokio::test]
async fn a_released_instance_the_provider_still_lists_breaks_through_quiet_hours() {
    let store = Store::open_in_memory().await.expect("store");
    let id = rental(&store, "lora-4090", None, None).await;
    ledger::record(&store, "lora-4090", PowerAction::Release, at(60))
        .await
        .expect("released");
    let listed = |minutes| Observations {
        listed_after_release: [(
            id,
            super::ListedAfterRelease {
                provider: "RunPod".into(),
                state: "running".into(),
                seen_at: at(minutes),
            },
        )]
        .into(),
        ..Observations::default()
    };
    let found = due(&store, &listed(61), at(62)).await;
    assert_eq!(kinds(&found), [ReminderKind::ReleasedButListed]);
    assert_eq!(found[0].stakes.urgency, super::Urgency::Critical);
    assert!(super::stakes::breaks_quiet_hours(&found[0]));
    assert_eq!(found[0].params["provider"], "RunPod");
    assert_eq!(
        found[0].burn_rate_per_hour,
        d("10.00"),
        "what the provider may still bill, not the ledger's 0 after release"
    );
    assert!(
        due(&store, &listed(59), at(62)).await.is_empty(),
        "a listing from before the release says nothing about it"
    );
    assert!(due(&store, &Observations::default(), at(62))
        .await
        .is_empty());
}
