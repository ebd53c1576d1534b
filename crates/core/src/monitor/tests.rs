use std::ops::ControlFlow;

use chrono::{Duration, TimeZone, Utc};

use super::*;
use crate::diagnose::Lang;

fn eight_gpus_one_busy(second: i64) -> Sample {
    let at = Utc
        .with_ymd_and_hms(2026, 3, 1, 9, 0, 0)
        .single()
        .expect("valid time")
        + Duration::seconds(second);
    Sample {
        at,
        gpus: (0..8)
            .map(|index| {
                let mut gpu = GpuReading::new(index);
                gpu.utilization_pct = Some(if index == 0 { 97 } else { 0 });
                gpu
            })
            .collect(),
    }
}

#[tokio::test]
async fn a_language_switch_rewords_the_open_streams_findings_at_once() {
    let (events, received) = tokio::sync::mpsc::unbounded_channel();
    let (language, follow) = watch::channel(Lang::En);
    for second in 0..30 {
        events
            .send(MonitorEvent::Sample(eight_gpus_one_busy(second)))
            .expect("queued");
    }
    let context = FindingContext {
        lang: Lang::En,
        billing: true,
    };
    let mut titles = Vec::new();
    let mut samples = 0;
    let mut sink = |event: MonitorEvent| {
        match event {
            MonitorEvent::Sample(_) => {
                samples += 1;
                // The user switches the language once the dashboard shows its findings; no
                // sample follows (`events` stays open and quiet).
                if samples == 30 {
                    language.send(Lang::ZhCn).expect("the stream listens");
                }
            }
            MonitorEvent::Findings { findings, .. } => {
                let title = findings
                    .iter()
                    .find(|f| f.finding.code == "gpu.idle_peers")
                    .map(|f| f.finding.title.clone())
                    .unwrap_or_default();
                let chinese = title.contains("闲着");
                titles.push(title);
                if chinese {
                    return ControlFlow::Break(());
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    };
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        consume_in(received, &context, follow, &mut sink),
    )
    .await
    .expect("the findings are sent again in the new language without waiting for a sample");
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(titles[0].starts_with("Only GPU 0"), "{titles:?}");
    assert!(titles[1].contains("闲着"), "{titles:?}");
    drop(events);
}
