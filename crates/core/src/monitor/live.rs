//! The dashboard's stream: the instance's live connection, the sampler, the minute history
//! written as minutes finish, and a stop handle so closing the page ends the stream (and its
//! remote `nvidia-smi`).

use std::ops::ControlFlow;

use chrono::Duration;

use super::findings::FindingContext;
use super::history::{self, MinuteAggregator};
use super::sample::MonitorEvent;
use super::{MonitorError, SamplerOptions};
use crate::billing::ledger;
use crate::clock::Clock;
use crate::connect::LiveTargets;
use crate::diagnose::Lang;
use crate::ssh::ConnectOptions;
use crate::store::Store;
use crate::verify::RunningChecks;

/// The app's handles: a store, the connections, the stop handles and the clock.
pub struct Context<'a> {
    pub store: &'a Store,
    pub live: &'a LiveTargets,
    pub running: &'a RunningChecks,
    pub clock: &'a dyn Clock,
}

/// Stream `instance`'s GPUs to `sink` until [`RunningChecks::cancel`] is called with the
/// instance's name (or another stream of it starts). Finished minutes go to the history.
pub async fn stream_instance(
    context: &Context<'_>,
    instance: &str,
    options: &SamplerOptions,
    lang: Lang,
    sink: &(dyn Fn(MonitorEvent) + Send + Sync),
) -> Result<(), MonitorError> {
    let target = {
        let mut conn = context
            .store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        context
            .live
            .get_or_connect(&mut conn, instance, ConnectOptions::default())
            .await?
    };
    let now = context.clock.now();
    let billing = ledger::cost(context.store, instance, now)
        .await
        .map(|report| report.burn_rate_per_hour > rust_decimal::Decimal::ZERO)
        .unwrap_or(true);
    let findings = FindingContext { lang, billing };
    let (minutes_tx, mut minutes_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut aggregator = MinuteAggregator::default();
    let mut forward = |event: MonitorEvent| {
        if let MonitorEvent::Sample(sample) = &event {
            let finished = aggregator.push(sample);
            if !finished.is_empty() {
                let _ = minutes_tx.send(finished);
            }
        }
        sink(event);
        ControlFlow::Continue(())
    };
    let writer = async {
        while let Some(minutes) = minutes_rx.recv().await {
            if let Err(err) = history::record(context.store, instance, &minutes).await {
                tracing::warn!(%err, instance, "GPU minutes not recorded");
            }
        }
    };
    let work = async {
        let sampled = super::run(
            target.as_ref(),
            context.clock,
            options,
            &findings,
            &mut forward,
        );
        tokio::select! {
            result = sampled => result,
            () = writer => Ok(()),
        }
    };
    context
        .running
        .run(&monitor_key(instance), work)
        .await
        .unwrap_or(Ok(()))
}

/// The stop-handle key of an instance's stream (kept apart from its Verify runs).
pub fn monitor_key(instance: &str) -> String {
    format!("monitor:{instance}")
}

/// How far back the dashboard's history chart reaches.
pub const HISTORY_SPAN: Duration = Duration::hours(24);
