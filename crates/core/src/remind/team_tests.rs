//! Team budget reminders under an injected clock: each threshold of the team's month-to-date
//! spend is due from the moment it was crossed, only spend in the budget's currency and in this
//! month counts, each fires once, and a laptop that slept past several sends only the most urgent.

use chrono::{DateTime, Duration, TimeZone, Utc};
use rust_decimal::Decimal;

use super::team::{budget_due, due_in_store, tick, TeamBudgetLine};
use super::{ReminderKind, ReminderRules};
use crate::billing::ledger::{self, histories};
use crate::billing::{BillingRules, NewInstance, PowerAction};
use crate::store::team::replace_team_budgets;
use crate::store::team::{set_link, LinkRow};
use crate::store::Store;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0)
        .single()
        .expect("valid")
}

fn at(minutes: i64) -> DateTime<Utc> {
    t0() + Duration::minutes(minutes)
}

fn d(text: &str) -> Decimal {
    text.parse().expect("decimal")
}

/// A running rental of `price` per hour in `currency`, created and started at `from`.
async fn rental(store: &Store, name: &str, price: &str, currency: &str, from: DateTime<Utc>) {
    let new = NewInstance {
        name: name.into(),
        provider: "autodl".into(),
        region: None,
        gpu_model: "A100".into(),
        currency: currency.into(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: BillingRules::simple(d(price), 1),
    };
    ledger::add_instance(store, &new, from)
        .await
        .expect("recorded");
    ledger::record(store, name, PowerAction::Start, from)
        .await
        .expect("started");
}

fn cny(amount: &str) -> Vec<TeamBudgetLine> {
    vec![TeamBudgetLine {
        currency: "CNY".into(),
        amount: d(amount),
    }]
}

async fn due_at(
    store: &Store,
    budgets: &[TeamBudgetLine],
    now: DateTime<Utc>,
) -> Vec<(ReminderKind, DateTime<Utc>)> {
    let all = histories(store).await.expect("ledger loads");
    budget_due("lab", budgets, &all, now)
        .expect("triggers run")
        .into_iter()
        .map(|r| (r.kind, r.due_at))
        .collect()
}

#[tokio::test]
async fn each_threshold_is_due_from_the_moment_the_teams_spend_crossed_it() {
    let store = Store::open_in_memory().await.expect("store");
    // Two members' rentals: 6 + 4 = 10 an hour against a team budget of 100.
    rental(&store, "alice-a100", "6", "CNY", t0()).await;
    rental(&store, "bob-a100", "4", "CNY", t0()).await;
    let budgets = cny("100");
    assert!(
        due_at(&store, &budgets, at(299)).await.is_empty(),
        "49.83 of 100"
    );
    assert_eq!(
        due_at(&store, &budgets, at(300)).await,
        vec![(ReminderKind::Budget50, at(300))],
        "half spent after five hours"
    );
    assert_eq!(
        due_at(&store, &budgets, at(600)).await,
        vec![
            (ReminderKind::Budget50, at(300)),
            (ReminderKind::Budget80, at(480)),
            (ReminderKind::Budget100, at(600)),
        ],
        "asked later, the same crossing times"
    );
}

#[tokio::test]
async fn only_this_months_spend_in_the_budgets_currency_counts() {
    let store = Store::open_in_memory().await.expect("store");
    // Running since the evening of the last day of February: 4 hours before March began.
    rental(&store, "alice-a100", "10", "CNY", t0() - Duration::hours(4)).await;
    rental(&store, "bob-h100", "1000", "USD", t0()).await;
    let budgets = cny("100");
    assert!(
        due_at(&store, &budgets, at(240)).await.is_empty(),
        "40 CNY this month (80 with February's): not half of 100, and the USD rental is not added"
    );
    assert_eq!(
        due_at(&store, &budgets, at(300)).await,
        vec![(ReminderKind::Budget50, at(300))]
    );
    let reminder = &budget_due(
        "lab",
        &budgets,
        &histories(&store).await.expect("ledger"),
        at(300),
    )
    .expect("triggers")[0];
    assert_eq!(reminder.instance, "lab", "a team reminder names the team");
    assert_eq!(
        reminder.params.get("scope").map(String::as_str),
        Some("team")
    );
    assert_eq!(
        reminder.burn_rate_per_hour,
        d("10.00"),
        "the team's CNY burn"
    );
    assert_eq!(
        reminder.occurrence, "2026-03 100 CNY",
        "a new month is a new occurrence"
    );
}

async fn linked_store() -> Store {
    let store = Store::open_in_memory().await.expect("store");
    let mut tx = store.write().await.expect("write");
    set_link(
        &mut tx,
        &LinkRow {
            url: "postgres://lab@db.example:5432/team".into(),
            member: "alice".into(),
            team: "lab".into(),
            team_id: 1,
            laptop_uid: uuid::Uuid::new_v4().to_string(),
            pulled_seq: 0,
            pulled_record_seq: 0,
            connected_at: t0(),
            last_sync_at: None,
        },
    )
    .await
    .expect("link");
    replace_team_budgets(&mut tx, &[("CNY".into(), "100".into(), "prof".into())])
        .await
        .expect("budgets");
    tx.commit().await.expect("commit");
    store
}

#[tokio::test]
async fn a_team_reminder_fires_once_and_after_a_sleep_only_the_most_urgent_is_sent() {
    let store = linked_store().await;
    rental(&store, "alice-a100", "10", "CNY", t0()).await;
    let rules = ReminderRules::default();
    let fire = |now: DateTime<Utc>| {
        let store = store.clone();
        let rules = rules.clone();
        async move {
            let due = due_in_store(&store, now).await.expect("due");
            tick(&store, &due, &rules, now, &Utc)
                .await
                .expect("tick")
                .into_iter()
                .map(|r| r.kind)
                .collect::<Vec<_>>()
        }
    };
    assert!(fire(at(240)).await.is_empty(), "40 of 100");
    assert_eq!(fire(at(301)).await, vec![ReminderKind::Budget50]);
    assert!(fire(at(302)).await.is_empty(), "fired once");
    // The laptop sleeps from 5 h to 11 h: 80 % and 100 % both passed.
    assert_eq!(
        fire(at(660)).await,
        vec![ReminderKind::Budget100],
        "one reminder, the most urgent"
    );
    assert!(
        fire(at(661)).await.is_empty(),
        "80 % was caught up silently, not sent later"
    );
}

#[tokio::test]
async fn an_unlinked_database_has_no_team_reminders() {
    let store = Store::open_in_memory().await.expect("store");
    rental(&store, "alice-a100", "100", "CNY", t0()).await;
    assert!(due_in_store(&store, at(600)).await.expect("due").is_empty());
}

mod left_running {
    use std::collections::HashMap;

    use chrono::{Duration, TimeZone, Utc};
    use rust_decimal::Decimal;

    use crate::billing::events::InstanceState;
    use crate::clock::{Clock, FixedClock};
    use crate::remind::team::left_running_due;
    use crate::remind::ReminderKind;
    use crate::team::alerts::{AlertSettings, IdleStretch};
    use crate::team::TeamInstance;

    fn instance(name: &str, member: &str) -> TeamInstance {
        TeamInstance {
            uid: format!("uid-{name}"),
            name: name.into(),
            member: member.into(),
            project: None,
            gpu_model: "A100".into(),
            gpu_count: 1,
            state: Some(InstanceState::Running),
            state_since: None,
            currency: "CNY".into(),
            burn_rate_per_hour: Decimal::from(12),
            total: Decimal::ZERO,
            month_to_date: Decimal::ZERO,
        }
    }

    #[test]
    fn bobs_idle_instance_is_told_to_bob_and_the_named_alice_once_per_stretch() {
        let clock = FixedClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
        let since = clock.now() - Duration::minutes(44);
        let team = vec![instance("bob-a100", "bob"), instance("carol-4090", "carol")];
        let idle = HashMap::from([(
            "uid-bob-a100".to_owned(),
            IdleStretch { since, minutes: 45 },
        )]);
        let settings = AlertSettings {
            recipients: vec!["alice".into()],
            after_minutes: 30,
            set_by: Some("alice".into()),
        };
        let told = |me: &str| left_running_due("lab", me, &settings, &team, &idle);
        let alice = told("alice");
        assert_eq!(alice.len(), 1, "{alice:?}");
        assert_eq!(alice[0].kind, ReminderKind::GpuIdle);
        assert_eq!(alice[0].instance, "lab");
        assert_eq!(alice[0].params["scope"], "team");
        assert_eq!(alice[0].params["target"], "bob-a100");
        assert_eq!(alice[0].params["wasted"], "9.00", "45 idle minutes at 12/h");
        assert_eq!(alice[0].due_at, since + Duration::minutes(29));
        assert_eq!(told("bob").len(), 1, "its own member");
        assert!(told("carol").is_empty(), "not named, not hers");

        // Ten minutes on, the same stretch is the same occurrence; a new stretch is a new one.
        clock.set(clock.now() + Duration::minutes(10));
        let later = HashMap::from([(
            "uid-bob-a100".to_owned(),
            IdleStretch { since, minutes: 55 },
        )]);
        let same = left_running_due("lab", "alice", &settings, &team, &later);
        assert_eq!(same[0].occurrence, alice[0].occurrence);
        let fresh = HashMap::from([(
            "uid-bob-a100".to_owned(),
            IdleStretch {
                since: clock.now() - Duration::minutes(31),
                minutes: 32,
            },
        )]);
        let next = left_running_due("lab", "alice", &settings, &team, &fresh);
        assert_ne!(next[0].occurrence, alice[0].occurrence);

        // Below the team's minutes: nothing yet.
        let short = HashMap::from([(
            "uid-bob-a100".to_owned(),
            IdleStretch { since, minutes: 29 },
        )]);
        assert!(left_running_due("lab", "alice", &settings, &team, &short).is_empty());
    }
}
