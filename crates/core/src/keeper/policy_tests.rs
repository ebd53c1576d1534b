//! The two-stage policy over a scripted week: one instance's life, hour by hour, and what the
//! keeper would do at each moment.

use chrono::{DateTime, Duration, TimeZone, Utc};

use super::*;

/// Monday 30 November 2026, `day` days and `h` hours on.
fn t(day: i64, h: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 0, 0, 0).unwrap() + Duration::days(day) + Duration::hours(h)
}

fn policy(auto_release: bool) -> Policy {
    Policy {
        stop_after_idle_s: Some(30 * 60),
        release_after_stopped_s: Some(3 * 86_400),
        auto_release,
        off: false,
        bid_cap: None,
    }
}

fn running(idle_since: Option<DateTime<Utc>>) -> Facts {
    Facts {
        state: Some(InstanceState::Running),
        state_since: Some(t(0, 9)),
        idle_since,
        ..Facts::default()
    }
}

fn stopped(since: DateTime<Utc>, covers: bool, wipe_days: Option<i64>) -> Facts {
    Facts {
        state: Some(InstanceState::Stopped),
        state_since: Some(since),
        wipe_at: wipe_days.map(|d| since + Duration::days(d)),
        backup_covers: covers,
        ..Facts::default()
    }
}

/// (what is known, when, the policy's opt-in) → (action, when, due).
type Row = (
    Facts,
    DateTime<Utc>,
    bool,
    Action,
    Option<DateTime<Utc>>,
    bool,
);

#[test]
fn a_scripted_week() {
    let stop_at = t(0, 10) + Duration::minutes(30);
    let release_at = stop_at + Duration::days(3);
    let table: Vec<Row> = vec![
        // Monday 09:00–10:00: busy, nothing to do.
        (running(None), t(0, 9), false, Action::Nothing, None, false),
        // Idle from 10:00: the stop is planned for 10:30, not yet due at 10:15.
        (
            running(Some(t(0, 10))),
            t(0, 10) + Duration::minutes(15),
            false,
            Action::Stop,
            Some(stop_at),
            false,
        ),
        (
            running(Some(t(0, 10))),
            stop_at,
            false,
            Action::Stop,
            Some(stop_at),
            true,
        ),
        // Stopped at 10:30: the release reminder is three days on, on Thursday.
        (
            stopped(stop_at, false, None),
            t(1, 12),
            false,
            Action::RemindRelease,
            Some(release_at),
            false,
        ),
        (
            stopped(stop_at, false, None),
            t(3, 11),
            false,
            Action::RemindRelease,
            Some(release_at),
            true,
        ),
        // Opted in, but the last backup does not cover everything: still only a reminder.
        (
            stopped(stop_at, false, None),
            t(3, 11),
            true,
            Action::RemindRelease,
            Some(release_at),
            true,
        ),
        // Opted in and covered: released through the checklist, not before Thursday.
        (
            stopped(stop_at, true, None),
            t(2, 0),
            true,
            Action::Release,
            Some(release_at),
            false,
        ),
        (
            stopped(stop_at, true, None),
            t(6, 0),
            true,
            Action::Release,
            Some(release_at),
            true,
        ),
    ];
    for (i, (facts, now, auto, action, at, due)) in table.into_iter().enumerate() {
        let next = next_step(&policy(auto), &facts, now);
        assert_eq!(
            (next.action, next.at, next.due),
            (action, at, due),
            "row {i}: {next:?}"
        );
    }
}

#[test]
fn the_providers_clean_up_is_offered_first_when_it_comes_first() {
    let since = t(0, 0);
    let long = Policy {
        release_after_stopped_s: Some(14 * 86_400),
        ..policy(true)
    };
    // AutoDL wipes after 15 days: the offer opens on day 12, before the release on day 14.
    let next = next_step(&long, &stopped(since, true, Some(15)), t(12, 1));
    assert_eq!(next.action, Action::OfferKeepAlive);
    assert_eq!(next.at, Some(since + Duration::days(12)));
    assert!(next.due);
    // A three-day release comes before the wipe.
    let next = next_step(&policy(false), &stopped(since, false, Some(15)), t(1, 0));
    assert_eq!(next.action, Action::RemindRelease);
    // Without a policy the offer still stands: the provider's clean-up is not ours to turn off.
    let off = Policy {
        off: true,
        ..policy(true)
    };
    let next = next_step(&off, &stopped(since, true, Some(15)), t(1, 0));
    assert_eq!(next.action, Action::OfferKeepAlive);
    assert!(!next.due);
}

#[test]
fn off_hunting_and_released() {
    let off = Policy {
        off: true,
        ..policy(true)
    };
    assert_eq!(
        next_step(&off, &running(Some(t(0, 0))), t(5, 0)).action,
        Action::Nothing
    );
    let hunting = Facts {
        hunting: true,
        ..stopped(t(0, 0), true, None)
    };
    assert_eq!(
        next_step(&policy(true), &hunting, t(5, 0)).action,
        Action::Hunt
    );
    let released = Facts {
        state: Some(InstanceState::Released),
        ..Facts::default()
    };
    assert_eq!(
        next_step(&policy(true), &released, t(5, 0)).action,
        Action::Nothing
    );
    assert_eq!(
        next_step(&Policy::default(), &stopped(t(0, 0), true, None), t(9, 0)).action,
        Action::Nothing
    );
}
