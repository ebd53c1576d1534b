//! "This machine has 8 GPUs; the rental says 1 — update to 8?": the one click that answers
//! `status.gpu_count_differs` with a rule change from now on, at the same price per GPU.

use chrono::{DateTime, Utc};

use super::{codes, for_instance, InstanceStatus, StatusError};
use crate::billing::ledger;

/// Change `name`'s rules to the GPU count the monitor sees now (the status's
/// `status.gpu_count_differs`), from `now` on. Refused when the monitor has not seen a count
/// that differs. Returns the status after the change.
#[tracing::instrument(skip(store), err)]
pub async fn match_gpu_count(
    store: &crate::store::Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<InstanceStatus, StatusError> {
    let status = for_instance(store, name, now).await?;
    let seen = status
        .warnings
        .iter()
        .find(|w| w.code == codes::GPU_COUNT_DIFFERS)
        .and_then(|w| w.params.get("seen"))
        .and_then(|s| s.parse::<u32>().ok());
    let detail = ledger::show(store, name, now).await?;
    let Some(seen) = seen else {
        let gpus = detail.rules.gpu_count;
        let monitor_saw = status
            .facts
            .iter()
            .any(|f| f.source == super::FactSource::Monitor);
        return Err(if monitor_saw {
            StatusError::GpuCountMatches {
                name: name.to_owned(),
                gpus,
            }
        } else {
            StatusError::NoGpuCount {
                name: name.to_owned(),
            }
        });
    };
    let mut rules = detail.rules;
    rules.gpu_count = seen;
    ledger::change_rules(store, name, &rules, now).await?;
    for_instance(store, name, now).await
}
