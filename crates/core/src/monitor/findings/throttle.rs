//! Clocks held back: a card at its power cap, too hot, or slowed by the hardware runs slower
//! than the one that was rented.

use std::collections::{BTreeMap, BTreeSet};

use super::{gpu_list, recent, FindingContext, LiveFinding, MIN_SAMPLES, RECENT};
use crate::diagnose::text::draft;
use crate::diagnose::Severity;
use crate::monitor::sample::{Sample, ThrottleReason};

/// A reason must be active in at least half of the recent samples: one slowed second is noise.
fn persistent_reasons(window: &[Sample]) -> BTreeMap<u32, BTreeSet<ThrottleReason>> {
    let recent = recent(window, RECENT);
    let mut counts: BTreeMap<(u32, ThrottleReason), usize> = BTreeMap::new();
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    for sample in recent {
        for gpu in &sample.gpus {
            *seen.entry(gpu.index).or_default() += 1;
            for reason in &gpu.throttle {
                if !matches!(
                    reason,
                    ThrottleReason::AppClocks | ThrottleReason::SyncBoost
                ) {
                    *counts.entry((gpu.index, *reason)).or_default() += 1;
                }
            }
        }
    }
    let mut out: BTreeMap<u32, BTreeSet<ThrottleReason>> = BTreeMap::new();
    for ((index, reason), n) in counts {
        let total = seen.get(&index).copied().unwrap_or_default();
        if total >= MIN_SAMPLES && n * 2 >= total {
            out.entry(index).or_default().insert(reason);
        }
    }
    out
}

pub(super) fn throttled(window: &[Sample], context: &FindingContext) -> Option<LiveFinding> {
    let reasons = persistent_reasons(window);
    if reasons.is_empty() {
        return None;
    }
    let all: BTreeSet<ThrottleReason> = reasons.values().flatten().copied().collect();
    let heat = all.iter().any(|r| r.is_thermal());
    let hardware = all
        .iter()
        .any(|r| matches!(r, ThrottleReason::HwSlowdown | ThrottleReason::HwPowerBrake));
    let severity = if heat || hardware {
        Severity::Warning
    } else {
        Severity::Info
    };
    let gpus: Vec<u32> = reasons.keys().copied().collect();
    let lang = context.lang;
    let which = gpu_list(lang, &gpus);
    let last = window.last();
    let evidence = reasons.iter().map(|(index, set)| {
        let gpu = last.and_then(|s| s.gpus.iter().find(|g| g.index == *index));
        let names: Vec<&str> = set.iter().map(|r| r.as_str()).collect();
        format!(
            "GPU {index}: {} (temperature {} °C, power {} / {} W, SM clock {} MHz)",
            names.join(", "),
            gpu.and_then(|g| g.temperature_c)
                .map_or("-".into(), |v| v.to_string()),
            gpu.and_then(|g| g.power_draw_w)
                .map_or("-".into(), |v| format!("{v:.0}")),
            gpu.and_then(|g| g.power_limit_w)
                .map_or("-".into(), |v| format!("{v:.0}")),
            gpu.and_then(|g| g.sm_clock_mhz)
                .map_or("-".into(), |v| v.to_string()),
        )
    });
    let (title_zh, title_en) = if heat {
        (
            format!("{which} 过热降频"),
            format!("{which} slowed down by heat"),
        )
    } else if hardware {
        (
            format!("{which} 被硬件降频"),
            format!("{which} slowed down by the hardware"),
        )
    } else {
        (
            format!("{which} 顶到功耗上限"),
            format!("{which} held at its power limit"),
        )
    };
    let finding = draft(lang, "gpu.throttled", severity)
        .title(title_zh, title_en)
        .detail(
            "驱动正在压低这张卡的频率：算得比标称慢，花同样的钱干的活更少。满载时偶尔碰到功耗上限是正常的；长时间过热或硬件降频说明机器的散热或供电有问题。",
            "The driver is holding this GPU's clocks down: it computes slower than rated, so the same money buys less work. Touching the power limit under full load is normal; sustained heat or hardware slowdown means the machine's cooling or power supply is at fault.",
        )
        .run(
            "查看降频原因和功耗上限：",
            "See the reasons and the power limit:",
            "nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE",
        )
        .when(heat || hardware, |d| {
            d.step(
                "过热或硬件降频持续出现时，截图给服务商，要求换机或退费；换一台机器再跑。",
                "When heat or hardware slowdown persists, show it to the provider and ask for another machine or a refund.",
            )
        })
        .when(!heat && !hardware, |d| {
            d.step(
                "只是功耗上限：这张卡在满负荷工作，一般无需处理；对比同型号的标称功耗，确认服务商没有调低上限。",
                "Power limit only: the GPU is working flat out, usually nothing to do; compare the limit with the model's rated power to be sure the provider has not lowered it.",
            )
        })
        .evidence_all(evidence)
        .build();
    Some(LiveFinding { finding, gpus })
}
