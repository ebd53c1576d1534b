//! The dashboard's live GPU monitor.

use std::time::Duration;

use super::ActionError;
use crate::diagnose::Lang;
use crate::monitor::live;
use crate::monitor::{MonitorEvent, SamplerOptions};

use super::Context;

/// How often the dashboard samples when it does not say.
const DEFAULT_INTERVAL_MS: u32 = 1000;

/// Stream `instance`'s GPUs every `interval_ms` to `sink` until the stream is stopped.
pub async fn stream(
    context: &Context<'_>,
    instance: &str,
    interval_ms: Option<u32>,
    lang: Lang,
    sink: &(dyn Fn(MonitorEvent) + Send + Sync),
) -> Result<(), ActionError> {
    let interval = Duration::from_millis(u64::from(interval_ms.unwrap_or(DEFAULT_INTERVAL_MS)));
    let options = SamplerOptions::new(interval)?;
    Ok(live::stream_instance(&context.monitor(), instance, &options, lang, sink).await?)
}
