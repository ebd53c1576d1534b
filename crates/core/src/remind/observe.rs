//! What other modules saw, gathered for the triggers: every instance's GPU minutes from the
//! monitor's history (the dashboard's stream and the once-a-minute background look both write
//! it), so `gpu_idle` can fire while the app runs, and its last backup from the backup records,
//! so `backup_missing` knows when the results were last saved.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::{GpuSample, ListedAfterRelease, Observations, RemindError, ReminderRules, StopCheck};
use crate::billing::ledger::InstanceHistory;
use crate::store::{accounts, backups, gpu_minutes, stop_checks, vast_looks, Store};

/// How far back the samples reach.
const IDLE_LOOKBACK_HOURS: i64 = 24;

/// Samples for every instance, reaching back far enough to see a whole idle stretch, and the
/// newest backup finished by `now`.
pub async fn gather(
    store: &Store,
    instances: &[InstanceHistory],
    rules: &ReminderRules,
    now: DateTime<Utc>,
) -> Result<Observations, RemindError> {
    // A whole day, like `monitor::history::idle_streak`: the idle stretch's start is the
    // reminder's occurrence, so a window only as long as the idle time would move that start
    // every minute and bring a dismissed reminder back as a new one.
    let since = now
        - Duration::hours(IDLE_LOOKBACK_HOURS)
            .max(Duration::minutes(i64::from(rules.gpu_idle_minutes) + 5));
    let mut conn = store.pool().acquire().await?;
    let mut observations = Observations::default();
    for check in stop_checks::all(&mut conn).await? {
        observations.stop_checks.insert(
            check.instance_id,
            StopCheck {
                checked_at: check.checked_at,
                answered: check.answered,
            },
        );
    }
    // What the last sync saw of each linked instance: the trigger asks whether the ledger
    // released one the provider still lists.
    let providers: std::collections::HashMap<i64, String> = accounts::list_accounts(&mut conn)
        .await?
        .into_iter()
        .map(|a| {
            let name = crate::account::Provider::parse(&a.provider)
                .map_or_else(|_| a.provider.clone(), |p| p.display().to_owned());
            (a.id, name)
        })
        .collect();
    for look in vast_looks::all(&mut conn).await? {
        observations.vast_looks.insert(look.instance_id, look);
    }
    for link in accounts::all_links(&mut conn).await? {
        if matches!(link.remote_state.as_str(), "gone" | "missing") {
            continue;
        }
        observations.listed_after_release.insert(
            link.instance_id,
            ListedAfterRelease {
                provider: providers.get(&link.account_id).cloned().unwrap_or_default(),
                state: link.remote_state,
                seen_at: link.seen_at,
            },
        );
    }
    for instance in instances {
        let rows = gpu_minutes::between(&mut conn, instance.id, since, now).await?;
        let samples = samples_from_minutes(
            rows.iter()
                .map(|r| (r.minute, r.gpu_index, r.utilization_avg)),
        );
        if !samples.is_empty() {
            observations.samples.insert(instance.id, samples);
        }
        let last_backup = backups::for_instance(&mut conn, instance.id)
            .await?
            .into_iter()
            .map(|b| b.finished_at)
            .filter(|finished| *finished <= now)
            .max();
        if let Some(at) = last_backup {
            observations.last_backup.insert(instance.id, at);
        }
    }
    Ok(observations)
}

/// One sample per minute with every GPU seen in it. A minute's average is rounded up, so a GPU
/// that worked a little is never called idle by rounding.
pub fn samples_from_minutes(
    minutes: impl IntoIterator<Item = (DateTime<Utc>, i64, f64)>,
) -> Vec<GpuSample> {
    let mut by_minute: BTreeMap<DateTime<Utc>, BTreeMap<i64, u32>> = BTreeMap::new();
    for (minute, gpu, average) in minutes {
        let percent = if average.is_finite() {
            average.clamp(0.0, 100.0).ceil() as u32
        } else {
            // An unreadable figure proves nothing: count it as busy.
            100
        };
        by_minute.entry(minute).or_default().insert(gpu, percent);
    }
    by_minute
        .into_iter()
        .map(|(at, gpus)| GpuSample {
            at,
            utilisation: gpus.into_values().collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn minutes_become_one_sample_each_with_every_gpu_and_averages_rounded_up() {
        let t = |m| Utc.with_ymd_and_hms(2026, 12, 1, 10, m, 0).unwrap();
        let samples = samples_from_minutes([
            (t(0), 1, 0.2),
            (t(0), 0, 4.1),
            (t(1), 0, f64::NAN),
            (t(1), 1, 0.0),
        ]);
        assert_eq!(
            samples,
            vec![
                GpuSample {
                    at: t(0),
                    utilisation: vec![5, 1]
                },
                GpuSample {
                    at: t(1),
                    utilisation: vec![100, 0]
                },
            ]
        );
    }
}
