//! "Left running" alerts: any member's instance that bills while its GPUs sit idle is told to
//! its own member and to whoever the team names, after the team's idle minutes.
//!
//! Why idle reports: only the laptop whose monitor watches an instance knows how long its GPUs
//! have been idle (`monitor::history`). So every sync reports this laptop's measurements to the
//! server (`idle_reports`, PostgreSQL migration 0190) and brings back everyone's, with the
//! team's alert settings; both are cached in the working copy (SQLite migration 0190) so the
//! Team page and the reminders (`remind::team`) work offline and cost the server nothing per
//! tick. The rules ([`AlertSettings::tells`], [`check_settings`], [`merge_idle`]) are pure.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};

pub use super::views::AlertSettings;
use super::views::{TeamInstance, LEFT_RUNNING_AFTER_MINUTES};
use super::{open_linked, Server, TeamError};
use crate::store::team::alerts::{self as repo, IdleRow};
use crate::store::team::LinkRow;
use crate::store::{Store, StoreError};

/// The fewest and most idle minutes an alert may wait for.
pub const MIN_AFTER_MINUTES: u32 = 5;
pub const MAX_AFTER_MINUTES: u32 = 1440;
/// A measurement older than this says nothing about "now" (the sampler looks once a minute).
const FRESH_MINUTES: i64 = 3;

/// An instance's current idle stretch: since when, and how many minutes were measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleStretch {
    pub since: DateTime<Utc>,
    pub minutes: u32,
}

/// Check what a member typed: known member names (trimmed, each once, in the given order) and
/// idle minutes within bounds. Pure.
pub fn check_settings(
    recipients: &[String],
    after_minutes: u32,
    members: &[String],
) -> Result<(Vec<String>, u32), TeamError> {
    if !(MIN_AFTER_MINUTES..=MAX_AFTER_MINUTES).contains(&after_minutes) {
        return Err(TeamError::AlertMinutes {
            min: MIN_AFTER_MINUTES,
            max: MAX_AFTER_MINUTES,
        });
    }
    let mut named: Vec<String> = Vec::new();
    for name in recipients {
        if name.trim().is_empty() {
            continue;
        }
        let name = super::address::check_name("member", name)?;
        if !members.contains(&name) {
            return Err(TeamError::UnknownMember { name });
        }
        if !named.contains(&name) {
            named.push(name);
        }
    }
    Ok((named, after_minutes))
}

/// Each instance's idle stretch as of `now`: this laptop's own fresh measurement where it has
/// one, else the last one another member's app reported (`None` idle_since: busy when measured).
/// Pure.
pub fn merge_idle(
    here: &[IdleRow],
    reported: &[IdleRow],
    now: DateTime<Utc>,
) -> HashMap<String, IdleStretch> {
    let mut stretches = HashMap::new();
    let fresh_here: Vec<&IdleRow> = here
        .iter()
        .filter(|r| now - r.measured_at <= Duration::minutes(FRESH_MINUTES))
        .collect();
    let measured_here = |uid: &str| fresh_here.iter().any(|r| r.instance_uid == uid);
    for row in reported
        .iter()
        .filter(|r| !measured_here(&r.instance_uid))
        .chain(fresh_here.iter().copied())
    {
        match row.idle_since {
            Some(since) => {
                stretches.insert(
                    row.instance_uid.clone(),
                    IdleStretch {
                        since,
                        minutes: u32::try_from(row.idle_minutes).unwrap_or(0),
                    },
                );
            }
            None => {
                stretches.remove(&row.instance_uid);
            }
        }
    }
    stretches
}

/// What this laptop's monitor measured on the running instances it watches (minute history
/// fresh at `now`), as idle reports by `member`.
pub async fn measured_here(
    store: &Store,
    instances: &[TeamInstance],
    member: &str,
    now: DateTime<Utc>,
) -> Vec<IdleRow> {
    let mut rows = Vec::new();
    for instance in instances.iter().filter(|i| i.is_running()) {
        // A history that cannot be read proves nothing about idleness; that instance is skipped.
        let Ok(minutes) = crate::monitor::history::utilisation_since(
            store,
            &instance.name,
            now - Duration::hours(24),
            now + Duration::minutes(1),
        )
        .await
        else {
            continue;
        };
        let Some(latest) = minutes.iter().map(|m| m.minute).max() else {
            continue;
        };
        if now - latest > Duration::minutes(FRESH_MINUTES) || instance.uid.is_empty() {
            continue;
        }
        let streak = crate::monitor::history::idle_streak_of(&minutes, now);
        rows.push(IdleRow {
            instance_uid: instance.uid.clone(),
            idle_since: streak.as_ref().map(|s| s.since),
            idle_minutes: streak.map_or(0, |s| i64::from(s.minutes)),
            measured_at: latest,
            reported_by: member.to_owned(),
        });
    }
    rows
}

/// Every running instance's idle stretch as of `now` (this laptop's measurements, then the
/// other members' reports as last pulled), by instance uid.
pub async fn idle_stretches(
    store: &Store,
    instances: &[TeamInstance],
    member: &str,
    now: DateTime<Utc>,
) -> Result<HashMap<String, IdleStretch>, TeamError> {
    let here = measured_here(store, instances, member, now).await;
    let reported = {
        let mut conn = store.read().await?;
        repo::idle_reports(&mut conn).await?
    };
    Ok(merge_idle(&here, &reported, now))
}

/// The team's alert settings as last read from its server (the defaults until someone sets them).
pub async fn settings(store: &Store) -> Result<AlertSettings, TeamError> {
    let mut conn = store.read().await?;
    Ok(match repo::settings(&mut conn).await? {
        Some((recipients, after_minutes, set_by)) => AlertSettings {
            recipients: serde_json::from_str(&recipients).unwrap_or_default(),
            after_minutes: u32::try_from(after_minutes).unwrap_or(LEFT_RUNNING_AFTER_MINUTES),
            set_by: Some(set_by),
        },
        None => AlertSettings::default(),
    })
}

async fn remember_settings(store: &Store, settings: &AlertSettings) -> Result<(), TeamError> {
    let recipients = serde_json::to_string(&settings.recipients).unwrap_or_else(|_| "[]".into());
    let mut tx = store.write().await?;
    repo::replace_settings(
        &mut tx,
        settings
            .set_by
            .as_deref()
            .map(|by| (recipients.as_str(), i64::from(settings.after_minutes), by)),
    )
    .await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

/// Name who is told about left-running instances, and after how many idle minutes; every
/// member's app reads it on its next sync. Answers the settings as saved.
pub async fn set(
    store: &Store,
    recipients: &[String],
    after_minutes: u32,
) -> Result<AlertSettings, TeamError> {
    let (mut server, row) = open_linked(store).await?;
    let result = set_on(&mut server, &row, recipients, after_minutes).await;
    server.close().await;
    let saved = result?;
    remember_settings(store, &saved).await?;
    Ok(saved)
}

async fn set_on(
    server: &mut Server,
    row: &LinkRow,
    recipients: &[String],
    after_minutes: u32,
) -> Result<AlertSettings, TeamError> {
    let members = server.member_names(row.team_id).await?;
    let (recipients, after_minutes) = check_settings(recipients, after_minutes, &members)?;
    server
        .set_alert_settings(row.team_id, &recipients, after_minutes, &row.member)
        .await?;
    Ok(AlertSettings {
        recipients,
        after_minutes,
        set_by: Some(row.member.clone()),
    })
}

/// Report this laptop's idle measurements, then bring back the team's alert settings and every
/// member's idle reports into the working copy. Part of every sync (after the events, so every
/// instance named is known); three statements at most.
pub async fn exchange(
    store: &Store,
    server: &mut Server,
    row: &LinkRow,
    now: DateTime<Utc>,
) -> Result<AlertSettings, TeamError> {
    // Costing the whole ledger is only worth it when the monitor watches something now (a sync
    // of a large ledger with nothing watched pays one indexed query).
    let watched = {
        let mut conn = store.read().await?;
        repo::watched_since(&mut conn, now - Duration::minutes(FRESH_MINUTES)).await?
    };
    let mine = if watched.is_empty() {
        Vec::new()
    } else {
        let mut instances = super::views::instances(store, now).await?;
        instances.retain(|i| watched.contains(&i.uid));
        measured_here(store, &instances, &row.member, now).await
    };
    if !mine.is_empty() {
        server.report_idle(row.team_id, &row.member, &mine).await?;
    }
    let settings = server.alert_settings(row.team_id).await?;
    let settings = settings.map_or_else(AlertSettings::default, |(recipients, after, by)| {
        AlertSettings {
            recipients,
            after_minutes: u32::try_from(after).unwrap_or(LEFT_RUNNING_AFTER_MINUTES),
            set_by: Some(by),
        }
    });
    let reports = server.idle_reports(row.team_id).await?;
    let reports: Vec<IdleRow> = reports
        .into_iter()
        .map(
            |(instance_uid, idle_since, minutes, measured_at, reported_by)| IdleRow {
                instance_uid,
                idle_since,
                idle_minutes: i64::from(minutes.max(0)),
                measured_at,
                reported_by,
            },
        )
        .collect();
    remember_settings(store, &settings).await?;
    let mut tx = store.write().await?;
    repo::replace_idle_reports(&mut tx, &reports).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{Clock, FixedClock};
    use chrono::TimeZone;

    fn clock() -> FixedClock {
        FixedClock::new(Utc.with_ymd_and_hms(2026, 3, 20, 12, 0, 0).unwrap())
    }

    fn report(uid: &str, idle_for: Option<i64>, measured: DateTime<Utc>, by: &str) -> IdleRow {
        IdleRow {
            instance_uid: uid.into(),
            idle_since: idle_for.map(|m| measured - Duration::minutes(m - 1)),
            idle_minutes: idle_for.unwrap_or(0),
            measured_at: measured,
            reported_by: by.into(),
        }
    }

    #[test]
    fn the_own_member_is_always_told_and_others_only_when_named() {
        let named = AlertSettings {
            recipients: vec!["prof".into()],
            ..AlertSettings::default()
        };
        assert!(named.tells("bob", "bob"), "the instance's own member");
        assert!(named.tells("prof", "bob"), "a named member");
        assert!(!named.tells("carol", "bob"), "an unnamed member");
        assert!(!AlertSettings::default().tells("prof", "bob"));
    }

    #[test]
    fn settings_name_known_members_once_and_bound_the_minutes() {
        let members = vec!["alice".to_owned(), "bob".to_owned()];
        let (named, after) = check_settings(
            &[" alice".into(), "alice".into(), String::new(), "bob".into()],
            45,
            &members,
        )
        .unwrap();
        assert_eq!((named, after), (vec!["alice".to_owned(), "bob".into()], 45));
        assert!(matches!(
            check_settings(&["mallory".into()], 45, &members),
            Err(TeamError::UnknownMember { .. })
        ));
        for minutes in [0, 4, 1441] {
            assert!(matches!(
                check_settings(&[], minutes, &members),
                Err(TeamError::AlertMinutes { .. })
            ));
        }
    }

    #[test]
    fn a_fresh_measurement_here_wins_over_a_report_and_busy_clears_it() {
        let now = clock().now();
        let reported = vec![
            report("a", Some(90), now - Duration::minutes(1), "bob"),
            report("b", Some(40), now - Duration::minutes(2), "bob"),
            report("c", None, now, "carol"),
        ];
        // Here: "a" is busy now, "b" was measured long ago (stale, the report stands).
        let here = vec![
            report("a", None, now, "alice"),
            report("b", Some(5), now - Duration::minutes(30), "alice"),
        ];
        let merged = merge_idle(&here, &reported, now);
        assert!(!merged.contains_key("a"), "busy here now: {merged:?}");
        assert_eq!(merged["b"].minutes, 40);
        assert!(!merged.contains_key("c"), "reported busy");
    }
}
