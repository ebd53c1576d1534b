//! The dashboard's stream: the instance's live connection, the sampler, the minute history
//! written as minutes finish, and a stop handle so closing the page ends the stream (and its
//! remote `nvidia-smi`).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Mutex;

use chrono::Duration;
use tokio::sync::watch;

use super::event::MonitorEvent;
use super::findings::FindingContext;
use super::history::{self, MinuteAggregator};
use super::{MonitorError, SamplerOptions};
use crate::billing::ledger;
use crate::clock::Clock;
use crate::connect::LiveTargets;
use crate::diagnose::Lang;
use crate::ssh::ConnectOptions;
use crate::store::Store;
use crate::verify::RunningChecks;

/// The app's handles: a store, the connections, the stop handles, the streams' languages and
/// the clock.
pub struct Context<'a> {
    pub store: &'a Store,
    pub live: &'a LiveTargets,
    pub running: &'a RunningChecks,
    pub languages: &'a StreamLanguages,
    pub clock: &'a dyn Clock,
}

/// The language each running stream words its findings in, by instance: switching the app's
/// language re-words the open dashboard's findings without restarting its stream (which would
/// forget the ten minutes the trend rules read).
#[derive(Debug, Default)]
pub struct StreamLanguages {
    streams: Mutex<HashMap<String, watch::Sender<Lang>>>,
}

impl StreamLanguages {
    /// Word `instance`'s running findings in `lang` from now on; `false` when no stream runs.
    pub fn set(&self, instance: &str, lang: Lang) -> bool {
        self.lock()
            .get(instance)
            .is_some_and(|sender| sender.send(lang).is_ok())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, watch::Sender<Lang>>> {
        // A panic while holding the lock leaves a map that is still whole.
        self.streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn register(&self, instance: &str, lang: Lang) -> (watch::Receiver<Lang>, LanguageGuard<'_>) {
        let (sender, receiver) = watch::channel(lang);
        let guard = LanguageGuard {
            languages: self,
            instance: instance.to_owned(),
            receiver: receiver.clone(),
        };
        self.lock().insert(instance.to_owned(), sender);
        (receiver, guard)
    }
}

/// Removes a stream's language when the stream ends, unless a newer stream of the same
/// instance has replaced it.
struct LanguageGuard<'a> {
    languages: &'a StreamLanguages,
    instance: String,
    receiver: watch::Receiver<Lang>,
}

impl Drop for LanguageGuard<'_> {
    fn drop(&mut self) {
        let mut streams = self.languages.lock();
        if streams
            .get(&self.instance)
            .is_some_and(|sender| self.receiver.same_channel(&sender.subscribe()))
        {
            streams.remove(&self.instance);
        }
    }
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
    // Registered before connecting, so a switch while the connection opens is not lost.
    let (language, _registered) = context.languages.register(instance, lang);
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
        let sampled = super::run_in(
            target.as_ref(),
            context.clock,
            options,
            &findings,
            language,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_language_reaches_the_running_stream_and_only_while_it_runs() {
        let languages = StreamLanguages::default();
        assert!(
            !languages.set("box", Lang::ZhCn),
            "no stream, nothing to re-word"
        );
        let (receiver, guard) = languages.register("box", Lang::En);
        assert!(languages.set("box", Lang::ZhCn));
        assert_eq!(*receiver.borrow(), Lang::ZhCn);
        drop(guard);
        assert!(
            !languages.set("box", Lang::En),
            "the ended stream is forgotten"
        );
    }

    #[test]
    fn an_older_stream_ending_leaves_the_newer_one_registered() {
        let languages = StreamLanguages::default();
        let (_old_receiver, old) = languages.register("box", Lang::En);
        let (newer_receiver, _newer) = languages.register("box", Lang::En);
        drop(old);
        assert!(
            languages.set("box", Lang::ZhCn),
            "the newer stream still listens"
        );
        assert_eq!(*newer_receiver.borrow(), Lang::ZhCn);
    }
}
