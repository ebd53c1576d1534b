//! A status read that is also kept: the instance's status (`crate::status`) says "not
//! protecting" from the newest look without dialling the instance again.

use chrono::{DateTime, Utc};

use super::{status, WatchdogError, WatchdogStatus};
use crate::store::watchdog_looks::{self, WatchdogLookRow};
use crate::store::Store;
use crate::target::Target;

/// Read the watchdog of the recorded instance `instance` over `target` and keep what it said as
/// the instance's newest watchdog look.
#[tracing::instrument(skip(store, target), err, fields(target = %target.describe()))]
pub async fn status_kept(
    store: &Store,
    instance: &str,
    target: &dyn Target,
    state_dir: &str,
    now: DateTime<Utc>,
) -> Result<WatchdogStatus, WatchdogError> {
    let read = status(target, state_dir).await?;
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    if let Some(row) = crate::store::ledger::find_instance(&mut conn, instance).await? {
        watchdog_looks::upsert(
            &mut conn,
            &WatchdogLookRow {
                instance_id: row.id,
                looked_at: now,
                installed: read.installed,
                running: read.running,
                phase: read.phase.clone(),
                unreadable: read.unreadable.join(","),
            },
        )
        .await?;
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::super::unreadable_signals;

    #[test]
    fn only_the_signals_named_unreadable_are_not_protecting_not_a_first_sample() {
        assert_eq!(
            unreadable_signals(Some(
                "gpu=unreadable cpu=first io=0KiB/s net=unreadable ssh=1"
            )),
            ["gpu", "net"]
        );
        assert!(unreadable_signals(Some("gpu=0% cpu=first")).is_empty());
        assert!(unreadable_signals(None).is_empty());
    }
}
