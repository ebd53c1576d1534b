//! The low-rate sampler the app runs for every billing instance it holds a connection to: one
//! `nvidia-smi --query-gpu` look a minute, recorded into the minute history, so the idle reminder
//! and the busy hours see the GPUs even while no dashboard is open. One short process a minute is
//! cheaper than keeping a stream open for hours nobody watches.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::fields::QueryFields;
use super::history::{self, MinuteAggregator};
use super::parse::parse_gpu_line;
use super::sample::Sample;
use super::MonitorError;
use crate::billing::{ledger, InstanceState};
use crate::connect::LiveTargets;
use crate::store::Store;
use crate::target::{CommandSpec, Target};

/// How often the app looks.
pub const BACKGROUND_INTERVAL: Duration = Duration::from_secs(60);
const LOOK_TIMEOUT: Duration = Duration::from_secs(20);

/// One look at `target`'s GPUs, read with the same fields and fallbacks as the stream.
pub async fn look(target: &dyn Target, at: DateTime<Utc>) -> Result<Sample, MonitorError> {
    let mut fields = QueryFields::default();
    for _ in 0..4 {
        let spec = CommandSpec::new(fields.once_command())
            .login_shell()
            .timeout(LOOK_TIMEOUT);
        let output = target.run(&spec).await?;
        let text = output.stdout_text();
        let gpus: Vec<_> = text
            .lines()
            .filter_map(|line| parse_gpu_line(&fields, line).map(|(gpu, _)| gpu))
            .collect();
        if !gpus.is_empty() {
            return Ok(Sample { at, gpus });
        }
        match fields.after_refusal(&text) {
            Some(next) => fields = next,
            None => {
                return Err(if output.exit_status == Some(127) {
                    MonitorError::NoNvidiaSmi {
                        target: target.describe(),
                    }
                } else {
                    MonitorError::DriverFailed {
                        target: target.describe(),
                        message: format!("{}{}", text, output.stderr_text())
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or("nvidia-smi printed nothing")
                            .chars()
                            .take(300)
                            .collect(),
                    }
                })
            }
        }
    }
    Err(MonitorError::DriverFailed {
        target: target.describe(),
        message: "nvidia-smi refused every field set".to_owned(),
    })
}

/// Look at `instance` once and add the look to its minute history.
pub async fn sample_once(
    target: &dyn Target,
    store: &Store,
    instance: &str,
    now: DateTime<Utc>,
) -> Result<Sample, MonitorError> {
    let sample = look(target, now).await?;
    let mut aggregator = MinuteAggregator::default();
    aggregator.push(&sample);
    history::record(store, instance, &aggregator.flush()).await?;
    Ok(sample)
}

/// Whether an instance in this state with this burn rate is being paid for by the hour.
fn billing(state: Option<InstanceState>, burn_rate: rust_decimal::Decimal) -> bool {
    matches!(
        state,
        Some(InstanceState::Created | InstanceState::Running | InstanceState::NoGpu)
    ) && burn_rate > rust_decimal::Decimal::ZERO
}

/// One round of the background sampler: every billing instance with an open connection is
/// looked at once. Never dials; an instance without a connection is skipped. Returns what each
/// look did, for the log.
pub async fn sample_live_instances(
    store: &Store,
    live: &LiveTargets,
    now: DateTime<Utc>,
) -> Result<Vec<(String, Result<(), MonitorError>)>, MonitorError> {
    let mut done = Vec::new();
    for summary in ledger::list(store, now).await? {
        if !billing(summary.state, summary.burn_rate_per_hour) {
            continue;
        }
        let Some(target) = live.get(&summary.name).await else {
            continue;
        };
        let result = sample_once(target.as_ref(), store, &summary.name, now)
            .await
            .map(|_| ());
        done.push((summary.name, result));
    }
    Ok(done)
}
