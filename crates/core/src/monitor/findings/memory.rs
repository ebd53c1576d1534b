//! GPU memory: nearly full now, or growing steadily towards full (a leak, or a cache that never
//! stops growing) — the out-of-memory error that is coming.

use super::{gpu_list, FindingContext, LiveFinding};
use crate::diagnose::text::draft;
use crate::diagnose::Severity;
use crate::monitor::sample::Sample;
use crate::monitor::summary::MemoryTrend;

/// Used memory at or above this share of the total is nearly full.
pub const NEAR_FULL: f64 = 0.95;
/// A trend needs this many samples and this long a span before it means anything.
const TREND_SAMPLES: u64 = 10;
const TREND_MIN_SECONDS: f64 = 60.0;
/// Growth over the span, as a share of the total, that counts as a trend.
const TREND_GROWTH: f64 = 0.05;
/// How straight the line must be (correlation of memory with time).
const TREND_STRAIGHTNESS: f64 = 0.9;
/// Only warn when the card fills up within this long at the current pace.
const TREND_HORIZON_MINUTES: f64 = 120.0;

pub(super) fn near_full(window: &[Sample], context: &FindingContext) -> Option<LiveFinding> {
    let last = window.last()?;
    let full: Vec<_> = last
        .gpus
        .iter()
        .filter(|g| g.memory_fraction().is_some_and(|f| f >= NEAR_FULL))
        .collect();
    if full.is_empty() {
        return None;
    }
    let gpus: Vec<u32> = full.iter().map(|g| g.index).collect();
    let lang = context.lang;
    let which = gpu_list(lang, &gpus);
    let evidence = full.iter().map(|g| {
        format!(
            "GPU {}: {} / {} MiB",
            g.index,
            g.memory_used_mib.unwrap_or_default(),
            g.memory_total_mib.unwrap_or_default()
        )
    });
    let finding = draft(lang, "gpu.memory_near_full", Severity::Warning)
        .title(format!("{which} 显存快满了"), format!("{which} memory nearly full"))
        .detail(
            "显存用到了 95% 以上。再多分配一点（更大的批次、更长的序列、评估时忘了关梯度）就会报 CUDA out of memory，跑了几个小时的任务会直接中断。",
            "More than 95% of the GPU memory is in use. A little more (a larger batch, a longer sequence, evaluation without no_grad) ends in CUDA out of memory, and hours of work stop.",
        )
        .run(
            "看看是哪些进程占着显存（有没有残留的旧进程）：",
            "See which processes hold the memory (an old one left behind?):",
            "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
        )
        .step(
            "减小批次大小，配合梯度累积保持等效批次；或开启梯度检查点（gradient checkpointing）。",
            "Lower the batch size and keep the effective batch with gradient accumulation, or turn on gradient checkpointing.",
        )
        .step(
            "评估和推理放在 torch.no_grad() 里，用 fp16/bf16 或量化模型。",
            "Run evaluation and inference under torch.no_grad(), in fp16/bf16 or with a quantized model.",
        )
        .evidence_all(evidence)
        .build();
    Some(LiveFinding { finding, gpus })
}

pub(super) fn leak_trend(memory: &MemoryTrend, context: &FindingContext) -> Option<LiveFinding> {
    let mut growing = Vec::new();
    let mut evidence = Vec::new();
    for gpu in memory.gpus() {
        let (Some(total), first, last) = (gpu.total_mib, gpu.first, gpu.last) else {
            continue;
        };
        let span_seconds = (last.0 - first.0).num_milliseconds() as f64 / 1000.0;
        if gpu.moments.count() < TREND_SAMPLES || span_seconds < TREND_MIN_SECONDS || total == 0 {
            continue;
        }
        let total = total as f64;
        if (last.1 - first.1) / total < TREND_GROWTH {
            continue;
        }
        let Some((slope, straightness)) = gpu.moments.slope_and_correlation() else {
            continue;
        };
        if slope <= 0.0 || straightness < TREND_STRAIGHTNESS {
            continue;
        }
        let minutes_to_full = (total - last.1).max(0.0) / slope / 60.0;
        if minutes_to_full > TREND_HORIZON_MINUTES {
            continue;
        }
        let index = gpu.index;
        growing.push((index, minutes_to_full));
        evidence.push(format!(
            "GPU {index}: {:.0} → {:.0} MiB of {total:.0} in {span_seconds:.0} s (+{:.0} MiB/min)",
            first.1,
            last.1,
            slope * 60.0
        ));
    }
    let soonest = growing
        .iter()
        .map(|(_, minutes)| *minutes)
        .fold(f64::INFINITY, f64::min);
    if growing.is_empty() {
        return None;
    }
    let gpus: Vec<u32> = growing.iter().map(|(i, _)| *i).collect();
    let lang = context.lang;
    let which = gpu_list(lang, &gpus);
    let minutes = soonest.ceil().max(1.0);
    let finding = draft(lang, "gpu.memory_leak_trend", Severity::Warning)
        .title(
            format!("{which} 显存在持续上涨，约 {minutes:.0} 分钟后用满"),
            format!("{which} memory keeps growing; full in about {minutes:.0} min"),
        )
        .detail(
            "显存占用一直在涨、没有回落，照这个速度会在任务结束前耗尽，然后报 out of memory。常见原因：把带计算图的张量存进列表（比如累加 loss 而不是 loss.item()）、评估时没关梯度、缓存越积越多。",
            "Memory use rises steadily and never falls back; at this pace it runs out before the job ends, with an out-of-memory error. Usual causes: tensors kept with their graph (summing loss instead of loss.item()), evaluation without no_grad, a cache that only grows.",
        )
        .run(
            "盯着显存变化，确认是不是每一步都在涨：",
            "Watch the memory to see whether every step adds to it:",
            "nvidia-smi --query-gpu=index,memory.used --format=csv -l 5",
        )
        .step(
            "记录指标时用 loss.item()；评估包在 torch.no_grad() 里；不要在循环里保存张量。",
            "Log loss.item(), not loss; wrap evaluation in torch.no_grad(); do not keep tensors across steps.",
        )
        .step(
            "趁还没崩，先保存一次检查点。",
            "Save a checkpoint now, before it crashes.",
        )
        .evidence_all(evidence)
        .build();
    Some(LiveFinding { finding, gpus })
}
